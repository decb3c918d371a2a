//! Helpers shared by the hand-derived rule tests: legal moves in USI and assertions about them.
#![allow(dead_code)]

use rules::{Color, EndReason, Error, Outcome, Position, Variant};
use std::collections::{BTreeSet, HashMap};
use std::sync::{Arc, Mutex, OnceLock};

/// A built-in variant, compiled once per test binary.
pub fn builtin(name: &str) -> Arc<Variant> {
    static CACHE: OnceLock<Mutex<HashMap<String, Arc<Variant>>>> = OnceLock::new();
    let mut cache = CACHE.get_or_init(Default::default).lock().unwrap();
    cache
        .entry(name.to_string())
        .or_insert_with(|| {
            Arc::new(Variant::builtin(name).unwrap_or_else(|e| panic!("built-in {name}: {e}")))
        })
        .clone()
}

/// All legal moves in USI.
pub fn moves(p: &Position) -> BTreeSet<String> {
    p.legal_moves().iter().map(|&m| p.move_to_usi(m)).collect()
}

/// Legal moves whose USI text starts with `prefix` (a square ending in its rank letter, so `1a`
/// never matches `11a`, or a drop like `P*`; on boards of more than 26 ranks `1a` would also
/// match `1aa`..`1aj`).
pub fn moves_with(p: &Position, prefix: &str) -> BTreeSet<String> {
    moves(p)
        .into_iter()
        .filter(|m| m.starts_with(prefix))
        .collect()
}

/// Destination squares of the legal one-step moves from `from`, with or without promotion.
pub fn dests(p: &Position, from: &str) -> BTreeSet<String> {
    moves_with(p, from)
        .iter()
        .map(|m| m[from.len()..].trim_end_matches('+').to_string())
        .collect()
}

/// The square turned by 180 degrees about the board's centre (where gote's piece stands when
/// sente's stands on `sq`).
pub fn turned(v: &Variant, sq: &str) -> String {
    let split = sq.find(|c: char| c.is_ascii_lowercase()).unwrap();
    let file: u8 = sq[..split].parse().unwrap();
    let rank = sq.as_bytes()[split] - b'a';
    format!(
        "{}{}",
        v.files + 1 - file,
        (b'a' + v.ranks - 1 - rank) as char
    )
}

/// A set of strings.
pub fn set(xs: &[&str]) -> BTreeSet<String> {
    xs.iter().map(|s| s.to_string()).collect()
}

/// Target squares of the legal drops of `letter`.
pub fn drop_squares(p: &Position, letter: char) -> BTreeSet<String> {
    let prefix = format!("{letter}*");
    moves(p)
        .into_iter()
        .filter_map(|m| m.strip_prefix(&prefix).map(str::to_string))
        .collect()
}

/// `usi` is legal, parses back to itself and is written the same way.
pub fn assert_legal(p: &Position, usi: &str) {
    assert!(
        moves(p).contains(usi),
        "{usi} should be legal in {}; legal: {:?}",
        p.to_sfen(),
        moves(p)
    );
    let m = p
        .parse_usi(usi)
        .unwrap_or_else(|e| panic!("parse_usi({usi}) in {}: {e}", p.to_sfen()));
    assert_eq!(p.move_to_usi(m), usi);
}

/// `usi` is illegal, and parsing it names the token.
pub fn assert_illegal(p: &Position, usi: &str) {
    assert!(
        !moves(p).contains(usi),
        "{usi} should be illegal in {}",
        p.to_sfen()
    );
    match p.parse_usi(usi) {
        Err(Error::Usi { token, .. }) => assert_eq!(token, usi),
        other => panic!(
            "parse_usi({usi}) in {}: expected a USI error, got {other:?}",
            p.to_sfen()
        ),
    }
}

/// Plays USI moves, naming the failing one.
pub fn play(p: &mut Position, usi: &str) {
    p.play_usi(usi)
        .unwrap_or_else(|e| panic!("playing {usi} in {}: {e}", p.to_sfen()));
}

/// A win for `c` by `reason`.
pub fn win(c: Color, reason: EndReason) -> Option<Outcome> {
    Some(Outcome {
        winner: Some(c),
        reason,
    })
}

/// A draw by `reason`.
pub fn draw(reason: EndReason) -> Option<Outcome> {
    Some(Outcome {
        winner: None,
        reason,
    })
}

/// A composed position: `pieces` as (square, SFEN token), then side to move and hands.
pub fn composed(v: &Arc<Variant>, pieces: &[(&str, &str)], side_and_hands: &str) -> Position {
    try_composed(v, pieces, side_and_hands).unwrap_or_else(|(sfen, e)| panic!("{sfen}: {e}"))
}

/// [`composed`], or the SFEN and the reason it does not read (a second royal piece where the
/// variant has one royal kind).
pub fn try_composed(
    v: &Arc<Variant>,
    pieces: &[(&str, &str)],
    side_and_hands: &str,
) -> Result<Position, (String, Error)> {
    let (files, ranks) = (v.files as usize, v.ranks as usize);
    let mut board = vec![vec![""; files]; ranks];
    for &(sq, token) in pieces {
        let split = sq.find(|c: char| c.is_ascii_lowercase()).unwrap();
        let file: usize = sq[..split].parse().unwrap();
        // Ranks a..z, then aa..aj on boards of more than 26 ranks.
        let rank = match sq.as_bytes()[split..] {
            [r] => (r - b'a') as usize,
            [b'a', r] => 26 + (r - b'a') as usize,
            _ => panic!("bad square {sq}"),
        };
        assert!(board[rank][files - file].is_empty(), "{sq} used twice");
        board[rank][files - file] = token;
    }
    let rows: Vec<String> = board
        .iter()
        .map(|row| {
            let mut s = String::new();
            let mut empty = 0;
            for &t in row {
                if t.is_empty() {
                    empty += 1;
                } else {
                    if empty > 0 {
                        s.push_str(&empty.to_string());
                        empty = 0;
                    }
                    s.push_str(t);
                }
            }
            if empty > 0 {
                s.push_str(&empty.to_string());
            }
            s
        })
        .collect();
    let sfen = format!("{} {side_and_hands} 1", rows.join("/"));
    Position::from_sfen_composed(v, &sfen).map_err(|e| (sfen, e))
}

/// The pieces of each side on the board (sente's, gote's), counted from the SFEN.
pub fn pieces_per_side(p: &Position) -> (usize, usize) {
    let sfen = p.to_sfen();
    let board = sfen.split(' ').next().unwrap_or_default();
    let count = |upper: bool| {
        board
            .chars()
            .filter(|c| c.is_ascii_alphabetic() && c.is_ascii_uppercase() == upper)
            .count()
    };
    (count(true), count(false))
}

/// The kind on a USI square, by name (`-` when empty).
pub fn name_at(p: &Position, sq: &str) -> String {
    let v = p.variant();
    let piece = p.piece_at(v.parse_square(sq).unwrap());
    match piece.is_empty() {
        true => "-".to_string(),
        false => v.kinds[piece.kind() as usize].name.clone(),
    }
}

/// How many legal moves leave each square (the USI text up to its first rank letter).
pub fn moves_by_origin(p: &Position) -> std::collections::BTreeMap<String, usize> {
    let mut by = std::collections::BTreeMap::new();
    for m in moves(p) {
        let mut end = m.find(|c: char| c.is_ascii_lowercase()).unwrap() + 1;
        // A second rank letter (aa..aj) on boards of more than 26 ranks.
        if m[end..].starts_with(|c: char| c.is_ascii_lowercase()) {
            end += 1;
        }
        *by.entry(m[..end].to_string()).or_default() += 1;
    }
    by
}

/// The counts `(square, moves)` as a map, for comparing with [`moves_by_origin`].
pub fn counts(pairs: &[(&str, usize)]) -> std::collections::BTreeMap<String, usize> {
    pairs.iter().map(|&(s, n)| (s.to_string(), n)).collect()
}

/// The built-in variant `name` with one text replacement in its config file (a deliberate
/// break), compiled, or the compiler's error.
pub fn try_broken(name: &str, from: &str, to: &str) -> Result<Arc<Variant>, String> {
    let path = format!(
        "{}/../../configs/variants/{name}.toml",
        env!("CARGO_MANIFEST_DIR")
    );
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(text.contains(from), "{from:?} not in {name}.toml");
    let spec =
        rules::VariantSpec::from_toml(&text.replacen(from, to, 1), &format!("{name}-broken"))
            .map_err(|e| e.to_string())?;
    Variant::compile(spec)
        .map(Arc::new)
        .map_err(|e| e.to_string())
}

/// [`try_broken`] for a break that still compiles.
pub fn broken(name: &str, from: &str, to: &str) -> Arc<Variant> {
    try_broken(name, from, to).unwrap_or_else(|e| panic!("{name}: {e}"))
}

/// A composed position with the first royal kind of each side in the left corners (the last
/// file on ranks a and the last rank, out of the tested lines), plus `pieces`; `side` to move.
pub fn cornered(v: &Arc<Variant>, pieces: &[(&str, &str)], side: &str) -> Position {
    let royal = (0..v.kinds.len() as rules::Kind)
        .find(|&k| v.kinds[k as usize].royal)
        .unwrap();
    let (top, bottom) = (
        format!("{}a", v.files),
        format!("{}{}", v.files, (b'a' + v.ranks - 1) as char),
    );
    let (ours, theirs) = (v.kind_token(royal), v.kind_token_for(Color::Gote, royal));
    let mut all = vec![
        (bottom.as_str(), ours.as_str()),
        (top.as_str(), theirs.as_str()),
    ];
    all.extend_from_slice(pieces);
    composed(v, &all, &format!("{side} -"))
}
