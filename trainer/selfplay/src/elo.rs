//! Elo difference from a match score, with a 95% confidence interval.

use serde::{Deserialize, Serialize};

/// An Elo estimate from wins, draws and losses.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct EloEstimate {
    /// Games.
    pub games: u64,
    /// Mean score in [0, 1].
    pub score: f64,
    /// Elo difference (positive: the first player is stronger).
    pub elo: f64,
    /// Lower end of the 95% interval.
    pub low: f64,
    /// Upper end of the 95% interval.
    pub high: f64,
}

fn elo_of(score: f64) -> f64 {
    let s = score.clamp(1e-6, 1.0 - 1e-6);
    -400.0 * (1.0 / s - 1.0).log10()
}

/// Elo of the first player from its wins, draws and losses (normal approximation of the mean
/// score, trinomial variance). A perfect or null score is estimated as half a game less
/// extreme, with binomial variance.
pub fn elo_estimate(wins: u64, draws: u64, losses: u64) -> EloEstimate {
    let n = wins + draws + losses;
    if n == 0 {
        return EloEstimate {
            games: 0,
            score: 0.5,
            elo: 0.0,
            low: f64::NEG_INFINITY,
            high: f64::INFINITY,
        };
    }
    let nf = n as f64;
    let (w, d, l) = (wins as f64 / nf, draws as f64 / nf, losses as f64 / nf);
    let s = w + 0.5 * d;
    let mut var = w * (1.0 - s).powi(2) + d * (0.5 - s).powi(2) + l * s.powi(2);
    // A perfect (or null) score has no spread and an infinite Elo: report the estimate of a
    // score half a game away, with binomial spread, so the interval still says how sure it is.
    let mut est = s;
    if var < 1e-12 {
        est = s.clamp(0.5 / nf, 1.0 - 0.5 / nf);
        var = est * (1.0 - est);
    }
    let se = (var / nf).sqrt();
    EloEstimate {
        games: n,
        score: s,
        elo: elo_of(est),
        low: elo_of(est - 1.96 * se),
        high: elo_of(est + 1.96 * se),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_values() {
        let e = elo_estimate(10, 0, 10);
        assert!(e.elo.abs() < 1e-9);
        assert!(e.low < -100.0 && e.high > 100.0);
        // 75% score is about +191 Elo.
        let e = elo_estimate(75, 0, 25);
        assert!((e.elo - 190.85).abs() < 0.1, "{}", e.elo);
        assert!(e.low < e.elo && e.elo < e.high);
        // 40-0: a large finite estimate with a lower bound well above zero.
        let e = elo_estimate(40, 0, 0);
        assert!((e.elo - 759.05).abs() < 0.1, "{}", e.elo);
        assert!(e.low > 300.0 && e.low < e.elo, "{}", e.low);
        assert_eq!(elo_estimate(0, 0, 0).games, 0);
    }
}
