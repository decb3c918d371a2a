//! The replay window: the most recent training samples, turned into batches.
//!
//! A sample's WDL target is the game result for the side to move, optionally mixed with the
//! search's root values ([`ValueTargets`]: lc0's `--q-ratio`, KataGo's short-term value).

use crate::error::SelfPlayError;
use crate::samples::GameRecord;
use encoding::Encoder;
use rules::{Color, Move, Position};
use std::collections::VecDeque;

/// Rounding may leave a recorded root value a hair outside [-1, 1] (the store accepts the same
/// tolerance); such values are clamped.
const VALUE_TOLERANCE: f32 = 1e-3;

/// The largest draw weight a sample gets from its policy surprise (see
/// [`ReplayWindow::set_policy_surprise_weight`]); samples are drawn by rejection against it.
pub const MAX_SAMPLE_WEIGHT: f32 = 4.0;

/// How a sample's WDL target mixes the game result with the search's root values:
/// `(1 - q_ratio - short_term_ratio) * onehot(result) + q_ratio * wdl(root value) +
/// short_term_ratio * wdl(short-term value)`, where `wdl(v) = (max(v, 0), 1 - |v|, max(-v, 0))`
/// is the distribution whose expected score is `v`. All zero (the default): the result alone.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct ValueTargets {
    /// Weight of the position's own root value (lc0's q-ratio), in [0, 1].
    pub q_ratio: f64,
    /// Horizon `h` of the short-term value in plies (0: off): an exponentially weighted average
    /// of the root values of this and the following recorded positions of the game, each from
    /// this position's side to move, ply `d` ahead weighted `(1 - 1/h)^d / h`. An unrecorded
    /// ply takes the value of the next recorded position (the result after the last one), and
    /// every ply past the end takes the result, so the tail mass goes to the result. When every
    /// position is recorded, the `k`-th following one weighs `(1 - 1/h)^k / h` (KataGo).
    pub short_term_horizon: u32,
    /// Weight of the short-term value, in [0, 1]; needs `short_term_horizon >= 1`.
    pub short_term_ratio: f64,
}

impl ValueTargets {
    /// Checks ranges; errors name the key.
    pub fn validate(&self) -> Result<(), SelfPlayError> {
        if !(0.0..=1.0).contains(&self.q_ratio) {
            return Err(SelfPlayError::value_targets("q_ratio", "must be in [0, 1]"));
        }
        if !(0.0..=1.0).contains(&self.short_term_ratio) {
            return Err(SelfPlayError::value_targets(
                "short_term_ratio",
                "must be in [0, 1]",
            ));
        }
        if self.q_ratio + self.short_term_ratio > 1.0 {
            return Err(SelfPlayError::value_targets(
                "short_term_ratio",
                format!(
                    "q_ratio + short_term_ratio must be at most 1 (they are {} + {})",
                    self.q_ratio, self.short_term_ratio
                ),
            ));
        }
        if self.short_term_ratio > 0.0 && self.short_term_horizon == 0 {
            return Err(SelfPlayError::value_targets(
                "short_term_ratio",
                "needs short_term_horizon >= 1 (plies)",
            ));
        }
        Ok(())
    }

    /// Whether the target is the game result alone.
    pub fn result_only(&self) -> bool {
        self.q_ratio == 0.0 && self.short_term_ratio == 0.0
    }

    fn short_term(&self) -> bool {
        self.short_term_ratio > 0.0 && self.short_term_horizon > 0
    }

    /// The WDL target for a position whose side to move scores `result` (-1, 0, 1), whose root
    /// value is `value` and whose short-term value is `short_term`.
    pub fn mix(&self, result: i8, value: f32, short_term: f32) -> [f32; 3] {
        let wdl = |v: f64| [v.max(0.0), 1.0 - v.abs(), (-v).max(0.0)];
        let (z, q, s) = (
            wdl(result as f64),
            wdl(value as f64),
            wdl(short_term as f64),
        );
        let rz = 1.0 - self.q_ratio - self.short_term_ratio;
        std::array::from_fn(|k| {
            (rz * z[k] + self.q_ratio * q[k] + self.short_term_ratio * s[k]) as f32
        })
    }
}

/// Short-term values of a game's recorded positions: `plies[i]` and `sides[i]` locate target
/// `i`, `values[i]` is its root value (for `sides[i]`), `length` is the game's number of plies.
fn short_term_values(
    horizon: u32,
    plies: &[usize],
    sides: &[Color],
    values: &[f32],
    length: usize,
    result: rules::GameResult,
) -> Vec<f32> {
    let keep = 1.0 - 1.0 / horizon as f64;
    let n = values.len();
    let mut out = vec![0.0f32; n];
    // Backwards: the value from target i + 1 on (for sides[i + 1]), the result past the end.
    let mut later = 0.0f64;
    for i in (0..n).rev() {
        let (next_ply, later_here) = if i + 1 < n {
            let same = sides[i + 1] == sides[i];
            (plies[i + 1], if same { later } else { -later })
        } else {
            (length, result.score_for(sides[i]) as f64)
        };
        // Plies plies[i]..next_ply take this root value, the rest the later average.
        let tail = keep.powi((next_ply - plies[i]) as i32);
        later = (1.0 - tail) * values[i] as f64 + tail * later_here;
        out[i] = later as f32;
    }
    out
}

/// One recorded position of a stored game.
struct StoredTarget {
    ply: usize,
    /// Sparse policy target.
    policy: Vec<(u32, f32)>,
    /// Root value for the side to move, in [-1, 1].
    value: f32,
    /// Short-term value for the side to move (0 when the window does not use it).
    short_term: f32,
    /// Draw weight in [0, MAX_SAMPLE_WEIGHT] (1 without policy-surprise weighting).
    weight: f32,
}

struct StoredGame {
    start: Position,
    moves: Vec<Move>,
    /// The positions with a target, by ply.
    targets: Vec<StoredTarget>,
    result: rules::GameResult,
    /// Samples added before this game (a running count, so lookups are a binary search).
    first_sample: u64,
}

/// The most recent samples of a run, oldest first.
pub struct ReplayWindow {
    encoder: Encoder,
    value_targets: ValueTargets,
    games: VecDeque<StoredGame>,
    samples: usize,
    total_added: u64,
    /// KataGo's policy-surprise weighting (0: off).
    surprise_weight: f64,
    /// Training batches mirror each sample with probability 1/2 ([`ReplayWindow::set_mirror`]).
    mirror: bool,
}

/// The buffers of a batch's inputs, policy targets and WDL targets.
type Batch<'a> = (&'a mut Vec<f32>, &'a mut Vec<f32>, &'a mut Vec<f32>);

impl ReplayWindow {
    /// An empty window whose WDL targets are the game results.
    pub fn new(encoder: Encoder) -> ReplayWindow {
        ReplayWindow {
            encoder,
            value_targets: ValueTargets::default(),
            games: VecDeque::new(),
            samples: 0,
            total_added: 0,
            surprise_weight: 0.0,
            mirror: false,
        }
    }

    /// Mirror augmentation (off by default): each sample of a training batch is, with
    /// probability 1/2, its mirror image with left and right swapped (input, policy target
    /// and opponent-reply target; the value target is the same), as AlphaGo and KataGo train
    /// on the symmetries of the board. An error when the variant's rules are not mirror
    /// symmetric or the layout cannot mirror ([`Encoder::can_mirror`]).
    pub fn set_mirror(&mut self, on: bool) -> Result<(), SelfPlayError> {
        if on && !self.encoder.can_mirror() {
            let why = match self.encoder.layout() {
                encoding::EncodingLayout::Dlshogi => "the dlshogi layout cannot be mirrored",
                _ => "the variant's pieces do not move alike to the left and to the right",
            };
            return Err(SelfPlayError::value_targets("mirror", why));
        }
        self.mirror = on;
        Ok(())
    }

    /// KataGo's policy-surprise weighting, `a` in [0, 1] (0, the default: uniform draws).
    /// Games added from now on give their recorded positions the draw weight `(1 - a) + a *
    /// s / mean(s)`, `s` a position's policy surprise and the mean over the game's recorded
    /// positions (1 when every surprise is 0, as in shards older than the field), capped at
    /// [`MAX_SAMPLE_WEIGHT`]; a game's weights average 1 before the cap, so the positions
    /// where the search most disagreed with the network are drawn more often, and no game
    /// more than another.
    pub fn set_policy_surprise_weight(&mut self, a: f64) -> Result<(), SelfPlayError> {
        if !(0.0..=1.0).contains(&a) {
            return Err(SelfPlayError::value_targets(
                "policy_surprise_weight",
                "must be in [0, 1]",
            ));
        }
        self.surprise_weight = a;
        Ok(())
    }

    /// An empty window whose WDL targets mix the results with the root values as `targets`
    /// says (checked: errors name the key).
    pub fn with_value_targets(
        encoder: Encoder,
        targets: ValueTargets,
    ) -> Result<ReplayWindow, SelfPlayError> {
        targets.validate()?;
        Ok(ReplayWindow {
            value_targets: targets,
            ..ReplayWindow::new(encoder)
        })
    }

    /// How the WDL targets are made.
    pub fn value_targets(&self) -> &ValueTargets {
        &self.value_targets
    }

    /// The encoder samples are encoded with.
    pub fn encoder(&self) -> &Encoder {
        &self.encoder
    }

    /// Samples held.
    pub fn len(&self) -> usize {
        self.samples
    }

    /// Whether no sample is held.
    pub fn is_empty(&self) -> bool {
        self.samples == 0
    }

    /// Samples ever added.
    pub fn total_added(&self) -> u64 {
        self.total_added
    }

    /// Adds a game's samples (checks the moves against the rules, the targets' indices and
    /// root values: finite and in [-1, 1]).
    pub fn add_game(&mut self, rec: &GameRecord) -> Result<(), SelfPlayError> {
        let v = self.encoder.variant().clone();
        let start = Position::from_sfen(&v, &rec.start_sfen)?;
        let mut pos = start.clone();
        let mut moves = Vec::with_capacity(rec.moves.len());
        let mut targets = Vec::new();
        let mut sides = Vec::new();
        let policy_len = self.encoder.policy_len() as u32;
        for (ply, (usi, target)) in rec.moves.iter().zip(&rec.targets).enumerate() {
            let mv = pos
                .parse_usi(usi)
                .map_err(|source| SelfPlayError::Move { ply, source })?;
            if let Some(t) = target {
                if t.policy.iter().any(|&(i, _)| i >= policy_len) {
                    return Err(SelfPlayError::target(ply, "policy index out of range"));
                }
                let lim = 1.0 + VALUE_TOLERANCE;
                if !(-lim..=lim).contains(&t.value) {
                    return Err(SelfPlayError::target(
                        ply,
                        format!("root value {} is not in [-1, 1]", t.value),
                    ));
                }
                if !(t.surprise.is_finite() && t.surprise >= 0.0) {
                    return Err(SelfPlayError::target(
                        ply,
                        format!(
                            "policy surprise {} is not a non-negative number",
                            t.surprise
                        ),
                    ));
                }
                targets.push(StoredTarget {
                    ply,
                    policy: t.policy.clone(),
                    value: t.value.clamp(-1.0, 1.0),
                    short_term: 0.0,
                    weight: t.surprise,
                });
                sides.push(pos.side_to_move());
            }
            pos.make_move(mv);
            moves.push(mv);
        }
        if self.value_targets.short_term() {
            let plies: Vec<usize> = targets.iter().map(|t| t.ply).collect();
            let values: Vec<f32> = targets.iter().map(|t| t.value).collect();
            let st = short_term_values(
                self.value_targets.short_term_horizon,
                &plies,
                &sides,
                &values,
                moves.len(),
                rec.result,
            );
            for (t, s) in targets.iter_mut().zip(st) {
                t.short_term = s;
            }
        }
        // `weight` holds the surprise until here.
        let a = self.surprise_weight;
        let mean =
            targets.iter().map(|t| f64::from(t.weight)).sum::<f64>() / targets.len().max(1) as f64;
        for t in &mut targets {
            t.weight = if a > 0.0 && mean > 0.0 {
                ((1.0 - a) + a * f64::from(t.weight) / mean).min(f64::from(MAX_SAMPLE_WEIGHT))
                    as f32
            } else {
                1.0
            };
        }
        let first_sample = self.total_added;
        self.samples += targets.len();
        self.total_added += targets.len() as u64;
        self.games.push_back(StoredGame {
            start,
            moves,
            targets,
            result: rec.result,
            first_sample,
        });
        Ok(())
    }

    /// Drops the oldest games until at most `window` samples remain (whole games).
    pub fn trim(&mut self, window: usize) {
        while self.samples > window {
            let Some(g) = self.games.pop_front() else {
                break;
            };
            self.samples -= g.targets.len();
        }
    }

    /// Fills a batch of `n` samples drawn (with replacement) from the window, uniformly or,
    /// with policy-surprise weighting, in proportion to their weights:
    /// `inputs` (n * input_len), `policy` (n * policy_len, dense), `wdl` (n * 3, win/draw/loss
    /// for the side to move: the game result, mixed with root values as the window's
    /// [`ValueTargets`] say). `below(k)` must return a uniform integer in `0..k`.
    pub fn sample_batch(
        &self,
        n: usize,
        below: impl FnMut(usize) -> usize,
        inputs: &mut Vec<f32>,
        policy: &mut Vec<f32>,
        wdl: &mut Vec<f32>,
    ) {
        self.fill(n, below, (inputs, policy, wdl), None, false);
    }

    /// [`ReplayWindow::sample_batch`] plus the targets of KataGo's opponent-reply output in
    /// `replies` (n * policy_len, dense): for each drawn position, the opponent's answer to
    /// the move played there, indexed as the policy of the position after that move (the
    /// search target recorded there, else the move the opponent played), a row of zeros when
    /// the game ended with the move.
    pub fn sample_batch_with_replies(
        &self,
        n: usize,
        below: impl FnMut(usize) -> usize,
        inputs: &mut Vec<f32>,
        policy: &mut Vec<f32>,
        wdl: &mut Vec<f32>,
        replies: &mut Vec<f32>,
    ) {
        self.fill(n, below, (inputs, policy, wdl), Some(replies), false);
    }

    /// [`ReplayWindow::sample_batch`] with the game results alone as WDL targets, whatever
    /// the window's [`ValueTargets`]: what a value accuracy is measured against.
    pub fn sample_results_batch(
        &self,
        n: usize,
        below: impl FnMut(usize) -> usize,
        inputs: &mut Vec<f32>,
        policy: &mut Vec<f32>,
        wdl: &mut Vec<f32>,
    ) {
        self.fill(n, below, (inputs, policy, wdl), None, true);
    }

    fn fill(
        &self,
        n: usize,
        mut below: impl FnMut(usize) -> usize,
        (inputs, policy, wdl): Batch<'_>,
        mut replies: Option<&mut Vec<f32>>,
        results_only: bool,
    ) {
        let il = self.encoder.input_len();
        let pl = self.encoder.policy_len();
        inputs.clear();
        inputs.resize(n * il, 0.0);
        policy.clear();
        policy.resize(n * pl, 0.0);
        wdl.clear();
        wdl.resize(n * 3, 0.0);
        if let Some(r) = replies.as_deref_mut() {
            r.clear();
            r.resize(n * pl, 0.0);
        }
        if self.samples == 0 {
            return;
        }
        let mixed = !(results_only || self.value_targets.result_only());
        let mut scratch = Vec::new();
        for i in 0..n {
            let (game, target) = self.draw(&mut below);
            let mut pos = game.start.clone();
            for &mv in &game.moves[..target.ply] {
                pos.make_move(mv);
            }
            self.encoder.encode(&pos, &mut inputs[i * il..(i + 1) * il]);
            for &(idx, p) in &target.policy {
                policy[i * pl + idx as usize] += p;
            }
            if let Some(r) = replies.as_deref_mut() {
                self.reply_target(game, target.ply, &pos, &mut r[i * pl..(i + 1) * pl]);
            }
            if self.mirror && !results_only && below(2) == 1 {
                let input = &mut inputs[i * il..(i + 1) * il];
                let p = &mut policy[i * pl..(i + 1) * pl];
                match replies.as_deref_mut() {
                    Some(r) => {
                        let r = &mut r[i * pl..(i + 1) * pl];
                        self.encoder.mirror_sample(input, &mut [p, r], &mut scratch);
                    }
                    None => self.encoder.mirror_sample(input, &mut [p], &mut scratch),
                }
            }
            let r = game.result.score_for(pos.side_to_move());
            if mixed {
                let w = self.value_targets.mix(r, target.value, target.short_term);
                wdl[i * 3..i * 3 + 3].copy_from_slice(&w);
            } else {
                wdl[i * 3 + (1 - r) as usize] = 1.0;
            }
        }
    }

    /// The opponent-reply target of the position `pos` at `ply` of `game` into `row` (zeroed):
    /// the search target recorded at `ply + 1`, else the move played there; nothing when the
    /// game ended at `ply + 1`.
    fn reply_target(&self, game: &StoredGame, ply: usize, pos: &Position, row: &mut [f32]) {
        let Some(&reply) = game.moves.get(ply + 1) else {
            return;
        };
        let next = game.targets.partition_point(|t| t.ply <= ply);
        match game.targets.get(next).filter(|t| t.ply == ply + 1) {
            Some(t) => {
                for &(idx, p) in &t.policy {
                    row[idx as usize] += p;
                }
            }
            None => {
                let mut after = pos.clone();
                after.make_move(game.moves[ply]);
                row[self.encoder.move_to_index(&after, reply)] = 1.0;
            }
        }
    }

    /// One sample: uniform over the samples (its running index, then its game by bisection),
    /// kept with probability weight / [`MAX_SAMPLE_WEIGHT`] under policy-surprise weighting
    /// (uniform draws take no extra random numbers).
    fn draw(&self, below: &mut impl FnMut(usize) -> usize) -> (&StoredGame, &StoredTarget) {
        const ONE: usize = 1 << 24;
        let base = self.games[0].first_sample;
        let mut tries = 0;
        loop {
            let global = base + below(self.samples) as u64;
            let gi = self
                .games
                .partition_point(|g| g.first_sample + g.targets.len() as u64 <= global);
            let game = &self.games[gi];
            let target = &game.targets[(global - game.first_sample) as usize];
            tries += 1;
            // A window of zero weights (never built by add_game) still draws after 1,000 tries.
            if (target.weight == 1.0 && self.surprise_weight == 0.0)
                || tries >= 1000
                || (below(ONE) as f32) < target.weight / MAX_SAMPLE_WEIGHT * ONE as f32
            {
                return (game, target);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::samples::MoveTarget;
    use rules::{GameResult, Variant};
    use std::sync::Arc;

    /// A minishogi game of `surprises.len()` plies (first legal move each ply), every position
    /// recorded with policy index = its ply and the given surprise.
    fn surprising_game(surprises: &[f32]) -> (Encoder, GameRecord) {
        let v = Arc::new(Variant::builtin("minishogi").unwrap());
        let enc = Encoder::new(v.clone());
        let mut pos = Position::start(v.clone());
        let (mut moves, mut targets) = (Vec::new(), Vec::new());
        for (ply, &s) in surprises.iter().enumerate() {
            let mv = pos.legal_moves()[0];
            moves.push(pos.move_to_usi(mv));
            targets.push(Some(MoveTarget {
                policy: vec![(ply as u32, 1.0)],
                value: 0.0,
                surprise: s,
            }));
            pos.make_move(mv);
        }
        let rec = GameRecord {
            start_sfen: v.start_sfen.clone(),
            moves,
            targets,
            result: rules::GameResult::Draw,
            reason: "test".into(),
        };
        (enc, rec)
    }

    /// `n` samples of `w` drawn in order (the k-th draw from a range of m is k % m): inputs,
    /// policies and WDL targets.
    fn in_order(w: &ReplayWindow, n: usize) -> (Vec<f32>, Vec<f32>, Vec<f32>) {
        let (mut x, mut p, mut z) = (Vec::new(), Vec::new(), Vec::new());
        w.sample_batch(n, in_order_draws(), &mut x, &mut p, &mut z);
        (x, p, z)
    }

    /// Draws in order: the n-th draw (from 0) from a range of k is n % k.
    fn in_order_draws() -> impl FnMut(usize) -> usize {
        let mut next = 0;
        move |k| {
            next += 1;
            (next - 1) % k
        }
    }

    /// How often each ply is drawn in `n` samples of `w`, and how many random numbers the
    /// draws took.
    fn draw_counts(w: &ReplayWindow, plies: usize, n: usize) -> (Vec<usize>, usize) {
        let mut rng = rules::SplitMix64(7);
        let mut calls = 0;
        let (mut x, mut p, mut z) = (Vec::new(), Vec::new(), Vec::new());
        w.sample_batch(
            n,
            |k| {
                calls += 1;
                rng.below(k)
            },
            &mut x,
            &mut p,
            &mut z,
        );
        let pl = w.encoder().policy_len();
        let mut counts = vec![0; plies];
        for i in 0..n {
            let row = &p[i * pl..(i + 1) * pl];
            counts[row.iter().position(|&q| q == 1.0).unwrap()] += 1;
        }
        (counts, calls)
    }

    /// Policy-surprise weighting, by hand: surprises 0.3 and 0.1 (mean 0.2) at a = 0.5 weigh
    /// 0.5 + 0.5 * 1.5 = 1.25 and 0.5 + 0.5 * 0.5 = 0.75, so the first is drawn 5/8 of the
    /// time; off, both are drawn alike with one random number a draw; at a = 1 a game whose
    /// surprise is all on one position draws only that one (its weight 8, capped at 4).
    #[test]
    fn policy_surprise_weights_the_draws() {
        const N: usize = 8000;
        let (enc, rec) = surprising_game(&[0.3, 0.1]);
        let mut on = ReplayWindow::new(enc.clone());
        on.set_policy_surprise_weight(0.5).unwrap();
        on.add_game(&rec).unwrap();
        let (c, _) = draw_counts(&on, 2, N);
        let share = c[0] as f64 / N as f64;
        // 5/8 = 0.625; 8,000 draws put 3 standard deviations at 0.016.
        assert!(
            (share - 0.625).abs() < 0.02,
            "first position drawn {share} of the time"
        );
        let mut off = ReplayWindow::new(enc.clone());
        off.add_game(&rec).unwrap();
        let (c, calls) = draw_counts(&off, 2, N);
        assert_eq!(calls, N, "uniform draws take one random number each");
        let share = c[0] as f64 / N as f64;
        assert!(
            (share - 0.5).abs() < 0.02,
            "off: first position drawn {share} of the time"
        );
        // All the surprise on one position of eight.
        let (enc, rec) = surprising_game(&[0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0]);
        let mut all = ReplayWindow::new(enc.clone());
        all.set_policy_surprise_weight(1.0).unwrap();
        all.add_game(&rec).unwrap();
        let (c, _) = draw_counts(&all, 8, 500);
        assert_eq!(c[3], 500, "{c:?}");
        // Shards older than the field: every surprise 0, uniform draws.
        let (enc, rec) = surprising_game(&[0.0; 4]);
        let mut old = ReplayWindow::new(enc);
        old.set_policy_surprise_weight(0.5).unwrap();
        old.add_game(&rec).unwrap();
        let (c, _) = draw_counts(&old, 4, N);
        for k in c {
            let share = k as f64 / N as f64;
            assert!((share - 0.25).abs() < 0.02, "{share}");
        }
    }

    #[test]
    fn bad_surprises_and_weights_are_refused() {
        for s in [f32::NAN, -0.5, f32::INFINITY] {
            let (enc, rec) = surprising_game(&[0.1, s]);
            let e = ReplayWindow::new(enc)
                .add_game(&rec)
                .unwrap_err()
                .to_string();
            assert!(e.contains("policy surprise") && e.contains("ply 1"), "{e}");
        }
        let (enc, _) = surprising_game(&[0.1]);
        let mut w = ReplayWindow::new(enc);
        for a in [-0.1, 1.5, f64::NAN] {
            let e = w.set_policy_surprise_weight(a).unwrap_err().to_string();
            assert!(e.contains("policy_surprise_weight"), "{e}");
        }
    }

    #[test]
    fn batches_match_the_recorded_games() {
        let v = Arc::new(Variant::builtin("minishogi").unwrap());
        let enc = Encoder::new(v.clone());
        let mut pos = Position::start(v.clone());
        let mut moves = Vec::new();
        let mut targets = Vec::new();
        for _ in 0..4 {
            let mv = pos.legal_moves()[0];
            let idx = enc.move_to_index(&pos, mv) as u32;
            moves.push(pos.move_to_usi(mv));
            targets.push(Some(MoveTarget {
                policy: vec![(idx, 1.0)],
                value: 0.0,
                surprise: 0.0,
            }));
            pos.make_move(mv);
        }
        targets[1] = None;
        let rec = GameRecord {
            start_sfen: v.start_sfen.clone(),
            moves,
            targets,
            result: rules::GameResult::SenteWins,
            reason: "test".into(),
        };
        let mut w = ReplayWindow::new(enc.clone());
        w.add_game(&rec).unwrap();
        w.add_game(&rec).unwrap();
        assert_eq!(w.len(), 6);
        w.trim(4);
        assert_eq!(w.len(), 3);
        let (x, p, z) = in_order(&w, 3);
        // Sample 0 is ply 0 (sente to move, sente won): a win; sample 1 is ply 2, also sente.
        assert_eq!(&z[0..3], &[1.0, 0.0, 0.0]);
        // Sample 2 is ply 3: gote to move, so a loss.
        assert_eq!(&z[6..9], &[0.0, 0.0, 1.0]);
        let pl = enc.policy_len();
        for i in 0..3 {
            let s: f32 = p[i * pl..(i + 1) * pl].iter().sum();
            assert!((s - 1.0).abs() < 1e-6);
        }
        let start = Position::start(v);
        let mut want = vec![0.0; enc.input_len()];
        enc.encode(&start, &mut want);
        assert_eq!(&x[..enc.input_len()], &want[..]);
        // A record with an illegal move is refused.
        let mut bad = rec.clone();
        bad.moves[0] = "1a1b".into();
        assert!(w.add_game(&bad).is_err());
    }

    #[test]
    fn reply_targets_are_the_next_search_target_or_the_move_played() {
        // Five plies of the last legal move each; ply 2 (a fast search) is not recorded, and
        // the targets of plies 1 and 3 split over two moves, so that they differ from the
        // moves played.
        let v = Arc::new(Variant::builtin("minishogi").unwrap());
        let enc = Encoder::new(v.clone());
        let mut pos = Position::start(v.clone());
        let (mut moves, mut targets, mut played) = (Vec::new(), Vec::new(), Vec::new());
        for ply in 0..5 {
            let legal = pos.legal_moves();
            let mv = *legal.last().unwrap();
            let idx = enc.move_to_index(&pos, mv) as u32;
            let other = enc.move_to_index(&pos, legal[0]) as u32;
            assert_ne!(idx, other);
            played.push(idx as usize);
            moves.push(pos.move_to_usi(mv));
            targets.push((ply != 2).then(|| MoveTarget {
                policy: vec![(other, 0.75), (idx, 0.25)],
                value: 0.0,
                surprise: 0.0,
            }));
            pos.make_move(mv);
        }
        let rec = GameRecord {
            start_sfen: v.start_sfen.clone(),
            moves,
            targets: targets.clone(),
            result: rules::GameResult::Draw,
            reason: "test".into(),
        };
        let mut w = ReplayWindow::new(enc.clone());
        w.add_game(&rec).unwrap();
        assert_eq!(w.len(), 4);
        let (mut x, mut p, mut z, mut r) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
        w.sample_batch_with_replies(4, in_order_draws(), &mut x, &mut p, &mut z, &mut r);
        let pl = enc.policy_len();
        let row = |i: usize| &r[i * pl..(i + 1) * pl];
        let sparse = |i: usize| -> Vec<(usize, f32)> {
            row(i)
                .iter()
                .enumerate()
                .filter(|(_, &q)| q != 0.0)
                .map(|(k, &q)| (k, q))
                .collect()
        };
        let target_of = |ply: usize| -> Vec<(usize, f32)> {
            let mut t: Vec<(usize, f32)> = targets[ply]
                .as_ref()
                .unwrap()
                .policy
                .iter()
                .map(|&(k, q)| (k as usize, q))
                .collect();
            t.sort_by_key(|&(k, _)| k);
            t
        };
        // The samples are plies 0, 1, 3 and 4. Ply 0 is answered at ply 1, recorded: its
        // search target. Ply 1 is answered at ply 2, not recorded: the move played there.
        assert_eq!(sparse(0), target_of(1));
        assert_eq!(sparse(1), vec![(played[2], 1.0)]);
        assert_eq!(sparse(2), target_of(4));
        // Ply 4 ended the game: no answer.
        assert!(row(3).iter().all(|&q| q == 0.0));
        // The other buffers are those of sample_batch with the same draws.
        let (x2, p2, z2) = in_order(&w, 4);
        assert_eq!((x, p, z), (x2, p2, z2));
    }

    #[test]
    fn mirrored_batches_hold_each_sample_plain_or_mirrored() {
        let (enc, rec) = game([0.1, -0.2, 0.3, -0.4], GameResult::Draw);
        let mut plain = ReplayWindow::new(enc.clone());
        plain.add_game(&rec).unwrap();
        let mut w = ReplayWindow::new(enc.clone());
        w.set_mirror(true).unwrap();
        w.add_game(&rec).unwrap();
        let (il, pl) = (enc.input_len(), enc.policy_len());
        // Every sample of the game, as it is and mirrored (inputs with their policies).
        let (x, p, _) = in_order(&plain, 4);
        let mut scratch = Vec::new();
        let mut known = Vec::new();
        for i in 0..4 {
            let (xi, pi) = (
                x[i * il..(i + 1) * il].to_vec(),
                p[i * pl..(i + 1) * pl].to_vec(),
            );
            let (mut xm, mut pm) = (xi.clone(), pi.clone());
            enc.mirror_sample(&mut xm, &mut [&mut pm], &mut scratch);
            assert!(xm != xi, "ply {i} is its own mirror image");
            known.push((xi, pi, false));
            known.push((xm, pm, true));
        }
        let mut rng = rules::SplitMix64(3);
        let (mut xs, mut ps, mut zs) = (Vec::new(), Vec::new(), Vec::new());
        w.sample_batch(64, |k| rng.below(k), &mut xs, &mut ps, &mut zs);
        let mut mirrored = 0;
        for i in 0..64 {
            let (xi, pi) = (&xs[i * il..(i + 1) * il], &ps[i * pl..(i + 1) * pl]);
            let (_, _, m) = known
                .iter()
                .find(|(x, p, _)| x[..] == xi[..] && p[..] == pi[..])
                .unwrap_or_else(|| panic!("sample {i} is no sample of the game"));
            mirrored += usize::from(*m);
        }
        assert!((16..=48).contains(&mirrored), "{mirrored} of 64 mirrored");
        // Value accuracy is measured on the samples as they are.
        w.sample_results_batch(64, |k| rng.below(k), &mut xs, &mut ps, &mut zs);
        for i in 0..64 {
            let xi = &xs[i * il..(i + 1) * il];
            assert!(known.iter().any(|(x, _, m)| !m && x[..] == xi[..]));
        }
    }

    #[test]
    fn mirroring_is_refused_where_the_rules_are_one_sided() {
        let tori = Encoder::new(Arc::new(Variant::builtin("tori").unwrap()));
        let mut w = ReplayWindow::new(tori);
        let e = w.set_mirror(true).unwrap_err().to_string();
        assert!(e.contains("mirror") && e.contains("left"), "{e}");
        w.set_mirror(false).unwrap();
        let shogi = Arc::new(Variant::builtin("shogi").unwrap());
        let dl = Encoder::with_layout(shogi, encoding::EncodingLayout::Dlshogi).unwrap();
        let e = ReplayWindow::new(dl)
            .set_mirror(true)
            .unwrap_err()
            .to_string();
        assert!(e.contains("dlshogi"), "{e}");
    }

    /// A 4-ply minishogi game (first legal move each ply), every position recorded with the
    /// given root values (sente to move at plies 0 and 2, gote at 1 and 3).
    fn game(values: [f32; 4], result: GameResult) -> (Encoder, GameRecord) {
        let v = Arc::new(Variant::builtin("minishogi").unwrap());
        let enc = Encoder::new(v.clone());
        let mut pos = Position::start(v.clone());
        let (mut moves, mut targets) = (Vec::new(), Vec::new());
        for value in values {
            let mv = pos.legal_moves()[0];
            let idx = enc.move_to_index(&pos, mv) as u32;
            moves.push(pos.move_to_usi(mv));
            targets.push(Some(MoveTarget {
                policy: vec![(idx, 1.0)],
                value,
                surprise: 0.0,
            }));
            pos.make_move(mv);
        }
        let rec = GameRecord {
            start_sfen: v.start_sfen.clone(),
            moves,
            targets,
            result,
            reason: "test".into(),
        };
        (enc, rec)
    }

    /// The WDL targets of samples 0..n of a window holding only `rec`, in order.
    fn targets_of(targets: ValueTargets, enc: &Encoder, rec: &GameRecord) -> Vec<[f32; 3]> {
        wdl_of(targets, enc, rec, false)
    }

    /// The WDL targets of samples 0..n, in order, of the training batch or (`results`) of
    /// the results batch.
    fn wdl_of(t: ValueTargets, enc: &Encoder, rec: &GameRecord, results: bool) -> Vec<[f32; 3]> {
        let mut w = ReplayWindow::with_value_targets(enc.clone(), t).unwrap();
        w.add_game(rec).unwrap();
        let n = w.len();
        let (mut x, mut p, mut z) = (Vec::new(), Vec::new(), Vec::new());
        let mut next = 0;
        let order = |_| {
            next += 1;
            next - 1
        };
        if results {
            w.sample_results_batch(n, order, &mut x, &mut p, &mut z);
        } else {
            w.sample_batch(n, order, &mut x, &mut p, &mut z);
        }
        z.chunks(3).map(|c| [c[0], c[1], c[2]]).collect()
    }

    fn assert_close(got: &[[f32; 3]], want: &[[f32; 3]]) {
        assert_eq!(got.len(), want.len());
        for (i, (g, w)) in got.iter().zip(want).enumerate() {
            for k in 0..3 {
                assert!(
                    (g[k] - w[k]).abs() < 1e-6,
                    "sample {i}: got {g:?}, want {w:?}"
                );
            }
            let s: f32 = g.iter().sum();
            assert!(
                (s - 1.0).abs() < 1e-6,
                "sample {i}: {g:?} does not sum to 1"
            );
        }
    }

    const VALUES: [f32; 4] = [0.5, -0.2, 0.8, -1.0];

    #[test]
    fn q_ratio_mixes_the_root_value() {
        let (enc, rec) = game(VALUES, GameResult::SenteWins);
        let t = ValueTargets {
            q_ratio: 0.25,
            ..Default::default()
        };
        // 0.75 * onehot(result) + 0.25 * (max(v, 0), 1 - |v|, max(-v, 0)); sente won.
        let want = [
            [0.75 + 0.25 * 0.5, 0.25 * 0.5, 0.0], // sente, v = 0.5: a win
            [0.0, 0.25 * 0.8, 0.75 + 0.25 * 0.2], // gote, v = -0.2: a loss
            [0.75 + 0.25 * 0.8, 0.25 * 0.2, 0.0], // sente, v = 0.8
            [0.0, 0.0, 1.0],                      // gote, v = -1: a loss either way
        ];
        assert_close(&targets_of(t, &enc, &rec), &want);
    }

    #[test]
    fn results_batches_ignore_the_mix() {
        let (enc, rec) = game(VALUES, GameResult::SenteWins);
        let t = ValueTargets {
            q_ratio: 1.0,
            ..Default::default()
        };
        // Sente won: a win for plies 0 and 2, a loss for 1 and 3, whatever the root values.
        let got = wdl_of(t, &enc, &rec, true);
        let (win, loss) = ([1.0, 0.0, 0.0], [0.0, 0.0, 1.0]);
        assert_close(&got, &[win, loss, win, loss]);
        // The training batch of the same window is the root values' WDL (q_ratio 1).
        assert_close(&targets_of(t, &enc, &rec)[..1], &[[0.5, 0.5, 0.0]]);
    }

    #[test]
    fn short_term_value_alone() {
        let (enc, rec) = game(VALUES, GameResult::Draw);
        let t = ValueTargets {
            short_term_horizon: 2,
            short_term_ratio: 0.5,
            ..Default::default()
        };
        // h = 2: weights (1/2) (1/2)^k. From sente's side the values are 0.5, 0.2, 0.8, 1.0
        // and the draw 0 past the end:
        //   st0 = 0.5 * (0.5 + 0.5 * 0.2 + 0.25 * 0.8 + 0.125 * 1.0) + 0.0625 * 0 = 0.4625
        //   st1 = 0.5 * (0.2 + 0.5 * 0.8 + 0.25 * 1.0) = 0.425, so -0.425 for gote
        //   st2 = 0.5 * (0.8 + 0.5 * 1.0) = 0.65
        //   st3 = 0.5 * 1.0 = 0.5, so -0.5 for gote
        // target = 0.5 * (0, 1, 0) + 0.5 * wdl(st).
        let want = [
            [0.5 * 0.4625, 0.5 + 0.5 * 0.5375, 0.0],
            [0.0, 0.5 + 0.5 * 0.575, 0.5 * 0.425],
            [0.5 * 0.65, 0.5 + 0.5 * 0.35, 0.0],
            [0.0, 0.5 + 0.5 * 0.5, 0.5 * 0.5],
        ];
        assert_close(&targets_of(t, &enc, &rec), &want);
    }

    #[test]
    fn q_ratio_and_short_term_value_together() {
        let (enc, rec) = game(VALUES, GameResult::Draw);
        let t = ValueTargets {
            q_ratio: 0.25,
            short_term_horizon: 2,
            short_term_ratio: 0.5,
        };
        // 0.25 * (0, 1, 0) + 0.25 * wdl(v) + 0.5 * wdl(st), st as in the test above.
        let want = [
            [
                0.25 * 0.5 + 0.5 * 0.4625,
                0.25 + 0.25 * 0.5 + 0.5 * 0.5375,
                0.0,
            ],
            [
                0.0,
                0.25 + 0.25 * 0.8 + 0.5 * 0.575,
                0.25 * 0.2 + 0.5 * 0.425,
            ],
            [0.25 * 0.8 + 0.5 * 0.65, 0.25 + 0.25 * 0.2 + 0.5 * 0.35, 0.0],
            [0.0, 0.25 + 0.5 * 0.5, 0.25 * 1.0 + 0.5 * 0.5],
        ];
        assert_close(&targets_of(t, &enc, &rec), &want);
    }

    #[test]
    fn the_tail_of_the_short_term_value_goes_to_the_result() {
        let (enc, rec) = game([0.0; 4], GameResult::GoteWins);
        let t = ValueTargets {
            short_term_horizon: 4,
            short_term_ratio: 1.0,
            ..Default::default()
        };
        // Root values all 0: st = (3/4)^(4 - i) * result, +-1 by the side to move.
        let tail = |i: i32| 0.75f32.powi(4 - i);
        let want: Vec<[f32; 3]> = (0..4)
            .map(|i| {
                let s = tail(i);
                if i % 2 == 0 {
                    [0.0, 1.0 - s, s] // sente lost
                } else {
                    [s, 1.0 - s, 0.0]
                }
            })
            .collect();
        assert_close(&targets_of(t, &enc, &rec), &want);
    }

    #[test]
    fn short_term_values_over_plies_with_unrecorded_positions() {
        use rules::Color::{Gote, Sente};
        // Fully recorded (the values of the tests above, from each side to move).
        let st = short_term_values(
            2,
            &[0, 1, 2, 3],
            &[Sente, Gote, Sente, Gote],
            &VALUES,
            4,
            GameResult::Draw,
        );
        for (g, w) in st.iter().zip([0.4625, -0.425, 0.65, -0.5]) {
            assert!((g - w).abs() < 1e-6, "{st:?}");
        }
        // Plies 1 and 3 unrecorded: each takes the next recorded value (the result after the
        // last): st2 = (1 - 1/4) * 0.8 + 1/4 * 0 = 0.6, st0 = 3/4 * 0.5 + 1/4 * 0.6 = 0.525.
        let st = short_term_values(
            2,
            &[0, 2],
            &[Sente, Sente],
            &[0.5, 0.8],
            4,
            GameResult::Draw,
        );
        assert!(
            (st[0] - 0.525).abs() < 1e-6 && (st[1] - 0.6).abs() < 1e-6,
            "{st:?}"
        );
        // Horizon 1: the position's own value.
        let st = short_term_values(
            1,
            &[0, 1, 2, 3],
            &[Sente, Gote, Sente, Gote],
            &VALUES,
            4,
            GameResult::SenteWins,
        );
        assert_eq!(st, VALUES.to_vec());
    }

    #[test]
    fn with_both_ratios_zero_the_targets_are_the_results_exactly() {
        let (enc, rec) = game(VALUES, GameResult::SenteWins);
        let results = [
            [1.0, 0.0, 0.0],
            [0.0, 0.0, 1.0],
            [1.0, 0.0, 0.0],
            [0.0, 0.0, 1.0],
        ];
        let off = ValueTargets {
            short_term_horizon: 8,
            ..Default::default()
        };
        for t in [ValueTargets::default(), off] {
            assert_eq!(targets_of(t, &enc, &rec), results);
        }
        // The same batch, inputs and policy included, as a plain window's.
        let draw = |w: &ReplayWindow| {
            let (mut x, mut p, mut z) = (Vec::new(), Vec::new(), Vec::new());
            let mut next = 0;
            w.sample_batch(
                7,
                |k| {
                    next += 3;
                    next % k
                },
                &mut x,
                &mut p,
                &mut z,
            );
            (x, p, z)
        };
        let mut plain = ReplayWindow::new(enc.clone());
        let mut zero = ReplayWindow::with_value_targets(enc.clone(), off).unwrap();
        plain.add_game(&rec).unwrap();
        zero.add_game(&rec).unwrap();
        assert_eq!(draw(&plain), draw(&zero));
    }

    #[test]
    fn bad_root_values_are_refused() {
        for bad in [f32::NAN, f32::INFINITY, 1.5, -1.01] {
            let (enc, mut rec) = game(VALUES, GameResult::Draw);
            rec.targets[2].as_mut().unwrap().value = bad;
            let mut w = ReplayWindow::new(enc);
            let e = w.add_game(&rec).unwrap_err().to_string();
            assert!(e.contains("ply 2") && e.contains("root value"), "{e}");
            assert!(w.is_empty());
        }
        // A rounding hair outside (the store's tolerance) is clamped.
        let (enc, mut rec) = game(VALUES, GameResult::Draw);
        rec.targets[0].as_mut().unwrap().value = 1.0005;
        let t = ValueTargets {
            q_ratio: 1.0,
            ..Default::default()
        };
        assert_eq!(targets_of(t, &enc, &rec)[0], [1.0, 0.0, 0.0]);
    }

    #[test]
    fn ratios_are_checked() {
        let enc = game(VALUES, GameResult::Draw).0;
        let bad = |t: ValueTargets, key: &str| {
            let e = ReplayWindow::with_value_targets(enc.clone(), t)
                .err()
                .expect("refused")
                .to_string();
            assert!(e.starts_with(key), "{e}");
        };
        let t = ValueTargets::default();
        bad(ValueTargets { q_ratio: 1.5, ..t }, "q_ratio");
        bad(
            ValueTargets {
                q_ratio: f64::NAN,
                ..t
            },
            "q_ratio",
        );
        let st = ValueTargets {
            short_term_horizon: 6,
            short_term_ratio: 0.5,
            ..t
        };
        bad(
            ValueTargets {
                short_term_ratio: -0.1,
                ..st
            },
            "short_term_ratio",
        );
        bad(ValueTargets { q_ratio: 0.6, ..st }, "short_term_ratio");
        bad(
            ValueTargets {
                short_term_horizon: 0,
                ..st
            },
            "short_term_ratio",
        );
        assert!(ReplayWindow::with_value_targets(enc, ValueTargets { q_ratio: 0.5, ..st }).is_ok());
    }
}
