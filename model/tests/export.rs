//! Export: the traced TorchScript module matches the eager network, loads from Python, and
//! converts to ONNX (checked against onnxruntime by the export script).

mod common;

use common::{
    encoded_positions, encoder, meta_for, random_floats, step, temp_dir, tiny, venv_python, DataSet,
};
use model::{export_onnx, export_torchscript, trace, Device, OptimizerKind, TrainConfig, Trainer};
use std::path::{Path, PathBuf};
use std::process::Command;
use tch::{CModule, Kind, Tensor};

fn max_abs_diff(a: &Tensor, b: &Tensor) -> f64 {
    (a - b).abs().max().double_value(&[])
}

/// A trained (not freshly initialised) network: batch-norm statistics matter in eval mode.
fn trained() -> (Trainer, DataSet) {
    let data = DataSet::minishogi(32, 51);
    let cfg = TrainConfig {
        optimizer: OptimizerKind::AdamW,
        lr: 1e-3,
        ..Default::default()
    };
    let mut t = Trainer::new(&tiny(), data.shape, cfg, Device::Cpu, 23);
    for _ in 0..5 {
        step(&mut t, &data, 16);
    }
    (t, data)
}

fn script(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../scripts")
        .join(name)
}

#[test]
fn torchscript_matches_eager_and_loads_in_python() {
    let enc = encoder("minishogi");
    let (mut t, data) = trained();
    let s = data.shape;
    let dir = temp_dir("export-ts");
    let out = dir.join("net.pt");
    let meta = meta_for(&tiny(), &enc);
    export_torchscript(&mut t.vs, &t.net, &meta, &out, Device::Cpu).unwrap();
    assert!(out.exists());
    assert_eq!(model::read_meta(&out).unwrap(), meta);
    // Export leaves the network trainable.
    assert!(t.vs.trainable_variables().iter().all(|v| v.requires_grad()));
    let before = step(&mut t, &data, 8);
    assert!(
        before.grad_norm > 0.0,
        "no gradients after export: {before:?}"
    );

    // Re-export after that step so that the file matches the current weights.
    export_torchscript(&mut t.vs, &t.net, &meta, &out, Device::Cpu).unwrap();
    let m = CModule::load(&out).unwrap();
    let dims = [3, s.planes as i64, s.ranks as i64, s.files as i64];
    for (what, x) in [
        ("random", random_floats(3 * s.input_len(), 5)),
        ("positions", encoded_positions(&enc, 3, 6)),
    ] {
        let x = Tensor::from_slice(&x).view(dims);
        let got = tch::no_grad(|| m.forward_ts(&[&x])).unwrap();
        let want = tch::no_grad(|| t.net.forward_export(&x));
        assert_eq!(got.size(), [3, s.policy_len() as i64 + 3]);
        assert_eq!(got.kind(), Kind::Float);
        let d = max_abs_diff(&got, &want);
        assert!(d < 1e-5, "{what}: TorchScript differs from eager by {d}");
        // The WDL part is probabilities.
        let wdl = want
            .narrow(1, s.policy_len() as i64, 3)
            .sum_dim_intlist(1, false, Kind::Float);
        assert!(max_abs_diff(&wdl, &Tensor::ones([3], (Kind::Float, tch::Device::Cpu))) < 1e-5);
    }
    // Eval mode: the export agrees with the evaluator's forward (running statistics).
    let x = encoded_positions(&enc, 2, 7);
    let (t_vs, t_net) = (t.vs, t.net);
    let ev = model::NetEvaluator::new(t_vs, t_net);
    let (p, v) = ev.forward_raw(&x, 2);
    let got = m
        .forward_ts(&[Tensor::from_slice(&x).view([
            2,
            s.planes as i64,
            s.ranks as i64,
            s.files as i64,
        ])])
        .unwrap();
    let got = Vec::<f32>::try_from(got.contiguous().view([-1])).unwrap();
    let pl = s.policy_len();
    for i in 0..2 {
        let row = &got[i * (pl + 3)..(i + 1) * (pl + 3)];
        for (a, b) in row[..pl].iter().zip(&p[i * pl..(i + 1) * pl]) {
            assert!((a - b).abs() < 1e-5, "policy {a} vs {b}");
        }
        for (a, b) in row[pl..].iter().zip(&v[i * 3..(i + 1) * 3]) {
            assert!((a - b).abs() < 1e-5, "wdl {a} vs {b}");
        }
    }

    // Python loads the file and runs it on another batch size.
    let py = venv_python();
    let code = format!(
        "import torch; m=torch.jit.load({:?}); print(m(torch.rand(2,{},{},{})).shape)",
        out.display().to_string(),
        s.planes,
        s.ranks,
        s.files
    );
    let o = Command::new(&py).arg("-c").arg(&code).output().unwrap();
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(
        o.status.success(),
        "python failed ({}): {}{}",
        o.status,
        stdout,
        String::from_utf8_lossy(&o.stderr)
    );
    assert_eq!(
        stdout.trim(),
        format!("torch.Size([2, {}])", s.policy_len() + 3),
        "stderr: {}",
        String::from_utf8_lossy(&o.stderr)
    );
}

#[test]
fn trace_freezes_and_the_module_runs() {
    let (mut t, data) = trained();
    let m = trace(&mut t.vs, &t.net, Device::Cpu).unwrap();
    assert!(
        t.vs.trainable_variables()
            .iter()
            .all(|v| !v.requires_grad()),
        "trace leaves the variables frozen (documented)"
    );
    let s = data.shape;
    let x = Tensor::from_slice(&random_floats(s.input_len(), 8)).view([
        1,
        s.planes as i64,
        s.ranks as i64,
        s.files as i64,
    ]);
    let y = m.forward_ts(&[x]).unwrap();
    assert_eq!(y.size(), [1, s.policy_len() as i64 + 3]);
    t.vs.unfreeze();
    assert!(t.vs.trainable_variables().iter().all(|v| v.requires_grad()));
}

#[test]
fn onnx_export_and_onnxruntime_check() {
    let py = venv_python();
    let enc = encoder("minishogi");
    let (mut t, _) = trained();
    let dir = temp_dir("export-onnx");
    let ts = dir.join("net.pt");
    let onnx = dir.join("net.onnx");
    let meta = meta_for(&tiny(), &enc);
    export_torchscript(&mut t.vs, &t.net, &meta, &ts, Device::Cpu).unwrap();
    let exporter = script("export_onnx.py");
    assert!(exporter.exists(), "{} is missing", exporter.display());
    export_onnx(&ts, &meta, &onnx, &py, &exporter, false).unwrap();
    assert!(
        std::fs::metadata(&onnx).unwrap().len() > 1000,
        "ONNX file is tiny"
    );
    assert_eq!(model::read_meta(&onnx).unwrap(), meta);

    let o = Command::new(&py)
        .arg(&exporter)
        .arg(&ts)
        .arg(&onnx)
        .args(["--planes", &meta.planes.to_string()])
        .args(["--ranks", &meta.ranks.to_string()])
        .args(["--files", &meta.files.to_string()])
        .arg("--check")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(
        o.status.success(),
        "export_onnx.py --check failed ({}): {stdout}{}",
        o.status,
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(
        stdout.contains("onnxruntime max abs difference"),
        "{stdout}"
    );
    // No temporary files are left next to the outputs.
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names, ["net.json", "net.onnx", "net.pt"]);
}

#[test]
fn onnx_export_failure_is_an_error() {
    let enc = encoder("minishogi");
    let meta = meta_for(&tiny(), &enc);
    let dir = temp_dir("export-onnx-bad");
    let missing = dir.join("missing.pt");
    let e = export_onnx(
        &missing,
        &meta,
        &dir.join("x.onnx"),
        Path::new("/nonexistent/python"),
        &script("export_onnx.py"),
        false,
    )
    .unwrap_err()
    .to_string();
    assert!(e.contains("/nonexistent/python"), "{e}");
    // A script that fails.
    let e = export_onnx(
        &missing,
        &meta,
        &dir.join("x.onnx"),
        Path::new("/bin/sh"),
        &dir.join("no-such-script.sh"),
        false,
    )
    .unwrap_err()
    .to_string();
    assert!(e.contains("failed"), "{e}");
    assert!(!dir.join("x.json").exists());
}
