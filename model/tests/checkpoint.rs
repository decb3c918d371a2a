//! Model files and training checkpoints: save -> load is bit-exact, sidecars describe the
//! encoding, resuming a checkpoint continues exactly as the uninterrupted run, pruning.

mod common;

use common::{encoded_positions, encoder, meta_for, step, temp_dir, tiny, DataSet};
use model::{
    check_encoding, has_checkpoint, load_checkpoint, load_model, read_meta, save_checkpoint,
    save_model, Device, NetEvaluator, OptimizerKind, TrainConfig, Trainer, FORMAT_VERSION,
};
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use tch::{nn::VarStore, Kind, Tensor};

/// A tensor's values as raw bits (exact comparison, NaN and signed zeros included).
fn bits(t: &Tensor) -> Vec<u32> {
    let t = t
        .detach()
        .to_device(tch::Device::Cpu)
        .to_kind(Kind::Float)
        .contiguous()
        .view([-1]);
    Vec::<f32>::try_from(&t)
        .expect("float tensor")
        .into_iter()
        .map(f32::to_bits)
        .collect()
}

fn var_bits(vs: &VarStore) -> BTreeMap<String, (Vec<i64>, Vec<u32>)> {
    vs.variables()
        .into_iter()
        .map(|(k, t)| (k, (t.size(), bits(&t))))
        .collect()
}

fn opt_bits(t: &Trainer) -> BTreeMap<String, (Vec<i64>, Vec<u32>)> {
    t.opt
        .state()
        .into_iter()
        .map(|(k, t)| (k, (t.size(), bits(&t))))
        .collect()
}

fn published_bits(t: &Trainer) -> BTreeMap<String, (Vec<i64>, Vec<u32>)> {
    t.published_variables()
        .into_iter()
        .map(|(k, t)| (k, (t.size(), bits(&t))))
        .collect()
}

fn assert_same(
    what: &str,
    a: &BTreeMap<String, (Vec<i64>, Vec<u32>)>,
    b: &BTreeMap<String, (Vec<i64>, Vec<u32>)>,
) {
    assert_eq!(
        a.keys().collect::<Vec<_>>(),
        b.keys().collect::<Vec<_>>(),
        "{what}: names differ"
    );
    for (k, (sa, va)) in a {
        let (sb, vb) = &b[k];
        assert_eq!(sa, sb, "{what}: shape of {k}");
        let diff = va.iter().zip(vb).filter(|(x, y)| x != y).count();
        assert_eq!(
            diff,
            0,
            "{what}: {diff} of {} values of {k} differ",
            va.len()
        );
    }
}

fn files_in(dir: &Path) -> BTreeSet<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect()
}

#[test]
fn save_then_load_gives_the_same_outputs_bit_for_bit() {
    let enc = encoder("minishogi");
    let data = DataSet::minishogi(64, 21);
    let mut t = Trainer::new(&tiny(), data.shape, TrainConfig::default(), Device::Cpu, 3);
    // A few steps so that batch-norm statistics and weights are not at their initial values.
    for _ in 0..5 {
        step(&mut t, &data, 16);
    }
    let mut meta = meta_for(&tiny(), &enc);
    meta.step = t.step;
    meta.generation = Some(4);
    meta.metrics.insert("loss".into(), 1.25);
    let dir = temp_dir("save-load");
    let path = dir.join("model.safetensors");
    save_model(&t.vs, &meta, &path).unwrap();
    // Saving twice (over the old files) is fine and leaves no temporary files behind.
    save_model(&t.vs, &meta, &path).unwrap();
    assert_eq!(
        files_in(&dir),
        ["model.json", "model.safetensors"]
            .map(String::from)
            .into_iter()
            .collect()
    );

    let (vs2, net2, meta2) = load_model(&path, Device::Cpu).unwrap();
    assert_eq!(meta2, meta);
    assert_eq!(net2.shape, data.shape);
    assert_eq!(net2.config, tiny());
    assert_same("weights", &var_bits(&t.vs), &var_bits(&vs2));
    // Loaded variables are trainable again.
    assert!(vs2.trainable_variables().iter().all(|v| v.requires_grad()));

    let n = 12;
    let x = encoded_positions(&enc, n, 99);
    let a = NetEvaluator::new(t.vs, t.net);
    let b = NetEvaluator::new(vs2, net2);
    let (pa, va) = a.forward_raw(&x, n);
    let (pb, vb) = b.forward_raw(&x, n);
    assert_eq!(pa.len(), n * data.shape.policy_len());
    assert_eq!(va.len(), n * 3);
    let to_bits = |v: &[f32]| v.iter().map(|f| f.to_bits()).collect::<Vec<_>>();
    assert_eq!(
        to_bits(&pa),
        to_bits(&pb),
        "policy logits differ after reload"
    );
    assert_eq!(to_bits(&va), to_bits(&vb), "WDL differs after reload");
    // The outputs depend on the input (the comparison is not between constants).
    assert_ne!(
        pa[..data.shape.policy_len()],
        pa[data.shape.policy_len()..2 * data.shape.policy_len()]
    );
}

#[test]
fn sidecar_describes_variant_and_encoding() {
    let enc = encoder("minishogi");
    let cfg = tiny();
    let vs = VarStore::new(tch::Device::Cpu);
    let _net = model::Network::new(&vs.root(), &cfg, model::shape_of(&enc));
    let meta = meta_for(&cfg, &enc);
    let dir = temp_dir("sidecar");
    let path = dir.join("m.safetensors");
    save_model(&vs, &meta, &path).unwrap();

    let m = read_meta(&path).unwrap();
    assert_eq!(m.format_version, FORMAT_VERSION);
    assert_eq!(m.variant, "minishogi");
    assert_eq!(m.encoding, enc.spec());
    assert_eq!(m.encoding.variant, "minishogi");
    assert_eq!(m.variant_spec, enc.variant().spec);
    assert_eq!(m.model, cfg);
    assert_eq!(m.model.name, "b2c16");
    assert_eq!(m.shape(), model::shape_of(&enc));
    assert_eq!(
        (m.planes, m.ranks, m.files, m.policy_planes),
        (
            enc.num_planes(),
            enc.ranks(),
            enc.files(),
            enc.policy_planes()
        )
    );
    assert!(check_encoding(&m, &enc.spec(), &path).is_ok());

    // The JSON itself, as another program would read it.
    let text = std::fs::read_to_string(dir.join("m.json")).unwrap();
    let j: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(j["variant"], "minishogi");
    assert_eq!(j["format_version"], FORMAT_VERSION);
    assert_eq!(j["encoding"]["policy_len"], enc.policy_len());
    assert_eq!(
        j["encoding"]["planes"].as_array().unwrap().len(),
        enc.num_planes()
    );
    assert_eq!(j["model"]["blocks"], 2);
    assert_eq!(j["model"]["channels"], 16);
    assert_eq!(
        serde_json::from_value::<encoding::EncodingSpec>(j["encoding"].clone()).unwrap(),
        enc.spec()
    );
}

fn resume_is_exact(cfg: TrainConfig, name: &str) {
    const N: usize = 3;
    const M: usize = 4;
    const B: usize = 16;
    let enc = encoder("minishogi");
    let data = DataSet::minishogi(64, 31);
    let meta = meta_for(&tiny(), &enc);
    let dir = temp_dir(name);
    assert!(!has_checkpoint(&dir));

    let mut a = Trainer::new(&tiny(), data.shape, cfg.clone(), Device::Cpu, 17);
    for i in 0..N {
        step(&mut a, &data, B);
        save_checkpoint(&dir, &a, &meta, serde_json::json!({ "generation": i })).unwrap();
        let latest = std::fs::read_to_string(dir.join("LATEST")).unwrap();
        assert_eq!(
            latest.trim(),
            format!("step-{:09}", a.step),
            "LATEST after save {i}"
        );
    }
    assert!(has_checkpoint(&dir));
    // Pruning: only the last two checkpoints remain, and nothing temporary.
    let mut want = BTreeSet::from(["LATEST".to_string()]);
    for s in [N - 1, N] {
        for ext in ["safetensors", "json", "optim.safetensors", "state.json"] {
            want.insert(format!("step-{s:09}.{ext}"));
        }
        if cfg.ema_decay > 0.0 {
            want.insert(format!("step-{s:09}.ema.safetensors"));
        }
    }
    assert_eq!(files_in(&dir), want);

    let (at_step, at_rng, at_opt_steps) = (a.step, a.rng, a.opt.steps);
    let (at_scale, at_good) = (a.loss_scale, a.good_steps);
    let at_vars = var_bits(&a.vs);
    let at_opt = opt_bits(&a);
    let at_published = published_bits(&a);
    let n_opt = a.vs.trainable_variables().len()
        * if cfg.optimizer == OptimizerKind::AdamW {
            2
        } else {
            1
        };
    assert_eq!(at_opt.len(), n_opt);

    for _ in 0..M {
        step(&mut a, &data, B);
    }

    let (mut b, state) = load_checkpoint(&dir, Device::Cpu, None).unwrap();
    assert_eq!(b.step, at_step);
    assert_eq!(b.rng, at_rng);
    assert_eq!(b.opt.steps, at_opt_steps);
    assert_eq!(b.opt.kind(), &cfg.optimizer);
    assert_eq!(b.cfg, cfg);
    assert_eq!(b.loss_scale, at_scale);
    assert_eq!(b.good_steps, at_good);
    assert_eq!(state.step, N as u64);
    assert_eq!(state.meta.step, N as u64);
    assert_eq!(state.meta.encoding, enc.spec());
    assert_eq!(state.extra, serde_json::json!({ "generation": N - 1 }));
    assert_same("weights at the checkpoint", &at_vars, &var_bits(&b.vs));
    assert_same("optimizer state at the checkpoint", &at_opt, &opt_bits(&b));
    assert_same(
        "published weights at the checkpoint",
        &at_published,
        &published_bits(&b),
    );
    assert_eq!(
        b.ema().map(|e| e.updates),
        (cfg.ema_decay > 0.0).then_some(N as u64)
    );

    for _ in 0..M {
        step(&mut b, &data, B);
    }
    assert_eq!(b.step, a.step);
    assert_eq!(b.rng, a.rng);
    assert_eq!(b.opt.steps, a.opt.steps);
    assert_same("weights after resuming", &var_bits(&a.vs), &var_bits(&b.vs));
    assert_same(
        "optimizer state after resuming",
        &opt_bits(&a),
        &opt_bits(&b),
    );
    assert_same(
        "published weights after resuming",
        &published_bits(&a),
        &published_bits(&b),
    );
    // The M steps did change things (the comparison above is not between untouched copies).
    let moved = var_bits(&a.vs)
        .iter()
        .filter(|(k, v)| at_vars[*k] != **v)
        .count();
    assert!(moved > 0, "training did not change any variable");
    assert!(opt_bits(&a) != at_opt, "optimizer state did not change");
    assert!(
        at_opt.values().all(|(_, v)| v.iter().any(|&x| x != 0)),
        "some optimizer state is still all zeros at the checkpoint"
    );

    // Hyper-parameters may be overridden on resume (same optimizer kind).
    let lower = TrainConfig {
        lr: cfg.lr / 2.0,
        ..cfg.clone()
    };
    let (c, _) = load_checkpoint(&dir, Device::Cpu, Some(lower.clone())).unwrap();
    assert_eq!(c.cfg, lower);
}

#[test]
fn resume_sgd_is_bit_exact() {
    resume_is_exact(
        TrainConfig {
            optimizer: OptimizerKind::Sgd,
            lr: 0.05,
            ..Default::default()
        },
        "resume-sgd",
    );
}

#[test]
fn resume_adamw_is_bit_exact() {
    resume_is_exact(
        TrainConfig {
            optimizer: OptimizerKind::AdamW,
            lr: 1e-3,
            weight_decay: 0.01,
            ..Default::default()
        },
        "resume-adamw",
    );
}

#[test]
fn resume_with_a_weight_average_is_bit_exact() {
    resume_is_exact(
        TrainConfig {
            optimizer: OptimizerKind::Sgd,
            lr: 0.05,
            ema_decay: 0.99,
            ..Default::default()
        },
        "resume-ema",
    );
}

#[test]
fn pruning_keeps_the_last_two_over_many_saves() {
    let enc = encoder("minishogi");
    let data = DataSet::minishogi(16, 41);
    let meta = meta_for(&tiny(), &enc);
    let dir = temp_dir("prune");
    let mut t = Trainer::new(&tiny(), data.shape, TrainConfig::default(), Device::Cpu, 1);
    for _ in 0..5 {
        step(&mut t, &data, 4);
        save_checkpoint(&dir, &t, &meta, serde_json::Value::Null).unwrap();
    }
    let stems: BTreeSet<String> = files_in(&dir)
        .into_iter()
        .filter(|f| f != "LATEST")
        .map(|f| f.split('.').next().unwrap().to_string())
        .collect();
    assert_eq!(
        stems,
        BTreeSet::from(["step-000000004".to_string(), "step-000000005".to_string()])
    );
    assert_eq!(
        std::fs::read_to_string(dir.join("LATEST")).unwrap().trim(),
        "step-000000005"
    );
    let (r, _) = load_checkpoint(&dir, Device::Cpu, None).unwrap();
    assert_eq!(r.step, 5);
}
