//! Perft cross-check against an engine we did not write, Fairy-Stockfish, in two builds:
//!
//! - Native: Debian's package `fairy-stockfish` (11.1), installed by the test command;
//!   `FAIRY_STOCKFISH=/path/to/engine` picks another build. It is the fast one, and checks
//!   shogi, minishogi, Judkins, Kyoto and Micro shogi (and Yari and Tori when the build offers
//!   them; 11.1 does not).
//! - WebAssembly: a current release, the npm package `fairy-stockfish-nnue.wasm` (pinned and
//!   installed into .local/fsf-wasm by scripts/ensure-fsf-wasm.sh, run by `node`; see
//!   `common::wasm_engine_or_skip`). It checks every shogi-family variant of ours that current
//!   Fairy-Stockfish plays: its built-ins `shogi`, `minishogi`, `judkins`, `kyotoshogi`,
//!   `micro`, `yarishogi`, `torishogi` and `shoshogi`, and Cannon shogi, which it plays from
//!   the `cannonshogi` definition of its src/variants.ini (copied below, loaded with
//!   `VariantPath`). On other seeds than the native checks, so the two builds see different
//!   positions.
//!
//! Not covered: Chu shogi (12x12) does not fit Fairy-Stockfish's largest board (12 files, 10
//! ranks), and no Fairy-Stockfish release has it; our other variants are not Fairy-Stockfish
//! variants (tests/fsf_export.rs loads into 11.1 those our exporter can write).
//!
//! Positions come from seeded random playouts of our rules, so drops, promotions, checks and
//! pins all occur. Fairy-Stockfish's perft counts pawn drops that mate (it applies uchifuzume
//! as a game result, not in move generation), so it is compared with our rules minus that one
//! restriction; uchifuzume itself is tested in tests/rules.rs.
//!
//! Without an engine the tests say so and pass, except under CI (`CI` set), where the test
//! command installs both and their absence is a failure. A variant the native engine does not
//! offer is skipped with a message, under CI too; one the WebAssembly build does not offer is a
//! failure (the pinned release offers them all).

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use rules::{perft, Position, Variant, VariantSpec};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

mod common;
use common::{engine_or_skip, wasm_engine_or_skip, Engine, Launch};

/// Depth-3 count above which the depth-4 count of a Judkins, Yari or Tori position is not
/// compared (it would take seconds per position in each engine).
const LAST_DEPTH_LIMIT: u64 = 100_000;

/// Fairy-Stockfish's own Cannon shogi, the section `cannonshogi` of its src/variants.ini
/// (added in 2023; the WebAssembly build does not ship the file), verbatim.
const CANNONSHOGI_INI: &str = "\
#https://www.chessvariants.com/shogivariants.dir/cannonshogi.html
[cannonshogi:shogi]
dropNoDoubled = -
shogiPawnDropMateIllegal = false
soldier = p
cannon = u
customPiece1 = a:pR
customPiece2 = c:mBcpB
customPiece3 = i:pB
customPiece4 = w:mRpRmFpB2
customPiece5 = f:mBpBmWpR2
promotedPieceType = u:w a:w c:f i:f p:g
startFen = lnsgkgsnl/1rci1uab1/p1p1p1p1p/9/9/9/P1P1P1P1P/1BAU1ICR1/LNSGKGSNL[-] w 0 1
";

/// The native engine on `variant`, or `None` when its `UCI_Variant` option does not list it.
fn start_native(bin: &Path, variant: &str) -> Option<Engine> {
    let (mut e, variants) = Engine::spawn(bin);
    if !variants.split_whitespace().any(|w| w == variant) {
        return None;
    }
    e.send(&format!("setoption name UCI_Variant value {variant}"));
    e.send("isready");
    e.wait("readyok");
    Some(e)
}

/// The WebAssembly engine on `variant`, first loading `ini` (a `variants.ini` text defining it)
/// when given. Panics unless the engine offers a built-in `variant`, or announces the one of
/// `ini` (it ignores an unknown `UCI_Variant` silently, and announces only the variants that
/// user interfaces do not know, so not its built-in shogi variants).
fn start_wasm(launch: &Launch, variant: &str, ini: Option<&str>) -> Engine {
    let (mut e, variants) = Engine::launch(launch);
    let Some(ini) = ini else {
        assert!(
            variants.split_whitespace().any(|w| w == variant),
            "{} offers no UCI_Variant {variant}",
            launch.describe()
        );
        e.send(&format!("setoption name UCI_Variant value {variant}"));
        e.send("isready");
        e.wait("readyok");
        return e;
    };
    let path = std::env::temp_dir().join(format!(
        "rules-fsf-crosscheck-{}-{variant}.ini",
        std::process::id()
    ));
    std::fs::write(&path, ini).unwrap();
    e.send(&format!(
        "setoption name VariantPath value {}",
        path.display()
    ));
    e.send(&format!("setoption name UCI_Variant value {variant}"));
    e.send("isready");
    let announced = format!("info string variant {variant} ");
    let selected = e
        .lines_until("readyok")
        .iter()
        .any(|l| l.starts_with(&announced));
    let _ = std::fs::remove_file(&path);
    assert!(selected, "{} did not select {variant}", launch.describe());
    e
}

/// Fairy-Stockfish's perft of Sho shogi, which is ours but for one rule. Both let a side with
/// king and crown prince leave either attacked, and make a side with one royal piece keep it
/// out of check; they differ on the move that promotes the drunk elephant to the second royal
/// piece. Ours allows it even when it leaves the king attacked (once it is made, the king is no
/// longer the last royal piece; configs/variants/sho.toml). Fairy-Stockfish does not: its
/// legality test (Position::legal, `extinctionPseudoRoyal`) drops the king's pseudo-royalty on a
/// promotion to a royal type only for chess-style pawn promotions (`PROMOTION` moves), not for
/// shogi-style piece promotions (`PIECE_PROMOTION`), so it still requires the king to be safe
/// after the elephant promotes. This counts our legal moves without those promotions; the
/// difference itself is pinned by `wasm::sho_elephant_promotion_leaving_the_king_attacked`.
fn sho_perft_as_fsf(pos: &mut Position, depth: u32) -> u64 {
    if depth == 0 {
        return 1;
    }
    let us = pos.side_to_move();
    let king = pos.king_square(us);
    let mut total = 0;
    for mv in pos.legal_moves() {
        pos.make_move(mv);
        if !refused_by_fsf_sho(pos, king, mv) {
            total += sho_perft_as_fsf(pos, depth - 1);
        }
        pos.unmake_move();
    }
    total
}

/// Whether `mv`, just made by the side whose only royal piece stood on `king` before it,
/// promoted a piece to a second royal piece and left the king attacked: legal in our Sho
/// shogi, not in Fairy-Stockfish's (see [`sho_perft_as_fsf`]).
fn refused_by_fsf_sho(pos: &Position, king: Option<usize>, mv: rules::Move) -> bool {
    let mover = pos.side_to_move().flip();
    let Some(king) = king else { return false };
    mv.promotes()
        && mv.from() != Some(king)
        && pos.royal_count(mover) == 2
        && pos.is_attacked(king, pos.side_to_move())
}

/// What one cross-check compares.
struct Check {
    /// Our variant.
    variant: &'static str,
    /// Random positions.
    positions: usize,
    /// Depths 1 to `max_depth` are compared in each position...
    max_depth: u32,
    /// ...but the last one only where the count at the depth before is at most this
    /// (positions with full hands branch widely).
    skip_last_above: u64,
    seed: u64,
    /// Our perft as the engine counts it: [`perft`], or [`sho_perft_as_fsf`].
    count: fn(&mut Position, u32) -> u64,
}

/// Compares perft counts of `check.positions` random positions with `engine`, which plays the
/// variant; `label` names the engine in the summary line.
fn compare(mut engine: Engine, check: &Check, label: &str) {
    let Check {
        variant,
        positions,
        max_depth,
        skip_last_above,
        seed,
        count,
    } = *check;
    let started = Instant::now();
    let mut spec = VariantSpec::builtin(variant).unwrap();
    for p in spec.pieces.as_mut().unwrap() {
        if let Some(d) = p.drop.as_mut() {
            d.no_mate = Some(false);
        }
    }
    let v = Arc::new(Variant::compile(spec).unwrap());
    let mut rng = StdRng::seed_from_u64(seed);
    let mut deepest = 0;
    let mut nodes = 0;
    for _ in 0..positions {
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
            let ours = count(&mut pos, depth);
            let theirs = engine.perft(&fen, depth);
            assert_eq!(
                ours, theirs,
                "{variant} perft {depth} differs from Fairy-Stockfish ({label}) at {sfen} \
                 (fen {fen})"
            );
            last = ours;
            nodes += ours;
            deepest += usize::from(depth == max_depth);
        }
    }
    drop(engine);
    eprintln!(
        "{variant}: {positions} positions match Fairy-Stockfish ({label}; {deepest} of them at \
         depth {max_depth}; {nodes} leaves in all; {:.1} s)",
        started.elapsed().as_secs_f64()
    );
}

/// The check of `variant` on the native engine's `fsf_variant`.
fn crosscheck(
    variant: &'static str,
    fsf_variant: &str,
    positions: usize,
    max_depth: u32,
    skip_last_above: u64,
    seed: u64,
) {
    let Some(bin) = engine_or_skip() else {
        return;
    };
    let Some(engine) = start_native(&bin, fsf_variant) else {
        eprintln!(
            "skipped: {} offers no UCI_Variant {fsf_variant} (a newer Fairy-Stockfish does)",
            bin.display()
        );
        return;
    };
    let check = Check {
        variant,
        positions,
        max_depth,
        skip_last_above,
        seed,
        count: perft,
    };
    compare(engine, &check, &bin.display().to_string());
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

/// The checks on the current Fairy-Stockfish (WebAssembly build).
mod wasm {
    use super::*;

    /// The check of `check.variant` on the engine's `fsf_variant` (defined by `ini` when given).
    fn crosscheck(fsf_variant: &str, ini: Option<&str>, check: Check) {
        let Some(launch) = wasm_engine_or_skip() else {
            return;
        };
        let engine = start_wasm(&launch, fsf_variant, ini);
        let package = launch.args.last().map(PathBuf::from).unwrap_or_default();
        let label = format!(
            "WebAssembly build {}",
            package.file_name().unwrap_or_default().to_string_lossy()
        );
        compare(engine, &check, &label);
    }

    #[test]
    fn shogi_random_positions_match_fairy_stockfish() {
        crosscheck(
            "shogi",
            None,
            Check {
                variant: "shogi",
                positions: 150,
                max_depth: 3,
                skip_last_above: u64::MAX,
                seed: 101,
                count: perft,
            },
        );
    }

    #[test]
    fn minishogi_random_positions_match_fairy_stockfish() {
        crosscheck(
            "minishogi",
            None,
            Check {
                variant: "minishogi",
                positions: 150,
                max_depth: 4,
                skip_last_above: u64::MAX,
                seed: 102,
                count: perft,
            },
        );
    }

    #[test]
    fn judkins_random_positions_match_fairy_stockfish() {
        crosscheck(
            "judkins",
            None,
            Check {
                variant: "judkins",
                positions: 100,
                max_depth: 4,
                skip_last_above: LAST_DEPTH_LIMIT,
                seed: 103,
                count: perft,
            },
        );
    }

    #[test]
    fn yari_random_positions_match_fairy_stockfish() {
        crosscheck(
            "yarishogi",
            None,
            Check {
                variant: "yari",
                positions: 120,
                max_depth: 4,
                skip_last_above: LAST_DEPTH_LIMIT,
                seed: 104,
                count: perft,
            },
        );
    }

    #[test]
    fn tori_random_positions_match_fairy_stockfish() {
        crosscheck(
            "torishogi",
            None,
            Check {
                variant: "tori",
                positions: 100,
                max_depth: 4,
                skip_last_above: LAST_DEPTH_LIMIT,
                seed: 105,
                count: perft,
            },
        );
    }

    #[test]
    fn kyoto_random_positions_match_fairy_stockfish() {
        crosscheck(
            "kyotoshogi",
            None,
            Check {
                variant: "kyoto",
                positions: 200,
                max_depth: 4,
                skip_last_above: LAST_DEPTH_LIMIT,
                seed: 106,
                count: perft,
            },
        );
    }

    #[test]
    fn micro_random_positions_match_fairy_stockfish() {
        crosscheck(
            "micro",
            None,
            Check {
                variant: "micro",
                positions: 200,
                max_depth: 4,
                skip_last_above: LAST_DEPTH_LIMIT,
                seed: 107,
                count: perft,
            },
        );
    }

    #[test]
    fn sho_random_positions_match_fairy_stockfish() {
        crosscheck(
            "shoshogi",
            None,
            Check {
                variant: "sho",
                positions: 200,
                max_depth: 3,
                skip_last_above: u64::MAX,
                seed: 108,
                count: sho_perft_as_fsf,
            },
        );
    }

    #[test]
    fn cannon_random_positions_match_fairy_stockfish() {
        crosscheck(
            "cannonshogi",
            Some(CANNONSHOGI_INI),
            Check {
                variant: "cannon",
                positions: 60,
                max_depth: 3,
                skip_last_above: u64::MAX,
                seed: 109,
                count: perft,
            },
        );
    }

    /// The one Sho shogi rule on which we and Fairy-Stockfish differ (see
    /// [`sho_perft_as_fsf`]), in a position of the random playouts: gote's king on 5c is checked
    /// by the silver on 5d, and gote's drunk elephant on 5f may promote on 6g, 5g or 4g, which
    /// leaves the king in check. Our rules allow the three promotions (two royal pieces after
    /// them); Fairy-Stockfish's do not, and both count the other five.
    #[test]
    fn sho_elephant_promotion_leaving_the_king_attacked() {
        let Some(launch) = wasm_engine_or_skip() else {
            return;
        };
        let v = Arc::new(Variant::builtin("sho").unwrap());
        let sfen = "l1sg3nl/2r1g2s1/2ppkp2b/1p2S1pp1/P7p/3Pe1P1P/LP+n4PN/1G1S1G2R/1NB2EK1L w - 64";
        let mut pos = Position::from_sfen(&v, sfen).unwrap();
        assert!(pos.in_check());
        let king = pos.king_square(pos.side_to_move());
        let mut refused = Vec::new();
        for mv in pos.legal_moves() {
            pos.make_move(mv);
            if refused_by_fsf_sho(&pos, king, mv) {
                refused.push(v.move_to_usi(mv));
            }
            pos.unmake_move();
        }
        refused.sort();
        assert_eq!(refused, ["5f4g+", "5f5g+", "5f6g+"]);
        assert_eq!(perft(&mut pos, 1), 8);
        assert_eq!(sho_perft_as_fsf(&mut pos, 1), 5);
        let mut engine = start_wasm(&launch, "shoshogi", None);
        assert_eq!(
            engine.perft(&rules::fsf::to_fsf_fen(&pos), 1),
            5,
            "Fairy-Stockfish's Sho shogi no longer refuses the elephant's promotions at {sfen}"
        );
    }
}
