//! The arguments of `go` and the search limits they resolve to.

use rules::Color;
use std::time::Duration;

/// Most simulations a time- or stop-limited search adds to its tree (memory bound: a shogi
/// node with its edges takes a few KB).
pub const MAX_TREE_SIMULATIONS: u64 = 400_000;
/// Safety margin kept on the clock (a GUI's byoyomi is strict).
const MARGIN_MS: u64 = 100;
/// What `movetime T` leaves unused: the time to send the answer. Stockfish stops at `T`
/// itself; a margin of the clock's size would leave a 100 ms search no time at all, and 10
/// ms gave away a tenth of it.
const MOVETIME_MARGIN_MS: u64 = 2;
/// Fraction of the remaining time spent on one move (1 / this).
const TIME_DIVISOR: u64 = 30;
/// Shortest time search.
const MIN_THINK_MS: u64 = 10;

/// What `go` asked for.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct GoParams {
    pub(crate) btime: Option<u64>,
    pub(crate) wtime: Option<u64>,
    pub(crate) byoyomi: Option<u64>,
    pub(crate) binc: Option<u64>,
    pub(crate) winc: Option<u64>,
    pub(crate) nodes: Option<u64>,
    pub(crate) movetime: Option<u64>,
    pub(crate) infinite: bool,
    pub(crate) ponder: bool,
    pub(crate) mate: bool,
}

/// Limits of one search, resolved from [`GoParams`] and the options.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Limits {
    /// Simulations to add at most (a pondering search: once `ponderhit` has come).
    pub(crate) simulations: u64,
    /// Stop when this much time has passed since `go` (a pondering search: since `ponderhit`,
    /// see [`Limits::after_ponderhit`]).
    pub(crate) time: Option<Duration>,
    /// The part of `time` that time spent pondering saves: the share of the main time and the
    /// increment (byoyomi, lost when unused, and `movetime` are not saved).
    pub(crate) credit: Duration,
    /// Search until `stop` (bestmove only after it).
    pub(crate) infinite: bool,
    /// `go ponder`: search without a limit (but `ponder_simulations`) until `ponderhit`, then
    /// under the limits above; no bestmove before `ponderhit` or `stop`.
    pub(crate) ponder: bool,
    /// Simulations to add at most while pondering.
    pub(crate) ponder_simulations: u64,
}

impl Limits {
    /// The time limit of a pondering search, counted from `ponderhit` after `pondered` of
    /// pondering: `time` less what pondering saved (at most `credit`), at least the shortest
    /// search.
    pub(crate) fn after_ponderhit(&self, pondered: Duration) -> Option<Duration> {
        let min = Duration::from_millis(MIN_THINK_MS);
        self.time
            .map(|t| t.saturating_sub(pondered.min(self.credit)).max(min))
    }
}

/// Parses the arguments of `go`. Never fails, so that every `go` ends in a `bestmove`: numbers
/// beyond the range are clamped (negative clock times, which some GUIs send when a player is
/// over time, count as 0), and what cannot be understood is skipped with a warning for the
/// caller to print.
pub(crate) fn parse_go(args: &[&str]) -> (GoParams, Vec<String>) {
    let mut p = GoParams::default();
    let mut warnings = Vec::new();
    let mut it = args.iter().peekable();
    while let Some(&tok) = it.next() {
        let mut value = |name: &str, warnings: &mut Vec<String>| -> Option<u64> {
            let Some(v) = it.next() else {
                warnings.push(format!("{name}: missing value (ignored)"));
                return None;
            };
            let digits = v.strip_prefix('-').unwrap_or(v);
            if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
                warnings.push(format!(
                    "{name}: bad value {v:?}, expected an integer (ignored)"
                ));
                return None;
            }
            if v.starts_with('-') {
                return Some(0);
            }
            Some(v.parse::<u64>().unwrap_or_else(|_| {
                warnings.push(format!("{name}: {v} is out of range, read as {}", u64::MAX));
                u64::MAX
            }))
        };
        match tok {
            "btime" => p.btime = value(tok, &mut warnings).or(p.btime),
            "wtime" => p.wtime = value(tok, &mut warnings).or(p.wtime),
            "byoyomi" => p.byoyomi = value(tok, &mut warnings).or(p.byoyomi),
            "binc" => p.binc = value(tok, &mut warnings).or(p.binc),
            "winc" => p.winc = value(tok, &mut warnings).or(p.winc),
            "movetime" => p.movetime = value(tok, &mut warnings).or(p.movetime),
            "nodes" => p.nodes = value(tok, &mut warnings).or(p.nodes),
            "infinite" => p.infinite = true,
            "ponder" => p.ponder = true,
            "mate" => {
                // `go mate <ms|infinite>`
                it.next();
                p.mate = true;
            }
            other => warnings.push(format!("unknown token {other:?} (ignored)")),
        }
    }
    if p.nodes == Some(0) {
        warnings.push("nodes: 0 read as 1".into());
        p.nodes = Some(1);
    }
    (p, warnings)
}

/// Turns `go` parameters into search limits for the side to move.
pub(crate) fn resolve_limits(p: &GoParams, default_simulations: u32, side: Color) -> Limits {
    let infinite = p.infinite;
    let (remaining, inc) = match side {
        Color::Sente => (p.btime, p.binc),
        Color::Gote => (p.wtime, p.winc),
    };
    let byoyomi = p.byoyomi.unwrap_or(0);
    let mut credit_ms = 0;
    let time_ms = if infinite {
        None
    } else if let Some(mt) = p.movetime {
        Some(mt.saturating_sub(MOVETIME_MARGIN_MS).max(MIN_THINK_MS))
    } else if remaining.is_some() || p.byoyomi.is_some() || inc.is_some() {
        let remaining = remaining.unwrap_or(0);
        let inc = inc.unwrap_or(0);
        let share = (remaining / TIME_DIVISOR).saturating_add(inc);
        credit_ms = share;
        let target = share.saturating_add(byoyomi);
        let hard = remaining.saturating_add(byoyomi).saturating_sub(MARGIN_MS);
        Some(target.min(hard).max(MIN_THINK_MS))
    } else {
        None
    };
    let simulations = match p.nodes {
        Some(n) => n,
        None if infinite || time_ms.is_some() => MAX_TREE_SIMULATIONS,
        None => default_simulations as u64,
    };
    // A node limit beyond what the tree may hold is the tree's limit.
    let cap = |n: u64| n.min(MAX_TREE_SIMULATIONS);
    Limits {
        simulations: cap(simulations),
        time: time_ms.map(Duration::from_millis),
        credit: Duration::from_millis(credit_ms),
        infinite,
        ponder: p.ponder,
        ponder_simulations: cap(p.nodes.unwrap_or(MAX_TREE_SIMULATIONS)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn time_limits() {
        let go = |s: &str| parse_go(&s.split_whitespace().collect::<Vec<_>>()).0;
        let l = resolve_limits(&go("byoyomi 300"), 200, Color::Sente);
        assert_eq!(l.time, Some(Duration::from_millis(200)));
        let l = resolve_limits(&go("btime 0 wtime 0 byoyomi 1000"), 200, Color::Gote);
        assert_eq!(l.time, Some(Duration::from_millis(900)));
        let l = resolve_limits(
            &go("btime 60000 wtime 3000 binc 1000 winc 1000"),
            200,
            Color::Sente,
        );
        assert_eq!(l.time, Some(Duration::from_millis(3000)));
        let l = resolve_limits(&go("btime 50 wtime 50"), 200, Color::Sente);
        assert_eq!(l.time, Some(Duration::from_millis(MIN_THINK_MS)));
        let l = resolve_limits(&go("movetime 1000"), 200, Color::Sente);
        assert_eq!(l.time, Some(Duration::from_millis(998)));
        let l = resolve_limits(&go("movetime 100"), 200, Color::Sente);
        assert_eq!(l.time, Some(Duration::from_millis(98)));
        let l = resolve_limits(&go(""), 200, Color::Sente);
        assert_eq!((l.simulations, l.time, l.infinite), (200, None, false));
        let l = resolve_limits(&go("nodes 50"), 200, Color::Sente);
        assert_eq!((l.simulations, l.time), (50, None));
        let l = resolve_limits(&go("infinite"), 200, Color::Sente);
        assert!(l.infinite && l.time.is_none());
        // Nothing makes `go` fail: bad values are skipped with a warning, huge ones clamped.
        for bad in ["nodes abc", "nodes", "depth 3", "btime abc"] {
            let (p, w) = parse_go(&bad.split_whitespace().collect::<Vec<_>>());
            assert_eq!(p.nodes, None, "{bad}");
            assert!(!w.is_empty(), "{bad}");
        }
        assert_eq!(go("btime -20").btime, Some(0));
        assert_eq!(go("nodes 18446744073709551616").nodes, Some(u64::MAX));
        assert_eq!(go("nodes 0").nodes, Some(1));
        let huge = go("btime 99999999999999999999999 wtime 5");
        assert_eq!(huge.btime, Some(u64::MAX));
        let l = resolve_limits(&huge, 200, Color::Sente);
        assert!(l.time.is_some());
        let l = resolve_limits(&go("nodes 18446744073709551616"), 200, Color::Sente);
        assert_eq!(l.simulations, MAX_TREE_SIMULATIONS);
    }

    #[test]
    fn ponder_limits() {
        let go = |s: &str| parse_go(&s.split_whitespace().collect::<Vec<_>>()).0;
        let ms = Duration::from_millis;
        // The clock of `go ponder` is kept for after the ponderhit.
        let l = resolve_limits(
            &go("ponder btime 0 wtime 0 byoyomi 1000"),
            200,
            Color::Sente,
        );
        assert!(l.ponder && !l.infinite);
        assert_eq!(
            (l.time, l.simulations),
            (Some(ms(900)), MAX_TREE_SIMULATIONS)
        );
        assert_eq!(l.ponder_simulations, MAX_TREE_SIMULATIONS);
        // Byoyomi only: pondering saves nothing (unused byoyomi is lost).
        assert_eq!(l.after_ponderhit(ms(5000)), Some(ms(900)));
        // Main time: the share of this move (60000 / 30 + 1000) shrinks by the time pondered,
        // the byoyomi part does not.
        let l = resolve_limits(
            &go("ponder btime 60000 wtime 1000 byoyomi 500 binc 1000"),
            200,
            Color::Sente,
        );
        assert_eq!(l.time, Some(ms(3500)));
        assert_eq!(l.after_ponderhit(ms(0)), Some(ms(3500)));
        assert_eq!(l.after_ponderhit(ms(1000)), Some(ms(2500)));
        assert_eq!(l.after_ponderhit(ms(60000)), Some(ms(500)));
        // Sudden death after a long ponder: the shortest search.
        let l = resolve_limits(&go("ponder btime 3000 wtime 3000"), 200, Color::Gote);
        assert_eq!(l.after_ponderhit(ms(10000)), Some(ms(MIN_THINK_MS)));
        // movetime is counted from the ponderhit in full.
        let l = resolve_limits(&go("ponder movetime 1000"), 200, Color::Sente);
        assert_eq!(l.after_ponderhit(ms(5000)), Some(ms(998)));
        // Without a clock: the node budget applies after the ponderhit.
        let l = resolve_limits(&go("ponder"), 200, Color::Sente);
        assert_eq!((l.time, l.simulations), (None, 200));
        let l = resolve_limits(&go("ponder nodes 70"), 200, Color::Sente);
        assert_eq!((l.simulations, l.ponder_simulations), (70, 70));
        let l = resolve_limits(&go("ponder infinite"), 200, Color::Sente);
        assert!(l.ponder && l.infinite && l.time.is_none());
    }
}
