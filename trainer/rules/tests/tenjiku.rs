//! Tenjiku shogi's powers, tested by hand (configs/variants/tenjiku.toml has the readings): range
//! captures by rank, area moves, the Heavenly Tetrarchs' igui and skipping rides, the Fire
//! Demon's burns, and royal capture. Each power also has a deliberate break of the config that
//! a test sees. Squares are USI: file 16..1 from left to right, rank a (gote's first rank) to p
//! (sente's first rank); sente moves towards rank a.

use rules::{perft, Color, EndReason, Position, Variant, VariantSpec};
use std::sync::Arc;

mod support;
use support::*;

fn tenjiku() -> Arc<Variant> {
    builtin("tenjiku")
}

/// Tenjiku with one text replacement in its config (a deliberate break).
fn broken(from: &str, to: &str) -> Arc<Variant> {
    let text = include_str!("../../../configs/variants/tenjiku.toml");
    assert!(text.contains(from), "{from:?} not in tenjiku.toml");
    let spec = VariantSpec::from_toml(&text.replacen(from, to, 1), "tenjiku-broken").unwrap();
    Arc::new(Variant::compile(spec).unwrap())
}

/// The kings on 16p and 16a (out of the tested lines), plus `pieces`; `side` to move.
fn board(v: &Arc<Variant>, pieces: &[(&str, &str)], side: &str) -> Position {
    let mut all = vec![("16p", "K"), ("16a", "k")];
    all.extend_from_slice(pieces);
    composed(v, &all, &format!("{side} -"))
}

#[test]
fn start_position_move_count_by_hand() {
    // Sente, rank by rank (rank k: its two dogs; l: pawns; m: the generals' rank; n, o, p the
    // back ranks, with empty squares 15o, 12o, 5o, 2o):
    // - dogs 12k, 5k: one step forward each: 2;
    // - pawns: forward, except the two in front of the dogs: 14;
    // - rank m: the horned falcons jump two forward (13k, 4k): 2; the soaring eagles jump two
    //   diagonally forward (14k 10k, 7k 3k): 4; the range captures over the own pawns: each
    //   bishop general takes the three gote pieces on its long diagonal (1c 2d 3e, 16c 15d 14e),
    //   each rook general the pawn and the rook general on its file, the great general the five
    //   pieces of file 9 (9e to 9a; the kings stop nothing there) and the pawn 1e, the vice
    //   general the pawn 16e: 6 + 4 + 6 + 1 = 17, and the ten by bishop and rook generals enter
    //   the zone and may promote: +10; everything else on rank m is blocked: 33;
    // - rank n: a step back into an empty square of rank o for each vertical soldier, bishop,
    //   dragon horse, dragon king and water buffalo: 10; the free eagle's jump lands on a pawn,
    //   the lion hawk and the fire demons are walled in;
    // - rank o: the chariot soldiers step sideways into 15o, 12o, 5o, 2o (4), the blind tigers
    //   too (2), the kirin jumps to 5o (1): 7;
    // - rank p: the ferocious leopards, irons, coppers and silvers into those squares: 8.
    // 2 + 14 + 33 + 10 + 7 + 8 = 74.
    let p = Position::start(tenjiku());
    assert_eq!(p.legal_moves().len(), 74);
    assert_eq!(dests(&p, "9m"), set(&["9a", "9b", "9c", "9d", "9e", "1e"]));
    assert_eq!(dests(&p, "11m"), set(&["1c", "2d", "3e"]));
    assert_eq!(dests(&p, "8m"), set(&["16e"]));
    assert_eq!(dests(&p, "10m"), set(&["10d", "10e"]));
    assert_eq!(moves_with(&p, "11m").len(), 6, "each may promote");
    assert_eq!(
        dests(&p, "8n"),
        set(&[]),
        "the free eagle's jump lands on its pawn"
    );
}

#[test]
fn range_capture_jumps_only_lower_ranks() {
    // The great general on 8h; up its file an own pawn (8g), a gote rook general (8e, rank 1),
    // a gote great general (8c, rank 3: taken, not jumped) and a pawn behind it (8b).
    let v = tenjiku();
    let p = board(
        &v,
        &[
            ("8h", "Q!"),
            ("8g", "P"),
            ("8e", "r!"),
            ("8c", "q!"),
            ("8b", "p"),
        ],
        "b",
    );
    let up: Vec<String> = dests(&p, "8h")
        .into_iter()
        .filter(|s| s.starts_with('8'))
        .collect();
    assert_eq!(
        up,
        ["8c", "8e", "8i", "8j", "8k", "8l", "8m", "8n", "8o", "8p"]
    );
    // A rook general (rank 1) cannot jump the rook general in its way, only take it.
    let p = board(
        &v,
        &[("8h", "R!"), ("8g", "P"), ("8f", "r!"), ("8e", "p")],
        "b",
    );
    assert!(dests(&p, "8h").contains("8f") && !dests(&p, "8h").contains("8e"));
    // Nor may anything jump a king: the general takes it and stops.
    let p = composed(
        &v,
        &[
            ("16p", "K"),
            ("3h", "Q!"),
            ("3g", "P"),
            ("3d", "k"),
            ("3b", "p"),
        ],
        "b -",
    );
    assert!(dests(&p, "3h").contains("3d") && !dests(&p, "3h").contains("3b"));
    // Break: the great general ranked 1 no longer jumps the rook general of rank 1.
    let weak = broken(
        "name = \"great general\"\nbetza = \"Q\"\nrank = 3",
        "name = \"great general\"\nbetza = \"Q\"\nrank = 1",
    );
    let p = board(
        &weak,
        &[("8h", "Q!"), ("8g", "P"), ("8e", "r!"), ("8c", "q!")],
        "b",
    );
    assert!(dests(&p, "8h").contains("8e") && !dests(&p, "8h").contains("8c"));
}

#[test]
fn area_moves_go_round_obstacles_in_three_steps() {
    // The vice general on 8h, walled in by own pawns except on 8g. Its diagonals are blocked,
    // so only the area move is left: 8g; then 7f 8f 9f; then 6e 7e 8e 9e 10e, 6f 10f, 6g 10g.
    let v = tenjiku();
    let wall = ["7g", "9g", "7h", "9h", "7i", "8i", "9i"];
    let mut pieces: Vec<(&str, &str)> = wall.iter().map(|&s| (s, "P")).collect();
    pieces.push(("8h", "V!"));
    let p = board(&v, &pieces, "b");
    let expected = [
        "8g", "7f", "8f", "9f", "6e", "7e", "8e", "9e", "10e", "6f", "10f", "6g", "10g",
    ];
    assert_eq!(dests(&p, "8h"), set(&expected));
    // An enemy piece ends a path: with a gote pawn on 8g the general may take it, but reaches
    // nothing beyond.
    pieces.push(("8g", "p"));
    let p = board(&v, &pieces, "b");
    assert_eq!(dests(&p, "8h"), set(&["8g"]));
    // Break: two steps reach only 8g and the three squares after it.
    let short = broken(
        "area = 3\n\n[[pieces]]\nletter = \"Q!\"",
        "area = 2\n\n[[pieces]]\nletter = \"Q!\"",
    );
    let p = board(&short, &pieces[..pieces.len() - 1], "b");
    assert_eq!(dests(&p, "8h"), set(&["8g", "7f", "8f", "9f"]));
}

#[test]
fn heavenly_tetrarchs_capture_in_place_and_skip_the_first_square() {
    // Promoted chariot soldier on 8h, a gote pawn on 8g, an own pawn on 7g.
    let v = tenjiku();
    let p = board(&v, &[("8h", "+C!"), ("8g", "p"), ("7g", "P")], "b");
    let m = moves_with(&p, "8h");
    // Igui: the pawn taken without moving.
    assert!(m.contains("8h8g8h"), "{m:?}");
    assert!(!m.contains("8h8g"), "no plain capture on the first square");
    // Forward over the pawn to 8f and on; diagonally over the own pawn to 6f and on.
    assert!(m.contains("8h8f") && m.contains("8h8a") && m.contains("8h6f") && m.contains("8h1a"));
    // Sideways only the second and third squares.
    let side: Vec<&str> = ["6h", "5h", "7h", "4h", "10h", "11h", "9h", "12h"]
        .into_iter()
        .filter(|s| m.contains(&format!("8h{s}")))
        .collect();
    assert_eq!(side, ["6h", "5h", "10h", "11h"]);
    // Break: without the skipping rides only the igui is left.
    let plain = broken(", skip_first = \"vRBsR3\"", "");
    let p = board(&plain, &[("8h", "+C!"), ("8g", "p"), ("7g", "P")], "b");
    assert_eq!(moves_with(&p, "8h"), set(&["8h8g8h"]));
}

#[test]
fn the_fire_demon_burns_around_where_it_stops() {
    // Sente's fire demon on 8h, gote pawns on 7e, 8e and 9g. An area move through 8g to 8f
    // burns all three (they touch 8f); taking the move back restores them.
    let v = tenjiku();
    let mut p = board(
        &v,
        &[("8h", "D!"), ("7e", "p"), ("8e", "p"), ("9g", "p")],
        "b",
    );
    let (sfen, hash) = (p.to_sfen(), p.hash());
    assert_legal(&p, "8h8f");
    play(&mut p, "8h8f");
    assert_eq!(
        p.occupied_by(Color::Gote).len(),
        1,
        "only the gote king is left"
    );
    p.unmake_move();
    assert_eq!((p.to_sfen(), p.hash()), (sfen, hash));
    // The king burns too, which wins.
    let mut p = composed(&v, &[("16p", "K"), ("8h", "D!"), ("8e", "k")], "b -");
    play(&mut p, "8h8f");
    assert_eq!(p.outcome(), win(Color::Sente, EndReason::RoyalCaptured));
    // Break: a demon that does not burn leaves the pawns.
    let cold = broken("area = 3\nburn = true", "area = 3");
    let mut p = board(
        &cold,
        &[("8h", "D!"), ("7e", "p"), ("8e", "p"), ("9g", "p")],
        "b",
    );
    play(&mut p, "8h8f");
    assert_eq!(p.occupied_by(Color::Gote).len(), 4);
}

#[test]
fn a_piece_ending_next_to_an_enemy_fire_demon_burns() {
    // Gote to move; its silver on 8f steps to 8g, next to sente's demon on 8h, and is burnt.
    let v = tenjiku();
    let mut p = board(&v, &[("8h", "D!"), ("8f", "s")], "w");
    play(&mut p, "8f8g");
    assert!(p.piece_at(square(&v, "8g")).is_empty());
    assert_eq!(p.occupied_by(Color::Gote).len(), 1);
    // A gote demon moving next to it burns it first and survives.
    let mut p = board(&v, &[("8h", "D!"), ("8e", "d!")], "w");
    play(&mut p, "8e8g");
    assert!(p.piece_at(square(&v, "8h")).is_empty());
    assert!(p.piece_at(square(&v, "8g")).is_color(Color::Gote));
    // Break: without passive burning the silver survives.
    let safe = broken("passive_burn = true", "passive_burn = false");
    let mut p = board(&safe, &[("8h", "D!"), ("8f", "s")], "w");
    play(&mut p, "8f8g");
    assert!(p.piece_at(square(&safe, "8g")).is_color(Color::Gote));
}

#[test]
fn royal_pieces_may_be_left_attacked_and_are_captured() {
    // Sente's king on 8h may step to 8g, which gote's gold on 8f attacks; the gold takes it,
    // and sente, without a royal piece, has lost.
    let v = tenjiku();
    let mut p = composed(&v, &[("8h", "K"), ("8f", "g"), ("1a", "k")], "b -");
    assert_legal(&p, "8h8g");
    play(&mut p, "8h8g");
    assert_eq!(p.outcome(), None);
    play(&mut p, "8f8g");
    assert_eq!(p.outcome(), win(Color::Gote, EndReason::RoyalCaptured));
    // A position without gote's king is a finished game, not an error.
    let done = composed(&v, &[("8h", "K")], "w -");
    assert_eq!(done.outcome(), win(Color::Sente, EndReason::RoyalCaptured));
    // Break: without royal capture, the step into attack is illegal.
    let checked = broken("royal_capture = true", "royal_capture = false");
    let p = composed(&checked, &[("8h", "K"), ("8f", "g"), ("1a", "k")], "b -");
    assert_illegal(&p, "8h8g");
}

#[test]
fn perft_of_the_start_position() {
    // Depth 1 is the hand count above; deeper counts are this engine's (no engine we can run
    // plays Tenjiku shogi), kept as a regression check in tests/data/tenjiku.perft too.
    let mut p = Position::start(tenjiku());
    assert_eq!(perft(&mut p, 1), 74);
    assert_eq!(perft(&mut p, 2), 5536);
}

/// The square index of a USI square.
fn square(v: &Variant, sq: &str) -> usize {
    let split = sq.find(|c: char| c.is_ascii_lowercase()).unwrap();
    let file: usize = sq[..split].parse().unwrap();
    let rank = (sq.as_bytes()[split] - b'a') as usize;
    v.square(v.files as usize - file, rank)
}
