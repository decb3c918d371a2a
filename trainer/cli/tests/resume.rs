//! `kill -9` during self-play and during training, then resume: no corrupt file, no lost
//! finished game, and training continues from its checkpoint. The run is capped at 24 games
//! per network (a synchronous run), so the counts are known up to the games in flight.

mod common;
use common::wait_until;

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

const CONFIG: &str = r#"
name = "killtest"
variant = "minishogi"
model = "b2c16"
seed = 7
device = "cpu"
generations = 2
games_per_generation = 24
steps_per_generation = 160
min_samples = 50

[selfplay]
# One thread: a capped generation overshoots by at most its 4 games in flight.
threads = 1
parallel_games = 4
full_simulations = 16
fast_simulations = 4
full_probability = 0.5
max_plies = 60

[training]
batch_size = 32

[replay]
min_window = 500
max_window = 5000

[evaluation]
games = 4
simulations = 4
"#;

fn start(dir: &Path, config: &Path) -> Child {
    Command::new(env!("CARGO_BIN_EXE_trainer"))
        .args(["run", "--config"])
        .arg(config)
        .arg("--runs-dir")
        .arg(dir)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("start trainer run")
}

fn shards(dir: &Path) -> Vec<PathBuf> {
    selfplay::list_shards(dir)
}

/// Every shard must read back completely; returns the number of games.
fn games_in(dir: &Path) -> usize {
    shards(dir)
        .iter()
        .map(|s| {
            selfplay::read_shard(s)
                .unwrap_or_else(|e| panic!("corrupt shard after kill: {e}"))
                .1
                .len()
        })
        .sum()
}

fn kill9(child: &mut Child) {
    // SIGKILL: no chance to clean up, like a crash or an OOM kill.
    child.kill().expect("kill");
    child.wait().expect("wait");
}

#[test]
fn kill_during_selfplay_and_training_then_resume() {
    let root =
        PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("kill-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    std::fs::create_dir_all(&root).unwrap();
    let config = root.join("killtest.toml");
    std::fs::write(&config, CONFIG).unwrap();
    let runs = root.join("runs");
    let run = runs.join("killtest");
    let samples0 = run.join("samples/000000");

    // 1. Kill while generation 0 self-play is writing games.
    let mut child = start(&runs, &config);
    wait_until("some self-play games", Duration::from_secs(300), || {
        shards(&samples0).len() >= 3
    });
    kill9(&mut child);
    let before = games_in(&samples0);
    assert!(
        (3..=24 + 4).contains(&before),
        "{before} games at the first kill"
    );

    // 2. Resume; kill during training, after the first checkpoint.
    let mut child = start(&runs, &config);
    let latest = run.join("checkpoint/LATEST");
    wait_until("a training checkpoint", Duration::from_secs(600), || {
        latest.exists()
    });
    kill9(&mut child);
    // Generation 0's games are all there (24 plus at most the 4 in flight), the earlier
    // ones included.
    let gen0 = games_in(&samples0);
    assert!((24..=28).contains(&gen0), "{gen0} games in generation 0");
    assert!(gen0 >= before);
    let stem = std::fs::read_to_string(&latest).unwrap();
    let step: u64 = stem.trim().trim_start_matches("step-").parse().unwrap();
    assert!(step > 0 && step < 160, "killed at checkpoint step {step}");
    let state: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(run.join("state.json")).unwrap()).unwrap();
    assert_eq!(
        state["generation"], 0,
        "generation 1 must not be published yet"
    );

    // 3. Resume to the end.
    let status = Command::new(env!("CARGO_BIN_EXE_trainer"))
        .args(["run", "--resume", "--config"])
        .arg(&config)
        .arg("--runs-dir")
        .arg(&runs)
        .stdout(Stdio::null())
        .status()
        .unwrap();
    assert!(status.success());
    let state: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(run.join("state.json")).unwrap()).unwrap();
    assert_eq!(state["generation"], 2);
    let gen1 = games_in(&run.join("samples/000001"));
    assert!((24..=28).contains(&gen1), "{gen1} games in generation 1");
    let total = state["total_games"].as_u64().unwrap() as usize;
    assert!(total >= gen0 + gen1, "{total} games counted");
    // Training continued from the checkpoint: exactly 160 steps per generation in total.
    for (gen, steps) in [(1, 160), (2, 320)] {
        let meta: serde_json::Value = serde_json::from_str(
            &std::fs::read_to_string(run.join(format!("models/{gen:06}.json"))).unwrap(),
        )
        .unwrap();
        assert_eq!(meta["step"], steps, "generation {gen}");
    }
    // No temporary file survived anywhere in the run directory.
    let mut stack = vec![run.clone()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else {
                let name = e.file_name().to_string_lossy().into_owned();
                assert!(
                    !name.starts_with(".tmp") && !name.contains(".tmp"),
                    "leftover {}",
                    p.display()
                );
            }
        }
    }
    let _ = std::fs::remove_dir_all(&root);
}
