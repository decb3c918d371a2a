//! Network shapes (`configs/models/*.toml`) and training hyper-parameters.

use crate::error::{ModelError, Result};
use serde::{Deserialize, Serialize};
use std::path::Path;

/// A network shape, named by shape (`b6c64`: 6 blocks of 64 channels).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ModelConfig {
    /// Shape name (defaults to the file stem).
    #[serde(default)]
    pub name: String,
    /// Residual blocks in the trunk (1 to 64).
    pub blocks: usize,
    /// Channels of the trunk (4 to 1024).
    pub channels: usize,
    /// KataGo-style global pooling in the blocks and the value head.
    #[serde(default)]
    pub global_pool: bool,
    /// Channels of the policy head's hidden convolution.
    #[serde(default = "default_head")]
    pub policy_channels: usize,
    /// Channels of the value head's convolution.
    #[serde(default = "default_head")]
    pub value_channels: usize,
    /// Hidden units of the value head.
    #[serde(default = "default_hidden")]
    pub value_hidden: usize,
}

fn default_head() -> usize {
    32
}

fn default_hidden() -> usize {
    128
}

/// Every file of `configs/models`, built into the binary (name, text).
const BUILTIN_SHAPES: &[(&str, &str)] = &[
    ("b2c16", include_str!("../../configs/models/b2c16.toml")),
    ("b4c32", include_str!("../../configs/models/b4c32.toml")),
    ("b6c32", include_str!("../../configs/models/b6c32.toml")),
    ("b6c48", include_str!("../../configs/models/b6c48.toml")),
    ("b6c64", include_str!("../../configs/models/b6c64.toml")),
    ("b10c128", include_str!("../../configs/models/b10c128.toml")),
];

impl ModelConfig {
    /// Parses a model file; `file` names it in errors.
    pub fn from_toml(text: &str, file: &str) -> Result<ModelConfig> {
        let mut c: ModelConfig = toml::from_str(text).map_err(|e| ModelError::Config {
            file: file.to_string(),
            key: toml_error_key(text, &e),
            reason: e.message().to_string(),
        })?;
        if c.name.is_empty() {
            c.name = Path::new(file)
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_else(|| format!("b{}c{}", c.blocks, c.channels));
        }
        c.validate(file)?;
        Ok(c)
    }

    /// Loads `configs/models/NAME.toml`, a path, or a built-in shape (every file of
    /// `configs/models`: `b2c16`, `b4c32`, `b6c32`, `b6c48`, `b6c64`, `b10c128`).
    pub fn load(name_or_path: &str) -> Result<ModelConfig> {
        let p = Path::new(name_or_path);
        if name_or_path.ends_with(".toml") || name_or_path.contains('/') {
            let text = std::fs::read_to_string(p).map_err(|e| ModelError::Config {
                file: name_or_path.to_string(),
                key: "-".into(),
                reason: format!("cannot read: {e}"),
            })?;
            return ModelConfig::from_toml(&text, name_or_path);
        }
        let local = Path::new("configs/models").join(format!("{name_or_path}.toml"));
        if local.exists() {
            return ModelConfig::load(&local.display().to_string());
        }
        let Some((_, text)) = BUILTIN_SHAPES.iter().find(|(n, _)| *n == name_or_path) else {
            let names: Vec<&str> = BUILTIN_SHAPES.iter().map(|(n, _)| *n).collect();
            return Err(ModelError::Config {
                file: name_or_path.to_string(),
                key: "-".into(),
                reason: format!("no such model file (built-ins: {})", names.join(", ")),
            });
        };
        ModelConfig::from_toml(text, &format!("{name_or_path}.toml"))
    }

    /// Checks the ranges of every field (the limits in the field docs); errors name the key.
    pub(crate) fn validate(&self, file: &str) -> Result<()> {
        let check = |key: &str, v: usize, lo: usize, hi: usize| {
            if v < lo || v > hi {
                Err(ModelError::Config {
                    file: file.to_string(),
                    key: key.to_string(),
                    reason: format!("{v} is outside {lo}..={hi}"),
                })
            } else {
                Ok(())
            }
        };
        check("blocks", self.blocks, 1, 64)?;
        check("channels", self.channels, 4, 1024)?;
        check("policy_channels", self.policy_channels, 1, 1024)?;
        check("value_channels", self.value_channels, 1, 1024)?;
        check("value_hidden", self.value_hidden, 1, 4096)?;
        Ok(())
    }
}

/// The key of a TOML error whose span points at a value (`key = value`), or `-`: serde's
/// messages name unknown and missing keys but not the key of a value of the wrong type.
fn toml_error_key(text: &str, e: &toml::de::Error) -> String {
    e.span()
        .and_then(|s| {
            let before = text.get(..s.start)?;
            let line = &before[before.rfind('\n').map_or(0, |i| i + 1)..];
            let (key, _) = line.split_once('=')?;
            let key = key.trim();
            (!key.is_empty()).then(|| key.to_string())
        })
        .unwrap_or_else(|| "-".into())
}

/// Optimizer choice.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase", deny_unknown_fields)]
pub enum OptimizerKind {
    /// SGD with Nesterov momentum; weight decay as L2 added to the gradient.
    Sgd,
    /// AdamW: Adam with decoupled weight decay.
    AdamW,
}

/// Learning-rate schedule.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase", deny_unknown_fields)]
pub enum Schedule {
    /// Constant after warm-up.
    Constant,
    /// Cosine decay from `lr` to `min_lr` over `total_steps` after warm-up.
    Cosine,
    /// Multiply by `gamma` every `step_size` steps.
    Step,
    /// Cosine decay from `lr` to `min_lr` over the run's progress in [0, 1] (the larger of the
    /// fraction of `max_minutes` spent and the fraction of `generations` trained), so that the
    /// rate reaches `min_lr` when the run's budget ends; the warm-up ramp multiplies it.
    Budget,
}

/// Training hyper-parameters (the `[training]` table of a run config).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct TrainConfig {
    /// `sgd` or `adamw`.
    pub optimizer: OptimizerKind,
    /// Peak learning rate.
    pub lr: f64,
    /// Schedule after warm-up: `constant`, `cosine` (over `total_steps`), `step` (`gamma`
    /// every `step_size` steps) or `budget` (cosine over the run's progress: its time budget
    /// `max_minutes` or its `generations`, whichever is nearer its end).
    pub schedule: Schedule,
    /// Linear warm-up steps.
    pub warmup_steps: u64,
    /// Horizon of the cosine schedule.
    pub total_steps: u64,
    /// Floor of the cosine schedule.
    pub min_lr: f64,
    /// Step schedule: period.
    pub step_size: u64,
    /// Step schedule: factor.
    pub gamma: f64,
    /// SGD momentum / Adam beta1.
    pub momentum: f64,
    /// Adam beta2.
    pub beta2: f64,
    /// Adam epsilon.
    pub eps: f64,
    /// Weight decay (not applied to batch-norm parameters and biases).
    pub weight_decay: f64,
    /// Global gradient-norm clip (0 disables).
    pub grad_clip: f64,
    /// Weight of the value loss.
    pub value_loss_weight: f64,
    /// Mixed precision on CUDA: convolutions and linear layers in bf16 over f32 weights,
    /// batch norms and losses in f32, with loss scaling; ignored on CPU.
    pub mixed_precision: bool,
    /// Samples per training step.
    pub batch_size: usize,
    /// Decay of the exponential moving average of the weights that published networks carry
    /// (0, the default: the live weights are published), e.g. 0.999: after every optimizer
    /// step, ema = d * ema + (1 - d) * w with d = min(ema_decay, (1 + t) / (10 + t)) at the
    /// t-th update, so that early networks are not dominated by the random initialisation.
    /// Batch-norm statistics are the live network's. Training continues on the live weights.
    pub ema_decay: f64,
    /// Weight of KataGo's auxiliary soft-policy loss (0, the default: off; KataGo uses 8): a
    /// second policy output, beside the main one on the policy head's hidden layer, learns
    /// the policy target raised to `1 / soft_policy_temperature` and renormalised, which
    /// spreads the signal of the moves the search found second best. It shapes the trunk
    /// only: published networks do not carry it, and a run that trained without it cannot
    /// turn it on when resumed.
    pub soft_policy_weight: f64,
    /// The soft target's temperature, at least 1 (KataGo's 4).
    pub soft_policy_temperature: f64,
    /// Weight of KataGo's auxiliary opponent-reply loss (0, the default: off; KataGo uses
    /// 0.15): a second policy output learns the opponent's answer to the position's move (the
    /// next position's search target where it was recorded, else the move played there). Like
    /// the soft policy it shapes the trunk only: published networks do not carry it, and a run
    /// that trained without it cannot turn it on when resumed.
    pub opponent_policy_weight: f64,
}

impl Default for TrainConfig {
    fn default() -> Self {
        TrainConfig {
            optimizer: OptimizerKind::Sgd,
            lr: 0.02,
            schedule: Schedule::Constant,
            warmup_steps: 0,
            total_steps: 100_000,
            min_lr: 0.0,
            step_size: 10_000,
            gamma: 0.1,
            momentum: 0.9,
            beta2: 0.999,
            eps: 1e-8,
            weight_decay: 1e-4,
            grad_clip: 10.0,
            value_loss_weight: 1.0,
            mixed_precision: true,
            batch_size: 256,
            ema_decay: 0.0,
            soft_policy_weight: 0.0,
            soft_policy_temperature: 4.0,
            opponent_policy_weight: 0.0,
        }
    }
}

impl TrainConfig {
    /// Learning rate at `step` (0-based), at the start of the run (the `budget` schedule at
    /// progress 0).
    pub fn lr_at(&self, step: u64) -> f64 {
        self.lr_at_progress(step, 0.0)
    }

    /// Learning rate at `step` (0-based) when the run is `progress` (clamped to [0, 1]) of the
    /// way through its budget; only the `budget` schedule reads `progress`.
    pub fn lr_at_progress(&self, step: u64, progress: f64) -> f64 {
        let cosine = |x: f64| {
            self.min_lr + 0.5 * (self.lr - self.min_lr) * (1.0 + (std::f64::consts::PI * x).cos())
        };
        // NaN counts as the start.
        let progress = if progress > 0.0 {
            progress.min(1.0)
        } else {
            0.0
        };
        if step < self.warmup_steps {
            let peak = match self.schedule {
                Schedule::Budget => cosine(progress),
                _ => self.lr,
            };
            return peak * (step + 1) as f64 / self.warmup_steps as f64;
        }
        let t = step - self.warmup_steps;
        match self.schedule {
            Schedule::Constant => self.lr,
            Schedule::Step => self.lr * self.gamma.powi((t / self.step_size.max(1)) as i32),
            Schedule::Cosine => {
                let span = self.total_steps.saturating_sub(self.warmup_steps).max(1);
                cosine((t.min(span) as f64) / span as f64)
            }
            Schedule::Budget => cosine(progress),
        }
    }

    /// Checks ranges; errors name the key.
    pub fn validate(&self, file: &str) -> Result<()> {
        let bad = |key: &str, reason: String| {
            Err(ModelError::Config {
                file: file.to_string(),
                key: format!("training.{key}"),
                reason,
            })
        };
        if !(self.lr > 0.0 && self.lr < 10.0) {
            return bad("lr", format!("{} is outside (0, 10)", self.lr));
        }
        if !(0.0..1.0).contains(&self.momentum) {
            return bad("momentum", format!("{} is outside [0, 1)", self.momentum));
        }
        if !(0.0..1.0).contains(&self.beta2) {
            return bad("beta2", format!("{} is outside [0, 1)", self.beta2));
        }
        if self.eps.is_nan() || self.eps <= 0.0 {
            return bad("eps", "must be positive".into());
        }
        if !(0.0..1.0).contains(&self.weight_decay) {
            return bad(
                "weight_decay",
                format!("{} is outside [0, 1)", self.weight_decay),
            );
        }
        if self.grad_clip < 0.0 {
            return bad("grad_clip", "must be 0 (off) or positive".into());
        }
        if self.batch_size == 0 || self.batch_size > 1 << 16 {
            return bad(
                "batch_size",
                format!("{} is outside 1..=65536", self.batch_size),
            );
        }
        if !(0.0..=self.lr).contains(&self.min_lr) {
            return bad("min_lr", "must be between 0 and lr".into());
        }
        if self.schedule == Schedule::Step
            && (self.step_size == 0 || self.gamma.is_nan() || self.gamma <= 0.0)
        {
            return bad(
                "step_size",
                "step schedule needs step_size > 0 and gamma > 0".into(),
            );
        }
        if !(0.0..1.0).contains(&self.ema_decay) {
            return bad(
                "ema_decay",
                format!("{} is outside [0, 1) (0: off)", self.ema_decay),
            );
        }
        if !(0.0..=100.0).contains(&self.soft_policy_weight) {
            return bad(
                "soft_policy_weight",
                format!("{} is outside [0, 100] (0: off)", self.soft_policy_weight),
            );
        }
        if !(0.0..=100.0).contains(&self.opponent_policy_weight) {
            return bad(
                "opponent_policy_weight",
                format!(
                    "{} is outside [0, 100] (0: off)",
                    self.opponent_policy_weight
                ),
            );
        }
        if !(1.0..=100.0).contains(&self.soft_policy_temperature) {
            return bad(
                "soft_policy_temperature",
                format!("{} is outside [1, 100]", self.soft_policy_temperature),
            );
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builtin_shapes_load() {
        // Every shape in configs/models is built in (the tests run in model/, where no
        // configs/models directory is found, so these come from the binary).
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../configs/models");
        let mut n = 0;
        for e in std::fs::read_dir(&dir).unwrap() {
            let name = e.unwrap().file_name().to_string_lossy().into_owned();
            let Some(stem) = name.strip_suffix(".toml") else {
                continue;
            };
            let c = ModelConfig::load(stem).unwrap();
            assert_eq!(c.name, stem);
            let file = dir.join(&name).display().to_string();
            let text = std::fs::read_to_string(&file).unwrap();
            let from_file = ModelConfig::from_toml(&text, &file).unwrap();
            assert_eq!(
                (c.blocks, c.channels),
                (from_file.blocks, from_file.channels)
            );
            n += 1;
        }
        assert_eq!(n, 6);
        let e = ModelConfig::load("nope").unwrap_err().to_string();
        assert!(e.contains("built-ins: b2c16, b4c32, b6c32, b6c48"), "{e}");
    }

    #[test]
    fn bad_keys_are_named() {
        let e = ModelConfig::from_toml("blocks = 0\nchannels = 8\n", "x.toml").unwrap_err();
        assert!(e.to_string().contains("blocks"), "{e}");
        let e =
            ModelConfig::from_toml("blocks = 1\nchannels = 8\ncolour = 1\n", "x.toml").unwrap_err();
        assert!(e.to_string().contains("colour"), "{e}");
    }

    #[test]
    fn schedules() {
        let mut t = TrainConfig {
            lr: 0.1,
            warmup_steps: 10,
            ..Default::default()
        };
        assert!((t.lr_at(0) - 0.01).abs() < 1e-12);
        assert!((t.lr_at(50) - 0.1).abs() < 1e-12);
        t.schedule = Schedule::Cosine;
        t.total_steps = 110;
        assert!((t.lr_at(10) - 0.1).abs() < 1e-12);
        assert!(t.lr_at(110).abs() < 1e-12);
        t.schedule = Schedule::Step;
        t.step_size = 20;
        assert!((t.lr_at(35) - 0.01).abs() < 1e-12);
    }

    #[test]
    fn budget_schedule_follows_the_runs_progress() {
        let t = TrainConfig {
            lr: 0.1,
            min_lr: 0.02,
            warmup_steps: 10,
            schedule: Schedule::Budget,
            ..Default::default()
        };
        let close = |a: f64, b: f64| (a - b).abs() < 1e-12;
        // After warm-up: 0.02 + 0.5 * 0.08 * (1 + cos(pi * progress)), whatever the step.
        for step in [10, 500, 10_000_000] {
            assert!(close(t.lr_at_progress(step, 0.0), 0.1));
            assert!(close(t.lr_at_progress(step, 0.5), 0.06));
            assert!(close(
                t.lr_at_progress(step, 0.25),
                0.02 + 0.04 * (1.0 + 0.5f64.sqrt())
            ));
            assert!(close(t.lr_at_progress(step, 1.0), 0.02));
        }
        // Outside [0, 1] (a run past its budget) and NaN are clamped.
        assert!(close(t.lr_at_progress(20, 1.5), 0.02));
        assert!(close(t.lr_at_progress(20, -0.5), 0.1));
        assert!(close(t.lr_at_progress(20, f64::NAN), 0.1));
        // Warm-up: the ramp (step + 1) / 10 times the cosine at the current progress.
        assert!(close(t.lr_at_progress(0, 0.0), 0.01));
        assert!(close(t.lr_at_progress(4, 0.0), 0.05));
        assert!(close(t.lr_at_progress(4, 0.5), 0.03));
        assert!(close(t.lr_at_progress(9, 1.0), 0.02));
        assert!(close(t.lr_at(4), 0.05));
        // The other schedules ignore the progress.
        let c = TrainConfig {
            schedule: Schedule::Cosine,
            total_steps: 110,
            ..t.clone()
        };
        for step in [0, 5, 10, 60, 110] {
            assert_eq!(c.lr_at_progress(step, 0.7), c.lr_at(step));
        }
        // The key parses and is checked.
        let t: TrainConfig = toml::from_str("schedule = \"budget\"\nema_decay = 0.999\n").unwrap();
        assert_eq!((t.schedule.clone(), t.ema_decay), (Schedule::Budget, 0.999));
        t.validate("x.toml").unwrap();
        for bad in [1.0, -0.1, f64::NAN] {
            let e = TrainConfig {
                ema_decay: bad,
                ..t.clone()
            }
            .validate("x.toml")
            .unwrap_err();
            assert!(e.to_string().contains("training.ema_decay"), "{e}");
        }
    }
}
