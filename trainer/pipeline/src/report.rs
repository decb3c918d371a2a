//! `trainer report`: one self-contained HTML page of a run (a summary table and inline SVG
//! plots, no external references), read from the run directory only: `state.json` (totals and
//! the evaluation history), `metrics.jsonl` (every scalar, see [`crate::metrics::JsonLines`]),
//! `config.toml` (the names) and `log.txt` (time shares of runs older than their scalars).
//!
//! Everything read is checked like user input: a line of `metrics.jsonl` that is not a scalar
//! record (a cut-short last line, damage) is skipped and counted, a missing file is said on the
//! page, and only a missing or damaged `state.json` is an error.

use crate::error::Result;
use crate::run::{GenerationReport, RunState};
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::io::{BufRead, Read};
use std::path::{Path, PathBuf};

/// The page's figures in order: (element id, title).
pub const FIGURES: [(&str, &str); 8] = [
    ("fig-elo", "Elo on the ladder"),
    ("fig-data", "Games and samples"),
    ("fig-loss", "Training losses"),
    ("fig-diagnostics", "Policy entropy and value accuracy"),
    ("fig-game-length", "Self-play game length"),
    ("fig-rates", "Draw, resign and false-resign rates"),
    ("fig-speed", "Self-play speed"),
    ("fig-time", "Time shares"),
];

/// Longest line of metrics.jsonl taken (a record is under 200 bytes).
const MAX_LINE: usize = 4096;
/// Points drawn per series at most; longer series are averaged over runs of points.
const MAX_POINTS: usize = 1000;
/// Largest magnitude of a value or time drawn (beyond it a record is damaged).
const MAX_MAGNITUDE: f64 = 1e15;
/// Size of each plot (pixels).
const PLOT_SIZE: (u32, u32) = (1000, 380);
/// Series colours (Tableau 10).
const COLOURS: [RGBColor; 8] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(214, 39, 40),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(23, 190, 207),
];

/// One recorded value of a scalar.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Point {
    /// Training step or generation, as the tag says.
    pub step: u64,
    /// The value.
    pub value: f64,
    /// Run seconds when it was recorded.
    pub t: f64,
}

/// A record of metrics.jsonl as read back (unknown fields are allowed for later additions).
#[derive(serde::Deserialize)]
struct Record {
    tag: String,
    step: u64,
    value: f64,
    t: f64,
}

/// What metrics.jsonl holds.
#[derive(Debug, Default)]
pub struct MetricsLog {
    /// The file was there.
    pub found: bool,
    /// Why it could not be read (to the end), if so.
    pub problem: Option<String>,
    /// Records read (those of tags the report does not draw included).
    pub records: u64,
    /// Lines skipped: not a scalar record, or out of any plausible range.
    pub skipped: u64,
    /// Process starts (`run/start` records).
    pub starts: u64,
    /// The records of the tags the report draws, by tag, in step order, one per step (the
    /// last: a resumed trainer records again the steps after its checkpoint).
    pub series: BTreeMap<String, Vec<Point>>,
}

/// Whether the report draws `tag` (the others are counted, not kept: the per-step tags not
/// drawn would double the memory of a long run).
fn drawn(tag: &str) -> bool {
    const PREFIXES: [&str; 6] = [
        "elo/",
        "ladder/rung/",
        "time/",
        "data/",
        "selfplay/",
        "speed/",
    ];
    const TAGS: [&str; 7] = [
        "train/loss",
        "train/policy_loss",
        "train/value_loss",
        "train/soft_policy_loss",
        "train/opponent_policy_loss",
        "train/policy_entropy",
        "train/value_accuracy",
    ];
    TAGS.contains(&tag) || PREFIXES.iter().any(|p| tag.starts_with(p))
}

/// A line as a record, or None when it is not one.
fn parse_record(line: &[u8]) -> Option<Record> {
    let r: Record = serde_json::from_slice(line).ok()?;
    let plausible = |v: f64| v.is_finite() && v.abs() <= MAX_MAGNITUDE;
    let ok = !r.tag.is_empty()
        && plausible(r.value)
        && plausible(r.t)
        && (r.step as f64) <= MAX_MAGNITUDE;
    ok.then_some(r)
}

impl MetricsLog {
    /// Reads `path`; a missing or unreadable file gives an empty log that says so.
    pub fn read(path: &Path) -> MetricsLog {
        let mut log = MetricsLog::default();
        let file = match std::fs::File::open(path) {
            Ok(f) => f,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return log,
            Err(e) => {
                log.found = true;
                log.problem = Some(e.to_string());
                return log;
            }
        };
        log.found = true;
        if let Err(e) = log.read_lines(std::io::BufReader::new(file)) {
            log.problem = Some(e.to_string());
        }
        for points in log.series.values_mut() {
            // Stable: among records of one step the file order stays, and the last is kept.
            points.sort_by_key(|p| p.step);
            points.reverse();
            points.dedup_by_key(|p| p.step);
            points.reverse();
        }
        log
    }

    fn read_lines(&mut self, mut r: impl BufRead) -> std::io::Result<()> {
        let mut buf = Vec::new();
        loop {
            buf.clear();
            let n = r
                .by_ref()
                .take(MAX_LINE as u64 + 1)
                .read_until(b'\n', &mut buf)?;
            if n == 0 {
                return Ok(());
            }
            if buf.len() > MAX_LINE && buf.last() != Some(&b'\n') {
                self.skipped += 1;
                r.skip_until(b'\n')?;
                continue;
            }
            if buf.trim_ascii().is_empty() {
                continue;
            }
            let Some(rec) = parse_record(buf.trim_ascii()) else {
                self.skipped += 1;
                continue;
            };
            self.records += 1;
            if rec.tag == "run/start" {
                self.starts += 1;
            } else if drawn(&rec.tag) {
                self.series.entry(rec.tag).or_default().push(Point {
                    step: rec.step,
                    value: rec.value,
                    t: rec.t,
                });
            }
        }
    }

    /// The points of `tag` (none when it was not recorded).
    pub fn get(&self, tag: &str) -> &[Point] {
        self.series.get(tag).map_or(&[], Vec::as_slice)
    }
}

/// Everything the page is made of.
struct RunData {
    dir: PathBuf,
    name: String,
    variant: String,
    model: String,
    state: RunState,
    metrics: MetricsLog,
    /// CPU shares (self-play, training, evaluation) by generation, from log.txt.
    log_shares: Vec<(u64, [f64; 3])>,
    notes: Vec<String>,
}

impl RunData {
    fn load(dir: &Path) -> Result<RunData> {
        let state = crate::run::read_state(&dir.join("state.json"))?;
        let mut notes = Vec::new();
        let dir_name = dir
            .canonicalize()
            .unwrap_or_else(|_| dir.to_path_buf())
            .file_name()
            .map_or_else(|| dir.display().to_string(), |n| n.to_string_lossy().into());
        let cfg_path = dir.join("config.toml");
        let cfg = std::fs::read_to_string(&cfg_path)
            .map_err(|e| e.to_string())
            .and_then(|t| {
                t.parse::<toml::Table>()
                    .map_err(|e| e.message().to_string())
            });
        let cfg = cfg.unwrap_or_else(|e| {
            notes.push(format!("{}: {e}", cfg_path.display()));
            toml::Table::new()
        });
        let key = |k: &str| cfg.get(k).and_then(|v| v.as_str()).map(str::to_string);
        let metrics = MetricsLog::read(&dir.join("metrics.jsonl"));
        let mpath = dir.join("metrics.jsonl").display().to_string();
        if !metrics.found {
            notes.push(format!(
                "{mpath} is missing: only the evaluations of state.json are plotted (a run \
                 older than metrics.jsonl has its curves in tb/ only)"
            ));
        }
        if let Some(p) = &metrics.problem {
            notes.push(format!("{mpath}: {p} (read up to there)"));
        }
        if metrics.skipped > 0 {
            notes.push(format!(
                "{mpath}: {} skipped (not a scalar record: a line cut short or damaged)",
                match metrics.skipped {
                    1 => "1 line".to_string(),
                    n => format!("{n} lines"),
                }
            ));
        }
        Ok(RunData {
            name: key("name").unwrap_or(dir_name),
            variant: key("variant").unwrap_or_else(|| "?".into()),
            model: key("model").unwrap_or_else(|| "?".into()),
            log_shares: log_shares(&dir.join("log.txt")),
            dir: dir.to_path_buf(),
            state,
            metrics,
            notes,
        })
    }

    /// Run seconds at which `generation` was published (state.json), else `t`.
    fn seconds_of(&self, generation: u64, t: f64) -> f64 {
        self.state
            .history
            .iter()
            .rev()
            .find(|h| h.generation == generation && h.seconds.is_finite())
            .map_or(t, |h| h.seconds)
    }
}

/// The CPU shares in the final lines of log.txt ("generation N, ... CPU shares of the machine:
/// self-play A%, training B%, evaluation C%"), by generation.
fn log_shares(path: &Path) -> Vec<(u64, [f64; 3])> {
    let mut bytes = Vec::new();
    let read = std::fs::File::open(path).and_then(|f| f.take(64 << 20).read_to_end(&mut bytes));
    if read.is_err() {
        return Vec::new();
    }
    let text = String::from_utf8_lossy(&bytes);
    let number_after = |s: &str, key: &str, end: char| -> Option<f64> {
        let rest = &s[s.find(key)? + key.len()..];
        rest[..rest.find(end)?].trim().parse().ok()
    };
    text.lines()
        .filter_map(|line| {
            let marker = "CPU shares of the machine:";
            let shares = &line[line.find(marker)? + marker.len()..];
            let gen = number_after(line, "generation ", ',')?;
            let s = [
                number_after(shares, "self-play ", '%')?,
                number_after(shares, "training ", '%')?,
                number_after(shares, "evaluation ", '%')?,
            ];
            let ok = (0.0..=MAX_MAGNITUDE).contains(&gen) && s.iter().all(|v| v.is_finite());
            ok.then(|| (gen as u64, s.map(|v| v / 100.0)))
        })
        .collect()
}

/// One line (with points) of a chart, and optional vertical error bars (x, low, high).
#[derive(Default)]
struct Series {
    name: String,
    points: Vec<(f64, f64)>,
    bars: Vec<(f64, f64, f64)>,
}

impl Series {
    fn new(name: &str, points: Vec<(f64, f64)>) -> Series {
        Series {
            name: name.to_string(),
            points,
            bars: Vec::new(),
        }
    }
}

/// A chart: series on the left axis, optionally on a right one, and labelled horizontal lines.
#[derive(Default)]
struct Chart {
    x_desc: String,
    y_desc: String,
    right_desc: String,
    left: Vec<Series>,
    right: Vec<Series>,
    rungs: Vec<(String, f64)>,
}

impl Chart {
    fn new(x_desc: &str, y_desc: &str) -> Chart {
        Chart {
            x_desc: x_desc.into(),
            y_desc: y_desc.into(),
            ..Chart::default()
        }
    }

    fn is_empty(&self) -> bool {
        self.left
            .iter()
            .chain(&self.right)
            .all(|s| s.points.is_empty())
    }
}

/// The range of `values` padded by 5%, and by `headroom` of the plot's height at the top (a
/// single value gets a unit-wide range).
fn range(values: impl Iterator<Item = f64>, headroom: f64) -> std::ops::Range<f64> {
    let (lo, hi) = values
        .filter(|v| v.is_finite())
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), v| {
            (a.min(v), b.max(v))
        });
    if lo > hi {
        return 0.0..1.0;
    }
    let pad = if hi - lo < 1e-9 * hi.abs().max(1.0) {
        0.5 * hi.abs().max(1.0)
    } else {
        0.05 * (hi - lo)
    };
    let span = hi - lo + 2.0 * pad;
    lo - pad..hi + pad + span * headroom / (1.0 - headroom)
}

/// A tick label: integers as such, else at most three decimals.
fn tick(v: &f64) -> String {
    if v.abs() >= 1e4 || v.fract() == 0.0 {
        return format!("{v:.0}");
    }
    let s = format!("{v:.3}");
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

/// The y values of `series`: points and error bars.
fn ys(series: &[Series]) -> impl Iterator<Item = f64> + '_ {
    series.iter().flat_map(|s| {
        let bars = s.bars.iter().flat_map(|&(_, lo, hi)| [lo, hi]);
        s.points.iter().map(|p| p.1).chain(bars)
    })
}

type PlotError = DrawingAreaErrorKind<std::io::Error>;

/// The chart as an SVG element; "no data yet" inside it when it has no points.
fn svg(chart: &Chart) -> String {
    let mut out = String::new();
    let drawn = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        let mut s = String::new();
        let r = draw(chart, &mut s);
        (r, s)
    }));
    match drawn {
        Ok((Ok(()), s)) => out = s,
        Ok((Err(e), _)) => {
            let _ = message_svg(&mut out, &format!("could not draw: {e}"));
        }
        Err(_) => {
            let _ = message_svg(&mut out, "could not draw this plot");
        }
    }
    out
}

fn message_svg(out: &mut String, text: &str) -> Result<(), PlotError> {
    let root = SVGBackend::with_string(out, PLOT_SIZE).into_drawing_area();
    root.fill(&WHITE)?;
    message(&root, text)?;
    root.present()
}

fn message(root: &DrawingArea<SVGBackend, Shift>, text: &str) -> Result<(), PlotError> {
    let style = ("sans-serif", 22)
        .into_font()
        .color(&RGBColor(120, 120, 120))
        .pos(Pos::new(HPos::Center, VPos::Center));
    let (w, h) = (PLOT_SIZE.0 as i32, PLOT_SIZE.1 as i32);
    let frame = RGBColor(210, 210, 210).stroke_width(1);
    root.draw(&Rectangle::new([(12, 12), (w - 12, h - 12)], frame))?;
    root.draw(&Text::new(text, (w / 2, h / 2), style))
}

fn draw(chart: &Chart, out: &mut String) -> Result<(), PlotError> {
    let root = SVGBackend::with_string(out, PLOT_SIZE).into_drawing_area();
    root.fill(&WHITE)?;
    if chart.is_empty() {
        message(&root, "no data yet")?;
        return root.present();
    }
    let all = || chart.left.iter().chain(&chart.right);
    let xs = range(all().flat_map(|s| s.points.iter().map(|p| p.0)), 0.0);
    let rungs = chart.rungs.iter().map(|r| r.1);
    // Room at the top for the legend (a row per series), above the data.
    let rows = (chart.left.len() + chart.right.len()) as f64;
    let headroom = ((rows * 20.0 + 16.0) / f64::from(PLOT_SIZE.1 - 60)).min(0.5);
    let y = range(ys(&chart.left).chain(rungs), headroom);
    let y2 = range(ys(&chart.right), headroom);
    let mut ctx = ChartBuilder::on(&root)
        .margin(12)
        .x_label_area_size(44)
        .y_label_area_size(70)
        .right_y_label_area_size(if chart.right.is_empty() { 0 } else { 70 })
        .build_cartesian_2d(xs.clone(), y)?
        .set_secondary_coord(xs.clone(), y2);
    ctx.configure_mesh()
        .x_label_formatter(&tick)
        .y_label_formatter(&tick)
        .x_desc(chart.x_desc.as_str())
        .y_desc(chart.y_desc.as_str())
        .label_style(("sans-serif", 14))
        .draw()?;
    if !chart.right.is_empty() {
        ctx.configure_secondary_axes()
            .y_label_formatter(&tick)
            .y_desc(chart.right_desc.as_str())
            .label_style(("sans-serif", 14))
            .draw()?;
    }
    for (name, e) in &chart.rungs {
        let grey = RGBColor(110, 110, 110);
        ctx.draw_series(DashedLineSeries::new(
            [(xs.start, *e), (xs.end, *e)],
            6,
            4,
            grey.stroke_width(1),
        ))?;
        let style = ("sans-serif", 13)
            .into_font()
            .color(&grey)
            .pos(Pos::new(HPos::Right, VPos::Bottom));
        ctx.draw_series([Text::new(name.clone(), (xs.end, *e), style)])?;
    }
    let mut colour = COLOURS.iter().cycle();
    for s in &chart.left {
        let c = *colour.next().expect("cycle");
        ctx.draw_series(s.bars.iter().map(|&(x, lo, hi)| {
            ErrorBar::new_vertical(x, lo, (lo + hi) / 2.0, hi, c.stroke_width(1), 6)
        }))?;
        ctx.draw_series(line(s, c))?
            .label(s.name.as_str())
            .legend(move |(x, y)| PathElement::new([(x, y), (x + 20, y)], c.stroke_width(2)));
    }
    for s in &chart.right {
        let c = *colour.next().expect("cycle");
        ctx.draw_secondary_series(line(s, c))?
            .label(format!("{} (right axis)", s.name))
            .legend(move |(x, y)| PathElement::new([(x, y), (x + 20, y)], c.stroke_width(2)));
    }
    ctx.configure_series_labels()
        .position(SeriesLabelPosition::UpperLeft)
        .background_style(WHITE.mix(0.85))
        .border_style(RGBColor(180, 180, 180))
        .label_font(("sans-serif", 14))
        .draw()?;
    root.present()
}

/// A series as a line, with a dot at each point when they are few enough to tell apart.
fn line<DB: DrawingBackend>(s: &Series, c: RGBColor) -> LineSeries<DB, (f64, f64)> {
    let dots = if s.points.len() <= 60 { 3 } else { 0 };
    LineSeries::new(s.points.clone(), c.stroke_width(2)).point_size(dots)
}

/// At most [`MAX_POINTS`] points: longer series are averaged over runs of consecutive points.
fn thin(points: Vec<(f64, f64)>) -> Vec<(f64, f64)> {
    if points.len() <= MAX_POINTS {
        return points;
    }
    let k = points.len().div_ceil(MAX_POINTS);
    points
        .chunks(k)
        .map(|c| {
            let n = c.len() as f64;
            let (x, y) = c.iter().fold((0.0, 0.0), |(a, b), p| (a + p.0, b + p.1));
            (x / n, y / n)
        })
        .collect()
}

/// How run seconds are shown: the divisor and the axis text.
fn time_unit(max_seconds: f64) -> (f64, &'static str) {
    if max_seconds < 600.0 {
        (1.0, "run time (s)")
    } else if max_seconds < 3.0 * 3600.0 {
        (60.0, "run time (min)")
    } else {
        (3600.0, "run time (h)")
    }
}

/// (generation, value) of `tag`.
fn by_step(data: &RunData, tag: &str) -> Vec<(f64, f64)> {
    let p = data.metrics.get(tag);
    thin(p.iter().map(|p| (p.step as f64, p.value)).collect())
}

/// The ladder's Elo, interval and rungs from metrics.jsonl, or None without ladder records.
fn ladder_chart(data: &RunData) -> Option<(Chart, String)> {
    let m = &data.metrics;
    let ladder = m.get("elo/ladder");
    if ladder.is_empty() {
        return None;
    }
    let x_of = |p: &Point| data.seconds_of(p.step, p.t);
    let (unit, x_desc) = time_unit(ladder.iter().map(x_of).fold(0.0, f64::max));
    let at = |tag: &str, step: u64| {
        let v = m.get(tag);
        v.binary_search_by_key(&step, |p| p.step)
            .ok()
            .map(|i| v[i].value)
    };
    let mut s = Series::new("ladder Elo (95% interval)", Vec::new());
    for p in ladder {
        let x = x_of(p) / unit;
        s.points.push((x, p.value));
        if let (Some(lo), Some(hi)) = (at("elo/ladder_low", p.step), at("elo/ladder_high", p.step))
        {
            s.bars.push((x, lo, hi));
        }
    }
    let mut c = Chart::new(x_desc, "Elo");
    c.left.push(s);
    for (tag, points) in m.series.range("ladder/rung/".to_string()..) {
        let Some(name) = tag.strip_prefix("ladder/rung/") else {
            break;
        };
        if let Some(last) = points.iter().max_by(|a, b| a.t.total_cmp(&b.t)) {
            c.rungs.push((name.to_string(), last.value));
        }
    }
    let caption = "The run's Elo on the calibrated ladder of fixed opponents (elo/ladder, with \
                   its 95% interval as error bars) at the run time each generation was \
                   published; dashed lines: the rungs and their calibrated Elo.";
    Some((c, caption.to_string()))
}

/// The series name of a match's opponent: the previous generation's matches form one series.
fn opponent_series(h: &GenerationReport, opponent: &str) -> String {
    let previous = opponent
        .strip_prefix("gen")
        .and_then(|g| g.parse::<u64>().ok())
        .is_some_and(|g| g != 0 && g + 1 >= h.generation);
    if previous {
        "vs the previous network".into()
    } else {
        format!("vs {opponent}")
    }
}

fn elo_chart(data: &RunData) -> (Chart, String) {
    if let Some(c) = ladder_chart(data) {
        return c;
    }
    let hist = &data.state.history;
    let (unit, x_desc) = time_unit(hist.iter().map(|h| h.seconds).fold(0.0, f64::max));
    let mut by_opponent: BTreeMap<String, Series> = BTreeMap::new();
    for h in hist.iter().filter(|h| h.seconds.is_finite()) {
        for m in h.matches.iter().filter(|m| m.elo.is_finite()) {
            let name = opponent_series(h, &m.opponent);
            let s = by_opponent.entry(name.clone()).or_insert_with(|| Series {
                name,
                ..Series::default()
            });
            let x = h.seconds / unit;
            s.points.push((x, m.elo));
            if m.elo_low.is_finite() && m.elo_high.is_finite() {
                s.bars.push((x, m.elo_low, m.elo_high));
            }
        }
    }
    let mut c = Chart::new(x_desc, "Elo difference");
    c.left = by_opponent.into_values().collect();
    let caption = "No ladder data yet (elo/ladder in metrics.jsonl): instead, the Elo of each \
                   evaluated generation against each opponent of its evaluation (state.json \
                   history, 95% intervals as error bars), at the run time it was published. \
                   Against the previous network each point is a gain, not a rating.";
    (c, caption.to_string())
}

fn data_chart(data: &RunData) -> Chart {
    let m = &data.metrics;
    let (games, samples) = (m.get("data/games"), m.get("data/samples"));
    let max_t = games.iter().chain(samples).map(|p| p.t);
    let max_t = max_t.fold(data.state.seconds, f64::max);
    let (unit, x_desc) = time_unit(max_t);
    let over_time = |p: &[Point]| thin(p.iter().map(|p| (p.t / unit, p.value)).collect());
    let mut c = Chart::new(x_desc, "games");
    c.right_desc = "samples".into();
    let st = &data.state;
    if games.is_empty() && samples.is_empty() && st.seconds > 0.0 {
        // The run starts with no games: a line from there to the totals of the state.
        let x = st.seconds / unit;
        c.left.push(Series::new(
            "games (state.json)",
            vec![(0.0, 0.0), (x, st.total_games as f64)],
        ));
        c.right.push(Series::new(
            "samples (state.json)",
            vec![(0.0, 0.0), (x, st.total_samples as f64)],
        ));
    } else {
        c.left.push(Series::new("games", over_time(games)));
        c.right.push(Series::new("samples", over_time(samples)));
    }
    c
}

fn loss_chart(data: &RunData) -> Chart {
    let mut c = Chart::new("training step", "loss");
    for (tag, name) in [
        ("train/loss", "total"),
        ("train/policy_loss", "policy"),
        ("train/value_loss", "value"),
    ] {
        c.left.push(Series::new(name, by_step(data, tag)));
    }
    // Runs with `training.soft_policy_weight` or `opponent_policy_weight` > 0 only.
    for (tag, name) in [
        ("train/soft_policy_loss", "soft policy"),
        ("train/opponent_policy_loss", "opponent reply"),
    ] {
        let aux = by_step(data, tag);
        if !aux.is_empty() {
            c.left.push(Series::new(name, aux));
        }
    }
    c
}

fn diagnostics_chart(data: &RunData) -> Chart {
    let mut c = Chart::new("generation", "policy entropy (nats)");
    c.right_desc = "value accuracy".into();
    let entropy = by_step(data, "train/policy_entropy");
    c.left.push(Series::new("policy entropy", entropy));
    let acc = by_step(data, "train/value_accuracy");
    c.right.push(Series::new("value accuracy", acc));
    c
}

fn single_chart(data: &RunData, tag: &str, name: &str, y_desc: &str) -> Chart {
    let mut c = Chart::new("generation", y_desc);
    c.left.push(Series::new(name, by_step(data, tag)));
    c
}

fn rates_chart(data: &RunData) -> Chart {
    let mut c = Chart::new("generation", "fraction of games");
    for (tag, name) in [
        ("selfplay/draw_rate", "draws"),
        ("selfplay/resign_rate", "resigned"),
        (
            "selfplay/false_resign_rate",
            "false resigns (of no-resign games)",
        ),
    ] {
        c.left.push(Series::new(name, by_step(data, tag)));
    }
    c
}

fn time_chart(data: &RunData) -> (Chart, String) {
    let mut c = Chart::new("generation", "share of the machine's CPU");
    let names = ["self-play", "training", "evaluation"];
    let tags = ["time/selfplay_share", "time/train_share", "time/eval_share"];
    let mut caption = "Shares of the machine's CPU time taken by self-play, training and \
                       evaluation over each process of the run (time/*_share, recorded when a \
                       `trainer run` process ends, at its last generation)."
        .to_string();
    if tags.iter().all(|t| data.metrics.get(t).is_empty()) && !data.log_shares.is_empty() {
        for (i, name) in names.iter().enumerate() {
            let p = data.log_shares.iter().map(|(g, s)| (*g as f64, s[i]));
            c.left.push(Series::new(name, p.collect()));
        }
        caption.push_str(" Read from the final lines of log.txt.");
    } else {
        for (tag, name) in tags.iter().zip(names) {
            c.left.push(Series::new(name, by_step(data, tag)));
        }
    }
    (c, caption)
}

/// Text for HTML.
fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '&' => out.push_str("&amp;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

fn figure(out: &mut String, (id, title): (&str, &str), chart: &Chart, caption: &str) {
    let _ = write!(
        out,
        "<figure id=\"{id}\">\n<h2>{}</h2>\n{}<figcaption>{}</figcaption>\n</figure>\n",
        escape(title),
        svg(chart),
        escape(caption)
    );
}

fn summary(out: &mut String, data: &RunData) {
    let st = &data.state;
    let ladder = data.metrics.get("elo/ladder").last().map_or_else(
        || "none yet".to_string(),
        |p| {
            let at = |tag| {
                let v = data.metrics.get(tag);
                v.iter().find(|q| q.step == p.step).map(|q| q.value)
            };
            match (at("elo/ladder_low"), at("elo/ladder_high")) {
                (Some(lo), Some(hi)) => {
                    format!("{:.0} [{lo:.0}, {hi:.0}] (generation {})", p.value, p.step)
                }
                _ => format!("{:.0} (generation {})", p.value, p.step),
            }
        },
    );
    let secs = st.seconds;
    let rows = [
        ("run", data.name.clone()),
        ("directory", data.dir.display().to_string()),
        ("variant", data.variant.clone()),
        ("model", data.model.clone()),
        (
            "generations",
            format!(
                "{} (self-play network {}){}",
                st.generation,
                st.best,
                if st.complete { ", complete" } else { "" }
            ),
        ),
        ("games", st.total_games.to_string()),
        ("samples", st.total_samples.to_string()),
        ("steps", st.steps.to_string()),
        ("run seconds", format!("{secs:.0} ({:.1} h)", secs / 3600.0)),
        ("last ladder Elo", ladder),
        ("process starts", data.metrics.starts.to_string()),
    ];
    out.push_str("<table id=\"summary\">\n");
    for (k, v) in rows {
        let _ = writeln!(out, "<tr><th>{k}</th><td>{}</td></tr>", escape(&v));
    }
    out.push_str("</table>\n");
}

fn last_evaluation(out: &mut String, st: &RunState) {
    let Some(h) = st.history.last() else {
        return;
    };
    let _ = writeln!(
        out,
        "<h2>Last evaluation: generation {}{}</h2>\n<table id=\"last-evaluation\">\n<tr><th>opponent</th><th>wins</th><th>draws</th><th>losses</th><th>score</th><th>Elo (95% interval)</th></tr>",
        h.generation,
        if h.promoted { ", promoted" } else { "" }
    );
    for m in &h.matches {
        let _ = writeln!(
            out,
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{:.3}</td><td>{:+.0} [{:+.0}, {:+.0}]</td></tr>",
            escape(&m.opponent),
            m.wins,
            m.draws,
            m.losses,
            m.score,
            // Adding 0 turns -0 into 0.
            m.elo + 0.0,
            m.elo_low + 0.0,
            m.elo_high + 0.0
        );
    }
    out.push_str("</table>\n");
}

const STYLE: &str = "body{font-family:sans-serif;max-width:1040px;margin:1em auto;padding:0 1em;\
color:#222}table{border-collapse:collapse;margin:.5em 0}th,td{border:1px solid #ccc;\
padding:2px 8px;text-align:left}figure{margin:2em 0}figure h2{font-size:1.1em}\
figcaption{color:#555;font-size:.9em}svg{max-width:100%;height:auto}.notes{color:#a33}";

fn page(data: &RunData) -> String {
    let mut out = String::new();
    let title = format!("Run {}", data.name);
    let _ = write!(
        out,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>{}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n<h1>{}</h1>\n",
        escape(&title),
        escape(&title)
    );
    summary(&mut out, data);
    if !data.notes.is_empty() {
        out.push_str("<ul class=\"notes\" id=\"notes\">\n");
        for n in &data.notes {
            let _ = writeln!(out, "<li>{}</li>", escape(n));
        }
        out.push_str("</ul>\n");
    }
    last_evaluation(&mut out, &data.state);
    let (elo, elo_caption) = elo_chart(data);
    figure(&mut out, FIGURES[0], &elo, &elo_caption);
    let data_caption = "Games and samples stored (data/games, data/samples, recorded at each \
                        publication) over the run time.";
    figure(&mut out, FIGURES[1], &data_chart(data), data_caption);
    let loss_caption = "Training losses per step (train/loss, train/policy_loss, \
                        train/value_loss, and train/soft_policy_loss and train/opponent_policy_loss where \
                        trained; long runs averaged over runs of steps).";
    figure(&mut out, FIGURES[2], &loss_chart(data), loss_caption);
    let diag_caption = "Policy entropy and value accuracy of each published network on a \
                        batch of the replay window (train/policy_entropy, train/value_accuracy).";
    figure(&mut out, FIGURES[3], &diagnostics_chart(data), diag_caption);
    let length = single_chart(data, "selfplay/game_length", "plies per game", "plies");
    let length_caption = "Mean self-play game length per generation (selfplay/game_length).";
    figure(&mut out, FIGURES[4], &length, length_caption);
    let rates_caption = "Self-play draw and resign rates, and the false resigns among the games \
                         played without resigning (selfplay/draw_rate, selfplay/resign_rate, \
                         selfplay/false_resign_rate).";
    figure(&mut out, FIGURES[5], &rates_chart(data), rates_caption);
    let speed = single_chart(data, "speed/evals_per_s", "evaluations/s", "evaluations/s");
    let speed_caption = "Self-play network evaluations per second over each generation \
                         (speed/evals_per_s).";
    figure(&mut out, FIGURES[6], &speed, speed_caption);
    let (time, time_caption) = time_chart(data);
    figure(&mut out, FIGURES[7], &time, &time_caption);
    let _ = write!(
        out,
        "<footer>{} records of metrics.jsonl, written by <code>trainer report</code>.</footer>\n</body>\n</html>\n",
        data.metrics.records
    );
    out
}

/// The report of the run in `run_dir` as one self-contained HTML page.
pub fn render(run_dir: &Path) -> Result<String> {
    Ok(page(&RunData::load(run_dir)?))
}

/// Writes the report of `run_dir` to `out` (default `run_dir/report.html`) atomically and
/// returns its path.
pub fn write(run_dir: &Path, out: Option<&Path>) -> Result<PathBuf> {
    let html = render(run_dir)?;
    let path = out.map_or_else(|| run_dir.join("report.html"), Path::to_path_buf);
    model::write_atomic(&path, html.as_bytes())?;
    Ok(path)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::{JsonLines, Metrics};
    use crate::run::MatchReport;

    fn temp_run(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("report-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    fn matches(gen: u64, elo: f64) -> Vec<MatchReport> {
        let m = |opponent: String, elo: f64| MatchReport {
            opponent,
            wins: 7,
            draws: 2,
            losses: 3,
            score: 0.667,
            elo,
            elo_low: elo - 50.0,
            elo_high: elo + 50.0,
            broken: 0,
        };
        vec![m(format!("gen{}", gen - 1), 40.0), m("gen0".into(), elo)]
    }

    fn write_state(dir: &Path) {
        let history = (1..=3)
            .map(|g| GenerationReport {
                generation: g,
                seconds: 100.0 * g as f64,
                matches: matches(g, 100.0 * g as f64),
                promoted: true,
                ..GenerationReport::default()
            })
            .collect();
        let st = RunState {
            generation: 3,
            best: 3,
            total_games: 4321,
            total_samples: 98765,
            steps: 300,
            seconds: 345.0,
            complete: false,
            history,
        };
        std::fs::write(dir.join("state.json"), serde_json::to_vec(&st).unwrap()).unwrap();
        std::fs::write(
            dir.join("config.toml"),
            "name = \"synthetic\"\nvariant = \"minishogi\"\nmodel = \"b2c16\"\n",
        )
        .unwrap();
    }

    /// A metrics.jsonl with every drawn tag and `bad` hostile lines (the last one cut short).
    fn write_metrics(dir: &Path) -> u64 {
        let mut s = String::new();
        let mut line = |tag: &str, step: u64, value: f64, t: f64| {
            s.push_str(&format!(
                "{{\"tag\":\"{tag}\",\"step\":{step},\"value\":{value},\"t\":{t}}}\n"
            ));
        };
        line("run/start", 0, 0.0, 0.0);
        for step in 1..=300u64 {
            let x = step as f64;
            line("train/loss", step, 3.0 - x / 200.0, x);
            line("train/policy_loss", step, 2.0 - x / 300.0, x);
            line("train/value_loss", step, 1.0 - x / 600.0, x);
            line("train/lr", step, 0.01, x);
        }
        for g in 1..=3u64 {
            let t = 100.0 * g as f64;
            line("data/games", g, 1000.0 * g as f64, t);
            line("data/samples", g, 30000.0 * g as f64, t);
            line("train/policy_entropy", g, 3.0 - g as f64 * 0.1, t);
            line("train/value_accuracy", g, 0.4 + g as f64 * 0.05, t);
            line("selfplay/game_length", g, 61.5 + g as f64, t);
            line("selfplay/draw_rate", g, 0.1, t);
            line("selfplay/resign_rate", g, 0.2, t);
            line("selfplay/false_resign_rate", g, 0.03, t);
            line("speed/evals_per_s", g, 4567.0 + g as f64, t);
            line("elo/ladder", g, 700.0 + 56.7 * g as f64, t + 5.0);
            line("elo/ladder_low", g, 650.0 + 56.7 * g as f64, t + 5.0);
            line("elo/ladder_high", g, 750.0 + 56.7 * g as f64, t + 5.0);
            line("ladder/rung/random-mover", g, 0.0, t + 5.0);
            line("ladder/rung/mcts-64", g, 812.0, t + 5.0);
        }
        line("time/selfplay_share", 3, 0.6, 345.0);
        line("time/train_share", 3, 0.3, 345.0);
        line("time/eval_share", 3, 0.1, 345.0);
        s.push_str("not json at all\n");
        s.push_str("{\"tag\":\"train/loss\",\"step\":-1,\"value\":1,\"t\":1}\n");
        s.push_str("{\"tag\":\"train/loss\",\"step\":1,\"value\":1e300,\"t\":1}\n");
        s.push_str(&format!("{}\n", "x".repeat(MAX_LINE * 3)));
        let mut bytes = s.into_bytes();
        bytes.extend_from_slice(b"\xff\xfe\n{\"tag\":\"train/loss\",\"step\":301,\"val");
        std::fs::write(dir.join("metrics.jsonl"), bytes).unwrap();
        6
    }

    fn assert_self_contained(html: &str) {
        let stripped = html.replace("xmlns=\"http://www.w3.org/2000/svg\"", "");
        assert!(!stripped.contains("http://") && !stripped.contains("https://"));
        for bad in ["<script", "<link", "<img", "@import", "url("] {
            assert!(!stripped.contains(bad), "{bad}");
        }
    }

    fn figure_svg<'a>(html: &'a str, id: &str) -> &'a str {
        let start = html
            .find(&format!("<figure id=\"{id}\">"))
            .unwrap_or_else(|| panic!("no figure {id}"));
        let end = start + html[start..].find("</figure>").expect("closed figure");
        let fig = &html[start..end];
        assert!(fig.contains("<svg") && fig.contains("</svg>"), "{id}");
        assert!(fig.contains("<figcaption>"), "{id}");
        fig
    }

    #[test]
    fn a_run_with_metrics_has_every_plot_and_counts_bad_lines() {
        let dir = temp_run("full");
        write_state(&dir);
        let bad = write_metrics(&dir);
        let html = render(&dir).unwrap();
        assert_self_contained(&html);
        for (id, _) in FIGURES {
            let fig = figure_svg(&html, id);
            assert!(!fig.contains("no data yet"), "{id} has no data");
        }
        for number in [
            "4321",
            "98765",
            "300",
            "345",
            "synthetic",
            "minishogi",
            "b2c16",
        ] {
            assert!(html.contains(&format!("<td>{number}")), "{number}");
        }
        // The last ladder Elo and its interval, the rungs' labels.
        assert!(html.contains("870 [820, 920] (generation 3)"), "ladder");
        assert!(html.contains("random-mover") && html.contains("mcts-64"));
        assert!(
            html.contains(&format!("{bad} lines skipped")),
            "skipped count"
        );
        let log = MetricsLog::read(&dir.join("metrics.jsonl"));
        assert_eq!(log.skipped, bad);
        assert_eq!(log.starts, 1);
        assert_eq!(log.get("train/loss").len(), 300);
        assert!(log.get("train/lr").is_empty(), "undrawn tags are not kept");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn without_metrics_the_evaluations_of_the_state_are_plotted() {
        let dir = temp_run("state-only");
        write_state(&dir);
        let html = render(&dir).unwrap();
        assert_self_contained(&html);
        for (id, _) in FIGURES {
            figure_svg(&html, id);
        }
        assert!(html.contains("metrics.jsonl is missing"));
        assert!(figure_svg(&html, "fig-loss").contains("no data yet"));
        let elo = figure_svg(&html, "fig-elo");
        assert!(elo.contains("vs gen0") && elo.contains("vs the previous network"));
        assert!(elo.contains("No ladder data yet"));
        // Games and samples: the state's totals.
        assert!(!figure_svg(&html, "fig-data").contains("no data yet"));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_missing_or_damaged_state_is_an_error_naming_it() {
        let dir = temp_run("no-state");
        let e = format!("{:#}", render(&dir).unwrap_err());
        assert!(e.contains("state.json"), "{e}");
        std::fs::write(dir.join("state.json"), "{\"generation\": \"x\"").unwrap();
        let e = format!("{:#}", render(&dir).unwrap_err());
        assert!(
            e.contains("state.json") && e.contains("not a valid run state"),
            "{e}"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn hostile_names_are_escaped() {
        let dir = temp_run("hostile");
        write_state(&dir);
        std::fs::write(dir.join("config.toml"), "name = \"<script>x</script>\"\n").unwrap();
        let lines = [
            r#"{"tag":"elo/ladder","step":1,"value":5,"t":1}"#,
            r#"{"tag":"ladder/rung/<img src=x>","step":1,"value":7,"t":1}"#,
            r#"{"tag":"train/loss","step":18446744073709551615,"value":1,"t":1}"#,
            r#"{"tag":"speed/evals_per_s","step":1,"value":-0.0,"t":-1e14}"#,
        ];
        std::fs::write(dir.join("metrics.jsonl"), lines.join("\n")).unwrap();
        let html = render(&dir).unwrap();
        assert_self_contained(&html);
        assert!(html.contains("&lt;script&gt;") && html.contains("&lt;img src=x&gt;"));
        assert!(html.contains("1 line skipped"), "the step out of range");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn the_json_lines_sink_appends_run_seconds_over_resumes() {
        let dir = temp_run("sink");
        let path = dir.join("metrics.jsonl");
        let mut m = JsonLines::open(&path, 0.0, 0).unwrap();
        // Steps that the sink keeps (every tenth training step, see JSONL_STEP_STRIDE).
        m.scalar("train/loss", 1.5, 10);
        m.scalar("train/loss", f64::NAN, 20);
        m.scalar("train/loss", f64::INFINITY, 30);
        drop(m);
        let mut m = JsonLines::open(&path, 1000.0, 4).unwrap();
        m.scalar("elo/vs_gen0", 12.5, 4);
        m.flush();
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(text.starts_with("{\"tag\":\"run/start\",\"step\":0,\"value\":0.0,\"t\":"));
        assert_eq!(text.lines().count(), 4, "{text}");
        let log = MetricsLog::read(&path);
        assert_eq!((log.records, log.skipped, log.starts), (4, 0, 2));
        assert_eq!(log.get("train/loss").len(), 1);
        let p = log.get("elo/vs_gen0")[0];
        assert_eq!((p.step, p.value), (4, 12.5));
        assert!(p.t >= 1000.0 && p.t < 1100.0, "{}", p.t);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn time_shares_are_read_from_the_log_of_older_runs() {
        let dir = temp_run("log");
        let line = "[   600.2s] run complete after 600s: generation 7, 100 games, 2000 samples, 500 steps; self-play played 95% of the wall time (2 threads), CPU shares of the machine: self-play 61%, training 30%, evaluation 9% (its engines not counted)\n";
        std::fs::write(dir.join("log.txt"), format!("garbage\n{line}\u{fffd}\n")).unwrap();
        assert_eq!(
            log_shares(&dir.join("log.txt")),
            vec![(7, [0.61, 0.30, 0.09])]
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn write_puts_the_page_in_the_run_directory_atomically() {
        let dir = temp_run("write");
        write_state(&dir);
        let path = write(&dir, None).unwrap();
        assert_eq!(path, dir.join("report.html"));
        assert!(std::fs::read_to_string(&path)
            .unwrap()
            .starts_with("<!DOCTYPE html>"));
        let names: Vec<_> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert!(names.iter().all(|n| !n.contains(".tmp")), "{names:?}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
