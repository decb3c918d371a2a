//! Hostile input through the binary: a run name that would leave the runs directory is refused
//! before anything is written, shard names whose counts overflow or lie neither crash nor
//! steer the run, and a zstd bomb among the shards is a counted bad shard while the valid
//! shards beside it are still used.

mod common;
use common::{text, trainer_within as trainer};

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Duration;

fn root(name: &str) -> PathBuf {
    common::fresh_dir("hostile", name)
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// A tiny synchronous minishogi run; `name_line` is the config's `name = ...` line (or none).
fn config(name_line: &str, generations: u64) -> String {
    format!(
        r#"{name_line}
variant = "minishogi"
model = "b2c16"
seed = 5
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

/// Every path under `dir`.
fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p.clone());
            }
            out.push(p);
        }
    }
    out
}

#[test]
fn run_names_that_leave_the_runs_directory_are_refused_and_nothing_is_written() {
    let root = root("names");
    let cfgs = root.join("configs");
    std::fs::create_dir_all(&cfgs).unwrap();
    // The runs directory does not exist yet: `..` of it is `outer`, which must stay absent.
    let runs = root.join("outer").join("runs");
    let abs = root.join("absolute");
    let cases = [
        ("dotdot", "name = \"..\"".to_string()),
        ("dot", "name = \".\"".to_string()),
        ("parent", "name = \"../escaped\"".to_string()),
        ("absolute", format!("name = {:?}", s(&abs))),
        ("nul", "name = \"a\\u0000b\"".to_string()),
        ("empty-stem", String::new()),
    ];
    for (what, line) in &cases {
        // The last case has no name: the config file's stem `.` is the name.
        let file = if line.is_empty() {
            cfgs.join("..toml")
        } else {
            cfgs.join(format!("{what}.toml"))
        };
        std::fs::write(&file, config(line, 1)).unwrap();
        let mut cmds = vec![vec!["run", "--config", s(&file), "--runs-dir", s(&runs)]];
        // `trainer train --config` opens runs the same way (checked for two of the names).
        if ["dotdot", "absolute"].contains(what) {
            cmds.push(vec![
                "train",
                "--config",
                s(&file),
                "--runs-dir",
                s(&runs),
                "--init-only",
            ]);
        }
        for cmd in cmds {
            let o = trainer(&cmd, Duration::from_secs(60));
            let out = text(&o);
            assert!(!o.status.success(), "{what}: {cmd:?} accepted\n{out}");
            assert!(
                out.contains(&format!("{}: name: ", file.display())),
                "{what}: the error names the file and the key\n{out}"
            );
            assert!(!out.contains("panicked"), "{what}: {out}");
        }
    }
    // Nothing was made: no runs directory, nothing above it, no absolute target, and no run
    // file anywhere under the test's root.
    assert!(!root.join("outer").exists());
    assert!(!abs.exists());
    for p in walk(&root) {
        assert!(
            p.starts_with(&cfgs),
            "written outside the runs directory: {p:?}"
        );
    }
    // A plain name is still accepted, under the runs directory.
    let file = cfgs.join("plain.toml");
    std::fs::write(&file, config("name = \"plain\"", 1)).unwrap();
    let o = trainer(
        &[
            "train",
            "--config",
            s(&file),
            "--runs-dir",
            s(&runs),
            "--init-only",
        ],
        Duration::from_secs(60),
    );
    assert!(o.status.success(), "{}", text(&o));
    assert!(runs.join("plain").join("config.toml").exists());
    assert!(!root.join("outer").join("config.toml").exists());
    let _ = std::fs::remove_dir_all(&root);
}

#[test]
fn status_survives_shard_names_whose_counts_overflow() {
    let root = root("status");
    let cfg = root.join("counts.toml");
    std::fs::write(&cfg, config("", 1)).unwrap();
    let runs = root.join("runs");
    let o = trainer(
        &[
            "train",
            "--config",
            s(&cfg),
            "--runs-dir",
            s(&runs),
            "--init-only",
        ],
        Duration::from_secs(60),
    );
    assert!(o.status.success(), "{}", text(&o));
    let run = runs.join("counts");
    let dir = run.join("samples/000000");
    std::fs::create_dir_all(&dir).unwrap();
    for name in [
        "0000000000000001-00000000-1g7s.zst",
        "0000000000000002-00000000-18446744073709551615g1s.zst",
        "0000000000000003-00000000-1g18446744073709551615s.zst",
        "0000000000000004-00000000-18446744073709551615g18446744073709551615s.zst",
        "0000000000000005-00000000-1000g0s.zst",
    ] {
        std::fs::write(dir.join(name), b"").unwrap();
    }
    let o = trainer(&["status", "--run", s(&run)], Duration::from_secs(60));
    let out = text(&o);
    assert!(o.status.success(), "{out}");
    assert!(!out.contains("panicked"), "{out}");
    assert!(
        out.contains("stored: 1 games, 7 samples in 1 shards"),
        "{out}"
    );
    let _ = std::fs::remove_dir_all(&root);
}

/// Games of the shards of `dir` that the test did not plant (their writers' ids do not start
/// with `00000000000000b`).
fn played_games(dir: &Path) -> usize {
    selfplay::list_shards(dir)
        .iter()
        .filter(|p| {
            !p.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with("00000000000000b")
        })
        .map(|p| selfplay::read_shard(p).unwrap().1.len())
        .sum()
}

#[test]
fn a_zstd_bomb_and_lying_names_beside_valid_shards() {
    let root = root("bomb");
    let cfg = root.join("bomb.toml");
    std::fs::write(&cfg, config("", 1)).unwrap();
    let runs = root.join("runs");
    let run_cmd = |extra: &[&str]| {
        let mut a = vec!["run", "--config", s(&cfg), "--runs-dir", s(&runs)];
        a.extend_from_slice(extra);
        trainer(&a, Duration::from_secs(300))
    };
    let o = run_cmd(&[]);
    assert!(o.status.success(), "{}", text(&o));
    let run = runs.join("bomb");
    let real = selfplay::list_shards(&run.join("samples/000000"));
    let sample = std::fs::read(&real[0]).unwrap();

    // Planted where the next generation's games go (network 1 plays them).
    let dir = run.join("samples/000001");
    std::fs::create_dir_all(&dir).unwrap();
    // A zstd bomb under a plausible name: a valid header line, then 1 GiB of 'x' (one small
    // frame repeated) that never ends the line.
    let mut bomb = Vec::new();
    {
        let header = String::from_utf8(
            zstd::decode_all(&sample[..])
                .unwrap()
                .split(|&b| b == b'\n')
                .next()
                .unwrap()
                .to_vec(),
        )
        .unwrap();
        let mut enc = zstd::Encoder::new(&mut bomb, 3).unwrap();
        writeln!(enc, "{header}").unwrap();
        enc.finish().unwrap();
    }
    let mib = zstd::encode_all(&vec![b'x'; 1 << 20][..], 3).unwrap();
    for _ in 0..1024 {
        bomb.extend_from_slice(&mib);
    }
    let bomb_name = "00000000000000b0-00000000-1g6s.zst";
    std::fs::write(dir.join(bomb_name), &bomb).unwrap();
    // A stray claiming a whole generation's games (it would end the synchronous generation
    // before its games are played), and names whose counts overflow a sum.
    for name in [
        "00000000000000b1-00000000-1000g0s.zst",
        "00000000000000b2-00000000-18446744073709551615g1s.zst",
        "00000000000000b3-00000000-1g18446744073709551615s.zst",
    ] {
        std::fs::write(dir.join(name), &sample).unwrap();
    }

    // The next generation: the bomb is skipped and counted, the rest trains and finishes.
    let p = run.join("config.toml");
    let c = std::fs::read_to_string(&p).unwrap();
    std::fs::write(&p, c.replace("generations = 1", "generations = 2")).unwrap();
    let o = run_cmd(&["--resume"]);
    let out = text(&o);
    assert!(o.status.success(), "{out}");
    assert!(!out.contains("panicked"), "{out}");
    let bad: Vec<&str> = out
        .lines()
        .filter(|l| l.contains("skipping a bad shard"))
        .collect();
    assert_eq!(bad.len(), 1, "{out}");
    assert!(
        bad[0].contains(bomb_name) && bad[0].contains("a line longer than"),
        "{}",
        bad[0]
    );
    assert_eq!(common::state(&run)["generation"], 2, "{out}");
    // The stray did not stand in for the generation's games: they were played and stored
    // (8, less the bomb, whose plausible name counts towards the quota as any bad shard's).
    assert!(played_games(&dir) >= 7, "{out}");
    let o = trainer(&["status", "--run", s(&run)], Duration::from_secs(60));
    assert!(o.status.success(), "{}", text(&o));
    let _ = std::fs::remove_dir_all(&root);
}
