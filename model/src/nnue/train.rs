//! Training of a Fairy-Stockfish network through libtorch, and its quantisation.
//!
//! The float model is variant-nnue-pytorch's (model.py) without its data loader: the feature
//! transformer's 512 + 8 columns (the last 8 the PSQT buckets) summed over the active
//! features of each perspective, side to move first, clamped to [0, 1]; the bucket's layer
//! stack with [0, 1] clamps; output plus half the PSQT difference is `x`, and Fairy-Stockfish's
//! evaluation is `600 x`. As there, the first layer has a factoriser shared by the stacks, and
//! the features a second, king-independent row ("virtual" features, `index % piece_indices`)
//! that is added into the real rows when the file is written; the loss is
//! `lambda (q - p)^2 + (1 - lambda) (q - t)^2` with `q = sigmoid(600 x / S)` (`S` the
//! evaluation scale), `p` the search's win probability and `t` the game's result (1, 0.5, 0),
//! both for the side to move; the hidden layers' weights are clipped to what 8 bits hold after
//! every step.
//!
//! Quantisation is serialize.py's: feature transformer `round(127 w)` in 16 bits, PSQT
//! `round(9600 w)`, hidden layers `round(64 w)` with biases `round(8128 b)`, output
//! `round(9600 / 127 w)` with bias `round(9600 b)`, rounding half to even as torch does.

use super::error::NnueError;
use super::file::{LayerStack, NnueNet, L2_PADDED};
use super::layout::FeatureLayout;
use super::{L1, L2, L3, LAYER_STACKS, PSQT_BUCKETS};
use crate::device::TorchDevice;
use crate::Device;
use rules::{Position, SplitMix64};
use std::time::Instant;
use tch::{Kind, Tensor};

/// Feature transformer columns: 512 outputs and the 8 PSQT buckets.
const FT_COLS: usize = L1 + PSQT_BUCKETS;
/// Fairy-Stockfish's evaluation per unit of the float network's output (`kPonanzaConstant`).
const NNUE_TO_EVAL: f64 = 600.0;
/// Largest hidden-layer weight 8 bits hold (127 / 64).
const MAX_HIDDEN_WEIGHT: f64 = 127.0 / 64.0;
/// Largest output weight (127 * 127 / 9600).
const MAX_OUTPUT_WEIGHT: f64 = 127.0 * 127.0 / 9600.0;

/// Positions ready for training: the features of both perspectives (side to move first),
/// the bucket and the two targets.
#[derive(Clone, Debug, Default)]
pub struct TrainingSet {
    feats: Vec<u32>,
    /// Per position: start of its own features, start of the other side's, end.
    bounds: Vec<[usize; 3]>,
    bucket: Vec<u8>,
    score: Vec<f32>,
    result: Vec<f32>,
    dims: usize,
    piece_indices: usize,
}

impl TrainingSet {
    /// An empty set for `layout`.
    pub fn new(layout: &FeatureLayout) -> TrainingSet {
        TrainingSet {
            dims: layout.dims(),
            piece_indices: layout.piece_indices(),
            ..TrainingSet::default()
        }
    }

    /// Adds `pos` with the search's value `value` in [-1, 1] and the game's result `result`
    /// (1 win, 0 draw, -1 loss), both for the side to move. A value that is not finite is
    /// taken as 0.
    pub fn push(&mut self, layout: &FeatureLayout, pos: &Position, value: f32, result: i8) {
        let side = pos.side_to_move();
        let a = self.feats.len();
        layout.features(pos, side, &mut self.feats);
        let b = self.feats.len();
        layout.features(pos, side.flip(), &mut self.feats);
        self.bounds.push([a, b, self.feats.len()]);
        self.bucket.push(layout.bucket(pos) as u8);
        let v = if value.is_finite() {
            value.clamp(-1.0, 1.0)
        } else {
            0.0
        };
        self.score.push((1.0 + v) / 2.0);
        self.result.push((f32::from(result.signum()) + 1.0) / 2.0);
    }

    /// Number of positions.
    pub fn len(&self) -> usize {
        self.bounds.len()
    }

    /// Whether there is none.
    pub fn is_empty(&self) -> bool {
        self.bounds.is_empty()
    }

    /// The features (own, other) and bucket of position `i`.
    pub fn position(&self, i: usize) -> (&[u32], &[u32], usize) {
        let [a, b, c] = self.bounds[i];
        (
            &self.feats[a..b],
            &self.feats[b..c],
            usize::from(self.bucket[i]),
        )
    }
}

/// Options of [`train`].
#[derive(Clone, Debug)]
pub struct NnueTrainConfig {
    /// Passes over the training positions.
    pub epochs: usize,
    /// Positions per step.
    pub batch_size: usize,
    /// Adam's learning rate (the output layer gets a tenth), decayed linearly to a tenth.
    pub lr: f64,
    /// Weight of the search value against the game result (1: the value only).
    pub lambda: f64,
    /// Fairy-Stockfish internal units per logit of win probability: the network learns the
    /// evaluation `eval_scale ln(p / (1 - p))` for a win probability `p`. Fairy-Stockfish
    /// mixes the network with its classical evaluation (where material is unbalanced) and
    /// tunes its search margins to that evaluation's scale, so the network should speak it.
    pub eval_scale: f64,
    /// Share of the positions held out for validation (in blocks spread over the set).
    pub validation: f64,
    /// Seed of the initial weights and the order of the positions.
    pub seed: u64,
    /// Device.
    pub device: Device,
    /// The description written into the file.
    pub description: String,
}

impl Default for NnueTrainConfig {
    fn default() -> Self {
        NnueTrainConfig {
            epochs: 3,
            batch_size: 1024,
            lr: 1.5e-3,
            lambda: 1.0,
            eval_scale: super::EVAL_SCALE,
            validation: 0.05,
            seed: 1,
            device: Device::Cpu,
            description: String::new(),
        }
    }
}

/// What [`train`] did.
#[derive(Clone, Debug, Default)]
pub struct TrainReport {
    /// Training positions and validation positions.
    pub train_positions: usize,
    /// Validation positions.
    pub val_positions: usize,
    /// Per epoch: mean training loss and validation loss (NaN without validation positions).
    pub epochs: Vec<(f64, f64)>,
    /// Validation loss of the untrained network.
    pub initial_val_loss: f64,
    /// Mean |quantised - float| evaluation over the validation positions (or the training
    /// ones without), in Fairy-Stockfish's internal units.
    pub quantisation_error: f64,
    /// Wall seconds.
    pub seconds: f64,
}

/// The float model's parameters.
struct Model {
    /// `[dims + piece_indices, 520]`: real rows, then the virtual rows.
    ft: Tensor,
    ft_bias: Tensor,
    l1: Tensor,
    l1_bias: Tensor,
    l1_fact: Tensor,
    l2: Tensor,
    l2_bias: Tensor,
    out: Tensor,
    out_bias: Tensor,
}

fn uniform(rng: &mut SplitMix64, n: usize, bound: f64) -> Vec<f32> {
    (0..n)
        .map(|_| ((2.0 * f64::from(rng.next_f32()) - 1.0) * bound) as f32)
        .collect()
}

fn param(data: &[f32], shape: &[i64], device: tch::Device) -> Tensor {
    Tensor::from_slice(data)
        .view(shape)
        .to_device(device)
        .set_requires_grad(true)
}

impl Model {
    /// variant-nnue-pytorch's initialisation: feature weights and biases uniform in
    /// +-sqrt(1 / dims), virtual rows, PSQT columns, factoriser and output bias zero; the
    /// hidden layers as torch's Linear, the same in every stack.
    fn new(dims: usize, piece_indices: usize, seed: u64, device: tch::Device) -> Model {
        let mut rng = SplitMix64(seed);
        let sigma = (1.0 / dims as f64).sqrt();
        let mut ft = vec![0f32; (dims + piece_indices) * FT_COLS];
        for row in ft.chunks_exact_mut(FT_COLS).take(dims) {
            row[..L1].copy_from_slice(&uniform(&mut rng, L1, sigma));
        }
        let ft_bias = uniform(&mut rng, L1, sigma);
        let stacked = |rng: &mut SplitMix64, rows: usize, cols: usize| {
            let one = uniform(rng, rows * cols, (1.0 / cols as f64).sqrt());
            let bias = uniform(rng, rows, (1.0 / cols as f64).sqrt());
            (one.repeat(LAYER_STACKS), bias.repeat(LAYER_STACKS))
        };
        let (l1, l1_bias) = stacked(&mut rng, L2, 2 * L1);
        let (l2, l2_bias) = stacked(&mut rng, L3, L2);
        let (out, _) = stacked(&mut rng, 1, L3);
        let s = LAYER_STACKS as i64;
        Model {
            ft: param(
                &ft,
                &[(dims + piece_indices) as i64, FT_COLS as i64],
                device,
            ),
            ft_bias: param(&ft_bias, &[L1 as i64], device),
            l1: param(&l1, &[s * L2 as i64, 2 * L1 as i64], device),
            l1_bias: param(&l1_bias, &[s * L2 as i64], device),
            l1_fact: param(&vec![0.0; L2 * 2 * L1], &[L2 as i64, 2 * L1 as i64], device),
            l2: param(&l2, &[s * L3 as i64, L2 as i64], device),
            l2_bias: param(&l2_bias, &[s * L3 as i64], device),
            out: param(&out, &[s, L3 as i64], device),
            out_bias: param(&[0.0; LAYER_STACKS], &[s], device),
        }
    }

    /// The parameters with their learning-rate factor.
    fn params(&self) -> Vec<(&Tensor, f64)> {
        vec![
            (&self.ft, 1.0),
            (&self.ft_bias, 1.0),
            (&self.l1, 1.0),
            (&self.l1_bias, 1.0),
            (&self.l1_fact, 1.0),
            (&self.l2, 1.0),
            (&self.l2_bias, 1.0),
            (&self.out, 0.1),
            (&self.out_bias, 0.1),
        ]
    }

    /// `x` per position of the batch, `[n]`.
    fn forward(&self, b: &Batch) -> Tensor {
        let n = b.n;
        let bag = |idx: &Tensor, off: &Tensor| {
            Tensor::embedding_bag::<Tensor>(&self.ft, idx, off, false, 0, false, None, false).0
        };
        let own = bag(&b.own, &b.own_offsets);
        let other = bag(&b.other, &b.other_offsets);
        let half = |t: &Tensor| t.narrow(1, 0, L1 as i64) + &self.ft_bias;
        let l0 = Tensor::cat(&[half(&own), half(&other)], 1).clamp(0.0, 1.0);
        let bucket = b.bucket.view([n, 1]);
        let psqt = (own.narrow(1, L1 as i64, 8) - other.narrow(1, L1 as i64, 8))
            .gather(1, &bucket, false)
            * 0.5;
        let pick = |t: Tensor, width: i64| {
            t.view([n, LAYER_STACKS as i64, width])
                .gather(
                    1,
                    &b.bucket.view([n, 1, 1]).expand([n, 1, width], false),
                    false,
                )
                .view([n, width])
        };
        let h1 = (pick(l0.linear(&self.l1, Some(&self.l1_bias)), L2 as i64)
            + l0.linear::<Tensor>(&self.l1_fact, None))
        .clamp(0.0, 1.0);
        let h2 = pick(h1.linear(&self.l2, Some(&self.l2_bias)), L3 as i64).clamp(0.0, 1.0);
        let out = pick(h2.linear(&self.out, Some(&self.out_bias)), 1);
        (out + psqt).view([n])
    }

    /// Clips the hidden layers' weights to what 8 bits hold (the first layer counting its
    /// factoriser, as variant-nnue-pytorch does).
    fn clip(&mut self) {
        let _guard = tch::no_grad_guard();
        let fact = self.l1_fact.repeat([LAYER_STACKS as i64, 1]);
        let lo = (-&fact) - MAX_HIDDEN_WEIGHT;
        let hi = (-&fact) + MAX_HIDDEN_WEIGHT;
        let clipped = self.l1.max_other(&lo).min_other(&hi);
        self.l1.copy_(&clipped);
        let _ = self.l2.clamp_(-MAX_HIDDEN_WEIGHT, MAX_HIDDEN_WEIGHT);
        let _ = self.out.clamp_(-MAX_OUTPUT_WEIGHT, MAX_OUTPUT_WEIGHT);
    }
}

/// A batch on the device.
struct Batch {
    n: i64,
    own: Tensor,
    own_offsets: Tensor,
    other: Tensor,
    other_offsets: Tensor,
    bucket: Tensor,
    score: Tensor,
    result: Tensor,
}

impl TrainingSet {
    fn batch(&self, ids: &[usize], device: tch::Device) -> Batch {
        let mut own = Vec::new();
        let mut other = Vec::new();
        let mut own_offsets = Vec::with_capacity(ids.len());
        let mut other_offsets = Vec::with_capacity(ids.len());
        let (dims, pi) = (self.dims as i64, self.piece_indices as i64);
        for &i in ids {
            let (a, b, _) = self.position(i);
            for (list, offsets, feats) in [
                (&mut own, &mut own_offsets, a),
                (&mut other, &mut other_offsets, b),
            ] {
                offsets.push(list.len() as i64);
                for &f in feats {
                    list.push(i64::from(f));
                    list.push(dims + i64::from(f) % pi);
                }
            }
        }
        let t = |v: &[i64]| Tensor::from_slice(v).to_device(device);
        let f = |v: Vec<f32>| Tensor::from_slice(&v).to_device(device);
        Batch {
            n: ids.len() as i64,
            own: t(&own),
            own_offsets: t(&own_offsets),
            other: t(&other),
            other_offsets: t(&other_offsets),
            bucket: t(&ids
                .iter()
                .map(|&i| i64::from(self.bucket[i]))
                .collect::<Vec<_>>()),
            score: f(ids.iter().map(|&i| self.score[i]).collect()),
            result: f(ids.iter().map(|&i| self.result[i]).collect()),
        }
    }
}

fn loss(model: &Model, b: &Batch, lambda: f64, eval_scale: f64) -> Tensor {
    let q = (model.forward(b) * (NNUE_TO_EVAL / eval_scale)).sigmoid();
    let eval = (&q - &b.score).square().mean(Kind::Float);
    let result = (&q - &b.result).square().mean(Kind::Float);
    eval * lambda + result * (1.0 - lambda)
}

/// Adam (betas 0.9, 0.999; eps 1e-7 as variant-nnue-pytorch's Ranger) over the model's
/// parameters.
struct Adam {
    m: Vec<Tensor>,
    v: Vec<Tensor>,
    t: i32,
}

impl Adam {
    fn new(model: &Model) -> Adam {
        let zeros = || model.params().iter().map(|(p, _)| p.zeros_like()).collect();
        Adam {
            m: zeros(),
            v: zeros(),
            t: 0,
        }
    }

    fn step(&mut self, model: &Model, lr: f64) {
        let _guard = tch::no_grad_guard();
        self.t += 1;
        let (b1, b2, eps) = (0.9f64, 0.999f64, 1e-7);
        let c1 = 1.0 - b1.powi(self.t);
        let c2 = 1.0 - b2.powi(self.t);
        for (i, (p, factor)) in model.params().into_iter().enumerate() {
            let mut g = p.grad();
            if !g.defined() {
                continue;
            }
            let _ = self.m[i].g_mul_scalar_(b1).g_add_(&(&g * (1.0 - b1)));
            let _ = self.v[i]
                .g_mul_scalar_(b2)
                .g_add_(&(g.square() * (1.0 - b2)));
            let update = (&self.m[i] / c1) / ((&self.v[i] / c2).sqrt() + eps);
            let mut p = p.shallow_clone();
            let _ = p.g_sub_(&(update * (lr * factor)));
            let _ = g.zero_();
        }
    }
}

fn mean_loss(model: &Model, set: &TrainingSet, ids: &[usize], cfg: &NnueTrainConfig) -> f64 {
    let _guard = tch::no_grad_guard();
    let mut total = 0.0;
    for chunk in ids.chunks(cfg.batch_size.max(1)) {
        let b = set.batch(chunk, cfg.device.torch());
        total += loss(model, &b, cfg.lambda, cfg.eval_scale).double_value(&[]) * chunk.len() as f64;
    }
    total / ids.len().max(1) as f64
}

/// Positions held out in blocks of this many consecutive positions: a position of a held-out
/// game is seldom next to one of a training game, and the blocks spread over the whole set.
const VALIDATION_BLOCK: usize = 256;

/// Training and validation positions: every `round(1 / share)`-th block of
/// [`VALIDATION_BLOCK`] positions is held out (none with a share of 0).
fn split(n: usize, share: f64) -> (Vec<usize>, Vec<usize>) {
    if share <= 0.0 {
        return ((0..n).collect(), Vec::new());
    }
    let every = ((1.0 / share).round() as usize).max(2);
    (0..n).partition(|i| (i / VALIDATION_BLOCK) % every != every - 1)
}

/// Trains a network on `set` and returns it quantised, with a report. `progress` is called
/// after every epoch with its number and its (training, validation) loss.
pub fn train(
    set: &TrainingSet,
    layout: &FeatureLayout,
    cfg: &NnueTrainConfig,
    mut progress: impl FnMut(usize, f64, f64),
) -> Result<(NnueNet, TrainReport), NnueError> {
    let bad = |reason: String| NnueError::Training { reason };
    if set.dims != layout.dims() || set.piece_indices != layout.piece_indices() {
        return Err(bad("the positions were prepared for another variant".into()));
    }
    if set.is_empty() {
        return Err(bad("no positions to train on".into()));
    }
    if cfg.batch_size == 0 || !(0.0..=1.0).contains(&cfg.lambda) {
        return Err(bad(format!(
            "batch size {} and lambda {} (in 0..=1) wanted",
            cfg.batch_size, cfg.lambda
        )));
    }
    if !(cfg.eval_scale > 0.0 && cfg.eval_scale.is_finite()) {
        return Err(bad(format!(
            "a positive evaluation scale wanted, not {}",
            cfg.eval_scale
        )));
    }
    if !(0.0..1.0).contains(&cfg.validation) || cfg.lr <= 0.0 || !cfg.lr.is_finite() {
        return Err(bad(format!(
            "validation share {} (in 0..1) and a positive learning rate {} wanted",
            cfg.validation, cfg.lr
        )));
    }
    let t0 = Instant::now();
    let (mut train_ids, val_ids) = split(set.len(), cfg.validation);
    let mut model = Model::new(set.dims, set.piece_indices, cfg.seed, cfg.device.torch());
    let mut adam = Adam::new(&model);
    let mut rng = SplitMix64(cfg.seed ^ 0x5eed);
    let val_loss = |m: &Model| {
        if val_ids.is_empty() {
            f64::NAN
        } else {
            mean_loss(m, set, &val_ids, cfg)
        }
    };
    let mut report = TrainReport {
        train_positions: train_ids.len(),
        val_positions: val_ids.len(),
        initial_val_loss: val_loss(&model),
        ..TrainReport::default()
    };
    let steps_per_epoch = train_ids.len().div_ceil(cfg.batch_size);
    let total_steps = (steps_per_epoch * cfg.epochs).max(1);
    let mut step = 0usize;
    for epoch in 0..cfg.epochs {
        for i in (1..train_ids.len()).rev() {
            train_ids.swap(i, rng.below(i + 1));
        }
        let mut sum = 0.0;
        for chunk in train_ids.chunks(cfg.batch_size) {
            model.clip();
            let b = set.batch(chunk, cfg.device.torch());
            let l = loss(&model, &b, cfg.lambda, cfg.eval_scale);
            l.backward();
            let lr = cfg.lr * (1.0 - 0.9 * step as f64 / total_steps as f64);
            adam.step(&model, lr);
            sum += l.double_value(&[]) * chunk.len() as f64;
            step += 1;
        }
        model.clip();
        let train_loss = sum / train_ids.len() as f64;
        let v = val_loss(&model);
        report.epochs.push((train_loss, v));
        progress(epoch + 1, train_loss, v);
    }
    let net = quantise(&model, set.dims, set.piece_indices, &cfg.description)?;
    let check: &[usize] = if val_ids.is_empty() {
        &train_ids
    } else {
        &val_ids
    };
    report.quantisation_error = quantisation_error(&model, &net, set, check, cfg.device.torch());
    report.seconds = t0.elapsed().as_secs_f64();
    Ok((net, report))
}

/// Mean |integer - float| evaluation over (at most 2,000 of) `ids`.
fn quantisation_error(
    model: &Model,
    net: &NnueNet,
    set: &TrainingSet,
    ids: &[usize],
    device: tch::Device,
) -> f64 {
    let ids = &ids[..ids.len().min(2000)];
    if ids.is_empty() {
        return 0.0;
    }
    let _guard = tch::no_grad_guard();
    let b = set.batch(ids, device);
    let float: Vec<f32> =
        Vec::try_from(model.forward(&b).to_device(tch::Device::Cpu)).unwrap_or_default();
    let mut total = 0.0;
    for (&i, x) in ids.iter().zip(&float) {
        let (own, other, bucket) = set.position(i);
        let int = net.evaluate_features(own, other, bucket);
        total += (f64::from(int) - f64::from(*x) * NNUE_TO_EVAL).abs();
    }
    total / ids.len() as f64
}

fn to_vec(t: &Tensor) -> Result<Vec<f32>, NnueError> {
    Ok(Vec::<f32>::try_from(
        t.detach()
            .to_device(tch::Device::Cpu)
            .contiguous()
            .view([-1]),
    )?)
}

fn q<T: TryFrom<i64>>(x: f32, scale: f64, min: i64, max: i64) -> T
where
    <T as TryFrom<i64>>::Error: std::fmt::Debug,
{
    let r = (f64::from(x) * scale).round_ties_even();
    let r = if r.is_nan() {
        0
    } else {
        (r as i64).clamp(min, max)
    };
    T::try_from(r).expect("clamped into range")
}

/// The file's integers from the float model (serialize.py's scales; virtual rows and the
/// factoriser added in).
fn quantise(
    model: &Model,
    dims: usize,
    piece_indices: usize,
    description: &str,
) -> Result<NnueNet, NnueError> {
    let ft = to_vec(&model.ft)?;
    let mut net = NnueNet::zeros(dims, description);
    for f in 0..dims {
        let real = &ft[f * FT_COLS..(f + 1) * FT_COLS];
        let v = dims + f % piece_indices;
        let virt = &ft[v * FT_COLS..(v + 1) * FT_COLS];
        for j in 0..L1 {
            net.ft_weight[f * L1 + j] = q(real[j] + virt[j], 127.0, -32768, 32767);
        }
        for k in 0..PSQT_BUCKETS {
            net.psqt_weight[f * PSQT_BUCKETS + k] =
                q(real[L1 + k] + virt[L1 + k], 9600.0, -(1 << 30), 1 << 30);
        }
    }
    for (b, x) in net.ft_bias.iter_mut().zip(to_vec(&model.ft_bias)?) {
        *b = q(x, 127.0, -32768, 32767);
    }
    let (l1, l1b, fact) = (
        to_vec(&model.l1)?,
        to_vec(&model.l1_bias)?,
        to_vec(&model.l1_fact)?,
    );
    let (l2, l2b) = (to_vec(&model.l2)?, to_vec(&model.l2_bias)?);
    let (out, outb) = (to_vec(&model.out)?, to_vec(&model.out_bias)?);
    let hidden = |w: f32| {
        q::<i8>(
            w.clamp(-MAX_HIDDEN_WEIGHT as f32, MAX_HIDDEN_WEIGHT as f32),
            64.0,
            -127,
            127,
        )
    };
    let bias = |b: f32, scale: f64| q::<i32>(b, scale, -(1 << 30), 1 << 30);
    let out_scale = 9600.0 / 127.0;
    for (s, stack) in net.stacks.iter_mut().enumerate() {
        let mut st = LayerStack::zeros();
        let row1 = 2 * L1;
        for i in 0..L2 {
            st.l1_bias[i] = bias(l1b[s * L2 + i], 8128.0);
            for j in 0..row1 {
                st.l1_weight[i * row1 + j] =
                    hidden(l1[(s * L2 + i) * row1 + j] + fact[i * row1 + j]);
            }
        }
        for i in 0..L3 {
            st.l2_bias[i] = bias(l2b[s * L3 + i], 8128.0);
            for j in 0..L2 {
                st.l2_weight[i * L2_PADDED + j] = hidden(l2[(s * L3 + i) * L2 + j]);
            }
        }
        st.out_bias = bias(outb[s], 9600.0);
        for j in 0..L3 {
            let w = out[s * L3 + j].clamp(-MAX_OUTPUT_WEIGHT as f32, MAX_OUTPUT_WEIGHT as f32);
            st.out_weight[j] = q(w, out_scale, -127, 127);
        }
        *stack = st;
    }
    Ok(net)
}

#[cfg(test)]
mod tests {
    use super::super::layout::FsfRules;
    use super::*;
    use rules::{Color, Variant};
    use std::sync::Arc;

    /// Minishogi and its feature layout.
    fn minishogi() -> (Arc<Variant>, FeatureLayout) {
        let v = Arc::new(Variant::builtin("minishogi").unwrap());
        let rules = FsfRules::for_variant(&v, None).unwrap();
        let layout = FeatureLayout::new(&v, &rules).unwrap();
        (v, layout)
    }

    /// Positions of random playouts, scored by material, so that a network can learn them.
    fn material_set(v: &Arc<Variant>, layout: &FeatureLayout, n: usize) -> TrainingSet {
        let mut rng = SplitMix64(3);
        let mut set = TrainingSet::new(layout);
        while set.len() < n {
            let mut pos = Position::start(v.clone());
            for _ in 0..rng.below(40) {
                let moves = pos.legal_moves();
                if moves.is_empty() {
                    break;
                }
                pos.make_move(moves[rng.below(moves.len())]);
            }
            let side = pos.side_to_move();
            let count = |c: Color| {
                pos.occupied_by(c).len() as f32
                    + v.hand_kinds
                        .iter()
                        .map(|&k| f32::from(pos.hand_count(c, k)))
                        .sum::<f32>()
            };
            let value = ((count(side) - count(side.flip())) / 4.0).tanh();
            set.push(layout, &pos, value, 0);
        }
        set
    }

    #[test]
    fn training_learns_and_quantises_faithfully() {
        crate::set_threads(2);
        let (v, layout) = minishogi();
        let set = material_set(&v, &layout, 3000);
        let cfg = NnueTrainConfig {
            epochs: 4,
            batch_size: 256,
            validation: 0.2,
            description: "unit test".into(),
            ..NnueTrainConfig::default()
        };
        let (net, report) = train(&set, &layout, &cfg, |_, _, _| {}).unwrap();
        let last = report.epochs.last().unwrap().1;
        assert!(
            last < 0.7 * report.initial_val_loss,
            "validation loss {last} from {}",
            report.initial_val_loss
        );
        // Rounding to 1/127 and 1/64 moves the evaluation a few internal units at most.
        assert!(
            report.quantisation_error < 8.0,
            "{}",
            report.quantisation_error
        );
        assert_eq!(net.description, "unit test");
        let bytes = net.to_bytes();
        assert_eq!(
            NnueNet::from_bytes(&bytes, Some(layout.dims())).unwrap(),
            net
        );
        // The integer evaluation of a position equals the one from its features.
        let pos = Position::start(v.clone());
        let e = net.evaluate(&layout, &pos).unwrap();
        let (mut own, mut other) = (Vec::new(), Vec::new());
        layout.features(&pos, Color::Sente, &mut own);
        layout.features(&pos, Color::Gote, &mut other);
        assert_eq!(net.evaluate_features(&own, &other, e.bucket), e.value());
    }

    #[test]
    fn the_evaluation_scale_sets_the_networks_units() {
        crate::set_threads(2);
        let (v, layout) = minishogi();
        let set = material_set(&v, &layout, 1200);
        let mean_eval = |eval_scale: f64| {
            let cfg = NnueTrainConfig {
                epochs: 6,
                batch_size: 64,
                lr: 0.01,
                validation: 0.0,
                eval_scale,
                ..NnueTrainConfig::default()
            };
            let (net, _) = train(&set, &layout, &cfg, |_, _, _| {}).unwrap();
            let mut sum = 0.0;
            for i in 0..set.len() {
                let (own, other, bucket) = set.position(i);
                sum += f64::from(net.evaluate_features(own, other, bucket).abs());
            }
            sum / set.len() as f64
        };
        // The same win probabilities in three times the units: about three times the evaluation.
        let (small, large) = (
            mean_eval(super::super::EVAL_SCALE),
            mean_eval(3.0 * super::super::EVAL_SCALE),
        );
        let ratio = large / small;
        assert!((2.0..4.0).contains(&ratio), "ratio {ratio}");
    }

    #[test]
    fn validation_blocks_spread_over_the_set() {
        let (t, v) = split(10_000, 0.05);
        assert_eq!(t.len() + v.len(), 10_000);
        // Blocks 19 (all 256) and 39 (the 16 positions left).
        assert_eq!(v.len(), 256 + 16);
        assert!(v.contains(&(19 * 256)) && v.contains(&9_999) && !v.contains(&0));
        assert_eq!(split(100, 0.05).1.len(), 0);
        assert_eq!(split(100, 0.0).0.len(), 100);
    }

    #[test]
    fn bad_options_are_errors() {
        let (v, layout) = minishogi();
        let empty = TrainingSet::new(&layout);
        let cfg = NnueTrainConfig::default();
        assert!(train(&empty, &layout, &cfg, |_, _, _| {}).is_err());
        let set = material_set(&v, &layout, 10);
        for cfg in [
            NnueTrainConfig {
                lambda: 2.0,
                ..NnueTrainConfig::default()
            },
            NnueTrainConfig {
                batch_size: 0,
                ..NnueTrainConfig::default()
            },
            NnueTrainConfig {
                lr: f64::NAN,
                ..NnueTrainConfig::default()
            },
            NnueTrainConfig {
                eval_scale: 0.0,
                ..NnueTrainConfig::default()
            },
        ] {
            assert!(train(&set, &layout, &cfg, |_, _, _| {}).is_err());
        }
        let judkins = Arc::new(Variant::builtin("judkins").unwrap());
        let jl =
            FeatureLayout::new(&judkins, &FsfRules::for_variant(&judkins, None).unwrap()).unwrap();
        assert!(train(&set, &jl, &NnueTrainConfig::default(), |_, _, _| {}).is_err());
    }
}
