//! The ladder: fixed opponents of one variant (Fairy-Stockfish at several skill levels, our
//! network-free search), calibrated once against each other, on which every evaluated
//! generation is placed by one maximum-likelihood Elo from all its games against them.
//!
//! A ladder is two files kept together: `NAME.toml` (the rungs, written by hand) and
//! `NAME.calibration.toml` (each rung's Elo, the pairings' tallies and the command that made
//! them, written by `trainer ladder calibrate`, which also writes every game to
//! `NAME.games.txt`). The calibrated Elo of a rung never changes during a run, so the ratings
//! of generations are comparable across the run and across runs.

use crate::config::AnchorConfig;
use crate::error::{IoOp, KeyError, PipelineError, Result};
use arena::elo::{Pairing, Rating, Results};
use arena::{MatchSettings, Opening, Player, Protocol, Tally, TimeControl};
use rules::Variant;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// One fixed opponent of a ladder.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Rung {
    /// Label in logs, files and TensorBoard.
    pub name: String,
    /// `mcts` (our search without a network) or `engine:CMD` (an external USI/UCI engine).
    pub player: String,
    /// Engine protocol: `usi` or `uci` (Fairy-Stockfish).
    #[serde(default = "default_protocol")]
    pub protocol: String,
    /// Engine options, e.g. `{ "Skill Level" = "5" }`.
    #[serde(default)]
    pub options: BTreeMap<String, String>,
    /// Simulations of `mcts`; `go nodes N` for an engine when `movetime` is 0.
    #[serde(default = "default_nodes")]
    pub nodes: u32,
    /// Milliseconds per move for both sides (0: node limits).
    #[serde(default)]
    pub movetime: u64,
}

fn default_protocol() -> String {
    "usi".into()
}

fn default_nodes() -> u32 {
    200
}

impl Rung {
    /// The time control of games against this rung.
    pub fn time_control(&self) -> TimeControl {
        if self.movetime > 0 {
            TimeControl::Movetime(self.movetime)
        } else {
            TimeControl::Nodes(self.nodes)
        }
    }

    /// Starts the player (an engine is started and checked now).
    pub fn player(&self, variant: &Arc<Variant>) -> Result<Player> {
        let options: Vec<(String, String)> = self
            .options
            .iter()
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        let protocol: Protocol = self.protocol.parse()?;
        let p = Player::from_spec(
            &self.player,
            protocol,
            &options,
            variant,
            self.nodes,
            model::Device::Cpu,
            &crate::ModelOpener,
        )
        .map_err(|source| PipelineError::Rung {
            name: self.name.clone(),
            source: Box::new(source),
        })?;
        Ok(p.with_engine_nodes(self.nodes))
    }

    /// The rung as an evaluation anchor (same player, same time control).
    pub fn as_anchor(&self, games: usize) -> AnchorConfig {
        AnchorConfig {
            name: self.name.clone(),
            player: self.player.clone(),
            protocol: self.protocol.clone(),
            options: self.options.clone(),
            nodes: self.nodes,
            movetime: self.movetime,
            games,
            every: 1,
        }
    }
}

/// The hand-written part of a ladder (`configs/ladders/NAME.toml`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LadderSpec {
    /// The variant every rung plays.
    pub variant: String,
    /// The rung whose Elo is 0 by definition.
    pub zero: String,
    /// Random plies of the calibration's shared openings.
    #[serde(default = "default_opening_plies")]
    pub opening_plies: u32,
    /// Plies after which a game is drawn (0: the variant's own limit).
    #[serde(default)]
    pub max_plies: u32,
    /// The rungs, weakest first.
    pub rungs: Vec<Rung>,
}

fn default_opening_plies() -> u32 {
    4
}

/// One pairing's result in a calibration, from `a`'s point of view.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PairingTally {
    /// First rung.
    pub a: String,
    /// Second rung.
    pub b: String,
    /// Wins of `a`.
    pub wins: u64,
    /// Draws.
    pub draws: u64,
    /// Losses of `a`.
    pub losses: u64,
}

/// A rung's calibrated rating.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RungRating {
    /// Elo (the zero rung: 0).
    pub elo: f64,
    /// Lower end of its 95% interval (the others held at their estimates).
    pub low: f64,
    /// Upper end.
    pub high: f64,
    /// Calibration games it played.
    pub games: u64,
}

/// The generated part of a ladder (`NAME.calibration.toml`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Calibration {
    /// The command that made it.
    pub command: String,
    /// When (UTC, seconds since 1970).
    pub unix_time: u64,
    /// The machine it ran on (cores, as the timed rungs depend on it).
    pub machine: String,
    /// Each rung's rating, by name.
    pub ratings: BTreeMap<String, RungRating>,
    /// The tallies they come from.
    pub pairings: Vec<PairingTally>,
}

/// A calibrated ladder.
#[derive(Clone, Debug)]
pub struct Ladder {
    /// Its name (the file stem).
    pub name: String,
    /// The rungs and settings.
    pub spec: LadderSpec,
    /// The ratings, one per rung in `spec.rungs` order.
    pub elo: Vec<f64>,
    /// The calibration they come from.
    pub calibration: Calibration,
}

/// Built-in ladders: (name, ladder file, calibration file).
const BUILTIN: &[(&str, &str, &str)] = &[
    (
        "minishogi",
        include_str!("../../../configs/ladders/minishogi.toml"),
        include_str!("../../../configs/ladders/minishogi.calibration.toml"),
    ),
    (
        "judkins",
        include_str!("../../../configs/ladders/judkins.toml"),
        include_str!("../../../configs/ladders/judkins.calibration.toml"),
    ),
    (
        "kyoto",
        include_str!("../../../configs/ladders/kyoto.toml"),
        include_str!("../../../configs/ladders/kyoto.calibration.toml"),
    ),
];

/// The calibration file beside a ladder file (`x/NAME.toml` -> `x/NAME.calibration.toml`).
pub fn calibration_path(ladder: &Path) -> PathBuf {
    ladder.with_extension("calibration.toml")
}

/// The games file beside a ladder file (`x/NAME.toml` -> `x/NAME.games.txt`).
pub fn games_path(ladder: &Path) -> PathBuf {
    ladder.with_extension("games.txt")
}

/// Where `name_or_path` is on disk: a path, or `configs/ladders/NAME.toml` when it exists.
pub fn resolve(name_or_path: &str) -> Option<PathBuf> {
    let p = Path::new(name_or_path);
    if name_or_path.ends_with(".toml") || name_or_path.contains('/') {
        return Some(p.to_path_buf());
    }
    let local = Path::new("configs/ladders").join(format!("{name_or_path}.toml"));
    local.exists().then_some(local)
}

impl LadderSpec {
    /// Parses and checks a ladder file; errors name the file, the key and the reason.
    pub fn from_toml(text: &str, file: &str) -> Result<LadderSpec> {
        let s: LadderSpec = toml::from_str(text).map_err(|e| toml_error(file, &e))?;
        s.validate().map_err(|e| e.in_file(file))?;
        Ok(s)
    }

    fn validate(&self) -> std::result::Result<(), KeyError> {
        if self.rungs.len() < 2 {
            return Err(KeyError::new("rungs", "a ladder needs at least two rungs"));
        }
        for (i, r) in self.rungs.iter().enumerate() {
            let key = format!("rungs[{i}]");
            check_opponent(&key, &r.name, &r.player, &r.protocol)?;
            if self.rungs[..i].iter().any(|o| o.name == r.name) {
                let why = format!("{:?} is used twice", r.name);
                return Err(KeyError::new(format!("{key}.name"), why));
            }
            if r.nodes == 0 {
                return Err(KeyError::new(format!("{key}.nodes"), "must be at least 1"));
            }
        }
        if self.index(&self.zero).is_none() {
            let why = format!("{:?} is not a rung", self.zero);
            return Err(KeyError::new("zero", why));
        }
        Ok(())
    }

    /// The index of the rung called `name`.
    pub fn index(&self, name: &str) -> Option<usize> {
        self.rungs.iter().position(|r| r.name == name)
    }
}

/// A TOML error of a ladder or calibration file: the file and the parser's message.
fn toml_error(file: &str, e: &toml::de::Error) -> PipelineError {
    PipelineError::Toml {
        file: file.to_string(),
        line: None,
        reason: e.message().to_string(),
    }
}

/// Checks a fixed opponent's keys (a ladder rung or an evaluation anchor), under `key`: its
/// name is a plain label, its player `mcts` or `engine:CMD`, its protocol `usi` or `uci`.
pub fn check_opponent(
    key: &str,
    name: &str,
    player: &str,
    protocol: &str,
) -> std::result::Result<(), KeyError> {
    if name.is_empty()
        || !name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c))
    {
        let why = "use letters, digits, '-', '_' or '.'";
        return Err(KeyError::new(format!("{key}.name"), why));
    }
    if player != "mcts" && !player.starts_with("engine:") {
        let why = "expected \"mcts\" or \"engine:COMMAND\"";
        return Err(KeyError::new(format!("{key}.player"), why));
    }
    if protocol.parse::<Protocol>().is_err() {
        let why = "expected \"usi\" or \"uci\"";
        return Err(KeyError::new(format!("{key}.protocol"), why));
    }
    Ok(())
}

impl Calibration {
    /// Parses a calibration file and checks it against its ladder: every rung rated, every
    /// rating finite, the zero rung at 0, pairings of known rungs.
    pub fn from_toml(text: &str, file: &str, spec: &LadderSpec) -> Result<Calibration> {
        let c: Calibration = toml::from_str(text).map_err(|e| toml_error(file, &e))?;
        c.check(spec).map_err(|e| e.in_file(file))?;
        Ok(c)
    }

    fn check(&self, spec: &LadderSpec) -> std::result::Result<(), KeyError> {
        for r in &spec.rungs {
            let Some(x) = self.ratings.get(&r.name) else {
                let why = format!(
                    "rung {:?} has no rating (calibrate the ladder again)",
                    r.name
                );
                return Err(KeyError::new("ratings", why));
            };
            if !(x.elo.is_finite() && x.low.is_finite() && x.high.is_finite()) {
                let key = format!("ratings.{}", r.name);
                return Err(KeyError::new(key, "not a finite rating"));
            }
        }
        if let Some(name) = self.ratings.keys().find(|n| spec.index(n).is_none()) {
            let key = format!("ratings.{name}");
            return Err(KeyError::new(key, "no such rung in the ladder"));
        }
        if self.ratings[&spec.zero].elo != 0.0 {
            let key = format!("ratings.{}", spec.zero);
            return Err(KeyError::new(key, "the zero rung must be at 0"));
        }
        for (i, p) in self.pairings.iter().enumerate() {
            if spec.index(&p.a).is_none() || spec.index(&p.b).is_none() || p.a == p.b {
                let why = format!("{:?} against {:?} is not a pairing of two rungs", p.a, p.b);
                return Err(KeyError::new(format!("pairings[{i}]"), why));
            }
        }
        Ok(())
    }

    /// Writes the calibration as TOML (atomically).
    pub fn save(&self, path: &Path) -> Result<()> {
        let text = format!(
            "# Generated by `trainer ladder calibrate`: do not edit by hand.\n{}",
            toml::to_string(self).map_err(|source| PipelineError::TomlOut {
                what: "the calibration",
                source,
            })?
        );
        model::write_atomic(path, text.as_bytes())?;
        Ok(())
    }
}

impl Ladder {
    /// Loads a ladder: `configs/ladders/NAME.toml` (and its calibration) when it exists, a
    /// path, or a built-in (`minishogi`, `judkins`).
    pub fn load(name_or_path: &str) -> Result<Ladder> {
        if let Some(path) = resolve(name_or_path) {
            return Ladder::load_path(&path);
        }
        let Some(&(name, spec, cal)) = BUILTIN.iter().find(|b| b.0 == name_or_path) else {
            let known: Vec<&str> = BUILTIN.iter().map(|b| b.0).collect();
            return Err(PipelineError::UnknownLadder {
                name: name_or_path.to_string(),
                known: known.join(", "),
            });
        };
        let spec = LadderSpec::from_toml(spec, &format!("{name}.toml"))?;
        let cal = Calibration::from_toml(cal, &format!("{name}.calibration.toml"), &spec)?;
        Ok(Ladder::new(name, spec, cal))
    }

    /// Loads the ladder file at `path` and the calibration beside it.
    pub fn load_path(path: &Path) -> Result<Ladder> {
        let (spec, _) = read_spec(path)?;
        let cp = calibration_path(path);
        let text = std::fs::read_to_string(&cp).map_err(|source| PipelineError::Uncalibrated {
            calibration: cp.clone(),
            ladder: path.to_path_buf(),
            source,
        })?;
        let cal = Calibration::from_toml(&text, &cp.display().to_string(), &spec)?;
        let name = path
            .file_stem()
            .map_or("ladder".into(), |s| s.to_string_lossy().into_owned());
        Ok(Ladder::new(&name, spec, cal))
    }

    fn new(name: &str, spec: LadderSpec, calibration: Calibration) -> Ladder {
        let elo = spec
            .rungs
            .iter()
            .map(|r| calibration.ratings[&r.name].elo)
            .collect();
        Ladder {
            name: name.to_string(),
            spec,
            elo,
            calibration,
        }
    }

    /// The rungs to play next for a player last rated `estimate` (None: not rated yet, taken
    /// as the weakest rung): the two rungs nearest the estimate, which are the most
    /// informative (a rung far below or above is won or lost every game), in ladder order.
    pub fn rungs_nearest(&self, estimate: Option<f64>) -> Vec<usize> {
        let weakest = self.elo.iter().copied().fold(f64::INFINITY, f64::min);
        let e = estimate.unwrap_or(weakest);
        let mut order: Vec<usize> = (0..self.elo.len()).collect();
        order.sort_by(|&a, &b| {
            (self.elo[a] - e)
                .abs()
                .total_cmp(&(self.elo[b] - e).abs())
                .then(a.cmp(&b))
        });
        let mut pair = order[..2].to_vec();
        pair.sort_unstable();
        pair
    }

    /// One rating from a player's tallies against rungs (index, tally).
    pub fn place(&self, tallies: &[(usize, Tally)]) -> Option<Rating> {
        let results: Vec<Results> = tallies
            .iter()
            .map(|(i, t)| Results {
                opponent_elo: self.elo[*i],
                games: t.n() as f64,
                points: t.wins as f64 + 0.5 * t.draws as f64,
            })
            .collect();
        arena::elo::place(&results)
    }
}

/// Settings of games against a rung: the rung's time control, the ladder's ply limit.
pub fn rung_settings(spec: &LadderSpec, rung: &Rung) -> MatchSettings {
    MatchSettings {
        tc: rung.time_control(),
        max_plies: spec.max_plies,
        ..MatchSettings::default()
    }
}

impl Ladder {
    /// Plays `games` games of `player` against rung `i` (its started player `rung`) over the
    /// shared `openings`: the tally from the player's side and one games-file line per game
    /// (the player called `player`).
    pub fn play_rung(
        &self,
        variant: &Arc<Variant>,
        player: &mut Player,
        i: usize,
        rung: &mut Player,
        openings: &[Opening],
        games: u32,
    ) -> Result<(Tally, String)> {
        let r = &self.spec.rungs[i];
        let settings = rung_settings(&self.spec, r);
        let mut lines = String::new();
        let mut broken = None;
        let t = arena::play_match(
            variant,
            player,
            rung,
            &settings,
            openings,
            games,
            &mut |g, _| {
                let pts = points(g.a_score());
                lines.push_str(&game_line("player", &r.name, pts, &g.record_line));
                lines.push('\n');
                broken = g.broken().then(|| g.reason.clone());
                broken.is_none()
            },
        )?;
        refuse_broken(broken, &r.name)?;
        Ok((t, lines))
    }
}

/// A game that a player lost by breaking (a crash, a timeout) stops a calibration or a
/// placement: counted as a result it would rate the engine's bugs, not its play.
fn refuse_broken(reason: Option<String>, what: &str) -> Result<()> {
    match reason {
        Some(reason) => Err(PipelineError::BrokenGame {
            what: what.to_string(),
            reason,
        }),
        None => Ok(()),
    }
}

fn points(s: arena::Score) -> f64 {
    match s {
        arena::Score::Win => 1.0,
        arena::Score::Draw => 0.5,
        arena::Score::Loss => 0.0,
    }
}

fn read_spec(path: &Path) -> Result<(LadderSpec, String)> {
    let text = std::fs::read_to_string(path).map_err(PipelineError::io(IoOp::Read, path))?;
    Ok((
        LadderSpec::from_toml(&text, &path.display().to_string())?,
        text,
    ))
}

/// The pairings a calibration plays: every two rungs at most `span` apart in the list.
pub fn pairings(rungs: usize, span: usize) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    for d in 1..=span.max(1) {
        for a in 0..rungs.saturating_sub(d) {
            out.push((a, a + d));
        }
    }
    out
}

/// One calibration game line of the games file: `A B POINTS_OF_A | RECORD`.
fn game_line(a: &str, b: &str, points: f64, record: &str) -> String {
    format!("{a} {b} {points} | {record}")
}

/// Reads a games file back into the pairings' tallies (in the order first seen). Errors name
/// the line.
pub fn read_games(text: &str, spec: &LadderSpec, file: &str) -> Result<Vec<PairingTally>> {
    let mut out: Vec<PairingTally> = Vec::new();
    for (n, line) in text.lines().enumerate() {
        if line.trim().is_empty() || line.starts_with('#') {
            continue;
        }
        let bad = |reason: &'static str| PipelineError::GamesLine {
            file: file.to_string(),
            line: n + 1,
            reason,
        };
        let (head, _) = line
            .split_once(" | ")
            .ok_or_else(|| bad("no ' | ' before the record"))?;
        let f: Vec<&str> = head.split_whitespace().collect();
        let [a, b, pts] = f[..] else {
            return Err(bad("expected `A B POINTS | RECORD`"));
        };
        if spec.index(a).is_none() || spec.index(b).is_none() || a == b {
            return Err(bad("not two different rungs of the ladder"));
        }
        let pts: f64 = pts.parse().map_err(|_| bad("points are not a number"))?;
        let i = match out.iter().position(|p| p.a == a && p.b == b) {
            Some(i) => i,
            None => {
                out.push(PairingTally {
                    a: a.into(),
                    b: b.into(),
                    wins: 0,
                    draws: 0,
                    losses: 0,
                });
                out.len() - 1
            }
        };
        match pts {
            1.0 => out[i].wins += 1,
            0.5 => out[i].draws += 1,
            0.0 => out[i].losses += 1,
            _ => return Err(bad("points must be 1, 0.5 or 0")),
        }
    }
    Ok(out)
}

/// The ratings of the rungs from the pairings' tallies (the zero rung at 0).
pub fn fit_tallies(
    spec: &LadderSpec,
    tallies: &[PairingTally],
) -> Result<BTreeMap<String, RungRating>> {
    let idx = |n: &str| {
        spec.index(n).ok_or_else(|| PipelineError::NotARung {
            name: n.to_string(),
        })
    };
    let mut ps = Vec::new();
    for t in tallies {
        let games = (t.wins + t.draws + t.losses) as f64;
        ps.push(Pairing {
            a: idx(&t.a)?,
            b: idx(&t.b)?,
            games,
            points: t.wins as f64 + 0.5 * t.draws as f64,
        });
    }
    let zero = idx(&spec.zero)?;
    let r = arena::elo::fit(spec.rungs.len(), zero, &ps).map_err(|e| PipelineError::Fit {
        reason: e.to_string(),
    })?;
    Ok(spec
        .rungs
        .iter()
        .zip(r)
        .map(|(rung, x)| {
            (
                rung.name.clone(),
                RungRating {
                    elo: round1(x.elo),
                    low: round1(x.low),
                    high: round1(x.high),
                    games: x.games,
                },
            )
        })
        .collect())
}

fn round1(x: f64) -> f64 {
    (x * 10.0).round() / 10.0
}

/// Settings of a calibration.
#[derive(Clone, Debug)]
pub struct CalibrateOptions {
    /// Games per pairing (even: colours balanced).
    pub games: u32,
    /// Rungs at most this far apart in the list play each other.
    pub span: usize,
    /// Pairings played at the same time (each game runs one engine at a time).
    pub jobs: usize,
    /// Seed of the shared openings.
    pub seed: u64,
    /// The command line, recorded in the calibration.
    pub command: String,
}

/// Calibrates the ladder at `path`: plays the pairings, writes every game to
/// `NAME.games.txt` and the ratings to `NAME.calibration.toml` (both atomically), and
/// returns the calibration. `progress` gets one line per finished pairing.
pub fn calibrate(
    path: &Path,
    opts: &CalibrateOptions,
    progress: &(dyn Fn(&str) + Sync),
) -> Result<Calibration> {
    let (spec, _) = read_spec(path)?;
    let variant =
        crate::run::load_variant(&spec.variant).map_err(|source| PipelineError::VariantOf {
            file: path.display().to_string(),
            source: Box::new(source),
        })?;
    let openings = arena::random_openings(
        &variant,
        spec.opening_plies,
        (opts.games as usize).div_ceil(2).max(1),
        opts.seed,
    );
    let todo = pairings(spec.rungs.len(), opts.span);
    let next = std::sync::atomic::AtomicUsize::new(0);
    let done: std::sync::Mutex<Vec<(usize, PairingResult)>> = Default::default();
    std::thread::scope(|s| {
        for _ in 0..opts.jobs.clamp(1, todo.len().max(1)) {
            s.spawn(|| loop {
                let k = next.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                let Some(&(a, b)) = todo.get(k) else { break };
                let r = play_pairing(&spec, &variant, a, b, &openings, opts.games);
                if let Ok((t, _)) = &r {
                    progress(&format!(
                        "{} vs {}: +{} ={} -{}",
                        t.a, t.b, t.wins, t.draws, t.losses
                    ));
                }
                done.lock().expect("calibration results").push((k, r));
            });
        }
    });
    let mut done = done.into_inner().expect("calibration results");
    done.sort_by_key(|(k, _)| *k);
    let mut tallies = Vec::new();
    let mut lines = String::new();
    for (_, r) in done {
        let (t, l) = r?;
        tallies.push(t);
        lines.push_str(&l);
    }
    let ratings = fit_tallies(&spec, &tallies)?;
    let cal = Calibration {
        command: opts.command.clone(),
        unix_time: std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs()),
        machine: format!(
            "{} cores, {}",
            std::thread::available_parallelism().map_or(1, |n| n.get()),
            std::env::consts::ARCH
        ),
        ratings,
        pairings: tallies,
    };
    let header = format!(
        "# Calibration games of {}: `A B POINTS_OF_A | record`, made by `{}`\n",
        path.display(),
        opts.command
    );
    model::write_atomic(&games_path(path), format!("{header}{lines}").as_bytes())?;
    cal.save(&calibration_path(path))?;
    Ok(cal)
}

/// A pairing's tally and its games-file lines.
type PairingResult = Result<(PairingTally, String)>;

fn play_pairing(
    spec: &LadderSpec,
    variant: &Arc<Variant>,
    a: usize,
    b: usize,
    openings: &[Opening],
    games: u32,
) -> PairingResult {
    let (ra, rb) = (&spec.rungs[a], &spec.rungs[b]);
    let mut pa = ra.player(variant)?;
    let mut pb = rb.player(variant)?;
    let settings = MatchSettings {
        tc: pair_time_control(ra, rb),
        max_plies: spec.max_plies,
        ..MatchSettings::default()
    };
    let mut lines = String::new();
    let mut broken = None;
    let t = arena::play_match(
        variant,
        &mut pa,
        &mut pb,
        &settings,
        openings,
        games,
        &mut |g, _| {
            let pts = points(g.a_score());
            lines.push_str(&game_line(&ra.name, &rb.name, pts, &g.record_line));
            lines.push('\n');
            broken = g.broken().then(|| g.reason.clone());
            broken.is_none()
        },
    )?;
    refuse_broken(broken, &format!("{} against {}", ra.name, rb.name))?;
    Ok((
        PairingTally {
            a: ra.name.clone(),
            b: rb.name.clone(),
            wins: t.wins,
            draws: t.draws,
            losses: t.losses,
        },
        lines,
    ))
}

fn is_timed(r: &Rung) -> bool {
    r.movetime > 0
}

/// The match time control of two rungs: a timed one's movetime (our searches stop at it, an
/// engine gets `go movetime`); else node limits, each player with its own budget.
fn pair_time_control(a: &Rung, b: &Rung) -> TimeControl {
    [a, b]
        .into_iter()
        .find(|r| is_timed(r))
        .map_or(TimeControl::Nodes(a.nodes), |r| {
            TimeControl::Movetime(r.movetime)
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(text: &str) -> Result<LadderSpec> {
        LadderSpec::from_toml(text, "l.toml")
    }

    const TWO: &str = r#"
variant = "minishogi"
zero = "b"
[[rungs]]
name = "a"
player = "mcts"
nodes = 8
[[rungs]]
name = "b"
player = "mcts"
nodes = 64
"#;

    #[test]
    fn ladder_files_are_checked_key_by_key() {
        let s = spec(TWO).unwrap();
        assert_eq!(s.index("b"), Some(1));
        let e = spec(&TWO.replace("zero = \"b\"", "zero = \"c\"")).unwrap_err();
        assert!(e.to_string().contains("zero: \"c\" is not a rung"), "{e}");
        let e = spec(&TWO.replace("name = \"b\"", "name = \"a\"")).unwrap_err();
        assert!(e.to_string().contains("rungs[1].name"), "{e}");
        let e = spec(&TWO.replace("player = \"mcts\"\nnodes = 64", "player = \"x\"")).unwrap_err();
        assert!(e.to_string().contains("rungs[1].player"), "{e}");
        let e = spec(&TWO.replace("nodes = 8", "nodes = 0")).unwrap_err();
        assert!(e.to_string().contains("rungs[0].nodes"), "{e}");
        let e = spec(&TWO.replace("nodes = 8", "colour = 1")).unwrap_err();
        assert!(e.to_string().contains("colour"), "{e}");
    }

    #[test]
    fn calibrations_are_checked_against_their_ladder() {
        let s = spec(TWO).unwrap();
        let good = r#"command = "c"
unix_time = 1
machine = "m"
[ratings.a]
elo = -100.0
low = -150.0
high = -50.0
games = 10
[ratings.b]
elo = 0.0
low = 0.0
high = 0.0
games = 10
[[pairings]]
a = "a"
b = "b"
wins = 2
draws = 1
losses = 7
"#;
        let c = Calibration::from_toml(good, "c.toml", &s).unwrap();
        assert_eq!(c.ratings["a"].elo, -100.0);
        let e = Calibration::from_toml(&good.replace("[ratings.a]", "[ratings.z]"), "c.toml", &s)
            .unwrap_err();
        assert!(e.to_string().contains("rung \"a\" has no rating"), "{e}");
        let e = Calibration::from_toml(&good.replace("elo = 0.0", "elo = 5.0"), "c.toml", &s)
            .unwrap_err();
        assert!(e.to_string().contains("zero rung"), "{e}");
        let e = Calibration::from_toml(&good.replace("b = \"b\"", "b = \"a\""), "c.toml", &s)
            .unwrap_err();
        assert!(e.to_string().contains("pairings[0]"), "{e}");
        let e = Calibration::from_toml(&good.replace("elo = -100.0", "elo = nan"), "c.toml", &s)
            .unwrap_err();
        assert!(e.to_string().contains("finite"), "{e}");
    }

    #[test]
    fn the_rungs_played_are_the_nearest_to_the_estimate() {
        let s = spec(&format!(
            "{TWO}[[rungs]]\nname = \"c\"\nplayer = \"mcts\"\nnodes = 400\n"
        ))
        .unwrap();
        let cal = Calibration {
            command: String::new(),
            unix_time: 0,
            machine: String::new(),
            ratings: [("a", -200.0), ("b", 0.0), ("c", 300.0)]
                .into_iter()
                .map(|(n, e)| {
                    (
                        n.to_string(),
                        RungRating {
                            elo: e,
                            low: e,
                            high: e,
                            games: 1,
                        },
                    )
                })
                .collect(),
            pairings: Vec::new(),
        };
        let l = Ladder::new("t", s, cal);
        assert_eq!(l.rungs_nearest(None), vec![0, 1]);
        assert_eq!(l.rungs_nearest(Some(-500.0)), vec![0, 1]);
        assert_eq!(l.rungs_nearest(Some(-100.0)), vec![0, 1]);
        assert_eq!(l.rungs_nearest(Some(100.0)), vec![1, 2]);
        assert_eq!(l.rungs_nearest(Some(900.0)), vec![1, 2]);
        // Nearest first: at 60, b and c (60 and 240 away) before a (260); at -80, a and b.
        assert_eq!(l.rungs_nearest(Some(60.0)), vec![1, 2]);
        assert_eq!(l.rungs_nearest(Some(-80.0)), vec![0, 1]);
        // 15-5 against b (0) and 5-15 against c (300): between them.
        let r = l
            .place(&[(1, Tally::new(15, 0, 5)), (2, Tally::new(5, 0, 15))])
            .unwrap();
        assert!(r.elo > 50.0 && r.elo < 250.0, "{r:?}");
        assert_eq!(r.games, 40);
    }

    #[test]
    fn games_files_read_back_and_refit() {
        let s = spec(TWO).unwrap();
        let text = "# header\na b 1 | sfen x\na b 0.5 | sfen x\na b 0 | sfen x\na b 0 | sfen x\n";
        let t = read_games(text, &s, "g.txt").unwrap();
        assert_eq!(t.len(), 1);
        assert_eq!((t[0].wins, t[0].draws, t[0].losses), (1, 1, 2));
        let r = fit_tallies(&s, &t).unwrap();
        assert_eq!(r["b"].elo, 0.0);
        assert!(r["a"].elo < 0.0, "{r:?}");
        for (bad, why) in [
            ("a b 1 sfen x", "' | '"),
            ("a c 1 | x", "two different rungs"),
            ("a b x | x", "not a number"),
            ("a b 0.7 | x", "1, 0.5 or 0"),
        ] {
            let e = read_games(bad, &s, "g.txt").unwrap_err();
            assert!(
                e.to_string().contains("line 1") && e.to_string().contains(why),
                "{e}"
            );
        }
        assert_eq!(pairings(4, 2), vec![(0, 1), (1, 2), (2, 3), (0, 2), (1, 3)]);
    }

    #[test]
    fn the_builtin_ladder_loads_and_its_games_give_its_ratings() {
        for (name, games) in [
            (
                "judkins",
                include_str!("../../../configs/ladders/judkins.games.txt"),
            ),
            (
                "kyoto",
                include_str!("../../../configs/ladders/kyoto.games.txt"),
            ),
        ] {
            let j = Ladder::load(name).unwrap();
            let t = read_games(games, &j.spec, name).unwrap();
            assert_eq!(t, j.calibration.pairings, "{name}");
            assert_eq!(
                fit_tallies(&j.spec, &t).unwrap(),
                j.calibration.ratings,
                "{name}"
            );
        }
        let l = Ladder::load("minishogi").unwrap();
        assert_eq!(l.elo[l.spec.index(&l.spec.zero).unwrap()], 0.0);
        // The kept games reproduce the kept ratings: the calibration is checkable.
        let games = include_str!("../../../configs/ladders/minishogi.games.txt");
        let t = read_games(games, &l.spec, "minishogi.games.txt").unwrap();
        assert_eq!(t, l.calibration.pairings);
        let r = fit_tallies(&l.spec, &t).unwrap();
        assert_eq!(r, l.calibration.ratings);
    }
}
