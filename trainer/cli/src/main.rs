//! `trainer`: the command-line front end of the shogi-variant trainer.

mod arena;
mod bench;
mod benchreport;
mod evalcmd;
mod exportcmd;
mod laddercmd;
mod netcmd;
mod nnuecmd;
mod openingscmd;
mod play;
mod rulescmd;
mod usi;

use anyhow::Result;
use clap::{Parser, Subcommand};
use rules::Variant;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Self-play reinforcement-learning trainer for shogi variants.
#[derive(Parser)]
#[command(name = "trainer", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Count leaf nodes of the legal move tree (rules self-test and speed check).
    Perft {
        /// Variant: a config file stem in ./configs/variants (shogi, minishogi, cannon-shosu,
        /// hand, judkins, yari, tori, kyoto, micro, sho, cannon, annan, unashogi, chu, wa, heian,
        /// heian-dai, whale, dai, hasami, dai-hasami, tenjiku, dai-dai, maka-dai-dai, tai,
        /// taikyoku, ko), a built-in variant, or a path to a .toml file.
        #[arg(long)]
        variant: String,
        /// Start from this SFEN instead of the variant's start position.
        #[arg(long)]
        sfen: Option<String>,
        /// USI moves to play from the start position before counting.
        #[arg(long, default_value = "")]
        moves: String,
        /// Depth in plies (at most 1000).
        #[arg(long)]
        depth: u32,
        /// List each root move with its count first.
        #[arg(long)]
        divide: bool,
    },
    /// Validate configs: every .toml under the given files or directories (default configs/):
    /// variants, network shapes (in a `models` directory) and run configs (in `runs`).
    Check {
        /// Files or directories (default: configs).
        paths: Vec<PathBuf>,
        /// Print each variant's piece table.
        #[arg(long)]
        verbose: bool,
        /// Print the network encoding of this variant (input planes, policy layout) instead.
        #[arg(long, value_name = "VARIANT")]
        explain: Option<String>,
        /// The layout --explain describes: generic, attacks (generic plus attack planes), or
        /// dlshogi (standard shogi only).
        #[arg(long, default_value = "generic", requires = "explain")]
        encoding: encoding::EncodingLayout,
    },
    /// The main job: self-play, training and evaluation at the same time in runs/<name>/,
    /// until the config's generations or time budget. An existing run directory is resumed.
    Run {
        /// Run config (configs/runs/*.toml).
        #[arg(long, default_value = "configs/runs/default.toml")]
        config: PathBuf,
        /// Directory holding the runs.
        #[arg(long, default_value = "runs")]
        runs_dir: PathBuf,
        /// Only resume: fail if the run directory does not exist yet.
        #[arg(long)]
        resume: bool,
    },
    /// A self-play worker of a run, as its own process: any number of them (on any machine
    /// sharing the run directory) feed one `trainer train`. SIGTERM/SIGINT stop it cleanly.
    Selfplay {
        /// Run directory (created by `trainer run` or `trainer train --config`).
        #[arg(long)]
        run: PathBuf,
        /// Self-play threads (0: the run config's `selfplay.threads`).
        #[arg(long, default_value_t = 0)]
        threads: usize,
    },
    /// A run's progress: generation, games, samples, steps, the last evaluation's scores, and
    /// each self-play worker (host, games, evals/s, last heartbeat; stale ones marked).
    Status {
        /// Run directory.
        #[arg(long)]
        run: PathBuf,
    },
    /// One self-contained HTML page of a run: a summary and plots of Elo, data, losses,
    /// diagnostics, self-play and time shares (from state.json and metrics.jsonl).
    Report {
        /// Run directory.
        #[arg(long)]
        run: PathBuf,
        /// Output file (default: DIR/report.html).
        #[arg(long)]
        out: Option<PathBuf>,
    },
    /// Trainer and evaluator of a run, as their own process: trains on the games that
    /// `trainer selfplay` workers write and publishes networks for them.
    Train {
        /// Run directory (resumed), or...
        #[arg(long, conflicts_with = "config")]
        run: Option<PathBuf>,
        /// ...a run config to create it from.
        #[arg(long)]
        config: Option<PathBuf>,
        /// Directory holding the runs (with --config).
        #[arg(long, default_value = "runs")]
        runs_dir: PathBuf,
        /// Only create (or check) the run directory, print its path and exit (used by
        /// scripts/slurm/submit.sh before it submits the trainer and the workers).
        #[arg(long)]
        init_only: bool,
    },
    /// Write a randomly initialised network (generation 0) for a variant.
    Init {
        /// Variant (as for perft).
        #[arg(long)]
        variant: String,
        /// Network shape: a file of configs/models (b2c16, b4c32, b6c32, b6c48, b6c64, b10c128) or a path.
        #[arg(long, default_value = "b6c64")]
        model: String,
        /// Output weights file (.safetensors; the sidecar .json is written next to it).
        #[arg(long)]
        out: PathBuf,
        /// Initialisation seed.
        #[arg(long, default_value_t = 0)]
        seed: u64,
        /// Input and policy layout: generic (any variant), attacks (generic plus what each
        /// side's pieces attack, any variant), or dlshogi (standard shogi only; the network
        /// exports with --format dlshogi-onnx for dlshogi and FukauraOu).
        #[arg(long, default_value = "generic")]
        encoding: encoding::EncodingLayout,
    },
    /// Export a model: TorchScript, safetensors, ONNX, or ONNX in dlshogi's layout.
    Export {
        /// Model weights (.safetensors with its .json sidecar).
        #[arg(long)]
        model: PathBuf,
        /// Output format.
        #[arg(long, value_enum)]
        format: netcmd::Format,
        /// Output file (default: the model path with .pt, .safetensors or .onnx).
        #[arg(long)]
        out: Option<PathBuf>,
        /// Device used for tracing: cpu, cuda, cuda:N or auto.
        #[arg(long, default_value = "cpu", value_parser = model::parse_device)]
        device: model::Device,
        /// Python for the ONNX conversion (default: .local/venv/bin/python, else python3).
        #[arg(long)]
        python: Option<PathBuf>,
        /// Overwrite existing output files (never the model's own files).
        #[arg(long)]
        force: bool,
    },
    /// Average networks of one shape (a stochastic weight average): the given models, or a
    /// run's last generations.
    Average(netcmd::AverageArgs),
    /// Export a run's self-play positions for another trainer: dlshogi's hcpe records or
    /// Fairy-Stockfish's plain text data.
    ExportData(exportcmd::ExportDataArgs),
    /// Train a network for Fairy-Stockfish (its NNUE architecture, .nnue file) on a run's
    /// self-play positions, their search values and game results.
    Nnue(nnuecmd::NnueArgs),
    /// Export a variant's rules for another engine: a Fairy-Stockfish variants.ini section (or
    /// an error naming each rule it cannot express).
    ExportVariant(exportcmd::ExportVariantArgs),
    /// What a network thinks of a position: its win/draw/loss and its most likely moves, and
    /// with --nodes what its search finds (--json for one JSON object).
    Eval(evalcmd::EvalArgs),
    /// A USI engine (stdin/stdout) on a trained model, for GUIs and tournament tools.
    Usi {
        /// Model weights (.safetensors with its .json sidecar); the variant comes from the
        /// sidecar. Without a model the engine searches with a uniform policy and even value.
        #[arg(long)]
        model: Option<PathBuf>,
        /// Variant (as for perft; default shogi). With --model it must be the model's variant.
        #[arg(long)]
        variant: Option<String>,
    },
    /// Matches between models, our network-free search and external USI/UCI engines, with
    /// W/D/L, Elo (95% interval) and an optional SPRT; our rules referee every move.
    Arena(arena::ArenaArgs),
    /// A balanced opening book for `arena --openings`: random openings that an external
    /// engine rates close to even, so that a match spends its games where the score is made.
    Openings(openingscmd::OpeningsArgs),
    /// Play our engine in the terminal (moves in USI notation).
    Play(play::PlayArgs),
    /// A ladder of fixed opponents: calibrate it, refit it from its games, place a player.
    Ladder {
        #[command(subcommand)]
        what: laddercmd::LadderCommand,
    },
    /// Benchmarks (figures for BENCHMARKS.md).
    Bench {
        #[command(subcommand)]
        what: bench::BenchCommand,
    },
}

/// Resolves `--variant`: a path, a file in ./configs/variants, or a built-in.
pub(crate) fn load_variant(name: &str) -> Result<Arc<Variant>> {
    Ok(::arena::load_variant(name)?)
}

fn main() {
    let cli = Cli::parse();
    // A closed reader of a printing command ends the process quietly instead of a "Broken
    // pipe" panic. Commands that talk to engines and workers through pipes keep SIGPIPE
    // ignored: an engine that exits must be an error they handle, not a signal that kills a
    // training run.
    if matches!(
        cli.command,
        Command::Perft { .. }
            | Command::Check { .. }
            | Command::Status { .. }
            | Command::Report { .. }
            | Command::Init { .. }
            | Command::Export { .. }
            | Command::Average(_)
            | Command::ExportData(_)
            | Command::ExportVariant(_)
            | Command::Usi { .. }
    ) {
        sigpipe::reset();
    }
    // A bad backend or kernel choice is refused before anything runs (networks read them
    // when opened).
    let backend = model::CpuBackend::from_env()
        .and_then(|_| model::kernel_from_env())
        .map_err(anyhow::Error::msg);
    if let Err(e) = backend.and_then(|_| dispatch(cli.command)) {
        eprintln!("error: {e:#}");
        std::process::exit(1);
    }
}

/// Runs one subcommand.
fn dispatch(command: Command) -> Result<()> {
    match command {
        Command::Perft {
            variant,
            sfen,
            moves,
            depth,
            divide,
        } => rulescmd::run_perft(&variant, sfen.as_deref(), &moves, depth, divide),
        Command::Check {
            paths,
            verbose,
            explain,
            encoding: layout,
        } => check(&paths, verbose, explain.as_deref(), layout),
        Command::Run {
            config,
            runs_dir,
            resume,
        } => {
            let r = pipeline::Run::open(&config, &runs_dir, resume)?;
            Ok(pipeline::run_all(&r, pipeline::stop_on_signals()?)?)
        }
        Command::Status { run } => {
            print!("{}", pipeline::status::report(&run)?);
            Ok(())
        }
        Command::Report { run, out } => {
            let p = pipeline::report::write(&run, out.as_deref())?;
            println!("{}", p.display());
            Ok(())
        }
        Command::Selfplay { run, threads } => {
            let r = pipeline::Run::resume(&run)?;
            pipeline::run_selfplay(&r, threads, pipeline::stop_on_signals()?)?;
            Ok(())
        }
        Command::Train {
            run,
            config,
            runs_dir,
            init_only,
        } => train(run, config, &runs_dir, init_only),
        Command::Init {
            variant,
            model,
            out,
            seed,
            encoding,
        } => netcmd::init(&variant, &model, &out, seed, encoding),
        Command::Export {
            model,
            format,
            out,
            device,
            python,
            force,
        } => netcmd::export(&model, format, out, device, python, force),
        Command::Average(a) => netcmd::average(a),
        Command::Usi { model, variant } => usi::run(model.as_deref(), variant.as_deref()),
        Command::Arena(a) => arena::run(a),
        Command::Openings(a) => openingscmd::run(a),
        Command::Eval(a) => evalcmd::run(a),
        Command::ExportData(a) => exportcmd::export_data(a),
        Command::ExportVariant(a) => exportcmd::export_variant(a),
        Command::Nnue(a) => nnuecmd::run(a),
        Command::Play(a) => play::run(a),
        Command::Bench { what } => bench::run(what),
        Command::Ladder { what } => laddercmd::run(what),
    }
}

/// `trainer check`: variant files, or with `explain` the network encoding of that variant.
fn check(
    paths: &[PathBuf],
    verbose: bool,
    explain: Option<&str>,
    layout: encoding::EncodingLayout,
) -> Result<()> {
    match explain {
        Some(v) => load_variant(v)
            .and_then(|v| Ok(encoding::Encoder::with_layout(v, layout)?))
            .map(|e| print!("{}", e.explain())),
        None => rulescmd::run_check(paths, verbose),
    }
}

/// `trainer train`: opens the run (from `--run` or `--config`), then trains it, or with
/// `init_only` prints its directory.
fn train(
    run: Option<PathBuf>,
    config: Option<PathBuf>,
    runs_dir: &Path,
    init_only: bool,
) -> Result<()> {
    let r = match (run, config) {
        (Some(dir), _) => pipeline::Run::resume(&dir)?,
        (None, Some(cfg)) => pipeline::Run::open(&cfg, runs_dir, false)?,
        (None, None) => anyhow::bail!("give --run DIR or --config FILE"),
    };
    match init_only {
        true => {
            println!("{}", r.dir.display());
            Ok(())
        }
        false => Ok(pipeline::run_trainer(&r, pipeline::stop_on_signals()?)?),
    }
}
