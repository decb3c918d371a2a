//! Commands on networks: `init` (a fresh generation-0 model) and `export`.

use crate::load_variant;
use anyhow::{bail, Context, Result};
use encoding::{Encoder, EncodingLayout};
use model::{
    average_models, export_onnx, export_torchscript, load_model, save_model, shape_of, Device,
    ModelConfig, ModelMeta, TrainConfig, Trainer,
};
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
    encoding: EncodingLayout,
) -> Result<()> {
    let v = load_variant(variant)?;
    let enc = Encoder::with_layout(v.clone(), encoding)?;
    let cfg = ModelConfig::load(model)?;
    let t = Trainer::new(
        &cfg,
        shape_of(&enc),
        TrainConfig::default(),
        Device::Cpu,
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

/// `trainer export`. Every file is written at a temporary name beside its destination, then
/// renamed; the model's own files are never written, and an existing output is refused unless
/// `force`. A sidecar that the output shares with the model (`m.pt` beside `m.safetensors`:
/// `m.json`) already describes it and is left as it is.
pub fn export(
    model_path: &Path,
    format: Format,
    out: Option<PathBuf>,
    device: Device,
    python: Option<PathBuf>,
    force: bool,
) -> Result<()> {
    let ext = match format {
        Format::Torchscript => "pt",
        Format::Safetensors => "safetensors",
        Format::Onnx | Format::DlshogiOnnx => "onnx",
    };
    let out = out.unwrap_or_else(|| model_path.with_extension(ext));
    let sidecar = out.with_extension("json");
    let model_sidecar = model_path.with_extension("json");
    for input in [model_path, &model_sidecar] {
        if same_path(&out, input) {
            bail!(
                "{}: is the model's own file ({}); give --out another path",
                out.display(),
                input.display()
            );
        }
    }
    if same_path(&sidecar, model_path) {
        bail!(
            "{}: its sidecar {} would overwrite the model; give --out another path",
            out.display(),
            sidecar.display()
        );
    }
    // The model's sidecar describes the export as well: it stays as it is.
    let shared_sidecar = same_path(&sidecar, &model_sidecar);
    let outputs: Vec<&Path> = match shared_sidecar {
        true => vec![&out],
        false => vec![&out, &sidecar],
    };
    refuse_existing(&outputs, force)?;
    let (mut vs, net, meta) = load_model(model_path, device)
        .with_context(|| format!("loading {}", model_path.display()))?;
    if format == Format::DlshogiOnnx && meta.encoding.layout != EncodingLayout::Dlshogi {
        bail!(
            "{} uses the {} encoding; dlshogi-onnx needs a model trained with encoding = \
             \"dlshogi\" (trainer init --encoding dlshogi, or the run config's encoding key)",
            model_path.display(),
            meta.encoding.layout
        );
    }
    // Temporaries beside the output (same file system for the rename), removed on every path.
    let mut temps = Temps::default();
    let tmp = temps.add(&out, ext);
    match format {
        Format::Safetensors => save_model(&vs, &meta, &tmp)?,
        Format::Torchscript => export_torchscript(&mut vs, &net, &meta, &tmp, device)?,
        Format::Onnx | Format::DlshogiOnnx => {
            let ts = temps.add(&out, "pt");
            export_torchscript(&mut vs, &net, &meta, &ts, device)?;
            let python = python.unwrap_or_else(default_python);
            let script = script_path("export_onnx.py")?;
            let dlshogi = format == Format::DlshogiOnnx;
            export_onnx(&ts, &meta, &tmp, &python, &script, dlshogi)?;
        }
    }
    // Checked again: an output may have appeared while the export ran.
    refuse_existing(&outputs, force)?;
    if !shared_sidecar {
        rename(&tmp.with_extension("json"), &sidecar)?;
    }
    rename(&tmp, &out)?;
    println!("wrote {}", out.display());
    Ok(())
}

/// Temporary files of an export (each with its sidecar), removed when dropped.
#[derive(Default)]
struct Temps(Vec<PathBuf>);

impl Temps {
    /// A new unique temporary name beside `out`, ending in `.ext` (the atomic writes' scheme,
    /// so anything left by a killed export is recognisable as such).
    fn add(&mut self, out: &Path, ext: &str) -> PathBuf {
        let p = atomic_file::temporary_path(&out.with_extension(ext));
        self.0.push(p.clone());
        p
    }
}

impl Drop for Temps {
    fn drop(&mut self) {
        for p in &self.0 {
            let _ = std::fs::remove_file(p);
            let _ = std::fs::remove_file(p.with_extension("json"));
        }
    }
}

/// Moves a finished temporary into place, the directory fsynced after.
fn rename(from: &Path, to: &Path) -> Result<()> {
    std::fs::rename(from, to)
        .with_context(|| format!("{}: cannot move {} there", to.display(), from.display()))?;
    let dir = to.parent().unwrap_or(Path::new(""));
    atomic_file::sync_dir(dir).with_context(|| format!("{}: fsync", dir.display()))
}

/// Fails on the first of `paths` that exists, unless `force`.
fn refuse_existing(paths: &[&Path], force: bool) -> Result<()> {
    match paths.iter().find(|p| p.exists()) {
        Some(p) if !force => bail!(
            "{}: exists; pass --force to overwrite it, or give --out another path",
            p.display()
        ),
        _ => Ok(()),
    }
}

/// Whether `a` and `b` name the same file (through `.`, `..` and symbolic links), whether or
/// not it exists yet.
fn same_path(a: &Path, b: &Path) -> bool {
    fn resolved(p: &Path) -> PathBuf {
        if let Ok(c) = p.canonicalize() {
            return c;
        }
        let dir = match p.parent() {
            Some(d) if !d.as_os_str().is_empty() => d,
            _ => Path::new("."),
        };
        match (dir.canonicalize(), p.file_name()) {
            (Ok(d), Some(name)) => d.join(name),
            _ => p.to_path_buf(),
        }
    }
    a == b || resolved(a) == resolved(b)
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

/// `trainer average`: what to average and where the mean goes.
#[derive(clap::Args)]
pub struct AverageArgs {
    /// Models to average (.safetensors, each with its .json sidecar), or --run.
    #[arg(required_unless_present = "run", conflicts_with = "run")]
    models: Vec<PathBuf>,
    /// A run directory: average its newest generations (`models/<gen>.safetensors`).
    #[arg(long)]
    run: Option<PathBuf>,
    /// With --run: how many of the newest generations (all of them when the run has fewer).
    #[arg(long)]
    last: Option<usize>,
    /// Output weights (.safetensors; its .json sidecar is written beside it).
    #[arg(long)]
    out: PathBuf,
    /// Overwrite existing output files.
    #[arg(long)]
    force: bool,
}

/// The generations of a run's published networks, oldest first, with their weight files.
fn run_generations(run: &Path) -> Result<Vec<(u64, PathBuf)>> {
    let dir = run.join("models");
    let entries =
        std::fs::read_dir(&dir).with_context(|| format!("cannot list {}", dir.display()))?;
    let mut gens = Vec::new();
    for e in entries {
        let e = e.with_context(|| format!("cannot list {}", dir.display()))?;
        let name = e.file_name();
        let Some(stem) = name.to_str().and_then(|n| n.strip_suffix(".safetensors")) else {
            continue;
        };
        // Only `<gen>.safetensors`: temporaries and other files are not generations.
        if !stem.is_empty() && stem.bytes().all(|b| b.is_ascii_digit()) {
            if let Ok(g) = stem.parse::<u64>() {
                gens.push((g, e.path()));
            }
        }
    }
    gens.sort();
    Ok(gens)
}

/// `trainer average`: the tensor-by-tensor mean of networks of one shape and encoding (a
/// stochastic weight average of a run's last generations), written atomically with the newest
/// input's sidecar.
pub fn average(a: AverageArgs) -> Result<()> {
    let (models, what) = match &a.run {
        Some(run) => {
            let last = a
                .last
                .context("--run needs --last N: how many generations")?;
            if last == 0 {
                bail!("--last 0: nothing to average");
            }
            let gens = run_generations(run)?;
            let Some(&(newest, _)) = gens.last() else {
                bail!("{}: no network in its models directory", run.display());
            };
            let take = &gens[gens.len().saturating_sub(last)..];
            let what = format!("generations {} to {newest} of {}", take[0].0, run.display());
            (take.iter().map(|(_, p)| p.clone()).collect(), what)
        }
        None => {
            if a.last.is_some() {
                bail!("--last counts a run's generations: give --run");
            }
            (a.models.clone(), format!("{} models", a.models.len()))
        }
    };
    let sidecar = a.out.with_extension("json");
    for m in &models {
        for input in [m.clone(), m.with_extension("json")] {
            if same_path(&a.out, &input) || same_path(&sidecar, &input) {
                bail!(
                    "{}: would overwrite the input {}; give --out another path",
                    a.out.display(),
                    input.display()
                );
            }
        }
    }
    if a.out.extension().and_then(|e| e.to_str()) != Some("safetensors") {
        bail!("{}: --out must end in .safetensors", a.out.display());
    }
    refuse_existing(&[&a.out, &sidecar], a.force)?;
    average_models(&models, &a.out).with_context(|| format!("averaging {what}"))?;
    println!(
        "wrote {}: the mean of {} networks ({what})",
        a.out.display(),
        models.len()
    );
    Ok(())
}
