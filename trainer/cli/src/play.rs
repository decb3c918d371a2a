//! `trainer play`: a human plays our engine in the terminal ([`arena::play_human`], which
//! documents the board and the commands).

use crate::load_variant;
use anyhow::Result;
use arena::{play_human, Searcher};
use rules::{Color, Position};
use std::io::Write;
use std::path::PathBuf;

/// A side, as typed on the command line.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum Side {
    Sente,
    Gote,
}

/// `trainer play` arguments.
#[derive(clap::Args, Debug)]
pub(crate) struct PlayArgs {
    /// Variant (as for perft).
    #[arg(long)]
    variant: String,
    /// Our network (.safetensors with its sidecar); without it the engine searches with a
    /// uniform policy and even value.
    #[arg(long)]
    model: Option<PathBuf>,
    /// Simulations per engine move.
    #[arg(long, default_value_t = 200)]
    nodes: u32,
    /// The human's side (in the first hand under a consecutive-wins match rule).
    #[arg(long, value_enum, default_value = "sente")]
    human: Side,
    /// Start from this SFEN instead of the variant's start position.
    #[arg(long)]
    sfen: Option<String>,
    /// Device of the model: cpu, cuda, cuda:N or auto.
    #[arg(long, default_value = "auto", value_parser = model::parse_device)]
    device: model::Device,
}

/// `trainer play`.
pub(crate) fn run(args: PlayArgs) -> Result<()> {
    let variant = load_variant(&args.variant)?;
    let start = match args.sfen.as_deref() {
        Some(s) => Position::from_sfen(&variant, s)?,
        None => Position::start(variant.clone()),
    };
    let mut engine = match &args.model {
        Some(m) => Searcher::network(&variant, m, args.nodes, args.device, &pipeline::ModelOpener)?,
        None => Searcher::uniform(&variant, args.nodes),
    };
    let stdin = std::io::stdin();
    let mut input = stdin.lock();
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    let first = match args.human {
        Side::Sente => Color::Sente,
        Side::Gote => Color::Gote,
    };
    writeln!(
        out,
        "{}: you are {}; moves in USI (7g7f, P*5e, 8h2b+), `moves` lists them, `quit` ends",
        variant.name,
        if first == Color::Sente {
            "sente"
        } else {
            "gote"
        }
    )?;
    play_human(&start, first, &mut engine, &mut input, &mut out)?;
    Ok(())
}
