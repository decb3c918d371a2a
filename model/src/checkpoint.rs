//! Model files (`.safetensors` + JSON sidecar) and training checkpoints (weights, optimizer
//! state, counters, RNG state), all written atomically: to a temporary name, then renamed.

use crate::config::{ModelConfig, TrainConfig};
use crate::error::{io_err, ModelError, Result};
use crate::net::{NetShape, Network};
use crate::optim::{Ema, Optimizer};
use crate::train::{SplitMix, Trainer};
use rules::VariantSpec;
use selfplay::EncodingSpec;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use tch::{nn::VarStore, Device, Tensor};

/// Version of the sidecar format.
pub const FORMAT_VERSION: u32 = 1;

/// The JSON sidecar of a model: everything needed to use the weights without this program.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ModelMeta {
    /// Sidecar format version.
    pub format_version: u32,
    /// Network shape.
    pub model: ModelConfig,
    /// Input planes.
    pub planes: usize,
    /// Board ranks.
    pub ranks: usize,
    /// Board files.
    pub files: usize,
    /// Policy planes.
    pub policy_planes: usize,
    /// Input and policy layout.
    pub encoding: EncodingSpec,
    /// Variant name.
    pub variant: String,
    /// The variant's full spec (extends resolved).
    pub variant_spec: VariantSpec,
    /// Training steps behind these weights.
    pub step: u64,
    /// Generation number in a run, if any.
    #[serde(default)]
    pub generation: Option<u64>,
    /// Free-form metrics (losses, Elo...).
    #[serde(default)]
    pub metrics: BTreeMap<String, f64>,
    /// What the exported forward returns.
    pub outputs: String,
}

impl ModelMeta {
    /// Metadata for a network of `config` on `encoding`.
    pub fn new(
        config: &ModelConfig,
        shape: NetShape,
        encoding: EncodingSpec,
        variant_spec: VariantSpec,
    ) -> ModelMeta {
        ModelMeta {
            format_version: FORMAT_VERSION,
            model: config.clone(),
            planes: shape.planes,
            ranks: shape.ranks,
            files: shape.files,
            policy_planes: shape.policy_planes,
            variant: encoding.variant.clone(),
            encoding,
            variant_spec,
            step: 0,
            generation: None,
            metrics: BTreeMap::new(),
            outputs: "input [B, planes, ranks, files] float32; output [B, policy_len + 3]: policy \
                      logits (index = plane * ranks * files + square, see encoding) then win, draw, \
                      loss probabilities for the side to move"
                .into(),
        }
    }

    /// Network input/output sizes.
    pub fn shape(&self) -> NetShape {
        NetShape {
            planes: self.planes,
            ranks: self.ranks,
            files: self.files,
            policy_planes: self.policy_planes,
        }
    }
}

/// Writes `bytes` to `path` atomically (temporary file in the same directory, then rename).
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    let tmp = tmp_name(path);
    let written = (|| {
        use std::io::Write;
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(bytes)?;
        // On disk before the rename makes it visible: a crash leaves the old file or the new.
        f.sync_all()
    })();
    if let Err(e) = written {
        let _ = std::fs::remove_file(&tmp);
        return Err(io_err(&tmp)(e));
    }
    std::fs::rename(&tmp, path).map_err(io_err(path))
}

fn tmp_name(path: &Path) -> PathBuf {
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(format!(".tmp{}", std::process::id()));
    path.with_file_name(name)
}

fn save_tensors_atomic(path: &Path, named: &[(String, Tensor)]) -> Result<()> {
    // The temporary name keeps the .safetensors extension so tch picks the format.
    let tmp = path.with_file_name(format!(
        ".tmp{}-{}",
        std::process::id(),
        path.file_name().unwrap_or_default().to_string_lossy()
    ));
    let refs: Vec<(&str, &Tensor)> = named.iter().map(|(n, t)| (n.as_str(), t)).collect();
    let written = Tensor::write_safetensors(&refs, &tmp)
        .map_err(|e| ModelError::Checkpoint {
            path: tmp.display().to_string(),
            reason: format!("cannot write: {e}"),
        })
        // On disk before the rename makes it visible.
        .and_then(|_| {
            std::fs::File::open(&tmp)
                .and_then(|f| f.sync_all())
                .map_err(io_err(&tmp))
        });
    if let Err(e) = written {
        let _ = std::fs::remove_file(&tmp);
        return Err(e);
    }
    std::fs::rename(&tmp, path).map_err(io_err(path))
}

fn sidecar_path(weights: &Path) -> PathBuf {
    weights.with_extension("json")
}

/// Saves weights (`path`, `.safetensors`) and the sidecar (`path` with `.json`), atomically.
pub fn save_model(vs: &VarStore, meta: &ModelMeta, path: &Path) -> Result<()> {
    save_named_model(vs.variables().into_iter().collect(), meta, path)
}

/// Saves the network a trainer publishes, like [`save_model`]: the moving average of its
/// weights when `training.ema_decay` > 0 (with the live batch-norm statistics), else its live
/// weights.
pub fn save_published_model(t: &Trainer, meta: &ModelMeta, path: &Path) -> Result<()> {
    save_named_model(t.published_variables(), meta, path)
}

fn save_named_model(mut named: Vec<(String, Tensor)>, meta: &ModelMeta, path: &Path) -> Result<()> {
    named.sort_by(|a, b| a.0.cmp(&b.0));
    save_tensors_atomic(path, &named)?;
    let json = serde_json::to_vec_pretty(meta).expect("metadata serialises");
    write_atomic(&sidecar_path(path), &json)
}

/// Reads a model's sidecar.
pub fn read_meta(weights: &Path) -> Result<ModelMeta> {
    let sc = sidecar_path(weights);
    let text = std::fs::read_to_string(&sc).map_err(io_err(&sc))?;
    let meta: ModelMeta = serde_json::from_str(&text).map_err(|e| ModelError::Checkpoint {
        path: sc.display().to_string(),
        reason: format!("bad sidecar: {e}"),
    })?;
    if meta.format_version != FORMAT_VERSION {
        return Err(ModelError::Checkpoint {
            path: sc.display().to_string(),
            reason: format!(
                "sidecar format {} is not supported (this build reads {FORMAT_VERSION})",
                meta.format_version
            ),
        });
    }
    Ok(meta)
}

/// Loads tensors into `vs`, first checking that names and shapes match exactly.
pub fn load_weights(vs: &mut VarStore, path: &Path) -> Result<()> {
    let label = path.display().to_string();
    let named = Tensor::read_safetensors(path).map_err(|e| ModelError::Checkpoint {
        path: label.clone(),
        reason: format!("cannot read weights: {e}"),
    })?;
    let file: BTreeMap<String, Tensor> = named.into_iter().collect();
    let vars = vs.variables();
    let mut names: Vec<&String> = vars.keys().collect();
    names.sort();
    for name in names {
        let want = vars[name].size();
        match file.get(name) {
            None => {
                return Err(ModelError::Checkpoint {
                    path: label,
                    reason: format!("missing tensor {name} (the network needs shape {want:?})"),
                })
            }
            Some(t) if t.size() != want => {
                return Err(ModelError::Checkpoint {
                    path: label,
                    reason: format!(
                        "tensor {name} has shape {:?}, the network needs {want:?}",
                        t.size()
                    ),
                })
            }
            Some(_) => {}
        }
    }
    if let Some(extra) = file.keys().find(|k| !vars.contains_key(*k)) {
        return Err(ModelError::Checkpoint {
            path: label,
            reason: format!("unexpected tensor {extra} (not part of this network)"),
        });
    }
    tch::no_grad(|| {
        for (name, mut v) in vars {
            v.copy_(&file[&name]);
        }
    });
    Ok(())
}

/// Checks that a model's encoding is the one expected (same variant and layout).
pub fn check_encoding(meta: &ModelMeta, expected: &EncodingSpec, path: &Path) -> Result<()> {
    if meta.encoding.variant != expected.variant {
        return Err(ModelError::Checkpoint {
            path: path.display().to_string(),
            reason: format!(
                "model is for variant {:?}, not {:?}",
                meta.encoding.variant, expected.variant
            ),
        });
    }
    if &meta.encoding != expected {
        return Err(ModelError::Checkpoint {
            path: path.display().to_string(),
            reason: format!(
                "model's encoding of {} ({} planes, policy {}) differs from this build's ({} planes, \
                 policy {}): the variant config changed since it was trained",
                expected.variant,
                meta.encoding.planes.len(),
                meta.encoding.policy_len,
                expected.planes.len(),
                expected.policy_len
            ),
        });
    }
    Ok(())
}

/// Loads a model file into a new network on `device`.
pub fn load_model(path: &Path, device: Device) -> Result<(VarStore, Network, ModelMeta)> {
    let meta = read_meta(path)?;
    let mut vs = VarStore::new(device);
    let net = Network::new(&vs.root(), &meta.model, meta.shape());
    load_weights(&mut vs, path)?;
    Ok((vs, net, meta))
}

/// Counters and state of a checkpoint beyond the tensors.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CheckpointState {
    /// Model metadata.
    pub meta: ModelMeta,
    /// Training hyper-parameters in force.
    pub train: TrainConfig,
    /// Training steps taken.
    pub step: u64,
    /// Optimizer steps (bias correction).
    pub optimizer_steps: u64,
    /// Sampling RNG state.
    pub rng_state: u64,
    /// Mixed-precision loss scale.
    pub loss_scale: f64,
    /// Finite steps since the loss scale changed.
    pub good_steps: u64,
    /// Updates of the weights' moving average, when the checkpoint holds one
    /// (`<stem>.ema.safetensors`).
    #[serde(default)]
    pub ema_updates: Option<u64>,
    /// The caller's own counters (the run loop's generation, games...).
    #[serde(default)]
    pub extra: serde_json::Value,
    /// Set when the latest checkpoint was damaged and this older one was loaded instead.
    #[serde(skip)]
    pub fallback: Option<String>,
}

/// Saves a checkpoint into `dir` as `step-<n>.{safetensors,optim.safetensors,state.json,json}`
/// (and `step-<n>.ema.safetensors` with the weights' moving average, when the trainer keeps
/// one), then points `dir/LATEST` at it; keeps the previous one, removes older ones.
pub fn save_checkpoint(
    dir: &Path,
    t: &Trainer,
    meta: &ModelMeta,
    extra: serde_json::Value,
) -> Result<()> {
    std::fs::create_dir_all(dir).map_err(io_err(dir))?;
    let stem = format!("step-{:09}", t.step);
    let mut m = meta.clone();
    m.step = t.step;
    save_model(&t.vs, &m, &dir.join(format!("{stem}.safetensors")))?;
    save_tensors_atomic(
        &dir.join(format!("{stem}.optim.safetensors")),
        &t.opt.state(),
    )?;
    if let Some(e) = t.ema() {
        save_tensors_atomic(&dir.join(format!("{stem}.ema.safetensors")), &e.state())?;
    }
    let state = CheckpointState {
        meta: m,
        train: t.cfg.clone(),
        step: t.step,
        optimizer_steps: t.opt.steps,
        rng_state: t.rng.0,
        loss_scale: t.loss_scale,
        good_steps: t.good_steps,
        ema_updates: t.ema().map(|e| e.updates),
        extra,
        fallback: None,
    };
    write_atomic(
        &dir.join(format!("{stem}.state.json")),
        &serde_json::to_vec_pretty(&state).expect("state serialises"),
    )?;
    let previous = std::fs::read_to_string(dir.join("LATEST")).ok();
    write_atomic(&dir.join("LATEST"), stem.as_bytes())?;
    // Prune everything but this checkpoint and the previous one.
    let keep = [Some(stem), previous.map(|s| s.trim().to_string())];
    if let Ok(entries) = std::fs::read_dir(dir) {
        for e in entries.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            if let Some(s) = name.strip_prefix("step-") {
                let s = format!("step-{}", s.split('.').next().unwrap_or(""));
                if !keep.iter().flatten().any(|k| *k == s) {
                    let _ = std::fs::remove_file(e.path());
                }
            }
        }
    }
    Ok(())
}

/// Whether `dir` holds a checkpoint.
pub fn has_checkpoint(dir: &Path) -> bool {
    dir.join("LATEST").exists()
}

/// Loads the latest checkpoint of `dir` into a trainer on `device`. `train` overrides the saved
/// hyper-parameters when given (the optimizer kind must stay the same). With `ema_decay` > 0,
/// the weights' moving average continues from the checkpoint's, or starts from the loaded
/// weights when the checkpoint has none. `LATEST` must name a checkpoint of `dir`
/// (`step-<n>`); when that checkpoint is damaged, the newest one that loads is used instead
/// and `CheckpointState::fallback` says why.
pub fn load_checkpoint(
    dir: &Path,
    device: Device,
    train: Option<TrainConfig>,
) -> Result<(Trainer, CheckpointState)> {
    let latest = dir.join("LATEST");
    let stem = std::fs::read_to_string(&latest).map_err(io_err(&latest))?;
    let stem = stem.trim();
    let valid = |s: &str| {
        s.strip_prefix("step-")
            .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
    };
    if !valid(stem) {
        return Err(ModelError::Checkpoint {
            path: latest.display().to_string(),
            reason: format!("{stem:?} is not a checkpoint name of this directory (step-<n>)"),
        });
    }
    let first = match load_stem(dir, stem, device, train.clone()) {
        Ok(x) => return Ok(x),
        Err(e) => e,
    };
    // Older checkpoints, newest first.
    let mut others: Vec<String> = std::fs::read_dir(dir)
        .map_err(io_err(dir))?
        .flatten()
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            name.strip_suffix(".state.json").map(str::to_string)
        })
        .filter(|s| valid(s) && s.as_str() != stem)
        .collect();
    others.sort_by(|a, b| b.cmp(a));
    for other in others {
        if let Ok((t, mut st)) = load_stem(dir, &other, device, train.clone()) {
            st.fallback = Some(format!("{first}; using {other} instead"));
            return Ok((t, st));
        }
    }
    Err(first)
}

fn load_stem(
    dir: &Path,
    stem: &str,
    device: Device,
    train: Option<TrainConfig>,
) -> Result<(Trainer, CheckpointState)> {
    let sp = dir.join(format!("{stem}.state.json"));
    let text = std::fs::read_to_string(&sp).map_err(io_err(&sp))?;
    let state: CheckpointState =
        serde_json::from_str(&text).map_err(|e| ModelError::Checkpoint {
            path: sp.display().to_string(),
            reason: format!("bad checkpoint state: {e}"),
        })?;
    let cfg = train.unwrap_or_else(|| state.train.clone());
    if cfg.optimizer != state.train.optimizer {
        return Err(ModelError::Checkpoint {
            path: sp.display().to_string(),
            reason: format!(
                "checkpoint was trained with {:?}; the config asks for {:?}",
                state.train.optimizer, cfg.optimizer
            ),
        });
    }
    let mut vs = VarStore::new(device);
    let net = Network::new(&vs.root(), &state.meta.model, state.meta.shape());
    load_weights(&mut vs, &dir.join(format!("{stem}.safetensors")))?;
    let mut opt = Optimizer::new(cfg.optimizer.clone(), &vs);
    let op = dir.join(format!("{stem}.optim.safetensors"));
    let named = Tensor::read_safetensors(&op).map_err(|e| ModelError::Checkpoint {
        path: op.display().to_string(),
        reason: format!("cannot read optimizer state: {e}"),
    })?;
    let named = named
        .into_iter()
        .map(|(k, t)| (k, t.to_device(device)))
        .collect();
    opt.load_state(named, state.optimizer_steps)
        .map_err(|reason| ModelError::Checkpoint {
            path: op.display().to_string(),
            reason,
        })?;
    let ema = if cfg.ema_decay > 0.0 {
        let mut avg = Ema::new(cfg.ema_decay, &vs);
        if let Some(updates) = state.ema_updates {
            let ep = dir.join(format!("{stem}.ema.safetensors"));
            let named = Tensor::read_safetensors(&ep).map_err(|e| ModelError::Checkpoint {
                path: ep.display().to_string(),
                reason: format!("cannot read the weights' moving average: {e}"),
            })?;
            let named = named
                .into_iter()
                .map(|(k, t)| (k, t.to_device(device)))
                .collect();
            avg.load_state(named, updates)
                .map_err(|reason| ModelError::Checkpoint {
                    path: ep.display().to_string(),
                    reason,
                })?;
        }
        Some(avg)
    } else {
        None
    };
    let t = Trainer {
        vs,
        net,
        opt,
        cfg,
        step: state.step,
        device,
        loss_scale: state.loss_scale,
        good_steps: state.good_steps,
        rng: SplitMix(state.rng_state),
        ema,
        progress: 0.0,
    };
    Ok((t, state))
}
