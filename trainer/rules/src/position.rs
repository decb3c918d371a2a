//! `Position`: board, hands, side to move, history; make/unmake and attack detection.

use crate::bitset::SquareSet;
use crate::powers::power_attacked;
use crate::types::{Color, Kind, Move, Piece, Square};
use crate::values::PromotionMode;
use crate::variant::{RayMove, SquareIndex, Variant, CAPTURE, MAX_SQUARES};
use std::sync::Arc;

/// Most kinds a hand can hold.
pub const MAX_HAND_KINDS: usize = 32;

/// What `unmake_move` needs to restore a position.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Undo {
    pub mv: Move,
    pub captured: Piece,
    /// What the first step of a two-step move captured.
    pub captured_via: Piece,
    pub moved: Piece,
    /// Pieces taken by custodian capture: the last this many entries of `side_captures`.
    pub side_captures: u8,
    pub hash: u64,
}

/// Marks an entry of `side_captured` as a piece that turned over in place, not a capture
/// (squares are below 1,296).
const CHANGED: Square = 0x8000;

/// One position of the game so far, for repetition rules.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct HistoryEntry {
    pub hash: u64,
    pub in_check: bool,
}

/// A position of a variant, with the history of the game that led to it.
#[derive(Clone)]
pub struct Position {
    pub(crate) variant: Arc<Variant>,
    pub(crate) board: Board<BOARD_CAP>,
    pub(crate) occ: [SquareSet; 2],
    pub(crate) hands: [[u8; MAX_HAND_KINDS]; 2],
    pub(crate) side: Color,
    /// The royal piece's square while a side has exactly one (the one it must keep safe).
    pub(crate) king: [Option<Square>; 2],
    /// Royal pieces of each side on the board.
    pub(crate) royals: [u8; 2],
    pub(crate) hash: u64,
    /// Move number of the start position (SFEN field 4).
    pub(crate) start_move_number: u32,
    /// At the start position, the square of a Lion just taken by a non-Lion (the counter-strike
    /// rule; later it follows from the last move).
    pub(crate) start_counter_strike: Option<Square>,
    pub(crate) history: Vec<HistoryEntry>,
    pub(crate) undo: Vec<Undo>,
    /// Squares and pieces taken by custodian capture, for every move in `undo`.
    pub(crate) side_captured: Vec<(Square, Piece)>,
}

impl std::fmt::Debug for Position {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Position({})", self.to_sfen())
    }
}

impl Position {
    /// The variant's start position.
    pub fn start(variant: Arc<Variant>) -> Position {
        let sfen = variant.start_sfen.clone();
        Position::from_sfen_with(variant, &sfen).expect("start position checked at compile time")
    }

    /// An empty board, sente to move, no hands (for building positions in code).
    pub(crate) fn empty(variant: Arc<Variant>) -> Position {
        Position {
            variant,
            board: Board([Piece::EMPTY; BOARD_CAP]),
            occ: [SquareSet::EMPTY; 2],
            hands: [[0; MAX_HAND_KINDS]; 2],
            side: Color::Sente,
            king: [None; 2],
            royals: [0; 2],
            hash: 0,
            start_move_number: 1,
            start_counter_strike: None,
            history: Vec::new(),
            undo: Vec::new(),
            side_captured: Vec::new(),
        }
    }

    /// The variant.
    pub fn variant(&self) -> &Arc<Variant> {
        &self.variant
    }

    /// Side to move.
    #[inline(always)]
    pub fn side_to_move(&self) -> Color {
        self.side
    }

    /// The piece on a square.
    #[inline(always)]
    pub fn piece_at(&self, sq: usize) -> Piece {
        self.board[sq]
    }

    /// Pieces of `kind` in `color`'s hand (0 for kinds never in hand).
    pub fn hand_count(&self, color: Color, kind: Kind) -> u8 {
        match self.variant.kinds[kind as usize].hand_index {
            Some(h) => self.hands[color.index()][h],
            None => 0,
        }
    }

    /// Squares occupied by `color`.
    pub fn occupied_by(&self, color: Color) -> SquareSet {
        self.occ[color.index()]
    }

    /// The royal piece's square, if the side has exactly one (with several, none of them must
    /// be kept out of check).
    pub fn king_square(&self, color: Color) -> Option<usize> {
        self.king[color.index()].map(|s| s as usize)
    }

    /// Zobrist hash of board, hands and side to move.
    #[inline(always)]
    pub fn hash(&self) -> u64 {
        self.hash
    }

    /// Plies played since the start position.
    pub fn ply(&self) -> usize {
        self.history.len() - 1
    }

    /// Move number in SFEN terms (1 for the first move of the game).
    pub fn move_number(&self) -> u32 {
        self.start_move_number + self.ply() as u32
    }

    /// Moves played since the start position, oldest first.
    pub fn moves_played(&self) -> impl Iterator<Item = Move> + '_ {
        self.undo.iter().map(|u| u.mv)
    }

    /// Whether the side to move is in check.
    #[inline(always)]
    pub fn in_check(&self) -> bool {
        self.history.last().is_some_and(|h| h.in_check)
    }

    pub(crate) fn compute_in_check(&self) -> bool {
        let them = self.side.flip();
        match self.king[self.side.index()] {
            // Pieces of a side whose royal piece is still in hand give no check (Unashogi).
            Some(k) => {
                self.is_attacked(k as usize, them)
                    && !(self.variant.unarmed_until_royal && self.royals[them.index()] == 0)
            }
            None => false,
        }
    }

    /// Recomputes the hash from scratch (used after building a position).
    pub(crate) fn full_hash(&self) -> u64 {
        let v = &*self.variant;
        let mut h = 0;
        for sq in 0..v.n {
            h ^= v.zb(sq, self.board[sq]);
        }
        for c in Color::ALL {
            for i in 0..v.hand_kinds.len() {
                h ^= v.zh(c, i, self.hands[c.index()][i]);
            }
        }
        if self.side == Color::Gote {
            h ^= v.z_side;
        }
        h
    }

    #[inline(always)]
    pub(crate) fn put(&mut self, sq: usize, p: Piece) {
        self.board[sq] = p;
        self.occ[p.color().index()].insert(sq);
        self.hash ^= self.variant.zb(sq, p);
        if self.variant.kinds[p.kind() as usize].royal {
            let c = p.color().index();
            self.royals[c] += 1;
            self.king[c] = (self.royals[c] == 1).then_some(sq as Square);
        }
    }

    /// Royal pieces of `color` on the board.
    pub fn royal_count(&self, color: Color) -> usize {
        self.royals[color.index()] as usize
    }

    #[inline(always)]
    pub(crate) fn take(&mut self, sq: usize) -> Piece {
        let p = self.board[sq];
        self.board[sq] = Piece::EMPTY;
        self.occ[p.color().index()].remove(sq);
        self.hash ^= self.variant.zb(sq, p);
        if self.variant.kinds[p.kind() as usize].royal {
            let c = p.color().index();
            self.royals[c] -= 1;
            self.king[c] = None;
            if self.royals[c] == 1 {
                // Down to one royal piece (only with several royals): it is the one to guard.
                let v = &self.variant;
                self.king[c] = self.occ[c]
                    .iter()
                    .find(|&s| v.kinds[self.board[s].kind() as usize].royal)
                    .map(|s| s as Square);
            }
        }
        p
    }

    #[inline(always)]
    fn set_hand(&mut self, c: Color, h: usize, count: u8) {
        let v = &*self.variant;
        let old = self.hands[c.index()][h];
        self.hash ^= v.zh(c, h, old) ^ v.zh(c, h, count);
        self.hands[c.index()][h] = count;
    }

    /// A captured piece goes to `us`'s hand (as its unpromoted kind), if the variant has drops.
    #[inline(always)]
    pub(crate) fn add_to_hand(&mut self, us: Color, cap: Piece) {
        let v = &self.variant;
        let demoted = v.kinds[cap.kind() as usize].captured_as;
        if let Some(h) = v.kinds[demoted as usize].hand_index {
            let n = self.hands[us.index()][h];
            // SFEN parsing caps every kind's total at 255, so this cannot overflow.
            self.set_hand(us, h, n + 1);
        }
    }

    /// Undoes [`Position::add_to_hand`] (the hash is restored separately).
    #[inline(always)]
    fn take_from_hand(&mut self, us: Color, cap: Piece) {
        let v = &self.variant;
        let demoted = v.kinds[cap.kind() as usize].captured_as;
        if let Some(h) = v.kinds[demoted as usize].hand_index {
            let n = self.hands[us.index()][h];
            self.hands[us.index()][h] = n.saturating_sub(1);
        }
    }

    /// Takes the piece on `sq`, if any, into `us`'s hand (a capture by a move's step), and
    /// returns it (empty when there was none).
    #[inline(always)]
    fn capture_on(&mut self, us: Color, sq: usize) -> Piece {
        let p = self.board[sq];
        if !p.is_empty() {
            self.take(sq);
            self.add_to_hand(us, p);
        }
        p
    }

    /// What the non-royal piece `p` becomes for taking one of `victims` that is contagious
    /// (`pieces[].contagious`), if any.
    #[inline(always)]
    fn contagion(&self, p: Piece, victims: [Piece; 3]) -> Option<Piece> {
        let v = &self.variant;
        if !v.has_contagion || v.kinds[p.kind() as usize].royal {
            return None;
        }
        let caught = victims.iter().filter(|x| !x.is_empty());
        let k = caught
            .filter_map(|x| v.kinds[x.kind() as usize].contagion)
            .next()?;
        Some(Piece::new(p.color(), k))
    }

    /// The piece `p` that just moved as it lands: promoted if the variant promotes by capture
    /// (`promotion.moves = "capture"`), the move took a piece (`took`) and `p` can promote.
    #[inline(always)]
    fn promoted_by_capture(&self, p: Piece, took: bool) -> Piece {
        let v = &self.variant;
        match (
            v.promote_by_capture && took,
            v.kinds[p.kind() as usize].promotes_to,
        ) {
            (true, Some(k)) => Piece::new(p.color(), k),
            _ => p,
        }
    }

    /// Plays a move (assumed legal; generate it with `legal_moves` or parse it with
    /// `parse_usi`). Undo with [`Position::unmake_move`].
    pub fn make_move(&mut self, mv: Move) {
        let us = self.side;
        let hash = self.hash;
        let mut captured_via = Piece::EMPTY;
        let mut line_captures = 0u8;
        let (captured, moved) = match mv {
            Move::Normal { from, to, promote } => {
                let (from, to) = (from as usize, to as usize);
                let p = self.take(from);
                if self.variant.has_sweeps {
                    line_captures = self.sweep(p, from, to);
                }
                let cap = self.board[to];
                if !cap.is_empty() {
                    self.take(to);
                    self.add_to_hand(us, cap);
                }
                let v = &self.variant;
                let np = if let Some(q) = self.contagion(p, [cap, Piece::EMPTY, Piece::EMPTY]) {
                    q
                } else if v.has_capture_promotions && self.captor_promotes(p, &[cap]) {
                    self.promoted(p)
                } else if v.promote_by_capture {
                    self.promoted_by_capture(p, !cap.is_empty() || line_captures > 0)
                } else if promote {
                    let pk = v.kinds[p.kind() as usize].promotes_to.unwrap_or(p.kind());
                    Piece::new(us, pk)
                } else if let Some(f) = v.flips_to(p.kind()) {
                    // A flipping piece turns over on every move (or every capture).
                    match !v.flip_on_capture || !cap.is_empty() {
                        true => Piece::new(us, f),
                        false => p,
                    }
                } else {
                    p
                };
                self.put(to, np);
                (cap, p)
            }
            Move::Double { from, via, to } => {
                let (from, via, to) = (from as usize, via as usize, to as usize);
                let p = self.take(from);
                captured_via = self.capture_on(us, via);
                // `to` may be `from` (now empty): a capture without moving, or a pass.
                let cap = self.capture_on(us, to);
                let took = !cap.is_empty() || !captured_via.is_empty();
                let lands = match self.contagion(p, [cap, captured_via, Piece::EMPTY]) {
                    Some(q) => q,
                    None if self.variant.has_capture_promotions
                        && self.captor_promotes(p, &[cap, captured_via]) =>
                    {
                        self.promoted(p)
                    }
                    None => self.promoted_by_capture(p, took),
                };
                self.put(to, lands);
                (cap, p)
            }
            Move::Line { from, to } => {
                let (from, to) = (from as usize, to as usize);
                let [v1, v2] = Move::line_vias(from as Square, to as Square);
                let p = self.take(from);
                captured_via = self.capture_on(us, v1);
                // The second piece taken on the way is undone with the side captures.
                let second = self.capture_on(us, v2);
                if !second.is_empty() {
                    self.side_captured.push((v2 as Square, second));
                    line_captures = 1;
                }
                let cap = self.capture_on(us, to);
                let took = !cap.is_empty() || !captured_via.is_empty() || line_captures > 0;
                let lands = match self.contagion(p, [cap, captured_via, second]) {
                    Some(q) => q,
                    None if self.variant.has_capture_promotions
                        && self.captor_promotes(p, &[cap, captured_via, second]) =>
                    {
                        self.promoted(p)
                    }
                    None => self.promoted_by_capture(p, took),
                };
                self.put(to, lands);
                (cap, p)
            }
            Move::Multi { from, to, .. } => {
                let (cap, moved, taken) = self.make_multi(mv, from as usize, to as usize);
                line_captures = taken;
                (cap, moved)
            }
            Move::Drop { kind, to } => {
                let h = self.variant.hand_index_of(kind).unwrap_or(0);
                let n = self.hands[us.index()][h];
                self.set_hand(us, h, n.saturating_sub(1));
                let p = Piece::new(us, kind);
                self.put(to as usize, p);
                (Piece::EMPTY, p)
            }
        };
        let mut side_captures = line_captures
            + match self.variant.custodian || self.variant.has_burns {
                true => self.side_effects(mv.to()),
                false => 0,
            };
        if self.variant.has_fates {
            side_captures += self.fates(moved, mv.to(), captured, captured_via, side_captures);
        }
        self.side = us.flip();
        self.hash ^= self.variant.z_side;
        self.undo.push(Undo {
            mv,
            captured,
            captured_via,
            moved,
            side_captures,
            hash,
        });
        let in_check = self.compute_in_check();
        self.history.push(HistoryEntry {
            hash: self.hash,
            in_check,
        });
    }

    /// Takes back the last move made with [`Position::make_move`]. Does nothing at the start.
    pub fn unmake_move(&mut self) {
        let Some(u) = self.undo.pop() else { return };
        self.history.pop();
        self.side = self.side.flip();
        let us = self.side;
        for _ in 0..u.side_captures {
            if let Some((sq, p)) = self.side_captured.pop() {
                if sq & CHANGED != 0 {
                    // A piece that turned over in place (`promotes_with`, `reverts_near`,
                    // `promotion_effects`): the piece it was goes back.
                    let sq = (sq & !CHANGED) as usize;
                    self.take(sq);
                    self.put(sq, p);
                    continue;
                }
                // The capturer is the other side (a passive burn takes the mover itself).
                self.take_from_hand(p.color().flip(), p);
                self.put(sq as usize, p);
            }
        }
        match u.mv {
            Move::Normal { from, to, .. }
            | Move::Double { from, to, .. }
            | Move::Line { from, to }
            | Move::Multi { from, to, .. } => {
                let (from, to) = (from as usize, to as usize);
                self.take(to);
                if !u.captured.is_empty() {
                    self.take_from_hand(us, u.captured);
                    self.put(to, u.captured);
                }
                if let (Some(via), false) = (u.mv.via(), u.captured_via.is_empty()) {
                    self.take_from_hand(us, u.captured_via);
                    self.put(via, u.captured_via);
                }
                self.put(from, u.moved);
            }
            Move::Drop { kind, to } => {
                self.take(to as usize);
                if let Some(h) = self.variant.hand_index_of(kind) {
                    self.hands[us.index()][h] += 1;
                }
            }
        }
        self.hash = u.hash;
    }

    /// Plays the board part of a compound move: the pieces it takes besides its end square go
    /// on `side_captured`. Returns what it took on `to`, the piece that moved, and how many
    /// pieces it took elsewhere.
    #[cold]
    #[inline(never)]
    fn make_multi(&mut self, mv: Move, from: usize, to: usize) -> (Piece, Piece, u8) {
        let us = self.side;
        let v = self.variant.clone();
        let p = self.take(from);
        let mut victims = Vec::new();
        for sq in v.compound_taken(mv) {
            let q = self.capture_on(us, sq);
            if !q.is_empty() {
                self.side_captured.push((sq as Square, q));
                victims.push(q);
            }
        }
        let taken = victims.len() as u8;
        let cap = self.capture_on(us, to);
        if !cap.is_empty() {
            victims.push(cap);
        }
        let info = &v.kinds[p.kind() as usize];
        let three = [0, 1, 2].map(|i| victims.get(i).copied().unwrap_or(Piece::EMPTY));
        // Promotion: by a contagious victim, a victim that promotes the captor, any capture
        // (`promotion.moves = "capture"`), or a forced promotion by the zone rule.
        let zone = &v.zone[us.index()];
        let (f, t) = (zone.contains(from), zone.contains(to));
        let by_zone = match v.promotion_entering {
            false => f || t,
            true => (t && !f) || (f && !victims.is_empty()),
        };
        let lands = if let Some(q) = self.contagion(p, three) {
            q
        } else if v.has_capture_promotions && self.captor_promotes(p, &victims) {
            self.promoted(p)
        } else if v.promote_by_capture {
            self.promoted_by_capture(p, !victims.is_empty())
        } else if info.promotion == PromotionMode::Forced && by_zone {
            self.promoted(p)
        } else {
            p
        };
        self.put(to, lands);
        (cap, p, taken)
    }

    /// Whether `c` has a piece of the unpromoted kind `k`, promoted or not, on the board.
    pub(crate) fn side_has(&self, c: Color, k: Kind) -> bool {
        let v = &self.variant;
        self.occ[c.index()]
            .iter()
            .any(|sq| v.kinds[self.board[sq].kind() as usize].demoted == k)
    }

    /// The fates that follow other pieces, after a move of the piece `moved` to `to`: its
    /// promotion's effects (`promotion_effects`), then promoted pieces turning back for want of
    /// a kind (`promotes_with`) or near one (`reverts_near`). Each change goes on
    /// `side_captured` (a turned piece marked [`CHANGED`]); returns how many.
    #[cold]
    #[inline(never)]
    fn fates(
        &mut self,
        moved: Piece,
        to: usize,
        captured: Piece,
        captured_via: Piece,
        others: u8,
    ) -> u8 {
        let v = self.variant.clone();
        let us = moved.color();
        let mut n = 0u8;
        let landed = self.board[to];
        let promoted_now = landed.is_color(us)
            && v.kinds[moved.kind() as usize].promotes_to == Some(landed.kind());
        // Nothing else changes a fate: a lost kind is a capture, a nearness a move of one of
        // the pieces concerned (or a promotion into one).
        let took = !captured.is_empty() || !captured_via.is_empty() || others > 0;
        let near = v.near_kinds.contains(&moved.kind());
        if !took && !promoted_now && !near {
            return 0;
        }
        if let (true, Some((ups, kills))) = (
            promoted_now,
            &v.kinds[moved.kind() as usize].links.promotion_effects,
        ) {
            for sq in self.occ[us.index()].iter().collect::<Vec<_>>() {
                let p = self.board[sq];
                if let (true, Some(k)) = (
                    ups.contains(&p.kind()),
                    v.kinds[p.kind() as usize].promotes_to,
                ) {
                    self.turn(sq, Piece::new(us, k));
                    n += 1;
                }
            }
            for sq in self.occ[us.flip().index()].iter().collect::<Vec<_>>() {
                let p = self.board[sq];
                if kills.contains(&p.kind()) {
                    self.take(sq);
                    self.add_to_hand(us, p);
                    self.side_captured.push((sq as Square, p));
                    n += 1;
                }
            }
        }
        for c in Color::ALL {
            for sq in self.occ[c.index()].iter().collect::<Vec<_>>() {
                let p = self.board[sq];
                let info = &v.kinds[p.kind() as usize];
                if !info.promoted {
                    continue;
                }
                let orphan = info
                    .links
                    .promotes_with
                    .is_some_and(|k| !self.side_has(c, k));
                let near = info
                    .links
                    .reverts_near
                    .is_some_and(|(k, within)| self.kind_near(sq, k, within));
                if orphan || near {
                    self.turn(sq, Piece::new(c, info.demoted));
                    n += 1;
                }
            }
        }
        n
    }

    /// Whether a piece of kind `k` (either side) stands on one of the eight lines through `sq`
    /// at most `within` squares away.
    pub(crate) fn kind_near(&self, sq: usize, k: Kind, within: u8) -> bool {
        let v = &self.variant;
        let (x, y) = v.coords(sq);
        crate::compound::LINES.iter().any(|&(dx, dy)| {
            (1..=within as i32).any(|d| {
                let (tx, ty) = (x as i32 + dx as i32 * d, y as i32 + dy as i32 * d);
                if tx < 0 || ty < 0 || tx >= v.files as i32 || ty >= v.ranks as i32 {
                    return false;
                }
                let p = self.board[(ty * v.files as i32 + tx) as usize];
                !p.is_empty() && p.kind() == k
            })
        })
    }

    /// Turns the piece on `sq` into `p` in place, noted on `side_captured` for the undo.
    fn turn(&mut self, sq: usize, p: Piece) {
        let old = self.take(sq);
        self.side_captured.push((sq as Square | CHANGED, old));
        self.put(sq, p);
    }

    /// Whether taking one of `victims` promotes the piece `p` (`promotes_capturing`).
    fn captor_promotes(&self, p: Piece, victims: &[Piece]) -> bool {
        let list = &self.variant.kinds[p.kind() as usize]
            .links
            .promotes_capturing;
        victims
            .iter()
            .any(|q| !q.is_empty() && list.contains(&q.kind()))
    }

    /// `p` promoted, if it has a promoted form.
    fn promoted(&self, p: Piece) -> Piece {
        match self.variant.kinds[p.kind() as usize].promotes_to {
            Some(k) => Piece::new(p.color(), k),
            None => p,
        }
    }

    /// The pieces between `from` and `to` taken by `p`'s sweep (`sweep`), when the move runs
    /// along one of its range-capture lines; pushed on `side_captured`. Returns how many.
    #[cold]
    #[inline(never)]
    fn sweep(&mut self, p: Piece, from: usize, to: usize) -> u8 {
        let v = &self.variant;
        let powers = &v.kinds[p.kind() as usize].powers;
        if !powers.sweep {
            return 0;
        }
        let ((fx, fy), (tx, ty)) = (v.coords(from), v.coords(to));
        let (dx, dy) = (tx as i32 - fx as i32, ty as i32 - fy as i32);
        let n = dx.abs().max(dy.abs());
        if n < 2 || (dx != 0 && dx.abs() != n) || (dy != 0 && dy.abs() != n) {
            return 0;
        }
        let unit = ((dx / n) as i8, (dy / n) as i8);
        let c = p.color();
        let along = powers
            .range_capture
            .iter()
            .any(|&(rx, ry)| crate::tables::board_vec(c, rx, ry) == unit);
        if !along {
            return 0;
        }
        let files = v.files as i32;
        let mut taken = 0;
        for k in 1..n {
            let sq =
                ((fy as i32 + k * unit.1 as i32) * files + fx as i32 + k * unit.0 as i32) as usize;
            let q = self.board[sq];
            if !q.is_empty() {
                self.take(sq);
                self.side_captured.push((sq as Square, q));
                taken += 1;
            }
        }
        taken
    }

    /// Captures besides the move's own, after the piece now on `to` moved there: burns, then
    /// custodian captures by the mover if it is still there. Returns how many pieces were taken.
    #[cold]
    #[inline(never)]
    fn side_effects(&mut self, to: usize) -> u8 {
        let mut taken = 0;
        if self.variant.has_burns {
            taken += self.burns(to);
        }
        if self.variant.custodian && !self.board[to].is_empty() {
            taken += self.custodian_captures(to);
        }
        taken
    }

    /// Custodian capture after the piece now on `to` moved there: every orthogonal line of
    /// enemy pieces between it and another piece of its side is taken, and with corner captures
    /// an enemy piece in a corner whose other neighbour is also the mover's. Returns how many
    /// pieces were taken (pushed on `side_captured`).
    #[cold]
    #[inline(never)]
    fn custodian_captures(&mut self, to: usize) -> u8 {
        let (files, ranks) = (self.variant.files as isize, self.variant.ranks as isize);
        let corners = self.variant.custodian_corners;
        let us = self.board[to].color();
        let them = us.flip();
        let (x, y) = (to as isize % files, to as isize / files);
        let at = |x: isize, y: isize| {
            (x >= 0 && y >= 0 && x < files && y < ranks).then_some((y * files + x) as usize)
        };
        let mut taken = 0u8;
        for (dx, dy) in [(1, 0), (-1, 0), (0, 1), (0, -1)] {
            let mut len = 0;
            while at(x + dx * (len + 1), y + dy * (len + 1))
                .is_some_and(|s| self.board[s].is_color(them))
            {
                len += 1;
            }
            let end = at(x + dx * (len + 1), y + dy * (len + 1));
            let enclosed = len > 0 && end.is_some_and(|s| self.board[s].is_color(us));
            let (cx, cy) = (x + dx, y + dy);
            let in_corner = (cx == 0 || cx == files - 1) && (cy == 0 || cy == ranks - 1);
            let corner_taken = corners && len == 1 && in_corner && {
                // The corner's other neighbour, off the line from `to`.
                let inward = |c: isize| if c == 0 { 1 } else { -1 };
                let other = match dx {
                    0 => at(cx + inward(cx), cy),
                    _ => at(cx, cy + inward(cy)),
                };
                other.is_some_and(|s| self.board[s].is_color(us))
            };
            if enclosed || corner_taken {
                for i in 1..=len {
                    if let Some(s) = at(x + dx * i, y + dy * i) {
                        let p = self.take(s);
                        self.add_to_hand(us, p);
                        self.side_captured.push((s as Square, p));
                        taken += 1;
                    }
                }
            }
        }
        taken
    }

    /// The first `N` squares of the board array (a small board's whole board).
    #[inline(always)]
    pub(crate) fn board_as<const N: usize>(&self) -> &[Piece; N] {
        self.board.0.first_chunk().expect("N is at most BOARD_CAP")
    }

    /// Whether `sq` is attacked by a piece of `by`.
    #[inline]
    pub fn is_attacked(&self, sq: usize, by: Color) -> bool {
        match self.variant.n <= SMALL_BOARD {
            true => attacked::<u8, _>(&self.variant, self.board_as::<SMALL_BOARD>(), sq, by),
            false => attacked::<Square, _>(&self.variant, &self.board, sq, by),
        }
    }

    /// The squares the piece on `sq` attacks: where it could capture if an enemy piece stood
    /// there, its rides blocked by the pieces on the board (empty for an empty square). Network
    /// encodings that show attacks (dlshogi's) read it.
    pub fn attacks_from(&self, sq: usize) -> SquareSet {
        let mut out = SquareSet::EMPTY;
        let p = self.board[sq];
        if p.is_empty() {
            return out;
        }
        let v = &*self.variant;
        let (c, kind) = (p.color(), moving_kind(v, &self.board, sq));
        for &(to, mode) in v.leaps_of(c, kind, sq) {
            if mode & CAPTURE != 0 {
                out.insert(to as usize);
            }
        }
        let extra = match v.last_rank[c.index()].contains(sq) {
            true => v.last_rank_rays_of(c, kind),
            false => &[],
        };
        for r in v.rays[v.ck(c, kind)].iter().chain(extra) {
            let mut hops = 0usize;
            for (i, &to) in v.ray(sq, r.dir as usize).iter().enumerate() {
                if i >= r.max_range as usize {
                    break;
                }
                if i < r.cap_range[hops] as usize {
                    out.insert(to as usize);
                }
                if self.board[to as usize].is_empty() {
                    continue;
                }
                hops += 1;
                if hops > r.max_hop as usize {
                    break;
                }
            }
        }
        out
    }
}

/// The kind whose moves the piece on `sq` makes on `board`: its own, or with
/// `moves_from_behind` (Annan shogi) that of a friendly piece directly behind it.
#[inline]
pub(crate) fn moving_kind<B: BoardRead + ?Sized>(v: &Variant, board: &B, sq: usize) -> Kind {
    let p = board.at(sq);
    if !v.moves_from_behind {
        return p.kind();
    }
    // Behind is towards the owner's side: higher ranks (y) for sente, lower for gote.
    let files = v.files as usize;
    let behind = match p.color() {
        Color::Sente => sq + files,
        Color::Gote => sq.wrapping_sub(files),
    };
    match board.squares().get(behind) {
        Some(&b) if behind < v.n && b.is_color(p.color()) => b.kind(),
        _ => p.kind(),
    }
}

/// Whether a piece of colour `c` moving as kind `k` from `from` attacks `target` on `board`.
pub(crate) fn piece_attacks<S: SquareIndex, B: BoardRead + ?Sized>(
    v: &Variant,
    board: &B,
    c: Color,
    k: Kind,
    from: usize,
    target: usize,
) -> bool {
    if v.leaps_in::<S>(c, k, from)
        .iter()
        .any(|&(to, mode)| to.into() == target && mode & CAPTURE != 0)
    {
        return true;
    }
    if v.has_last_rank_moves
        && v.last_rank[c.index()].contains(from)
        && rays_hit::<S, B>(v, board, v.last_rank_rays_of(c, k), from, target)
    {
        return true;
    }
    rays_hit::<S, B>(v, board, &v.rays[v.ck(c, k)], from, target)
}

/// Whether one of `rays` from `from` reaches `target` with a capture on `board`.
fn rays_hit<S: SquareIndex, B: BoardRead + ?Sized>(
    v: &Variant,
    board: &B,
    rays: &[RayMove],
    from: usize,
    target: usize,
) -> bool {
    for r in rays {
        let mut hops = 0usize;
        for (i, &to) in v.ray_in::<S>(from, r.dir as usize).iter().enumerate() {
            let to: usize = to.into();
            if i >= r.max_range as usize {
                break;
            }
            if to == target {
                if i < r.cap_range[hops] as usize {
                    return true;
                }
                break;
            }
            if board.at(to).is_empty() {
                continue;
            }
            hops += 1;
            if hops > r.max_hop as usize {
                break;
            }
        }
    }
    false
}

/// A board read by square: a fixed-size array whose length is a power of two
/// (indices are reduced modulo it, which the compiler proves in range, so no bounds check) or
/// a slice.
pub(crate) trait BoardRead {
    /// The piece on `sq`.
    fn at(&self, sq: usize) -> Piece;
    /// The whole board.
    fn squares(&self) -> &[Piece];
}

impl<const N: usize> BoardRead for [Piece; N] {
    #[inline(always)]
    fn at(&self, sq: usize) -> Piece {
        self[sq % N]
    }
    #[inline(always)]
    fn squares(&self) -> &[Piece] {
        self
    }
}

impl BoardRead for [Piece] {
    #[inline(always)]
    fn at(&self, sq: usize) -> Piece {
        self[sq]
    }
    #[inline(always)]
    fn squares(&self) -> &[Piece] {
        self
    }
}

/// A board of `N` squares (a power of two) indexed modulo `N`: the compiler then proves
/// every index in range, and a read or write costs no bounds check (a square index is always
/// below the variant's `n`, at most `N`).
#[derive(Clone, Copy)]
pub(crate) struct Board<const N: usize>(pub(crate) [Piece; N]);

impl<const N: usize> std::ops::Index<usize> for Board<N> {
    type Output = Piece;
    #[inline(always)]
    fn index(&self, sq: usize) -> &Piece {
        &self.0[sq % N]
    }
}

impl<const N: usize> std::ops::IndexMut<usize> for Board<N> {
    #[inline(always)]
    fn index_mut(&mut self, sq: usize) -> &mut Piece {
        &mut self.0[sq % N]
    }
}

impl<const N: usize> std::ops::Deref for Board<N> {
    type Target = [Piece];
    #[inline(always)]
    fn deref(&self) -> &[Piece] {
        &self.0
    }
}

impl<const N: usize> BoardRead for Board<N> {
    #[inline(always)]
    fn at(&self, sq: usize) -> Piece {
        self[sq]
    }
    #[inline(always)]
    fn squares(&self) -> &[Piece] {
        &self.0
    }
}

/// Length of a position's board array: the largest board's squares rounded up to a power of
/// two, so that reads through [`BoardRead`] need no bounds check.
pub(crate) const BOARD_CAP: usize = MAX_SQUARES.next_power_of_two();

/// Boards of at most this many squares (16x16) have their own move generation, on 256-square
/// arrays and four-word square sets: the small variants never pay for the large boards.
pub(crate) const SMALL_BOARD: usize = 256;

/// Words of a small board's square sets.
pub(crate) const SMALL_WORDS: usize = SMALL_BOARD / 64;

/// Whether `sq` is attacked by a piece of `by` on `board`.
#[inline]
pub(crate) fn attacked<S: SquareIndex, B: BoardRead + ?Sized>(
    v: &Variant,
    board: &B,
    sq: usize,
    by: Color,
) -> bool {
    if v.moves_from_behind {
        // Borrowed moves depend on the formation: ask every piece (the reverse tables assume
        // each kind moves as itself).
        return (0..v.n).any(|s| {
            board.at(s).is_color(by)
                && piece_attacks::<S, B>(v, board, by, moving_kind(v, board, s), s, sq)
        });
    }
    let (s, e) = v.leap_attack_index[by.index() * v.n + sq];
    for &(from, mask) in &S::leap_attackers(v)[s as usize..e as usize] {
        let p = board.at(from.into());
        if p.is_color(by) && S::attacks(v, mask, p.kind()) {
            return true;
        }
    }
    let nd = v.dirs.len();
    let base = by.index() * v.kinds.len();
    for scan in &v.ray_scans[by.index()] {
        let mut hops = 0usize;
        for (i, &t) in v.ray_in::<S>(sq, scan.dir as usize).iter().enumerate() {
            let p = board.at(t.into());
            if p.is_empty() {
                continue;
            }
            if p.is_color(by) {
                let r = v.ray_attack[(base + p.kind() as usize) * nd + scan.dir as usize];
                if i < r[hops] as usize {
                    return true;
                }
            }
            hops += 1;
            if hops > scan.max_hop as usize {
                break;
            }
        }
    }
    // Extra moves from the last rank (Whale shogi's dolphin) are not in the reverse tables,
    // nor are powers (range captures, area moves, burns).
    (v.has_last_rank_moves && last_rank_attacked(v, board.squares(), sq, by))
        || (v.has_powers && power_attacked(v, board.squares(), sq, by))
}

/// Whether a piece of `by` on its last rank attacks `sq` with its extra moves from there.
#[cold]
#[inline(never)]
fn last_rank_attacked(v: &Variant, board: &[Piece], sq: usize, by: Color) -> bool {
    v.last_rank[by.index()].iter().any(|s| {
        let p = board[s];
        p.is_color(by) && rays_hit::<Square, _>(v, board, v.last_rank_rays_of(by, p.kind()), s, sq)
    })
}
