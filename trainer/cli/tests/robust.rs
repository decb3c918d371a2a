//! Files on disk are untrusted input, and I/O failures stop the run cleanly: damaged shards are
//! skipped with their file and reason, a damaged checkpoint falls back to the previous one, a
//! bad state file or a `LATEST` pointing elsewhere stops the run with the error, a read-only
//! run directory and a full disk end the process promptly with the path and the OS reason and
//! leave no temporary file.

mod common;
use common::{state, text, trainer_within as trainer};

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::Duration;

fn config(name: &str, generations: u64) -> String {
    format!(
        r#"
name = "{name}"
variant = "minishogi"
model = "b2c16"
seed = 9
device = "cpu"
generations = {generations}
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
"#
    )
}

fn root(name: &str) -> PathBuf {
    common::fresh_dir("robust", name)
}

fn run(cfg: &Path, runs: &Path) -> Output {
    trainer(
        &[
            "run",
            "--config",
            cfg.to_str().unwrap(),
            "--runs-dir",
            runs.to_str().unwrap(),
        ],
        Duration::from_secs(300),
    )
}

/// A new run of `generations` generations, run to the end.
fn finished_run(root: &Path, name: &str, generations: u64) -> (PathBuf, PathBuf, PathBuf) {
    let cfg = root.join(format!("{name}.toml"));
    std::fs::write(&cfg, config(name, generations)).unwrap();
    let runs = root.join("runs");
    let o = run(&cfg, &runs);
    assert!(o.status.success(), "{}", text(&o));
    (cfg, runs.clone(), runs.join(name))
}

/// Lets a finished run go on to `generations` (as a user would: edit the frozen config).
fn extend(run: &Path, generations: u64) {
    let p = run.join("config.toml");
    let c = std::fs::read_to_string(&p).unwrap();
    let c = c
        .lines()
        .map(|l| {
            if l.starts_with("generations") {
                format!("generations = {generations}")
            } else {
                l.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join("\n");
    std::fs::write(p, c).unwrap();
}

fn resume(cfg: &Path, runs: &Path) -> Output {
    trainer(
        &[
            "run",
            "--resume",
            "--config",
            cfg.to_str().unwrap(),
            "--runs-dir",
            runs.to_str().unwrap(),
        ],
        Duration::from_secs(300),
    )
}

/// The JSON lines of a shard.
fn shard_lines(path: &Path) -> Vec<serde_json::Value> {
    let f = std::fs::File::open(path).unwrap();
    BufReader::new(zstd::Decoder::new(f).unwrap())
        .lines()
        .map(|l| serde_json::from_str(&l.unwrap()).unwrap())
        .collect()
}

fn write_shard(path: &Path, lines: &[serde_json::Value]) {
    let f = std::fs::File::create(path).unwrap();
    let mut enc = zstd::Encoder::new(f, 3).unwrap();
    for l in lines {
        writeln!(enc, "{l}").unwrap();
    }
    enc.finish().unwrap();
}

fn any_shard(run: &Path) -> PathBuf {
    let d = run.join("samples/000000");
    let mut v: Vec<PathBuf> = std::fs::read_dir(d)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .collect();
    v.sort();
    v.into_iter()
        .find(|p| {
            shard_lines(p)[1]["targets"]
                .as_array()
                .unwrap()
                .iter()
                .any(|t| !t.is_null())
        })
        .expect("a shard with a training target")
}

fn no_temporaries(dir: &Path) {
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let p = e.path();
            let name = e.file_name().to_string_lossy().into_owned();
            assert!(
                !name.contains(".tmp"),
                "temporary file left: {}",
                p.display()
            );
            if p.is_dir() {
                stack.push(p);
            }
        }
    }
}

#[test]
fn damaged_files_are_named_and_never_used() {
    let root = root("damaged");
    let (cfg, runs, run) = finished_run(&root, "damaged", 2);
    let good = any_shard(&run);
    let lines = shard_lines(&good);
    let (header, game) = (lines[0].clone(), lines[1].clone());
    let first_target = game["targets"]
        .as_array()
        .unwrap()
        .iter()
        .position(|t| !t.is_null())
        .unwrap();
    type Edit = fn(&mut serde_json::Value, &mut serde_json::Value, usize);
    let cases: Vec<(&str, Edit, &str)> = vec![
        ("result", |_, g, _| g["result"] = 5.into(), "game result 5"),
        (
            "probability",
            |_, g, t| g["targets"][t]["policy"][0][1] = (-0.5).into(),
            "policy target",
        ),
        (
            "value",
            |_, g, t| g["targets"][t]["value"] = 7.5.into(),
            "root value 7.5",
        ),
        (
            "variant",
            |h, _, _| h["variant"] = "shogi".into(),
            "variant \"shogi\"",
        ),
        (
            "index",
            |_, g, t| g["targets"][t]["policy"][0][0] = 99999.into(),
            "policy target",
        ),
        ("move", |_, g, _| g["moves"][0] = "1a1b".into(), "1a1b"),
    ];
    let dir = run.join("samples/000002");
    std::fs::create_dir_all(&dir).unwrap();
    let mut planted = Vec::new();
    for (i, (what, edit, reason)) in cases.iter().enumerate() {
        let (mut h, mut g) = (header.clone(), game.clone());
        edit(&mut h, &mut g, first_target);
        let p = dir.join(format!("00000000000000b{i}-00000000-1g1s.zst"));
        write_shard(&p, &[h, g]);
        planted.push((what.to_string(), p, reason.to_string()));
    }
    let bytes = std::fs::read(&good).unwrap();
    let p = dir.join("00000000000000c0-00000000-1g1s.zst");
    std::fs::write(&p, &bytes[..bytes.len() / 2]).unwrap();
    planted.push(("truncated".into(), p, "shard".into()));
    let p = dir.join("00000000000000c1-00000000-1g1s.zst");
    std::fs::write(&p, b"this is not a shard").unwrap();
    planted.push(("garbage".into(), p, "shard".into()));

    // The next generation takes them in: each is skipped with its file and reason.
    extend(&run, 3);
    let o = resume(&cfg, &runs);
    let out = text(&o);
    assert!(o.status.success(), "{out}");
    for (what, path, reason) in &planted {
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let line = out
            .lines()
            .find(|l| l.contains("skipping a bad shard") && l.contains(&name))
            .unwrap_or_else(|| panic!("{what}: not reported\n{out}"));
        assert!(line.contains(reason.as_str()), "{what}: {line}");
    }
    assert_eq!(
        out.matches("skipping a bad shard").count(),
        planted.len(),
        "{out}"
    );

    // A damaged latest checkpoint: the previous one is used, with a message.
    let ck = run.join("checkpoint");
    let latest = std::fs::read_to_string(ck.join("LATEST")).unwrap();
    std::fs::write(
        ck.join(format!("{}.safetensors", latest.trim())),
        b"damaged",
    )
    .unwrap();
    // And a damaged newest model: self-play names it and plays the one before.
    let gen = state(&run)["generation"].as_u64().unwrap();
    let model = run.join(format!("models/{gen:06}.safetensors"));
    std::fs::write(&model, b"damaged").unwrap();
    extend(&run, 4);
    let o = resume(&cfg, &runs);
    let out = text(&o);
    assert!(o.status.success(), "{out}");
    assert!(
        out.contains("damaged checkpoint") && out.contains(latest.trim()),
        "{out}"
    );
    assert!(
        out.contains(&format!("network {gen} does not load"))
            && out.contains(&format!("{gen:06}.safetensors")),
        "{out}"
    );

    // A LATEST pointer that leaves the directory, and a damaged state file, stop the run.
    extend(&run, 5);
    std::fs::write(ck.join("LATEST"), "../../../../etc/passwd").unwrap();
    let o = resume(&cfg, &runs);
    assert!(!o.status.success());
    let out = text(&o);
    assert!(
        out.contains("LATEST") && out.contains("not a checkpoint name"),
        "{out}"
    );
    std::fs::write(run.join("state.json"), "{\"generation\": \"many\"}").unwrap();
    let o = resume(&cfg, &runs);
    assert!(!o.status.success());
    assert!(text(&o).contains("state.json"), "{}", text(&o));
    assert!(!text(&o).contains("panicked"));
    no_temporaries(&run);
    let _ = std::fs::remove_dir_all(&root);
}

/// A tmpfs mounted for the test, unmounted when dropped.
struct Mount(PathBuf);

impl Mount {
    fn new(dir: &Path, size: &str) -> Option<Mount> {
        std::fs::create_dir_all(dir).unwrap();
        let ok = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(dir)
            .status()
            .is_ok_and(|s| s.success());
        ok.then(|| Mount(dir.to_path_buf()))
    }
}

impl Drop for Mount {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.0).status();
    }
}

fn is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
}

#[test]
fn read_only_directory_and_full_disk_stop_cleanly() {
    if !is_root() {
        common::skip("mounting a read-only or full file system needs root");
        return;
    }
    let root = root("disk");
    // Read-only: every role refuses at once, naming the directory and the reason.
    let Some(m) = Mount::new(&root.join("ro"), "64m") else {
        common::skip("cannot mount a tmpfs here");
        return;
    };
    let (cfg, runs, run) = finished_run(&m.0, "ro", 1);
    extend(&run, 2);
    let ok = Command::new("mount")
        .args(["-o", "remount,ro"])
        .arg(&m.0)
        .status()
        .unwrap();
    assert!(ok.success());
    for args in [
        vec![
            "run",
            "--resume",
            "--config",
            cfg.to_str().unwrap(),
            "--runs-dir",
            runs.to_str().unwrap(),
        ],
        vec!["train", "--run", run.to_str().unwrap()],
        vec!["selfplay", "--run", run.to_str().unwrap()],
    ] {
        let o = trainer(&args, Duration::from_secs(60));
        let out = text(&o);
        assert!(!o.status.success(), "{args:?}: {out}");
        assert!(
            out.contains(run.to_str().unwrap()) && out.contains("Read-only file system"),
            "{args:?}: {out}"
        );
        assert!(!out.contains("panicked"), "{out}");
    }
    drop(m);

    // A full disk: the run stops promptly with the path and the reason, leaving no temporary
    // file; self-play does not go on playing games it cannot store.
    let Some(m) = Mount::new(&root.join("full"), "1500k") else {
        common::skip("cannot mount a second tmpfs here");
        return;
    };
    let cfg = m.0.join("full.toml");
    std::fs::write(&cfg, config("full", 1000)).unwrap();
    let runs = m.0.join("runs");
    let o = trainer(
        &[
            "run",
            "--config",
            cfg.to_str().unwrap(),
            "--runs-dir",
            runs.to_str().unwrap(),
        ],
        Duration::from_secs(300),
    );
    let out = text(&o);
    assert!(!o.status.success(), "{out}");
    assert!(out.contains("No space left on device"), "{out}");
    assert!(out.contains(runs.to_str().unwrap()), "{out}");
    assert!(!out.contains("panicked"), "{out}");
    no_temporaries(&runs);
    drop(m);
    let _ = std::fs::remove_dir_all(&root);
}
