//! KataGo's auxiliary soft-policy output (`training.soft_policy_weight`): its loss is the
//! cross-entropy against the hand-softened target and is added to the step's loss; it trains
//! the trunk; published networks leave it out; checkpoints keep it and resume with it; a run
//! trained without it cannot turn it on when resumed.

mod common;

use common::{encoder, meta_for, publish_without, step, tiny, DataSet};
use model::{
    load_checkpoint, load_model, save_checkpoint, tensor_names, Batch, Device, TrainConfig, Trainer,
};
use tch::{Kind, Tensor};

fn on(weight: f64, temperature: f64) -> TrainConfig {
    TrainConfig {
        lr: 0.05,
        soft_policy_weight: weight,
        soft_policy_temperature: temperature,
        ..Default::default()
    }
}

fn values(t: &Tensor) -> Vec<f64> {
    let t = t.detach().to_kind(Kind::Double).contiguous().view([-1]);
    Vec::<f64>::try_from(&t).expect("double tensor")
}

fn variable(t: &Trainer, name: &str) -> Vec<f64> {
    values(&t.vs.variables()[name])
}

/// Two samples whose targets split 0.64 / 0.36 and 0.81 / 0.09 / 0.09 / 0.01 over moves:
/// at temperature 2 the soft targets are 0.8 / 0.6 and 0.9 / 0.3 / 0.3 / 0.1 renormalised,
/// i.e. 4/7, 3/7 and 9/16, 3/16, 3/16, 1/16.
fn split_batch(data: &DataSet) -> (Batch, Vec<Vec<(usize, f64)>>) {
    let pl = data.shape.policy_len();
    let il = data.shape.input_len();
    let mut policy = vec![0.0f32; 2 * pl];
    let first = [(3usize, 0.64f32), (17, 0.36)];
    let second = [(1usize, 0.81f32), (5, 0.09), (9, 0.09), (40, 0.01)];
    for &(i, p) in &first {
        policy[i] = p;
    }
    for &(i, p) in &second {
        policy[pl + i] = p;
    }
    let b = Batch::from_slices(
        data.shape,
        &data.inputs[..2 * il],
        &policy,
        &data.wdl[..6],
        Device::Cpu,
    )
    .unwrap();
    let soft = vec![
        vec![(3, 4.0 / 7.0), (17, 3.0 / 7.0)],
        vec![
            (1, 9.0 / 16.0),
            (5, 3.0 / 16.0),
            (9, 3.0 / 16.0),
            (40, 1.0 / 16.0),
        ],
    ];
    (b, soft)
}

#[test]
fn soft_loss_is_the_cross_entropy_against_the_softened_target() {
    let data = DataSet::minishogi(4, 3);
    let (b, soft) = split_batch(&data);
    let mut t = Trainer::new(&tiny(), data.shape, on(8.0, 2.0), Device::Cpu, 5);
    assert!(t.net.has_soft_policy());
    // The step's forward pass, done beforehand (training mode, batch statistics).
    let out = t.net.forward_train(&b.inputs, true, None);
    let (p, v) = (out.policy, out.wdl);
    let s = out.soft.expect("soft logits");
    assert!(out.opponent.is_none());
    let log_soft = |row: i64| values(&s.get(row).log_softmax(-1, Kind::Double));
    let want_soft: f64 = soft
        .iter()
        .enumerate()
        .map(|(row, target)| {
            let lp = log_soft(row as i64);
            -target.iter().map(|&(i, q)| q * lp[i]).sum::<f64>()
        })
        .sum::<f64>()
        / 2.0;
    let lp = |x: &Tensor, row: i64| values(&x.get(row).log_softmax(-1, Kind::Double));
    let want_policy = -(0.64 * lp(&p, 0)[3] + 0.36 * lp(&p, 0)[17])
        - (0.81 * lp(&p, 1)[1] + 0.09 * lp(&p, 1)[5] + 0.09 * lp(&p, 1)[9] + 0.01 * lp(&p, 1)[40]);
    let want_policy = want_policy / 2.0;
    let wdl = values(&b.wdl);
    let want_value = -(0..2)
        .map(|r| {
            let l = lp(&v, r);
            (0..3).map(|k| wdl[r as usize * 3 + k] * l[k]).sum::<f64>()
        })
        .sum::<f64>()
        / 2.0;
    let stats = t.train_step(&b);
    let close = |a: f64, b: f64, what: &str| assert!((a - b).abs() < 1e-4, "{what}: {a} vs {b}");
    close(stats.soft_policy_loss, want_soft, "soft policy loss");
    close(stats.policy_loss, want_policy, "policy loss");
    close(stats.value_loss, want_value, "value loss");
    close(
        stats.loss,
        want_policy + want_value + 8.0 * want_soft,
        "total loss",
    );
}

#[test]
fn off_by_default_and_then_absent() {
    let data = DataSet::minishogi(16, 4);
    assert_eq!(TrainConfig::default().soft_policy_weight, 0.0);
    let mut t = Trainer::new(&tiny(), data.shape, TrainConfig::default(), Device::Cpu, 1);
    assert!(!t.net.has_soft_policy());
    assert!(!t
        .vs
        .variables()
        .keys()
        .any(|k| k.starts_with("policy_soft")));
    let s = step(&mut t, &data, 8);
    assert_eq!(s.soft_policy_loss, 0.0);
}

#[test]
fn the_soft_loss_trains_the_trunk() {
    let data = DataSet::minishogi(16, 4);
    let mut plain = Trainer::new(&tiny(), data.shape, on(0.0, 4.0), Device::Cpu, 7);
    let mut soft = Trainer::new(&tiny(), data.shape, on(8.0, 4.0), Device::Cpu, 7);
    let trunk = "tower.0.conv1.weight";
    assert_eq!(variable(&plain, trunk), variable(&soft, trunk));
    let head = "policy_soft.conv.weight";
    let head_before = variable(&soft, head);
    let b = data.batch(&[0, 1, 2, 3, 4, 5, 6, 7]);
    plain.train_step(&b);
    let s = soft.train_step(&b);
    assert!(s.soft_policy_loss > 0.0);
    assert_ne!(variable(&plain, trunk), variable(&soft, trunk));
    assert_ne!(variable(&soft, head), head_before);
}

#[test]
fn published_networks_leave_it_out_and_checkpoints_keep_it() {
    let enc = encoder("minishogi");
    let meta = meta_for(&tiny(), &enc);
    let data = DataSet::minishogi(32, 8);
    let cfg = on(8.0, 4.0);
    let mut a = Trainer::new(&tiny(), data.shape, cfg.clone(), Device::Cpu, 2);
    for _ in 0..3 {
        step(&mut a, &data, 8);
    }
    // The published file: no soft output, and it loads as an inference network.
    let (dir, published) = publish_without(&a, &meta, "soft-policy", "policy_soft");
    let (_, net, _) = load_model(&published, Device::Cpu).unwrap();
    assert!(!net.has_soft_policy());
    // The checkpoint: with it, and both continue the same way.
    let ck = dir.join("checkpoint");
    save_checkpoint(&ck, &a, &meta, serde_json::Value::Null).unwrap();
    let weights = ck.join("step-000000003.safetensors");
    assert!(tensor_names(&weights)
        .unwrap()
        .iter()
        .any(|n| n == "policy_soft.conv.weight"));
    let (mut b, _) = load_checkpoint(&ck, Device::Cpu, None).unwrap();
    assert!(b.net.has_soft_policy());
    let head = "policy_soft.conv.weight";
    assert_eq!(variable(&b, head), variable(&a, head));
    for _ in 0..2 {
        let sa = step(&mut a, &data, 8);
        let sb = step(&mut b, &data, 8);
        assert_eq!(sa.soft_policy_loss, sb.soft_policy_loss);
    }
    assert_eq!(variable(&b, head), variable(&a, head));
    // Resumed with the key off: the output stays (its optimizer state is in the checkpoint)
    // but adds no loss.
    let (mut c, _) = load_checkpoint(&ck, Device::Cpu, Some(on(0.0, 4.0))).unwrap();
    assert!(c.net.has_soft_policy());
    assert_eq!(step(&mut c, &data, 8).soft_policy_loss, 0.0);

    // A run trained without it cannot turn it on when resumed: a clear error.
    let plain_dir = dir.join("plain");
    let p = Trainer::new(&tiny(), data.shape, TrainConfig::default(), Device::Cpu, 3);
    save_checkpoint(&plain_dir, &p, &meta, serde_json::Value::Null).unwrap();
    let e = load_checkpoint(&plain_dir, Device::Cpu, Some(cfg))
        .unwrap_err()
        .to_string();
    assert!(e.contains("soft_policy_weight"), "{e}");
}

#[test]
fn the_keys_are_range_checked_by_name() {
    for (cfg, key) in [
        (on(-1.0, 4.0), "training.soft_policy_weight"),
        (on(f64::NAN, 4.0), "training.soft_policy_weight"),
        (on(8.0, 0.5), "training.soft_policy_temperature"),
    ] {
        let e = cfg.validate("run.toml").unwrap_err().to_string();
        assert!(e.contains(key), "{e}");
    }
    on(8.0, 4.0).validate("run.toml").unwrap();
}
