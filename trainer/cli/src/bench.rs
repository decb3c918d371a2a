//! `trainer bench`: measured figures, compared in the same run where a reference exists.

use crate::load_variant;
use anyhow::{bail, Result};
use clap::Subcommand;
use std::path::PathBuf;

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
    /// Costs of the shared run directory at scale: fills a directory with synthetic one-game
    /// shards and times one listing and the trainer's ingest, per 1,000 shards.
    Store {
        /// Directory to fill (created; removed afterwards unless --keep).
        #[arg(long, default_value = "bench-store")]
        dir: PathBuf,
        /// Shards to write.
        #[arg(long, default_value_t = 10_000)]
        shards: usize,
        /// Variant of the synthetic games.
        #[arg(long, default_value = "minishogi")]
        variant: String,
        /// Plies per synthetic game.
        #[arg(long, default_value_t = 40)]
        plies: usize,
        /// Keep the directory.
        #[arg(long)]
        keep: bool,
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
        } => crate::benchreport::bench_perft(fsf, repeat.max(1), no_fsf),
        BenchCommand::Selfplay {
            variant,
            model,
            parallel,
            games,
            simulations,
            device,
        } => crate::benchreport::bench_selfplay(
            &variant,
            &model,
            parallel,
            games,
            simulations,
            &device,
        ),
        BenchCommand::Store {
            dir,
            shards,
            variant,
            plies,
            keep,
        } => {
            if dir.exists() {
                bail!("{} exists: give a new directory", dir.display());
            }
            let r = pipeline::bench::store_costs(&dir, &variant, shards, plies);
            if !keep {
                let _ = std::fs::remove_dir_all(&dir);
            }
            let b = r?;
            let per = |s: f64| 1000.0 * s / b.shards.max(1) as f64;
            println!(
                "{} shards of {variant} ({:.0} bytes each, {} samples) in {}",
                b.shards,
                b.shard_bytes,
                b.samples,
                dir.display()
            );
            println!(
                "write:  {:.3} s per 1,000 shards (one writer)",
                per(b.write_seconds)
            );
            println!(
                "list:   {:.4} s per 1,000 shards (one full listing)",
                per(b.list_seconds)
            );
            println!(
                "ingest: {:.3} s per 1,000 shards (read, check, add to the window)",
                per(b.ingest_seconds)
            );
            Ok(())
        }
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

fn bench_nn(
    model_name: &str,
    variants: &[String],
    batches: &[usize],
    train_batch: usize,
    seconds: f64,
    device: &str,
    weights: Option<&std::path::Path>,
) -> Result<()> {
    let device = model::parse_device(device).map_err(anyhow::Error::msg)?;
    let (cfg, variants) = match weights {
        Some(w) => {
            let meta = model::read_meta(w)?;
            (meta.model.clone(), vec![meta.variant.clone()])
        }
        None => (model::ModelConfig::load(model_name)?, variants.to_vec()),
    };
    println!(
        "network {} on {:?} ({} intra-op threads)",
        cfg.name,
        device,
        model::threads()
    );
    for variant in &variants {
        let v = load_variant(variant)?;
        let shape = model::shape_of(&selfplay::Encoder::new(v.clone()));
        let mut t = model::Trainer::new(&cfg, shape, model::TrainConfig::default(), device, 1);
        println!(
            "{} ({}x{}, {} planes, policy {})",
            v.name,
            shape.files,
            shape.ranks,
            shape.planes,
            shape.policy_len()
        );
        for &b in batches {
            let r = model::bench::forward_rate(&t.net, device, None, b, seconds);
            println!("  forward batch {b:>4}: {r:>10.0} evals/s");
        }
        let r = model::bench::train_rate(&mut t, train_batch, seconds);
        println!("  train batch {train_batch:>4}: {r:>10.0} samples/s");
    }
    Ok(())
}
