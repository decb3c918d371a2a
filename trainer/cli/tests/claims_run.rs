//! What the README says a run directory holds and what the run commands do, checked on tiny
//! runs: one synchronous `trainer run` with evaluation (matches, an `mcts` anchor, an engine that
//! cannot start, a ladder of `mcts` rungs) and two shards of another variant and encoding
//! planted before it starts, whose files, log, scalars, state, `trainer status` and `trainer
//! report --out` are all checked, while state.json is watched during the run; a `trainer
//! selfplay` worker's heartbeats and its clean stop on SIGINT; `--resume` without a run.

mod common;
use common::{state, text, wait_exit};

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

fn trainer(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_trainer"))
        .args(args)
        .env("OMP_WAIT_POLICY", "PASSIVE")
        .output()
        .expect("run trainer")
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

fn fresh(name: &str) -> PathBuf {
    let d = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("claims-run-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn read(p: &Path) -> String {
    std::fs::read_to_string(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// A ladder of two network-free rungs, calibrated by hand (the run only reads the ratings).
const LADDER: &str = r#"
variant = "minishogi"
zero = "r8"
opening_plies = 2
max_plies = 40

[[rungs]]
name = "r1"
player = "mcts"
nodes = 1

[[rungs]]
name = "r8"
player = "mcts"
nodes = 8
"#;

const CALIBRATION: &str = r#"command = "written by hand"
unix_time = 0
machine = "none"
pairings = []

[ratings.r1]
elo = -200.0
low = -300.0
high = -100.0
games = 10

[ratings.r8]
elo = 0.0
low = 0.0
high = 0.0
games = 10
"#;

/// The tiny synchronous run: three generations of 20 steps on 12 games each, evaluated against
/// the previous network and generation 0, an `mcts` anchor, an engine that exits at once and
/// the ladder.
fn tiny_config(ladder: &Path) -> String {
    format!(
        r#"name = "tiny"
variant = "minishogi"
model = "b2c16"
seed = 3
device = "cpu"
generations = 3
steps_per_generation = 20
min_samples = 50
games_per_generation = 12

[selfplay]
threads = 1
parallel_games = 4
full_simulations = 8
fast_simulations = 4
max_plies = 40
# Many games without resignation, so that false resignations are measured.
no_resign_fraction = 0.5

[training]
batch_size = 32

[replay]
min_window = 200
max_window = 2000

[evaluation]
games = 2
simulations = 4
share = 1.0
opening_plies = 2
ladder = "{}"
ladder_games = 2

[[evaluation.anchors]]
name = "m8"
player = "mcts"
nodes = 8
games = 2

[[evaluation.anchors]]
name = "dead"
player = "engine:false"
games = 2
"#,
        ladder.display()
    )
}

/// The heartbeats in the run's `workers/`.
fn heartbeats(run: &Path) -> Vec<serde_json::Value> {
    let Ok(rd) = std::fs::read_dir(run.join("workers")) else {
        return Vec::new();
    };
    rd.flatten()
        .filter(|e| e.file_name().to_string_lossy().ends_with(".json"))
        .filter_map(|e| std::fs::read(e.path()).ok())
        .filter_map(|b| serde_json::from_slice(&b).ok())
        .collect()
}

/// Writes a shard of one empty game under `name` in generation 0 with this header.
fn plant(run: &Path, name: &str, variant: &str, policy_len: usize) -> PathBuf {
    let header = selfplay::ShardHeader {
        version: selfplay::samples::SHARD_VERSION,
        variant: variant.into(),
        policy_len,
        generation: 0,
    };
    let game = selfplay::GameRecord {
        start_sfen: "rbsgk/4p/5/P4/KGSBR b - 1".into(),
        moves: Vec::new(),
        targets: Vec::new(),
        result: rules::GameResult::Draw,
        reason: "planted".into(),
    };
    let p = run.join("samples/000000").join(name);
    selfplay::write_shard(&p, &header, &[game]).unwrap();
    p
}

/// Each generation named by a state.json read while the run goes on (newest, self-play network,
/// evaluated ones), with whether its weights and sidecar were on disk right after the read.
#[derive(Default)]
struct Watch {
    reads: usize,
    generations: BTreeSet<u64>,
    missing: Vec<String>,
}

impl Watch {
    fn look(&mut self, run: &Path) {
        // state.json is replaced by a rename: a read gets the old file or the new one.
        let Ok(bytes) = std::fs::read(run.join("state.json")) else {
            return;
        };
        let v: serde_json::Value = serde_json::from_slice(&bytes).expect("state.json parses");
        self.reads += 1;
        let mut named = vec![
            v["generation"].as_u64().unwrap(),
            v["best"].as_u64().unwrap(),
        ];
        for h in v["history"].as_array().unwrap() {
            named.push(h["generation"].as_u64().unwrap());
        }
        for g in named {
            self.generations.insert(g);
            for ext in ["safetensors", "json"] {
                let f = run.join(format!("models/{g:06}.{ext}"));
                if !f.exists() {
                    self.missing.push(format!("{} (state {v})", f.display()));
                }
            }
        }
    }
}

/// Every line of the files in `games/` is `sfen S moves M... result R sente A gote B reason
/// X` and replays under the rules; returns the lines per file name.
fn match_games(run: &Path) -> BTreeMap<String, usize> {
    let variant = pipeline::load_variant("minishogi").unwrap();
    let mut out = BTreeMap::new();
    for e in std::fs::read_dir(run.join("games")).unwrap().flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        let mut n = 0;
        for line in read(&e.path()).lines() {
            let bad = || panic!("{name}: {line:?} is not a match game line");
            let Some(rest) = line.strip_prefix("sfen ") else {
                bad()
            };
            let Some((sfen, rest)) = rest.split_once(" moves ") else {
                bad()
            };
            let Some((moves, rest)) = rest.split_once(" result ") else {
                bad()
            };
            let fields: Vec<&str> = rest.splitn(6, ' ').collect();
            if fields.len() != 6
                || !["1", "0", "-1"].contains(&fields[0])
                || fields[1] != "sente"
                || fields[3] != "gote"
                || fields[5].is_empty()
            {
                bad()
            }
            let mut pos = rules::Position::from_sfen(&variant, sfen)
                .unwrap_or_else(|e| panic!("{name}: {sfen}: {e}"));
            pos.play_usi(moves)
                .unwrap_or_else(|e| panic!("{name}: {moves}: {e}"));
            n += 1;
        }
        out.insert(name, n);
    }
    out
}

/// The bytes of every TensorBoard event file in `tb/`.
fn event_bytes(run: &Path) -> Vec<u8> {
    let mut all = Vec::new();
    let mut files = 0;
    for e in std::fs::read_dir(run.join("tb")).unwrap().flatten() {
        if e.file_name().to_string_lossy().contains("tfevents") {
            all.extend(std::fs::read(e.path()).unwrap());
            files += 1;
        }
    }
    assert!(files > 0, "no event file in {}", run.join("tb").display());
    all
}

fn contains(hay: &[u8], needle: &str) -> bool {
    hay.windows(needle.len()).any(|w| w == needle.as_bytes())
}

/// The lines of metrics.jsonl as (tag, step, value).
fn metrics(run: &Path) -> Vec<(String, u64, f64)> {
    read(&run.join("metrics.jsonl"))
        .lines()
        .map(|l| {
            let v: serde_json::Value =
                serde_json::from_str(l).unwrap_or_else(|e| panic!("{l}: {e}"));
            (
                v["tag"].as_str().unwrap().to_string(),
                v["step"].as_u64().unwrap(),
                v["value"].as_f64().unwrap(),
            )
        })
        .collect()
}

#[test]
fn a_tiny_run_writes_what_the_readme_lists() {
    let root = fresh("tiny");
    let ladder = root.join("mini.toml");
    std::fs::write(&ladder, LADDER).unwrap();
    std::fs::write(root.join("mini.calibration.toml"), CALIBRATION).unwrap();
    let config_text = tiny_config(&ladder);
    let cfg = root.join("tiny.toml");
    std::fs::write(&cfg, &config_text).unwrap();
    let runs = root.join("runs");
    let run = runs.join("tiny");

    // The run directory first, then two bad shards in it: one of another variant, one of
    // another encoding (its policy one longer).
    let o = trainer(&[
        "train",
        "--config",
        s(&cfg),
        "--runs-dir",
        s(&runs),
        "--init-only",
    ]);
    assert!(o.status.success(), "{}", text(&o));
    let minishogi = pipeline::load_variant("minishogi").unwrap();
    let policy_len = encoding::Encoder::new(Arc::clone(&minishogi)).policy_len();
    let kyoto = plant(
        &run,
        "00000000000000a1-00000000-1g0s.zst",
        "kyoto",
        policy_len,
    );
    let longer = plant(
        &run,
        "00000000000000a2-00000000-1g0s.zst",
        "minishogi",
        policy_len + 1,
    );

    // `--resume` on the existing directory, its output kept; state.json watched meanwhile.
    let out = std::fs::File::create(root.join("stdout.txt")).unwrap();
    let t0 = Instant::now();
    let mut child = Command::new(env!("CARGO_BIN_EXE_trainer"))
        .args([
            "run",
            "--resume",
            "--config",
            s(&cfg),
            "--runs-dir",
            s(&runs),
        ])
        .env("OMP_WAIT_POLICY", "PASSIVE")
        .stdin(Stdio::null())
        .stdout(out)
        .stderr(std::fs::File::create(root.join("stderr.txt")).unwrap())
        .spawn()
        .unwrap();
    let mut watch = Watch::default();
    let status = loop {
        watch.look(&run);
        if let Some(st) = child.try_wait().unwrap() {
            break st;
        }
        if t0.elapsed() > Duration::from_secs(900) {
            let _ = child.kill();
            panic!("the tiny run did not end in 15 minutes");
        }
        std::thread::sleep(Duration::from_millis(2));
    };
    let wall = t0.elapsed().as_secs_f64();
    let stdout = read(&root.join("stdout.txt"));
    assert!(
        status.success(),
        "{status:?}\n{stdout}{}",
        read(&root.join("stderr.txt"))
    );

    // A network is in state.json only once its weights and sidecar are on disk.
    assert!(watch.missing.is_empty(), "{:?}", watch.missing);
    assert!(
        watch.reads > 10 && watch.generations.len() >= 3,
        "{} reads, generations {:?}",
        watch.reads,
        watch.generations
    );

    // config.toml, variant.toml, model.toml: frozen copies of the run config, the variant and
    // the network shape.
    assert_eq!(read(&run.join("config.toml")), config_text);
    let frozen =
        pipeline::RunConfig::from_toml(&read(&run.join("config.toml")), "config.toml").unwrap();
    assert_eq!(
        (frozen.name.as_str(), frozen.generations),
        ("tiny", 3),
        "{frozen:?}"
    );
    let spec =
        rules::VariantSpec::from_toml(&read(&run.join("variant.toml")), "variant.toml").unwrap();
    assert_eq!(spec, minishogi.spec);
    let shape =
        model::ModelConfig::from_toml(&read(&run.join("model.toml")), "model.toml").unwrap();
    assert_eq!(shape, model::ModelConfig::load("b2c16").unwrap());

    // state.json: newest generation, self-play network, totals, steps, run seconds, history.
    let st = state(&run);
    let stored = pipeline::store::list(&run).unwrap();
    let (games, samples) = pipeline::store::totals(&stored);
    assert_eq!(st["generation"], 3, "{st}");
    assert_eq!(st["best"], 3, "{st}");
    assert_eq!(st["complete"], true, "{st}");
    assert_eq!(st["steps"], 60, "{st}");
    assert_eq!(st["total_games"], games, "{st}");
    assert_eq!(st["total_samples"], samples, "{st}");
    assert!(games >= 3 * 12 && samples > games, "{st}");
    let seconds = st["seconds"].as_f64().unwrap();
    assert!(seconds > 0.0 && seconds <= wall, "{seconds} s in {wall} s");
    let history = st["history"].as_array().unwrap();
    assert!(!history.is_empty(), "no evaluation: {st}");
    let opponents = |h: &serde_json::Value| -> Vec<String> {
        h["matches"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| m["opponent"].as_str().unwrap().to_string())
            .collect()
    };
    let first = &history[0];
    // The first evaluation: against generation 0 (the previous one evaluated), the anchor
    // that started and the ladder's two lowest rungs.
    assert_eq!(opponents(first), ["gen0", "m8", "r1", "r8"], "{st}");
    assert!(first["ladder"]["elo"].is_number(), "{st}");
    // Later ones: the previously evaluated network, then generation 0.
    for w in history.windows(2) {
        let prev = format!("gen{}", w[0]["generation"]);
        assert_eq!(opponents(&w[1])[..3], [prev.as_str(), "gen0", "m8"], "{st}");
    }

    // games/: match games as `sfen ... moves ... result ...` lines, one file per match.
    let files = match_games(&run);
    for h in history {
        let gen = h["generation"].as_u64().unwrap();
        for m in h["matches"].as_array().unwrap() {
            let name = format!("{gen:06}-vs-{}.txt", m["opponent"].as_str().unwrap());
            let played = ["wins", "draws", "losses"]
                .iter()
                .map(|k| m[k].as_u64().unwrap())
                .sum::<u64>();
            assert_eq!(
                files.get(&name).copied(),
                Some(played as usize),
                "{files:?}"
            );
        }
    }

    // log.txt: the lines printed, among them publications, evaluations, self-play threads
    // starting, the bad shards and the engine that could not start.
    let log = read(&run.join("log.txt"));
    let printed: BTreeSet<&str> = stdout.lines().collect();
    for l in log.lines() {
        assert!(printed.contains(l), "{l:?} was not printed:\n{stdout}");
    }
    for needle in [
        "gen 1 published at",
        "gen 3 published at",
        "evaluated (published at",
        "vs m8 +",
        "on the mini ladder Elo",
        "self-play thread ",
        "anchor dead: cannot start",
        "run complete after",
    ] {
        assert!(log.contains(needle), "no {needle:?} in the log:\n{log}");
    }
    let skipped: Vec<&str> = log
        .lines()
        .filter(|l| l.contains("skipping a bad shard: "))
        .collect();
    assert_eq!(skipped.len(), 2, "{log}");
    for (shard, reason) in [
        (
            &kyoto,
            "games of variant \"kyoto\", this run plays \"minishogi\"",
        ),
        (&longer, "policy length"),
    ] {
        let want = format!("skipping a bad shard: {}: {reason}", shard.display());
        assert!(skipped.iter().any(|l| l.contains(&want)), "{want}\n{log}");
    }

    // metrics.jsonl: the bad shards counted, the evaluation's scalars, and the CPU time shares
    // last, once the process ends.
    let m = metrics(&run);
    let bad = m
        .iter()
        .filter(|x| x.0 == "data/bad_shards")
        .map(|x| x.2)
        .fold(0.0, f64::max);
    assert_eq!(bad, 2.0);
    let tags: BTreeSet<&str> = m.iter().map(|x| x.0.as_str()).collect();
    for tag in [
        "score/vs_m8",
        "elo/vs_m8",
        "score/vs_gen0",
        "elo/vs_gen0",
        "elo/ladder",
        "elo/ladder_low",
        "elo/ladder_high",
    ] {
        assert!(tags.contains(tag), "no {tag} in metrics.jsonl: {tags:?}");
    }
    assert!(!tags.contains("score/vs_dead"), "{tags:?}");
    let last: Vec<&(String, u64, f64)> = m[m.len() - 3..].iter().collect();
    let share_tags: Vec<&str> = last.iter().map(|x| x.0.as_str()).collect();
    assert_eq!(
        share_tags,
        ["time/selfplay_share", "time/train_share", "time/eval_share"],
        "the last lines of metrics.jsonl"
    );
    assert_eq!(m.iter().filter(|x| x.0.starts_with("time/")).count(), 3);
    for x in &last {
        assert!(x.2 > 0.0 && x.2 <= 1.0, "{x:?}");
    }
    let sum: f64 = last.iter().map(|x| x.2).sum();
    assert!(sum <= 1.0 + 1e-9, "CPU shares of the machine sum to {sum}");

    // tb/: the README's scalars in the event files.
    let events = event_bytes(&run);
    for tag in [
        "train/loss",
        "train/policy_loss",
        "train/value_loss",
        "train/policy_entropy",
        "train/value_accuracy",
        "selfplay/game_length",
        "selfplay/draw_rate",
        "selfplay/resign_rate",
        "selfplay/false_resign_rate",
        "speed/evals_per_s",
        "elo/vs_gen0",
        "elo/vs_m8",
        "score/vs_m8",
        "elo/ladder",
        "elo/ladder_low",
        "elo/ladder_high",
        "data/bad_shards",
        "time/selfplay_share",
    ] {
        assert!(contains(&events, tag), "no {tag} in tb/");
    }

    // report.html is not written by the run; `trainer report --out F` writes F only.
    assert!(!run.join("report.html").exists());
    let page = root.join("page.html");
    let o = trainer(&["report", "--run", s(&run), "--out", s(&page)]);
    assert!(o.status.success(), "{}", text(&o));
    assert_eq!(String::from_utf8_lossy(&o.stdout).trim(), s(&page));
    assert!(read(&page).contains("<html"), "not a page");
    assert!(!run.join("report.html").exists());

    // `trainer status`: generation, games, samples, steps, last scores, last ladder Elo and
    // workers.
    let o = trainer(&["status", "--run", s(&run)]);
    assert!(o.status.success(), "{}", text(&o));
    let out = text(&o);
    let last = history.last().unwrap();
    let scores: Vec<String> = last["matches"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| {
            format!(
                "{} {:.3}",
                m["opponent"].as_str().unwrap(),
                m["score"].as_f64().unwrap()
            )
        })
        .collect();
    let rated = history
        .iter()
        .rev()
        .find(|h| h["ladder"].is_object())
        .unwrap();
    let heartbeat = heartbeats(&run);
    assert_eq!(
        heartbeat.len(),
        1,
        "the run's self-play threads: one worker"
    );
    for needle in [
        "generation 3".to_string(),
        format!("{games} games, {samples} samples"),
        "trained: 60 steps".into(),
        format!("last evaluation: generation {}: ", last["generation"]),
        format!(
            "ladder: generation {} on the mini ladder: Elo {:+.0}",
            rated["generation"],
            rated["ladder"]["elo"].as_f64().unwrap()
        ),
        "workers: 1".into(),
        heartbeat[0]["id"].as_str().unwrap().to_string(),
    ] {
        assert!(out.contains(&needle), "no {needle:?} in:\n{out}");
    }
    for s in &scores {
        assert!(out.contains(s.as_str()), "no {s:?} in:\n{out}");
    }
    let _ = std::fs::remove_dir_all(&root);
}

/// A `trainer selfplay` worker: its heartbeat `workers/<id>.json` every 10 s (host, pid, Slurm
/// task, threads, games, evals/s), its start and stop in the run's log, and on SIGINT its games
/// in flight dropped, no temporary file left and exit status 0.
#[test]
fn a_selfplay_worker_beats_every_10_s_and_stops_cleanly_on_sigint() {
    let root = fresh("worker");
    let cfg = root.join("beat.toml");
    std::fs::write(
        &cfg,
        r#"name = "beat"
variant = "minishogi"
model = "b2c16"
seed = 9
device = "cpu"
generations = 1
steps_per_generation = 10

[selfplay]
threads = 1
parallel_games = 2
full_simulations = 8
fast_simulations = 4
max_plies = 40

[evaluation]
games = 0
"#,
    )
    .unwrap();
    let runs = root.join("runs");
    let o = trainer(&[
        "train",
        "--config",
        s(&cfg),
        "--runs-dir",
        s(&runs),
        "--init-only",
    ]);
    assert!(o.status.success(), "{}", text(&o));
    let run = runs.join("beat");
    let state_before = std::fs::read(run.join("state.json")).unwrap();
    // No trainer: the worker plays generation 0 until it is stopped.
    let mut child = Command::new(env!("CARGO_BIN_EXE_trainer"))
        .args(["selfplay", "--run", s(&run), "--threads", "1"])
        .env("OMP_WAIT_POLICY", "PASSIVE")
        .env("SLURM_ARRAY_JOB_ID", "77")
        .env("SLURM_ARRAY_TASK_ID", "3")
        .env("SLURM_JOB_ID", "78")
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(root.join("worker.txt")).unwrap())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let pid = child.id();
    // Each heartbeat written, by its time; three of them with the thread's id are two periods.
    let mut beats: BTreeMap<u64, serde_json::Value> = BTreeMap::new();
    let t0 = Instant::now();
    while beats
        .values()
        .filter(|b| b["thread_ids"] != serde_json::json!([]))
        .count()
        < 3
    {
        assert!(
            t0.elapsed() < Duration::from_secs(120),
            "three heartbeats in two minutes: {beats:?}"
        );
        if let Some(exit) = child.try_wait().unwrap() {
            panic!("the worker stopped by itself: {exit:?}");
        }
        for b in heartbeats(&run) {
            if b["pid"] == pid {
                let at = (b["time"].as_f64().unwrap() * 1000.0) as u64;
                beats.insert(at, b);
            }
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let with_ids: Vec<(&u64, &serde_json::Value)> = beats
        .iter()
        .filter(|(_, b)| b["thread_ids"] != serde_json::json!([]))
        .collect();
    for w in with_ids.windows(2) {
        let gap = (w[1].0 - w[0].0) as f64 / 1000.0;
        assert!(
            (9.9..=11.5).contains(&gap),
            "{gap} s between two heartbeats: {beats:?}"
        );
    }
    let hb = with_ids.last().unwrap().1.clone();
    let host = read(Path::new("/proc/sys/kernel/hostname"))
        .trim()
        .to_string();
    assert_eq!(hb["host"], host.as_str(), "{hb}");
    assert_eq!(hb["pid"], pid, "{hb}");
    assert_eq!(hb["slurm"], "77_3", "{hb}");
    assert_eq!(hb["threads"], 1, "{hb}");
    assert_eq!(hb["stopped"], false, "{hb}");
    assert!(hb["games"].as_u64().unwrap() > 0, "{hb}");
    assert!(hb["evals_per_s"].as_f64().unwrap() > 0.0, "{hb}");
    let thread = hb["thread_ids"][0].as_str().unwrap().to_string();

    // SIGINT, with games in flight: exit 0, finished games kept, nothing half-written.
    let ok = Command::new("kill")
        .args(["-s", "INT", &pid.to_string()])
        .status()
        .unwrap()
        .success();
    assert!(ok);
    let st = wait_exit(
        &mut child,
        Duration::from_secs(60),
        "the worker after SIGINT",
    );
    assert_eq!(st.code(), Some(0), "{st:?}");
    let mut shards = 0u64;
    let mut stack = vec![run.clone()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let (p, name) = (e.path(), e.file_name().to_string_lossy().into_owned());
            assert!(!name.starts_with(".tmp"), "left behind: {}", p.display());
            if p.is_dir() {
                stack.push(p);
            } else if name.ends_with(".zst") {
                let (_, games) = selfplay::read_shard(&p).unwrap();
                assert_eq!(games.len(), 1);
                assert!(name.starts_with(&thread), "{name} is not the thread's");
                shards += 1;
            }
        }
    }
    // state.json is the trainer's: the worker left it as it was.
    assert_eq!(std::fs::read(run.join("state.json")).unwrap(), state_before);
    let last = heartbeats(&run);
    assert_eq!(last.len(), 1);
    assert_eq!(last[0]["stopped"], true, "{}", last[0]);
    assert_eq!(last[0]["games"], shards, "{}", last[0]);
    let log = read(&run.join("log.txt"));
    assert!(
        log.contains(&format!("self-play thread {thread} starts with network 0")),
        "{log}"
    );
    assert!(
        log.contains(&format!("self-play worker stops: {shards} games")),
        "{log}"
    );
    // `trainer status` lists it, stopped.
    let o = trainer(&["status", "--run", s(&run)]);
    assert!(o.status.success(), "{}", text(&o));
    let out = text(&o);
    let row = out
        .lines()
        .find(|l| l.contains(last[0]["id"].as_str().unwrap()))
        .unwrap_or_else(|| panic!("no row for the worker:\n{out}"));
    let pid = pid.to_string();
    for field in [host.as_str(), pid.as_str(), "77_3", "stopped"] {
        assert!(row.contains(field), "no {field:?} in {row:?}");
    }
    let _ = std::fs::remove_dir_all(&root);
}

/// `trainer run --resume` refuses to start a new run: it fails naming the missing directory
/// and creates nothing.
#[test]
fn resume_refuses_to_start_a_new_run() {
    let root = fresh("resume");
    let cfg = root.join("never.toml");
    std::fs::write(
        &cfg,
        "variant = \"minishogi\"\nmodel = \"b2c16\"\ndevice = \"cpu\"\ngenerations = 1\n\
         steps_per_generation = 1\n",
    )
    .unwrap();
    let runs = root.join("runs");
    let o = trainer(&[
        "run",
        "--resume",
        "--config",
        s(&cfg),
        "--runs-dir",
        s(&runs),
    ]);
    assert!(!o.status.success(), "{}", text(&o));
    let want = format!("--resume: {} does not exist", runs.join("never").display());
    assert!(text(&o).contains(&want), "{}", text(&o));
    assert!(!runs.join("never").exists());
    let _ = std::fs::remove_dir_all(&root);
}
