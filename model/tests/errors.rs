//! Bad inputs fail with clear errors (never a panic): mismatched, missing or damaged model
//! files, the wrong variant, the wrong optimizer, invalid configs.

mod common;

use common::{encoder, meta_for, step, temp_dir, tiny, DataSet};
use model::{
    check_encoding, load_checkpoint, load_model, read_meta, save_checkpoint, save_model, shape_of,
    Device, ModelConfig, Network, OptimizerKind, Schedule, TrainConfig, Trainer,
};
use std::path::{Path, PathBuf};
use tch::nn::VarStore;

/// Saves weights of network `weights_cfg` with a sidecar that says `tiny()`.
fn save_mismatched(dir: &Path, weights_cfg: &ModelConfig) -> PathBuf {
    let enc = encoder("minishogi");
    let vs = VarStore::new(tch::Device::Cpu);
    let _net = Network::new(&vs.root(), weights_cfg, shape_of(&enc));
    let path = dir.join(format!("{}.safetensors", weights_cfg.name));
    save_model(&vs, &meta_for(&tiny(), &enc), &path).unwrap();
    path
}

fn shape_cfg(name: &str, blocks: usize, channels: usize) -> ModelConfig {
    ModelConfig::from_toml(
        &format!(
            "blocks = {blocks}\nchannels = {channels}\nglobal_pool = true\npolicy_channels = 8\n\
             value_channels = 8\nvalue_hidden = 32\n"
        ),
        &format!("{name}.toml"),
    )
    .unwrap()
}

/// A good model file to damage.
fn good_model(dir: &Path) -> PathBuf {
    let enc = encoder("minishogi");
    let vs = VarStore::new(tch::Device::Cpu);
    let _net = Network::new(&vs.root(), &tiny(), shape_of(&enc));
    let path = dir.join("good.safetensors");
    save_model(&vs, &meta_for(&tiny(), &enc), &path).unwrap();
    assert!(load_model(&path, Device::Cpu).is_ok());
    path
}

#[test]
fn weights_of_another_shape_name_the_tensor_and_both_shapes() {
    let dir = temp_dir("mismatch");
    let enc = encoder("minishogi");
    let other = shape_cfg("b2c8", 2, 8);
    let path = save_mismatched(&dir, &other);
    let e = load_model(&path, Device::Cpu).unwrap_err().to_string();

    // The first variable (in name order) whose shape differs between the two networks.
    let want_vs = VarStore::new(tch::Device::Cpu);
    let _a = Network::new(&want_vs.root(), &tiny(), shape_of(&enc));
    let got_vs = VarStore::new(tch::Device::Cpu);
    let _b = Network::new(&got_vs.root(), &other, shape_of(&enc));
    let (want, got) = (want_vs.variables(), got_vs.variables());
    let mut names: Vec<&String> = want.keys().collect();
    names.sort();
    let name = names
        .into_iter()
        .find(|n| want[*n].size() != got[*n].size())
        .unwrap();
    assert!(e.contains(name.as_str()), "error does not name {name}: {e}");
    assert!(e.contains(&format!("{:?}", got[name].size())), "{e}");
    assert!(e.contains(&format!("{:?}", want[name].size())), "{e}");
    assert!(
        e.contains("b2c8.safetensors"),
        "error does not name the file: {e}"
    );
}

#[test]
fn missing_and_unexpected_tensors_are_named() {
    let dir = temp_dir("missing-tensor");
    let fewer = save_mismatched(&dir, &shape_cfg("b1c16", 1, 16));
    let e = load_model(&fewer, Device::Cpu).unwrap_err().to_string();
    assert!(e.contains("missing tensor tower.1."), "{e}");
    let more = save_mismatched(&dir, &shape_cfg("b3c16", 3, 16));
    let e = load_model(&more, Device::Cpu).unwrap_err().to_string();
    assert!(e.contains("unexpected tensor tower.2."), "{e}");
}

#[test]
fn missing_sidecar() {
    let dir = temp_dir("no-sidecar");
    let path = good_model(&dir);
    std::fs::remove_file(dir.join("good.json")).unwrap();
    let e = load_model(&path, Device::Cpu).unwrap_err().to_string();
    assert!(
        e.contains("good.json"),
        "error does not name the sidecar: {e}"
    );
    assert!(read_meta(&path).is_err());
}

#[test]
fn corrupted_sidecar() {
    let dir = temp_dir("bad-sidecar");
    let path = good_model(&dir);
    let sc = dir.join("good.json");
    let text = std::fs::read_to_string(&sc).unwrap();
    std::fs::write(&sc, &text[..text.len() / 2]).unwrap();
    let e = load_model(&path, Device::Cpu).unwrap_err().to_string();
    assert!(e.contains("bad sidecar") && e.contains("good.json"), "{e}");
    std::fs::write(&sc, "not json at all").unwrap();
    let e = load_model(&path, Device::Cpu).unwrap_err().to_string();
    assert!(e.contains("bad sidecar"), "{e}");
    // Valid JSON of an unknown format version.
    let mut j: serde_json::Value = serde_json::from_str(&text).unwrap();
    j["format_version"] = 99.into();
    std::fs::write(&sc, serde_json::to_string(&j).unwrap()).unwrap();
    let e = load_model(&path, Device::Cpu).unwrap_err().to_string();
    assert!(e.contains("99") && e.contains("not supported"), "{e}");
}

#[test]
fn truncated_or_garbage_weights() {
    let dir = temp_dir("bad-weights");
    let path = good_model(&dir);
    let bytes = std::fs::read(&path).unwrap();
    for (what, damaged) in [
        ("truncated", bytes[..bytes.len() / 2].to_vec()),
        ("header only", bytes[..bytes.len().min(16)].to_vec()),
        ("empty", Vec::new()),
        (
            "garbage",
            (0..4096u32)
                .map(|i| (i.wrapping_mul(2654435761) >> 24) as u8)
                .collect(),
        ),
        ("text", b"these are not weights".to_vec()),
    ] {
        std::fs::write(&path, &damaged).unwrap();
        let r = std::panic::catch_unwind(|| load_model(&path, Device::Cpu));
        let r = r.unwrap_or_else(|_| panic!("{what} weights: load_model panicked"));
        let e = r
            .err()
            .unwrap_or_else(|| panic!("{what} weights loaded"))
            .to_string();
        assert!(
            e.contains("cannot read weights") && e.contains("good.safetensors"),
            "{what}: {e}"
        );
    }
    std::fs::remove_file(&path).unwrap();
    let e = load_model(&path, Device::Cpu).unwrap_err().to_string();
    assert!(e.contains("good.safetensors"), "missing weights: {e}");
}

#[test]
fn model_of_another_variant_is_refused() {
    let dir = temp_dir("variant");
    let path = good_model(&dir);
    let meta = read_meta(&path).unwrap();
    let shogi = encoder("shogi");
    let e = check_encoding(&meta, &shogi.spec(), &path)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("\"minishogi\"") && e.contains("\"shogi\"") && e.contains("variant"),
        "{e}"
    );
    // Same variant name, different layout (e.g. the variant file changed).
    let mut changed = encoder("minishogi").spec();
    changed.policy_len += 25;
    let e = check_encoding(&meta, &changed, &path)
        .unwrap_err()
        .to_string();
    assert!(e.contains("differs") && e.contains("minishogi"), "{e}");
}

#[test]
fn checkpoint_with_another_optimizer_is_refused() {
    let enc = encoder("minishogi");
    let data = DataSet::minishogi(8, 2);
    let dir = temp_dir("opt-kind");
    let mut t = Trainer::new(&tiny(), data.shape, TrainConfig::default(), Device::Cpu, 9);
    step(&mut t, &data, 4);
    save_checkpoint(&dir, &t, &meta_for(&tiny(), &enc), serde_json::Value::Null).unwrap();
    let adamw = TrainConfig {
        optimizer: OptimizerKind::AdamW,
        lr: 1e-3,
        ..Default::default()
    };
    let e = load_checkpoint(&dir, Device::Cpu, Some(adamw))
        .unwrap_err()
        .to_string();
    assert!(e.contains("Sgd") && e.contains("AdamW"), "{e}");
    assert!(load_checkpoint(&dir, Device::Cpu, None).is_ok());

    // A damaged checkpoint: state JSON, then the optimizer file.
    let state = dir.join("step-000000001.state.json");
    let good_state = std::fs::read(&state).unwrap();
    std::fs::write(&state, b"{").unwrap();
    let e = load_checkpoint(&dir, Device::Cpu, None)
        .unwrap_err()
        .to_string();
    assert!(e.contains("bad checkpoint state"), "{e}");
    std::fs::write(&state, good_state).unwrap();
    let optim = dir.join("step-000000001.optim.safetensors");
    std::fs::write(&optim, b"garbage").unwrap();
    let e = load_checkpoint(&dir, Device::Cpu, None)
        .unwrap_err()
        .to_string();
    assert!(e.contains("optimizer state"), "{e}");
    // No checkpoint at all.
    let empty = temp_dir("opt-kind-empty");
    let e = load_checkpoint(&empty, Device::Cpu, None)
        .unwrap_err()
        .to_string();
    assert!(e.contains("LATEST"), "{e}");
}

#[test]
fn train_config_errors_name_the_key() {
    assert!(TrainConfig::default().validate("run.toml").is_ok());
    type Edit = fn(&mut TrainConfig);
    let cases: [(&str, Edit); 12] = [
        ("lr", |c| c.lr = 0.0),
        ("lr", |c| c.lr = f64::NAN),
        ("momentum", |c| c.momentum = 1.0),
        ("beta2", |c| c.beta2 = -0.1),
        ("eps", |c| c.eps = 0.0),
        ("eps", |c| c.eps = f64::NAN),
        ("weight_decay", |c| c.weight_decay = 1.5),
        ("grad_clip", |c| c.grad_clip = -1.0),
        ("batch_size", |c| c.batch_size = 0),
        ("batch_size", |c| c.batch_size = 1 << 20),
        ("min_lr", |c| c.min_lr = 1.0),
        ("step_size", |c| {
            c.schedule = Schedule::Step;
            c.step_size = 0;
        }),
    ];
    for (key, edit) in cases {
        let mut c = TrainConfig::default();
        edit(&mut c);
        let e = c.validate("run.toml").unwrap_err().to_string();
        assert!(
            e.contains(&format!("training.{key}")) && e.contains("run.toml"),
            "{key}: {e}"
        );
    }
}

#[test]
fn model_config_errors_name_the_key() {
    let base = "blocks = 2\nchannels = 16\n";
    assert!(ModelConfig::from_toml(base, "m.toml").is_ok());
    let cases = [
        ("blocks", "blocks = 0\nchannels = 16\n"),
        ("blocks", "blocks = 65\nchannels = 16\n"),
        ("channels", "blocks = 2\nchannels = 2000\n"),
        (
            "policy_channels",
            "blocks = 2\nchannels = 16\npolicy_channels = 0\n",
        ),
        (
            "value_channels",
            "blocks = 2\nchannels = 16\nvalue_channels = 0\n",
        ),
        (
            "value_hidden",
            "blocks = 2\nchannels = 16\nvalue_hidden = 0\n",
        ),
        ("colour", "blocks = 2\nchannels = 16\ncolour = 1\n"),
        ("channels", "blocks = 2\n"),
        ("blocks", "blocks = \"two\"\nchannels = 16\n"),
        (
            "global_pool",
            "blocks = 2\nchannels = 16\nglobal_pool = 3\n",
        ),
    ];
    for (key, text) in cases {
        let e = ModelConfig::from_toml(text, "m.toml")
            .unwrap_err()
            .to_string();
        assert!(e.contains(key) && e.contains("m.toml"), "{key}: {e}");
    }
    let e = ModelConfig::load("b99c1").unwrap_err().to_string();
    assert!(e.contains("b99c1"), "{e}");
    let e = ModelConfig::load("/nonexistent/shape.toml")
        .unwrap_err()
        .to_string();
    assert!(e.contains("/nonexistent/shape.toml"), "{e}");
}
