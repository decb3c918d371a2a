//! Model files are untrusted input: a sidecar whose shapes are out of range or disagree with
//! its variant, and weights that are garbage, are refused with the file, the key and the
//! reason by every command that reads them (never a panic or an abort), a hostile latest
//! checkpoint makes the trainer resume from the previous one, `export` never overwrites the
//! model or an existing file without `--force`, and `bench nn --weights` measures those weights.

mod common;
use common::{init_model, state, text};

use serde_json::{json, Value};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

fn root(name: &str) -> PathBuf {
    common::fresh_dir("hostile", name)
}

/// Runs `trainer ARGS` (with `stdin` as its input) from the repository root; fails the test
/// when it does not end within `limit`.
fn trainer_in(args: &[&str], stdin: &str, limit: Duration) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_trainer"))
        .args(args)
        .current_dir(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../.."))
        .env("OMP_WAIT_POLICY", "PASSIVE")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run trainer");
    // The command may exit before it reads its input.
    let _ = child.stdin.take().unwrap().write_all(stdin.as_bytes());
    let t = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if t.elapsed() > limit {
            let _ = child.kill();
            panic!("trainer {args:?} did not end within {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    child.wait_with_output().unwrap()
}

fn trainer(args: &[&str]) -> Output {
    trainer_in(args, "", Duration::from_secs(120))
}

fn ok(o: Output, what: &str) -> String {
    assert!(o.status.success(), "{what} failed: {}", text(&o));
    String::from_utf8(o.stdout).unwrap()
}

/// The command failed the ordinary way (exit status 1 with an error message): not a panic
/// (101), not an abort (a signal). Returns its output.
fn refused(o: Output, what: &str) -> String {
    let out = text(&o);
    assert_eq!(o.status.code(), Some(1), "{what}: {out}");
    assert!(
        out.contains("error: ") && !out.contains("panicked"),
        "{what}: {out}"
    );
    out
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// Every command that reads a model file, on `m` (outputs go to `dir`).
fn model_commands(m: &Path, dir: &Path) -> Vec<(&'static str, Vec<String>, &'static str)> {
    let m = s(m).to_string();
    let out = s(&dir.join("exported.pt")).to_string();
    let args = |a: &[&str]| a.iter().map(|x| x.to_string()).collect::<Vec<_>>();
    vec![
        (
            "export",
            args(&[
                "export",
                "--model",
                &m,
                "--format",
                "torchscript",
                "--out",
                &out,
            ]),
            "",
        ),
        ("eval", args(&["eval", "--model", &m]), ""),
        (
            "bench nn",
            args(&[
                "bench",
                "nn",
                "--weights",
                &m,
                "--device",
                "cpu",
                "--batches",
                "1",
                "--train-batch",
                "2",
                "--seconds",
                "0.01",
            ]),
            "",
        ),
        (
            "usi",
            args(&["usi", "--model", &m]),
            "usi\nisready\ngo nodes 2\nquit\n",
        ),
    ]
}

fn run_command(args: &[String], stdin: &str) -> Output {
    let a: Vec<&str> = args.iter().map(String::as_str).collect();
    trainer_in(&a, stdin, Duration::from_secs(120))
}

#[test]
fn hostile_sidecars_are_refused_with_the_file_and_key() {
    let dir = root("sidecar");
    let m = init_model(&dir);
    let sc = dir.join("m.json");
    let good: Value = serde_json::from_str(&std::fs::read_to_string(&sc).unwrap()).unwrap();
    let planes = good["planes"].as_u64().unwrap();
    let edits = [
        ("/model/channels", json!(1_000_000_000u64), "model.channels"),
        ("/model/blocks", json!(1u64 << 40), "model.blocks"),
        (
            "/model/value_hidden",
            json!(1u64 << 40),
            "model.value_hidden",
        ),
        ("/planes", json!(1_000_000_000u64), "planes"),
        ("/planes", json!(planes + 1), "planes"),
        ("/policy_planes", json!(1u64 << 40), "policy_planes"),
        (
            "/encoding/policy_len",
            json!(1u64 << 50),
            "encoding.policy_len",
        ),
    ];
    for (pointer, value, key) in edits {
        let mut j = good.clone();
        *j.pointer_mut(pointer).unwrap() = value.clone();
        std::fs::write(&sc, serde_json::to_vec_pretty(&j).unwrap()).unwrap();
        for (what, args, stdin) in model_commands(&m, &dir) {
            let what = format!("{what} with {pointer} = {value}");
            let out = refused(run_command(&args, stdin), &what);
            assert!(
                out.contains("m.json") && out.contains(&format!(": {key}: ")),
                "{what}: {out}"
            );
        }
        assert!(!dir.join("exported.pt").exists());
    }
    // The same commands work on the intact model.
    std::fs::write(&sc, serde_json::to_vec_pretty(&good).unwrap()).unwrap();
    for (what, args, stdin) in model_commands(&m, &dir) {
        let o = run_command(&args, stdin);
        assert!(o.status.success(), "{what}: {}", text(&o));
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn garbage_weights_beside_a_valid_sidecar_are_a_clear_error() {
    let dir = root("weights");
    let m = init_model(&dir);
    let bytes = std::fs::read(&m).unwrap();
    for (kind, damaged) in [
        ("truncated", bytes[..bytes.len() / 2].to_vec()),
        ("garbage", b"these are not weights at all".to_vec()),
        ("empty", Vec::new()),
    ] {
        std::fs::write(&m, &damaged).unwrap();
        for (what, args, stdin) in model_commands(&m, &dir) {
            let usi = what == "usi";
            let what = format!("{what} on {kind} weights");
            let o = run_command(&args, stdin);
            let out = if usi {
                // The engine reads its sidecar at start and loads the weights at `isready`: it
                // reports the error to the GUI and stays up (then resigns).
                let out = text(&o);
                assert!(
                    o.status.success() && !out.contains("panicked"),
                    "{what}: {out}"
                );
                assert!(out.contains("info string error: "), "{what}: {out}");
                out
            } else {
                refused(o, &what)
            };
            assert!(
                out.contains("m.safetensors") && out.contains("cannot read weights"),
                "{what}: {out}"
            );
        }
        assert!(!dir.join("exported.pt").exists());
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// The start-position WDL that `bench nn --weights` reports.
fn bench_wdl(m: &Path) -> [f64; 3] {
    let out = ok(
        trainer(&[
            "bench",
            "nn",
            "--weights",
            s(m),
            "--device",
            "cpu",
            "--batches",
            "1",
            "--train-batch",
            "2",
            "--seconds",
            "0.01",
        ]),
        "bench nn",
    );
    let line = out
        .lines()
        .find_map(|l| l.split_once("start position ").map(|(_, r)| r.to_string()))
        .unwrap_or_else(|| panic!("no start position line: {out}"));
    let w: Vec<f64> = line
        .split_whitespace()
        .skip(1)
        .step_by(2)
        .map(|x| x.parse().unwrap())
        .collect();
    assert!(
        out.contains("forward batch") && out.contains("train batch"),
        "{out}"
    );
    [w[0], w[1], w[2]]
}

/// The start-position WDL that `trainer eval` gives for a model.
fn eval_wdl(m: &Path) -> [f64; 3] {
    let out = ok(trainer(&["eval", "--model", s(m), "--json"]), "eval");
    let j: Value = serde_json::from_str(out.trim()).unwrap();
    let w: Vec<f64> = j["wdl"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_f64().unwrap())
        .collect();
    [w[0], w[1], w[2]]
}

fn max_diff(a: [f64; 3], b: [f64; 3]) -> f64 {
    (0..3).map(|i| (a[i] - b[i]).abs()).fold(0.0, f64::max)
}

#[test]
fn bench_nn_measures_the_weights_it_names() {
    let dir = root("bench");
    // Two networks of the same shape from seeds that no fresh network of the bench uses.
    let models: Vec<PathBuf> = [7u64, 8]
        .iter()
        .map(|seed| {
            let m = dir.join(format!("seed{seed}.safetensors"));
            let args = [
                "init",
                "--variant",
                "minishogi",
                "--model",
                "b2c16",
                "--seed",
                &seed.to_string(),
                "--out",
                s(&m),
            ];
            ok(trainer(&args), "init");
            m
        })
        .collect();
    let evals: Vec<[f64; 3]> = models.iter().map(|m| eval_wdl(m)).collect();
    assert!(
        max_diff(evals[0], evals[1]) > 1e-3,
        "the two networks must differ for this test to tell them apart: {evals:?}"
    );
    for (m, e) in models.iter().zip(&evals) {
        let b = bench_wdl(m);
        assert!(
            max_diff(b, *e) < 1e-4,
            "{}: bench nn measured another network (its WDL {b:?}, the file's {e:?})",
            m.display()
        );
    }
    // Weights that cannot be loaded are an error, not a benchmark of something else.
    std::fs::write(&models[0], b"damaged").unwrap();
    let o = trainer(&[
        "bench",
        "nn",
        "--weights",
        s(&models[0]),
        "--device",
        "cpu",
        "--batches",
        "1",
        "--seconds",
        "0.01",
    ]);
    let out = refused(o, "bench nn on damaged weights");
    assert!(
        out.contains("seed7.safetensors") && out.contains("cannot read weights"),
        "{out}"
    );
    assert!(!out.contains("forward batch"), "{out}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// A stand-in for the ONNX converter: records the TorchScript file it is given (`argv[2]`)
/// and copies it to the output (`argv[3]`).
fn fake_python(dir: &Path) -> (PathBuf, PathBuf) {
    use std::os::unix::fs::PermissionsExt;
    let log = dir.join("converter.log");
    let py = dir.join("fake-python");
    std::fs::write(
        &py,
        format!(
            "#!/bin/sh\ntest -f \"$2\" || exit 3\necho \"$2\" >> '{}'\ncp \"$2\" \"$3\"\n",
            log.display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&py, std::fs::Permissions::from_mode(0o755)).unwrap();
    (py, log)
}

/// Files of `dir` whose names mark them as temporaries.
fn temporaries(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with('.') || n.contains(".tmp"))
        .collect()
}

#[test]
fn onnx_export_writes_its_torchscript_to_a_temporary_name() {
    let dir = root("onnx");
    let m = init_model(&dir);
    let (py, log) = fake_python(&dir);
    // A TorchScript export beside the model, then ONNX exports by its side.
    ok(
        trainer(&["export", "--model", s(&m), "--format", "torchscript"]),
        "export torchscript",
    );
    let pt = dir.join("m.pt");
    let pt_bytes = std::fs::read(&pt).unwrap();
    let user_pt = dir.join("x.pt");
    std::fs::write(&user_pt, b"the user's own file").unwrap();
    for out in [None, Some(dir.join("y.pt"))] {
        let mut args = vec!["export", "--model", s(&m), "--format", "onnx"];
        args.extend(["--python", s(&py)]);
        if let Some(o) = &out {
            args.extend(["--out", s(o)]);
        }
        ok(trainer(&args), "export onnx");
        let out = out.unwrap_or_else(|| dir.join("m.onnx"));
        let given = std::fs::read_to_string(&log).unwrap();
        let ts = PathBuf::from(given.lines().last().unwrap());
        assert!(
            ts != pt && ts != out && ts != user_pt && !ts.exists(),
            "the converter read {} (kept or in the way of another file)",
            ts.display()
        );
        // The output is the traced network (the stand-in copies it).
        assert_eq!(
            &std::fs::read(&out).unwrap()[..2],
            b"PK",
            "{}",
            out.display()
        );
        assert!(out.with_extension("json").exists());
    }
    assert_eq!(std::fs::read(&pt).unwrap(), pt_bytes, "m.pt was rewritten");
    assert_eq!(std::fs::read(&user_pt).unwrap(), b"the user's own file");
    assert_eq!(temporaries(&dir), Vec::<String>::new());
    // A failing converter leaves no temporary either, and no output.
    std::fs::write(&py, "#!/bin/sh\nexit 7\n").unwrap();
    let o = trainer(&[
        "export",
        "--model",
        s(&m),
        "--format",
        "onnx",
        "--python",
        s(&py),
        "--out",
        s(&dir.join("z.onnx")),
    ]);
    refused(o, "export with a failing converter");
    assert!(!dir.join("z.onnx").exists() && !dir.join("z.json").exists());
    assert_eq!(temporaries(&dir), Vec::<String>::new());
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn export_never_overwrites_the_model_or_an_existing_file_silently() {
    let dir = root("overwrite");
    let m = init_model(&dir);
    let sc = dir.join("m.json");
    let (m_bytes, sc_bytes) = (std::fs::read(&m).unwrap(), std::fs::read(&sc).unwrap());
    let export = |format: &str, out: Option<&Path>, force: bool| {
        let mut args = vec!["export", "--model", s(&m), "--format", format];
        if let Some(o) = out {
            args.extend(["--out", s(o)]);
        }
        if force {
            args.push("--force");
        }
        trainer(&args)
    };
    // The first export writes m.pt (its sidecar is the model's, left as it is).
    ok(export("torchscript", None, false), "export");
    let pt = dir.join("m.pt");
    let pt_bytes = std::fs::read(&pt).unwrap();
    // Again: refused, nothing touched, unless --force.
    let out = refused(export("torchscript", None, false), "second export");
    assert!(out.contains("m.pt") && out.contains("--force"), "{out}");
    std::fs::write(&pt, b"older").unwrap();
    let out = refused(export("torchscript", Some(&pt), false), "export --out m.pt");
    assert!(out.contains("exists"), "{out}");
    assert_eq!(std::fs::read(&pt).unwrap(), b"older");
    ok(export("torchscript", Some(&pt), true), "export --force");
    let forced = std::fs::read(&pt).unwrap();
    assert!(forced.starts_with(b"PK") && pt_bytes.starts_with(b"PK"));
    // An existing sidecar of the output counts as an output too.
    let other = dir.join("other.safetensors");
    std::fs::write(dir.join("other.json"), b"{}").unwrap();
    let out = refused(export("safetensors", Some(&other), false), "export other");
    assert!(
        out.contains("other.json") && out.contains("--force"),
        "{out}"
    );
    assert!(!other.exists());
    assert_eq!(std::fs::read(dir.join("other.json")).unwrap(), b"{}");
    // The model's own files are refused as outputs, however they are spelled, even with
    // --force.
    std::os::unix::fs::symlink(&m, dir.join("link.safetensors")).unwrap();
    let spellings = [
        ("safetensors", m.clone()),
        (
            "safetensors",
            dir.join("../")
                .join(dir.file_name().unwrap())
                .join("m.safetensors"),
        ),
        ("safetensors", dir.join("link.safetensors")),
        ("torchscript", sc.clone()),
        ("onnx", dir.join("./m.json")),
    ];
    for (format, out) in spellings {
        for force in [false, true] {
            let what = format!(
                "export --format {format} --out {} (force {force})",
                out.display()
            );
            let text = refused(export(format, Some(&out), force), &what);
            assert!(text.contains("model's own file"), "{what}: {text}");
        }
    }
    assert_eq!(
        std::fs::read(&m).unwrap(),
        m_bytes,
        "the model was rewritten"
    );
    assert_eq!(
        std::fs::read(&sc).unwrap(),
        sc_bytes,
        "the sidecar was rewritten"
    );
    assert_eq!(temporaries(&dir), Vec::<String>::new());
    let _ = std::fs::remove_dir_all(&dir);
}

const RUN: &str = r#"
name = "hostile"
variant = "minishogi"
model = "b2c16"
seed = 9
device = "cpu"
generations = 2
games_per_generation = 8
steps_per_generation = 10
min_samples = 20

[selfplay]
parallel_games = 4
threads = 1
full_simulations = 8
fast_simulations = 4
full_probability = 0.5
max_plies = 40

[training]
batch_size = 16

[replay]
min_window = 200
max_window = 2000

[evaluation]
games = 0
"#;

#[test]
fn hostile_latest_checkpoint_resumes_from_the_previous_one() {
    let root = root("checkpoint");
    let cfg = root.join("hostile.toml");
    std::fs::write(&cfg, RUN).unwrap();
    let runs = root.join("runs");
    let run_args = [
        "run",
        "--config",
        s(&cfg),
        "--runs-dir",
        s(&runs),
        "--resume",
    ];
    let o = trainer_in(&run_args[..5], "", Duration::from_secs(300));
    assert!(o.status.success(), "{}", text(&o));
    let run = runs.join("hostile");
    let ck = run.join("checkpoint");
    let latest = std::fs::read_to_string(ck.join("LATEST")).unwrap();
    let latest = latest.trim();
    let states: Vec<_> = std::fs::read_dir(&ck)
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().ends_with(".state.json"))
        .collect();
    assert_eq!(states.len(), 2, "a previous checkpoint to fall back to");
    // The latest checkpoint's state asks for a network no machine could allocate.
    let sp = ck.join(format!("{latest}.state.json"));
    let mut j: Value = serde_json::from_str(&std::fs::read_to_string(&sp).unwrap()).unwrap();
    j["meta"]["model"]["channels"] = json!(1_000_000_000u64);
    std::fs::write(&sp, serde_json::to_vec_pretty(&j).unwrap()).unwrap();
    // One more generation.
    let frozen = run.join("config.toml");
    let c = std::fs::read_to_string(&frozen).unwrap();
    std::fs::write(&frozen, c.replace("generations = 2", "generations = 3")).unwrap();
    let o = trainer_in(&run_args, "", Duration::from_secs(300));
    let out = text(&o);
    assert!(o.status.success(), "{out}");
    let line = out
        .lines()
        .find(|l| l.contains("damaged checkpoint"))
        .unwrap_or_else(|| panic!("no fallback reported: {out}"));
    assert!(
        line.contains(&format!("{latest}.state.json"))
            && line.contains(": meta.model.channels: ")
            && line.contains("instead"),
        "{line}"
    );
    assert!(!out.contains("panicked"), "{out}");
    assert_eq!(state(&run)["generation"].as_u64(), Some(3), "{out}");
    let _ = std::fs::remove_dir_all(&root);
}
