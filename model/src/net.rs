//! The policy/value network: a ResNet trunk with optional global pooling, a convolutional policy
//! head over the encoder's policy planes, and a WDL value head.
//!
//! Variable names follow the module tree (`input.conv.weight`, `tower.3.conv1.weight`,
//! `policy.conv2.bias`, `value.fc2.weight`), so they are stable across runs and match a PyTorch
//! module of the same layout.

use crate::config::ModelConfig;
use tch::nn::{self, Module, ModuleT};
use tch::{Kind, Tensor};

/// Input and output sizes of a network, fixed by the variant's encoding.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NetShape {
    /// Input planes.
    pub planes: usize,
    /// Board ranks.
    pub ranks: usize,
    /// Board files.
    pub files: usize,
    /// Policy planes (the policy vector is `policy_planes * ranks * files` long).
    pub policy_planes: usize,
}

impl NetShape {
    /// Length of the policy vector.
    pub fn policy_len(&self) -> usize {
        self.policy_planes * self.ranks * self.files
    }

    /// Floats per encoded position.
    pub fn input_len(&self) -> usize {
        self.planes * self.ranks * self.files
    }
}

fn conv(p: nn::Path, cin: usize, cout: usize, k: i64, bias: bool) -> nn::Conv2D {
    nn::conv2d(
        p,
        cin as i64,
        cout as i64,
        k,
        nn::ConvConfig {
            padding: k / 2,
            bias,
            ..Default::default()
        },
    )
}

fn bn(p: nn::Path, c: usize) -> nn::BatchNorm {
    nn::batch_norm2d(p, c as i64, Default::default())
}

/// Mean and max over the board: `[B, C, H, W]` -> `[B, 2C]`.
fn global_pool(x: &Tensor) -> Tensor {
    // No dtype or device conversion here: a traced graph would bake them in.
    let mean = x.mean_dim(&[2i64, 3][..], false, x.kind());
    let max = x.amax(&[2i64, 3][..], false);
    Tensor::cat(&[mean, max], 1)
}

#[derive(Debug)]
struct Block {
    conv1: nn::Conv2D,
    bn1: nn::BatchNorm,
    conv2: nn::Conv2D,
    bn2: nn::BatchNorm,
    pool: Option<nn::Linear>,
}

impl Block {
    fn new(p: nn::Path, c: usize, global: bool) -> Block {
        Block {
            conv1: conv(&p / "conv1", c, c, 3, false),
            bn1: bn(&p / "bn1", c),
            conv2: conv(&p / "conv2", c, c, 3, false),
            bn2: bn(&p / "bn2", c),
            pool: global
                .then(|| nn::linear(&p / "pool", 2 * c as i64, c as i64, Default::default())),
        }
    }

    fn forward_t(&self, x: &Tensor, train: bool, k: Option<Kind>) -> Tensor {
        let mut h = bn_k(&conv_k(x, &self.conv1, k), &self.bn1, train, k).relu();
        if let Some(pool) = &self.pool {
            // Channel bias from the whole board: lets every square see global context.
            let g = linear_k(&global_pool(&h), pool, k);
            h = &h + g.unsqueeze(-1).unsqueeze(-1);
        }
        let h = bn_k(&conv_k(&h, &self.conv2, k), &self.bn2, train, k);
        (h + x).relu()
    }
}

/// A convolution computed in `k` when given (weights cast on the fly, so gradients reach the
/// f32 weights): mixed precision without libtorch's autocast.
fn conv_k(x: &Tensor, c: &nn::Conv2D, k: Option<Kind>) -> Tensor {
    match k {
        None => x.apply(c),
        Some(k) => {
            let pad = c.ws.size()[2] / 2;
            x.to_kind(k).conv2d(
                &c.ws.to_kind(k),
                c.bs.as_ref().map(|b| b.to_kind(k)),
                [1, 1],
                [pad, pad],
                [1, 1],
                1,
            )
        }
    }
}

/// A batch norm, in f32 under mixed precision, its output back in `k`.
fn bn_k(x: &Tensor, bn: &nn::BatchNorm, train: bool, k: Option<Kind>) -> Tensor {
    match k {
        None => x.apply_t(bn, train),
        Some(k) => x.to_kind(Kind::Float).apply_t(bn, train).to_kind(k),
    }
}

/// A linear layer computed in `k` when given.
fn linear_k(x: &Tensor, l: &nn::Linear, k: Option<Kind>) -> Tensor {
    match k {
        None => x.apply(l),
        Some(k) => x
            .to_kind(k)
            .linear(&l.ws.to_kind(k), l.bs.as_ref().map(|b| b.to_kind(k))),
    }
}

/// The network.
#[derive(Debug)]
pub struct Network {
    /// Shape of the trunk and heads.
    pub config: ModelConfig,
    /// Input and output sizes.
    pub shape: NetShape,
    input_conv: nn::Conv2D,
    input_bn: nn::BatchNorm,
    tower: Vec<Block>,
    policy_conv1: nn::Conv2D,
    policy_bn: nn::BatchNorm,
    policy_conv2: nn::Conv2D,
    value_conv: nn::Conv2D,
    value_bn: nn::BatchNorm,
    value_fc1: nn::Linear,
    value_fc2: nn::Linear,
    /// The auxiliary soft-policy output (training only, see [`Network::add_soft_policy`]).
    soft_policy: Option<nn::Conv2D>,
    /// The auxiliary opponent-reply output (training only, see
    /// [`Network::add_opponent_policy`]).
    opponent_policy: Option<nn::Conv2D>,
}

/// Name prefix of the soft-policy output's variables: training checkpoints carry them,
/// published networks do not.
pub const SOFT_POLICY_PREFIX: &str = "policy_soft.";

/// Name prefix of the opponent-reply output's variables (training only, as the soft policy's).
pub const OPPONENT_POLICY_PREFIX: &str = "policy_opponent.";

/// Whether the variable `name` belongs to a training-only output (the soft-policy or the
/// opponent-reply output): checkpoints carry them, published networks and model files do not.
pub fn is_training_only(name: &str) -> bool {
    name.starts_with(SOFT_POLICY_PREFIX) || name.starts_with(OPPONENT_POLICY_PREFIX)
}

/// What a training forward pass computes: the inference outputs, plus the training-only
/// outputs the network has.
#[derive(Debug)]
pub struct TrainOutputs {
    /// Policy logits `[B, policy_len]`.
    pub policy: Tensor,
    /// WDL logits `[B, 3]`.
    pub wdl: Tensor,
    /// Soft-policy logits `[B, policy_len]`, with that output.
    pub soft: Option<Tensor>,
    /// Logits of the opponent's reply `[B, policy_len]` (indexed in the position after the
    /// move, where the opponent is to move), with that output.
    pub opponent: Option<Tensor>,
}

impl Network {
    /// Creates the network's variables under `root` (random initialisation).
    pub fn new(root: &nn::Path, config: &ModelConfig, shape: NetShape) -> Network {
        let c = config.channels;
        let input = root / "input";
        let tower = root / "tower";
        let policy = root / "policy";
        let value = root / "value";
        let pooled = if config.global_pool { 2 } else { 1 } * config.value_channels;
        Network {
            config: config.clone(),
            shape,
            input_conv: conv(&input / "conv", shape.planes, c, 3, false),
            input_bn: bn(&input / "bn", c),
            tower: (0..config.blocks)
                .map(|i| Block::new(&tower / i, c, config.global_pool))
                .collect(),
            policy_conv1: conv(&policy / "conv1", c, config.policy_channels, 1, false),
            policy_bn: bn(&policy / "bn", config.policy_channels),
            policy_conv2: conv(
                &policy / "conv2",
                config.policy_channels,
                shape.policy_planes,
                1,
                true,
            ),
            value_conv: conv(&value / "conv", c, config.value_channels, 1, false),
            value_bn: bn(&value / "bn", config.value_channels),
            value_fc1: nn::linear(
                &value / "fc1",
                pooled as i64,
                config.value_hidden as i64,
                Default::default(),
            ),
            value_fc2: nn::linear(
                &value / "fc2",
                config.value_hidden as i64,
                3,
                Default::default(),
            ),
            soft_policy: None,
            opponent_policy: None,
        }
    }

    /// Adds KataGo's auxiliary soft-policy output under `root`: a 1x1 convolution beside the
    /// policy head's last one, on the same hidden layer, so that its loss shapes the trunk.
    /// Inference never computes it. Call before the optimizer is built.
    pub fn add_soft_policy(&mut self, root: &nn::Path) {
        if self.soft_policy.is_none() {
            let p = root / SOFT_POLICY_PREFIX.trim_end_matches('.');
            self.soft_policy = Some(conv(
                &p / "conv",
                self.config.policy_channels,
                self.shape.policy_planes,
                1,
                true,
            ));
        }
    }

    /// Whether the network has the soft-policy output.
    pub fn has_soft_policy(&self) -> bool {
        self.soft_policy.is_some()
    }

    /// Adds KataGo's auxiliary opponent-reply output under `root`: a 1x1 convolution beside
    /// the policy head's last one that predicts the move the opponent answers with, indexed as
    /// the policy of the position after the move. Inference never computes it. Call before
    /// the optimizer is built.
    pub fn add_opponent_policy(&mut self, root: &nn::Path) {
        if self.opponent_policy.is_none() {
            let p = root / OPPONENT_POLICY_PREFIX.trim_end_matches('.');
            self.opponent_policy = Some(conv(
                &p / "conv",
                self.config.policy_channels,
                self.shape.policy_planes,
                1,
                true,
            ));
        }
    }

    /// Whether the network has the opponent-reply output.
    pub fn has_opponent_policy(&self) -> bool {
        self.opponent_policy.is_some()
    }

    /// Forward pass: `[B, planes, ranks, files]` -> (policy logits `[B, policy_len]`, WDL logits
    /// `[B, 3]`). `train` selects batch statistics (training) or running statistics (inference).
    pub fn forward_t(&self, x: &Tensor, train: bool) -> (Tensor, Tensor) {
        self.forward_in(x, train, None)
    }

    /// [`Network::forward_t`] with convolutions and linear layers computed in `compute` when
    /// given (bf16 or f16 mixed precision: f32 weights and batch norms); outputs in that kind.
    pub fn forward_in(&self, x: &Tensor, train: bool, compute: Option<Kind>) -> (Tensor, Tensor) {
        let o = self.forward_heads(x, train, compute, false);
        (o.policy, o.wdl)
    }

    /// [`Network::forward_in`] plus the training-only outputs the network has (training).
    pub fn forward_train(&self, x: &Tensor, train: bool, compute: Option<Kind>) -> TrainOutputs {
        self.forward_heads(x, train, compute, true)
    }

    fn forward_heads(
        &self,
        x: &Tensor,
        train: bool,
        compute: Option<Kind>,
        aux: bool,
    ) -> TrainOutputs {
        let k = compute;
        let mut h = bn_k(&conv_k(x, &self.input_conv, k), &self.input_bn, train, k).relu();
        for b in &self.tower {
            h = b.forward_t(&h, train, k);
        }
        let p = bn_k(
            &conv_k(&h, &self.policy_conv1, k),
            &self.policy_bn,
            train,
            k,
        )
        .relu();
        let aux_head = |head: &Option<nn::Conv2D>| match head {
            Some(c) if aux => Some(conv_k(&p, c, k).flatten(1, -1)),
            _ => None,
        };
        let soft = aux_head(&self.soft_policy);
        let opponent = aux_head(&self.opponent_policy);
        let p = conv_k(&p, &self.policy_conv2, k).flatten(1, -1);
        let v = bn_k(&conv_k(&h, &self.value_conv, k), &self.value_bn, train, k).relu();
        let v = if self.config.global_pool {
            global_pool(&v)
        } else {
            v.mean_dim(&[2i64, 3][..], false, v.kind())
        };
        let v = linear_k(&linear_k(&v, &self.value_fc1, k).relu(), &self.value_fc2, k);
        TrainOutputs {
            policy: p,
            wdl: v,
            soft,
            opponent,
        }
    }

    /// Inference output as one tensor: policy logits then WDL probabilities, `[B, policy_len + 3]`
    /// (the exported TorchScript module's output).
    pub fn forward_export(&self, x: &Tensor) -> Tensor {
        let (p, v) = self.forward_t(x, false);
        Tensor::cat(&[p, v.softmax(-1, v.kind())], 1)
    }
}

/// Epsilon of the batch norms (tch's default).
const BN_EPS: f64 = 1e-5;

/// A convolution with its batch norm folded in (inference only).
#[derive(Debug)]
pub(crate) struct Folded {
    pub(crate) w: Tensor,
    pub(crate) b: Tensor,
    pad: i64,
}

impl Folded {
    /// `bn(conv(x))` as one convolution, with weights in `kind`.
    fn conv(c: &nn::Conv2D, bn: Option<&nn::BatchNorm>, kind: Kind) -> Folded {
        let out = c.ws.size()[0];
        let pad = c.ws.size()[2] / 2;
        let bias = c.bs.as_ref().map_or_else(
            || Tensor::zeros([out], (Kind::Float, c.ws.device())),
            |b| b.copy(),
        );
        let (w, b) = match bn {
            None => (c.ws.copy(), bias),
            Some(bn) => {
                let gamma = bn
                    .ws
                    .as_ref()
                    .map_or_else(|| bn.running_var.ones_like(), |t| t.copy());
                let beta = bn
                    .bs
                    .as_ref()
                    .map_or_else(|| bn.running_var.zeros_like(), |t| t.copy());
                let scale = gamma / (&bn.running_var + BN_EPS).sqrt();
                let w = &c.ws * scale.view([-1, 1, 1, 1]);
                let b = beta + (bias - &bn.running_mean) * &scale;
                (w, b)
            }
        };
        Folded {
            w: w.to_kind(kind).contiguous(),
            b: b.to_kind(kind),
            pad,
        }
    }

    fn linear(l: &nn::Linear, kind: Kind) -> Folded {
        let out = l.ws.size()[0];
        Folded {
            w: l.ws.to_kind(kind),
            b: l.bs.as_ref().map_or_else(
                || Tensor::zeros([out], (kind, l.ws.device())),
                |b| b.to_kind(kind),
            ),
            pad: -1,
        }
    }

    fn forward(&self, x: &Tensor) -> Tensor {
        if self.pad < 0 {
            x.linear(&self.w, Some(&self.b))
        } else {
            x.conv2d(
                &self.w,
                Some(&self.b),
                [1, 1],
                [self.pad, self.pad],
                [1, 1],
                1,
            )
        }
    }
}

/// The network prepared for fast inference: batch norms folded into the convolutions (no
/// normalisation pass at run time), weights in the inference precision.
#[derive(Debug)]
pub struct InferenceNet {
    /// The floating-point format of weights, inputs and outputs.
    pub kind: Kind,
    pub(crate) input: Folded,
    pub(crate) tower: Vec<(Folded, Option<Folded>, Folded)>,
    pub(crate) policy1: Folded,
    pub(crate) policy2: Folded,
    pub(crate) value_conv: Folded,
    pub(crate) fc1: Folded,
    pub(crate) fc2: Folded,
    pub(crate) global_pool: bool,
}

impl InferenceNet {
    /// Forward pass in inference mode, as [`Network::forward_t`] with `train = false`:
    /// `x` (in `self.kind`) -> (policy logits, WDL logits), both in `self.kind`.
    pub fn forward(&self, x: &Tensor) -> (Tensor, Tensor) {
        let mut h = self.input.forward(x).relu();
        for (c1, pool, c2) in &self.tower {
            let mut y = c1.forward(&h).relu();
            if let Some(pool) = pool {
                let g = pool.forward(&global_pool(&y));
                y = &y + g.unsqueeze(-1).unsqueeze(-1);
            }
            h = (c2.forward(&y) + &h).relu();
        }
        let p = self
            .policy2
            .forward(&self.policy1.forward(&h).relu())
            .flatten(1, -1);
        let v = self.value_conv.forward(&h).relu();
        let v = if self.global_pool {
            global_pool(&v)
        } else {
            v.mean_dim(&[2i64, 3][..], false, v.kind())
        };
        let v = self.fc2.forward(&self.fc1.forward(&v).relu());
        (p, v)
    }
}

impl Network {
    /// The inference form of this network's current weights, in `kind`.
    pub fn fold(&self, kind: Kind) -> InferenceNet {
        tch::no_grad(|| InferenceNet {
            kind,
            input: Folded::conv(&self.input_conv, Some(&self.input_bn), kind),
            tower: self
                .tower
                .iter()
                .map(|b| {
                    (
                        Folded::conv(&b.conv1, Some(&b.bn1), kind),
                        b.pool.as_ref().map(|p| Folded::linear(p, kind)),
                        Folded::conv(&b.conv2, Some(&b.bn2), kind),
                    )
                })
                .collect(),
            policy1: Folded::conv(&self.policy_conv1, Some(&self.policy_bn), kind),
            policy2: Folded::conv(&self.policy_conv2, None, kind),
            value_conv: Folded::conv(&self.value_conv, Some(&self.value_bn), kind),
            fc1: Folded::linear(&self.value_fc1, kind),
            fc2: Folded::linear(&self.value_fc2, kind),
            global_pool: self.config.global_pool,
        })
    }
}

/// `Module` for tracing: inference mode, one output tensor.
impl Module for Network {
    fn forward(&self, xs: &Tensor) -> Tensor {
        self.forward_export(xs)
    }
}

impl ModuleT for Block {
    fn forward_t(&self, xs: &Tensor, train: bool) -> Tensor {
        Block::forward_t(self, xs, train, None)
    }
}
