//! Elo: the difference a match score implies, with a 95% confidence interval, and ratings fitted
//! to the games of several players (a ladder's rungs and the networks placed on it).

use crate::error::ArenaError;
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

/// Expected score of a player `d` Elo above its opponent (the logistic Elo model).
pub fn expected_score(d: f64) -> f64 {
    1.0 / (1.0 + 10f64.powf(-d / 400.0))
}

/// Games of one player against one opponent of a known rating: the opponent's Elo, the games
/// and the player's points in them (win 1, draw 1/2).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Results {
    /// The opponent's Elo.
    pub opponent_elo: f64,
    /// Games played.
    pub games: f64,
    /// Points scored.
    pub points: f64,
}

/// A maximum-likelihood Elo with its 95% likelihood-ratio interval.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Rating {
    /// The estimate.
    pub elo: f64,
    /// Lower end of the 95% interval.
    pub low: f64,
    /// Upper end of the 95% interval.
    pub high: f64,
    /// Games it is based on.
    pub games: u64,
}

/// Virtual draws added against every opponent a player met (a weak prior, as BayesElo's): a
/// perfect score then gives a large finite rating instead of an infinite one.
pub const PRIOR_DRAWS: f64 = 1.0;

/// Half the chi-square(1) 95% quantile: the log-likelihood drop at the interval's ends.
const LR_95: f64 = 1.920_729;

/// Widest Elo range searched: beyond it the data say nothing more.
const SPAN: f64 = 4000.0;

fn log_likelihood(r: f64, results: &[Results]) -> f64 {
    results
        .iter()
        .map(|x| {
            let (g, s) = (x.games + PRIOR_DRAWS, x.points + PRIOR_DRAWS / 2.0);
            let p = expected_score(r - x.opponent_elo).clamp(1e-300, 1.0 - 1e-16);
            s * p.ln() + (g - s) * (1.0 - p).ln()
        })
        .sum()
}

/// The rating of one player from its games against opponents of fixed ratings (a ladder's
/// rungs): the maximum of the likelihood of the Elo model, draws counted as half a win and
/// half a loss, with [`PRIOR_DRAWS`] virtual draws against each opponent, and the 95%
/// likelihood-ratio interval. None without games.
pub fn place(results: &[Results]) -> Option<Rating> {
    let games: f64 = results.iter().map(|x| x.games).sum();
    if results.is_empty() || games <= 0.0 {
        return None;
    }
    let lo = results
        .iter()
        .map(|x| x.opponent_elo)
        .fold(f64::INFINITY, f64::min)
        - SPAN;
    let hi = results
        .iter()
        .map(|x| x.opponent_elo)
        .fold(f64::NEG_INFINITY, f64::max)
        + SPAN;
    // The log-likelihood is concave in r: bisect on its slope, then on the level for each end.
    let slope = |r: f64| -> f64 {
        results
            .iter()
            .map(|x| {
                let (g, s) = (x.games + PRIOR_DRAWS, x.points + PRIOR_DRAWS / 2.0);
                s - g * expected_score(r - x.opponent_elo)
            })
            .sum()
    };
    let elo = bisect(lo, hi, |r| slope(r) > 0.0);
    let top = log_likelihood(elo, results);
    let low = bisect(lo, elo, |r| log_likelihood(r, results) < top - LR_95);
    let high = bisect(elo, hi, |r| log_likelihood(r, results) > top - LR_95);
    Some(Rating {
        elo,
        low,
        high,
        games: games.round() as u64,
    })
}

/// The point where `below` turns from true to false in [lo, hi] (to 1e-6 Elo).
fn bisect(mut lo: f64, mut hi: f64, below: impl Fn(f64) -> bool) -> f64 {
    for _ in 0..200 {
        let mid = 0.5 * (lo + hi);
        if below(mid) {
            lo = mid;
        } else {
            hi = mid;
        }
        if hi - lo < 1e-6 {
            break;
        }
    }
    0.5 * (lo + hi)
}

/// One pairing's games: players `a` and `b` (indices), the games and `a`'s points.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Pairing {
    /// First player.
    pub a: usize,
    /// Second player.
    pub b: usize,
    /// Games played.
    pub games: f64,
    /// Points of `a`.
    pub points: f64,
}

/// Ratings of `n` players from their games against each other (a ladder's calibration): the
/// joint maximum likelihood of the Elo model with [`PRIOR_DRAWS`] virtual draws per pairing,
/// player `zero` fixed at 0. Each player's interval is its likelihood-ratio interval with the
/// others held at their estimates. Errors: `zero` out of range, a pairing naming a player out
/// of range or itself, or a player who met nobody (it cannot be placed).
pub fn fit(n: usize, zero: usize, pairings: &[Pairing]) -> Result<Vec<Rating>, ArenaError> {
    if zero >= n {
        return Err(ArenaError::FitZero { zero, n });
    }
    for p in pairings {
        if p.a >= n || p.b >= n || p.a == p.b {
            return Err(ArenaError::FitPairing { a: p.a, b: p.b });
        }
    }
    let opponents = |i: usize, r: &[f64]| -> Vec<Results> {
        pairings
            .iter()
            .filter_map(|p| {
                if p.a == i {
                    Some(Results {
                        opponent_elo: r[p.b],
                        games: p.games,
                        points: p.points,
                    })
                } else if p.b == i {
                    Some(Results {
                        opponent_elo: r[p.a],
                        games: p.games,
                        points: p.games - p.points,
                    })
                } else {
                    None
                }
            })
            .collect()
    };
    if let Some(i) = (0..n).find(|&i| opponents(i, &vec![0.0; n]).is_empty() && n > 1) {
        return Err(ArenaError::FitUnrated(i));
    }
    // Coordinate ascent: each player's best response to the others, until nothing moves.
    // The likelihood is jointly concave, so this reaches the joint maximum.
    let mut r = vec![0.0; n];
    for _ in 0..10_000 {
        let mut moved: f64 = 0.0;
        for i in 0..n {
            let Some(best) = place(&opponents(i, &r)) else {
                continue;
            };
            moved = moved.max((best.elo - r[i]).abs());
            r[i] = best.elo;
        }
        let shift = r[zero];
        r.iter_mut().for_each(|x| *x -= shift);
        if moved < 1e-4 {
            break;
        }
    }
    Ok((0..n)
        .map(|i| {
            let mut x = place(&opponents(i, &r)).unwrap_or(Rating {
                elo: 0.0,
                low: f64::NEG_INFINITY,
                high: f64::INFINITY,
                games: 0,
            });
            x.elo = r[i];
            if i == zero {
                (x.low, x.high) = (0.0, 0.0);
            }
            x
        })
        .collect())
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

    #[test]
    fn placement_is_the_likelihood_maximum() {
        // One opponent: the estimate is the Elo of the score with the prior's virtual draw.
        let r = place(&[Results {
            opponent_elo: 100.0,
            games: 10.0,
            points: 7.5,
        }])
        .unwrap();
        let s: f64 = 8.0 / 11.0;
        let want = 100.0 - 400.0 * (1.0 / s - 1.0).log10();
        assert!((r.elo - want).abs() < 1e-3, "{} vs {want}", r.elo);
        assert!(r.low < r.elo && r.elo < r.high);
        assert_eq!(r.games, 10);
        // The ends are where the log-likelihood is 1.92 below its top.
        let res = [Results {
            opponent_elo: 100.0,
            games: 10.0,
            points: 7.5,
        }];
        let top = log_likelihood(r.elo, &res);
        for end in [r.low, r.high] {
            assert!((top - log_likelihood(end, &res) - LR_95).abs() < 1e-4);
        }
        // More games, a narrower interval around the same score.
        let r4 = place(&[Results {
            opponent_elo: 100.0,
            games: 400.0,
            points: 300.0,
        }])
        .unwrap();
        assert!(r4.high - r4.low < (r.high - r.low) / 4.0);
        // A perfect score is finite and above the opponent, its lower end too.
        let p = place(&[Results {
            opponent_elo: 0.0,
            games: 20.0,
            points: 20.0,
        }])
        .unwrap();
        assert!(p.elo > 400.0 && p.elo < 1000.0 && p.low > 150.0, "{p:?}");
        // Two opponents: between them for a split score, the slope is zero at the estimate.
        let two = [
            Results {
                opponent_elo: 0.0,
                games: 10.0,
                points: 8.0,
            },
            Results {
                opponent_elo: 400.0,
                games: 10.0,
                points: 2.0,
            },
        ];
        let m = place(&two).unwrap();
        assert!((m.elo - 200.0).abs() < 1e-3, "{m:?}");
        assert!(place(&[]).is_none());
    }

    #[test]
    fn calibration_recovers_the_gaps() {
        // Three players with exact expected scores for gaps of 100 and 200 Elo: the fit finds
        // the gaps back (the prior pulls them in a little at 1,000 games a pairing).
        let e1 = expected_score(100.0);
        let e2 = expected_score(200.0);
        let e3 = expected_score(300.0);
        let g = 1000.0;
        let pairings = [
            Pairing {
                a: 1,
                b: 0,
                games: g,
                points: g * e1,
            },
            Pairing {
                a: 2,
                b: 1,
                games: g,
                points: g * e2,
            },
            Pairing {
                a: 2,
                b: 0,
                games: g,
                points: g * e3,
            },
        ];
        let r = fit(3, 0, &pairings).unwrap();
        assert_eq!(r[0].elo, 0.0);
        assert!((r[1].elo - 100.0).abs() < 2.0, "{r:?}");
        assert!((r[2].elo - 300.0).abs() < 2.0, "{r:?}");
        assert!(r[1].low < r[1].elo && r[1].elo < r[1].high);
        // Another zero shifts every rating by the same amount.
        let s = fit(3, 1, &pairings).unwrap();
        assert!((s[2].elo - (r[2].elo - r[1].elo)).abs() < 1e-2);
        // Players nobody met, bad indices.
        assert!(fit(4, 0, &pairings)
            .unwrap_err()
            .to_string()
            .contains("player 3"));
        assert!(fit(3, 5, &pairings).is_err());
        let selfplay = [Pairing {
            a: 1,
            b: 1,
            games: 2.0,
            points: 1.0,
        }];
        assert!(fit(2, 0, &selfplay).is_err());
    }
}
