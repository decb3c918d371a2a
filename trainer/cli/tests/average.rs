//! `trainer average`: the tensor-by-tensor mean of networks, from files or a run's newest
//! generations, and its refusals.

mod common;
use common::{fresh_dir, trainer_within};

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Output;
use std::time::Duration;

fn trainer(args: &[&str]) -> Output {
    trainer_within(args, Duration::from_secs(300))
}

fn tmp(name: &str) -> PathBuf {
    fresh_dir("average", name)
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

fn init(out: &Path, model: &str, seed: u64) {
    init_with(out, model, seed, "generic");
}

fn init_with(out: &Path, model: &str, seed: u64, encoding: &str) {
    let o = trainer(&[
        "init",
        "--variant",
        "minishogi",
        "--model",
        model,
        "--seed",
        &seed.to_string(),
        "--encoding",
        encoding,
        "--out",
        s(out),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
}

/// Every tensor of a safetensors file (all F32), read independently of the trainer's code.
fn tensors(p: &Path) -> BTreeMap<String, Vec<f32>> {
    let b = std::fs::read(p).unwrap();
    let n = u64::from_le_bytes(b[..8].try_into().unwrap()) as usize;
    let h: serde_json::Map<String, serde_json::Value> =
        serde_json::from_slice(&b[8..8 + n]).unwrap();
    let data = &b[8 + n..];
    h.into_iter()
        .filter(|(k, _)| k != "__metadata__")
        .map(|(k, v)| {
            assert_eq!(v["dtype"], "F32", "{k}");
            let o = &v["data_offsets"];
            let (a, e) = (
                o[0].as_u64().unwrap() as usize,
                o[1].as_u64().unwrap() as usize,
            );
            let xs = data[a..e]
                .chunks(4)
                .map(|c| f32::from_le_bytes(c.try_into().unwrap()))
                .collect();
            (k, xs)
        })
        .collect()
}

fn assert_mean(out: &Path, inputs: &[&Path]) {
    let got = tensors(out);
    let ins: Vec<_> = inputs.iter().map(|p| tensors(p)).collect();
    assert_eq!(got.len(), ins[0].len());
    let mut differs = false;
    for (name, xs) in &got {
        for (i, x) in xs.iter().enumerate() {
            let vals: Vec<f64> = ins.iter().map(|t| f64::from(t[name][i])).collect();
            let want = vals.iter().sum::<f64>() / vals.len() as f64;
            assert!(
                (f64::from(*x) - want).abs() <= 1e-6 * want.abs().max(1.0),
                "{name}[{i}]: {x} against the mean {want}"
            );
            differs |= vals.iter().any(|v| (v - vals[0]).abs() > 1e-3);
        }
    }
    assert!(differs, "the inputs were all the same network");
}

fn sidecar(p: &Path) -> serde_json::Value {
    serde_json::from_slice(&std::fs::read(p.with_extension("json")).unwrap()).unwrap()
}

#[test]
fn the_mean_of_models_and_of_a_runs_newest_generations() {
    let d = tmp("mean");
    let (a, b) = (d.join("a.safetensors"), d.join("b.safetensors"));
    init(&a, "b2c16", 1);
    init(&b, "b2c16", 2);
    let out = d.join("ab.safetensors");
    let o = trainer(&["average", s(&a), s(&b), "--out", s(&out)]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_mean(&out, &[&a, &b]);
    assert_eq!(sidecar(&out)["metrics"]["averaged_networks"], 2.0);
    // The mean is a network like any other.
    let o = trainer(&["eval", "--model", s(&out), "--json"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));

    // A run's models directory: generations 0 to 3 (each a different network), and files
    // that are not generations.
    let run = d.join("run");
    let models = run.join("models");
    std::fs::create_dir_all(&models).unwrap();
    let gens: Vec<PathBuf> = (0..4)
        .map(|g| {
            let p = models.join(format!("{g:06}.safetensors"));
            init(&p, "b2c16", 10 + g);
            // Each sidecar names its generation, as a run's do.
            let mut meta = sidecar(&p);
            meta["generation"] = g.into();
            std::fs::write(p.with_extension("json"), meta.to_string()).unwrap();
            p
        })
        .collect();
    std::fs::copy(&a, models.join(".tmp-1234.safetensors")).unwrap();
    std::fs::copy(&a, models.join("average.safetensors")).unwrap();
    let out = d.join("last3.safetensors");
    let o = trainer(&["average", "--run", s(&run), "--last", "3", "--out", s(&out)]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let text = String::from_utf8(o.stdout).unwrap();
    assert!(
        text.contains("the mean of 3 networks (generations 1 to 3 of"),
        "{text}"
    );
    assert_mean(&out, &[&gens[1], &gens[2], &gens[3]]);
    // The newest input's sidecar.
    assert_eq!(sidecar(&out)["generation"], 3);
    assert_eq!(sidecar(&out)["metrics"]["averaged_networks"], 3.0);
    // More than the run has: all of them.
    let out = d.join("all.safetensors");
    let o = trainer(&[
        "average",
        "--run",
        s(&run),
        "--last",
        "10",
        "--out",
        s(&out),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_mean(&out, &[&gens[0], &gens[1], &gens[2], &gens[3]]);
    let _ = std::fs::remove_dir_all(&d);
}

fn refused(args: &[&str], want: &str) {
    let o = trainer(args);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{args:?}: {err}");
    assert!(err.contains(want), "{args:?}: {err}");
    assert!(!err.contains("panicked"), "{err}");
}

#[test]
fn averages_that_cannot_be_made_are_refused_and_write_nothing() {
    let d = tmp("refused");
    let (a, b, c) = (
        d.join("a.safetensors"),
        d.join("b.safetensors"),
        d.join("c.safetensors"),
    );
    init(&a, "b2c16", 1);
    init(&b, "b4c32", 2);
    init(&c, "b2c16", 3);
    let out = d.join("out.safetensors");
    let o = s(&out);
    refused(
        &["average", s(&a), s(&b), "--out", o],
        &format!(
            "{}: its network shape differs from {}'s",
            b.display(),
            a.display()
        ),
    );
    let e = d.join("e.safetensors");
    init_with(&e, "b2c16", 4, "attacks");
    refused(
        &["average", s(&a), s(&e), "--out", o],
        &format!(
            "{}: its encoding differs from {}'s",
            e.display(),
            a.display()
        ),
    );
    // A truncated model is named.
    let bad = d.join("bad.safetensors");
    let bytes = std::fs::read(&c).unwrap();
    std::fs::write(&bad, &bytes[..bytes.len() / 2]).unwrap();
    std::fs::copy(c.with_extension("json"), bad.with_extension("json")).unwrap();
    refused(&["average", s(&a), s(&bad), "--out", o], s(&bad));
    assert!(!out.exists() && !out.with_extension("json").exists());
    refused(
        &["average", s(&a), s(&c), "--out", s(&c)],
        "would overwrite the input",
    );
    refused(
        &["average", s(&a), s(&c), "--out", s(&d.join("c.json"))],
        "would overwrite the input",
    );
    refused(
        &["average", s(&a), s(&c), "--out", s(&d.join("x.pt"))],
        "must end in .safetensors",
    );
    refused(
        &["average", s(&a), "--last", "2", "--out", o],
        "--last counts a run's generations",
    );
    refused(
        &["average", "--run", s(&d), "--out", o],
        "--run needs --last N",
    );
    refused(
        &["average", "--run", s(&d), "--last", "0", "--out", o],
        "--last 0",
    );
    refused(
        &[
            "average",
            "--run",
            s(&d.join("none")),
            "--last",
            "2",
            "--out",
            o,
        ],
        "cannot list",
    );
    std::fs::create_dir_all(d.join("empty/models")).unwrap();
    refused(
        &[
            "average",
            "--run",
            s(&d.join("empty")),
            "--last",
            "2",
            "--out",
            o,
        ],
        "no network in its models directory",
    );
    // An existing output needs --force.
    std::fs::write(&out, b"keep").unwrap();
    refused(&["average", s(&a), s(&c), "--out", o], "pass --force");
    assert_eq!(std::fs::read(&out).unwrap(), b"keep");
    let r = trainer(&["average", s(&a), s(&c), "--out", o, "--force"]);
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    let _ = std::fs::remove_dir_all(&d);
}
