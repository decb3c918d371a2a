//! The `Evaluator` trait: a batch of encoded positions in, policy logits and WDL out.
//!
//! The search asks through a [`Request`]: reused buffers holding the encoded positions and,
//! per position, the policy entries it needs (its legal moves), so that an evaluator copies back
//! only those logits. [`Evaluator::submit`] may answer later (an inference server on another
//! thread), which lets a search thread prepare its next batch meanwhile.

use std::sync::mpsc;
use thiserror::Error;

/// An evaluator failed (device error, shape mismatch...).
#[derive(Clone, Debug, Error)]
#[error("evaluator: {0}")]
pub struct EvaluatorError(pub String);

/// Network output for one position.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Evaluation {
    /// Policy logits over the whole policy vector (illegal moves included; mask them).
    pub policy_logits: Vec<f32>,
    /// Win, draw, loss probabilities for the side to move (sum to 1).
    pub wdl: [f32; 3],
}

impl Evaluation {
    /// Expected score for the side to move in [-1, 1]: win - loss.
    pub fn value(&self) -> f32 {
        self.wdl[0] - self.wdl[2]
    }
}

/// A batch of positions to evaluate and, after evaluation, the answers; the buffers are kept
/// and reused from batch to batch.
#[derive(Clone, Debug, Default)]
pub struct Request {
    /// Encoded positions back to back (`len() * input_len` floats).
    pub inputs: Vec<f32>,
    /// The policy indices wanted, the positions' lists back to back.
    pub moves: Vec<u32>,
    /// Per position, the end of its list in `moves`.
    pub ends: Vec<u32>,
    /// Answer: one logit per entry of `moves`.
    pub logits: Vec<f32>,
    /// Answer: win, draw, loss probabilities per position.
    pub wdl: Vec<[f32; 3]>,
}

impl Request {
    /// Positions in the batch.
    pub fn len(&self) -> usize {
        self.ends.len()
    }

    /// Whether the batch is empty.
    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }

    /// Empties the batch, keeping the buffers.
    pub fn clear(&mut self) {
        self.inputs.clear();
        self.moves.clear();
        self.ends.clear();
        self.logits.clear();
        self.wdl.clear();
    }

    /// Adds a position: returns its zeroed input slot of `input_len` floats; its wanted policy
    /// indices are then pushed on `moves`, and [`Request::end_position`] closes it.
    pub fn add_position(&mut self, input_len: usize) -> &mut [f32] {
        let off = self.inputs.len();
        self.inputs.resize(off + input_len, 0.0);
        &mut self.inputs[off..]
    }

    /// Closes the position added last.
    pub fn end_position(&mut self) {
        self.ends.push(self.moves.len() as u32);
    }

    /// The range in `moves` (and `logits`) of position `i`.
    pub fn range(&self, i: usize) -> std::ops::Range<usize> {
        let start = if i == 0 { 0 } else { self.ends[i - 1] as usize };
        start..self.ends[i] as usize
    }

    /// Appends the positions of `other` (not its answers).
    pub fn append(&mut self, other: &Request) {
        let base = self.moves.len() as u32;
        self.inputs.extend_from_slice(&other.inputs);
        self.moves.extend_from_slice(&other.moves);
        self.ends.extend(other.ends.iter().map(|e| e + base));
    }

    /// Checks the buffers' sizes against the evaluator's (an error names what is wrong).
    pub fn check(&self, input_len: usize, policy_len: usize) -> Result<(), EvaluatorError> {
        if self.inputs.len() != self.len() * input_len {
            return Err(EvaluatorError(format!(
                "expected {} floats for {} positions, got {}",
                self.len() * input_len,
                self.len(),
                self.inputs.len()
            )));
        }
        if self.ends.last().map_or(0, |&e| e as usize) != self.moves.len()
            || self.ends.windows(2).any(|w| w[0] > w[1])
        {
            return Err(EvaluatorError("request: move lists out of order".into()));
        }
        if let Some(&m) = self.moves.iter().find(|&&m| m as usize >= policy_len) {
            return Err(EvaluatorError(format!(
                "request: policy index {m} out of range (policy length {policy_len})"
            )));
        }
        Ok(())
    }

    /// Hands the answers of this joined request (made by [`Request::append`] of `parts`, in
    /// order) back to each part.
    pub fn split_answers(&self, parts: &mut [Request]) {
        let (mut p, mut m) = (0, 0);
        for part in parts {
            let (np, nm) = (part.len(), part.moves.len());
            part.logits.clear();
            part.logits.extend_from_slice(&self.logits[m..m + nm]);
            part.wdl.clear();
            part.wdl.extend_from_slice(&self.wdl[p..p + np]);
            p += np;
            m += nm;
        }
    }

    /// Fills the answers from whole-policy evaluations (the generic path).
    pub fn answer_from(&mut self, out: &[Evaluation]) {
        self.logits.clear();
        self.wdl.clear();
        for (i, e) in out.iter().enumerate() {
            let r = self.range(i);
            self.logits
                .extend(self.moves[r].iter().map(|&m| e.policy_logits[m as usize]));
            self.wdl.push(e.wdl);
        }
    }
}

/// A submitted request: answered already, or on its way from another thread.
#[derive(Debug)]
pub enum Ticket {
    /// Answered during `submit`.
    Ready(Request),
    /// Answered by another thread through this channel.
    Pending(mpsc::Receiver<Result<Request, EvaluatorError>>),
}

impl Ticket {
    /// Waits for the answer.
    pub fn wait(self) -> Result<Request, EvaluatorError> {
        match self {
            Ticket::Ready(r) => Ok(r),
            Ticket::Pending(rx) => rx
                .recv()
                .map_err(|_| EvaluatorError("the inference server stopped".into()))?,
        }
    }
}

/// Scores batches of encoded positions.
///
/// `inputs` holds `batch` positions back to back, each `input_len()` floats laid out as
/// `[planes, ranks, files]` (see the `selfplay` crate's encoder).
pub trait Evaluator {
    /// Floats per encoded position.
    fn input_len(&self) -> usize;
    /// Length of the policy vector.
    fn policy_len(&self) -> usize;
    /// Evaluates `batch` positions.
    fn evaluate(&mut self, inputs: &[f32], batch: usize)
        -> Result<Vec<Evaluation>, EvaluatorError>;

    /// Answers `r` in place: the logits of its wanted moves and the WDL of each position.
    /// The default evaluates whole policies and picks the entries; a network overrides it to
    /// copy back only those.
    fn evaluate_request(&mut self, r: &mut Request) -> Result<(), EvaluatorError> {
        r.check(self.input_len(), self.policy_len())?;
        let out = self.evaluate(&r.inputs, r.len())?;
        r.answer_from(&out);
        Ok(())
    }

    /// Answers several requests in one pass (an inference server's batch). The default joins
    /// them into one request and splits the answers; a network overrides it to stage each
    /// request's inputs straight into its device buffer.
    fn evaluate_batch(&mut self, requests: &mut [Request]) -> Result<(), EvaluatorError> {
        match requests {
            [] => Ok(()),
            [one] => self.evaluate_request(one),
            many => {
                let mut all = Request::default();
                for r in many.iter() {
                    all.append(r);
                }
                self.evaluate_request(&mut all)?;
                all.split_answers(many);
                Ok(())
            }
        }
    }

    /// Starts evaluating `r`; the answer comes with [`Ticket::wait`]. The default answers at
    /// once; an inference server's client answers later, so the caller can work meanwhile.
    fn submit(&mut self, mut r: Request) -> Result<Ticket, EvaluatorError> {
        self.evaluate_request(&mut r)?;
        Ok(Ticket::Ready(r))
    }
}

/// Evaluators behind a reference or a box forward every method (the defaults would bypass
/// the inner evaluator's own fast paths).
macro_rules! forward_evaluator {
    ($($ty:ty),*) => {$(
        impl<E: Evaluator + ?Sized> Evaluator for $ty {
            fn input_len(&self) -> usize {
                (**self).input_len()
            }
            fn policy_len(&self) -> usize {
                (**self).policy_len()
            }
            fn evaluate(
                &mut self,
                inputs: &[f32],
                batch: usize,
            ) -> Result<Vec<Evaluation>, EvaluatorError> {
                (**self).evaluate(inputs, batch)
            }
            fn evaluate_request(&mut self, r: &mut Request) -> Result<(), EvaluatorError> {
                (**self).evaluate_request(r)
            }
            fn evaluate_batch(&mut self, requests: &mut [Request]) -> Result<(), EvaluatorError> {
                (**self).evaluate_batch(requests)
            }
            fn submit(&mut self, r: Request) -> Result<Ticket, EvaluatorError> {
                (**self).submit(r)
            }
        }
    )*};
}

forward_evaluator!(&mut E, Box<E>);

/// Uniform policy and an even WDL: the network-free baseline and the test double.
#[derive(Clone, Debug)]
pub struct UniformEvaluator {
    /// Floats per encoded position.
    pub input_len: usize,
    /// Length of the policy vector.
    pub policy_len: usize,
}

impl Evaluator for UniformEvaluator {
    fn input_len(&self) -> usize {
        self.input_len
    }

    fn policy_len(&self) -> usize {
        self.policy_len
    }

    fn evaluate(
        &mut self,
        inputs: &[f32],
        batch: usize,
    ) -> Result<Vec<Evaluation>, EvaluatorError> {
        if inputs.len() != batch * self.input_len {
            return Err(EvaluatorError(format!(
                "expected {} floats for {batch} positions, got {}",
                batch * self.input_len,
                inputs.len()
            )));
        }
        Ok((0..batch)
            .map(|_| Evaluation {
                policy_logits: vec![0.0; self.policy_len],
                wdl: [1.0 / 3.0; 3],
            })
            .collect())
    }

    fn evaluate_request(&mut self, r: &mut Request) -> Result<(), EvaluatorError> {
        r.check(self.input_len, self.policy_len)?;
        r.logits.clear();
        r.logits.resize(r.moves.len(), 0.0);
        r.wdl.clear();
        r.wdl.resize(r.len(), [1.0 / 3.0; 3]);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uniform_checks_shapes() {
        let mut e = UniformEvaluator {
            input_len: 4,
            policy_len: 7,
        };
        let out = e.evaluate(&[0.0; 8], 2).unwrap();
        assert_eq!(out.len(), 2);
        assert_eq!(out[0].policy_logits.len(), 7);
        assert!(out[0].value().abs() < 1e-6);
        assert!(e.evaluate(&[0.0; 7], 2).is_err());
    }

    /// A fake network whose logit for index m of a position is m plus its first input.
    struct Indexed;
    impl Evaluator for Indexed {
        fn input_len(&self) -> usize {
            2
        }
        fn policy_len(&self) -> usize {
            10
        }
        fn evaluate(&mut self, x: &[f32], n: usize) -> Result<Vec<Evaluation>, EvaluatorError> {
            Ok((0..n)
                .map(|i| Evaluation {
                    policy_logits: (0..10).map(|m| m as f32 + x[2 * i]).collect(),
                    wdl: [x[2 * i + 1], 0.0, 1.0 - x[2 * i + 1]],
                })
                .collect())
        }
    }

    fn request(positions: &[(f32, &[u32])]) -> Request {
        let mut r = Request::default();
        for &(x, moves) in positions {
            r.add_position(2).copy_from_slice(&[x, 0.25]);
            r.moves.extend_from_slice(moves);
            r.end_position();
        }
        r
    }

    #[test]
    fn requests_get_the_wanted_logits_only() {
        let mut r = request(&[(100.0, &[3, 7]), (200.0, &[]), (300.0, &[0, 9, 1])]);
        let mut e = Indexed;
        let r2 = e.submit(r.clone()).unwrap().wait().unwrap();
        assert_eq!(r2.logits, vec![103.0, 107.0, 300.0, 309.0, 301.0]);
        assert_eq!(r2.wdl.len(), 3);
        assert_eq!(r2.range(1), 2..2);
        assert_eq!(r2.wdl[0], [0.25, 0.0, 0.75]);
        // Appending keeps each position's own list.
        let mut a = request(&[(1.0, &[2])]);
        a.append(&r);
        e.evaluate_request(&mut a).unwrap();
        assert_eq!(a.logits, vec![3.0, 103.0, 107.0, 300.0, 309.0, 301.0]);
        // Several requests in one pass: each gets its own answers.
        let mut parts = vec![
            request(&[(1.0, &[2])]),
            request(&[]),
            request(&[(100.0, &[3, 7]), (200.0, &[])]),
        ];
        e.evaluate_batch(&mut parts).unwrap();
        assert_eq!(parts[0].logits, vec![3.0]);
        assert!(parts[1].logits.is_empty() && parts[1].wdl.is_empty());
        assert_eq!(parts[2].logits, vec![103.0, 107.0]);
        assert_eq!(parts[2].wdl.len(), 2);
        // Bad requests are refused with a reason, never a panic.
        r.moves[0] = 10;
        assert!(e
            .evaluate_request(&mut r)
            .unwrap_err()
            .0
            .contains("out of range"));
        let mut u = UniformEvaluator {
            input_len: 2,
            policy_len: 10,
        };
        r.inputs.pop();
        assert!(u.evaluate_request(&mut r).is_err());
    }
}
