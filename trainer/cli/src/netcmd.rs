//! Commands on networks: `init` (a fresh generation-0 model) and `export`.

use crate::load_variant;
use anyhow::{bail, Context, Result};
use model::{
    export_onnx, export_torchscript, load_model, parse_device, save_model, shape_of, ModelConfig,
    ModelMeta, TrainConfig, Trainer,
};
use selfplay::Encoder;
use std::path::{Path, PathBuf};

/// Export formats.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// TorchScript by tracing: one output tensor, policy logits then WDL probabilities.
    Torchscript,
    /// Weights as safetensors plus the JSON sidecar.
    Safetensors,
    /// ONNX, converted from the TorchScript file by scripts/export_onnx.py.
    Onnx,
    /// ONNX as dlshogi and FukauraOu load it (a model trained with encoding = "dlshogi"):
    /// inputs `input1` [B, 62, 9, 9] and `input2` [B, 57, 9, 9], outputs `output_policy`
    /// [B, 2187] (logits) and `output_value` [B, 1] (win + draw / 2 for the side to move).
    DlshogiOnnx,
}

/// `trainer init`: writes a randomly initialised model for a variant.
pub fn init(
    variant: &str,
    model: &str,
    out: &Path,
    seed: u64,
    encoding: selfplay::EncodingLayout,
) -> Result<()> {
    let v = load_variant(variant)?;
    let enc = Encoder::with_layout(v.clone(), encoding)?;
    let cfg = ModelConfig::load(model)?;
    let t = Trainer::new(
        &cfg,
        shape_of(&enc),
        TrainConfig::default(),
        tch_cpu(),
        seed,
    );
    let mut meta = ModelMeta::new(&cfg, shape_of(&enc), enc.spec(), v.spec.clone());
    meta.generation = Some(0);
    save_model(&t.vs, &meta, out)?;
    println!(
        "wrote {} ({} for {}, {} parameters)",
        out.display(),
        cfg.name,
        v.name,
        t.vs.trainable_variables()
            .iter()
            .map(|t| t.numel())
            .sum::<usize>()
    );
    Ok(())
}

fn tch_cpu() -> model::tch::Device {
    model::tch::Device::Cpu
}

/// `trainer export`.
pub fn export(
    model_path: &Path,
    format: Format,
    out: Option<PathBuf>,
    device: &str,
    python: Option<PathBuf>,
) -> Result<()> {
    let device = parse_device(device).map_err(anyhow::Error::msg)?;
    let (mut vs, net, meta) = load_model(model_path, device)
        .with_context(|| format!("loading {}", model_path.display()))?;
    let ext = match format {
        Format::Torchscript => "pt",
        Format::Safetensors => "safetensors",
        Format::Onnx | Format::DlshogiOnnx => "onnx",
    };
    if format == Format::DlshogiOnnx && meta.encoding.layout != selfplay::EncodingLayout::Dlshogi {
        bail!(
            "{} uses the {} encoding; dlshogi-onnx needs a model trained with encoding = \
             \"dlshogi\" (trainer init --encoding dlshogi, or the run config's encoding key)",
            model_path.display(),
            meta.encoding.layout
        );
    }
    let out = out.unwrap_or_else(|| model_path.with_extension(ext));
    if out == model_path {
        bail!("--out must differ from the model file");
    }
    match format {
        Format::Safetensors => save_model(&vs, &meta, &out)?,
        Format::Torchscript => export_torchscript(&mut vs, &net, &meta, &out, device)?,
        Format::Onnx | Format::DlshogiOnnx => {
            let ts = out.with_extension("pt");
            export_torchscript(&mut vs, &net, &meta, &ts, device)?;
            let python = python.unwrap_or_else(default_python);
            let script = script_path("export_onnx.py")?;
            let dlshogi = format == Format::DlshogiOnnx;
            export_onnx(&ts, &meta, &out, &python, &script, dlshogi)?;
        }
    }
    println!("wrote {}", out.display());
    Ok(())
}

/// The pinned venv's python when present, else `python3`.
fn default_python() -> PathBuf {
    let venv = repo_root().join(".local/venv/bin/python");
    if venv.exists() {
        venv
    } else {
        PathBuf::from("python3")
    }
}

/// The repository this binary was built from (scripts live there).
pub fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn script_path(name: &str) -> Result<PathBuf> {
    for base in [PathBuf::from("scripts"), repo_root().join("scripts")] {
        let p = base.join(name);
        if p.exists() {
            return Ok(p);
        }
    }
    bail!("scripts/{name} not found (run from the repository root)")
}
