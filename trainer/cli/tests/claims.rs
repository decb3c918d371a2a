//! What the README promises about stopping, resuming and pacing a run, checked on tiny runs:
//! SIGINT and SIGTERM stop `trainer run` and `trainer train` with status 0 and publish what was
//! trained, and the run resumes from there; `max_minutes` counts the run's time over all
//! resumes; training draws no more than `sample_reuse` samples per new sample; the trainer
//! checkpoints at every publication and every `max(steps_per_generation / 4, 50)` steps.
//!
//! The runs of this file take turns (one at a time): they measure time and pace, and two of them
//! at once on a small machine would measure each other.

mod common;
use common::{state, wait_exit, wait_until};

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

fn one_at_a_time() -> MutexGuard<'static, ()> {
    ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner())
}

/// Batch size of every run here.
const BATCH: u64 = 16;

/// A tiny continuous minishogi run (no evaluation).
struct Tiny {
    generations: u64,
    steps_per_generation: u64,
    sample_reuse: f64,
    max_minutes: f64,
}

impl Tiny {
    fn new(generations: u64, steps_per_generation: u64) -> Tiny {
        Tiny {
            generations,
            steps_per_generation,
            sample_reuse: 1.0,
            max_minutes: 0.0,
        }
    }

    fn toml(&self, name: &str) -> String {
        let Tiny {
            generations,
            steps_per_generation,
            sample_reuse,
            max_minutes,
        } = self;
        format!(
            r#"
name = "{name}"
variant = "minishogi"
model = "b2c16"
seed = 11
device = "cpu"
generations = {generations}
max_minutes = {max_minutes:?}
steps_per_generation = {steps_per_generation}
sample_reuse = {sample_reuse:?}
min_samples = 50

[selfplay]
threads = 1
parallel_games = 8
full_simulations = 8
fast_simulations = 4
full_probability = 0.5
max_plies = 60

[training]
batch_size = {BATCH}

[replay]
min_window = 500
max_window = 5000

[evaluation]
games = 0
"#
        )
    }
}

/// A fresh directory with the config `name.toml` for `tiny`; returns it and the run directory.
fn setup(name: &str, tiny: &Tiny) -> (PathBuf, PathBuf, PathBuf) {
    let root = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("claims-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    std::fs::create_dir_all(&root).unwrap();
    let cfg = root.join(format!("{name}.toml"));
    std::fs::write(&cfg, tiny.toml(name)).unwrap();
    let run = root.join("runs").join(name);
    (root, cfg, run)
}

/// Starts `trainer ARGS`, its output appended to `log`.
fn start(args: &[&str], log: &Path) -> Child {
    let out = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(log)
        .unwrap();
    Command::new(env!("CARGO_BIN_EXE_trainer"))
        .args(args)
        // Trainer and worker processes share the cores: idle OpenMP threads must sleep.
        .env("OMP_WAIT_POLICY", "PASSIVE")
        .stdin(Stdio::null())
        .stdout(out.try_clone().unwrap())
        .stderr(out)
        .spawn()
        .expect("start trainer")
}

fn arg(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// Sends `signal` (`TERM`, `INT`) to `child` with kill(1).
fn signal(child: &Child, signal: &str) {
    let ok = Command::new("kill")
        .args(["-s", signal, &child.id().to_string()])
        .status()
        .unwrap()
        .success();
    assert!(ok, "kill -s {signal} failed");
}

/// Waits for `child` to exit and checks it exited with status 0.
fn exits_0(child: &mut Child, what: &str, log: &Path) {
    let st: ExitStatus = wait_exit(child, Duration::from_secs(120), what);
    assert!(
        st.code() == Some(0),
        "{what}: {st:?}\n{}",
        std::fs::read_to_string(log).unwrap_or_default()
    );
}

/// The largest step with a `train/loss` line in the run's metrics.jsonl (every tenth step has
/// one).
fn trained_to(run: &Path) -> u64 {
    let text = std::fs::read_to_string(run.join("metrics.jsonl")).unwrap_or_default();
    text.lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter(|v| v["tag"] == "train/loss")
        .filter_map(|v| v["step"].as_u64())
        .max()
        .unwrap_or(0)
}

/// The training step a published network was taken at (its sidecar's `step`).
fn model_step(run: &Path, generation: u64) -> u64 {
    let p = run.join(format!("models/{generation:06}.json"));
    let meta: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&p).unwrap()).unwrap();
    meta["step"]
        .as_u64()
        .unwrap_or_else(|| panic!("{}: no step", p.display()))
}

/// The checkpoint `checkpoint/LATEST` names, as its step.
fn latest_checkpoint(run: &Path) -> u64 {
    let stem = std::fs::read_to_string(run.join("checkpoint/LATEST")).unwrap();
    stem.trim().trim_start_matches("step-").parse().unwrap()
}

/// Samples stored, from the shard names (`<worker>-<seq>-<G>g<S>s.zst`).
fn samples_named(run: &Path) -> u64 {
    let Ok(gens) = std::fs::read_dir(run.join("samples")) else {
        return 0;
    };
    let mut n = 0;
    for g in gens.flatten() {
        for f in selfplay::list_shards(&g.path()) {
            let name = f.file_name().unwrap().to_string_lossy().into_owned();
            let counts = name.rsplit('-').next().unwrap();
            let s = counts.split('g').nth(1).unwrap().trim_end_matches("s.zst");
            n += s.parse::<u64>().unwrap();
        }
    }
    n
}

/// Every shard reads back whole and no temporary file is left in the run directory; returns
/// the samples stored, counted from the shards' content.
fn clean_store(run: &Path) -> u64 {
    let mut samples = 0;
    let mut stack = vec![run.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let p = e.path();
            let name = e.file_name().to_string_lossy().into_owned();
            assert!(!name.contains(".tmp"), "leftover {}", p.display());
            if p.is_dir() {
                stack.push(p);
            } else if name.ends_with(".zst") {
                let (_, games) =
                    selfplay::read_shard(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
                samples += games.iter().map(|g| g.num_samples() as u64).sum::<u64>();
            }
        }
    }
    samples
}

fn u(v: &serde_json::Value) -> u64 {
    v.as_u64().unwrap()
}

/// After a stop: the state's newest network holds every step trained, and the checkpoint to
/// resume from is at that step. Returns the steps.
fn all_trained_is_published(run: &Path, generation: u64) -> u64 {
    let s = state(run);
    assert_eq!(s["generation"], generation, "{s}");
    assert_eq!(s["complete"], false, "{s}");
    let steps = u(&s["steps"]);
    assert_eq!(model_step(run, generation), steps, "{s}");
    assert_eq!(latest_checkpoint(run), steps);
    clean_store(run);
    steps
}

#[test]
fn sigterm_and_sigint_stop_trainer_run_and_publish_what_was_trained() {
    let _turn = one_at_a_time();
    let tiny = Tiny::new(3, 100);
    let (root, cfg, run) = setup("signals-run", &tiny);
    let log = root.join("out.txt");
    let runs = root.join("runs");
    let args = ["run", "--config", arg(&cfg), "--runs-dir", arg(&runs)];

    // SIGTERM 60 steps into the first generation (training keeps pace with self-play, about a
    // dozen steps a second: the next publication is 40 steps away).
    let mut child = start(&args, &log);
    wait_until("60 training steps", Duration::from_secs(300), || {
        trained_to(&run) >= 60
    });
    signal(&child, "TERM");
    exits_0(&mut child, "trainer run after SIGTERM", &log);
    let s1 = all_trained_is_published(&run, 1);
    assert!(
        (60..100).contains(&s1),
        "stopped at step {s1}: not within the first generation"
    );
    let text = std::fs::read_to_string(run.join("log.txt")).unwrap();
    assert!(text.contains("run stopped after"), "{text}");

    // Resumed, it continues from that network; SIGINT 60 steps later.
    let mut args_resume = args.to_vec();
    args_resume.insert(1, "--resume");
    let mut child = start(&args_resume, &log);
    wait_until("60 more training steps", Duration::from_secs(300), || {
        trained_to(&run) >= s1 + 60
    });
    signal(&child, "INT");
    exits_0(&mut child, "trainer run after SIGINT", &log);
    let s2 = all_trained_is_published(&run, 2);
    assert!(
        (s1 + 60..s1 + 100).contains(&s2),
        "stopped at step {s2}, resumed at {s1}"
    );

    // Resumed again, it runs to the end: the next network comes a generation after the last.
    let mut child = start(&args_resume, &log);
    let st = wait_exit(
        &mut child,
        Duration::from_secs(300),
        "trainer run to the end",
    );
    assert!(st.success(), "{}", std::fs::read_to_string(&log).unwrap());
    let s = state(&run);
    assert_eq!(
        (&s["generation"], &s["complete"]),
        (&3.into(), &true.into())
    );
    assert_eq!(model_step(&run, 3), s2 + 100);
    clean_store(&run);
    let _ = std::fs::remove_dir_all(&root);
}

/// Starts a self-play worker on `run`, stops it (SIGTERM) once the store holds `samples`
/// samples; returns the samples stored, counted from the shards' content.
fn feed(root: &Path, run: &Path, samples: u64) -> u64 {
    let log = root.join("worker.txt");
    let mut w = start(&["selfplay", "--run", arg(run)], &log);
    wait_until("self-play samples", Duration::from_secs(300), || {
        samples_named(run) >= samples
    });
    signal(&w, "TERM");
    exits_0(&mut w, "worker after SIGTERM", &log);
    let stored = clean_store(run);
    assert_eq!(
        stored,
        samples_named(run),
        "shard names and contents disagree"
    );
    stored
}

/// `trainer train` fed by a worker that has stopped: it trains up to what `sample_reuse`
/// allows, waits, and is stopped by `sig`. Returns the steps the trainer may take.
fn train_then_stop(root: &Path, run: &Path, stored: u64, sig: &str, generation: u64) -> u64 {
    let log = root.join("train.txt");
    // sample_reuse = 1: one step per BATCH new samples.
    let allowed = stored / BATCH;
    let mut t = start(&["train", "--run", arg(run)], &log);
    wait_until("the allowed steps", Duration::from_secs(300), || {
        trained_to(run) >= allowed / 10 * 10
    });
    // The last few steps (less than ten) take milliseconds; no more may come.
    std::thread::sleep(Duration::from_secs(2));
    signal(&t, sig);
    exits_0(&mut t, &format!("trainer train after SIG{sig}"), &log);
    let steps = all_trained_is_published(run, generation);
    assert_eq!(
        steps, allowed,
        "{stored} samples allow {allowed} steps of {BATCH}"
    );
    let text = std::fs::read_to_string(run.join("log.txt")).unwrap();
    assert!(text.contains("trainer stopped: generation"), "{text}");
    steps
}

#[test]
fn sigterm_and_sigint_stop_trainer_train_and_publish_what_was_trained() {
    let _turn = one_at_a_time();
    let tiny = Tiny::new(3, 100);
    let (root, cfg, run) = setup("signals-train", &tiny);
    let out = Command::new(env!("CARGO_BIN_EXE_trainer"))
        .args(["train", "--init-only", "--config", arg(&cfg), "--runs-dir"])
        .arg(root.join("runs"))
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");

    // Games for 60 to 99 steps, then the trainer, stopped by SIGTERM mid-generation.
    let stored = feed(&root, &run, 60 * BATCH);
    assert!(
        stored < 100 * BATCH,
        "{stored} samples: a generation's worth"
    );
    let s1 = train_then_stop(&root, &run, stored, "TERM", 1);

    // Games for about 50 more steps; resumed, the trainer continues from its checkpoint.
    let stored = feed(&root, &run, stored + 50 * BATCH);
    let s2 = train_then_stop(&root, &run, stored, "INT", 2);
    assert!(
        s2 < s1 + 100,
        "{s1} then {s2} steps: more than a generation"
    );

    // A worker and the trainer to the end: a generation after the last network.
    let wlog = root.join("worker.txt");
    let tlog = root.join("train.txt");
    let mut w = start(&["selfplay", "--run", arg(&run)], &wlog);
    let mut t = start(&["train", "--run", arg(&run)], &tlog);
    let st = wait_exit(&mut t, Duration::from_secs(300), "trainer train to the end");
    assert!(st.success(), "{}", std::fs::read_to_string(&tlog).unwrap());
    exits_0(&mut w, "worker at the end of the run", &wlog);
    let s = state(&run);
    assert_eq!(
        (&s["generation"], &s["complete"]),
        (&3.into(), &true.into())
    );
    assert_eq!(model_step(&run, 3), s2 + 100);
    clean_store(&run);
    let _ = std::fs::remove_dir_all(&root);
}

#[test]
fn max_minutes_counts_the_run_time_over_resumes() {
    let _turn = one_at_a_time();
    const BUDGET: f64 = 30.0;
    let tiny = Tiny {
        max_minutes: BUDGET / 60.0,
        ..Tiny::new(1000, 20)
    };
    let (root, cfg, run) = setup("budget-run", &tiny);
    let log = root.join("out.txt");
    let runs = root.join("runs");
    let args = ["run", "--config", arg(&cfg), "--runs-dir", arg(&runs)];

    // Stopped (SIGTERM) after half the budget.
    let mut child = start(&args, &log);
    wait_until("half the budget", Duration::from_secs(120), || {
        run.join("state.json").exists() && state(&run)["seconds"].as_f64().unwrap() >= 15.0
    });
    signal(&child, "TERM");
    exits_0(&mut child, "trainer run after SIGTERM", &log);
    let before = state(&run)["seconds"].as_f64().unwrap();
    assert!((15.0..BUDGET).contains(&before), "{before} s");
    assert_eq!(state(&run)["complete"], false);

    // Resumed, it stops by itself when the total reaches the budget, not a budget later (in
    // state.json) and not after a budget of its own (its wall time).
    let t = Instant::now();
    let mut child = start(&args, &log);
    exits_0(&mut child, "resumed trainer run", &log);
    let wall = t.elapsed().as_secs_f64();
    let s = state(&run);
    assert_eq!(s["complete"], true, "{s}");
    let total = s["seconds"].as_f64().unwrap();
    assert!(
        (BUDGET..BUDGET + 3.0).contains(&total),
        "{total} s in all for a budget of {BUDGET} s ({before} s before the resume)"
    );
    assert!(
        wall < BUDGET - before + 10.0,
        "the resumed run took {wall:.1} s with {before:.1} of {BUDGET} s spent"
    );

    // A complete run does not start again.
    let mut child = start(&args, &log);
    exits_0(&mut child, "trainer run on a complete run", &log);
    assert_eq!(state(&run)["seconds"].as_f64().unwrap(), total);
    let _ = std::fs::remove_dir_all(&root);
}

#[test]
fn max_minutes_counts_the_time_of_a_trainer_stopped_with_nothing_to_publish() {
    let _turn = one_at_a_time();
    const BUDGET: f64 = 18.0;
    // No worker: the trainer waits for samples the whole time and never publishes.
    let tiny = Tiny {
        max_minutes: BUDGET / 60.0,
        ..Tiny::new(1000, 20)
    };
    let (root, cfg, run) = setup("budget-train", &tiny);
    let log = root.join("train.txt");
    let mut t = start(
        &["train", "--config", arg(&cfg), "--runs-dir"]
            .into_iter()
            .chain([arg(&root.join("runs"))])
            .collect::<Vec<_>>(),
        &log,
    );
    wait_until("the trainer", Duration::from_secs(60), || {
        std::fs::read_to_string(run.join("metrics.jsonl")).is_ok_and(|m| m.contains("run/start"))
    });
    std::thread::sleep(Duration::from_secs(9));
    signal(&t, "TERM");
    exits_0(&mut t, "trainer train after SIGTERM", &log);
    let s = state(&run);
    let before = s["seconds"].as_f64().unwrap();
    assert!(
        (8.5..BUDGET).contains(&before),
        "{before} s recorded for a trainer stopped after 9 s: {s}"
    );
    assert_eq!(
        (&s["generation"], &s["complete"]),
        (&0.into(), &false.into())
    );

    let t0 = Instant::now();
    let mut t = start(&["train", "--run", arg(&run)], &log);
    exits_0(&mut t, "resumed trainer train", &log);
    let wall = t0.elapsed().as_secs_f64();
    let s = state(&run);
    assert_eq!(s["complete"], true, "{s}");
    let total = s["seconds"].as_f64().unwrap();
    assert!(
        (BUDGET..BUDGET + 3.0).contains(&total),
        "{total} s in all for a budget of {BUDGET} s ({before} s before the resume)"
    );
    assert!(
        wall < BUDGET - before + 6.0,
        "the resumed trainer took {wall:.1} s with {before:.1} of {BUDGET} s spent"
    );
    let _ = std::fs::remove_dir_all(&root);
}

/// `gen N published at Xs: S steps (total T), window W of N samples, ..., waited Ws on
/// sample_reuse; ...` of the run's log: (T, N, W) of each publication.
fn publications(run: &Path) -> Vec<(u64, u64, f64)> {
    let text = std::fs::read_to_string(run.join("log.txt")).unwrap();
    text.lines()
        .filter(|l| l.contains(" published at "))
        .map(|l| {
            let after = |marker: &str, end: char| {
                let rest = l.split(marker).nth(1).unwrap_or_else(|| panic!("{l}"));
                rest.split(end).next().unwrap().to_string()
            };
            (
                after("(total ", ')').parse().unwrap(),
                after(" of ", ' ').parse().unwrap(),
                after(", waited ", 's').parse().unwrap(),
            )
        })
        .collect()
}

#[test]
fn sample_reuse_bounds_the_draws_per_sample() {
    let _turn = one_at_a_time();
    const REUSE: f64 = 0.1;
    let tiny = Tiny {
        sample_reuse: REUSE,
        // 180 steps of 16 need 28,800 samples at this reuse: far more than self-play has
        // written when the trainer starts (some 5,000 on a slow machine), and the trainer's
        // steps are quicker than self-play's games, so the bound binds.
        ..Tiny::new(3, 60)
    };
    let (root, cfg, run) = setup("reuse", &tiny);
    let log = root.join("out.txt");
    let mut child = start(
        &["run", "--config", arg(&cfg), "--runs-dir"]
            .into_iter()
            .chain([arg(&root.join("runs"))])
            .collect::<Vec<_>>(),
        &log,
    );
    exits_0(&mut child, "trainer run", &log);
    let pubs = publications(&run);
    assert_eq!(pubs.len(), 3, "{pubs:?}");
    for &(steps, samples, _) in &pubs {
        // At every publication: steps x batch <= sample_reuse x samples taken in.
        assert!(
            (steps * BATCH) as f64 <= REUSE * samples as f64,
            "{steps} steps of {BATCH} drew more than {REUSE} of {samples} samples: {pubs:?}"
        );
    }
    // The trainer waited for self-play rather than run ahead, and said so.
    let waited: f64 = pubs.iter().map(|p| p.2).sum();
    assert!(
        waited > 0.0,
        "the bound never held the trainer back: {pubs:?}"
    );
    let s = state(&run);
    assert_eq!(u(&s["steps"]), 180);
    assert!((u(&s["steps"]) * BATCH) as f64 <= REUSE * u(&s["total_samples"]) as f64);
    // The waiting is also a scalar: the share of each generation's time.
    let metrics = std::fs::read_to_string(run.join("metrics.jsonl")).unwrap();
    let shares: Vec<f64> = metrics
        .lines()
        .filter(|l| l.contains("\"speed/trainer_wait_share\""))
        .map(|l| {
            serde_json::from_str::<serde_json::Value>(l).unwrap()["value"]
                .as_f64()
                .unwrap()
        })
        .collect();
    assert_eq!(shares.len(), 3, "{metrics}");
    assert!(shares.iter().all(|s| (0.0..=1.0).contains(s)), "{shares:?}");
    assert!(shares.iter().any(|&s| s > 0.0), "{shares:?}");
    let _ = std::fs::remove_dir_all(&root);
}

#[test]
fn checkpoints_at_every_publication_and_every_max_of_a_quarter_generation_and_50_steps() {
    let _turn = one_at_a_time();
    // 120 steps a generation: a checkpoint every max(120 / 4, 50) = 50 steps after each
    // publication, and one at each publication.
    let tiny = Tiny {
        sample_reuse: 2.0,
        ..Tiny::new(2, 120)
    };
    let (root, cfg, run) = setup("checkpoints", &tiny);
    let log = root.join("out.txt");
    let mut child = start(
        &["run", "--config", arg(&cfg), "--runs-dir"]
            .into_iter()
            .chain([arg(&root.join("runs"))])
            .collect::<Vec<_>>(),
        &log,
    );
    // The last two checkpoints are kept: watching the directory sees every one.
    let mut seen = BTreeSet::new();
    let t = Instant::now();
    let st = loop {
        if t.elapsed() > Duration::from_secs(300) {
            let _ = child.kill();
            panic!("the run did not end within 300 s");
        }
        if let Ok(rd) = std::fs::read_dir(run.join("checkpoint")) {
            for e in rd.flatten() {
                let name = e.file_name().to_string_lossy().into_owned();
                if let Some(rest) = name.strip_prefix("step-") {
                    seen.insert(rest.split('.').next().unwrap().parse::<u64>().unwrap());
                }
            }
        }
        if let Some(st) = child.try_wait().unwrap() {
            break st;
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    assert!(st.success(), "{}", std::fs::read_to_string(&log).unwrap());
    assert_eq!(
        seen.into_iter().collect::<Vec<_>>(),
        [50, 100, 120, 170, 220, 240]
    );
    assert_eq!((model_step(&run, 1), model_step(&run, 2)), (120, 240));
    let _ = std::fs::remove_dir_all(&root);
}
