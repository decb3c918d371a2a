//! Benchmarks behind `trainer bench`: perft against Fairy-Stockfish and self-play against the
//! raw network, each measured in one run so that the ratios compare like with like.

use crate::run::load_variant;
use anyhow::{bail, Context, Result};
use rules::{perft, Position};
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

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
        .with_context(|| format!("starting {}", bin.display()))?;
    let mut stdin = child.stdin.take().context("engine stdin")?;
    let mut lines = BufReader::new(child.stdout.take().context("engine stdout")?).lines();
    let mut wait_for = |prefix: &str| -> Result<String> {
        for line in lines.by_ref() {
            let line = line?;
            if line.starts_with(prefix) {
                return Ok(line);
            }
        }
        bail!("engine closed before printing {prefix:?}")
    };
    writeln!(stdin, "uci")?;
    wait_for("uciok")?;
    writeln!(stdin, "setoption name UCI_Variant value {variant}")?;
    writeln!(stdin, "isready")?;
    wait_for("readyok")?;
    let mut best = f64::INFINITY;
    let mut nodes = 0;
    for _ in 0..repeat.max(1) {
        writeln!(stdin, "position startpos")?;
        let t = Instant::now();
        writeln!(stdin, "go perft {depth}")?;
        let line = wait_for("Nodes searched")?;
        best = best.min(t.elapsed().as_secs_f64());
        nodes = line
            .rsplit(' ')
            .next()
            .and_then(|n| n.trim().parse().ok())
            .with_context(|| format!("unexpected perft line {line:?}"))?;
    }
    writeln!(stdin, "quit")?;
    let _ = child.wait();
    Ok((nodes, best))
}

/// The self-play efficiency figures of one run of [`selfplay_efficiency`].
#[derive(Clone, Debug)]
pub struct SelfplayBench {
    /// Intra-op threads of libtorch.
    pub threads: usize,
    /// Raw forward evals/s at the nominal batch.
    pub raw: f64,
    /// The loop's statistics.
    pub stats: selfplay::PlayStats,
    /// Raw forward evals/s at the loop's mean batch (rounded).
    pub raw_mean: f64,
    /// That batch.
    pub mean_batch: usize,
}

impl SelfplayBench {
    /// Self-play evals/s.
    pub fn loop_rate(&self) -> f64 {
        self.stats.evals as f64 / self.stats.seconds.max(1e-9)
    }
}

/// Self-play evals/s (every move a full search of `simulations`) over the raw forward of the
/// same fresh network at the same batch and threads, measured in one run.
pub fn selfplay_efficiency(
    variant: &str,
    model_name: &str,
    parallel: usize,
    games: usize,
    simulations: u32,
    device: &str,
) -> Result<SelfplayBench> {
    let device = model::parse_device(device).map_err(anyhow::Error::msg)?;
    let v = load_variant(variant)?;
    let enc = selfplay::Encoder::new(v.clone());
    let cfg = model::ModelConfig::load(model_name)?;
    let t = model::Trainer::new(
        &cfg,
        model::shape_of(&enc),
        model::TrainConfig::default(),
        device,
        1,
    );
    let mut ev = model::NetEvaluator::new(t.vs, t.net);
    // Real encoded positions (a line of play from the start) for the raw forward.
    let encoded = |batch: usize| -> Vec<f32> {
        let mut pos = Position::start(v.clone());
        let il = enc.input_len();
        let mut inputs = vec![0.0f32; batch * il];
        for i in 0..batch {
            enc.encode(&pos, &mut inputs[i * il..(i + 1) * il]);
            if let Some(&m) = pos.legal_moves().first() {
                pos.make_move(m);
            }
        }
        inputs
    };
    let raw =
        model::bench::forward_rate(&ev.net, ev.device, Some(&encoded(parallel)), parallel, 3.0);
    let search = search::SearchConfig {
        simulations,
        ..Default::default()
    };
    let sp = selfplay::SelfPlayConfig {
        parallel_games: parallel,
        full_simulations: simulations,
        fast_simulations: simulations,
        full_probability: 1.0,
        ..Default::default()
    };
    let stats = selfplay::play_games(
        &enc,
        &mut [&mut ev as &mut dyn search::Evaluator],
        std::slice::from_ref(&search),
        &sp,
        selfplay::Mode::SelfPlay,
        games,
        1,
        &mut |_, _, _| {},
    )
    .map_err(|e| anyhow::anyhow!("{e}"))?;
    let mean = stats.evals as f64 / stats.batches.max(1) as f64;
    let mean_batch = (mean.round() as usize).max(1);
    let raw_mean = model::bench::forward_rate(
        &ev.net,
        ev.device,
        Some(&encoded(mean_batch)),
        mean_batch,
        3.0,
    );
    Ok(SelfplayBench {
        threads: model::threads(),
        raw,
        stats,
        raw_mean,
        mean_batch,
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
    let enc = selfplay::Encoder::new(v.clone());
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
            window
                .add_game(&g)
                .map_err(|e| anyhow::anyhow!("{}: {e}", n.path(dir).display()))?;
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
