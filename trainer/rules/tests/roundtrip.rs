//! Round trips: SFEN -> Position -> SFEN, and USI -> Move -> USI, on start positions and on
//! positions reached by seeded random playouts in every built-in variant.

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use rules::{Color, Move, Position, Square, Variant, VariantSpec};
use std::sync::Arc;

/// Every built-in variant.
fn variants() -> Vec<&'static str> {
    rules::VariantSpec::builtin_names()
}

fn var(name: &str) -> Arc<Variant> {
    Arc::new(Variant::builtin(name).unwrap_or_else(|e| panic!("built-in {name}: {e}")))
}

/// SFEN -> Position -> SFEN gives the same text, and the re-parsed position has the same hash,
/// side and moves.
fn check_sfen_roundtrip(v: &Arc<Variant>, p: &Position) {
    let s = p.to_sfen();
    let q = Position::from_sfen_composed(v, &s).unwrap_or_else(|e| panic!("{}: {s}: {e}", v.name));
    assert_eq!(q.to_sfen(), s, "{}", v.name);
    assert_eq!(q.hash(), p.hash(), "{}: {s}", v.name);
    assert_eq!(q.side_to_move(), p.side_to_move());
    assert_eq!(q.in_check(), p.in_check());
    // Surrounding and repeated whitespace is accepted.
    let spaced = format!("  {}  ", s.replace(' ', "   "));
    assert_eq!(
        Position::from_sfen_composed(v, &spaced).unwrap().to_sfen(),
        s
    );
}

#[derive(Default)]
struct Seen {
    ten_file: usize,
    drops: usize,
    promotions: usize,
    moves: usize,
    doubles: usize,
}

/// Every legal move survives Move -> USI -> Move; `full` also runs the legality-checking
/// `parse_usi` (slower: it generates the moves again).
fn check_usi_roundtrip(p: &Position, full: bool, seen: &mut Seen) {
    let v = p.variant();
    for m in p.legal_moves() {
        let usi = p.move_to_usi(m);
        assert_eq!(v.move_to_usi(m), usi);
        assert_eq!(
            v.parse_usi_syntax(&usi),
            Ok(m),
            "{}: {usi} in {}",
            v.name,
            p.to_sfen()
        );
        if full {
            assert_eq!(
                p.parse_usi(&usi),
                Ok(m),
                "{}: {usi} in {}",
                v.name,
                p.to_sfen()
            );
        }
        // Shape of the text.
        match m {
            Move::Drop { .. } => {
                seen.drops += 1;
                let (l, sq) = usi.split_once('*').expect("a drop has a *");
                // A piece dropped promoted side up is written with its `+`.
                let l = match l.strip_prefix('+') {
                    Some(rest) if v.promoted_drops => rest,
                    _ => l,
                };
                let parsed = rules::Letter::parse(l);
                assert!(parsed.is_some_and(|(_, upper)| upper), "{usi}");
                assert_eq!(v.parse_square(sq), Some(m.to()), "{usi}");
            }
            Move::Normal { from, to, promote } => {
                if promote {
                    seen.promotions += 1;
                    assert!(usi.ends_with('+'), "{usi}");
                }
                let from_name = v.square_name(from as usize);
                let to_name = v.square_name(to as usize);
                if from_name.len() == 3 || to_name.len() == 3 {
                    seen.ten_file += 1;
                }
                assert_eq!(
                    usi,
                    format!("{from_name}{to_name}{}", if promote { "+" } else { "" })
                );
            }
            Move::Double { from, via, to } => {
                seen.doubles += 1;
                let name = |s: Square| v.square_name(s as usize);
                assert_eq!(usi, format!("{}{}{}", name(from), name(via), name(to)));
            }
            Move::Line { from, to } => {
                seen.doubles += 1;
                let name = |s: usize| v.square_name(s);
                let [a, b] = Move::line_vias(from, to);
                let ends = [from, to].map(|s| name(s as usize));
                assert_eq!(usi, format!("{}{}{}{}", ends[0], name(a), name(b), ends[1]));
            }
            Move::Multi { from, to, .. } => {
                seen.doubles += 1;
                // The ends, then a comma and the other squares taken, in board order.
                let name = |s: usize| v.square_name(s);
                let taken: Vec<String> = v.compound_taken(m).into_iter().map(name).collect();
                let ends = format!("{}{}", name(from as usize), name(to as usize));
                assert_eq!(usi, format!("{ends},{}", taken.join(",")));
            }
        }
        seen.moves += 1;
    }
}

#[test]
fn start_positions_roundtrip() {
    for name in variants() {
        let v = var(name);
        let p = Position::start(v.clone());
        assert_eq!(p.to_sfen(), v.start_sfen, "{name}");
        // The config's start text is exactly what to_sfen writes.
        let spec = VariantSpec::builtin(name).unwrap();
        assert_eq!(spec.start.as_deref(), Some(v.start_sfen.as_str()));
        check_sfen_roundtrip(&v, &p);
        check_usi_roundtrip(&p, true, &mut Seen::default());
    }
}

#[test]
fn sfen_without_optional_fields() {
    let v = var("shogi");
    let full = "lnsgkgsnl/1r5b1/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL b - 1";
    let board = full.split(' ').next().unwrap();
    // Side, hands and move number default to "b", "-", 1.
    for s in [
        board.to_string(),
        format!("{board} b"),
        format!("{board} b -"),
    ] {
        assert_eq!(Position::from_sfen(&v, &s).unwrap().to_sfen(), full);
    }
    // The move number is kept.
    let s = format!("{board} w - 42");
    let mut p = Position::from_sfen(&v, &s).unwrap();
    assert_eq!(p.to_sfen(), s);
    p.play_usi("3c3d").unwrap();
    assert!(p.to_sfen().ends_with(" b - 43"), "{}", p.to_sfen());
}

#[test]
fn hands_are_written_in_a_canonical_order() {
    // Hands may be written in any order and with repeated letters; to_sfen writes sente first,
    // in the variant's hand order, with counts.
    let v = var("shogi");
    let p = Position::from_sfen(&v, "4k4/9/9/9/9/9/9/9/4K4 b pPRrP2b 1").unwrap();
    let s = p.to_sfen();
    let q = Position::from_sfen(&v, &s).unwrap();
    assert_eq!(q.to_sfen(), s);
    assert_eq!(q.hash(), p.hash());
    assert!(s.contains(" R2P"), "{s}");
    assert!(s.contains("r2bp"), "{s}");
    // Every hand kind of each variant round-trips with counts 1 and 2.
    for name in variants() {
        let v = var(name);
        for &k in &v.hand_kinds {
            let l = v.kinds[k as usize].letter;
            for hand in [format!("{l}"), format!("2{l}"), l.cased(Color::Gote)] {
                let mut board = v.start_sfen.split(' ').next().unwrap().to_string();
                if name == "hand" {
                    // The hand start has pieces in hand already; use an almost empty board.
                    board = "4k4/9/9/9/9/9/9/9/4K4".to_string();
                }
                let s = format!("{board} b {hand} 1");
                let p = Position::from_sfen_composed(&v, &s)
                    .unwrap_or_else(|e| panic!("{name}: {s}: {e}"));
                check_sfen_roundtrip(&v, &p);
                let c = if hand.ends_with(&l.to_string()) {
                    Color::Sente
                } else {
                    Color::Gote
                };
                let n = if hand.starts_with('2') { 2 } else { 1 };
                assert_eq!(p.hand_count(c, k), n, "{name}: {s}");
            }
        }
    }
}

#[test]
fn square_names_roundtrip() {
    for name in variants() {
        let v = var(name);
        for sq in 0..v.num_squares() {
            let s = v.square_name(sq);
            assert_eq!(v.parse_square(&s), Some(sq), "{name}: {s}");
        }
    }
    let v = var("cannon-shosu");
    // 10 files: file 10 is the leftmost (x = 0), rank j the bottom.
    assert_eq!(v.parse_square("10j"), Some(v.square(0, 9)));
    assert_eq!(v.parse_square("1a"), Some(v.square(9, 0)));
    assert_eq!(v.parse_square("11a"), None);
    assert_eq!(v.parse_square("10k"), None);
    let shogi = var("shogi");
    assert_eq!(shogi.parse_square("10a"), None);
    assert_eq!(shogi.parse_square("5e"), Some(shogi.square(4, 4)));
}

#[test]
fn ten_file_drop_and_promotion_usi() {
    let v = var("cannon-shosu");
    // Syntax only: 10j9h is a board move between two squares of a 10x10 board.
    assert_eq!(
        v.parse_usi_syntax("10j9h"),
        Ok(Move::Normal {
            from: v.square(0, 9) as Square,
            to: v.square(1, 7) as Square,
            promote: false
        })
    );
    assert_eq!(v.move_to_usi(v.parse_usi_syntax("10j9h").unwrap()), "10j9h");
    assert_eq!(
        v.move_to_usi(v.parse_usi_syntax("1a10a+").unwrap()),
        "1a10a+"
    );
    assert_eq!(
        v.move_to_usi(v.parse_usi_syntax("10c10b+").unwrap()),
        "10c10b+"
    );
    let p_kind = v.kind_by_letter('P', false).unwrap();
    assert_eq!(
        v.parse_usi_syntax("P*5e"),
        Ok(Move::Drop {
            kind: p_kind,
            to: v.square(5, 4) as Square
        })
    );
    // Legal in a position: sente has no pawn on file 10 and one in hand; the lance on 10j moves.
    let mut p = Position::from_sfen(
        &v,
        "lnsgkqgsnl/1rca2acb1/pppppppppp/2d4d2/10/10/2D4D2/1PPPPPPPPP/1BCA2ACR1/LNSGQKGSNL b P 1",
    )
    .unwrap();
    for usi in ["10j10h", "10j10e", "P*10g", "P*10b"] {
        let m = p.parse_usi(usi).unwrap_or_else(|e| panic!("{usi}: {e}"));
        assert_eq!(p.move_to_usi(m), usi);
    }
    // File 5 still holds a sente pawn (5h): nifu.
    assert!(p.parse_usi("P*5e").is_err());
    // A promotion on file 10: lance to 10c.
    p.play_usi("10j10e 1c1d 10e10d 1d1e").unwrap();
    let m = p.parse_usi("10d10c+").unwrap();
    assert_eq!(p.move_to_usi(m), "10d10c+");
    assert!(
        p.parse_usi("10d10c").is_ok(),
        "promotion is optional on 10c"
    );
    // Shogi drop and promotion.
    let shogi = var("shogi");
    let p = Position::from_sfen(&shogi, "4k4/6P2/9/9/9/9/9/9/4K4 b P 1").unwrap();
    for usi in ["P*5e", "3b3a+", "5i4h"] {
        let m = p.parse_usi(usi).unwrap_or_else(|e| panic!("{usi}: {e}"));
        assert_eq!(p.move_to_usi(m), usi);
    }
}

/// Random playouts: SFEN round trip after every ply, USI round trip of every legal move.
#[test]
fn random_playout_positions_roundtrip() {
    for (vi, name) in variants().into_iter().enumerate() {
        let v = var(name);
        let mut rng = StdRng::seed_from_u64(0xA11CE + vi as u64);
        let mut seen = Seen::default();
        let games = if name == "minishogi" { 16 } else { 8 };
        for _game in 0..games {
            let mut p = Position::start(v.clone());
            for ply in 0..100 {
                check_sfen_roundtrip(&v, &p);
                check_usi_roundtrip(&p, ply % 4 == 0, &mut seen);
                let ms = p.legal_moves();
                if ms.is_empty() {
                    break;
                }
                let m = ms[rng.random_range(0..ms.len())];
                // parse_usi(move_to_usi(m)) == m, and play_usi plays the same move.
                let usi = p.move_to_usi(m);
                let mut q = p.clone();
                q.play_usi(&usi).unwrap();
                p.make_move(m);
                assert_eq!(q.to_sfen(), p.to_sfen());
                assert_eq!(q.hash(), p.hash());
            }
            check_sfen_roundtrip(&v, &p);
            check_usi_roundtrip(&p, true, &mut seen);
        }
        assert!(seen.moves > 1000, "{name}: only {} moves seen", seen.moves);
        // Sho has no drops; Kyoto's and Micro's pieces turn over without a promoting move, and
        // Dai-dai's promote by capture, without one too.
        assert!(seen.drops > 0 || !v.drops, "{name}: no drop seen");
        let flips = v.promote_by_capture
            || v.kinds
                .iter()
                .all(|k| k.promotion != rules::PromotionMode::Optional);
        assert!(
            seen.promotions > 0 || name == "hand" || flips,
            "{name}: no promotion seen"
        );
        if name == "cannon-shosu" {
            assert!(seen.ten_file > 0, "no move from or to file 10 seen");
        }
    }
}

/// A game given as USI moves replays to the same SFEN as the moves played one by one, and
/// `moves_played` gives the moves back.
#[test]
fn move_list_replays() {
    let mut rng = StdRng::seed_from_u64(7);
    for name in variants() {
        let v = var(name);
        let mut p = Position::start(v.clone());
        let mut usis = Vec::new();
        for _ in 0..60 {
            let ms = p.legal_moves();
            if ms.is_empty() {
                break;
            }
            let m = ms[rng.random_range(0..ms.len())];
            usis.push(p.move_to_usi(m));
            p.make_move(m);
        }
        let mut q = Position::start(v.clone());
        q.play_usi(&usis.join(" ")).unwrap();
        assert_eq!(q.to_sfen(), p.to_sfen(), "{name}");
        let back: Vec<String> = q.moves_played().map(|m| v.move_to_usi(m)).collect();
        assert_eq!(back, usis);
        assert_eq!(q.ply(), usis.len());
    }
}
