//! Heian dai shogi (configs/variants/heian-dai.toml): every expectation below is derived by hand
//! from the rule texts cited in the config; no engine we can run plays the game.
//!
//! Squares are USI: files 13..1, ranks a..m; rank `a` is gote's back rank and sente moves
//! towards it. Sente's zone is ranks a, b, c; gote's is k, l, m.

use rules::fsf::to_fsf_ini;
use rules::{Color, EndReason, Position, Variant};
use std::collections::BTreeSet;
use std::sync::Arc;

mod support;
use support::*;

fn hd() -> Arc<Variant> {
    builtin("heian-dai")
}

/// A composed position of Heian dai shogi (see `support::composed`).
fn pos(pieces: &[(&str, &str)], side_and_hands: &str) -> Position {
    composed(&hd(), pieces, side_and_hands)
}

// ---------------------------------------------------------------------------------------------
// The start position
// ---------------------------------------------------------------------------------------------

const START: &str = "lnicsgkgscinl/fd2t1m1t2df/ppppppppppppp/6u6/13/13/13/13/13/6U6/PPPPPPPPPPPPP/FD2T1M1T2DF/LNICSGKGSCINL b - 1";

#[test]
fn start_position() {
    let v = hd();
    let p = Position::from_sfen(&v, START).unwrap();
    assert_eq!(Position::start(v.clone()).to_sfen(), p.to_sfen());
    // Counted by hand (sente; nothing reaches the zone):
    //   12 pawns step to rank j (not 7k: the go-between stands on 7j);
    //    1 go-between 7j to 7i (its own pawn is behind it);
    //    0 free chariots, flying dragons and fierce tigers on rank l: every square next to
    //      them on their lines holds an own piece;
    //    2 side mover 7l: 8l and 6l (the tigers on 9l and 5l stop it; its pawn blocks 7k);
    //    0 lances and knights: chariot ahead, own pawns on the knight squares;
    //    4 irons: 11l 10l and 3l 4l (the dragons hold 12l and 2l);
    //    2 coppers: 10l and 4l;
    //    4 silvers: 10l 8l and 6l 4l (the tigers hold 9l and 5l);
    //    2 golds: 8l and 6l (tigers and side mover hold the diagonals);
    //    2 king: 8l and 6l.
    // 12 + 1 + 2 + 4 + 2 + 4 + 2 + 2 = 29.
    assert_eq!(p.legal_moves().len(), 29);
    assert_eq!(dests(&p, "7l"), set(&["8l", "6l"]));
    assert_eq!(dests(&p, "11m"), set(&["11l", "10l"]));
    assert_eq!(dests(&p, "7j"), set(&["7i"]));
    assert_eq!(dests(&p, "12l"), set(&[]));
    assert_eq!(dests(&p, "12m"), set(&[]));
    // Gote's army is sente's turned by 180 degrees: the same count with gote to move.
    let g = Position::from_sfen(&v, &START.replace(" b ", " w ")).unwrap();
    assert_eq!(g.legal_moves().len(), 29);
    assert_eq!(dests(&g, "3a"), set(&["3b", "4b"]));
    assert_eq!(dests(&g, "7d"), set(&["7e"]));
}

// ---------------------------------------------------------------------------------------------
// Piece moves on a nearly empty board
// ---------------------------------------------------------------------------------------------

/// `token` on 7g, sente's king on 12m and gote's on 2a: no line or jump from 7g reaches either.
fn alone(token: &str, side: &str) -> Position {
    pos(&[("7g", token), ("12m", "K"), ("2a", "k")], side)
}

const GOLD: [&str; 6] = ["7f", "8f", "6f", "8g", "6g", "7h"];

/// Sente's destinations from 7g for every kind, promoted forms included.
fn sente_cases() -> Vec<(&'static str, Vec<&'static str>)> {
    let unpromoted: Vec<(&str, Vec<&str>)> = vec![
        ("K", vec!["8f", "7f", "6f", "8g", "6g", "8h", "7h", "6h"]),
        ("G", GOLD.to_vec()),
        ("S", vec!["7f", "8f", "6f", "8h", "6h"]),
        // Copper: the four orthogonal steps.
        ("C", vec!["7f", "7h", "8g", "6g"]),
        // Iron: forward, diagonally forward, sideways; nothing backwards.
        ("I", vec!["7f", "8f", "6f", "8g", "6g"]),
        ("N", vec!["8e", "6e"]),
        ("L", vec!["7f", "7e", "7d", "7c", "7b", "7a"]),
        ("P", vec!["7f"]),
        // Flying dragon: the four diagonals to the edge.
        (
            "D",
            vec![
                "8f", "9e", "10d", "11c", "12b", "13a", "6f", "5e", "4d", "3c", "2b", "1a", "8h",
                "9i", "10j", "11k", "12l", "13m", "6h", "5i", "4j", "3k", "2l", "1m",
            ],
        ),
        // Fierce tiger: one step diagonally.
        ("T", vec!["8f", "6f", "8h", "6h"]),
        // Side mover: the whole rank, one step forward.
        (
            "M",
            vec![
                "13g", "12g", "11g", "10g", "9g", "8g", "6g", "5g", "4g", "3g", "2g", "1g", "7f",
            ],
        ),
        // Free chariot: the whole file.
        (
            "F",
            vec![
                "7a", "7b", "7c", "7d", "7e", "7f", "7h", "7i", "7j", "7k", "7l", "7m",
            ],
        ),
        // Go-between: one step forward or back.
        ("U", vec!["7f", "7h"]),
    ];
    // Every promoted form, the flying dragon's included, moves as a gold general.
    let promoted = [
        "+S", "+C", "+I", "+N", "+L", "+P", "+D", "+T", "+M", "+F", "+U",
    ]
    .into_iter()
    .map(|t| (t, GOLD.to_vec()));
    unpromoted.into_iter().chain(promoted).collect()
}

#[test]
fn sente_piece_moves() {
    let cases = sente_cases();
    assert_eq!(cases.len(), 13 + 11);
    for (token, expected) in cases {
        let p = if token == "K" {
            pos(&[("7g", "K"), ("2a", "k")], "b -")
        } else {
            alone(token, "b -")
        };
        assert_eq!(dests(&p, "7g"), set(&expected), "piece {token}");
    }
}

#[test]
fn gote_pieces_move_the_other_way() {
    // Gote's piece on 7g reaches the squares sente's reaches, turned about 7g.
    for (token, expected) in sente_cases() {
        let gote = token.to_lowercase();
        let p = if token == "K" {
            pos(&[("7g", "k"), ("12m", "K")], "w -")
        } else {
            alone(&gote, "w -")
        };
        let turned: Vec<String> = expected.iter().map(|s| turned(&hd(), s)).collect();
        let turned: Vec<&str> = turned.iter().map(String::as_str).collect();
        assert_eq!(dests(&p, "7g"), set(&turned), "piece {gote}");
    }
    // Spelled out for the iron and the side mover: their steps point down the board.
    assert_eq!(
        dests(&alone("i", "w -"), "7g"),
        set(&["7h", "8h", "6h", "8g", "6g"])
    );
    assert!(dests(&alone("m", "w -"), "7g").contains("7h"));
    assert!(!dests(&alone("m", "w -"), "7g").contains("7f"));
}

// ---------------------------------------------------------------------------------------------
// Blockers and jumps
// ---------------------------------------------------------------------------------------------

/// Sente's piece on 7g with a blocker on every line: own pawns on 7j, 10g, 9e and 5i, gote
/// pawns (capturable) on 7d, 3g, 4d and 10j.
fn boxed(token: &str) -> Position {
    pos(
        &[
            ("7g", token),
            ("7j", "P"),
            ("10g", "P"),
            ("9e", "P"),
            ("5i", "P"),
            ("7d", "p"),
            ("3g", "p"),
            ("4d", "p"),
            ("10j", "p"),
            ("12m", "K"),
            ("2a", "k"),
        ],
        "b -",
    )
}

#[test]
fn ranging_pieces_stop_at_blockers() {
    // Each line: forward 7f 7e 7d (capture); back 7h 7i; left 8g 9g; right 6g 5g 4g 3g
    // (capture); forward-left 8f; forward-right 6f 5e 4d (capture); back-left 8h 9i 10j
    // (capture); back-right 6h.
    let cases: &[(&str, &[&str])] = &[
        ("L", &["7f", "7e", "7d"]),
        ("F", &["7f", "7e", "7d", "7h", "7i"]),
        ("M", &["8g", "9g", "6g", "5g", "4g", "3g", "7f"]),
        ("D", &["8f", "6f", "5e", "4d", "8h", "9i", "10j", "6h"]),
    ];
    for &(token, expected) in cases {
        assert_eq!(dests(&boxed(token), "7g"), set(expected), "piece {token}");
    }
    // Pieces right next to it stop the side mover on every line.
    let p = pos(
        &[
            ("7g", "M"),
            ("7f", "P"),
            ("8g", "P"),
            ("6g", "G"),
            ("12m", "K"),
            ("2a", "k"),
        ],
        "b -",
    );
    assert_eq!(dests(&p, "7g"), set(&[]));
}

#[test]
fn knight_jumps_over_pieces() {
    // Pieces on 8f, 7f and 6f do not stop it; it lands on a gote silver on 6e, not on its own
    // gold on 8e.
    let p = pos(
        &[
            ("7g", "N"),
            ("8f", "P"),
            ("7f", "P"),
            ("6f", "p"),
            ("8e", "G"),
            ("6e", "s"),
            ("12m", "K"),
            ("2a", "k"),
        ],
        "b -",
    );
    assert_eq!(dests(&p, "7g"), set(&["6e"]));
}

// ---------------------------------------------------------------------------------------------
// Promotion
// ---------------------------------------------------------------------------------------------

#[test]
fn zone_is_the_three_far_ranks() {
    // Pawns on 9e, 7d and 5b, lance on 3e.
    let p = pos(
        &[
            ("9e", "P"),
            ("7d", "P"),
            ("5b", "P"),
            ("3e", "L"),
            ("13m", "K"),
            ("1a", "k"),
        ],
        "b -",
    );
    // Rank d, where gote's go-between starts, is outside the zone.
    assert_eq!(moves_with(&p, "9e"), set(&["9e9d"]));
    assert_eq!(moves_with(&p, "7d"), set(&["7d7c", "7d7c+"]));
    // Pawn and lance must promote on the last rank, and only there.
    assert_eq!(moves_with(&p, "5b"), set(&["5b5a+"]));
    assert_eq!(
        moves_with(&p, "3e"),
        set(&["3e3d", "3e3c", "3e3c+", "3e3b", "3e3b+", "3e3a+"])
    );
    let e = p.parse_usi("5b5a").unwrap_err().to_string();
    assert!(e.contains("must promote"), "{e}");
    let e = p.parse_usi("9e9d+").unwrap_err().to_string();
    assert!(e.contains("cannot promote"), "{e}");
}

#[test]
fn knight_must_promote_on_the_last_two_ranks() {
    let p = pos(
        &[
            ("10f", "N"),
            ("7e", "N"),
            ("4d", "N"),
            ("13m", "K"),
            ("1a", "k"),
        ],
        "b -",
    );
    assert_eq!(moves_with(&p, "10f"), set(&["10f11d", "10f9d"]));
    assert_eq!(
        moves_with(&p, "7e"),
        set(&["7e8c", "7e8c+", "7e6c", "7e6c+"])
    );
    assert_eq!(moves_with(&p, "4d"), set(&["4d5b+", "4d3b+"]));
}

#[test]
fn other_pieces_may_promote_and_are_never_forced() {
    // Each on 7b, moving to the last rank: it keeps a move there, so both are legal.
    let cases = [
        ("S", "7b7a"),
        ("C", "7b7a"),
        ("I", "7b7a"),
        ("D", "7b8a"),
        ("T", "7b8a"),
        ("M", "7b7a"),
        ("F", "7b7a"),
        ("U", "7b7a"),
    ];
    for (token, usi) in cases {
        let p = pos(&[("7b", token), ("13m", "K"), ("1a", "k")], "b -");
        assert_legal(&p, usi);
        assert_legal(&p, &format!("{usi}+"));
        // Every move from the zone may promote, sideways and backwards included.
        let ms = moves_with(&p, "7b");
        for m in ms.iter().filter(|m| !m.ends_with('+')) {
            assert!(ms.contains(&format!("{m}+")), "{token}: {m} without {m}+");
        }
    }
}

#[test]
fn promotion_only_into_out_of_or_within_the_zone() {
    // A silver leaving the zone may promote; a silver and a chariot outside it may not. The
    // chariot on 7e promotes only on the squares of the zone.
    let p = pos(
        &[
            ("7c", "S"),
            ("10f", "S"),
            ("4f", "F"),
            ("13m", "K"),
            ("1a", "k"),
        ],
        "b -",
    );
    assert!(moves_with(&p, "7c").is_superset(&set(&["7c8d", "7c8d+", "7c6d", "7c6d+"])));
    assert_eq!(
        moves_with(&p, "10f"),
        set(&["10f10e", "10f11e", "10f9e", "10f11g", "10f9g"])
    );
    let promoting: BTreeSet<String> = moves_with(&p, "4f")
        .into_iter()
        .filter(|m| m.ends_with('+'))
        .collect();
    assert_eq!(promoting, set(&["4f4c+", "4f4b+", "4f4a+"]));
}

#[test]
fn gote_zone_is_ranks_k_l_m() {
    let p = pos(
        &[
            ("9i", "p"),
            ("7j", "p"),
            ("5l", "p"),
            ("3i", "n"),
            ("11j", "n"),
            ("13m", "K"),
            ("1a", "k"),
        ],
        "w -",
    );
    assert_eq!(moves_with(&p, "9i"), set(&["9i9j"]));
    assert_eq!(moves_with(&p, "7j"), set(&["7j7k", "7j7k+"]));
    assert_eq!(moves_with(&p, "5l"), set(&["5l5m+"]));
    assert_eq!(
        moves_with(&p, "3i"),
        set(&["3i4k", "3i4k+", "3i2k", "3i2k+"])
    );
    assert_eq!(moves_with(&p, "11j"), set(&["11j12l+", "11j10l+"]));
}

#[test]
fn king_gold_and_promoted_pieces_never_promote() {
    let p = pos(
        &[
            ("4c", "K"),
            ("6c", "G"),
            ("8c", "+S"),
            ("10c", "+D"),
            ("13a", "k"),
        ],
        "b -",
    );
    for from in ["4c", "6c", "8c", "10c"] {
        let ms = moves_with(&p, from);
        assert!(!ms.is_empty(), "{from}");
        assert!(ms.iter().all(|m| !m.ends_with('+')), "{from}: {ms:?}");
    }
    assert_legal(&p, "6c6b");
    assert_illegal(&p, "6c6b+");
    assert_legal(&p, "10c10b");
    assert_illegal(&p, "10c10b+");
}

#[test]
fn a_promoted_flying_dragon_is_a_gold() {
    let mut p = pos(&[("8d", "D"), ("13m", "K"), ("1a", "k")], "b -");
    play(&mut p, "8d7c+");
    play(&mut p, "1a2a");
    assert_eq!(dests(&p, "7c"), set(&["7b", "8b", "6b", "8c", "6c", "7d"]));
}

// ---------------------------------------------------------------------------------------------
// No drops; game end; export
// ---------------------------------------------------------------------------------------------

#[test]
fn captured_pieces_leave_the_game() {
    let mut p = pos(
        &[("7g", "G"), ("7f", "+d"), ("12m", "K"), ("2a", "k")],
        "b -",
    );
    play(&mut p, "7g7f");
    assert_eq!(p.to_sfen().split_whitespace().nth(2), Some("-"));
    play(&mut p, "2a3a");
    assert!(moves(&p).iter().all(|m| !m.contains('*')));
    // No piece can be in hand at all.
    let e = Position::from_sfen(&hd(), &START.replace(" - ", " D "))
        .unwrap_err()
        .to_string();
    assert!(e.contains("in hand"), "{e}");
}

#[test]
fn a_bare_king_loses() {
    // Gote, left with its king alone against a gold, has lost.
    let p = pos(&[("7g", "G"), ("12m", "K"), ("1a", "k")], "w -");
    assert_eq!(p.outcome(), win(Color::Sente, EndReason::BareKing));
    // Unless it can bare sente at once: play goes on, and the capture leaves a draw.
    let mut p = pos(&[("2b", "G"), ("12m", "K"), ("1a", "k")], "w -");
    assert_eq!(p.outcome(), None);
    play(&mut p, "1a2b");
    assert_eq!(p.outcome(), draw(EndReason::BareKing));
}

#[test]
fn not_exported_to_fairy_stockfish() {
    // 13x13 is past Fairy-Stockfish's largest board, and four pieces have no type of its own:
    // the export is refused and names each.
    let err = to_fsf_ini(&hd()).expect_err("heian-dai exported");
    for reason in [
        "board 13x13",
        "piece I (iron general): betza \"fsWfF\"",
        "piece M (side mover): betza \"sRfW\"",
        "piece F (free chariot): betza \"vR\"",
        "piece U (go-between): betza \"vW\"",
    ] {
        assert!(
            err.refusals.iter().any(|r| r.contains(reason)),
            "no refusal containing {reason:?} in\n{err}"
        );
    }
}
