//! Helpers shared by the integration tests that drive `trainer` processes on run directories.
// Each test file uses the helpers it needs.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Output};
use std::time::{Duration, Instant};

/// A fresh, empty directory `<prefix>-<pid>-<name>` under the test target directory.
pub fn fresh_dir(prefix: &str, name: &str) -> PathBuf {
    let d = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("{prefix}-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Runs `trainer ARGS`, killed (and the test failed) after `limit`.
pub fn trainer_within(args: &[&str], limit: Duration) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_trainer"))
        .args(args)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let t = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if t.elapsed() > limit {
            let _ = child.kill();
            panic!("trainer {args:?} did not end within {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    child.wait_with_output().unwrap()
}

/// A process's stdout and stderr, as text.
pub fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// A test that cannot run here says why and passes, except under CI (`CI` set, as the test
/// command does where it can install everything), where a skipped test is a failure.
pub fn skip(why: &str) {
    if std::env::var_os("CI").is_some() {
        panic!("cannot run under CI: {why}");
    }
    eprintln!("skipped: {why}");
}

/// Polls `f` until it holds; fails the test after `timeout`.
pub fn wait_until(what: &str, timeout: Duration, mut f: impl FnMut() -> bool) {
    let t = Instant::now();
    while !f() {
        assert!(t.elapsed() < timeout, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Waits for `c` to exit; kills it and fails the test after `timeout`.
pub fn wait_exit(c: &mut Child, timeout: Duration, what: &str) -> ExitStatus {
    let t = Instant::now();
    loop {
        if let Some(s) = c.try_wait().unwrap() {
            return s;
        }
        if t.elapsed() > timeout {
            let _ = c.kill();
            panic!("{what} did not exit within {timeout:?}");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// The run's state.json (it must be there and valid).
pub fn state(run: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(run.join("state.json")).unwrap()).unwrap()
}

/// A fresh minishogi b2c16 model `m.safetensors` in `dir` (`trainer init`).
pub fn init_model(dir: &Path) -> PathBuf {
    let m = dir.join("m.safetensors");
    let o = Command::new(env!("CARGO_BIN_EXE_trainer"))
        .args([
            "init",
            "--variant",
            "minishogi",
            "--model",
            "b2c16",
            "--out",
        ])
        .arg(&m)
        .output()
        .expect("run trainer init");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    m
}
