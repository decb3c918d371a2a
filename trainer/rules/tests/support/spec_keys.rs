//! Every leaf key of the variant spec types, for the tests that must cover every key (the
//! Fairy-Stockfish export, the variants README); shared by the rules and CLI tests.

use std::collections::BTreeSet;

/// Every leaf key of the spec types, as `a.b` and `pieces[].c` (a spec with every optional
/// part present, serialized).
pub fn spec_keys() -> BTreeSet<String> {
    use rules::{CaptureSpec, DropSpec, EndSpec, LionSpec, PieceDropSpec, PieceSpec, PromotedSpec};
    use rules::{PromotionSpec, VariantSpec};
    use serde_json::Value;
    let piece = PieceSpec {
        lion: true,
        burn: true,
        sweep: true,
        contagious: true,
        leap_anywhere: true,
        promotes_to: Some("G".into()),
        promoted: Some(PromotedSpec {
            royal: true,
            lion: true,
            burn: true,
            sweep: true,
            leap_anywhere: true,
            ..Default::default()
        }),
        drop: Some(PieceDropSpec::default()),
        ..Default::default()
    };
    let spec = VariantSpec {
        pieces: Some(vec![piece]),
        promotion: Some(PromotionSpec::default()),
        drops: Some(DropSpec::default()),
        end: Some(EndSpec::default()),
        lions: Some(LionSpec::default()),
        capture: Some(CaptureSpec::default()),
        ..Default::default()
    };
    fn walk(prefix: &str, v: &Value, out: &mut BTreeSet<String>) {
        match v {
            Value::Object(map) => {
                for (k, v) in map {
                    let path = match prefix {
                        "" => k.clone(),
                        p => format!("{p}.{k}"),
                    };
                    walk(&path, v, out);
                }
            }
            Value::Array(items) if items.iter().any(Value::is_object) => {
                for item in items {
                    walk(&format!("{prefix}[]"), item, out);
                }
            }
            _ => {
                out.insert(prefix.to_string());
            }
        }
    }
    let mut out = BTreeSet::new();
    walk("", &serde_json::to_value(&spec).unwrap(), &mut out);
    out
}
