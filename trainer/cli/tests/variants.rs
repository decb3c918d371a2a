//! The variants of the shogi family train end to end: a tiny `trainer run` of each new variant
//! completes, and `trainer check --explain` describes its encoding.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

mod common;

fn trainer(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_trainer"))
        .args(args)
        .current_dir(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../.."))
        .env("OMP_WAIT_POLICY", "PASSIVE")
        .output()
        .expect("run trainer")
}

fn config(variant: &str) -> String {
    config_named(variant, variant)
}

/// A tiny run config named `name` of `variant` (a built-in name or a config file's path).
fn config_named(name: &str, variant: &str) -> String {
    format!(
        r#"
name = "{name}"
variant = "{variant}"
model = "b2c16"
seed = 3
device = "cpu"
generations = 1
games_per_generation = 6
steps_per_generation = 10
min_samples = 20

[selfplay]
threads = 1
parallel_games = 6
full_simulations = 8
fast_simulations = 2
full_probability = 0.5
max_plies = 120

[training]
batch_size = 16

[replay]
min_window = 200
max_window = 2000

[evaluation]
games = 2
simulations = 2
"#
    )
}

/// Runs the tiny config `name` of `variant` in `dir`: it must complete its one generation and
/// publish its network.
fn tiny_run(dir: &Path, name: &str, variant: &str) {
    let cfg = dir.join(format!("{name}.toml"));
    let mut text = config_named(name, variant);
    if variant == "taikyoku" || variant == "ko" {
        // 13 million (Taikyoku) and 17 million (Ko, its compound moves) policy logits a
        // position: two short games are enough to train on.
        text = text
            .replace("games_per_generation = 6", "games_per_generation = 2")
            .replace("parallel_games = 6", "parallel_games = 2")
            .replace("max_plies = 120", "max_plies = 30")
            .replace("steps_per_generation = 10", "steps_per_generation = 4")
            .replace("batch_size = 16", "batch_size = 4");
    }
    std::fs::write(&cfg, text).unwrap();
    let o = trainer(&[
        "run",
        "--config",
        cfg.to_str().unwrap(),
        "--runs-dir",
        dir.to_str().unwrap(),
    ]);
    assert!(
        o.status.success(),
        "{name}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    let run = dir.join(name);
    assert_eq!(common::state(&run)["generation"], 1, "{name}");
    assert!(run.join("models/000001.safetensors").exists(), "{name}");
}

#[test]
fn tiny_runs_of_the_family_variants_complete() {
    let dir =
        PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("variants-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    for variant in [
        "judkins",
        "yari",
        "tori",
        "kyoto",
        "micro",
        "sho",
        "cannon",
        "annan",
        "unashogi",
        "chu",
        "wa",
        "heian",
        "heian-dai",
        "whale",
        "dai",
        "hasami",
        "dai-hasami",
        "tenjiku",
        "dai-dai",
        "maka-dai-dai",
        "tai",
        "taikyoku",
        "ko",
    ] {
        tiny_run(&dir, variant, variant);
        let o = trainer(&["check", "--explain", variant]);
        let text = String::from_utf8_lossy(&o.stdout);
        assert!(
            o.status.success() && text.contains("Policy:"),
            "{variant}: {text}"
        );
        // The Lion's two-step moves have policy planes of their own.
        let lions = [
            "chu",
            "dai",
            "tenjiku",
            "dai-dai",
            "maka-dai-dai",
            "tai",
            "taikyoku",
        ];
        if lions.contains(&variant) {
            assert!(text.contains("two-step move types"), "{text}");
        }
        // Ko shogi's shots and moves of several steps have planes of their own too.
        if variant == "ko" {
            assert!(text.contains("47517 compound move types"), "{text}");
        }
    }
}

/// The largest boards train end to end: a tiny run on a 36x36 board (shogi's pieces, the
/// rules test board) completes, its network sized for 1,296 squares.
#[test]
fn a_tiny_run_on_a_36x36_board_completes() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    let variant = root.join("tests/data/variants/big36.toml");
    let variant = variant.to_str().unwrap();
    let dir =
        PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("big36-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    tiny_run(&dir, "big36", variant);
    let o = trainer(&["check", "--explain", variant]);
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success() && text.contains("36x36"), "{text}");
}

/// A generation's game quota that yields fewer samples than the first training step needs
/// (one short game, 60 samples wanted) must not stall the run: self-play goes on past the quota
/// until the trainer can start.
#[test]
fn a_game_quota_below_min_samples_does_not_stall_the_run() {
    let dir =
        PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("quota-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let cfg = dir.join("micro.toml");
    let text = config("micro")
        .replace("games_per_generation = 6", "games_per_generation = 1")
        .replace("min_samples = 20", "min_samples = 60")
        .replace("full_probability = 0.5", "full_probability = 1.0");
    assert!(text.contains("games_per_generation = 1") && text.contains("min_samples = 60"));
    std::fs::write(&cfg, text).unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_trainer"))
        .args(["run", "--config", cfg.to_str().unwrap()])
        .args(["--runs-dir", dir.to_str().unwrap()])
        .current_dir(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../.."))
        .env("OMP_WAIT_POLICY", "PASSIVE")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let start = std::time::Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        let limit = std::time::Duration::from_secs(300);
        if start.elapsed() > limit {
            let _ = child.kill();
            panic!("the run stalled: no first generation after {limit:?}");
        }
        std::thread::sleep(std::time::Duration::from_millis(200));
    };
    assert!(status.success());
    let state = common::state(&dir.join("micro"));
    assert_eq!(state["generation"], 1);
    assert!(state["total_samples"].as_u64().unwrap() >= 60, "{state}");
    assert!(state["total_games"].as_u64().unwrap() > 1, "{state}");
}
