//! `NetEvaluator` as a search `Evaluator`, and device parsing.

mod common;

use common::{encoded_positions, encoder, random_floats, tiny};
use model::{shape_of, CpuBackend, Device, DeviceExt, NetEvaluator, Network};
use search::Evaluator;
use tch::nn::VarStore;

fn evaluator(variant: &str) -> (NetEvaluator, encoding::Encoder) {
    let enc = encoder(variant);
    let vs = VarStore::new(tch::Device::Cpu);
    let net = Network::new(&vs.root(), &tiny(), shape_of(&enc));
    (NetEvaluator::new(vs, net), enc)
}

#[test]
fn evaluate_returns_policy_logits_and_a_wdl_distribution() {
    for variant in ["minishogi", "shogi"] {
        let (mut ev, enc) = evaluator(variant);
        assert_eq!(ev.input_len(), enc.input_len());
        assert_eq!(ev.policy_len(), enc.policy_len());
        assert_eq!(ev.shape(), shape_of(&enc));
        assert_eq!(ev.device, Device::Cpu);
        let n = 5;
        let x = encoded_positions(&enc, n, 77);
        let out = ev.evaluate(&x, n).unwrap();
        assert_eq!(out.len(), n);
        for e in &out {
            assert_eq!(e.policy_logits.len(), enc.policy_len());
            assert!(e.policy_logits.iter().all(|v| v.is_finite()));
            let sum: f32 = e.wdl.iter().sum();
            assert!((sum - 1.0).abs() < 1e-5, "{variant}: WDL sums to {sum}");
            assert!(e.wdl.iter().all(|&p| (0.0..=1.0).contains(&p)));
            assert!((e.value() - (e.wdl[0] - e.wdl[2])).abs() < 1e-7);
        }
        // Batched results equal one-by-one results (eval mode: no batch statistics).
        let il = enc.input_len();
        for (i, e) in out.iter().enumerate() {
            let one = ev.evaluate(&x[i * il..(i + 1) * il], 1).unwrap();
            for (a, b) in one[0].policy_logits.iter().zip(&e.policy_logits) {
                assert!((a - b).abs() < 1e-4, "{variant} sample {i}: {a} vs {b}");
            }
            for (a, b) in one[0].wdl.iter().zip(&e.wdl) {
                assert!((a - b).abs() < 1e-5, "{variant} sample {i}: {a} vs {b}");
            }
        }
        // Same as forward_raw (the training form; inference folds the batch norms).
        let (p, v) = ev.forward_raw(&x, n);
        assert_eq!(p.len(), n * enc.policy_len());
        let close = |a: &[f32], b: &[f32]| a.iter().zip(b).all(|(x, y)| (x - y).abs() < 1e-4);
        assert!(close(&p[..enc.policy_len()], &out[0].policy_logits));
        assert!(close(&v[3..6], &out[1].wdl));
    }
}

#[test]
fn wrong_input_length_is_an_error() {
    let (mut ev, enc) = evaluator("minishogi");
    let il = enc.input_len();
    let x = random_floats(3 * il, 1);
    for (len, batch) in [(3 * il - 1, 3), (3 * il, 2), (3 * il, 4), (il, 0), (0, 1)] {
        let r = ev.evaluate(&x[..len], batch);
        let e = r
            .err()
            .unwrap_or_else(|| panic!("{len} floats for {batch} positions accepted"));
        assert!(
            e.to_string().contains(&len.to_string()),
            "error does not give the length: {e}"
        );
    }
    assert!(ev.evaluate(&[], 0).unwrap().is_empty());
    assert_eq!(ev.evaluate(&x, 3).unwrap().len(), 3);
}

#[test]
fn devices_parse() {
    let parse = model::parse_device;
    assert_eq!(parse("cpu").unwrap(), Device::Cpu);
    assert!(parse("auto").is_ok());
    for bad in ["gpu", "cuda:x", "", "CPU"] {
        let e = parse(bad).unwrap_err().to_string();
        assert!(e.contains("cpu, cuda"), "{bad:?}: {e}");
    }
    let e = parse("cuda:999").unwrap_err().to_string();
    assert!(e.contains("cuda:999"), "{e}");
    if !tch::Cuda::is_available() {
        assert!(parse("cuda").is_err());
        assert_eq!(parse("auto").unwrap().resolved(), Device::Cpu);
    }
}

/// A trained network (moved weights and batch-norm statistics) with global pooling, so that
/// folding the batch norms is checked on values that matter.
fn trained() -> (NetEvaluator, encoding::Encoder) {
    let data = common::DataSet::minishogi(64, 3);
    let mut cfg = tiny();
    cfg.global_pool = true;
    let mut t = model::Trainer::new(
        &cfg,
        data.shape,
        model::TrainConfig::default(),
        Device::Cpu,
        1,
    );
    for _ in 0..20 {
        common::step(&mut t, &data, 32);
    }
    (NetEvaluator::new(t.vs, t.net), encoder("minishogi"))
}

/// On CPU every backend (the crate's own forward, libtorch's, and the default that picks one
/// by batch size) gives the training form's answers.
#[test]
fn the_fast_path_matches_the_training_form_on_the_legal_moves() {
    let (mut ev, enc) = trained();
    assert_eq!(ev.backend(), CpuBackend::Auto);
    for backend in [CpuBackend::Native, CpuBackend::Libtorch, CpuBackend::Auto] {
        ev.set_backend(backend);
        assert_eq!(ev.backend(), backend);
        fast_path_matches(&mut ev, &enc);
    }
}

fn fast_path_matches(ev: &mut NetEvaluator, enc: &encoding::Encoder) {
    let v = enc.variant().clone();
    let positions = common::random_positions(&v, 40, 5);
    let mut r = search::Request::default();
    for p in &positions {
        enc.encode(p, r.add_position(enc.input_len()));
        for (i, _) in enc.legal_indices(p) {
            r.moves.push(i as u32);
        }
        r.end_position();
    }
    let (p, w) = ev.forward_raw(&r.inputs, r.len());
    ev.evaluate_request(&mut r).unwrap();
    assert_eq!(r.wdl.len(), positions.len());
    let pl = enc.policy_len();
    let mut worst = 0f32;
    for k in 0..r.len() {
        for (j, &m) in r.moves[r.range(k)].iter().enumerate() {
            let want = p[k * pl + m as usize];
            worst = worst.max((r.logits[r.range(k).start + j] - want).abs());
        }
        for c in 0..3 {
            worst = worst.max((r.wdl[k][c] - w[3 * k + c]).abs());
        }
    }
    assert!(worst < 1e-4, "folded inference differs by {worst}");
    assert!(r.moves.len() > r.len(), "positions have legal moves");
    // Several requests in one pass (an inference server's batch) get the same answers.
    let mut parts: Vec<search::Request> = [(0, 10), (10, 10), (10, 25), (25, 40)]
        .iter()
        .map(|&(a, b)| {
            let mut q = search::Request::default();
            for k in a..b {
                let il = enc.input_len();
                q.add_position(il)
                    .copy_from_slice(&r.inputs[k * il..(k + 1) * il]);
                q.moves.extend_from_slice(&r.moves[r.range(k)]);
                q.end_position();
            }
            q
        })
        .collect();
    ev.evaluate_batch(&mut parts).unwrap();
    let joined: Vec<f32> = parts.iter().flat_map(|q| q.logits.clone()).collect();
    let wdl: Vec<[f32; 3]> = parts.iter().flat_map(|q| q.wdl.clone()).collect();
    assert!(parts[1].is_empty() && parts[1].logits.is_empty());
    for (a, b) in joined.iter().zip(&r.logits) {
        assert!((a - b).abs() < 1e-4, "batched {a} vs single {b}");
    }
    assert_eq!(joined.len(), r.logits.len());
    assert_eq!(wdl.len(), r.wdl.len());
    // The whole-policy path agrees too.
    let whole = ev.evaluate(&r.inputs, r.len()).unwrap();
    let m = r.moves[r.range(3)][0] as usize;
    assert!((whole[3].policy_logits[m] - p[3 * pl + m]).abs() < 1e-4);
    // Half precision (here bf16 on the CPU) stays close: the CUDA formats use the same code.
    let half = ev.net.fold(tch::Kind::BFloat16);
    let x = tch::Tensor::from_slice(&r.inputs)
        .view([r.len() as i64, ev.shape().planes as i64, 5, 5])
        .to_kind(tch::Kind::BFloat16);
    let (hp, _) = tch::no_grad(|| half.forward(&x));
    let hp = Vec::<f32>::try_from(hp.to_kind(tch::Kind::Float).view([-1])).unwrap();
    let diff = hp
        .iter()
        .zip(&p)
        .map(|(a, b)| (a - b).abs())
        .fold(0f32, f32::max);
    let scale = p.iter().map(|v| v.abs()).fold(0f32, f32::max);
    assert!(
        diff < 0.05 * scale.max(1.0),
        "bf16 differs by {diff} (scale {scale})"
    );
    // Requests are checked before they reach the network.
    r.moves[0] = pl as u32;
    assert!(ev.evaluate_request(&mut r).is_err());
    let mut empty = search::Request::default();
    ev.evaluate_request(&mut empty).unwrap();
    assert!(empty.wdl.is_empty());
}
