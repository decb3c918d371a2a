//! What the README says of the scripts, the configs and a few sizes, checked against the files
//! themselves: the two commands and what they install, the Slurm scripts' signals and thread
//! settings, the model sizes of "Scaling out", and the spread of short matches.

use std::path::PathBuf;
use std::process::Command;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn read(rel: &str) -> String {
    let p = root().join(rel);
    std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// The lines of a shell script that are not comments.
fn code(rel: &str) -> Vec<String> {
    read(rel)
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(str::to_string)
        .collect()
}

fn has(lines: &[String], what: &str) -> bool {
    lines.iter().any(|l| l.contains(what))
}

/// Quick start: `scripts/test.sh` is what CI runs, it installs every external part the tests
/// use, and the pinned PyTorch is the README's.
#[test]
fn the_test_command_is_ci_and_installs_what_the_tests_need() {
    let readme = read("README.md");
    assert!(
        readme.contains("scripts/test.sh      # every test (the command CI runs through .ci/run)")
    );
    assert_eq!(code(".ci/run").last().unwrap(), "exec scripts/test.sh");
    let test = code("scripts/test.sh");
    for needed in [
        "ensure-apt.sh fairy-stockfish fairy-stockfish",
        "ensure-apt.sh slurmctld slurm-wlm",
        "ensure-apt.sh munged munge",
        "ensure-apt.sh chromium chromium",
        "ensure-fsf-wasm.sh",
        "scripts/setup-torch.sh",
        "cargo test --workspace --locked",
        "trainer check configs",
    ] {
        assert!(
            has(&test, needed),
            "scripts/test.sh does not run {needed:?}"
        );
    }
    let torch = code("scripts/setup-torch.sh");
    assert!(has(&torch, "TORCH_VERSION=2.11.0"));
    assert!(has(&torch, "VENV=.local/venv"));
    assert!(readme.contains("the pinned PyTorch 2.11.0 into `.local/`"));
}

/// Quick start: `scripts/run.sh` builds the release binary and runs the default config, passing
/// its arguments to `trainer run` instead when there are any.
#[test]
fn the_main_command_runs_the_default_config_or_its_arguments() {
    let run = code("scripts/run.sh");
    assert!(has(&run, "cargo build --release --locked -p trainer"));
    assert!(has(&run, "set -- --config configs/runs/default.toml"));
    assert_eq!(
        run.last().unwrap(),
        "exec target/release/trainer run \"$@\""
    );
    assert!(has(&run, "ensure-apt.sh fairy-stockfish"));
}

/// Slurm: both batch scripts ask for SIGTERM before the time limit, are requeueable and make
/// libtorch's idle threads sleep.
#[test]
fn the_slurm_scripts_ask_for_a_signal_requeue_and_passive_threads() {
    for script in [
        "scripts/slurm/trainer.sbatch",
        "scripts/slurm/worker.sbatch",
    ] {
        let text = read(script);
        assert!(text.contains("#SBATCH --signal=B:TERM@"), "{script}");
        assert!(text.contains("#SBATCH --requeue"), "{script}");
        assert!(
            code(script)
                .iter()
                .any(|l| l.starts_with("export OMP_WAIT_POLICY=") && l.contains("PASSIVE")),
            "{script}"
        );
    }
}

/// Scaling out: a b6c64 shogi model is about 2.2 MB and a b10c128 one about 13.5 MB.
#[test]
fn model_sizes_are_as_stated() {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("docs-sizes-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    for (shape, mb) in [("b6c64", 2.2), ("b10c128", 13.5)] {
        let out = dir.join(format!("{shape}.safetensors"));
        let o = Command::new(env!("CARGO_BIN_EXE_trainer"))
            .args(["init", "--variant", "shogi", "--model", shape, "--out"])
            .arg(&out)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let size = std::fs::metadata(&out).unwrap().len() as f64 / 1e6;
        assert!(
            (size - mb).abs() <= 0.05 * mb,
            "{shape}: {size:.2} MB, not {mb} MB"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// The ladder: in-loop matches of 10-20 games cannot tell strength apart by less than hundreds
/// of Elo: at an even score the 95% interval spans more than 250 Elo over 10 to 20 games.
#[test]
fn short_matches_swing_by_hundreds_of_elo() {
    for (w, d, l) in [(5, 0, 5), (10, 0, 10), (8, 4, 8)] {
        let e = arena::elo::elo_estimate(w, d, l);
        assert!(e.high - e.low > 250.0, "{w}-{d}-{l}: {:.0}", e.high - e.low);
    }
    // Forty games narrow it, but still not to tens.
    let e = arena::elo::elo_estimate(20, 0, 20);
    assert!(e.high - e.low > 150.0);
}

/// The binary runs without `LD_LIBRARY_PATH`: its rpath points at the pinned libtorch.
#[test]
fn the_binary_finds_libtorch_without_ld_library_path() {
    let o = Command::new(env!("CARGO_BIN_EXE_trainer"))
        .args([
            "init",
            "--variant",
            "minishogi",
            "--model",
            "b2c16",
            "--out",
        ])
        .arg(
            PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
                .join(format!("docs-rpath-{}.safetensors", std::process::id())),
        )
        .env_remove("LD_LIBRARY_PATH")
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
}
