//! Exports for other programs' formats: `export-data` (dlshogi's hcpe training records) and
//! `export-variant` (Fairy-Stockfish's variants.ini).

use anyhow::{Context, Result};
use std::path::PathBuf;

/// Formats of `trainer export-data`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum DataFormat {
    /// dlshogi's training records (38 bytes a position; standard shogi only).
    Hcpe,
    /// Fairy-Stockfish's plain text training data (variant-nnue-tools' `learn convert`).
    FsfPlain,
}

/// `trainer export-data` arguments.
#[derive(clap::Args)]
pub struct ExportDataArgs {
    /// Run directory.
    #[arg(long)]
    run: PathBuf,
    /// Output format.
    #[arg(long, value_enum)]
    format: DataFormat,
    /// Games of these generations' networks: A..B (both included), A.., ..B or N (default:
    /// all).
    #[arg(long)]
    generations: Option<String>,
    /// Output file.
    #[arg(long)]
    out: PathBuf,
    /// For fsf-plain: the Fairy-Stockfish variant (default: the run's variant's built-in
    /// counterpart, else our export `<variant>-export`).
    #[arg(long)]
    fsf_variant: Option<String>,
}

/// Runs `trainer export-data`.
pub fn export_data(a: ExportDataArgs) -> Result<()> {
    let run = pipeline::Run::resume(&a.run)?;
    let generations = match &a.generations {
        Some(g) => pipeline::export::parse_generations(g)?,
        None => 0..=u64::MAX,
    };
    let s = match a.format {
        DataFormat::Hcpe => pipeline::export::export_hcpe(&run, generations, &a.out)?,
        DataFormat::FsfPlain => {
            let (s, name) = pipeline::fsfdata::export_fsf_plain(
                &run,
                generations,
                a.fsf_variant.as_deref(),
                &a.out,
            )?;
            eprintln!("positions of Fairy-Stockfish's {name} (UCI_Variant {name})");
            s
        }
    };
    println!(
        "wrote {} positions from {} games to {}{}",
        s.positions,
        s.games,
        a.out.display(),
        match s.skipped {
            0 => String::new(),
            n => format!(" ({n} damaged shards or games skipped)"),
        }
    );
    Ok(())
}

/// Formats of `trainer export-variant`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum VariantFormat {
    /// A Fairy-Stockfish `variants.ini` section (load it with its `VariantPath` option).
    FsfIni,
}

/// `trainer export-variant` arguments.
#[derive(clap::Args)]
pub struct ExportVariantArgs {
    /// Variant (as for perft: a configs/variants stem, a built-in or a path).
    variant: String,
    /// Output format.
    #[arg(long, value_enum)]
    format: VariantFormat,
    /// Output file (default: standard output).
    #[arg(long)]
    out: Option<PathBuf>,
}

/// Runs `trainer export-variant`: the definition, or an error naming every rule the format
/// cannot express.
pub fn export_variant(a: ExportVariantArgs) -> Result<()> {
    let v = crate::load_variant(&a.variant)?;
    let exported = match a.format {
        VariantFormat::FsfIni => rules::fsf::to_fsf_ini(&v)?,
    };
    match &a.out {
        None => print!("{}", exported.ini),
        Some(out) => {
            model::write_atomic(out, exported.ini.as_bytes())
                .with_context(|| format!("writing {}", out.display()))?;
            eprintln!(
                "wrote {} (Fairy-Stockfish: setoption name VariantPath value {}, then \
                 setoption name UCI_Variant value {})",
                out.display(),
                out.display(),
                exported.name
            );
        }
    }
    Ok(())
}
