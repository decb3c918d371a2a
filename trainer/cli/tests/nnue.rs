//! Networks for Fairy-Stockfish checked with Fairy-Stockfish itself: the current release built
//! to WebAssembly (npm `fairy-stockfish-nnue.wasm`, run by `node` through scripts/fsf-wasm-uci.js)
//! loads our `.nnue` files, its static `eval` of 100 positions per variant
//! equals our integer inference digit for digit, a network `trainer nnue` trained on a tiny
//! run plays a match against the classical evaluation to the end, and every position of
//! `export-data --format fsf-plain` reads back in the engine as the position we wrote, with our
//! legal moves.
//!
//! Without node or the package (scripts/ensure-fsf-wasm.sh installs it into .local/fsf-wasm)
//! the tests say so and pass, except under CI (`CI` set), where that is a failure.

mod common;

use model::nnue::infer::pawns_text;
use model::nnue::{FeatureLayout, FsfRules, NnueNet};
use rules::{Position, SplitMix64, Variant, VariantSpec};
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Output, Stdio};
use std::sync::mpsc::{channel, Receiver};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

/// The package, relative to the workspace root (where scripts/ensure-fsf-wasm.sh puts it).
const WASM_PACKAGE: &str = ".local/fsf-wasm/node_modules/fairy-stockfish-nnue.wasm";

/// Longest wait for one answer of the engine.
const ANSWER_TIMEOUT: Duration = Duration::from_secs(120);

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// A scratch folder for this test process.
fn scratch(name: &str) -> PathBuf {
    let d = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("nnue-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// How to start the engine: node and its arguments, or `None` (said, and a failure under CI).
/// `$FAIRY_STOCKFISH_WASM` names another build's folder, `$NODE` another node.
fn engine_command() -> Option<(PathBuf, Vec<String>)> {
    let package = std::env::var_os("FAIRY_STOCKFISH_WASM")
        .map(PathBuf::from)
        .unwrap_or_else(|| root().join(WASM_PACKAGE));
    let node = std::env::var_os("NODE").map(PathBuf::from).or_else(|| {
        std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())
            .map(|d| d.join("node"))
            .find(|p| p.is_file())
    });
    if !package.join("stockfish.js").is_file() {
        common::skip(&format!(
            "no Fairy-Stockfish WebAssembly build at {} (scripts/ensure-fsf-wasm.sh installs it)",
            package.display()
        ));
        return None;
    }
    let Some(node) = node else {
        common::skip("node is not installed (it runs the Fairy-Stockfish WebAssembly build)");
        return None;
    };
    let wrapper = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../scripts/fsf-wasm-uci.js");
    let args = vec![
        // Node 18 and later fetch the .wasm with `fetch` unless told not to (fails on a path).
        "--no-experimental-fetch".to_string(),
        wrapper.display().to_string(),
        package.canonicalize().unwrap().display().to_string(),
    ];
    Some((node, args))
}

/// The engine over UCI.
struct Fsf {
    child: Child,
    stdin: ChildStdin,
    lines: Receiver<String>,
}

impl Fsf {
    fn start(cmd: &(PathBuf, Vec<String>)) -> Fsf {
        let mut child = Command::new(&cmd.0)
            .args(&cmd.1)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("start node");
        let stdin = child.stdin.take().unwrap();
        let out = child.stdout.take().unwrap();
        let (tx, lines) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(out).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let mut e = Fsf {
            child,
            stdin,
            lines,
        };
        e.send("uci");
        e.until("uciok");
        e
    }

    fn send(&mut self, cmd: &str) {
        writeln!(self.stdin, "{cmd}").unwrap();
    }

    /// The lines up to and including the first that starts with `last`.
    fn until(&mut self, last: &str) -> Vec<String> {
        let mut out = Vec::new();
        loop {
            let line = self
                .lines
                .recv_timeout(ANSWER_TIMEOUT)
                .unwrap_or_else(|_| panic!("no {last:?} from Fairy-Stockfish; got {out:#?}"));
            let done = line.starts_with(last);
            out.push(line);
            if done {
                return out;
            }
        }
    }

    /// Selects `rules` (loading its `variants.ini` when it has one) and the network `net`.
    fn select(&mut self, rules: &FsfRules, dir: &Path, net: Option<&Path>) {
        if let Some(ini) = &rules.ini {
            let p = dir.join(format!("{}.ini", rules.name));
            std::fs::write(&p, ini).unwrap();
            self.send(&format!("setoption name VariantPath value {}", p.display()));
        }
        self.send(&format!("setoption name UCI_Variant value {}", rules.name));
        if let Some(net) = net {
            self.send(&format!("setoption name EvalFile value {}", net.display()));
        }
        self.send("isready");
        self.until("readyok");
    }
}

impl Drop for Fsf {
    fn drop(&mut self) {
        let _ = writeln!(self.stdin, "quit");
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn layout_of(variant: &str, fsf: Option<&str>) -> (Arc<Variant>, FeatureLayout) {
    let v = Arc::new(Variant::builtin(variant).unwrap());
    let rules = FsfRules::for_variant(&v, fsf).unwrap();
    let layout = FeatureLayout::new(&v, &rules).unwrap();
    (v, layout)
}

/// A network of random weights in ranges where every layer's clamps are sometimes hit and
/// sometimes not.
fn random_net(dims: usize, seed: u64) -> NnueNet {
    let mut rng = SplitMix64(seed);
    let mut r = |lo: i64, hi: i64| lo + (rng.next_u64() % (hi - lo + 1) as u64) as i64;
    let mut net = NnueNet::zeros(dims, "random weights for a test");
    net.ft_bias.iter_mut().for_each(|b| *b = r(-20, 60) as i16);
    net.ft_weight
        .iter_mut()
        .for_each(|w| *w = r(-24, 24) as i16);
    net.psqt_weight
        .iter_mut()
        .for_each(|w| *w = r(-3000, 3000) as i32);
    for s in &mut net.stacks {
        s.l1_bias
            .iter_mut()
            .for_each(|b| *b = r(-4000, 4000) as i32);
        s.l1_weight.iter_mut().for_each(|w| *w = r(-6, 6) as i8);
        s.l2_bias
            .iter_mut()
            .for_each(|b| *b = r(-2000, 2000) as i32);
        for (j, w) in s.l2_weight.iter_mut().enumerate() {
            // Padding inputs stay zero, as Fairy-Stockfish's trainers write them.
            *w = if j % 32 < 16 { r(-40, 40) as i8 } else { 0 };
        }
        s.out_bias = r(-5000, 5000) as i32;
        s.out_weight
            .iter_mut()
            .for_each(|w| *w = r(-127, 127) as i8);
    }
    net
}

/// Positions of seeded random playouts that are not in check (the engine's `eval` prints
/// nothing for those), with pieces in hand and promotions along the way.
fn random_positions(v: &Arc<Variant>, n: usize, seed: u64) -> Vec<Position> {
    let mut rng = SplitMix64(seed);
    let mut out = Vec::new();
    while out.len() < n {
        let mut pos = Position::start(v.clone());
        let plies = rng.below(60);
        for _ in 0..plies {
            let moves = pos.legal_moves();
            if moves.is_empty() {
                break;
            }
            pos.make_move(moves[rng.below(moves.len())]);
        }
        if !pos.in_check() && !pos.legal_moves().is_empty() {
            out.push(pos);
        }
    }
    out
}

/// Compares the engine's `eval` of `positions` with our inference of `net` (written to
/// `file`): the NNUE evaluation line, and every bucket's PSQT, layers and total, and the
/// bucket it marks as used. Returns how many numbers agreed.
fn compare_evals(
    fsf: &mut Fsf,
    layout: &FeatureLayout,
    net: &NnueNet,
    file: &Path,
    positions: &[Position],
) -> usize {
    let mut agreed = 0;
    let name = file.file_name().unwrap().to_string_lossy().into_owned();
    for pos in positions {
        let fen = layout.fsf_fen(pos, 0);
        fsf.send(&format!("position fen {fen}"));
        fsf.send("eval");
        let out = fsf.until("Final evaluation");
        let text = out.join("\n");
        assert!(
            out.iter()
                .any(|l| l.starts_with("info string NNUE evaluation using") && l.contains(&name)),
            "the network is not in use for {fen}:\n{text}"
        );
        let ours = net.evaluate(layout, pos).unwrap();
        let line = out
            .iter()
            .find(|l| l.starts_with("NNUE evaluation"))
            .unwrap_or_else(|| panic!("no NNUE evaluation for {fen}:\n{text}"));
        let theirs = line.split_whitespace().nth(2).unwrap();
        assert_eq!(
            theirs,
            pawns_text(ours.value_sente()),
            "NNUE evaluation of {fen} (ours {} internal units)\n{text}",
            ours.value_sente()
        );
        agreed += 1;
        // The bucket table follows its title (the board of piece values above has rows of the
        // same shape).
        let title = out
            .iter()
            .position(|l| l.contains("NNUE network contributions"))
            .unwrap_or_else(|| panic!("no bucket table for {fen}:\n{text}"));
        let rows: Vec<&String> = out[title..]
            .iter()
            .filter(|l| l.starts_with("|  ") && l.as_bytes().get(3).is_some_and(u8::is_ascii_digit))
            .collect();
        assert_eq!(rows.len(), 8, "bucket table of {fen}:\n{text}");
        let texts = ours.fsf_bucket_texts();
        for (b, row) in rows.iter().enumerate() {
            let cols: Vec<&str> = row.split('|').map(str::trim).collect();
            assert_eq!(cols[1], b.to_string(), "{row}");
            for (c, want) in texts[b].iter().enumerate() {
                assert_eq!(
                    cols[2 + c],
                    want.trim(),
                    "bucket {b} column {c} of {fen}\n{text}"
                );
                agreed += 1;
            }
            assert_eq!(
                cols[5].contains("this bucket is used"),
                b == ours.bucket,
                "bucket of {fen}"
            );
        }
    }
    agreed
}

/// A random network for `variant` (on Fairy-Stockfish's `fsf`, default its counterpart)
/// evaluates 100 positions as we do.
fn random_network_matches(variant: &str, fsf: Option<&str>, seed: u64) {
    let Some(cmd) = engine_command() else { return };
    let (v, layout) = layout_of(variant, fsf);
    let dir = scratch(&format!("random-{variant}"));
    let net = random_net(layout.dims(), seed);
    let file = dir.join(format!("{}-random.nnue", layout.rules().name));
    std::fs::write(&file, net.to_bytes()).unwrap();
    let mut e = Fsf::start(&cmd);
    e.select(layout.rules(), &dir, Some(&file));
    let positions = random_positions(&v, 100, seed);
    let agreed = compare_evals(&mut e, &layout, &net, &file, &positions);
    eprintln!(
        "{variant} as {}: {} positions, {agreed} numbers of `eval` equal ours ({} features)",
        layout.rules().name,
        positions.len(),
        layout.dims()
    );
}

#[test]
fn random_minishogi_network_evaluates_as_fairy_stockfish() {
    random_network_matches("minishogi", None, 11);
}

#[test]
fn random_kyoto_network_evaluates_as_fairy_stockfish() {
    random_network_matches("kyoto", None, 12);
}

#[test]
fn random_judkins_network_evaluates_as_fairy_stockfish() {
    random_network_matches("judkins", None, 13);
}

#[test]
fn random_tori_network_evaluates_as_fairy_stockfish() {
    random_network_matches("tori", None, 15);
}

#[test]
fn random_yari_network_evaluates_as_fairy_stockfish() {
    random_network_matches("yari", None, 16);
}

#[test]
fn random_sho_network_evaluates_as_fairy_stockfish() {
    random_network_matches("sho", None, 17);
}

#[test]
fn random_network_of_an_exported_variant_evaluates_as_fairy_stockfish() {
    random_network_matches("kyoto", Some("kyoto-export"), 14);
}

/// A tiny minishogi run (shared by the tests of this file): two generations of self-play.
const RUN_CONFIG: &str = r#"
name = "tiny"
variant = "minishogi"
model = "b2c16"
seed = 7
device = "cpu"
generations = 2
games_per_generation = 16
steps_per_generation = 20
min_samples = 50

[selfplay]
threads = 1
parallel_games = 16
full_simulations = 16
fast_simulations = 4
full_probability = 0.5
max_plies = 200

[training]
batch_size = 32

[replay]
min_window = 500
max_window = 5000

[evaluation]
games = 2
simulations = 2
"#;

fn trainer(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_trainer"))
        .args(args)
        .current_dir(root())
        .env("OMP_WAIT_POLICY", "PASSIVE")
        .output()
        .expect("run trainer")
}

fn ok(o: Output, what: &str) -> String {
    assert!(
        o.status.success(),
        "{what} failed: {}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8(o.stdout).unwrap()
}

fn tiny_run() -> PathBuf {
    static RUN: OnceLock<PathBuf> = OnceLock::new();
    RUN.get_or_init(|| {
        let dir = scratch("run");
        let config = dir.join("tiny.toml");
        std::fs::write(&config, RUN_CONFIG).unwrap();
        let (c, d) = (config.to_str().unwrap(), dir.to_str().unwrap());
        ok(
            trainer(&["run", "--config", c, "--runs-dir", d]),
            "trainer run",
        );
        dir.join("tiny")
    })
    .clone()
}

/// `trainer nnue` on the run `run` into `out`: one epoch in batches of 256, then `extra`.
fn quick_nnue(run: &str, out: &str, extra: &[&str]) -> Output {
    let mut args = vec![
        "nnue",
        "--run",
        run,
        "--out",
        out,
        "--epochs",
        "1",
        "--batch-size",
        "256",
    ];
    args.extend_from_slice(extra);
    trainer(&args)
}

/// The samples of the tiny run, in the order the export writes them.
fn run_samples(run: &Path) -> Vec<pipeline::fsfdata::FsfSample> {
    let run = pipeline::Run::resume(run).unwrap();
    let mut out = Vec::new();
    pipeline::fsfdata::for_each_sample(&run, &(0..=u64::MAX), false, |s| {
        out.push(s);
        std::ops::ControlFlow::Continue(())
    })
    .unwrap();
    out
}

#[test]
fn trained_network_loads_evaluates_as_ours_and_plays_a_match() {
    let Some(cmd) = engine_command() else { return };
    let run = tiny_run();
    let dir = scratch("trained");
    let (r, d) = (run.to_str().unwrap(), dir.to_str().unwrap());
    // Fairy-Stockfish would not use a network of another name: refused.
    let bad = trainer(&["nnue", "--run", r, "--out", &format!("{d}/net.nnue")]);
    assert!(!bad.status.success());
    assert!(String::from_utf8_lossy(&bad.stderr).contains("minishogi-"));
    let file = dir.join("minishogi-tiny.nnue");
    let out = ok(
        trainer(&[
            "nnue",
            "--run",
            r,
            "--out",
            file.to_str().unwrap(),
            "--epochs",
            "3",
            "--batch-size",
            "256",
        ]),
        "trainer nnue",
    );
    assert!(out.contains("Fairy-Stockfish minishogi network"), "{out}");
    let (_, layout) = layout_of("minishogi", None);
    let net = NnueNet::from_bytes(&std::fs::read(&file).unwrap(), Some(layout.dims())).unwrap();
    assert!(net.description.contains("run tiny"), "{}", net.description);
    // The engine's evaluation of the run's own positions equals ours.
    let positions: Vec<Position> = run_samples(&run)
        .into_iter()
        .map(|s| s.position)
        .filter(|p| !p.in_check())
        .step_by(3)
        .take(100)
        .collect();
    assert_eq!(positions.len(), 100);
    assert!(positions
        .iter()
        .all(|p| Arc::ptr_eq(p.variant(), p.variant())));
    let mut e = Fsf::start(&cmd);
    e.select(layout.rules(), &dir, Some(&file));
    let agreed = compare_evals(&mut e, &layout, &net, &file, &positions);
    drop(e);
    eprintln!(
        "trained minishogi network: {agreed} numbers of `eval` on 100 run positions equal ours"
    );
    // A short match at fixed nodes against Fairy-Stockfish's classical evaluation.
    // Each engine's output is also kept (`sh -c` runs the player's command), to see which
    // evaluation each one used.
    let engine = |log: &str| {
        format!(
            "engine:{} {} | tee {}",
            cmd.0.display(),
            cmd.1.join(" "),
            dir.join(log).display()
        )
    };
    let (a, b) = (engine("a.log"), engine("b.log"));
    let games = dir.join("games");
    let out = ok(
        trainer(&[
            "arena",
            "--variant",
            "minishogi",
            "--player",
            &a,
            "--player",
            &b,
            "--protocol-a",
            "uci",
            "--protocol-b",
            "uci",
            "--option-a",
            &format!("EvalFile={}", file.display()),
            "--option-b",
            "Use NNUE=false",
            "--nodes",
            "300",
            "--games",
            "4",
            "--out",
            games.to_str().unwrap(),
        ]),
        "trainer arena",
    );
    assert!(
        !out.contains("illegal")
            && !out.contains("malformed")
            && !out.contains("timeout")
            && !out.contains("crash"),
        "{out}"
    );
    let recorded = std::fs::read_to_string(games.join("games.txt")).unwrap();
    assert_eq!(recorded.lines().count(), 4, "{recorded}");
    let log = |name: &str| std::fs::read_to_string(dir.join(name)).unwrap();
    let using = "info string NNUE evaluation using /copies-1/minishogi-tiny.nnue";
    assert!(
        log("a.log").contains(&format!("{using} enabled")),
        "{}",
        log("a.log")
    );
    assert!(!log("a.log").contains("classical evaluation enabled"));
    assert!(log("b.log").contains("info string classical evaluation enabled"));
    assert!(!log("b.log").contains("NNUE evaluation using"));
    eprintln!(
        "{}",
        out.lines()
            .filter(|l| l.starts_with("games"))
            .collect::<Vec<_>>()
            .join("\n")
    );
}

/// `--teacher`: a network of the run relabels the positions' values (weight 0 leaves them as
/// the searches gave them, weight 1 moves them); bad teachers and weights are named.
#[test]
fn a_teacher_network_relabels_the_values() {
    let run = tiny_run();
    let dir = scratch("teacher");
    let (r, d) = (run.to_str().unwrap(), dir.to_str().unwrap());
    let shift = |weight: &str| -> f64 {
        let file = format!("{d}/minishogi-w{weight}.nnue");
        let out = ok(
            quick_nnue(r, &file, &["--teacher", "last", "--teacher-weight", weight]),
            "trainer nnue --teacher",
        );
        let net = NnueNet::from_bytes(&std::fs::read(&file).unwrap(), None).unwrap();
        assert!(
            net.description
                .contains(&format!("values {weight} from network 000002.safetensors")),
            "{}",
            net.description
        );
        let line = out
            .lines()
            .find(|l| l.starts_with("the teacher moved the target values by "))
            .unwrap_or_else(|| panic!("{out}"));
        line.split_whitespace().nth(7).unwrap().parse().unwrap()
    };
    assert_eq!(shift("0"), 0.0);
    let moved = shift("1");
    assert!(moved > 0.01 && moved <= 2.0, "{moved}");
    let fails = |args: &[&str], says: &str| {
        let out = format!("{d}/minishogi-bad.nnue");
        let mut all = vec!["nnue", "--run", r, "--out", &out];
        all.extend_from_slice(args);
        let o = trainer(&all);
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(!o.status.success() && err.contains(says), "{args:?}: {err}");
        assert!(!Path::new(&out).exists());
    };
    fails(
        &["--teacher", "last", "--teacher-weight", "1.5"],
        "--teacher-weight 1.5",
    );
    let missing = format!("{d}/nope.safetensors");
    fails(&["--teacher", &missing], "nope");
    fails(&["--teacher-weight", "0.5"], "--teacher");
}

#[test]
fn noisy_positions_are_left_out_and_the_scale_is_recorded() {
    let run = tiny_run();
    let dir = scratch("quiet");
    let (r, d) = (run.to_str().unwrap(), dir.to_str().unwrap());
    let samples = run_samples(&run);
    let noisy = samples
        .iter()
        .filter(|s| s.position.in_check() || pipeline::fsfdata::captures(&s.position, s.best))
        .count();
    assert!(
        noisy > 0 && noisy < samples.len(),
        "{noisy} of {}",
        samples.len()
    );
    // Quiet positions by default; all of them with `--skip-noisy false`.
    for (skip, left_out, scale) in [(None, noisy, "700"), (Some("false"), 0, "361")] {
        let file = format!("{d}/minishogi-quiet-{left_out}.nnue");
        let mut extra = vec!["--eval-scale", scale];
        if let Some(skip) = skip {
            extra.extend(["--skip-noisy", skip]);
        }
        let out = ok(quick_nnue(r, &file, &extra), "trainer nnue");
        assert_eq!(
            out.contains(&format!(
                "left out {noisy} positions in check or with a capture for the best move"
            )),
            left_out > 0,
            "{out}"
        );
        // "trained on T positions of G games (H held out)": T + H are the positions kept.
        let words: Vec<&str> = out.split_whitespace().collect();
        let at = words.iter().position(|w| *w == "trained").unwrap();
        let trained: usize = words[at + 2].parse().unwrap();
        let held: usize = words[at + 7].trim_start_matches('(').parse().unwrap();
        assert_eq!(trained + held, samples.len() - left_out, "{out}");
        let net = NnueNet::from_bytes(&std::fs::read(&file).unwrap(), None).unwrap();
        assert!(
            net.description.contains("quiet positions") == (left_out > 0)
                && net
                    .description
                    .contains(&format!("evaluation scale {scale}")),
            "{}",
            net.description
        );
    }
    let bad = format!("{d}/minishogi-bad.nnue");
    let o = trainer(&["nnue", "--run", r, "--out", &bad, "--eval-scale", "0"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        !o.status.success() && err.contains("evaluation scale"),
        "{err}"
    );
    assert!(!Path::new(&bad).exists());
}

/// Our legal moves of `pos` in Fairy-Stockfish's notation, counting pawn drops that mate as
/// it does (it generates them and scores them as a loss).
fn fsf_legal_moves(layout: &FeatureLayout, pos: &Position) -> Vec<String> {
    let v = pos.variant();
    let mut spec: VariantSpec = v.spec.clone();
    for p in spec.pieces.as_mut().unwrap() {
        if let Some(d) = p.drop.as_mut() {
            d.no_mate = Some(false);
        }
    }
    let relaxed = Arc::new(Variant::compile(spec).unwrap());
    let p = Position::from_sfen(&relaxed, &pos.to_sfen()).unwrap();
    let mut names: Vec<String> = p
        .legal_moves()
        .into_iter()
        .map(|m| layout.fsf_move(&p, m))
        .collect();
    names.sort();
    names
}

/// Reads `fen` into the engine and checks that it writes it back unchanged and lists
/// `moves` as its legal moves.
fn reads_back(e: &mut Fsf, fen: &str, moves: &[String]) {
    e.send(&format!("position fen {fen}"));
    e.send("d");
    let shown = e.until("Fen: ");
    assert_eq!(
        shown.last().unwrap().trim_start_matches("Fen: "),
        fen,
        "{shown:#?}"
    );
    e.send("go perft 1");
    let out = e.until("Nodes searched");
    let mut theirs: Vec<String> = out
        .iter()
        .filter(|l| !l.starts_with("Nodes searched"))
        .filter_map(|l| l.strip_suffix(": 1"))
        .map(str::to_string)
        .collect();
    theirs.sort();
    assert_eq!(theirs, moves, "legal moves of {fen}");
}

#[test]
fn fsf_plain_export_reads_back_in_fairy_stockfish() {
    let Some(cmd) = engine_command() else { return };
    let run = tiny_run();
    let dir = scratch("plain");
    let file = dir.join("tiny.plain");
    let out = ok(
        trainer(&[
            "export-data",
            "--run",
            run.to_str().unwrap(),
            "--format",
            "fsf-plain",
            "--out",
            file.to_str().unwrap(),
        ]),
        "export-data",
    );
    let text = std::fs::read_to_string(&file).unwrap();
    let records: Vec<Vec<&str>> = text
        .split_terminator("e\n")
        .map(|r| r.lines().collect())
        .collect();
    let samples = run_samples(&run);
    assert_eq!(records.len(), samples.len());
    assert!(
        out.contains(&format!("wrote {} positions", samples.len())),
        "{out}"
    );
    let (_, layout) = layout_of("minishogi", None);
    let mut e = Fsf::start(&cmd);
    e.select(layout.rules(), &dir, None);
    let mut wins = 0;
    for (rec, s) in records.iter().zip(&samples) {
        let keys: Vec<&str> = rec.iter().map(|l| l.split(' ').next().unwrap()).collect();
        assert_eq!(keys, ["fen", "move", "score", "ply", "result"], "{rec:?}");
        let field = |i: usize| rec[i].split_once(' ').unwrap().1;
        let score: i32 = field(2).parse().unwrap();
        assert!(score.abs() <= 10_000, "{rec:?}");
        let result: i8 = field(4).parse().unwrap();
        assert_eq!(result, s.result);
        wins += usize::from(result == 1);
        // The games start at move 1: the ply is the SFEN's move number less one.
        let ply: u64 = field(3).parse().unwrap();
        let number: u64 = s
            .position
            .to_sfen()
            .split_whitespace()
            .nth(3)
            .unwrap()
            .parse()
            .unwrap();
        assert_eq!(ply, number - 1, "{rec:?}");
        assert_eq!(score, model::nnue::score_of_value(s.value), "{rec:?}");
        let moves = fsf_legal_moves(&layout, &s.position);
        assert!(
            moves.contains(&field(1).to_string()),
            "{rec:?} not in {moves:?}"
        );
        reads_back(&mut e, field(0), &moves);
    }
    assert!(
        wins > 0 && wins < records.len(),
        "results for the side to move vary"
    );
    eprintln!(
        "fsf-plain: {} records read back in Fairy-Stockfish",
        records.len()
    );
}

/// Random positions of `variant` written as Fairy-Stockfish's FEN read back as written, with
/// our legal moves in its notation.
fn fens_read_back(variant: &str, fsf: Option<&str>, seed: u64) {
    let Some(cmd) = engine_command() else { return };
    let (v, layout) = layout_of(variant, fsf);
    let dir = scratch(&format!("fen-{variant}"));
    let mut e = Fsf::start(&cmd);
    e.select(layout.rules(), &dir, None);
    let mut rng = SplitMix64(seed);
    let positions = random_positions(&v, 100, seed);
    for pos in &positions {
        let fen = layout.fsf_fen(pos, rng.below(30) as u32);
        reads_back(&mut e, &fen, &fsf_legal_moves(&layout, pos));
    }
    eprintln!(
        "{variant} as {}: 100 FENs and their moves read back",
        layout.rules().name
    );
}

#[test]
fn kyoto_fens_and_moves_read_back_in_fairy_stockfish() {
    fens_read_back("kyoto", None, 21);
}

#[test]
fn judkins_fens_and_moves_read_back_in_fairy_stockfish() {
    fens_read_back("judkins", None, 22);
}

#[test]
fn micro_fens_and_moves_read_back_in_fairy_stockfish() {
    fens_read_back("micro", None, 23);
}

#[test]
fn exported_kyoto_fens_and_moves_read_back_in_fairy_stockfish() {
    fens_read_back("kyoto", Some("kyoto-export"), 24);
}
