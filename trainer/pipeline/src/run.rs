//! The run directory and its state. Everything is written by atomic renames, so a killed run
//! resumes where it stopped:
//!
//! ```text
//! config.toml   frozen run config          variant.toml, model.toml   frozen specs
//! state.json    published generation, self-play network, totals, evaluation history
//! models/<gen>.safetensors + .json         published networks
//! samples/<gen>/*.zst                      games (see store)
//! checkpoint/   trainer: weights, optimizer, counters
//! tb/  games/  log.txt  workers/
//! ```

use crate::config::RunConfig;
use crate::error::{IoOp, PipelineError, Result};
use encoding::Encoder;
use model::{write_atomic, Device, DeviceExt, ModelConfig};
use rules::{Variant, VariantSpec};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::sync::Arc;

pub use arena::load_variant;

/// The run's progress, written by the trainer only.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RunState {
    /// Newest published network (models/<generation>.safetensors exists).
    pub generation: u64,
    /// Network self-play uses (the newest one without gating).
    pub best: u64,
    /// Games stored when the state was written.
    pub total_games: u64,
    /// Samples stored when the state was written.
    pub total_samples: u64,
    /// Training steps done.
    #[serde(default)]
    pub steps: u64,
    /// Wall seconds the run has been going, summed over resumes.
    #[serde(default)]
    pub seconds: f64,
    /// Whether the run reached its generations or time budget.
    #[serde(default)]
    pub complete: bool,
    /// One entry per evaluated generation.
    #[serde(default)]
    pub history: Vec<GenerationReport>,
}

/// What the evaluation of one generation measured.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct GenerationReport {
    /// Generation evaluated.
    pub generation: u64,
    /// Run time when it was published (s).
    #[serde(default)]
    pub seconds: f64,
    /// Matches, from the new network's point of view.
    pub matches: Vec<MatchReport>,
    /// Whether it became the self-play network.
    pub promoted: bool,
    /// Its rating on the run's ladder, when it played the ladder.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ladder: Option<LadderReport>,
}

/// A generation's rating on the ladder: one maximum-likelihood Elo from all its games against
/// the rungs it played, with the 95% likelihood-ratio interval.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct LadderReport {
    /// The ladder's name.
    pub name: String,
    /// Elo on the ladder's scale.
    pub elo: f64,
    /// 95% interval, low end.
    pub low: f64,
    /// 95% interval, high end.
    pub high: f64,
    /// Games it is based on.
    pub games: u64,
    /// The rungs played and their calibrated Elo.
    pub rungs: Vec<(String, f64)>,
}

/// A match summary from the evaluated network's point of view.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct MatchReport {
    /// Opponent label (`gen12`, `gen0`, an anchor's name).
    pub opponent: String,
    /// Wins.
    pub wins: u64,
    /// Draws.
    pub draws: u64,
    /// Losses.
    pub losses: u64,
    /// Mean score.
    pub score: f64,
    /// Elo difference.
    pub elo: f64,
    /// 95% interval, low end.
    pub elo_low: f64,
    /// 95% interval, high end.
    pub elo_high: f64,
    /// Games the opponent lost by breaking (a crash, a timeout, a malformed answer) rather
    /// than by play; a ladder rung with any is left out of the ladder.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub broken: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// An open run directory (read-only parts shared by every role).
#[derive(Clone)]
pub struct Run {
    /// The directory.
    pub dir: PathBuf,
    /// Frozen config.
    pub cfg: RunConfig,
    /// The variant.
    pub variant: Arc<Variant>,
    /// Its encoder.
    pub encoder: Encoder,
    /// Network shape.
    pub model: ModelConfig,
    /// Device for networks: the config's, `auto` resolved.
    pub device: Device,
}

impl Run {
    /// Opens `runs_root/<name>` for `config_path`: creates it, or resumes it when it exists (its
    /// frozen config is then used). With `resume_only` a missing directory is an error.
    pub fn open(config_path: &Path, runs_root: &Path, resume_only: bool) -> Result<Run> {
        let text = std::fs::read_to_string(config_path)
            .map_err(PipelineError::io(IoOp::Read, config_path))?;
        let cfg = RunConfig::from_toml(&text, &config_path.display().to_string())?;
        let dir = runs_root.join(&cfg.name);
        if dir.join("config.toml").exists() {
            let frozen_path = dir.join("config.toml");
            let frozen = std::fs::read_to_string(&frozen_path)
                .map_err(PipelineError::io(IoOp::Read, &frozen_path))?;
            if frozen != text {
                eprintln!(
                    "note: {} exists; resuming with its frozen config.toml (edit that file to change a resumed run)",
                    dir.display()
                );
            }
            return Run::resume(&dir);
        }
        if resume_only {
            return Err(PipelineError::NoRunToResume { dir });
        }
        let variant = load_variant(&cfg.variant)?;
        let encoder = encoder_for(&variant, &cfg, config_path)?;
        let model = ModelConfig::load(&cfg.model)?;
        let device = cfg.device.resolved();
        let models = dir.join("models");
        std::fs::create_dir_all(&models).map_err(PipelineError::io(IoOp::Create, &models))?;
        let vspec = to_toml(&variant.spec, "the variant")?;
        write_atomic(&dir.join("variant.toml"), vspec.as_bytes())?;
        let mtext = to_toml(&model, "the model")?;
        write_atomic(&dir.join("model.toml"), mtext.as_bytes())?;
        let run = Run {
            encoder,
            dir,
            cfg,
            variant,
            model,
            device,
        };
        if !run.model_path(0).exists() {
            crate::train::write_generation_zero(&run)?;
        }
        run.save_state(&RunState::default())?;
        // The config goes last: its presence marks a complete run directory.
        write_atomic(&run.dir.join("config.toml"), text.as_bytes())?;
        Ok(run)
    }

    /// Opens the run in `dir` from its frozen files.
    pub fn resume(dir: &Path) -> Result<Run> {
        let cfg_path = dir.join("config.toml");
        let text = std::fs::read_to_string(&cfg_path).map_err(|source| PipelineError::NotARun {
            path: cfg_path.clone(),
            source,
        })?;
        let cfg = RunConfig::from_toml(&text, &cfg_path.display().to_string())?;
        let vpath = dir.join("variant.toml");
        let vtext =
            std::fs::read_to_string(&vpath).map_err(PipelineError::io(IoOp::Read, &vpath))?;
        let spec = VariantSpec::from_toml(&vtext, &vpath.display().to_string())?;
        let variant = Arc::new(Variant::compile_named(spec, &vpath.display().to_string())?);
        let model = ModelConfig::load(&dir.join("model.toml").display().to_string())?;
        let device = cfg.device.resolved();
        let encoder = encoder_for(&variant, &cfg, &cfg_path)?;
        Ok(Run {
            encoder,
            dir: dir.to_path_buf(),
            cfg,
            variant,
            model,
            device,
        })
    }

    /// Fails with the path and the OS reason when the run directory cannot be written (a
    /// read-only or full disk), before any role starts.
    pub fn check_writable(&self) -> Result<()> {
        // Not a temporary name: a trainer starting at the same moment removes those, and the
        // probe vanishing under a worker must not read as a read-only directory.
        let probe = self.dir.join(format!(".probe-{}", std::process::id()));
        std::fs::write(&probe, b"probe")
            .and_then(|_| match std::fs::remove_file(&probe) {
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
                other => other,
            })
            .map_err(|source| PipelineError::NotWritable {
                dir: self.dir.clone(),
                source,
            })
    }

    /// Removes what killed writers of the trainer's files left behind (the trainer owns
    /// `checkpoint/`, `models/` and the state; only one trainer runs per directory).
    pub fn clean_trainer_temporaries(&self) -> usize {
        let dirs = [
            self.dir.clone(),
            self.dir.join("checkpoint"),
            self.dir.join("models"),
            self.dir.join("games"),
        ];
        crate::store::clean_temporaries_in(&dirs, std::time::Duration::ZERO)
    }

    /// `models/<gen>.safetensors`.
    pub fn model_path(&self, generation: u64) -> PathBuf {
        self.dir
            .join("models")
            .join(format!("{generation:06}.safetensors"))
    }

    /// The run's ladder (None without `evaluation.ladder`): the copy frozen in the run
    /// directory (`ladder.toml` + `ladder.calibration.toml`), so a recalibration elsewhere
    /// never moves a running scale; made from the config's ladder on first use.
    pub fn ladder(&self) -> Result<Option<crate::ladder::Ladder>> {
        let name = &self.cfg.evaluation.ladder;
        if name.is_empty() {
            return Ok(None);
        }
        let frozen = self.dir.join("ladder.toml");
        if frozen.exists() {
            let mut l = crate::ladder::Ladder::load_path(&frozen)?;
            l.name = Path::new(name)
                .file_stem()
                .map_or(l.name, |s| s.to_string_lossy().into_owned());
            return Ok(Some(l));
        }
        let l = crate::ladder::Ladder::load(name)?;
        l.calibration
            .save(&crate::ladder::calibration_path(&frozen))?;
        let spec = to_toml(&l.spec, "the ladder")?;
        write_atomic(&frozen, spec.as_bytes())?;
        Ok(Some(l))
    }

    /// Reads state.json; a damaged one is an error naming the file.
    pub fn load_state(&self) -> Result<RunState> {
        let path = self.dir.join("state.json");
        let s = read_state(&path)?;
        if s.best > s.generation || !self.model_path(s.generation).exists() {
            return Err(PipelineError::StateModels {
                path,
                generation: s.generation,
                best: s.best,
                models: self.dir.join("models"),
            });
        }
        Ok(s)
    }

    /// Writes state.json atomically.
    pub fn save_state(&self, s: &RunState) -> Result<()> {
        let bytes = serde_json::to_vec_pretty(s).map_err(|source| PipelineError::JsonOut {
            what: "the state",
            source,
        })?;
        write_atomic(&self.dir.join("state.json"), &bytes)?;
        Ok(())
    }

    /// A network of the run as a search evaluator.
    pub fn evaluator(&self, generation: u64) -> Result<model::NetEvaluator> {
        let path = self.model_path(generation);
        let (net, _) = model::open_evaluator(
            &path,
            &self.encoder.spec(),
            self.device,
            self.cfg.selfplay.precision,
        )?;
        Ok(net)
    }
}

/// Reads and parses a `state.json` (its generations not checked); errors name the file.
pub fn read_state(path: &Path) -> Result<RunState> {
    let text = std::fs::read_to_string(path).map_err(PipelineError::io(IoOp::Read, path))?;
    serde_json::from_str(&text).map_err(|source| PipelineError::State {
        path: path.to_path_buf(),
        source,
    })
}

/// The encoder of `cfg`'s layout for `variant`; an error names the config file.
fn encoder_for(variant: &Arc<Variant>, cfg: &RunConfig, config_path: &Path) -> Result<Encoder> {
    Encoder::with_layout(variant.clone(), cfg.encoding).map_err(|source| PipelineError::Encoding {
        file: config_path.display().to_string(),
        source,
    })
}

/// `value` as TOML; `what` names it in an error.
pub(crate) fn to_toml(value: &impl Serialize, what: &'static str) -> Result<String> {
    toml::to_string(value).map_err(|source| PipelineError::TomlOut { what, source })
}
