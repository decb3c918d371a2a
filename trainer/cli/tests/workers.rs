//! One `trainer train` and three `trainer selfplay` workers on one run directory: every game is
//! distinct, no shard is lost or overwritten, each generation's game count stays within its
//! cap plus the games in flight; a worker stopped by SIGTERM exits 0, one killed by `kill -9`
//! loses only its unfinished games, and the run completes with the others.

mod common;
use common::{state, wait_exit, wait_until};

use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

/// Games per generation (the cap) and lockstep games per worker.
const CAP: u64 = 16;
const PARALLEL: u64 = 2;
/// Groups per thread: the workers go through an inference server with double buffering.
const GROUPS: u64 = 2;
const WORKERS: u64 = 3;
/// Games at least this long are compared. A young network may play the same game again by
/// itself (the same mate, no noise in fast searches), so a few repeats are allowed; two workers
/// replaying one seed would repeat a third of the games or more.
const LONG: usize = 12;
const MOST_REPEATS: f64 = 0.2;

fn config(name: &str, generations: u64) -> String {
    format!(
        r#"
name = "{name}"
variant = "minishogi"
model = "b2c16"
seed = 5
device = "cpu"
generations = {generations}
games_per_generation = {CAP}
steps_per_generation = 20
min_samples = 50

[selfplay]
parallel_games = {PARALLEL}
threads = 1
inference = "server"
pipeline = {GROUPS}
full_simulations = 8
fast_simulations = 4
full_probability = 0.5
max_plies = 50

[training]
batch_size = 32

[replay]
min_window = 500
max_window = 5000

[evaluation]
games = 0
"#
    )
}

fn trainer(args: &[&str], log: &Path) -> Child {
    let out = std::fs::File::create(log).unwrap();
    Command::new(env!("CARGO_BIN_EXE_trainer"))
        .args(args)
        // Four processes share the test machine's cores: OpenMP threads that spin while they
        // wait would starve the others (and the inference threads' wake-ups).
        .env("OMP_WAIT_POLICY", "PASSIVE")
        .stdout(out.try_clone().unwrap())
        .stderr(out)
        .stdin(Stdio::null())
        .spawn()
        .expect("start trainer")
}

/// (generation, worker, sequence) of every shard name.
fn shard_names(run: &Path) -> Vec<(u64, String, u64, PathBuf)> {
    let mut out = Vec::new();
    let Ok(gens) = std::fs::read_dir(run.join("samples")) else {
        return out;
    };
    for g in gens.flatten() {
        let gen: u64 = g.file_name().to_string_lossy().parse().unwrap();
        for f in std::fs::read_dir(g.path()).unwrap().flatten() {
            let name = f.file_name().to_string_lossy().into_owned();
            if name.starts_with(".tmp") {
                continue;
            }
            let parts: Vec<&str> = name.split('-').collect();
            assert_eq!(parts.len(), 3, "unexpected file {name}");
            assert!(parts[2].ends_with("s.zst"), "unexpected file {name}");
            out.push((
                gen,
                parts[0].to_string(),
                parts[1].parse().unwrap(),
                f.path(),
            ));
        }
    }
    out
}

/// Checks the store: readable shards, distinct games, contiguous sequences per worker,
/// counts within the cap plus the games in flight. Returns the number of games.
fn check_store(run: &Path) -> usize {
    let names = shard_names(run);
    let mut per_worker: BTreeMap<String, Vec<u64>> = BTreeMap::new();
    let mut per_gen: BTreeMap<u64, u64> = BTreeMap::new();
    let mut games = HashSet::new();
    let (mut repeats, mut compared) = (0usize, 0usize);
    for (gen, worker, seq, path) in &names {
        per_worker.entry(worker.clone()).or_default().push(*seq);
        let (header, recs) = selfplay::read_shard(path)
            .unwrap_or_else(|e| panic!("unreadable shard {}: {e}", path.display()));
        assert_eq!(header.generation, *gen);
        assert_eq!(recs.len(), 1);
        *per_gen.entry(*gen).or_default() += 1;
        // Short games may coincide by chance (a young network mates the same way); two
        // workers replaying one seed would repeat long games too.
        if recs[0].moves.len() >= LONG {
            let key = format!("{} {}", recs[0].start_sfen, recs[0].moves.join(" "));
            repeats += usize::from(!games.insert(key));
            compared += 1;
        }
    }
    for (w, mut seqs) in per_worker {
        seqs.sort();
        let expect: Vec<u64> = (0..seqs.len() as u64).collect();
        assert_eq!(seqs, expect, "worker {w}: a shard is missing");
    }
    for (gen, n) in per_gen {
        assert!(
            n <= CAP + WORKERS * PARALLEL * GROUPS,
            "generation {gen}: {n} games, more than {CAP} + the games in flight"
        );
    }
    assert!(
        !games.is_empty(),
        "no game of {LONG} plies or more to compare"
    );
    assert!(
        (repeats as f64) < MOST_REPEATS * compared as f64,
        "{repeats} of {compared} games were played twice"
    );
    names.len()
}

fn setup(name: &str, generations: u64) -> (PathBuf, PathBuf, Child) {
    let root =
        PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    std::fs::create_dir_all(&root).unwrap();
    let cfg = root.join(format!("{name}.toml"));
    std::fs::write(&cfg, config(name, generations)).unwrap();
    let runs = root.join("runs");
    let t = trainer(
        &[
            "train",
            "--config",
            cfg.to_str().unwrap(),
            "--runs-dir",
            runs.to_str().unwrap(),
        ],
        &root.join("train.log"),
    );
    let run = runs.join(name);
    wait_until("the run directory", Duration::from_secs(60), || {
        run.join("config.toml").exists()
    });
    (root, run, t)
}

fn worker(root: &Path, run: &Path, i: usize) -> Child {
    trainer(
        &["selfplay", "--run", run.to_str().unwrap()],
        &root.join(format!("worker{i}.log")),
    )
}

fn reported_games(log: &Path) -> u64 {
    let text = std::fs::read_to_string(log).unwrap();
    let line = text
        .lines()
        .find(|l| l.contains("self-play worker stops"))
        .unwrap_or_else(|| panic!("no summary in {}:\n{text}", log.display()));
    let after = line.split("stops: ").nth(1).unwrap();
    after.split(' ').next().unwrap().parse().unwrap()
}

#[test]
fn three_workers_feed_one_trainer() {
    // No generation cap on the run: it goes on until each worker has stored a game and the
    // trainer has published generation 2. Stopping at a fixed generation let a worker that the
    // others outpaced on a busy machine end with no game stored (the run completed while its
    // first games were still in flight).
    let (root, run, mut t) = setup("workers", 1_000_000);
    let mut ws: Vec<Child> = (0..3).map(|i| worker(&root, &run, i)).collect();
    let ids = || -> HashSet<String> { shard_names(&run).into_iter().map(|x| x.1).collect() };
    wait_until(
        "a game from each worker and generation 2",
        Duration::from_secs(600),
        || ids().len() == 3 && state(&run)["generation"].as_u64().unwrap() >= 2,
    );
    // SIGTERM: the trainer publishes what it trained, the workers store their finished games;
    // each exits 0.
    for pid in std::iter::once(t.id()).chain(ws.iter().map(Child::id)) {
        assert!(Command::new("kill")
            .args(["-TERM", &pid.to_string()])
            .status()
            .unwrap()
            .success());
    }
    let st = wait_exit(&mut t, Duration::from_secs(120), "trainer");
    assert!(
        st.success(),
        "{}",
        std::fs::read_to_string(root.join("train.log")).unwrap()
    );
    for w in ws.iter_mut() {
        assert!(wait_exit(w, Duration::from_secs(60), "worker").success());
    }
    let n = check_store(&run);
    let reported: u64 = (0..3)
        .map(|i| reported_games(&root.join(format!("worker{i}.log"))))
        .sum();
    assert_eq!(reported, n as u64, "workers' counts and the store disagree");
    let s = state(&run);
    assert!(s["generation"].as_u64().unwrap() >= 2, "{s}");
    assert_eq!(s["complete"], false);
    assert_eq!(ids().len(), 3, "three workers, three ids");
    // Generations 0 and 1 had their games before the next network (a later one may have been
    // cut short by the SIGTERM).
    let names = shard_names(&run);
    for gen in 0..2u64 {
        let g = names.iter().filter(|x| x.0 == gen).count() as u64;
        assert!(g >= CAP, "generation {gen}: {g} games, fewer than {CAP}");
    }
    assert!(s["total_games"].as_u64().unwrap() <= n as u64);
    let log = std::fs::read_to_string(root.join("train.log")).unwrap();
    assert!(!log.contains("bad shard"), "{log}");
    let _ = std::fs::remove_dir_all(&root);
}

#[test]
fn sigterm_and_kill9_workers_lose_nothing_finished() {
    let (root, run, mut t) = setup("killworkers", 3);
    let mut ws: Vec<Child> = (0..3).map(|i| worker(&root, &run, i)).collect();
    // A few games, and the first worker past its start (its signal handlers are installed
    // before its self-play threads say they start): SIGTERM before that kills it outright.
    wait_until("a few games", Duration::from_secs(300), || {
        shard_names(&run).len() >= 6
            && std::fs::read_to_string(root.join("worker0.log"))
                .is_ok_and(|l| l.contains("self-play thread"))
    });
    // SIGTERM: finishes cleanly with status 0.
    let pid = ws[0].id().to_string();
    assert!(Command::new("kill")
        .args(["-TERM", &pid])
        .status()
        .unwrap()
        .success());
    let st = wait_exit(&mut ws[0], Duration::from_secs(30), "SIGTERM'd worker");
    assert!(st.success(), "{st:?}");
    let stored_before = reported_games(&root.join("worker0.log"));
    // kill -9: no chance to clean up.
    ws[1].kill().unwrap();
    ws[1].wait().unwrap();
    check_store(&run);
    let st = wait_exit(&mut t, Duration::from_secs(600), "trainer");
    assert!(
        st.success(),
        "{}",
        std::fs::read_to_string(root.join("train.log")).unwrap()
    );
    assert!(wait_exit(&mut ws[2], Duration::from_secs(60), "worker").success());
    check_store(&run);
    // The SIGTERM'd worker's games are all in the store.
    let w0 = shard_names(&run);
    let first_id = {
        let log = std::fs::read_to_string(root.join("worker0.log")).unwrap();
        let l = log
            .lines()
            .find(|l| l.contains("self-play thread"))
            .unwrap()
            .to_string();
        l.split("thread ").nth(1).unwrap()[..16].to_string()
    };
    let kept = w0.iter().filter(|x| x.1 == first_id).count() as u64;
    assert_eq!(kept, stored_before);
    assert_eq!(state(&run)["generation"], 3);
    let log = std::fs::read_to_string(root.join("train.log")).unwrap();
    assert!(!log.contains("bad shard"), "{log}");
    let _ = std::fs::remove_dir_all(&root);
}
