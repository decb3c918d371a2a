//! `trainer bench`: measured figures, compared in the same run where a reference exists.

use crate::load_variant;
use anyhow::{bail, Context, Result};
use clap::Subcommand;
use model::DeviceExt;
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
    /// Self-play efficiency: evaluations/s of continuous self-play (search threads, every
    /// move a full search) over the raw network forward's evaluations/s at the same batch and
    /// threads, counting what the search gets back, measured in one run. The last line is
    /// `ratio <x>`.
    Selfplay(SelfplayArgs),
    /// Costs of the shared run directory at scale: fills a directory with synthetic one-game
    /// shards and times one listing and the trainer's ingest, per 1,000 shards.
    Store(StoreArgs),
    /// Network speed: raw forward evaluations/s at several batch sizes, counting what the
    /// search gets back (the legal moves' logits and the WDL), and training samples/s, on
    /// positions of random play of each variant. On CPU each forward is also measured on the
    /// trainer's own CPU path alone (one thread) and on libtorch's alone (its intra-op
    /// threads), with their ratio; the default takes the faster by batch size.
    Nn(NnArgs),
}

/// `trainer bench selfplay` arguments.
#[derive(clap::Args)]
pub struct SelfplayArgs {
    /// Variant.
    #[arg(long, default_value = "minishogi")]
    pub variant: String,
    /// Network shape.
    #[arg(long, default_value = "b4c32")]
    pub model: String,
    /// Search threads (0: the machine's cores).
    #[arg(long, default_value_t = 0)]
    pub threads: usize,
    /// Games per group, played in lockstep (one batch per group and turn).
    #[arg(long, default_value_t = 64)]
    pub parallel: usize,
    /// Groups per thread (0: 2 with an inference server, else 1).
    #[arg(long, default_value_t = 0)]
    pub pipeline: usize,
    /// inline (a network per thread), server (one queue per device) or auto.
    #[arg(long, default_value = "auto")]
    pub inference: String,
    /// The server's largest batch (0: threads x parallel).
    #[arg(long, default_value_t = 0)]
    pub max_batch: usize,
    /// Simulations per move (every move a full search).
    #[arg(long, default_value_t = 32)]
    pub simulations: u32,
    /// Seconds of self-play (and of the raw measurement).
    #[arg(long, default_value_t = 20.0)]
    pub seconds: f64,
    /// The mate check at new leaves (`search.mate_plies`; 0: none).
    #[arg(long, default_value_t = 0)]
    pub mate_plies: u32,
    /// cpu, cuda, cuda:N or auto.
    #[arg(long, default_value = "cpu", value_parser = model::parse_device)]
    pub device: model::Device,
    /// Inference precision on CUDA: auto, f32, f16 or bf16.
    #[arg(long, default_value = "auto")]
    pub precision: encoding::Precision,
    /// Network answers kept per network and thread (`selfplay.eval_cache`; 0: none).
    #[arg(long, default_value_t = 0)]
    pub eval_cache: usize,
    /// Instead of the network, a device that answers any batch with uniform outputs after
    /// MS milliseconds (no work): the ratio then says whether the search threads hide
    /// that latency (achieved evals/s over batch/MS).
    #[arg(long, value_name = "MS")]
    pub simulate_device: Option<f64>,
}

/// `trainer bench store` arguments.
#[derive(clap::Args)]
pub struct StoreArgs {
    /// Directory to fill (created; removed afterwards unless --keep).
    #[arg(long, default_value = "bench-store")]
    pub dir: PathBuf,
    /// Shards to write.
    #[arg(long, default_value_t = 10_000)]
    pub shards: usize,
    /// Variant of the synthetic games.
    #[arg(long, default_value = "minishogi")]
    pub variant: String,
    /// Plies per synthetic game.
    #[arg(long, default_value_t = 40)]
    pub plies: usize,
    /// Keep the directory.
    #[arg(long)]
    pub keep: bool,
}

/// `trainer bench nn` arguments.
#[derive(clap::Args)]
pub struct NnArgs {
    /// Network shape (configs/models).
    #[arg(long, default_value = "b6c64")]
    pub model: String,
    /// Variants (board sizes) to measure.
    #[arg(long, value_delimiter = ',', default_value = "shogi,cannon-shosu")]
    pub variants: Vec<String>,
    /// Forward batch sizes.
    #[arg(long, value_delimiter = ',', default_value = "1,16,64,256")]
    pub batches: Vec<usize>,
    /// Training batch size.
    #[arg(long, default_value_t = 256)]
    pub train_batch: usize,
    /// Seconds to spend per measurement (at least 3 iterations are always run).
    #[arg(long, default_value_t = 3.0)]
    pub seconds: f64,
    /// cpu, cuda, cuda:N or auto.
    #[arg(long, default_value = "auto", value_parser = model::parse_device)]
    pub device: model::Device,
    /// Measure this model file instead of a fresh network: its weights, on its variant and
    /// layout (from its sidecar); its WDL at the start position is printed first.
    #[arg(long)]
    pub weights: Option<std::path::PathBuf>,
    /// Inference precision on CUDA: auto (bf16), f32, f16 or bf16.
    #[arg(long, default_value = "auto")]
    pub precision: encoding::Precision,
}

/// A value of a config enum given on the command line (`auto`, `server`, `bf16`...).
pub(crate) fn choice<T: serde::de::DeserializeOwned>(flag: &str, value: &str) -> Result<T> {
    T::deserialize(serde::de::value::StrDeserializer::<serde::de::value::Error>::new(value))
        .map_err(|e| anyhow::anyhow!("{flag} {value:?}: {e}"))
}

/// Runs a benchmark.
pub fn run(what: BenchCommand) -> Result<()> {
    match what {
        BenchCommand::Perft {
            fsf,
            repeat,
            no_fsf,
        } => crate::benchreport::bench_perft(fsf, repeat.max(1), no_fsf),
        BenchCommand::Selfplay(a) => bench_selfplay(a),
        BenchCommand::Store(a) => bench_store(&a),
        BenchCommand::Nn(a) => bench_nn(&a),
    }
}

/// The `bench selfplay` flag that sets a `[selfplay]` key (none for a key without one).
fn selfplay_flag(key: &str) -> Option<&'static str> {
    Some(match key {
        "threads" => "--threads",
        "parallel_games" => "--parallel",
        "pipeline" => "--pipeline",
        "max_batch" => "--max-batch",
        _ => return None,
    })
}

/// A self-play settings error in command-line terms: a key set by a flag is named by the flag.
fn flag_error(e: selfplay::SelfPlayError) -> anyhow::Error {
    match &e {
        selfplay::SelfPlayError::Config { key, reason } => match selfplay_flag(key) {
            Some(flag) => anyhow::anyhow!("{flag}: {reason}"),
            None => e.into(),
        },
        _ => e.into(),
    }
}

fn bench_selfplay(a: SelfplayArgs) -> Result<()> {
    if !(a.seconds > 0.0 && a.seconds <= 86_400.0) {
        bail!("--seconds: must be above 0 and at most 86,400");
    }
    if a.mate_plies > search::MAX_MATE_PLIES {
        bail!(
            "--mate-plies: must be at most {}, got {}",
            search::MAX_MATE_PLIES,
            a.mate_plies
        );
    }
    let selfplay = selfplay::SelfPlayConfig {
        threads: a.threads,
        parallel_games: a.parallel,
        pipeline: a.pipeline,
        inference: choice("--inference", &a.inference)?,
        max_batch: a.max_batch,
        precision: a.precision,
        eval_cache: a.eval_cache,
        ..Default::default()
    };
    selfplay.validate().map_err(flag_error)?;
    crate::benchreport::bench_selfplay(&pipeline::bench::SelfplayOptions {
        variant: a.variant,
        model: a.model,
        selfplay,
        simulations: a.simulations,
        mate_plies: a.mate_plies,
        seconds: a.seconds,
        device: a.device,
        simulate_ms: a.simulate_device,
    })
}

fn bench_store(a: &StoreArgs) -> Result<()> {
    let dir = &a.dir;
    if dir.exists() {
        bail!("{} exists: give a new directory", dir.display());
    }
    let r = pipeline::bench::store_costs(dir, &a.variant, a.shards, a.plies);
    if !a.keep {
        let _ = std::fs::remove_dir_all(dir);
    }
    let b = r?;
    let per = |s: f64| 1000.0 * s / b.shards.max(1) as f64;
    println!(
        "{} shards of {} ({:.0} bytes each, {} samples) in {}",
        b.shards,
        a.variant,
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

/// The network `bench nn` measures for one variant: a fresh one of a shape, or a model file's.
struct NnSubject {
    enc: encoding::Encoder,
    ev: model::NetEvaluator,
    /// A trainer on the same weights (for the training rate).
    trainer: Box<dyn Fn() -> Result<model::Trainer>>,
}

/// The model file `w` on `device`: its weights, and its variant and layout from its sidecar.
fn nn_from_file(
    w: &std::path::Path,
    device: model::Device,
    precision: encoding::Precision,
) -> Result<NnSubject> {
    let meta = model::read_meta(w).with_context(|| format!("loading {}", w.display()))?;
    let v = std::sync::Arc::new(
        rules::Variant::compile_named(
            meta.variant_spec.clone(),
            &format!("{} (sidecar)", w.display()),
        )
        .with_context(|| format!("compiling the variant of {}", w.display()))?,
    );
    let enc = encoding::Encoder::for_spec(v, &meta.encoding)
        .with_context(|| format!("{}", w.display()))?;
    let (ev, _) = model::open_evaluator(w, &enc.spec(), device, precision)
        .with_context(|| format!("loading {}", w.display()))?;
    let shape = model::shape_of(&enc);
    let (cfg, path) = (meta.model.clone(), w.to_path_buf());
    Ok(NnSubject {
        enc,
        ev,
        trainer: Box::new(move || {
            let mut t = model::Trainer::new(&cfg, shape, model::TrainConfig::default(), device, 1);
            model::init_from_model(&mut t, &path)?;
            Ok(t)
        }),
    })
}

/// The network's win/draw/loss at the variant's start position.
fn start_wdl(s: &mut NnSubject) -> Result<[f32; 3]> {
    let pos = rules::Position::start(s.enc.variant().clone());
    let mut r = search::Request::default();
    s.enc.encode(&pos, r.add_position(s.enc.input_len()));
    for (i, _) in s.enc.legal_indices(&pos) {
        r.moves.push(i as u32);
    }
    r.end_position();
    search::Evaluator::evaluate_request(&mut s.ev, &mut r)?;
    Ok(r.wdl[0])
}

fn bench_nn(a: &NnArgs) -> Result<()> {
    let device = a.device.resolved();
    // With --weights: that file's network, variant and layout (from its sidecar).
    let (cfg, variants) = match &a.weights {
        Some(w) => {
            let meta = model::read_meta(w)?;
            (meta.model.clone(), vec![meta.variant.clone()])
        }
        None => (model::ModelConfig::load(&a.model)?, a.variants.clone()),
    };
    println!(
        "network {} on {:?} ({} intra-op threads, inference in {:?})",
        cfg.name,
        device,
        model::threads(),
        model::inference_kind(a.precision, device)
    );
    for variant in &variants {
        let s = match &a.weights {
            Some(w) => nn_from_file(w, device, a.precision)?,
            None => fresh_nn(&cfg, variant, device, a.precision)?,
        };
        measure_nn(s, a)?;
    }
    Ok(())
}

/// A fresh network of shape `cfg` for `variant`.
fn fresh_nn(
    cfg: &model::ModelConfig,
    variant: &str,
    device: model::Device,
    precision: encoding::Precision,
) -> Result<NnSubject> {
    let v = load_variant(variant)?;
    let enc = encoding::Encoder::new(v);
    let shape = model::shape_of(&enc);
    let cfg = cfg.clone();
    let new = move || {
        Ok(model::Trainer::new(
            &cfg,
            shape,
            model::TrainConfig::default(),
            device,
            1,
        ))
    };
    let t = new()?;
    Ok(NnSubject {
        enc,
        ev: model::NetEvaluator::with_precision(t.vs, t.net, precision),
        trainer: Box::new(new),
    })
}

/// Prints one variant's figures: the forward rate at each batch, then the training rate.
fn measure_nn(mut s: NnSubject, a: &NnArgs) -> Result<()> {
    let shape = model::shape_of(&s.enc);
    println!(
        "{} ({}x{}, {} planes, policy {})",
        s.enc.variant().name,
        shape.files,
        shape.ranks,
        shape.planes,
        shape.policy_len()
    );
    if !s.ev.device.is_cuda() {
        println!(
            "  native forward: {} kernel ({}=gemm for the reference)",
            model::cpu_kernel(),
            model::KERNEL_ENV
        );
    }
    if let Some(w) = &a.weights {
        let wdl = start_wdl(&mut s)?;
        println!(
            "  weights {}: start position win {:.6} draw {:.6} loss {:.6}",
            w.display(),
            wdl[0],
            wdl[1],
            wdl[2]
        );
    }
    for &b in &a.batches {
        let req = pipeline::bench::sample_request(&s.enc, b, 3);
        // On this thread: libtorch's OpenMP pool is at its best on the first thread using it.
        let moves = req.moves.len() as f64 / b.max(1) as f64;
        if s.ev.device.is_cuda() {
            let r = pipeline::bench::request_rate_here(&mut s.ev, &req, a.seconds)?;
            println!(
                "  forward batch {b:>4}: {r:>10.0} evals/s ({moves:.0} legal moves a position)"
            );
        } else {
            // The CPU's own forward (one thread) and libtorch's on the same weights, then the
            // process's choice (by default the faster of the two by batch size), measured last
            // so that libtorch's thread pool is as warm for it as for its own figure.
            let chosen = s.ev.backend();
            let mut rate = |backend| -> Result<f64> {
                s.ev.set_backend(backend);
                let r = pipeline::bench::request_rate_here(&mut s.ev, &req, a.seconds);
                s.ev.set_backend(chosen);
                Ok(r?)
            };
            let native = rate(model::CpuBackend::Native)?;
            let torch = rate(model::CpuBackend::Libtorch)?;
            let r = rate(chosen)?;
            println!(
                "  forward batch {b:>4}: {r:>10.0} evals/s; native {native:.0}, libtorch {torch:.0} (x{:.2}) ({moves:.0} legal moves a position)",
                native / torch
            );
        }
    }
    let NnSubject { ev, trainer, .. } = s;
    drop(ev);
    let tb = a.train_batch;
    let r = model::bench::train_rate(&mut trainer()?, tb, a.seconds);
    println!("  train batch {tb:>4}: {r:>10.0} samples/s");
    Ok(())
}
