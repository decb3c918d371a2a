//! Compound moves (Ko shogi): pieces that move several times in one turn (`repeat`) and pieces
//! that move, then shoot (`shoot`). Such a move ends on one square and takes the enemy pieces on
//! a set of others, besides the one it lands on: [`Move::Multi`] names the set by its index in
//! the variant's [`CompoundTable`], so that a move stays eight bytes and maps to one policy
//! plane. Only variants where royal pieces are captured use them (no check test).

use crate::tables::board_vec;
use crate::types::{Color, Kind, Move, Piece, Square};
use crate::variant::Variant;
use std::collections::HashMap;

/// One move of a compound power, from the owner's point of view (Betza convention: `dy`
/// positive is forward).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Step {
    /// Sideways, positive to the owner's right.
    pub dx: i8,
    /// Forward.
    pub dy: i8,
    /// Squares it may ride (1: a leap; 0: unlimited).
    pub range: u8,
    /// May end on an empty square.
    pub can_move: bool,
    /// May end on an enemy piece, taking it.
    pub can_capture: bool,
}

/// A kind's compound power: `times` of its `steps`, each maybe followed by shots.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Compound {
    /// The moves it repeats (or makes before each shot).
    pub steps: Vec<Step>,
    /// How many moves in one turn (it may stop after any).
    pub times: u8,
    /// Each move keeps to the line of the one before (`repeat.line`).
    pub line: bool,
    /// Shot range along the eight lines; 0 for no shooting.
    pub shot_range: u8,
    /// Shots pass over pieces.
    pub over: bool,
    /// Different pieces each shooting may take.
    pub targets: u8,
}

/// The type of a compound move, relative to its start square: where it ends, and the other
/// squares whose pieces it takes (sorted). In [`CompoundTable::types`] the offsets are sente's
/// view of the board (so a move names its squares without knowing its side); the policy planes
/// use the mover's view.
pub type CompoundType = ((i8, i8), Box<[(i8, i8)]>);

/// Every compound move type a variant's pieces can make, in a fixed order.
#[derive(Clone, Debug, Default)]
pub struct CompoundTable {
    /// The types as sente sees them (sente's moves, and gote's turned round), sorted: grouped
    /// by end offset.
    pub types: Vec<CompoundType>,
    index: HashMap<CompoundType, u32>,
    group_start: HashMap<(i8, i8), u32>,
    /// The types in the mover's view, sorted: one policy plane each.
    pub planes: Vec<CompoundType>,
    plane_index: HashMap<CompoundType, u32>,
}

/// A type turned round: gote's view of a sente-view type, and back.
fn turned(t: &CompoundType) -> CompoundType {
    let neg = |(x, y): (i8, i8)| (-x, -y);
    let mut taken: Vec<_> = t.1.iter().map(|&o| neg(o)).collect();
    taken.sort();
    (neg(t.0), taken.into_boxed_slice())
}

impl CompoundTable {
    /// The table of these types, in the mover's view (deduplicated and sorted here).
    pub(crate) fn new(mut planes: Vec<CompoundType>) -> CompoundTable {
        planes.sort();
        planes.dedup();
        let plane_index = planes
            .iter()
            .enumerate()
            .map(|(i, t)| (t.clone(), i as u32))
            .collect();
        let mut types: Vec<_> = planes.iter().flat_map(|t| [t.clone(), turned(t)]).collect();
        types.sort();
        types.dedup();
        let mut group_start = HashMap::new();
        let mut index = HashMap::with_capacity(types.len());
        for (i, t) in types.iter().enumerate() {
            group_start.entry(t.0).or_insert(i as u32);
            index.insert(t.clone(), i as u32);
        }
        CompoundTable {
            types,
            index,
            group_start,
            planes,
            plane_index,
        }
    }

    /// How many types there are in the mover's view (policy planes).
    pub fn len(&self) -> usize {
        self.planes.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.planes.is_empty()
    }

    /// The index of a sente-view type within the group of its end offset ([`Move::Multi`]'s
    /// `id`).
    pub(crate) fn id_of(&self, t: &CompoundType) -> Option<u16> {
        let i = *self.index.get(t)?;
        u16::try_from(i - self.group_start[&t.0]).ok()
    }

    /// The sente-view type `id` of the group ending at `to`.
    pub fn get(&self, to: (i8, i8), id: u16) -> Option<&CompoundType> {
        let i = *self.group_start.get(&to)? as usize + id as usize;
        self.types.get(i).filter(|t| t.0 == to)
    }

    /// How many types end on one offset at most (ids must fit in 16 bits).
    pub(crate) fn largest_group(&self) -> usize {
        let mut n: HashMap<(i8, i8), usize> = HashMap::new();
        for t in &self.types {
            *n.entry(t.0).or_default() += 1;
        }
        n.into_values().max().unwrap_or(0)
    }
}

/// The main direction of a move: along its longer component (a knight's long leg), or the
/// diagonal when both are equal.
fn main_dir((dx, dy): (i8, i8)) -> (i8, i8) {
    match dx.abs().cmp(&dy.abs()) {
        std::cmp::Ordering::Greater => (dx.signum(), 0),
        std::cmp::Ordering::Less => (0, dy.signum()),
        std::cmp::Ordering::Equal => (dx.signum(), dy.signum()),
    }
}

/// Whether a later move `m` keeps to the line of a `repeat.line` piece: the main direction of
/// the move before, or straight back along it.
fn keeps_line(prev: (i8, i8), m: (i8, i8)) -> bool {
    main_dir(m) == main_dir(prev) || m == (-prev.0, -prev.1)
}

/// The eight lines a shot follows (and `reverts_near` looks along).
pub(crate) const LINES: [(i8, i8); 8] = [
    (0, 1),
    (1, 1),
    (1, 0),
    (1, -1),
    (0, -1),
    (-1, -1),
    (-1, 0),
    (-1, 1),
];

/// Every type the power `c` can make on a board of `files` x `ranks` squares, whatever stands
/// where (a superset of what any position allows).
/// Stops after `budget` types (counted before deduplication), or once `out` holds more than
/// `limit` distinct ones, returning false then: a config whose pieces make more is refused
/// rather than left to run out of memory.
pub(crate) fn enumerate(
    c: &Compound,
    (files, ranks): (u8, u8),
    budget: &mut usize,
    limit: usize,
    out: &mut Vec<CompoundType>,
) -> bool {
    let mut w = Walk {
        c,
        files: files as i32,
        ranks: ranks as i32,
        budget,
        limit,
        out,
    };
    w.go((0, 0), 0, (0, 0), &mut Vec::new());
    *w.budget > 0
}

/// The walk of [`enumerate`]: every square may hold anything.
struct Walk<'a> {
    c: &'a Compound,
    files: i32,
    ranks: i32,
    budget: &'a mut usize,
    limit: usize,
    out: &'a mut Vec<CompoundType>,
}

impl Walk<'_> {
    /// Whether the start, `pts` and `extra` fit on the board together.
    fn fits(&self, pts: &[(i8, i8)], extra: (i8, i8)) -> bool {
        let xs = pts.iter().map(|p| p.0).chain([0, extra.0]);
        let ys = pts.iter().map(|p| p.1).chain([0, extra.1]);
        let (x0, x1) = (xs.clone().min().unwrap_or(0), xs.max().unwrap_or(0));
        let (y0, y1) = (ys.clone().min().unwrap_or(0), ys.max().unwrap_or(0));
        ((x1 - x0) as i32) < self.files && ((y1 - y0) as i32) < self.ranks
    }

    fn emit(&mut self, pos: (i8, i8), takes: &[(i8, i8)]) {
        if *self.budget == 0 {
            return;
        }
        *self.budget -= 1;
        let mut t: Vec<_> = takes.iter().copied().filter(|&s| s != pos).collect();
        t.sort();
        t.dedup();
        self.out.push((pos, t.into_boxed_slice()));
        if self.out.len().is_multiple_of(1 << 18) {
            // Most types repeat: keep the list small on the way, and stop once it is too long.
            self.out.sort();
            self.out.dedup();
            if self.out.len() > self.limit {
                *self.budget = 0;
            }
        }
    }

    fn go(&mut self, pos: (i8, i8), depth: u8, prev: (i8, i8), takes: &mut Vec<(i8, i8)>) {
        if *self.budget == 0 {
            return;
        }
        let c = self.c;
        let reach = self.files.max(self.ranks);
        for s in &c.steps {
            let last = if s.range == 0 { reach } else { s.range as i32 };
            for n in 1..=last {
                let m = ((s.dx as i32 * n) as i8, (s.dy as i32 * n) as i8);
                let sq = (pos.0 + m.0, pos.1 + m.1);
                if !self.fits(takes, sq) {
                    break;
                }
                if c.line && depth > 0 && !keeps_line(prev, m) {
                    continue;
                }
                let empty_now = sq == (0, 0) || takes.contains(&sq);
                if s.can_move {
                    self.land(sq, depth, m, takes);
                }
                if s.can_capture && !empty_now {
                    takes.push(sq);
                    self.land(sq, depth, m, takes);
                    takes.pop();
                }
            }
        }
    }

    fn land(&mut self, sq: (i8, i8), depth: u8, m: (i8, i8), takes: &mut Vec<(i8, i8)>) {
        let c = self.c;
        self.emit(sq, takes);
        if depth + 1 < c.times {
            self.go(sq, depth + 1, m, takes);
        }
        if c.shot_range == 0 {
            return;
        }
        let mut targets = Vec::new();
        for (lx, ly) in LINES {
            for n in 1..=c.shot_range as i8 {
                let t = (sq.0 + lx * n, sq.1 + ly * n);
                if !self.fits(takes, t) {
                    break;
                }
                if t != (0, 0) && !takes.contains(&t) {
                    targets.push(t);
                }
            }
        }
        for_subsets(&targets, c.targets as usize, &mut |shot| {
            let mark = takes.len();
            takes.extend_from_slice(shot);
            self.emit(sq, takes);
            if depth + 1 < c.times {
                self.go(sq, depth + 1, m, takes);
            }
            takes.truncate(mark);
        });
    }
}

/// Calls `f` with every non-empty subset of `items` of at most `most` elements.
fn for_subsets<T: Copy>(items: &[T], most: usize, f: &mut dyn FnMut(&[T])) {
    fn rec<T: Copy>(items: &[T], most: usize, cur: &mut Vec<T>, f: &mut dyn FnMut(&[T])) {
        for (i, &x) in items.iter().enumerate() {
            cur.push(x);
            f(cur);
            if cur.len() < most {
                rec(&items[i + 1..], most, cur, f);
            }
            cur.pop();
        }
    }
    rec(items, most, &mut Vec::new(), f);
}

/// The compound moves of the piece of colour `us` and kind `kind` on `from`, as (end square,
/// squares taken besides it), deduplicated. `board` is the position's board.
pub(crate) fn moves(
    v: &Variant,
    board: &[Piece],
    us: Color,
    kind: Kind,
    from: usize,
    unarmed: bool,
) -> Vec<(usize, Vec<usize>)> {
    let info = &v.kinds[kind as usize];
    let mut g = Gen {
        v,
        us,
        kind,
        board: board.to_vec(),
        unarmed,
        out: Vec::new(),
    };
    g.board[from] = Piece::EMPTY;
    for c in [&info.powers.repeat, &info.powers.shoot]
        .into_iter()
        .flatten()
    {
        g.go(c, from, 0, (0, 0), &mut Vec::new());
    }
    let mut out = g.out;
    for (_, t) in out.iter_mut() {
        t.sort_unstable();
        t.dedup();
    }
    out.sort();
    out.dedup();
    out
}

/// The walk of [`moves`] on a copy of the board.
struct Gen<'a> {
    v: &'a Variant,
    us: Color,
    kind: Kind,
    board: Vec<Piece>,
    unarmed: bool,
    out: Vec<(usize, Vec<usize>)>,
}

impl Gen<'_> {
    fn at(&self, sq: usize, d: (i8, i8), n: i32) -> Option<usize> {
        let (x, y) = self.v.coords(sq);
        let (x, y) = (x as i32 + d.0 as i32 * n, y as i32 + d.1 as i32 * n);
        (x >= 0 && y >= 0 && x < self.v.files as i32 && y < self.v.ranks as i32)
            .then(|| (y * self.v.files as i32 + x) as usize)
    }

    fn emit(&mut self, to: usize, taken: &[usize]) {
        let t = taken.iter().copied().filter(|&s| s != to).collect();
        self.out.push((to, t));
    }

    fn go(&mut self, c: &Compound, pos: usize, depth: u8, prev: (i8, i8), taken: &mut Vec<usize>) {
        let them = self.us.flip();
        let reach = self.v.files.max(self.v.ranks) as i32;
        for s in &c.steps {
            let d = board_vec(self.us, s.dx, s.dy);
            let last = if s.range == 0 { reach } else { s.range as i32 };
            for n in 1..=last {
                let Some(sq) = self.at(pos, d, n) else { break };
                let m = ((s.dx as i32 * n) as i8, (s.dy as i32 * n) as i8);
                let keeps = !c.line || depth == 0 || keeps_line(prev, m);
                let p = self.board[sq];
                if p.is_empty() {
                    if keeps && s.can_move {
                        self.land(c, sq, depth, m, taken);
                    }
                    continue;
                }
                let takes = p.is_color(them)
                    && s.can_capture
                    && !self.unarmed
                    && self.v.displaces(self.kind, p.kind());
                if keeps && takes {
                    self.board[sq] = Piece::EMPTY;
                    taken.push(sq);
                    self.land(c, sq, depth, m, taken);
                    taken.pop();
                    self.board[sq] = p;
                }
                break;
            }
        }
    }

    fn land(&mut self, c: &Compound, sq: usize, depth: u8, m: (i8, i8), taken: &mut Vec<usize>) {
        self.emit(sq, taken);
        if depth + 1 < c.times {
            self.go(c, sq, depth + 1, m, taken);
        }
        if c.shot_range == 0 || self.unarmed {
            return;
        }
        let them = self.us.flip();
        let mut targets = Vec::new();
        for (lx, ly) in LINES {
            for n in 1..=c.shot_range as i32 {
                let Some(t) = self.at(sq, (lx, ly), n) else {
                    break;
                };
                let p = self.board[t];
                if p.is_empty() {
                    continue;
                }
                let far_enough = n >= self.v.kinds[p.kind() as usize].links.shot_from as i32;
                if p.is_color(them) && self.v.shoots(self.kind, p.kind()) && far_enough {
                    targets.push(t);
                }
                if !c.over {
                    break;
                }
            }
        }
        for_subsets(&targets, c.targets as usize, &mut |shot| {
            let mark = taken.len();
            taken.extend_from_slice(shot);
            self.emit(sq, taken);
            if depth + 1 < c.times {
                let saved: Vec<Piece> = shot.iter().map(|&t| self.board[t]).collect();
                for &t in shot {
                    self.board[t] = Piece::EMPTY;
                }
                self.go(c, sq, depth + 1, m, taken);
                for (&t, &p) in shot.iter().zip(&saved) {
                    self.board[t] = p;
                }
            }
            taken.truncate(mark);
        });
    }
}

impl Variant {
    /// The offset from `from` to `to` as sente sees the board (forward is up).
    pub(crate) fn sente_offset(&self, from: usize, to: usize) -> (i8, i8) {
        self.owner_offset(Color::Sente, from, to)
    }

    /// The owner's-view offset from `from` to `to` of a piece of colour `c`.
    pub(crate) fn owner_offset(&self, c: Color, from: usize, to: usize) -> (i8, i8) {
        let ((fx, fy), (tx, ty)) = (self.coords(from), self.coords(to));
        board_vec(
            c,
            (tx as i32 - fx as i32) as i8,
            (ty as i32 - fy as i32) as i8,
        )
    }

    /// The square `off` (sente's view) away from `from`, if on the board.
    pub(crate) fn sente_square(&self, from: usize, off: (i8, i8)) -> Option<usize> {
        let (dx, dy) = board_vec(Color::Sente, off.0, off.1);
        let (x, y) = self.coords(from);
        let (x, y) = (x as i32 + dx as i32, y as i32 + dy as i32);
        (x >= 0 && y >= 0 && x < self.files as i32 && y < self.ranks as i32)
            .then(|| (y * self.files as i32 + x) as usize)
    }

    /// The compound move from `from` to `to` taking the pieces on `taken` (besides `to`), if
    /// its type is one of the variant's.
    pub fn compound_move(&self, from: usize, to: usize, taken: &[usize]) -> Option<Move> {
        let mut t: Vec<_> = taken
            .iter()
            .filter(|&&s| s != to)
            .map(|&s| self.sente_offset(from, s))
            .collect();
        t.sort();
        t.dedup();
        let key = (self.sente_offset(from, to), t.into_boxed_slice());
        let id = self.compound.id_of(&key)?;
        Some(Move::Multi {
            from: from as Square,
            to: to as Square,
            id,
        })
    }

    /// The sente-view type of a compound move.
    fn compound_type(&self, mv: Move) -> Option<&CompoundType> {
        let Move::Multi { from, to, id } = mv else {
            return None;
        };
        self.compound
            .get(self.sente_offset(from as usize, to as usize), id)
    }

    /// The squares a compound move takes besides its end square (sorted).
    pub fn compound_taken(&self, mv: Move) -> Vec<usize> {
        let Some(t) = self.compound_type(mv) else {
            return Vec::new();
        };
        let from = mv.from().unwrap_or(0);
        let mut out: Vec<_> =
            t.1.iter()
                .filter_map(|&o| self.sente_square(from, o))
                .collect();
        out.sort_unstable();
        out
    }

    /// The policy plane (index into [`CompoundTable::planes`]) of a compound move of `c`.
    pub fn compound_plane(&self, c: Color, mv: Move) -> Option<usize> {
        let t = self.compound_type(mv)?;
        let own = match c {
            Color::Sente => t.clone(),
            Color::Gote => turned(t),
        };
        self.compound.plane_index.get(&own).map(|&i| i as usize)
    }

    /// The compound move of `c` from `from` of the policy plane `plane`, if it stays on the
    /// board.
    pub fn compound_from_plane(&self, c: Color, from: usize, plane: usize) -> Option<Move> {
        let own = self.compound.planes.get(plane)?;
        let t = match c {
            Color::Sente => own.clone(),
            Color::Gote => turned(own),
        };
        let to = self.sente_square(from, t.0)?;
        if t.1.iter().any(|&o| self.sente_square(from, o).is_none()) {
            return None;
        }
        let id = self.compound.id_of(&t)?;
        Some(Move::Multi {
            from: from as Square,
            to: to as Square,
            id,
        })
    }

    /// The policy plane of the mirror image (files swapped) of the compound type of plane
    /// `plane`, if the variant has it.
    pub fn compound_mirror_plane(&self, plane: usize) -> Option<usize> {
        let (end, taken) = self.compound.planes.get(plane)?;
        let mut t: Vec<_> = taken.iter().map(|&(x, y)| (-x, y)).collect();
        t.sort();
        let key = ((-end.0, end.1), t.into_boxed_slice());
        self.compound.plane_index.get(&key).map(|&i| i as usize)
    }

    /// A move turned half round (the other side's view of it: each square to its image under
    /// a half turn of the board), its compound type turned too.
    pub fn turned_move(&self, mv: Move) -> Move {
        let n = self.num_squares();
        let m = mv.map_squares(|sq| (n - 1 - sq as usize) as Square);
        let (Some(t), Move::Multi { from, to, .. }) = (self.compound_type(mv), m) else {
            return m;
        };
        match self.compound.id_of(&turned(t)) {
            Some(id) => Move::Multi { from, to, id },
            None => m,
        }
    }

    /// The mirror image (files swapped) of a compound move's type, as a move.
    pub(crate) fn mirror_compound(&self, mirrored: Move, original: Move) -> Move {
        let (Some(t), Move::Multi { from, to, .. }) = (self.compound_type(original), mirrored)
        else {
            return mirrored;
        };
        let mut taken: Vec<_> = t.1.iter().map(|&(x, y)| (-x, y)).collect();
        taken.sort();
        let key = ((-t.0 .0, t.0 .1), taken.into_boxed_slice());
        match self.compound.id_of(&key) {
            Some(id) => Move::Multi { from, to, id },
            None => mirrored,
        }
    }

    /// Whether the piece of `kind` may take one of `victim` by moving onto it.
    #[inline]
    pub(crate) fn displaces(&self, kind: Kind, victim: Kind) -> bool {
        let k = &self.kinds[kind as usize];
        !k.links.spares.contains(&victim)
            && k.links
                .displaces_only
                .as_ref()
                .is_none_or(|o| o.contains(&victim))
    }

    /// Whether the piece of `kind` may shoot one of `victim`.
    #[inline]
    pub(crate) fn shoots(&self, kind: Kind, victim: Kind) -> bool {
        !self.kinds[kind as usize].links.spares.contains(&victim)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn subsets_of_at_most_two() {
        let mut seen = Vec::new();
        for_subsets(&[1, 2, 3], 2, &mut |s| seen.push(s.to_vec()));
        assert_eq!(
            seen,
            vec![
                vec![1],
                vec![1, 2],
                vec![1, 3],
                vec![2],
                vec![2, 3],
                vec![3]
            ]
        );
    }

    #[test]
    fn line_rule_follows_the_move_before() {
        // After a knight's leap (1, 2): forward again, or straight back.
        assert!(keeps_line((1, 2), (-1, 2)));
        assert!(keeps_line((1, 2), (-1, -2)));
        assert!(!keeps_line((1, 2), (1, -2)));
        assert!(!keeps_line((1, 2), (2, 1)));
        // A step back, then on backwards.
        assert!(keeps_line((0, -1), (0, -1)));
    }
}
