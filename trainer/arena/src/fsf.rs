//! Fairy-Stockfish's UCI dialect for shogi variants.
//!
//! Fairy-Stockfish (11.1, Debian 12) speaks UCI with its own coordinates for shogi variants:
//! files are letters `a..` from the left as seen by sente, ranks numbers `1..` from sente's side
//! (the bottom), so USI `7g7f` is `c3c4` and `2b3c+` is `h8g7+`; drops are `P@c4` (uppercase
//! letter for both sides); promotion is a trailing `+`. Its FEN is the SFEN board followed by
//! the hands in brackets, one letter per piece (`[PPp]`), then the side to move, where its `w`
//! is sente and `b` gote.

use rules::{Color, Move, Position, Variant};
#[cfg(test)]
use std::sync::Arc;

/// Fairy-Stockfish's name of a square: file letter from the left (sente's view), rank number
/// from the bottom.
fn fsf_square(v: &Variant, sq: usize) -> String {
    let (x, y) = v.coords(sq);
    format!("{}{}", (b'a' + x as u8) as char, v.ranks as usize - y)
}

/// A move in Fairy-Stockfish's UCI notation (`c3c4`, `h8g7+`, `P@e2`, `c3c4c5`).
pub fn move_to_fsf(v: &Variant, mv: Move) -> String {
    match mv {
        Move::Normal { from, to, promote } => format!(
            "{}{}{}",
            fsf_square(v, from as usize),
            fsf_square(v, to as usize),
            if promote { "+" } else { "" }
        ),
        // Three squares, as newer Fairy-Stockfish releases write multi-leg moves.
        Move::Double { from, via, to } => format!(
            "{}{}{}",
            fsf_square(v, from as usize),
            fsf_square(v, via as usize),
            fsf_square(v, to as usize)
        ),
        Move::Drop { kind, to } => format!(
            "{}@{}",
            v.kinds[kind as usize].letter,
            fsf_square(v, to as usize)
        ),
    }
}

/// Parses a Fairy-Stockfish square (`a1`, `i9`, `j10`).
fn parse_fsf_square(v: &Variant, s: &str) -> Option<usize> {
    let b = s.as_bytes();
    let (&f, digits) = b.split_first()?;
    if !f.is_ascii_lowercase() || digits.is_empty() || !digits.iter().all(u8::is_ascii_digit) {
        return None;
    }
    let x = (f - b'a') as usize;
    let r: usize = s[1..].parse().ok()?;
    if x >= v.files as usize || r == 0 || r > v.ranks as usize {
        return None;
    }
    Some(v.square(x, v.ranks as usize - r))
}

/// Converts a Fairy-Stockfish UCI move to USI text (syntax only; legality is the referee's).
pub fn fsf_to_usi(v: &Variant, token: &str) -> Option<String> {
    if let Some((piece, sq)) = token.split_once('@') {
        let mut chars = piece.chars();
        let (Some(l), None) = (chars.next(), chars.next()) else {
            return None;
        };
        let to = parse_fsf_square(v, sq)?;
        return Some(format!("{}*{}", l.to_ascii_uppercase(), v.square_name(to)));
    }
    let (body, promote) = match token.strip_suffix('+') {
        Some(b) => (b, true),
        None => (token, false),
    };
    // Split before the second letter.
    let second = body
        .char_indices()
        .skip(1)
        .find(|(_, c)| c.is_ascii_lowercase())
        .map(|(i, _)| i)?;
    let from = parse_fsf_square(v, &body[..second])?;
    let to = parse_fsf_square(v, &body[second..])?;
    Some(format!(
        "{}{}{}",
        v.square_name(from),
        v.square_name(to),
        if promote { "+" } else { "" }
    ))
}

/// Fairy-Stockfish's FEN of a position: the SFEN board, the hands in brackets (one letter
/// per piece, sente's uppercase), then its side letter (`w` for sente, `b` for gote).
pub fn to_fsf_fen(pos: &Position) -> String {
    let sfen = pos.to_sfen();
    let f: Vec<&str> = sfen.split(' ').collect();
    let mut hand = String::new();
    let mut count = 0usize;
    if f.get(2).is_some_and(|h| *h != "-") {
        for c in f[2].chars() {
            if let Some(d) = c.to_digit(10) {
                count = count * 10 + d as usize;
            } else {
                for _ in 0..count.max(1) {
                    hand.push(c);
                }
                count = 0;
            }
        }
    }
    let side = if pos.side_to_move() == Color::Sente {
        "w"
    } else {
        "b"
    };
    format!("{}[{}] {} - - 0 1", f[0], hand, side)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fsf_notation() {
        let v = Arc::new(Variant::builtin("minishogi").unwrap());
        let pos = Position::start(v.clone());
        assert_eq!(to_fsf_fen(&pos), "rbsgk/4p/5/P4/KGSBR[] w - - 0 1");
        // Sente's pawn 5d (x 0, y 3) is a2; the rook 1e is e1.
        assert_eq!(fsf_to_usi(&v, "a2a3").as_deref(), Some("5d5c"));
        assert_eq!(fsf_to_usi(&v, "e1e5+").as_deref(), Some("1e1a+"));
        assert_eq!(fsf_to_usi(&v, "P@c3").as_deref(), Some("P*3c"));
        assert_eq!(fsf_to_usi(&v, "f1f2"), None);
        assert_eq!(fsf_to_usi(&v, "a2"), None);
        let mv = pos.parse_usi("5d5c").unwrap();
        assert_eq!(move_to_fsf(&v, mv), "a2a3");
        let s = Arc::new(Variant::builtin("shogi").unwrap());
        assert_eq!(fsf_to_usi(&s, "c3c4").as_deref(), Some("7g7f"));
        assert_eq!(fsf_to_usi(&s, "h8g7+").as_deref(), Some("2b3c+"));
        let mut p = Position::start(s.clone());
        p.play_usi("7g7f 3c3d 8h2b+ 3a2b").unwrap();
        assert_eq!(
            to_fsf_fen(&p),
            "lnsgkg1nl/1r5s1/pppppp1pp/6p2/9/2P6/PP1PPPPPP/7R1/LNSGKGSNL[Bb] w - - 0 1"
        );
        let drop = p.parse_usi("B*5e").unwrap();
        assert_eq!(move_to_fsf(&s, drop), "B@e5");
    }
}
