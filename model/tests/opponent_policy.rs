//! KataGo's auxiliary opponent-reply output (`training.opponent_policy_weight`): its loss is
//! the cross-entropy against the opponent's answers the batch carries (rows of zeros add
//! nothing) and is added to the step's loss; it trains the trunk; published networks leave it
//! out; checkpoints keep it; a run trained without it cannot turn it on when resumed.

mod common;

use common::{encoder, meta_for, publish_without, tiny, DataSet};
use model::{load_checkpoint, load_model, save_checkpoint, Batch, Device, TrainConfig, Trainer};
use tch::{Kind, Tensor};

fn on(weight: f64) -> TrainConfig {
    TrainConfig {
        lr: 0.05,
        opponent_policy_weight: weight,
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

const HEAD: &str = "policy_opponent.conv.weight";
const TRUNK: &str = "tower.0.conv1.weight";

/// Three samples: the first answered by a search target split 0.75 / 0.25 over two moves, the
/// second by one move played, the third the last move of its game (no answer).
fn reply_batch(data: &DataSet) -> (Batch, Vec<Vec<(usize, f64)>>) {
    let pl = data.shape.policy_len();
    let il = data.shape.input_len();
    let answers = vec![vec![(7usize, 0.75), (30, 0.25)], vec![(12, 1.0)], vec![]];
    let mut replies = vec![0.0f32; 3 * pl];
    for (row, a) in answers.iter().enumerate() {
        for &(i, p) in a {
            replies[row * pl + i] = p as f32;
        }
    }
    let b = Batch::from_slices(
        data.shape,
        &data.inputs[..3 * il],
        &data.policy[..3 * pl],
        &data.wdl[..9],
        Device::Cpu,
    )
    .unwrap()
    .with_opponent(&replies)
    .unwrap();
    (b, answers)
}

fn step_with_replies(t: &mut Trainer, data: &DataSet) -> model::StepStats {
    let (b, _) = reply_batch(data);
    t.train_step(&b)
}

#[test]
fn the_loss_is_the_cross_entropy_against_the_answers() {
    let data = DataSet::minishogi(4, 3);
    let (b, answers) = reply_batch(&data);
    let mut t = Trainer::new(&tiny(), data.shape, on(0.15), Device::Cpu, 5);
    assert!(t.net.has_opponent_policy());
    assert!(!t.net.has_soft_policy());
    // The step's forward pass, done beforehand (training mode, batch statistics).
    let out = t.net.forward_train(&b.inputs, true, None);
    let o = out.opponent.expect("opponent logits");
    assert!(out.soft.is_none());
    let lp = |x: &Tensor, row: i64| values(&x.get(row).log_softmax(-1, Kind::Double));
    // The mean over all three rows: the third, with no answer, adds 0.
    let want_opponent = -answers
        .iter()
        .enumerate()
        .map(|(row, a)| {
            let l = lp(&o, row as i64);
            a.iter().map(|&(i, q)| q * l[i]).sum::<f64>()
        })
        .sum::<f64>()
        / 3.0;
    let cross = |target: &Tensor, logits: &Tensor| {
        let t = values(target);
        let n = target.size()[1] as usize;
        -(0..3)
            .map(|r| {
                let l = lp(logits, r as i64);
                (0..n).map(|k| t[r * n + k] * l[k]).sum::<f64>()
            })
            .sum::<f64>()
            / 3.0
    };
    let want_policy = cross(&b.policy, &out.policy);
    let want_value = cross(&b.wdl, &out.wdl);
    let stats = t.train_step(&b);
    let close = |a: f64, b: f64, what: &str| assert!((a - b).abs() < 1e-4, "{what}: {a} vs {b}");
    close(stats.opponent_policy_loss, want_opponent, "opponent loss");
    close(stats.policy_loss, want_policy, "policy loss");
    close(stats.value_loss, want_value, "value loss");
    close(
        stats.loss,
        want_policy + want_value + 0.15 * want_opponent,
        "total loss",
    );
    assert_eq!(stats.soft_policy_loss, 0.0);
}

#[test]
fn off_by_default_and_then_absent() {
    let data = DataSet::minishogi(4, 4);
    assert_eq!(TrainConfig::default().opponent_policy_weight, 0.0);
    let mut t = Trainer::new(&tiny(), data.shape, TrainConfig::default(), Device::Cpu, 1);
    assert!(!t.net.has_opponent_policy());
    assert!(!t
        .vs
        .variables()
        .keys()
        .any(|k| k.starts_with("policy_opponent")));
    // Targets in the batch are ignored without the output.
    assert_eq!(step_with_replies(&mut t, &data).opponent_policy_loss, 0.0);
}

#[test]
fn the_opponent_loss_trains_the_trunk() {
    let data = DataSet::minishogi(4, 4);
    let mut plain = Trainer::new(&tiny(), data.shape, on(0.0), Device::Cpu, 7);
    let mut opp = Trainer::new(&tiny(), data.shape, on(1.0), Device::Cpu, 7);
    assert_eq!(variable(&plain, TRUNK), variable(&opp, TRUNK));
    let head_before = variable(&opp, HEAD);
    step_with_replies(&mut plain, &data);
    let s = step_with_replies(&mut opp, &data);
    assert!(s.opponent_policy_loss > 0.0);
    assert_ne!(variable(&plain, TRUNK), variable(&opp, TRUNK));
    assert_ne!(variable(&opp, HEAD), head_before);
}

#[test]
fn a_batch_without_answers_adds_nothing() {
    let data = DataSet::minishogi(4, 4);
    let mut t = Trainer::new(&tiny(), data.shape, on(1.0), Device::Cpu, 7);
    let b = data.batch(&[0, 1, 2]);
    assert!(b.opponent.is_none());
    assert_eq!(t.train_step(&b).opponent_policy_loss, 0.0);
}

#[test]
fn answers_of_the_wrong_length_are_refused() {
    let data = DataSet::minishogi(4, 4);
    let pl = data.shape.policy_len();
    let e = data
        .batch(&[0, 1, 2])
        .with_opponent(&vec![0.0; 2 * pl])
        .unwrap_err()
        .to_string();
    assert!(e.contains("opponent-reply"), "{e}");
}

#[test]
fn published_networks_leave_it_out_and_checkpoints_keep_it() {
    let enc = encoder("minishogi");
    let meta = meta_for(&tiny(), &enc);
    let data = DataSet::minishogi(4, 8);
    let cfg = on(0.5);
    let mut a = Trainer::new(&tiny(), data.shape, cfg.clone(), Device::Cpu, 2);
    for _ in 0..3 {
        step_with_replies(&mut a, &data);
    }
    let (dir, published) = publish_without(&a, &meta, "opponent-policy", "policy_opponent");
    let (_, net, _) = load_model(&published, Device::Cpu).unwrap();
    assert!(!net.has_opponent_policy());
    // A fresh trainer with the output starts from the published weights.
    let mut from = Trainer::new(&tiny(), data.shape, cfg.clone(), Device::Cpu, 9);
    model::init_from_model(&mut from, &published).unwrap();
    assert_eq!(variable(&from, TRUNK), variable(&a, TRUNK));

    let ck = dir.join("checkpoint");
    save_checkpoint(&ck, &a, &meta, serde_json::Value::Null).unwrap();
    let (mut b, _) = load_checkpoint(&ck, Device::Cpu, None).unwrap();
    assert!(b.net.has_opponent_policy());
    assert_eq!(variable(&b, HEAD), variable(&a, HEAD));
    for _ in 0..2 {
        let sa = step_with_replies(&mut a, &data);
        let sb = step_with_replies(&mut b, &data);
        assert_eq!(sa.opponent_policy_loss, sb.opponent_policy_loss);
    }
    assert_eq!(variable(&b, HEAD), variable(&a, HEAD));

    // A run trained without it cannot turn it on when resumed: a clear error.
    let plain_dir = dir.join("plain");
    let p = Trainer::new(&tiny(), data.shape, TrainConfig::default(), Device::Cpu, 3);
    save_checkpoint(&plain_dir, &p, &meta, serde_json::Value::Null).unwrap();
    let e = load_checkpoint(&plain_dir, Device::Cpu, Some(cfg))
        .unwrap_err()
        .to_string();
    assert!(e.contains("opponent_policy_weight"), "{e}");
}

#[test]
fn the_key_is_range_checked_by_name() {
    for w in [-1.0, f64::NAN, 101.0] {
        let e = on(w).validate("run.toml").unwrap_err().to_string();
        assert!(e.contains("training.opponent_policy_weight"), "{e}");
    }
    on(0.15).validate("run.toml").unwrap();
}
