//! Dai shogi (configs/variants/dai.toml): every expectation below is derived by hand from the
//! rule texts cited in the config; no engine we can run plays the game. The pieces Dai shares
//! with Chu are checked against chu.toml, whose rules are anchored to Lishogi (chu.rs).
//!
//! Squares are USI: files 15..1, ranks a..o; rank `a` is gote's back rank and sente moves
//! towards it. Sente's zone is ranks a to e; gote's is k to o.

use rules::fsf::to_fsf_ini;
use rules::{
    perft, Color, EndReason, Error, Kind, Letter, PieceSpec, Position, Variant, VariantSpec,
};
use std::sync::Arc;

mod support;
use support::*;

fn dai() -> Arc<Variant> {
    builtin("dai")
}

/// A composed position of Dai shogi (see `support::composed`).
fn pos(pieces: &[(&str, &str)], side_and_hands: &str) -> Position {
    composed(&dai(), pieces, side_and_hands)
}

// ---------------------------------------------------------------------------------------------
// The start position and the piece letters
// ---------------------------------------------------------------------------------------------

/// HaChu's (XBoard's) Dai setup, letters and marks unchanged.
const START: &str = "lnuicsgkgsciunl/a1c'1f1tet1f1c'1a/1x'1a'1wxl!ow1a'1x'1/rf'mvbhdqdhbvmf'r/ppppppppppppppp/4p'5p'4/15/15/15/4P'5P'4/PPPPPPPPPPPPPPP/RF'MVBHDQDHBVMF'R/1X'1A'1WOL!XW1A'1X'1/A1C'1F1TET1F1C'1A/LNUICSGKGSCIUNL b - 1";

#[test]
fn start_position() {
    let v = dai();
    let p = Position::from_sfen(&v, START).unwrap();
    assert_eq!(Position::start(v.clone()).to_sfen(), START);
    assert_eq!(p.to_sfen(), START);
    // 29 kinds of piece, 65 pieces a side.
    assert_eq!(v.kinds.iter().filter(|k| !k.promoted).count(), 29);
    let pieces = (0..v.num_squares())
        .filter(|&sq| !p.piece_at(sq).is_empty())
        .count();
    assert_eq!(pieces, 130);
    // Counted by hand (sente; nothing reaches the zone):
    //   13 pawns (those on 11k and 5k stand behind the go-betweens), 2 go-betweens forward;
    //   rank l: rooks 1 each (back to rank m), flying dragons 3 each (15m, 13m, 12n from 14l),
    //     side movers 1 each (back), dragon horses 2 each (11m 12n from 10l), the rest 0;
    //   rank m: violent oxen 3 each (back one, sideways one each way), angry boars 3 each,
    //     evil wolves 1 each (sideways, outwards), kirin 2 (10n, and the jump to 11m), Lion 2
    //     (jumps to 10n and 6n: every square next to it is taken), phoenix 0;
    //   rank n: reverse chariots 1 each (forward), ferocious leopards 1 each (forward), blind
    //     tigers 1 each (sideways, outwards), cat swords and drunk elephant 0;
    //   rank o: knights 2 each, stone generals 2 each, iron generals 1 each, coppers 2 each,
    //     silvers 1 each, golds 1 each, lances and king 0.
    // 15 + 14 + 18 + 6 + 18 = 71.
    assert_eq!(p.legal_moves().len(), 71);
    assert_eq!(dests(&p, "14l"), set(&["15m", "13m", "12n"]));
    assert_eq!(dests(&p, "10l"), set(&["11m", "12n"]));
    assert_eq!(dests(&p, "14m"), set(&["15m", "13m", "14n"]));
    assert_eq!(dests(&p, "9m"), set(&["10n", "11m"]));
    assert_eq!(dests(&p, "8m"), set(&["10n", "6n"]));
    assert_eq!(dests(&p, "7m"), set(&[]));
    assert_eq!(dests(&p, "14o"), set(&["15m", "13m"]));
    assert_eq!(dests(&p, "13o"), set(&["14n", "12n"]));
    assert_eq!(dests(&p, "12o"), set(&["12n"]));
    assert_eq!(dests(&p, "11j"), set(&["11i"]));
    assert_eq!(dests(&p, "11k"), set(&[]));
    // Gote's army is sente's turned by 180 degrees: the same count with gote to move.
    let g = Position::from_sfen(&v, &START.replace(" b ", " w ")).unwrap();
    assert_eq!(g.legal_moves().len(), 71);
    assert_eq!(dests(&g, "8c"), set(&["6b", "10b"]));
    // The armies cannot meet in two plies: every reply is legal after every first move.
    let mut p = p;
    assert_eq!(perft(&mut p, 2), 71 * 71);
}

#[test]
fn marked_letters_in_sfen() {
    let v = dai();
    // Every kind, promoted forms included, is read and written back with its mark.
    for k in 0..v.kinds.len() {
        let info = &v.kinds[k];
        if info.royal && !info.promoted {
            continue;
        }
        for c in Color::ALL {
            let token = v.kind_token_for(c, k as Kind);
            let p = pos(&[("8h", &token), ("13o", "K"), ("2a", "k")], "b -");
            assert_eq!(p.piece_at(v.parse_square("8h").unwrap()).kind(), k as Kind);
            assert!(p.to_sfen().contains(&token), "{token}: {}", p.to_sfen());
        }
    }
    assert_eq!(v.kind_token(v.base_kind_named("l!").unwrap()), "L!");
    assert_eq!(
        v.kind_token_for(Color::Gote, v.base_kind_named("X'").unwrap()),
        "x'"
    );
    // Unknown tokens are named: a letter with the wrong mark, an unknown letter with a mark,
    // a promoted form of a piece that does not promote, a mark with no letter.
    for (row, token) in [
        ("L'14", "L'"),
        ("Z'14", "Z'"),
        ("+L!14", "+L!"),
        ("+k'14", "+k'"),
        ("'15", "'15"),
    ] {
        let sfen = START.replacen("15/15/15", &format!("{row}/15/15"), 1);
        match Position::from_sfen(&v, &sfen) {
            Err(Error::Sfen { token: t, .. }) => assert_eq!(t, token, "{row}"),
            other => panic!("{row}: expected an SFEN error, got {other:?}"),
        }
    }
    // A variant without marks refuses them with the token named.
    let shogi = Arc::new(Variant::builtin("shogi").unwrap());
    match Position::from_sfen(&shogi, "4k4/9/9/9/9/9/9/P'8/4K4 b - 1") {
        Err(Error::Sfen { token, reason }) => {
            assert_eq!(token, "P'");
            assert!(reason.contains("no such piece"), "{reason}");
        }
        other => panic!("expected an SFEN error, got {other:?}"),
    }
}

/// A variant with drops and a marked letter: the mark works in hands and in USI drops.
#[test]
fn marked_letters_in_hands_and_drops() {
    let v = Arc::new(with_piece("S'").unwrap());
    let p = composed(&v, &[("5i", "K"), ("5a", "k")], "b 2S's'");
    let s = v.base_kind_named("S'").unwrap();
    assert_eq!(p.hand_count(Color::Sente, s), 2);
    assert_eq!(p.hand_count(Color::Gote, s), 1);
    assert!(p.to_sfen().contains(" 2S's' "), "{}", p.to_sfen());
    assert_legal(&p, "S'*5e");
    // A stone general on the last rank could never move: no drop there.
    assert_illegal(&p, "S'*5a");
    assert_illegal(&p, "T'*5e");
    // The plain S (silver) is another piece.
    assert_illegal(&p, "S*5e");
    // A mark on a letter in hand that has none, or the other mark.
    let sfen = |hand: &str| format!("4k4/9/9/9/9/9/9/9/4K4 b {hand} 1");
    for (hand, token) in [("S!", "S!"), ("2P'", "2P'"), ("'", "'")] {
        match Position::from_sfen_composed(&v, &sfen(hand)) {
            Err(Error::Sfen { token: t, .. }) => assert_eq!(t, token, "{hand}"),
            other => panic!("{hand}: expected an SFEN error, got {other:?}"),
        }
    }
}

/// Shogi with one more piece, a stone general lettered `letter`.
fn with_piece(letter: &str) -> rules::Result<Variant> {
    let mut spec = VariantSpec::builtin("shogi").unwrap();
    spec.name = Some("marked".into());
    spec.pieces.get_or_insert_with(Vec::new).push(PieceSpec {
        letter: letter.into(),
        name: Some("stone general".into()),
        betza: "fF".into(),
        ..Default::default()
    });
    Variant::compile_named(spec, "marked.toml")
}

#[test]
fn config_letters_take_one_mark_at_most() {
    for bad in [
        "S''", "S#", "S*", "S+", "S-", "S/", "S1", "'S", "SS", "!", "S^!", "^", "S~;",
    ] {
        match with_piece(bad) {
            Err(Error::Config { file, key, reason }) => {
                assert_eq!(file, "marked.toml");
                assert!(key.ends_with(".letter"), "{bad}: {key}");
                assert!(reason.contains("optionally followed by"), "{bad}: {reason}");
            }
            other => panic!("{bad}: expected a config error, got {other:?}"),
        }
    }
    for good in ["S!", "s'", "S^", "S?", "s;", "S~"] {
        assert!(with_piece(good).is_ok(), "{good}");
    }
    assert_eq!(
        Letter::parse("n!"),
        Some((
            Letter {
                ch: 'N',
                mark: Some('!')
            },
            false
        ))
    );
}

// ---------------------------------------------------------------------------------------------
// Pieces
// ---------------------------------------------------------------------------------------------

/// The 21 kinds Dai shares with Chu move and promote exactly as in chu.toml (the free king is
/// Chu's queen); the other eight promote to gold generals.
#[test]
fn shared_pieces_are_chu_pieces() {
    let v = dai();
    let chu = Variant::builtin("chu").unwrap();
    let chu_name = |n: &str| {
        if n == "free king" {
            "queen".to_string()
        } else {
            n.to_string()
        }
    };
    let find = |name: &str| {
        chu.kinds
            .iter()
            .find(|k| !k.promoted && k.name == chu_name(name))
    };
    let mut shared = 0;
    let mut new = Vec::new();
    for k in v.kinds.iter().filter(|k| !k.promoted) {
        let promoted = k.promotes_to.map(|p| &v.kinds[p as usize]);
        match find(&k.name) {
            Some(c) => {
                shared += 1;
                assert_eq!(k.betza, c.betza, "{}", k.name);
                assert_eq!(k.royal, c.royal, "{}", k.name);
                let cp = c.promotes_to.map(|p| &chu.kinds[p as usize]);
                assert_eq!(
                    promoted.map(|p| (chu_name(&p.name), &p.betza, p.royal)),
                    cp.map(|p| (p.name.clone(), &p.betza, p.royal)),
                    "{}",
                    k.name
                );
            }
            None => {
                new.push(k.name.clone());
                let p = promoted.unwrap_or_else(|| panic!("{} does not promote", k.name));
                assert_eq!((p.name.as_str(), p.betza.as_str()), ("gold general", "WfF"));
            }
        }
    }
    assert_eq!(shared, 21);
    new.sort();
    assert_eq!(
        new,
        [
            "angry boar",
            "cat sword",
            "evil wolf",
            "flying dragon",
            "iron general",
            "knight",
            "stone general",
            "violent ox"
        ]
    );
}

/// `token` on 8h, sente's king on 13o and gote's on 2a: no line or jump from 8h reaches either.
fn alone(token: &str, side: &str) -> Position {
    pos(&[("8h", token), ("13o", "K"), ("2a", "k")], side)
}

const GOLD: [&str; 6] = ["8g", "9g", "7g", "9h", "7h", "8i"];

/// Sente's destinations from 8h for the eight pieces Dai adds to Chu, and their gold forms.
fn sente_cases() -> Vec<(&'static str, Vec<&'static str>)> {
    let unpromoted: Vec<(&str, Vec<&str>)> = vec![
        // Iron general: forward and diagonally forward.
        ("I", vec!["8g", "9g", "7g"]),
        // Stone general: diagonally forward.
        ("U", vec!["9g", "7g"]),
        // Knight: two forward and one sideways, jumping.
        ("N", vec!["9f", "7f"]),
        // Cat sword: one step diagonally.
        ("C'", vec!["9g", "7g", "9i", "7i"]),
        // Angry boar: one step orthogonally.
        ("A'", vec!["8g", "8i", "9h", "7h"]),
        // Evil wolf: forward, diagonally forward, sideways.
        ("W", vec!["8g", "9g", "7g", "9h", "7h"]),
        // Violent ox: up to two squares orthogonally.
        ("X'", vec!["8g", "8f", "8i", "8j", "9h", "10h", "7h", "6h"]),
        // Flying dragon: up to two squares diagonally.
        ("F'", vec!["9g", "10f", "7g", "6f", "9i", "10j", "7i", "6j"]),
    ];
    let promoted = ["+I", "+U", "+N", "+C'", "+A'", "+W", "+X'", "+F'"]
        .into_iter()
        .map(|t| (t, GOLD.to_vec()));
    unpromoted.into_iter().chain(promoted).collect()
}

#[test]
fn new_pieces_move_as_the_texts_say() {
    for (token, expected) in sente_cases() {
        assert_eq!(
            dests(&alone(token, "b -"), "8h"),
            set(&expected),
            "piece {token}"
        );
    }
}

#[test]
fn gote_pieces_move_the_other_way() {
    for (token, expected) in sente_cases() {
        let gote = token.to_lowercase();
        let turned: Vec<String> = expected.iter().map(|s| turned(&dai(), s)).collect();
        let turned: Vec<&str> = turned.iter().map(String::as_str).collect();
        assert_eq!(
            dests(&alone(&gote, "w -"), "8h"),
            set(&turned),
            "piece {gote}"
        );
    }
    assert_eq!(dests(&alone("i", "w -"), "8h"), set(&["8i", "9i", "7i"]));
}

#[test]
fn violent_ox_and_flying_dragon_are_blocked_on_the_first_square() {
    // Own pawn ahead, gote pawn to the right (taken, and nothing behind it is reached).
    let p = pos(
        &[
            ("8h", "X'"),
            ("8g", "P"),
            ("7h", "p"),
            ("13o", "K"),
            ("2a", "k"),
        ],
        "b -",
    );
    assert_eq!(dests(&p, "8h"), set(&["8i", "8j", "9h", "10h", "7h"]));
    // A piece two squares away is taken; a third square is never reached.
    let p = pos(
        &[("8h", "X'"), ("8f", "p"), ("13o", "K"), ("2a", "k")],
        "b -",
    );
    assert!(dests(&p, "8h").contains("8f") && !dests(&p, "8h").contains("8e"));
    let p = pos(
        &[
            ("8h", "F'"),
            ("9g", "P"),
            ("7i", "p"),
            ("13o", "K"),
            ("2a", "k"),
        ],
        "b -",
    );
    assert_eq!(dests(&p, "8h"), set(&["7g", "6f", "9i", "10j", "7i"]));
}

#[test]
fn knight_jumps_over_pieces() {
    let p = pos(
        &[
            ("8h", "N"),
            ("8g", "P"),
            ("9g", "P"),
            ("7g", "P"),
            ("8f", "P"),
            ("7f", "p"),
            ("13o", "K"),
            ("2a", "k"),
        ],
        "b -",
    );
    assert_eq!(dests(&p, "8h"), set(&["9f", "7f"]));
}

// ---------------------------------------------------------------------------------------------
// Promotion
// ---------------------------------------------------------------------------------------------

#[test]
fn promotion_as_in_chu_with_a_five_rank_zone() {
    let p = pos(
        &[
            ("10f", "P"),
            ("12g", "P"),
            ("6d", "S"),
            ("4d", "G"),
            ("4c", "p"),
            ("9d", "N"),
            ("13f", "N"),
            ("3b", "U"),
            ("7b", "I"),
            ("5c", "L"),
            ("11b", "S"),
            ("13o", "K"),
            ("1a", "k"),
        ],
        "b -",
    );
    // Entering the zone (rank e) may promote; rank f is outside it.
    assert_eq!(moves_with(&p, "10f"), set(&["10f10e", "10f10e+"]));
    assert_eq!(moves_with(&p, "12g"), set(&["12g12f"]));
    assert_eq!(
        moves_with(&p, "13f"),
        set(&["13f14d", "13f14d+", "13f12d", "13f12d+"])
    );
    // Inside the zone, a plain move does not promote; a capture may.
    assert_legal(&p, "6d6c");
    assert_illegal(&p, "6d6c+");
    assert_legal(&p, "4d4c+");
    assert_legal(&p, "4d4c");
    assert_illegal(&p, "4d5c+");
    // A piece that could never move again from its square may promote anyway; nothing is
    // forced, so it may also stay.
    assert_eq!(
        moves_with(&p, "9d"),
        set(&["9d10b", "9d10b+", "9d8b", "9d8b+"])
    );
    assert_eq!(
        moves_with(&p, "3b"),
        set(&["3b4a", "3b4a+", "3b2a", "3b2a+"])
    );
    assert_eq!(
        moves_with(&p, "7b"),
        set(&["7b7a", "7b7a+", "7b8a", "7b8a+", "7b6a", "7b6a+"])
    );
    assert_eq!(moves_with(&p, "5c"), set(&["5c5b", "5c5a", "5c5a+"]));
    // A silver on the last rank can still step back: no promotion without a capture.
    assert_illegal(&p, "11b11a+");
    assert_legal(&p, "11b11a");
}

#[test]
fn promoted_kirin_is_a_lion_and_phoenix_a_free_king() {
    let v = dai();
    let kirin = v.base_kind_named("O").unwrap();
    let lion = v.kinds[v.kinds[kirin as usize].promotes_to.unwrap() as usize].clone();
    assert_eq!(
        (lion.name.as_str(), lion.betza.as_str()),
        ("lion", "KNADcaKmabK")
    );
    // The promoted kirin captures without moving, as the Lion does.
    let p = pos(
        &[("8h", "+O"), ("8g", "p"), ("13o", "K"), ("2a", "k")],
        "b -",
    );
    assert_legal(&p, "8h8g8h");
    assert_legal(&p, "8h8g7f");
    let p = pos(&[("8h", "+X"), ("13o", "K"), ("2a", "k")], "b -");
    assert!(dests(&p, "8h").contains("1a") && dests(&p, "8h").contains("15h"));
}

// ---------------------------------------------------------------------------------------------
// Lions, royals, game end
// ---------------------------------------------------------------------------------------------

#[test]
fn no_lion_trading_rules() {
    // A Lion takes a protected Lion two squares away (illegal in Chu).
    let p = pos(
        &[
            ("8h", "L!"),
            ("8f", "l!"),
            ("8e", "g"),
            ("13o", "K"),
            ("2a", "k"),
        ],
        "b -",
    );
    assert_legal(&p, "8h8f");
    // After a rook takes a Lion, a rook may take the other Lion at once (no counter-strike).
    let mut p = pos(
        &[
            ("13o", "K"),
            ("8n", "R"),
            ("4d", "L!"),
            ("14a", "k"),
            ("8g", "l!"),
            ("4a", "r"),
        ],
        "b -",
    );
    play(&mut p, "8n8g");
    assert_legal(&p, "4a4d");
}

#[test]
fn crown_prince_is_a_second_royal_piece() {
    // The drunk elephant promotes to a crown prince; while it lives, the king may stay attacked.
    let p = pos(
        &[("13o", "K"), ("8h", "+E"), ("13a", "r"), ("2a", "k")],
        "b -",
    );
    assert_legal(&p, "8h8g");
    let p = pos(
        &[("13o", "K"), ("8h", "E"), ("13a", "r"), ("2a", "k")],
        "b -",
    );
    assert_illegal(&p, "8h8g");
}

#[test]
fn a_bare_king_loses() {
    let p = pos(&[("8h", "G"), ("13o", "K"), ("1a", "k")], "w -");
    assert_eq!(p.outcome(), win(Color::Sente, EndReason::BareKing));
    // Unless it can bare sente at once: the capture leaves both bare, a draw.
    let mut p = pos(&[("2b", "G"), ("13o", "K"), ("1a", "k")], "w -");
    assert_eq!(p.outcome(), None);
    play(&mut p, "1a2b");
    assert_eq!(p.outcome(), draw(EndReason::BareKing));
}

#[test]
fn captured_pieces_leave_the_game() {
    let mut p = pos(
        &[("8h", "R"), ("8c", "p"), ("13o", "K"), ("1a", "k")],
        "b -",
    );
    play(&mut p, "8h8c");
    assert!(p.to_sfen().contains(" w - "), "{}", p.to_sfen());
}

#[test]
fn not_exported_to_fairy_stockfish() {
    let err = to_fsf_ini(&dai()).expect_err("dai exported");
    for reason in [
        "board 15x15",
        "Fairy-Stockfish 11.1 names pieces with one letter",
    ] {
        assert!(
            err.refusals.iter().any(|r| r.contains(reason)),
            "no refusal containing {reason:?} in\n{err}"
        );
    }
}
