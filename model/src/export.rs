//! Export: TorchScript by tracing (one output tensor: policy logits then WDL probabilities),
//! safetensors copies, and ONNX through `scripts/export_onnx.py`.

use crate::checkpoint::{write_atomic, ModelMeta};
use crate::device::TorchDevice;
use crate::error::{ModelError, Result};
use crate::net::Network;
use crate::Device;
use std::path::Path;
use std::process::Command;
use tch::{nn::VarStore, CModule, Kind, Tensor};

/// Traces the network in inference mode and returns the TorchScript module. The weights become
/// constants of the traced graph, which must not require gradients (or the file cannot be
/// loaded back from Python): the variables are left frozen; `vs.unfreeze()` to train again.
pub fn trace(vs: &mut VarStore, net: &Network, device: Device) -> Result<CModule> {
    vs.freeze();
    trace_frozen(net, device.torch())
}

fn trace_frozen(net: &Network, device: tch::Device) -> Result<CModule> {
    let s = net.shape;
    let example = Tensor::rand(
        [2, s.planes as i64, s.ranks as i64, s.files as i64],
        (Kind::Float, device),
    );
    let m = tch::no_grad(|| {
        CModule::create_by_tracing("ShogiNet", "forward", &[example], &mut |xs| {
            vec![net.forward_export(&xs[0])]
        })
    })?;
    Ok(m)
}

/// Writes a TorchScript file (and its JSON sidecar next to it).
pub fn export_torchscript(
    vs: &mut VarStore,
    net: &Network,
    meta: &ModelMeta,
    out: &Path,
    device: Device,
) -> Result<()> {
    let m = trace(vs, net, device);
    let m = match m {
        Ok(m) => m,
        Err(e) => {
            vs.unfreeze();
            return Err(e);
        }
    };
    let saved = atomic_file::write_with(out, |tmp| Ok::<_, ModelError>(m.save(tmp)?));
    vs.unfreeze();
    saved?;
    write_atomic(
        &out.with_extension("json"),
        &serde_json::to_vec_pretty(meta).expect("metadata serialises"),
    )
}

/// Converts a TorchScript file to ONNX with `python scripts/export_onnx.py`. With `dlshogi`
/// (a model in dlshogi's encoding) the ONNX file has dlshogi's two inputs and two outputs.
pub fn export_onnx(
    torchscript: &Path,
    meta: &ModelMeta,
    out: &Path,
    python: &Path,
    script: &Path,
    dlshogi: bool,
) -> Result<()> {
    let mut cmd = Command::new(python);
    cmd.arg(script)
        .arg(torchscript)
        .arg(out)
        .args(["--planes", &meta.planes.to_string()])
        .args(["--ranks", &meta.ranks.to_string()])
        .args(["--files", &meta.files.to_string()]);
    if dlshogi {
        let policy_len = meta.policy_planes * meta.ranks * meta.files;
        cmd.args(["--dlshogi", "--policy-len", &policy_len.to_string()]);
    }
    let status = cmd.status().map_err(|e| ModelError::Checkpoint {
        path: python.display().to_string(),
        reason: format!("cannot run the ONNX exporter: {e}"),
    })?;
    if !status.success() {
        return Err(ModelError::Checkpoint {
            path: out.display().to_string(),
            reason: format!(
                "{} failed ({status}); see its output above",
                script.display()
            ),
        });
    }
    write_atomic(
        &out.with_extension("json"),
        &serde_json::to_vec_pretty(meta).expect("metadata serialises"),
    )
}
