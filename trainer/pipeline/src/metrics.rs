//! The run's log (`log.txt` + stdout, above any progress bars), scalars behind a small trait
//! (TensorBoard, and `metrics.jsonl` for `trainer report`), progress bars, and thread CPU time
//! for the busy figures.

use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Instant;

/// Scalars for TensorBoard (tensorboard-rs is unmaintained: one writer per run directory for
/// the whole process, only `add_scalar`).
pub trait Metrics: Send {
    /// Records a scalar.
    fn scalar(&mut self, tag: &str, value: f64, step: u64);
    /// Writes buffered events.
    fn flush(&mut self);
}

/// TensorBoard event files through tensorboard-rs.
pub struct TensorBoard(tensorboard_rs::summary_writer::SummaryWriter);

impl Metrics for TensorBoard {
    fn scalar(&mut self, tag: &str, value: f64, step: u64) {
        if value.is_finite() {
            self.0.add_scalar(tag, value as f32, step as usize);
        }
    }
    fn flush(&mut self) {
        self.0.flush();
    }
}

/// Every scalar as one JSON line appended to `metrics.jsonl`, the file `trainer report` reads:
/// `{"tag":"train/loss","step":123,"value":1.23,"t":456.7}`, `t` being run seconds (the run's
/// seconds when the process started plus the seconds since). Each process start first appends
/// `{"tag":"run/start","step":GENERATION,"value":RUN_SECONDS,"t":RUN_SECONDS}`.
pub struct JsonLines {
    file: std::fs::File,
    path: PathBuf,
    start: Instant,
    offset: f64,
    warned: bool,
}

#[derive(serde::Serialize)]
struct JsonLine<'a> {
    tag: &'a str,
    step: u64,
    value: f64,
    t: f64,
}

impl JsonLines {
    /// Opens `path` for appending (once per process); `seconds` and `generation` are the run's
    /// so far.
    pub fn open(path: &Path, seconds: f64, generation: u64) -> std::io::Result<JsonLines> {
        let file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)?;
        let offset = if seconds.is_finite() { seconds } else { 0.0 };
        let mut me = JsonLines {
            file,
            path: path.to_path_buf(),
            start: Instant::now(),
            offset,
            warned: false,
        };
        me.scalar("run/start", offset, generation);
        Ok(me)
    }
}

/// Per-step training scalars (`train/*` at training steps) are kept for one step in this
/// many: the report's curves need no more, and the file stays small (TensorBoard keeps all).
pub const JSONL_STEP_STRIDE: u64 = 10;

impl Metrics for JsonLines {
    fn scalar(&mut self, tag: &str, value: f64, step: u64) {
        let per_step = matches!(
            tag,
            "train/loss"
                | "train/policy_loss"
                | "train/value_loss"
                | "train/soft_policy_loss"
                | "train/opponent_policy_loss"
                | "train/grad_norm"
                | "train/lr"
        );
        if !value.is_finite() || (per_step && !step.is_multiple_of(JSONL_STEP_STRIDE)) {
            return;
        }
        // Milliseconds are enough and keep the lines short.
        let t = ((self.offset + self.start.elapsed().as_secs_f64()) * 1000.0).round() / 1000.0;
        let line = JsonLine {
            tag,
            step,
            value,
            t,
        };
        let Ok(mut bytes) = serde_json::to_vec(&line) else {
            return;
        };
        bytes.push(b'\n');
        // One write of the whole line to a file opened for appending: lines of concurrent
        // writers do not interleave, and a crash leaves at most the last line cut short.
        if let Err(e) = self.file.write_all(&bytes) {
            if !self.warned {
                self.warned = true;
                eprintln!(
                    "warning: {}: {e}: scalars are not recorded",
                    self.path.display()
                );
            }
        }
    }
    fn flush(&mut self) {}
}

/// Every scalar to each of several sinks (TensorBoard and `metrics.jsonl`).
pub struct Tee(pub Vec<Box<dyn Metrics>>);

impl Metrics for Tee {
    fn scalar(&mut self, tag: &str, value: f64, step: u64) {
        for m in &mut self.0 {
            m.scalar(tag, value, step);
        }
    }
    fn flush(&mut self) {
        for m in &mut self.0 {
            m.flush();
        }
    }
}

/// Discards everything (workers in their own processes: the trainer owns TensorBoard).
pub struct NoMetrics;

impl Metrics for NoMetrics {
    fn scalar(&mut self, _: &str, _: f64, _: u64) {}
    fn flush(&mut self) {}
}

/// Shared by the threads of a process: log lines, TensorBoard and the progress bars.
#[derive(Clone)]
pub struct Reporter {
    inner: Arc<Inner>,
}

struct Inner {
    log: Option<PathBuf>,
    start: Instant,
    bars: MultiProgress,
    tb: Mutex<Box<dyn Metrics>>,
}

impl Reporter {
    /// Logs to `log` (appending) and stdout; scalars go to `metrics`.
    pub fn new(log: Option<&Path>, metrics: Box<dyn Metrics>) -> Reporter {
        let bars = MultiProgress::new();
        if !std::io::stderr().is_terminal() {
            bars.set_draw_target(ProgressDrawTarget::hidden());
        }
        Reporter {
            inner: Arc::new(Inner {
                log: log.map(Path::to_path_buf),
                start: Instant::now(),
                bars,
                tb: Mutex::new(metrics),
            }),
        }
    }

    /// Opens TensorBoard in `dir/tb`; without a writable directory, scalars are dropped with
    /// one warning (the writer of tensorboard-rs panics on I/O errors, so it is not created).
    pub fn open_tensorboard(dir: &Path) -> Box<dyn Metrics> {
        let tb = dir.join("tb");
        let probe = tb.join(".probe");
        let ok = std::fs::create_dir_all(&tb).is_ok()
            && std::fs::write(&probe, b"").is_ok()
            && std::fs::remove_file(&probe).is_ok();
        if !ok {
            eprintln!(
                "warning: {} is not writable: no TensorBoard events",
                tb.display()
            );
            return Box::new(NoMetrics);
        }
        Box::new(TensorBoard(
            tensorboard_rs::summary_writer::SummaryWriter::new(tb),
        ))
    }

    /// The run's scalars: TensorBoard in `dir/tb` and JSON lines appended to
    /// `dir/metrics.jsonl` (`seconds` and `generation`: the run's so far, from its state).
    pub fn open_run_metrics(dir: &Path, seconds: f64, generation: u64) -> Box<dyn Metrics> {
        let tb = Reporter::open_tensorboard(dir);
        let path = dir.join("metrics.jsonl");
        match JsonLines::open(&path, seconds, generation) {
            Ok(j) => Box::new(Tee(vec![tb, Box::new(j)])),
            Err(e) => {
                eprintln!("warning: {}: {e}: no metrics.jsonl", path.display());
                tb
            }
        }
    }

    /// Seconds since the reporter was made.
    pub fn elapsed(&self) -> f64 {
        self.inner.start.elapsed().as_secs_f64()
    }

    /// A log line, stamped with the elapsed time.
    pub fn log(&self, line: &str) {
        let stamp = format!("[{:>8.1}s] {line}", self.elapsed());
        if self.inner.bars.is_hidden() {
            println!("{stamp}");
        } else {
            let _ = self.inner.bars.println(&stamp);
        }
        if let Some(path) = &self.inner.log {
            if let Ok(mut f) = std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(path)
            {
                let _ = writeln!(f, "{stamp}");
            }
        }
    }

    /// A scalar for TensorBoard.
    pub fn scalar(&self, tag: &str, value: f64, step: u64) {
        if let Ok(mut tb) = self.inner.tb.lock() {
            tb.scalar(tag, value, step);
        }
    }

    /// Flushes TensorBoard.
    pub fn flush(&self) {
        if let Ok(mut tb) = self.inner.tb.lock() {
            tb.flush();
        }
    }

    /// A bar counting up to `len` (0: a counter without an end).
    pub fn bar(&self, len: u64, what: &str) -> ProgressBar {
        let pb = if len == 0 {
            ProgressBar::no_length()
        } else {
            ProgressBar::new(len)
        };
        let pb = self.inner.bars.add(pb);
        let template = if len == 0 {
            "{msg:>12} {pos} {per_sec}"
        } else {
            "{msg:>12} [{bar:30}] {pos}/{len} {per_sec}"
        };
        pb.set_style(
            ProgressStyle::with_template(template)
                .expect("valid template")
                .progress_chars("=> "),
        );
        pb.set_message(what.to_string());
        pb
    }
}

/// CPU seconds used by the calling thread so far (Linux: /proc/thread-self/stat; elsewhere 0).
pub fn thread_cpu_seconds() -> f64 {
    let Ok(stat) = std::fs::read_to_string("/proc/thread-self/stat") else {
        return 0.0;
    };
    // Fields after the command name (which is in parentheses and may hold spaces).
    let Some(rest) = stat.rsplit_once(')').map(|(_, r)| r) else {
        return 0.0;
    };
    let f: Vec<&str> = rest.split_whitespace().collect();
    // utime and stime are fields 14 and 15 of the line, 12 and 13 after the name.
    let ticks: f64 = [11, 12]
        .iter()
        .filter_map(|&i| f.get(i).and_then(|v| v.parse::<f64>().ok()))
        .sum();
    ticks / 100.0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_lines_keep_every_tenth_training_step_and_every_other_scalar() {
        let dir = std::env::temp_dir().join(format!("jsonl-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("metrics.jsonl");
        let _ = std::fs::remove_file(&path);
        let mut m = JsonLines::open(&path, 12.5, 4).unwrap();
        for step in 0..25 {
            m.scalar("train/loss", 1.0, step);
        }
        m.scalar("data/games", 7.0, 3);
        m.scalar("elo/ladder", f64::NAN, 3);
        let text = std::fs::read_to_string(&path).unwrap();
        let lines: Vec<serde_json::Value> = text
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        let tags: Vec<(&str, u64)> = lines
            .iter()
            .map(|v| (v["tag"].as_str().unwrap(), v["step"].as_u64().unwrap()))
            .collect();
        assert_eq!(
            tags,
            [
                ("run/start", 4),
                ("train/loss", 0),
                ("train/loss", 10),
                ("train/loss", 20),
                ("data/games", 3)
            ]
        );
        // Run seconds start from the run's own.
        assert!(lines[1]["t"].as_f64().unwrap() >= 12.5);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
