//! Perft counts from data files in `tests/data/*.perft` (published counts and counts from other
//! engines). Counts above `NODE_LIMIT` run in their own tests (so the test harness spreads them
//! over the cores). Each count's leaves per second are printed (`-- --nocapture`). Every perft
//! count that BENCHMARKS.md prints is one of these cases (`benchmark_counts_are_tested`).

use rules::{perft, Position, Variant};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

const NODE_LIMIT: u64 = 40_000_000;

struct Case {
    variant: String,
    id: String,
    sfen: String,
    depth: u32,
    count: u64,
}

fn data_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/data")
}

fn load(file: &str) -> Vec<Case> {
    let path = data_dir().join(file);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
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
                    variant: variant
                        .clone()
                        .unwrap_or_else(|| panic!("{file}: `perft` before any `variant` line")),
                    id: id.clone(),
                    sfen: sfen.clone(),
                    depth,
                    count,
                });
            }
            _ => panic!("{file}:{}: unknown key {key:?}", n + 1),
        }
    }
    cases
}

fn variant(name: &str) -> Arc<Variant> {
    // Test-only variants live in tests/data/variants; the rest are the built-in configs.
    let local = data_dir().join("variants").join(format!("{name}.toml"));
    Arc::new(if local.exists() {
        Variant::load(&local).unwrap()
    } else {
        Variant::builtin(name).unwrap()
    })
}

fn board_side_hand(sfen: &str) -> Vec<String> {
    sfen.split_whitespace()
        .take(3)
        .map(str::to_string)
        .collect()
}

fn run(file: &str, big: bool) {
    let mut ran = 0;
    for c in load(file) {
        if (c.count > NODE_LIMIT) != big {
            continue;
        }
        let v = variant(&c.variant);
        let mut pos = Position::from_sfen_composed(&v, &c.sfen)
            .unwrap_or_else(|e| panic!("{file} {}: {e}", c.id));
        let t = Instant::now();
        let got = perft(&mut pos, c.depth);
        let secs = t.elapsed().as_secs_f64();
        eprintln!(
            "{file} {} depth {}: {got} leaves in {secs:.3} s ({:.2} M leaves/s)",
            c.id,
            c.depth,
            got as f64 / secs.max(1e-9) / 1e6
        );
        assert_eq!(
            got, c.count,
            "{file} {} depth {}: {}",
            c.id, c.depth, c.sfen
        );
        // Counting must leave the position as it was.
        let fresh = Position::from_sfen_composed(&v, &c.sfen).unwrap();
        assert_eq!(
            board_side_hand(&pos.to_sfen()),
            board_side_hand(&fresh.to_sfen())
        );
        assert_eq!(pos.hash(), fresh.hash());
        ran += 1;
    }
    assert!(big || ran > 0, "{file}: no case under the node limit");
}

#[test]
fn shogi_published() {
    run("shogi.perft", false);
}

/// Depth 6 (547,581,517 leaves), the README's headline count: about 10 s in release.
#[test]
fn shogi_published_deep() {
    run("shogi.perft", true);
}

#[test]
fn minishogi_published() {
    run("minishogi.perft", false);
}

#[test]
fn cannon_shosu_reference() {
    run("cannon-shosu.perft", false);
}

#[test]
fn cannon_shosu_nopromo_cannons_reference() {
    run("cannon-shosu-nopromo-cannons.perft", false);
}

#[test]
fn hand_reference() {
    run("hand.perft", false);
}

#[test]
fn judkins_reference() {
    run("judkins.perft", false);
}

#[test]
fn yari_reference() {
    run("yari.perft", false);
}

#[test]
fn tori_reference() {
    run("tori.perft", false);
}

#[test]
fn start_positions_regression() {
    run("start-regression.perft", false);
}

/// Cannon shosu's deep reference counts: 0.3 to 0.6 G leaves each, about two minutes in all.
#[test]
fn cannon_shosu_reference_deep() {
    run("cannon-shosu.perft", true);
}

/// The same without promoting cannons (a test-only variant in tests/data/variants).
#[test]
fn cannon_shosu_nopromo_cannons_reference_deep() {
    run("cannon-shosu-nopromo-cannons.perft", true);
}

/// Hand shogi's deep reference counts: 0.04 to 1.3 G leaves each.
#[test]
fn hand_reference_deep() {
    run("hand.perft", true);
}

#[test]
fn kyoto_against_fairy_stockfish() {
    run("kyoto.perft", false);
}

#[test]
fn micro_against_fairy_stockfish() {
    run("micro.perft", false);
}

#[test]
fn sho_against_fairy_stockfish() {
    run("sho.perft", false);
}

#[test]
fn cannon_against_fairy_stockfish() {
    run("cannon.perft", false);
}

/// 47 to 64 M leaves each, about 1 s each in release.
#[test]
fn judkins_yari_tori_reference_deep() {
    for f in ["judkins.perft", "yari.perft", "tori.perft"] {
        run(f, true);
    }
}

#[test]
fn annan_regression() {
    run("annan.perft", false);
}

#[test]
fn unashogi_regression() {
    run("unashogi.perft", false);
}

/// Chu shogi: depths 1 and 2 are Lishogi's, deeper ones ours (see the file).
#[test]
fn chu_lishogi_and_regression() {
    run("chu.perft", false);
}

/// Whale shogi: depths 1 and 2 by hand, deeper ones ours (see the file).
#[test]
fn whale_regression() {
    run("whale.perft", false);
}

/// Heian dai shogi: depths 1 and 2 by hand, deeper ones ours (see the file).
#[test]
fn heian_dai_regression() {
    run("heian-dai.perft", false);
}

/// Dai shogi: depths 1 and 2 by hand, deeper ones ours (see the file).
#[test]
fn dai_regression() {
    run("dai.perft", false);
}

/// Wa shogi: depth 1 by hand, deeper ones ours (see the file).
#[test]
fn wa_regression() {
    run("wa.perft", false);
}

/// Heian shogi: depth 1 by hand, deeper ones ours (see the file).
#[test]
fn heian_regression() {
    run("heian.perft", false);
}

/// Hasami shogi: depths 1 and 2 by hand, deeper ones ours (see the file).
#[test]
fn hasami_regression() {
    run("hasami.perft", false);
}

/// Dai hasami shogi: depths 1 and 2 by hand, deeper ones ours (see the file).
#[test]
fn dai_hasami_regression() {
    run("dai-hasami.perft", false);
}

/// Tenjiku shogi: depth 1 by hand, deeper ones ours (see the file).
#[test]
fn tenjiku_regression() {
    run("tenjiku.perft", false);
}

/// Dai-dai shogi: depth 1 by hand, deeper ones ours (see the file).
#[test]
fn dai_dai_regression() {
    run("dai-dai.perft", false);
}

/// Maka dai-dai shogi: depth 1 by hand, deeper ones ours (see the file).
#[test]
fn maka_dai_dai_regression() {
    run("maka-dai-dai.perft", false);
}

/// Maka dai-dai shogi's counts above the limit.
#[test]
fn maka_dai_dai_big() {
    run("maka-dai-dai.perft", true);
}

/// Tai shogi: depth 1 by hand, deeper ones ours (see the file).
#[test]
fn tai_regression() {
    run("tai.perft", false);
}

/// Taikyoku shogi: depth 1 by hand, deeper ones ours (see the file).
#[test]
fn taikyoku_regression() {
    run("taikyoku.perft", false);
}

/// Ko shogi: depth 1 by hand, deeper ones ours (see the file).
#[test]
fn ko_regression() {
    run("ko.perft", false);
}

/// Every row of BENCHMARKS.md's perft table (variant, depth, nodes from the start position) and
/// its "Shogi perft 6" line is a case of a data file above, so no printed count goes untested.
#[test]
fn benchmark_counts_are_tested() {
    let path = data_dir().join("../../BENCHMARKS.md");
    let text = std::fs::read_to_string(&path).unwrap();
    let number = |s: &str| s.trim().replace(',', "").parse::<u64>().ok();
    let mut rows: Vec<(String, u32, u64)> = Vec::new();
    let mut in_table = false;
    for line in text.lines() {
        if line.starts_with("| variant | depth | nodes |") {
            in_table = true;
            continue;
        }
        if in_table && !line.starts_with('|') {
            in_table = false;
        }
        if !in_table || line.starts_with("|---") {
            continue;
        }
        let cells: Vec<&str> = line.split('|').map(str::trim).collect();
        let (Some(depth), Some(nodes)) = (cells[2].parse().ok(), number(cells[3])) else {
            panic!("BENCHMARKS.md: bad perft row {line:?}");
        };
        rows.push((cells[1].to_string(), depth, nodes));
    }
    if let Some(rest) = text.split("Shogi perft 6 (").nth(1) {
        let nodes = number(rest.split(" nodes").next().unwrap()).expect("shogi perft 6 count");
        rows.push(("shogi".into(), 6, nodes));
    }
    assert!(
        rows.len() >= 20,
        "BENCHMARKS.md perft table not found: {rows:?}"
    );
    let files: Vec<String> = std::fs::read_dir(data_dir())
        .unwrap()
        .filter_map(|e| {
            let name = e.unwrap().file_name().into_string().unwrap();
            name.ends_with(".perft").then_some(name)
        })
        .collect();
    let cases: Vec<Case> = files.iter().flat_map(|f| load(f)).collect();
    for (name, depth, nodes) in rows {
        let v = variant(&name);
        let start = board_side_hand(&Position::start(v.clone()).to_sfen());
        let found = cases.iter().any(|c| {
            c.variant == name
                && c.depth == depth
                && c.count == nodes
                && board_side_hand(&Position::from_sfen_composed(&v, &c.sfen).unwrap().to_sfen())
                    == start
        });
        assert!(found, "BENCHMARKS.md: {name} depth {depth} = {nodes} is in no tests/data/*.perft start-position case");
    }
}
