//! The arguments of `go` and the search limits they resolve to.

use rules::Color;
use std::time::Duration;

/// Most simulations a time- or stop-limited search adds to its tree (memory bound: a shogi
/// node with its edges takes a few KB).
pub const MAX_TREE_SIMULATIONS: u64 = 400_000;
/// Safety margin kept on the clock.
const MARGIN_MS: u64 = 100;
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
    /// Simulations to add at most.
    pub(crate) simulations: u64,
    /// Stop when this much time has passed since `go`.
    pub(crate) time: Option<Duration>,
    /// Search until `stop` (bestmove only after it).
    pub(crate) infinite: bool,
}

/// Parses the arguments of `go`.
pub(crate) fn parse_go(args: &[&str]) -> std::result::Result<GoParams, String> {
    let mut p = GoParams::default();
    let mut it = args.iter();
    while let Some(&tok) = it.next() {
        let mut value = |name: &str| -> std::result::Result<u64, String> {
            let v = it.next().ok_or_else(|| format!("{name}: missing value"))?;
            // Some GUIs send negative clock times when a player is over time: treat as 0.
            match v.parse::<i64>() {
                Ok(n) => Ok(n.max(0) as u64),
                Err(_) => Err(format!("{name}: bad value {v:?} (expected an integer)")),
            }
        };
        match tok {
            "btime" => p.btime = Some(value(tok)?),
            "wtime" => p.wtime = Some(value(tok)?),
            "byoyomi" => p.byoyomi = Some(value(tok)?),
            "binc" => p.binc = Some(value(tok)?),
            "winc" => p.winc = Some(value(tok)?),
            "movetime" => p.movetime = Some(value(tok)?),
            "nodes" => p.nodes = Some(value(tok)?),
            "infinite" => p.infinite = true,
            "ponder" => p.ponder = true,
            "mate" => {
                // `go mate <ms|infinite>`
                it.next();
                p.mate = true;
            }
            other => return Err(format!("unknown token {other:?}")),
        }
    }
    if p.nodes == Some(0) {
        return Err("nodes: must be at least 1".into());
    }
    Ok(p)
}

/// Turns `go` parameters into search limits for the side to move.
pub(crate) fn resolve_limits(p: &GoParams, default_simulations: u32, side: Color) -> Limits {
    let infinite = p.infinite || p.ponder;
    let (remaining, inc) = match side {
        Color::Sente => (p.btime, p.binc),
        Color::Gote => (p.wtime, p.winc),
    };
    let byoyomi = p.byoyomi.unwrap_or(0);
    let time_ms = if infinite {
        None
    } else if let Some(mt) = p.movetime {
        Some(mt.saturating_sub(MARGIN_MS).max(MIN_THINK_MS))
    } else if remaining.is_some() || p.byoyomi.is_some() || inc.is_some() {
        let remaining = remaining.unwrap_or(0);
        let inc = inc.unwrap_or(0);
        let target = remaining / TIME_DIVISOR + inc + byoyomi;
        let hard = (remaining + byoyomi).saturating_sub(MARGIN_MS);
        Some(target.min(hard).max(MIN_THINK_MS))
    } else {
        None
    };
    let simulations = match p.nodes {
        Some(n) => n,
        None if infinite || time_ms.is_some() => MAX_TREE_SIMULATIONS,
        None => default_simulations as u64,
    };
    Limits {
        simulations: simulations.min(u32::MAX as u64 - 1),
        time: time_ms.map(Duration::from_millis),
        infinite,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn time_limits() {
        let go = |s: &str| parse_go(&s.split_whitespace().collect::<Vec<_>>()).unwrap();
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
        assert_eq!(l.time, Some(Duration::from_millis(900)));
        let l = resolve_limits(&go(""), 200, Color::Sente);
        assert_eq!((l.simulations, l.time, l.infinite), (200, None, false));
        let l = resolve_limits(&go("nodes 50"), 200, Color::Sente);
        assert_eq!((l.simulations, l.time), (50, None));
        let l = resolve_limits(&go("infinite"), 200, Color::Sente);
        assert!(l.infinite && l.time.is_none());
        assert!(parse_go(&["nodes", "abc"]).is_err());
        assert!(parse_go(&["nodes"]).is_err());
        assert!(parse_go(&["depth", "3"]).is_err());
        assert_eq!(go("btime -20").btime, Some(0));
    }
}
