//! `NetEvaluator` as a search `Evaluator`, and device parsing.

mod common;

use common::{encoded_positions, encoder, random_floats, tiny};
use model::{parse_device, shape_of, NetEvaluator, Network};
use search::Evaluator;
use tch::{nn::VarStore, Device};

fn evaluator(variant: &str) -> (NetEvaluator, selfplay::Encoder) {
    let enc = encoder(variant);
    let vs = VarStore::new(Device::Cpu);
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
        // Same as forward_raw.
        let (p, v) = ev.forward_raw(&x, n);
        assert_eq!(p.len(), n * enc.policy_len());
        assert_eq!(&p[..enc.policy_len()], &out[0].policy_logits[..]);
        assert_eq!(&v[3..6], &out[1].wdl[..]);
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
    assert_eq!(parse_device("cpu").unwrap(), Device::Cpu);
    assert!(parse_device("auto").is_ok());
    for bad in ["gpu", "cuda:x", "", "CPU"] {
        let e = parse_device(bad).unwrap_err();
        assert!(e.contains("cpu, cuda"), "{bad:?}: {e}");
    }
    let e = parse_device("cuda:999").unwrap_err();
    assert!(e.contains("cuda:999"), "{e}");
    if !tch::Cuda::is_available() {
        assert!(parse_device("cuda").is_err());
        assert_eq!(parse_device("auto").unwrap(), Device::Cpu);
    }
}
