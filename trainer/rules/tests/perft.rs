//! Perft counts from data files in `tests/data/*.perft` (published counts and counts from other
//! engines). Counts above `NODE_LIMIT` run only with `--ignored`.

use rules::{perft, Position, Variant};
use std::path::PathBuf;
use std::sync::Arc;

const NODE_LIMIT: u64 = 40_000_000;

struct Case {
    id: String,
    sfen: String,
    depth: u32,
    count: u64,
}

fn data_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/data")
}

fn load(file: &str) -> (String, Vec<Case>) {
    let path = data_dir().join(file);
    let text =
        std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut variant = None;
    let mut id = String::new();
    let mut sfen = String::new();
    let mut cases = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let (key, rest) = line.split_once(' ').unwrap_or((line, ""));
        match key {
            "variant" => variant = Some(rest.trim().to_string()),
            "id" => id = rest.trim().to_string(),
            "sfen" => sfen = rest.trim().to_string(),
            "perft" => {
                let mut it = rest.split_whitespace();
                let depth = it.next().and_then(|d| d.parse().ok());
                let count = it.next().and_then(|d| d.parse().ok());
                let (Some(depth), Some(count)) = (depth, count) else {
                    panic!("{file}:{}: bad perft line", n + 1);
                };
                cases.push(Case {
                    id: id.clone(),
                    sfen: sfen.clone(),
                    depth,
                    count,
                });
            }
            _ => panic!("{file}:{}: unknown key {key:?}", n + 1),
        }
    }
    (
        variant.unwrap_or_else(|| panic!("{file}: no `variant` line")),
        cases,
    )
}

fn board_side_hand(sfen: &str) -> Vec<String> {
    sfen.split_whitespace().take(3).map(str::to_string).collect()
}

fn run(file: &str, big: bool) {
    let (variant, cases) = load(file);
    let v = Arc::new(Variant::builtin(&variant).unwrap());
    let mut ran = 0;
    for c in cases {
        if (c.count > NODE_LIMIT) != big {
            continue;
        }
        let mut pos = Position::from_sfen(&v, &c.sfen)
            .unwrap_or_else(|e| panic!("{file} {}: {e}", c.id));
        let got = perft(&mut pos, c.depth);
        assert_eq!(
            got, c.count,
            "{file} {} depth {}: {}",
            c.id, c.depth, c.sfen
        );
        // Counting must leave the position as it was.
        assert_eq!(board_side_hand(&pos.to_sfen()), board_side_hand(&c.sfen));
        ran += 1;
    }
    assert!(big || ran > 0, "{file}: no case under the node limit");
}

#[test]
fn shogi_published() {
    run("shogi.perft", false);
}

#[test]
#[ignore = "547 M nodes; run with --ignored (about 10 s in release)"]
fn shogi_published_deep() {
    run("shogi.perft", true);
}

#[test]
fn minishogi_published() {
    run("minishogi.perft", false);
}
