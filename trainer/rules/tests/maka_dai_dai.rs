//! Maka dai-dai shogi, tested by hand (configs/variants/maka-dai-dai.toml has the readings): the
//! start position's moves, the king's promotion to the emperor, contagion by the deva and the
//! dark spirit, the teaching king and the Buddhist spirit, the crown prince as a second royal
//! piece, and the pieces whose moves the sources dispute. Each mechanism also has a deliberate
//! break of the config that a test sees. Squares are USI: file 19..1 from left to right, rank
//! a (gote's first rank) to s (sente's first rank); sente moves towards rank a.

use rules::{perft, Color, EndReason, Position, Variant};
use std::sync::Arc;

mod support;
use support::*;

fn maka() -> Arc<Variant> {
    builtin("maka-dai-dai")
}

#[test]
fn start_position_move_count_by_hand() {
    // Sente's camp, ranks m to s; rank p has holes on files 18, 16, 14, 6, 4 and 2, rank q on
    // the odd files but 11 and 9 (and 7 too), rank r on 18, 16, 14, 6, 4, 2:
    // - go-betweens 14m and 6m one step up (back is a pawn): 2; the other 17 pawns: 17;
    // - rank o: left chariot 18o one step back into 18p; right chariot 2o into 2p; the dragon
    //   horses 13o and 7o along their outer backward diagonals, three squares each (14p 15q
    //   16r, 6p 5q 4r): 8;
    // - rank p: donkeys 19p and 1p one step sideways into the holes (their jumps land on own
    //   pieces): 2; violent oxen 15p and 5p one square left, right and back: 6; the lion dog
    //   10p jumps three squares (13m, 10m, 7m), everything nearer is its own: 3; the she-devil
    //   8p two squares diagonally back-right (7q, 6r): 2;
    // - rank q: old rats 18q and 2q one back: 2; angry boars 16q and 4q into their four
    //   neighbours: 8; blind bears 14q and 6q one back: 2; evil wolf 12q to 13q, 8q to 7q: 2;
    //   the kirin 11q jumps to 13q: 1 (the lion 10q and the phoenix 9q are walled in);
    // - rank r: reverse chariots 19r and 1r one up: 2; chinese cock 15r sideways: 2; coiled
    //   serpent 13r up: 1; ferocious leopards 12r to 13q, 8r to 7q: 2; reclining dragon 7r up
    //   and to the right: 2;
    // - rank s: earth generals 18s and 2s up: 2; stone generals 17s and 3s both forward
    //   diagonals: 4; iron generals 15s and 5s both forward diagonals: 4; coppers 14s and 6s
    //   up: 2; silvers 13s and 7s one forward diagonal: 2.
    // 19 + 8 + 13 + 15 + 9 + 14 = 78.
    let p = Position::start(maka());
    assert_eq!(p.legal_moves().len(), 78);
    let mut want = counts(&[
        ("14m", 1),
        ("6m", 1),
        ("18o", 1),
        ("2o", 1),
        ("13o", 3),
        ("7o", 3),
        ("19p", 1),
        ("1p", 1),
        ("15p", 3),
        ("5p", 3),
        ("10p", 3),
        ("8p", 2),
        ("18q", 1),
        ("2q", 1),
        ("16q", 4),
        ("4q", 4),
        ("14q", 1),
        ("6q", 1),
        ("12q", 1),
        ("8q", 1),
        ("11q", 1),
        ("19r", 1),
        ("1r", 1),
        ("15r", 2),
        ("13r", 1),
        ("12r", 1),
        ("8r", 1),
        ("7r", 2),
        ("18s", 1),
        ("2s", 1),
        ("17s", 2),
        ("3s", 2),
        ("15s", 2),
        ("5s", 2),
        ("14s", 1),
        ("6s", 1),
        ("13s", 1),
        ("7s", 1),
    ]);
    for f in (1..=19).filter(|&f| f != 14 && f != 6) {
        want.insert(format!("{f}n"), 1);
    }
    assert_eq!(moves_by_origin(&p), want);
    assert_eq!(dests(&p, "10p"), set(&["13m", "10m", "7m"]));
    assert_eq!(dests(&p, "13o"), set(&["14p", "15q", "16r"]));
    assert_eq!(name_at(&p, "10s"), "king");
    assert_eq!(name_at(&p, "11s"), "deva");
    assert_eq!(name_at(&p, "9s"), "dark spirit");
    assert_eq!(name_at(&p, "18o"), "left chariot");
}

#[test]
fn the_king_takes_and_becomes_an_emperor_that_leaps_anywhere() {
    // Sente's king on 10j takes the pawn on 10i and promotes to the emperor (royal too).
    // Gote: king 1a guarded by a gold on 2a, a lone pawn that steps to 15f.
    let v = maka();
    let pieces = [
        ("10j", "K"),
        ("10i", "p"),
        ("1a", "k"),
        ("2a", "g"),
        ("15e", "p"),
    ];
    let mut p = composed(&v, &pieces, "b -");
    play(&mut p, "10j10i");
    assert_eq!(name_at(&p, "10i"), "emperor");
    assert_eq!(p.royal_count(Color::Sente), 1);
    assert_eq!(p.outcome(), None);
    play(&mut p, "15e15f");
    // Every empty square (361 less the four occupied), and the unguarded pawn; not the gold
    // (the king guards it) nor the king (the gold guards it): 358 moves, none twice.
    let from = moves_with(&p, "10i");
    assert_eq!(from.len(), 358);
    assert_eq!(
        p.legal_moves()
            .iter()
            .filter(|&&m| p.move_to_usi(m).starts_with("10i"))
            .count(),
        358
    );
    for sq in ["10i19s", "10i15f", "10i1s", "10i3a"] {
        assert!(from.contains(sq), "{sq} in {from:?}");
    }
    assert!(!from.contains("10i2a") && !from.contains("10i1a"));
    // Break: an emperor that is not royal is refused (a royal piece promotes only into a
    // royal form).
    let err = try_broken(
        "maka-dai-dai",
        "name = \"emperor\", betza = \"mK\", royal = true,",
        "name = \"emperor\", betza = \"mK\",",
    )
    .unwrap_err();
    assert!(err.contains("pieces[1].promoted"), "{err}");
}

#[test]
fn the_deva_and_the_dark_spirit_are_contagious() {
    // Deva: the forward diagonals, the backward-right diagonal, straight left; dark spirit the
    // mirror image (sente's right is towards file 1).
    let v = maka();
    let p = cornered(&v, &[("10j", "I'"), ("5j", "J'")], "b");
    assert_eq!(dests(&p, "10j"), set(&["11i", "9i", "9k", "11j"]));
    assert_eq!(dests(&p, "5j"), set(&["6i", "4i", "6k", "4j"]));
    // A silver that takes a deva becomes a teaching king (not a free silver); a king that
    // takes a dark spirit becomes an emperor (a royal captor promotes as on any capture).
    let pieces = [("9i", "S"), ("9h", "i'"), ("5k", "j'"), ("5l", "K")];
    let mut p = composed(&v, &[pieces.as_slice(), &[("1a", "k")]].concat(), "b -");
    play(&mut p, "9i9h");
    assert_eq!(name_at(&p, "9h"), "teaching king");
    play(&mut p, "1a1b 5l5k");
    assert_eq!(name_at(&p, "5k"), "emperor");
    // Any piece can become a teaching king, so more than the start position's two devas read.
    let kings = [
        ("9i", "+I'"),
        ("8i", "+I'"),
        ("7c", "+i'"),
        ("1a", "k"),
        ("19s", "K"),
    ];
    assert!(Position::from_sfen(&v, &composed(&v, &kings, "b -").to_sfen()).is_ok());
    // Break: without contagion the silver promotes as usual.
    let plain = try_broken(
        "maka-dai-dai",
        "name = \"deva\"\nbetza = \"fFbrFlW\"\ncontagious = true\n",
        "name = \"deva\"\nbetza = \"fFbrFlW\"\n",
    )
    .unwrap();
    let mut p = composed(&plain, &[("9i", "S"), ("9h", "i'"), ("1a", "k")], "b -");
    play(&mut p, "9i9h");
    assert_eq!(name_at(&p, "9h"), "free silver");
}

#[test]
fn the_teaching_king_and_the_buddhist_spirit() {
    // Teaching king: a free king and a lion dog. On 9i, gote pawns on 9h and 9g: it takes both
    // on the way to 9f (a lion-dog move), and rides everywhere else.
    let v = maka();
    let pieces = [("9i", "+I'"), ("9h", "p"), ("9g", "p")];
    let p = cornered(&v, &pieces, "b");
    for usi in [
        "9i9h9g9f", "9i9h9i", "9i9g9h", "9i1a", "9i17a", "9i9s", "9i1i",
    ] {
        assert_legal(&p, usi);
    }
    // Buddhist spirit: a free king and a lion: takes the pawn on 9h without moving, jumps to
    // the lion's squares two away (10g) and rides.
    let pieces = [("9i", "+J'"), ("9h", "p")];
    let p = cornered(&v, &pieces, "b");
    for usi in ["9i9h9i", "9i10g", "9i8g", "9i1a", "9i9s", "9i9h9g"] {
        assert_legal(&p, usi);
    }
    assert_illegal(&p, "9i9h9g9f");
    // Break: a teaching king without the lion dog's power cannot take two on a line.
    let queen = try_broken(
        "maka-dai-dai",
        "betza = \"QADGH\", lion_line = \"Q3\" }",
        "betza = \"Q\" }",
    )
    .unwrap();
    let pieces = [("9i", "+I'"), ("9h", "p"), ("9g", "p")];
    assert_illegal(&cornered(&queen, &pieces, "b"), "9i9h9g9f");
}

#[test]
fn the_crown_prince_is_a_second_royal_piece() {
    // The drunk elephant takes and becomes a crown prince: sente then has two royal pieces,
    // loses nothing when its king is taken (by a dragon king, which does not promote), and
    // loses when the prince goes too.
    let v = maka();
    let pieces = [
        ("10j", "E"),
        ("10i", "p"),
        ("15s", "K"),
        ("15q", "d"),
        ("1a", "k"),
    ];
    let mut p = composed(&v, &pieces, "b -");
    play(&mut p, "10j10i");
    assert_eq!(name_at(&p, "10i"), "crown prince");
    assert_eq!(p.royal_count(Color::Sente), 2);
    play(&mut p, "15q15s");
    assert_eq!(p.royal_count(Color::Sente), 1);
    assert_eq!(p.outcome(), None);
    play(&mut p, "10i10h 15s15h 10h11h 15h11h");
    assert_eq!(p.outcome(), win(Color::Gote, EndReason::RoyalCaptured));
    // Break: a prince that is not royal leaves sente lost with its king.
    let plain = try_broken(
        "maka-dai-dai",
        "name = \"crown prince\", betza = \"K\", royal = true }",
        "name = \"crown prince\", betza = \"K\" }",
    )
    .unwrap();
    let mut p = composed(&plain, &pieces, "b -");
    play(&mut p, "10j10i 15q15s");
    assert_eq!(p.outcome(), win(Color::Gote, EndReason::RoyalCaptured));
}

#[test]
fn the_disputed_pieces_follow_the_tsa() {
    // Donkey: steps sideways, jumps two forwards and backwards (not the step forward).
    let v = maka();
    let p = cornered(&v, &[("10j", "Y'"), ("10i", "P")], "b");
    assert_eq!(dests(&p, "10j"), set(&["11j", "9j", "10h", "10l"]));
    // Free dragon (promoted reclining dragon): ranges forwards and diagonally forwards, steps
    // back.
    let p = cornered(&v, &[("10j", "+D!")], "b");
    let d = dests(&p, "10j");
    for sq in ["10a", "1a", "18b", "10k", "11k", "9k"] {
        assert!(d.contains(sq), "{sq} in {d:?}");
    }
    for sq in ["10l", "11j", "8l"] {
        assert!(!d.contains(sq), "{sq} in {d:?}");
    }
    // Free wolf (promoted evil wolf): bishop and vertical lines, five squares sideways.
    let p = cornered(&v, &[("10j", "+W")], "b");
    let d = dests(&p, "10j");
    for sq in ["10a", "1a", "18b", "10s", "2r", "5j", "15j"] {
        assert!(d.contains(sq), "{sq} in {d:?}");
    }
    assert!(!d.contains("4j") && !d.contains("16j"), "{d:?}");
    // Free bear (promoted blind bear): jumps to the second square diagonally forwards.
    let p = cornered(&v, &[("10j", "+B'"), ("11i", "P"), ("9k", "P")], "b");
    let d = dests(&p, "10j");
    assert!(d.contains("12h") && !d.contains("8l"), "{d:?}");
    // Capricorn: a bishop that may turn once: it reaches 10h (11i, then back), not 10i.
    let p = cornered(&v, &[("10j", "C!")], "b");
    let d = dests(&p, "10j");
    assert!(d.contains("10h") && !d.contains("10i"), "{d:?}");
    // Break: the Wikipedia-table donkey (steps all four ways) has the step forward.
    let stepper = try_broken("maka-dai-dai", "betza = \"sWvD\"", "betza = \"WvD\"").unwrap();
    let p = cornered(&stepper, &[("10j", "Y'")], "b");
    assert!(dests(&p, "10j").contains("10i"));
}

#[test]
fn perft_of_the_start_position() {
    // Depth 1 is the hand count above; deeper counts are this engine's (no engine we can run
    // plays Maka dai-dai shogi), kept in tests/data/maka-dai-dai.perft too.
    let mut p = Position::start(maka());
    assert_eq!(perft(&mut p, 1), 78);
    assert_eq!(perft(&mut p, 2), 6084);
}
