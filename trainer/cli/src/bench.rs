//! `trainer bench`: measured figures, compared in the same run where a reference exists.

use crate::load_variant;
use anyhow::{bail, Context, Result};
use clap::Subcommand;
use rules::{perft, Position};
use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::Instant;

/// What to benchmark.
#[derive(Subcommand)]
pub enum BenchCommand {
    /// Perft leaf nodes per second, single thread, bulk counting; compared in the same run with
    /// Fairy-Stockfish (`go perft`) when it is installed.
    Perft {
        /// Fairy-Stockfish binary (default: `fairy-stockfish` on PATH or in /usr/games).
        #[arg(long)]
        fsf: Option<PathBuf>,
        /// Timed repetitions; the best is reported.
        #[arg(long, default_value_t = 3)]
        repeat: u32,
        /// Skip the Fairy-Stockfish comparison.
        #[arg(long)]
        no_fsf: bool,
    },
    /// Self-play efficiency: evaluations/s of the full self-play loop over the raw network
    /// forward's evaluations/s at the same batch size and threads, measured in one run.
    Selfplay {
        /// Variant.
        #[arg(long, default_value = "minishogi")]
        variant: String,
        /// Network shape.
        #[arg(long, default_value = "b4c32")]
        model: String,
        /// Games in lockstep (= network batch size).
        #[arg(long, default_value_t = 64)]
        parallel: usize,
        /// Games to play (several times `parallel`, so the draining tail weighs little).
        #[arg(long, default_value_t = 256)]
        games: usize,
        /// Simulations per move (every move a full search).
        #[arg(long, default_value_t = 32)]
        simulations: u32,
        /// cpu, cuda, cuda:N or auto.
        #[arg(long, default_value = "cpu")]
        device: String,
    },
    /// Network speed: raw forward evaluations/s at several batch sizes and training samples/s,
    /// on random inputs of each variant's encoding.
    Nn {
        /// Network shape (configs/models).
        #[arg(long, default_value = "b6c64")]
        model: String,
        /// Variants (board sizes) to measure.
        #[arg(long, value_delimiter = ',', default_value = "shogi,cannon-shosu")]
        variants: Vec<String>,
        /// Forward batch sizes.
        #[arg(long, value_delimiter = ',', default_value = "1,16,64,256")]
        batches: Vec<usize>,
        /// Training batch size.
        #[arg(long, default_value_t = 256)]
        train_batch: usize,
        /// Seconds to spend per measurement (at least 3 iterations are always run).
        #[arg(long, default_value_t = 3.0)]
        seconds: f64,
        /// cpu, cuda, cuda:N or auto.
        #[arg(long, default_value = "auto")]
        device: String,
        /// Measure this model file instead of a fresh network (its variant and shape are used).
        #[arg(long)]
        weights: Option<std::path::PathBuf>,
    },
}

/// Runs a benchmark.
pub fn run(what: BenchCommand) -> Result<()> {
    match what {
        BenchCommand::Perft {
            fsf,
            repeat,
            no_fsf,
        } => bench_perft(fsf, repeat.max(1), no_fsf),
        BenchCommand::Selfplay {
            variant,
            model,
            parallel,
            games,
            simulations,
            device,
        } => bench_selfplay(&variant, &model, parallel, games, simulations, &device),
        BenchCommand::Nn {
            model,
            variants,
            batches,
            train_batch,
            seconds,
            device,
            weights,
        } => bench_nn(
            &model,
            &variants,
            &batches,
            train_batch,
            seconds,
            &device,
            weights.as_deref(),
        ),
    }
}

/// Runs `f` repeatedly for about `seconds` (after one warm-up call); returns calls per second.
fn rate(seconds: f64, mut f: impl FnMut()) -> f64 {
    f();
    let t = Instant::now();
    let mut n = 0u32;
    while n < 3 || t.elapsed().as_secs_f64() < seconds {
        f();
        n += 1;
    }
    n as f64 / t.elapsed().as_secs_f64()
}

fn bench_nn(
    model_name: &str,
    variants: &[String],
    batches: &[usize],
    train_batch: usize,
    seconds: f64,
    device: &str,
    weights: Option<&std::path::Path>,
) -> Result<()> {
    use model::tch::{Device, Kind, Tensor};
    let device = model::parse_device(device).map_err(anyhow::Error::msg)?;
    let (cfg, variants) = match weights {
        Some(w) => {
            let meta = model::read_meta(w)?;
            (meta.model.clone(), vec![meta.variant.clone()])
        }
        None => (model::ModelConfig::load(model_name)?, variants.to_vec()),
    };
    let threads = model::tch::get_num_threads();
    println!(
        "network {} on {:?} ({} intra-op threads)",
        cfg.name, device, threads
    );
    for variant in &variants {
        let v = load_variant(variant)?;
        let enc = selfplay::Encoder::new(v.clone());
        let shape = model::shape_of(&enc);
        let mut trainer =
            model::Trainer::new(&cfg, shape, model::TrainConfig::default(), device, 1);
        let dims = |b: usize| {
            [
                b as i64,
                shape.planes as i64,
                shape.ranks as i64,
                shape.files as i64,
            ]
        };
        println!(
            "{} ({}x{}, {} planes, policy {})",
            v.name,
            shape.files,
            shape.ranks,
            shape.planes,
            shape.policy_len()
        );
        for &b in batches {
            let x = Tensor::rand(dims(b), (Kind::Float, device));
            let r = rate(seconds, || {
                model::tch::no_grad(|| {
                    let (p, w) = trainer.net.forward_t(&x, false);
                    // Wait for the device and bring results back, as the search would.
                    let _ = (p.to_device(Device::Cpu), w.to_device(Device::Cpu));
                })
            });
            println!("  forward batch {b:>4}: {:>10.0} evals/s", r * b as f64);
        }
        let batch = model::Batch {
            inputs: Tensor::rand(dims(train_batch), (Kind::Float, device)),
            policy: Tensor::rand(
                [train_batch as i64, shape.policy_len() as i64],
                (Kind::Float, device),
            )
            .softmax(-1, Kind::Float),
            wdl: Tensor::rand([train_batch as i64, 3], (Kind::Float, device))
                .softmax(-1, Kind::Float),
        };
        let r = rate(seconds, || {
            trainer.train_step(&batch);
        });
        println!(
            "  train batch {train_batch:>4}: {:>10.0} samples/s",
            r * train_batch as f64
        );
    }
    Ok(())
}

/// Best time of `repeat` runs of our perft, and the node count.
fn ours(variant: &str, depth: u32, repeat: u32) -> Result<(u64, f64)> {
    let v = load_variant(variant)?;
    let mut best = f64::INFINITY;
    let mut nodes = 0;
    for _ in 0..repeat {
        let mut pos = Position::start(v.clone());
        let t = Instant::now();
        nodes = perft(&mut pos, depth);
        best = best.min(t.elapsed().as_secs_f64());
    }
    Ok((nodes, best))
}

fn find_fsf(explicit: Option<PathBuf>) -> Option<PathBuf> {
    if let Some(p) = explicit {
        return Some(p);
    }
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .chain([PathBuf::from("/usr/games")])
        .map(|d| d.join("fairy-stockfish"))
        .find(|p| p.is_file())
}

/// Best time of `repeat` runs of Fairy-Stockfish's `go perft`, timed from the command to its
/// "Nodes searched" line (engine start-up excluded).
fn fairy(bin: &PathBuf, variant: &str, depth: u32, repeat: u32) -> Result<(u64, f64)> {
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
    for _ in 0..repeat {
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

fn bench_perft(fsf: Option<PathBuf>, repeat: u32, no_fsf: bool) -> Result<()> {
    let fsf = if no_fsf { None } else { find_fsf(fsf) };
    println!("perft, single thread, bulk counting, best of {repeat}");
    println!(
        "{:<16} {:>5} {:>12} {:>9} {:>14}",
        "variant", "depth", "nodes", "seconds", "leaves/s"
    );
    let row = |who: &str, depth: u32, nodes: u64, secs: f64| {
        println!(
            "{:<16} {:>5} {:>12} {:>9.3} {:>14.0}",
            who,
            depth,
            nodes,
            secs,
            nodes as f64 / secs
        );
    };
    let mut ratios = Vec::new();
    for (variant, fsf_name, depth) in [
        ("shogi", Some("shogi"), 5),
        ("minishogi", Some("minishogi"), 5),
        ("cannon-shosu", None, 4),
        ("cannon-shosu", None, 5),
        ("hand", None, 3),
    ] {
        let (n, s) = ours(variant, depth, repeat)?;
        row(variant, depth, n, s);
        if let (Some(bin), Some(name)) = (&fsf, fsf_name) {
            let (fn_, fs) = fairy(bin, name, depth, repeat)?;
            row(&format!("  fsf {name}"), depth, fn_, fs);
            if fn_ != n {
                bail!("node counts differ: ours {n}, Fairy-Stockfish {fn_}");
            }
            ratios.push((variant, fs / s));
        }
    }
    if fsf.is_none() && !no_fsf {
        println!("(Fairy-Stockfish not found: apt-get install fairy-stockfish to compare)");
    }
    for (v, r) in ratios {
        println!("ratio {v}: ours / Fairy-Stockfish leaves/s = {r:.2}");
    }
    Ok(())
}

fn bench_selfplay(
    variant: &str,
    model_name: &str,
    parallel: usize,
    games: usize,
    simulations: u32,
    device: &str,
) -> Result<()> {
    use model::tch::{Device, Kind, Tensor};
    let device = model::parse_device(device).map_err(anyhow::Error::msg)?;
    let v = load_variant(variant)?;
    let enc = selfplay::Encoder::new(v.clone());
    let cfg = model::ModelConfig::load(model_name)?;
    let shape = model::shape_of(&enc);
    let t = model::Trainer::new(&cfg, shape, model::TrainConfig::default(), device, 1);
    let mut ev = model::NetEvaluator::new(t.vs, t.net);
    let threads = model::tch::get_num_threads();
    // Raw forward of the same network on real encoded positions, at a given batch size.
    let raw_at = |ev: &model::NetEvaluator, batch: usize| -> f64 {
        let mut pos = rules::Position::start(v.clone());
        let mut inputs = vec![0.0f32; batch * enc.input_len()];
        for i in 0..batch {
            enc.encode(
                &pos,
                &mut inputs[i * enc.input_len()..(i + 1) * enc.input_len()],
            );
            if let Some(&m) = pos.legal_moves().first() {
                pos.make_move(m);
            }
        }
        let x = Tensor::from_slice(&inputs)
            .view([
                batch as i64,
                shape.planes as i64,
                shape.ranks as i64,
                shape.files as i64,
            ])
            .to_device(device);
        rate(3.0, || {
            model::tch::no_grad(|| {
                let (p, w) = ev.net.forward_t(&x, false);
                let _ = (
                    p.to_device(Device::Cpu),
                    w.softmax(-1, Kind::Float).to_device(Device::Cpu),
                );
            })
        }) * batch as f64
    };
    // 1. The raw forward at the nominal batch size.
    let raw = raw_at(&ev, parallel);
    // 2. The self-play loop with the same network, batch and threads.
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
    let loop_rate = stats.evals as f64 / stats.seconds;
    let mean_batch = stats.evals as f64 / stats.batches.max(1) as f64;
    // 3. The raw forward at the loop's mean batch (games finishing shrink the late batches).
    let mean_b = (mean_batch.round() as usize).max(1);
    let raw_mean = raw_at(&ev, mean_b);
    println!(
        "{} with {} on {:?}, {threads} intra-op threads, {parallel} games in lockstep, {simulations} simulations/move",
        v.name, cfg.name, device
    );
    println!("raw forward, batch {parallel}:      {raw:>10.0} evals/s");
    println!(
        "self-play loop ({} games, {} evals, mean batch {:.1}): {:>10.0} evals/s, {:.1}% of the time in the network",
        stats.games,
        stats.evals,
        mean_batch,
        loop_rate,
        100.0 * stats.eval_seconds / stats.seconds
    );
    println!("raw forward, batch {mean_b} (the loop's mean): {raw_mean:>10.0} evals/s");
    println!(
        "ratio self-play / raw forward at batch {parallel}: {:.3}",
        loop_rate / raw
    );
    println!(
        "ratio self-play / raw forward at the mean batch {mean_b}: {:.3}",
        loop_rate / raw_mean
    );
    Ok(())
}
