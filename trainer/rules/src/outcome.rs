//! Game results: checkmate, stalemate, repetition, perpetual check, move limit.

use crate::checks::CheckLines;
use crate::error::{Error, Result};
use crate::position::Position;
use crate::types::{Color, Move};
use crate::values::StalemateValue;

/// Why a game ended.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum EndReason {
    /// No legal move while in check.
    Checkmate,
    /// No legal move while not in check.
    Stalemate,
    /// The same position occurred the configured number of times (a draw unless the variant's
    /// `repetition_result` says otherwise).
    Repetition,
    /// A repetition in which one side checked with every move: that side loses.
    PerpetualCheck,
    /// The configured ply limit was reached.
    MoveLimit,
    /// A side was left with nothing but its royal pieces (`[end] bare_king`).
    BareKing,
    /// A side was left with at most `[end] bare_pieces` pieces.
    BarePieces,
    /// A side made an unbreakable line of `[end] connect` pieces.
    Connect,
    /// A side lost its last royal piece (`[end] royal_capture`).
    RoyalCaptured,
}

impl EndReason {
    /// Lower-case words, as written in game records (`checkmate`, `perpetual check`).
    pub fn name(self) -> &'static str {
        match self {
            EndReason::Checkmate => "checkmate",
            EndReason::Stalemate => "stalemate",
            EndReason::Repetition => "repetition",
            EndReason::PerpetualCheck => "perpetual check",
            EndReason::MoveLimit => "move limit",
            EndReason::BareKing => "bare king",
            EndReason::BarePieces => "bare pieces",
            EndReason::Connect => "connect",
            EndReason::RoyalCaptured => "royal captured",
        }
    }
}

impl std::fmt::Display for EndReason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// The result of a finished game.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Outcome {
    /// The winner, or `None` for a draw.
    pub winner: Option<Color>,
    /// Why the game ended.
    pub reason: EndReason,
}

/// A finished game's result, from sente's side: the one result type of game records, sample
/// shards and matches. Stored as 1 (sente wins), 0 (draw) or -1 (gote wins); any other value
/// is rejected when read.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default, serde::Serialize, serde::Deserialize)]
#[serde(try_from = "i8", into = "i8")]
pub enum GameResult {
    /// Sente won.
    SenteWins,
    /// A draw.
    #[default]
    Draw,
    /// Gote won.
    GoteWins,
}

impl GameResult {
    /// The result with this winner (`None`: a draw).
    pub fn from_winner(winner: Option<Color>) -> GameResult {
        match winner {
            Some(Color::Sente) => GameResult::SenteWins,
            Some(Color::Gote) => GameResult::GoteWins,
            None => GameResult::Draw,
        }
    }

    /// The winner, `None` for a draw.
    pub fn winner(self) -> Option<Color> {
        match self {
            GameResult::SenteWins => Some(Color::Sente),
            GameResult::GoteWins => Some(Color::Gote),
            GameResult::Draw => None,
        }
    }

    /// From `color`'s point of view: 1 win, 0 draw, -1 loss.
    pub fn score_for(self, color: Color) -> i8 {
        match self.winner() {
            None => 0,
            Some(w) if w == color => 1,
            Some(_) => -1,
        }
    }
}

impl TryFrom<i8> for GameResult {
    type Error = Error;
    fn try_from(v: i8) -> Result<GameResult> {
        match v {
            1 => Ok(GameResult::SenteWins),
            0 => Ok(GameResult::Draw),
            -1 => Ok(GameResult::GoteWins),
            _ => Err(Error::Value {
                what: "game result".into(),
                value: v.to_string(),
                expected: "1, 0 or -1".into(),
            }),
        }
    }
}

impl From<GameResult> for i8 {
    fn from(r: GameResult) -> i8 {
        r.score_for(Color::Sente)
    }
}

impl Outcome {
    /// Result from `color`'s point of view: 1 win, 0 draw, -1 loss.
    pub fn score_for(&self, color: Color) -> i32 {
        match self.winner {
            None => 0,
            Some(w) if w == color => 1,
            Some(_) => -1,
        }
    }
}

impl Position {
    /// The game result if the game is over here, or `None`.
    pub fn outcome(&self) -> Option<Outcome> {
        if let Some(o) = self.goal_outcome() {
            return Some(o);
        }
        self.outcome_by_moves()
    }

    /// Whether playing `mv`, a legal move here, wins the game at once: after it the opponent
    /// is checkmated, or has lost by one of the variant's goals (royal capture, bare king,
    /// bare pieces, a line). A move that leaves the opponent without a move but not in check
    /// is not looked at (no stalemate win), so a `false` proves nothing; a `true` is what
    /// [`outcome`](Self::outcome) says after the move. The position is unchanged on return.
    pub fn wins_at_once(&mut self, mv: Move) -> bool {
        let us = self.side;
        self.make_move(mv);
        // Only a check can end the game by moves: the legal-move test runs for checks only.
        let o = if self.in_check() {
            self.outcome()
        } else {
            self.goal_outcome()
        };
        self.unmake_move();
        o.is_some_and(|o| o.winner == Some(us))
    }

    /// The results decided by material and royal pieces, before any move is generated.
    fn goal_outcome(&self) -> Option<Outcome> {
        let v = &*self.variant;
        let us = self.side;
        if v.royal_capture {
            // The side to move first: a move can burn the mover's own royal piece.
            if let Some(c) = [us, us.flip()]
                .into_iter()
                .find(|&c| self.royals[c.index()] == 0 && !self.reserve_stands(c))
            {
                return Some(Outcome {
                    winner: Some(c.flip()),
                    reason: EndReason::RoyalCaptured,
                });
            }
        }
        if v.bare_king {
            if let Some(o) = self.bare_king_outcome() {
                return Some(o);
            }
        }
        if v.bare_pieces > 0 || v.connect > 0 {
            if let Some(o) = self.material_goal_outcome() {
                return Some(o);
            }
        }
        None
    }

    /// Whether `c` still has a piece (promoted or not) of every kind of `end.royal_reserve`
    /// (false when the variant has none).
    fn reserve_stands(&self, c: Color) -> bool {
        let v = &*self.variant;
        !v.royal_reserve.is_empty()
            && v.royal_reserve.iter().all(|&k| {
                self.occ[c.index()]
                    .iter()
                    .any(|sq| v.kinds[self.board[sq].kind() as usize].demoted == k)
            })
    }

    /// The results decided by the legal moves, repetitions and the ply limit.
    fn outcome_by_moves(&self) -> Option<Outcome> {
        if !self.has_legal_move() {
            return Some(self.outcome_without_moves());
        }
        self.outcome_with_moves()
    }

    /// The result when the side to move has no legal move: checkmate or stalemate.
    fn outcome_without_moves(&self) -> Outcome {
        let us = self.side;
        if self.in_check() {
            return Outcome {
                winner: Some(us.flip()),
                reason: EndReason::Checkmate,
            };
        }
        let winner = match self.variant.stalemate {
            StalemateValue::Loss => Some(us.flip()),
            StalemateValue::Draw => None,
            StalemateValue::Win => Some(us),
        };
        Outcome {
            winner,
            reason: EndReason::Stalemate,
        }
    }

    /// The results of a position whose side to move has a legal move, after the goals:
    /// repetitions and the ply limit.
    fn outcome_with_moves(&self) -> Option<Outcome> {
        let v = &*self.variant;
        if let Some(o) = self.repetition_outcome() {
            return Some(o);
        }
        if v.max_plies > 0 && self.ply() >= v.max_plies as usize {
            return Some(Outcome {
                winner: None,
                reason: EndReason::MoveLimit,
            });
        }
        None
    }

    /// [`outcome`](Self::outcome) given the legal moves of the side to move (as
    /// [`generate_legal`](Self::generate_legal) writes them), without generating them again.
    pub fn outcome_given(&self, legal: &[Move]) -> Option<Outcome> {
        self.goal_outcome().or_else(|| match legal.is_empty() {
            true => Some(self.outcome_without_moves()),
            false => self.outcome_with_moves(),
        })
    }

    /// A move of `legal` (the legal moves here) that forces a win within `plies` plies: one
    /// that [wins at once](Self::wins_at_once) (`plies` 1 or more), else, with `plies` 3 or
    /// more, a check after which every reply leaves such a move within `plies - 2` (only
    /// checks are tried: a quiet move that threatens a mate is not seen). A game ending on the
    /// way by repetition or the ply limit is no win. `None` proves nothing. The position is
    /// unchanged on return.
    pub fn forced_win(&mut self, legal: &[Move], plies: u32) -> Option<Move> {
        self.forced_win_bounded(legal, plies, &mut { u64::MAX })
    }

    /// [`forced_win`](Self::forced_win) that plays at most `budget` moves (counted down):
    /// once they are spent every open line counts as no win, so `None` proves nothing and a
    /// move returned is a proof all the same.
    pub fn forced_win_bounded(
        &mut self,
        legal: &[Move],
        plies: u32,
        budget: &mut u64,
    ) -> Option<Move> {
        if plies == 0 {
            return None;
        }
        // Only checks can mate: where the variant allows, the moves that cannot check are
        // told apart without playing them.
        let lines = CheckLines::new(self);
        let may_check = |p: &Position, m| lines.as_ref().is_none_or(|l| l.may_check(p, m));
        let spend = |budget: &mut u64| {
            *budget = budget.saturating_sub(1);
            *budget > 0
        };
        for &m in legal {
            if may_check(self, m) {
                if !spend(budget) {
                    return None;
                }
                if self.wins_at_once(m) {
                    return Some(m);
                }
            }
        }
        if plies < 3 {
            return None;
        }
        let mut buffers = (Vec::new(), Vec::new());
        legal.iter().copied().find(|&m| {
            *budget > 0
                && may_check(self, m)
                && self.check_forces_win(m, plies, &mut buffers, budget)
        })
    }

    /// Whether `m` is a check after which every reply leaves a win within `plies - 2` plies
    /// (`buffers`: scratch for the replies and the moves after them; `budget`: moves left).
    fn check_forces_win(
        &mut self,
        m: Move,
        plies: u32,
        (replies, ours): &mut (Vec<Move>, Vec<Move>),
        budget: &mut u64,
    ) -> bool {
        let us = self.side;
        self.make_move(m);
        let mut wins = false;
        if self.in_check() {
            self.generate_legal(replies);
            // No reply: a mate, which `wins_at_once` saw. A game over now is no win.
            if !replies.is_empty() && self.outcome_given(replies).is_none() {
                wins = true;
                for &r in replies.iter() {
                    *budget = budget.saturating_sub(1);
                    if *budget == 0 {
                        wins = false;
                        break;
                    }
                    self.make_move(r);
                    self.generate_legal(ours);
                    let ok = match self.outcome_given(ours) {
                        Some(o) => o.winner == Some(us),
                        None => {
                            let after = std::mem::take(ours);
                            let ok = self.forced_win_bounded(&after, plies - 2, budget).is_some();
                            *ours = after;
                            ok
                        }
                    };
                    self.unmake_move();
                    if !ok {
                        wins = false;
                        break;
                    }
                }
            }
        }
        self.unmake_move();
        wins
    }

    /// Whether `m`, a legal move here, forces a win within `plies` plies (see
    /// [`forced_win`](Self::forced_win)).
    pub fn forces_win(&mut self, m: Move, plies: u32) -> bool {
        plies > 0
            && (self.wins_at_once(m)
                || (plies >= 3
                    && self.check_forces_win(m, plies, &mut (Vec::new(), Vec::new()), &mut {
                        u64::MAX
                    })))
    }

    /// The bare-pieces and n-in-a-row rules. A side with at most `bare_pieces` pieces loses
    /// (the side to move first). The side to move wins with a line standing (the opponent had
    /// its move to break it); the opponent wins with a line that no reply breaks: a line that
    /// can be broken by a capture at once does not count yet.
    fn material_goal_outcome(&self) -> Option<Outcome> {
        let v = &*self.variant;
        let us = self.side;
        let win = |winner: Color, reason| {
            Some(Outcome {
                winner: Some(winner),
                reason,
            })
        };
        if v.bare_pieces > 0 {
            for c in [us, us.flip()] {
                if self.piece_count(c) <= v.bare_pieces as usize {
                    return win(c.flip(), EndReason::BarePieces);
                }
            }
        }
        if v.connect > 0 {
            if self.has_line(us) {
                return win(us, EndReason::Connect);
            }
            if self.has_line(us.flip()) && !self.line_breakable() {
                return win(us.flip(), EndReason::Connect);
            }
        }
        None
    }

    /// Pieces of `c` on the board and in hand.
    fn piece_count(&self, c: Color) -> usize {
        let hand: usize = self.hands[c.index()].iter().map(|&n| n as usize).sum();
        self.occ[c.index()].len() + hand
    }

    /// Whether `c` has `connect` pieces in an unbroken line (ranks and files, with
    /// `connect_all_directions` diagonals too), none on its first `connect_outside_ranks` ranks.
    pub fn has_line(&self, c: Color) -> bool {
        let v = &*self.variant;
        let (files, ranks) = (v.files as isize, v.ranks as isize);
        let outside = v.connect_outside_ranks as isize;
        let counts = |x: isize, y: isize| {
            let own_rank = match c {
                Color::Sente => y >= ranks - outside,
                Color::Gote => y < outside,
            };
            x >= 0
                && y >= 0
                && x < files
                && y < ranks
                && !own_rank
                && self.board[(y * files + x) as usize].is_color(c)
        };
        let dirs: &[(isize, isize)] = match v.connect_all_directions {
            true => &[(1, 0), (0, 1), (1, 1), (1, -1)],
            false => &[(1, 0), (0, 1)],
        };
        let n = v.connect as isize;
        self.occ[c.index()].iter().any(|sq| {
            let (x, y) = (sq as isize % files, sq as isize / files);
            dirs.iter().any(|&(dx, dy)| {
                !counts(x - dx, y - dy) && (0..n).all(|i| counts(x + dx * i, y + dy * i))
            })
        })
    }

    /// Whether some legal move of the side to move leaves the opponent without a line.
    fn line_breakable(&self) -> bool {
        let them = self.side.flip();
        let mut p = self.clone();
        self.legal_moves().into_iter().any(|mv| {
            p.make_move(mv);
            let broken = !p.has_line(them);
            p.unmake_move();
            broken
        })
    }

    /// Pieces of `c` other than royal ones, on the board and in hand.
    fn non_royal_pieces(&self, c: Color) -> usize {
        let hand: usize = self.hands[c.index()].iter().map(|&n| n as usize).sum();
        self.occ[c.index()].len() - self.royals[c.index()] as usize + hand
    }

    /// Pieces of `c` that count for the bare-king rule: in hand, or on the board and able to
    /// move again (a dead piece counts for nobody); for the side that would win (`baring`), not
    /// the kinds `bare_king_ignores` names, and its royal pieces beyond one.
    fn live_pieces(&self, c: Color, baring: bool) -> usize {
        let mut n: usize = self.hands[c.index()].iter().map(|&n| n as usize).sum();
        n += self.occ[c.index()]
            .iter()
            .filter(|&sq| self.counts_for_bare_king(c, sq, baring))
            .count();
        if baring {
            n += (self.royals[c.index()] as usize).saturating_sub(1);
        }
        n
    }

    /// Whether the piece of `c` on `sq` counts in [`Position::live_pieces`]: not royal, not
    /// dead, and with `baring`, not of a kind `bare_king_ignores` names.
    fn counts_for_bare_king(&self, c: Color, sq: usize, baring: bool) -> bool {
        let v = &*self.variant;
        let k = self.board[sq].kind();
        let info = &v.kinds[k as usize];
        !(info.royal || v.is_immobile(c, k, sq) || (baring && info.bare_king_ignored))
    }

    /// The bare-king rule, judged at the turn of the side to move: a lone royal piece (dead
    /// pieces aside) against a side with pieces that count loses, unless the opponent has one
    /// such piece left that it can take now (baring the opponent in turn); two lone royal
    /// pieces draw. Pieces `bare_king_ignores` names do not bare: against only those, play
    /// goes on.
    fn bare_king_outcome(&self) -> Option<Outcome> {
        let v = &*self.variant;
        let us = self.side;
        let them = us.flip();
        // Fast path: more pieces than squares where a piece could be dead.
        if self.royals[us.index()] != 1 || self.non_royal_pieces(us) > v.dead_squares[us.index()] {
            return None;
        }
        if self.live_pieces(us, false) > 0 {
            return None;
        }
        if self.live_pieces(them, false) == 0 && self.royals[them.index()] == 1 {
            return Some(Outcome {
                winner: None,
                reason: EndReason::BareKing,
            });
        }
        let theirs = self.live_pieces(them, true);
        if theirs == 0 {
            return None;
        }
        if theirs == 1 {
            // Their one piece that counts: a non-royal one, or else one of two royal pieces.
            let mut last: Vec<usize> = self.occ[them.index()]
                .iter()
                .filter(|&s| self.counts_for_bare_king(them, s, true))
                .collect();
            if last.is_empty() {
                let royal = |s: &usize| v.kinds[self.board[*s].kind() as usize].royal;
                last = self.occ[them.index()].iter().filter(royal).collect();
            }
            let moves = self.legal_moves();
            if moves.iter().any(|m| last.contains(&m.to())) {
                return None;
            }
        }
        Some(Outcome {
            winner: Some(them),
            reason: EndReason::BareKing,
        })
    }

    /// How many times the current position has occurred (including now).
    pub fn repetition_count(&self) -> usize {
        let h = self.hash;
        self.history
            .iter()
            .rev()
            .step_by(2)
            .filter(|e| e.hash == h)
            .count()
    }

    fn repetition_outcome(&self) -> Option<Outcome> {
        let v = &*self.variant;
        if v.repetition == 0 {
            return None;
        }
        let n = self.history.len();
        let h = self.hash;
        // Indices of occurrences (same side to move: every second entry).
        let occ: Vec<usize> = (0..n)
            .rev()
            .step_by(2)
            .filter(|&i| self.history[i].hash == h)
            .collect();
        if occ.len() < v.repetition as usize {
            return None;
        }
        let first = occ[v.repetition as usize - 1];
        if v.perpetual_check_loses {
            // Positions first+1 ..= now: entry i is in check when the previous mover checked.
            // Entry i's side to move is `us` when (n - 1 - i) is even.
            let us = self.side;
            let mut all_checks = [true, true]; // indexed by the checking side
            for i in first + 1..n {
                let to_move = if (n - 1 - i).is_multiple_of(2) {
                    us
                } else {
                    us.flip()
                };
                let checker = to_move.flip();
                if !self.history[i].in_check {
                    all_checks[checker.index()] = false;
                }
            }
            match (all_checks[0], all_checks[1]) {
                (true, false) => {
                    return Some(Outcome {
                        winner: Some(Color::Gote),
                        reason: EndReason::PerpetualCheck,
                    })
                }
                (false, true) => {
                    return Some(Outcome {
                        winner: Some(Color::Sente),
                        reason: EndReason::PerpetualCheck,
                    })
                }
                _ => {}
            }
        }
        let whose = if v.repetition_for_sente {
            Color::Sente
        } else {
            self.side
        };
        let winner = match v.repetition_result {
            StalemateValue::Draw => None,
            StalemateValue::Win => Some(whose),
            StalemateValue::Loss => Some(whose.flip()),
        };
        Some(Outcome {
            winner,
            reason: EndReason::Repetition,
        })
    }
}
