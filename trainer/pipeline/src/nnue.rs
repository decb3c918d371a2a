//! `trainer nnue`: a Fairy-Stockfish network trained on a run's self-play positions.
//!
//! The newest positions with a full search (up to `positions` of them, newest generation
//! first) are the training set, with their root values and game results
//! ([`crate::fsfdata`]); a teacher network (typically the run's last) may relabel the values,
//! since the early generations' searches were guided by weak networks. `model::nnue::train`
//! trains and quantises the network, which is written atomically as the `.nnue` file
//! Fairy-Stockfish reads.

use crate::error::{PipelineError, Result};
use crate::fsfdata;
use crate::run::Run;
use encoding::{Encoder, Precision};
use model::nnue::{train, FeatureLayout, NnueTrainConfig, TrainReport, TrainingSet};
use rules::Position;
use std::ops::{ControlFlow, RangeInclusive};
use std::path::{Path, PathBuf};

/// Positions evaluated by the teacher in one forward pass.
const TEACHER_BATCH: usize = 512;

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
    /// A network whose value is mixed into each position's target value.
    pub teacher: Option<Teacher>,
    /// Leave out positions whose side to move is in check or whose search's best move
    /// captures (nnue-pytorch's "smart fen skipping"): Fairy-Stockfish evaluates quiet
    /// positions, its quiescence search resolving the captures, so a static evaluation
    /// learnt from a position whose value hangs on a capture is learnt where it is not used.
    pub skip_noisy: bool,
}

/// A network of the run's variant and encoding that relabels the positions' values.
#[derive(Clone, Debug)]
pub struct Teacher {
    /// Its model file (`.safetensors` with its sidecar).
    pub model: PathBuf,
    /// Weight of its value (W - L for the side to move) against the search's, from 0 to 1.
    pub weight: f64,
}

/// Samples waiting for one forward pass of the teacher.
struct Relabel {
    net: model::NetEvaluator,
    weight: f32,
    inputs: Vec<f32>,
    pending: Vec<(Position, f32, i8)>,
    /// Sum of |target - search value| and positions relabelled.
    shift: (f64, u64),
}

impl Relabel {
    fn add(&mut self, encoder: &Encoder, position: Position, value: f32, result: i8) {
        let at = self.inputs.len();
        self.inputs.resize(at + encoder.input_len(), 0.0);
        encoder.encode(&position, &mut self.inputs[at..]);
        self.pending.push((position, value, result));
    }

    fn flush(&mut self, set: &mut TrainingSet, layout: &FeatureLayout) {
        if self.pending.is_empty() {
            return;
        }
        let (_, wdl) = self.net.forward_raw(&self.inputs, self.pending.len());
        for (i, (position, value, result)) in self.pending.drain(..).enumerate() {
            let taught = wdl[3 * i] - wdl[3 * i + 2];
            let value = if value.is_finite() { value } else { 0.0 };
            let mixed = self.weight * taught + (1.0 - self.weight) * value;
            self.shift.0 += f64::from((mixed.clamp(-1.0, 1.0) - value.clamp(-1.0, 1.0)).abs());
            self.shift.1 += 1;
            set.push(layout, &position, mixed, result);
        }
        self.inputs.clear();
    }
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
    /// With a teacher: the mean absolute change it made to the target values (in [-1, 1]).
    pub teacher_shift: Option<f64>,
    /// Positions left out as noisy (in check, or a capture for the best move).
    pub noisy: u64,
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
    let mut teacher = match &opts.teacher {
        None => None,
        Some(t) if !(0.0..=1.0).contains(&t.weight) => {
            return Err(PipelineError::TeacherWeight { weight: t.weight })
        }
        Some(t) => {
            let (net, _) = model::open_evaluator(
                &t.model,
                &run.encoder.spec(),
                opts.train.device,
                Precision::F32,
            )?;
            Some(Relabel {
                net,
                weight: t.weight as f32,
                inputs: Vec::new(),
                pending: Vec::new(),
                shift: (0.0, 0),
            })
        }
    };
    let mut set = TrainingSet::new(&layout);
    let mut noisy = 0u64;
    let stats = fsfdata::for_each_sample(run, &opts.generations, true, |s| {
        if opts.skip_noisy && (s.position.in_check() || fsfdata::captures(&s.position, s.best)) {
            noisy += 1;
            return ControlFlow::Continue(());
        }
        let taken = match teacher.as_mut() {
            None => {
                set.push(&layout, &s.position, s.value, s.result);
                set.len()
            }
            Some(t) => {
                t.add(&run.encoder, s.position, s.value, s.result);
                if t.pending.len() >= TEACHER_BATCH {
                    t.flush(&mut set, &layout);
                }
                set.len() + t.pending.len()
            }
        };
        if taken >= opts.positions {
            ControlFlow::Break(())
        } else {
            ControlFlow::Continue(())
        }
    })?;
    if let Some(t) = teacher.as_mut() {
        t.flush(&mut set, &layout);
    }
    if set.is_empty() {
        return Err(PipelineError::NoSamples {
            dir: run.dir.clone(),
            generations: opts.generations.clone(),
        });
    }
    let mut cfg = opts.train.clone();
    cfg.description = format!(
        "Fairy-Stockfish {name} network trained by the shogi-variant self-play trainer on \
         {} {}positions of run {} (variant {}), lambda {}, evaluation scale {}{}",
        set.len(),
        if opts.skip_noisy { "quiet " } else { "" },
        run.cfg.name,
        run.variant.name,
        cfg.lambda,
        cfg.eval_scale,
        match &opts.teacher {
            Some(t) => format!(
                ", values {} from network {}",
                t.weight,
                t.model.file_name().unwrap_or_default().to_string_lossy()
            ),
            None => String::new(),
        }
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
        teacher_shift: teacher.map(|t| t.shift.0 / t.shift.1.max(1) as f64),
        noisy,
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
