//! Run configs (`configs/runs/*.toml`): what a run plays, how it trains, how it is evaluated
//! and when it stops. Errors name the file and the key.

use crate::error::{KeyError, PipelineError, Result};
use model::{Device, TrainConfig};
use search::SearchConfig;
use selfplay::SelfPlayConfig;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::Path;

/// A run config.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RunConfig {
    /// Run name: the directory under `runs/` (default: the config file stem).
    #[serde(default)]
    pub name: String,
    /// Variant: a file stem of configs/variants, a built-in, or a path.
    pub variant: String,
    /// Network shape: a file stem of configs/models, a built-in, or a path.
    pub model: String,
    /// Input and policy layout: "generic" (default, any variant), "attacks" (generic plus what
    /// each side's pieces attack, any variant) or "dlshogi" (standard shogi only: networks
    /// that dlshogi and FukauraOu load, `trainer export --format dlshogi-onnx`).
    #[serde(default)]
    pub encoding: encoding::EncodingLayout,
    /// Seed of the network initialisation and of the evaluation openings.
    #[serde(default)]
    pub seed: u64,
    /// cpu, cuda, cuda:N or auto (the default); a device this machine lacks is an error.
    #[serde(default, deserialize_with = "model::deserialize_device")]
    pub device: Device,
    /// The run stops after publishing this many networks...
    pub generations: u64,
    /// ...or after this many minutes of wall time, summed over resumes (0: no limit).
    #[serde(default)]
    pub max_minutes: f64,
    /// Training steps between two published networks.
    pub steps_per_generation: u64,
    /// Training samples drawn per new self-play sample: the trainer never runs ahead of
    /// self-play by more than this (KataGo's shuffler/trainer ratio).
    #[serde(default = "default_reuse")]
    pub sample_reuse: f64,
    /// Samples in the window before the first training step.
    #[serde(default = "default_min_samples")]
    pub min_samples: usize,
    /// 0 (default): self-play never waits. N > 0: at most N games (plus the games in flight)
    /// per network; workers then wait for the next one and the trainer finishes the
    /// generation's steps without the reuse limit (a synchronous run).
    #[serde(default)]
    pub games_per_generation: usize,
    /// Self-play.
    #[serde(default)]
    pub selfplay: SelfPlayConfig,
    /// Search used by self-play (simulations come from the playout caps).
    #[serde(default)]
    pub search: SearchConfig,
    /// Training hyper-parameters.
    #[serde(default)]
    pub training: TrainConfig,
    /// Replay window.
    #[serde(default)]
    pub replay: ReplayConfig,
    /// Evaluation matches.
    #[serde(default)]
    pub evaluation: EvalConfig,
}

fn default_reuse() -> f64 {
    4.0
}

fn default_min_samples() -> usize {
    2000
}

/// The replay window: the most recent samples, growing with the run, and how its samples'
/// value targets are made.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ReplayConfig {
    /// Window size while the run is young (samples).
    pub min_window: usize,
    /// Largest window (samples).
    pub max_window: usize,
    /// Above `min_window`, the window grows by this fraction of every new sample (when
    /// `exponent` is 0).
    pub growth: f64,
    /// 0 (default): the window grows linearly by `growth`. In (0, 1]: KataGo's power law
    /// (`shuffle.py`): after N > c = `min_window` samples, the window is
    /// c * (1 + scale * ((N / c)^exponent - 1) / exponent), capped by `max_window`
    /// (KataGo uses 0.75). It grows by `scale` of each new sample at first, then ever slower.
    pub exponent: f64,
    /// The power law's initial growth per new sample, in [0, 1] (KataGo's 0.4; used only when
    /// `exponent` > 0; `exponent` = 1 is the linear window with `growth` = `scale`).
    pub scale: f64,
    /// Weight of the search's root value in the WDL target (lc0's `--q-ratio`), in [0, 1]
    /// (default 0: the game result alone): the target is (1 - q_ratio - short_term_ratio) *
    /// onehot(result) + q_ratio * wdl(root value) + short_term_ratio * wdl(short-term value),
    /// with wdl(v) = (max(v, 0), 1 - |v|, max(-v, 0)).
    pub q_ratio: f64,
    /// Horizon h in plies of KataGo's short-term value target (0, the default: off): an
    /// exponentially weighted average of the root values of the position and the following
    /// recorded positions of its game (ply d ahead weighted (1 - 1/h)^d / h, each value from
    /// the position's side to move, an unrecorded ply taking the next recorded value), the
    /// game result standing in for every ply past the end.
    pub short_term_horizon: u32,
    /// Weight of the short-term value in the WDL target, in [0, 1] (default 0; needs
    /// `short_term_horizon` >= 1 and q_ratio + short_term_ratio <= 1).
    pub short_term_ratio: f64,
    /// KataGo's policy-surprise weighting, in [0, 1] (default 0: uniform draws; KataGo uses
    /// 0.5): a recorded position is drawn in proportion to `(1 - a) + a * s / mean(s)`, `s`
    /// its KL(policy target || network prior) and the mean over its game, capped at 4.
    pub policy_surprise_weight: f64,
    /// Mirror augmentation (default false): each training sample is, with probability 1/2,
    /// its mirror image, left and right swapped (input, policy and opponent-reply targets),
    /// as AlphaGo and KataGo train on the board's symmetries. Only for variants whose pieces
    /// move alike to both sides (not Tori shogi) and the generic or attacks layout.
    pub mirror: bool,
}

impl Default for ReplayConfig {
    fn default() -> Self {
        ReplayConfig {
            min_window: 20_000,
            max_window: 500_000,
            growth: 0.5,
            exponent: 0.0,
            scale: 0.4,
            q_ratio: 0.0,
            short_term_horizon: 0,
            short_term_ratio: 0.0,
            policy_surprise_weight: 0.0,
            mirror: false,
        }
    }
}

impl ReplayConfig {
    /// Window size after `total` samples were produced.
    pub fn window(&self, total: u64) -> usize {
        let total = total as f64;
        let min = self.min_window as f64;
        let w = if total <= min {
            min
        } else if self.exponent > 0.0 {
            let a = self.exponent;
            min * (1.0 + self.scale * ((total / min).powf(a) - 1.0) / a)
        } else {
            min + self.growth * (total - min)
        };
        (w as usize).min(self.max_window)
    }

    /// How the samples' WDL targets are made (for [`selfplay::ReplayWindow`]).
    pub fn value_targets(&self) -> selfplay::replay::ValueTargets {
        selfplay::replay::ValueTargets {
            q_ratio: self.q_ratio,
            short_term_horizon: self.short_term_horizon,
            short_term_ratio: self.short_term_ratio,
        }
    }

    /// Checks ranges; errors name the key (`replay.<key>`).
    pub fn validate(&self) -> std::result::Result<(), KeyError> {
        let e = |key: &str, why: &str| Err(KeyError::new(key, why));
        if self.min_window == 0 || self.max_window < self.min_window {
            return e("replay", "need 0 < min_window <= max_window");
        }
        if !(0.0..=1.0).contains(&self.growth) {
            return e("replay.growth", "must be in [0, 1]");
        }
        if !(0.0..=1.0).contains(&self.exponent) {
            return e("replay.exponent", "must be in [0, 1]");
        }
        if !(0.0..=1.0).contains(&self.scale) {
            return e("replay.scale", "must be in [0, 1]");
        }
        if !(0.0..=1.0).contains(&self.policy_surprise_weight) {
            return e("replay.policy_surprise_weight", "must be in [0, 1]");
        }
        self.value_targets().validate().map_err(KeyError::from)
    }
}

/// Evaluation: matches of new networks, off the critical path (own thread, bounded share).
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct EvalConfig {
    /// Games per match against earlier networks (0 disables them).
    pub games: usize,
    /// Simulations per move of our networks in matches without a time limit.
    pub simulations: u32,
    /// Evaluate at most every this many generations (the newest network is taken).
    pub every: u64,
    /// Largest fraction of the wall time (since the process started) the evaluator may have
    /// spent playing when it starts an evaluation (it waits otherwise); a started evaluation
    /// plays to its end.
    pub share: f64,
    /// Play the previously evaluated network.
    pub vs_previous: bool,
    /// Play generation 0.
    pub vs_first: bool,
    /// Gating: a new network becomes the self-play network only if it scores at least
    /// `gating_score` against the current one.
    pub gating: bool,
    /// Score needed to pass the gate.
    pub gating_score: f64,
    /// Random plies of the shared openings (the same openings in every evaluation).
    pub opening_plies: u32,
    /// Fixed opponents whose scores show progress after generation 0 is beaten every game.
    pub anchors: Vec<AnchorConfig>,
    /// A calibrated ladder of fixed opponents (a file stem of configs/ladders, a path, or a
    /// built-in: `minishogi`, `judkins`; empty: none). Each evaluated generation plays the two rungs
    /// nearest its predecessor's rating and gets one maximum-likelihood Elo on the ladder.
    pub ladder: String,
    /// Games against the ladder per evaluation (split between the two rungs).
    pub ladder_games: usize,
    /// Play the ladder every this many evaluations.
    pub ladder_every: u64,
}

impl Default for EvalConfig {
    fn default() -> Self {
        EvalConfig {
            games: 20,
            simulations: 32,
            every: 1,
            share: 0.25,
            vs_previous: true,
            vs_first: true,
            gating: false,
            gating_score: 0.55,
            opening_plies: 4,
            anchors: Vec::new(),
            ladder: String::new(),
            ladder_games: 20,
            ladder_every: 1,
        }
    }
}

/// A fixed opponent of the evaluation.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AnchorConfig {
    /// Label in the log and TensorBoard (`anchor/<name>`).
    pub name: String,
    /// `mcts` (our search without a network) or `engine:CMD` (an external USI/UCI engine).
    pub player: String,
    /// Engine protocol: `usi` or `uci` (Fairy-Stockfish).
    #[serde(default = "default_protocol")]
    pub protocol: String,
    /// Engine options, e.g. `{ "Skill Level" = "0" }`.
    #[serde(default)]
    pub options: BTreeMap<String, String>,
    /// Simulations of the `mcts` anchor; `go nodes N` for an engine when `movetime` is 0.
    #[serde(default = "default_nodes")]
    pub nodes: u32,
    /// Milliseconds per move for both sides (0: node limits).
    #[serde(default)]
    pub movetime: u64,
    /// Games per evaluation (an even number keeps colours balanced).
    #[serde(default = "default_anchor_games")]
    pub games: usize,
    /// Evaluate against this anchor every this many evaluations.
    #[serde(default = "default_one")]
    pub every: u64,
}

fn default_protocol() -> String {
    "usi".into()
}

fn default_nodes() -> u32 {
    200
}

fn default_anchor_games() -> usize {
    10
}

fn default_one() -> u64 {
    1
}

/// Longest run name (bytes): file systems refuse longer directory names.
pub const MAX_RUN_NAME: usize = 255;

/// Checks a run name: the run directory is `runs/<name>`, so the name must be one plain path
/// component that stays under `runs/`: not empty, not `.` or `..`, no separator, no NUL, not
/// absolute, only letters, digits, '-', '_' and '.', at most [`MAX_RUN_NAME`] bytes. The error
/// names the key (`name`).
pub fn check_run_name(name: &str) -> std::result::Result<(), KeyError> {
    let why = if name.is_empty() {
        "must not be empty"
    } else if name == "." || name == ".." {
        "is not a directory name under the runs directory (`.` and `..` leave it)"
    } else if name.len() > MAX_RUN_NAME {
        "is longer than 255 bytes"
    } else if !name
        .chars()
        .all(|ch| ch.is_ascii_alphanumeric() || "-_.".contains(ch))
    {
        "must use only letters, digits, '-', '_' or '.' (one plain directory name: no separator, no NUL)"
    } else {
        // Belt and braces: exactly one normal component, the name itself.
        let mut parts = Path::new(name).components();
        match (parts.next(), parts.next()) {
            (Some(std::path::Component::Normal(c)), None) if c == name => return Ok(()),
            _ => "is not one plain directory name",
        }
    };
    Err(KeyError::new("name", format!("{name:?} {why}")))
}

impl RunConfig {
    /// Parses and checks a run config; errors name the file and the key.
    pub fn from_toml(text: &str, file: &str) -> Result<RunConfig> {
        let mut c: RunConfig = toml::from_str(text).map_err(|e| {
            // The line (and so the key) the parser stopped at, when the error is on one line.
            let one_line =
                |s: &std::ops::Range<usize>| text.get(s.clone()).is_some_and(|t| !t.contains('\n'));
            let line = e.span().filter(one_line).map(|s| {
                let n = text[..s.start.min(text.len())].matches('\n').count();
                (n + 1, text.lines().nth(n).unwrap_or("").trim().to_string())
            });
            PipelineError::Toml {
                file: file.to_string(),
                line,
                reason: e.message().to_string(),
            }
        })?;
        if c.name.is_empty() {
            c.name = Path::new(file)
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_else(|| "run".into());
        }
        c.validate().map_err(|e| e.in_file(file))?;
        c.training.validate(file)?;
        Ok(c)
    }

    fn validate(&self) -> std::result::Result<(), KeyError> {
        // First: a name that leaves `runs/` must be refused before anything is made of it.
        check_run_name(&self.name)?;
        self.selfplay.validate()?;
        self.search.validate()?;
        let e = |key: &str, why: &str| Err(KeyError::new(key, why));
        if self.generations == 0 {
            return e("generations", "must be at least 1");
        }
        if self.steps_per_generation == 0 {
            return e("steps_per_generation", "must be at least 1");
        }
        if !(self.max_minutes >= 0.0 && self.max_minutes.is_finite()) {
            return e("max_minutes", "must be 0 (no limit) or a positive number");
        }
        if !(self.sample_reuse > 0.0 && self.sample_reuse.is_finite()) {
            return e("sample_reuse", "must be a positive number");
        }
        self.replay.validate()?;
        self.validate_evaluation()?;
        check_run_name(&self.name)
    }

    /// Checks `[evaluation]`: ranges, the ladder (it loads and is for this variant), anchors.
    fn validate_evaluation(&self) -> std::result::Result<(), KeyError> {
        let e = |key: &str, why: &str| Err(KeyError::new(key, why));
        let ev = &self.evaluation;
        if ev.gating && !ev.vs_previous {
            return e("evaluation.gating", "needs vs_previous = true");
        }
        if ev.gating && ev.games == 0 {
            return e("evaluation.gating", "needs evaluation.games > 0");
        }
        if ev.simulations == 0 {
            return e("evaluation.simulations", "must be at least 1");
        }
        if ev.every == 0 {
            return e("evaluation.every", "must be at least 1");
        }
        if !(ev.share > 0.0 && ev.share <= 1.0) {
            return e("evaluation.share", "must be in (0, 1]");
        }
        if !(0.0..=1.0).contains(&ev.gating_score) {
            return e("evaluation.gating_score", "must be in [0, 1]");
        }
        if !ev.ladder.is_empty() {
            self.validate_ladder()?;
        }
        for (i, a) in ev.anchors.iter().enumerate() {
            let key = format!("evaluation.anchors[{i}]");
            crate::ladder::check_opponent(&key, &a.name, &a.player, &a.protocol)?;
            if a.games == 0 || a.nodes == 0 || a.every == 0 {
                return Err(KeyError::new(
                    key,
                    "games, nodes and every must be at least 1",
                ));
            }
            if ev.anchors[..i].iter().any(|b| b.name == a.name) {
                let why = format!("{:?} is used twice", a.name);
                return Err(KeyError::new(format!("{key}.name"), why));
            }
        }
        Ok(())
    }

    /// Checks `evaluation.ladder`: it loads and is for this run's variant.
    fn validate_ladder(&self) -> std::result::Result<(), KeyError> {
        let ev = &self.evaluation;
        if ev.ladder_games < 2 || ev.ladder_every == 0 {
            return Err(KeyError::new(
                "evaluation.ladder_games",
                "must be at least 2, and ladder_every at least 1",
            ));
        }
        let l = crate::ladder::Ladder::load(&ev.ladder)
            .map_err(|err| KeyError::new("evaluation.ladder", err.chain().to_string()))?;
        let name = |v: &str| crate::run::load_variant(v).map(|v| v.name.clone());
        let same = match (name(&l.spec.variant), name(&self.variant)) {
            (Ok(a), Ok(b)) => a == b,
            _ => l.spec.variant == self.variant,
        };
        if !same {
            return Err(KeyError::new(
                "evaluation.ladder",
                format!(
                    "the {} ladder is for {}, not {}",
                    l.name, l.spec.variant, self.variant
                ),
            ));
        }
        Ok(())
    }

    /// Wall-time budget in seconds (None: no limit).
    pub fn budget_seconds(&self) -> Option<f64> {
        (self.max_minutes > 0.0).then_some(self.max_minutes * 60.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(name: Option<&str>) -> String {
        let name = name.map_or(String::new(), |n| {
            format!("name = {}\n", toml::Value::String(n.into()))
        });
        format!(
            "{name}variant = \"minishogi\"\nmodel = \"b2c16\"\ndevice = \"cpu\"\ngenerations = 1\nsteps_per_generation = 1\n"
        )
    }

    #[test]
    fn run_names_that_leave_the_runs_directory_are_refused() {
        let long = "a".repeat(MAX_RUN_NAME + 1);
        for bad in [
            "..", ".", "../x", "x/..", "/etc", "/", "a/b", "a\\b", "a\0b", "~", " x", &long,
        ] {
            let err = RunConfig::from_toml(&config(Some(bad)), "runs.toml")
                .expect_err(bad)
                .to_string();
            assert!(err.starts_with("runs.toml: name: "), "{bad:?}: {err}");
        }
        // The default name, the config file's stem, is checked the same way.
        let err = RunConfig::from_toml(&config(None), "configs/..toml")
            .expect_err("stem .")
            .to_string();
        assert!(err.contains("name: \".\""), "{err}");
        for good in [
            "run-1",
            "a.b_c",
            "...",
            ".hidden",
            &"a".repeat(MAX_RUN_NAME),
        ] {
            let c = RunConfig::from_toml(&config(Some(good)), "runs.toml").expect(good);
            assert_eq!(c.name, good);
        }
        let c = RunConfig::from_toml(&config(None), "configs/runs/tiny.toml").unwrap();
        assert_eq!(c.name, "tiny");
    }
}
