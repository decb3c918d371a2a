//! `trainer check`: validates config files (variants, network shapes, run configs) found under
//! files and directories.

use crate::config::RunConfig;
use crate::error::{IoOp, PipelineError, Result};
use crate::run::load_variant;
use rules::Variant;
use std::path::{Path, PathBuf};

/// Every `.toml` file under `paths` (directories recursively, sorted).
pub fn collect_tomls(paths: &[PathBuf]) -> Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    for p in paths {
        if p.is_dir() {
            let mut entries: Vec<PathBuf> = std::fs::read_dir(p)
                .map_err(PipelineError::io(IoOp::Read, p))?
                .filter_map(|e| e.ok().map(|e| e.path()))
                .collect();
            entries.sort();
            for e in entries {
                if e.is_dir() {
                    out.extend(collect_tomls(&[e])?);
                } else if e.extension().is_some_and(|x| x == "toml") {
                    out.push(e);
                }
            }
        } else if p.exists() {
            out.push(p.clone());
        } else {
            return Err(PipelineError::NoSuchPath { path: p.clone() });
        }
    }
    Ok(out)
}

/// What a config file is, from the directory it sits in: `model`, `run`, `ladder` or
/// `variant`.
pub fn config_kind(f: &Path) -> &'static str {
    let parent = f
        .parent()
        .and_then(|p| p.file_name())
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    match parent.as_str() {
        "models" => "model",
        "runs" => "run",
        "ladders" => "ladder",
        _ => "variant",
    }
}

/// What a valid config file is.
pub struct Checked {
    /// One line: the kind and name (`variant shogi`, `run default (minishogi with b4c32)`).
    pub summary: String,
    /// A variant's piece table.
    pub details: Option<String>,
}

/// Validates one config file by the directory it sits in (`models/`, `runs/`, else a
/// variant); errors name the file, the key and the reason.
pub fn check_file(f: &Path) -> Result<Checked> {
    let plain = |summary: String| Checked {
        summary,
        details: None,
    };
    match config_kind(f) {
        "model" => {
            let m = model::ModelConfig::load(&f.display().to_string())?;
            Ok(plain(format!("model {}", m.name)))
        }
        "run" => {
            let text = std::fs::read_to_string(f).map_err(PipelineError::io(IoOp::Read, f))?;
            let file = f.display().to_string();
            let r = RunConfig::from_toml(&text, &file)?;
            // The run's variant and network must resolve too.
            let v = variant_of(&r.variant, &file)?;
            model::ModelConfig::load(&r.model).map_err(|source| PipelineError::ModelOf {
                file: file.clone(),
                source,
            })?;
            let enc = encoding::Encoder::with_layout(v.clone(), r.encoding).map_err(|source| {
                PipelineError::Encoding {
                    file: file.clone(),
                    source,
                }
            })?;
            // Replay settings that depend on the variant (mirroring).
            crate::train::replay_window(&r.replay, enc, &file)?;
            Ok(plain(format!(
                "run {} ({} with {})",
                r.name, v.name, r.model
            )))
        }
        "ladder" => {
            // A calibration is checked with its ladder file.
            let name = f
                .file_name()
                .map_or(String::new(), |n| n.to_string_lossy().into_owned());
            let ladder_file = match name.strip_suffix(".calibration.toml") {
                Some(stem) => f.with_file_name(format!("{stem}.toml")),
                None => f.to_path_buf(),
            };
            let l = crate::ladder::Ladder::load_path(&ladder_file)?;
            variant_of(&l.spec.variant, &ladder_file.display().to_string())?;
            Ok(plain(if ladder_file == f {
                format!(
                    "ladder {} ({}, {} rungs)",
                    l.name,
                    l.spec.variant,
                    l.spec.rungs.len()
                )
            } else {
                format!("calibration of the {} ladder", l.name)
            }))
        }
        _ => {
            let v = Variant::load(f)?;
            Ok(Checked {
                summary: format!("variant {}", v.name),
                details: Some(v.describe()),
            })
        }
    }
}

/// The variant named by the config file `file`; an error names the file.
fn variant_of(name: &str, file: &str) -> Result<std::sync::Arc<Variant>> {
    load_variant(name).map_err(|source| PipelineError::VariantOf {
        file: file.to_string(),
        source: Box::new(source),
    })
}
