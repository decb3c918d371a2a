//! Piece movement reference tests for Cannon Shosu Shogi and Hand shogi.
//!
//! Every expected move list here was derived by hand from the rule texts (there is no external
//! perft for these variants); none is computed by the engine. Each test places the piece under
//! test, both kings out of the way and sometimes blockers, sente to move with empty hands, and
//! compares the USI strings of the legal moves leaving the piece's square with the hand list.
//!
//! Board orientation: SFEN ranks from the top (rank `a`, gote's side), files from the highest
//! number on the left; uppercase is sente, moving towards rank `a`. On the 10x10 board of Cannon
//! Shosu the files are 10..1 and the ranks a..j; Hand shogi is 9x9 (files 9..1, ranks a..i).
//! Sente's promotion zone is ranks a-c in both variants.
//!
//! Default kings: Cannon Shosu sente `K` 10j, gote `k` 1a; Hand shogi sente `K` 9i, gote `k`
//! 1a. A tested square never shares a line with a king (the anti-diagonal through both corners
//! is the squares whose file number is the rank index plus one, e.g. 5e on 10x10).

use rules::{Move, Position, Variant};
use std::collections::BTreeSet;
use std::sync::Arc;

// ---------------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------------

fn cannon() -> Arc<Variant> {
    Arc::new(Variant::builtin("cannon-shosu").expect("cannon-shosu builtin"))
}

fn hand() -> Arc<Variant> {
    Arc::new(Variant::builtin("hand").expect("hand builtin"))
}

/// (x, y) of a USI square name, computed here independently of the engine: x = 0 is the
/// leftmost SFEN file (the highest file number), y = 0 is rank `a`.
fn xy(files: usize, ranks: usize, sq: &str) -> (usize, usize) {
    let digits: String = sq.chars().take_while(|c| c.is_ascii_digit()).collect();
    let file: usize = digits.parse().unwrap_or_else(|_| panic!("bad square {sq}"));
    let rank = sq[digits.len()..].chars().next().expect("rank letter");
    assert!(sq.len() == digits.len() + 1, "bad square {sq}");
    assert!((1..=files).contains(&file), "file of {sq} off the board");
    let y = (rank as u8 - b'a') as usize;
    assert!(y < ranks, "rank of {sq} off the board");
    (files - file, y)
}

/// SFEN of a board holding `pieces` (square, SFEN token such as `C`, `+C`, `p`), sente to move,
/// nothing in hand.
fn sfen(v: &Variant, pieces: &[(&str, &str)]) -> String {
    let (files, ranks) = (v.files as usize, v.ranks as usize);
    let mut board: Vec<Vec<Option<&str>>> = vec![vec![None; files]; ranks];
    for &(sq, token) in pieces {
        let (x, y) = xy(files, ranks, sq);
        assert!(board[y][x].is_none(), "two pieces placed on {sq}");
        board[y][x] = Some(token);
    }
    let rows: Vec<String> = board
        .iter()
        .map(|row| {
            let mut s = String::new();
            let mut run = 0;
            for cell in row {
                match cell {
                    None => run += 1,
                    Some(t) => {
                        if run > 0 {
                            s.push_str(&run.to_string());
                            run = 0;
                        }
                        s.push_str(t);
                    }
                }
            }
            if run > 0 {
                s.push_str(&run.to_string());
            }
            s
        })
        .collect();
    format!("{} b - 1", rows.join("/"))
}

/// Sorted USI strings of the legal moves whose origin is `square`.
fn moves_from(sfen: &str, variant: &Arc<Variant>, square: &str) -> Vec<String> {
    let pos = Position::from_sfen_composed(variant, sfen).unwrap_or_else(|e| panic!("{sfen}: {e}"));
    let sq = variant
        .parse_square(square)
        .unwrap_or_else(|| panic!("bad square {square}"));
    assert!(
        !pos.piece_at(sq).is_empty(),
        "no piece on {square} in {sfen}"
    );
    let mut out: Vec<String> = pos
        .legal_moves()
        .into_iter()
        .filter(|m| matches!(m, Move::Normal { from, .. } if *from as usize == sq))
        .map(|m| pos.move_to_usi(m))
        .collect();
    out.sort();
    out
}

/// Asserts that the piece on `square` of the board `pieces` has exactly the moves `expected`
/// (given as destination squares, with a trailing `+` for a promoting move).
fn check(v: &Arc<Variant>, pieces: &[(&str, &str)], square: &str, expected: &[&str]) {
    let s = sfen(v, pieces);
    let got = moves_from(&s, v, square);
    let mut want: Vec<String> = expected.iter().map(|t| format!("{square}{t}")).collect();
    want.sort();
    let dup: BTreeSet<&String> = want.iter().collect();
    assert_eq!(dup.len(), want.len(), "duplicate in the expected list");
    let missing: Vec<&String> = want.iter().filter(|m| !got.contains(m)).collect();
    let extra: Vec<&String> = got.iter().filter(|m| !want.contains(m)).collect();
    assert!(
        got == want,
        "moves from {square} in {s}\n  missing: {missing:?}\n  extra:   {extra:?}\n  got:     {got:?}"
    );
}

/// Cannon Shosu board with the default kings (sente 10j, gote 1a) plus `pieces`.
fn cs(pieces: &[(&'static str, &'static str)]) -> Vec<(&'static str, &'static str)> {
    let mut v = vec![("10j", "K"), ("1a", "k")];
    v.extend_from_slice(pieces);
    v
}

/// Hand shogi board with the default kings (sente 9i, gote 1a) plus `pieces`.
fn hs(pieces: &[(&'static str, &'static str)]) -> Vec<(&'static str, &'static str)> {
    let mut v = vec![("9i", "K"), ("1a", "k")];
    v.extend_from_slice(pieces);
    v
}

/// Tokens (`C`, `+C`) of every kind of a variant.
fn kind_tokens(v: &Variant) -> BTreeSet<String> {
    v.kinds
        .iter()
        .map(|k| {
            if k.promoted {
                format!("+{}", k.letter)
            } else {
                k.letter.to_string()
            }
        })
        .collect()
}

#[test]
fn sfen_helper_matches_hand_written_sfen() {
    let v = cannon();
    assert_eq!(
        sfen(&v, &cs(&[("6h", "C")])),
        "9k/10/10/10/10/10/10/4C5/10/K9 b - 1"
    );
    let h = hand();
    assert_eq!(
        sfen(&h, &hs(&[("5f", "+N"), ("4f", "p")])),
        "8k/9/9/9/9/4+Np3/9/9/K8 b - 1"
    );
    // The engine reads the hand-written SFEN with the pieces where we expect them.
    let pos = Position::from_sfen_composed(&v, "9k/10/10/10/10/10/10/4C5/10/K9 b - 1").unwrap();
    let sq = v.parse_square("6h").unwrap();
    assert_eq!(
        pos.piece_at(sq).kind(),
        v.kind_by_letter('C', false).unwrap()
    );
    assert_eq!(v.square_name(sq), "6h");
}

// ---------------------------------------------------------------------------------------------
// Cannon Shosu Shogi: cannons (mRcpR, mBcpB)
// ---------------------------------------------------------------------------------------------

/// Gold cannon, no piece on any of its lines: rook moves, no capture; entering the zone (6c-6a)
/// may promote.
#[test]
fn cs_gold_cannon_empty_lines() {
    let v = cannon();
    let got = moves_from("9k/10/10/10/10/10/10/4C5/10/K9 b - 1", &v, "6h");
    let mut want: Vec<String> = [
        "6g", "6f", "6e", "6d", "6c", "6c+", "6b", "6b+", "6a", "6a+", // up
        "6i", "6j", // down
        "7h", "8h", "9h", "10h", // left
        "5h", "4h", "3h", "2h", "1h", // right
    ]
    .iter()
    .map(|t| format!("6h{t}"))
    .collect();
    want.sort();
    assert_eq!(got, want);
}

/// Gold cannon with exactly one piece on each line: moves up to it, never captures it (no
/// screen), and a lone screen with nothing behind gives nothing.
#[test]
fn cs_gold_cannon_one_piece_per_line() {
    let v = cannon();
    let b = cs(&[
        ("6h", "C"),
        ("6e", "P"), // up: own piece at distance 3, nothing behind it
        ("6i", "p"), // down: adjacent enemy, nothing behind
        ("8h", "p"), // left: enemy at distance 2, no screen
        ("5h", "P"), // right: adjacent own piece
    ]);
    check(&v, &b, "6h", &["6g", "6f", "7h"]);
}

/// Gold cannon with two pieces on a line: captures the second when it is an enemy, whatever
/// the screen's colour, and never a friendly second piece.
#[test]
fn cs_gold_cannon_two_pieces_per_line() {
    let v = cannon();
    let b = cs(&[
        ("6h", "C"),
        // left: empty 7h, enemy screen 8h, empty 9h, own 10h -> 7h only
        ("8h", "p"),
        ("10h", "P"),
        // right: own screen 5h, empty 4h 3h, enemy 2h -> capture 2h
        ("5h", "P"),
        ("2h", "p"),
        // up: empty 6g 6f, enemy screen 6e, enemy 6d -> 6g 6f, capture 6d
        ("6e", "p"),
        ("6d", "p"),
        // down: own adjacent screen 6i, enemy 6j -> capture 6j
        ("6i", "P"),
        ("6j", "g"),
    ]);
    check(&v, &b, "6h", &["7h", "2h", "6g", "6f", "6d", "6j"]);
}

/// Gold cannon with three pieces on a line: only the first piece after the screen can be
/// captured (if it is an enemy); the third piece never.
#[test]
fn cs_gold_cannon_three_pieces_per_line() {
    let v = cannon();
    let b = cs(&[
        ("6h", "C"),
        // left: own screen 7h (adjacent), empty 8h, enemy 9h (capture), enemy 10h (no)
        ("7h", "P"),
        ("9h", "p"),
        ("10h", "p"),
        // right: empty 5h, enemy screen 4h, own 3h (blocks), enemy 2h (no), empty 1h
        ("4h", "p"),
        ("3h", "G"),
        ("2h", "p"),
        // up: enemy screen 6g (adjacent), enemy 6f (capture), enemy 6e (no)
        ("6g", "p"),
        ("6f", "p"),
        ("6e", "p"),
        // down: empty 6i 6j
    ]);
    check(&v, &b, "6h", &["9h", "5h", "6f", "6i", "6j"]);
}

/// Silver cannon on empty diagonals: bishop moves; 1c is in the zone.
#[test]
fn cs_silver_cannon_empty_lines() {
    let v = cannon();
    let b = cs(&[("6h", "A")]);
    check(
        &v,
        &b,
        "6h",
        &[
            "7g", "8f", "9e", "10d", // up-left
            "5g", "4f", "3e", "2d", "1c", "1c+", // up-right
            "7i", "8j", // down-left
            "5i", "4j", // down-right
        ],
    );
}

/// Silver cannon with one screen: capture after an adjacent own screen, no capture of a
/// friendly piece after a screen, no capture of an adjacent enemy.
#[test]
fn cs_silver_cannon_one_screen() {
    let v = cannon();
    let b = cs(&[
        ("6h", "A"),
        // up-left: own screen 7g, empty 8f, enemy 9e (capture), empty 10d
        ("7g", "P"),
        ("9e", "p"),
        // up-right: empty 5g, enemy screen 4f, empty 3e, own 2d (no capture)
        ("4f", "p"),
        ("2d", "S"),
        // down-left: adjacent enemy 7i, empty 8j -> nothing
        ("7i", "p"),
        // down-right: empty 5i 4j
    ]);
    check(&v, &b, "6h", &["9e", "5g", "5i", "4j"]);
}

/// Silver cannon with two and three pieces on a diagonal.
#[test]
fn cs_silver_cannon_two_and_three_pieces() {
    let v = cannon();
    let b = cs(&[
        ("6h", "A"),
        // up-left: empty 7g, enemy screen 8f, own 9e (no), enemy 10d (third, no)
        ("8f", "p"),
        ("9e", "G"),
        ("10d", "p"),
        // up-right: own screen 5g, enemy 4f (capture), enemy 3e (third, no)
        ("5g", "P"),
        ("4f", "p"),
        ("3e", "p"),
        // down-left: own screen 7i, enemy 8j (capture)
        ("7i", "P"),
        ("8j", "g"),
        // down-right: enemy screen 5i, enemy 4j (capture)
        ("5i", "p"),
        ("4j", "g"),
    ]);
    check(&v, &b, "6h", &["7g", "4f", "8j", "4j"]);
}

// ---------------------------------------------------------------------------------------------
// Cannon Shosu Shogi: rook general R(paf)2cR and bishop general B(paf)2cB
// ---------------------------------------------------------------------------------------------

/// Rook general on empty lines: rook moves, no promotion (already promoted).
#[test]
fn cs_rook_general_empty_lines() {
    let v = cannon();
    let b = cs(&[("6h", "+C")]);
    check(
        &v,
        &b,
        "6h",
        &[
            "6g", "6f", "6e", "6d", "6c", "6b", "6a", "6i", "6j", "7h", "8h", "9h", "10h", "5h",
            "4h", "3h", "2h", "1h",
        ],
    );
}

/// Rook general captures the first, second or third piece of a line when it is an enemy
/// (jumping 0, 1 or 2 pieces of either colour).
#[test]
fn cs_rook_general_captures_over_two_pieces() {
    let v = cannon();
    let b = cs(&[
        ("6h", "+C"),
        // left: empty 7h, enemy 8h (1st, capture), empty 9h, enemy 10h (2nd, capture)
        ("8h", "p"),
        ("10h", "p"),
        // right: own 5h, own 4h, enemy 3h (3rd, capture), enemy 2h (4th, no), empty 1h
        ("5h", "P"),
        ("4h", "P"),
        ("3h", "p"),
        ("2h", "p"),
        // up: own 6g, enemy 6f (2nd, capture), own 6e, enemy 6d (4th, no)
        ("6g", "P"),
        ("6f", "p"),
        ("6e", "P"),
        ("6d", "p"),
        // down: empty 6i 6j
    ]);
    check(&v, &b, "6h", &["7h", "8h", "10h", "3h", "6f", "6i", "6j"]);
}

/// Rook general never captures a friendly piece nor the fourth piece of a line.
#[test]
fn cs_rook_general_never_friendly_or_fourth() {
    let v = cannon();
    let b = cs(&[
        ("6h", "+C"),
        // up: enemy 6g (capture), enemy 6f (capture), own 6e (no), enemy 6d (4th, no)
        ("6g", "p"),
        ("6f", "p"),
        ("6e", "P"),
        ("6d", "p"),
        // left: empty 7h 8h, own 9h, own 10h
        ("9h", "P"),
        ("10h", "P"),
        // right: enemy 5h (1st), empty 4h, enemy 3h (2nd), enemy 2h (3rd), enemy 1h (4th, no)
        ("5h", "p"),
        ("3h", "p"),
        ("2h", "p"),
        ("1h", "p"),
        // down: own 6i, enemy 6j (2nd, capture)
        ("6i", "P"),
        ("6j", "g"),
    ]);
    check(
        &v,
        &b,
        "6h",
        &["6g", "6f", "7h", "8h", "5h", "3h", "2h", "6j"],
    );
}

/// Bishop general on empty diagonals: bishop moves, no promotion.
#[test]
fn cs_bishop_general_empty_lines() {
    let v = cannon();
    let b = cs(&[("6h", "+A")]);
    check(
        &v,
        &b,
        "6h",
        &[
            "7g", "8f", "9e", "10d", "5g", "4f", "3e", "2d", "1c", "7i", "8j", "5i", "4j",
        ],
    );
}

/// Bishop general captures the first, second or third piece of a diagonal when it is an enemy,
/// never a friendly piece or the fourth piece.
#[test]
fn cs_bishop_general_captures_over_two_pieces() {
    let v = cannon();
    let b = cs(&[
        ("6h", "+A"),
        // up-left: own 7g, enemy 8f (2nd, capture), enemy 9e (3rd, capture), enemy 10d (4th, no)
        ("7g", "P"),
        ("8f", "p"),
        ("9e", "p"),
        ("10d", "p"),
        // up-right: empty 5g, enemy 4f (1st, capture), own 3e, own 2d, enemy 1c (4th, no)
        ("4f", "p"),
        ("3e", "P"),
        ("2d", "P"),
        ("1c", "p"),
        // down-left: own 7i, own 8j -> nothing
        ("7i", "P"),
        ("8j", "G"),
        // down-right: empty 5i, enemy 4j (capture)
        ("4j", "g"),
    ]);
    check(&v, &b, "6h", &["8f", "9e", "5g", "4f", "5i", "4j"]);
}

// ---------------------------------------------------------------------------------------------
// Cannon Shosu Shogi: sliders
// ---------------------------------------------------------------------------------------------

#[test]
fn cs_queen_empty_board() {
    let v = cannon();
    let b = cs(&[("6h", "Q")]);
    check(
        &v,
        &b,
        "6h",
        &[
            "6g", "6f", "6e", "6d", "6c", "6b", "6a", // up (queen never promotes)
            "6i", "6j", // down
            "7h", "8h", "9h", "10h", // left
            "5h", "4h", "3h", "2h", "1h", // right
            "7g", "8f", "9e", "10d", // up-left
            "5g", "4f", "3e", "2d", "1c", // up-right
            "7i", "8j", // down-left
            "5i", "4j", // down-right
        ],
    );
}

#[test]
fn cs_queen_among_blockers() {
    let v = cannon();
    let b = cs(&[
        ("6h", "Q"),
        ("6e", "P"), // up: 6g 6f
        ("6j", "G"), // down: 6i
        ("8h", "p"), // left: 7h, capture 8h
        ("5h", "p"), // right: capture 5h
        ("8f", "p"), // up-left: 7g, capture 8f
        ("5g", "P"), // up-right: nothing
        ("7i", "p"), // down-left: capture 7i
        ("4j", "g"), // down-right: 5i, capture 4j
    ]);
    check(
        &v,
        &b,
        "6h",
        &[
            "6g", "6f", "6i", "7h", "8h", "5h", "7g", "8f", "7i", "5i", "4j",
        ],
    );
}

#[test]
fn cs_rook_empty_board() {
    let v = cannon();
    let b = cs(&[("6h", "R")]);
    check(
        &v,
        &b,
        "6h",
        &[
            "6g", "6f", "6e", "6d", "6c", "6c+", "6b", "6b+", "6a", "6a+", "6i", "6j", "7h", "8h",
            "9h", "10h", "5h", "4h", "3h", "2h", "1h",
        ],
    );
}

#[test]
fn cs_rook_among_blockers() {
    let v = cannon();
    let b = cs(&[
        ("6h", "R"),
        ("6e", "p"),  // up: 6g 6f, capture 6e
        ("6d", "p"),  // behind the first enemy: unreachable
        ("6i", "P"),  // down: nothing
        ("10h", "G"), // left: 7h 8h 9h
        ("5h", "p"),  // right: capture 5h
    ]);
    check(&v, &b, "6h", &["6g", "6f", "6e", "7h", "8h", "9h", "5h"]);
}

#[test]
fn cs_bishop_empty_board() {
    let v = cannon();
    let b = cs(&[("6h", "B")]);
    check(
        &v,
        &b,
        "6h",
        &[
            "7g", "8f", "9e", "10d", "5g", "4f", "3e", "2d", "1c", "1c+", "7i", "8j", "5i", "4j",
        ],
    );
}

#[test]
fn cs_bishop_among_blockers() {
    let v = cannon();
    let b = cs(&[
        ("6h", "B"),
        ("7g", "P"), // up-left: nothing
        ("3e", "p"), // up-right: 5g 4f, capture 3e
        ("8j", "g"), // down-left: 7i, capture 8j
        ("5i", "G"), // down-right: nothing
    ]);
    check(&v, &b, "6h", &["5g", "4f", "3e", "7i", "8j"]);
}

#[test]
fn cs_dragon_king_empty_board() {
    let v = cannon();
    let b = cs(&[("6h", "+R")]);
    check(
        &v,
        &b,
        "6h",
        &[
            "6g", "6f", "6e", "6d", "6c", "6b", "6a", "6i", "6j", "7h", "8h", "9h", "10h", "5h",
            "4h", "3h", "2h", "1h", "7g", "5g", "7i", "5i",
        ],
    );
}

#[test]
fn cs_dragon_king_among_blockers() {
    let v = cannon();
    let b = cs(&[
        ("6h", "+R"),
        ("6g", "p"), // up: capture 6g only
        ("7h", "P"), // left: nothing
        ("3h", "p"), // right: 5h 4h, capture 3h
        ("7g", "P"), // diagonal steps: 7g own
        ("5g", "p"), // 5g capture
        ("5i", "G"), // 5i own; 7i empty (but 8j not reachable)
    ]);
    check(
        &v,
        &b,
        "6h",
        &["6g", "6i", "6j", "5h", "4h", "3h", "5g", "7i"],
    );
}

#[test]
fn cs_dragon_horse_empty_board() {
    let v = cannon();
    let b = cs(&[("6h", "+B")]);
    check(
        &v,
        &b,
        "6h",
        &[
            "7g", "8f", "9e", "10d", "5g", "4f", "3e", "2d", "1c", "7i", "8j", "5i", "4j", "6g",
            "6i", "7h", "5h",
        ],
    );
}

#[test]
fn cs_dragon_horse_among_blockers() {
    let v = cannon();
    let b = cs(&[
        ("6h", "+B"),
        ("8f", "p"), // up-left: 7g, capture 8f
        ("5g", "P"), // up-right: nothing
        ("5i", "p"), // down-right: capture 5i; down-left 7i 8j free
        ("6g", "P"), // orthogonal steps: 6g own
        ("6i", "p"), // 6i capture
        ("5h", "G"), // 5h own; 7h empty (8h not reachable)
    ]);
    check(&v, &b, "6h", &["7g", "8f", "7i", "8j", "5i", "6i", "7h"]);
}

// ---------------------------------------------------------------------------------------------
// Cannon Shosu Shogi: steppers and jumpers (piece on 6h: forward 6g, back 6i, left 7h, right 5h)
// ---------------------------------------------------------------------------------------------

#[test]
fn cs_gold() {
    let v = cannon();
    check(
        &v,
        &cs(&[("6h", "G")]),
        "6h",
        &["6g", "7g", "5g", "7h", "5h", "6i"],
    );
    // Own piece blocks, enemy piece is captured; no backward diagonals.
    check(
        &v,
        &cs(&[
            ("6h", "G"),
            ("6g", "P"),
            ("7g", "p"),
            ("7i", "p"),
            ("5i", "p"),
        ]),
        "6h",
        &["7g", "5g", "7h", "5h", "6i"],
    );
}

/// Drunk elephant (promoted gold): FfsW, no straight backward step.
#[test]
fn cs_drunk_elephant() {
    let v = cannon();
    check(
        &v,
        &cs(&[("6h", "+G")]),
        "6h",
        &["7g", "5g", "7i", "5i", "6g", "7h", "5h"],
    );
}

#[test]
fn cs_silver() {
    let v = cannon();
    check(
        &v,
        &cs(&[("6h", "S")]),
        "6h",
        &["6g", "7g", "5g", "7i", "5i"],
    );
}

/// Promoted silver moves as a gold.
#[test]
fn cs_promoted_silver() {
    let v = cannon();
    check(
        &v,
        &cs(&[("6h", "+S")]),
        "6h",
        &["6g", "7g", "5g", "7h", "5h", "6i"],
    );
}

/// Knight: two forward and one sideways, jumping.
#[test]
fn cs_knight() {
    let v = cannon();
    check(&v, &cs(&[("6h", "N")]), "6h", &["7f", "5f"]);
    // Jumps over surrounding pieces; own piece on 7f blocks that landing, enemy on 5f captured.
    check(
        &v,
        &cs(&[
            ("6h", "N"),
            ("6g", "P"),
            ("7g", "p"),
            ("5g", "p"),
            ("6f", "p"),
            ("7f", "P"),
            ("5f", "p"),
        ]),
        "6h",
        &["5f"],
    );
}

/// Jumping horse (promoted knight): the chess knight.
#[test]
fn cs_jumping_horse() {
    let v = cannon();
    check(
        &v,
        &cs(&[("6h", "+N")]),
        "6h",
        &["7f", "5f", "8g", "4g", "8i", "4i", "7j", "5j"],
    );
    // Surrounded by pieces: still jumps; own landing squares excluded.
    check(
        &v,
        &cs(&[
            ("6h", "+N"),
            ("6g", "P"),
            ("6i", "p"),
            ("7h", "p"),
            ("5h", "P"),
            ("7f", "P"),
            ("5f", "p"),
            ("8g", "P"),
            ("4i", "p"),
        ]),
        "6h",
        &["5f", "4g", "8i", "4i", "7j", "5j"],
    );
}

#[test]
fn cs_lance() {
    let v = cannon();
    check(
        &v,
        &cs(&[("6h", "L"), ("6e", "p")]),
        "6h",
        &["6g", "6f", "6e"],
    );
    check(&v, &cs(&[("6h", "L"), ("6f", "P")]), "6h", &["6g"]);
}

/// Vertical mover (promoted lance): slides vertically, steps sideways.
#[test]
fn cs_vertical_mover() {
    let v = cannon();
    check(
        &v,
        &cs(&[("6h", "+L")]),
        "6h",
        &[
            "6g", "6f", "6e", "6d", "6c", "6b", "6a", "6i", "6j", "7h", "5h",
        ],
    );
    check(
        &v,
        &cs(&[
            ("6h", "+L"),
            ("6e", "p"),
            ("6j", "P"),
            ("7h", "p"),
            ("8h", "p"),
        ]),
        "6h",
        &["6g", "6f", "6e", "6i", "7h", "5h"],
    );
}

/// Dog: one step straight forward or diagonally backward.
#[test]
fn cs_dog() {
    let v = cannon();
    check(&v, &cs(&[("6h", "D")]), "6h", &["6g", "7i", "5i"]);
    check(
        &v,
        &cs(&[("6h", "D"), ("6g", "p"), ("7i", "P")]),
        "6h",
        &["6g", "5i"],
    );
}

/// Side mover (promoted dog): slides sideways, steps vertically.
#[test]
fn cs_side_mover() {
    let v = cannon();
    check(
        &v,
        &cs(&[("6h", "+D")]),
        "6h",
        &[
            "6g", "6i", "7h", "8h", "9h", "10h", "5h", "4h", "3h", "2h", "1h",
        ],
    );
    check(
        &v,
        &cs(&[
            ("6h", "+D"),
            ("8h", "p"),
            ("3h", "P"),
            ("6g", "P"),
            ("6f", "p"),
        ]),
        "6h",
        &["6i", "7h", "8h", "5h", "4h"],
    );
}

#[test]
fn cs_pawn() {
    let v = cannon();
    check(&v, &cs(&[("6h", "P")]), "6h", &["6g"]);
    check(
        &v,
        &cs(&[("6h", "P"), ("6g", "p"), ("7g", "p"), ("5h", "p")]),
        "6h",
        &["6g"],
    );
    check(&v, &cs(&[("6h", "P"), ("6g", "G")]), "6h", &[]);
}

/// Tokin (promoted pawn) moves as a gold.
#[test]
fn cs_tokin() {
    let v = cannon();
    check(
        &v,
        &cs(&[("6h", "+P")]),
        "6h",
        &["6g", "7g", "5g", "7h", "5h", "6i"],
    );
}

/// King: one step anywhere, not onto an attacked square.
#[test]
fn cs_king() {
    let v = cannon();
    check(
        &v,
        &[("6h", "K"), ("1a", "k")],
        "6h",
        &["6g", "7g", "5g", "7h", "5h", "6i", "7i", "5i"],
    );
    // Gote pawn on 6f guards 6g; gote pawn on 5h (undefended) can be taken, and guards 5i.
    check(
        &v,
        &[("6h", "K"), ("1a", "k"), ("6f", "p"), ("5h", "p")],
        "6h",
        &["7g", "5g", "7h", "5h", "6i", "7i"],
    );
}

/// A piece may not step onto the empty line between an enemy gold cannon and its own king:
/// it would become the cannon's screen and leave the king capturable.
#[test]
fn cs_no_move_that_becomes_a_cannon_screen() {
    let v = cannon();
    // Gote cannon 6a, sente king 6j, nothing between (no check). Gold on 7e: 6d and 6e are on
    // file 6 and would be the single screen.
    check(
        &v,
        &[("6j", "K"), ("1a", "k"), ("6a", "c"), ("7e", "G")],
        "7e",
        &["7d", "8d", "8e", "7f"],
    );
}

// ---------------------------------------------------------------------------------------------
// Cannon Shosu Shogi: promotion
// ---------------------------------------------------------------------------------------------

/// A move entering the zone may promote (both forms); a move outside it may not.
#[test]
fn cs_promotion_entering_zone() {
    let v = cannon();
    let b = cs(&[("6d", "P"), ("8d", "G")]);
    check(&v, &b, "6d", &["6c", "6c+"]);
    // Gold on 8d: forward and forward diagonals enter the zone, sideways and back do not.
    check(
        &v,
        &b,
        "8d",
        &["8c", "8c+", "9c", "9c+", "7c", "7c+", "9d", "7d", "8e"],
    );
}

/// Pawn and lance reaching the last rank must promote.
#[test]
fn cs_promotion_pawn_and_lance_last_rank() {
    let v = cannon();
    let b = cs(&[("6b", "P"), ("4c", "P"), ("8e", "L")]);
    check(&v, &b, "6b", &["6a+"]);
    check(&v, &b, "4c", &["4b", "4b+"]);
    check(&v, &b, "8e", &["8d", "8c", "8c+", "8b", "8b+", "8a+"]);
}

/// Knight reaching either of the last two ranks must promote; on rank c it may choose.
#[test]
fn cs_promotion_knight_last_two_ranks() {
    let v = cannon();
    check(&v, &cs(&[("7e", "N")]), "7e", &["8c", "8c+", "6c", "6c+"]);
    let b = cs(&[("4d", "N"), ("8c", "N")]);
    check(&v, &b, "4d", &["5b+", "3b+"]);
    check(&v, &b, "8c", &["9a+", "7a+"]);
}

/// A move starting in the zone may promote, even when it leaves the zone.
#[test]
fn cs_promotion_moving_out_of_zone() {
    let v = cannon();
    let b = cs(&[("5c", "S"), ("8c", "D")]);
    check(
        &v,
        &b,
        "5c",
        &[
            "5b", "5b+", "6b", "6b+", "4b", "4b+", "6d", "6d+", "4d", "4d+",
        ],
    );
    check(&v, &b, "8c", &["8b", "8b+", "9d", "9d+", "7d", "7d+"]);
}

/// Promoted pieces, the queen and the king never promote.
#[test]
fn cs_no_promotion_for_promoted_queen_king() {
    let v = cannon();
    let b = cs(&[("5d", "+S"), ("8d", "+P"), ("3c", "+L")]);
    check(&v, &b, "5d", &["5c", "6c", "4c", "6d", "4d", "5e"]);
    check(&v, &b, "8d", &["8c", "9c", "7c", "9d", "7d", "8e"]);
    check(
        &v,
        &b,
        "3c",
        &[
            "3b", "3a", "3d", "3e", "3f", "3g", "3h", "3i", "3j", "4c", "2c",
        ],
    );
    check(
        &v,
        &cs(&[("6d", "Q")]),
        "6d",
        &[
            "6c", "6b", "6a", // up
            "6e", "6f", "6g", "6h", "6i", "6j", // down
            "7d", "8d", "9d", "10d", // left
            "5d", "4d", "3d", "2d", "1d", // right
            "7c", "8b", "9a", // up-left
            "5c", "4b", "3a", // up-right
            "7e", "8f", "9g", "10h", // down-left
            "5e", "4f", "3g", "2h", "1i", // down-right
        ],
    );
    check(
        &v,
        &[("8c", "K"), ("1a", "k")],
        "8c",
        &["9b", "8b", "7b", "9c", "7c", "9d", "8d", "7d"],
    );
}

/// Every kind of Cannon Shosu has a movement test above.
#[test]
fn cs_every_kind_covered() {
    let v = cannon();
    let covered: BTreeSet<String> = [
        "K", "Q", "R", "+R", "B", "+B", "C", "+C", "A", "+A", "G", "+G", "S", "+S", "N", "+N", "L",
        "+L", "D", "+D", "P", "+P",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    assert_eq!(kind_tokens(&v), covered);
}

// ---------------------------------------------------------------------------------------------
// Hand shogi (9x9): tycoon B3, shogun R3
// ---------------------------------------------------------------------------------------------

/// Tycoon on an empty board: exactly three squares each diagonal way (9b and 1b unreachable).
#[test]
fn hand_tycoon_empty_board() {
    let v = hand();
    check(
        &v,
        &hs(&[("5f", "T")]),
        "5f",
        &[
            "6e", "7d", "8c", // up-left (9b is a fourth square)
            "4e", "3d", "2c", // up-right (1b is a fourth square)
            "6g", "7h", "8i", // down-left
            "4g", "3h", "2i", // down-right
        ],
    );
}

/// Tycoon blocked by own pieces at 1, 2 and 3 squares: no move onto or past them.
#[test]
fn hand_tycoon_blocked_by_own() {
    let v = hand();
    check(
        &v,
        &hs(&[("5f", "T"), ("6e", "G"), ("3d", "G"), ("8i", "G")]),
        "5f",
        &["4e", "6g", "7h", "4g", "3h", "2i"],
    );
}

/// Tycoon blocked by enemy pieces at 1, 2 and 3 squares: captures, nothing past.
#[test]
fn hand_tycoon_blocked_by_enemy() {
    let v = hand();
    check(
        &v,
        &hs(&[
            ("5f", "T"),
            ("6e", "p"), // distance 1
            ("7d", "p"), // behind it
            ("3d", "p"), // distance 2
            ("2c", "p"), // behind it
            ("8i", "s"), // distance 3
        ]),
        "5f",
        &["6e", "4e", "3d", "6g", "7h", "8i", "4g", "3h", "2i"],
    );
}

/// Shogun on an empty board: exactly three squares each orthogonal way.
#[test]
fn hand_shogun_empty_board() {
    let v = hand();
    check(
        &v,
        &hs(&[("5f", "U")]),
        "5f",
        &[
            "5e", "5d", "5c", // up (5b is a fourth square)
            "5g", "5h", "5i", // down
            "6f", "7f", "8f", // left (9f is a fourth square)
            "4f", "3f", "2f", // right (1f is a fourth square)
        ],
    );
}

#[test]
fn hand_shogun_blocked_by_own() {
    let v = hand();
    check(
        &v,
        &hs(&[("5f", "U"), ("5e", "G"), ("7f", "G"), ("2f", "G")]),
        "5f",
        &["6f", "4f", "3f", "5g", "5h", "5i"],
    );
}

#[test]
fn hand_shogun_blocked_by_enemy() {
    let v = hand();
    check(
        &v,
        &hs(&[
            ("5f", "U"),
            ("5e", "p"), // distance 1
            ("5d", "p"), // behind it
            ("5h", "p"), // distance 2
            ("8f", "p"), // distance 3
            ("1f", "p"), // distance 4: out of range
        ]),
        "5f",
        &["5e", "5g", "5h", "6f", "7f", "8f", "4f", "3f", "2f"],
    );
}

// ---------------------------------------------------------------------------------------------
// Hand shogi: jumpers (pard AD, onager D, hasty A)
// ---------------------------------------------------------------------------------------------

/// Pard jumps to the second square in all eight directions over pieces of both colours.
#[test]
fn hand_pard_jumps() {
    let v = hand();
    check(
        &v,
        &hs(&[("5f", "D")]),
        "5f",
        &["5d", "5h", "7f", "3f", "7d", "3d", "7h", "3h"],
    );
    check(
        &v,
        &hs(&[
            ("5f", "D"),
            // all eight neighbours occupied, both colours
            ("5e", "G"),
            ("6e", "p"),
            ("4e", "G"),
            ("6f", "p"),
            ("4f", "G"),
            ("6g", "G"),
            ("5g", "p"),
            ("4g", "p"),
            // landings: enemy 5d and 3f captured, own 7d and 7h excluded
            ("5d", "p"),
            ("7d", "G"),
            ("3f", "p"),
            ("7h", "G"),
        ]),
        "5f",
        &["5d", "3d", "7f", "3f", "5h", "3h"],
    );
}

#[test]
fn hand_pard_near_edges() {
    let v = hand();
    // Corner 1i: 1g (enemy, captured), 3g, 3i (own, excluded).
    check(
        &v,
        &hs(&[("1i", "D"), ("1g", "p"), ("3i", "G"), ("2h", "p")]),
        "1i",
        &["1g", "3g"],
    );
    // 8b: one square from two edges.
    check(&v, &hs(&[("8b", "D")]), "8b", &["8d", "6b", "6d"]);
}

#[test]
fn hand_onager_jumps() {
    let v = hand();
    check(&v, &hs(&[("5f", "O")]), "5f", &["5d", "5h", "7f", "3f"]);
    check(
        &v,
        &hs(&[
            ("5f", "O"),
            ("5e", "p"),
            ("6f", "G"),
            ("4f", "p"),
            ("5g", "G"),
            ("5d", "G"), // own landing
            ("7f", "p"), // enemy landing
            ("5h", "p"), // enemy landing
            ("6e", "p"), // diagonal neighbours irrelevant
        ]),
        "5f",
        &["7f", "3f", "5h"],
    );
    // Near the edge: 1h -> 1f and 3h only.
    check(
        &v,
        &hs(&[("1h", "O"), ("1g", "p"), ("2h", "G")]),
        "1h",
        &["1f", "3h"],
    );
}

#[test]
fn hand_hasty_jumps() {
    let v = hand();
    check(&v, &hs(&[("5f", "H")]), "5f", &["7d", "3d", "7h", "3h"]);
    check(
        &v,
        &hs(&[
            ("5f", "H"),
            ("6e", "p"),
            ("4e", "G"),
            ("6g", "G"),
            ("4g", "p"),
            ("7d", "p"), // enemy landing
            ("3d", "G"), // own landing
            ("3h", "p"), // enemy landing
            ("5d", "p"), // orthogonal second square irrelevant
        ]),
        "5f",
        &["7d", "7h", "3h"],
    );
    // Near edges: 9b -> 7d only; 8g -> 6e and 6i only.
    check(&v, &hs(&[("9b", "H")]), "9b", &["7d"]);
    check(&v, &hs(&[("8g", "H")]), "8g", &["6e", "6i"]);
}

// ---------------------------------------------------------------------------------------------
// Hand shogi: steppers, knight, lance
// ---------------------------------------------------------------------------------------------

/// Soldier: one step forward or sideways; no backward, no diagonal; never promotes.
#[test]
fn hand_soldier() {
    let v = hand();
    check(&v, &hs(&[("5f", "P")]), "5f", &["5e", "6f", "4f"]);
    check(
        &v,
        &hs(&[
            ("5f", "P"),
            ("6f", "p"), // capture sideways
            ("4f", "G"), // own piece
            ("5g", "p"), // behind: not capturable
            ("6e", "p"), // diagonals: not capturable
            ("4e", "p"),
            ("6g", "p"),
        ]),
        "5f",
        &["5e", "6f"],
    );
    // In the zone: no promotion.
    check(&v, &hs(&[("5b", "P")]), "5b", &["5a", "6b", "4b"]);
}

/// Knight: shogi knight; entering the zone it must promote, so only `+` moves there.
#[test]
fn hand_knight() {
    let v = hand();
    check(&v, &hs(&[("5g", "N")]), "5g", &["6e", "4e"]);
    check(&v, &hs(&[("5f", "N")]), "5f", &["6d", "4d"]);
    // Jumps over pieces; own landing excluded, enemy landing captured.
    check(
        &v,
        &hs(&[
            ("5g", "N"),
            ("5f", "G"),
            ("6f", "p"),
            ("6e", "G"),
            ("4e", "p"),
        ]),
        "5g",
        &["4e"],
    );
    // Into rank c (zone): forced promotion.
    check(&v, &hs(&[("5e", "N")]), "5e", &["6c+", "4c+"]);
    check(&v, &hs(&[("8d", "N")]), "8d", &["9b+", "7b+"]);
}

/// Promoted knight: gold moves, never promotes again.
#[test]
fn hand_promoted_knight() {
    let v = hand();
    check(
        &v,
        &hs(&[("5f", "+N")]),
        "5f",
        &["5e", "6e", "4e", "6f", "4f", "5g"],
    );
    check(
        &v,
        &hs(&[("5c", "+N")]),
        "5c",
        &["5b", "6b", "4b", "6c", "4c", "5d"],
    );
}

/// Lance: slides forward, reaches the last rank without promoting (it never promotes).
#[test]
fn hand_lance() {
    let v = hand();
    check(
        &v,
        &hs(&[("5f", "L")]),
        "5f",
        &["5e", "5d", "5c", "5b", "5a"],
    );
    check(
        &v,
        &hs(&[("5f", "L"), ("5c", "p"), ("5b", "p")]),
        "5f",
        &["5e", "5d", "5c"],
    );
    check(&v, &hs(&[("5f", "L"), ("5d", "G")]), "5f", &["5e"]);
}

#[test]
fn hand_gold() {
    let v = hand();
    check(
        &v,
        &hs(&[("5f", "G")]),
        "5f",
        &["5e", "6e", "4e", "6f", "4f", "5g"],
    );
    // In the zone: no promotion.
    check(
        &v,
        &hs(&[("5c", "G")]),
        "5c",
        &["5b", "6b", "4b", "6c", "4c", "5d"],
    );
}

#[test]
fn hand_silver() {
    let v = hand();
    check(
        &v,
        &hs(&[("5f", "S")]),
        "5f",
        &["5e", "6e", "4e", "6g", "4g"],
    );
    check(
        &v,
        &hs(&[("5c", "S"), ("6b", "G"), ("4d", "p")]),
        "5c",
        &["5b", "4b", "6d", "4d"],
    );
}

#[test]
fn hand_king() {
    let v = hand();
    check(
        &v,
        &[("5f", "K"), ("1a", "k")],
        "5f",
        &["5e", "6e", "4e", "6f", "4f", "6g", "5g", "4g"],
    );
    // Gote soldier on 5d guards 5e (and 6d, 4d); gote soldier on 4g (undefended) can be taken,
    // and guards 5g (sideways) and 3g.
    check(
        &v,
        &[("5f", "K"), ("1a", "k"), ("5d", "p"), ("4g", "p")],
        "5f",
        &["6e", "4e", "6f", "4f", "6g", "4g"],
    );
}

/// Every kind of Hand shogi has a movement test above.
#[test]
fn hand_every_kind_covered() {
    let v = hand();
    let covered: BTreeSet<String> = ["K", "T", "U", "G", "S", "D", "O", "H", "N", "+N", "L", "P"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    assert_eq!(kind_tokens(&v), covered);
}
