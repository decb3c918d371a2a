//! Betza / XBetza move notation, parsed into move atoms.
//!
//! Supported: atoms `W F D A N H C Z G` (leapers), `K` (= WF), `R B Q` (riders), a doubled
//! leaper (`NN`) for an unlimited rider, a range after an atom (`R3`, `B3`, `W2`), direction
//! modifiers `f b s v l r` and their two-letter combinations (`ff`, `fs`, `fl`, `hl`/`hr` for
//! chiral halves of oblique atoms), move-only `m`, capture-only `c`, hopping `p` (exactly one
//! piece jumped over) and the group `(paf)n` (one to `n` pieces jumped over before a capture or
//! move; Cannon Shosu Shogi's generals are `R(paf)2cR`).
//!
//! Two-step moves use XBetza's leg separator `a`, for one-step atoms (`W`, `F`, `K`) only:
//! modifiers before `a` apply to the first step, after it to the second, whose directions are
//! relative to the first (`f` on, `b` back, `v` either; none: any). `caK` captures on a first
//! king step and steps again anywhere, back to the start included (Chu shogi's Lion); `fcavW`
//! captures on the forward step, then goes on or back (the Horned Falcon's forward Lion power);
//! `mabK` steps to an empty square and back (a pass). A first step that only moves must come
//! back (`mab`): going on would repeat a plain leap.
//!
//! Directions are from the piece's owner's point of view: `dy > 0` is forward, `dx > 0` right.
//!
//! Direction modifiers combine like this (the common XBetza reading): each modifier, or pair of
//! modifiers that names a single direction, selects moves, and a component keeps the union of
//! what its modifiers select. A pair such as `fl` selects the intersection of `f` and `l` when
//! that is not empty for the atom (`flF` = the forward-left diagonal, `fsN` = the two wide
//! forward knight moves) and the union otherwise (`fsW` = forward and both sideways steps, as
//! the drunk elephant's `FfsW`). A doubled letter (`ff`, `bb`) selects the narrow oblique moves
//! (`ffN` is the shogi knight); `fN` alone is all four forward knight moves.

use std::fmt;

/// The most pieces a hopping move may jump over.
pub const MAX_HOPS: usize = 3;

/// One elementary move pattern of a piece in one direction.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct MoveAtom {
    /// Step sideways (positive = to the owner's right).
    pub dx: i8,
    /// Step forward (positive = towards the opponent).
    pub dy: i8,
    /// How many steps the piece may repeat: 1 for a leaper, 0 for unlimited.
    pub range: u8,
    /// Whether the atom may end on an empty square.
    pub can_move: bool,
    /// Whether the atom may end on an enemy piece, capturing it.
    pub can_capture: bool,
    /// Bit `k` set: the move is allowed after jumping exactly `k` pieces (bit 0: no jump).
    pub hops: u8,
}

/// A two-step move (XBetza `a`): a step, then another step from the square reached.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Hash)]
pub struct TwoLeg {
    /// First step sideways (owner's right positive).
    pub dx1: i8,
    /// First step forward.
    pub dy1: i8,
    /// The first step must capture an enemy piece (`ca`); otherwise it must reach an empty
    /// square (`ma`).
    pub first_captures: bool,
    /// Second step sideways, from the square of the first.
    pub dx2: i8,
    /// Second step forward, from the square of the first.
    pub dy2: i8,
}

/// A Betza string that could not be parsed.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct BetzaError {
    /// Byte offset of the offending character.
    pub at: usize,
    /// What was wrong.
    pub reason: String,
}

impl fmt::Display for BetzaError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "at character {}: {}", self.at + 1, self.reason)
    }
}

impl std::error::Error for BetzaError {}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Shape {
    Orthogonal,
    Diagonal,
    Oblique,
}

fn shape(dx: i8, dy: i8) -> Shape {
    if dx == 0 || dy == 0 {
        Shape::Orthogonal
    } else if dx.abs() == dy.abs() {
        Shape::Diagonal
    } else {
        Shape::Oblique
    }
}

/// All symmetric images of the leap (a, b).
fn images(a: i8, b: i8) -> Vec<(i8, i8)> {
    let mut v = Vec::new();
    for (x, y) in [(a, b), (b, a)] {
        for sx in [1, -1] {
            for sy in [1, -1] {
                let p = (x * sx, y * sy);
                if !v.contains(&p) {
                    v.push(p);
                }
            }
        }
    }
    v
}

fn single(c: u8, dx: i8, dy: i8) -> bool {
    let sh = shape(dx, dy);
    match c {
        b'f' => dy > 0,
        b'b' => dy < 0,
        b'l' => dx < 0,
        b'r' => dx > 0,
        b's' => match sh {
            Shape::Oblique => dx.abs() > dy.abs(),
            _ => dx != 0,
        },
        b'v' => match sh {
            Shape::Oblique => dy.abs() > dx.abs(),
            _ => dx == 0,
        },
        _ => false,
    }
}

/// A direction token: one modifier or a pair naming one direction.
#[derive(Clone, Copy, Debug)]
enum Token {
    One(u8),
    Pair(u8, u8),
}

fn is_pair(a: u8, b: u8) -> bool {
    matches!(
        (a, b),
        (b'f', b'f')
            | (b'b', b'b')
            | (b'f', b's' | b'l' | b'r' | b'h')
            | (b'b', b's' | b'l' | b'r' | b'h')
            | (b'l' | b'r', b'f' | b'b' | b'v' | b'h')
            | (b'h', b'l' | b'r' | b'f' | b'b')
            | (b's', b'f' | b'b')
            | (b'v', b'l' | b'r')
    )
}

fn tokens(mods: &[u8]) -> Vec<Token> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < mods.len() {
        if i + 1 < mods.len() && is_pair(mods[i], mods[i + 1]) {
            out.push(Token::Pair(mods[i], mods[i + 1]));
            i += 2;
        } else {
            out.push(Token::One(mods[i]));
            i += 1;
        }
    }
    out
}

/// Whether the token selects (dx, dy) among the atom's images `all`.
fn selects(tok: Token, dx: i8, dy: i8, all: &[(i8, i8)]) -> Result<bool, &'static str> {
    match tok {
        Token::One(b'h') => Err("'h' must be paired with l or r (hl, hr)"),
        Token::One(c) => Ok(single(c, dx, dy)),
        Token::Pair(a, b) if a == b => Ok(single(a, dx, dy) && single(b'v', dx, dy)),
        Token::Pair(a, b) if a == b'h' || b == b'h' => {
            let side = if a == b'h' { b } else { a };
            if shape(dx, dy) != Shape::Oblique {
                return Err("chiral modifiers (hl, hr) apply only to oblique atoms");
            }
            // hr: the clockwise images of (1, 2); hl: the anticlockwise ones.
            let cw = (dx as i16 * dy as i16 > 0) == (dy.abs() > dx.abs());
            match side {
                b'r' => Ok(cw),
                b'l' => Ok(!cw),
                _ => Err("'h' must be paired with l or r (hl, hr)"),
            }
        }
        Token::Pair(a, b) => {
            let meet = all.iter().any(|&(x, y)| single(a, x, y) && single(b, x, y));
            if meet {
                Ok(single(a, dx, dy) && single(b, dx, dy))
            } else {
                Ok(single(a, dx, dy) || single(b, dx, dy))
            }
        }
    }
}

/// Parses a Betza/XBetza string into move atoms (duplicates not merged), ignoring two-step
/// moves (see [`parse_all`]).
pub fn parse(text: &str) -> Result<Vec<MoveAtom>, BetzaError> {
    parse_all(text).map(|(atoms, _)| atoms)
}

/// The modifiers before an atom.
#[derive(Default)]
struct Modifiers {
    /// Direction modifiers (of the first step, for a two-step move).
    dirs: Vec<u8>,
    /// Move only (`m`).
    m: bool,
    /// Capture only (`c`).
    c: bool,
    /// Pieces that may be jumped over, as in [`MoveAtom::hops`] (`p`, `(paf)n`).
    hops: Option<u8>,
    /// Where `a` is and the second step's modifiers, for a two-step move.
    second: Option<(usize, Vec<u8>)>,
}

/// An atom as read: its letter, base vectors and range (0: unlimited), with where its
/// component (modifiers included) and the atom itself start.
struct Atom {
    letter: u8,
    base: Vec<(i8, i8)>,
    range: u8,
    start: usize,
    at: usize,
}

/// The error at byte `at`.
fn err(at: usize, reason: &str) -> BetzaError {
    BetzaError {
        at,
        reason: reason.to_string(),
    }
}

/// Parses a Betza/XBetza string into move atoms and two-step moves.
pub fn parse_all(text: &str) -> Result<(Vec<MoveAtom>, Vec<TwoLeg>), BetzaError> {
    let s = text.as_bytes();
    if s.is_empty() {
        return Err(err(0, "empty move notation"));
    }
    let mut out = Vec::new();
    let mut legs = Vec::new();
    let mut i = 0;
    while i < s.len() {
        let start = i;
        let mods = modifiers(s, &mut i)?;
        let atom = atom(s, &mut i, start)?;
        if mods.hops.is_some() && atom.range == 1 {
            return Err(err(
                start,
                "hop modifiers need a riding atom (R, B, Q, WW, ...)",
            ));
        }
        match &mods.second {
            Some(second) => two_steps(&mods, second, &atom, &mut legs)?,
            None => one_step(&mods, &atom, &mut out)?,
        }
    }
    Ok((out, legs))
}

/// Reads the modifiers from `s[*i]` up to the atom.
fn modifiers(s: &[u8], i: &mut usize) -> Result<Modifiers, BetzaError> {
    let start = *i;
    let mut mods = Modifiers::default();
    loop {
        if *i >= s.len() {
            return Err(err(start, "modifiers without an atom"));
        }
        if let Some((_, d2)) = &mut mods.second {
            match s[*i] {
                b'f' | b'b' | b'v' => d2.push(s[*i]),
                b'a' => return Err(err(*i, "at most two steps (one `a`) are supported")),
                b's' | b'l' | b'r' | b'h' | b'm' | b'c' | b'p' | b'(' => {
                    return Err(err(
                        *i,
                        "a second step takes only f (on), b (back) or v (either)",
                    ))
                }
                _ => break,
            }
            *i += 1;
            continue;
        }
        match s[*i] {
            b'a' => mods.second = Some((*i, Vec::new())),
            b'f' | b'b' | b's' | b'v' | b'l' | b'r' | b'h' => mods.dirs.push(s[*i]),
            b'm' => mods.m = true,
            b'c' => mods.c = true,
            b'p' => {
                if mods.hops.is_some() {
                    return Err(err(*i, "more than one hop modifier"));
                }
                mods.hops = Some(0b10);
            }
            b'(' => {
                mods.hops = Some(paf_group(s, i, mods.hops.is_some())?);
                continue;
            }
            _ => break,
        }
        *i += 1;
    }
    Ok(mods)
}

/// Reads the group `(paf)n` at `s[*i]`: its hop bits (one to `n` pieces jumped over);
/// `twice`: a hop modifier came before it.
fn paf_group(s: &[u8], i: &mut usize, twice: bool) -> Result<u8, BetzaError> {
    if !s[*i..].starts_with(b"(paf)") {
        return Err(err(*i, "only the group (paf) is supported in parentheses"));
    }
    if twice {
        return Err(err(*i, "more than one hop modifier"));
    }
    *i += 5;
    let mut n = 0usize;
    let mut digits = 0;
    while *i < s.len() && s[*i].is_ascii_digit() {
        n = n * 10 + (s[*i] - b'0') as usize;
        digits += 1;
        *i += 1;
        if n > MAX_HOPS {
            return Err(err(*i - 1, "at most 3 pieces may be jumped over"));
        }
    }
    if digits == 0 {
        n = 1;
    }
    if n == 0 {
        return Err(err(*i - 1, "(paf)0 jumps over no piece"));
    }
    Ok(((1u8 << (n + 1)) - 1) & !1)
}

/// Reads an atom and its range at `s[*i]`, in a component that starts at `start`.
fn atom(s: &[u8], i: &mut usize, start: usize) -> Result<Atom, BetzaError> {
    let at = *i;
    let a = s[*i];
    let (base, rider): (Vec<(i8, i8)>, bool) = match a {
        b'W' => (vec![(1, 0)], false),
        b'F' => (vec![(1, 1)], false),
        b'D' => (vec![(2, 0)], false),
        b'A' => (vec![(2, 2)], false),
        b'N' => (vec![(2, 1)], false),
        b'H' => (vec![(3, 0)], false),
        b'C' => (vec![(3, 1)], false),
        b'Z' => (vec![(3, 2)], false),
        b'G' => (vec![(3, 3)], false),
        b'K' => (vec![(1, 0), (1, 1)], false),
        b'R' => (vec![(1, 0)], true),
        b'B' => (vec![(1, 1)], true),
        b'Q' => (vec![(1, 0), (1, 1)], true),
        _ => {
            return Err(err(
                *i,
                &format!(
                    "expected a move atom (W F D A N H C Z G K R B Q), found {:?}",
                    a as char
                ),
            ))
        }
    };
    *i += 1;
    let mut range: u8 = if rider { 0 } else { 1 };
    if !rider && *i < s.len() && s[*i] == a && a != b'K' {
        // Doubled leaper: an unlimited rider (NN = nightrider).
        range = 0;
        *i += 1;
    }
    let digits_at = *i;
    let mut n: u32 = 0;
    let mut has_digits = false;
    while *i < s.len() && s[*i].is_ascii_digit() {
        n = n * 10 + (s[*i] - b'0') as u32;
        has_digits = true;
        *i += 1;
        if n > 64 {
            return Err(err(digits_at, "range too large (at most 64)"));
        }
    }
    if has_digits {
        if range == 1 && a == b'K' && n != 1 {
            return Err(err(
                digits_at,
                "a range on K is not supported; write W3F3 etc.",
            ));
        }
        range = n as u8; // 0 = unlimited
    }
    Ok(Atom {
        letter: a,
        base,
        range,
        start,
        at,
    })
}

/// Adds the two-step moves of `atom` with modifiers `mods`, the second step's being `second`
/// (where `a` is, and its modifiers).
fn two_steps(
    mods: &Modifiers,
    (a_at, d2): &(usize, Vec<u8>),
    atom: &Atom,
    legs: &mut Vec<TwoLeg>,
) -> Result<(), BetzaError> {
    let one_step_atom = matches!(atom.letter, b'W' | b'F' | b'K');
    if mods.hops.is_some() || atom.range != 1 || !one_step_atom {
        return Err(err(
            atom.at,
            "a two-step move needs a one-step atom (W, F or K) without range or hops",
        ));
    }
    if mods.m == mods.c {
        return Err(err(
            *a_at,
            "the first step needs c (capture) or m (move), e.g. caK",
        ));
    }
    if mods.m && d2[..] != [b'b'] {
        return Err(err(
            *a_at,
            "a first step that only moves must come back (mab): going on is a leap",
        ));
    }
    let firsts = select(&atom.base, &mods.dirs).map_err(|r| err(atom.start, r))?;
    if firsts.is_empty() {
        return Err(err(atom.at, "the direction modifiers select no first step"));
    }
    let seconds: Vec<(i8, i8)> = atom.base.iter().flat_map(|&(x, y)| images(x, y)).collect();
    for (dx1, dy1) in firsts {
        for &(dx2, dy2) in &seconds {
            let on = (dx2, dy2) == (dx1, dy1);
            let back = (dx2, dy2) == (-dx1, -dy1);
            let keep = d2.is_empty()
                || d2.iter().any(|&d| match d {
                    b'f' => on,
                    b'b' => back,
                    _ => on || back,
                });
            if keep {
                legs.push(TwoLeg {
                    dx1,
                    dy1,
                    first_captures: mods.c,
                    dx2,
                    dy2,
                });
            }
        }
    }
    Ok(())
}

/// Adds the move atoms of `atom` with modifiers `mods` (a component without `a`).
fn one_step(mods: &Modifiers, atom: &Atom, out: &mut Vec<MoveAtom>) -> Result<(), BetzaError> {
    let mode_move = mods.m || !mods.c;
    let mode_cap = mods.c || !mods.m;
    let toks = tokens(&mods.dirs);
    let mut any = false;
    for &(bx, by) in &atom.base {
        let all = images(bx, by);
        for &(dx, dy) in &all {
            let mut keep = toks.is_empty();
            for &t in &toks {
                if selects(t, dx, dy, &all).map_err(|r| err(atom.start, r))? {
                    keep = true;
                }
            }
            if keep {
                any = true;
                out.push(MoveAtom {
                    dx,
                    dy,
                    range: atom.range,
                    can_move: mode_move,
                    can_capture: mode_cap,
                    hops: mods.hops.unwrap_or(1),
                });
            }
        }
    }
    if !any {
        return Err(err(
            atom.at,
            "the direction modifiers select no move of this atom",
        ));
    }
    Ok(())
}

/// The images of the atoms `base` that the direction modifiers `dirs` select.
fn select(base: &[(i8, i8)], dirs: &[u8]) -> Result<Vec<(i8, i8)>, &'static str> {
    let toks = tokens(dirs);
    let mut out = Vec::new();
    for &(bx, by) in base {
        let all = images(bx, by);
        for &(dx, dy) in &all {
            let mut keep = toks.is_empty();
            for &t in &toks {
                keep |= selects(t, dx, dy, &all)?;
            }
            if keep {
                out.push((dx, dy));
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(text: &str) -> Vec<(i8, i8, u8, bool, bool, u8)> {
        let mut v: Vec<_> = parse(text)
            .unwrap()
            .into_iter()
            .map(|a| (a.dx, a.dy, a.range, a.can_move, a.can_capture, a.hops))
            .collect();
        v.sort();
        v.dedup();
        v
    }

    fn vecs(text: &str) -> Vec<(i8, i8)> {
        let mut v: Vec<_> = parse(text)
            .unwrap()
            .into_iter()
            .map(|a| (a.dx, a.dy))
            .collect();
        v.sort();
        v.dedup();
        v
    }

    #[test]
    fn shogi_pieces() {
        assert_eq!(vecs("fW"), vec![(0, 1)]);
        assert_eq!(
            vecs("FfW"),
            vec![(-1, -1), (-1, 1), (0, 1), (1, -1), (1, 1)]
        );
        assert_eq!(
            vecs("WfF"),
            vec![(-1, 0), (-1, 1), (0, -1), (0, 1), (1, 0), (1, 1)]
        );
        assert_eq!(vecs("ffN"), vec![(-1, 2), (1, 2)]);
        assert_eq!(vecs("fN"), vec![(-2, 1), (-1, 2), (1, 2), (2, 1)]);
        assert_eq!(vecs("fsN"), vec![(-2, 1), (2, 1)]);
        assert_eq!(vecs("K").len(), 8);
        assert_eq!(set("fR"), vec![(0, 1, 0, true, true, 1)]);
    }

    #[test]
    fn combined_orthogonal_modifiers_are_unions() {
        // Drunk elephant: diagonals, forward and sideways steps, no backward step.
        assert_eq!(
            vecs("FfsW"),
            vec![(-1, -1), (-1, 0), (-1, 1), (0, 1), (1, -1), (1, 0), (1, 1)]
        );
        assert_eq!(vecs("fsW"), vec![(-1, 0), (0, 1), (1, 0)]);
        assert_eq!(vecs("bFfW"), vec![(-1, -1), (0, 1), (1, -1)]);
        assert_eq!(vecs("vR"), vec![(0, -1), (0, 1)]);
        assert_eq!(vecs("sR"), vec![(-1, 0), (1, 0)]);
        assert_eq!(vecs("flF"), vec![(-1, 1)]);
    }

    #[test]
    fn ranges_and_riders() {
        assert!(set("R3").iter().all(|a| a.2 == 3));
        assert!(set("B3").iter().all(|a| a.2 == 3 && a.0.abs() == a.1.abs()));
        assert!(set("NN").iter().all(|a| a.2 == 0));
        assert!(set("W2").iter().all(|a| a.2 == 2));
        assert!(set("AD").iter().all(|a| a.2 == 1));
    }

    #[test]
    fn hoppers() {
        let cannon = set("mRcpR");
        assert!(cannon.contains(&(0, 1, 0, true, false, 0b1)));
        assert!(cannon.contains(&(0, 1, 0, false, true, 0b10)));
        assert_eq!(cannon.len(), 8);
        let general = set("R(paf)2cR");
        assert!(general.contains(&(1, 0, 0, true, true, 0b1)));
        assert!(general.contains(&(1, 0, 0, false, true, 0b110)));
        assert_eq!(set("mBcpB").len(), 8);
    }

    #[test]
    fn chiral_halves() {
        let hr = vecs("hrN");
        let hl = vecs("hlN");
        assert_eq!(hr.len(), 4);
        assert_eq!(hl.len(), 4);
        assert!(hr.iter().all(|v| !hl.contains(v)));
        assert!(hr.contains(&(1, 2)));
    }

    /// (dx, dy, range) of every move, sorted.
    fn moves(text: &str) -> Vec<(i8, i8, u8)> {
        let mut v: Vec<_> = parse(text)
            .unwrap()
            .into_iter()
            .map(|a| (a.dx, a.dy, a.range))
            .collect();
        v.sort();
        v.dedup();
        v
    }

    #[test]
    fn fairy_stockfish_shogi_variant_pieces() {
        // The Betza strings of Fairy-Stockfish's Judkins, Yari and Tori shogi, with the moves its
        // parser (src/piece.cpp) gives them: a single direction letter on an orthogonal atom, a
        // pair of a vertical and a horizontal letter split into both directions on an orthogonal
        // atom ("sf", "fr"), and naming one diagonal on a diagonal atom ("lb", "rb").
        const K8: [(i8, i8, u8); 8] = [
            (-1, -1, 1),
            (-1, 0, 1),
            (-1, 1, 1),
            (0, -1, 1),
            (0, 1, 1),
            (1, -1, 1),
            (1, 0, 1),
            (1, 1, 1),
        ];
        // Yari knight, bishop, rook, gold, silver.
        assert_eq!(moves("fRffN"), vec![(-1, 2, 1), (0, 1, 0), (1, 2, 1)]);
        assert_eq!(moves("fFfR"), vec![(-1, 1, 1), (0, 1, 0), (1, 1, 1)]);
        assert_eq!(moves("frlR"), vec![(-1, 0, 0), (0, 1, 0), (1, 0, 0)]);
        assert_eq!(
            moves("WfFbR"),
            vec![
                (-1, 0, 1),
                (-1, 1, 1),
                (0, -1, 0),
                (0, -1, 1),
                (0, 1, 1),
                (1, 0, 1),
                (1, 1, 1)
            ]
        );
        assert_eq!(
            moves("fKbR"),
            vec![(-1, 1, 1), (0, -1, 0), (0, 1, 1), (1, 1, 1)]
        );
        // Tori falcon, eagle, crane, pheasant, goose, quails.
        assert_eq!(
            moves("FsfW"),
            vec![
                (-1, -1, 1),
                (-1, 0, 1),
                (-1, 1, 1),
                (0, 1, 1),
                (1, -1, 1),
                (1, 0, 1),
                (1, 1, 1)
            ]
        );
        let mut eagle = K8.to_vec();
        eagle.extend([(-1, -1, 2), (-1, 1, 0), (0, -1, 0), (1, -1, 2), (1, 1, 0)]);
        eagle.sort();
        assert_eq!(moves("KbRfBbF2"), eagle);
        assert_eq!(
            moves("FvW"),
            vec![
                (-1, -1, 1),
                (-1, 1, 1),
                (0, -1, 1),
                (0, 1, 1),
                (1, -1, 1),
                (1, 1, 1)
            ]
        );
        assert_eq!(moves("bFfD"), vec![(-1, -1, 1), (0, 2, 1), (1, -1, 1)]);
        assert_eq!(moves("fAbD"), vec![(-2, 2, 1), (0, -2, 1), (2, 2, 1)]);
        // Left quail: back to the right (dx > 0) as a rider, one step back to the left.
        assert_eq!(moves("fRrbBlbF"), vec![(-1, -1, 1), (0, 1, 0), (1, -1, 0)]);
        assert_eq!(moves("fRlbBrbF"), vec![(-1, -1, 0), (0, 1, 0), (1, -1, 1)]);
    }

    fn legs(text: &str) -> Vec<(i8, i8, bool, i8, i8)> {
        let mut v: Vec<_> = parse_all(text)
            .unwrap()
            .1
            .into_iter()
            .map(|l| (l.dx1, l.dy1, l.first_captures, l.dx2, l.dy2))
            .collect();
        v.sort();
        v.dedup();
        v
    }

    #[test]
    fn two_step_moves() {
        // The Lion: any capturing king step, then any king step (8 x 8), plus a pass through
        // each empty neighbour (8); its leaps stay plain atoms.
        let (atoms, lion) = parse_all("KNADcaKmabK").unwrap();
        assert_eq!(atoms.len(), 8 + 8 + 4 + 4);
        assert_eq!(lion.len(), 64 + 8);
        assert_eq!(lion.iter().filter(|l| !l.first_captures).count(), 8);
        assert!(lion
            .iter()
            .filter(|l| !l.first_captures)
            .all(|l| (l.dx2, l.dy2) == (-l.dx1, -l.dy1)));
        // Horned Falcon's forward Lion power: capture ahead, then on or back; pass ahead.
        assert_eq!(
            legs("fcavWfmabW"),
            vec![
                (0, 1, false, 0, -1),
                (0, 1, true, 0, -1),
                (0, 1, true, 0, 1)
            ]
        );
        // Soaring Eagle's, on the forward diagonals.
        assert_eq!(
            legs("fcavF"),
            vec![
                (-1, 1, true, -1, 1),
                (-1, 1, true, 1, -1),
                (1, 1, true, -1, -1),
                (1, 1, true, 1, 1)
            ]
        );
        assert_eq!(parse("fcavW").unwrap(), vec![]);
        // Errors: a leg on a rider or a two-square leaper, a first step without a mode, a
        // moving first step that goes on, a sideways second step.
        for bad in [
            "caR", "caN", "aK", "maK", "mafK", "casK", "cacK", "caK2", "caapK",
        ] {
            assert!(parse_all(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn errors_point_at_the_character() {
        assert_eq!(parse("X").unwrap_err().at, 0);
        assert_eq!(parse("fWx").unwrap_err().at, 2);
        assert!(parse("").is_err());
        assert!(parse("f").is_err());
        assert!(parse("pW").is_err());
        assert!(parse("(pa)R").is_err());
        assert!(parse("(paf)9cR").is_err());
        assert!(parse("vF").is_err());
        assert!(parse("hW").is_err());
        assert!(parse("R999").is_err());
    }
}
