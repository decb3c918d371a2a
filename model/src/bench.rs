//! Timing helpers for `trainer bench`: the bare training step, so benchmarks outside this crate
//! never touch libtorch (the forward is timed through the `Evaluator` trait).

use crate::device::TorchDevice;
use crate::train::{Batch, Trainer};
use std::time::Instant;
use tch::{Kind, Tensor};

/// Runs `f` repeatedly for about `seconds` (after one warm-up call, at least 3 timed calls);
/// returns calls per second.
pub fn rate(seconds: f64, mut f: impl FnMut()) -> f64 {
    f();
    let t = Instant::now();
    let mut n = 0u32;
    while n < 3 || t.elapsed().as_secs_f64() < seconds {
        f();
        n += 1;
    }
    n as f64 / t.elapsed().as_secs_f64()
}

/// Samples/s of the bare training step of `t` on a random batch of `batch` positions.
pub fn train_rate(t: &mut Trainer, batch: usize, seconds: f64) -> f64 {
    let s = t.net.shape;
    let d = t.device.torch();
    let b = Batch {
        inputs: Tensor::rand(
            [
                batch as i64,
                s.planes as i64,
                s.ranks as i64,
                s.files as i64,
            ],
            (Kind::Float, d),
        ),
        policy: Tensor::rand([batch as i64, s.policy_len() as i64], (Kind::Float, d))
            .softmax(-1, Kind::Float),
        wdl: Tensor::rand([batch as i64, 3], (Kind::Float, d)).softmax(-1, Kind::Float),
        opponent: None,
    };
    rate(seconds, || {
        t.train_step(&b);
    }) * batch as f64
}
