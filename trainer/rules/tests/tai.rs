//! Tai shogi, tested by hand (configs/variants/tai.toml has the readings): the start position's
//! moves, the emperor and the crown prince as two royal pieces from the start, promotion into a
//! piece of the start position (`promotes_to`), the peacock's forward hook and the pieces both
//! programs give the same moves. Each mechanism also has a deliberate break of the config that a
//! test sees. Squares are USI: file 25..1 from left to right, rank a (gote's first rank) to y
//! (sente's first rank); sente moves towards rank a.

use rules::{perft, Color, EndReason, Position, Variant};
use std::sync::Arc;

mod support;
use support::*;

fn tai() -> Arc<Variant> {
    builtin("tai")
}

#[test]
fn start_position_move_count_by_hand() {
    // Sente's camp is ranks r to y, 177 pieces, packed: only these move.
    // - The emperor on 13y leaps to every empty square, 625 - 2 * 177 = 271, and takes nothing:
    //   every gote piece is guarded (by another, or by gote's emperor);
    // - the pawns on rank s step up, but the two under the go-betweens (18s, 8s): 23;
    // - the go-betweens 18r and 8r step up (back is a pawn): 2;
    // - the lion dog on 13t jumps to the empty squares of its lines within three: 13r and 13q
    //   straight up, 11r and 15r two diagonally, 10q and 16q three diagonally: 6;
    // - the donkeys on 22t and 4t jump two squares up, over their pawns (22r, 4r): 2.
    // 271 + 23 + 2 + 6 + 2 = 304.
    let p = Position::start(tai());
    assert_eq!(p.legal_moves().len(), 304);
    let mut want = counts(&[
        ("13y", 271),
        ("18r", 1),
        ("8r", 1),
        ("13t", 6),
        ("22t", 1),
        ("4t", 1),
    ]);
    for f in (1..=25).filter(|&f| f != 18 && f != 8) {
        want.insert(format!("{f}s"), 1);
    }
    assert_eq!(moves_by_origin(&p), want);
    assert_eq!(
        dests(&p, "13t"),
        set(&["13r", "13q", "11r", "15r", "10q", "16q"])
    );
    assert_eq!(name_at(&p, "13y"), "emperor");
    assert_eq!(name_at(&p, "13x"), "crown prince");
    assert_eq!(p.royal_count(Color::Sente), 2);
}

#[test]
fn emperor_and_prince_both_fall_before_the_game_is_lost() {
    // Gote's dragon king takes sente's emperor on 13m: sente still has its crown prince, and
    // loses when the dragon takes it too.
    let v = tai();
    let pieces = [("13m", "K"), ("1m", "C^"), ("13a", "d"), ("25a", "k")];
    let mut p = composed(&v, &pieces, "w -");
    play(&mut p, "13a13m");
    assert_eq!(p.royal_count(Color::Sente), 1);
    assert_eq!(p.outcome(), None);
    play(&mut p, "1m2m 13m2m");
    assert_eq!(p.outcome(), win(Color::Gote, EndReason::RoyalCaptured));
    // Break: a crown prince that is not royal, and the emperor's capture ends the game.
    let plain = broken(
        "tai",
        "name = \"crown prince\"\nbetza = \"K\"\nroyal = true\n",
        "name = \"crown prince\"\nbetza = \"K\"\n",
    );
    let mut p = composed(&plain, &pieces, "w -");
    play(&mut p, "13a13m");
    assert_eq!(p.outcome(), win(Color::Gote, EndReason::RoyalCaptured));
}

#[test]
fn pieces_promote_into_pieces_of_the_start_position() {
    // The bishop takes on 10j and is a gold general (written G); the gold takes again and stays
    // a gold. The drunk elephant takes on 5l and is a second crown prince.
    let v = tai();
    let pieces = [
        ("13m", "B"),
        ("10j", "p"),
        ("10i", "p"),
        ("5m", "E"),
        ("5l", "p"),
        ("1a", "p"),
    ];
    let mut p = cornered(&v, &pieces, "b");
    play(&mut p, "13m10j");
    assert_eq!(name_at(&p, "10j"), "gold general");
    assert!(p.to_sfen().contains("/15G9/"), "{}", p.to_sfen());
    play(&mut p, "1a1b 10j10i");
    assert_eq!(name_at(&p, "10i"), "gold general");
    play(&mut p, "1b1c 5m5l");
    assert_eq!(name_at(&p, "5l"), "crown prince");
    assert_eq!(p.royal_count(Color::Sente), 2);
    // More gold generals than the start position's four are reachable, so such a position reads.
    let golds = [
        ("13m", "G"),
        ("12m", "G"),
        ("11m", "G"),
        ("10m", "G"),
        ("9m", "G"),
    ];
    assert!(Position::from_sfen(&v, &cornered(&v, &golds, "b").to_sfen()).is_ok());
    // Break: a bishop without a promotion stays a bishop.
    let plain = broken(
        "tai",
        "name = \"bishop\"\nbetza = \"B\"\npromotes_to = \"G\"\n",
        "name = \"bishop\"\nbetza = \"B\"\n",
    );
    let mut p = cornered(&plain, &pieces, "b");
    play(&mut p, "13m10j");
    assert_eq!(name_at(&p, "10j"), "bishop");
}

#[test]
fn the_peacock_hooks_from_its_forward_diagonals() {
    // On 13m of an empty board: along either forward diagonal and then at right angles (13k
    // through 14l or 12l), two squares diagonally back, never straight or further back.
    let v = tai();
    let p = cornered(&v, &[("13m", "P!")], "b");
    let d = dests(&p, "13m");
    for sq in ["14l", "1a", "13k", "13c", "21e", "14n", "15o", "11o"] {
        assert!(d.contains(sq), "{sq} in {d:?}");
    }
    for sq in ["13l", "13o", "16p", "10p", "12m"] {
        assert!(!d.contains(sq), "{sq} in {d:?}");
    }
    // Break: without the hook it only rides the forward diagonals.
    let plain = broken(
        "tai",
        "betza = \"fBbB2\"\nhook = \"fB\"\n",
        "betza = \"fBbB2\"\n",
    );
    let p = cornered(&plain, &[("13m", "P!")], "b");
    assert!(!dests(&p, "13m").contains("13k"));
}

#[test]
fn the_vermillion_sparrow_and_the_turtle_snake_move_alike() {
    // Both: ride forwards and diagonally forwards, one step back, two squares diagonally back.
    let v = tai();
    let sparrow = dests(&cornered(&v, &[("13m", "V^")], "b"), "13m");
    let snake = dests(&cornered(&v, &[("13m", "T^")], "b"), "13m");
    assert_eq!(sparrow, snake);
    for sq in ["13a", "1a", "24b", "13n", "11o", "15o"] {
        assert!(sparrow.contains(sq), "{sq} in {sparrow:?}");
    }
    for sq in ["13o", "10p", "12m", "14m"] {
        assert!(!sparrow.contains(sq), "{sq} in {sparrow:?}");
    }
}

#[test]
fn perft_of_the_start_position() {
    // Depth 1 is the hand count above; deeper counts are this engine's, kept in
    // tests/data/tai.perft too.
    let mut p = Position::start(tai());
    assert_eq!(perft(&mut p, 1), 304);
    assert_eq!(perft(&mut p, 2), 92662);
}
