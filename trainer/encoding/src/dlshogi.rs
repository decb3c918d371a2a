//! dlshogi's network layout for standard shogi, so that a network trained here runs unchanged
//! in dlshogi and FukauraOu (both load ONNX networks with this input and policy).
//!
//! Squares are dlshogi's: index `(file - 1) * 9 + rank` (file 1 = the rightmost file from
//! sente's side, rank 0 = rank a), so a `[9, 9]` plane is file-major. For gote everything is
//! rotated 180 degrees (`80 - index`) and "own" is the side to move.
//!
//! Input: `features1` (62 planes) then `features2` (57 planes), 119 in all:
//! - per side (own, then opponent) 31 planes: 14 piece-type planes, 14 planes of the squares the
//!   pieces of each type attack, and 3 planes "attacked by at least 1, 2, 3 pieces";
//! - per side 28 hand planes: pawns 8, lances, knights, silvers and golds 4 each, bishops and
//!   rooks 2 each; the first `count` planes of a kind are all ones;
//! - one plane of ones when the side to move is in check.
//!
//! Piece types in dlshogi's order: P L N S B R G K +P +L +N +S +B +R.
//!
//! Policy: 27 labels x 81 destination squares, index `label * 81 + to`. Labels 0-9 are the
//! directions from the origin (up, up-left, up-right, left, right, down, down-left, down-right,
//! and the knight's two), 10-19 the same with promotion, 20-26 drops of P L N S B R G. Only the
//! nearest piece in a direction can reach a square, so a label and a square name one move.

use crate::encoder::{EncodingError, EncodingLayout};
use rules::{Color, Kind, Move, Position, Square, Variant};

/// Planes of dlshogi's first input (board and attacks).
pub const FEATURES1: usize = 62;
/// Planes of dlshogi's second input (hands and check).
pub const FEATURES2: usize = 57;
/// Move labels of the policy.
pub const LABELS: usize = 27;

/// Piece types in dlshogi's plane order.
const PIECE_TYPES: [&str; 14] = [
    "P", "L", "N", "S", "B", "R", "G", "K", "+P", "+L", "+N", "+S", "+B", "+R",
];
/// Hand kinds in dlshogi's hand-plane order, with the planes each has.
const HAND: [(&str, usize); 7] = [
    ("P", 8),
    ("L", 4),
    ("N", 4),
    ("S", 4),
    ("G", 4),
    ("B", 2),
    ("R", 2),
];
/// Hand kinds in the order of the drop labels (dlshogi's piece type order).
const DROPS: [&str; 7] = ["P", "L", "N", "S", "B", "R", "G"];
/// Planes per side in `features1`.
const SIDE1: usize = FEATURES1 / 2;
/// Hand planes per side in `features2`.
const SIDE2: usize = 28;
/// Direction names, labels 0-9.
const DIRECTIONS: [&str; 10] = [
    "up",
    "up-left",
    "up-right",
    "left",
    "right",
    "down",
    "down-left",
    "down-right",
    "knight up-left",
    "knight up-right",
];
/// Per direction label, the step from the destination back to the origin in dlshogi
/// coordinates (file index, rank index), and whether the direction rides.
const BACK: [(i8, i8, bool); 10] = [
    (0, 1, true),
    (-1, 1, true),
    (1, 1, true),
    (-1, 0, true),
    (1, 0, true),
    (0, -1, true),
    (-1, -1, true),
    (1, -1, true),
    (-1, 2, false),
    (1, 2, false),
];

/// Whether `v` is standard shogi as dlshogi sees it (9x9, drops, shogi's 14 piece kinds with
/// their moves), or why not.
pub fn check_standard_shogi(v: &Variant) -> Result<(), EncodingError> {
    Dlshogi::new(v).map(|_| ()).map_err(|reason| EncodingError {
        layout: EncodingLayout::Dlshogi,
        variant: v.name.clone(),
        reason,
    })
}

/// dlshogi's square index (`(file - 1) * 9 + rank`, unrotated) of our square `sq`.
pub fn square(sq: usize) -> usize {
    dl_square(Color::Sente, sq)
}

/// The tables that map a variant's kinds to dlshogi's, built once per encoder.
#[derive(Clone, Debug)]
pub(crate) struct Dlshogi {
    /// dlshogi piece type (0..14) of each of our kinds.
    piece_type: Vec<u8>,
    /// Per hand index: first plane among a side's hand planes, and how many.
    hand_planes: Vec<(usize, usize)>,
    /// Per hand index: drop label minus 20.
    drop_label: Vec<u8>,
    /// Our kind of each drop label minus 20.
    drop_kind: [Kind; 7],
}

impl Dlshogi {
    /// The tables for `v`, or why `v` is not standard shogi as dlshogi sees it: a 9x9 board
    /// with drops and standard shogi's 14 piece kinds moving as in standard shogi.
    pub(crate) fn new(v: &Variant) -> Result<Dlshogi, String> {
        if (v.files, v.ranks) != (9, 9) {
            return Err(format!("the board is {}x{}, not 9x9", v.files, v.ranks));
        }
        if !v.drops {
            return Err("it has no drops".into());
        }
        let shogi = Variant::builtin("shogi").map_err(|e| e.to_string())?;
        let kind_of = |v: &Variant, token: &str| {
            let promoted = token.starts_with('+');
            let letter = token.chars().last().unwrap_or(' ');
            v.kind_by_letter(letter, promoted)
        };
        let mut piece_type = vec![u8::MAX; v.kinds.len()];
        for (t, token) in PIECE_TYPES.iter().enumerate() {
            let ours = kind_of(v, token).ok_or(format!("it has no piece {token}"))?;
            let theirs = kind_of(&shogi, token).expect("shogi has its pieces");
            let (a, b) = (&v.kinds[ours as usize], &shogi.kinds[theirs as usize]);
            if a.betza != b.betza {
                return Err(format!(
                    "its {token} moves as {:?}, not as shogi's {:?}",
                    a.betza, b.betza
                ));
            }
            piece_type[ours as usize] = t as u8;
        }
        if let Some(k) = piece_type.iter().position(|&t| t == u8::MAX) {
            return Err(format!(
                "it has a piece shogi lacks: {}",
                v.kind_token(k as Kind)
            ));
        }
        let mut hand_planes = vec![(0, 0); v.hand_kinds.len()];
        let mut drop_label = vec![0; v.hand_kinds.len()];
        let mut drop_kind = [0; 7];
        let mut first = 0;
        for (token, planes) in HAND {
            let kind = kind_of(v, token).expect("checked above");
            let h = v.kinds[kind as usize]
                .hand_index
                .ok_or(format!("{token} cannot be dropped"))?;
            hand_planes[h] = (first, planes);
            first += planes;
            let d = DROPS.iter().position(|&t| t == token).expect("same kinds");
            drop_label[h] = d as u8;
            drop_kind[d] = kind;
        }
        if v.hand_kinds.len() != HAND.len() {
            return Err("it drops pieces shogi does not".into());
        }
        Ok(Dlshogi {
            piece_type,
            hand_planes,
            drop_label,
            drop_kind,
        })
    }

    /// Writes the 119 input planes of `pos` into `out` (`119 * 81` floats), overwriting all.
    pub(crate) fn encode(&self, pos: &Position, out: &mut [f32]) {
        assert_eq!(
            out.len(),
            (FEATURES1 + FEATURES2) * 81,
            "encode: output length"
        );
        out.fill(0.0);
        let us = pos.side_to_move();
        let mut attackers = [[0u8; 81]; 2];
        for sq in 0..81 {
            let p = pos.piece_at(sq);
            if p.is_empty() {
                continue;
            }
            let side = usize::from(p.color() != us);
            let t = self.piece_type[p.kind() as usize] as usize;
            out[(side * SIDE1 + t) * 81 + dl_square(us, sq)] = 1.0;
            for a in pos.attacks_from(sq).iter() {
                let d = dl_square(us, a);
                out[(side * SIDE1 + 14 + t) * 81 + d] = 1.0;
                attackers[side][d] += 1;
            }
        }
        for (side, counts) in attackers.iter().enumerate() {
            for (d, &n) in counts.iter().enumerate() {
                for k in 0..(n as usize).min(3) {
                    out[(side * SIDE1 + 28 + k) * 81 + d] = 1.0;
                }
            }
        }
        let hands = &mut out[FEATURES1 * 81..];
        for (side, color) in [us, us.flip()].into_iter().enumerate() {
            for (h, &(first, planes)) in self.hand_planes.iter().enumerate() {
                let n = (pos.hand_count(color, pos.variant().hand_kinds[h]) as usize).min(planes);
                let start = (side * SIDE2 + first) * 81;
                hands[start..start + n * 81].fill(1.0);
            }
        }
        if pos.in_check() {
            hands[2 * SIDE2 * 81..].fill(1.0);
        }
    }

    /// Policy index of a move of `pos`'s side to move.
    pub(crate) fn move_to_index(&self, pos: &Position, mv: Move) -> usize {
        let us = pos.side_to_move();
        match mv {
            Move::Normal { from, to, promote } => {
                let (f, t) = (dl_square(us, from as usize), dl_square(us, to as usize));
                let dir_x = (f / 9) as i32 - (t / 9) as i32;
                let dir_y = (t % 9) as i32 - (f % 9) as i32;
                (direction(dir_x, dir_y) + 10 * usize::from(promote)) * 81 + t
            }
            Move::Double { .. } | Move::Line { .. } | Move::Multi { .. } => {
                unreachable!("standard shogi has no moves of several steps")
            }
            Move::Drop { kind, to } => {
                let h = pos.variant().kinds[kind as usize]
                    .hand_index
                    .unwrap_or_else(|| panic!("drop {mv:?}: kind {kind} is never in hand"));
                (20 + self.drop_label[h] as usize) * 81 + dl_square(us, to as usize)
            }
        }
    }

    /// The move at a policy index: for a board move, the nearest piece of the side to move in
    /// the label's direction from the destination. `None` when there is none.
    pub(crate) fn index_to_move(&self, pos: &Position, index: usize) -> Option<Move> {
        let us = pos.side_to_move();
        let (label, t) = (index / 81, index % 81);
        if label >= LABELS {
            return None;
        }
        let to = our_square(us, t) as Square;
        if label >= 20 {
            let kind = self.drop_kind[label - 20];
            return Some(Move::Drop { kind, to });
        }
        let (bx, by, rides) = BACK[label % 10];
        let (mut x, mut y) = ((t / 9) as i8, (t % 9) as i8);
        loop {
            x += bx;
            y += by;
            if !(0..9).contains(&x) || !(0..9).contains(&y) {
                return None;
            }
            let from = our_square(us, x as usize * 9 + y as usize);
            let p = pos.piece_at(from);
            if !p.is_empty() {
                return p.is_color(us).then_some(Move::Normal {
                    from: from as Square,
                    to,
                    promote: label >= 10,
                });
            }
            if !rides {
                return None;
            }
        }
    }

    /// Names of the 119 input planes, in order.
    pub(crate) fn plane_names() -> Vec<String> {
        let mut names = Vec::with_capacity(FEATURES1 + FEATURES2);
        for side in ["own", "opp"] {
            names.extend(PIECE_TYPES.iter().map(|t| format!("{side} {t}")));
            names.extend(PIECE_TYPES.iter().map(|t| format!("{side} attacks of {t}")));
            names.extend((1..=3).map(|k| format!("{side} attackers >= {k}")));
        }
        for side in ["own", "opp"] {
            for (t, planes) in HAND {
                names.extend((1..=planes).map(|k| format!("{side} hand {t} >= {k}")));
            }
        }
        names.push("in check".into());
        names
    }

    /// Names of the 27 policy labels, in order.
    pub(crate) fn label_names() -> Vec<String> {
        let mut names: Vec<String> = DIRECTIONS.iter().map(|d| d.to_string()).collect();
        names.extend(DIRECTIONS.iter().map(|d| format!("{d} promoting")));
        names.extend(DROPS.iter().map(|t| format!("drop {t}")));
        names
    }

    /// Hand kinds in drop label order (SFEN tokens).
    pub(crate) fn drop_tokens() -> Vec<String> {
        DROPS.iter().map(|t| t.to_string()).collect()
    }
}

/// dlshogi's square index of our square `sq`, seen from `us`.
#[inline]
fn dl_square(us: Color, sq: usize) -> usize {
    let (x, y) = (sq % 9, sq / 9);
    let d = (8 - x) * 9 + y;
    match us {
        Color::Sente => d,
        Color::Gote => 80 - d,
    }
}

/// Our square of dlshogi's square index `d` seen from `us` (the inverse of [`dl_square`]).
#[inline]
fn our_square(us: Color, d: usize) -> usize {
    let d = match us {
        Color::Sente => d,
        Color::Gote => 80 - d,
    };
    (d % 9) * 9 + 8 - d / 9
}

/// dlshogi's direction label of a move, from `from - to` in file index and `to - from` in
/// rank index (both in the mover's orientation).
fn direction(dir_x: i32, dir_y: i32) -> usize {
    match (dir_x, dir_y) {
        (0, y) if y < 0 => 0,
        (-1, -2) => 8,
        (1, -2) => 9,
        (x, y) if y < 0 && x < 0 => 1,
        (_, y) if y < 0 => 2,
        (x, 0) if x < 0 => 3,
        (_, 0) => 4,
        (0, _) => 5,
        (x, _) if x < 0 => 6,
        _ => 7,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn squares_round_trip_and_follow_dlshogi() {
        for us in Color::ALL {
            for sq in 0..81 {
                assert_eq!(our_square(us, dl_square(us, sq)), sq);
            }
        }
        // Our square 0 is 9a: file 9, rank a -> dlshogi 72; 1a (our 8) -> 0; 1i (our 80) -> 8.
        assert_eq!(dl_square(Color::Sente, 0), 72);
        assert_eq!(dl_square(Color::Sente, 8), 0);
        assert_eq!(dl_square(Color::Sente, 80), 8);
        assert_eq!(dl_square(Color::Gote, 8), 80);
    }

    #[test]
    fn names_have_the_sizes_of_the_layout() {
        assert_eq!(Dlshogi::plane_names().len(), FEATURES1 + FEATURES2);
        assert_eq!(Dlshogi::label_names().len(), LABELS);
    }

    #[test]
    fn only_standard_shogi_has_the_layout() {
        let shogi = Variant::builtin("shogi").unwrap();
        assert!(Dlshogi::new(&shogi).is_ok());
        let mini = Variant::builtin("minishogi").unwrap();
        assert!(Dlshogi::new(&mini).unwrap_err().contains("5x5"));
    }
}
