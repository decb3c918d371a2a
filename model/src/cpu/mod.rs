//! The folded network's forward pass in plain Rust for the CPU, on one thread.
//!
//! Self-play and the engine on CPU run one network per search thread with one intra-op thread,
//! at batches of 16 to 64 small boards. There libtorch spends much of its time outside
//! arithmetic (dispatching some thirty small operators a batch, choosing a convolution
//! algorithm, laying tensors out), and it computes every policy logit when the search wants
//! only the legal moves'. This path keeps the activations as one matrix (a row per square of
//! each position, a column per channel), runs each convolution as one matrix product
//! (`matrixmultiply`'s packed SGEMM, AVX2 and FMA chosen at run time) and computes only the
//! requested logits. Where the CPU has AVX2 and FMA, layers of a multiple of 16 outputs skip
//! the patches and the SGEMM's packing (nearly half of the forward's time at batch 16 on
//! minishogi) and run as direct convolutions: each output row sums, over its taps, its source
//! row times the tap's weights, sixteen outputs at a time in registers (see [`direct`]). It
//! reads the weights of an [`InferenceNet`] and agrees with its libtorch forward to rounding
//! (tests below and `trainer bench nn`).

use crate::net::{InferenceNet, NetShape};
use direct::{Conv, Kernel, LANES};
use tch::Tensor;

pub(crate) mod direct;

/// A convolution (3x3 with padding 1, or 1x1) or a linear layer, its weights as the right-hand
/// matrix of `rows x inputs` times `inputs x outputs`.
#[derive(Debug)]
struct Layer {
    /// Kernel size: 3 or 1 (a linear layer is a 1x1 convolution over one "square").
    k: usize,
    cin: usize,
    cout: usize,
    /// `[k * k * cin, cout]`, row-major; row `(ky * k + kx) * cin + ci`.
    w: Vec<f32>,
    b: Vec<f32>,
}

fn floats(t: &Tensor) -> Vec<f32> {
    Vec::<f32>::try_from(&t.to_kind(tch::Kind::Float).contiguous().view([-1]))
        .expect("float tensor")
}

impl Layer {
    /// From libtorch weights `[cout, cin, k, k]` (or `[cout, cin]`) and bias `[cout]`.
    fn new(w: &Tensor, b: &Tensor) -> Layer {
        let size = w.size();
        let (cout, cin) = (size[0] as usize, size[1] as usize);
        let k = if size.len() == 4 { size[2] as usize } else { 1 };
        let src = floats(w);
        let mut dst = vec![0.0; k * k * cin * cout];
        for co in 0..cout {
            for ci in 0..cin {
                for t in 0..k * k {
                    dst[(t * cin + ci) * cout + co] = src[(co * cin + ci) * k * k + t];
                }
            }
        }
        Layer {
            k,
            cin,
            cout,
            w: dst,
            b: floats(b),
        }
    }

    /// Whether `kernel` computes this layer directly ([`direct`]) rather than by SGEMM.
    fn direct(&self, kernel: Kernel) -> bool {
        kernel != Kernel::Gemm && self.cout.is_multiple_of(LANES)
    }

    /// `out[rows, cout] = x[rows, k*k*cin] * w + b`, `x` row-major with row stride `k*k*cin`.
    fn apply(&self, kernel: Kernel, x: &[f32], rows: usize, out: &mut Vec<f32>) {
        let kin = self.k * self.k * self.cin;
        debug_assert_eq!(x.len(), rows * kin);
        if self.direct(kernel) {
            let conv = Conv {
                x,
                cin: kin,
                src: None,
                taps: 1,
                w: &self.w,
                bias: &self.b,
                cout: self.cout,
            };
            return conv.run(kernel, rows, out);
        }
        out.clear();
        out.reserve(rows * self.cout);
        for _ in 0..rows {
            out.extend_from_slice(&self.b);
        }
        sgemm(rows, kin, self.cout, x, &self.w, out);
    }
}

/// `c[m, n] += a[m, k] * b[k, n]`, all row-major and contiguous.
#[allow(unsafe_code)]
fn sgemm(m: usize, k: usize, n: usize, a: &[f32], b: &[f32], c: &mut [f32]) {
    assert!(a.len() >= m * k && b.len() >= k * n && c.len() >= m * n);
    if m == 0 || n == 0 {
        return;
    }
    // SAFETY: the three slices hold at least the `m x k`, `k x n` and `m x n` row-major
    // matrices the strides describe (checked above), `c` is borrowed mutably and so aliases
    // neither input, and `matrixmultiply` reads and writes nothing outside them.
    unsafe {
        matrixmultiply::sgemm(
            m,
            k,
            n,
            1.0,
            a.as_ptr(),
            k as isize,
            1,
            b.as_ptr(),
            n as isize,
            1,
            1.0,
            c.as_mut_ptr(),
            n as isize,
            1,
        );
    }
}

/// The network's weights in the layout of this path.
#[derive(Debug)]
struct Weights {
    shape: NetShape,
    input: Layer,
    tower: Vec<(Layer, Option<Layer>, Layer)>,
    policy1: Layer,
    /// The policy head's last 1x1 convolution, one row of weights per policy plane
    /// (`[planes, policy_channels]`), so that a single logit is one dot product.
    policy2_w: Vec<f32>,
    policy2_b: Vec<f32>,
    policy_channels: usize,
    value_conv: Layer,
    fc1: Layer,
    fc2: Layer,
    global_pool: bool,
    /// The loops of the layers with a multiple of 16 outputs.
    kernel: Kernel,
}

/// Buffers reused from one forward to the next.
#[derive(Debug, Default)]
struct Scratch {
    /// The trunk's activations, `[n * squares, channels]`.
    h: Vec<f32>,
    /// A block's hidden layer, then the heads' hidden layers.
    y: Vec<f32>,
    /// 3x3 patches of a chunk of positions.
    cols: Vec<f32>,
    tmp: Vec<f32>,
    pooled: Vec<f32>,
    /// The 3x3 convolutions' source rows ([`direct::taps3`]) and the batch they are for.
    taps: Vec<u32>,
    taps_for: usize,
}

/// The folded network on this path: its weights and its scratch buffers.
#[derive(Debug)]
pub(crate) struct CpuNet {
    w: Weights,
    s: Scratch,
}

/// The scratch buffers of a 3x3 convolution: the patches (SGEMM) or the source table (direct).
struct Conv3Scratch<'a> {
    cols: &'a mut Vec<f32>,
    taps: &'a mut Vec<u32>,
    taps_for: &'a mut usize,
}

/// Floats of 3x3 patches built at a time: large boards and batches go through the
/// convolution in chunks of positions, so the patches stay a few MiB.
const PATCH_FLOATS: usize = 1 << 20;

impl CpuNet {
    /// The weights of `net` (any precision; computed here in f32), with the fastest kernel
    /// this CPU runs ([`direct::KERNEL_ENV`] can ask for the SGEMM path).
    pub(crate) fn new(net: &InferenceNet, shape: NetShape) -> CpuNet {
        CpuNet::with_kernel(net, shape, Kernel::detect())
    }

    /// [`CpuNet::new`] with the given kernel (one of [`Kernel::available`]).
    fn with_kernel(net: &InferenceNet, shape: NetShape, kernel: Kernel) -> CpuNet {
        let p2 = &net.policy2;
        CpuNet {
            w: Weights {
                shape,
                input: Layer::new(&net.input.w, &net.input.b),
                tower: net
                    .tower
                    .iter()
                    .map(|(c1, pool, c2)| {
                        (
                            Layer::new(&c1.w, &c1.b),
                            pool.as_ref().map(|p| Layer::new(&p.w, &p.b)),
                            Layer::new(&c2.w, &c2.b),
                        )
                    })
                    .collect(),
                policy1: Layer::new(&net.policy1.w, &net.policy1.b),
                policy2_w: floats(&p2.w),
                policy2_b: floats(&p2.b),
                policy_channels: p2.w.size()[1] as usize,
                value_conv: Layer::new(&net.value_conv.w, &net.value_conv.b),
                fc1: Layer::new(&net.fc1.w, &net.fc1.b),
                fc2: Layer::new(&net.fc2.w, &net.fc2.b),
                global_pool: net.global_pool,
                kernel,
            },
            s: Scratch::default(),
        }
    }

    /// The logits at `indices` (each `position * policy_len + move`, positions in `0..n`)
    /// and the WDL probabilities (`3n`) of `n` positions, given as consecutive runs of
    /// `[positions, planes, ranks, files]` floats.
    pub(crate) fn forward_indices(
        &mut self,
        inputs: &[&[f32]],
        n: usize,
        indices: &[i64],
        logits: &mut Vec<f32>,
        wdl: &mut Vec<f32>,
    ) {
        let w = &self.w;
        let s = &mut self.s;
        w.trunk_and_heads(inputs, n, s, wdl);
        let (sq, pc) = (w.shape.ranks * w.shape.files, w.policy_channels);
        let pl = w.shape.policy_len();
        logits.clear();
        logits.extend(indices.iter().map(|&i| {
            let (b, m) = (i as usize / pl, i as usize % pl);
            let (plane, q) = (m / sq, m % sq);
            let h = &s.y[(b * sq + q) * pc..(b * sq + q + 1) * pc];
            w.policy2_b[plane] + dot(h, &w.policy2_w[plane * pc..(plane + 1) * pc])
        }));
    }

    /// Whether the trunk runs the direct convolutions (this CPU has a kernel for them and
    /// the channels are a multiple of 16).
    pub(crate) fn direct(&self) -> bool {
        self.w
            .tower
            .first()
            .map_or(&self.w.input, |b| &b.0)
            .direct(self.w.kernel)
    }

    /// Every policy logit (`n * policy_len`, in the network's order) and the WDL
    /// probabilities (`3n`) of `n` positions.
    pub(crate) fn forward_all(
        &mut self,
        inputs: &[f32],
        n: usize,
        logits: &mut Vec<f32>,
        wdl: &mut Vec<f32>,
    ) {
        let all: Vec<i64> = (0..(n * self.w.shape.policy_len()) as i64).collect();
        self.forward_indices(&[inputs], n, &all, logits, wdl);
    }
}

impl Weights {
    /// A 3x3 convolution of `x` (`[n * squares, cin]`) into `out` (`[n * squares, cout]`),
    /// through the patches of a chunk of positions at a time.
    fn conv3(&self, layer: &Layer, x: &[f32], n: usize, s: Conv3Scratch, out: &mut Vec<f32>) {
        let (ranks, files) = (self.shape.ranks as isize, self.shape.files as isize);
        let sq = self.shape.ranks * self.shape.files;
        let (c, kin) = (layer.cin, 9 * layer.cin);
        if layer.direct(self.kernel) {
            if *s.taps_for != n || s.taps.is_empty() {
                direct::taps3(n, self.shape.ranks, self.shape.files, s.taps);
                *s.taps_for = n;
            }
            let conv = Conv {
                x,
                cin: c,
                src: Some(s.taps),
                taps: 9,
                w: &layer.w,
                bias: &layer.b,
                cout: layer.cout,
            };
            return conv.run(self.kernel, n * sq, out);
        }
        let cols = s.cols;
        out.clear();
        out.reserve(n * sq * layer.cout);
        for _ in 0..n * sq {
            out.extend_from_slice(&layer.b);
        }
        let chunk = (PATCH_FLOATS / (sq * kin)).max(1);
        let mut first = 0;
        while first < n {
            let m = chunk.min(n - first);
            cols.clear();
            cols.resize(m * sq * kin, 0.0);
            for b in 0..m {
                for r in 0..ranks {
                    for f in 0..files {
                        let row = b * sq + (r * files + f) as usize;
                        let dst = &mut cols[row * kin..(row + 1) * kin];
                        for ky in 0..3isize {
                            let rr = r + ky - 1;
                            if rr < 0 || rr >= ranks {
                                continue;
                            }
                            for kx in 0..3isize {
                                let ff = f + kx - 1;
                                if ff < 0 || ff >= files {
                                    continue;
                                }
                                let src = (first + b) * sq + (rr * files + ff) as usize;
                                let t = (ky * 3 + kx) as usize;
                                dst[t * c..(t + 1) * c].copy_from_slice(&x[src * c..(src + 1) * c]);
                            }
                        }
                    }
                }
            }
            let rows = first * sq..(first + m) * sq;
            let dst = &mut out[rows.start * layer.cout..rows.end * layer.cout];
            sgemm(m * sq, kin, layer.cout, cols, &layer.w, dst);
            first += m;
        }
    }

    /// The trunk and both heads on `n` positions: the WDL probabilities go to `wdl` (`3n`),
    /// the policy head's hidden layer (`[n * squares, policy_channels]`) stays in `s.y`.
    fn trunk_and_heads(&self, inputs: &[&[f32]], n: usize, s: &mut Scratch, wdl: &mut Vec<f32>) {
        let shape = self.shape;
        let sq = shape.ranks * shape.files;
        let rows = n * sq;
        let Scratch {
            h,
            y,
            cols,
            tmp,
            pooled,
            taps,
            taps_for,
        } = s;
        let k = self.kernel;
        macro_rules! scratch {
            () => {
                Conv3Scratch {
                    cols: &mut *cols,
                    taps: &mut *taps,
                    taps_for: &mut *taps_for,
                }
            };
        }
        // [n, planes, squares] -> [n * squares, planes]
        let np = shape.planes;
        tmp.clear();
        tmp.resize(rows * np, 0.0);
        let positions = inputs.iter().flat_map(|run| run.chunks_exact(np * sq));
        for (b, position) in positions.take(n).enumerate() {
            for (p, plane) in position.chunks_exact(sq).enumerate() {
                for (q, &v) in plane.iter().enumerate() {
                    tmp[(b * sq + q) * np + p] = v;
                }
            }
        }
        self.conv3(&self.input, tmp, n, scratch!(), h);
        relu(h);
        for (c1, pool, c2) in &self.tower {
            self.conv3(c1, h, n, scratch!(), y);
            relu(y);
            if let Some(pool) = pool {
                let c = pool.cout;
                pool_board(y, n, sq, c, pooled);
                pool.apply(k, pooled, n, tmp);
                for (b, g) in tmp.chunks_exact(c).enumerate() {
                    for row in y[b * sq * c..(b + 1) * sq * c].chunks_exact_mut(c) {
                        row.iter_mut().zip(g).for_each(|(v, &g)| *v += g);
                    }
                }
            }
            self.conv3(c2, y, n, scratch!(), tmp);
            for (h, &t) in h.iter_mut().zip(tmp.iter()) {
                *h = (*h + t).max(0.0);
            }
        }
        // The value head.
        self.value_conv.apply(k, h, rows, y);
        relu(y);
        let vc = self.value_conv.cout;
        pool_board(y, n, sq, vc, pooled);
        if !self.global_pool {
            // The mean alone.
            for b in 0..n {
                pooled.copy_within(b * 2 * vc..b * 2 * vc + vc, b * vc);
            }
            pooled.truncate(n * vc);
        }
        self.fc1.apply(k, pooled, n, tmp);
        relu(tmp);
        self.fc2.apply(k, tmp, n, y);
        wdl.clear();
        for v in y.chunks_exact(3) {
            let m = v[0].max(v[1]).max(v[2]);
            let e = [(v[0] - m).exp(), (v[1] - m).exp(), (v[2] - m).exp()];
            let z = e[0] + e[1] + e[2];
            wdl.extend(e.iter().map(|x| x / z));
        }
        // The policy head's hidden layer.
        self.policy1.apply(k, h, rows, y);
        relu(y);
    }
}

/// Mean then max of each channel over the board: `[n * sq, c]` -> `[n, 2c]`.
fn pool_board(x: &[f32], n: usize, sq: usize, c: usize, out: &mut Vec<f32>) {
    out.clear();
    out.resize(n * 2 * c, 0.0);
    for (b, o) in out.chunks_exact_mut(2 * c).enumerate() {
        let (mean, max) = o.split_at_mut(c);
        max.fill(f32::NEG_INFINITY);
        for row in x[b * sq * c..(b + 1) * sq * c].chunks_exact(c) {
            for ((m, mx), &v) in mean.iter_mut().zip(max.iter_mut()).zip(row) {
                *m += v;
                *mx = mx.max(v);
            }
        }
        let inv = 1.0 / sq as f32;
        mean.iter_mut().for_each(|m| *m *= inv);
    }
}

fn relu(x: &mut [f32]) {
    x.iter_mut().for_each(|v| *v = v.max(0.0));
}

fn dot(a: &[f32], b: &[f32]) -> f32 {
    // Four accumulators: lets the compiler vectorise without reassociating one sum.
    let mut acc = [0.0f32; 4];
    let (ca, cb) = (a.chunks_exact(4), b.chunks_exact(4));
    let (ra, rb) = (ca.remainder(), cb.remainder());
    for (x, y) in ca.zip(cb) {
        for ((s, x), y) in acc.iter_mut().zip(x).zip(y) {
            *s += x * y;
        }
    }
    let mut s = (acc[0] + acc[1]) + (acc[2] + acc[3]);
    for (x, y) in ra.iter().zip(rb) {
        s += x * y;
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::ModelConfig;
    use crate::net::Network;
    use rand::{Rng, SeedableRng};
    use tch::{nn::VarStore, Kind};

    fn config(blocks: usize, channels: usize, global_pool: bool) -> ModelConfig {
        ModelConfig {
            name: "t".into(),
            blocks,
            channels,
            global_pool,
            policy_channels: 8,
            value_channels: 6,
            value_hidden: 20,
        }
    }

    /// libtorch's forward of the folded network: every logit and the WDL probabilities.
    fn reference(net: &InferenceNet, shape: NetShape, x: &[f32], n: usize) -> (Vec<f32>, Vec<f32>) {
        tch::no_grad(|| {
            let t = Tensor::from_slice(x).view([
                n as i64,
                shape.planes as i64,
                shape.ranks as i64,
                shape.files as i64,
            ]);
            let (p, v) = net.forward(&t);
            (floats(&p), floats(&v.softmax(-1, Kind::Float)))
        })
    }

    fn close(a: &[f32], b: &[f32], what: &str) {
        assert_eq!(a.len(), b.len(), "{what}: lengths");
        let scale = b.iter().fold(1.0f32, |m, v| m.max(v.abs()));
        for (i, (x, y)) in a.iter().zip(b).enumerate() {
            assert!(
                (x - y).abs() <= 2e-5 * scale,
                "{what}: element {i}: {x} against libtorch's {y}"
            );
        }
    }

    /// Random folded weights of `cfg` on `shape`, batch norms away from the identity.
    fn folded(cfg: &ModelConfig, shape: NetShape) -> InferenceNet {
        let vs = VarStore::new(tch::Device::Cpu);
        let net = Network::new(&vs.root(), cfg, shape);
        tch::no_grad(|| {
            for (name, mut t) in vs.variables() {
                if name.ends_with("running_mean") || name.ends_with(".bias") {
                    t.copy_(&(Tensor::randn_like(&t) * 0.3));
                } else if name.ends_with("running_var") {
                    t.copy_(&(Tensor::rand_like(&t) + 0.5));
                }
            }
        });
        net.fold(Kind::Float)
    }

    /// Board-game inputs: mostly 0 and 1, some counts.
    fn inputs(rng: &mut impl Rng, len: usize) -> Vec<f32> {
        (0..len)
            .map(|_| match rng.random_range(0..10) {
                0..=5 => 0.0,
                6..=8 => 1.0,
                _ => rng.random_range(0.0..3.0),
            })
            .collect()
    }

    /// Each direct kernel this CPU runs gives the SGEMM path's logits and WDL: layers of 16,
    /// 32 and 48 outputs (direct) beside heads of 8 and 3 (SGEMM), batches whose rows are no
    /// multiple of a tile's, square and oblong boards, and the same network again at another
    /// batch (the source table is rebuilt).
    #[test]
    fn direct_kernels_agree_with_the_sgemm_path() {
        tch::manual_seed(11);
        let mut rng = rand::rngs::StdRng::seed_from_u64(5);
        for (channels, policy_channels, ranks, files, batches) in [
            (32, 16, 5, 5, vec![1, 16, 7]),
            (48, 8, 6, 4, vec![3, 1]),
            (16, 16, 9, 9, vec![2, 5]),
        ] {
            let cfg = ModelConfig {
                policy_channels,
                value_channels: 16,
                value_hidden: 32,
                ..config(2, channels, true)
            };
            let shape = NetShape {
                planes: 13,
                ranks,
                files,
                policy_planes: 6,
            };
            let net = folded(&cfg, shape);
            let mut gemm = CpuNet::with_kernel(&net, shape, Kernel::Gemm);
            for kernel in Kernel::available() {
                let mut direct = CpuNet::with_kernel(&net, shape, kernel);
                for &n in &batches {
                    let x = inputs(&mut rng, n * shape.input_len());
                    let (mut p, mut v, mut dp, mut dv) = (vec![], vec![], vec![], vec![]);
                    gemm.forward_all(&x, n, &mut p, &mut v);
                    direct.forward_all(&x, n, &mut dp, &mut dv);
                    let what =
                        format!("{kernel:?}, {channels} channels, {ranks}x{files}, batch {n}");
                    close(&dp, &p, &format!("{what}: policy"));
                    close(&dv, &v, &format!("{what}: wdl"));
                }
            }
        }
    }

    /// Every layer kind, with and without global pooling, on square and oblong boards, from one
    /// position to batches that go through the 3x3 convolutions in several chunks: the same
    /// logits and WDL as libtorch's forward of the same folded weights.
    #[test]
    fn agrees_with_libtorch() {
        tch::manual_seed(7);
        let mut rng = rand::rngs::StdRng::seed_from_u64(3);
        for (cfg, shape, batches) in [
            (
                config(2, 16, true),
                NetShape {
                    planes: 11,
                    ranks: 5,
                    files: 5,
                    policy_planes: 9,
                },
                vec![1, 3, 64],
            ),
            (
                config(1, 12, false),
                NetShape {
                    planes: 7,
                    ranks: 6,
                    files: 4,
                    policy_planes: 5,
                },
                vec![1, 5],
            ),
            (
                config(1, 64, true),
                NetShape {
                    planes: 9,
                    ranks: 9,
                    files: 9,
                    policy_planes: 4,
                },
                // 81 squares x 576 patch floats: 22 positions a chunk.
                vec![2, 50],
            ),
        ] {
            // Batch norms away from the identity, so that folding is exercised.
            let folded = folded(&cfg, shape);
            let mut cpu = CpuNet::new(&folded, shape);
            for n in batches {
                let x = inputs(&mut rng, n * shape.input_len());
                let (p, v) = reference(&folded, shape, &x, n);
                let (mut lp, mut lv) = (Vec::new(), Vec::new());
                cpu.forward_all(&x, n, &mut lp, &mut lv);
                let what = format!(
                    "{} blocks of {}, {:?}, batch {n}",
                    cfg.blocks, cfg.channels, shape
                );
                close(&lp, &p, &format!("{what}: policy"));
                close(&lv, &v, &format!("{what}: wdl"));
                // A few logits of some positions, the inputs split in two runs.
                let pl = shape.policy_len();
                let idx: Vec<i64> = (0..n)
                    .step_by(2)
                    .flat_map(|b| [b * pl, b * pl + pl / 2, (b + 1) * pl - 1])
                    .map(|i| i as i64)
                    .collect();
                let cut = (n / 2) * shape.input_len();
                cpu.forward_indices(&[&x[..cut], &x[cut..]], n, &idx, &mut lp, &mut lv);
                let want: Vec<f32> = idx.iter().map(|&i| p[i as usize]).collect();
                close(&lp, &want, &format!("{what}: chosen logits"));
                close(&lv, &v, &format!("{what}: wdl again"));
            }
        }
    }
}
