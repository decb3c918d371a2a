//! The engine's options: `usi` lists them, `setoption` sets them.

use super::UsiEngine;
use crate::error::ArenaError;
use crate::variant::load_variant;
use encoding::{Device, Encoder};
use rules::{Position, VariantSpec};
use search::{Algorithm, SearchConfig, MAX_MATE_PLIES};
use std::sync::Arc;

/// Default of the `Simulations` option.
pub(super) const DEFAULT_SIMULATIONS: u32 = 200;
/// Upper bound of the `Simulations` option.
const MAX_SIMULATIONS_OPTION: u32 = 100_000_000;
/// Default of the `USI_Hash` option (MiB).
pub(super) const DEFAULT_HASH_MIB: u32 = 1024;
/// Default of the `MinibatchSize` option: leaves a network call evaluates at most.
pub(super) const DEFAULT_MINIBATCH: u32 = 16;
/// Upper bound of the `MinibatchSize` option.
const MAX_MINIBATCH: u32 = 1024;
/// Default of the `MatePlies` option.
pub(super) const DEFAULT_MATE_PLIES: u32 = 1;
/// Default of the `RootMatePlies` option (0: off).
pub(super) const DEFAULT_ROOT_MATE_PLIES: u32 = 0;
/// Upper bound of the `RootMatePlies` option: each root search is bounded by moves, not
/// plies, so more is cheap but rarely finds more.
const MAX_ROOT_MATE_PLIES: u32 = 15;
/// Upper bound of the `USI_Hash` option (MiB).
const MAX_HASH_MIB: u32 = 1 << 20;
/// Default of the `NNCacheSize` option: network answers kept, by position.
pub(super) const DEFAULT_NN_CACHE: u32 = search::DEFAULT_EVAL_CACHE as u32;
/// Default of the `CPuct` option (hundredths): AlphaZero's `c_init`, the search's default.
pub(super) const DEFAULT_C_PUCT: u32 = 125;
/// Default of the `FPUReduction` option (hundredths): the search's default.
pub(super) const DEFAULT_FPU_REDUCTION: u32 = 20;
/// Default of the `PolicyTemperature` option (hundredths): flatter priors than the network's
/// policy, +7 points against Fairy-Stockfish `Skill Level` 5 at 100 ms (BENCHMARKS.md).
pub(super) const DEFAULT_POLICY_TEMPERATURE: u32 = 150;
/// Default of the `Solver` option (the MCTS-solver, `search.solver`).
pub(super) const DEFAULT_SOLVER: bool = false;
/// Default of the `LCBStdevs` option (hundredths): 0, the most visited move.
pub(super) const DEFAULT_LCB_STDEVS: u32 = 0;
/// Upper bound of the options given in hundredths (`CPuct`, `FPUReduction`,
/// `PolicyTemperature`).
const MAX_CENTI: u32 = 2000;
/// Upper bound of the `LCBStdevs` option (hundredths).
const MAX_LCB_CENTI: u32 = 1000;
/// Upper bound of the `NNCacheSize` option.
const MAX_NN_CACHE: u32 = 1 << 24;

/// Engine options (`setoption`).
#[derive(Clone, Debug)]
pub(super) struct Options {
    pub(super) simulations: u32,
    pub(super) threads: u32,
    pub(super) device: Device,
    pub(super) algorithm: Algorithm,
    /// `USI_Hash`: the most memory (MiB) the search tree may reserve.
    pub(super) hash_mib: u32,
    /// `USI_Ponder`: name the expected reply in `bestmove ... ponder`.
    pub(super) ponder: bool,
    /// `MinibatchSize`: leaves gathered (with virtual losses) for one network call; 1
    /// evaluates them one at a time.
    pub(super) minibatch: u32,
    /// `ReuseTree`: search the next position of the same game on the subtree the last
    /// search left there.
    pub(super) reuse_tree: bool,
    /// `MatePlies`: leaves whose side to move forces a win within this many plies are scored
    /// without the network, and such a move at the root is played at once (0: off).
    pub(super) mate_plies: u32,
    /// `NNCacheSize`: network answers kept by position, so that a leaf reached again (another
    /// move order, a later search) skips the network (0: none).
    pub(super) nn_cache: u32,
    /// `CPuct`: `search.c_puct` in hundredths.
    pub(super) c_puct: u32,
    /// `FPUReduction`: `search.fpu_reduction` in hundredths.
    pub(super) fpu_reduction: u32,
    /// `PolicyTemperature`: `search.policy_temperature` in hundredths.
    pub(super) policy_temperature: u32,
    /// `LCBStdevs`: `search.lcb_stdevs` in hundredths.
    pub(super) lcb_stdevs: u32,
    /// `Solver`: `search.solver`.
    pub(super) solver: bool,
    /// `RootMatePlies`: a checks-only mate search at the root, both ways (see the engine's
    /// `Job`).
    pub(super) root_mate_plies: u32,
}

impl Options {
    /// The search settings these options ask for.
    pub(super) fn search_config(&self) -> SearchConfig {
        SearchConfig {
            algorithm: self.algorithm,
            reuse_tree: self.reuse_tree,
            mate_plies: self.mate_plies,
            c_puct: self.c_puct as f32 / 100.0,
            fpu_reduction: self.fpu_reduction as f32 / 100.0,
            policy_temperature: self.policy_temperature as f32 / 100.0,
            lcb_stdevs: self.lcb_stdevs as f32 / 100.0,
            solver: self.solver,
            ..SearchConfig::default()
        }
    }
}

impl UsiEngine {
    pub(super) fn cmd_usi(&self) {
        let what = match &self.model {
            Some((p, _)) => format!(
                "{}, {}",
                self.variant.name,
                p.file_name().unwrap_or_default().to_string_lossy()
            ),
            None => format!("{}, no network", self.variant.name),
        };
        self.out.send(&format!(
            "id name trainer {} ({what})",
            env!("CARGO_PKG_VERSION")
        ));
        self.out.send("id author the shogi-variant trainer authors");
        let variants = self.variant_names();
        let mut line = format!(
            "option name USI_Variant type combo default {}",
            self.variant.name
        );
        for v in &variants {
            line.push_str(&format!(" var {v}"));
        }
        self.out.send(&line);
        self.out.send(&format!(
            "option name Simulations type spin default {} min 1 max {MAX_SIMULATIONS_OPTION}",
            self.opts.simulations
        ));
        self.out.send(&format!(
            "option name Threads type spin default {} min 1 max 256",
            self.opts.threads
        ));
        self.out.send(&format!(
            "option name Device type string default {}",
            self.opts.device
        ));
        self.out.send(&format!(
            "option name Algorithm type combo default {} var gumbel var puct",
            algorithm_name(self.opts.algorithm)
        ));
        self.out.send(&format!(
            "option name MinibatchSize type spin default {} min 1 max {MAX_MINIBATCH}",
            self.opts.minibatch
        ));
        self.out.send(&format!(
            "option name ReuseTree type check default {}",
            self.opts.reuse_tree
        ));
        self.out.send(&format!(
            "option name MatePlies type spin default {} min 0 max {MAX_MATE_PLIES}",
            self.opts.mate_plies
        ));
        self.out.send(&format!(
            "option name CPuct type spin default {} min 0 max {MAX_CENTI}",
            self.opts.c_puct
        ));
        self.out.send(&format!(
            "option name FPUReduction type spin default {} min 0 max {MAX_CENTI}",
            self.opts.fpu_reduction
        ));
        self.out.send(&format!(
            "option name PolicyTemperature type spin default {} min 5 max {MAX_CENTI}",
            self.opts.policy_temperature
        ));
        self.out.send(&format!(
            "option name LCBStdevs type spin default {} min 0 max {MAX_LCB_CENTI}",
            self.opts.lcb_stdevs
        ));
        self.out.send(&format!(
            "option name Solver type check default {}",
            self.opts.solver
        ));
        self.out.send(&format!(
            "option name RootMatePlies type spin default {} min 0 max {MAX_ROOT_MATE_PLIES}",
            self.opts.root_mate_plies
        ));
        self.out.send(&format!(
            "option name NNCacheSize type spin default {} min 0 max {MAX_NN_CACHE}",
            self.opts.nn_cache
        ));
        self.out.send(&format!(
            "option name USI_Hash type spin default {} min 1 max {MAX_HASH_MIB}",
            self.opts.hash_mib
        ));
        self.out.send(&format!(
            "option name USI_Ponder type check default {}",
            self.opts.ponder
        ));
        self.out.send("usiok");
    }

    /// The variants `USI_Variant` offers: the model's, or the built-ins plus the current one.
    fn variant_names(&self) -> Vec<String> {
        if self.model.is_some() {
            return vec![self.variant.name.clone()];
        }
        let mut names: Vec<String> = VariantSpec::builtin_names()
            .into_iter()
            .map(String::from)
            .collect();
        if !names.contains(&self.variant.name) {
            names.insert(0, self.variant.name.clone());
        }
        names
    }

    pub(super) fn cmd_setoption(&mut self, args: &[&str]) -> Result<(), ArenaError> {
        if args.first() != Some(&"name") {
            return Err(ArenaError::SetoptionSyntax);
        }
        let rest = &args[1..];
        let (name, value) = match rest.iter().position(|&t| t == "value") {
            Some(i) => (rest[..i].join(" "), Some(rest[i + 1..].join(" "))),
            None => (rest.join(" "), None),
        };
        if name.is_empty() {
            return Err(ArenaError::MissingOptionName);
        }
        let value = value.as_deref();
        let need = |v: Option<&str>| -> Result<String, ArenaError> {
            match v {
                Some(s) if !s.is_empty() => Ok(s.to_string()),
                _ => Err(ArenaError::NeedsValue(name.clone())),
            }
        };
        match name.to_ascii_lowercase().as_str() {
            "usi_variant" => {
                let v = need(value)?;
                if let Some((_, meta)) = &self.model {
                    if v != meta.variant && v != self.variant.name {
                        return Err(ArenaError::ModelVariantOnly {
                            asked: v,
                            variant: self.variant.name.clone(),
                        });
                    }
                } else if v != self.variant.name {
                    let nv = load_variant(&v).map_err(|reason| ArenaError::UsiVariant {
                        name: v.clone(),
                        reason: Box::new(reason),
                    })?;
                    self.encoder = Arc::new(Encoder::new(nv.clone()));
                    self.position = Position::start(nv.clone());
                    self.variant = nv;
                    self.net = None;
                }
            }
            "simulations" => {
                self.opts.simulations = parse_spin(&need(value)?, 1, MAX_SIMULATIONS_OPTION)?
            }
            "threads" => {
                self.opts.threads = parse_spin(&need(value)?, 1, 256)?;
                if self.model.is_some() {
                    self.apply_threads();
                }
            }
            "device" => {
                let d: Device = need(value)?.to_ascii_lowercase().parse()?;
                let d = self.opener.check_device(d).map_err(ArenaError::Device)?;
                if d != self.opts.device {
                    self.opts.device = d;
                    self.net = None;
                }
            }
            "algorithm" => {
                let v = need(value)?.to_ascii_lowercase();
                let choices = [("gumbel", Algorithm::Gumbel), ("puct", Algorithm::Puct)];
                self.opts.algorithm = parse_choice("Algorithm", &v, &choices, "gumbel or puct")?
            }
            "minibatchsize" => self.opts.minibatch = parse_spin(&need(value)?, 1, MAX_MINIBATCH)?,
            "usi_hash" => self.opts.hash_mib = parse_spin(&need(value)?, 1, MAX_HASH_MIB)?,
            "usi_ponder" => self.opts.ponder = parse_check("USI_Ponder", &need(value)?)?,
            "reusetree" => self.opts.reuse_tree = parse_check("ReuseTree", &need(value)?)?,
            "mateplies" => self.opts.mate_plies = parse_spin(&need(value)?, 0, MAX_MATE_PLIES)?,
            "cpuct" => self.opts.c_puct = parse_spin(&need(value)?, 0, MAX_CENTI)?,
            "fpureduction" => self.opts.fpu_reduction = parse_spin(&need(value)?, 0, MAX_CENTI)?,
            "policytemperature" => {
                self.opts.policy_temperature = parse_spin(&need(value)?, 5, MAX_CENTI)?
            }
            "lcbstdevs" => self.opts.lcb_stdevs = parse_spin(&need(value)?, 0, MAX_LCB_CENTI)?,
            "solver" => self.opts.solver = parse_check("Solver", &need(value)?)?,
            "rootmateplies" => {
                self.opts.root_mate_plies = parse_spin(&need(value)?, 0, MAX_ROOT_MATE_PLIES)?
            }
            "nncachesize" => {
                self.opts.nn_cache = parse_spin(&need(value)?, 0, MAX_NN_CACHE)?;
                if let Some(net) = self.net.as_mut() {
                    net.cache = search::EvalCache::new(self.opts.nn_cache as usize);
                }
            }
            _ => return Err(ArenaError::UnknownOption(name)),
        }
        Ok(())
    }
}

fn algorithm_name(a: Algorithm) -> &'static str {
    match a {
        Algorithm::Gumbel => "gumbel",
        Algorithm::Puct => "puct",
    }
}

fn parse_spin(v: &str, min: u32, max: u32) -> Result<u32, ArenaError> {
    match v.parse::<u64>() {
        Ok(n) if n >= min as u64 && n <= max as u64 => Ok(n as u32),
        _ => Err(ArenaError::Spin {
            value: v.to_string(),
            min,
            max,
        }),
    }
}

/// The value of the check option `option`.
fn parse_check(option: &'static str, v: &str) -> Result<bool, ArenaError> {
    let choices = [("true", true), ("false", false)];
    parse_choice(option, v, &choices, "true or false")
}

/// The choice named `v` of the option `option`.
fn parse_choice<T: Copy>(
    option: &'static str,
    v: &str,
    choices: &[(&str, T)],
    expected: &'static str,
) -> Result<T, ArenaError> {
    match choices.iter().find(|(name, _)| *name == v) {
        Some(&(_, c)) => Ok(c),
        None => Err(ArenaError::OptionValue {
            option,
            value: v.to_string(),
            expected,
        }),
    }
}
