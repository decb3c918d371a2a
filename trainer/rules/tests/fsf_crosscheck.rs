//! Perft cross-check against an engine we did not write: Fairy-Stockfish (Debian package
//! `fairy-stockfish`, installed by the test command; `FAIRY_STOCKFISH=/path/to/engine` picks
//! another build). Positions come from seeded random playouts of shogi, minishogi, Judkins, Yari
//! and Tori shogi, so drops, promotions, checks and pins all occur.
//!
//! Without the engine the test says so and passes, except under CI (`CI` set), where the test
//! command installs it and its absence is a failure. A variant the installed engine does not
//! offer (Debian's 11.1 has no `yarishogi` or `torishogi`; newer releases have both) is skipped
//! with a message, under CI too.

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use rules::{perft, Position, Variant, VariantSpec};
use std::path::Path;
use std::sync::Arc;

mod common;
use common::{engine_or_skip, Engine};

/// Depth-3 count above which the depth-4 count of a Judkins, Yari or Tori position is not
/// compared (it would take seconds per position in each engine).
const LAST_DEPTH_LIMIT: u64 = 100_000;

/// The engine on `variant`, or `None` when its `UCI_Variant` option does not list it.
fn start(bin: &Path, variant: &str) -> Option<Engine> {
    let (mut e, variants) = Engine::spawn(bin);
    if !variants.split_whitespace().any(|w| w == variant) {
        return None;
    }
    e.send(&format!("setoption name UCI_Variant value {variant}"));
    e.send("isready");
    e.wait("readyok");
    Some(e)
}

/// Compares perft counts of `positions` random positions of our `variant` with the engine's
/// `fsf_variant`, at depths 1 to `max_depth`; the last depth is skipped in a position whose count
/// at the depth before exceeds `skip_last_above` (positions with full hands branch widely).
fn crosscheck(
    variant: &str,
    fsf_variant: &str,
    positions: usize,
    max_depth: u32,
    skip_last_above: u64,
    seed: u64,
) {
    let Some(bin) = engine_or_skip() else {
        return;
    };
    // Fairy-Stockfish's perft counts pawn drops that mate (it applies uchifuzume as a game
    // result, not in move generation), so compare with our rules minus that one restriction;
    // uchifuzume itself is tested in tests/rules.rs.
    let mut spec = VariantSpec::builtin(variant).unwrap();
    for p in spec.pieces.as_mut().unwrap() {
        if let Some(d) = p.drop.as_mut() {
            d.no_mate = Some(false);
        }
    }
    let v = Arc::new(Variant::compile(spec).unwrap());
    let Some(mut engine) = start(&bin, fsf_variant) else {
        eprintln!(
            "skipped: {} offers no UCI_Variant {fsf_variant} (a newer Fairy-Stockfish does)",
            bin.display()
        );
        return;
    };
    let mut rng = StdRng::seed_from_u64(seed);
    let mut checked = 0;
    let mut deepest = 0;
    let mut nodes = 0;
    while checked < positions {
        let mut pos = Position::start(v.clone());
        let plies = rng.random_range(0..80);
        for _ in 0..plies {
            let moves = pos.legal_moves();
            if moves.is_empty() {
                break;
            }
            pos.make_move(moves[rng.random_range(0..moves.len())]);
        }
        let fen = rules::fsf::to_fsf_fen(&pos);
        let sfen = pos.to_sfen();
        let mut last = 0;
        for depth in 1..=max_depth {
            if depth == max_depth && last > skip_last_above {
                break;
            }
            let ours = perft(&mut pos, depth);
            let theirs = engine.perft(&fen, depth);
            assert_eq!(
                ours, theirs,
                "{variant} perft {depth} differs from Fairy-Stockfish at {sfen} (fen {fen})"
            );
            last = ours;
            nodes += ours;
            deepest += usize::from(depth == max_depth);
        }
        checked += 1;
    }
    eprintln!(
        "{variant}: {checked} positions match Fairy-Stockfish ({deepest} of them at depth \
         {max_depth}; {nodes} leaves in all)"
    );
}

#[test]
fn shogi_random_positions_match_fairy_stockfish() {
    crosscheck("shogi", "shogi", 150, 3, u64::MAX, 1);
}

#[test]
fn minishogi_random_positions_match_fairy_stockfish() {
    crosscheck("minishogi", "minishogi", 300, 4, u64::MAX, 2);
}

#[test]
fn judkins_random_positions_match_fairy_stockfish() {
    crosscheck("judkins", "judkins", 300, 4, LAST_DEPTH_LIMIT, 3);
}

#[test]
fn yari_random_positions_match_fairy_stockfish() {
    crosscheck("yari", "yarishogi", 300, 4, LAST_DEPTH_LIMIT, 4);
}

#[test]
fn tori_random_positions_match_fairy_stockfish() {
    crosscheck("tori", "torishogi", 300, 4, LAST_DEPTH_LIMIT, 5);
}

#[test]
fn kyoto_random_positions_match_fairy_stockfish() {
    crosscheck("kyoto", "kyotoshogi", 300, 4, LAST_DEPTH_LIMIT, 6);
}

#[test]
fn micro_random_positions_match_fairy_stockfish() {
    crosscheck("micro", "micro", 300, 4, LAST_DEPTH_LIMIT, 7);
}
