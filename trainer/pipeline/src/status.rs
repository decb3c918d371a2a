//! `trainer status`: a run's progress and its workers, read from the run directory only (it
//! works from any machine that sees the directory, while the run goes on).

use crate::error::Result;
use crate::run::{Run, RunState};
use crate::store;
use crate::worker::{now_seconds, Heartbeat, HEARTBEAT_EVERY};
use std::fmt::Write;
use std::path::Path;

/// A worker whose heartbeat is older than this many heartbeat periods is marked stale.
const STALE_PERIODS: f64 = 3.0;

/// What `trainer status` prints.
pub fn report(dir: &Path) -> Result<String> {
    let run = Run::resume(dir)?;
    let st = run.load_state()?;
    let mut out = String::new();
    write_progress(&mut out, &run, &st)?;
    write_last_evaluation(&mut out, &st);
    write_ladder(&mut out, &st);
    write_workers(&mut out, &heartbeats(&run.dir));
    Ok(out)
}

/// The run line and what is stored and trained.
fn write_progress(w: &mut String, run: &Run, st: &RunState) -> Result<()> {
    let shards = store::list(&run.dir)?;
    let (games, samples) = store::totals(&shards);
    let _ = writeln!(
        w,
        "run {} ({} with {}): generation {} (self-play network {}){}",
        run.cfg.name,
        run.variant.name,
        run.model.name,
        st.generation,
        st.best,
        if st.complete { ", complete" } else { "" }
    );
    let _ = writeln!(
        w,
        "stored: {games} games, {samples} samples in {} shards; trained: {} steps; run time {:.0} s",
        shards.len(),
        st.steps,
        st.seconds
    );
    Ok(())
}

/// The matches of the newest generation report, if any.
fn write_last_evaluation(w: &mut String, st: &RunState) {
    let Some(h) = st.history.last() else {
        return;
    };
    let scores: Vec<String> = h
        .matches
        .iter()
        .map(|m| {
            format!(
                "{} {:.3} (+{} ={} -{}, Elo {:+.0} [{:+.0}, {:+.0}])",
                m.opponent, m.score, m.wins, m.draws, m.losses, m.elo, m.elo_low, m.elo_high
            )
        })
        .collect();
    let _ = writeln!(
        w,
        "last evaluation: generation {}: {}",
        h.generation,
        scores.join("; ")
    );
}

/// The newest ladder placement, if any generation has one.
fn write_ladder(w: &mut String, st: &RunState) {
    let Some((g, l)) = st
        .history
        .iter()
        .rev()
        .find_map(|h| h.ladder.as_ref().map(|l| (h.generation, l)))
    else {
        return;
    };
    let _ = writeln!(
        w,
        "ladder: generation {g} on the {} ladder: Elo {:+.0} [{:+.0}, {:+.0}] from {} games",
        l.name, l.elo, l.low, l.high, l.games
    );
}

/// The worker count and, when there are workers, a table of them.
fn write_workers(w: &mut String, workers: &[Heartbeat]) {
    let _ = writeln!(w, "workers: {}", workers.len());
    if !workers.is_empty() {
        let _ = writeln!(
            w,
            "  {:<16} {:<16} {:>8} {:<12} {:>7} {:>8} {:>10} {:>10}  state",
            "id", "host", "pid", "slurm", "threads", "games", "evals/s", "heartbeat"
        );
    }
    let now = now_seconds();
    for h in workers {
        let age = now - h.time;
        let _ = writeln!(
            w,
            "  {:<16} {:<16} {:>8} {:<12} {:>7} {:>8} {:>10.0} {:>8.0} s  {}",
            h.id,
            h.host,
            h.pid,
            h.slurm.as_deref().unwrap_or("-"),
            h.threads,
            h.games,
            h.evals_per_s,
            age,
            worker_state(h, age)
        );
    }
}

/// `stopped`, `STALE` (no heartbeat for [`STALE_PERIODS`] periods) or `running`.
fn worker_state(h: &Heartbeat, age: f64) -> &'static str {
    if h.stopped {
        "stopped"
    } else if age > STALE_PERIODS * HEARTBEAT_EVERY.as_secs_f64() {
        "STALE"
    } else {
        "running"
    }
}

/// The heartbeats in `workers/` (unreadable ones are left out), newest first.
pub fn heartbeats(dir: &Path) -> Vec<Heartbeat> {
    let mut v: Vec<Heartbeat> = std::fs::read_dir(dir.join("workers"))
        .map(|rd| {
            rd.flatten()
                .filter(|e| e.file_name().to_string_lossy().ends_with(".json"))
                .filter_map(|e| std::fs::read(e.path()).ok())
                .filter_map(|b| serde_json::from_slice(&b).ok())
                .collect()
        })
        .unwrap_or_default();
    v.sort_by(|a: &Heartbeat, b| b.time.total_cmp(&a.time));
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A worker is stale after 30 s without a heartbeat: 29 s is not stale, 31 s is, and a
    /// stopped worker is stopped however old its last heartbeat.
    #[test]
    fn a_worker_is_stale_after_30_seconds_without_a_heartbeat() {
        let root = std::env::temp_dir().join(format!("status-stale-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        std::fs::create_dir_all(&root).unwrap();
        let cfg = root.join("stale.toml");
        std::fs::write(
            &cfg,
            "variant = \"minishogi\"\nmodel = \"b2c16\"\ndevice = \"cpu\"\ngenerations = 1\n\
             steps_per_generation = 1\n",
        )
        .unwrap();
        let run = Run::open(&cfg, &root.join("runs"), false).unwrap();
        let workers = run.dir.join("workers");
        std::fs::create_dir_all(&workers).unwrap();
        let now = now_seconds();
        for (id, age, stopped) in [
            ("00000000000000aa", 29.0, false),
            ("00000000000000bb", 31.0, false),
            ("00000000000000cc", 3600.0, true),
        ] {
            let hb = Heartbeat {
                id: id.into(),
                host: "h".into(),
                pid: 1,
                threads: 1,
                games: 0,
                samples: 0,
                evals_per_s: 0.0,
                time: now - age,
                started: now - 7200.0,
                stopped,
                slurm: None,
                thread_ids: Vec::new(),
            };
            let bytes = serde_json::to_vec(&hb).unwrap();
            std::fs::write(workers.join(format!("{id}.json")), bytes).unwrap();
        }
        // The 29 s heartbeat stays under 30 s as long as the report comes within a second.
        let out = report(&run.dir).unwrap();
        assert!(now_seconds() - now < 1.0, "the report took over a second");
        let state = |id: &str| {
            let line = out.lines().find(|l| l.contains(id)).unwrap_or_else(|| {
                panic!("no line for worker {id}:\n{out}");
            });
            line.split_whitespace().last().unwrap().to_string()
        };
        assert!(out.contains("workers: 3"), "{out}");
        assert_eq!(state("00000000000000aa"), "running", "{out}");
        assert_eq!(state("00000000000000bb"), "STALE", "{out}");
        assert_eq!(state("00000000000000cc"), "stopped", "{out}");
        std::fs::remove_dir_all(&root).unwrap();
    }
}
