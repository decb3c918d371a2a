//! Policy/value network, training step, checkpoints and export through libtorch.
//!
//! The only crate of the workspace that links libtorch, and the only one that names it: other
//! crates choose a [`Device`] and a precision and use the network through this crate's types.
//! The network's input and policy layout come from the `encoding` crate's encoder; inference
//! implements the `search` crate's `Evaluator`.

pub mod bench;
mod checkpoint;
mod config;
mod cpu;
mod device;
mod error;
mod evaluator;
mod export;
mod net;
pub mod nnue;
mod optim;
mod train;

pub use checkpoint::{
    average_models, check_encoding, has_checkpoint, load_checkpoint, load_model, load_weights,
    read_meta, save_checkpoint, save_model, save_published_model, tensor_names, write_atomic,
    CheckpointState, ModelMeta, FORMAT_VERSION,
};
pub use config::{ModelConfig, OptimizerKind, Schedule, TrainConfig};
pub use cpu::direct::{cpu_kernel, kernel_from_env, KERNEL_ENV};
pub use device::{deserialize_device, parse_device, Device, DeviceError, DeviceExt};
pub use error::{ModelError, Result};
pub use evaluator::{
    inference_kind, open_evaluator, CpuBackend, NetEvaluator, BACKEND_ENV, NATIVE_WORK,
    NATIVE_WORK_DIRECT,
};
pub use export::{export_onnx, export_torchscript, trace};
pub use net::{is_training_only, InferenceNet, NetShape, Network, TrainOutputs};
pub use optim::{decays, grad_norm, Ema, Optimizer, StateError};
pub use train::{Batch, SplitMix, StepStats, Trainer};

/// Sets libtorch's intra-op threads for the whole process (every thread's forward and
/// backward passes); concurrent roles on a small machine want 1 each.
pub fn set_threads(n: usize) {
    tch::set_num_threads(n.max(1) as i32);
}

/// libtorch's intra-op threads.
pub fn threads() -> usize {
    tch::get_num_threads().max(1) as usize
}

/// Copies the weights of the model file `path` into `t` (same shape), e.g. to start training
/// from generation 0; the weights' moving average (if any) restarts from them.
pub fn init_from_model(t: &mut Trainer, path: &std::path::Path) -> Result<()> {
    let (vs, _, _) = load_model(path, t.device)?;
    let from = vs.variables();
    // A training-only output (never in a model file) keeps its initialisation.
    for (name, mut dst) in t.vs.variables() {
        if net::is_training_only(&name) {
            continue;
        }
        let src = from.get(&name).ok_or_else(|| ModelError::Checkpoint {
            path: path.display().to_string(),
            reason: format!("initialising from it: it has no tensor {name}"),
        })?;
        tch::no_grad(|| dst.f_copy_(src)).map_err(|e| ModelError::Checkpoint {
            path: path.display().to_string(),
            reason: format!("initialising from it: tensor {name}: {e}"),
        })?;
    }
    t.reset_ema();
    Ok(())
}

/// Network shape for a variant's encoder.
pub fn shape_of(enc: &encoding::Encoder) -> NetShape {
    NetShape {
        planes: enc.num_planes(),
        ranks: enc.ranks(),
        files: enc.files(),
        policy_planes: enc.policy_planes(),
    }
}
