//! The network as a search `Evaluator`: batched, no_grad, eval mode, CPU or CUDA.
//!
//! Inference runs the folded network ([`InferenceNet`]: batch norms folded into the
//! convolutions) in the chosen precision. On CPU it runs on this crate's own forward pass
//! (`cpu.rs`: one matrix product a layer, only the requested logits), which is faster than
//! libtorch's for the small batches of a search thread; libtorch's takes the large ones and
//! stays available as the reference ([`NetEvaluator::set_backend`]). On CUDA the inputs go
//! through a pinned staging buffer with an asynchronous copy, and only what the search asks
//! for comes back: the logits of its legal moves and the WDL, in one small transfer.

use crate::cpu::CpuNet;
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
    /// CPU: the same folded weights on this crate's own forward pass, used for the batches
    /// it is faster at (see [`NATIVE_WORK`]; `None`: always libtorch).
    cpu: Option<CpuNet>,
    backend: CpuBackend,
    /// CUDA: pinned host memory the inputs are staged in.
    staging: Option<Tensor>,
    indices: Vec<i64>,
    answers: Vec<f32>,
}

/// How a network on the CPU computes its forward passes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum CpuBackend {
    /// The crate's own forward for the batches it is faster at ([`NATIVE_WORK`]), libtorch's
    /// for the others.
    #[default]
    Auto,
    /// Always the crate's own forward (one thread).
    Native,
    /// Always libtorch's (its intra-op threads).
    Libtorch,
}

/// The environment variable that chooses the [`CpuBackend`] of every network the process
/// opens (`auto`, `native` or `libtorch`; unset: `auto`).
pub const BACKEND_ENV: &str = "TRAINER_CPU_BACKEND";

impl CpuBackend {
    /// The backend [`BACKEND_ENV`] names (unset or empty: the default), or why its value is
    /// not one.
    pub fn from_env() -> Result<CpuBackend, String> {
        match std::env::var(BACKEND_ENV) {
            Ok(v) if !v.is_empty() => v.parse().map_err(|e| format!("{BACKEND_ENV}: {e}")),
            Ok(_) | Err(std::env::VarError::NotPresent) => Ok(CpuBackend::default()),
            Err(e) => Err(format!("{BACKEND_ENV}: {e}")),
        }
    }
}

impl std::str::FromStr for CpuBackend {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "auto" => Ok(CpuBackend::Auto),
            "native" => Ok(CpuBackend::Native),
            "libtorch" => Ok(CpuBackend::Libtorch),
            _ => Err(format!("expected auto, native or libtorch, got {s:?}")),
        }
    }
}

impl std::fmt::Display for CpuBackend {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            CpuBackend::Auto => "auto",
            CpuBackend::Native => "native",
            CpuBackend::Libtorch => "libtorch",
        })
    }
}

/// The largest forward, in trunk activations (positions x squares x channels) times
/// libtorch's intra-op threads, that the crate's own CPU path runs. It computes on one thread at
/// a steady rate whatever the batch; libtorch's overhead per call makes it slower on small
/// batches and its convolutions faster on large ones (`trainer bench nn` on CPU prints both:
/// at one thread, 5x5 boards with 32 channels break even near 64 positions, 9x9 boards with
/// 64 channels between 1 and 16). Where the direct convolutions run, [`NATIVE_WORK_DIRECT`].
pub const NATIVE_WORK: usize = 1 << 16;

/// [`NATIVE_WORK`] for a network whose trunk runs the direct convolutions (a CPU with AVX2
/// and FMA, channels a multiple of 16): the crate's own path is then faster than libtorch's
/// at one thread on every batch `trainer bench nn` measures on 5x5 boards with 32 channels (up
/// to 256 positions) and within 8% of it on 9x9 boards with 64 channels up to 64.
pub const NATIVE_WORK_DIRECT: usize = 1 << 18;

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
        let mut ev = NetEvaluator {
            vs,
            net,
            device,
            fast,
            cpu: None,
            backend: CpuBackend::Auto,
            staging: None,
            indices: Vec::new(),
            answers: Vec::new(),
        };
        // The binary refuses a bad value at start-up.
        ev.set_backend(CpuBackend::from_env().unwrap_or_default());
        ev
    }

    /// Rebuilds the inference form after the weights in `vs` changed.
    pub fn refold(&mut self) {
        self.fast = self.net.fold(self.fast.kind);
        if self.cpu.is_some() {
            self.cpu = Some(CpuNet::new(&self.fast, self.net.shape));
        }
    }

    /// Chooses how CPU forwards run (see [`CpuBackend`]). No effect on CUDA, which always
    /// runs libtorch.
    pub fn set_backend(&mut self, backend: CpuBackend) {
        self.backend = backend;
        let native = !self.device.is_cuda() && backend != CpuBackend::Libtorch;
        if native && self.cpu.is_none() {
            self.cpu = Some(CpuNet::new(&self.fast, self.net.shape));
        } else if !native {
            self.cpu = None;
        }
    }

    /// How CPU forwards run.
    pub fn backend(&self) -> CpuBackend {
        self.backend
    }

    /// Whether a forward of `n` positions takes the crate's own CPU path (the faster one).
    fn native(&self, n: usize) -> bool {
        let s = self.net.shape;
        let work = n * s.ranks * s.files * self.net.config.channels * crate::threads();
        let Some(cpu) = &self.cpu else {
            return false;
        };
        let most = if cpu.direct() {
            NATIVE_WORK_DIRECT
        } else {
            NATIVE_WORK
        };
        self.backend == CpuBackend::Native || work <= most
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

    /// libtorch's answers to `requests` (`n` positions, `nm` requested logits) into
    /// `self.answers`: the logits at `self.indices`, then the WDL probabilities.
    fn torch_answers(
        &mut self,
        requests: &[Request],
        n: usize,
        nm: usize,
    ) -> Result<(), EvaluatorError> {
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
        })
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
        let pl = self.policy_len();
        let native = self.native(batch);
        if let Some(cpu) = self.cpu.as_mut().filter(|_| native) {
            let (mut p, mut v) = (Vec::new(), Vec::new());
            cpu.forward_all(inputs, batch, &mut p, &mut v);
            return Ok(p
                .chunks_exact(pl)
                .zip(v.chunks_exact(3))
                .map(|(p, v)| Evaluation {
                    policy_logits: p.to_vec(),
                    wdl: [v[0], v[1], v[2]],
                })
                .collect());
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
        let native = self.native(n);
        if let Some(cpu) = self.cpu.as_mut().filter(|_| native) {
            let inputs: Vec<&[f32]> = requests.iter().map(|r| &r.inputs[..]).collect();
            let mut wdl = Vec::with_capacity(3 * n);
            cpu.forward_indices(&inputs, n, &self.indices, &mut self.answers, &mut wdl);
            self.answers.extend_from_slice(&wdl);
        } else {
            self.torch_answers(requests, n, nm)?;
        }
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

    /// `auto` takes the crate's own path up to [`NATIVE_WORK`] of trunk activations times
    /// libtorch's threads, or up to [`NATIVE_WORK_DIRECT`] where the trunk runs the direct
    /// convolutions (32 channels; not 24); `native` and `libtorch` whatever the batch.
    #[test]
    fn the_native_path_takes_the_batches_it_is_faster_at() {
        let shape = NetShape {
            planes: 5,
            ranks: 5,
            files: 5,
            policy_planes: 3,
        };
        for channels in [32, 24] {
            let cfg = crate::ModelConfig {
                name: "t".into(),
                blocks: 1,
                channels,
                global_pool: true,
                policy_channels: 16,
                value_channels: 16,
                value_hidden: 16,
            };
            let vs = VarStore::new(tch::Device::Cpu);
            let net = Network::new(&vs.root(), &cfg, shape);
            let mut ev = NetEvaluator::new(vs, net);
            let direct = ev.cpu.as_ref().unwrap().direct();
            assert_eq!(
                direct,
                channels == 32 && crate::cpu::direct::cpu_kernel() != "gemm"
            );
            let most = if direct {
                NATIVE_WORK_DIRECT
            } else {
                NATIVE_WORK
            };
            let last = most / (25 * channels * crate::threads());
            assert!(ev.native(1) && ev.native(last) && !ev.native(last + 1));
            ev.set_backend(CpuBackend::Native);
            assert!(ev.native(last + 1));
            ev.set_backend(CpuBackend::Libtorch);
            assert!(!ev.native(1));
        }
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
