//! `trainer report` on a synthetic run directory, opened in a real headless Chromium: the
//! screenshot is not blank and the rendered page holds every figure with its SVG plot. Without
//! Chromium the test says so and passes, except under CI (`CI` set), where it fails
//! (scripts/test.sh installs it).

mod common;
use common::wait_exit;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

/// The page's figure ids (a contract: links such as report.html#fig-elo point at them).
const FIGURES: [&str; 8] = [
    "fig-elo",
    "fig-data",
    "fig-loss",
    "fig-diagnostics",
    "fig-game-length",
    "fig-rates",
    "fig-speed",
    "fig-time",
];

fn temp_dir(name: &str) -> PathBuf {
    let d = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("report-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// A run directory with a state, a config and a few generations of metrics (the last line cut
/// short, as a killed trainer leaves it).
fn synthetic_run(dir: &Path) {
    let history: Vec<serde_json::Value> = (1..=4)
        .map(|g| {
            serde_json::json!({
                "generation": g, "seconds": 60.0 * g as f64, "promoted": true,
                "matches": [{"opponent": "gen0", "wins": 6, "draws": 2, "losses": 2,
                    "score": 0.7, "elo": 147.0, "elo_low": 20.0, "elo_high": 290.0}],
            })
        })
        .collect();
    let state = serde_json::json!({
        "generation": 4, "best": 4, "total_games": 640, "total_samples": 25600,
        "steps": 400, "seconds": 250.0, "complete": true, "history": history,
    });
    std::fs::write(dir.join("state.json"), state.to_string()).unwrap();
    std::fs::write(
        dir.join("config.toml"),
        "name = \"browser\"\nvariant = \"minishogi\"\nmodel = \"b2c16\"\n",
    )
    .unwrap();
    let mut m = String::new();
    let mut line = |tag: &str, step: u64, value: f64, t: f64| {
        let l = serde_json::json!({"tag": tag, "step": step, "value": value, "t": t});
        m.push_str(&format!("{l}\n"));
    };
    line("run/start", 0, 0.0, 0.0);
    for s in 1..=400u64 {
        let x = s as f64;
        line("train/loss", s, 4.0 / (1.0 + x / 100.0), x * 0.6);
        line("train/policy_loss", s, 3.0 / (1.0 + x / 100.0), x * 0.6);
        line("train/value_loss", s, 1.0 / (1.0 + x / 200.0), x * 0.6);
    }
    for g in 1..=4u64 {
        let (x, t) = (g as f64, 60.0 * g as f64);
        for (tag, v) in [
            ("data/games", 160.0 * x),
            ("data/samples", 6400.0 * x),
            ("train/policy_entropy", 3.0 - 0.3 * x),
            ("train/value_accuracy", 0.4 + 0.05 * x),
            ("selfplay/game_length", 50.0 + 3.0 * x),
            ("selfplay/draw_rate", 0.05 * x),
            ("selfplay/resign_rate", 0.1 + 0.02 * x),
            ("selfplay/false_resign_rate", 0.01 * x),
            ("speed/evals_per_s", 900.0 + 20.0 * x),
            ("elo/ladder", 100.0 * x),
            ("elo/ladder_low", 100.0 * x - 60.0),
            ("elo/ladder_high", 100.0 * x + 60.0),
            ("ladder/rung/random", 0.0),
            ("ladder/rung/mcts-32", 350.0),
        ] {
            line(tag, g, v, t + 5.0);
        }
    }
    for (tag, v) in [
        ("time/selfplay_share", 0.62),
        ("time/train_share", 0.28),
        ("time/eval_share", 0.08),
    ] {
        line(tag, 4, v, 250.0);
    }
    m.push_str("{\"tag\":\"train/loss\",\"step\":401,\"va");
    std::fs::write(dir.join("metrics.jsonl"), m).unwrap();
}

fn chromium() -> Option<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .chain([PathBuf::from("/usr/bin")])
        .flat_map(|d| [d.join("chromium"), d.join("chromium-browser")])
        .find(|p| p.is_file())
}

/// Runs headless Chromium on `page` with `args`; returns its stdout.
fn run_chromium(exe: &Path, profile: &Path, page: &Path, args: &[String]) -> String {
    let out_file = profile.with_extension("stdout");
    let mut child = Command::new(exe)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--hide-scrollbars",
            "--window-size=1200,3000",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .args(args)
        .arg(format!("file://{}", page.display()))
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(&out_file).unwrap())
        .stderr(Stdio::null())
        .spawn()
        .expect("start chromium");
    let status = wait_exit(&mut child, Duration::from_secs(90), "chromium");
    assert!(status.success(), "chromium {args:?}: {status}");
    std::fs::read_to_string(&out_file).unwrap()
}

/// How many distinct colours the PNG at `path` has (and its size).
fn distinct_colours(path: &Path) -> (usize, u32, u32) {
    let decoder = png::Decoder::new(std::fs::File::open(path).unwrap());
    let (info, mut reader) = decoder.read_info().unwrap();
    let mut buf = vec![0; info.buffer_size()];
    reader.next_frame(&mut buf).unwrap();
    assert_eq!(info.bit_depth, png::BitDepth::Eight, "8-bit screenshot");
    let stride = match info.color_type {
        png::ColorType::RGBA => 4,
        png::ColorType::RGB => 3,
        other => panic!("unexpected colour type {other:?}"),
    };
    let colours: std::collections::HashSet<&[u8]> =
        buf.chunks_exact(stride).map(|p| &p[..3]).collect();
    (colours.len(), info.width, info.height)
}

#[test]
fn the_report_renders_in_a_browser() {
    let root = temp_dir("browser");
    let run = root.join("run");
    std::fs::create_dir_all(&run).unwrap();
    synthetic_run(&run);
    let o = Command::new(env!("CARGO_BIN_EXE_trainer"))
        .args(["report", "--run"])
        .arg(&run)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let page = run.join("report.html");
    assert_eq!(
        String::from_utf8_lossy(&o.stdout).trim(),
        page.display().to_string()
    );
    let html = std::fs::read_to_string(&page).unwrap();
    let local = html.replace("xmlns=\"http://www.w3.org/2000/svg\"", "");
    assert!(!local.contains("http://") && !local.contains("https://"));
    assert!(html.contains("1 line skipped"), "the cut-short last line");

    let Some(exe) = chromium() else {
        common::skip(
            "chromium not installed (apt-get install chromium; scripts/test.sh installs it)",
        );
        return;
    };
    let shot = root.join("report.png");
    run_chromium(
        &exe,
        &root.join("profile-shot"),
        &page,
        &[format!("--screenshot={}", shot.display())],
    );
    let (colours, w, h) = distinct_colours(&shot);
    assert!(w >= 1000 && h >= 2000, "screenshot {w}x{h}");
    assert!(colours >= 16, "a blank screenshot: {colours} colours");

    let dom = run_chromium(
        &exe,
        &root.join("profile-dom"),
        &page,
        &["--dump-dom".to_string()],
    );
    for id in FIGURES {
        let start = dom
            .find(&format!("<figure id=\"{id}\""))
            .unwrap_or_else(|| panic!("figure {id} not in the rendered page"));
        let end = start + dom[start..].find("</figure>").expect("figure closed");
        assert!(dom[start..end].contains("<svg"), "{id} has no svg");
    }
    let _ = std::fs::remove_dir_all(&root);
}

#[test]
fn a_run_without_state_is_an_error_naming_the_file() {
    let root = temp_dir("no-state");
    let o = Command::new(env!("CARGO_BIN_EXE_trainer"))
        .args(["report", "--run"])
        .arg(&root)
        .output()
        .unwrap();
    assert!(!o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains(&root.join("state.json").display().to_string()),
        "{err}"
    );
    let _ = std::fs::remove_dir_all(&root);
}
