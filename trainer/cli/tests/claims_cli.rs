//! What README.md and BENCHMARKS.md state about the commands, the config files and the tree,
//! checked against the binary and the files: the default run's settings, dlshogi's layout in
//! `check --explain`, `init` and `arena`, the benchmarks' output, the lists of configs, the USI
//! options, arena players and engine options, the ladders and their published ratings, hcpe
//! export of a run in our own layout, the documented variant keys, and which crate uses tch.

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn read(rel: &str) -> String {
    std::fs::read_to_string(root().join(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"))
}

/// A document with its line breaks turned into spaces (sentences wrap anywhere).
fn prose(rel: &str) -> String {
    read(rel).split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Runs `trainer ARGS` in `dir`.
fn trainer_in(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_trainer"))
        .args(args)
        .current_dir(dir)
        .env("OMP_WAIT_POLICY", "PASSIVE")
        .output()
        .expect("run trainer")
}

/// Stdout of a `trainer` that must succeed (panics with both streams otherwise).
fn ok(o: Output, what: &str) -> String {
    assert!(
        o.status.success(),
        "{what} failed\nstdout:\n{}\nstderr:\n{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8(o.stdout).unwrap()
}

fn trainer(args: &[&str]) -> String {
    ok(trainer_in(&root(), args), &format!("trainer {args:?}"))
}

/// A fresh directory for one test.
fn temp_dir(name: &str) -> PathBuf {
    let d = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("claims-cli-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

fn find_fairy_stockfish() -> Option<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .chain([PathBuf::from("/usr/games")])
        .map(|d| d.join("fairy-stockfish"))
        .find(|p| p.is_file())
}

/// The backticked names in the parentheses that follow `after` in `text`.
fn listed(text: &str, after: &str) -> BTreeSet<String> {
    let at = text
        .find(after)
        .unwrap_or_else(|| panic!("no {after:?} in the text"));
    let rest = &text[at + after.len()..];
    let open = rest.find('(').unwrap();
    let close = open + rest[open..].find(')').unwrap();
    rest[open + 1..close]
        .split('`')
        .skip(1)
        .step_by(2)
        .map(str::to_string)
        .collect()
}

/// The stems of `dir`'s `*.toml` files, without `*.calibration.toml`.
fn stems(rel: &str) -> BTreeSet<String> {
    std::fs::read_dir(root().join(rel))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| !n.ends_with(".calibration.toml"))
        .filter_map(|n| n.strip_suffix(".toml").map(str::to_string))
        .collect()
}

/// The table row (n, W, D, L) labelled `label` of a `trainer arena` summary.
fn row(out: &str, label: &str) -> (u64, u64, u64, u64) {
    let line = out
        .lines()
        .find(|l| l.split_whitespace().next() == Some(label))
        .unwrap_or_else(|| panic!("no {label} row in\n{out}"));
    let v: Vec<u64> = line
        .split_whitespace()
        .skip(1)
        .take(4)
        .map(|t| t.parse().unwrap())
        .collect();
    (v[0], v[1], v[2], v[3])
}

// ---------------------------------------------------------------------------------------------
// The default run (README, "Quick start").

#[test]
fn the_default_run_is_configured_as_the_readme_says() {
    use search::Algorithm;
    let readme = prose("README.md");
    // The figures it gives (the sentence around them may be reworded).
    for said in [
        "runs `trainer run --config configs/runs/default.toml`: minishogi with a small network (`b4c32`) and Gumbel search",
        "the first 8 plies of each game sampled from its improved policy",
        "leaves with a move that wins at once scored without the network, `search.mate_plies = 1`",
        "inputs that show what each side's pieces attack (`encoding = \"attacks\"`)",
        "each training sample mirrored half the time (`replay.mirror = true`)",
        "stopping by itself after 19 minutes (`max_minutes`)",
        "two self-play threads",
        "no faster than four draws per new sample (`sample_reuse`)",
        "publishing a network every 100 steps",
        "15% of the wall time",
        "plays the newest network against the previous one and places it on the minishogi ladder",
    ] {
        assert!(readme.contains(said), "README.md no longer says: {said}");
    }
    assert!(read("scripts/run.sh").contains("--config configs/runs/default.toml"));
    let file = "configs/runs/default.toml";
    let c = pipeline::RunConfig::from_toml(&read(file), file).unwrap();
    assert_eq!(c.name, "default");
    assert_eq!(
        (c.variant.as_str(), c.model.as_str()),
        ("minishogi", "b4c32")
    );
    assert_eq!(c.search.algorithm, Algorithm::Gumbel);
    assert_eq!(c.selfplay.gumbel_sample_plies, 8);
    assert_eq!(c.selfplay.gumbel_temperature, 1.0);
    assert_eq!(c.search.mate_plies, 1);
    assert_eq!(c.encoding, encoding::EncodingLayout::Attacks);
    assert!(c.replay.mirror);
    // It stops on its time budget: 19 minutes come long before its generations.
    assert_eq!(c.max_minutes, 19.0);
    assert_eq!(c.budget_seconds(), Some(19.0 * 60.0));
    assert!(c.generations >= 1000);
    assert_eq!(c.selfplay.threads, 2);
    assert_eq!(c.selfplay.eval_cache, 1 << 16);
    assert!(readme.contains("`eval_cache` (65,536 entries by default; 0: none)"));
    assert_eq!(c.sample_reuse, 4.0);
    assert_eq!(c.steps_per_generation, 100);
    assert_eq!(c.games_per_generation, 0, "self-play plays without pause");
    let e = &c.evaluation;
    assert!(e.vs_previous && !e.vs_first && e.games > 0);
    assert_eq!(e.ladder, "minishogi");
    assert_eq!(e.share, 0.15);
}

/// The two-hour run: the default run's config but for the keys the README names.
#[test]
fn the_two_hour_run_is_the_default_run_with_the_keys_the_readme_names() {
    let readme = prose("README.md");
    let said = "`scripts/run.sh --config configs/runs/two-hour.toml` trains the same methods and network for two hours (`max_minutes = 120`; `generations = 100000`, more than two cores make, so that the time ends the run) with self-play searches twice as large (`full_simulations = 64`, `fast_simulations = 16`), a replay window of up to 200,000 samples, a learning rate that decays over the budget (`schedule = \"budget\"`, cosine from 0.004 to 0.0002) and weight decay 0.01, in `runs/two-hour/`.";
    assert!(readme.contains(said), "README.md no longer says: {said}");
    let file = "configs/runs/two-hour.toml";
    let c = pipeline::RunConfig::from_toml(&read(file), file).unwrap();
    assert_eq!((c.name.as_str(), c.model.as_str()), ("two-hour", "b4c32"));
    assert_eq!(c.budget_seconds(), Some(120.0 * 60.0));
    assert_eq!(c.generations, 100_000);
    assert_eq!(c.replay.max_window, 200_000);
    assert_eq!(c.training.schedule, model::Schedule::Budget);
    assert_eq!((c.training.lr, c.training.min_lr), (0.004, 0.0002));
    assert_eq!(c.training.weight_decay, 0.01);
    let d = "configs/runs/default.toml";
    let d = pipeline::RunConfig::from_toml(&read(d), d).unwrap();
    assert_eq!(
        (c.selfplay.full_simulations, c.selfplay.fast_simulations),
        (
            2 * d.selfplay.full_simulations,
            2 * d.selfplay.fast_simulations
        )
    );
    assert_eq!(
        (c.selfplay.full_simulations, c.selfplay.fast_simulations),
        (64, 16)
    );
    // Everything else is the default run's.
    let strip = |rel: &str| {
        let mut t: toml::Table = toml::from_str(&read(rel)).unwrap();
        for key in ["name", "generations", "max_minutes"] {
            t.remove(key);
        }
        let keys: [(&str, &[&str]); 3] = [
            ("training", &["schedule", "min_lr", "lr", "weight_decay"]),
            ("selfplay", &["full_simulations", "fast_simulations"]),
            ("replay", &["max_window"]),
        ];
        for (table, keys) in keys {
            let sub = t.get_mut(table).and_then(|v| v.as_table_mut()).unwrap();
            for key in keys {
                sub.remove(*key);
            }
        }
        t
    };
    assert_eq!(
        strip("configs/runs/two-hour.toml"),
        strip("configs/runs/default.toml")
    );
}

// ---------------------------------------------------------------------------------------------
// dlshogi's layout (README, "For dlshogi and FukauraOu").

#[test]
fn dlshogi_layout_in_check_explain_init_eval_and_arena() {
    let readme = prose("README.md");
    assert!(readme.contains("`trainer check --explain V [--encoding generic\\|attacks\\|dlshogi]`"));
    assert!(readme.contains("(`trainer check --explain shogi --encoding dlshogi` lists it)"));
    assert!(readme.contains("(62 + 57 planes: pieces, attacks, attacker counts, hands, check) and its 2,187 policy labels (27 move labels x 81 destination squares"));

    let out = trainer(&["check", "--explain", "shogi", "--encoding", "dlshogi"]);
    assert!(out.starts_with("Encoding dlshogi of shogi"), "{out}");
    assert!(
        out.contains("Input: 119 planes x 9 x 9")
            && out.contains("input1 = planes 0-61")
            && out.contains("input2 = planes 62-118"),
        "{out}"
    );
    assert!(
        out.contains("Policy: 27 labels x 81 destination squares = 2187"),
        "{out}"
    );
    // One numbered line per plane, then one per move label.
    let numbered: Vec<usize> = out
        .lines()
        .filter_map(|l| l.split_whitespace().next()?.parse().ok())
        .collect();
    let want: Vec<usize> = (0..119).chain(0..27).collect();
    assert_eq!(numbered, want, "{out}");
    assert!(
        out.contains("118  in check") && out.contains("26  drop G"),
        "{out}"
    );
    // Our own layout is another encoding.
    let generic = trainer(&["check", "--explain", "shogi", "--encoding", "generic"]);
    assert!(
        !generic.contains("dlshogi") && !generic.contains("2187"),
        "{generic}"
    );
    // The attacks layout adds per kind attack planes and attacker counts after the generic ones.
    let attacks = trainer(&["check", "--explain", "minishogi", "--encoding", "attacks"]);
    assert!(
        attacks.starts_with("Encoding v1 (attacks) of minishogi")
            && attacks.contains("Input: 59 planes x 5 ranks x 5 files")
            && attacks.contains("33  own attacks of K")
            && attacks.contains("58  opp attackers >= 3"),
        "{attacks}"
    );

    let dir = temp_dir("dlshogi");
    let m = dir.join("dl.safetensors");
    let said = trainer(&[
        "init",
        "--variant",
        "shogi",
        "--model",
        "b2c16",
        "--encoding",
        "dlshogi",
        "--out",
        s(&m),
    ]);
    assert!(said.contains("b2c16 for shogi"), "{said}");
    let sidecar: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("dl.json")).unwrap()).unwrap();
    let enc = &sidecar["encoding"];
    assert_eq!(enc["layout"], "dlshogi", "{enc}");
    assert_eq!(sidecar["planes"], 119, "{sidecar}");
    assert_eq!(enc["planes"].as_array().map(Vec::len), Some(119));
    assert_eq!(enc["policy_len"], 2187, "{enc}");

    // `eval`: a distribution over the 30 legal moves of the start position.
    let out = trainer(&["eval", "--model", s(&m), "--json", "--top", "100"]);
    let v: serde_json::Value = serde_json::from_str(out.trim()).unwrap();
    let moves = v["moves"].as_array().unwrap();
    assert_eq!(moves.len(), 30, "{out}");
    let total: f64 = moves.iter().map(|m| m["prob"].as_f64().unwrap()).sum();
    assert!((total - 1.0).abs() < 1e-3, "{out}");

    // `arena`: the network plays our network-free search, every move refereed.
    let out = trainer(&[
        "arena",
        "--variant",
        "shogi",
        "--player",
        &format!("model:{}", s(&m)),
        "--player",
        "mcts",
        "--games",
        "2",
        "--nodes",
        "4",
        "--random-plies",
        "2",
        "--device",
        "cpu",
    ]);
    assert_eq!(row(&out, "games").0, 2, "{out}");
    assert_eq!(out.matches("A model:").count(), 2, "{out}");
    for bad in ["illegal", "error", "crash", "malformed"] {
        assert!(!out.contains(bad), "{out}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

// ---------------------------------------------------------------------------------------------
// Benchmarks (README, "Commands").

/// `trainer bench perft`: one row per built-in variant; with Fairy-Stockfish installed, its
/// count of the same perft right below ours and the speed ratio.
#[test]
fn bench_perft_compares_with_fairy_stockfish_in_the_same_run() {
    let readme = prose("README.md");
    assert!(readme.contains(
        "| `trainer bench perft` | perft speed, against Fairy-Stockfish in the same run |"
    ));
    let fsf = find_fairy_stockfish();
    let mut args = vec!["bench", "perft", "--repeat", "1"];
    let fsf_arg;
    match &fsf {
        Some(p) => {
            fsf_arg = p.display().to_string();
            args.extend(["--fsf", &fsf_arg]);
        }
        None => {
            common::skip("fairy-stockfish not installed: bench perft without it");
            args.push("--no-fsf");
        }
    }
    let out = trainer(&args);
    assert!(
        out.starts_with("perft, single thread, bulk counting, best of 1\n"),
        "{out}"
    );
    // (name, depth, nodes, leaves/s) of each row: ours, and Fairy-Stockfish's indented.
    let rows: Vec<(bool, String, u32, u64, f64)> = out
        .lines()
        .filter_map(|l| {
            let t: Vec<&str> = l.split_whitespace().collect();
            let (theirs, t) = match t.first() {
                Some(&"fsf") => (true, &t[1..]),
                _ => (false, &t[..]),
            };
            if t.len() != 5 {
                return None;
            }
            Some((
                theirs,
                t[0].to_string(),
                t[1].parse().ok()?,
                t[2].parse().ok()?,
                t[4].parse().ok()?,
            ))
        })
        .collect();
    let ours: BTreeSet<&str> = rows.iter().filter(|r| !r.0).map(|r| r.1.as_str()).collect();
    let builtin: BTreeSet<&str> = rules::VariantSpec::builtin_names().into_iter().collect();
    assert_eq!(ours, builtin, "{out}");
    // The published perft of shogi to depth 5.
    assert!(
        rows.iter()
            .any(|r| !r.0 && r.1 == "shogi" && r.2 == 5 && r.3 == 19_861_490),
        "{out}"
    );
    let mut compared = 0;
    for (i, r) in rows.iter().enumerate().filter(|(_, r)| r.0) {
        let mine = &rows[i - 1];
        assert!(!mine.0, "{out}");
        assert_eq!(
            (r.2, r.3),
            (mine.2, mine.3),
            "{} against {}\n{out}",
            r.1,
            mine.1
        );
        let line = format!("ratio {}: ours / Fairy-Stockfish leaves/s = ", mine.1);
        let ratio: f64 = out
            .lines()
            .find_map(|l| l.strip_prefix(&line))
            .unwrap_or_else(|| panic!("no {line:?} in\n{out}"))
            .parse()
            .unwrap();
        assert!((ratio - mine.4 / r.4).abs() < 0.01, "{out}");
        compared += 1;
    }
    if fsf.is_some() {
        // Debian's 11.1 plays shogi, minishogi, Judkins, Kyoto and Micro.
        assert!(compared >= 5, "{out}");
    } else {
        assert!(compared == 0 && !out.contains("ratio"), "{out}");
    }
}

#[test]
fn bench_store_reports_listing_and_ingest_per_1000_shards() {
    let readme = prose("README.md");
    assert!(readme.contains("| `trainer bench store [--shards N]` | listing and ingest cost of the shared run directory per 1,000 shards |"));
    let dir = temp_dir("bench-store");
    let store = dir.join("store");
    let out = trainer(&["bench", "store", "--shards", "50", "--dir", s(&store)]);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 4, "{out}");
    assert!(lines[0].starts_with("50 shards of minishogi ("), "{out}");
    for (line, what) in lines[1..].iter().zip(["write:", "list:", "ingest:"]) {
        let t: Vec<&str> = line.split_whitespace().collect();
        assert_eq!(t[0], what, "{out}");
        let secs: f64 = t[1].parse().unwrap();
        assert!(secs.is_finite() && secs >= 0.0, "{out}");
        assert!(line.contains(" s per 1,000 shards"), "{out}");
    }
    // The synthetic shards are removed afterwards.
    assert!(!store.exists());
    let _ = std::fs::remove_dir_all(&dir);
}

/// README, "Running on a GPU": the CPU forward's two backends, the switch between them, and
/// the environment variable that forces one.
#[test]
fn bench_nn_on_cpu_measures_both_backends() {
    let readme = prose("README.md");
    assert!(readme.contains(
        "(positions x squares x channels x libtorch's intra-op threads at most 65,536, or 262,144 where the direct convolutions below run)"
    ));
    assert_eq!(
        (model::NATIVE_WORK, model::NATIVE_WORK_DIRECT),
        (65_536, 262_144)
    );
    assert!(readme.contains("`TRAINER_CPU_BACKEND=native|libtorch` forces one"));
    assert!(readme.contains(
        "`trainer bench nn` names the kernel, and `TRAINER_CPU_KERNEL=gemm` forces the patches"
    ));
    let args = [
        "bench",
        "nn",
        "--device",
        "cpu",
        "--model",
        "b2c16",
        "--variants",
        "minishogi",
        "--batches",
        "1,8",
        "--seconds",
        "0.05",
        "--train-batch",
        "4",
    ];
    for (backend, kernel) in [
        ("", ""),
        ("auto", "auto"),
        ("native", "gemm"),
        ("native", ""),
        ("libtorch", ""),
    ] {
        let o = Command::new(env!("CARGO_BIN_EXE_trainer"))
            .args(args)
            .env("TRAINER_CPU_BACKEND", backend)
            .env("TRAINER_CPU_KERNEL", kernel)
            .env("OMP_WAIT_POLICY", "PASSIVE")
            .output()
            .unwrap();
        let out = ok(
            o,
            &format!("bench nn with TRAINER_CPU_BACKEND={backend} TRAINER_CPU_KERNEL={kernel}"),
        );
        // The kernel the native forward computes with: the reference when asked for.
        let named = out
            .lines()
            .find_map(|l| l.trim().strip_prefix("native forward: "))
            .unwrap_or_else(|| panic!("no kernel named: {out}"));
        let want: &[&str] = if kernel == "gemm" {
            &["gemm"]
        } else {
            &["gemm", "avx2", "avx512"]
        };
        assert!(
            want.iter()
                .any(|k| named.starts_with(&format!("{k} kernel"))),
            "{named}"
        );
        let lines: Vec<&str> = out
            .lines()
            .filter(|l| l.contains("forward batch"))
            .collect();
        assert_eq!(lines.len(), 2, "{out}");
        for l in lines {
            // "forward batch 8: 1234 evals/s; native 1300, libtorch 900 (x1.44) (...)"
            let t: Vec<&str> = l.split_whitespace().collect();
            assert_eq!(
                (t[0], t[4], t[5], t[7]),
                ("forward", "evals/s;", "native", "libtorch"),
                "{l}"
            );
            let rate = |x: &str| x.trim_end_matches(',').parse::<f64>().unwrap();
            let (r, native, torch) = (rate(t[3]), rate(t[6]), rate(t[8]));
            assert!(r > 0.0 && native > 0.0 && torch > 0.0, "{l}");
            let ratio: f64 = t[9]
                .trim_start_matches("(x")
                .trim_end_matches(')')
                .parse()
                .unwrap();
            assert!((ratio - native / torch).abs() < 0.01 + 0.01 * ratio, "{l}");
        }
    }
    // A value that names no backend, or no kernel, is refused before anything runs, naming
    // the variable and what it accepts.
    for (var, value, accepted) in [
        ("TRAINER_CPU_BACKEND", "cuda", "native"),
        ("TRAINER_CPU_KERNEL", "sse", "gemm"),
    ] {
        let o = Command::new(env!("CARGO_BIN_EXE_trainer"))
            .args(["perft", "--variant", "minishogi", "--depth", "1"])
            .env(var, value)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(!o.status.success() && o.stdout.is_empty(), "{err}");
        assert!(
            err.contains(var) && err.contains(&format!("{value:?}")) && err.contains(accepted),
            "{err}"
        );
    }
}

// ---------------------------------------------------------------------------------------------
// The config files (README, after "Commands").

#[test]
fn variant_names_are_the_files_and_the_built_ins() {
    let readme = prose("README.md");
    let said = listed(
        &readme,
        "`--variant` takes a file stem of `configs/variants/`",
    );
    let files = stems("configs/variants");
    assert_eq!(said, files, "README.md against configs/variants/");
    assert!(readme.contains(") or a path; these are also built into the binary."));
    let built_in: BTreeSet<String> = rules::VariantSpec::builtin_names()
        .into_iter()
        .map(str::to_string)
        .collect();
    assert_eq!(
        built_in, files,
        "the built-in variants against configs/variants/"
    );
    let doc = prose("configs/variants/README.md");
    assert_eq!(
        listed(&doc, "takes the file stem"),
        files,
        "configs/variants/README.md"
    );

    // Built in: every name resolves where there is no configs/ (the tests run in trainer/cli),
    // to the same variant as its file; the binary does the same from an empty directory.
    assert!(!Path::new("configs/variants").exists());
    for name in &files {
        let built_in = arena::load_variant(name).unwrap();
        let file = root().join(format!("configs/variants/{name}.toml"));
        let from_file = rules::Variant::load(&file).unwrap();
        assert_eq!(built_in.name, from_file.name, "{name}");
        let start = |v: std::sync::Arc<rules::Variant>| rules::Position::start(v).to_sfen();
        assert_eq!(
            start(built_in),
            start(std::sync::Arc::new(from_file)),
            "{name}"
        );
    }
    let away = temp_dir("variants");
    // A path: a file of our own, read from there (minishogi with a pawn in sente's hand).
    let file = away.join("pawn-in-hand.toml");
    std::fs::write(
        &file,
        "extends = \"minishogi\"\nstart = \"rbsgk/4p/5/P4/KGSBR b P 1\"\n",
    )
    .unwrap();
    let nodes = |v: &str| {
        let out = ok(
            trainer_in(&away, &["perft", "--variant", v, "--depth", "1"]),
            "perft",
        );
        out.lines().last().unwrap().to_string()
    };
    assert_eq!(nodes("minishogi"), "nodes 14");
    let dai = arena::load_variant("dai").unwrap();
    let dai_moves = rules::perft(&mut rules::Position::start(dai), 1);
    assert_eq!(nodes("dai"), format!("nodes {dai_moves}"));
    let custom = nodes(s(&file));
    assert!(
        custom != "nodes 14" && custom.starts_with("nodes "),
        "{custom}"
    );
    let _ = std::fs::remove_dir_all(&away);
}

#[test]
fn model_run_and_ladder_lists_are_the_files() {
    let readme = prose("README.md");
    for (after, dir) in [
        ("Network shapes are in `configs/models/`", "configs/models"),
        ("run configs in `configs/runs/`", "configs/runs"),
        ("ladders in `configs/ladders/`", "configs/ladders"),
    ] {
        assert_eq!(
            listed(&readme, after),
            stems(dir),
            "README.md against {dir}/"
        );
    }
    // The ladders named are built in as well (loaded here from a directory without them).
    for name in stems("configs/ladders") {
        let l = pipeline::ladder::Ladder::load(&name).unwrap();
        assert_eq!(l.name, name);
    }
}

// ---------------------------------------------------------------------------------------------
// USI options (README, "In a shogi GUI").

#[test]
fn usi_hash_ponder_and_minibatch_defaults() {
    let readme = prose("README.md");
    assert!(readme.contains("`USI_Hash` (MiB, default 1024)"));
    assert!(readme.contains("`USI_Ponder` (default off)"));
    assert!(readme.contains("`MinibatchSize` (default 16)"));
    assert!(readme.contains("`ReuseTree` (default off)"));
    assert!(readme.contains("`MatePlies` (default 1)"));
    assert!(readme.contains("`NNCacheSize` (default 65536)"));
    let mut child = Command::new(env!("CARGO_BIN_EXE_trainer"))
        .args(["usi", "--variant", "minishogi"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    use std::io::Write;
    child
        .stdin
        .take()
        .unwrap()
        .write_all(b"usi\nquit\n")
        .unwrap();
    let out = ok(child.wait_with_output().unwrap(), "trainer usi");
    let option = |name: &str| {
        out.lines()
            .find(|l| l.starts_with(&format!("option name {name} type ")))
            .unwrap_or_else(|| panic!("no option {name} in\n{out}"))
            .to_string()
    };
    assert!(
        option("USI_Hash").starts_with("option name USI_Hash type spin default 1024 min 1 max "),
        "{out}"
    );
    assert_eq!(
        option("USI_Ponder"),
        "option name USI_Ponder type check default false"
    );
    assert_eq!(
        option("MinibatchSize"),
        "option name MinibatchSize type spin default 16 min 1 max 1024"
    );
    assert_eq!(
        option("ReuseTree"),
        "option name ReuseTree type check default false"
    );
    assert_eq!(
        option("MatePlies"),
        "option name MatePlies type spin default 1 min 0 max 7"
    );
    assert_eq!(
        option("NNCacheSize"),
        "option name NNCacheSize type spin default 65536 min 0 max 16777216"
    );
}

// ---------------------------------------------------------------------------------------------
// Arena players (README, "Matches").

#[test]
fn arena_plays_a_model_against_our_search() {
    let dir = temp_dir("arena-model");
    let m = common::init_model(&dir);
    let out = trainer(&[
        "arena",
        "--variant",
        "minishogi",
        "--player",
        &format!("model:{}", s(&m)),
        "--player",
        "mcts",
        "--games",
        "2",
        "--nodes",
        "4",
        "--device",
        "cpu",
    ]);
    assert_eq!(row(&out, "games").0, 2, "{out}");
    assert!(out.contains("(sente) vs B mcts (gote)"), "{out}");
    assert!(out.contains("B mcts (sente) vs A model:"), "{out}");
    for bad in ["illegal", "error", "crash", "malformed"] {
        assert!(!out.contains(bad), "{out}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// `--protocol-a/-b` and `--option-a/-b` reach the engines: a USI engine and a UCI engine that
/// log every line they are sent (and play an illegal move).
#[test]
fn arena_engine_protocols_and_options() {
    let readme = prose("README.md");
    assert!(readme.contains("A player is `model:PATH`, `mcts` (our search without a network) or `engine:CMD` with `--protocol-a/-b usi|uci` and `--option-a/-b NAME=VALUE`."));
    let dir = temp_dir("arena-options");
    let (log_a, log_b) = (dir.join("a.log"), dir.join("b.log"));
    let engine = |log: &Path, hello: &str, ok: &str, mv: &str| {
        format!(
            "engine:while read l; do echo \"$l\" >> {}; case \"$l\" in {hello}) echo 'id name logger'; \
             echo {ok};; isready) echo readyok;; go*) echo 'bestmove {mv}';; quit) exit 0;; esac; done",
            log.display()
        )
    };
    let out = trainer(&[
        "arena",
        "--variant",
        "minishogi",
        "--player",
        &engine(&log_a, "usi", "usiok", "9a9b"),
        "--player",
        &engine(&log_b, "uci", "uciok", "a1a1"),
        "--protocol-b",
        "uci",
        "--option-a",
        "Depth=3",
        "--option-a",
        "Style=quiet",
        "--option-b",
        "Threads=1",
        "--games",
        "2",
    ]);
    assert_eq!(row(&out, "games").0, 2, "{out}");
    let a = std::fs::read_to_string(&log_a).unwrap();
    let b = std::fs::read_to_string(&log_b).unwrap();
    assert_eq!(a.lines().next(), Some("usi"), "{a}");
    assert_eq!(b.lines().next(), Some("uci"), "{b}");
    for (log, want) in [
        (&a, "setoption name Depth value 3"),
        (&a, "setoption name Style value quiet"),
        (&a, "usinewgame"),
        (&b, "setoption name Threads value 1"),
        (&b, "ucinewgame"),
    ] {
        assert!(log.lines().any(|l| l == want), "{want:?} not sent:\n{log}");
    }
    assert!(
        a.contains("position sfen ") && !a.contains("position fen "),
        "{a}"
    );
    assert!(
        b.contains("position fen ") && !b.contains("setoption name Depth"),
        "{b}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

// ---------------------------------------------------------------------------------------------
// The ladders (README, "The ladder"; BENCHMARKS.md, the calibrations).

fn ladder(name: &str) -> pipeline::ladder::Ladder {
    pipeline::ladder::Ladder::load_path(&root().join(format!("configs/ladders/{name}.toml")))
        .unwrap()
}

#[test]
fn the_ladders_have_the_rungs_the_readme_lists() {
    let readme = prose("README.md");
    assert!(readme.contains("`configs/ladders/minishogi.toml` has our network-free search (`mcts400`), Fairy-Stockfish at `Skill Level` 0, 5 and 10 and at full strength with 10,000 nodes a move, and full strength at 30,000 and 100,000 nodes."));
    assert!(readme.contains("`configs/ladders/judkins.toml` is the same ladder for Judkins shogi (`configs/runs/judkins.toml`, 30 minutes), `configs/ladders/kyoto.toml` for Kyoto shogi (`configs/runs/kyoto.toml`, 20 minutes)."));
    let mini = ladder("minishogi");
    assert_eq!(mini.spec.variant, "minishogi");
    let rungs: Vec<(&str, &str, Option<&str>, u32)> = mini
        .spec
        .rungs
        .iter()
        .map(|r| {
            let fsf = r.player.ends_with("fairy-stockfish") && r.protocol == "uci";
            assert!(fsf || r.player == "mcts", "{r:?}");
            (
                r.name.as_str(),
                if fsf { "fsf" } else { "mcts" },
                r.options.get("Skill Level").map(String::as_str),
                r.nodes,
            )
        })
        .collect();
    assert_eq!(
        rungs,
        [
            ("mcts400", "mcts", None, 400),
            ("fsf-skill0", "fsf", Some("0"), 10_000),
            ("fsf-skill5", "fsf", Some("5"), 10_000),
            ("fsf-skill10", "fsf", Some("10"), 10_000),
            // Skill Level 20 is Fairy-Stockfish's full strength.
            ("fsf-full-10k", "fsf", Some("20"), 10_000),
            ("fsf-full-30k", "fsf", Some("20"), 30_000),
            ("fsf-full-100k", "fsf", Some("20"), 100_000),
        ]
    );
    assert!(
        mini.spec.rungs.iter().all(|r| r.movetime == 0),
        "node budgets, not time"
    );

    let judkins = ladder("judkins");
    assert_eq!(judkins.spec.variant, "judkins");
    assert_eq!(judkins.spec.rungs, mini.spec.rungs);
    assert_eq!(
        (
            &judkins.spec.zero,
            judkins.spec.opening_plies,
            judkins.spec.max_plies
        ),
        (
            &mini.spec.zero,
            mini.spec.opening_plies,
            mini.spec.max_plies
        )
    );
    for (name, minutes) in [("judkins", 30.0), ("kyoto", 20.0)] {
        let file = format!("configs/runs/{name}.toml");
        let run = pipeline::RunConfig::from_toml(&read(&file), &file).unwrap();
        assert_eq!(run.variant, name);
        assert_eq!(run.max_minutes, minutes);
        assert_eq!(run.evaluation.ladder, name);
        // BENCHMARKS.md ("Kyoto and Judkins shogi"): the attack planes and mirrored samples
        // are in both configs.
        assert_eq!(run.encoding, encoding::EncodingLayout::Attacks, "{file}");
        assert!(run.replay.mirror, "{file}");
        let lad = ladder(name);
        assert_eq!(lad.spec.variant, name);
        assert_eq!(lad.spec.rungs, mini.spec.rungs);
    }
}

/// A rung's short name in BENCHMARKS.md's prose: `fsf-full-10k` -> `full10k`.
fn short(rung: &str) -> String {
    rung.trim_start_matches("fsf-").replace('-', "")
}

/// (a, b) -> (W, D, L) from a list like `mcts400-skill0 0-0-60, skill0-skill5 12-0-48, ...`.
fn pairings_in(text: &str) -> BTreeMap<(String, String), (u64, u64, u64)> {
    let mut out = BTreeMap::new();
    let t: Vec<&str> = text.split_whitespace().collect();
    for w in t.windows(2) {
        let score: Vec<u64> = w[1]
            .trim_end_matches([',', '.'])
            .split('-')
            .filter_map(|x| x.parse().ok())
            .collect();
        let pair: Vec<&str> = w[0].split('-').collect();
        if score.len() == 3 && pair.len() == 2 && pair[0].parse::<u64>().is_err() {
            out.insert(
                (pair[0].to_string(), pair[1].to_string()),
                (score[0], score[1], score[2]),
            );
        }
    }
    out
}

fn pairings_of(l: &pipeline::ladder::Ladder) -> BTreeMap<(String, String), (u64, u64, u64)> {
    l.calibration
        .pairings
        .iter()
        .map(|p| ((short(&p.a), short(&p.b)), (p.wins, p.draws, p.losses)))
        .collect()
}

/// An Elo as BENCHMARKS.md prints it: rounded, with a sign unless 0.
fn elo(x: f64) -> String {
    match x.round() as i64 {
        0 => "0".into(),
        n => format!("{n:+}"),
    }
}

#[test]
fn benchmarks_ladder_ratings_are_the_calibrations() {
    let bench = read("BENCHMARKS.md");
    let mini = ladder("minishogi");
    let at = bench.find("## Learning: the minishogi ladder").unwrap();
    let section = &bench[at..];
    let end = section.find("\n## ").map_or(section.len(), |e| e + 1);
    let section = &section[..end];
    // The table: rung, player, Elo, interval, games.
    let mut seen = BTreeSet::new();
    for line in section.lines().filter(|l| l.starts_with("| `")) {
        let cells: Vec<&str> = line.split('|').map(str::trim).collect();
        let name = cells[1].trim_matches('`');
        let r = &mini.calibration.ratings[name];
        assert_eq!(cells[3], elo(r.elo), "{line}");
        let interval = if name == mini.spec.zero {
            "(zero)".to_string()
        } else {
            format!("[{}, {}]", elo(r.low), elo(r.high))
        };
        assert_eq!(cells[4], interval, "{line}");
        assert_eq!(cells[5], r.games.to_string(), "{line}");
        seen.insert(name.to_string());
    }
    let rungs: BTreeSet<String> = mini.spec.rungs.iter().map(|r| r.name.clone()).collect();
    assert_eq!(seen, rungs, "every rung has a row");
    let text = section.split_whitespace().collect::<Vec<_>>().join(" ");
    let from = text.find("The pairings (first rung's W-D-L):").unwrap();
    let to = from + text[from..].find(". ").unwrap();
    assert_eq!(pairings_in(&text[from..to]), pairings_of(&mini));

    // The Judkins and Kyoto ladders, in prose: `mcts400 -559 [-873, -357], skill0 0, ...`.
    let text = bench.split_whitespace().collect::<Vec<_>>().join(" ");
    ladder_in_prose(
        &text,
        "judkins",
        "**The Judkins ladder**",
        "**The Kyoto ladder**",
    );
    ladder_in_prose(
        &text,
        "kyoto",
        "**The Kyoto ladder**",
        "## Learning: paired ablations",
    );
}

/// The ratings and pairings of ladder `name` as BENCHMARKS.md (`text`, one line) gives them in
/// prose between `from_marker` and `to_marker`.
fn ladder_in_prose(text: &str, name: &str, from_marker: &str, to_marker: &str) {
    let lad = ladder(name);
    let from = text.find(from_marker).unwrap();
    let text = &text[from..text[from..].find(to_marker).unwrap() + from];
    let (ratings, pairings) = text.split_once("Pairings:").unwrap();
    let ratings = &ratings[ratings.find("mcts400 ").unwrap()..];
    let names: BTreeMap<String, &str> = lad
        .spec
        .rungs
        .iter()
        .map(|r| (short(&r.name), r.name.as_str()))
        .collect();
    let tokens: Vec<&str> = ratings
        .split_whitespace()
        .map(|t| t.trim_end_matches([',', '.']))
        .collect();
    let mut seen = BTreeSet::new();
    let mut i = 0;
    while i < tokens.len() {
        let rung = names[&short(tokens[i])];
        let r = &lad.calibration.ratings[rung];
        assert_eq!(tokens[i + 1], elo(r.elo), "{name}: {rung} in {ratings}");
        i += 2;
        if let Some(low) = tokens.get(i).and_then(|t| t.strip_prefix('[')) {
            let high = tokens[i + 1].trim_end_matches(']');
            assert_eq!(
                (low, high),
                (elo(r.low).as_str(), elo(r.high).as_str()),
                "{name}: {rung}"
            );
            i += 2;
        } else {
            assert_eq!(rung, lad.spec.zero, "only the zero rung has no interval");
        }
        seen.insert(rung.to_string());
    }
    let rungs: BTreeSet<String> = lad.spec.rungs.iter().map(|r| r.name.clone()).collect();
    assert_eq!(seen, rungs, "every {name} rung is rated in BENCHMARKS.md");
    assert_eq!(pairings_in(pairings), pairings_of(&lad), "{name}");
}

// ---------------------------------------------------------------------------------------------
// hcpe from a run in our own layout (README, "For dlshogi and FukauraOu").

const GENERIC_SHOGI_RUN: &str = r#"
name = "generic"
variant = "shogi"
model = "b2c16"
seed = 3
device = "cpu"
generations = 1
games_per_generation = 2
steps_per_generation = 2
min_samples = 20

[selfplay]
threads = 1
parallel_games = 2
full_simulations = 4
fast_simulations = 2
full_probability = 0.5
max_plies = 60

[training]
batch_size = 16

[replay]
min_window = 100
max_window = 1000

[evaluation]
games = 0
simulations = 2
vs_previous = false
vs_first = false
"#;

#[test]
fn hcpe_exports_a_standard_shogi_run_in_our_own_layout() {
    let readme = prose("README.md");
    assert!(readme
        .contains("Any standard shogi run exports (the layout of its networks does not matter)"));
    let dir = temp_dir("hcpe-generic");
    let config = dir.join("generic.toml");
    std::fs::write(&config, GENERIC_SHOGI_RUN).unwrap();
    trainer(&["run", "--config", s(&config), "--runs-dir", s(&dir)]);
    let run = dir.join("generic");
    let opened = pipeline::Run::resume(&run).unwrap();
    assert_eq!(opened.cfg.encoding, encoding::EncodingLayout::default());
    let out = dir.join("generic.hcpe");
    let said = trainer(&[
        "export-data",
        "--run",
        s(&run),
        "--format",
        "hcpe",
        "--out",
        s(&out),
    ]);
    assert!(said.starts_with("wrote "), "{said}");
    // The positions with a full search, their most visited moves and the results.
    let mut want = Vec::new();
    for shard in pipeline::store::list(&run).unwrap() {
        let (header, games) = selfplay::read_shard(&shard.path(&run)).unwrap();
        assert_eq!(header.policy_len, opened.encoder.policy_len());
        assert_ne!(header.policy_len, 2187, "a run in our own layout");
        for g in games {
            let result = match g.result {
                rules::GameResult::Draw => 0,
                rules::GameResult::SenteWins => 1,
                rules::GameResult::GoteWins => 2,
            };
            for t in selfplay::hcpe::target_positions(&g, &opened.encoder).unwrap() {
                let sfen = t.position.to_sfen();
                let fields: Vec<&str> = sfen.split(' ').take(3).collect();
                want.push((fields.join(" "), t.position.move_to_usi(t.best), result));
            }
        }
    }
    assert!(want.len() > 10, "{}", want.len());
    assert_eq!(
        std::fs::metadata(&out).unwrap().len(),
        38 * want.len() as u64
    );
    assert!(
        said.contains(&format!("wrote {} positions", want.len())),
        "{said}"
    );

    // Read back by dlshogi's own reader when the test venv has it.
    let py = root().join(".local/venv/bin/python");
    let has = Command::new(&py)
        .args(["-c", "import cshogi"])
        .output()
        .is_ok_and(|o| o.status.success());
    if !has {
        common::skip("no cshogi in .local/venv (scripts/setup-torch.sh installs it)");
        return;
    }
    let o = Command::new(py)
        .arg(root().join("trainer/cli/tests/python/hcpe_read.py"))
        .arg(&out)
        .output()
        .unwrap();
    let text = ok(o, "hcpe_read.py");
    let shogi = std::sync::Arc::new(rules::Variant::builtin("shogi").unwrap());
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), want.len());
    for (line, (sfen, best, result)) in lines.iter().zip(&want) {
        let f: Vec<&str> = line.split('\t').collect();
        let theirs = rules::Position::from_sfen_composed(&shogi, f[0])
            .unwrap()
            .to_sfen();
        let theirs: Vec<&str> = theirs.split(' ').take(3).collect();
        assert_eq!(&theirs.join(" "), sfen, "{line}");
        assert_eq!(f[1], best, "{line}");
        assert_eq!(f[3].parse::<i32>().unwrap(), *result, "{line}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

// ---------------------------------------------------------------------------------------------
// The variant keys (README, "Variants": `configs/variants/README.md` documents every key).

#[path = "../../rules/tests/support/spec_keys.rs"]
mod spec_keys;
use spec_keys::spec_keys;

/// The keys documented by the two key tables of configs/variants/README.md.
fn documented_keys() -> BTreeSet<String> {
    let doc = read("configs/variants/README.md");
    let pieces_at = doc.find("Each `[[pieces]]` entry:").unwrap();
    let mut out = BTreeSet::new();
    for (i, line) in doc.lines().enumerate() {
        if !line.starts_with("| `") {
            continue;
        }
        let offset: usize = doc.lines().take(i).map(|l| l.len() + 1).sum();
        let in_pieces = offset > pieces_at;
        let cells: Vec<&str> = line.split('|').map(str::trim).collect();
        let names: Vec<&str> = cells[1].split('`').skip(1).step_by(2).collect();
        for name in names {
            let key = match name.strip_prefix('[').and_then(|n| n.split_once("] ")) {
                Some((table, key)) => format!("{table}.{key}"),
                None => name.to_string(),
            };
            if !in_pieces {
                out.insert(key);
                continue;
            }
            if key == "promoted" {
                // `{ name, betza, royal }`: the keys of the promoted form.
                let inner = cells[2].trim_matches(|c| c == '`' || c == '{' || c == '}');
                for k in inner.split(',') {
                    out.insert(format!("pieces[].promoted.{}", k.trim()));
                }
                continue;
            }
            if cells[4].contains("also a key of `promoted`") {
                out.insert(format!("pieces[].promoted.{key}"));
            }
            out.insert(format!("pieces[].{key}"));
        }
    }
    out
}

#[test]
fn the_variants_readme_documents_every_key() {
    let readme = prose("README.md");
    assert!(readme.contains("`configs/variants/README.md` documents every key."));
    let keys = spec_keys();
    assert!(keys.len() > 40, "{keys:?}");
    let documented = documented_keys();
    let missing: Vec<&String> = keys.difference(&documented).collect();
    assert!(
        missing.is_empty(),
        "keys not in configs/variants/README.md: {missing:?}"
    );
    let stale: Vec<&String> = documented.difference(&keys).collect();
    assert!(
        stale.is_empty(),
        "documented keys the spec does not have: {stale:?}"
    );
}

// ---------------------------------------------------------------------------------------------
// The layout (README, "Layout": `model` is the only crate that uses libtorch directly).

#[test]
fn only_the_model_crate_depends_on_tch() {
    let readme = prose("README.md");
    assert!(readme.contains(
        "| `model/` | crate `model`: the only crate that uses libtorch (`tch`) directly:"
    ));
    // The members' manifests: no other crate names tch in any dependency table (normal,
    // dev, build, per target).
    let workspace: toml::Value = toml::from_str(&read("Cargo.toml")).unwrap();
    let members: Vec<String> = workspace["workspace"]["members"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m.as_str().unwrap().to_string())
        .collect();
    fn dep_tables(v: &toml::Value, out: &mut Vec<toml::value::Table>) {
        let Some(t) = v.as_table() else { return };
        for (k, v) in t {
            if k.ends_with("dependencies") {
                out.push(v.as_table().unwrap().clone());
            } else if k == "target" {
                for spec in v.as_table().unwrap().values() {
                    dep_tables(spec, out);
                }
            }
        }
    }
    let mut with_tch = BTreeSet::new();
    for m in &members {
        let manifest: toml::Value = toml::from_str(&read(&format!("{m}/Cargo.toml"))).unwrap();
        let mut tables = Vec::new();
        dep_tables(&manifest, &mut tables);
        let names_tch = tables.iter().any(|t| {
            t.iter().any(|(k, v)| {
                k == "tch"
                    || k == "torch-sys"
                    || v.get("package").and_then(|p| p.as_str()) == Some("tch")
            })
        });
        if names_tch {
            with_tch.insert(manifest["package"]["name"].as_str().unwrap().to_string());
        }
    }
    assert_eq!(with_tch, BTreeSet::from(["model".to_string()]));
    // The lock file agrees: of the workspace's packages only model depends on tch, and only tch
    // on torch-sys.
    let lock: toml::Value = toml::from_str(&read("Cargo.lock")).unwrap();
    let mut users: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
    for p in lock["package"].as_array().unwrap() {
        let name = p["name"].as_str().unwrap();
        for d in p
            .get("dependencies")
            .and_then(|d| d.as_array())
            .into_iter()
            .flatten()
        {
            let dep = d.as_str().unwrap().split(' ').next().unwrap();
            if dep == "tch" || dep == "torch-sys" {
                users.entry(dep).or_default().insert(name);
            }
        }
    }
    assert_eq!(users["tch"], BTreeSet::from(["model"]));
    assert_eq!(users["torch-sys"], BTreeSet::from(["tch"]));
    // README: the arena (referee, tallies, USI engine) builds without libtorch: nothing it
    // depends on, however indirectly, is `model` or `tch`.
    assert!(readme.contains("no libtorch: model players and the USI engine open networks"));
    let deps: BTreeMap<&str, Vec<&str>> = lock["package"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            let ds = p
                .get("dependencies")
                .and_then(|d| d.as_array())
                .into_iter()
                .flatten()
                .map(|d| d.as_str().unwrap().split(' ').next().unwrap())
                .collect();
            (p["name"].as_str().unwrap(), ds)
        })
        .collect();
    let (mut seen, mut todo) = (BTreeSet::new(), vec!["arena"]);
    while let Some(p) = todo.pop() {
        if seen.insert(p) {
            todo.extend(deps.get(p).into_iter().flatten());
        }
    }
    for banned in ["model", "tch", "torch-sys"] {
        assert!(!seen.contains(banned), "arena depends on {banned}");
    }
    assert!(
        seen.contains("search") && seen.contains("rules"),
        "{seen:?}"
    );
}
