//! SGD (Nesterov) and AdamW written over tensors, so that their state can be checkpointed
//! (tch's built-in optimizers cannot save theirs), and the moving average of the weights.

use crate::config::{OptimizerKind, TrainConfig};
use std::collections::BTreeMap;
use tch::{nn::VarStore, Tensor};

/// Whether weight decay applies to a variable: convolution and linear weights only, never
/// batch-norm parameters or biases.
pub fn decays(name: &str) -> bool {
    name.ends_with(".weight") && !name.split('.').any(|p| p.starts_with("bn"))
}

/// Optimizer with named state tensors.
#[derive(Debug)]
pub struct Optimizer {
    kind: OptimizerKind,
    /// First moment (momentum buffer for SGD) per variable name.
    m: BTreeMap<String, Tensor>,
    /// Second moment (AdamW only) per variable name.
    v: BTreeMap<String, Tensor>,
    /// Steps taken (Adam bias correction).
    pub steps: u64,
}

impl Optimizer {
    /// Zero state for every trainable variable of `vs`.
    pub fn new(kind: OptimizerKind, vs: &VarStore) -> Optimizer {
        let mut m = BTreeMap::new();
        let mut v = BTreeMap::new();
        for (name, t) in trainable(vs) {
            m.insert(name.clone(), t.zeros_like());
            if kind == OptimizerKind::AdamW {
                v.insert(name, t.zeros_like());
            }
        }
        Optimizer {
            kind,
            m,
            v,
            steps: 0,
        }
    }

    /// The optimizer kind.
    pub fn kind(&self) -> &OptimizerKind {
        &self.kind
    }

    /// One update with the gradients currently stored in the variables.
    pub fn step(&mut self, vs: &VarStore, cfg: &TrainConfig, lr: f64) {
        self.steps += 1;
        let _guard = tch::no_grad_guard();
        for (name, mut p) in trainable(vs) {
            let g = p.grad();
            if !g.defined() {
                continue;
            }
            let wd = if decays(&name) { cfg.weight_decay } else { 0.0 };
            let m = self.m.get_mut(&name).expect("state for every variable");
            match self.kind {
                OptimizerKind::Sgd => {
                    // L2 in the gradient, then Nesterov momentum.
                    let g = if wd > 0.0 { &g + &p * wd } else { g };
                    let _ = m.g_mul_scalar_(cfg.momentum).g_add_(&g);
                    let update = &g + &*m * cfg.momentum;
                    let _ = p.g_sub_(&(update * lr));
                }
                OptimizerKind::AdamW => {
                    let v = self.v.get_mut(&name).expect("state for every variable");
                    let (b1, b2) = (cfg.momentum, cfg.beta2);
                    let _ = m.g_mul_scalar_(b1).g_add_(&(&g * (1.0 - b1)));
                    let _ = v.g_mul_scalar_(b2).g_add_(&(&g * &g * (1.0 - b2)));
                    let c1 = 1.0 - b1.powi(self.steps as i32);
                    let c2 = 1.0 - b2.powi(self.steps as i32);
                    if wd > 0.0 {
                        let _ = p.g_mul_scalar_(1.0 - lr * wd);
                    }
                    let denom = (&*v / c2).sqrt() + cfg.eps;
                    let _ = p.g_sub_(&((&*m / c1) / denom * lr));
                }
            }
        }
    }

    /// State tensors by name (`m.<var>`, `v.<var>`), for checkpoints.
    pub fn state(&self) -> Vec<(String, Tensor)> {
        let mut out: Vec<(String, Tensor)> = self
            .m
            .iter()
            .map(|(k, t)| (format!("m.{k}"), t.shallow_clone()))
            .collect();
        out.extend(
            self.v
                .iter()
                .map(|(k, t)| (format!("v.{k}"), t.shallow_clone())),
        );
        out
    }

    /// Restores state saved by [`Optimizer::state`]; names and shapes must match.
    pub fn load_state(
        &mut self,
        named: Vec<(String, Tensor)>,
        steps: u64,
    ) -> Result<(), StateError> {
        let mut seen = 0;
        for (k, t) in named {
            let (map, var) = match k.split_once('.') {
                Some(("m", var)) => (&mut self.m, var),
                Some(("v", var)) => (&mut self.v, var),
                _ => return Err(StateError::Unexpected(k)),
            };
            let Some(dst) = map.get_mut(var) else {
                return Err(StateError::UnknownVariable(var.to_string()));
            };
            check_shape(&k, &t, dst)?;
            tch::no_grad(|| dst.copy_(&t));
            seen += 1;
        }
        let want = self.m.len() + self.v.len();
        if seen != want {
            return Err(StateError::Count { got: seen, want });
        }
        self.steps = steps;
        Ok(())
    }
}

/// Exponential moving average of the trainable variables: the weights of published networks
/// when `training.ema_decay` > 0. Updated after every optimizer step with the warm-up decay
/// `min(decay, (1 + t) / (10 + t))` at the `t`-th update (0-based).
#[derive(Debug)]
pub struct Ema {
    decay: f64,
    /// Averaged copy of every trainable variable, by name.
    shadow: BTreeMap<String, Tensor>,
    /// Updates taken.
    pub updates: u64,
}

impl Ema {
    /// An average that starts at the current weights of `vs`.
    pub fn new(decay: f64, vs: &VarStore) -> Ema {
        let shadow = tch::no_grad(|| {
            trainable(vs)
                .into_iter()
                .map(|(name, t)| (name, t.detach().copy()))
                .collect()
        });
        Ema {
            decay,
            shadow,
            updates: 0,
        }
    }

    /// The configured decay.
    pub fn decay(&self) -> f64 {
        self.decay
    }

    /// The decay of the `t`-th update (0-based): small at first, `decay` later.
    pub fn decay_at(&self, t: u64) -> f64 {
        self.decay.min((1.0 + t as f64) / (10.0 + t as f64))
    }

    /// One update towards the current weights of `vs`: ema = d * ema + (1 - d) * w.
    pub fn update(&mut self, vs: &VarStore) {
        let d = self.decay_at(self.updates);
        let _guard = tch::no_grad_guard();
        for (name, w) in trainable(vs) {
            let e = self
                .shadow
                .get_mut(&name)
                .expect("an average for every variable");
            let _ = e.g_mul_scalar_(d).g_add_(&(&w * (1.0 - d)));
        }
        self.updates += 1;
    }

    /// The variables of `vs` with every trainable one replaced by its average (batch-norm
    /// statistics and other buffers are the live ones), by name.
    pub fn variables(&self, vs: &VarStore) -> Vec<(String, Tensor)> {
        vs.variables()
            .into_iter()
            .map(|(name, t)| match self.shadow.get(&name) {
                Some(e) => (name, e.shallow_clone()),
                None => (name, t),
            })
            .collect()
    }

    /// The averages by variable name, for checkpoints.
    pub fn state(&self) -> Vec<(String, Tensor)> {
        self.shadow
            .iter()
            .map(|(k, t)| (k.clone(), t.shallow_clone()))
            .collect()
    }

    /// Restores averages saved by [`Ema::state`] after `updates` updates; names and shapes
    /// must match.
    pub fn load_state(
        &mut self,
        named: Vec<(String, Tensor)>,
        updates: u64,
    ) -> Result<(), StateError> {
        let mut seen = 0;
        for (k, t) in named {
            let Some(dst) = self.shadow.get_mut(&k) else {
                return Err(StateError::UnknownVariable(k));
            };
            check_shape(&k, &t, dst)?;
            tch::no_grad(|| dst.copy_(&t));
            seen += 1;
        }
        let want = self.shadow.len();
        if seen != want {
            return Err(StateError::Count { got: seen, want });
        }
        self.updates = updates;
        Ok(())
    }
}

/// Saved optimizer state or weight averages that do not fit the network.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum StateError {
    /// A tensor name that is no part of the state.
    #[error("unexpected tensor {0:?}")]
    Unexpected(String),
    /// State of a variable the network does not have.
    #[error("state of unknown variable {0:?}")]
    UnknownVariable(String),
    /// A tensor of the wrong shape.
    #[error("{name:?} has shape {got:?}, the network needs {want:?}")]
    Shape {
        /// The tensor.
        name: String,
        /// Its shape.
        got: Vec<i64>,
        /// The network's.
        want: Vec<i64>,
    },
    /// Too few or too many tensors.
    #[error("{got} tensors, expected {want}")]
    Count {
        /// Tensors read.
        got: usize,
        /// Tensors the network needs.
        want: usize,
    },
}

fn check_shape(name: &str, t: &Tensor, dst: &Tensor) -> Result<(), StateError> {
    if dst.size() == t.size() {
        return Ok(());
    }
    Err(StateError::Shape {
        name: name.to_string(),
        got: t.size(),
        want: dst.size(),
    })
}

/// Trainable variables by name, sorted.
pub fn trainable(vs: &VarStore) -> Vec<(String, Tensor)> {
    let mut v: Vec<(String, Tensor)> = vs
        .variables()
        .into_iter()
        .filter(|(_, t)| t.requires_grad())
        .collect();
    v.sort_by(|a, b| a.0.cmp(&b.0));
    v
}

/// Global gradient L2 norm over the trainable variables.
pub fn grad_norm(vs: &VarStore) -> f64 {
    let mut sq = 0.0;
    for (_, p) in trainable(vs) {
        let g = p.grad();
        if g.defined() {
            sq += g
                .to_kind(tch::Kind::Double)
                .square()
                .sum(tch::Kind::Double)
                .double_value(&[]);
        }
    }
    sq.sqrt()
}

/// Multiplies every gradient by `s`.
pub fn scale_grads(vs: &VarStore, s: f64) {
    let _guard = tch::no_grad_guard();
    for (_, p) in trainable(vs) {
        let mut g = p.grad();
        if g.defined() {
            let _ = g.g_mul_scalar_(s);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decay_only_conv_and_linear_weights() {
        assert!(decays("tower.3.conv1.weight"));
        assert!(decays("value.fc1.weight"));
        assert!(!decays("tower.3.bn1.weight"));
        assert!(!decays("input.bn.bias"));
        assert!(!decays("policy.conv2.bias"));
    }
}
