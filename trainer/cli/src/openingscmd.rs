//! `trainer openings`: a balanced opening book for `trainer arena --openings`: random openings
//! that an external engine rates close to even (`arena::balanced_openings`), written as an
//! openings file with each opening's score.

use crate::load_variant;
use anyhow::{bail, Context, Result};
use arena::{balanced_openings, opening_line, BookSettings, ExternalEngine, Protocol};
use std::fmt::Write as _;
use std::io::Write as _;
use std::path::PathBuf;
use std::time::Duration;

/// `trainer openings` arguments.
#[derive(clap::Args, Debug)]
#[command(after_help = "\
Example (a book of 100 minishogi openings that Fairy-Stockfish rates within 150 cp):
  trainer openings --variant minishogi --engine /usr/games/fairy-stockfish --protocol uci \\
      --option Threads=1 --count 100 --out minishogi-balanced.txt
  trainer arena --variant minishogi --openings minishogi-balanced.txt --games 200 ...

Each kept opening is written as `startpos moves ...` under a comment with its score from
sente's side; the header records the command's settings and the engine's name. The file is
written to a temporary name and renamed, so an interrupted run leaves no partial book.")]
pub(crate) struct OpeningsArgs {
    /// Variant (as for perft).
    #[arg(long)]
    variant: String,
    /// The engine that rates the openings, started as `sh -c CMD`.
    #[arg(long)]
    engine: String,
    /// Its protocol: usi or uci (Fairy-Stockfish's UCI dialect).
    #[arg(long, default_value = "usi", value_parser = crate::arena::protocol_parser())]
    protocol: Protocol,
    /// An engine option NAME=VALUE (repeatable).
    #[arg(long = "option", value_name = "NAME=VALUE", value_parser = crate::arena::parse_option)]
    options: Vec<(String, String)>,
    /// Random plies from the start position.
    #[arg(long, default_value_t = 4)]
    random_plies: u32,
    /// Openings to keep.
    #[arg(long, default_value_t = 100)]
    count: usize,
    /// Keep openings the engine rates at most this many centipawns from even.
    #[arg(long, default_value_t = 150)]
    max_cp: i32,
    /// Depth of the engine's search of each opening (`go depth D`): each opening is searched
    /// by a fresh engine process, so with one thread the same engine makes the same book
    /// again, and gives any of its openings the same score alone.
    #[arg(long, default_value_t = 14)]
    depth: u32,
    /// Milliseconds the engine thinks about each opening (`go movetime MS`) instead of a
    /// depth.
    #[arg(long, conflicts_with = "depth")]
    movetime: Option<u64>,
    /// Seed of the random plies.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Most distinct openings to evaluate before giving up (default: 50 times --count).
    #[arg(long)]
    max_candidates: Option<usize>,
    /// The openings file to write.
    #[arg(long)]
    out: PathBuf,
}

/// `trainer openings`.
pub(crate) fn run(args: OpeningsArgs) -> Result<()> {
    if args.count == 0 {
        bail!("--count must be at least 1");
    }
    if args.max_cp < 0 {
        bail!("--max-cp must be at least 0, got {}", args.max_cp);
    }
    let (go, timeout) = match args.movetime {
        Some(0) => bail!("--movetime must be at least 1"),
        Some(ms) => (format!("movetime {ms}"), ms + 10_000),
        None if args.depth == 0 => bail!("--depth must be at least 1"),
        None => (format!("depth {}", args.depth), 600_000),
    };
    let variant = load_variant(&args.variant)?;
    let mut engine = ExternalEngine::new(
        &args.engine,
        args.protocol,
        args.options.clone(),
        variant.clone(),
    );
    engine
        .ensure_started()
        .with_context(|| format!("starting --engine {:?}", args.engine))?;
    let settings = BookSettings {
        plies: args.random_plies,
        count: args.count,
        max_cp: args.max_cp,
        go: go.clone(),
        timeout: Duration::from_millis(timeout),
        seed: args.seed,
        max_candidates: args.max_candidates.unwrap_or(args.count.saturating_mul(50)),
    };
    let bar = indicatif::ProgressBar::new(args.count as u64).with_style(
        indicatif::ProgressStyle::with_template("{bar:30} {pos}/{len} kept {msg}")
            .expect("a valid template"),
    );
    let book = balanced_openings(&variant, &mut engine, &settings, |evaluated, kept| {
        bar.set_position(kept as u64);
        bar.set_message(format!("of {evaluated} evaluated"));
    })?;
    bar.finish_and_clear();
    let name = engine.id_name().unwrap_or(&args.engine).to_string();
    let mut text = String::new();
    let _ = writeln!(
        text,
        "# {} openings of {}: {} random plies from the start position (seed {}), kept where\n\
         # {name} ({}, go {go}) rates the side to move within {} cp.\n\
         # {} kept of {} distinct openings evaluated ({} repeated draws skipped).",
        book.entries.len(),
        variant.name,
        args.random_plies,
        args.seed,
        args.protocol,
        args.max_cp,
        book.entries.len(),
        book.evaluated,
        book.repeats,
    );
    for (i, e) in book.entries.iter().enumerate() {
        let _ = writeln!(text, "# {}: sente {:+} cp", i + 1, e.sente_cp);
        let _ = writeln!(text, "{}", opening_line(&variant, &e.opening));
    }
    atomic_file::write_bytes(&args.out, text.as_bytes())
        .with_context(|| format!("writing {}", args.out.display()))?;
    let mean =
        book.entries.iter().map(|e| e.sente_cp as f64).sum::<f64>() / book.entries.len() as f64;
    println!(
        "openings: {} of {} distinct openings kept (within {} cp; mean {:+.0} cp for sente), written to {}",
        book.entries.len(),
        book.evaluated,
        args.max_cp,
        mean,
        args.out.display()
    );
    std::io::stdout().flush().ok();
    Ok(())
}
