//! The training step: policy cross-entropy against visit distributions + WDL cross-entropy,
//! weight decay, gradient clipping, fp32 on CPU and bf16 mixed precision with loss scaling on CUDA.

use crate::config::{ModelConfig, TrainConfig};
use crate::device::TorchDevice;
use crate::error::{ModelError, Result};
use crate::net::{is_training_only, NetShape, Network, TrainOutputs};
use crate::optim::{grad_norm, scale_grads, trainable, Ema, Optimizer};
use crate::{Device, DeviceExt};
use std::sync::Mutex;
use tch::{nn::VarStore, Kind, Tensor};

/// Held while a [`Trainer`] seeds libtorch's global generator and draws its weights.
static SEEDED_INIT: Mutex<()> = Mutex::new(());

/// The savable sampling generator (SplitMix64; its state is one `u64`).
pub use rules::SplitMix64 as SplitMix;

/// A training batch on the trainer's device.
#[derive(Debug)]
pub struct Batch {
    /// `[B, planes, ranks, files]`.
    pub inputs: Tensor,
    /// `[B, policy_len]`, rows sum to 1.
    pub policy: Tensor,
    /// `[B, 3]` win/draw/loss targets for the side to move, rows sum to 1.
    pub wdl: Tensor,
    /// `[B, policy_len]` targets of the opponent-reply output (rows sum to 1, or 0 where the
    /// game ended with the move), when the batch carries them ([`Batch::with_opponent`]).
    pub opponent: Option<Tensor>,
}

impl Batch {
    /// Builds a batch from flat row-major slices.
    pub fn from_slices(
        shape: NetShape,
        inputs: &[f32],
        policy: &[f32],
        wdl: &[f32],
        device: Device,
    ) -> Result<Batch> {
        let n = wdl.len() / 3;
        if wdl.len() != n * 3
            || inputs.len() != n * shape.input_len()
            || policy.len() != n * shape.policy_len()
        {
            return Err(ModelError::Checkpoint {
                path: "<batch>".into(),
                reason: format!(
                    "batch slices do not agree: {} inputs, {} policy, {} wdl floats",
                    inputs.len(),
                    policy.len(),
                    wdl.len()
                ),
            });
        }
        let dims = [
            n as i64,
            shape.planes as i64,
            shape.ranks as i64,
            shape.files as i64,
        ];
        let device = device.torch();
        Ok(Batch {
            inputs: Tensor::from_slice(inputs).view(dims).to_device(device),
            policy: Tensor::from_slice(policy)
                .view([n as i64, shape.policy_len() as i64])
                .to_device(device),
            wdl: Tensor::from_slice(wdl)
                .view([n as i64, 3])
                .to_device(device),
            opponent: None,
        })
    }

    /// The batch with the opponent-reply targets `replies` (flat row-major, `[B, policy_len]`).
    pub fn with_opponent(self, replies: &[f32]) -> Result<Batch> {
        let n = self.len();
        let pl = self.policy.size()[1];
        if replies.len() as i64 != n as i64 * pl {
            return Err(ModelError::Checkpoint {
                path: "<batch>".into(),
                reason: format!(
                    "{} opponent-reply floats for {n} samples of {pl} policy entries",
                    replies.len()
                ),
            });
        }
        let device = self.policy.device();
        Ok(Batch {
            opponent: Some(
                Tensor::from_slice(replies)
                    .view([n as i64, pl])
                    .to_device(device),
            ),
            ..self
        })
    }

    /// Number of samples.
    pub fn len(&self) -> usize {
        self.wdl.size()[0] as usize
    }

    /// Whether the batch is empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// What one training step measured.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct StepStats {
    /// Total loss (policy + weighted value).
    pub loss: f64,
    /// Policy cross-entropy.
    pub policy_loss: f64,
    /// WDL cross-entropy.
    pub value_loss: f64,
    /// Cross-entropy of the soft-policy output against the softened target (0 without it).
    pub soft_policy_loss: f64,
    /// Cross-entropy of the opponent-reply output against the opponent's answers (0 without
    /// it or without targets in the batch).
    pub opponent_policy_loss: f64,
    /// Gradient norm before clipping.
    pub grad_norm: f64,
    /// Learning rate used.
    pub lr: f64,
    /// The step was skipped (non-finite gradients under mixed precision).
    pub skipped: bool,
}

/// Network, optimizer and counters: everything a training run needs to continue.
#[derive(Debug)]
pub struct Trainer {
    /// The variables (weights and batch-norm statistics).
    pub vs: VarStore,
    /// The network.
    pub net: Network,
    /// Optimizer with its state.
    pub opt: Optimizer,
    /// Hyper-parameters.
    pub cfg: TrainConfig,
    /// Training steps taken.
    pub step: u64,
    /// Device of the variables (never `Auto`).
    pub device: Device,
    /// Current loss scale (mixed precision).
    pub loss_scale: f64,
    /// Consecutive finite steps since the loss scale last changed.
    pub good_steps: u64,
    /// Sampling generator, saved in checkpoints.
    pub rng: SplitMix,
    /// Moving average of the weights (`cfg.ema_decay` > 0), saved in checkpoints.
    pub(crate) ema: Option<Ema>,
    /// The run's progress in [0, 1] for the `budget` schedule, set by the caller before steps.
    pub(crate) progress: f64,
}

impl Trainer {
    /// A fresh network (initialised from `seed`) and optimizer.
    pub fn new(
        config: &ModelConfig,
        shape: NetShape,
        cfg: TrainConfig,
        device: Device,
        seed: u64,
    ) -> Trainer {
        // libtorch's generator is global: seeding and drawing the weights happen under one lock,
        // so trainers made at the same time on other threads neither take nor shift the draws.
        let (vs, net) = {
            let _seeded = SEEDED_INIT.lock().unwrap_or_else(|e| e.into_inner());
            tch::manual_seed(seed as i64);
            let vs = VarStore::new(device.torch());
            let mut net = Network::new(&vs.root(), config, shape);
            if cfg.soft_policy_weight > 0.0 {
                net.add_soft_policy(&vs.root());
            }
            if cfg.opponent_policy_weight > 0.0 {
                net.add_opponent_policy(&vs.root());
            }
            (vs, net)
        };
        let opt = Optimizer::new(cfg.optimizer.clone(), &vs);
        let ema = (cfg.ema_decay > 0.0).then(|| Ema::new(cfg.ema_decay, &vs));
        Trainer {
            vs,
            net,
            opt,
            cfg,
            step: 0,
            device: device.resolved(),
            loss_scale: 65536.0,
            good_steps: 0,
            rng: SplitMix(seed ^ 0xA076_1D64_78BD_642F),
            ema,
            progress: 0.0,
        }
    }

    /// A batch of flat row-major slices ([`Batch::from_slices`]) in this network's shape, on
    /// its device.
    pub fn batch(&self, inputs: &[f32], policy: &[f32], wdl: &[f32]) -> Result<Batch> {
        Batch::from_slices(self.net.shape, inputs, policy, wdl, self.device)
    }

    /// Sets the run's progress in [0, 1] (clamped; NaN counts as 0) that the `budget`
    /// schedule follows from the next step on; other schedules ignore it.
    pub fn set_progress(&mut self, progress: f64) {
        self.progress = if progress > 0.0 {
            progress.min(1.0)
        } else {
            0.0
        };
    }

    /// The run's progress as last set (0 at first).
    pub fn progress(&self) -> f64 {
        self.progress
    }

    /// The moving average of the weights, when `cfg.ema_decay` > 0.
    pub fn ema(&self) -> Option<&Ema> {
        self.ema.as_ref()
    }

    /// Restarts the moving average (if any) from the current live weights, e.g. after they
    /// were replaced.
    pub fn reset_ema(&mut self) {
        if let Some(e) = &self.ema {
            self.ema = Some(Ema::new(e.decay(), &self.vs));
        }
    }

    /// The weights a published network carries, by name: the moving average of the trainable
    /// variables with the live batch-norm statistics when `cfg.ema_decay` > 0, else the live
    /// variables; never the training-only outputs (soft policy, opponent reply).
    pub fn published_variables(&self) -> Vec<(String, Tensor)> {
        let all: Vec<(String, Tensor)> = match &self.ema {
            Some(e) => e.variables(&self.vs),
            None => self.vs.variables().into_iter().collect(),
        };
        all.into_iter()
            .filter(|(name, _)| !is_training_only(name))
            .collect()
    }

    /// Losses of a batch without training (inference mode).
    pub fn evaluate(&self, b: &Batch) -> (f64, f64) {
        tch::no_grad(|| {
            let (p, v) = self.net.forward_t(&b.inputs, false);
            let (pl, vl) = losses(&p, &v, b);
            (pl.double_value(&[]), vl.double_value(&[]))
        })
    }

    /// Policy entropy (nats) and value accuracy (argmax of the WDL head against the game
    /// result) on a batch, in inference mode.
    pub fn diagnostics(&self, b: &Batch) -> (f64, f64) {
        tch::no_grad(|| {
            let (logits, wdl) = self.net.forward_t(&b.inputs, false);
            let lp = logits.to_kind(Kind::Float).log_softmax(-1, Kind::Float);
            let entropy = -(lp.exp() * &lp)
                .sum_dim_intlist(1, false, Kind::Float)
                .mean(Kind::Float);
            let acc = wdl
                .argmax(1, false)
                .eq_tensor(&b.wdl.argmax(1, false))
                .to_kind(Kind::Float)
                .mean(Kind::Float);
            (entropy.double_value(&[]), acc.double_value(&[]))
        })
    }

    /// One optimisation step on `b` (then an update of the weights' moving average, if any).
    /// The learning rate is the schedule's at this step and at the progress last set.
    pub fn train_step(&mut self, b: &Batch) -> StepStats {
        let lr = self.cfg.lr_at_progress(self.step, self.progress);
        let compute = compute_kind(&self.cfg, self.device);
        let amp = compute.is_some();
        // bf16 compute with f32 weights, done by hand: libtorch's autocast switch warns on
        // every call.
        let TrainOutputs {
            policy: p,
            wdl: v,
            soft,
            opponent,
        } = self.net.forward_train(&b.inputs, true, compute);
        let (pl, vl) = losses(&p.to_kind(Kind::Float), &v.to_kind(Kind::Float), b);
        let mut loss = &pl + &vl * self.cfg.value_loss_weight;
        let mut soft_loss = 0.0;
        if let Some(s) = soft.filter(|_| self.cfg.soft_policy_weight > 0.0) {
            let target = soft_target(&b.policy, self.cfg.soft_policy_temperature);
            let sl = cross_entropy(&target, &s.to_kind(Kind::Float));
            soft_loss = sl.double_value(&[]);
            loss += sl * self.cfg.soft_policy_weight;
        }
        let mut opponent_loss = 0.0;
        if let (Some(o), Some(target)) = (
            opponent.filter(|_| self.cfg.opponent_policy_weight > 0.0),
            &b.opponent,
        ) {
            // Rows of zeros (the game ended with the move) add nothing.
            let ol = cross_entropy(target, &o.to_kind(Kind::Float));
            opponent_loss = ol.double_value(&[]);
            loss += ol * self.cfg.opponent_policy_weight;
        }
        for (_, mut t) in trainable(&self.vs) {
            t.zero_grad();
        }
        let scale = if amp { self.loss_scale } else { 1.0 };
        (&loss * scale).backward();
        if scale != 1.0 {
            scale_grads(&self.vs, 1.0 / scale);
        }
        let gn = grad_norm(&self.vs);
        let mut stats = StepStats {
            loss: loss.double_value(&[]),
            policy_loss: pl.double_value(&[]),
            value_loss: vl.double_value(&[]),
            soft_policy_loss: soft_loss,
            opponent_policy_loss: opponent_loss,
            grad_norm: gn,
            lr,
            skipped: false,
        };
        if !gn.is_finite() {
            // Overflow under fp16: skip, lower the scale.
            self.loss_scale = (self.loss_scale / 2.0).max(1.0);
            self.good_steps = 0;
            stats.skipped = true;
            return stats;
        }
        if amp {
            self.good_steps += 1;
            if self.good_steps >= 1000 {
                self.loss_scale = (self.loss_scale * 2.0).min(65536.0 * 256.0);
                self.good_steps = 0;
            }
        }
        if self.cfg.grad_clip > 0.0 && gn > self.cfg.grad_clip {
            scale_grads(&self.vs, self.cfg.grad_clip / gn);
        }
        self.opt.step(&self.vs, &self.cfg, lr);
        if let Some(e) = &mut self.ema {
            e.update(&self.vs);
        }
        self.step += 1;
        stats
    }
}

/// The kind a training step computes convolutions and linear layers in: bf16 over the f32
/// weights under `mixed_precision` on CUDA, else None (f32 throughout).
pub(crate) fn compute_kind(cfg: &TrainConfig, device: Device) -> Option<Kind> {
    (cfg.mixed_precision && device.is_cuda()).then_some(Kind::BFloat16)
}

fn losses(p: &Tensor, v: &Tensor, b: &Batch) -> (Tensor, Tensor) {
    (cross_entropy(&b.policy, p), cross_entropy(&b.wdl, v))
}

/// Mean over the batch of the cross-entropy of `logits` against the target rows.
fn cross_entropy(target: &Tensor, logits: &Tensor) -> Tensor {
    -(target * logits.log_softmax(-1, Kind::Float))
        .sum_dim_intlist(1, false, Kind::Float)
        .mean(Kind::Float)
}

/// KataGo's soft policy target: each row raised to `1 / temperature` and renormalised (moves
/// the target gives 0 keep 0).
pub(crate) fn soft_target(policy: &Tensor, temperature: f64) -> Tensor {
    let t = policy.clamp_min(0.0).pow_tensor_scalar(1.0 / temperature);
    let sum = t.sum_dim_intlist(1, true, Kind::Float).clamp_min(1e-12);
    t / sum
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `mixed_precision = true` is the default; it computes in bf16 on CUDA only (the device
    /// kind is data here: no GPU needed).
    #[test]
    fn mixed_precision_is_the_default_and_means_bf16_on_cuda() {
        let cfg = TrainConfig::default();
        assert!(cfg.mixed_precision);
        assert_eq!(compute_kind(&cfg, Device::Cuda(0)), Some(Kind::BFloat16));
        assert_eq!(compute_kind(&cfg, Device::Cpu), None);
        let off = TrainConfig {
            mixed_precision: false,
            ..TrainConfig::default()
        };
        assert_eq!(compute_kind(&off, Device::Cuda(0)), None);
    }

    /// A step's forward in bf16 leaves the weights in f32 (run on the CPU, which computes bf16
    /// convolutions too).
    #[test]
    fn bf16_compute_keeps_f32_weights() {
        let shape = NetShape {
            planes: 4,
            ranks: 5,
            files: 5,
            policy_planes: 2,
        };
        let config = ModelConfig::load("b2c16").unwrap();
        let t = Trainer::new(&config, shape, TrainConfig::default(), Device::Cpu, 1);
        let x = Tensor::rand([3, 4, 5, 5], (Kind::Float, tch::Device::Cpu));
        let (p, v) = t.net.forward_in(&x, true, Some(Kind::BFloat16));
        assert_eq!((p.kind(), v.kind()), (Kind::BFloat16, Kind::BFloat16));
        assert_eq!(p.size(), [3, 50]);
        let vars = t.vs.variables();
        assert!(!vars.is_empty());
        for (name, w) in vars {
            assert_eq!(w.kind(), Kind::Float, "{name}");
        }
    }
}
