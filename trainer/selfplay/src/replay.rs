//! The replay window: the most recent training samples, turned into batches.

use crate::encoding::Encoder;
use crate::samples::GameRecord;
use rules::{Move, Position};
use std::collections::VecDeque;

struct StoredGame {
    start: Position,
    moves: Vec<Move>,
    /// (ply, sparse policy) of the positions with a target.
    targets: Vec<(usize, Vec<(u32, f32)>)>,
    result: rules::GameResult,
    /// Samples added before this game (a running count, so lookups are a binary search).
    first_sample: u64,
}

/// The most recent samples of a run, oldest first.
pub struct ReplayWindow {
    encoder: Encoder,
    games: VecDeque<StoredGame>,
    samples: usize,
    total_added: u64,
}

impl ReplayWindow {
    /// An empty window.
    pub fn new(encoder: Encoder) -> ReplayWindow {
        ReplayWindow {
            encoder,
            games: VecDeque::new(),
            samples: 0,
            total_added: 0,
        }
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

    /// Adds a game's samples (checks the moves against the rules and the targets' indices).
    pub fn add_game(&mut self, rec: &GameRecord) -> Result<(), String> {
        let v = self.encoder.variant().clone();
        let start = Position::from_sfen(&v, &rec.start_sfen).map_err(|e| e.to_string())?;
        let mut pos = start.clone();
        let mut moves = Vec::with_capacity(rec.moves.len());
        let mut targets = Vec::new();
        let policy_len = self.encoder.policy_len() as u32;
        for (ply, (usi, target)) in rec.moves.iter().zip(&rec.targets).enumerate() {
            let mv = pos.parse_usi(usi).map_err(|e| format!("ply {ply}: {e}"))?;
            if let Some(t) = target {
                if t.policy.iter().any(|&(i, _)| i >= policy_len) {
                    return Err(format!("ply {ply}: policy index out of range"));
                }
                targets.push((ply, t.policy.clone()));
            }
            pos.make_move(mv);
            moves.push(mv);
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

    /// Fills a batch of `n` samples drawn uniformly (with replacement) from the window:
    /// `inputs` (n * input_len), `policy` (n * policy_len, dense), `wdl` (n * 3, the game result
    /// for the side to move). `below(k)` must return a uniform integer in `0..k`.
    pub fn sample_batch(
        &self,
        n: usize,
        mut below: impl FnMut(usize) -> usize,
        inputs: &mut Vec<f32>,
        policy: &mut Vec<f32>,
        wdl: &mut Vec<f32>,
    ) {
        let il = self.encoder.input_len();
        let pl = self.encoder.policy_len();
        inputs.clear();
        inputs.resize(n * il, 0.0);
        policy.clear();
        policy.resize(n * pl, 0.0);
        wdl.clear();
        wdl.resize(n * 3, 0.0);
        if self.samples == 0 {
            return;
        }
        for i in 0..n {
            // Uniform over samples: the sample's running index, then its game by bisection.
            let base = self.games[0].first_sample;
            let global = base + below(self.samples) as u64;
            let gi = self
                .games
                .partition_point(|g| g.first_sample + g.targets.len() as u64 <= global);
            let game = &self.games[gi];
            let (ply, target) = &game.targets[(global - game.first_sample) as usize];
            let mut pos = game.start.clone();
            for &mv in &game.moves[..*ply] {
                pos.make_move(mv);
            }
            self.encoder.encode(&pos, &mut inputs[i * il..(i + 1) * il]);
            for &(idx, p) in target {
                policy[i * pl + idx as usize] += p;
            }
            let r = game.result.score_for(pos.side_to_move());
            wdl[i * 3 + (1 - r) as usize] = 1.0;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::samples::MoveTarget;
    use rules::Variant;
    use std::sync::Arc;

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
        let (mut x, mut p, mut z) = (Vec::new(), Vec::new(), Vec::new());
        let mut next = 0;
        w.sample_batch(
            3,
            |k| {
                next += 1;
                (next - 1) % k
            },
            &mut x,
            &mut p,
            &mut z,
        );
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
}
