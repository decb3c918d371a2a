//! Exports that other engines read, checked with their own code: a network in dlshogi's
//! encoding trained by a tiny run, exported as dlshogi's ONNX and compared with cshogi's
//! features and labels in onnxruntime; the run's games as hcpe read back with cshogi.
//!
//! The Python side (cshogi, onnxruntime) lives in the pinned venv that the test command sets
//! up; without it the tests say so and pass, except under CI (`CI` set).

use rules::Position;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::Arc;

const CONFIG: &str = r#"
name = "dl"
variant = "shogi"
model = "b2c16"
encoding = "dlshogi"
seed = 5
device = "cpu"
generations = 2
games_per_generation = 8
steps_per_generation = 20
min_samples = 50

[selfplay]
threads = 1
parallel_games = 8
full_simulations = 8
fast_simulations = 2
full_probability = 0.5
max_plies = 300

[training]
batch_size = 32

[replay]
min_window = 500
max_window = 5000

[evaluation]
games = 2
simulations = 2
"#;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

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

/// The venv's python when it has cshogi and onnxruntime.
fn python() -> Option<PathBuf> {
    let py = root().join(".local/venv/bin/python");
    let has = Command::new(&py)
        .args(["-c", "import cshogi, onnxruntime"])
        .output()
        .is_ok_and(|o| o.status.success());
    if has {
        return Some(py);
    }
    assert!(
        std::env::var_os("CI").is_none(),
        "{} lacks cshogi or onnxruntime (scripts/setup-torch.sh installs them)",
        py.display()
    );
    eprintln!("skipped: no cshogi/onnxruntime in {}", py.display());
    None
}

/// A tiny run of standard shogi in dlshogi's encoding (shared by the tests of this file).
fn dlshogi_run() -> PathBuf {
    static RUN: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    RUN.get_or_init(|| {
        let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
            .join(format!("exports-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let config = dir.join("dl.toml");
        std::fs::write(&config, CONFIG).unwrap();
        let (c, d) = (config.to_str().unwrap(), dir.to_str().unwrap());
        ok(
            trainer(&["run", "--config", c, "--runs-dir", d]),
            "trainer run",
        );
        dir.join("dl")
    })
    .clone()
}

#[test]
fn dlshogi_onnx_matches_cshogi_features_and_trainer_eval() {
    let run = dlshogi_run();
    let model = run.join("models/000002.safetensors");
    let onnx = run.join("dl.onnx");
    let (m, x) = (model.to_str().unwrap(), onnx.to_str().unwrap());
    ok(
        trainer(&[
            "export",
            "--model",
            m,
            "--format",
            "dlshogi-onnx",
            "--out",
            x,
        ]),
        "export",
    );
    // The engine side works on the same network: a USI search ends in a legal best move.
    let usi = Command::new(env!("CARGO_BIN_EXE_trainer"))
        .args(["usi", "--model", m])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    use std::io::Write;
    let mut stdin = usi.stdin.as_ref().unwrap();
    writeln!(
        stdin,
        "usi\nisready\nusinewgame\nposition startpos moves 7g7f 3c3d\ngo nodes 16\nquit"
    )
    .unwrap();
    let out = ok(usi.wait_with_output().unwrap(), "usi");
    let best = out
        .lines()
        .find_map(|l| l.strip_prefix("bestmove "))
        .expect(&out);
    let shogi = Arc::new(rules::Variant::builtin("shogi").unwrap());
    let mut pos = Position::start(shogi);
    pos.play_usi("7g7f 3c3d").unwrap();
    assert!(
        pos.parse_usi(best.split(' ').next().unwrap()).is_ok(),
        "{out}"
    );

    let Some(py) = python() else { return };
    let script = root().join("trainer/cli/tests/python/dlshogi_onnx_check.py");
    let o = Command::new(py)
        .arg(script)
        .arg(env!("CARGO_BIN_EXE_trainer"))
        .args([m, x, "--positions", "200", "--seed", "3"])
        .output()
        .unwrap();
    let out = ok(o, "dlshogi_onnx_check.py");
    assert!(out.starts_with("positions 200 "), "{out}");
}

#[test]
fn hcpe_reads_back_with_cshogi_as_our_records() {
    let run = dlshogi_run();
    let out = run.join("games.hcpe");
    let (r, o) = (run.to_str().unwrap(), out.to_str().unwrap());
    let said = ok(
        trainer(&["export-data", "--run", r, "--format", "hcpe", "--out", o]),
        "export-data",
    );
    assert!(said.starts_with("wrote "), "{said}");
    // The same positions, best moves and results, from our library.
    let opened = pipeline::Run::resume(&run).unwrap();
    let mut want = Vec::new();
    for shard in pipeline::store::list(&run).unwrap() {
        let (header, games) = selfplay::read_shard(&shard.path(&run)).unwrap();
        assert_eq!(header.policy_len, 2187);
        for g in games {
            let result = match g.result {
                rules::GameResult::Draw => 0,
                rules::GameResult::SenteWins => 1,
                rules::GameResult::GoteWins => 2,
            };
            for t in selfplay::hcpe::target_positions(&g, &opened.encoder).unwrap() {
                let sfen = t.position.to_sfen();
                let fields: Vec<&str> = sfen.split(' ').take(3).collect();
                want.push((
                    fields.join(" "),
                    t.position.move_to_usi(t.best),
                    result,
                    t.value,
                ));
            }
        }
    }
    assert!(want.len() > 100, "{}", want.len());
    assert!(
        want.iter().any(|w| w.2 != 0),
        "no decisive game to check results on"
    );
    assert_eq!(
        std::fs::metadata(&out).unwrap().len(),
        38 * want.len() as u64
    );
    // Only a generation range.
    let g1 = run.join("g1.hcpe");
    ok(
        trainer(
            &[
                "export-data",
                "--run",
                r,
                "--format",
                "hcpe",
                "--generations",
                "1..1",
            ]
            .iter()
            .copied()
            .chain(["--out", g1.to_str().unwrap()])
            .collect::<Vec<_>>(),
        ),
        "export-data --generations",
    );
    assert!(std::fs::metadata(&g1).unwrap().len() < 38 * want.len() as u64);

    let Some(py) = python() else { return };
    let o = Command::new(py)
        .arg(root().join("trainer/cli/tests/python/hcpe_read.py"))
        .arg(&out)
        .output()
        .unwrap();
    let text = ok(o, "hcpe_read.py");
    let shogi = Arc::new(rules::Variant::builtin("shogi").unwrap());
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), want.len());
    for (line, (sfen, best, result, value)) in lines.iter().zip(&want) {
        let f: Vec<&str> = line.split('\t').collect();
        // cshogi's SFEN, re-read and written by our rules (hand order may differ).
        let theirs = Position::from_sfen_composed(&shogi, f[0])
            .unwrap()
            .to_sfen();
        let theirs: Vec<&str> = theirs.split(' ').take(3).collect();
        assert_eq!(&theirs.join(" "), sfen, "{line}");
        assert_eq!(f[1], best, "{line}");
        assert_eq!(f[3].parse::<i32>().unwrap(), *result, "{line}");
        // dlshogi's score: win probability p = (1 + value) / 2 for the side to move, score
        // 756.09 ln(p / (1 - p)) cut to +-30000 (within 1 for the rounding of the f32 value).
        let eval: f64 = f[2].parse().unwrap();
        let p = ((1.0 + *value as f64) / 2.0).clamp(0.0, 1.0);
        let want = (756.086_496_295_176_2 * (p / (1.0 - p)).ln()).clamp(-30_000.0, 30_000.0);
        assert!(
            (eval - want).abs() <= 1.0,
            "{line}: value {value} scores {want:.1}"
        );
    }
}

#[test]
fn dlshogi_layout_is_refused_where_it_cannot_work() {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("exports-refused-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let m = dir.join("mini.safetensors");
    let o = trainer(&[
        "init",
        "--variant",
        "minishogi",
        "--model",
        "b2c16",
        "--encoding",
        "dlshogi",
        "--out",
        m.to_str().unwrap(),
    ]);
    let e = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success() && e.contains("5x5, not 9x9"), "{e}");
    // A model in our own layout does not become a dlshogi network.
    let m = dir.join("generic.safetensors");
    let mp = m.to_str().unwrap();
    ok(
        trainer(&[
            "init",
            "--variant",
            "shogi",
            "--model",
            "b2c16",
            "--out",
            mp,
        ]),
        "init",
    );
    let o = trainer(&["export", "--model", mp, "--format", "dlshogi-onnx"]);
    let e = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success() && e.contains("generic encoding"), "{e}");
    // hcpe is for standard shogi runs.
    let runs = Path::new(&dir);
    // In a `runs` directory, so that `trainer check` reads it as a run config.
    std::fs::create_dir_all(dir.join("runs")).unwrap();
    let cfg = dir.join("runs/mini.toml");
    std::fs::write(
        &cfg,
        "variant = \"minishogi\"\nmodel = \"b2c16\"\ngenerations = 1\nsteps_per_generation = 1\n",
    )
    .unwrap();
    let c = cfg.to_str().unwrap();
    ok(
        trainer(&[
            "train",
            "--config",
            c,
            "--runs-dir",
            runs.to_str().unwrap(),
            "--init-only",
        ]),
        "train --init-only",
    );
    let out = dir.join("x.hcpe");
    let run = dir.join("mini");
    let o = trainer(&[
        "export-data",
        "--run",
        run.to_str().unwrap(),
        "--format",
        "hcpe",
        "--out",
        out.to_str().unwrap(),
    ]);
    let e = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success() && e.contains("standard shogi"), "{e}");
    assert!(!out.exists());
    // And a run config asking for dlshogi's layout on minishogi names the key.
    std::fs::write(
        &cfg,
        "variant = \"minishogi\"\nmodel = \"b2c16\"\nencoding = \"dlshogi\"\ngenerations = 1\nsteps_per_generation = 1\n",
    )
    .unwrap();
    let o = trainer(&["check", c]);
    let e = String::from_utf8_lossy(&o.stdout);
    assert!(
        !o.status.success() && e.contains("encoding: the dlshogi encoding"),
        "{e}"
    );
}

#[test]
fn export_variant_writes_an_ini_or_names_each_rule_it_cannot_express() {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("exports-variant-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let out = dir.join("minishogi.ini");
    let o = trainer(&[
        "export-variant",
        "minishogi",
        "--format",
        "fsf-ini",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let ini = std::fs::read_to_string(&out).unwrap();
    assert!(ini.contains("[minishogi-export]"), "{ini}");
    assert!(String::from_utf8_lossy(&o.stderr).contains("UCI_Variant value minishogi-export"));
    // Hand shogi's checking drops have no Fairy-Stockfish key: refused, rule by rule.
    let o = trainer(&["export-variant", "hand", "--format", "fsf-ini"]);
    let e = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success(), "{e}");
    assert!(e.contains("must give check") && e.contains("onager"), "{e}");
    assert!(o.stdout.is_empty());
}
