//! The self-play worker: threads that play games continuously with the newest published
//! network, switching between moves, and store each finished game as its own shard (through a
//! writer thread each, so that a search never waits for the disk). Any number of workers
//! (threads of `trainer run`, or `trainer selfplay` processes on any machine sharing the run
//! directory) feed one run: each thread has a random 64-bit id that names its shards and seeds
//! its games. `trainer bench selfplay` measures this very path.

use crate::error::{PipelineError, Result};
use crate::metrics::{thread_cpu_seconds, Reporter};
use crate::run::Run;
use crate::store::{self, ShardName, ShardWriter};
use indicatif::ProgressBar;
use model::DeviceExt;
use search::Evaluator;
use selfplay::server::ServerStats;
use selfplay::{
    run_games, Control, GameRecord, InferenceServer, Mode, PlayStats, ServerEvaluator,
    SimulatedDevice,
};
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{mpsc, Arc, Mutex};
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
    /// The figures of the worker's inference server, when it has one.
    pub server: Mutex<Option<Arc<ServerStats>>>,
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

/// Where a worker's networks come from.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Networks {
    /// The run's published models (`trainer run`, `trainer selfplay`).
    Published,
    /// Benchmarks: in place of every published network, a simulated device that answers
    /// every batch after this latency (always behind an inference server).
    Simulated(Duration),
}

/// Runs `threads` self-play threads on the run's published networks until `stop` is set or
/// the run is complete; the games in flight are then dropped. Errors (a failing disk, a model
/// that cannot be loaded) stop every thread and are returned.
pub fn run_workers(
    run: &Run,
    threads: usize,
    stop: &Arc<AtomicBool>,
    reporter: &Reporter,
    stats: &Arc<WorkerStats>,
    moves_bar: Option<&ProgressBar>,
) -> Result<()> {
    let networks = Networks::Published;
    run_workers_with(run, networks, threads, stop, reporter, stats, moves_bar)
}

/// [`run_workers`] with its networks from `networks` (`trainer bench selfplay` plays the
/// production path with a simulated device this way).
pub fn run_workers_with(
    run: &Run,
    networks: Networks,
    threads: usize,
    stop: &Arc<AtomicBool>,
    reporter: &Reporter,
    stats: &Arc<WorkerStats>,
    moves_bar: Option<&ProgressBar>,
) -> Result<()> {
    let errors = Mutex::new(Vec::new());
    let done = AtomicBool::new(false);
    let worker: u64 = rand::random();
    let simulated = networks != Networks::Published;
    let source = Source {
        run,
        networks,
        server: (simulated || run.cfg.selfplay.uses_server(run.device.is_cuda())).then(|| {
            (
                InferenceServer::start(run.cfg.selfplay.server_batch()),
                Mutex::new(None),
            )
        }),
    };
    if let (Some((server, _)), Ok(mut s)) = (&source.server, stats.server.lock()) {
        *s = Some(server.stats.clone());
    }
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
                    reporter.log(&format!("self-play thread {t} stopped: {}", e.chain()));
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
    networks: Networks,
    /// The server and the network it serves now.
    server: Option<(InferenceServer, Mutex<Option<Served>>)>,
}

/// A generation and the handle on its network in the server.
type Served = (u64, ServerEvaluator);

impl Source<'_> {
    /// Network `generation` as loaded on the device (or simulated).
    fn load(&self, generation: u64) -> Result<Box<dyn Evaluator + Send>> {
        let enc = &self.run.encoder;
        Ok(match self.networks {
            Networks::Published => Box::new(self.run.evaluator(generation)?),
            Networks::Simulated(latency) => Box::new(SimulatedDevice::new(
                enc.input_len(),
                enc.policy_len(),
                latency,
            )),
        })
    }

    /// Network `generation` for one thread.
    fn network(&self, generation: u64) -> Result<Box<dyn Evaluator + Send>> {
        let Some((server, current)) = &self.server else {
            return self.load(generation);
        };
        let mut current = current.lock().map_err(|_| PipelineError::Panicked {
            what: "a self-play thread",
        })?;
        if let Some((g, h)) = current.as_ref() {
            if *g == generation {
                return Ok(Box::new(h.clone()));
            }
        }
        let h = server.register(self.load(generation)?);
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
    /// Finished games to the thread's shard writer (None once closed).
    writes: Option<mpsc::Sender<(u64, GameRecord)>>,
    /// What the writer stored: each game's generation and shard, or the error that stopped it.
    written: mpsc::Receiver<Result<(u64, ShardName)>>,
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
    /// Per generation: own games started and not yet stored.
    in_flight: HashMap<u64, u64>,
    /// Per generation: samples of own finished games not yet stored.
    unstored_samples: HashMap<u64, u64>,
    error: Option<PipelineError>,
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

    /// Whether generation `gen` has its games (or this thread has as many games started and
    /// not yet stored as it has slots). A game starts only after a listing taken just then
    /// shows the quota open: the other workers' games are seen only on disk, so a cached count
    /// could let every worker play on past the quota. A generation found full is listed again
    /// only after [`POLL`].
    fn capped_out(&mut self, gen: u64) -> bool {
        let cap = self.run.cfg.games_per_generation as u64;
        if cap == 0 {
            return false;
        }
        let mine = self.in_flight.get(&gen).copied().unwrap_or(0);
        // Finished games still on their way to the disk count as in flight: the others see
        // them only once written, so the games beyond the quota stay within the slots.
        let slots = (self.run.cfg.selfplay.parallel_games * self.source.groups()) as u64;
        if mine >= slots {
            return true;
        }
        // Games past the cap go on while the trainer still lacks the samples its first step
        // needs: short games can fill a generation's quota with fewer (a run would wait for
        // ever).
        let need = self.run.cfg.min_samples as u64;
        let unstored = self.unstored_samples.get(&gen).copied().unwrap_or(0);
        let full = |l: &Listed| l.games + mine >= cap && l.samples + unstored >= need;
        if let Some(l) = self.listed.get(&gen) {
            if full(l) && l.at.elapsed() <= POLL {
                return true;
            }
        }
        match store::games_and_samples_in(&self.run.dir, gen) {
            Ok((games, samples)) => {
                let taken_in = self.run.load_state().map_or(0, |s| s.total_samples);
                let at = Instant::now();
                let samples = samples.saturating_add(taken_in);
                let l = Listed { games, samples, at };
                self.listed.insert(gen, l);
                full(&l)
            }
            Err(e) => {
                self.error = Some(e);
                true
            }
        }
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
                        "self-play keeps network {:?}: network {best} does not load: {}",
                        self.network,
                        e.chain()
                    ));
                }
                None
            }
        }
    }

    fn game_over(&mut self, _: usize, gen: u64, game: GameRecord, stats: &PlayStats) -> bool {
        if let Ok(mut t) = self.stats.threads.lock() {
            t[self.slot] = stats.clone();
        }
        *self.unstored_samples.entry(gen).or_default() += game.num_samples() as u64;
        let sent = self
            .writes
            .as_ref()
            .is_some_and(|w| w.send((gen, game)).is_ok());
        // A writer that stopped has said why.
        self.collect_written();
        if !sent && self.error.is_none() {
            self.error = Some(PipelineError::ShardWriterStopped);
        }
        self.error.is_none()
    }

    fn moved(&mut self) {
        self.stats.moves.fetch_add(1, Ordering::Relaxed);
        if let Some(b) = self.bar {
            b.inc(1);
        }
    }

    fn idle(&mut self) -> bool {
        self.collect_written();
        if self.stop.load(Ordering::Relaxed) || self.error.is_some() {
            return false;
        }
        let t = Instant::now();
        std::thread::sleep(Duration::from_millis(100));
        self.idle += t.elapsed();
        true
    }

    fn stop(&mut self) -> bool {
        self.collect_written();
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
    let enc = &run.encoder;
    let writer = ShardWriter::new(&run.dir, worker, &run.variant.name, enc.policy_len());
    let (writes, games) = mpsc::channel();
    let (stored, written) = mpsc::channel();
    let mut th = Thread {
        run,
        source,
        writes: Some(writes),
        written,
        stop,
        stats,
        slot,
        bar,
        network: None,
        last_poll: Instant::now() - POLL,
        listed: HashMap::new(),
        in_flight: HashMap::new(),
        unstored_samples: HashMap::new(),
        error: None,
        idle: Duration::ZERO,
        reporter,
        unloadable: None,
    };
    // The disk's waits (every shard is synced) stay off the search.
    std::thread::scope(|s| {
        s.spawn(|| write_shards(writer, games, stored, stats));
        let r = th.play(worker);
        th.writes = None;
        th.collect_all_written();
        r
    })?;
    match th.error {
        Some(e) => Err(e),
        None => Ok(()),
    }
}

/// A search thread's shard writer: stores the games it is sent, in order, and reports each
/// shard or the error that stops it; its CPU time counts as self-play's.
fn write_shards(
    mut writer: ShardWriter,
    games: mpsc::Receiver<(u64, GameRecord)>,
    stored: mpsc::Sender<Result<(u64, ShardName)>>,
    stats: &WorkerStats,
) {
    let cpu0 = thread_cpu_seconds();
    for (gen, game) in games {
        let r = writer.write(gen, &game).map(|name| (gen, name));
        let failed = r.is_err();
        if stored.send(r).is_err() || failed {
            break;
        }
    }
    *stats.cpu_seconds.lock().expect("cpu") += thread_cpu_seconds() - cpu0;
}

impl Thread<'_> {
    /// Plays from the first network that loads until the worker stops; the thread's figures go
    /// to the worker's statistics.
    fn play(&mut self, worker: u64) -> Result<()> {
        let cpu0 = thread_cpu_seconds();
        let Some((generation, net)) = self.first_network() else {
            return Ok(());
        };
        self.network = Some(generation);
        self.last_poll = Instant::now();
        self.reporter.log(&format!(
            "self-play thread {worker:016x} starts with network {generation}"
        ));
        let run = self.run;
        let cfg = selfplay::SelfPlayConfig {
            pipeline: self.source.groups(),
            ..run.cfg.selfplay.clone()
        };
        let evals: Vec<Box<dyn Evaluator>> = vec![net];
        let seed = worker ^ run.cfg.seed.rotate_left(17);
        let search = std::slice::from_ref(&run.cfg.search);
        let r = run_games(
            &[&run.encoder],
            evals,
            search,
            &cfg,
            Mode::SelfPlay,
            seed,
            self,
        );
        *self.stats.cpu_seconds.lock().expect("cpu") += thread_cpu_seconds() - cpu0;
        *self.stats.idle_seconds.lock().expect("idle") += self.idle.as_secs_f64();
        let r = r.map_err(|source| PipelineError::Play { source })?;
        // The thread's final figures: its games in flight and its timings included.
        if let Ok(mut t) = self.stats.threads.lock() {
            t[self.slot] = r;
        }
        Ok(())
    }

    /// Takes in what the writer has stored so far.
    fn collect_written(&mut self) {
        while let Ok(r) = self.written.try_recv() {
            self.stored(r);
        }
    }

    /// Waits for the writer to store every game sent (its channel closed) and takes it in.
    fn collect_all_written(&mut self) {
        while let Ok(r) = self.written.recv() {
            self.stored(r);
        }
    }

    /// Counts a stored game (or keeps the writer's error).
    fn stored(&mut self, r: Result<(u64, ShardName)>) {
        let (gen, name) = match r {
            Ok(x) => x,
            Err(e) => {
                self.error.get_or_insert(e);
                return;
            }
        };
        if let Some(n) = self.in_flight.get_mut(&gen) {
            *n = n.saturating_sub(1);
        }
        if let Some(n) = self.unstored_samples.get_mut(&gen) {
            *n = n.saturating_sub(name.samples);
        }
        if let Some(l) = self.listed.get_mut(&gen) {
            l.games += 1;
            l.samples = l.samples.saturating_add(name.samples);
        }
        self.stats.games.fetch_add(1, Ordering::Relaxed);
        self.stats
            .samples
            .fetch_add(name.samples, Ordering::Relaxed);
    }

    /// The first network: the published one, else the newest earlier one that loads (a
    /// damaged file is named in the log and self-play goes on; the trainer publishes the next
    /// one); waits for one. None when the worker stops or the run is complete first.
    fn first_network(&mut self) -> Option<(u64, Box<dyn Evaluator + Send>)> {
        loop {
            if self.stop.load(Ordering::Relaxed) {
                return None;
            }
            match self.published() {
                Some((_, true)) => return None,
                Some((best, false)) => {
                    for g in (0..=best).rev() {
                        match self.source.network(g) {
                            Ok(ev) => {
                                self.unloadable = (g != best).then_some(best);
                                return Some((g, ev));
                            }
                            Err(e) => self.reporter.log(&format!(
                                "self-play: network {g} does not load: {}",
                                e.chain()
                            )),
                        }
                    }
                }
                None => {}
            }
            std::thread::sleep(POLL);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::NoMetrics;

    /// A stop ends every thread of a worker promptly, its games in flight dropped, and the
    /// threads' figures count what they played.
    #[test]
    fn a_stop_ends_every_thread() {
        let root = std::env::temp_dir().join(format!("worker-stop-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        std::fs::create_dir_all(&root).unwrap();
        let cfg = root.join("stop.toml");
        std::fs::write(
            &cfg,
            "variant = \"minishogi\"\nmodel = \"b2c16\"\ndevice = \"cpu\"\ngenerations = 1\n\
             steps_per_generation = 1\n[selfplay]\nparallel_games = 4\nmax_plies = 40\n",
        )
        .unwrap();
        let run = Run::open(&cfg, &root.join("runs"), false).unwrap();
        let stop = Arc::new(AtomicBool::new(false));
        let stats = Arc::new(WorkerStats::default());
        let reporter = Reporter::new(None, Box::new(NoMetrics));
        let networks = Networks::Simulated(Duration::from_millis(2));
        let t = Instant::now();
        std::thread::scope(|s| {
            s.spawn(|| {
                std::thread::sleep(Duration::from_millis(400));
                stop.store(true, Ordering::SeqCst);
            });
            run_workers_with(&run, networks, 2, &stop, &reporter, &stats, None).unwrap();
        });
        assert!(t.elapsed() < Duration::from_secs(3), "{:?}", t.elapsed());
        let merged = stats.merged();
        assert!(merged.evals > 0 && merged.seconds > 0.0, "{merged:?}");
        assert_eq!(stats.threads.lock().unwrap().len(), 2);
        assert!(stats.server.lock().unwrap().is_some());
        std::fs::remove_dir_all(&root).unwrap();
    }
}
