//! The `Evaluator` trait: a batch of encoded positions in, policy logits and WDL out.

use thiserror::Error;

/// An evaluator failed (device error, shape mismatch...).
#[derive(Debug, Error)]
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
}

impl<E: Evaluator + ?Sized> Evaluator for &mut E {
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
}

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
}
