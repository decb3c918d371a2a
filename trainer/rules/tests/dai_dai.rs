//! Dai-dai shogi, tested by hand (configs/variants/dai-dai.toml has the readings): the start
//! position's moves, the Lion Dog's three steps along a line, the Furious Fiend, promotion by
//! capture, the hook movers and the one-sided generals and chariots. Each mechanism also has a
//! deliberate break of the config that a test sees. Squares are USI: file 17..1 from left to
//! right, rank a (gote's first rank) to q (sente's first rank); sente moves towards rank a.

use rules::{perft, Color, EndReason, Position, Variant};
use std::sync::Arc;

mod support;
use support::*;

fn dai_dai() -> Arc<Variant> {
    builtin("dai-dai")
}

#[test]
fn start_position_move_count_by_hand() {
    // Sente's camp, ranks k to q (rank o has holes on files 17, 15, 13, 11, 7, 5, 3, 1):
    // - howling dogs 12k and 6k: up their files to the gote dogs on rank g: 4 each, 8;
    // - pawns (rank l): a step forward, but the two under the dogs: 15;
    // - rank m: walled in by the pawns and ranks l to n: 0;
    // - rank n, backwards into the holes: blue dragon 17n to 17o (its two straight back),
    //   fragrant elephant 16n to 17o and 15o (two diagonally back), white elephant 2n to 3o
    //   and 1o (its backward diagonals), white tiger 1n to 1o (its backward ride): 6;
    // - rank o, sideways: vertical mover 16o to 17o and 15o, water buffalo 12o to 11o and
    //   13o, flying horse 6o to 7o and 5o, enchanted badger 4o to 5o and 3o: 8;
    // - rank p: reverse chariots 17p and 1p one up (2), old kite 16p diagonally to 17o and
    //   15o (2), the lion 15p to 15o, its jumps to 17o and 13o, and the pass 15p15o15p (4),
    //   old rat 14p diagonally to 15o and 13o (2), prancing stag 13p up to 13o (1), cat sword
    //   12p to 13o and 11o (2), phoenix 11p up to 11o (1), golds 10p and 8p diagonally to 11o
    //   and 7o (2), rushing bird 6p to 7o and 5o (2), blind monkey 4p to 5o and 3o (2), lion
    //   dog 3p up to 3o (1): 21;
    // - rank q: walled in: 0.
    // 8 + 15 + 6 + 8 + 21 = 58.
    let p = Position::start(dai_dai());
    assert_eq!(p.legal_moves().len(), 58);
    let mut want = counts(&[
        ("12k", 4),
        ("6k", 4),
        ("17n", 1),
        ("16n", 2),
        ("2n", 2),
        ("1n", 1),
        ("16o", 2),
        ("12o", 2),
        ("6o", 2),
        ("4o", 2),
        ("17p", 1),
        ("1p", 1),
        ("16p", 2),
        ("15p", 4),
        ("14p", 2),
        ("13p", 1),
        ("12p", 2),
        ("11p", 1),
        ("10p", 1),
        ("8p", 1),
        ("6p", 2),
        ("4p", 2),
        ("3p", 1),
    ]);
    for f in (1..=17).filter(|&f| f != 12 && f != 6) {
        want.insert(format!("{f}l"), 1);
    }
    assert_eq!(moves_by_origin(&p), want);
    assert_eq!(dests(&p, "12k"), set(&["12j", "12i", "12h", "12g"]));
    assert_eq!(dests(&p, "15p"), set(&["15o", "17o", "13o", "15o15p"]));
    assert_legal(&p, "15p15o15p");
    assert_eq!(name_at(&p, "3p"), "lion dog");
    assert_eq!(name_at(&p, "10q"), "left general");
}

#[test]
fn the_lion_dog_takes_along_one_line() {
    // The lion dog on 9i, gote pawns on 9h and 9g, 9f empty: the 24 jumps plus six moves
    // that take on the way forward (see tests/powers.rs for the same count on the test board).
    let v = dai_dai();
    let pieces = [("9i", "W!"), ("9h", "p"), ("9g", "p")];
    let p = cornered(&v, &pieces, "b");
    assert_eq!(moves_with(&p, "9i").len(), 30);
    for usi in ["9i9h9g9f", "9i9g9h", "9i9h9i", "9i9h9f", "9i9g9f"] {
        assert_legal(&p, usi);
    }
    // Taking both promotes it by the capture: a great elephant on 9f.
    let mut q = p.clone();
    play(&mut q, "9i9h9g9f");
    assert_eq!(name_at(&q, "9f"), "great elephant");
    assert_eq!(
        (name_at(&q, "9h"), name_at(&q, "9g")),
        ("-".into(), "-".into())
    );
    // Break: a ranging lion dog (an older Western reading) has no moves of several steps.
    let ranger = broken(
        "dai-dai",
        "betza = \"KADGH\"\nlion_line = \"Q3\"\npromoted = { name = \"great elephant\"",
        "betza = \"Q3\"\npromoted = { name = \"great elephant\"",
    );
    let p = cornered(&ranger, &pieces, "b");
    // Its forward line ends at the first pawn (taken); three squares each way else: 22.
    assert_eq!(moves_with(&p, "9i").len(), 22);
    assert_illegal(&p, "9i9h9g9f");
}

#[test]
fn the_furious_fiend_is_a_lion_and_a_lion_dog() {
    // The lion on 9i takes the gote pawn on 9h and promotes to a furious fiend; the fiend on
    // 9h then reaches three squares away (9e) as well as the lion's 5x5 square.
    let v = dai_dai();
    let mut p = cornered(&v, &[("9i", "L!"), ("9h", "p"), ("1c", "p")], "b");
    play(&mut p, "9i9h");
    assert_eq!(name_at(&p, "9h"), "furious fiend");
    play(&mut p, "1c1d");
    let d = dests(&p, "9h");
    for sq in ["9e", "12e", "6e", "12k", "9k", "7f", "11j"] {
        assert!(d.contains(sq), "{sq} in {d:?}");
    }
    assert!(!d.contains("9d") && !d.contains("10e"), "{d:?}");
    // Break: a lion that does not promote by capture stays a lion.
    let zoned = broken(
        "dai-dai",
        "[promotion]\nmoves = \"capture\"",
        "[promotion]\nmoves = \"touching\"",
    );
    let mut p = cornered(&zoned, &[("9i", "L!"), ("9h", "p"), ("1c", "p")], "b");
    play(&mut p, "9i9h");
    assert_eq!(name_at(&p, "9h"), "lion");
}

#[test]
fn promotion_by_capture_is_automatic_and_only_some_kinds_promote() {
    // The kirin takes on 9g (a jump) and is a great dragon; the pawn takes and stays a pawn
    // (it has no promoted form here); a plain move promotes nothing, even deep in gote's camp.
    let v = dai_dai();
    let mut p = cornered(
        &v,
        &[
            ("9i", "O"),
            ("9g", "p"),
            ("5e", "P"),
            ("5d", "g"),
            ("3c", "S"),
            ("1a", "p"),
        ],
        "b",
    );
    assert!(
        moves(&p).iter().all(|m| !m.ends_with('+')),
        "no promotion choice"
    );
    play(&mut p, "9i9g");
    assert_eq!(name_at(&p, "9g"), "great dragon");
    play(&mut p, "1a1b 5e5d");
    assert_eq!(name_at(&p, "5d"), "pawn");
    play(&mut p, "1b1c 3c3b");
    assert_eq!(name_at(&p, "3b"), "silver general");
    // A pawn on the last rank stays there until it takes.
    let p = cornered(&v, &[("5a", "P")], "b");
    assert_eq!(dests(&p, "5a"), set(&[]));
}

#[test]
fn hook_movers_turn_once() {
    // The hook mover on 9i of an otherwise empty board (kings on 17q and 17a): every square of
    // file 9 and rank i, and from each of those a ride at right angles: every square of the
    // board but its own king's and its own, gote's king taken: 17 * 17 - 2.
    let v = dai_dai();
    let p = cornered(&v, &[("9i", "H!")], "b");
    assert_eq!(dests(&p, "9i").len(), 17 * 17 - 2);
    // The long-nosed goblin (a bishop that turns once, and king's orthogonal steps) reaches
    // the squares of its colour and its four orthogonal neighbours.
    let p = cornered(&v, &[("9i", "G!")], "b");
    let d = dests(&p, "9i");
    assert!(
        d.contains("9h") && d.contains("1a") && d.contains("9g"),
        "{d:?}"
    );
    assert!(!d.contains("9f") && !d.contains("8g"), "{d:?}");
    // Break: without the hook the hook mover is a rook.
    let rook = broken("dai-dai", "betza = \"R\"\nhook = \"R\"", "betza = \"R\"");
    let p = cornered(&rook, &[("9i", "H!")], "b");
    assert_eq!(dests(&p, "9i").len(), 32);
}

#[test]
fn the_one_sided_pieces_keep_their_sides() {
    // Left general: the king's steps but directly left (file 10 from sente's side is its
    // left); right general the mirror. Left chariot: forward ride, forward-left and
    // backward-right diagonal rides, one step back.
    let v = dai_dai();
    let p = cornered(&v, &[("9i", "I'"), ("5i", "J'")], "b");
    assert_eq!(
        dests(&p, "9i"),
        set(&["10h", "9h", "8h", "8i", "10j", "9j", "8j"])
    );
    assert_eq!(
        dests(&p, "5i"),
        set(&["6h", "5h", "4h", "6i", "6j", "5j", "4j"])
    );
    let p = cornered(&v, &[("9i", "L'")], "b");
    let d = dests(&p, "9i");
    for sq in ["9a", "9h", "10h", "16b", "8j", "1q", "9j"] {
        assert!(d.contains(sq), "{sq} in {d:?}");
    }
    for sq in ["8h", "10j", "9k", "10i", "8i"] {
        assert!(!d.contains(sq), "{sq} in {d:?}");
    }
    // Break: a left general written as the right one.
    let mirrored = broken("dai-dai", "betza = \"FvWrW\"", "betza = \"FvWlW\"");
    let p = cornered(&mirrored, &[("9i", "I'")], "b");
    assert!(dests(&p, "9i").contains("10i"));
}

#[test]
fn the_king_is_captured_not_mated() {
    // Sente's king may step next to gote's gold; the gold takes it and sente has lost.
    let v = dai_dai();
    let mut p = composed(&v, &[("9i", "K"), ("9g", "g"), ("1a", "k")], "b -");
    play(&mut p, "9i9h");
    play(&mut p, "9g9h");
    assert_eq!(p.outcome(), win(Color::Gote, EndReason::RoyalCaptured));
}

#[test]
fn perft_of_the_start_position() {
    // Depth 1 is the hand count above; deeper counts are this engine's (no engine we can run
    // plays Dai-dai shogi), kept in tests/data/dai-dai.perft too.
    let mut p = Position::start(dai_dai());
    assert_eq!(perft(&mut p, 1), 58);
    assert_eq!(perft(&mut p, 2), 3346);
}
