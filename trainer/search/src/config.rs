//! Search settings (`[search]` in the run config).

use serde::{Deserialize, Serialize};
use thiserror::Error;

/// Why the search cannot run as configured.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
pub enum SearchError {
    /// A `[search]` setting out of range.
    #[error("search.{key}: {reason}")]
    Config {
        /// The key within `[search]`.
        key: &'static str,
        /// What is wrong with its value.
        reason: String,
    },
}

impl SearchError {
    fn config(key: &'static str, reason: impl Into<String>) -> SearchError {
        SearchError::Config {
            key,
            reason: reason.into(),
        }
    }
}

/// Largest `mate_plies`: every two plies more multiply the cost of a leaf's check.
pub const MAX_MATE_PLIES: u32 = 7;

/// Which tree search runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Algorithm {
    /// AlphaZero PUCT: Dirichlet noise at the root, visit-count policy target.
    Puct,
    /// Gumbel AlphaZero (Danihelka et al. 2022): Gumbel-top-k root sampling, sequential halving,
    /// completed-Q improved policy target. Strong at small budgets (8-64 simulations).
    Gumbel,
}

/// Search settings. Every key has a default (see [`SearchConfig::default`]); unknown keys are
/// rejected.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SearchConfig {
    /// PUCT or Gumbel.
    pub algorithm: Algorithm,
    /// Full search budget: visits added below the root per move (the evaluation of a fresh root
    /// is not counted).
    pub simulations: u32,
    /// PUCT exploration constant at zero visits (AlphaZero `c_init`).
    pub c_puct: f32,
    /// Visit scale of the logarithmic growth of the exploration constant (AlphaZero `c_base`).
    pub c_puct_base: f32,
    /// Weight of the logarithmic growth: `c(N) = c_puct + c_puct_factor * ln((N + c_puct_base +
    /// 1) / c_puct_base)`, N the parent's visits. 1.0 is AlphaZero's formula; 0 makes it constant.
    pub c_puct_factor: f32,
    /// First-play urgency (PUCT): an unvisited child's Q is the parent's Q minus
    /// `fpu_reduction * sqrt(sum of the visited children's priors)`.
    pub fpu_reduction: f32,
    /// Softmax temperature of the network's policy where the search turns it into priors
    /// (dlshogi's `Softmax_Temperature`, lc0's `PolicyTemperature`): above 1 flattens the
    /// priors so that the search looks wider. 1 is the network's own policy.
    pub policy_temperature: f32,
    /// Dirichlet concentration summed over the legal moves: alpha = this / number of legal moves
    /// (KataGo-style scaling). PUCT root only, when noise is on.
    pub dirichlet_alpha_total: f32,
    /// Weight of the Dirichlet noise in the root priors (PUCT, noise on).
    pub dirichlet_fraction: f32,
    /// Gumbel: actions sampled at the root by Gumbel-top-k (m).
    pub gumbel_considered: u32,
    /// Gumbel: `sigma(q) = (gumbel_c_visit + max_b N(b)) * gumbel_c_scale * q`, q in [0, 1].
    pub gumbel_c_visit: f32,
    /// Gumbel: scale of `sigma` (see `gumbel_c_visit`).
    pub gumbel_c_scale: f32,
    /// Keep the played move's subtree for the next search.
    pub reuse_tree: bool,
    /// PUCT with root noise (self-play): KataGo's forced playouts and policy-target pruning,
    /// `k` in `n_forced(c) = sqrt(k * P(c) * N)` (KataGo uses 2; 0 turns both off). A root
    /// child with fewer visits than `n_forced` is visited next; the policy target then takes
    /// back, from every child but the most visited, the forced visits its PUCT score did not
    /// earn, and drops children left with one visit.
    pub forced_playouts: f32,
    /// dlshogi's mate check at new leaves: a leaf whose side to move forces a win within this
    /// many plies is scored a win without the network, and a root with such a move plays it
    /// without searching (its policy target: those moves alone; immediate wins first). 1: a
    /// move that wins at once (a mate, or a goal of the variant such as a royal capture); 3,
    /// 5...: also checks after which every reply allows such a win within two plies fewer.
    /// 0: off.
    pub mate_plies: u32,
    /// PUCT's move choice by a lower confidence bound (Leela Zero's and KataGo's LCB): among
    /// the root moves with at least a tenth of the most visited move's visits, the one whose
    /// mean value less this many standard errors (from the spread of its backed-up values) is
    /// highest, where that beats the most visited move's bound. 0: the most visited move.
    pub lcb_stdevs: f32,
    /// MCTS-solver (Winands et al. 2008; dlshogi's win/loss flags): results the rules or the
    /// mate check give at leaves are propagated up the tree. A node with a child whose mover
    /// loses is a win for its own mover, a node whose every move leads to a win for the
    /// opponent a loss; such a node is scored exactly from then on, like a terminal one. A
    /// root move proven to win is played at once (as the mate check's), and a root move proven
    /// to lose is not played while another is left (PUCT). Draws are not proven.
    pub solver: bool,
}

impl Default for SearchConfig {
    /// Gumbel with 32 simulations and m = 16, c_visit 50, c_scale 1 (the paper's values);
    /// PUCT constants of AlphaZero (1.25, 19652, factor 1), FPU reduction 0.2, Dirichlet
    /// alpha 10 / legal moves with weight 0.25 (KataGo); tree reuse on.
    fn default() -> Self {
        SearchConfig {
            algorithm: Algorithm::Gumbel,
            simulations: 32,
            c_puct: 1.25,
            c_puct_base: 19652.0,
            c_puct_factor: 1.0,
            fpu_reduction: 0.2,
            policy_temperature: 1.0,
            dirichlet_alpha_total: 10.0,
            dirichlet_fraction: 0.25,
            gumbel_considered: 16,
            gumbel_c_visit: 50.0,
            gumbel_c_scale: 1.0,
            reuse_tree: true,
            forced_playouts: 0.0,
            mate_plies: 0,
            lcb_stdevs: 0.0,
            solver: false,
        }
    }
}

impl SearchConfig {
    /// Checks the ranges; the message names the offending key (`search.<key>`).
    pub fn validate(&self) -> Result<(), SearchError> {
        fn finite(key: &'static str, v: f32) -> Result<(), SearchError> {
            if v.is_finite() {
                Ok(())
            } else {
                Err(SearchError::config(
                    key,
                    format!("must be a finite number, got {v}"),
                ))
            }
        }
        if self.simulations < 1 {
            return Err(SearchError::config("simulations", "must be at least 1"));
        }
        for (key, v) in [
            ("c_puct", self.c_puct),
            ("c_puct_base", self.c_puct_base),
            ("c_puct_factor", self.c_puct_factor),
            ("fpu_reduction", self.fpu_reduction),
            ("policy_temperature", self.policy_temperature),
            ("dirichlet_alpha_total", self.dirichlet_alpha_total),
            ("dirichlet_fraction", self.dirichlet_fraction),
            ("gumbel_c_visit", self.gumbel_c_visit),
            ("gumbel_c_scale", self.gumbel_c_scale),
            ("forced_playouts", self.forced_playouts),
            ("lcb_stdevs", self.lcb_stdevs),
        ] {
            finite(key, v)?;
        }
        if self.c_puct < 0.0 {
            return Err(SearchError::config(
                "c_puct",
                format!("must be at least 0, got {}", self.c_puct),
            ));
        }
        if !(0.05..=20.0).contains(&self.policy_temperature) {
            return Err(SearchError::config(
                "policy_temperature",
                format!("must be in [0.05, 20], got {}", self.policy_temperature),
            ));
        }
        if self.c_puct_base <= 0.0 {
            return Err(SearchError::config(
                "c_puct_base",
                format!("must be positive, got {}", self.c_puct_base),
            ));
        }
        if self.c_puct_factor < 0.0 {
            return Err(SearchError::config(
                "c_puct_factor",
                format!("must be at least 0, got {}", self.c_puct_factor),
            ));
        }
        if self.dirichlet_alpha_total <= 0.0 {
            return Err(SearchError::config(
                "dirichlet_alpha_total",
                format!("must be positive, got {}", self.dirichlet_alpha_total),
            ));
        }
        if !(0.0..=1.0).contains(&self.dirichlet_fraction) {
            return Err(SearchError::config(
                "dirichlet_fraction",
                format!("must be in [0, 1], got {}", self.dirichlet_fraction),
            ));
        }
        if self.gumbel_considered < 1 {
            return Err(SearchError::config(
                "gumbel_considered",
                "must be at least 1",
            ));
        }
        if self.gumbel_c_visit < 0.0 {
            return Err(SearchError::config(
                "gumbel_c_visit",
                format!("must be at least 0, got {}", self.gumbel_c_visit),
            ));
        }
        if self.gumbel_c_scale < 0.0 {
            return Err(SearchError::config(
                "gumbel_c_scale",
                format!("must be at least 0, got {}", self.gumbel_c_scale),
            ));
        }
        if self.mate_plies > MAX_MATE_PLIES {
            return Err(SearchError::config(
                "mate_plies",
                format!("must be at most {MAX_MATE_PLIES}, got {}", self.mate_plies),
            ));
        }
        if self.forced_playouts < 0.0 {
            return Err(SearchError::config(
                "forced_playouts",
                format!("must be at least 0, got {}", self.forced_playouts),
            ));
        }
        if !(0.0..=10.0).contains(&self.lcb_stdevs) {
            return Err(SearchError::config(
                "lcb_stdevs",
                format!("must be in [0, 10], got {}", self.lcb_stdevs),
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_is_valid_and_roundtrips() {
        let c = SearchConfig::default();
        c.validate().unwrap();
        let text = toml::to_string(&c).unwrap();
        assert!(text.contains("algorithm = \"gumbel\""), "{text}");
        let back: SearchConfig = toml::from_str(&text).unwrap();
        assert_eq!(back, c);
    }

    #[test]
    fn partial_and_unknown_keys() {
        let c: SearchConfig = toml::from_str("algorithm = \"puct\"\nsimulations = 400").unwrap();
        assert_eq!(c.algorithm, Algorithm::Puct);
        assert_eq!(c.simulations, 400);
        assert_eq!(c.c_puct, 1.25);
        assert!(toml::from_str::<SearchConfig>("simulation = 3").is_err());
        assert!(toml::from_str::<SearchConfig>("algorithm = \"Puct\"").is_err());
    }

    #[test]
    fn validate_names_the_key() {
        let c = SearchConfig {
            mate_plies: 8,
            ..Default::default()
        };
        assert_eq!(
            c.validate().unwrap_err().to_string(),
            "search.mate_plies: must be at most 7, got 8"
        );
        let c = SearchConfig {
            simulations: 0,
            ..Default::default()
        };
        assert_eq!(
            c.validate().unwrap_err().to_string(),
            "search.simulations: must be at least 1"
        );
        let c = SearchConfig {
            dirichlet_fraction: 1.5,
            ..Default::default()
        };
        assert!(c
            .validate()
            .unwrap_err()
            .to_string()
            .starts_with("search.dirichlet_fraction:"));
        let c = SearchConfig {
            gumbel_c_scale: f32::NAN,
            ..Default::default()
        };
        assert!(c
            .validate()
            .unwrap_err()
            .to_string()
            .starts_with("search.gumbel_c_scale:"));
        let c = SearchConfig {
            policy_temperature: 0.0,
            ..Default::default()
        };
        assert_eq!(
            c.validate().unwrap_err().to_string(),
            "search.policy_temperature: must be in [0.05, 20], got 0"
        );
        let c = SearchConfig {
            forced_playouts: -1.0,
            ..Default::default()
        };
        assert_eq!(
            c.validate().unwrap_err().to_string(),
            "search.forced_playouts: must be at least 0, got -1"
        );
        let c = SearchConfig {
            lcb_stdevs: -0.5,
            ..Default::default()
        };
        assert_eq!(
            c.validate().unwrap_err().to_string(),
            "search.lcb_stdevs: must be in [0, 10], got -0.5"
        );
    }
}
