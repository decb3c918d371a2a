//! `trainer nnue`: a network for Fairy-Stockfish trained on a run's self-play positions.

use anyhow::Result;
use model::nnue::NnueTrainConfig;
use std::path::PathBuf;

/// `trainer nnue` arguments.
#[derive(clap::Args)]
pub struct NnueArgs {
    /// Run directory whose self-play positions to train on.
    #[arg(long)]
    run: PathBuf,
    /// Output `.nnue` file; its name must start with the Fairy-Stockfish variant's name
    /// (`minishogi-1.nnue`), or the engine does not use it.
    #[arg(long)]
    out: PathBuf,
    /// Fairy-Stockfish variant (default: the built-in counterpart of the run's variant, such
    /// as kyotoshogi for kyoto, else our export `<variant>-export`).
    #[arg(long)]
    variant: Option<String>,
    /// At most this many positions, the newest first.
    #[arg(long, default_value_t = 1_000_000)]
    positions: usize,
    /// Passes over the positions (on 600,000 minishogi positions the validation loss stops
    /// falling after 2 to 3).
    #[arg(long, default_value_t = 3)]
    epochs: usize,
    /// Weight of the search's value against the game's result (1: values only).
    #[arg(long, default_value_t = 1.0)]
    lambda: f64,
    /// Fairy-Stockfish internal units per logit of win probability that the network's
    /// evaluation speaks (a win probability p becomes S ln(p / (1 - p))). Fairy-Stockfish
    /// switches to its classical evaluation where material is unbalanced, and its search
    /// margins are tuned to that evaluation's units.
    #[arg(long, default_value_t = model::nnue::EVAL_SCALE)]
    eval_scale: f64,
    /// Positions per step.
    #[arg(long, default_value_t = 1024)]
    batch_size: usize,
    /// Learning rate (Adam; decays linearly to a tenth).
    #[arg(long, default_value_t = 1.5e-3)]
    lr: f64,
    /// Games of these generations' networks: A..B, A.., ..B or N (default: all).
    #[arg(long)]
    generations: Option<String>,
    /// A network whose value relabels the positions: `last` (the run's newest network) or a
    /// model file of the run's variant and encoding. The early generations' searches were
    /// guided by weak networks; the last network's value is a steadier target.
    #[arg(long)]
    teacher: Option<String>,
    /// Weight of the teacher's value against the search's (0 to 1).
    #[arg(long, default_value_t = 1.0, requires = "teacher")]
    teacher_weight: f64,
    /// Leave out positions in check and those whose best move captures (true or false):
    /// Fairy-Stockfish's static evaluation is used in quiet positions (on minishogi, 6 points
    /// more against the classical evaluation).
    #[arg(long, default_value_t = true, action = clap::ArgAction::Set)]
    skip_noisy: bool,
    /// Device: cpu, cuda, cuda:N or auto.
    #[arg(long, default_value = "cpu", value_parser = model::parse_device)]
    device: model::Device,
    /// Seed of the initial weights and the order of the positions.
    #[arg(long, default_value_t = 1)]
    seed: u64,
}

/// Runs `trainer nnue`.
pub fn run(a: NnueArgs) -> Result<()> {
    let run = pipeline::Run::resume(&a.run)?;
    let generations = match &a.generations {
        Some(g) => pipeline::export::parse_generations(g)?,
        None => 0..=u64::MAX,
    };
    let teacher = match a.teacher.as_deref() {
        None => None,
        Some(t) => Some(pipeline::nnue::Teacher {
            model: match t {
                "last" => run.model_path(run.load_state()?.generation),
                path => PathBuf::from(path),
            },
            weight: a.teacher_weight,
        }),
    };
    let opts = pipeline::nnue::NnueOptions {
        teacher,
        fsf_variant: a.variant,
        skip_noisy: a.skip_noisy,
        positions: a.positions,
        generations,
        train: NnueTrainConfig {
            epochs: a.epochs,
            batch_size: a.batch_size,
            lr: a.lr,
            lambda: a.lambda,
            eval_scale: a.eval_scale,
            seed: a.seed,
            device: a.device,
            ..NnueTrainConfig::default()
        },
    };
    let s = pipeline::nnue::train_nnue(&run, &opts, &a.out, |epoch, train, val| {
        eprintln!("epoch {epoch}: loss {train:.5}, validation {val:.5}");
    })?;
    let r = &s.report;
    println!(
        "wrote {} ({} bytes): Fairy-Stockfish {} network, {} features, trained on {} positions \
         of {} games ({} held out) in {:.0} s; validation loss {:.5} (untrained {:.5}); \
         quantisation moves the evaluation by {:.1} internal units on average{}",
        a.out.display(),
        s.bytes,
        s.fsf_variant,
        s.features,
        r.train_positions,
        s.games,
        r.val_positions,
        r.seconds,
        r.epochs.last().map_or(f64::NAN, |e| e.1),
        r.initial_val_loss,
        r.quantisation_error,
        match s.skipped {
            0 => String::new(),
            n => format!(" ({n} damaged shards or games skipped)"),
        }
    );
    if s.noisy > 0 {
        println!(
            "left out {} positions in check or with a capture for the best move",
            s.noisy
        );
    }
    if let Some(shift) = s.teacher_shift {
        println!("the teacher moved the target values by {shift:.4} on average (in -1..1)");
    }
    match &s.ini {
        Some(_) => println!(
            "Fairy-Stockfish: setoption name VariantPath value <the variants.ini of `trainer \
             export-variant {} --format fsf-ini`>, setoption name UCI_Variant value {}, \
             setoption name EvalFile value {}",
            run.variant.name,
            s.fsf_variant,
            a.out.display()
        ),
        None => println!(
            "Fairy-Stockfish: setoption name UCI_Variant value {}, setoption name EvalFile value {}",
            s.fsf_variant,
            a.out.display()
        ),
    }
    Ok(())
}
