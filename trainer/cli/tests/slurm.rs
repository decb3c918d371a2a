//! A real Slurm cluster: one node on this machine (scripts/slurm/local-cluster.sh), the
//! trainer and a 3-task worker array submitted by scripts/slurm/submit.sh on one run directory.
//! One worker task is cancelled mid-run; nothing it finished is lost, every game is distinct
//! and counted, `trainer status` shows the workers, and the run completes. Needs root and
//! Debian's slurm-wlm and munge (scripts/test.sh installs them); skipped otherwise.

mod common;
use common::wait_until;

use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

const CAP: u64 = 12;
/// Games at least this long are compared. A young network may play the same game again by
/// itself (the same mate, no noise in fast searches), so a few repeats are allowed; two workers
/// replaying one seed would repeat a third of the games or more.
const LONG: usize = 12;
const MOST_REPEATS: f64 = 0.2;

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn have(bin: &str) -> bool {
    Command::new("sh")
        .args(["-c", &format!("command -v {bin}")])
        .output()
        .is_ok_and(|o| o.status.success())
}

struct Cluster {
    dir: PathBuf,
    conf: String,
}

impl Cluster {
    fn start(dir: &Path) -> Cluster {
        let o = Command::new(repo().join("scripts/slurm/local-cluster.sh"))
            .arg("start")
            .arg(dir)
            .output()
            .unwrap();
        let out = String::from_utf8_lossy(&o.stdout).into_owned();
        assert!(
            o.status.success(),
            "cluster did not start: {out}{}",
            String::from_utf8_lossy(&o.stderr)
        );
        let conf = out
            .lines()
            .find_map(|l| l.strip_prefix("export SLURM_CONF="))
            .expect("SLURM_CONF line")
            .to_string();
        Cluster {
            dir: dir.to_path_buf(),
            conf,
        }
    }

    fn cmd(&self, prog: &str) -> Command {
        let mut c = Command::new(prog);
        c.env("SLURM_CONF", &self.conf);
        c
    }

    /// Whether a job (or array task) is still pending or running.
    fn queued(&self, job: &str) -> bool {
        self.cmd("squeue")
            .args(["-h", "-j", job])
            .output()
            .is_ok_and(|o| o.status.success() && !o.stdout.is_empty())
    }

    fn out(&self, prog: &str, args: &[&str]) -> String {
        let o = self.cmd(prog).args(args).output().unwrap();
        assert!(
            o.status.success(),
            "{prog} {args:?}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        String::from_utf8_lossy(&o.stdout).into_owned()
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        let _ = self.cmd("scancel").args(["--user", "root"]).status();
        let _ = Command::new(repo().join("scripts/slurm/local-cluster.sh"))
            .arg("stop")
            .arg(&self.dir)
            .status();
    }
}

/// Shards stored by the worker process of a Slurm array task (its heartbeat names its threads).
fn shards_of_task(run: &Path, task: &str) -> usize {
    let Ok(rd) = std::fs::read_dir(run.join("workers")) else {
        return 0;
    };
    let ids: Vec<String> = rd
        .flatten()
        .filter_map(|e| std::fs::read_to_string(e.path()).ok())
        .filter_map(|t| serde_json::from_str::<serde_json::Value>(&t).ok())
        .filter(|h| h["slurm"] == task)
        .flat_map(|h| {
            h["thread_ids"]
                .as_array()
                .map(|a| {
                    a.iter()
                        .filter_map(|i| i.as_str().map(str::to_string))
                        .collect()
                })
                .unwrap_or_else(Vec::new)
        })
        .collect();
    let Ok(gens) = std::fs::read_dir(run.join("samples")) else {
        return 0;
    };
    gens.flatten()
        .filter_map(|g| std::fs::read_dir(g.path()).ok())
        .flat_map(|rd| rd.flatten())
        .filter(|f| {
            let n = f.file_name().to_string_lossy().into_owned();
            ids.iter().any(|id| n.starts_with(id.as_str()))
        })
        .count()
}

fn state(run: &Path) -> serde_json::Value {
    std::fs::read_to_string(run.join("state.json"))
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok())
        .unwrap_or(serde_json::Value::Null)
}

#[test]
fn trainer_and_worker_array_on_a_one_node_cluster() {
    let is_root = Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "0");
    let missing: Vec<&str> = ["munged", "slurmctld", "slurmd", "sbatch"]
        .into_iter()
        .filter(|b| !have(b))
        .collect();
    if !is_root || !missing.is_empty() {
        common::skip(&format!(
            "the Slurm test needs root and slurm-wlm + munge (root: {is_root}, missing: {missing:?})"
        ));
        return;
    }
    let t0 = Instant::now();
    let root =
        PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("slurm-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    std::fs::create_dir_all(&root).unwrap();
    let cluster = Cluster::start(&root.join("cluster"));
    let cfg = root.join("slurmtest.toml");
    std::fs::write(
        &cfg,
        format!(
            r#"
variant = "minishogi"
model = "b2c16"
seed = 3
device = "cpu"
generations = 4
games_per_generation = {CAP}
steps_per_generation = 20
# One sample is enough to start: with more, short games could leave generation 0 below it after
# its quota, and workers rightly play on past the cap (the count below would not hold).
min_samples = 1
[selfplay]
parallel_games = 4
threads = 1
full_simulations = 8
fast_simulations = 4
max_plies = 50
[training]
batch_size = 32
[replay]
min_window = 500
max_window = 5000
[evaluation]
games = 0
"#
        ),
    )
    .unwrap();
    let runs = root.join("runs");
    let o = cluster
        .cmd("bash")
        .arg(repo().join("scripts/slurm/submit.sh"))
        .arg(&cfg)
        .args(["--workers", "3", "--runs-dir"])
        .arg(&runs)
        .arg("--binary")
        .arg(env!("CARGO_BIN_EXE_trainer"))
        .output()
        .unwrap();
    let out = String::from_utf8_lossy(&o.stdout).into_owned();
    assert!(
        o.status.success(),
        "submit.sh: {out}{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let id = |prefix: &str| -> String {
        out.lines()
            .find_map(|l| l.strip_prefix(prefix))
            .unwrap_or_else(|| panic!("no {prefix:?} in {out}"))
            .split_whitespace()
            .next()
            .unwrap()
            .to_string()
    };
    let (trainer_job, array_job) = (id("trainer job: "), id("worker array: "));
    let run = runs.join("slurmtest");

    // Task 1 has stored games of its own; cancel it while the run goes on.
    let task = format!("{array_job}_1");
    wait_until("games of task 1", Duration::from_secs(600), || {
        shards_of_task(&run, &task) > 0
    });
    assert_ne!(
        state(&run)["complete"],
        true,
        "the run ended before the cancel"
    );
    let cancelled_had = shards_of_task(&run, &task);
    cluster.out("scancel", &[&task]);
    wait_until(
        "the cancelled task to end",
        Duration::from_secs(120),
        || !cluster.queued(&task),
    );
    // The run completes with the two other workers.
    wait_until("the trainer job to end", Duration::from_secs(900), || {
        !cluster.queued(&trainer_job)
    });
    let s = state(&run);
    assert_eq!(s["generation"], 4, "{s}");
    assert_eq!(s["complete"], true, "{s}");
    wait_until("the workers to stop", Duration::from_secs(120), || {
        !cluster.queued(&array_job)
    });

    // Every stored game is distinct; each worker's shards are numbered without a gap.
    let mut seqs: BTreeMap<String, Vec<u64>> = BTreeMap::new();
    let mut games = HashSet::new();
    let (mut repeats, mut compared) = (0usize, 0usize);
    let mut per_gen: BTreeMap<u64, u64> = BTreeMap::new();
    for g in std::fs::read_dir(run.join("samples")).unwrap().flatten() {
        let gen: u64 = g.file_name().to_string_lossy().parse().unwrap();
        for f in std::fs::read_dir(g.path()).unwrap().flatten() {
            let name = f.file_name().to_string_lossy().into_owned();
            assert!(!name.starts_with(".tmp"), "leftover {name}");
            let parts: Vec<&str> = name.split('-').collect();
            seqs.entry(parts[0].to_string())
                .or_default()
                .push(parts[1].parse().unwrap());
            let (_, recs) = selfplay::read_shard(&f.path()).unwrap();
            // Short games may coincide by chance (a young network mates the same way); two
            // workers replaying one seed would repeat long games too.
            if recs[0].moves.len() >= LONG {
                let key = format!("{} {}", recs[0].start_sfen, recs[0].moves.join(" "));
                repeats += usize::from(!games.insert(key));
                compared += 1;
            }
            *per_gen.entry(gen).or_default() += 1;
        }
    }
    for (w, mut v) in seqs.clone() {
        v.sort();
        assert_eq!(
            v,
            (0..v.len() as u64).collect::<Vec<_>>(),
            "worker {w} lost a shard"
        );
    }
    // The cancelled task's games are all still there (a worker that Slurm started late may
    // have stored none: the run can finish first).
    assert!(shards_of_task(&run, &task) >= cancelled_had);
    assert!(seqs.len() >= 2, "shards of {} workers", seqs.len());
    for gen in 0..4u64 {
        let n = per_gen.get(&gen).copied().unwrap_or(0);
        assert!(
            (CAP..=CAP + 3 * 4).contains(&n),
            "generation {gen}: {n} games"
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
    let stored: u64 = per_gen.values().sum();
    assert!(s["total_games"].as_u64().unwrap() <= stored);

    // `trainer status` shows the three workers, all stopped now.
    let o = Command::new(env!("CARGO_BIN_EXE_trainer"))
        .args(["status", "--run"])
        .arg(&run)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&o.stdout).into_owned();
    assert!(o.status.success(), "{text}");
    assert!(text.contains("workers: 3"), "{text}");
    assert_eq!(text.matches("stopped").count(), 3, "{text}");
    assert!(text.contains(&format!("{array_job}_1")), "{text}");
    eprintln!("slurm test: {:.0} s", t0.elapsed().as_secs_f64());
    drop(cluster);
    let _ = std::fs::remove_dir_all(&root);
}
