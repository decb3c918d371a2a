//! Named rule regressions: each test builds a position by hand (SFEN) and checks expectations
//! derived by hand from the rule texts (`/work/shared/seeds`) and the variant configs.
//!
//! Coordinates: USI squares are file number then rank letter; rank `a` is the top (gote's back
//! rank), file 1 is the rightmost file seen from sente. In SFEN the first rank written is `a`
//! and the first square of a rank is the highest file.

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use rules::{Color, EndReason, Outcome, Position, Variant, VariantSpec};
use std::collections::BTreeSet;
use std::sync::Arc;

mod support;
use support::*;

fn var(name: &str) -> Arc<Variant> {
    Arc::new(Variant::builtin(name).unwrap_or_else(|e| panic!("built-in {name}: {e}")))
}

fn pos(variant: &str, sfen: &str) -> Position {
    Position::from_sfen_composed(&var(variant), sfen)
        .unwrap_or_else(|e| panic!("{variant} {sfen}: {e}"))
}

/// Squares `<file><rank>` for the given files and ranks.
fn squares(files: &[usize], ranks: &str) -> BTreeSet<String> {
    let mut s = BTreeSet::new();
    for &f in files {
        for r in ranks.chars() {
            s.insert(format!("{f}{r}"));
        }
    }
    s
}

// ---------------------------------------------------------------------------------------------
// Nifu
// ---------------------------------------------------------------------------------------------

#[test]
fn shogi_nifu_pawn_drop_files() {
    // Sente: pawn 7g (unpromoted), tokin 3e; gote pawn 1c. Sente holds a pawn.
    let p = pos("shogi", "4k4/9/8p/9/6+P2/9/2P6/9/4K4 b P 1");
    let drops = drop_squares(&p, 'P');
    // File 7 holds an own unpromoted pawn: no drop there at all.
    assert!(
        drops.iter().all(|s| !s.starts_with('7')),
        "nifu on file 7 violated: {drops:?}"
    );
    assert_illegal(&p, "P*7f");
    assert_illegal(&p, "P*7c");
    // File 3 holds only a promoted pawn: drops allowed on every empty square but rank a.
    let file3: BTreeSet<String> = drops
        .iter()
        .filter(|s| s.starts_with('3'))
        .cloned()
        .collect();
    assert_eq!(file3, set(&["3b", "3c", "3d", "3f", "3g", "3h", "3i"]));
    assert_legal(&p, "P*3d");
    // File 1 holds only an enemy pawn: allowed.
    let file1: BTreeSet<String> = drops
        .iter()
        .filter(|s| s.starts_with('1'))
        .cloned()
        .collect();
    assert_eq!(file1, set(&["1b", "1d", "1e", "1f", "1g", "1h", "1i"]));
    assert_legal(&p, "P*1d");
    // Error message says the drop is illegal (not "no pawn in hand").
    let e = p.parse_usi("P*7e").unwrap_err().to_string();
    assert!(e.contains("illegal drop"), "{e}");
}

#[test]
fn shogi_nifu_applies_to_gote_too() {
    // Gote pawn on 3c, gote holds a pawn; sente pawn on 7g (enemy's, does not count).
    let p = pos("shogi", "4k4/9/6p2/9/9/9/2P6/9/4K4 w p 1");
    let drops = drop_squares(&p, 'P');
    assert!(drops.iter().all(|s| !s.starts_with('3')), "{drops:?}");
    assert!(drops.contains("7f"));
    // Gote may not drop on its last rank (i).
    assert!(drops.iter().all(|s| !s.ends_with('i')), "{drops:?}");
}

#[test]
fn hand_soldier_nifu() {
    // Hand shogi: sente soldier on 7g, gote soldier on 3c; sente holds a soldier.
    let p = pos("hand", "4k4/9/6p2/9/9/9/2P6/9/4K4 b P 1");
    let drops = drop_squares(&p, 'P');
    assert!(drops.iter().all(|s| !s.starts_with('7')), "{drops:?}");
    assert_illegal(&p, "P*7e");
    // A file with only an enemy soldier is fine, including the last rank (soldiers move sideways).
    assert_legal(&p, "P*3d");
    assert_legal(&p, "P*3b");
    assert_legal(&p, "P*3a");
    assert_eq!(drops.len(), 81 - 9 - 3, "all empty squares off file 7");
}

#[test]
fn max_per_file_one_is_nifu() {
    // Shogi with the pawn's `nifu = true` written as `max_per_file = 1`: the same moves.
    let mut spec = VariantSpec::builtin("shogi").unwrap();
    for p in spec.pieces.as_mut().unwrap() {
        if let Some(d) = p.drop.as_mut().filter(|d| d.nifu == Some(true)) {
            d.nifu = None;
            d.max_per_file = Some(1);
        }
    }
    let v = Arc::new(Variant::compile(spec).unwrap());
    let sfen = "4k4/9/8p/9/6+P2/9/2P6/9/4K4 b P 1";
    let p = Position::from_sfen_composed(&v, sfen).unwrap();
    assert_eq!(moves(&p), moves(&pos("shogi", sfen)));
    assert!(drop_squares(&p, 'P').iter().all(|s| !s.starts_with('7')));
}

#[test]
fn tori_at_most_two_own_swallows_on_a_file() {
    // Sente swallows: 7e and 7f (two on file 7), 6e alone on file 6, 5e with a goose on 5d (one
    // unpromoted swallow on file 5); gote swallows 1b and 1c (two on file 1, the enemy's).
    let p = pos("tori", "3k3/6s/6s/2+S4/SSS4/S6/3K3 b S 1");
    let drops = drop_squares(&p, 'S');
    // A third own unpromoted swallow is refused on file 7.
    assert!(drops.iter().all(|s| !s.starts_with('7')), "{drops:?}");
    assert_illegal(&p, "S*7c");
    assert_illegal(&p, "S*7g");
    // A second one is allowed on file 6; the goose does not count on file 5; the enemy's two
    // swallows do not count on file 1.
    assert_legal(&p, "S*6c");
    assert_legal(&p, "S*5c");
    assert_legal(&p, "S*1d");
    // Never on the last rank, where a swallow could not move.
    assert!(drops.iter().all(|s| !s.ends_with('a')), "{drops:?}");
    // Every other empty square: 49 squares, 9 pieces, 5 empty ones on file 7 and 5 more on
    // rank a.
    assert_eq!(drops.len(), 49 - 9 - 5 - 5, "{drops:?}");
    // The same limit for gote: two gote swallows on file 1 close it, one on file 3 does not.
    let p = pos("tori", "3k3/6s/4s1s/7/7/7/3K3 w s 1");
    let drops = drop_squares(&p, 'S');
    assert!(drops.iter().all(|s| !s.starts_with('1')), "{drops:?}");
    assert_legal(&p, "S*3e");
}

#[test]
fn tori_sfen_reader_allows_two_swallows_on_a_file_not_three() {
    let v = var("tori");
    assert!(Position::from_sfen(&v, "3k3/7/7/S6/S6/7/3K3 b - 1").is_ok());
    // Three: unreachable, since swallows keep their file and no drop may make a third.
    let e = Position::from_sfen(&v, "3k3/7/S6/S6/S6/7/3K3 b - 1").unwrap_err();
    assert!(e.to_string().contains("more than 2"), "{e}");
    // Two gote swallows and a sente swallow on one file are fine; so is a goose as a third.
    assert!(Position::from_sfen(&v, "3k3/s6/s6/S6/7/7/3K3 b - 1").is_ok());
    assert!(Position::from_sfen(&v, "3k3/+S6/7/S6/S6/7/3K3 b - 1").is_ok());
    // Composed positions (perft) are not checked.
    assert!(Position::from_sfen_composed(&v, "3k3/7/S6/S6/S6/7/3K3 b - 1").is_ok());
    // Shogi's nifu is the limit 1, with the same message as before the limit was general.
    let e = Position::from_sfen(&var("shogi"), "4k4/9/9/9/9/P8/P8/9/4K4 b - 1").unwrap_err();
    assert!(e.to_string().contains("two unpromoted pawn"), "{e}");
}

#[test]
fn tori_swallow_and_falcon_must_promote_in_the_zone() {
    // Sente falcon 5b (in the zone, as if dropped there), swallow 3c (just outside it); the gote
    // phoenix is out of the way on 7a.
    let p = pos("tori", "k6/2F4/4S2/7/7/7/3K3 b - 1");
    assert_eq!(moves_with(&p, "3c"), set(&["3c3b+"]));
    // Within the zone (5a, 6a, 4a, 6b, 4b) and out of it (6c, 4c): always promoted.
    assert_eq!(
        moves_with(&p, "5b"),
        set(&["5b5a+", "5b6a+", "5b4a+", "5b6b+", "5b4b+", "5b6c+", "5b4c+"])
    );
}

#[test]
fn tori_quails_are_mirror_images_for_both_sides() {
    // Sente left quail on 4d: forward like a lance, back to the right (towards file 1) like a
    // bishop up to its own phoenix on 1g, one step back to the left.
    let p = pos("tori", "k6/7/7/3L3/7/7/6K b - 1");
    assert_eq!(
        moves_with(&p, "4d"),
        set(&["4d4c", "4d4b", "4d4a", "4d3e", "4d2f", "4d5e"])
    );
    // Sente right quail: the mirror image.
    let p = pos("tori", "6k/7/7/3R3/7/7/K6 b - 1");
    assert_eq!(
        moves_with(&p, "4d"),
        set(&["4d4c", "4d4b", "4d4a", "4d5e", "4d6f", "4d3e"])
    );
    // Gote left quail on 4d: its right is towards file 7 and its back towards rank a.
    let p = pos("tori", "6k/7/7/3l3/7/7/K6 w - 1");
    assert_eq!(
        moves_with(&p, "4d"),
        set(&["4d4e", "4d4f", "4d4g", "4d5c", "4d6b", "4d7a", "4d3c"])
    );
}

// ---------------------------------------------------------------------------------------------
// Uchifuzume (drop-pawn mate)
// ---------------------------------------------------------------------------------------------

/// Gote king 5a boxed in by its own pawns 6a and 4a (which cannot capture on 5b); sente golds
/// 6c and 4c guard 5b and cover 6b and 4b.
const BOX: &str = "3pkp3/9/3G1G3/9/9/9/9/9/4K4 b GP 1";

#[test]
fn shogi_pawn_drop_mate_is_illegal() {
    let p = pos("shogi", BOX);
    assert_illegal(&p, "P*5b");
    let e = p.parse_usi("P*5b").unwrap_err().to_string();
    assert!(e.contains("illegal drop"), "{e}");
    // Other pawn drops are fine.
    assert_legal(&p, "P*5d");
    // P*5b really would be mate: the same position with the pawn placed by SFEN is checkmate.
    let mated = pos("shogi", "3pkp3/4P4/3G1G3/9/9/9/9/9/4K4 w G 1");
    assert!(mated.in_check());
    assert!(mated.legal_moves().is_empty());
    assert_eq!(mated.outcome(), win(Color::Sente, EndReason::Checkmate));
}

#[test]
fn shogi_other_piece_drop_may_mate() {
    let mut p = pos("shogi", BOX);
    assert_legal(&p, "G*5b");
    play(&mut p, "G*5b");
    assert!(p.in_check());
    assert!(p.legal_moves().is_empty());
    assert_eq!(p.outcome(), win(Color::Sente, EndReason::Checkmate));
}

#[test]
fn shogi_moved_pawn_may_mate() {
    // Same box, but the pawn stands on 5c and moves to 5b.
    let mut p = pos("shogi", "3pkp3/9/3GPG3/9/9/9/9/9/4K4 b - 1");
    assert_eq!(moves_with(&p, "5c"), set(&["5c5b", "5c5b+"]));
    play(&mut p, "5c5b");
    assert!(p.in_check());
    assert_eq!(p.outcome(), win(Color::Sente, EndReason::Checkmate));
}

#[test]
fn shogi_pawn_drop_check_not_mate_is_legal() {
    // The king can run to 6a or 4a.
    let mut p = pos("shogi", "4k4/9/3G1G3/9/9/9/9/9/4K4 b P 1");
    assert_legal(&p, "P*5b");
    play(&mut p, "P*5b");
    assert!(p.in_check());
    assert_eq!(moves(&p), set(&["5a4a", "5a6a"]));
    assert_eq!(p.outcome(), None);

    // The king is boxed in, but a gote gold on 6a can capture the pawn: not mate, legal.
    let mut p = pos("shogi", "3gkp3/9/3G1G3/9/9/9/9/9/4K4 b P 1");
    assert_legal(&p, "P*5b");
    play(&mut p, "P*5b");
    assert_eq!(moves(&p), set(&["6a5b"]));
}

#[test]
fn cannon_pawn_drop_stalemate_is_legal_and_stalemate_loses() {
    // Gote king 1a alone; sente silver 3b covers 2a, gold 3c covers 2b. P*1c covers 1b without
    // giving check: gote is stalemated, which the rule text allows for a pawn drop.
    let mut p = pos("cannon-shosu", "9k/7S2/7G2/10/10/10/10/10/10/5K4 b P 1");
    assert_legal(&p, "P*1c");
    play(&mut p, "P*1c");
    assert!(!p.in_check());
    assert!(p.legal_moves().is_empty());
    // "The result of a stalemate is the same as that of checkmate": the stalemated side loses.
    assert_eq!(p.outcome(), win(Color::Sente, EndReason::Stalemate));
}

#[test]
fn cannon_pawn_drop_mate_is_illegal() {
    // The shogi box on the 10x10 board (files 6..4 on ranks a and c).
    let p = pos(
        "cannon-shosu",
        "4pkp3/10/4G1G3/10/10/10/10/10/10/5K4 b GP 1",
    );
    assert_illegal(&p, "P*5b");
    assert_legal(&p, "G*5b");
}

#[test]
fn hand_soldier_drop_mate_is_legal() {
    // Hand shogi lists no drop-mate rule: the soldier drop that mates is legal. Gote lances on
    // 6a and 4a cannot reach 5b.
    let mut p = pos("hand", "3lkl3/9/3G1G3/9/9/9/9/9/4K4 b P 1");
    assert_legal(&p, "P*5b");
    play(&mut p, "P*5b");
    assert!(p.in_check());
    assert_eq!(p.outcome(), win(Color::Sente, EndReason::Checkmate));
}

// ---------------------------------------------------------------------------------------------
// Dead squares for drops
// ---------------------------------------------------------------------------------------------

#[test]
fn shogi_dead_square_drops() {
    let all = squares(&[1, 2, 3, 4, 5, 6, 7, 8, 9], "abcdefghi");
    let occupied = set(&["5a", "5i"]);
    let expect = |ranks: &str| -> BTreeSet<String> {
        all.iter()
            .filter(|s| ranks.contains(s.chars().last().unwrap()) && !occupied.contains(*s))
            .cloned()
            .collect()
    };
    let p = pos("shogi", "4k4/9/9/9/9/9/9/9/4K4 b PLN 1");
    assert_eq!(drop_squares(&p, 'P'), expect("bcdefghi"));
    assert_eq!(drop_squares(&p, 'L'), expect("bcdefghi"));
    assert_eq!(drop_squares(&p, 'N'), expect("cdefghi"));
    assert_illegal(&p, "P*3a");
    assert_illegal(&p, "L*3a");
    assert_illegal(&p, "N*3a");
    assert_illegal(&p, "N*3b");
    assert_legal(&p, "N*3c");
    // Gote: the last ranks are i (and h for the knight).
    let p = pos("shogi", "4k4/9/9/9/9/9/9/9/4K4 w pln 1");
    assert_eq!(drop_squares(&p, 'P'), expect("abcdefgh"));
    assert_eq!(drop_squares(&p, 'L'), expect("abcdefgh"));
    assert_eq!(drop_squares(&p, 'N'), expect("abcdefg"));
}

#[test]
fn hand_dead_square_and_zone_drops() {
    let all = squares(&[1, 2, 3, 4, 5, 6, 7, 8, 9], "abcdefghi");
    let occupied = set(&["5a", "5i"]);
    let expect = |ranks: &str| -> BTreeSet<String> {
        all.iter()
            .filter(|s| ranks.contains(s.chars().last().unwrap()) && !occupied.contains(*s))
            .cloned()
            .collect()
    };
    let p = pos("hand", "4k4/9/9/9/9/9/9/9/4K4 b NLP 1");
    // "A knight cannot be dropped into the promotion zone" (ranks a-c for sente).
    assert_eq!(drop_squares(&p, 'N'), expect("defghi"));
    // "A lance may not be dropped on the furthest rank".
    assert_eq!(drop_squares(&p, 'L'), expect("bcdefghi"));
    // A soldier can still move sideways from the last rank: it may be dropped there.
    assert_eq!(drop_squares(&p, 'P'), expect("abcdefghi"));
    assert_legal(&p, "P*1a");
    assert_illegal(&p, "N*1c");
    assert_illegal(&p, "L*1a");
    let p = pos("hand", "4k4/9/9/9/9/9/9/9/4K4 w nlp 1");
    assert_eq!(drop_squares(&p, 'N'), expect("abcdef"));
    assert_eq!(drop_squares(&p, 'L'), expect("abcdefgh"));
    assert_eq!(drop_squares(&p, 'P'), expect("abcdefghi"));
}

// ---------------------------------------------------------------------------------------------
// Forced promotion
// ---------------------------------------------------------------------------------------------

#[test]
fn shogi_forced_promotion() {
    // Pawn 3b, lance 1c, knights 7d and 9e.
    let p = pos("shogi", "4k4/6P2/8L/2N6/N8/9/9/9/4K4 b - 1");
    assert_eq!(moves_with(&p, "3b"), set(&["3b3a+"]));
    assert_eq!(moves_with(&p, "1c"), set(&["1c1b", "1c1b+", "1c1a+"]));
    assert_eq!(moves_with(&p, "7d"), set(&["7d8b+", "7d6b+"]));
    assert_eq!(moves_with(&p, "9e"), set(&["9e8c", "9e8c+"]));
    let e = p.parse_usi("3b3a").unwrap_err().to_string();
    assert!(e.contains("must promote"), "{e}");
    let e = p.parse_usi("7d6b").unwrap_err().to_string();
    assert!(e.contains("must promote"), "{e}");
    // Gote mirror: pawn 7h, lance 9g, knight 3f.
    let p = pos("shogi", "4k4/9/9/9/9/6n2/p8/2p6/4K4 w - 1");
    assert_eq!(moves_with(&p, "7h"), set(&["7h7i+"]));
    assert_eq!(moves_with(&p, "9g"), set(&["9g9h", "9g9h+"]));
    assert_eq!(moves_with(&p, "3f"), set(&["3f4h+", "3f2h+"]));
}

#[test]
fn shogi_promotion_only_from_or_into_zone() {
    // A silver moving out of the zone may promote; a rook far from the zone may not.
    let p = pos("shogi", "4k4/9/2S6/9/9/9/9/7R1/4K4 b - 1");
    assert!(
        moves_with(&p, "7c").contains("7c8d+"),
        "moving out of the zone"
    );
    assert!(moves_with(&p, "7c").contains("7c8d"));
    assert!(moves_with(&p, "2h")
        .iter()
        .all(|m| !m.ends_with('+') || ["a+", "b+", "c+"].iter().any(|z| m.ends_with(z))));
    let e = p.parse_usi("2h2g+").unwrap_err().to_string();
    assert!(e.contains("cannot promote"), "{e}");
}

#[test]
fn hand_knight_must_promote_entering_zone_and_lance_need_not() {
    // Knights 7e (jumps into the zone) and 7g (does not reach it); lance 1c.
    let p = pos("hand", "4k4/9/8L/9/2N6/9/2N6/9/4K4 b - 1");
    assert_eq!(moves_with(&p, "7e"), set(&["7e8c+", "7e6c+"]));
    assert_eq!(moves_with(&p, "7g"), set(&["7g8e", "7g6e"]));
    // The lance has no promoted form: it moves to the last rank and stays there.
    assert_eq!(moves_with(&p, "1c"), set(&["1c1b", "1c1a"]));
    assert_illegal(&p, "1c1a+");
    assert_illegal(&p, "7e6c");
    let mut p = p;
    play(&mut p, "1c1a");
    assert!(p.to_sfen().starts_with("4k3L/"), "{}", p.to_sfen());
}

// ---------------------------------------------------------------------------------------------
// Drops that must give check (Hand shogi's onager and hasty)
// ---------------------------------------------------------------------------------------------

#[test]
fn hand_onager_and_hasty_drops_must_check() {
    // Gote king in the centre (5e).
    let p = pos("hand", "9/9/9/9/4k4/9/9/9/4K4 b OH 1");
    // Onager jumps two squares orthogonally, hasty two diagonally.
    assert_eq!(drop_squares(&p, 'O'), set(&["5c", "5g", "3e", "7e"]));
    assert_eq!(drop_squares(&p, 'H'), set(&["3c", "7c", "3g", "7g"]));
    assert_illegal(&p, "O*5d");
    assert_illegal(&p, "H*4d");
    // Gote king 1a: the checking squares 1c, 3a (onager) and 3c (hasty) are all occupied.
    let p = pos("hand", "6p1k/9/6p1p/9/9/9/9/9/4K4 b OHG 1");
    assert!(
        drop_squares(&p, 'O').is_empty(),
        "{:?}",
        drop_squares(&p, 'O')
    );
    assert!(
        drop_squares(&p, 'H').is_empty(),
        "{:?}",
        drop_squares(&p, 'H')
    );
    assert!(!drop_squares(&p, 'G').is_empty());
    // One square freed: exactly that drop.
    let p = pos("hand", "8k/9/6p1p/9/9/9/9/9/4K4 b OH 1");
    assert_eq!(drop_squares(&p, 'O'), set(&["3a"]));
    assert!(drop_squares(&p, 'H').is_empty());
}

#[test]
fn hand_gote_onager_must_check() {
    let p = pos("hand", "4k4/9/9/9/9/9/9/9/4K4 w o 1");
    // Sente king on 5i: onager checks from 5g, 3i, 7i.
    assert_eq!(drop_squares(&p, 'O'), set(&["5g", "3i", "7i"]));
}

// ---------------------------------------------------------------------------------------------
// Stalemate and checkmate
// ---------------------------------------------------------------------------------------------

#[test]
fn cannon_stalemate_loses_for_gote_and_sente() {
    // Gote to move, stalemated (see the pawn-drop test): sente wins.
    let p = pos("cannon-shosu", "9k/7S2/7G1P/10/10/10/10/10/10/5K4 w - 1");
    assert!(!p.in_check());
    assert!(p.legal_moves().is_empty());
    assert_eq!(p.outcome(), win(Color::Sente, EndReason::Stalemate));
    // Mirror: sente king 10j, gote gold 8i (covers 9i, 9j), pawn 10h (covers 10i).
    let p = pos("cannon-shosu", "5k4/10/10/10/10/10/10/p9/2g7/K9 b - 1");
    assert!(!p.in_check());
    assert!(p.legal_moves().is_empty(), "{:?}", moves(&p));
    assert_eq!(p.outcome(), win(Color::Gote, EndReason::Stalemate));
}

#[test]
fn shogi_checkmate_detection() {
    // Back-rank style mate: gote king 1a, own pawns 1b 2b, sente rook gives check on rank a.
    let p = pos("shogi", "R7k/7pp/9/9/9/9/9/9/4K4 w - 1");
    assert!(p.in_check());
    assert!(p.legal_moves().is_empty());
    assert_eq!(p.outcome(), win(Color::Sente, EndReason::Checkmate));
    // Same, but gote can interpose a dropped gold: not mate.
    let p = pos("shogi", "R7k/7pp/9/9/9/9/9/9/4K4 w g 1");
    assert!(p.in_check());
    assert_eq!(
        moves(&p),
        (2..=8).map(|f| format!("G*{f}a")).collect::<BTreeSet<_>>()
    );
    assert_eq!(p.outcome(), None);
    // The start position is not over.
    let p = Position::start(var("shogi"));
    assert_eq!(p.outcome(), None);
}

// ---------------------------------------------------------------------------------------------
// Repetition and perpetual check
// ---------------------------------------------------------------------------------------------

/// Plays `cycle` (USI moves) `times` times; the start position recurs after each cycle.
/// Returns the outcome after every ply.
fn play_cycles(p: &mut Position, cycle: &str, times: usize) -> Vec<Option<Outcome>> {
    let mut out = Vec::new();
    for _ in 0..times {
        for mv in cycle.split_whitespace() {
            play(p, mv);
            out.push(p.outcome());
        }
    }
    out
}

#[test]
fn shogi_fourfold_repetition_is_a_draw_exactly_at_the_fourth_occurrence() {
    // Rooks 1h and 9b shuffle; no move gives check.
    let mut p = pos("shogi", "4k4/r8/9/9/9/9/9/8R/4K4 b - 1");
    assert_eq!(p.repetition_count(), 1);
    let outcomes = play_cycles(&mut p, "1h2h 9b8b 2h1h 8b9b", 3);
    assert_eq!(outcomes.len(), 12);
    for (ply, o) in outcomes[..11].iter().enumerate() {
        assert_eq!(*o, None, "ply {}", ply + 1);
    }
    // The start position occurs for the 4th time after 12 plies.
    assert_eq!(p.repetition_count(), 4);
    assert_eq!(outcomes[11], draw(EndReason::Repetition));
    // Unmaking the last move takes the draw back.
    p.unmake_move();
    assert_eq!(p.outcome(), None);
    assert_eq!(p.repetition_count(), 3);
}

#[test]
fn positions_differing_only_in_hands_hash_differently() {
    // Positions that differ only in hands or side to move hash differently, so they never
    // count as repetitions of each other.
    let a = pos("shogi", "4k4/9/9/9/9/9/9/9/4K4 b P 1");
    let b = pos("shogi", "4k4/9/9/9/9/9/9/9/4K4 b 2P 1");
    let c = pos("shogi", "4k4/9/9/9/9/9/9/9/4K4 b p 1");
    let d = pos("shogi", "4k4/9/9/9/9/9/9/9/4K4 w P 1");
    let hashes: BTreeSet<u64> = [&a, &b, &c, &d].iter().map(|p| p.hash()).collect();
    assert_eq!(hashes.len(), 4);
}

#[test]
fn shogi_perpetual_check_loses() {
    // Sente's rook checks the gote king on every move: 2e1e+ (file 1), 1a2a, 1e2e (file 2), 2a1a.
    let mut p = pos("shogi", "8k/9/9/9/7R1/9/9/9/4K4 b - 1");
    let outcomes = play_cycles(&mut p, "2e1e 1a2a 1e2e 2a1a", 3);
    for (ply, o) in outcomes[..11].iter().enumerate() {
        assert_eq!(*o, None, "ply {}", ply + 1);
    }
    assert_eq!(outcomes[11], win(Color::Gote, EndReason::PerpetualCheck));
}

#[test]
fn shogi_perpetual_check_by_gote_loses() {
    // Mirror: gote's rook checks the sente king (9i/8i) every move.
    let mut p = pos("shogi", "4k4/9/9/9/1r7/9/9/9/K8 w - 1");
    let outcomes = play_cycles(&mut p, "8e9e 9i8i 9e8e 8i9i", 3);
    for (ply, o) in outcomes[..11].iter().enumerate() {
        assert_eq!(*o, None, "ply {}", ply + 1);
    }
    assert_eq!(outcomes[11], win(Color::Sente, EndReason::PerpetualCheck));
}

#[test]
fn hand_perpetual_check_loses() {
    // The shogun (R3) checks from 1d and 2d in turn.
    let mut p = pos("hand", "8k/9/9/7U1/9/9/9/9/4K4 b - 1");
    let outcomes = play_cycles(&mut p, "2d1d 1a2a 1d2d 2a1a", 3);
    for (ply, o) in outcomes[..11].iter().enumerate() {
        assert_eq!(*o, None, "ply {}", ply + 1);
    }
    assert_eq!(outcomes[11], win(Color::Gote, EndReason::PerpetualCheck));
}

#[test]
fn cannon_perpetual_check_is_a_draw() {
    // perpetual_check = "draw": the same cycle is a plain repetition draw.
    let mut p = pos("cannon-shosu", "9k/10/10/10/8R1/10/10/10/10/5K4 b - 1");
    let outcomes = play_cycles(&mut p, "2e1e 1a2a 1e2e 2a1a", 3);
    for (ply, o) in outcomes[..11].iter().enumerate() {
        assert_eq!(*o, None, "ply {}", ply + 1);
    }
    assert_eq!(outcomes[11], draw(EndReason::Repetition));
}

#[test]
fn tori_repetition_loses_for_the_player_completing_it() {
    // repetition_result = "win": the fourth occurrence is a win for the side to move.
    let mut p = pos("tori", "3k3/7/7/7/7/7/3K3 b - 1");
    let outcomes = play_cycles(&mut p, "4g3g 4a3a 3g4g 3a4a", 3);
    for (ply, o) in outcomes[..11].iter().enumerate() {
        assert_eq!(*o, None, "ply {}", ply + 1);
    }
    // Gote's move completed the repetition: sente, to move, wins.
    assert_eq!(outcomes[11], win(Color::Sente, EndReason::Repetition));
    // Started by gote, the same cycle makes sente lose.
    let mut p = pos("tori", "3k3/7/7/7/7/7/3K3 w - 1");
    let outcomes = play_cycles(&mut p, "4a3a 4g3g 3a4a 3g4g", 3);
    assert_eq!(outcomes[10], None);
    assert_eq!(outcomes[11], win(Color::Gote, EndReason::Repetition));
}

#[test]
fn minishogi_repetition_loses_for_sente_whoever_is_to_move() {
    // repetition_result = "loss" for sente: the kings shuffle, no move checks.
    let mut p = pos("minishogi", "4k/5/5/5/K4 b - 1");
    let outcomes = play_cycles(&mut p, "5e4e 1a2a 4e5e 2a1a", 3);
    for (ply, o) in outcomes[..11].iter().enumerate() {
        assert_eq!(*o, None, "ply {}", ply + 1);
    }
    // Sente to move at the fourth occurrence: sente loses.
    assert_eq!(outcomes[11], win(Color::Gote, EndReason::Repetition));
    // Gote to move at the fourth occurrence (a rule of the side to move would make gote lose).
    let mut p = pos("minishogi", "4k/5/5/5/K4 w - 1");
    let outcomes = play_cycles(&mut p, "1a2a 5e4e 2a1a 4e5e", 3);
    assert_eq!(outcomes[10], None);
    assert_eq!(outcomes[11], win(Color::Gote, EndReason::Repetition));
}

#[test]
fn minishogi_perpetual_check_by_gote_still_loses() {
    // Gote's rook checks the sente king on files 5 and 4 in turn: the checker loses, so here
    // sente wins the repetition that would otherwise lose for sente.
    let mut p = pos("minishogi", "4k/5/1r3/5/K4 w - 1");
    let outcomes = play_cycles(&mut p, "4c5c 5e4e 5c4c 4e5e", 3);
    for (ply, o) in outcomes[..11].iter().enumerate() {
        assert_eq!(*o, None, "ply {}", ply + 1);
    }
    assert_eq!(outcomes[11], win(Color::Sente, EndReason::PerpetualCheck));
}

#[test]
fn tori_perpetual_check_still_loses() {
    // The sente eagle checks the gote phoenix down files 1 and 2 in turn (its backward rook move);
    // the checking side loses although repetitions favour the side to move.
    let mut p = pos("tori", "K6/7/7/7/5+F1/7/6k b - 1");
    let outcomes = play_cycles(&mut p, "2e1e 1g2g 1e2e 2g1g", 3);
    for (ply, o) in outcomes[..11].iter().enumerate() {
        assert_eq!(*o, None, "ply {}", ply + 1);
    }
    assert_eq!(outcomes[11], win(Color::Gote, EndReason::PerpetualCheck));
}

#[test]
fn cannon_quiet_repetition_is_a_draw() {
    let mut p = pos("cannon-shosu", "5k4/r9/10/10/10/10/10/10/9R/5K4 b - 1");
    let outcomes = play_cycles(&mut p, "1i2i 10b9b 2i1i 9b10b", 3);
    for (ply, o) in outcomes[..11].iter().enumerate() {
        assert_eq!(*o, None, "ply {}", ply + 1);
    }
    assert_eq!(outcomes[11], draw(EndReason::Repetition));
}

// ---------------------------------------------------------------------------------------------
// Check evasion, pins, cannons
// ---------------------------------------------------------------------------------------------

#[test]
fn shogi_check_evasions_only() {
    // Gote rook 5c checks the sente king 5i down file 5; sente has gold 4h, pawn 9g, pawn in hand.
    let p = pos("shogi", "4k4/9/4r4/9/9/9/P8/5G3/4K4 b P 1");
    assert!(p.in_check());
    assert_eq!(
        moves(&p),
        set(&[
            "5i4i", "5i6i", "5i6h", // king steps off the file (5h stays on it)
            "4h5h", "4h5g", // the gold interposes
            "P*5d", "P*5e", "P*5f", "P*5g", "P*5h", // a pawn interposes
        ])
    );
    // Every legal move really resolves the check.
    let mut q = p.clone();
    for m in p.legal_moves() {
        q.make_move(m);
        let k = q.king_square(Color::Sente).unwrap();
        assert!(!q.is_attacked(k, Color::Gote), "{}", p.move_to_usi(m));
        q.unmake_move();
    }
}

#[test]
fn shogi_pinned_pieces_move_along_the_pin() {
    // Rook 5f pinned by gote rook 5b; silver 6h pinned by gote bishop 9e.
    let p = pos("shogi", "8k/4r4/9/9/b8/4R4/9/3S5/4K4 b - 1");
    assert!(!p.in_check());
    assert_eq!(
        moves_with(&p, "5f"),
        set(&["5f5g", "5f5h", "5f5e", "5f5d", "5f5c", "5f5c+", "5f5b", "5f5b+"])
    );
    assert_eq!(moves_with(&p, "6h"), set(&["6h7g"]));
    assert_eq!(moves_with(&p, "5i"), set(&["5i4i", "5i6i", "5i4h", "5i5h"]));
}

#[test]
fn hand_pin_by_limited_range_piece() {
    // Gote shogun (R3) on 5f, sente gold on 5h, sente king 5i: distance 3, the gold is pinned.
    let p = pos("hand", "4k4/9/9/9/9/4u4/9/4G4/4K4 b - 1");
    assert_eq!(moves_with(&p, "5h"), set(&["5h5g"]));
    // One square further (5e) the shogun does not reach the king: the gold moves freely.
    let p = pos("hand", "4k4/9/9/9/4u4/9/9/4G4/4K4 b - 1");
    assert_eq!(
        moves_with(&p, "5h"),
        set(&["5h5g", "5h4h", "5h6h", "5h4g", "5h6g"])
    );
}

#[test]
fn cannon_check_resolved_by_moving_the_screen_or_adding_a_second() {
    // Gote gold cannon 5c, sente gold 5g (the screen), sente king 5j: check through one screen.
    let p = pos("cannon-shosu", "9k/10/5c4/10/10/10/5G4/10/10/5K4 b P 1");
    assert!(p.in_check());
    assert_eq!(
        moves(&p),
        set(&[
            "5j4j", "5j6j", "5j4i",
            "5j6i", // king off the file (5i is still behind the screen)
            "5g4g", "5g6g", "5g4f", "5g6f", // the screen leaves the file
            "P*5d", "P*5e", "P*5f", "P*5h", "P*5i", // a second screen
        ])
    );
    assert_illegal(&p, "5g5f");
    assert_illegal(&p, "5g5h");
    assert_illegal(&p, "5j5i");
}

#[test]
fn cannon_king_may_capture_the_screen() {
    // The screen is a gote knight on 5i (it attacks nothing); the king takes it.
    let p = pos("cannon-shosu", "9k/10/5c4/10/10/10/10/10/5n4/5K4 b - 1");
    assert!(p.in_check());
    assert_eq!(moves(&p), set(&["5j4j", "5j6j", "5j4i", "5j6i", "5j5i"]));
}

#[test]
fn cannon_piece_may_not_become_a_screen_against_its_own_king() {
    // Gote gold cannon 5c, sente king 5j, file between empty: no check yet.
    let p = pos("cannon-shosu", "9k/10/5c4/10/10/10/6G3/10/10/5K4 b P 1");
    assert!(!p.in_check());
    // The gold on 4g may not step onto file 5 (5g, 5f).
    assert_eq!(moves_with(&p, "4g"), set(&["4g4f", "4g4h", "4g3g", "4g3f"]));
    assert_illegal(&p, "4g5g");
    assert_illegal(&p, "4g5f");
    // Nor may a pawn be dropped between cannon and king.
    for r in ['d', 'e', 'f', 'g', 'h', 'i'] {
        assert_illegal(&p, &format!("P*5{r}"));
    }
    assert_legal(&p, "P*5b"); // beyond the cannon
    assert_legal(&p, "P*4e");
    // The king itself may walk up the empty file.
    assert_legal(&p, "5j5i");
    // Gote side: a gote piece may not become the screen of a sente cannon either.
    // Gote gold 6d may not step to 5d or 5e (between the sente cannon 5h and the gote king 5a).
    let p = pos("cannon-shosu", "5k4/10/10/4g5/10/10/10/5C4/10/9K w p 1");
    assert!(!p.in_check());
    assert_eq!(moves_with(&p, "6d"), set(&["6d6c", "6d6e", "6d7d", "6d7e"]));
    assert_illegal(&p, "P*5e");
    assert_illegal(&p, "P*5c");
    assert_legal(&p, "P*4e");
}

#[test]
fn cannon_rook_general_jumps_two_screens() {
    // Promoted gold cannon (rook general, R(paf)2cR) on 5c: attacks directly and through one or
    // two screens. With the gold 5g as screen the only evasions are king moves off the file.
    let p = pos("cannon-shosu", "9k/10/5+c4/10/10/10/5G4/10/10/5K4 b P 1");
    assert!(p.in_check());
    assert_eq!(moves(&p), set(&["5j4j", "5j6j", "5j4i", "5j6i"]));
}

#[test]
fn silver_cannon_checks_diagonally_through_a_screen() {
    // Gote silver cannon (mBcpB) on 9a: diagonal 9a-8b-7c-6d-5e; a sente pawn on 7c is the
    // screen, the sente king stands on 5e.
    let p = pos("cannon-shosu", "1a7k/10/3P6/10/5K4/10/10/10/10/10 b - 1");
    assert!(p.in_check());
    // The screen may step off the diagonal.
    assert_legal(&p, "7c7b");
    assert_legal(&p, "7c7b+");
    // The king may leave the diagonal, but not slide along it (still behind the one screen).
    assert_legal(&p, "5e4e");
    assert_illegal(&p, "5e6d");
    assert_illegal(&p, "5e4f");
}

// ---------------------------------------------------------------------------------------------
// Hash and make/unmake
// ---------------------------------------------------------------------------------------------

fn sfen_without_move_number(s: &str) -> String {
    s.rsplit_once(' ').unwrap().0.to_string()
}

#[test]
fn make_unmake_restores_sfen_and_hash_and_hash_matches_reparse() {
    let mut rng = StdRng::seed_from_u64(0x5EED_0001);
    for name in rules::VariantSpec::builtin_names() {
        let v = var(name);
        for game in 0..12 {
            let mut p = Position::start(v.clone());
            let mut trail: Vec<(String, u64, bool)> = Vec::new();
            for ply in 0..160 {
                let ms = p.legal_moves();
                if ms.is_empty() {
                    break;
                }
                trail.push((p.to_sfen(), p.hash(), p.in_check()));
                let m = ms[rng.random_range(0..ms.len())];
                p.make_move(m);
                let sfen = p.to_sfen();
                let q = Position::from_sfen(&v, &sfen)
                    .unwrap_or_else(|e| panic!("{name} game {game} ply {ply}: {sfen}: {e}"));
                assert_eq!(q.to_sfen(), sfen);
                assert_eq!(
                    q.hash(),
                    p.hash(),
                    "{name} game {game} ply {ply}: incremental hash differs from re-parsed {sfen}"
                );
                assert_eq!(q.in_check(), p.in_check(), "{name}: in_check of {sfen}");
                // Same position with another move number: same hash.
                let other = format!("{} 77", sfen_without_move_number(&sfen));
                assert_eq!(Position::from_sfen(&v, &other).unwrap().hash(), p.hash());
                // Move generation depends on the position only, not on the history.
                let mut a: Vec<String> =
                    p.legal_moves().iter().map(|&m| p.move_to_usi(m)).collect();
                let mut b: Vec<String> =
                    q.legal_moves().iter().map(|&m| q.move_to_usi(m)).collect();
                a.sort();
                b.sort();
                assert_eq!(a, b, "{name}: moves of {sfen}");
            }
            while let Some((sfen, hash, check)) = trail.pop() {
                p.unmake_move();
                assert_eq!(p.to_sfen(), sfen, "{name} game {game}: unmake");
                assert_eq!(p.hash(), hash, "{name} game {game}: unmake hash of {sfen}");
                assert_eq!(p.in_check(), check);
            }
            assert_eq!(p.ply(), 0);
            assert_eq!(p.to_sfen(), v.start_sfen);
        }
    }
}

#[test]
fn make_unmake_restores_a_large_hand() {
    // Sente already holds 63 pawns and captures another (a kind's total may reach 255).
    let v = var("shogi");
    let sfen = "4k4/9/9/9/9/9/4p4/4R4/4K4 b 63P 1";
    let mut p = Position::from_sfen_composed(&v, sfen).unwrap();
    let hash = p.hash();
    let m = p.parse_usi("5h5g").unwrap();
    p.make_move(m);
    assert!(p.to_sfen().contains(" 64P"), "{}", p.to_sfen());
    p.unmake_move();
    assert_eq!(p.to_sfen(), sfen);
    assert_eq!(p.hash(), hash);
    // More than 255 of a kind in total is refused with an error naming the hand.
    assert!(Position::from_sfen_composed(&v, "4k4/9/9/9/9/9/4p4/4R4/4K4 b 255P 1").is_err());
}

#[test]
fn hash_distinguishes_side_to_move_and_promotion() {
    let a = pos("shogi", "4k4/9/9/9/9/9/9/9/4K4 b - 1");
    let b = pos("shogi", "4k4/9/9/9/9/9/9/9/4K4 w - 1");
    assert_ne!(a.hash(), b.hash());
    let c = pos("shogi", "4k4/9/9/9/4P4/9/9/9/4K4 b - 1");
    let d = pos("shogi", "4k4/9/9/9/4+P4/9/9/9/4K4 b - 1");
    let e = pos("shogi", "4k4/9/9/9/4p4/9/9/9/4K4 b - 1");
    assert_ne!(c.hash(), d.hash());
    assert_ne!(c.hash(), e.hash());
    // Transposition: two move orders to the same position give the same hash.
    let v = var("shogi");
    let mut x = Position::start(v.clone());
    let mut y = Position::start(v);
    play(&mut x, "7g7f 3c3d 2g2f");
    play(&mut y, "2g2f 3c3d 7g7f");
    assert_eq!(x.hash(), y.hash());
    assert_eq!(x.to_sfen(), y.to_sfen());
}

#[test]
fn unreachable_positions_are_refused_with_the_reason() {
    let shogi = var("shogi");
    for (sfen, reason) in [
        (
            "lnsg1gsnl/1r5b1/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL b - 1",
            "gote has no royal piece",
        ),
        (
            "lnsgkgsnl/1r5b1/ppppppppp/9/9/4P4/PPPPPPPPP/1B5R1/LNSGKGSNL b - 1",
            "two unpromoted",
        ),
        (
            "lnsgkgsnP/1r5b1/pppppppp1/9/9/9/PPPPPPPP1/1B5R1/LNSGKGSNL b - 1",
            "could never move",
        ),
        (
            "lnsgkgsnl/1r5b1/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL b N 1",
            "pieces of kind N",
        ),
    ] {
        let e = Position::from_sfen(&shogi, sfen).unwrap_err().to_string();
        assert!(e.contains(reason), "{sfen}: {e}");
        // Composed positions (perft data) may still be read on purpose.
        assert!(Position::from_sfen_composed(&shogi, sfen).is_ok(), "{sfen}");
    }
    // Hand shogi's soldiers step sideways: two on a file is reachable there.
    let hand = var("hand");
    let sfen = "2g1k1g2/2p1d1p2/3ppp3/9/9/4P4/3PPP3/2P1D4/2G1K1G2 b TU2SOH2N2Ltu2soh2n2l 1";
    assert!(Position::from_sfen(&hand, sfen).is_ok());
}

/// The token of the piece on a USI square.
fn token_at(p: &Position, square: &str) -> String {
    let v = p.variant().clone();
    let piece = p.piece_at(v.parse_square(square).unwrap());
    assert!(!piece.is_empty(), "{square} is empty in {}", p.to_sfen());
    v.kind_token(piece.kind())
}

#[test]
fn kyoto_pieces_turn_over_after_every_move() {
    let mut p = pos("kyoto", "p+nks+l/5/5/5/+LSK+NP b - 1");
    // The pawn steps forward and lands as a rook; no "+" in the move, it has no choice.
    assert!(moves(&p).contains("1e1d") && !moves(&p).contains("1e1d+"));
    p.play_usi("1e1d").unwrap();
    assert_eq!(token_at(&p, "1d"), "+P");
    p.play_usi("5a5b").unwrap();
    assert_eq!(token_at(&p, "5b"), "+P", "gote's pawn became a rook");
    // The rook slides and turns back into a pawn; the king never turns over.
    p.play_usi("1d1b").unwrap();
    assert_eq!(token_at(&p, "1b"), "P");
    p.play_usi("3a3b").unwrap();
    assert_eq!(token_at(&p, "3b"), "K");
    // Taking back restores the sides.
    p.unmake_move();
    p.unmake_move();
    assert_eq!(token_at(&p, "1d"), "+P");
}

#[test]
fn kyoto_drops_either_side_up_anywhere() {
    let mut p = pos("kyoto", "k4/5/5/5/4K b P 1");
    let drops = moves_with(&p, "P*");
    let promoted = moves_with(&p, "+P*");
    // 23 empty squares each way: no immobility or nifu rule stops a pawn on the last rank.
    assert_eq!((drops.len(), promoted.len()), (23, 23));
    assert!(drops.contains("P*4a") && promoted.contains("+P*3c"));
    p.play_usi("+P*3c").unwrap();
    assert_eq!(token_at(&p, "3c"), "+P");
    assert_eq!(p.to_sfen(), "k4/5/2+P2/5/4K w - 2");
    p.unmake_move();
    assert_eq!(p.to_sfen(), "k4/5/5/5/4K b P 1");
}

#[test]
fn micro_pieces_turn_over_only_when_they_capture() {
    // A quiet pawn move keeps the pawn...
    let mut p = pos("micro", "k3/4/4/1P2/3K b - 1");
    p.play_usi("3d3c").unwrap();
    assert_eq!(token_at(&p, "3c"), "P");
    // ...a capture turns it into a knight, and the knight's capture turns it back.
    let mut p = pos("micro", "k3/4/1p2/1P2/3K b - 1");
    p.play_usi("3d3c").unwrap();
    assert_eq!(token_at(&p, "3c"), "+P");
    assert_eq!(p.to_sfen(), "k3/4/1+P2/4/3K w P 2");
    let mut p = pos("micro", "k3/1+r2/4/2+P1/3K b - 1");
    assert!(moves(&p).contains("2d3b"), "the knight jumps");
    p.play_usi("2d3b").unwrap();
    assert_eq!(token_at(&p, "3b"), "P");
}

#[test]
fn flipping_needs_a_promoted_side_and_a_known_trigger() {
    let base = "name = \"t\"\nfiles = 3\nranks = 3\nstart = \"k2/3/2K b - 1\"\n\
                [[pieces]]\nletter = \"K\"\nbetza = \"K\"\nroyal = true\n";
    let bad = format!("{base}[[pieces]]\nletter = \"P\"\nbetza = \"fW\"\npromotion = \"flip\"\n");
    let e = rules::VariantSpec::from_toml(&bad, "t.toml")
        .and_then(|s| Variant::compile_named(s, "t.toml"))
        .unwrap_err()
        .to_string();
    assert!(e.contains("promotion") && e.contains("promoted"), "{e}");
    let bad = format!("{base}[promotion]\nflip_on = \"drop\"\n");
    let e = rules::VariantSpec::from_toml(&bad, "t.toml")
        .and_then(|s| Variant::compile_named(s, "t.toml"))
        .unwrap_err()
        .to_string();
    assert!(e.contains("promotion.flip_on"), "{e}");
}

#[test]
fn sho_two_royals_need_not_guard_either_one() {
    // King on 5i attacked by the rook on 5a, crown prince on 1i: no check to answer.
    let p = pos("sho", "4r3k/9/9/9/9/9/9/9/4K3+E b - 1");
    assert!(!p.in_check());
    assert!(moves(&p).contains("1i1h"), "{:?}", moves(&p));
    assert_eq!(p.royal_count(Color::Sente), 2);
    // Once the king is taken, the prince is the last royal piece and is guarded like a king.
    let mut p = pos("sho", "4r3k/9/9/9/9/9/9/9/4K3+E w - 1");
    p.play_usi("5a5i").unwrap();
    assert_eq!(p.royal_count(Color::Sente), 1);
    assert_eq!(p.king_square(Color::Sente), p.variant().parse_square("1i"));
    // The rook on 5i attacks the prince's 1i along the rank: the prince must step off it.
    assert!(p.in_check());
    assert_eq!(moves(&p), ["1i1h", "1i2h"].map(String::from).into());
}

#[test]
fn sho_promoting_a_second_royal_answers_a_check() {
    // Only the king, in check from the rook; the elephant on 1d can promote on 1c or 2c.
    let p = pos("sho", "4r3k/9/9/8E/9/9/9/9/4K4 b - 1");
    assert!(p.in_check());
    let elephant = moves_with(&p, "1d");
    assert_eq!(elephant, ["1d1c+", "1d2c+"].map(String::from).into());
    // Without check only the usual choice is left.
    let p = pos("sho", "3r4k/9/9/8E/9/9/9/9/4K4 b - 1");
    let elephant = moves_with(&p, "1d");
    assert!(elephant.contains("1d1c") && elephant.contains("1d1c+") && elephant.contains("1d2d"));
}

#[test]
fn annan_start_pieces_borrow_from_behind() {
    let p = pos(
        "annan",
        "lnsgkgsnl/1r5b1/p1ppppp1p/1p5p1/9/1P5P1/P1PPPPP1P/1B5R1/LNSGKGSNL b - 1",
    );
    // Counted by hand: nine pawn steps, the bishop and the rook jump as the knights behind
    // them (two each), and the back rank moves as in shogi (15).
    assert_eq!(p.legal_moves().len(), 28);
    assert_eq!(
        moves_with(&p, "8h"),
        ["8h7f", "8h9f"].map(String::from).into()
    );
    assert_eq!(
        moves_with(&p, "2h"),
        ["2h1f", "2h3f"].map(String::from).into()
    );
    assert_eq!(moves_with(&p, "8i"), BTreeSet::new());
}

#[test]
fn annan_a_pawn_backed_by_a_rook_moves_as_a_rook_and_promotes_as_a_pawn() {
    let p = pos("annan", "8k/9/9/9/4P4/4R4/9/9/4K4 b - 1");
    let pawn = moves_with(&p, "5e");
    // Forward to 5a (a pawn must promote there), no step back onto the rook, and the whole rank.
    for m in [
        "5e5d", "5e5c", "5e5c+", "5e5b", "5e5b+", "5e5a+", "5e9e", "5e1e",
    ] {
        assert!(pawn.contains(m), "{m} missing from {pawn:?}");
    }
    assert!(!pawn.contains("5e5a") && !pawn.contains("5e5f"));
    assert_eq!(pawn.len(), 14);
}

#[test]
fn annan_borrowed_attacks_give_check() {
    // Gote's pawn on 5c, backed by its rook on 5b, attacks down the file as a rook.
    let p = pos("annan", "8k/4r4/4p4/9/9/9/9/9/4K4 b - 1");
    assert!(p.in_check());
    assert_eq!(
        moves(&p),
        ["5i4h", "5i4i", "5i6h", "5i6i"].map(String::from).into()
    );
}

#[test]
fn annan_taking_the_piece_behind_an_attacker_can_expose_the_king() {
    // Gote's gold on 5c moves as the pawn behind it (to 5d only); taking that pawn gives the
    // gold its own moves back, and with them an attack on the king on 4d.
    let p = pos("annan", "8k/4p4/4g4/5K3/7B1/9/9/9/9 b - 1");
    assert!(!p.in_check());
    let bishop = moves_with(&p, "2e");
    assert!(bishop.contains("2e4c") && !bishop.contains("2e5b") && !bishop.contains("2e5b+"));
    // Without the gold in between the same capture is fine.
    let p = pos("annan", "8k/4p4/9/5K3/7B1/9/9/9/9 b - 1");
    assert!(moves_with(&p, "2e").contains("2e5b+"));
}

#[test]
fn unashogi_starts_with_every_piece_in_hand() {
    let p = pos(
        "unashogi",
        "9/9/9/9/9/9/9/9/9 b KRB2G2S2N2L9Pkrb2g2s2n2l9p 1",
    );
    // Counted by hand: K R B G S anywhere (5 x 81), N off the last two ranks (63), L and P off
    // the last rank (72 each).
    assert_eq!(p.legal_moves().len(), 612);
    assert_eq!(moves_with(&p, "K*").len(), 81);
}

#[test]
fn unashogi_no_capture_or_promotion_before_the_king_is_placed() {
    let p = pos("unashogi", "8k/9/9/9/4p4/4R4/9/9/9 b K 1");
    let all = moves(&p);
    assert!(!all.contains("5f5e"), "a capture with the king in hand");
    // The king may go anywhere empty that gote's armed pieces do not attack (1b, 2a, 2b).
    assert_eq!(moves_with(&p, "K*").len(), 78 - 3);
    let p = pos("unashogi", "8k/9/9/4P4/9/9/9/9/9 b K 1");
    assert_eq!(moves_with(&p, "5d"), ["5d5c"].map(String::from).into());
    let p = pos("unashogi", "8k/9/9/4P4/9/9/9/9/4K4 b - 1");
    assert_eq!(
        moves_with(&p, "5d"),
        ["5d5c", "5d5c+"].map(String::from).into()
    );
}

#[test]
fn unashogi_quasi_check_needs_no_answer_until_the_king_drop_arms_it() {
    // Gote's rook attacks sente's king, but gote's king is still in hand: no check.
    let p = pos("unashogi", "9/9/9/9/9/9/9/4r4/4K4 b k 1");
    assert!(!p.in_check());
    assert_eq!(
        moves(&p),
        ["5i4h", "5i4i", "5i5h", "5i6h", "5i6i"]
            .map(String::from)
            .into()
    );
    // Dropping gote's king arms its rook: sente is in check at once.
    let mut p = pos("unashogi", "4r4/9/9/9/9/9/9/9/4K4 w k 1");
    p.play_usi("K*1a").unwrap();
    assert!(p.in_check());
    assert!(!moves(&p).contains("5i5h"));
}

/// No variant generates a move twice (a leap to the second square of a ride, as in `QD`, once
/// did): in random games of every built-in variant, the legal moves are distinct.
#[test]
fn no_variant_generates_a_move_twice() {
    let mut rng = StdRng::seed_from_u64(17);
    for name in VariantSpec::builtin_names() {
        let v = builtin(name);
        for _ in 0..3 {
            let mut p = Position::start(v.clone());
            for _ in 0..150 {
                let ms = p.legal_moves();
                let distinct: BTreeSet<_> = ms.iter().map(|&m| p.move_to_usi(m)).collect();
                assert_eq!(distinct.len(), ms.len(), "{name}: {}", p.to_sfen());
                if ms.is_empty() || p.outcome().is_some() {
                    break;
                }
                p.make_move(ms[rng.random_range(0..ms.len())]);
            }
        }
    }
}
