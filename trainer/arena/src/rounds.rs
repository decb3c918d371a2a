//! The search loop shared by our players and the USI engine: how a search spends its budget.
//!
//! Gumbel's sequential halving needs its budget up front: a search of a huge budget cut short
//! by the clock stops in its first phase, which spreads visits evenly over the considered
//! moves. So a Gumbel search without a fixed budget (a time limit, `infinite`, pondering) runs
//! in rounds of doubling size over the same tree, each a whole halving; any other search is
//! one start of its whole budget.

use anyhow::Result;
use search::{Algorithm, Search};

/// Largest doubling of the first round's budget (its size then stays, capped by what is left).
const MAX_DOUBLINGS: u32 = 20;

/// The budgets of a search's starts.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Rounds {
    /// Rounds of doubling size (else one round of everything left).
    chunked: bool,
    /// Simulations of the first round.
    base: u64,
    /// Rounds started so far.
    round: u32,
}

impl Rounds {
    /// The rounds of an `algorithm` search; `open_ended`: no fixed budget (a time limit, or
    /// none until `stop`), then Gumbel runs rounds starting at `base` simulations.
    pub(crate) fn new(algorithm: Algorithm, open_ended: bool, base: u32) -> Rounds {
        Rounds {
            chunked: algorithm == Algorithm::Gumbel && open_ended,
            base: u64::from(base.max(1)),
            round: 0,
        }
    }

    /// The budget of the next start with `left` simulations still allowed; None when the
    /// search is over (nothing left, or the one round of an unchunked search has run).
    pub(crate) fn next(&mut self, left: u64) -> Option<u32> {
        if left == 0 || (self.round > 0 && !self.chunked) {
            return None;
        }
        let budget = if self.chunked {
            left.min(self.base << self.round.min(MAX_DOUBLINGS))
        } else {
            left
        };
        self.round += 1;
        Some(budget.min(u64::from(u32::MAX)) as u32)
    }
}

/// What the search loop asks of its caller.
pub(crate) trait Driver {
    /// Simulations the search may still add (0 ends it); asked before each round.
    fn left(&mut self, search: &Search) -> u64;
    /// Whether to stop now; asked between simulations once the root is evaluated.
    fn stop(&mut self, search: &Search) -> bool;
    /// Evaluates the pending leaf (`search.leaf_position()`) and expands it.
    fn expand(&mut self, search: &mut Search) -> Result<()>;
}

/// Runs `search` (no noise) round after round until `rounds` or `driver` ends it. A root with
/// one legal move gets one round (a search there finishes at once).
pub(crate) fn run(search: &mut Search, mut rounds: Rounds, driver: &mut impl Driver) -> Result<()> {
    let single = search.root().legal_moves().len() == 1;
    while let Some(budget) = rounds.next(driver.left(search)) {
        search.start(budget, false);
        while !search.finished() {
            if search.root_visits() > 0 && driver.stop(search) {
                return Ok(());
            }
            if search.select() {
                driver.expand(search)?;
            }
        }
        if single {
            break;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn budgets(mut r: Rounds, mut left: u64) -> Vec<u32> {
        let mut out = Vec::new();
        while let Some(b) = r.next(left) {
            out.push(b);
            left -= u64::from(b);
        }
        out
    }

    #[test]
    fn rounds_double_under_a_time_limit_only_for_gumbel() {
        let timed = Rounds::new(Algorithm::Gumbel, true, 100);
        assert_eq!(budgets(timed, 1000), [100, 200, 400, 300]);
        assert_eq!(budgets(timed, 50), [50]);
        assert_eq!(
            budgets(Rounds::new(Algorithm::Gumbel, false, 100), 1000),
            [1000]
        );
        assert_eq!(
            budgets(Rounds::new(Algorithm::Puct, true, 100), 1000),
            [1000]
        );
        assert_eq!(budgets(timed, 0), Vec::<u32>::new());
        let mut r = Rounds::new(Algorithm::Gumbel, true, 1);
        for _ in 0..40 {
            r.next(u64::MAX);
        }
        assert_eq!(r.next(u64::MAX), Some(1 << MAX_DOUBLINGS));
    }
}
