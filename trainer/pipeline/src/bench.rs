//! Benchmarks behind `trainer bench`: perft against Fairy-Stockfish and self-play against the
//! raw network, each measured in one run so that the ratios compare like with like.

use crate::config::RunConfig;
use crate::error::{IoOp, PipelineError, Result};
use crate::metrics::{NoMetrics, Reporter};
use crate::run::{load_variant, Run};
use crate::worker::{run_workers_with, Networks, WorkerStats};
use model::DeviceExt;
use rules::{perft, Position};
use selfplay::SelfPlayConfig;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Fairy-Stockfish: `explicit`, else `fairy-stockfish` on PATH or in /usr/games.
pub fn find_fsf(explicit: Option<PathBuf>) -> Option<PathBuf> {
    if let Some(p) = explicit {
        return Some(p);
    }
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .chain([PathBuf::from("/usr/games")])
        .map(|d| d.join("fairy-stockfish"))
        .find(|p| p.is_file())
}

/// Best time of `repeat` runs of our perft, and the node count.
pub fn perft_ours(variant: &str, depth: u32, repeat: u32) -> Result<(u64, f64)> {
    let v = load_variant(variant)?;
    let mut best = f64::INFINITY;
    let mut nodes = 0;
    for _ in 0..repeat.max(1) {
        let mut pos = Position::start(v.clone());
        let t = Instant::now();
        nodes = perft(&mut pos, depth);
        best = best.min(t.elapsed().as_secs_f64());
    }
    Ok((nodes, best))
}

/// Best time of `repeat` runs of Fairy-Stockfish's `go perft`, timed from the command to its
/// "Nodes searched" line (engine start-up excluded), and the node count.
pub fn perft_fsf(bin: &PathBuf, variant: &str, depth: u32, repeat: u32) -> Result<(u64, f64)> {
    let mut child = Command::new(bin)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .map_err(PipelineError::io(IoOp::Start, bin))?;
    let talk = |e: std::io::Error| PipelineError::io(IoOp::Talk, bin)(e);
    let mut stdin = child
        .stdin
        .take()
        .ok_or(PipelineError::EnginePipe("stdin"))?;
    let stdout = child
        .stdout
        .take()
        .ok_or(PipelineError::EnginePipe("stdout"))?;
    let mut lines = BufReader::new(stdout).lines();
    let mut wait_for = |prefix: &str| -> Result<String> {
        for line in lines.by_ref() {
            let line = line.map_err(talk)?;
            if line.starts_with(prefix) {
                return Ok(line);
            }
        }
        Err(PipelineError::EngineClosed {
            expected: prefix.to_string(),
        })
    };
    let mut send = |text: &str| writeln!(stdin, "{text}").map_err(talk);
    send("uci")?;
    wait_for("uciok")?;
    send(&format!("setoption name UCI_Variant value {variant}"))?;
    send("isready")?;
    wait_for("readyok")?;
    let mut best = f64::INFINITY;
    let mut nodes = 0;
    for _ in 0..repeat.max(1) {
        send("position startpos")?;
        let t = Instant::now();
        send(&format!("go perft {depth}"))?;
        let line = wait_for("Nodes searched")?;
        best = best.min(t.elapsed().as_secs_f64());
        nodes = line
            .rsplit(' ')
            .next()
            .and_then(|n| n.trim().parse().ok())
            .ok_or(PipelineError::PerftLine { line })?;
    }
    send("quit")?;
    let _ = child.wait();
    Ok((nodes, best))
}

/// What `trainer bench selfplay` runs.
#[derive(Clone, Debug)]
pub struct SelfplayOptions {
    /// Variant name or file.
    pub variant: String,
    /// Network shape (configs/models).
    pub model: String,
    /// Self-play settings: threads, games per group, groups, inference mode, precision.
    pub selfplay: selfplay::SelfPlayConfig,
    /// Simulations of every move (all moves get a full search).
    pub simulations: u32,
    /// `search.mate_plies`: the mate check at new leaves (0: none).
    pub mate_plies: u32,
    /// Seconds of self-play (and of each raw measurement).
    pub seconds: f64,
    /// `cpu`, `cuda`, `cuda:N` or `auto`.
    pub device: model::Device,
    /// A simulated device answering every batch after this many milliseconds, instead of
    /// the network (always through an inference server).
    pub simulate_ms: Option<f64>,
}

/// The figures of one run of [`selfplay_efficiency`].
#[derive(Clone, Debug)]
pub struct SelfplayBench {
    /// Search threads.
    pub threads: usize,
    /// libtorch's intra-op threads per network.
    pub intra_op: usize,
    /// Whether the threads shared an inference server.
    pub server: bool,
    /// Groups of games per thread.
    pub groups: usize,
    /// The nominal batch: the server's largest, or one group's games without a server.
    pub batch: usize,
    /// The reference in evals/s: the raw forward at the nominal batch, with the same threads
    /// and what the search gets back (legal logits and WDL), the better of a measurement
    /// before and one after self-play; or batch/latency when simulated.
    pub raw: f64,
    /// The loop's statistics.
    pub stats: selfplay::PlayStats,
    /// The server's mean forward batch.
    pub server_batch: Option<f64>,
    /// The share of the self-play time the server spent evaluating (the device's busy time).
    pub server_busy: Option<f64>,
    /// The server's mean seconds per forward pass.
    pub server_pass: Option<f64>,
}

impl SelfplayBench {
    /// Self-play evals/s.
    pub fn loop_rate(&self) -> f64 {
        self.stats.evals as f64 / self.stats.seconds.max(1e-9)
    }

    /// Self-play evals/s over the reference.
    pub fn ratio(&self) -> f64 {
        self.loop_rate() / self.raw.max(1e-9)
    }
}

/// `batch` positions of random play from the start (a few plies each) with their legal moves,
/// as the search would ask for them.
pub fn sample_request(enc: &encoding::Encoder, batch: usize, seed: u64) -> search::Request {
    let v = enc.variant().clone();
    let mut rng = rules::SplitMix64(seed);
    let mut r = search::Request::default();
    let mut pos = Position::start(v.clone());
    for _ in 0..batch {
        let moves = pos.legal_moves();
        if moves.is_empty() || pos.outcome().is_some() || pos.ply() > 60 {
            pos = Position::start(v.clone());
        } else {
            pos.make_move(moves[rng.below(moves.len())]);
        }
        enc.encode(&pos, r.add_position(enc.input_len()));
        for (i, _) in enc.legal_indices(&pos) {
            r.moves.push(i as u32);
        }
        r.end_position();
    }
    r
}

/// Evaluations/s of `evaluators`, each on its own new thread at once (as in self-play: on this
/// 2-core machine a network with 2 intra-op threads runs at half the speed on a new thread
/// than on the thread that first used libtorch, as OpenMP throttles its spin-waiting once it
/// manages more threads than cores), answering `request` again and again for about `seconds`
/// (after one warm-up call).
pub fn request_rate(
    evaluators: &mut [Box<dyn search::Evaluator + Send>],
    request: &search::Request,
    seconds: f64,
) -> Result<f64> {
    let rates: Vec<Result<f64>> = std::thread::scope(|scope| {
        let handles: Vec<_> = evaluators
            .iter_mut()
            .map(|ev| scope.spawn(|| request_rate_here(ev.as_mut(), request, seconds)))
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("benchmark thread"))
            .collect()
    });
    rates.into_iter().sum()
}

/// Evaluations/s of `ev` on the calling thread, answering `request` again and again for about
/// `seconds` (after one warm-up call).
pub fn request_rate_here(
    ev: &mut dyn search::Evaluator,
    request: &search::Request,
    seconds: f64,
) -> Result<f64> {
    let mut r = request.clone();
    ev.evaluate_request(&mut r)?;
    let t = Instant::now();
    let mut n = 0u64;
    while n < 3 || t.elapsed().as_secs_f64() < seconds {
        ev.evaluate_request(&mut r)?;
        n += 1;
    }
    Ok(n as f64 * r.len() as f64 / t.elapsed().as_secs_f64())
}

/// Self-play evals/s (every move a full search of `simulations`, continuous games, no
/// draining) over the raw forward at the nominal batch with the same threads (half the time
/// before self-play, half after), measured in one run; with a simulated device, over
/// batch/latency. Self-play is the production worker of `trainer run` ([`run_workers_with`])
/// on a throw-away run directory holding a fresh generation 0: its threads, inference
/// server, network switching and shard writing.
pub fn selfplay_efficiency(o: &SelfplayOptions) -> Result<SelfplayBench> {
    let sp = SelfPlayConfig {
        full_simulations: o.simulations,
        fast_simulations: o.simulations,
        full_probability: 1.0,
        resign_consecutive: 0,
        ..o.selfplay.clone()
    };
    sp.validate()?;
    let networks = match o.simulate_ms {
        Some(ms) if !(ms > 0.0 && ms < 60_000.0) => {
            return Err(PipelineError::SimulatedLatency { ms })
        }
        Some(ms) => Networks::Simulated(Duration::from_secs_f64(ms / 1000.0)),
        None => Networks::Published,
    };
    let threads = sp.search_threads();
    let server = o.simulate_ms.is_some() || sp.uses_server(o.device.is_cuda());
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    // Inline networks share the cores; a server's network has them all.
    model::set_threads(if server {
        cores
    } else {
        (cores / threads).max(1)
    });
    let dir = std::env::temp_dir().join(format!("trainer-bench-selfplay-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let r = bench_run(&dir, o, &sp).and_then(|run| measure(&run, networks, o.seconds));
    let _ = std::fs::remove_dir_all(&dir);
    r
}

/// A throw-away run in `dir` with `o`'s variant, network shape, device and searches, and the
/// self-play settings `sp`.
fn bench_run(dir: &Path, o: &SelfplayOptions, sp: &SelfPlayConfig) -> Result<Run> {
    // The required keys, then the options'.
    let required = "variant = \"-\"\nmodel = \"-\"\ngenerations = 1\nsteps_per_generation = 1\n";
    let mut cfg = RunConfig::from_toml(required, "bench")?;
    cfg.variant.clone_from(&o.variant);
    cfg.model.clone_from(&o.model);
    cfg.device = o.device;
    // The network initialisation the benchmark has always measured.
    cfg.seed = 1;
    cfg.selfplay = sp.clone();
    cfg.search.simulations = o.simulations;
    cfg.search.mate_plies = o.mate_plies;
    std::fs::create_dir_all(dir).map_err(PipelineError::io(IoOp::Create, dir))?;
    let path = dir.join("bench.toml");
    let text = crate::run::to_toml(&cfg, "the benchmark's run config")?;
    std::fs::write(&path, text).map_err(PipelineError::io(IoOp::Write, &path))?;
    Run::open(&path, dir, false)
}

/// The reference before and after `seconds` of the run's self-play worker, and what the
/// worker did.
fn measure(run: &Run, networks: Networks, seconds: f64) -> Result<SelfplayBench> {
    let sp = &run.cfg.selfplay;
    let threads = sp.search_threads();
    let server = networks != Networks::Published || sp.uses_server(run.device.is_cuda());
    let batch = if server {
        sp.server_batch()
    } else {
        sp.parallel_games
    };
    let request = sample_request(&run.encoder, batch, 3);
    // The reference networks are separate copies of the one self-play plays, measured before
    // and after self-play (the higher figure counts), so that a machine slower in one period
    // does not flatter the loop.
    let (capacity, mut reference) = match networks {
        Networks::Simulated(latency) => (Some(batch as f64 / latency.as_secs_f64()), Vec::new()),
        Networks::Published => {
            let copies = if server { 1 } else { threads };
            let nets = (0..copies)
                .map(|_| Ok(Box::new(run.evaluator(0)?) as Box<dyn search::Evaluator + Send>))
                .collect::<Result<Vec<_>>>()?;
            (None, nets)
        }
    };
    let half = seconds / 2.0;
    let before = match capacity {
        Some(c) => c,
        None => request_rate(&mut reference, &request, half)?,
    };
    let workers = Arc::new(WorkerStats::default());
    play_for(run, networks, threads, seconds, &workers)?;
    let stats = workers.merged();
    let raw = match capacity {
        Some(c) => c,
        None => before.max(request_rate(&mut reference, &request, half)?),
    };
    let queue = workers.server.lock().ok().and_then(|s| s.clone());
    let busy = queue
        .as_ref()
        .map(|q| q.busy_nanos.load(Ordering::Relaxed) as f64 / 1e9);
    Ok(SelfplayBench {
        threads,
        intra_op: model::threads(),
        server,
        groups: sp.groups(server),
        batch,
        raw,
        server_batch: queue.as_ref().map(|q| q.mean_batch()),
        server_busy: busy.map(|b| b / stats.seconds.max(1e-9)),
        server_pass: busy
            .zip(queue.as_ref())
            .map(|(b, q)| b / q.batches.load(Ordering::Relaxed).max(1) as f64),
        stats,
    })
}

/// Runs the self-play worker of `run` with `threads` threads for `seconds`.
fn play_for(
    run: &Run,
    networks: Networks,
    threads: usize,
    seconds: f64,
    stats: &Arc<WorkerStats>,
) -> Result<()> {
    let stop = Arc::new(AtomicBool::new(false));
    let reporter = Reporter::new(None, Box::new(NoMetrics));
    let end = Instant::now() + Duration::from_secs_f64(seconds);
    std::thread::scope(|s| {
        let timer = s.spawn(|| {
            while !stop.load(Ordering::Relaxed) {
                let left = end.saturating_duration_since(Instant::now());
                if left.is_zero() {
                    break;
                }
                std::thread::sleep(left.min(Duration::from_millis(20)));
            }
            stop.store(true, Ordering::SeqCst);
        });
        let r = run_workers_with(run, networks, threads, &stop, &reporter, stats, None);
        stop.store(true, Ordering::SeqCst);
        let _ = timer.join();
        r
    })
}

/// What [`store_costs`] measured.
#[derive(Clone, Debug)]
pub struct StoreBench {
    /// Shards written.
    pub shards: usize,
    /// Mean bytes per shard.
    pub shard_bytes: f64,
    /// Seconds to write them (one writer).
    pub write_seconds: f64,
    /// Seconds for one listing of the whole store (what the trainer does every second and a
    /// capped worker every half second).
    pub list_seconds: f64,
    /// Seconds to read, check and add every game to a replay window (the trainer's ingest).
    pub ingest_seconds: f64,
    /// Samples ingested.
    pub samples: u64,
}

/// Fills `dir/samples/` with `shards` synthetic one-game shards of `variant` (random legal
/// games of up to `plies` plies with a target on every move, spread over 10 generation
/// directories), then times a listing and the trainer's ingest of all of them.
pub fn store_costs(dir: &Path, variant: &str, shards: usize, plies: usize) -> Result<StoreBench> {
    use selfplay::{GameRecord, MoveTarget, ReplayWindow};
    let v = load_variant(variant)?;
    let enc = encoding::Encoder::new(v.clone());
    let mut rng = rules::SplitMix64(7);
    let mut writers: Vec<crate::store::ShardWriter> = (0..8)
        .map(|w| crate::store::ShardWriter::new(dir, 0x1000 + w, &v.name, enc.policy_len()))
        .collect();
    let t = Instant::now();
    for i in 0..shards {
        let mut pos = Position::start(v.clone());
        let start_sfen = pos.to_sfen();
        let (mut moves, mut targets) = (Vec::new(), Vec::new());
        for _ in 0..plies {
            let legal = pos.legal_moves();
            if legal.is_empty() || pos.outcome().is_some() {
                break;
            }
            let p = 1.0 / legal.len() as f32;
            targets.push(Some(MoveTarget {
                policy: legal
                    .iter()
                    .map(|&m| (enc.move_to_index(&pos, m) as u32, p))
                    .collect(),
                value: 0.0,
                surprise: 0.0,
            }));
            let mv = legal[rng.below(legal.len())];
            moves.push(pos.move_to_usi(mv));
            pos.make_move(mv);
        }
        let game = GameRecord {
            start_sfen,
            moves,
            targets,
            result: rules::GameResult::Draw,
            reason: "move limit".into(),
        };
        writers[i % 8].write((i % 10) as u64, &game)?;
    }
    let write_seconds = t.elapsed().as_secs_f64();
    let t = Instant::now();
    let names = crate::store::list(dir)?;
    let list_seconds = t.elapsed().as_secs_f64();
    let bytes: u64 = names
        .iter()
        .filter_map(|n| std::fs::metadata(n.path(dir)).ok())
        .map(|m| m.len())
        .sum();
    let t = Instant::now();
    let mut window = ReplayWindow::new(enc.clone());
    let mut samples = 0;
    for n in &names {
        for g in crate::store::read_checked(dir, n, &v.name, enc.policy_len())? {
            window.add_game(&g).map_err(|source| PipelineError::Game {
                path: n.path(dir),
                source,
            })?;
            samples += g.num_samples() as u64;
        }
    }
    Ok(StoreBench {
        shards: names.len(),
        shard_bytes: bytes as f64 / names.len().max(1) as f64,
        write_seconds,
        list_seconds,
        ingest_seconds: t.elapsed().as_secs_f64(),
        samples,
    })
}
