//! The moving average of the weights (`training.ema_decay`): published networks carry the
//! hand-computed average with the live batch-norm statistics, the live weights when it is off,
//! and checkpoints keep it.

mod common;

use common::{encoder, meta_for, step, temp_dir, tiny, DataSet};
use model::{
    load_checkpoint, load_model, save_checkpoint, save_published_model, Device, TrainConfig,
    Trainer,
};
use std::collections::BTreeMap;
use tch::{nn::VarStore, Kind, Tensor};

fn values(t: &Tensor) -> Vec<f64> {
    let t = t.detach().to_kind(Kind::Double).contiguous().view([-1]);
    Vec::<f64>::try_from(&t).expect("double tensor")
}

fn named_values(named: Vec<(String, Tensor)>) -> BTreeMap<String, Vec<f64>> {
    named.into_iter().map(|(k, t)| (k, values(&t))).collect()
}

fn trainable_values(vs: &VarStore) -> BTreeMap<String, Vec<f64>> {
    named_values(
        vs.variables()
            .into_iter()
            .filter(|(_, t)| t.requires_grad())
            .collect(),
    )
}

fn file_values(path: &std::path::Path) -> BTreeMap<String, Vec<f64>> {
    let (vs, _, _) = load_model(path, Device::Cpu).unwrap();
    named_values(vs.variables().into_iter().collect())
}

#[test]
fn warm_up_decay() {
    let t = Trainer::new(
        &tiny(),
        DataSet::minishogi(1, 1).shape,
        TrainConfig {
            ema_decay: 0.999,
            ..Default::default()
        },
        Device::Cpu,
        1,
    );
    let e = t.ema().expect("on");
    assert_eq!(e.decay_at(0), 0.1);
    assert_eq!(e.decay_at(1), 2.0 / 11.0);
    assert_eq!(e.decay_at(10_000), 0.999);
    assert_eq!(e.decay_at(1_000_000), 0.999);
}

#[test]
fn published_weights_are_the_hand_computed_average() {
    const DECAY: f64 = 0.5;
    const STEPS: u64 = 12;
    let data = DataSet::minishogi(32, 5);
    let cfg = TrainConfig {
        lr: 0.05,
        ema_decay: DECAY,
        ..Default::default()
    };
    let mut t = Trainer::new(&tiny(), data.shape, cfg, Device::Cpu, 9);
    // The average by hand, in f64: from the initial weights, d_k = min(0.5, (1 + k) / (10 + k))
    // (0.1, 2/11, 0.25, ... then 0.5 from k = 8 on).
    let mut want = trainable_values(&t.vs);
    for k in 0..STEPS {
        let s = step(&mut t, &data, 8);
        assert!(!s.skipped);
        let d = DECAY.min((1.0 + k as f64) / (10.0 + k as f64));
        for (name, w) in trainable_values(&t.vs) {
            for (e, x) in want.get_mut(&name).unwrap().iter_mut().zip(w) {
                *e = d * *e + (1.0 - d) * x;
            }
        }
    }
    assert_eq!(t.ema().unwrap().updates, STEPS);
    let live = named_values(t.vs.variables().into_iter().collect());
    let enc = encoder("minishogi");
    let path = temp_dir("ema-publish").join("1.safetensors");
    save_published_model(&t, &meta_for(&tiny(), &enc), &path).unwrap();
    let published = file_values(&path);
    assert_eq!(
        published.keys().collect::<Vec<_>>(),
        live.keys().collect::<Vec<_>>()
    );
    let mut averaged = 0;
    for (name, got) in &published {
        match want.get(name) {
            Some(w) => {
                for (g, w) in got.iter().zip(w) {
                    assert!(
                        (g - w).abs() <= 1e-5 * (1.0 + w.abs()),
                        "{name}: {g} vs {w}"
                    );
                }
                // The average lags the live weights.
                if got != &live[name] {
                    averaged += 1;
                }
            }
            // Batch-norm statistics are the live network's.
            None => assert_eq!(got, &live[name], "{name}"),
        }
    }
    assert!(averaged > 0, "the published weights are the live ones");
    assert!(
        live.keys().any(|k| k.contains("running_mean")),
        "no batch-norm statistics to check: {:?}",
        live.keys().collect::<Vec<_>>()
    );
    // In memory too.
    assert_eq!(named_values(t.published_variables()), published);
}

#[test]
fn without_ema_the_live_weights_are_published() {
    let data = DataSet::minishogi(16, 6);
    let mut t = Trainer::new(&tiny(), data.shape, TrainConfig::default(), Device::Cpu, 4);
    assert!(t.ema().is_none());
    for _ in 0..3 {
        step(&mut t, &data, 8);
    }
    let path = temp_dir("ema-off").join("1.safetensors");
    save_published_model(&t, &meta_for(&tiny(), &encoder("minishogi")), &path).unwrap();
    let live = named_values(t.vs.variables().into_iter().collect());
    assert_eq!(file_values(&path), live);
}

#[test]
fn checkpoints_keep_the_average() {
    let enc = encoder("minishogi");
    let meta = meta_for(&tiny(), &enc);
    let data = DataSet::minishogi(32, 8);
    let cfg = TrainConfig {
        lr: 0.05,
        ema_decay: 0.9,
        ..Default::default()
    };
    let dir = temp_dir("ema-checkpoint");
    let mut a = Trainer::new(&tiny(), data.shape, cfg.clone(), Device::Cpu, 2);
    for _ in 0..5 {
        step(&mut a, &data, 8);
    }
    save_checkpoint(&dir, &a, &meta, serde_json::Value::Null).unwrap();
    assert!(dir.join("step-000000005.ema.safetensors").exists());
    let (mut b, state) = load_checkpoint(&dir, Device::Cpu, None).unwrap();
    assert_eq!(state.ema_updates, Some(5));
    assert_eq!(b.ema().unwrap().updates, 5);
    let at = named_values(a.published_variables());
    assert_eq!(named_values(b.published_variables()), at);
    assert_ne!(at, named_values(a.vs.variables().into_iter().collect()));
    // Both continue the same way.
    for _ in 0..3 {
        step(&mut a, &data, 8);
        step(&mut b, &data, 8);
    }
    assert_eq!(
        named_values(b.published_variables()),
        named_values(a.published_variables())
    );

    // Turned off on resume: the live weights are published.
    let off = TrainConfig {
        ema_decay: 0.0,
        ..cfg.clone()
    };
    let (c, _) = load_checkpoint(&dir, Device::Cpu, Some(off)).unwrap();
    assert!(c.ema().is_none());
    assert_eq!(
        named_values(c.published_variables()),
        named_values(c.vs.variables().into_iter().collect())
    );

    // A checkpoint without an average, resumed with EMA on: it starts from the live weights.
    let plain_dir = temp_dir("ema-checkpoint-plain");
    let mut p = Trainer::new(&tiny(), data.shape, TrainConfig::default(), Device::Cpu, 3);
    step(&mut p, &data, 8);
    save_checkpoint(&plain_dir, &p, &meta, serde_json::Value::Null).unwrap();
    assert!(!plain_dir.join("step-000000001.ema.safetensors").exists());
    let (q, state) = load_checkpoint(&plain_dir, Device::Cpu, Some(cfg)).unwrap();
    assert_eq!(state.ema_updates, None);
    assert_eq!(q.ema().unwrap().updates, 0);
    assert_eq!(
        named_values(q.published_variables()),
        named_values(p.vs.variables().into_iter().collect())
    );

    // A damaged average is an error (the older checkpoint, if any, is used instead).
    std::fs::write(dir.join("step-000000005.ema.safetensors"), b"junk").unwrap();
    let e = load_checkpoint(&dir, Device::Cpu, None).unwrap_err();
    assert!(e.to_string().contains("moving average"), "{e}");
}
