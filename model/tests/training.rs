//! Learning on a fixed synthetic data set: the loss must fall well below its initial value with
//! both optimizers; batches and step statistics behave.

mod common;

use common::{step, tiny, DataSet};
use model::{Batch, Device, OptimizerKind, TrainConfig, Trainer};

const POSITIONS: usize = 256;
const STEPS: usize = 300;
const BATCH: usize = 64;

fn learns(cfg: TrainConfig, seed: u64) {
    let data = DataSet::minishogi(POSITIONS, 7);
    // The targets are not degenerate: several WDL classes and several policy targets.
    let classes: std::collections::BTreeSet<usize> = (0..data.len)
        .map(|i| (0..3).find(|&k| data.wdl[i * 3 + k] == 1.0).unwrap())
        .collect();
    assert!(
        classes.len() >= 2,
        "material targets all equal: {classes:?}"
    );
    let all = data.all();
    let mut t = Trainer::new(&tiny(), data.shape, cfg, Device::Cpu, seed);
    let (p0, v0) = t.evaluate(&all);
    let first = step(&mut t, &data, BATCH);
    assert!(first.loss.is_finite() && first.grad_norm > 0.0, "{first:?}");
    let mut last = first;
    for _ in 1..STEPS {
        last = step(&mut t, &data, BATCH);
        assert!(last.loss.is_finite(), "loss diverged: {last:?}");
        assert!(!last.skipped, "CPU steps are never skipped: {last:?}");
    }
    assert_eq!(t.step, STEPS as u64);
    let (p1, v1) = t.evaluate(&all);
    let (before, after) = (p0 + v0, p1 + v1);
    eprintln!(
        "{:?}: loss {before:.3} (policy {p0:.3}, value {v0:.3}) -> {after:.3} (policy {p1:.3}, \
         value {v1:.3}); last train loss {:.3}",
        t.cfg.optimizer, last.loss
    );
    assert!(
        after < 0.5 * before,
        "loss fell only from {before:.4} to {after:.4}"
    );
    assert!(p1 < 0.5 * p0, "policy loss {p0:.4} -> {p1:.4}");
    assert!(v1 < 0.5 * v0, "value loss {v0:.4} -> {v1:.4}");
    assert!(
        last.loss < 0.5 * first.loss,
        "train loss {first:?} -> {last:?}"
    );
}

#[test]
fn sgd_nesterov_learns_a_fixed_set() {
    learns(
        TrainConfig {
            optimizer: OptimizerKind::Sgd,
            lr: 0.05,
            momentum: 0.9,
            batch_size: BATCH,
            ..Default::default()
        },
        11,
    );
}

#[test]
fn adamw_learns_a_fixed_set() {
    learns(
        TrainConfig {
            optimizer: OptimizerKind::AdamW,
            lr: 1e-3,
            batch_size: BATCH,
            ..Default::default()
        },
        12,
    );
}

#[test]
fn step_stats_report_the_schedule_and_the_losses() {
    let data = DataSet::minishogi(32, 3);
    let cfg = TrainConfig {
        lr: 0.1,
        warmup_steps: 4,
        value_loss_weight: 0.5,
        ..Default::default()
    };
    let mut t = Trainer::new(&tiny(), data.shape, cfg.clone(), Device::Cpu, 5);
    for s in 0..6u64 {
        let st = step(&mut t, &data, 8);
        assert!((st.lr - cfg.lr_at(s)).abs() < 1e-15, "step {s}: {st:?}");
        assert!(
            (st.loss - (st.policy_loss + 0.5 * st.value_loss)).abs() < 1e-4,
            "step {s}: {st:?}"
        );
        assert!(st.policy_loss > 0.0 && st.value_loss > 0.0);
    }
    assert_eq!(t.opt.steps, 6);
}

#[test]
fn batch_from_slices_checks_lengths() {
    let data = DataSet::minishogi(4, 1);
    let s = data.shape;
    let b = data.batch(&[0, 1, 2]);
    assert_eq!(b.len(), 3);
    assert!(!b.is_empty());
    assert_eq!(
        b.inputs.size(),
        [3, s.planes as i64, s.ranks as i64, s.files as i64]
    );
    assert_eq!(b.policy.size(), [3, s.policy_len() as i64]);
    assert_eq!(b.wdl.size(), [3, 3]);
    let il = s.input_len();
    let pl = s.policy_len();
    let short = Batch::from_slices(
        s,
        &data.inputs[..2 * il - 1],
        &data.policy[..2 * pl],
        &data.wdl[..6],
        Device::Cpu,
    );
    let e = short.unwrap_err().to_string();
    assert!(e.contains("do not agree"), "{e}");
    let odd_wdl = Batch::from_slices(
        s,
        &data.inputs[..2 * il],
        &data.policy[..2 * pl],
        &data.wdl[..7],
        Device::Cpu,
    );
    assert!(odd_wdl.is_err());
}

#[test]
fn splitmix_is_seeded_and_uniform_enough() {
    let mut a = model::SplitMix(42);
    let mut b = model::SplitMix(42);
    let xs: Vec<u64> = (0..8).map(|_| a.next_u64()).collect();
    let ys: Vec<u64> = (0..8).map(|_| b.next_u64()).collect();
    assert_eq!(xs, ys);
    assert_ne!(model::SplitMix(43).next_u64(), xs[0]);
    let mut counts = [0usize; 7];
    for _ in 0..7000 {
        counts[a.below(7)] += 1;
    }
    assert!(
        counts.iter().all(|&c| (800..1200).contains(&c)),
        "{counts:?}"
    );
    assert_eq!(a.below(1), 0);
}

/// Mixed precision as CUDA training runs it (bf16 convolutions over f32 weights, without
/// libtorch's autocast), checked on the CPU: gradients reach the f32 weights and the outputs
/// stay close to the f32 ones.
#[test]
fn mixed_precision_forward_trains_the_f32_weights() {
    let data = common::DataSet::minishogi(32, 4);
    let t = model::Trainer::new(
        &common::tiny(),
        data.shape,
        model::TrainConfig::default(),
        Device::Cpu,
        1,
    );
    let b = data.all();
    let (p32, _) = t.net.forward_t(&b.inputs, true);
    let (p16, v16) = t.net.forward_in(&b.inputs, true, Some(tch::Kind::BFloat16));
    assert_eq!(p16.kind(), tch::Kind::BFloat16);
    let diff = (p16.to_kind(tch::Kind::Float) - &p32)
        .abs()
        .max()
        .double_value(&[]);
    let scale = p32.abs().max().double_value(&[]).max(1.0);
    assert!(
        diff < 0.05 * scale,
        "bf16 differs by {diff} (scale {scale})"
    );
    let loss = p16
        .to_kind(tch::Kind::Float)
        .square()
        .mean(tch::Kind::Float)
        + v16
            .to_kind(tch::Kind::Float)
            .square()
            .mean(tch::Kind::Float);
    loss.backward();
    let vars = t.vs.trainable_variables();
    assert!(vars.iter().all(|v| v.kind() == tch::Kind::Float));
    let moved = vars
        .iter()
        .filter(|v| {
            v.grad().defined() && v.grad().abs().sum(tch::Kind::Float).double_value(&[]) > 0.0
        })
        .count();
    assert!(
        moved > vars.len() / 2,
        "{moved} of {} variables got gradients",
        vars.len()
    );
}

#[test]
fn the_budget_schedule_follows_the_progress_set_on_the_trainer() {
    let data = DataSet::minishogi(16, 4);
    let cfg = TrainConfig {
        lr: 0.1,
        min_lr: 0.01,
        warmup_steps: 2,
        schedule: model::Schedule::Budget,
        ..Default::default()
    };
    let mut t = Trainer::new(&tiny(), data.shape, cfg.clone(), Device::Cpu, 6);
    assert_eq!(t.progress(), 0.0);
    // (step, progress, learning rate): the warm-up ramp times the cosine over the progress.
    let want = [
        (0, 0.0, 0.05),
        (1, 0.5, 0.055),
        (2, 0.5, 0.055),
        (3, 1.0, 0.01),
        (4, 2.0, 0.01),
    ];
    for (s, progress, lr) in want {
        t.set_progress(progress);
        let st = step(&mut t, &data, 4);
        assert!((st.lr - lr).abs() < 1e-12, "step {s}: {st:?}");
        assert_eq!(st.lr, cfg.lr_at_progress(s, progress));
    }
    assert_eq!(t.progress(), 1.0);
}
