//! Shared fixtures of the model crate's integration tests: a fixed synthetic data set of
//! minishogi positions with known targets, batches, temporary directories.

#![allow(dead_code)]

use encoding::Encoder;
use model::{shape_of, Batch, Device, ModelConfig, ModelMeta, NetShape, SplitMix, Trainer};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use rules::{Color, Position, Variant};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The tiny network shape used by every test.
pub fn tiny() -> ModelConfig {
    ModelConfig::load("b2c16").expect("built-in b2c16")
}

/// A variant by built-in name.
pub fn variant(name: &str) -> Arc<Variant> {
    Arc::new(Variant::builtin(name).expect("built-in variant"))
}

/// The encoder of a built-in variant.
pub fn encoder(name: &str) -> Encoder {
    Encoder::new(variant(name))
}

/// Metadata of a `config` network for `enc`.
pub fn meta_for(config: &ModelConfig, enc: &Encoder) -> ModelMeta {
    ModelMeta::new(
        config,
        shape_of(enc),
        enc.spec(),
        enc.variant().spec.clone(),
    )
}

/// A fresh empty directory under the cargo target's temporary folder.
pub fn temp_dir(name: &str) -> PathBuf {
    let d = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("model-tests")
        .join(format!("{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).expect("create temp dir");
    d
}

/// Material value of a piece kind, by its letter and promotion (kings count 0).
pub fn piece_value(v: &Variant, kind: rules::Kind) -> i32 {
    let k = &v.kinds[kind as usize];
    match (k.letter.unmarked().unwrap_or('?'), k.promoted) {
        ('P', false) => 1,
        ('P', true) => 6,
        ('L', false) => 3,
        ('L', true) => 6,
        ('N', false) => 4,
        ('N', true) => 6,
        ('S', false) => 5,
        ('S', true) => 6,
        ('G', _) => 6,
        ('B', false) => 8,
        ('B', true) => 10,
        ('R', false) => 10,
        ('R', true) => 12,
        ('K', _) => 0,
        (c, p) => panic!("no value for piece {c} (promoted {p})"),
    }
}

/// Material balance for the side to move: board and hands.
pub fn material(pos: &Position) -> i32 {
    let v = pos.variant().clone();
    let us = pos.side_to_move();
    let sign = |c: Color| if c == us { 1 } else { -1 };
    let mut total = 0;
    for sq in 0..v.num_squares() {
        let p = pos.piece_at(sq);
        if !p.is_empty() {
            total += sign(p.color()) * piece_value(&v, p.kind());
        }
    }
    for &k in &v.hand_kinds {
        for c in Color::ALL {
            total += sign(c) * pos.hand_count(c, k) as i32 * piece_value(&v, k);
        }
    }
    total
}

/// `n` distinct-ish positions from seeded random playouts (0 to 40 plies), each with legal
/// moves and the game not over.
pub fn random_positions(v: &Arc<Variant>, n: usize, seed: u64) -> Vec<Position> {
    let mut rng = StdRng::seed_from_u64(seed);
    let mut out = Vec::with_capacity(n);
    while out.len() < n {
        let mut pos = Position::start(v.clone());
        let plies = rng.random_range(0..40);
        for _ in 0..plies {
            if pos.outcome().is_some() {
                break;
            }
            let moves = pos.legal_moves();
            if moves.is_empty() {
                break;
            }
            pos.make_move(moves[rng.random_range(0..moves.len())]);
        }
        if pos.outcome().is_none() && !pos.legal_moves().is_empty() {
            out.push(pos);
        }
    }
    out
}

/// A fixed data set: encoded positions with WDL one-hot from the material balance and a policy
/// one-hot on the legal move with the smallest policy index.
pub struct DataSet {
    pub shape: NetShape,
    pub inputs: Vec<f32>,
    pub policy: Vec<f32>,
    pub wdl: Vec<f32>,
    pub len: usize,
}

impl DataSet {
    /// The data set of `n` minishogi positions from `seed`.
    pub fn minishogi(n: usize, seed: u64) -> DataSet {
        let v = variant("minishogi");
        let enc = Encoder::new(v.clone());
        let shape = shape_of(&enc);
        let (il, pl) = (shape.input_len(), shape.policy_len());
        let positions = random_positions(&v, n, seed);
        let mut inputs = vec![0.0; n * il];
        let mut policy = vec![0.0; n * pl];
        let mut wdl = vec![0.0; n * 3];
        for (i, pos) in positions.iter().enumerate() {
            enc.encode(pos, &mut inputs[i * il..(i + 1) * il]);
            let best = enc
                .legal_indices(pos)
                .into_iter()
                .map(|(idx, _)| idx)
                .min()
                .expect("legal moves");
            assert!(best < pl);
            policy[i * pl + best] = 1.0;
            let m = material(pos);
            let slot = match m.signum() {
                1 => 0,
                0 => 1,
                _ => 2,
            };
            wdl[i * 3 + slot] = 1.0;
        }
        DataSet {
            shape,
            inputs,
            policy,
            wdl,
            len: n,
        }
    }

    /// A batch of the samples `idx`.
    pub fn batch(&self, idx: &[usize]) -> Batch {
        let (il, pl) = (self.shape.input_len(), self.shape.policy_len());
        let mut inputs = Vec::with_capacity(idx.len() * il);
        let mut policy = Vec::with_capacity(idx.len() * pl);
        let mut wdl = Vec::with_capacity(idx.len() * 3);
        for &i in idx {
            inputs.extend_from_slice(&self.inputs[i * il..(i + 1) * il]);
            policy.extend_from_slice(&self.policy[i * pl..(i + 1) * pl]);
            wdl.extend_from_slice(&self.wdl[i * 3..(i + 1) * 3]);
        }
        Batch::from_slices(self.shape, &inputs, &policy, &wdl, Device::Cpu).expect("batch")
    }

    /// The whole set as one batch.
    pub fn all(&self) -> Batch {
        let idx: Vec<usize> = (0..self.len).collect();
        self.batch(&idx)
    }

    /// A batch of `size` samples drawn with `rng`.
    pub fn sample(&self, rng: &mut SplitMix, size: usize) -> Batch {
        let idx: Vec<usize> = (0..size).map(|_| rng.below(self.len)).collect();
        self.batch(&idx)
    }
}

/// One training step on a batch drawn with the trainer's own generator.
pub fn step(t: &mut Trainer, data: &DataSet, size: usize) -> model::StepStats {
    let mut rng = t.rng;
    let b = data.sample(&mut rng, size);
    t.rng = rng;
    t.train_step(&b)
}

/// Uniform random floats in [0, 1), from a seed (not torch's global generator).
pub fn random_floats(n: usize, seed: u64) -> Vec<f32> {
    let mut rng = StdRng::seed_from_u64(seed);
    (0..n).map(|_| rng.random::<f32>()).collect()
}

/// Encoded random positions of `enc`'s variant.
pub fn encoded_positions(enc: &Encoder, n: usize, seed: u64) -> Vec<f32> {
    let positions = random_positions(enc.variant(), n, seed);
    let il = enc.input_len();
    let mut out = vec![0.0; n * il];
    for (i, p) in positions.iter().enumerate() {
        enc.encode(p, &mut out[i * il..(i + 1) * il]);
    }
    out
}

/// The venv's Python, or a clear failure.
pub fn venv_python() -> PathBuf {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("../.local/venv/bin/python");
    assert!(
        p.exists(),
        "{} is missing: install PyTorch 2.11 with onnx and onnxruntime in .local/venv \
         (scripts/setup-torch.sh, then pip install onnx onnxruntime)",
        p.display()
    );
    p
}

/// Publishes `t` as `1.safetensors` in a fresh directory `name` and checks that the file holds
/// the policy head and no tensor whose name starts with `aux` (the auxiliary outputs training
/// uses and published networks leave out); returns the directory and the file.
pub fn publish_without(t: &Trainer, meta: &ModelMeta, name: &str, aux: &str) -> (PathBuf, PathBuf) {
    let dir = temp_dir(name);
    let published = dir.join("1.safetensors");
    model::save_published_model(t, meta, &published).unwrap();
    let names = model::tensor_names(&published).unwrap();
    assert!(
        names.iter().any(|n| n == "policy.conv2.weight"),
        "{names:?}"
    );
    assert!(!names.iter().any(|n| n.starts_with(aux)), "{names:?}");
    (dir, published)
}
