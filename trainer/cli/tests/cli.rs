//! The command line: perft output format, config checking with clear errors, export.

use std::path::PathBuf;
use std::process::{Command, Output};

fn trainer(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_trainer"))
        .args(args)
        .current_dir(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../.."))
        .output()
        .expect("run trainer")
}

fn tmp(name: &str) -> PathBuf {
    let d = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("cli-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

#[test]
fn perft_prints_the_count_last_and_divides() {
    let o = trainer(&["perft", "--variant", "shogi", "--depth", "3"]);
    assert!(o.status.success());
    let out = String::from_utf8(o.stdout).unwrap();
    assert_eq!(out.lines().last(), Some("nodes 25470"));
    let o = trainer(&[
        "perft",
        "--variant",
        "cannon-shosu",
        "--depth",
        "2",
        "--divide",
    ]);
    let out = String::from_utf8(o.stdout).unwrap();
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.last(), Some(&"nodes 527"));
    assert_eq!(lines.len(), 24, "23 root moves and the total");
    let sum: u64 = lines[..23]
        .iter()
        .map(|l| l.split(' ').nth(1).unwrap().parse::<u64>().unwrap())
        .sum();
    assert_eq!(sum, 527);
    let o = trainer(&[
        "perft",
        "--variant",
        "minishogi",
        "--sfen",
        "rbsgk/4p/5/P4/KGSBR b - 1",
        "--moves",
        "1e1d",
        "--depth",
        "1",
    ]);
    assert!(o.status.success());
    // --moves is played before counting: after the rook's 1e1d, gote's replies are counted.
    let out = String::from_utf8(o.stdout).unwrap();
    assert!(out.lines().last().unwrap().starts_with("nodes "), "{out}");
}

#[test]
fn bad_input_names_the_token_and_fails() {
    let o = trainer(&[
        "perft",
        "--variant",
        "shogi",
        "--sfen",
        "lnsgkgsnl/9/9 b - 1",
        "--depth",
        "1",
    ]);
    assert!(!o.status.success());
    let err = String::from_utf8(o.stderr).unwrap();
    assert!(err.contains("SFEN") && err.contains("ranks"), "{err}");
    let o = trainer(&[
        "perft",
        "--variant",
        "shogi",
        "--moves",
        "7g7f 9z9y",
        "--depth",
        "1",
    ]);
    assert!(!o.status.success());
    assert!(String::from_utf8(o.stderr).unwrap().contains("9z9y"));
    let o = trainer(&["perft", "--variant", "nosuchvariant", "--depth", "1"]);
    assert!(!o.status.success());
    assert!(String::from_utf8(o.stderr)
        .unwrap()
        .contains("nosuchvariant"));
}

#[test]
fn check_validates_every_config_and_names_file_and_key() {
    let o = trainer(&["check"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stdout));
    let d = tmp("check");
    let variants = d.join("variants");
    std::fs::create_dir_all(&variants).unwrap();
    std::fs::write(
        variants.join("broken.toml"),
        "extends = \"shogi\"\nname = \"broken\"\n[[pieces]]\nletter = \"P\"\nbetza = \"fX\"\n",
    )
    .unwrap();
    std::fs::write(
        variants.join("typo.toml"),
        "extends = \"shogi\"\nfiels = 9\n",
    )
    .unwrap();
    let runs = d.join("runs");
    std::fs::create_dir_all(&runs).unwrap();
    std::fs::write(
        runs.join("r.toml"),
        "variant = \"minishogi\"\nmodel = \"b2c16\"\ngenerations = 1\ngames_per_generation = 1\nsteps_per_generation = 1\n[selfplay]\nparallel_games = 0\n",
    )
    .unwrap();
    let o = trainer(&["check", d.to_str().unwrap()]);
    assert!(!o.status.success());
    let out = String::from_utf8(o.stdout).unwrap();
    assert!(
        out.contains("broken.toml") && out.contains("pieces[") && out.contains("betza"),
        "{out}"
    );
    assert!(out.contains("typo.toml") && out.contains("fiels"), "{out}");
    assert!(
        out.contains("r.toml") && out.contains("selfplay.parallel_games"),
        "{out}"
    );
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn explain_prints_the_encoding() {
    let o = trainer(&["check", "--explain", "shogi"]);
    assert!(o.status.success());
    let out = String::from_utf8(o.stdout).unwrap();
    assert!(out.contains("45 planes"), "{out}");
    assert!(out.contains("11259"), "{out}");
}

#[test]
fn init_then_export_torchscript() {
    let d = tmp("export");
    let m = d.join("m.safetensors");
    let o = trainer(&[
        "init",
        "--variant",
        "minishogi",
        "--model",
        "b2c16",
        "--out",
        m.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let o = trainer(&[
        "export",
        "--model",
        m.to_str().unwrap(),
        "--format",
        "torchscript",
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(d.join("m.pt").exists() && d.join("m.json").exists());
    // A damaged model is a clear error, not a crash.
    std::fs::write(d.join("bad.safetensors"), b"nonsense").unwrap();
    std::fs::copy(d.join("m.json"), d.join("bad.json")).unwrap();
    let o = trainer(&[
        "export",
        "--model",
        d.join("bad.safetensors").to_str().unwrap(),
        "--format",
        "torchscript",
    ]);
    assert!(!o.status.success());
    assert!(String::from_utf8(o.stderr)
        .unwrap()
        .contains("bad.safetensors"));
    let _ = std::fs::remove_dir_all(&d);
}
