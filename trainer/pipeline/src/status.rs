//! `trainer status`: a run's progress and its workers, read from the run directory only (it
//! works from any machine that sees the directory, while the run goes on).

use crate::run::Run;
use crate::store;
use crate::worker::{now_seconds, Heartbeat, HEARTBEAT_EVERY};
use anyhow::Result;
use std::fmt::Write;
use std::path::Path;

/// A worker whose heartbeat is older than this many heartbeat periods is marked stale.
const STALE_PERIODS: f64 = 3.0;

/// What `trainer status` prints.
pub fn report(dir: &Path) -> Result<String> {
    let run = Run::resume(dir)?;
    let st = run.load_state()?;
    let shards = store::list(&run.dir)?;
    let (games, samples) = store::totals(&shards);
    let mut out = String::new();
    let w = &mut out;
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
    if let Some(h) = st.history.last() {
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
    if let Some((g, l)) = st
        .history
        .iter()
        .rev()
        .find_map(|h| h.ladder.as_ref().map(|l| (h.generation, l)))
    {
        let _ = writeln!(
            w,
            "ladder: generation {g} on the {} ladder: Elo {:+.0} [{:+.0}, {:+.0}] from {} games",
            l.name, l.elo, l.low, l.high, l.games
        );
    }
    let workers = heartbeats(&run.dir);
    let _ = writeln!(w, "workers: {}", workers.len());
    if !workers.is_empty() {
        let _ = writeln!(
            w,
            "  {:<16} {:<16} {:>8} {:<12} {:>7} {:>8} {:>10} {:>10}  state",
            "id", "host", "pid", "slurm", "threads", "games", "evals/s", "heartbeat"
        );
    }
    let now = now_seconds();
    for h in &workers {
        let age = now - h.time;
        let state = if h.stopped {
            "stopped"
        } else if age > STALE_PERIODS * HEARTBEAT_EVERY.as_secs_f64() {
            "STALE"
        } else {
            "running"
        };
        let _ = writeln!(
            w,
            "  {:<16} {:<16} {:>8} {:<12} {:>7} {:>8} {:>10.0} {:>8.0} s  {state}",
            h.id,
            h.host,
            h.pid,
            h.slurm.as_deref().unwrap_or("-"),
            h.threads,
            h.games,
            h.evals_per_s,
            age
        );
    }
    Ok(out)
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
