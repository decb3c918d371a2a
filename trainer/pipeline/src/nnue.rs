//! `trainer nnue`: a Fairy-Stockfish network trained on a run's self-play positions.
//!
//! The newest positions with a full search (up to `positions` of them, newest generation
//! first) are the training set, with their root values and game results
//! ([`crate::fsfdata`]); `model::nnue::train` trains and quantises the network, which is
//! written atomically as the `.nnue` file Fairy-Stockfish reads.

use crate::error::{PipelineError, Result};
use crate::fsfdata;
use crate::run::Run;
use model::nnue::{train, NnueTrainConfig, TrainReport, TrainingSet};
use std::ops::{ControlFlow, RangeInclusive};
use std::path::Path;

/// Options of [`train_nnue`].
#[derive(Clone, Debug)]
pub struct NnueOptions {
    /// Fairy-Stockfish's variant (default: the run's variant's counterpart or export).
    pub fsf_variant: Option<String>,
    /// At most this many positions, the newest.
    pub positions: usize,
    /// Games of these generations' networks.
    pub generations: RangeInclusive<u64>,
    /// Training options (the description is filled in here).
    pub train: NnueTrainConfig,
}

/// What [`train_nnue`] did.
#[derive(Clone, Debug)]
pub struct NnueSummary {
    /// Fairy-Stockfish's variant the network is for.
    pub fsf_variant: String,
    /// Its `variants.ini` text, when it is not built in (load it with `VariantPath`).
    pub ini: Option<String>,
    /// Number of input features.
    pub features: usize,
    /// Games the positions came from.
    pub games: u64,
    /// Damaged shards and games skipped.
    pub skipped: u64,
    /// The training.
    pub report: TrainReport,
    /// Bytes written.
    pub bytes: usize,
}

/// Whether Fairy-Stockfish would use a network file of this name for `variant`: its
/// `NNUE::init` enables a network only when the file's base name starts with the variant's
/// name (or its NNUE alias, which is the name itself for the shogi variants).
pub fn usable_file_name(out: &Path, variant: &str) -> bool {
    out.file_name()
        .and_then(|n| n.to_str())
        .is_some_and(|n| n.starts_with(variant))
}

/// Trains a network for `run` and writes it to `out`. `progress` gets each epoch's number and
/// (training, validation) loss.
pub fn train_nnue(
    run: &Run,
    opts: &NnueOptions,
    out: &Path,
    progress: impl FnMut(usize, f64, f64),
) -> Result<NnueSummary> {
    let layout = fsfdata::layout_for(run, opts.fsf_variant.as_deref())?;
    let name = layout.rules().name.clone();
    if !usable_file_name(out, &name) {
        return Err(PipelineError::NnueFileName {
            path: out.to_path_buf(),
            variant: name,
        });
    }
    if opts.positions == 0 {
        return Err(PipelineError::NoPositions);
    }
    let mut set = TrainingSet::new(&layout);
    let stats = fsfdata::for_each_sample(run, &opts.generations, true, |s| {
        set.push(&layout, &s.position, s.value, s.result);
        if set.len() >= opts.positions {
            ControlFlow::Break(())
        } else {
            ControlFlow::Continue(())
        }
    })?;
    if set.is_empty() {
        return Err(PipelineError::NoSamples {
            dir: run.dir.clone(),
            generations: opts.generations.clone(),
        });
    }
    let mut cfg = opts.train.clone();
    cfg.description = format!(
        "Fairy-Stockfish {name} network trained by the shogi-variant self-play trainer on \
         {} positions of run {} (variant {}), lambda {}",
        set.len(),
        run.cfg.name,
        run.variant.name,
        cfg.lambda
    );
    let (net, report) = train(&set, &layout, &cfg, progress)?;
    let bytes = net.to_bytes();
    model::write_atomic(out, &bytes).map_err(|e| PipelineError::Writing {
        path: out.to_path_buf(),
        source: Box::new(e),
    })?;
    Ok(NnueSummary {
        fsf_variant: name,
        ini: layout.rules().ini.clone(),
        features: layout.dims(),
        games: stats.games,
        skipped: stats.skipped,
        report,
        bytes: bytes.len(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_names_must_start_with_the_variant() {
        assert!(usable_file_name(
            Path::new("/x/minishogi-1.nnue"),
            "minishogi"
        ));
        assert!(usable_file_name(Path::new("kyotoshogi.nnue"), "kyotoshogi"));
        assert!(!usable_file_name(Path::new("net.nnue"), "minishogi"));
        assert!(!usable_file_name(
            Path::new("minishogi/net.nnue"),
            "minishogi"
        ));
    }
}
