//! Ko shogi, tested by hand (configs/variants/ko.toml has the readings): the start position's
//! moves, the shooting bows and guns (`shoot`), the pieces that move several times a turn
//! (`repeat`), the Taoist priest, immunities (`spares`), promotion by capture
//! (`promotes_capturing`) and on entering the camp, and the goal (`end.royal_reserve`), with a
//! deliberate break of the config for each. Squares are USI: file 19..1 from left to right,
//! rank a (gote's first rank) to s (sente's first rank). Letters are QBoard's: K general,
//! M middle troop, L banner, U drum, N sumo wrestler, L' longbow, C' crossbow, I cannon,
//! J Frankish cannon, T' Taoist priest, W cavalry, Y cavalryman, P pawn, Z shield, A chariot,
//! U' shield unit.

use rules::{Color, EndReason, Position, Variant};
use std::sync::Arc;

mod support;
use support::*;

fn ko() -> Arc<Variant> {
    builtin("ko")
}

/// Ko shogi with one text replacement in its config (a deliberate break), set up as [`board`]
/// does.
fn broken_board(from: &str, to: &str, pieces: &[(&str, &str)]) -> Position {
    cornered(&broken("ko", from, to), pieces, "b")
}

/// A position with the generals in the far left corners (19s, 19a) and `pieces`, sente to move.
fn board(pieces: &[(&str, &str)]) -> Position {
    cornered(&ko(), pieces, "b")
}

#[test]
fn start_position_move_count_by_hand() {
    // Each side: 90 pieces of 34 kinds, 65 with the promoted forms. Sente's camp (ranks m..s):
    // - vanguard 10m: up its file five points, 10l..10h: 5;
    // - chariot units 19n, 1n: up the file to 13 points short of gote's chariot unit, which it
    //   takes (entering the camp, promoting): 7 + 1, and one point back: 9 each;
    // - shield units 18n, 10n, 2n: the four diagonal steps: 4 each; shields 16n..4n: 4 each;
    // - chariots (R5) on the odd files 17n..3n: five up, one back (a cavalryman behind): 6 each;
    // - patrol units 18o, 10o, 2o: one back, two sideways: 3 each; pawns: the same, 3 each;
    // - cavalry 19p, 1p: one knight's leap (to 17o, 3o), and a pass (there and straight back):
    //   2 each; cavalrymen on the odd files 17p..3p: two leaps up to rank o: 2 each;
    // - elephants 19q, 1q: one diagonal, two points: 2 each; 15q, 11q, 9q, 5q: two diagonals of
    //   two points: 4 each;
    // - cannons 18q, 2q: one step back (the other back diagonal holds a rear guard): 1 each;
    //   14q, 6q: both back: 2 each; crossbows 17q, 13q, 7q, 3q: both forward diagonals: 2 each;
    //   longbows 16q, 4q: both back: 2 each; 12q, 8q: one back (a drum, a banner): 1 each; no
    //   shot reaches gote;
    // - centuriae 18r, 2r: one sideways step: 1 each; quartermasters 16r, 4r and millenaries
    //   14r, 6r: one point sideways each way: 2 each; sentries 12r, 8r: one sideways: 1 each;
    // - engineers 17s, 3s: one step up: 1 each; chiefs of staff 16s, 4s: both forward
    //   diagonals: 2 each; staffs 15s, 5s: one step up: 1 each; aides 14s, 6s: both forward
    //   diagonals: 2 each; sumo wrestlers 13s, 7s: one step up, and a pass (up and back): 2
    //   each; aides de camp 12s, 8s: one forward diagonal: 1 each.
    // 5 + 18 + 12 + 24 + 48 + 9 + 18 + 4 + 16 + 20 + 6 + 8 + 6 + 2 + 4 + 4 + 2 + 2 + 4 + 2 + 4
    // + 4 + 2 = 224.
    let v = ko();
    let p = Position::start(v.clone());
    assert_eq!(v.kinds.len(), 65);
    assert_eq!(v.kinds.iter().filter(|k| !k.promoted).count(), 34);
    assert_eq!(pieces_per_side(&p), (90, 90));
    assert_eq!(p.legal_moves().len(), 224);
    let mut want = counts(&[
        ("10m", 5),
        ("19n", 9),
        ("1n", 9),
        ("18n", 4),
        ("10n", 4),
        ("2n", 4),
        ("18o", 3),
        ("10o", 3),
        ("2o", 3),
        ("19p", 2),
        ("1p", 2),
        ("19q", 2),
        ("15q", 4),
        ("11q", 4),
        ("9q", 4),
        ("5q", 4),
        ("1q", 2),
        ("18q", 1),
        ("14q", 2),
        ("6q", 2),
        ("2q", 1),
        ("17q", 2),
        ("13q", 2),
        ("7q", 2),
        ("3q", 2),
        ("16q", 2),
        ("12q", 1),
        ("8q", 1),
        ("4q", 2),
        ("18r", 1),
        ("2r", 1),
        ("16r", 2),
        ("4r", 2),
        ("14r", 2),
        ("6r", 2),
        ("12r", 1),
        ("8r", 1),
        ("17s", 1),
        ("3s", 1),
        ("16s", 2),
        ("4s", 2),
        ("15s", 1),
        ("5s", 1),
        ("14s", 2),
        ("6s", 2),
        ("13s", 2),
        ("7s", 2),
        ("12s", 1),
        ("8s", 1),
    ]);
    for f in [17, 15, 13, 11, 9, 7, 5, 3] {
        want.insert(format!("{f}n"), 6);
        want.insert(format!("{f}p"), 2);
    }
    for f in [16, 14, 12, 8, 6, 4] {
        want.insert(format!("{f}n"), 4);
        want.insert(format!("{f}o"), 3);
    }
    assert_eq!(moves_by_origin(&p), want);
    assert_eq!(moves_with(&p, "13s"), set(&["13s13r", "13s13s,"]));
    assert_eq!(moves_with(&p, "7s"), set(&["7s7r", "7s7s,"]));
    assert_eq!(moves_with(&p, "1p"), set(&["1p3o", "1p1p,"]));
    assert_eq!(name_at(&p, "10s"), "general");
    assert_eq!(name_at(&p, "10a"), "general");
}

#[test]
fn the_longbow_steps_then_shoots_three_free_points() {
    // Longbow on 10j: it steps diagonally to an empty point, then may shoot one enemy piece on
    // any of the eight lines from there, at most three points away, over empty points only.
    // Gote's pawns on 9f (three up from 9i) and 12h (next to 11i, diagonally, and three up
    // the diagonal from 9k through 10j, which the bow has left).
    let p = board(&[("10j", "L'"), ("9f", "p"), ("12h", "p")]);
    let want = set(&[
        "10j9i",
        "10j11i",
        "10j9k",
        "10j11k",
        "10j9i,9f",
        "10j11i,12h",
        "10j9k,12h",
    ]);
    assert_eq!(moves_with(&p, "10j"), want);
    assert_legal(&p, "10j9i,9f");
    // Playing the shot leaves the bow on 9i and takes the pawn; undone exactly.
    let mut q = p.clone();
    let before = (q.to_sfen(), q.hash());
    play(&mut q, "10j9i,9f");
    assert_eq!(name_at(&q, "9i"), "longbow");
    assert_eq!(name_at(&q, "9f"), "-");
    assert_eq!(name_at(&q, "12h"), "pawn");
    q.unmake_move();
    assert_eq!((q.to_sfen(), q.hash()), before);
    // It never takes by moving onto a piece: a gote pawn on 9i bars that step (and is shot
    // from 9k? no: two points down the file from 9i is not a landing).
    let p2 = board(&[("10j", "L'"), ("9i", "p")]);
    assert!(!moves_with(&p2, "10j").contains("10j9i"));
    assert!(moves_with(&p2, "10j").contains("10j9k,9i"));
    assert!(moves_with(&p2, "10j").contains("10j11i,9i"));
    // A piece on the line stops the shot; a shield is immune to the bows and stops it too.
    for blocker in ["P", "z"] {
        let p = board(&[("10j", "L'"), ("9f", "p"), ("9g", blocker)]);
        assert!(!moves_with(&p, "10j").contains("10j9i,9f"), "{blocker}");
    }
    // Break: a range of two no longer reaches 9f.
    let p = broken_board(
        "shoot = { betza = \"mF\", range = 3 }",
        "shoot = { betza = \"mF\", range = 2 }",
        &[("10j", "L'"), ("9f", "p"), ("12h", "p")],
    );
    assert!(!moves_with(&p, "10j").contains("10j9i,9f"));
    assert!(moves_with(&p, "10j").contains("10j11i,12h"));
    // Break: without its immunity the shield is shot.
    let p = broken_board(
        "shoot = { betza = \"mF\", range = 3 }\nspares = [\"Z\", ",
        "shoot = { betza = \"mF\", range = 3 }\nspares = [",
        &[("10j", "L'"), ("9g", "z")],
    );
    assert!(moves_with(&p, "10j").contains("10j9i,9g"));
}

#[test]
fn the_cannon_shoots_over_pieces_and_the_frankish_cannon_twice() {
    // Cannon on 10j, gote pawn on 9e, four points above 9i, with a sente pawn between on 9g:
    // the cannon shoots over it; a crossbow (five free points) cannot.
    let p = board(&[("10j", "I"), ("9e", "p"), ("9g", "P")]);
    assert_legal(&p, "10j9i,9e");
    let p = board(&[("10j", "C'"), ("9e", "p"), ("9g", "P")]);
    assert!(!moves_with(&p, "10j").contains("10j9i,9e"));
    // Break: a cannon that does not shoot over pieces.
    let p = broken_board(
        "shoot = { betza = \"mF\", range = 5, over = true }\nspares",
        "shoot = { betza = \"mF\", range = 5 }\nspares",
        &[("10j", "I"), ("9e", "p"), ("9g", "P")],
    );
    assert!(!moves_with(&p, "10j").contains("10j9i,9e"));
    let p = board(&[("10j", "C'"), ("9e", "p")]);
    assert_legal(&p, "10j9i,9e");
    // The cannon cannot shoot a shield unit; break: without that immunity it can.
    let p = board(&[("10j", "I"), ("9e", "u'")]);
    assert!(!moves_with(&p, "10j").contains("10j9i,9e"));
    let p = broken_board(
        "shoot = { betza = \"mF\", range = 5, over = true }\nspares = [\"U'\", ",
        "shoot = { betza = \"mF\", range = 5, over = true }\nspares = [",
        &[("10j", "I"), ("9e", "u'")],
    );
    assert!(moves_with(&p, "10j").contains("10j9i,9e"));
    // Frankish cannon on 10j, gote pawns on 9f (up from 9i) and 7i (two right of 9i): from 9i
    // it shoots either or both; both are written in board order (rank f before rank i) and
    // read in any order.
    let p = board(&[("10j", "J"), ("9f", "p"), ("7i", "p")]);
    let shots: Vec<String> = moves_with(&p, "10j9i,").into_iter().collect();
    assert_eq!(shots, ["10j9i,7i", "10j9i,9f", "10j9i,9f,7i"]);
    assert_eq!(
        p.move_to_usi(p.parse_usi("10j9i,7i,9f").unwrap()),
        "10j9i,9f,7i"
    );
    let mut q = p.clone();
    play(&mut q, "10j9i,9f,7i");
    assert_eq!(
        (name_at(&q, "9f"), name_at(&q, "7i")),
        ("-".into(), "-".into())
    );
    // Break: one target a shot.
    let p = broken_board(
        "shoot = { betza = \"mF\", range = 7, targets = 2 }",
        "shoot = { betza = \"mF\", range = 7 }",
        &[("10j", "J"), ("9f", "p"), ("7i", "p")],
    );
    assert!(!moves_with(&p, "10j").contains("10j9i,9f,7i"));
    // Malformed and impossible compound moves name the token.
    let p = board(&[("10j", "J"), ("9f", "p"), ("7i", "p")]);
    for bad in [
        "10j9i,",
        "10j9i,,9f",
        "10j9i,9z",
        "10j,9f",
        "10j9i,1a",
        "10j8h,9f",
    ] {
        assert_illegal(&p, bad);
    }
}

#[test]
fn the_sumo_wrestler_steps_twice() {
    // Wrestler on 10j, gote pawns on 10i and 10h. Its eight king steps (one takes 10i), and two
    // steps with a capture on each: back to 10j (a pass through an empty point, `10j10j,`, or taking 10i
    // without moving); to the four points next to both 10j and 10i after taking 10i; to the 16
    // points two away, through an empty point, and for 9h, 10h and 11h also through 10i (two
    // moves each): 8 + 2 + 4 + 19 = 33.
    let p = board(&[("10j", "N"), ("10i", "p"), ("10h", "p")]);
    let from = moves_with(&p, "10j");
    assert_eq!(from.len(), 33, "{from:?}");
    for m in [
        "10j10j,",
        "10j10j,10i",
        "10j9i,10i",
        "10j11k",
        "10j10h,",
        "10j10h,10i",
        "10j8h,",
        "10j12l,",
    ] {
        assert_legal(&p, m);
    }
    // It cannot jump a piece of its own: with sente pawns on 9i, 10i and 11i it reaches none
    // of the points beyond.
    let p = board(&[("10j", "N"), ("9i", "P"), ("10i", "P"), ("11i", "P")]);
    for far in ["10j9h,", "10j10h,", "10j11h,"] {
        assert!(!moves_with(&p, "10j").contains(far), "{far}");
    }
    // Break: one step a turn.
    let p = broken_board(
        "repeat = { betza = \"K\", times = 2 }\n",
        "",
        &[("10j", "N"), ("10i", "p"), ("10h", "p")],
    );
    assert_eq!(moves_with(&p, "10j").len(), 8);
}

#[test]
fn the_cavalry_keeps_its_line_and_the_winged_horse_does_not() {
    // Cavalry alone on 10j: eight knight's leaps; a second leap goes the first's long way
    // (three end points per direction, 12) or straight back (a pass): 8 + 12 + 1 = 21.
    let p = board(&[("10j", "W")]);
    let from = moves_with(&p, "10j");
    assert_eq!(from.len(), 21, "{from:?}");
    assert!(from.contains("10j10f,") && from.contains("10j8f,") && from.contains("10j10j,"));
    // Two leaps that turn (1 up 2, then 2 right 1) end on 7g: only the winged horse goes there.
    assert!(!from.contains("10j7g,"));
    let p = board(&[("10j", "+W")]);
    assert!(moves_with(&p, "10j").contains("10j7g,"));
    // Break: without the line rule the cavalry reaches 7g too.
    let p = broken_board(
        "betza = \"N\"\nrepeat = { betza = \"N\", times = 2, line = true }\npromotion",
        "betza = \"N\"\nrepeat = { betza = \"N\", times = 2 }\npromotion",
        &[("10j", "W")],
    );
    assert!(moves_with(&p, "10j").contains("10j7g,"));
}

#[test]
fn the_roaming_assault_and_thunderclap_take_all_on_their_way() {
    // Roaming assault (promoted banner) on 10j, gote pawns on 10h and 10f: up to five steps
    // along the file take both and may end beyond on 10e; a step off the file is not its move.
    // It may come back along the file: up two, taking 10h, and back home (10j10j,10h).
    let p = board(&[("10j", "+L"), ("10h", "p"), ("10f", "p")]);
    for m in ["10j10e,10f,10h", "10j10f,10h", "10j10g,10h", "10j10j,10h"] {
        assert_legal(&p, m);
    }
    assert!(!moves_with(&p, "10j").contains("10j10e,"));
    assert!(!moves_with(&p, "10j").contains("10j9g,10h"));
    // The thunderclap (promoted drum) turns freely: 10j10i, 10h (take), 9h, then 9g.
    let p = board(&[("10j", "+U"), ("10h", "p"), ("10f", "p")]);
    assert_legal(&p, "10j9g,10h");
    assert_legal(&p, "10j10e,10f,10h");
    // Six steps are too many: 10j to 10d would pass 10i..10e first.
    assert!(!moves_with(&p, "10j")
        .iter()
        .any(|m| m.starts_with("10j10d")));
    // Break: three steps a turn no longer reach 10e.
    let p = broken_board(
        "repeat = { betza = \"W\", times = 5, line = true }",
        "repeat = { betza = \"W\", times = 3, line = true }",
        &[("10j", "+L"), ("10h", "p"), ("10f", "p")],
    );
    assert!(!moves_with(&p, "10j").contains("10j10e,10f,10h"));
}

#[test]
fn the_taoist_priest_jumps_and_shoots_next_to_it() {
    // Priest on 10j: jumps two points in any of eight directions to an empty point; then may
    // shoot an adjacent enemy piece. It takes by moving onto a piece only a priest or a monk.
    let p = board(&[("10j", "T'"), ("10g", "p"), ("8h", "p"), ("12h", "s'")]);
    assert_legal(&p, "10j10h,10g");
    assert_legal(&p, "10j12h");
    assert!(!moves_with(&p, "10j").contains("10j8h"));
    // Promoted (five-li fog): twice a turn, each jump maybe followed by a shot.
    let p = board(&[("10j", "+T'"), ("10e", "p"), ("10g", "p")]);
    assert_legal(&p, "10j10f,10e,10g");
    // Break: a priest that takes anything by moving onto it.
    let p = broken_board("shoot = { betza = \"DA\", range = 1 }\ndisplaces_only = [\"T'\", \"S'\", \"+T'\", \"+S'\"]\npromotion = \"forced\"\npromoted = { name = \"five-li fog\"", "shoot = { betza = \"DA\", range = 1 }\npromotion = \"forced\"\npromoted = { name = \"five-li fog\"", &[("10j", "T'"), ("8h", "p")]);
    assert!(moves_with(&p, "10j").contains("10j8h"));
}

#[test]
fn chariots_cannot_take_a_heavenly_fortress() {
    let p = board(&[("10j", "A"), ("10g", "+u'"), ("12j", "p")]);
    assert!(!moves_with(&p, "10j").contains("10j10g"));
    assert_legal(&p, "10j12j");
    let p = broken_board(
        "betza = \"R5\"\nspares = [\"+U'\"]\n",
        "betza = \"R5\"\n",
        &[("10j", "A"), ("10g", "+u'")],
    );
    assert!(moves_with(&p, "10j").contains("10j10g"));
}

#[test]
fn captures_of_commanding_pieces_promote_on_the_spot() {
    // A pawn taking the drum promotes to a patrol unit outside the camp; taking a pawn it
    // does not. A longbow shooting the drum promotes too.
    // (Sente keeps a drum on 1s: without one its pawns could not step forward.)
    let mut p = board(&[("10j", "P"), ("10i", "u"), ("1s", "U")]);
    play(&mut p, "10j10i");
    assert_eq!(name_at(&p, "10i"), "patrol unit");
    let mut p = board(&[("10j", "P"), ("10i", "p"), ("1s", "U")]);
    play(&mut p, "10j10i");
    assert_eq!(name_at(&p, "10i"), "pawn");
    let mut p = board(&[("10j", "L'"), ("9f", "u")]);
    play(&mut p, "10j9i,9f");
    assert_eq!(name_at(&p, "9i"), "longbow cavalryman");
    // Only the one-point movers promote on taking a sumo wrestler: the pawn does, the
    // elephant (which never promotes) and the cavalryman do not.
    let mut p = board(&[("10j", "P"), ("10i", "n"), ("1s", "U")]);
    play(&mut p, "10j10i");
    assert_eq!(name_at(&p, "10i"), "patrol unit");
    let mut p = board(&[("10j", "Y"), ("9h", "n")]);
    play(&mut p, "10j9h");
    assert_eq!(name_at(&p, "9h"), "cavalryman");
    // The cavalryman promotes on taking the Frankish cannon.
    let mut p = board(&[("10j", "Y"), ("9h", "j")]);
    play(&mut p, "10j9h");
    assert_eq!(name_at(&p, "9h"), "cavalry");
    // Break: a pawn that does not promote on taking the drum.
    let mut p = broken_board("name = \"pawn\"\nbetza = \"W\"\nwithout = { letter = \"U\", loses = \"fW\" }\npromotion = \"forced\"\npromoted = { name = \"patrol unit\", betza = \"vRsW\" }\npromotes_capturing = [\"K\", \"M\", \"+M\", \"L\", \"U\", ",
        "name = \"pawn\"\nbetza = \"W\"\nwithout = { letter = \"U\", loses = \"fW\" }\npromotion = \"forced\"\npromoted = { name = \"patrol unit\", betza = \"vRsW\" }\npromotes_capturing = [\"K\", \"M\", \"+M\", \"L\", ", &[("10j", "P"), ("10i", "u"), ("1s", "U")]);
    play(&mut p, "10j10i");
    assert_eq!(name_at(&p, "10i"), "pawn");
}

#[test]
fn entering_the_camp_promotes_always() {
    // The camp is gote's six ranks, a..f. A pawn stepping from 10g to 10f must promote; a
    // longbow stepping in promotes by itself, shot or not.
    let p = board(&[("10g", "P"), ("1s", "U")]);
    assert_legal(&p, "10g10f+");
    assert!(!moves(&p).contains("10g10f"));
    let mut p = board(&[("10g", "L'"), ("9c", "p")]);
    play(&mut p, "10g9f,9c");
    assert_eq!(name_at(&p, "9f"), "longbow cavalryman");
    // Break: a zone of five ranks.
    let p = broken_board(
        "zone_depth = 6",
        "zone_depth = 5",
        &[("10g", "P"), ("1s", "U")],
    );
    assert!(moves(&p).contains("10g10f"));
}

#[test]
fn the_middle_troop_and_banner_stand_in_for_the_general() {
    // Gote's general on 10b is taken; gote keeps its middle troop and banner: play goes on.
    // Then its banner is taken: gote loses.
    let v = ko();
    let pieces = [
        ("19s", "K"),
        ("10b", "k"),
        ("10c", "R"),
        ("1a", "m"),
        ("3a", "l"),
        ("3e", "R"),
    ];
    let mut p = composed(&v, &pieces, "b -");
    play(&mut p, "10c10b+");
    assert_eq!(p.royal_count(Color::Gote), 0);
    assert_eq!(p.outcome(), None);
    play(&mut p, "1a2a");
    play(&mut p, "3e3a+");
    assert_eq!(p.outcome(), win(Color::Sente, EndReason::RoyalCaptured));
    // A governor (promoted middle troop) is royal itself: with it, the banner's loss does not
    // matter.
    let pieces = [("19s", "K"), ("1a", "+m"), ("3a", "l"), ("3e", "R")];
    let mut p = composed(&v, &pieces, "b -");
    play(&mut p, "3e3a+");
    assert_eq!(p.outcome(), None);
    // Without the general and with only the banner left, gote has lost already.
    let p = composed(&v, &[("19s", "K"), ("3a", "l")], "w -");
    assert_eq!(p.outcome(), win(Color::Sente, EndReason::RoyalCaptured));
    // Break: no reserve: taking the general wins at once.
    let none = broken("ko", "royal_reserve = [\"M\", \"L\"]\n", "");
    let pieces = [
        ("19s", "K"),
        ("10b", "k"),
        ("10c", "R"),
        ("1a", "m"),
        ("3a", "l"),
    ];
    let mut p = composed(&none, &pieces, "b -");
    play(&mut p, "10c10b+");
    assert_eq!(p.outcome(), win(Color::Sente, EndReason::RoyalCaptured));
}

#[test]
fn pawns_step_forward_only_while_their_drum_lives() {
    // With a drum (or thunderclap) of its side on the board a pawn steps four ways; without,
    // three (`without`). Taking the last drum takes the step away at once.
    let forward = |p: &Position| moves_with(p, "10j").contains("10j10i");
    assert!(forward(&board(&[("10j", "P"), ("1s", "U")])));
    assert!(forward(&board(&[("10j", "P"), ("1s", "+U")])));
    assert!(!forward(&board(&[("10j", "P")])));
    assert!(!forward(&board(&[("10j", "P"), ("1a", "u")])));
    assert_eq!(moves_with(&board(&[("10j", "P")]), "10j").len(), 3);
    let mut p = cornered(&ko(), &[("10j", "P"), ("1s", "U"), ("1a", "r")], "w");
    play(&mut p, "1a1s+");
    assert!(!forward(&p));
    // Break: without the rule the pawn always steps forward.
    let free = broken(
        "ko",
        "betza = \"W\"\nwithout = { letter = \"U\", loses = \"fW\" }\n",
        "betza = \"W\"\n",
    );
    assert!(moves_with(&cornered(&free, &[("10j", "P")], "b"), "10j").contains("10j10i"));
}

#[test]
fn drum_and_banner_need_the_taoist_priest() {
    // Sente's drum on 10g entering the camp (9f) must promote while sente has its priest; with
    // no priest it cannot.
    let p = board(&[("10g", "U"), ("1s", "T'")]);
    assert_legal(&p, "10g9f+");
    assert!(!moves(&p).contains("10g9f"));
    let p = board(&[("10g", "U")]);
    assert_legal(&p, "10g9f");
    assert!(!moves(&p).contains("10g9f+"));
    // Gote's chariot unit takes sente's only priest: sente's thunderclap and roaming assault
    // turn back at once; undone exactly.
    let v = ko();
    let pieces = [
        ("19s", "K"),
        ("19a", "k"),
        ("1s", "T'"),
        ("1a", "r"),
        ("10j", "+U"),
        ("12j", "+L"),
    ];
    let mut p = composed(&v, &pieces, "w -");
    let before = (p.to_sfen(), p.hash());
    play(&mut p, "1a1s+");
    assert_eq!(name_at(&p, "10j"), "drum");
    assert_eq!(name_at(&p, "12j"), "banner");
    assert_eq!(
        p.hash(),
        Position::from_sfen(&v, &p.to_sfen()).unwrap().hash()
    );
    p.unmake_move();
    assert_eq!((p.to_sfen(), p.hash()), before);
    // A position with a promoted drum and no priest of its side, or a fog next to a light,
    // cannot arise: SFEN refuses it by name (a composed position may still have it).
    for (pieces, says) in [
        (&[("10j", "+U")][..], "thunderclap on 10j is promoted"),
        (
            &[("10j", "+T'"), ("10e", "+s'")][..],
            "five-li fog on 10j stands within 5",
        ),
    ] {
        let sfen = board(pieces).to_sfen();
        let e = Position::from_sfen(&v, &sfen).unwrap_err().to_string();
        assert!(e.contains(says), "{e}");
    }
    // Break: a drum that needs no priest stays a thunderclap.
    let free = broken(
        "ko",
        "name = \"drum\"\nbetza = \"FsW\"\npromotion = \"forced\"\npromotes_with = \"T'\"\n",
        "name = \"drum\"\nbetza = \"FsW\"\npromotion = \"forced\"\n",
    );
    let mut p = composed(&free, &pieces, "w -");
    play(&mut p, "1a1s+");
    assert_eq!(name_at(&p, "10j"), "thunderclap");
}

#[test]
fn the_clerks_promotion_promotes_its_guards_and_kills_the_poison_flame() {
    // Sente's clerk jumps from 10g into the camp (10e) and promotes: sente's advance guard and
    // rear guard promote with it and gote's poison flame on 15c dies; undone exactly.
    let v = ko();
    let pieces = [
        ("19s", "K"),
        ("19a", "k"),
        ("10g", "O"),
        ("1p", "A'"),
        ("2p", "R'"),
        ("15c", "+c"),
        ("5c", "c"),
    ];
    let mut p = composed(&v, &pieces, "b -");
    let before = (p.to_sfen(), p.hash());
    play(&mut p, "10g10e+");
    assert_eq!(name_at(&p, "10e"), "master at arms");
    assert_eq!(name_at(&p, "1p"), "skyward net");
    assert_eq!(name_at(&p, "2p"), "earthward net");
    assert_eq!(name_at(&p, "15c"), "-");
    assert_eq!(name_at(&p, "5c"), "engineer");
    p.unmake_move();
    assert_eq!((p.to_sfen(), p.hash()), before);
    // Break: no effects.
    let none = broken(
        "ko",
        "promotion_effects = { promotes = [\"A'\", \"R'\"], kills = [\"+C\"] }\n",
        "",
    );
    let mut p = composed(&none, &pieces, "b -");
    play(&mut p, "10g10e+");
    assert_eq!(name_at(&p, "1p"), "advance guard");
    assert_eq!(name_at(&p, "15c"), "poison flame");
}

#[test]
fn the_fog_fades_near_the_light_and_is_shot_only_from_afar() {
    // Sente's priest jumps from 10h into the camp (10f) and becomes a five-li fog, unless an
    // immaculate light stands on a line through 10f at most five points away: gote's on 10a
    // (five up) turns it back at once; on 4f (six along the rank) it does not.
    let promote_near = |light: &str| {
        let mut p = board(&[("10h", "T'"), (light, "+s'")]);
        play(&mut p, "10h10f+");
        name_at(&p, "10f")
    };
    assert_eq!(promote_near("10a"), "Taoist priest");
    assert_eq!(promote_near("4f"), "five-li fog");
    // Gote's fog on 9d, five points above 9i, is too close for sente's Frankish cannon; on 9c,
    // six, it is shot.
    let shot = |fog: &str| {
        let p = board(&[("10j", "J"), (fog, "+t'")]);
        moves_with(&p, "10j").contains(&format!("10j9i,{fog}"))
    };
    assert!(!shot("9d"));
    assert!(shot("9c"));
    // Breaks: a fog that fades within four points only, one that can be shot from anywhere.
    let mut p = broken_board(
        "within = 5 }",
        "within = 4 }",
        &[("10h", "T'"), ("10a", "+s'")],
    );
    play(&mut p, "10h10f+");
    assert_eq!(name_at(&p, "10f"), "five-li fog");
    let p = broken_board(", shot_from = 6 }", " }", &[("10j", "J"), ("9d", "+t'")]);
    assert!(moves_with(&p, "10j").contains("10j9i,9d"));
}

#[test]
fn compound_keys_are_checked() {
    for (from, to, says) in [
        (
            "repeat = { betza = \"K\", times = 2 }",
            "repeat = { betza = \"K\", times = 9 }",
            "times",
        ),
        (
            "shoot = { betza = \"mF\", range = 3 }",
            "shoot = { betza = \"mF\", range = 0 }",
            "range",
        ),
        (
            "shoot = { betza = \"mF\", range = 7, targets = 2 }",
            "shoot = { betza = \"mF\", range = 7, targets = 3 }",
            "targets",
        ),
        (
            "shoot = { betza = \"mF\", range = 3 }",
            "shoot = { betza = \"mFcaK\", range = 3 }",
            "leaps and rides",
        ),
        (
            "royal_reserve = [\"M\", \"L\"]",
            "royal_reserve = [\"K\"]",
            "royal_reserve",
        ),
        (
            "royal_capture = true",
            "royal_capture = false",
            "royal_capture",
        ),
        ("spares = [\"+U'\"]", "spares = [\"X!\"]", "spares"),
        // A config whose compound moves would make millions of policy planes is refused
        // quickly, by name, not left to run out of memory.
        (
            "shoot = { betza = \"mR5\", range = 7, targets = 2 }",
            "shoot = { betza = \"mR5\", range = 18, targets = 2, times = 2 }",
            "more than 400000 types",
        ),
    ] {
        let e = try_broken("ko", from, to).expect_err(to);
        assert!(e.contains(says), "{to}: {e}");
    }
}

#[test]
fn promotes_capturing_counts_the_steps_of_a_two_step_move() {
    // A Tenjiku Lion given `promotes_capturing = ["P"]`: taking a pawn on the first step of a
    // two-step move (igui and back) promotes it to a lion hawk; the plain Lion does not.
    let keyed = broken(
        "tenjiku",
        "promoted = { name = \"lion hawk\", betza = \"BKNADcaKmabK\" }\n",
        "promoted = { name = \"lion hawk\", betza = \"BKNADcaKmabK\" }\npromotes_capturing = [\"P\"]\n",
    );
    for (v, after) in [(keyed, "lion hawk"), (builtin("tenjiku"), "lion")] {
        let mut p = cornered(&v, &[("8h", "L!"), ("8g", "p")], "b");
        play(&mut p, "8h8g8h");
        assert_eq!(name_at(&p, "8h"), after);
    }
}
