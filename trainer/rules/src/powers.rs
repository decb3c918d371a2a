//! Powers beyond Betza moves, for the large variants (Tenjiku shogi): range captures by rank,
//! rides that skip their first square, area moves, hook moves, and burning. None of this runs for a
//! variant without such a piece; it is written for clarity, not speed.

use crate::bitset::SquareSet;
use crate::position::Position;
use crate::tables::board_vec;
use crate::types::{Color, Kind, Piece, Square};
use crate::variant::{Variant, CAPTURE, MOVE};

/// The square `n` steps of the board vector `d` away from `sq`, if on the board.
#[inline]
fn step(v: &Variant, sq: usize, d: (i8, i8), n: i32) -> Option<usize> {
    let (x, y) = v.coords(sq);
    let (x, y) = (x as i32 + d.0 as i32 * n, y as i32 + d.1 as i32 * n);
    (x >= 0 && y >= 0 && x < v.files as i32 && y < v.ranks as i32)
        .then(|| (y * v.files as i32 + x) as usize)
}

/// The squares around `sq`.
pub(crate) fn neighbours(v: &Variant, sq: usize) -> impl Iterator<Item = usize> + '_ {
    const KING: [(i8, i8); 8] = [
        (-1, -1),
        (0, -1),
        (1, -1),
        (-1, 0),
        (1, 0),
        (-1, 1),
        (0, 1),
        (1, 1),
    ];
    KING.into_iter().filter_map(move |d| step(v, sq, d, 1))
}

/// The rank a range capture compares: royal pieces outrank every other.
fn rank_of(v: &Variant, p: Piece) -> u8 {
    let info = &v.kinds[p.kind() as usize];
    if info.royal {
        u8::MAX
    } else {
        info.powers.rank
    }
}

/// Where the powers of a piece of colour `c` moving as kind `k` from `from` take it on
/// `board`: range captures beyond at least one jumped piece, rides skipping their first
/// square, and area moves. `unarmed`: no captures.
pub(crate) fn power_targets(
    v: &Variant,
    board: &[Piece],
    c: Color,
    k: Kind,
    from: usize,
    unarmed: bool,
) -> SquareSet {
    let powers = &v.kinds[k as usize].powers;
    let mut out = SquareSet::EMPTY;
    let them = c.flip();
    for &(dx, dy) in &powers.range_capture {
        let d = board_vec(c, dx, dy);
        let mut jumped = 0;
        for n in 1.. {
            let Some(t) = step(v, from, d, n) else { break };
            let p = board[t];
            if p.is_empty() {
                // A sweep may end beyond the pieces it takes.
                if powers.sweep && jumped > 0 && !unarmed {
                    out.insert(t);
                }
                continue;
            }
            if jumped > 0 && p.is_color(them) && !unarmed {
                out.insert(t);
            }
            if rank_of(v, p) >= powers.rank {
                break;
            }
            jumped += 1;
        }
    }
    let takes = (!unarmed).then_some(them);
    for &(dx, dy, first, range) in &powers.skip_first {
        let last = if range == 0 { i32::MAX } else { range as i32 };
        ride(
            v,
            board,
            from,
            board_vec(c, dx, dy),
            first as i32..=last,
            takes,
            &mut out,
        );
    }
    for &(dx, dy) in &powers.hook {
        let d = board_vec(c, dx, dy);
        for n in 1.. {
            let Some(t) = step(v, from, d, n) else { break };
            let p = board[t];
            if !p.is_empty() {
                if p.is_color(them) && !unarmed {
                    out.insert(t);
                }
                break;
            }
            out.insert(t);
            // The turn: a ride at right angles from this empty square.
            for turn in [(-d.1, d.0), (d.1, -d.0)] {
                ride(v, board, t, turn, 1..=i32::MAX, takes, &mut out);
            }
        }
    }
    if powers.anywhere {
        let mut guard = Guard::new(v, board, Piece::new(c, k), from);
        for t in (0..v.n).filter(|&t| t != from) {
            let p = board[t];
            if p.is_empty() || (p.is_color(them) && !unarmed && !guard.protected(board, t)) {
                out.insert(t);
            }
        }
    }
    if powers.area > 0 {
        // Breadth first through empty squares; an enemy piece ends a path.
        let mut seen = SquareSet::EMPTY;
        seen.insert(from);
        let mut frontier = vec![from];
        for _ in 0..powers.area {
            let mut next = Vec::new();
            for &s in &frontier {
                for t in neighbours(v, s) {
                    if seen.contains(t) {
                        continue;
                    }
                    seen.insert(t);
                    let p = board[t];
                    if p.is_empty() {
                        out.insert(t);
                        next.push(t);
                    } else if p.is_color(them) && !unarmed {
                        out.insert(t);
                    }
                }
            }
            frontier = next;
        }
    }
    out
}

/// Whether the piece on `to` would be protected against `mover` (a piece with `leap_anywhere`)
/// taking it from `from`: with `mover` there, a piece of the other side attacks `to`, or the
/// other side has a piece with `leap_anywhere` and `mover` would stand unprotected on `to`.
/// Attacks by `leap_anywhere` pieces themselves are left out of both tests (they are the
/// second condition), so the test does not recurse.
fn protected(v: &Variant, board: &[Piece], mover: Piece, from: usize, to: usize) -> bool {
    Guard::new(v, board, mover, from).protected(board, to)
}

/// [`protected`] for one leaper on `from` and any number of targets: the boards it tests are
/// built once (a Tai shogi emperor tests every enemy piece).
struct Guard<'a> {
    v: &'a Variant,
    mover: Piece,
    /// The board without the leaper, the other side's leapers recoloured (standing in as
    /// pieces of the leaper's side, so that they block but do not attack).
    them_view: Vec<Piece>,
    /// The board without the leaper, its own side's leapers recoloured.
    us_view: Vec<Piece>,
    /// How many leapers the other side has on the board.
    their_leapers: usize,
}

impl<'a> Guard<'a> {
    fn new(v: &'a Variant, board: &[Piece], mover: Piece, from: usize) -> Guard<'a> {
        let (us, them) = (mover.color(), mover.color().flip());
        let recoloured = |c: Color| {
            let mut b = board.to_vec();
            b[from] = Piece::EMPTY;
            for p in b.iter_mut().filter(|p| is_leaper(v, **p, c)) {
                *p = Piece::new(c.flip(), p.kind());
            }
            b
        };
        Guard {
            v,
            mover,
            them_view: recoloured(them),
            us_view: recoloured(us),
            their_leapers: board.iter().filter(|&&p| is_leaper(v, p, them)).count(),
        }
    }

    /// Whether the piece on `to` (of `board`, the board the guard was built from) is protected.
    fn protected(&mut self, board: &[Piece], to: usize) -> bool {
        let (us, them) = (self.mover.color(), self.mover.color().flip());
        let attacked = crate::position::attacked::<Square, [Piece]>;
        let saved = std::mem::replace(&mut self.them_view[to], self.mover);
        let hit = attacked(self.v, &self.them_view, to, them);
        self.them_view[to] = saved;
        if hit {
            return true;
        }
        // The other side's leapers guard `to` unless the mover takes the last of them.
        if self.their_leapers == usize::from(is_leaper(self.v, board[to], them)) {
            return false;
        }
        let stand_in = Piece::new(them, self.mover.kind());
        let saved = std::mem::replace(&mut self.us_view[to], stand_in);
        let guarded = attacked(self.v, &self.us_view, to, us);
        self.us_view[to] = saved;
        !guarded
    }
}

/// Whether `p` is a piece of `c` with `leap_anywhere`.
fn is_leaper(v: &Variant, p: Piece, c: Color) -> bool {
    p.is_color(c) && v.kinds[p.kind() as usize].powers.anywhere
}

/// Adds the squares of a ride from `from` along the board vector `d`, at the distances `span`:
/// empty squares, and the first piece if it is of the colour `takes`.
fn ride(
    v: &Variant,
    board: &[Piece],
    from: usize,
    d: (i8, i8),
    span: std::ops::RangeInclusive<i32>,
    takes: Option<Color>,
    out: &mut SquareSet,
) {
    for n in span {
        let Some(t) = step(v, from, d, n) else { break };
        let p = board[t];
        if p.is_empty() {
            out.insert(t);
            continue;
        }
        if takes.is_some_and(|c| p.is_color(c)) {
            out.insert(t);
        }
        break;
    }
}

/// Every square a piece of colour `c` moving as kind `k` from `from` can end a move on
/// (moves and captures alike), for burning.
fn destinations(v: &Variant, board: &[Piece], c: Color, k: Kind, from: usize) -> SquareSet {
    let mut out = power_targets(v, board, c, k, from, false);
    let them = c.flip();
    let ok = |t: Piece, mode: u8| match t.is_empty() {
        true => mode & MOVE != 0,
        false => t.is_color(them) && mode & CAPTURE != 0,
    };
    for &(to, mode) in v.leaps_of(c, k, from) {
        if ok(board[to as usize], mode) {
            out.insert(to as usize);
        }
    }
    for r in &v.rays[v.ck(c, k)] {
        let mut hops = 0usize;
        for (i, &to) in v.ray(from, r.dir as usize).iter().enumerate() {
            if i >= r.max_range as usize {
                break;
            }
            let t = board[to as usize];
            if t.is_empty() {
                if i < r.move_range[hops] as usize {
                    out.insert(to as usize);
                }
                continue;
            }
            if t.is_color(them) && i < r.cap_range[hops] as usize {
                out.insert(to as usize);
            }
            hops += 1;
            if hops > r.max_hop as usize {
                break;
            }
        }
    }
    for &(d1, captures, d2) in v.legs_of(c, k) {
        let Some(via) = step(v, from, d1, 1) else {
            continue;
        };
        let first_ok = match captures {
            true => board[via].is_color(them),
            false => board[via].is_empty(),
        };
        if let (true, Some(to)) = (first_ok, step(v, via, d2, 1)) {
            if to == from || board[to].is_empty() || board[to].is_color(them) {
                out.insert(to);
            }
        }
    }
    out
}

/// Whether a piece of `by` attacks `sq` through its powers: a range capture, a skipping ride
/// or an area move onto it, a burn after a move next to it, or (with passive burning) standing
/// next to it, so that a piece arriving on `sq` burns.
#[cold]
#[inline(never)]
pub(crate) fn power_attacked(v: &Variant, board: &[Piece], sq: usize, by: Color) -> bool {
    (0..v.n).any(|s| {
        let p = board[s];
        if !p.is_color(by) {
            return false;
        }
        let powers = &v.kinds[p.kind() as usize].powers;
        if powers.anywhere {
            // It takes what stands on `sq` (or goes there) unless that is protected.
            return s != sq && !protected(v, board, p, s, sq);
        }
        if powers.moves() && power_targets(v, board, by, p.kind(), s, false).contains(sq) {
            return true;
        }
        if !powers.burn {
            return false;
        }
        if v.passive_burn && neighbours(v, s).any(|t| t == sq) {
            return true;
        }
        let around: SquareSet = {
            let mut a = SquareSet::EMPTY;
            neighbours(v, sq).for_each(|t| a.insert(t));
            a
        };
        !destinations(v, board, by, p.kind(), s)
            .and(around)
            .is_empty()
    })
}

impl Position {
    /// Burns after the piece now on `to` moved there: every enemy piece around it if it burns,
    /// then the mover itself if it stands next to an enemy burning piece (passive burning).
    /// Returns how many pieces were taken (pushed on `side_captured`).
    pub(crate) fn burns(&mut self, to: usize) -> u8 {
        let v = self.variant.clone();
        let mover = self.board[to];
        if mover.is_empty() {
            return 0;
        }
        let (us, them) = (mover.color(), mover.color().flip());
        let mut taken = 0u8;
        if v.kinds[mover.kind() as usize].powers.burn {
            for t in neighbours(&v, to) {
                if self.board[t].is_color(them) {
                    let p = self.take(t);
                    self.add_to_hand(us, p);
                    self.side_captured.push((t as Square, p));
                    taken += 1;
                }
            }
        }
        let burner = |p: Piece| p.is_color(them) && v.kinds[p.kind() as usize].powers.burn;
        if v.passive_burn && neighbours(&v, to).any(|t| burner(self.board[t])) {
            let p = self.take(to);
            self.add_to_hand(them, p);
            self.side_captured.push((to as Square, p));
            taken += 1;
        }
        taken
    }
}
