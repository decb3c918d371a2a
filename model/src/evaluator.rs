//! The network as a search `Evaluator`: batched, no_grad, eval mode, CPU or CUDA.

use crate::net::{NetShape, Network};
use search::{Evaluation, Evaluator, EvaluatorError};
use tch::{nn::VarStore, Device, Kind, Tensor};

/// A network ready for inference.
#[derive(Debug)]
pub struct NetEvaluator {
    /// Keeps the variables alive.
    pub vs: VarStore,
    /// The network.
    pub net: Network,
    /// Where it runs.
    pub device: Device,
}

impl NetEvaluator {
    /// Wraps a loaded network.
    pub fn new(vs: VarStore, net: Network) -> NetEvaluator {
        let device = vs.device();
        NetEvaluator { vs, net, device }
    }

    /// Input/output sizes.
    pub fn shape(&self) -> NetShape {
        self.net.shape
    }

    /// Raw forward: (policy logits, WDL probabilities) as flat vectors.
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
                .to_device(self.device);
            let (p, v) = self.net.forward_t(&x, false);
            let v = v.softmax(-1, Kind::Float);
            let p = p
                .to_kind(Kind::Float)
                .to_device(Device::Cpu)
                .contiguous()
                .view([-1]);
            let v = v.to_device(Device::Cpu).contiguous().view([-1]);
            (
                Vec::<f32>::try_from(&p).expect("float tensor"),
                Vec::<f32>::try_from(&v).expect("float tensor"),
            )
        })
    }
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
        let (p, v) = self.forward_raw(inputs, batch);
        let pl = self.policy_len();
        Ok((0..batch)
            .map(|i| Evaluation {
                policy_logits: p[i * pl..(i + 1) * pl].to_vec(),
                wdl: [v[i * 3], v[i * 3 + 1], v[i * 3 + 2]],
            })
            .collect())
    }
}

/// Parses `cpu`, `cuda`, `cuda:N` or `auto` (CUDA when available).
pub fn parse_device(s: &str) -> Result<Device, String> {
    match s {
        "cpu" => Ok(Device::Cpu),
        "auto" => Ok(Device::cuda_if_available()),
        "cuda" => {
            if tch::Cuda::is_available() {
                Ok(Device::Cuda(0))
            } else {
                Err("--device cuda: no CUDA device is available".into())
            }
        }
        _ => match s
            .strip_prefix("cuda:")
            .and_then(|n| n.parse::<usize>().ok())
        {
            Some(n) if (n as i64) < tch::Cuda::device_count() => Ok(Device::Cuda(n)),
            Some(n) => Err(format!(
                "--device cuda:{n}: only {} CUDA devices",
                tch::Cuda::device_count()
            )),
            None => Err(format!(
                "--device {s:?}: expected cpu, cuda, cuda:N or auto"
            )),
        },
    }
}
