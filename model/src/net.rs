//! The policy/value network: a ResNet trunk with optional global pooling, a convolutional policy
//! head over the encoder's policy planes, and a WDL value head.
//!
//! Variable names follow the module tree (`input.conv.weight`, `tower.3.conv1.weight`,
//! `policy.conv2.bias`, `value.fc2.weight`), so they are stable across runs and match a PyTorch
//! module of the same layout.

use crate::config::ModelConfig;
use tch::nn::{self, Module, ModuleT};
use tch::Tensor;

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

    fn forward_t(&self, x: &Tensor, train: bool) -> Tensor {
        let mut h = x.apply(&self.conv1).apply_t(&self.bn1, train).relu();
        if let Some(pool) = &self.pool {
            // Channel bias from the whole board: lets every square see global context.
            let g = global_pool(&h).apply(pool);
            h = &h + g.unsqueeze(-1).unsqueeze(-1);
        }
        let h = h.apply(&self.conv2).apply_t(&self.bn2, train);
        (h + x).relu()
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
        }
    }

    /// Forward pass: `[B, planes, ranks, files]` -> (policy logits `[B, policy_len]`, WDL logits
    /// `[B, 3]`). `train` selects batch statistics (training) or running statistics (inference).
    pub fn forward_t(&self, x: &Tensor, train: bool) -> (Tensor, Tensor) {
        let mut h = x
            .apply(&self.input_conv)
            .apply_t(&self.input_bn, train)
            .relu();
        for b in &self.tower {
            h = b.forward_t(&h, train);
        }
        let p = h
            .apply(&self.policy_conv1)
            .apply_t(&self.policy_bn, train)
            .relu()
            .apply(&self.policy_conv2)
            .flatten(1, -1);
        let v = h
            .apply(&self.value_conv)
            .apply_t(&self.value_bn, train)
            .relu();
        let v = if self.config.global_pool {
            global_pool(&v)
        } else {
            v.mean_dim(&[2i64, 3][..], false, v.kind())
        };
        let v = v.apply(&self.value_fc1).relu().apply(&self.value_fc2);
        (p, v)
    }

    /// Inference output as one tensor: policy logits then WDL probabilities, `[B, policy_len + 3]`
    /// (the exported TorchScript module's output).
    pub fn forward_export(&self, x: &Tensor) -> Tensor {
        let (p, v) = self.forward_t(x, false);
        Tensor::cat(&[p, v.softmax(-1, v.kind())], 1)
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
        Block::forward_t(self, xs, train)
    }
}
