//! Boards past 16x16 (up to Taikyoku shogi's 36x36): a 36x36 board with standard shogi's
//! pieces, its moves counted by hand, and USI square names past rank `z` (`aa`..`aj`).
//! Squares are USI: file 36..1 from left to right, ranks a..z then aa..aj downwards.

use rules::{perft, Move, Position, Variant};
use std::collections::BTreeMap;
use std::sync::{Arc, OnceLock};

mod support;
use support::*;

/// Standard shogi's pieces on a 36x36 board (`tests/data/variants/big36.toml`): each side's back rank
/// in one corner (gote's on files 36..28 of rank a, sente's on files 9..1 of rank aj), rook and
/// bishop in front of them, no pawns; promotion zone three ranks deep.
fn big() -> Arc<Variant> {
    static BIG: OnceLock<Arc<Variant>> = OnceLock::new();
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../tests/data/variants/big36.toml"
    );
    BIG.get_or_init(|| Arc::new(Variant::load(std::path::Path::new(path)).unwrap()))
        .clone()
}

/// Legal moves per origin square (`P*` for drops of pawns): how many.
fn counts_by_origin(p: &Position) -> BTreeMap<String, usize> {
    let mut by = BTreeMap::new();
    for mv in p.legal_moves() {
        let origin = match mv.from() {
            Some(sq) => p.variant().square_name(sq),
            None => p.move_to_usi(mv)[..2].to_string(),
        };
        *by.entry(origin).or_default() += 1;
    }
    by
}

#[test]
fn start_position_move_count_by_hand() {
    let v = big();
    assert_eq!(v.num_squares(), 1296);
    let p = Position::start(v);
    // Sente's back rank is aj (files 9..1), rook on 2ai, bishop on 8ai; the rest is empty up
    // to gote's corner (files 36..28). Lances run up their empty files, 35 squares, with a
    // promotion choice on ranks b and c and a forced one on a: 37 each. Knights: both jumps
    // onto rank ah. Silvers: three forward squares, one holding the rook or bishop: 2.
    // Golds: three forward squares (their sideways neighbours are friends): 3; king: 3.
    // Rook: up 34 squares to rank a plus a promotion choice on a..c (37), 1ai, and 3ai..7ai
    // up to the bishop: 43. Bishop: up-left 28 squares to file 36 on rank g, up-right 7 to
    // file 1 on rank ab, its downward neighbours are friends: 35.
    let expected: BTreeMap<String, usize> = [
        ("9aj", 37),
        ("1aj", 37),
        ("8aj", 2),
        ("2aj", 2),
        ("7aj", 2),
        ("3aj", 2),
        ("6aj", 3),
        ("4aj", 3),
        ("5aj", 3),
        ("2ai", 43),
        ("8ai", 35),
    ]
    .into_iter()
    .map(|(s, n)| (s.to_string(), n))
    .collect();
    assert_eq!(counts_by_origin(&p), expected);
    assert_eq!(p.legal_moves().len(), 169);
    assert!(moves(&p).contains("1aj1a+") && !moves(&p).contains("1aj1a"));
    assert!(moves(&p).contains("8ai36g") && moves(&p).contains("8ai1ab"));
}

#[test]
fn drops_reach_every_square_of_a_large_board() {
    let v = big();
    // Kings in opposite corners, a pawn in sente's hand. It drops on every empty square but
    // gote's first rank (it could never move again): 35 ranks x 36 files, less the king's
    // square. The drop on 36b checks the gote king, which takes it: no drop mate. The king
    // has three moves from its corner: 1262.
    let sfen = format!("k35/{}/35K b P 1", vec!["36"; 34].join("/"));
    let p = Position::from_sfen_composed(&v, &sfen).unwrap();
    let by = counts_by_origin(&p);
    assert_eq!(by["P*"], 35 * 36 - 1);
    assert_eq!(by["1aj"], 3);
    assert_eq!(p.legal_moves().len(), 1262);
    assert!(moves(&p).contains("P*36b") && moves(&p).contains("P*1ai"));
    assert!(!moves(&p).contains("P*35a"));
}

#[test]
fn square_names_past_rank_z_round_trip() {
    let v = big();
    for sq in 0..v.num_squares() {
        let name = v.square_name(sq);
        assert_eq!(v.parse_square(&name), Some(sq), "{name}");
    }
    assert_eq!(v.square_name(v.square(0, 0)), "36a");
    assert_eq!(v.square_name(v.square(35, 25)), "1z");
    assert_eq!(v.square_name(v.square(35, 26)), "1aa");
    assert_eq!(v.square_name(v.square(0, 35)), "36aj");
    for bad in ["1ak", "37a", "0a", "1", "1ba", "1aaa"] {
        assert_eq!(v.parse_square(bad), None, "{bad}");
    }
    let mut p = Position::start(v.clone());
    for mv in p.legal_moves() {
        assert_eq!(p.parse_usi(&p.move_to_usi(mv)).unwrap(), mv);
    }
    let err = p.parse_usi("1ak1a").unwrap_err().to_string();
    assert!(err.contains("1ak1a"), "{err}");
    // A game's SFEN after moves on the far ranks reads back the same.
    p.play_usi("1aj1ab 36a36aa 2ai2b+").unwrap();
    assert_eq!(
        p.piece_at(v.square(35, 27)).kind(),
        v.kind_by_letter('L', false).unwrap()
    );
    let sfen = p.to_sfen();
    assert_eq!(Position::from_sfen(&v, &sfen).unwrap().to_sfen(), sfen);
    assert!(matches!(
        p.moves_played().last(),
        Some(Move::Normal { promote: true, .. })
    ));
}

/// Regression counts of this engine (no other program we can run plays a 36x36 board): depth 1
/// is the hand count above, 2 and 3 pin the tree below it.
#[test]
fn perft_regression() {
    let mut p = Position::start(big());
    assert_eq!(perft(&mut p, 1), 169);
    assert_eq!(perft(&mut p, 2), 28_302);
    assert_eq!(perft(&mut p, 3), 4_920_642);
}

/// The letters of a variant with `n` kinds after the king: every letter but K plain, then
/// with each mark in turn.
fn many_letters(n: usize) -> Vec<String> {
    let marks = std::iter::once(None).chain(rules::Letter::MARKS.iter().map(Some));
    marks
        .flat_map(|m| {
            ('A'..='Z')
                .filter(move |&c| m.is_some() || c != 'K')
                .map(move |c| format!("{c}{}", m.map_or(String::new(), |m| m.to_string())))
        })
        .take(n)
        .collect()
}

/// A variant on an `n`x`n` board with a king and `extra` other kinds, which step like a
/// ferz, but the last, a knight (all eight jumps); the last `promoting` promote (to a wazir).
fn many_kinds(n: u8, extra: usize, promoting: usize) -> Result<Arc<Variant>, String> {
    let mut toml = format!(
        "name = \"many\"\nfiles = {n}\nranks = {n}\nstart = \"k{}/{}/{}K b - 1\"\n\
         [promotion]\nzone_depth = 1\n[drops]\nenabled = false\n\
         [[pieces]]\nletter = \"K\"\nname = \"king\"\nbetza = \"K\"\nroyal = true\n",
        n - 1,
        vec![n.to_string(); n as usize - 2].join("/"),
        n - 1
    );
    for (i, l) in many_letters(extra).iter().enumerate() {
        let betza = if i + 1 == extra { "N" } else { "F" };
        toml +=
            &format!("[[pieces]]\nletter = \"{l}\"\nname = \"kind {i}\"\nbetza = \"{betza}\"\n");
        if i + promoting >= extra {
            toml += "promoted = { name = \"wazir\", betza = \"W\" }\n";
        }
    }
    let spec = rules::VariantSpec::from_toml(&toml, "many.toml").map_err(|e| e.to_string())?;
    Variant::compile(spec)
        .map(Arc::new)
        .map_err(|e| e.to_string())
}

#[test]
fn hundreds_of_kinds_on_a_large_board() {
    // 20x20 (past 256 squares): the king, 299 other kinds and 10 promoted forms, 310 kinds.
    let v = many_kinds(20, 299, 10).unwrap();
    assert_eq!(v.kinds.len(), 310);
    let knight = many_letters(299).pop().unwrap();
    // 25 plain letters, 26 with each of the first ten marks, then N with the eleventh.
    assert_eq!(knight, "N:");
    // Gote's knight (kind 299) on 8f attacks 9h, 7h, 10g, 6g and their mirror images: of
    // sente's king's eight squares around 8i, the two on rank h it attacks are refused. Two
    // ferzes further away take no part.
    let k = knight.to_lowercase();
    let p = composed(
        &v,
        &[
            ("8i", "K"),
            ("8f", &k),
            ("1a", "k"),
            ("20t", "A"),
            ("19s", "B"),
        ],
        "b -",
    );
    let king: std::collections::BTreeSet<String> = dests(&p, "8i");
    assert_eq!(
        king,
        set(&["9i", "7i", "9j", "8j", "7j", "8h"]),
        "the knight's squares 9h and 7h are attacked"
    );
    // The knight on 9g checks the king on 8i: only king moves out of its reach are legal
    // (nothing can take it).
    let p = composed(
        &v,
        &[("8i", "K"), ("9g", &k), ("1a", "k"), ("20t", "A")],
        "b -",
    );
    assert!(p.in_check());
    let all = moves(&p);
    assert!(all.iter().all(|m| m.starts_with("8i")), "{all:?}");
    // A kind past 256 (a promoted form, kind 309): SFEN and USI round trip, and its Zobrist
    // key tells sente's from gote's.
    let last = many_letters(299).last().unwrap().clone();
    let mut p = composed(&v, &[("8i", "K"), ("5c", &last), ("1a", "k")], "b -");
    play(&mut p, "5c4a+");
    let sq = v.parse_square("4a").unwrap();
    assert_eq!(p.piece_at(sq).kind(), 309);
    let sfen = p.to_sfen();
    assert!(sfen.contains(&format!("+{last}")), "{sfen}");
    let again = Position::from_sfen_composed(&v, &sfen).unwrap();
    assert_eq!(again.hash(), p.hash());
    let gote = sfen.replacen(&format!("+{last}"), &format!("+{}", last.to_lowercase()), 1);
    let other = Position::from_sfen_composed(&v, &gote).unwrap();
    assert_ne!(other.hash(), p.hash());
    let mut again = again;
    assert_eq!(perft(&mut p, 2), perft(&mut again, 2));
}

#[test]
fn small_boards_take_at_most_128_kinds() {
    // 16x16 is the largest board with one-byte squares: 128 kinds there, not 129.
    assert!(many_kinds(16, 117, 10).is_ok());
    let e = many_kinds(16, 118, 10).unwrap_err();
    assert!(e.contains("129 kinds") && e.contains("at most 128"), "{e}");
    assert!(many_kinds(17, 118, 10).is_ok());
    // 512 kinds on larger boards.
    assert!(many_kinds(36, 300, 211).is_ok());
    let e = many_kinds(36, 300, 212).unwrap_err();
    assert!(e.contains("513 kinds") && e.contains("at most 512"), "{e}");
}
