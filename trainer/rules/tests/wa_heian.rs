//! Wa shogi (configs/variants/wa.toml) and Heian shogi (configs/variants/heian.toml): every
//! expectation below is derived by hand from the rule texts cited in the configs; no engine we
//! can run plays either game.
//!
//! Squares are USI: file number, then rank letter; rank `a` is gote's back rank. Wa shogi has
//! files 11..1 and ranks a..k, Heian shogi files 9..1 and ranks a..h. Sente moves towards `a`.

use rules::{Color, EndReason, Outcome, Position, Variant};
use std::sync::{Arc, OnceLock};

mod support;
use support::*;

fn wa() -> Arc<Variant> {
    static V: OnceLock<Arc<Variant>> = OnceLock::new();
    V.get_or_init(|| Arc::new(Variant::builtin("wa").expect("built-in wa")))
        .clone()
}

fn heian() -> Arc<Variant> {
    static V: OnceLock<Arc<Variant>> = OnceLock::new();
    V.get_or_init(|| Arc::new(Variant::builtin("heian").expect("built-in heian")))
        .clone()
}

/// A composed position (see `support::composed`).
fn pos(v: &Arc<Variant>, pieces: &[(&str, &str)], side_and_hands: &str) -> Position {
    composed(v, pieces, side_and_hands)
}

fn hands(p: &Position) -> String {
    p.to_sfen().split_whitespace().nth(2).unwrap().to_string()
}

// ---------------------------------------------------------------------------------------------
// Wa shogi: the start position
// ---------------------------------------------------------------------------------------------

const WA_START: &str =
    "hmocskvgudx/1e3w3f1/ppprppptppp/3p3p3/11/11/11/3P3P3/PPPTPPPRPPP/1F3W3E1/XDUGVKSCOMH b - 1";

#[test]
fn wa_start_position() {
    let v = wa();
    let p = Position::from_sfen(&v, WA_START).unwrap();
    assert_eq!(Position::start(v.clone()).to_sfen(), p.to_sfen());
    // Counted by hand, piece by piece (sente; nothing reaches the zone, no hands):
    //   11 sparrow pawns: nine on rank i step to rank h (not 8i, 4i: fox and rabbit), 8h and 4h
    //      step to rank g;
    //    8 treacherous fox 8i: steps 9h 7h 9j 7j 8j, jumps 10g 6g and 8g over its pawn;
    //    5 running rabbit 4i: 5h 3h 5j 3j 4j (its pawn blocks the file);
    //    0 flying falcon 10j: boxed in by 11i 9i 11k 9k 10i;
    //    6 swallow's wings 6j: 7j 8j 9j and 5j 4j 3j;
    //    2 cloud eagle 2j: 3j 1j;
    //   back rank: oxcart 11j (1), blind dog 11j 9j (2), strutting crow 9j (1), flying goose
    //      8j 9j 7j (3), violent wolf 7j 8j (2), crane king 7j 5j (2), violent stag 5j 4j (2),
    //      flying cock 5j 3j (2), swooping owl 3j (1), climbing monkey 3j 1j (2), liberated
    //      horse 1j (1): 19.
    // 11 + 8 + 5 + 0 + 6 + 2 + 19 = 51.
    assert_eq!(p.legal_moves().len(), 51);
    assert_eq!(
        dests(&p, "8i"),
        set(&["9h", "7h", "9j", "7j", "8j", "10g", "6g", "8g"])
    );
    assert_eq!(dests(&p, "10j"), set(&[]));
    // Gote's army is sente's turned by 180 degrees: the same count with gote to move.
    let g = Position::from_sfen(&v, &WA_START.replace(" b ", " w ")).unwrap();
    assert_eq!(g.legal_moves().len(), 51);
    assert_eq!(
        dests(&g, "4c"),
        set(&["3d", "5d", "3b", "5b", "4b", "2e", "6e", "4e"])
    );
}

// ---------------------------------------------------------------------------------------------
// Wa shogi: piece moves on a nearly empty board
// ---------------------------------------------------------------------------------------------

/// Sente's piece `token` on 6f, sente's crane king on 2k and gote's on 10a: no line from 6f
/// reaches either king.
fn wa_alone(token: &str) -> Position {
    pos(&wa(), &[("6f", token), ("2k", "K"), ("10a", "k")], "b -")
}

#[test]
fn wa_crane_king_moves() {
    let p = pos(&wa(), &[("6f", "K"), ("10a", "k")], "b -");
    assert_eq!(
        dests(&p, "6f"),
        set(&["7e", "6e", "5e", "7f", "5f", "7g", "6g", "5g"])
    );
}

#[test]
fn wa_unpromoted_piece_moves() {
    let cases: &[(&str, &[&str])] = &[
        // Cloud eagle: the file both ways, one step sideways and diagonally back, up to three
        // squares diagonally forward (not 10b, 2b).
        (
            "E",
            &[
                "6e", "6d", "6c", "6b", "6a", "6g", "6h", "6i", "6j", "6k", "7f", "5f", "7g", "5g",
                "7e", "8d", "9c", "5e", "4d", "3c",
            ],
        ),
        // Flying falcon: the four diagonals to the edge, one step forward.
        (
            "F",
            &[
                "7e", "8d", "9c", "10b", "11a", "5e", "4d", "3c", "2b", "1a", "7g", "8h", "9i",
                "10j", "11k", "5g", "4h", "3i", "2j", "1k", "6e",
            ],
        ),
        // Swallow's wings: the whole rank, one step forward or back.
        (
            "W",
            &[
                "7f", "8f", "9f", "10f", "11f", "5f", "4f", "3f", "2f", "1f", "6e", "6g",
            ],
        ),
        // Treacherous fox: one or two squares diagonally or straight forward and back.
        (
            "T",
            &[
                "7e", "5e", "7g", "5g", "6e", "6g", "8d", "4d", "8h", "4h", "6d", "6h",
            ],
        ),
        // Running rabbit: the file forward, one step diagonally or straight back.
        (
            "R",
            &["6e", "6d", "6c", "6b", "6a", "7e", "5e", "7g", "5g", "6g"],
        ),
        // Violent wolf (gold) and violent stag (silver).
        ("V", &["6e", "6g", "7f", "5f", "7e", "5e"]),
        ("S", &["7e", "5e", "7g", "5g", "6e"]),
        // Flying goose and climbing monkey: straight forward or back, diagonally forward.
        ("G", &["6e", "6g", "7e", "5e"]),
        ("M", &["6e", "6g", "7e", "5e"]),
        // Flying cock: sideways or diagonally forward.
        ("C", &["7f", "5f", "7e", "5e"]),
        // Strutting crow and swooping owl: straight forward or diagonally back.
        ("U", &["6e", "7g", "5g"]),
        ("O", &["6e", "7g", "5g"]),
        // Blind dog: diagonally forward, sideways or straight back.
        ("D", &["7e", "5e", "7f", "5f", "6g"]),
        // Liberated horse: the file forward, one or two squares back.
        ("H", &["6e", "6d", "6c", "6b", "6a", "6g", "6h"]),
        // Oxcart (lance) and sparrow pawn.
        ("X", &["6e", "6d", "6c", "6b", "6a"]),
        ("P", &["6e"]),
    ];
    for &(token, expected) in cases {
        let p = wa_alone(token);
        assert_eq!(dests(&p, "6f"), set(expected), "piece {token}");
    }
}

#[test]
fn wa_promoted_piece_moves() {
    let falcon = [
        "7e", "8d", "9c", "10b", "11a", "5e", "4d", "3c", "2b", "1a", "7g", "8h", "9i", "10j",
        "11k", "5g", "4h", "3i", "2j", "1k", "6e",
    ];
    let eagle = [
        "6e", "6d", "6c", "6b", "6a", "6g", "6h", "6i", "6j", "6k", "7f", "5f", "7g", "5g", "7e",
        "8d", "9c", "5e", "4d", "3c",
    ];
    let wings = [
        "7f", "8f", "9f", "10f", "11f", "5f", "4f", "3f", "2f", "1f", "6e", "6g",
    ];
    let king = ["7e", "6e", "5e", "7f", "5f", "7g", "6g", "5g"];
    let gold = ["6e", "6g", "7f", "5f", "7e", "5e"];
    let file = ["6e", "6d", "6c", "6b", "6a", "6g", "6h", "6i", "6j", "6k"];
    let rank = ["7f", "8f", "9f", "10f", "11f", "5f", "4f", "3f", "2f", "1f"];
    // Tenacious falcon: the diagonals and the file to the edge, one step sideways.
    let tenacious: Vec<&str> = falcon[..20]
        .iter()
        .chain(&file)
        .chain(&["7f", "5f"])
        .copied()
        .collect();
    // Gliding swallow: a rook.
    let gliding: Vec<&str> = file.iter().chain(&rank).copied().collect();
    // Raiding falcon: the file both ways, one step sideways or diagonally forward.
    let raiding: Vec<&str> = file
        .iter()
        .chain(&["7f", "5f", "7e", "5e"])
        .copied()
        .collect();
    let cases: Vec<(&str, Vec<&str>)> = vec![
        ("+F", tenacious),
        ("+W", gliding),
        // Promoted rabbit: the treacherous fox's move.
        (
            "+R",
            vec![
                "7e", "5e", "7g", "5g", "6e", "6g", "8d", "4d", "8h", "4h", "6d", "6h",
            ],
        ),
        // Bear's eyes and plodding ox move as a king.
        ("+V", king.to_vec()),
        ("+X", king.to_vec()),
        // Roaming boar: every step but straight back.
        ("+S", vec!["7e", "6e", "5e", "7f", "5f", "7g", "5g"]),
        ("+G", wings.to_vec()),
        ("+C", raiding),
        ("+U", falcon.to_vec()),
        ("+O", eagle.to_vec()),
        ("+D", gold.to_vec()),
        ("+M", vec!["7e", "5e", "7g", "5g", "6e"]),
        // Heavenly horse: the four knight jumps two ranks forward or back.
        ("+H", vec!["7d", "5d", "7h", "5h"]),
        // Golden bird: a gold.
        ("+P", gold.to_vec()),
    ];
    for (token, expected) in cases {
        let p = wa_alone(token);
        assert_eq!(dests(&p, "6f"), set(&expected), "piece {token}");
    }
}

#[test]
fn wa_gote_pieces_move_the_other_way() {
    // Gote's cloud eagle on 6f: its three-square diagonals point down the board (towards k),
    // its single diagonal steps up.
    let p = pos(&wa(), &[("6f", "e"), ("2k", "K"), ("10a", "k")], "w -");
    assert_eq!(
        dests(&p, "6f"),
        set(&[
            "6e", "6d", "6c", "6b", "6a", "6g", "6h", "6i", "6j", "6k", "7f", "5f", "7e", "5e",
            "7g", "8h", "9i", "5g", "4h", "3i",
        ])
    );
    // Gote's liberated horse: the file down to rank k, two squares back up.
    let p = pos(&wa(), &[("6f", "h"), ("2k", "K"), ("10a", "k")], "w -");
    assert_eq!(
        dests(&p, "6f"),
        set(&["6g", "6h", "6i", "6j", "6k", "6e", "6d"])
    );
}

// ---------------------------------------------------------------------------------------------
// Wa shogi: blockers and jumps
// ---------------------------------------------------------------------------------------------

/// Sente's piece on 6f with a blocker on every line: own pawns on 6c, 3f, 8d and 4h, gote pawns
/// (capturable) on 6h, 8f, 3c and 9i.
fn wa_boxed(token: &str) -> Position {
    pos(
        &wa(),
        &[
            ("6f", token),
            ("6c", "P"),
            ("3f", "P"),
            ("8d", "P"),
            ("4h", "P"),
            ("6h", "p"),
            ("8f", "p"),
            ("3c", "p"),
            ("9i", "p"),
            ("2k", "K"),
            ("10a", "k"),
        ],
        "b -",
    )
}

#[test]
fn wa_ranging_pieces_stop_at_blockers() {
    // What each line gives: forward 6e 6d; back 6g 6h (capture); left 7f 8f (capture); right
    // 5f 4f; forward-left 7e; forward-right 5e 4d 3c (capture); back-left 7g 8h 9i (capture);
    // back-right 5g.
    let eagle = [
        "6e", "6d", "6g", "6h", "7f", "5f", "7g", "5g", "7e", "5e", "4d", "3c",
    ];
    let falcon = ["7e", "5e", "4d", "3c", "7g", "8h", "9i", "5g", "6e"];
    let wings = ["7f", "8f", "5f", "4f", "6e", "6g"];
    let cases: &[(&str, &[&str])] = &[
        ("E", &eagle),
        ("+O", &eagle),
        ("F", &falcon),
        ("+U", &falcon),
        ("W", &wings),
        ("+G", &wings),
        ("R", &["6e", "6d", "7e", "5e", "7g", "5g", "6g"]),
        ("H", &["6e", "6d", "6g", "6h"]),
        ("X", &["6e", "6d"]),
        (
            "+F",
            &[
                "7e", "5e", "4d", "3c", "7g", "8h", "9i", "5g", "6e", "6d", "6g", "6h", "7f", "5f",
            ],
        ),
        ("+W", &["6e", "6d", "6g", "6h", "7f", "8f", "5f", "4f"]),
        ("+C", &["6e", "6d", "6g", "6h", "7f", "5f", "7e", "5e"]),
    ];
    for &(token, expected) in cases {
        let p = wa_boxed(token);
        assert_eq!(dests(&p, "6f"), set(expected), "piece {token}");
    }
    // The liberated horse's two backward squares are a slide: a piece on 6g stops it.
    let p = pos(
        &wa(),
        &[("6f", "H"), ("6g", "V"), ("2k", "K"), ("10a", "k")],
        "b -",
    );
    assert_eq!(dests(&p, "6f"), set(&["6e", "6d", "6c", "6b", "6a"]));
    // So are the cloud eagle's three diagonal squares: a piece on 7e leaves none to the left.
    let p = pos(
        &wa(),
        &[("6f", "E"), ("7e", "V"), ("2k", "K"), ("10a", "k")],
        "b -",
    );
    let d = dests(&p, "6f");
    assert!(
        !d.contains("8d") && !d.contains("9c") && d.contains("4d"),
        "{d:?}"
    );
}

#[test]
fn wa_fox_and_heavenly_horse_jump() {
    // The fox's six step squares are full; it still jumps over them: capturing on 8d, not onto
    // its own dog on 4h.
    let p = pos(
        &wa(),
        &[
            ("6f", "T"),
            ("6e", "P"),
            ("7e", "G"),
            ("5e", "C"),
            ("6g", "V"),
            ("7g", "S"),
            ("5g", "M"),
            ("4h", "D"),
            ("8d", "p"),
            ("2k", "K"),
            ("10a", "k"),
        ],
        "b -",
    );
    assert_eq!(dests(&p, "6f"), set(&["6d", "8d", "4d", "6h", "8h"]));
    // The heavenly horse jumps whatever stands on 6e, 7e, 6g and 5g; it takes on 7d, not on its
    // own stag on 5h.
    let p = pos(
        &wa(),
        &[
            ("6f", "+H"),
            ("6e", "P"),
            ("7e", "G"),
            ("6g", "V"),
            ("5g", "M"),
            ("5h", "S"),
            ("7d", "p"),
            ("2k", "K"),
            ("10a", "k"),
        ],
        "b -",
    );
    assert_eq!(dests(&p, "6f"), set(&["7d", "5d", "7h"]));
}

// ---------------------------------------------------------------------------------------------
// Wa shogi: promotion
// ---------------------------------------------------------------------------------------------

#[test]
fn wa_promotion_is_optional_in_the_zone() {
    // Sparrow pawn 6d, oxcart 4d, strutting crow 8b, liberated horse 2b.
    let p = pos(
        &wa(),
        &[
            ("6d", "P"),
            ("4d", "X"),
            ("8b", "U"),
            ("2b", "H"),
            ("11k", "K"),
            ("10a", "k"),
        ],
        "b -",
    );
    assert_eq!(moves_with(&p, "6d"), set(&["6d6c", "6d6c+"]));
    // The oxcart may stay unpromoted on 4c and 4b, not on 4a where it could never move again.
    assert_eq!(
        moves_with(&p, "4d"),
        set(&["4d4c", "4d4c+", "4d4b", "4d4b+", "4d4a+"])
    );
    // The crow and the horse can still move back from the last rank: no forced promotion.
    assert!(moves_with(&p, "8b").is_superset(&set(&["8b8a", "8b8a+"])));
    assert!(moves_with(&p, "2b").is_superset(&set(&["2b2a", "2b2a+"])));
}

#[test]
fn wa_pawn_and_oxcart_must_promote_on_the_last_rank() {
    let p = pos(
        &wa(),
        &[("6b", "P"), ("4b", "X"), ("11k", "K"), ("10a", "k")],
        "b -",
    );
    assert_eq!(moves_with(&p, "6b"), set(&["6b6a+"]));
    assert_eq!(moves_with(&p, "4b"), set(&["4b4a+"]));
    let e = p.parse_usi("6b6a").unwrap_err().to_string();
    assert!(e.contains("must promote"), "{e}");
    // Gote's zone is ranks i, j, k: its pawn on 6h may promote on 6i, its pawn on 4j must on 4k.
    let p = pos(
        &wa(),
        &[("6h", "p"), ("4j", "p"), ("11k", "K"), ("10a", "k")],
        "w -",
    );
    assert_eq!(moves_with(&p, "6h"), set(&["6h6i", "6h6i+"]));
    assert_eq!(moves_with(&p, "4j"), set(&["4j4k+"]));
}

#[test]
fn wa_promotion_only_into_out_of_or_within_the_zone() {
    // A stag leaving the zone from 6c may promote; a stag on 6f moving to 6e may not, nor a
    // pawn stepping onto rank d, the rank before the zone.
    let p = pos(
        &wa(),
        &[
            ("6c", "S"),
            ("3f", "S"),
            ("9e", "P"),
            ("11k", "K"),
            ("10a", "k"),
        ],
        "b -",
    );
    assert!(moves_with(&p, "6c").is_superset(&set(&["6c7d", "6c7d+", "6c5d", "6c5d+"])));
    assert_eq!(
        moves_with(&p, "3f"),
        set(&["3f3e", "3f4e", "3f2e", "3f4g", "3f2g"])
    );
    assert_eq!(moves_with(&p, "9e"), set(&["9e9d"]));
    let e = p.parse_usi("3f3e+").unwrap_err().to_string();
    assert!(e.contains("cannot promote"), "{e}");
    // Gote's zone starts at rank i: a pawn stepping onto rank h may not promote.
    let p = pos(&wa(), &[("8g", "p"), ("11k", "K"), ("10a", "k")], "w -");
    assert_eq!(moves_with(&p, "8g"), set(&["8g8h"]));
}

#[test]
fn wa_pieces_without_a_promoted_side_never_promote() {
    // Crane king 4c, cloud eagle 6d, treacherous fox 8e, and a promoted crow (flying falcon)
    // on 2d: none of their moves into or within the zone may add a `+`.
    let p = pos(
        &wa(),
        &[
            ("4c", "K"),
            ("6d", "E"),
            ("8e", "T"),
            ("2d", "+U"),
            ("10a", "k"),
        ],
        "b -",
    );
    for from in ["4c", "6d", "8e", "2d"] {
        let ms = moves_with(&p, from);
        assert!(!ms.is_empty(), "{from}");
        assert!(ms.iter().all(|m| !m.ends_with('+')), "{from}: {ms:?}");
    }
    assert_legal(&p, "6d6a");
    assert_illegal(&p, "6d6a+");
    assert_legal(&p, "8e8c");
    assert_illegal(&p, "8e8c+");
    assert_legal(&p, "2d1c");
    assert_illegal(&p, "2d1c+");
}

// ---------------------------------------------------------------------------------------------
// Wa shogi: drops
// ---------------------------------------------------------------------------------------------

#[test]
fn wa_captured_promoted_piece_goes_to_hand_unpromoted() {
    // Sente's wolf on 6f takes gote's promoted crow (a flying falcon) on 6e: sente holds a crow.
    let mut p = pos(
        &wa(),
        &[("6f", "V"), ("6e", "+u"), ("11k", "K"), ("10a", "k")],
        "b -",
    );
    play(&mut p, "6f6e");
    assert_eq!(hands(&p), "U");
    play(&mut p, "10a9a");
    assert_legal(&p, "U*5e");
    assert!(moves(&p).iter().all(|m| !m.starts_with("+U*")));
}

#[test]
fn wa_sparrow_pawn_nifu() {
    // Sente: pawn 7g, golden bird 3e; gote pawn 1c; sente holds a pawn.
    let p = pos(
        &wa(),
        &[
            ("7g", "P"),
            ("3e", "+P"),
            ("1c", "p"),
            ("2k", "K"),
            ("10a", "k"),
        ],
        "b P",
    );
    let drops = drop_squares(&p, 'P');
    assert!(drops.iter().all(|s| !s.starts_with('7')), "{drops:?}");
    assert_illegal(&p, "P*7f");
    // A golden bird and an enemy pawn do not count.
    assert_legal(&p, "P*3d");
    assert_legal(&p, "P*1d");
    // 116 empty squares, less file 7 (10 empty) and rank a off file 7 (9 empty).
    assert_eq!(drops.len(), 97);
}

#[test]
fn wa_no_drop_where_a_piece_could_never_move() {
    let p = pos(&wa(), &[("11k", "K"), ("10a", "k")], "b PXUH");
    // Sparrow pawn and oxcart: nowhere on rank a. Crow and horse step back from it: anywhere.
    for letter in ['P', 'X'] {
        let d = drop_squares(&p, letter);
        assert_eq!(d.len(), 119 - 10, "{letter}");
        assert!(d.iter().all(|s| !s.ends_with('a')), "{letter}: {d:?}");
    }
    assert_eq!(drop_squares(&p, 'U').len(), 119);
    assert_eq!(drop_squares(&p, 'H').len(), 119);
    assert_illegal(&p, "P*5a");
    assert_illegal(&p, "X*5a");
    assert_legal(&p, "U*5a");
    assert_legal(&p, "H*5a");
    assert_legal(&p, "P*5b");
    // Gote's last rank is k.
    let p = pos(&wa(), &[("11k", "K"), ("10a", "k")], "w px");
    assert_illegal(&p, "P*5k");
    assert_illegal(&p, "X*5k");
    assert_legal(&p, "P*5j");
}

/// Gote's king 1a, its own pawn on 2a; sente's violent wolf (a gold) on 2c guards 1b and 2b.
const WA_BOX: [(&str, &str); 4] = [("1a", "k"), ("2a", "p"), ("2c", "V"), ("11k", "K")];

#[test]
fn wa_sparrow_pawn_drop_may_not_mate() {
    let p = pos(&wa(), &WA_BOX, "b PX");
    assert_illegal(&p, "P*1b");
    assert_legal(&p, "P*5e");
    // It would be mate: the same pawn placed by hand leaves gote no move.
    let mut with_pawn = WA_BOX.to_vec();
    with_pawn.push(("1b", "P"));
    let mated = pos(&wa(), &with_pawn, "w X");
    assert!(mated.in_check());
    assert!(mated.legal_moves().is_empty());
    // An oxcart dropped there mates.
    let mut p = p;
    play(&mut p, "X*1b");
    assert_eq!(
        p.outcome(),
        Some(Outcome {
            winner: Some(Color::Sente),
            reason: EndReason::Checkmate,
        })
    );
}

// ---------------------------------------------------------------------------------------------
// Heian shogi
// ---------------------------------------------------------------------------------------------

const HEIAN_START: &str = "lnsgkgsnl/9/ppppppppp/9/9/PPPPPPPPP/9/LNSGKGSNL b - 1";

#[test]
fn heian_start_position() {
    let v = heian();
    let p = Position::from_sfen(&v, HEIAN_START).unwrap();
    assert_eq!(Position::start(v.clone()).to_sfen(), p.to_sfen());
    // Counted by hand (sente): nine pawns step to rank e (9); lances 9g and 1g (2); the knights'
    // squares 9f 7f 3f 1f hold own pawns (0); each silver to its file, 8g/6g, 4g/2g (6); each
    // gold to 6g 7g 5g and 4g 5g 3g (6); the king to 6g 5g 4g (3). 9 + 2 + 6 + 6 + 3 = 26.
    assert_eq!(p.legal_moves().len(), 26);
    assert_eq!(dests(&p, "8h"), set(&[]));
    assert_eq!(dests(&p, "7h"), set(&["8g", "7g", "6g"]));
}

/// Sente's piece `token` on 5e, sente's king on 9h, gote's on 1a.
fn heian_alone(token: &str) -> Position {
    pos(&heian(), &[("5e", token), ("9h", "K"), ("1a", "k")], "b -")
}

#[test]
fn heian_piece_moves() {
    let gold = ["5d", "4e", "6e", "5f", "6d", "4d"];
    let cases: &[(&str, &[&str])] = &[
        ("G", &gold),
        ("S", &["6d", "4d", "6f", "4f", "5d"]),
        ("N", &["6c", "4c"]),
        ("L", &["5d", "5c", "5b", "5a"]),
        ("P", &["5d"]),
        ("+S", &gold),
        ("+N", &gold),
        ("+L", &gold),
        ("+P", &gold),
    ];
    for &(token, expected) in cases {
        assert_eq!(
            dests(&heian_alone(token), "5e"),
            set(expected),
            "piece {token}"
        );
    }
    let p = pos(&heian(), &[("5e", "K"), ("1a", "k")], "b -");
    assert_eq!(
        dests(&p, "5e"),
        set(&["6d", "5d", "4d", "6e", "4e", "6f", "5f", "4f"])
    );
    // Gote's knight jumps down the board.
    let p = pos(&heian(), &[("5d", "n"), ("9h", "K"), ("1a", "k")], "w -");
    assert_eq!(dests(&p, "5d"), set(&["6f", "4f"]));
}

#[test]
fn heian_lance_stops_at_blockers() {
    let p = pos(
        &heian(),
        &[("5e", "L"), ("5b", "P"), ("9h", "K"), ("1a", "k")],
        "b -",
    );
    assert_eq!(dests(&p, "5e"), set(&["5d", "5c"]));
    let p = pos(
        &heian(),
        &[("5e", "L"), ("5c", "p"), ("9h", "K"), ("1a", "k")],
        "b -",
    );
    assert_eq!(dests(&p, "5e"), set(&["5d", "5c"]));
    assert_legal(&p, "5e5c+");
}

#[test]
fn heian_promotion() {
    // Pawn 5d, pawn 3b, lance 1d, knights 7e and 8d, silver 5b, gold 2c.
    let p = pos(
        &heian(),
        &[
            ("5d", "P"),
            ("3b", "P"),
            ("1d", "L"),
            ("7e", "N"),
            ("8d", "N"),
            ("5b", "S"),
            ("2c", "G"),
            ("9h", "K"),
            ("1h", "k"),
        ],
        "b -",
    );
    assert_eq!(moves_with(&p, "5d"), set(&["5d5c", "5d5c+"]));
    assert_eq!(moves_with(&p, "3b"), set(&["3b3a+"]));
    assert_eq!(
        moves_with(&p, "1d"),
        set(&["1d1c", "1d1c+", "1d1b", "1d1b+", "1d1a+"])
    );
    // Rank c leaves a knight a move; ranks b and a do not.
    assert_eq!(
        moves_with(&p, "7e"),
        set(&["7e8c", "7e8c+", "7e6c+", "7e6c"])
    );
    assert_eq!(moves_with(&p, "8d"), set(&["8d9b+", "8d7b+"]));
    // A silver may stay unpromoted even on the last rank, and may promote leaving the zone.
    assert!(moves_with(&p, "5b")
        .is_superset(&set(&["5b5a", "5b5a+", "5b4a", "5b4a+", "5b4c", "5b4c+"])));
    // A gold has no promoted side.
    let gold = moves_with(&p, "2c");
    assert!(
        !gold.is_empty() && gold.iter().all(|m| !m.ends_with('+')),
        "{gold:?}"
    );
    // A silver outside the zone may not promote.
    let p = pos(&heian(), &[("5e", "S"), ("9h", "K"), ("1a", "k")], "b -");
    assert!(moves_with(&p, "5e").iter().all(|m| !m.ends_with('+')));
    // Gote's zone is ranks f, g, h.
    let p = pos(
        &heian(),
        &[
            ("5e", "p"),
            ("3g", "p"),
            ("7d", "n"),
            ("9h", "K"),
            ("1a", "k"),
        ],
        "w -",
    );
    assert_eq!(moves_with(&p, "5e"), set(&["5e5f", "5e5f+"]));
    assert_eq!(moves_with(&p, "3g"), set(&["3g3h+"]));
    assert_eq!(
        moves_with(&p, "7d"),
        set(&["7d8f", "7d8f+", "7d6f", "7d6f+"])
    );
}

#[test]
fn heian_captured_pieces_leave_the_game() {
    let mut p = pos(
        &heian(),
        &[("5e", "G"), ("5d", "p"), ("9h", "K"), ("1a", "k")],
        "b -",
    );
    play(&mut p, "5e5d");
    assert_eq!(hands(&p), "-");
    play(&mut p, "1a2a");
    assert!(moves(&p).iter().all(|m| !m.contains('*')));
    // No piece can be in hand at all.
    let e = Position::from_sfen(&heian(), &HEIAN_START.replace(" - ", " P "))
        .unwrap_err()
        .to_string();
    assert!(e.contains("in hand"), "{e}");
}

#[test]
fn heian_bare_king_loses() {
    // Gote, left with its king alone against sente's gold and king, has lost.
    let p = pos(&heian(), &[("5e", "G"), ("9h", "K"), ("1a", "k")], "w -");
    assert_eq!(p.outcome(), win(Color::Sente, EndReason::BareKing));
    // Unless it can take sente's last piece at once: the game goes on, and after the capture
    // both kings are bare, a draw.
    let mut p = pos(&heian(), &[("2b", "G"), ("9h", "K"), ("1a", "k")], "w -");
    assert_eq!(p.outcome(), None);
    play(&mut p, "1a2b");
    assert_eq!(p.outcome(), draw(EndReason::BareKing));
    // A protected last piece cannot be taken: bare king loses.
    let p = pos(&heian(), &[("2b", "G"), ("3c", "K"), ("1a", "k")], "w -");
    assert_eq!(p.outcome(), win(Color::Sente, EndReason::BareKing));
    // While it has another piece, the game goes on.
    let p = pos(
        &heian(),
        &[("5e", "G"), ("9h", "K"), ("1a", "k"), ("8a", "l")],
        "w -",
    );
    assert_eq!(p.outcome(), None);
}
