//! Legal move generation.
//!
//! Pseudo-legal moves are generated from the variant's tables; a move is then tested for the
//! safety of the mover's royal piece only when it can matter: when in check, for royal moves, for
//! pieces pinned to the royal piece and, in variants with hoppers (cannons), for any move from
//! or to a line through the royal piece (a piece arriving there can become a cannon's screen).

use crate::bitset::{Bits, SquareSet, WORDS};
use crate::position::{
    attacked, moving_kind, piece_attacks, Board, BoardRead, Position, BOARD_CAP, SMALL_BOARD,
    SMALL_WORDS,
};
use crate::powers::power_targets;
use crate::types::{Color, Kind, Move, Piece, Square};
use crate::values::PromotionMode;
use crate::variant::{RayMove, SquareIndex, Variant, CAPTURE, MAX_SIDE, MOVE};
use std::marker::PhantomData;

/// Per-node data shared by the generation of every move, on boards held in `N`-square arrays
/// with `W`-word square sets (small boards: 256 and 4; every board: see `generate_with`).
struct Ctx<'a, S, const W: usize, const N: usize> {
    v: &'a Variant,
    /// The square type of the move tables.
    square: PhantomData<S>,
    us: Color,
    them: Color,
    ksq: Option<usize>,
    test_all: bool,
    sensitive: Bits<W>,
    to_sensitive: bool,
    /// The mover has exactly one royal piece (in a variant where it can have several).
    single_royal: bool,
    /// The opponent's pieces give no check (its royal piece is still in hand: Unashogi).
    them_unarmed: bool,
    /// The mover's promotion zone (empty while its royal piece is in hand, in Unashogi).
    zone: Bits<W>,
    /// The variant has Lion capture rules.
    lion_rules: bool,
    /// The last move took a Lion with a piece that was not one: no non-Lion may take a Lion
    /// now, except the capturer standing on this square (a kirin that promoted to a Lion).
    counter_strike: Option<usize>,
    /// Neither Lion rules nor per-file move limits apply (the common case, tested once).
    plain: bool,
    /// Promotion follows the plain zone rule (any move touching the zone).
    plain_promotion: bool,
    /// A copy of the board for legality tests.
    scratch: Board<N>,
}

impl<S: SquareIndex, const W: usize, const N: usize> Ctx<'_, S, W, N> {
    /// Whether the mover's royal piece is safe after `mv` (tested on the scratch board).
    #[inline]
    fn safe(&mut self, mv: Move) -> bool {
        let Some(ksq) = self.ksq else { return true };
        match mv {
            Move::Normal { from, to, .. } => {
                let (from, to) = (from as usize, to as usize);
                let p = self.scratch[from];
                let cap = self.scratch[to];
                self.scratch[to] = p;
                self.scratch[from] = Piece::EMPTY;
                let k = if from == ksq { to } else { ksq };
                let ok = !attacked::<S, _>(self.v, &self.scratch, k, self.them);
                self.scratch[from] = p;
                self.scratch[to] = cap;
                ok
            }
            Move::Double { from, via, to } => {
                let (from, via, to) = (from as usize, via as usize, to as usize);
                let k = if from == ksq { to } else { ksq };
                self.with_double(from, via, to, |s| {
                    !attacked::<S, _>(s.v, &s.scratch, k, s.them)
                })
            }
            Move::Line { from, to } => self.line_safe(from, to, ksq),
            // Only where royal pieces are captured: there is no royal piece to keep safe.
            Move::Multi { .. } => true,
            Move::Drop { kind, to } => {
                let to = to as usize;
                self.scratch[to] = Piece::new(self.us, kind);
                let ok = !attacked::<S, _>(self.v, &self.scratch, ksq, self.them);
                self.scratch[to] = Piece::EMPTY;
                ok
            }
        }
    }

    /// [`Ctx::safe`] for a [`Move::Line`] (kept out of line: the common moves' test stays small).
    #[cold]
    #[inline(never)]
    fn line_safe(&mut self, from: Square, to: Square, ksq: usize) -> bool {
        let [v1, v2] = Move::line_vias(from, to);
        let (from, to) = (from as usize, to as usize);
        let k = if from == ksq { to } else { ksq };
        let at_v2 = self.scratch[v2];
        self.scratch[v2] = Piece::EMPTY;
        let ok = self.with_double(from, v1, to, |s| {
            !attacked::<S, _>(s.v, &s.scratch, k, s.them)
        });
        self.scratch[v2] = at_v2;
        ok
    }

    /// Runs `f` on the scratch board with the two-step move `from`-`via`-`to` made.
    fn with_double<T>(
        &mut self,
        from: usize,
        via: usize,
        to: usize,
        f: impl FnOnce(&mut Self) -> T,
    ) -> T {
        let (p, at_via) = (self.scratch[from], self.scratch[via]);
        self.scratch[from] = Piece::EMPTY;
        self.scratch[via] = Piece::EMPTY;
        let at_to = self.scratch[to];
        self.scratch[to] = p;
        let r = f(self);
        self.scratch[to] = at_to;
        self.scratch[via] = at_via;
        self.scratch[from] = p;
        r
    }

    /// Whether a capture by the piece of `kind` from `from` (through `via` for a two-step move)
    /// to `to` keeps the Lion capture rules: after a non-Lion took a Lion, no non-Lion takes a
    /// Lion; a Lion takes a Lion two squares away only if that Lion is unprotected after the
    /// move, or the first step took a piece that is not bridge-exempt.
    #[cold]
    fn lion_capture_ok(&mut self, kind: Kind, from: usize, via: Option<usize>, to: usize) -> bool {
        let v = self.v;
        let them = self.them;
        let lion_at = |s: &Self, sq: usize| {
            let p = s.scratch[sq];
            p.is_color(them) && v.kinds[p.kind() as usize].lion
        };
        let takes_lion = lion_at(self, to) || via.is_some_and(|w| lion_at(self, w));
        if !takes_lion {
            return true;
        }
        let mover_is_lion = v.kinds[kind as usize].lion;
        if !mover_is_lion {
            return match self.counter_strike {
                None => true,
                Some(capturer) => {
                    let other = |sq: usize| sq != capturer && lion_at(self, sq);
                    !other(to) && !via.is_some_and(other)
                }
            };
        }
        let (fx, fy) = v.coords(from);
        let (tx, ty) = v.coords(to);
        let distant = fx.abs_diff(tx).max(fy.abs_diff(ty)) > 1;
        if !v.lion_protected || !distant || !lion_at(self, to) {
            return true;
        }
        let bridge = via.is_some_and(|w| {
            let p = self.scratch[w];
            p.is_color(them) && !v.kinds[p.kind() as usize].bridge_exempt
        });
        if bridge {
            return true;
        }
        // Judged after the move; a pawn or go-between taken on the way still counts as a
        // protector (the Japanese Chu Shogi Association's reading, as Lishogi plays it).
        let protected = match via {
            Some(w) => {
                let doomed = self.scratch[w];
                let doomed_protects = doomed.is_color(them)
                    && piece_attacks::<S, _>(v, &self.scratch, them, doomed.kind(), w, to);
                doomed_protects
                    || self.with_double(from, w, to, |s| attacked::<S, _>(v, &s.scratch, to, them))
            }
            None => {
                let (p, cap) = (self.scratch[from], self.scratch[to]);
                self.scratch[from] = Piece::EMPTY;
                self.scratch[to] = p;
                let r = attacked::<S, _>(v, &self.scratch, to, them);
                self.scratch[from] = p;
                self.scratch[to] = cap;
                r
            }
        };
        !protected
    }

    /// Whether a move of the piece of `kind` from `from` to `to` may promote, by the zone rule
    /// (and, with `immobile_may_promote`, wherever it could not move again).
    #[inline(always)]
    fn may_promote(&self, kind: Kind, from: usize, to: usize) -> bool {
        let v = self.v;
        let (f, t) = (self.zone.contains(from), self.zone.contains(to));
        if self.plain_promotion {
            return f || t;
        }
        let by_zone = match v.promotion_entering {
            false => f || t,
            true => (t && !f) || (f && !self.scratch[to].is_empty()),
        };
        by_zone || (v.immobile_may_promote && v.is_immobile(self.us, kind, to))
    }

    /// Adds the legal two-step moves of the piece of `kind` on `from`.
    #[cold]
    fn add_doubles(&mut self, out: &mut Vec<Move>, kind: Kind, from: usize, unarmed: bool) {
        let v = self.v;
        let (files, ranks) = (v.files as isize, v.ranks as isize);
        let (x, y) = v.coords(from);
        let step = |x: isize, y: isize, d: (i8, i8)| {
            let (nx, ny) = (x + d.0 as isize, y + d.1 as isize);
            (nx >= 0 && ny >= 0 && nx < files && ny < ranks).then_some((nx, ny))
        };
        for &(d1, captures, d2) in v.legs_of(self.us, kind) {
            let Some((vx, vy)) = step(x as isize, y as isize, d1) else {
                continue;
            };
            let via = (vy * files + vx) as usize;
            let at_via = self.scratch[via];
            let first_ok = match captures {
                true => at_via.is_color(self.them) && !unarmed,
                false => at_via.is_empty(),
            };
            if !first_ok {
                continue;
            }
            let Some((tx, ty)) = step(vx, vy, d2) else {
                continue;
            };
            let to = (ty * files + tx) as usize;
            let at_to = self.scratch[to];
            let to_ok = to == from || at_to.is_empty() || (at_to.is_color(self.them) && !unarmed);
            if !to_ok {
                continue;
            }
            let mv = Move::Double {
                from: from as Square,
                via: via as Square,
                to: to as Square,
            };
            if self.lion_rules && !self.lion_capture_ok(kind, from, Some(via), to) {
                continue;
            }
            if self.safe(mv) {
                out.push(mv);
            }
        }
    }

    /// Adds the legal moves of the Lion power along a line (`lion_line`) of the piece of
    /// `kind` on `from`, moving as `moves_as`: those that take pieces on the way (the plain
    /// jumps are Betza moves), except those its two-step moves already make.
    #[cold]
    #[inline(never)]
    fn add_lion_lines(
        &mut self,
        out: &mut Vec<Move>,
        (kind, moves_as): (Kind, Kind),
        from: usize,
        unarmed: bool,
    ) {
        if unarmed {
            return;
        }
        let v = self.v;
        let (x, y) = v.coords(from);
        let (files, ranks) = (v.files as isize, v.ranks as isize);
        let legs = v.legs_of(self.us, kind);
        for &(dx, dy, n) in &v.kinds[moves_as as usize].powers.lion_line {
            let d = crate::tables::board_vec(self.us, dx, dy);
            // The squares of the line, 1 to n steps away (None: off the board).
            let at = |k: isize| {
                let (sx, sy) = (x as isize + d.0 as isize * k, y as isize + d.1 as isize * k);
                (sx >= 0 && sy >= 0 && sx < files && sy < ranks)
                    .then_some((sy * files + sx) as usize)
            };
            let squares = [at(1), at(2), at(3)];
            let enemy = |s: Option<usize>| s.is_some_and(|s| self.scratch[s].is_color(self.them));
            let lands = |s: Option<usize>| {
                s.is_some_and(|s| self.scratch[s].is_empty() || self.scratch[s].is_color(self.them))
            };
            let leg = |second: (i8, i8)| legs.contains(&(d, true, second));
            let mut cands: [Option<Move>; 7] = [None; 7];
            let double = |via: Option<usize>, to: usize| Move::Double {
                from: from as Square,
                via: via.unwrap_or(0) as Square,
                to: to as Square,
            };
            let [s1, s2, s3] = squares;
            // Take on the first square, then on to the second or back home.
            if enemy(s1) && lands(s2) && !leg(d) {
                cands[0] = Some(double(s1, s2.unwrap_or(0)));
            }
            if enemy(s1) && !leg((-d.0, -d.1)) {
                cands[1] = Some(double(s1, from));
            }
            if n >= 3 {
                // Take on the second square and come back to the first.
                if enemy(s2) && lands(s1) {
                    cands[2] = Some(double(s2, s1.unwrap_or(0)));
                }
                // On to the third square, taking on the first, the second (jumping the other
                // square, whatever stands there) or both.
                if lands(s3) {
                    let to = s3.unwrap_or(0);
                    if enemy(s1) {
                        cands[3] = Some(double(s1, to));
                    }
                    if enemy(s2) {
                        cands[4] = Some(double(s2, to));
                    }
                    if enemy(s1) && enemy(s2) {
                        cands[5] = Some(Move::Line {
                            from: from as Square,
                            to: to as Square,
                        });
                    }
                }
            }
            for mv in cands.into_iter().flatten() {
                let (via, to) = (mv.via(), mv.to());
                if self.lion_rules && !self.lion_capture_ok(kind, from, via, to) {
                    continue;
                }
                if self.safe(mv) {
                    out.push(mv);
                }
            }
        }
    }

    /// The Lion rules and per-file move limits for a board move.
    #[cold]
    fn special_ok(&mut self, kind: Kind, from: usize, to: usize) -> bool {
        let lion_ok = !self.lion_rules
            || self.scratch[to].is_empty()
            || self.lion_capture_ok(kind, from, None, to);
        lion_ok && self.file_allows(kind, from, to)
    }

    /// Whether a per-file move limit lets the piece of `kind` move from `from` to `to`.
    #[cold]
    fn file_allows(&self, kind: Kind, from: usize, to: usize) -> bool {
        let v = self.v;
        let Some(max) = v.kinds[kind as usize].move_max_per_file else {
            return true;
        };
        let (fx, tx) = (v.coords(from).0, v.coords(to).0);
        let own = Piece::new(self.us, kind);
        let on_file = Bits::<W>::narrow(&v.file_squares[tx])
            .iter()
            .filter(|&s| self.scratch[s] == own);
        fx == tx || on_file.count() < max as usize
    }

    /// Whether a royal piece dropped on `to` (Unashogi) is out of check there.
    #[cold]
    fn royal_drop_safe(&mut self, kind: Kind, to: usize) -> bool {
        if self.them_unarmed {
            return true;
        }
        self.scratch[to] = Piece::new(self.us, kind);
        let ok = !attacked::<S, _>(self.v, &self.scratch, to, self.them);
        self.scratch[to] = Piece::EMPTY;
        ok
    }

    #[inline]
    fn needs_test(&self, from: usize, to: usize) -> bool {
        self.test_all
            || self.sensitive.contains(from)
            || (self.to_sensitive && self.sensitive.contains(to))
            || Some(from) == self.ksq
    }

    #[inline]
    fn add(&mut self, out: &mut Vec<Move>, kind: Kind, from: usize, to: usize) {
        let mv = Move::Normal {
            from: from as Square,
            to: to as Square,
            promote: false,
        };
        let v = self.v;
        if !self.plain && !self.special_ok(kind, from, to) {
            return;
        }
        if self.needs_test(from, to) && !self.safe(mv) {
            // Promoting into a second royal piece frees the first from guarding (Sho shogi:
            // the crown prince), so that promotion is legal even if it leaves the king attacked.
            let saves = self.single_royal
                && !v.kinds[kind as usize].royal
                && v.kinds[kind as usize]
                    .promotes_to
                    .is_some_and(|p| v.kinds[p as usize].royal)
                && self.may_promote(kind, from, to);
            if saves {
                out.push(Move::Normal {
                    from: from as Square,
                    to: to as Square,
                    promote: true,
                });
            }
            return;
        }
        let info = &v.kinds[kind as usize];
        if info.promotion == PromotionMode::Flip {
            // The piece turns over by itself (or not, on a non-capture under flip_on_capture):
            // one move, no choice; a side with no move from there makes it illegal.
            let flips = !v.flip_on_capture || !self.scratch[to].is_empty();
            let lands = match flips {
                true => v.flips_to(kind).unwrap_or(kind),
                false => kind,
            };
            if !(v.forbid_immobile_moves && v.is_immobile(self.us, lands, to)) {
                out.push(mv);
            }
            return;
        }
        let immobile = v.forbid_immobile_moves && v.is_immobile(self.us, kind, to);
        let promote = Move::Normal {
            from: from as Square,
            to: to as Square,
            promote: true,
        };
        if info.promotes_to.is_some() && self.may_promote(kind, from, to) {
            out.push(promote);
            if info.promotion != PromotionMode::Forced && !immobile {
                out.push(mv);
            }
        } else if !immobile {
            out.push(mv);
        }
    }
}

impl Position {
    /// The square of a Lion that a non-Lion has just taken (the counter-strike rule, when the
    /// variant has it): after the start, decided by the last move; at the start, by the SFEN.
    #[inline]
    pub fn counter_strike(&self) -> Option<usize> {
        let v = &*self.variant;
        if !v.lion_counter_strike {
            return None;
        }
        let Some(u) = self.undo.last() else {
            return self.start_counter_strike.map(usize::from);
        };
        let lion = |p: Piece| !p.is_empty() && v.kinds[p.kind() as usize].lion;
        ((lion(u.captured) || lion(u.captured_via)) && !lion(u.moved)).then(|| u.mv.to())
    }

    /// All legal moves of the side to move.
    pub fn legal_moves(&self) -> Vec<Move> {
        let mut out = Vec::with_capacity(128);
        self.generate_legal(&mut out);
        out
    }

    /// Appends all legal moves of the side to move to `out` (cleared first).
    pub fn generate_legal(&self, out: &mut Vec<Move>) {
        out.clear();
        self.generate(out, true);
    }

    /// Whether the side to move has at least one legal move.
    pub fn has_legal_move(&self) -> bool {
        let mut out = Vec::with_capacity(64);
        self.generate(&mut out, true);
        !out.is_empty()
    }

    /// Whether `mv` is legal here.
    pub fn is_legal(&self, mv: Move) -> bool {
        self.legal_moves().contains(&mv)
    }

    /// The moves of the side to move without the rule that its royal piece must not be left
    /// attacked: the move lists of engines where a king left en prise is simply captured
    /// (Lishogi's Chu shogi). Every other rule applies. For comparing move counts.
    pub fn pseudo_legal_moves(&self) -> Vec<Move> {
        let mut out = Vec::with_capacity(128);
        self.generate_with(&mut out, true, false);
        out
    }

    /// Generates legal moves; `check_drop_mate` false skips the drop-mate test (used inside
    /// that very test, where a nested drop-mate is counted as a legal reply).
    pub(crate) fn generate(&self, out: &mut Vec<Move>, check_drop_mate: bool) {
        self.generate_with(out, check_drop_mate, true)
    }

    fn generate_with(&self, out: &mut Vec<Move>, check_drop_mate: bool, royal_safety: bool) {
        let large = self.variant.n > SMALL_BOARD;
        self.generate_sized(out, check_drop_mate, royal_safety, large)
    }

    /// [`Position::generate_with`] on the large boards' types when `large` (any board may take
    /// them; boards of more than 256 squares must).
    #[inline(always)]
    fn generate_sized(
        &self,
        out: &mut Vec<Move>,
        check_drop_mate: bool,
        royal_safety: bool,
        large: bool,
    ) {
        let v = &*self.variant;
        let us = self.side;
        let them = us.flip();
        // A side whose royal piece is still in hand gives no check and may not capture or
        // promote (Unashogi); its opponent then has nothing to guard against.
        let unarmed = |c: Color| v.unarmed_until_royal && self.royals[c.index()] == 0;
        let (us_unarmed, them_unarmed) = (unarmed(us), unarmed(them));
        let ksq = match them_unarmed || !royal_safety || v.royal_capture {
            true => None,
            false => self.king[us.index()].map(|k| k as usize),
        };
        if v.has_powers && ksq.is_some() {
            // Burns and range captures are not in the pin scan: play every move to test it.
            return self.generate_by_playing(out, check_drop_mate);
        }
        // Boards of up to 256 squares get their own instance: four-word sets, a 256-square
        // scratch board (the large boards' types cost the small variants 4-7% in perft).
        match !large {
            true => self.generate_on::<u8, SMALL_WORDS, SMALL_BOARD>(
                out,
                check_drop_mate,
                ksq,
                (us_unarmed, them_unarmed),
            ),
            false => self.generate_on::<Square, WORDS, BOARD_CAP>(
                out,
                check_drop_mate,
                ksq,
                (us_unarmed, them_unarmed),
            ),
        }
    }

    /// [`Position::generate_with`] on `N`-square board arrays and `W`-word square sets.
    #[inline(always)]
    fn generate_on<S: SquareIndex, const W: usize, const N: usize>(
        &self,
        out: &mut Vec<Move>,
        check_drop_mate: bool,
        ksq: Option<usize>,
        (us_unarmed, them_unarmed): (bool, bool),
    ) {
        let v = &*self.variant;
        let us = self.side;
        let them = us.flip();
        let in_check = self.in_check();
        // With borrowed moves any move can change what attacks the royal piece: test them all.
        // So do extra moves from the last rank, which the pin scan does not know.
        let test_all = in_check || v.moves_from_behind || v.has_last_rank_moves;
        let sensitive = match (ksq, test_all) {
            (Some(k), false) => self.pin_sensitive::<S, W>(k),
            _ => Bits::EMPTY,
        };
        let mut ctx = Ctx {
            v,
            square: PhantomData::<S>,
            us,
            them,
            ksq,
            test_all,
            sensitive,
            to_sensitive: v.has_hoppers,
            single_royal: v.several_royals && self.royals[us.index()] == 1,
            them_unarmed,
            zone: match us_unarmed {
                true => Bits::EMPTY,
                false => Bits::narrow(&v.zone[us.index()]),
            },
            lion_rules: v.lion_protected || v.lion_counter_strike,
            counter_strike: self.counter_strike(),
            plain: !(v.lion_protected || v.lion_counter_strike || v.has_move_file_limits),
            plain_promotion: !(v.promotion_entering || v.immobile_may_promote),
            scratch: Board(*self.board_as::<N>()),
        };
        self.board_moves(&mut ctx, out, us_unarmed);
        if v.drops {
            self.drop_moves(&mut ctx, out, check_drop_mate, us_unarmed);
        }
    }

    /// The legal moves found by playing each move without the royal-safety rule and keeping
    /// those after which the mover still has a royal piece and its last one is not attacked.
    #[cold]
    #[inline(never)]
    fn generate_by_playing(&self, out: &mut Vec<Move>, check_drop_mate: bool) {
        self.generate_with(out, check_drop_mate, false);
        let us = self.side;
        let mut p = self.clone();
        out.retain(|&mv| {
            p.make_move(mv);
            let ok = p.royals[us.index()] > 0
                && p.king[us.index()].is_none_or(|k| !p.is_attacked(k as usize, us.flip()));
            p.unmake_move();
            ok
        });
    }

    /// The squares a move from (or, with hoppers, to) may expose the royal piece on `k` to a
    /// ray attack: exact pins (own piece, then an enemy slider reaching the royal square), or
    /// with hoppers every square on a line an enemy piece could attack along.
    #[inline(always)]
    fn pin_sensitive<S: SquareIndex, const W: usize>(&self, k: usize) -> Bits<W> {
        let v = &*self.variant;
        let (us, them) = (self.side, self.side.flip());
        let mut sensitive = Bits::EMPTY;
        let nd = v.dirs.len();
        let base = them.index() * v.kinds.len();
        for scan in &v.ray_scans[them.index()] {
            let ray = v.ray_in::<S>(k, scan.dir as usize);
            if v.has_hoppers {
                for &t in ray {
                    sensitive.insert(t.into());
                }
                continue;
            }
            let mut own: Option<usize> = None;
            for (i, &t) in ray.iter().enumerate() {
                let p = self.board.at(t.into());
                if p.is_empty() {
                    continue;
                }
                if p.is_color(us) {
                    if own.is_some() {
                        break;
                    }
                    own = Some(t.into());
                    continue;
                }
                if let Some(o) = own {
                    let r = v.ray_attack[(base + p.kind() as usize) * nd + scan.dir as usize];
                    if i < r[0] as usize {
                        sensitive.insert(o);
                    }
                }
                break;
            }
        }
        sensitive
    }

    /// Adds the legal board moves of the side to move.
    #[inline(always)]
    fn board_moves<S: SquareIndex, const W: usize, const N: usize>(
        &self,
        ctx: &mut Ctx<S, W, N>,
        out: &mut Vec<Move>,
        us_unarmed: bool,
    ) {
        // From `self`, not `ctx`: the compiler then keeps them in registers (read from `ctx`,
        // they cost about 1% more instructions in perft).
        let v = &*self.variant;
        let (us, them) = (self.side, self.side.flip());
        let board = self.board_as::<N>();
        let piece_extras = v.has_legs
            || v.has_last_rank_moves
            || v.has_powers
            || v.has_shadowed_leaps
            || v.has_capture_limits
            || v.has_without
            || v.has_fates;
        // The kinds the side lacks that some piece's moves or promotion need, found once.
        let lacks = match v.has_without || v.has_fates {
            true => self.lacking(),
            false => Vec::new(),
        };
        for from in Bits::<W>::narrow(&self.occ[us.index()]).iter() {
            let first = out.len();
            // Promotion follows the piece's own kind, its moves may be borrowed.
            let kind = board.at(from).kind();
            let moves_as = moving_kind(v, board, from);
            for &(to, mode) in v.leaps_in::<S>(us, moves_as, from) {
                let to: usize = to.into();
                let t = board.at(to);
                let ok = if t.is_empty() {
                    mode & MOVE != 0
                } else {
                    t.is_color(them) && mode & CAPTURE != 0 && !us_unarmed
                };
                if ok {
                    ctx.add(out, kind, from, to);
                }
            }
            for r in &v.rays[v.ck(us, moves_as)] {
                let mut hops = 0usize;
                for (i, &to) in v.ray_in::<S>(from, r.dir as usize).iter().enumerate() {
                    let to: usize = to.into();
                    if i >= r.max_range as usize {
                        break;
                    }
                    let t = board.at(to);
                    if t.is_empty() {
                        if i < r.move_range[hops] as usize {
                            ctx.add(out, kind, from, to);
                        }
                        continue;
                    }
                    if t.is_color(them) && i < r.cap_range[hops] as usize && !us_unarmed {
                        ctx.add(out, kind, from, to);
                    }
                    hops += 1;
                    if hops > r.max_hop as usize {
                        break;
                    }
                }
            }
            if piece_extras {
                if v.has_last_rank_moves && v.last_rank[us.index()].contains(from) {
                    for r in v.last_rank_rays_of(us, moves_as) {
                        self.ray_moves(ctx, out, r, kind, from, us_unarmed);
                    }
                }
                if v.has_legs && !v.kinds[kind as usize].legs.is_empty() {
                    ctx.add_doubles(out, kind, from, us_unarmed);
                }
                if v.has_shadowed_leaps && v.kinds[moves_as as usize].shadowed_leaps {
                    dedup_since(out, first);
                }
                if v.has_powers && v.kinds[moves_as as usize].powers.moving {
                    self.power_moves(ctx, out, (kind, moves_as), from, first, us_unarmed);
                }
                if v.has_capture_limits {
                    // Captures of kinds it spares (`spares`, `displaces_only`) go.
                    spare_since(v, board, (kind, from), out, first);
                }
                if !lacks.is_empty() {
                    self.fated_moves(out, kind, from, first, &lacks);
                }
            }
        }
    }

    /// Adds the moves the powers of the piece on `from` (of `kinds`: its own and the one it
    /// moves as) give beyond those already added since `out[first]`: the moves of its Lion
    /// power along a line, and the targets of its other powers.
    #[cold]
    #[inline(never)]
    fn power_moves<S: SquareIndex, const W: usize, const N: usize>(
        &self,
        ctx: &mut Ctx<S, W, N>,
        out: &mut Vec<Move>,
        kinds: (Kind, Kind),
        from: usize,
        first: usize,
        unarmed: bool,
    ) {
        let powers = &ctx.v.kinds[kinds.1 as usize].powers;
        if !powers.lion_line.is_empty() {
            ctx.add_lion_lines(out, kinds, from, unarmed);
        }
        if powers.compound() {
            self.compound_moves(out, kinds.1, from, first, unarmed);
        }
        if !powers.moves() {
            return;
        }
        let mut done = SquareSet::EMPTY;
        for mv in &out[first..] {
            if let Move::Normal { to, .. } = mv {
                done.insert(*to as usize);
            }
        }
        let targets = power_targets(ctx.v, &self.board, self.side, kinds.1, from, unarmed);
        for to in targets.and_not(done).iter() {
            ctx.add(out, kinds.0, from, to);
        }
    }

    /// Applies `without` (moves lost while the side lacks a kind) and `promotes_with` (no
    /// promotion while it lacks one) to the moves of the piece of `kind` on `from` added since
    /// `out[first]`.
    #[cold]
    #[inline(never)]
    fn fated_moves(
        &self,
        out: &mut Vec<Move>,
        kind: Kind,
        from: usize,
        first: usize,
        lacks: &[Kind],
    ) {
        let v = &*self.variant;
        let info = &v.kinds[kind as usize];
        if let Some((need, lost)) = &info.links.without {
            if lacks.contains(need) {
                retain_since(out, first, |m| match *m {
                    Move::Normal { to, .. } => {
                        !lost.contains(&v.owner_offset(self.side, from, to as usize))
                    }
                    _ => true,
                });
            }
        }
        if let Some(need) = info.links.promotes_with {
            if !info.promoted && lacks.contains(&need) {
                for m in &mut out[first..] {
                    if let Move::Normal { promote, .. } = m {
                        *promote = false;
                    }
                }
                dedup_since(out, first);
            }
        }
    }

    /// The kinds named by `without` or `promotes_with` of which the side to move has no piece.
    #[cold]
    #[inline(never)]
    fn lacking(&self) -> Vec<Kind> {
        let v = &*self.variant;
        let mut needed: Vec<Kind> = v
            .kinds
            .iter()
            .flat_map(|k| {
                k.links
                    .without
                    .iter()
                    .map(|w| w.0)
                    .chain(k.links.promotes_with)
            })
            .collect();
        needed.sort_unstable();
        needed.dedup();
        needed.retain(|&k| !self.side_has(self.side, k));
        needed
    }

    /// Adds the compound moves (`shoot`, `repeat`) of the piece of `kind` on `from`, except
    /// those that take nothing on the way and end where a move added since `out[first]` ends
    /// (the same move).
    #[cold]
    #[inline(never)]
    fn compound_moves(
        &self,
        out: &mut Vec<Move>,
        kind: Kind,
        from: usize,
        first: usize,
        unarmed: bool,
    ) {
        let v = &*self.variant;
        let mut plain = SquareSet::EMPTY;
        for mv in &out[first..] {
            if let Move::Normal { to, .. } = mv {
                plain.insert(*to as usize);
            }
        }
        let moves = crate::compound::moves(v, &self.board, self.side, kind, from, unarmed);
        for (to, taken) in moves {
            if taken.is_empty() && plain.contains(to) {
                continue;
            }
            match v.compound_move(from, to, &taken) {
                Some(mv) => out.push(mv),
                None => debug_assert!(false, "compound move type missing from the table"),
            }
        }
    }

    /// Adds the legal drops of the side to move (`check_drop_mate`: with the drop-mate test).
    #[inline(always)]
    fn drop_moves<S: SquareIndex, const W: usize, const N: usize>(
        &self,
        ctx: &mut Ctx<S, W, N>,
        out: &mut Vec<Move>,
        check_drop_mate: bool,
        us_unarmed: bool,
    ) {
        // From `self`, not `ctx`, as in `board_moves`.
        let v = &*self.variant;
        let (us, them) = (self.side, self.side.flip());
        let occ = |c: usize| Bits::<W>::narrow(&self.occ[c]);
        let empty = Bits::narrow(&v.all_squares).and_not(occ(0).or(occ(1)));
        let nh = v.hand_kinds.len();
        let eksq = match us_unarmed {
            true => None,
            false => self.king[them.index()].map(|k| k as usize),
        };
        let sides = if v.promoted_drops { 2 } else { 1 };
        for side in 0..sides {
            for hi in 0..nh {
                if self.hands[us.index()][hi] == 0 {
                    continue;
                }
                let base = v.hand_kinds[hi];
                let info = &v.kinds[base as usize];
                let kind = match side {
                    0 => base,
                    _ => match info.promotes_to {
                        Some(p) => p,
                        None => continue,
                    },
                };
                let mut targets =
                    Bits::narrow(&v.drop_squares[(2 * side + us.index()) * nh + hi]).and(empty);
                // The per-file limit (nifu: one) restricts unpromoted drops only.
                if let (Some(max), 0) = (info.max_per_file, side) {
                    // Files already holding `max` own unpromoted pieces of this kind.
                    let mut on_file = [0u8; MAX_SIDE as usize];
                    for sq in occ(us.index()).iter() {
                        if self.board[sq].kind() == kind {
                            let x = v.coords(sq).0;
                            on_file[x] += 1;
                            if on_file[x] == max {
                                targets = targets.and_not(Bits::narrow(&v.file_squares[x]));
                            }
                        }
                    }
                }
                let special = info.drop_must_check || (info.no_drop_mate && check_drop_mate);
                // A royal piece dropped (Unashogi) must not land in check.
                let royal = info.royal;
                if !special
                    && !royal
                    && !ctx.test_all
                    && (!ctx.to_sensitive || targets.and(ctx.sensitive).is_empty())
                {
                    // Every target is legal: the common case, in one tight loop.
                    out.extend(targets.iter().map(|to| Move::Drop {
                        kind,
                        to: to as Square,
                    }));
                    continue;
                }
                for to in targets.iter() {
                    let mv = Move::Drop {
                        kind,
                        to: to as Square,
                    };
                    if royal && !ctx.royal_drop_safe(kind, to) {
                        continue;
                    }
                    let test = ctx.test_all || (ctx.to_sensitive && ctx.sensitive.contains(to));
                    if test && !ctx.safe(mv) {
                        continue;
                    }
                    if special {
                        let gives_check = match eksq {
                            Some(e) => {
                                self.drop_gives_check::<S, N>(&mut ctx.scratch, kind, hi, to, e)
                            }
                            None => false,
                        };
                        if info.drop_must_check && !gives_check {
                            continue;
                        }
                        if info.no_drop_mate
                            && check_drop_mate
                            && gives_check
                            && self.drop_mates(mv)
                        {
                            continue;
                        }
                    }
                    out.push(mv);
                }
            }
        }
    }

    /// Adds the moves along one extra ray (from the last rank) of the piece of `kind` on `from`;
    /// the same walk as the plain rays' in `board_moves`, kept apart on purpose: sharing it (an
    /// inlined method, a macro) slowed the hot loop by 2-6% in A/B perft runs.
    #[cold]
    fn ray_moves<S: SquareIndex, const W: usize, const N: usize>(
        &self,
        ctx: &mut Ctx<S, W, N>,
        out: &mut Vec<Move>,
        r: &RayMove,
        kind: Kind,
        from: usize,
        unarmed: bool,
    ) {
        let v = ctx.v;
        let mut hops = 0usize;
        for (i, &to) in v.ray(from, r.dir as usize).iter().enumerate() {
            if i >= r.max_range as usize {
                break;
            }
            let t = self.board.at(to as usize);
            if t.is_empty() {
                if i < r.move_range[hops] as usize {
                    ctx.add(out, kind, from, to as usize);
                }
                continue;
            }
            if t.is_color(ctx.them) && i < r.cap_range[hops] as usize && !unarmed {
                ctx.add(out, kind, from, to as usize);
            }
            hops += 1;
            if hops > r.max_hop as usize {
                break;
            }
        }
    }

    fn drop_gives_check<S: SquareIndex, const N: usize>(
        &self,
        scratch: &mut Board<N>,
        kind: Kind,
        hi: usize,
        to: usize,
        eksq: usize,
    ) -> bool {
        let v = &*self.variant;
        let us = self.side;
        // The leap table is the hand kind's; a promoted drop is tested on the board.
        if v.has_hoppers
            || v.kinds[kind as usize].has_rays
            || kind != v.hand_kinds[hi]
            || v.moves_from_behind
            || v.has_last_rank_moves
        {
            scratch[to] = Piece::new(us, kind);
            let r = attacked::<S, _>(v, scratch, eksq, us);
            scratch[to] = Piece::EMPTY;
            r
        } else {
            v.leap_checks[(us.index() * v.hand_kinds.len() + hi) * v.n + eksq].contains(to)
        }
    }

    /// Whether the (checking) drop leaves the opponent without a legal reply.
    fn drop_mates(&self, mv: Move) -> bool {
        let mut p = self.clone();
        p.make_move(mv);
        let mut replies = Vec::with_capacity(32);
        p.generate(&mut replies, false);
        replies.is_empty()
    }
}

/// Keeps the moves since `out[first]` for which `keep` holds.
fn retain_since(out: &mut Vec<Move>, first: usize, keep: impl Fn(&Move) -> bool) {
    let mut kept = first;
    for i in first..out.len() {
        if keep(&out[i]) {
            out[kept] = out[i];
            kept += 1;
        }
    }
    out.truncate(kept);
}

/// Removes the moves added since `out[first]` by the piece of `kind` that take a piece it may
/// not take by moving onto it.
#[cold]
#[inline(never)]
fn spare_since<B: BoardRead + ?Sized>(
    v: &Variant,
    board: &B,
    (kind, from): (Kind, usize),
    out: &mut Vec<Move>,
    first: usize,
) {
    let mover = board.at(from).color();
    retain_since(out, first, |m| {
        let t = board.at(m.to());
        t.is_empty() || t.color() == mover || v.displaces(kind, t.kind())
    });
}

/// Removes the moves since `out[first]` that repeat an earlier one there (a leap and a ride of
/// one piece to the same square), keeping the first of each.
#[cold]
#[inline(never)]
fn dedup_since(out: &mut Vec<Move>, first: usize) {
    let mut seen = std::collections::HashSet::new();
    let mut i = first;
    while i < out.len() {
        if seen.insert(out[i]) {
            i += 1;
        } else {
            out.remove(i);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::SplitMix64;
    use crate::spec::VariantSpec;
    use std::sync::Arc;

    /// The large boards' generation (two-byte tables, 1,296-bit sets, 2,048-square arrays)
    /// gives exactly the small boards' moves on every built-in variant that fits both, along
    /// random games: the large variants run the same code on the other types.
    #[test]
    fn large_board_generation_matches_the_small_one() {
        let mut rng = SplitMix64(7);
        let mut positions = 0;
        for name in VariantSpec::builtin_names() {
            let v = Arc::new(Variant::builtin(name).unwrap());
            if v.n > SMALL_BOARD {
                continue;
            }
            for _ in 0..3 {
                let mut pos = Position::start(v.clone());
                for _ in 0..80 {
                    let (mut small, mut large) = (Vec::new(), Vec::new());
                    pos.generate_sized(&mut small, true, true, false);
                    pos.generate_sized(&mut large, true, true, true);
                    assert_eq!(small, large, "{name}: {}", pos.to_sfen());
                    positions += 1;
                    if small.is_empty() {
                        break;
                    }
                    let mv = small[rng.below(small.len())];
                    pos.make_move(mv);
                }
            }
        }
        assert!(positions > 1000, "{positions} positions compared");
    }
}
