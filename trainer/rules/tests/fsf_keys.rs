//! Every config key is mapped to Fairy-Stockfish or refused by the export (`rules::fsf`).
//!
//! The list of keys comes from the spec types themselves (a spec with every optional part
//! present, serialized), so a key added to the spec fails here until it has an entry below. Each
//! entry changes its key in a variant that exports; the export must then refuse, or write a
//! different `variants.ini` (comments aside). Keys that are not rules of a game (names, the
//! arena's match rule, keys resolved when the file is read) must leave both the rules' perft and
//! the ini's keys unchanged.

use rules::fsf::to_fsf_ini;
use rules::{perft, Position, Variant, VariantSpec};
use serde_json::{json, Value};
use std::collections::BTreeSet;
use std::sync::Arc;

/// What changing a key must do to the export.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Expect {
    /// A rule: the export refuses, or its ini keys differ.
    Rule,
    /// Not a rule of one game: same perft, same ini keys.
    NotARule,
}
use Expect::*;

/// One key, the variant it is changed in, and the changes (JSON values at paths; `pieces[X]`
/// is the piece with letter X). The first change is the key itself; the others keep the
/// variant valid (a start position for a new board size).
struct Entry {
    key: &'static str,
    base: &'static str,
    changes: Vec<(&'static str, Value)>,
    expect: Expect,
}

fn e(key: &'static str, base: &'static str, value: Value, expect: Expect) -> Entry {
    Entry {
        key,
        base,
        changes: vec![(key, value)],
        expect,
    }
}

fn entries() -> Vec<Entry> {
    let shogi = "shogi";
    let mut v = vec![
        e("name", shogi, json!("shogi-renamed"), Rule),
        e("extends", shogi, json!("minishogi"), NotARule),
        e("description", shogi, json!("another description"), NotARule),
        e(
            "start",
            shogi,
            json!("lnsgkgsnl/1r5b1/ppppppppp/9/9/2P6/PP1PPPPPP/1B5R1/LNSGKGSNL b - 1"),
            Rule,
        ),
        e("remove_pieces", shogi, json!(["N"]), NotARule),
        e("match", shogi, json!("consecutive-wins:2"), NotARule),
        e("moves_from", shogi, json!("behind"), Rule),
        e("pieces[S].name", shogi, json!("ginsho"), NotARule),
        e("pieces[S].betza", shogi, json!("WfF"), Rule),
        e("pieces[S].promoted.name", shogi, json!("narigin"), NotARule),
        e("pieces[S].promoted.betza", shogi, json!("K"), Rule),
        e("pieces[S].promoted.royal", shogi, json!(true), Rule),
        e("pieces[N].promotion", shogi, json!("forced"), Rule),
        e("pieces[P].drop.allowed", shogi, json!(false), Rule),
        e("pieces[P].drop.nifu", shogi, json!(false), Rule),
        e("pieces[S].drop.max_per_file", shogi, json!(1), Rule),
        e("pieces[P].drop.no_mate", shogi, json!(false), Rule),
        e("pieces[S].drop.must_check", shogi, json!(true), Rule),
        e("pieces[S].drop.forbidden_ranks", shogi, json!([1]), Rule),
        e("pieces[S].drop.in_zone", shogi, json!(false), Rule),
        e("pieces[P].last_rank_betza", shogi, json!("bW"), Rule),
        e("pieces[P].move_max_per_file", shogi, json!(1), Rule),
        e("pieces[S].captured_as", shogi, json!("G"), Rule),
        e("pieces[S].contagious", shogi, json!(true), Rule),
        e("promotion.zone_depth", shogi, json!(2), Rule),
        e("promotion.forbid_immobile", shogi, json!(false), Rule),
        e("promotion.moves", shogi, json!("entering"), Rule),
        e("promotion.immobile_may_promote", shogi, json!(true), Rule),
        e("drops.enabled", shogi, json!(false), Rule),
        e("drops.forbid_immobile", shogi, json!(false), Rule),
        e("drops.promoted", shogi, json!(true), Rule),
        e("drops.royal", shogi, json!(true), Rule),
        e("drops.unarmed_until_royal", shogi, json!(true), Rule),
        e("end.stalemate", shogi, json!("draw"), Rule),
        e("end.repetition", shogi, json!(3), Rule),
        e("end.repetition_result", shogi, json!("loss"), Rule),
        e("end.perpetual_check", shogi, json!("draw"), Rule),
        e("end.max_plies", shogi, json!(300), Rule),
        e("end.bare_king", shogi, json!(true), Rule),
        e("end.bare_pieces", shogi, json!(1), Rule),
        e("end.connect", shogi, json!(5), Rule),
        e("capture.custodian", shogi, json!(true), Rule),
    ];
    // The line goal's details only act with a line goal; corner captures only with custodian
    // capture.
    for (key, value) in [
        ("end.connect_directions", json!("all")),
        ("end.connect_outside_ranks", json!(2)),
    ] {
        v.push(Entry {
            key,
            base: shogi,
            changes: vec![(key, value), ("end.connect", json!(5))],
            expect: Rule,
        });
    }
    v.push(Entry {
        key: "capture.custodian_corners",
        base: shogi,
        changes: vec![
            ("capture.custodian_corners", json!(true)),
            ("capture.custodian", json!(true)),
        ],
        expect: Rule,
    });
    v.push(Entry {
        key: "lions.protected",
        base: shogi,
        changes: vec![
            ("lions.protected", json!(true)),
            ("pieces[N].lion", json!(true)),
        ],
        expect: Rule,
    });
    v.push(Entry {
        key: "lions.bridge_exempt",
        base: shogi,
        changes: vec![
            ("lions.bridge_exempt", json!(["P"])),
            ("pieces[N].lion", json!(true)),
            ("lions.protected", json!(true)),
        ],
        expect: Rule,
    });
    v.push(Entry {
        key: "lions.counter_strike",
        base: shogi,
        changes: vec![
            ("lions.counter_strike", json!(true)),
            ("pieces[N].lion", json!(true)),
        ],
        expect: Rule,
    });
    // The large variants' powers, on the shogi rook and its promotion; a rank acts only with
    // a range capture, passive burning only with a burning piece.
    for side in ["pieces[R].", "pieces[R].promoted."] {
        let key = |k: &str| -> &'static str { Box::leak(format!("{side}{k}").into_boxed_str()) };
        v.push(Entry {
            key: key("range_capture"),
            base: shogi,
            changes: vec![(key("range_capture"), json!("R")), (key("rank"), json!(1))],
            expect: Rule,
        });
        v.push(Entry {
            key: key("sweep"),
            base: shogi,
            changes: vec![
                (key("range_capture"), json!("R")),
                (key("rank"), json!(1)),
                (key("sweep"), json!(true)),
                ("drops.enabled", json!(false)),
                ("end.royal_capture", json!(true)),
            ],
            expect: Rule,
        });
        v.push(e(key("skip_first"), shogi, json!("vR"), Rule));
        v.push(Entry {
            key: key("skip_over"),
            base: shogi,
            changes: vec![
                (key("skip_first"), json!("vR")),
                (key("skip_over"), json!([2])),
            ],
            expect: Rule,
        });
        v.push(e(key("area"), shogi, json!(2), Rule));
        v.push(e(key("hook"), shogi, json!("R"), Rule));
        v.push(e(key("burn"), shogi, json!(true), Rule));
        v.push(e(key("leap_anywhere"), shogi, json!(true), Rule));
        // A Lion line needs the jumps to its squares.
        let betza = if side.ends_with("promoted.") {
            "RFfD"
        } else {
            "RfD"
        };
        v.push(Entry {
            key: key("lion_line"),
            base: shogi,
            changes: vec![
                (key("lion_line"), json!("fR2")),
                (key("betza"), json!(betza)),
            ],
            expect: Rule,
        });
        for (name, value) in [
            ("shoot", json!({"betza": "mF", "range": 3})),
            ("repeat", json!({"betza": "K", "times": 2})),
            ("spares", json!(["P"])),
            ("displaces_only", json!(["P"])),
        ] {
            v.push(Entry {
                key: key(name),
                base: shogi,
                changes: vec![
                    (key(name), value),
                    ("drops.enabled", json!(false)),
                    ("end.royal_capture", json!(true)),
                ],
                expect: Rule,
            });
        }
        v.push(Entry {
            key: key("rank"),
            base: shogi,
            changes: vec![(key("rank"), json!(2)), (key("range_capture"), json!("R"))],
            expect: Rule,
        });
    }
    v.push(Entry {
        key: "capture.passive_burn",
        base: shogi,
        changes: vec![
            ("capture.passive_burn", json!(true)),
            ("pieces[R].burn", json!(true)),
        ],
        expect: Rule,
    });
    v.push(Entry {
        key: "end.repetition_result_for",
        base: shogi,
        changes: vec![
            ("end.repetition_result_for", json!("sente")),
            ("end.repetition_result", json!("loss")),
        ],
        expect: Rule,
    });
    v.push(e("end.royal_capture", shogi, json!(true), Rule));
    v.push(e("pieces[S].promotes_capturing", shogi, json!(["G"]), Rule));
    v.push(e("pieces[S].shot_from", shogi, json!(3), Rule));
    v.push(e("pieces[S].promoted.shot_from", shogi, json!(3), Rule));
    for (key, value) in [
        ("pieces[S].without", json!({"letter": "G", "loses": "fW"})),
        ("pieces[S].promotes_with", json!("G")),
        (
            "pieces[S].promotion_effects",
            json!({"promotes": ["P"], "kills": ["G"]}),
        ),
        (
            "pieces[S].promoted.reverts_near",
            json!({"letter": "G", "within": 2}),
        ),
    ] {
        v.push(Entry {
            key,
            base: shogi,
            changes: vec![
                (key, value),
                ("drops.enabled", json!(false)),
                ("end.royal_capture", json!(true)),
            ],
            expect: Rule,
        });
    }
    v.push(Entry {
        key: "end.royal_reserve",
        base: shogi,
        changes: vec![
            ("end.royal_reserve", json!(["G"])),
            ("end.royal_capture", json!(true)),
        ],
        expect: Rule,
    });
    // The royal piece: minishogi's gold instead of its king.
    v.push(Entry {
        key: "pieces[G].royal",
        base: "minishogi",
        changes: vec![
            ("pieces[G].royal", json!(true)),
            ("pieces[K].royal", json!(false)),
        ],
        expect: Rule,
    });
    // Keys that act only with another: a Lion and the exempt pieces only through the [lions]
    // rules (above), `flip_on` only for pieces that turn over (Kyoto's, which export).
    v.push(Entry {
        key: "pieces[N].lion",
        base: shogi,
        changes: vec![
            ("pieces[N].lion", json!(true)),
            ("lions.counter_strike", json!(true)),
        ],
        expect: Rule,
    });
    v.push(Entry {
        key: "pieces[S].promoted.lion",
        base: shogi,
        changes: vec![
            ("pieces[S].promoted.lion", json!(true)),
            ("lions.counter_strike", json!(true)),
        ],
        expect: Rule,
    });
    v.push(Entry {
        key: "promotion.flip_on",
        base: "kyoto",
        changes: vec![("promotion.flip_on", json!("capture"))],
        expect: Rule,
    });
    // Board size: minishogi on a narrower and a taller board.
    v.push(Entry {
        key: "files",
        base: "minishogi",
        changes: vec![
            ("files", json!(4)),
            ("start", json!("rbsk/3p/4/P3/KSBR b - 1")),
        ],
        expect: Rule,
    });
    v.push(Entry {
        key: "ranks",
        base: "minishogi",
        changes: vec![
            ("ranks", json!(6)),
            ("start", json!("rbsgk/4p/5/5/P4/KGSBR b - 1")),
        ],
        expect: Rule,
    });
    // A letter: the gold renamed, in the pieces and the start.
    v.push(Entry {
        key: "pieces[G].letter",
        base: "minishogi",
        changes: vec![
            ("pieces[G].letter", json!("Z")),
            ("start", json!("rbszk/4p/5/P4/KZSBR b - 1")),
        ],
        expect: Rule,
    });
    // Promotion into another piece: only by capture and without drops (both refused anyway).
    v.push(Entry {
        key: "pieces[S].promotes_to",
        base: shogi,
        changes: vec![
            ("pieces[S].promotes_to", json!("G")),
            ("pieces[S].promoted", Value::Null),
            ("promotion", json!({ "moves": "capture" })),
            ("drops", json!({ "enabled": false })),
        ],
        expect: Rule,
    });
    // Pieces the bare king ignores: meaningful with the bare-king rule only.
    v.push(Entry {
        key: "end.bare_king_ignores",
        base: shogi,
        changes: vec![
            ("end.bare_king_ignores", json!(["P"])),
            ("end.bare_king", json!(true)),
        ],
        expect: Rule,
    });
    v
}

#[path = "support/spec_keys.rs"]
mod spec_keys;
use spec_keys::spec_keys;

/// `pieces[X].a.b` -> `pieces[].a.b`.
fn generic(key: &str) -> String {
    match (key.find('['), key.find(']')) {
        (Some(a), Some(b)) => format!("{}[]{}", &key[..a], &key[b + 1..]),
        _ => key.to_string(),
    }
}

/// Sets `path` in a serialized spec, creating the objects on the way.
fn set(spec: &mut Value, path: &str, value: Value) {
    let mut node = spec;
    let parts: Vec<&str> = path.split('.').collect();
    for (i, part) in parts.iter().enumerate() {
        let (name, letter) = match part.split_once('[') {
            Some((n, l)) => (n, Some(l.trim_end_matches(']'))),
            None => (*part, None),
        };
        let last = i + 1 == parts.len();
        if node.is_null() {
            *node = json!({});
        }
        let obj = node.as_object_mut().unwrap();
        if last && letter.is_none() {
            obj.insert(name.to_string(), value);
            return;
        }
        let child = obj.entry(name.to_string()).or_insert(Value::Null);
        node = match letter {
            Some(l) => child
                .as_array_mut()
                .unwrap()
                .iter_mut()
                .find(|p| p["letter"] == l)
                .unwrap_or_else(|| panic!("{path}: no piece {l}")),
            None => child,
        };
    }
}

/// The ini's lines that are not comments.
fn keys_of(ini: &str) -> Vec<&str> {
    ini.lines().filter(|l| !l.starts_with('#')).collect()
}

fn start_perft(v: &Variant, depth: u32) -> u64 {
    perft(&mut Position::start(Arc::new(v.clone())), depth)
}

#[test]
fn every_config_key_is_mapped_or_refused() {
    let entries = entries();
    let listed: BTreeSet<String> = entries.iter().map(|e| generic(e.key)).collect();
    let keys = spec_keys();
    let missing: Vec<&String> = keys.difference(&listed).collect();
    let unknown: Vec<&String> = listed.difference(&keys).collect();
    assert!(
        missing.is_empty() && unknown.is_empty(),
        "keys without an entry: {missing:?}; entries of no key: {unknown:?}"
    );
    for entry in &entries {
        let base_spec = VariantSpec::builtin(entry.base).unwrap();
        let base = Variant::compile(base_spec.clone()).unwrap();
        let base_ini = to_fsf_ini(&base).expect("the base variant exports").ini;
        let mut spec = serde_json::to_value(&base_spec).unwrap();
        for (path, value) in &entry.changes {
            set(&mut spec, path, value.clone());
        }
        let spec: VariantSpec = serde_json::from_value(spec).unwrap();
        let changed = Variant::compile(spec)
            .unwrap_or_else(|e| panic!("{}: the changed variant does not compile: {e}", entry.key));
        let export = to_fsf_ini(&changed);
        match entry.expect {
            Rule => {
                if let Ok(out) = &export {
                    assert_ne!(
                        keys_of(&out.ini),
                        keys_of(&base_ini),
                        "{}: changed, but the export neither refuses nor differs",
                        entry.key
                    );
                }
            }
            NotARule => {
                let out = export.unwrap_or_else(|e| panic!("{}: refused: {e}", entry.key));
                assert_eq!(keys_of(&out.ini), keys_of(&base_ini), "{}", entry.key);
                assert_eq!(
                    start_perft(&changed, 3),
                    start_perft(&base, 3),
                    "{}: changes the rules",
                    entry.key
                );
            }
        }
    }
}
