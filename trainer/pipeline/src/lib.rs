//! The training pipeline as a library: the run config, the run directory and its state, the
//! sample store, the self-play worker, the trainer, the evaluator and the run's metrics.
//!
//! Three roles share one run directory: self-play workers (any number, threads or processes
//! on any machine with the directory), one trainer and one evaluator (threads of the trainer's
//! process). [`run_all`] runs them together (`trainer run`), [`run_trainer`] the trainer and
//! evaluator (`trainer train`), [`run_selfplay`] a worker (`trainer selfplay`). Self-play never
//! waits for training: games continue across generations and each search picks up a newly
//! published network between moves.

pub mod bench;
pub mod check;
pub mod config;
pub mod error;
pub mod eval;
pub mod export;
pub mod fsfdata;
pub mod ladder;
pub mod metrics;
pub mod networks;
pub mod nnue;
pub mod report;
pub mod run;
pub mod status;
pub mod store;
pub mod train;
pub mod worker;

pub use config::{AnchorConfig, EvalConfig, ReplayConfig, RunConfig};
pub use error::{IoOp, KeyError, PipelineError, Result};
pub use metrics::{Metrics, Reporter};
pub use networks::ModelOpener;
pub use run::{load_variant, GenerationReport, MatchReport, Run, RunState};
pub use worker::WorkerStats;

use indicatif::ProgressBar;
use model::DeviceExt;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

/// The state of a run shared by the threads of the trainer's process: every change is saved
/// to state.json at once (atomically).
pub struct Shared {
    run: Run,
    state: Mutex<RunState>,
    /// Set to stop every role of the process (a signal, an error, the end of the run).
    pub stop: Arc<AtomicBool>,
}

impl Shared {
    /// Loads the state of `run`.
    pub fn new(run: &Run, stop: Arc<AtomicBool>) -> Result<Shared> {
        Ok(Shared {
            state: Mutex::new(run.load_state()?),
            run: run.clone(),
            stop,
        })
    }

    /// A copy of the state.
    pub fn get(&self) -> RunState {
        self.state.lock().expect("state lock").clone()
    }

    /// A complete run whose config was edited to allow more generations or time goes on.
    pub fn reopen_if_extended(&self) -> Result<()> {
        let s = self.get();
        let cfg = &self.run.cfg;
        let more_time = cfg.budget_seconds().is_none_or(|b| s.seconds < b);
        if s.complete && s.generation < cfg.generations && more_time {
            self.update(|s| s.complete = false)?;
        }
        Ok(())
    }

    /// Changes the state and saves it.
    pub fn update(&self, f: impl FnOnce(&mut RunState)) -> Result<()> {
        let mut s = self.state.lock().expect("state lock");
        f(&mut s);
        self.run.save_state(&s)
    }
}

/// SIGINT and SIGTERM (Slurm's preemption signal too) set the returned flag; the roles then
/// stop cleanly. A second signal ends the process at once.
pub fn stop_on_signals() -> Result<Arc<AtomicBool>> {
    let flag = Arc::new(AtomicBool::new(false));
    for sig in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
        // The second signal exits (status 130) while the first is still being handled.
        signal_hook::flag::register_conditional_shutdown(sig, 130, flag.clone())
            .map_err(PipelineError::Signals)?;
        signal_hook::flag::register(sig, flag.clone()).map_err(PipelineError::Signals)?;
    }
    Ok(flag)
}

/// Intra-op threads for each libtorch user when `roles` threads share this machine's cores.
fn share_cores(roles: usize) {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    model::set_threads((cores / roles.max(1)).max(1));
}

fn reporter_for(run: &Run, tensorboard: bool) -> Reporter {
    let metrics: Box<dyn Metrics> = if tensorboard {
        // metrics.jsonl stamps lines with run seconds, counted over resumes. A state that does
        // not load stops the run right after, with its error.
        let st = run.load_state().unwrap_or_default();
        Reporter::open_run_metrics(&run.dir, st.seconds, st.generation)
    } else {
        Box::new(metrics::NoMetrics)
    };
    Reporter::new(Some(&run.dir.join("log.txt")), metrics)
}

/// The result of a role's thread; `what` names the thread when it panicked.
fn join<T>(h: std::thread::ScopedJoinHandle<'_, Result<T>>, what: &'static str) -> Result<T> {
    h.join().map_err(|_| PipelineError::Panicked { what })?
}

/// `trainer run`: self-play threads, the trainer and the evaluator in one process, until the
/// run has its generations or its time budget (or `stop` is set).
pub fn run_all(run: &Run, stop: Arc<AtomicBool>) -> Result<()> {
    run.check_writable()?;
    let reporter = reporter_for(run, true);
    store::clean_temporaries(&run.dir, std::time::Duration::ZERO);
    run.clean_trainer_temporaries();
    let shared = Shared::new(run, stop.clone())?;
    shared.reopen_if_extended()?;
    if shared.get().complete {
        reporter.log(&format!(
            "run {} is complete (edit {} to extend it)",
            run.cfg.name,
            run.dir.join("config.toml").display()
        ));
        return Ok(());
    }
    let threads = run.cfg.selfplay.search_threads();
    let server = run.cfg.selfplay.uses_server(run.device.is_cuda());
    // Inline: each self-play thread's network and the trainer share the cores; with a server,
    // its one network and the trainer do.
    share_cores(if server { 2 } else { threads + 1 });
    log_run_start(run, &reporter, threads, server);
    let wstats = Arc::new(WorkerStats::default());
    let t0 = Instant::now();
    let bars = [
        reporter.bar(0, "self-play"),
        reporter.bar(run.cfg.steps_per_generation, "training"),
        reporter.bar(1, "evaluation"),
    ];
    let cpu = run_roles(run, &shared, &reporter, &wstats, threads, &bars)?;
    // Every role has stopped: the totals count every stored game, the last ones included.
    let stored = store::list(&run.dir)?;
    shared.update(|s| (s.total_games, s.total_samples) = store::totals(&stored))?;
    for bar in &bars {
        bar.finish_and_clear();
    }
    let wall = t0.elapsed().as_secs_f64();
    log_run_end(&reporter, &shared.get(), &wstats, &cpu, wall, threads);
    reporter.flush();
    Ok(())
}

/// CPU seconds of the trainer and evaluator threads of [`run_all`], and the evaluation games.
struct RoleCpu {
    train: f64,
    eval: f64,
    eval_games: u64,
}

/// The line that opens `trainer run`: the run, its network and how self-play is laid out.
fn log_run_start(run: &Run, reporter: &Reporter, threads: usize, server: bool) {
    reporter.log(&format!(
        "run {}: {} with {} on {:?} ({} planes, policy {}); {} self-play threads x {} games x {} groups, {}, {} intra-op threads",
        run.cfg.name,
        run.variant.name,
        run.model.name,
        run.device,
        run.encoder.num_planes(),
        run.encoder.policy_len(),
        threads,
        run.cfg.selfplay.parallel_games,
        run.cfg.selfplay.groups(server),
        if server {
            "one inference server"
        } else {
            "a network per thread"
        },
        model::threads()
    ));
}

/// Runs self-play, the evaluator and the trainer as threads (with their progress `bars`, in
/// that order) until the trainer ends, then stops the others.
fn run_roles(
    run: &Run,
    shared: &Shared,
    reporter: &Reporter,
    wstats: &Arc<WorkerStats>,
    threads: usize,
    bars: &[ProgressBar; 3],
) -> Result<RoleCpu> {
    let stop = &shared.stop;
    let [moves_bar, train_bar, eval_bar] = bars;
    let (train, (eval, eval_games)) = std::thread::scope(|s| -> Result<_> {
        let sp =
            s.spawn(|| worker::run_workers(run, threads, stop, reporter, wstats, Some(moves_bar)));
        let ev = s.spawn(|| -> Result<(f64, u64)> {
            let mut e = eval::Evaluator::new(run, shared, reporter);
            let r = e.run(Some(eval_bar));
            r.map(|_| (e.cpu_seconds, e.games))
        });
        let tr = s.spawn(|| -> Result<f64> {
            let cpu0 = metrics::thread_cpu_seconds();
            let mut t = train::TrainLoop::new(run, shared, reporter, Some(wstats))?;
            let r = t.run(Some(train_bar));
            r.map(|_| metrics::thread_cpu_seconds() - cpu0)
        });
        let tr = join(tr, "the trainer thread");
        stop.store(true, Ordering::SeqCst);
        let sp = join(sp, "the self-play thread");
        let ev = join(ev, "the evaluation thread");
        sp?;
        Ok((tr?, ev?))
    })?;
    Ok(RoleCpu {
        train,
        eval,
        eval_games,
    })
}

/// The CPU share scalars and the closing line of `trainer run`.
fn log_run_end(
    reporter: &Reporter,
    st: &RunState,
    wstats: &WorkerStats,
    cpu: &RoleCpu,
    wall: f64,
    threads: usize,
) {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get()) as f64;
    let sp_cpu = *wstats.cpu_seconds.lock().expect("cpu");
    let idle = *wstats.idle_seconds.lock().expect("idle");
    let eval_games = cpu.eval_games;
    for (tag, cpu) in [
        ("time/selfplay_share", sp_cpu),
        ("time/train_share", cpu.train),
        ("time/eval_share", cpu.eval),
    ] {
        reporter.scalar(tag, cpu / (wall * cores), st.generation);
    }
    reporter.log(&format!(
        "{} after {wall:.0}s: generation {}, {} games, {} samples, {} steps; self-play played {:.0}% of the wall time ({threads} threads), CPU shares of the machine: self-play {:.0}%, training {:.0}%, evaluation {:.0}% (its engines not counted); {eval_games} evaluation games, {:.3} CPU s a game",
        if st.complete { "run complete" } else { "run stopped" },
        st.generation,
        st.total_games,
        st.total_samples,
        st.steps,
        100.0 * (1.0 - idle / (wall * threads.max(1) as f64)),
        100.0 * sp_cpu / (wall * cores),
        100.0 * cpu.train / (wall * cores),
        100.0 * cpu.eval / (wall * cores),
        cpu.eval / eval_games.max(1) as f64,
    ));
}

/// `trainer train`: the trainer and the evaluator of a run fed by separate workers.
pub fn run_trainer(run: &Run, stop: Arc<AtomicBool>) -> Result<()> {
    run.check_writable()?;
    let reporter = reporter_for(run, true);
    run.clean_trainer_temporaries();
    let shared = Shared::new(run, stop.clone())?;
    shared.reopen_if_extended()?;
    if shared.get().complete {
        reporter.log(&format!("run {} is complete", run.cfg.name));
        return Ok(());
    }
    share_cores(2);
    let train_bar = reporter.bar(run.cfg.steps_per_generation, "training");
    let eval_bar = reporter.bar(1, "evaluation");
    std::thread::scope(|s| -> Result<()> {
        let ev = s.spawn(|| eval::Evaluator::new(run, &shared, &reporter).run(Some(&eval_bar)));
        let tr = s.spawn(|| -> Result<()> {
            train::TrainLoop::new(run, &shared, &reporter, None)?.run(Some(&train_bar))
        });
        let tr = join(tr, "the trainer thread");
        stop.store(true, Ordering::SeqCst);
        let ev = join(ev, "the evaluation thread");
        tr?;
        ev
    })?;
    let st = shared.get();
    reporter.log(&format!(
        "trainer {}: generation {}, {} games, {} samples, {} steps",
        if st.complete {
            "done, run complete"
        } else {
            "stopped"
        },
        st.generation,
        st.total_games,
        st.total_samples,
        st.steps
    ));
    Ok(())
}

/// `trainer selfplay`: one worker process with `threads` threads (0: the config's), until the
/// run is complete or `stop` is set; the games in flight are then dropped.
pub fn run_selfplay(
    run: &Run,
    threads: usize,
    stop: Arc<AtomicBool>,
) -> Result<WorkerStatsSummary> {
    run.check_writable()?;
    let reporter = reporter_for(run, false);
    store::clean_temporaries(&run.dir, std::time::Duration::from_secs(600));
    let threads = if threads == 0 {
        run.cfg.selfplay.search_threads()
    } else {
        threads
    };
    share_cores(if run.cfg.selfplay.uses_server(run.device.is_cuda()) {
        1
    } else {
        threads
    });
    let stats = Arc::new(WorkerStats::default());
    let bar = reporter.bar(0, "self-play");
    let t0 = Instant::now();
    worker::run_workers(run, threads, &stop, &reporter, &stats, Some(&bar))?;
    bar.finish_and_clear();
    let s = stats.merged();
    let summary = WorkerStatsSummary {
        games: stats.games.load(Ordering::Relaxed),
        samples: stats.samples.load(Ordering::Relaxed),
        evals: s.evals,
        seconds: t0.elapsed().as_secs_f64(),
    };
    reporter.log(&format!(
        "self-play worker stops: {} games, {} samples stored, {:.0} evals/s",
        summary.games,
        summary.samples,
        summary.evals as f64 / summary.seconds.max(1e-9)
    ));
    Ok(summary)
}

/// What a worker process did.
#[derive(Clone, Debug)]
pub struct WorkerStatsSummary {
    /// Games stored.
    pub games: u64,
    /// Samples stored.
    pub samples: u64,
    /// Positions evaluated.
    pub evals: u64,
    /// Wall seconds.
    pub seconds: f64,
}
