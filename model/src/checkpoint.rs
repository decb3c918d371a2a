//! Model files (`.safetensors` + JSON sidecar) and training checkpoints (weights, optimizer
//! state, counters, RNG state), all written atomically: to a temporary name, then renamed.

use crate::config::{ModelConfig, TrainConfig};
use crate::device::TorchDevice;
use crate::error::{io_err, ModelError, Result};
use crate::net::{NetShape, Network, OPPONENT_POLICY_PREFIX, SOFT_POLICY_PREFIX};
use crate::optim::{Ema, Optimizer};
use crate::train::{SplitMix, Trainer};
use crate::{Device, DeviceExt};
use encoding::EncodingSpec;
use rules::VariantSpec;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use tch::{nn::VarStore, Kind, Tensor};

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

/// Writes `bytes` to `path` atomically ([`atomic_file`]: temporary name, fsync, rename,
/// directory fsync).
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    Ok(atomic_file::write_bytes(path, bytes)?)
}

fn save_tensors_atomic(path: &Path, named: &[(String, Tensor)]) -> Result<()> {
    // The temporary name keeps the .safetensors extension so tch picks the format.
    let refs: Vec<(&str, &Tensor)> = named.iter().map(|(n, t)| (n.as_str(), t)).collect();
    atomic_file::write_with(path, |tmp| {
        Tensor::write_safetensors(&refs, tmp).map_err(|e| ModelError::Checkpoint {
            path: tmp.display().to_string(),
            reason: format!("cannot write: {e}"),
        })
    })
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
    check_meta(&meta, &sc.display().to_string(), "")?;
    Ok(meta)
}

/// Checks every shape field of `meta` before anything is allocated from it: the network shape
/// against the limits of model configs, and the input, board and policy sizes against what this
/// build's encoder gives for the variant the sidecar describes. `file` names the file in errors,
/// `prefix` the object holding `meta` in it (`meta.` in a checkpoint state).
fn check_meta(meta: &ModelMeta, file: &str, prefix: &str) -> Result<()> {
    let bad = |key: &str, reason: String| ModelError::Config {
        file: file.to_string(),
        key: format!("{prefix}{key}"),
        reason,
    };
    meta.model.validate(file).map_err(|e| match e {
        ModelError::Config { key, reason, .. } => bad(&format!("model.{key}"), reason),
        e => e,
    })?;
    let variant = rules::Variant::compile_named(meta.variant_spec.clone(), file)
        .map_err(|e| bad("variant_spec", format!("does not compile: {e}")))?;
    let enc = encoding::Encoder::for_spec(std::sync::Arc::new(variant), &meta.encoding)
        .map_err(|e| bad("encoding.layout", e.to_string()))?;
    let sizes = [
        ("planes", meta.planes, enc.num_planes()),
        ("ranks", meta.ranks, enc.ranks()),
        ("files", meta.files, enc.files()),
        ("policy_planes", meta.policy_planes, enc.policy_planes()),
        (
            "encoding.planes",
            meta.encoding.planes.len(),
            enc.num_planes(),
        ),
        ("encoding.ranks", meta.encoding.ranks, enc.ranks()),
        ("encoding.files", meta.encoding.files, enc.files()),
        (
            "encoding.policy_len",
            meta.encoding.policy_len,
            enc.policy_len(),
        ),
    ];
    for (key, got, want) in sizes {
        if got != want {
            return Err(bad(
                key,
                format!(
                    "{got} does not match its variant {} ({} encoding: {want})",
                    enc.variant().name,
                    enc.layout()
                ),
            ));
        }
    }
    Ok(())
}

/// The tensor names in a safetensors file, read from its header alone (8 bytes of header
/// length, then a JSON object of names; `__metadata__` is not a tensor).
pub fn tensor_names(path: &Path) -> Result<Vec<String>> {
    use std::io::Read;
    let bad = |reason: String| ModelError::Checkpoint {
        path: path.display().to_string(),
        reason,
    };
    let mut f = std::fs::File::open(path).map_err(io_err(path))?;
    let size = f.metadata().map_err(io_err(path))?.len();
    let mut len = [0u8; 8];
    f.read_exact(&mut len)
        .map_err(|e| bad(format!("cannot read the safetensors header: {e}")))?;
    let len = u64::from_le_bytes(len);
    if len > size.saturating_sub(8) || len > 1 << 27 {
        return Err(bad(format!(
            "safetensors header of {len} bytes in a file of {size}"
        )));
    }
    let mut header = vec![0u8; len as usize];
    f.read_exact(&mut header)
        .map_err(|e| bad(format!("cannot read the safetensors header: {e}")))?;
    let map: serde_json::Map<String, serde_json::Value> =
        serde_json::from_slice(&header).map_err(|e| bad(format!("bad safetensors header: {e}")))?;
    Ok(map
        .into_iter()
        .map(|(k, _)| k)
        .filter(|k| k != "__metadata__")
        .collect())
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
            v.f_copy_(&file[&name])
                .map_err(|e| ModelError::Checkpoint {
                    path: label.clone(),
                    reason: format!("cannot use tensor {name}: {e}"),
                })?;
        }
        Ok(())
    })
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
    let mut vs = VarStore::new(device.torch());
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
    let label = sp.display().to_string();
    // Nothing is allocated from the state before its shapes and sizes are checked.
    check_meta(&state.meta, &label, "meta.")?;
    if !(state.loss_scale.is_finite() && state.loss_scale > 0.0) {
        return Err(ModelError::Config {
            file: label,
            key: "loss_scale".into(),
            reason: format!("{} is not a positive number", state.loss_scale),
        });
    }
    let cfg = match train {
        Some(cfg) => cfg,
        None => {
            state.train.validate(&label).map_err(|e| match e {
                ModelError::Config { file, key, reason } => ModelError::Config {
                    file,
                    key: key.replacen("training.", "train.", 1),
                    reason,
                },
                e => e,
            })?;
            state.train.clone()
        }
    };
    if cfg.optimizer != state.train.optimizer {
        return Err(ModelError::Checkpoint {
            path: sp.display().to_string(),
            reason: format!(
                "checkpoint was trained with {:?}; the config asks for {:?}",
                state.train.optimizer, cfg.optimizer
            ),
        });
    }
    let mut vs = VarStore::new(device.torch());
    let mut net = Network::new(&vs.root(), &state.meta.model, state.meta.shape());
    let wp = dir.join(format!("{stem}.safetensors"));
    // The training-only outputs are trained (and saved) only by runs that asked for them;
    // their optimizer state is in the checkpoint then, so they cannot be added to a resumed run.
    let names = tensor_names(&wp)?;
    let trained = |prefix: &str| names.iter().any(|n| n.starts_with(prefix));
    let refuse = |output: &str, key: &str| ModelError::Checkpoint {
        path: wp.display().to_string(),
        reason: format!(
            "this run was trained without the {output} output; \
             training.{key} > 0 cannot be turned on when resuming it"
        ),
    };
    if trained(SOFT_POLICY_PREFIX) {
        net.add_soft_policy(&vs.root());
    } else if cfg.soft_policy_weight > 0.0 {
        return Err(refuse("soft-policy", "soft_policy_weight"));
    }
    if trained(OPPONENT_POLICY_PREFIX) {
        net.add_opponent_policy(&vs.root());
    } else if cfg.opponent_policy_weight > 0.0 {
        return Err(refuse("opponent-reply", "opponent_policy_weight"));
    }
    load_weights(&mut vs, &wp)?;
    let mut opt = Optimizer::new(cfg.optimizer.clone(), &vs);
    let op = dir.join(format!("{stem}.optim.safetensors"));
    let named = Tensor::read_safetensors(&op).map_err(|e| ModelError::Checkpoint {
        path: op.display().to_string(),
        reason: format!("cannot read optimizer state: {e}"),
    })?;
    let named = named
        .into_iter()
        .map(|(k, t)| (k, t.to_device(vs.device())))
        .collect();
    opt.load_state(named, state.optimizer_steps)
        .map_err(|e| ModelError::Checkpoint {
            path: op.display().to_string(),
            reason: format!("optimizer state: {e}"),
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
                .map(|(k, t)| (k, t.to_device(vs.device())))
                .collect();
            avg.load_state(named, updates)
                .map_err(|e| ModelError::Checkpoint {
                    path: ep.display().to_string(),
                    reason: format!("weight average: {e}"),
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
        device: device.resolved(),
        loss_scale: state.loss_scale,
        good_steps: state.good_steps,
        rng: SplitMix(state.rng_state),
        ema,
        progress: 0.0,
    };
    Ok((t, state))
}

/// Averages networks of one shape and encoding, tensor by tensor (the batch-norm statistics
/// too), and saves the mean at `out` with the last model's sidecar, its `metrics` holding
/// `averaged_networks`. A stochastic weight average of a run's last networks (KataGo's SWA):
/// their training noise partly cancels. Each input is checked like any model file; one of
/// another shape or encoding is refused with its path.
pub fn average_models(paths: &[PathBuf], out: &Path) -> Result<ModelMeta> {
    let Some(first) = paths.first() else {
        return Err(ModelError::Checkpoint {
            path: out.display().to_string(),
            reason: "no network to average".into(),
        });
    };
    let _guard = tch::no_grad_guard();
    let (vs, _net, first_meta) = load_model(first, Device::Cpu)?;
    let mut sums: BTreeMap<String, Tensor> = vs
        .variables()
        .into_iter()
        .map(|(n, t)| (n, t.to_kind(Kind::Double)))
        .collect();
    let mut meta = first_meta.clone();
    for p in &paths[1..] {
        let m = read_meta(p)?;
        let differs = if m.encoding != first_meta.encoding {
            Some("encoding")
        } else if m.model != first_meta.model || m.shape() != first_meta.shape() {
            Some("network shape")
        } else {
            None
        };
        if let Some(what) = differs {
            return Err(ModelError::Checkpoint {
                path: p.display().to_string(),
                reason: format!("its {what} differs from {}'s", first.display()),
            });
        }
        let (vs, _net, m) = load_model(p, Device::Cpu)?;
        for (name, t) in vs.variables() {
            let s = sums.get_mut(&name).expect("same shape, same names");
            *s += t.to_kind(Kind::Double);
        }
        meta = m;
    }
    let n = paths.len() as f64;
    for (name, mut v) in vs.variables() {
        v.copy_(&(&sums[&name] / n).to_kind(Kind::Float));
    }
    meta.metrics.insert("averaged_networks".into(), n);
    save_model(&vs, &meta, out)?;
    Ok(meta)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{json, Value};
    use std::sync::Arc;

    fn temp_dir(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("model-ckpt-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    fn tiny() -> ModelConfig {
        ModelConfig::from_toml(
            "blocks = 1\nchannels = 8\npolicy_channels = 4\nvalue_channels = 4\n\
             value_hidden = 8\n",
            "tiny.toml",
        )
        .unwrap()
    }

    fn minishogi() -> (encoding::Encoder, ModelMeta) {
        let v = Arc::new(rules::Variant::builtin("minishogi").unwrap());
        let enc = encoding::Encoder::new(v.clone());
        let meta = ModelMeta::new(&tiny(), crate::shape_of(&enc), enc.spec(), v.spec.clone());
        (enc, meta)
    }

    /// A good model `m.safetensors` (with `m.json`) in `dir`.
    fn good_model(dir: &Path) -> PathBuf {
        let (enc, meta) = minishogi();
        let vs = VarStore::new(tch::Device::Cpu);
        let _net = Network::new(&vs.root(), &tiny(), crate::shape_of(&enc));
        let path = dir.join("m.safetensors");
        save_model(&vs, &meta, &path).unwrap();
        assert!(load_model(&path, Device::Cpu).is_ok());
        path
    }

    fn set(j: &mut Value, pointer: &str, v: Value) {
        *j.pointer_mut(pointer)
            .unwrap_or_else(|| panic!("no {pointer} in the sidecar")) = v;
    }

    /// Sidecar edits and the key each one must be refused at: sizes far beyond anything
    /// libtorch could allocate, and small ones that merely disagree with the variant.
    fn hostile_edits(planes: usize) -> Vec<(&'static str, Value, &'static str)> {
        vec![
            ("/model/channels", json!(1_000_000_000u64), "model.channels"),
            ("/model/blocks", json!(1_000_000_000u64), "model.blocks"),
            ("/model/blocks", json!(0), "model.blocks"),
            (
                "/model/policy_channels",
                json!(1u64 << 40),
                "model.policy_channels",
            ),
            (
                "/model/value_channels",
                json!(1u64 << 40),
                "model.value_channels",
            ),
            (
                "/model/value_hidden",
                json!(1u64 << 40),
                "model.value_hidden",
            ),
            ("/planes", json!(1_000_000_000u64), "planes"),
            ("/planes", json!(planes + 1), "planes"),
            ("/policy_planes", json!(1u64 << 40), "policy_planes"),
            ("/ranks", json!(1_000_000u64), "ranks"),
            ("/files", json!(0), "files"),
            (
                "/encoding/policy_len",
                json!(1u64 << 50),
                "encoding.policy_len",
            ),
            ("/encoding/planes", json!(["a"]), "encoding.planes"),
            ("/encoding/layout", json!("dlshogi"), "encoding.layout"),
            ("/variant_spec/files", json!(255), "variant_spec"),
        ]
    }

    #[test]
    fn hostile_sidecar_shapes_are_refused_before_anything_is_allocated() {
        let dir = temp_dir("hostile-sidecar");
        let path = good_model(&dir);
        let sc = dir.join("m.json");
        let good: Value = serde_json::from_slice(&std::fs::read(&sc).unwrap()).unwrap();
        let planes = good["planes"].as_u64().unwrap() as usize;
        for (pointer, value, key) in hostile_edits(planes) {
            let mut j = good.clone();
            set(&mut j, pointer, value.clone());
            std::fs::write(&sc, serde_json::to_vec(&j).unwrap()).unwrap();
            let what = format!("{pointer} = {value}");
            for e in [
                read_meta(&path).map(|_| ()),
                std::panic::catch_unwind(|| load_model(&path, Device::Cpu))
                    .unwrap_or_else(|_| panic!("{what}: load_model panicked"))
                    .map(|_| ()),
            ] {
                let e = e.err().unwrap_or_else(|| panic!("{what}: accepted"));
                let e = e.to_string();
                assert!(
                    e.contains("m.json") && e.contains(&format!(": {key}: ")),
                    "{what}: {e}"
                );
            }
        }
        std::fs::write(&sc, serde_json::to_vec(&good).unwrap()).unwrap();
        assert!(load_model(&path, Device::Cpu).is_ok());
    }

    /// Two checkpoints of a tiny trainer in a fresh `dir`: steps 1 and 2 (the latest).
    fn two_checkpoints(name: &str) -> PathBuf {
        let dir = temp_dir(name);
        let (enc, meta) = minishogi();
        let mut t = Trainer::new(
            &tiny(),
            crate::shape_of(&enc),
            TrainConfig::default(),
            Device::Cpu,
            3,
        );
        for step in [1, 2] {
            t.step = step;
            save_checkpoint(&dir, &t, &meta, Value::Null).unwrap();
        }
        dir
    }

    #[test]
    fn hostile_latest_checkpoint_falls_back_to_the_previous_one() {
        let state2 = "step-000000002.state.json";
        let dir = two_checkpoints("hostile-state");
        let sp = dir.join(state2);
        let good: Value = serde_json::from_slice(&std::fs::read(&sp).unwrap()).unwrap();
        let planes = good["meta"]["planes"].as_u64().unwrap() as usize;
        let mut edits: Vec<(String, Value, String)> = hostile_edits(planes)
            .into_iter()
            .map(|(p, v, k)| (format!("/meta{p}"), v, format!("meta.{k}")))
            .collect();
        edits.push(("/loss_scale".into(), json!(-1.0), "loss_scale".into()));
        edits.push((
            "/train/batch_size".into(),
            json!(1u64 << 40),
            "train.batch_size".into(),
        ));
        for (pointer, value, key) in edits {
            let mut j = good.clone();
            set(&mut j, &pointer, value.clone());
            std::fs::write(&sp, serde_json::to_vec(&j).unwrap()).unwrap();
            let what = format!("{pointer} = {value}");
            let (t, st) = std::panic::catch_unwind(|| load_checkpoint(&dir, Device::Cpu, None))
                .unwrap_or_else(|_| panic!("{what}: load_checkpoint panicked"))
                .unwrap_or_else(|e| panic!("{what}: no fallback: {e}"));
            assert_eq!((t.step, st.step), (1, 1), "{what}");
            let why = st
                .fallback
                .unwrap_or_else(|| panic!("{what}: no fallback noted"));
            assert!(
                why.contains(state2)
                    && why.contains(&format!(": {key}: "))
                    && why.contains("using step-000000001 instead"),
                "{what}: {why}"
            );
        }
        // With no previous checkpoint to fall back to, the error itself names file and key.
        let mut j = good.clone();
        set(&mut j, "/meta/model/channels", json!(1_000_000_000u64));
        std::fs::write(&sp, serde_json::to_vec(&j).unwrap()).unwrap();
        std::fs::remove_file(dir.join("step-000000001.state.json")).unwrap();
        let e = load_checkpoint(&dir, Device::Cpu, None)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains(state2) && e.contains(": meta.model.channels: "),
            "{e}"
        );
    }

    #[test]
    fn damaged_latest_weights_fall_back_to_the_previous_checkpoint() {
        let dir = two_checkpoints("damaged-weights");
        let w = dir.join("step-000000002.safetensors");
        let bytes = std::fs::read(&w).unwrap();
        std::fs::write(&w, &bytes[..bytes.len() / 2]).unwrap();
        let (t, st) = load_checkpoint(&dir, Device::Cpu, None).unwrap();
        assert_eq!(t.step, 1);
        let why = st.fallback.unwrap();
        assert!(
            why.contains("step-000000002.safetensors") && why.contains("cannot read weights"),
            "{why}"
        );
    }

    #[test]
    fn damaged_weights_beside_a_valid_sidecar_are_a_clear_error() {
        let dir = temp_dir("damaged-weights-file");
        let path = good_model(&dir);
        let bytes = std::fs::read(&path).unwrap();
        let header_len = u64::from_le_bytes(bytes[..8].try_into().unwrap()) as usize;
        let header = std::str::from_utf8(&bytes[8..8 + header_len]).unwrap();
        // A well-formed header whose tensors lie past the end of the file.
        let short = [&bytes[..8 + header_len], &bytes[8 + header_len..][..16]].concat();
        // A header that claims a huge length.
        let mut huge = bytes.clone();
        huge[..8].copy_from_slice(&u64::MAX.to_le_bytes());
        // A header whose first tensor claims more elements than memory holds.
        let first_shape = header
            .find("\"shape\":[")
            .map(|i| i + "\"shape\":[".len())
            .unwrap();
        let end = first_shape + header[first_shape..].find(']').unwrap();
        let big = format!(
            "{}{}{}",
            &header[..first_shape],
            "4611686018427387904,4",
            &header[end..]
        );
        let big = [
            &(big.len() as u64).to_le_bytes()[..],
            big.as_bytes(),
            &bytes[8 + header_len..],
        ]
        .concat();
        for (what, damaged) in [
            ("truncated", bytes[..bytes.len() / 2].to_vec()),
            ("data cut short", short),
            ("huge header length", huge),
            ("huge tensor shape", big),
            ("empty", Vec::new()),
            ("text", b"not weights".to_vec()),
        ] {
            std::fs::write(&path, &damaged).unwrap();
            let e = std::panic::catch_unwind(|| load_model(&path, Device::Cpu))
                .unwrap_or_else(|_| panic!("{what}: load_model panicked"))
                .err()
                .unwrap_or_else(|| panic!("{what}: loaded"))
                .to_string();
            assert!(
                e.contains("m.safetensors") && e.contains("cannot read weights"),
                "{what}: {e}"
            );
        }
    }
}
