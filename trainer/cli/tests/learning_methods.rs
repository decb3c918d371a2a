//! The learning methods a user turns on by config, end to end: a tiny run with the soft-policy
//! and opponent-reply outputs, progressive budgets, policy-surprise weighting, mirrored
//! samples and the attack planes all on completes; its model files hold no training-only tensor and load wherever a network is
//! loaded; its shards record the policy surprise; its checkpoint keeps both outputs; its
//! metrics carry both outputs' losses.

mod common;
use common::{fresh_dir, text, trainer_within};

use std::time::Duration;

const CONFIG: &str = r#"
name = "methods"
variant = "minishogi"
model = "b2c16"
encoding = "attacks"
seed = 3
device = "cpu"
generations = 3
games_per_generation = 16
steps_per_generation = 40
min_samples = 50

[selfplay]
threads = 1
parallel_games = 4
full_simulations = 16
fast_simulations = 4
full_probability = 0.5
max_plies = 60
progressive_generations = 2

[training]
batch_size = 32
soft_policy_weight = 8.0
opponent_policy_weight = 0.15

[replay]
min_window = 500
max_window = 5000
policy_surprise_weight = 0.5
mirror = true

[evaluation]
games = 4
simulations = 4
"#;

#[test]
fn a_run_with_every_new_method_on_completes_and_its_files_load() {
    let dir = fresh_dir("methods", "run");
    let cfg = dir.join("methods.toml");
    std::fs::write(&cfg, CONFIG).unwrap();
    let runs = dir.join("runs");
    let o = trainer_within(
        &[
            "run",
            "--config",
            cfg.to_str().unwrap(),
            "--runs-dir",
            runs.to_str().unwrap(),
        ],
        Duration::from_secs(600),
    );
    assert!(o.status.success(), "{}", text(&o));
    let run = runs.join("methods");
    let state = std::fs::read_to_string(run.join("state.json")).unwrap();
    assert!(state.contains("\"complete\": true"), "{state}");
    // Every generation's model file: no soft-policy tensor, and the engine plays with it.
    for g in 0..=3 {
        let m = run.join(format!("models/{g:06}.safetensors"));
        let names = model::tensor_names(&m).unwrap();
        assert!(
            !names
                .iter()
                .any(|n| n.starts_with("policy_soft") || n.starts_with("policy_opponent")),
            "{}: {names:?}",
            m.display()
        );
        model::load_model(&m, model::Device::Cpu).unwrap();
        let sidecar: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(m.with_extension("json")).unwrap())
                .unwrap();
        assert_eq!(sidecar["encoding"]["layout"], "attacks", "{}", m.display());
    }
    let last = run.join("models/000003.safetensors");
    let o = trainer_within(
        &[
            "arena",
            "--variant",
            "minishogi",
            "--player",
            &format!("model:{}", last.display()),
            "--player",
            "mcts",
            "--games",
            "2",
            "--nodes",
            "4",
        ],
        Duration::from_secs(120),
    );
    assert!(o.status.success(), "{}", text(&o));
    // The checkpoint keeps the output it trains.
    let ck = run.join("checkpoint");
    let latest = std::fs::read_to_string(ck.join("LATEST")).unwrap();
    let names = model::tensor_names(&ck.join(format!("{}.safetensors", latest.trim()))).unwrap();
    for head in ["policy_soft.conv.weight", "policy_opponent.conv.weight"] {
        assert!(names.iter().any(|n| n == head), "{head}: {names:?}");
    }
    // Both outputs' losses are in the metrics, and positive.
    let metrics = std::fs::read_to_string(run.join("metrics.jsonl")).unwrap();
    for tag in ["train/soft_policy_loss", "train/opponent_policy_loss"] {
        let values: Vec<f64> = metrics
            .lines()
            .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
            .filter(|v| v["tag"] == tag)
            .filter_map(|v| v["value"].as_f64())
            .collect();
        assert!(
            !values.is_empty() && values.iter().all(|&v| v > 0.0),
            "{tag}: {values:?}"
        );
    }
    // The shards record each recorded position's surprise, some of them above 0.
    let mut recorded = 0;
    let mut surprised = 0;
    for g in std::fs::read_dir(run.join("samples")).unwrap().flatten() {
        for shard in selfplay::list_shards(&g.path()) {
            let (_, games) = selfplay::read_shard(&shard).unwrap();
            for t in games.iter().flat_map(|g| g.targets.iter().flatten()) {
                assert!(t.surprise.is_finite() && t.surprise >= 0.0);
                recorded += 1;
                surprised += usize::from(t.surprise > 0.0);
            }
        }
    }
    assert!(
        recorded > 0 && surprised > recorded / 2,
        "{surprised} of {recorded}"
    );
}
