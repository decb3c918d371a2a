//! The network as a search `Evaluator`: batched, no_grad, eval mode, CPU or CUDA.
//!
//! Inference runs the folded network ([`InferenceNet`]: batch norms folded into the
//! convolutions) in the chosen precision. On CUDA the inputs go through a pinned staging
//! buffer with an asynchronous copy, and only what the search asks for comes back: the logits
//! of its legal moves and the WDL, in one small transfer.

use crate::device::TorchDevice;
use crate::net::{InferenceNet, NetShape, Network};
use crate::{Device, DeviceExt};
use encoding::Precision;
use search::{Evaluation, Evaluator, EvaluatorError, Request};
use tch::{nn::VarStore, Kind, Tensor};

/// A network ready for inference.
#[derive(Debug)]
pub struct NetEvaluator {
    /// Keeps the variables alive.
    pub vs: VarStore,
    /// The network (training form; [`NetEvaluator::forward_raw`] runs it as the reference).
    pub net: Network,
    /// Where it runs (never `Auto`).
    pub device: Device,
    fast: InferenceNet,
    /// CUDA: pinned host memory the inputs are staged in.
    staging: Option<Tensor>,
    indices: Vec<i64>,
    answers: Vec<f32>,
}

/// The tensor kind of a precision on a device: f32 on CPU, bf16 for `auto` on CUDA.
pub fn inference_kind(precision: Precision, device: Device) -> Kind {
    match (precision, device.is_cuda()) {
        (_, false) | (Precision::F32, true) => Kind::Float,
        (Precision::Auto | Precision::Bf16, true) => Kind::BFloat16,
        (Precision::F16, true) => Kind::Half,
    }
}

/// Opens a model file as a search evaluator, the one way every command does: reads and checks
/// its sidecar (shape and variant, before anything is allocated), builds the network on
/// `device`, loads the weights, checks that the network reads and writes `expected` (the
/// encoding the caller's encoder uses), and folds it for inference in `precision`. Returns the
/// sidecar with it.
pub fn open_evaluator(
    path: &std::path::Path,
    expected: &encoding::EncodingSpec,
    device: Device,
    precision: Precision,
) -> crate::Result<(NetEvaluator, crate::ModelMeta)> {
    let (vs, net, meta) = crate::load_model(path, device)?;
    crate::check_encoding(&meta, expected, path)?;
    Ok((NetEvaluator::with_precision(vs, net, precision), meta))
}

impl NetEvaluator {
    /// Wraps a loaded network for f32 inference.
    pub fn new(vs: VarStore, net: Network) -> NetEvaluator {
        NetEvaluator::with_precision(vs, net, Precision::F32)
    }

    /// Wraps a loaded network for inference in `precision` (see [`inference_kind`]).
    pub fn with_precision(vs: VarStore, net: Network, precision: Precision) -> NetEvaluator {
        let device = Device::of(vs.device());
        if device.is_cuda() {
            // Same shapes every call: let cuDNN pick its fastest algorithms once.
            tch::Cuda::cudnn_set_benchmark(true);
        }
        let fast = net.fold(inference_kind(precision, device));
        NetEvaluator {
            vs,
            net,
            device,
            fast,
            staging: None,
            indices: Vec::new(),
            answers: Vec::new(),
        }
    }

    /// Rebuilds the inference form after the weights in `vs` changed.
    pub fn refold(&mut self) {
        self.fast = self.net.fold(self.fast.kind);
    }

    /// The inference precision.
    pub fn kind(&self) -> Kind {
        self.fast.kind
    }

    /// Input/output sizes.
    pub fn shape(&self) -> NetShape {
        self.net.shape
    }

    /// Raw forward of the training form in f32: (policy logits, WDL probabilities) as flat
    /// vectors; the reference the fast path is checked against.
    pub fn forward_raw(&self, inputs: &[f32], batch: usize) -> (Vec<f32>, Vec<f32>) {
        let s = self.net.shape;
        tch::no_grad(|| {
            let x = Tensor::from_slice(inputs)
                .view([
                    batch as i64,
                    s.planes as i64,
                    s.ranks as i64,
                    s.files as i64,
                ])
                .to_device(self.device.torch());
            let (p, v) = self.net.forward_t(&x, false);
            let v = v.softmax(-1, Kind::Float);
            let p = p
                .to_kind(Kind::Float)
                .to_device(tch::Device::Cpu)
                .contiguous()
                .view([-1]);
            let v = v.to_device(tch::Device::Cpu).contiguous().view([-1]);
            (
                Vec::<f32>::try_from(&p).expect("float tensor"),
                Vec::<f32>::try_from(&v).expect("float tensor"),
            )
        })
    }

    /// The inputs of `requests` (`n` positions in all) as one tensor on the device, in the
    /// inference precision: a single CPU request is used in place; otherwise each request is
    /// copied once into the staging buffer (pinned on CUDA, then copied asynchronously).
    fn device_inputs(&mut self, requests: &[Request], n: usize) -> Tensor {
        let s = self.net.shape;
        let rows = padded_rows(n, self.device);
        let dims = [rows as i64, s.planes as i64, s.ranks as i64, s.files as i64];
        if let [one] = requests {
            if !self.device.is_cuda() {
                return host_view(&one.inputs, &dims).to_kind(self.fast.kind);
            }
        }
        let total = (rows * s.input_len()) as i64;
        if self.staging.as_ref().is_none_or(|t| t.size()[0] < total) {
            // Room for twice the batch, so that slowly growing batches do not re-allocate;
            // zeroed, as padding rows are read (and their outputs ignored).
            let t = Tensor::zeros([2 * total], (Kind::Float, tch::Device::Cpu));
            self.staging = Some(if self.device.is_cuda() {
                t.pin_memory(self.device.torch())
            } else {
                t
            });
        }
        let staging = self.staging.as_ref().expect("staging buffer");
        let mut off = 0i64;
        for r in requests {
            let len = r.inputs.len() as i64;
            staging
                .narrow(0, off, len)
                .copy_(&host_view(&r.inputs, &[len]));
            off += len;
        }
        let x = staging.narrow(0, 0, total).view(dims);
        if self.device.is_cuda() {
            x.to_device_(self.device.torch(), self.fast.kind, true, false)
        } else {
            x.to_kind(self.fast.kind)
        }
    }
}

/// Rows of a forward pass of `n` positions: on CUDA, padded to a few sizes (powers of two up to
/// 64, then multiples of 64) so that cuDNN autotunes a few shapes rather than every batch size
/// the server forms; on CPU, `n`.
fn padded_rows(n: usize, device: Device) -> usize {
    match device {
        Device::Cuda(_) if n <= 64 => n.next_power_of_two(),
        Device::Cuda(_) => n.div_ceil(64) * 64,
        _ => n,
    }
}

/// A view of `data` as a CPU tensor of shape `dims`, without copying.
#[allow(unsafe_code)]
fn host_view<T: tch::kind::Element>(data: &[T], dims: &[i64]) -> Tensor {
    assert_eq!(
        dims.iter().product::<i64>() as usize,
        data.len(),
        "host view of the wrong size"
    );
    // SAFETY: `data` is a live, initialised slice of `T` with exactly the elements `dims`
    // describes (checked above); the view is only read, and every caller drops it (and any
    // tensor aliasing it: copies and forward outputs do not) before `data` can change.
    unsafe { Tensor::from_blob(data.as_ptr().cast(), dims, &[], T::KIND, tch::Device::Cpu) }
}

impl Evaluator for NetEvaluator {
    fn input_len(&self) -> usize {
        self.net.shape.input_len()
    }

    fn policy_len(&self) -> usize {
        self.net.shape.policy_len()
    }

    fn evaluate(
        &mut self,
        inputs: &[f32],
        batch: usize,
    ) -> Result<Vec<Evaluation>, EvaluatorError> {
        if inputs.len() != batch * self.input_len() {
            return Err(EvaluatorError(format!(
                "expected {} floats for {batch} positions, got {}",
                batch * self.input_len(),
                inputs.len()
            )));
        }
        if batch == 0 {
            return Ok(Vec::new());
        }
        let x = host_view(inputs, &[batch as i64, self.input_len() as i64]);
        let (p, v) = tch::no_grad(|| {
            let x = x
                .view([
                    batch as i64,
                    self.net.shape.planes as i64,
                    self.net.shape.ranks as i64,
                    self.net.shape.files as i64,
                ])
                .to_device(self.device.torch())
                .to_kind(self.fast.kind);
            let (p, v) = self.fast.forward(&x);
            let p = p
                .to_kind(Kind::Float)
                .to_device(tch::Device::Cpu)
                .contiguous()
                .view([-1]);
            let v = v
                .to_kind(Kind::Float)
                .softmax(-1, Kind::Float)
                .to_device(tch::Device::Cpu)
                .contiguous()
                .view([-1]);
            (
                Vec::<f32>::try_from(&p).expect("float tensor"),
                Vec::<f32>::try_from(&v).expect("float tensor"),
            )
        });
        let pl = self.policy_len();
        Ok((0..batch)
            .map(|i| Evaluation {
                policy_logits: p[i * pl..(i + 1) * pl].to_vec(),
                wdl: [v[i * 3], v[i * 3 + 1], v[i * 3 + 2]],
            })
            .collect())
    }

    fn evaluate_request(&mut self, r: &mut Request) -> Result<(), EvaluatorError> {
        self.evaluate_batch(std::slice::from_mut(r))
    }

    /// The fast path: all requests in one forward pass, and back only the requested logits
    /// and the WDL probabilities (gathered on the device, one transfer).
    fn evaluate_batch(&mut self, requests: &mut [Request]) -> Result<(), EvaluatorError> {
        let (il, pl) = (self.input_len(), self.policy_len());
        for r in requests.iter_mut() {
            r.check(il, pl)?;
            r.logits.clear();
            r.wdl.clear();
        }
        let n: usize = requests.iter().map(|r| r.len()).sum();
        if n == 0 {
            return Ok(());
        }
        self.indices.clear();
        let mut k = 0i64;
        for r in requests.iter() {
            for i in 0..r.len() {
                let base = k * pl as i64;
                self.indices
                    .extend(r.moves[r.range(i)].iter().map(|&m| base + m as i64));
                k += 1;
            }
        }
        let nm = self.indices.len();
        tch::no_grad(|| {
            let x = self.device_inputs(requests, n);
            let (p, v) = self.fast.forward(&x);
            let idx = host_view(&self.indices, &[nm as i64]).to_device(self.device.torch());
            let logits = p.view([-1]).index_select(0, &idx).to_kind(Kind::Float);
            let wdl = v
                .narrow(0, 0, n as i64)
                .to_kind(Kind::Float)
                .softmax(-1, Kind::Float)
                .view([-1]);
            let both = Tensor::cat(&[logits, wdl], 0);
            self.answers.resize(nm + 3 * n, 0.0);
            both.f_copy_data(&mut self.answers, nm + 3 * n)
                .map_err(|e| EvaluatorError(format!("copying the answers back: {e}")))
        })?;
        let (mut m, mut w) = (0, nm);
        for r in requests.iter_mut() {
            let (rm, rn) = (r.moves.len(), r.len());
            r.logits.extend_from_slice(&self.answers[m..m + rm]);
            r.wdl.extend(
                self.answers[w..w + 3 * rn]
                    .chunks_exact(3)
                    .map(|x| [x[0], x[1], x[2]]),
            );
            m += rm;
            w += 3 * rn;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cuda_batches_are_padded_to_few_shapes() {
        let cuda = Device::Cuda(0);
        let rows: Vec<usize> = [1, 3, 33, 64, 65, 200, 4096]
            .iter()
            .map(|&n| padded_rows(n, cuda))
            .collect();
        assert_eq!(rows, vec![1, 4, 64, 64, 128, 256, 4096]);
        let shapes: std::collections::HashSet<usize> =
            (1..=4096).map(|n| padded_rows(n, cuda)).collect();
        assert_eq!(shapes.len(), 7 + 63);
        assert_eq!(padded_rows(200, Device::Cpu), 200);
    }

    /// `precision`: `auto` (the default) is bf16 on CUDA; f32, f16 and bf16 as named there; the
    /// CPU always runs f32.
    #[test]
    fn precision_resolves_per_device() {
        let (cuda, cpu) = (Device::Cuda(0), Device::Cpu);
        assert_eq!(inference_kind(Precision::Auto, cuda), Kind::BFloat16);
        assert_eq!(inference_kind(Precision::Bf16, cuda), Kind::BFloat16);
        assert_eq!(inference_kind(Precision::F16, cuda), Kind::Half);
        assert_eq!(inference_kind(Precision::F32, cuda), Kind::Float);
        for p in [
            Precision::Auto,
            Precision::F32,
            Precision::F16,
            Precision::Bf16,
        ] {
            assert_eq!(inference_kind(p, cpu), Kind::Float, "{p:?}");
        }
    }
}
