//! The self-play worker: threads that play games continuously with the newest published
//! network, switching between moves, and store each finished game as its own shard. Any number
//! of workers (threads of `trainer run`, or `trainer selfplay` processes on any machine sharing
//! the run directory) feed one run: each thread has a random 64-bit id that names its shards
//! and seeds its games.

use crate::metrics::{thread_cpu_seconds, Reporter};
use crate::run::Run;
use crate::store::{self, ShardWriter};
use anyhow::Result;
use indicatif::ProgressBar;
use search::Evaluator;
use selfplay::{run_games, Control, GameRecord, InferenceServer, Mode, PlayStats, ServerEvaluator};
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// How often a worker looks for a new network (and, in capped runs, recounts the games).
const POLL: Duration = Duration::from_millis(500);

/// Figures of a worker's threads, read by the trainer's log and the busy report.
#[derive(Default)]
pub struct WorkerStats {
    /// Per thread: the running statistics of its games.
    pub threads: Mutex<Vec<PlayStats>>,
    /// Moves played (all threads).
    pub moves: AtomicU64,
    /// Games stored (all threads).
    pub games: AtomicU64,
    /// Samples stored (all threads).
    pub samples: AtomicU64,
    /// CPU seconds of finished threads.
    pub cpu_seconds: Mutex<f64>,
    /// Seconds threads spent waiting (capped runs, or no network yet).
    pub idle_seconds: Mutex<f64>,
    /// The ids of the threads (they name the shards).
    pub thread_ids: Mutex<Vec<u64>>,
}

impl WorkerStats {
    /// The statistics of all threads merged.
    pub fn merged(&self) -> PlayStats {
        let mut all = PlayStats::default();
        if let Ok(t) = self.threads.lock() {
            for s in t.iter() {
                all.merge(s);
            }
        }
        all
    }
}

/// Runs `threads` self-play threads until `stop` is set or the run is complete; the games in
/// flight are then dropped. Errors (a failing disk, a model that cannot be loaded) stop every
/// thread and are returned.
pub fn run_workers(
    run: &Run,
    threads: usize,
    stop: &Arc<AtomicBool>,
    reporter: &Reporter,
    stats: &Arc<WorkerStats>,
    moves_bar: Option<&ProgressBar>,
) -> Result<()> {
    let errors = Mutex::new(Vec::new());
    let done = AtomicBool::new(false);
    let worker: u64 = rand::random();
    let source = Source {
        run,
        server: run.cfg.selfplay.uses_server(run.device.is_cuda()).then(|| {
            (
                InferenceServer::start(run.cfg.selfplay.server_batch()),
                Mutex::new(None),
            )
        }),
    };
    std::thread::scope(|scope| {
        let done = &done;
        scope.spawn(move || heartbeats(run, worker, threads, stats, done));
        let mut players = Vec::new();
        for t in 0..threads.max(1) {
            let errors = &errors;
            let source = &source;
            players.push(scope.spawn(move || {
                let r = play_thread(source, t, stop, reporter, stats, moves_bar);
                if let Err(e) = r {
                    reporter.log(&format!("self-play thread {t} stopped: {e:#}"));
                    // One failing thread stops the worker: its disk or network is the same.
                    stop.store(true, Ordering::SeqCst);
                    errors.lock().expect("errors").push(e);
                }
            }));
        }
        for p in players {
            let _ = p.join();
        }
        done.store(true, Ordering::SeqCst);
    });
    match errors.into_inner().expect("errors").into_iter().next() {
        Some(e) => Err(e),
        None => Ok(()),
    }
}

/// Where a worker's threads get their networks: each its own copy, or handles on the worker's
/// inference server (one load per network, shared by all threads).
pub struct Source<'a> {
    run: &'a Run,
    /// The server and the network it serves now.
    server: Option<(InferenceServer, Mutex<Option<Served>>)>,
}

/// A generation and the handle on its network in the server.
type Served = (u64, ServerEvaluator);

impl Source<'_> {
    /// Network `generation` for one thread.
    fn network(&self, generation: u64) -> Result<Box<dyn Evaluator + Send>> {
        let Some((server, current)) = &self.server else {
            return Ok(Box::new(self.run.evaluator(generation)?));
        };
        let mut current = current
            .lock()
            .map_err(|_| anyhow::anyhow!("a self-play thread panicked"))?;
        if let Some((g, h)) = current.as_ref() {
            if *g == generation {
                return Ok(Box::new(h.clone()));
            }
        }
        let h = server.register(Box::new(self.run.evaluator(generation)?));
        *current = Some((generation, h.clone()));
        Ok(Box::new(h))
    }

    /// Groups of games per thread.
    fn groups(&self) -> usize {
        self.run.cfg.selfplay.groups(self.server.is_some())
    }
}

/// How often a worker writes its heartbeat file.
pub const HEARTBEAT_EVERY: Duration = Duration::from_secs(10);

/// `workers/<id>.json`: what a worker process is doing, rewritten atomically every
/// [`HEARTBEAT_EVERY`] (and when it stops), for `trainer status`.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct Heartbeat {
    /// The worker process's random id (its threads name shards with their own ids).
    pub id: String,
    /// Host name.
    pub host: String,
    /// Process id on that host.
    pub pid: u32,
    /// Self-play threads.
    pub threads: usize,
    /// Games stored.
    pub games: u64,
    /// Samples stored.
    pub samples: u64,
    /// Network evaluations per second since the worker started.
    pub evals_per_s: f64,
    /// Seconds since the Unix epoch when written.
    pub time: f64,
    /// Seconds since the Unix epoch when the worker started.
    pub started: f64,
    /// Whether the worker has stopped.
    pub stopped: bool,
    /// Slurm job and task ids, when run under Slurm.
    #[serde(default)]
    pub slurm: Option<String>,
    /// The ids of its threads, which name its shards.
    #[serde(default)]
    pub thread_ids: Vec<String>,
}

/// Seconds since the Unix epoch.
pub fn now_seconds() -> f64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64())
}

/// This machine's host name.
pub fn host_name() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|s| s.trim().to_string())
        .ok()
        .or_else(|| std::env::var("HOSTNAME").ok())
        .unwrap_or_else(|| "unknown".into())
}

fn heartbeats(run: &Run, worker: u64, threads: usize, stats: &WorkerStats, done: &AtomicBool) {
    let started = now_seconds();
    // An array task as `<array job>_<task>`, as squeue and scancel name it.
    let slurm = match (
        std::env::var("SLURM_ARRAY_JOB_ID"),
        std::env::var("SLURM_ARRAY_TASK_ID"),
        std::env::var("SLURM_JOB_ID"),
    ) {
        (Ok(a), Ok(t), _) => Some(format!("{a}_{t}")),
        (_, _, Ok(j)) => Some(j),
        _ => None,
    };
    let dir = run.dir.join("workers");
    let path = dir.join(format!("{worker:016x}.json"));
    let mut last = Instant::now() - HEARTBEAT_EVERY;
    let mut written_ids = 0;
    loop {
        let stopped = done.load(Ordering::SeqCst);
        let ids: Vec<String> = stats
            .thread_ids
            .lock()
            .map(|v| v.iter().map(|i| format!("{i:016x}")).collect())
            .unwrap_or_default();
        // Also at once when a thread starts, so that its shards can be told apart early.
        if stopped || last.elapsed() >= HEARTBEAT_EVERY || ids.len() != written_ids {
            written_ids = ids.len();
            last = Instant::now();
            let now = now_seconds();
            let hb = Heartbeat {
                id: format!("{worker:016x}"),
                host: host_name(),
                pid: std::process::id(),
                threads,
                games: stats.games.load(Ordering::Relaxed),
                samples: stats.samples.load(Ordering::Relaxed),
                evals_per_s: stats.merged().evals as f64 / (now - started).max(1e-9),
                time: now,
                started,
                stopped,
                slurm: slurm.clone(),
                thread_ids: ids,
            };
            // A heartbeat is best effort: a failing disk stops the players, not this.
            if let Ok(bytes) = serde_json::to_vec_pretty(&hb) {
                let _ = std::fs::create_dir_all(&dir);
                let _ = model::write_atomic(&path, &bytes);
            }
        }
        if stopped {
            return;
        }
        std::thread::sleep(Duration::from_millis(200));
    }
}

struct Thread<'a> {
    run: &'a Run,
    source: &'a Source<'a>,
    writer: ShardWriter,
    stop: &'a AtomicBool,
    stats: &'a WorkerStats,
    slot: usize,
    bar: Option<&'a ProgressBar>,
    /// Generation of the network searches start with now.
    network: Option<u64>,
    last_poll: Instant,
    /// Capped runs: per generation, the listed games and samples (samples of the run's
    /// trained generations included), when listed, and own games since.
    listed: HashMap<u64, Listed>,
    in_flight: HashMap<u64, u64>,
    error: Option<anyhow::Error>,
    idle: Duration,
    reporter: &'a Reporter,
    /// A published network that failed to load (reported once).
    unloadable: Option<u64>,
}

/// What a capped run's listing found for one generation.
#[derive(Clone, Copy)]
struct Listed {
    games: u64,
    /// The generation's samples plus those the trainer had already taken in.
    samples: u64,
    at: Instant,
}

impl Thread<'_> {
    /// The network generation self-play should use, from state.json.
    fn published(&self) -> Option<(u64, bool)> {
        let s = self.run.load_state().ok()?;
        Some((s.best, s.complete))
    }

    fn capped_out(&mut self, gen: u64) -> bool {
        let cap = self.run.cfg.games_per_generation as u64;
        if cap == 0 {
            return false;
        }
        let mine = self.in_flight.get(&gen).copied().unwrap_or(0);
        let slots = (self.run.cfg.selfplay.parallel_games * self.source.groups()) as u64;
        let stale = match self.listed.get(&gen) {
            Some(l) => l.at.elapsed() > POLL || l.games + mine + slots >= cap,
            None => true,
        };
        if stale {
            match store::games_and_samples_in(&self.run.dir, gen) {
                Ok((games, samples)) => {
                    let taken_in = self.run.load_state().map_or(0, |s| s.total_samples);
                    let at = Instant::now();
                    let samples = samples.saturating_add(taken_in);
                    self.listed.insert(gen, Listed { games, samples, at });
                }
                Err(e) => {
                    self.error = Some(e);
                    return true;
                }
            }
        }
        // Games past the cap go on while the trainer still lacks the samples its first step
        // needs: short games can fill a generation's quota with fewer (a run would wait for
        // ever).
        let need = self.run.cfg.min_samples as u64;
        self.listed
            .get(&gen)
            .is_some_and(|l| l.games + mine >= cap && l.samples >= need)
    }
}

impl<'e> Control<'e> for Thread<'_> {
    fn start_game(&mut self) -> Option<u64> {
        if self.stop.load(Ordering::Relaxed) || self.error.is_some() {
            return None;
        }
        let gen = self.network?;
        if self.capped_out(gen) {
            return None;
        }
        *self.in_flight.entry(gen).or_default() += 1;
        Some(gen)
    }

    fn new_network(&mut self) -> Option<Box<dyn Evaluator + 'e>> {
        if self.last_poll.elapsed() < POLL {
            return None;
        }
        self.last_poll = Instant::now();
        let (best, complete) = self.published()?;
        if complete {
            self.stop.store(true, Ordering::SeqCst);
            return None;
        }
        if self.network == Some(best) {
            return None;
        }
        match self.source.network(best) {
            Ok(ev) => {
                self.network = Some(best);
                Some(ev)
            }
            // Retried at the next poll (a network still being copied onto a shared disk, say);
            // said once per network.
            Err(e) => {
                if self.unloadable != Some(best) {
                    self.unloadable = Some(best);
                    self.reporter.log(&format!(
                        "self-play keeps network {:?}: network {best} does not load: {e:#}",
                        self.network
                    ));
                }
                None
            }
        }
    }

    fn game_over(&mut self, _: usize, gen: u64, game: GameRecord, stats: &PlayStats) -> bool {
        if let Some(n) = self.in_flight.get_mut(&gen) {
            *n = n.saturating_sub(1);
        }
        match self.writer.write(gen, &game) {
            Ok(name) => {
                if let Some(l) = self.listed.get_mut(&gen) {
                    l.games += 1;
                    l.samples = l.samples.saturating_add(name.samples);
                }
                self.stats.games.fetch_add(1, Ordering::Relaxed);
                self.stats
                    .samples
                    .fetch_add(name.samples, Ordering::Relaxed);
                if let Ok(mut t) = self.stats.threads.lock() {
                    t[self.slot] = stats.clone();
                }
                true
            }
            Err(e) => {
                self.error = Some(e);
                false
            }
        }
    }

    fn moved(&mut self) {
        self.stats.moves.fetch_add(1, Ordering::Relaxed);
        if let Some(b) = self.bar {
            b.inc(1);
        }
    }

    fn idle(&mut self) -> bool {
        if self.stop.load(Ordering::Relaxed) || self.error.is_some() {
            return false;
        }
        let t = Instant::now();
        std::thread::sleep(Duration::from_millis(100));
        self.idle += t.elapsed();
        true
    }

    fn stop(&mut self) -> bool {
        self.stop.load(Ordering::Relaxed) || self.error.is_some()
    }
}

fn play_thread(
    source: &Source,
    slot: usize,
    stop: &AtomicBool,
    reporter: &Reporter,
    stats: &WorkerStats,
    bar: Option<&ProgressBar>,
) -> Result<()> {
    let worker: u64 = rand::random();
    if let Ok(mut ids) = stats.thread_ids.lock() {
        ids.push(worker);
    }
    if let Ok(mut t) = stats.threads.lock() {
        if t.len() <= slot {
            t.resize(slot + 1, PlayStats::default());
        }
    }
    let run = source.run;
    let cpu0 = thread_cpu_seconds();
    let mut th = Thread {
        run,
        source,
        writer: ShardWriter::new(
            &run.dir,
            worker,
            &run.variant.name,
            run.encoder.policy_len(),
        ),
        stop,
        stats,
        slot,
        bar,
        network: None,
        last_poll: Instant::now() - POLL,
        listed: HashMap::new(),
        in_flight: HashMap::new(),
        error: None,
        idle: Duration::ZERO,
        reporter,
        unloadable: None,
    };
    // The first network: the published one, else the newest earlier one that loads (a damaged
    // file is named in the log and self-play goes on; the trainer publishes the next one).
    let first = loop {
        if stop.load(Ordering::Relaxed) {
            return Ok(());
        }
        match th.published() {
            Some((_, true)) => return Ok(()),
            Some((best, false)) => {
                let mut found = None;
                for g in (0..=best).rev() {
                    match source.network(g) {
                        Ok(ev) => {
                            found = Some((g, ev));
                            break;
                        }
                        Err(e) => {
                            reporter.log(&format!("self-play: network {g} does not load: {e:#}"))
                        }
                    }
                }
                if let Some(f) = found {
                    th.unloadable = (f.0 != best).then_some(best);
                    break f;
                }
            }
            None => {}
        }
        std::thread::sleep(POLL);
    };
    th.network = Some(first.0);
    th.last_poll = Instant::now();
    reporter.log(&format!(
        "self-play thread {worker:016x} starts with network {}",
        first.0
    ));
    let evals: Vec<Box<dyn Evaluator>> = vec![first.1];
    let cfg = selfplay::SelfPlayConfig {
        pipeline: source.groups(),
        ..run.cfg.selfplay.clone()
    };
    let r = run_games(
        &run.encoder,
        evals,
        std::slice::from_ref(&run.cfg.search),
        &cfg,
        Mode::SelfPlay,
        worker ^ run.cfg.seed.rotate_left(17),
        &mut th,
    );
    *stats.cpu_seconds.lock().expect("cpu") += thread_cpu_seconds() - cpu0;
    *stats.idle_seconds.lock().expect("idle") += th.idle.as_secs_f64();
    if let Some(e) = th.error {
        return Err(e);
    }
    r.map_err(|e| anyhow::anyhow!("self-play: {e}"))?;
    Ok(())
}
