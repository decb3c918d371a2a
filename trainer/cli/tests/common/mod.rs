//! Helpers shared by the integration tests that drive `trainer` processes on run directories.
// Each test file uses the helpers it needs.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus};
use std::time::{Duration, Instant};

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
