//! `trainer bench`: measured figures, compared in the same run where a reference exists.

use anyhow::Result;
use clap::Subcommand;

/// What to benchmark.
#[derive(Subcommand)]
pub enum BenchCommand {
    /// Perft leaf nodes per second (single thread, bulk counting).
    Perft,
}

pub fn run(_what: BenchCommand) -> Result<()> {
    Ok(())
}
