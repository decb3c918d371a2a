//! Match tallies: wins, draws and losses, Elo with a 95% interval, and the SPRT.
//!
//! The SPRT is the generalised SPRT on the trinomial score in the normal approximation
//! (`LLR = N (s1 - s0) (2 s - s0 - s1) / (2 var)`, s0/s1 the expected scores at elo0/elo1,
//! s the mean score, var the per-game variance), with alpha = beta = 0.05: bounds
//! `ln(beta / (1 - alpha)) = -2.94` and `ln((1 - beta) / alpha) = +2.94`. The variance is
//! computed with half a game added to each of W, D and L, so that a few decisive games do not
//! end the test.

use crate::elo::{elo_estimate, EloEstimate};
use crate::error::ArenaError;
use rules::MatchRule;

/// The result of a game or a match for one player.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Score {
    /// It won.
    Win,
    /// Drawn.
    Draw,
    /// It lost.
    Loss,
}

impl Score {
    /// The same result seen by the opponent.
    pub fn flip(self) -> Score {
        match self {
            Score::Win => Score::Loss,
            Score::Draw => Score::Draw,
            Score::Loss => Score::Win,
        }
    }
}

/// Wins, draws and losses of player A, in the units Elo and the SPRT count: games, or
/// matches under a consecutive-wins match rule (hand shogi), where the `hand_*` fields count
/// the single hands (games); under a single-game rule they equal the main counts.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Tally {
    /// Won games (matches).
    pub wins: u64,
    /// Drawn games (matches).
    pub draws: u64,
    /// Lost games (matches).
    pub losses: u64,
    /// Won hands (games).
    pub hand_wins: u64,
    /// Drawn hands (games).
    pub hand_draws: u64,
    /// Lost hands (games).
    pub hand_losses: u64,
}

/// SPRT lower and upper bounds of the log-likelihood ratio for alpha = beta = 0.05.
pub fn sprt_bounds() -> (f64, f64) {
    let (alpha, beta) = (0.05f64, 0.05f64);
    ((beta / (1.0 - alpha)).ln(), ((1.0 - beta) / alpha).ln())
}

impl Tally {
    /// A tally of `wins`, `draws`, `losses` games (hands equal to them).
    pub fn new(wins: u64, draws: u64, losses: u64) -> Tally {
        Tally {
            wins,
            draws,
            losses,
            hand_wins: wins,
            hand_draws: draws,
            hand_losses: losses,
        }
    }

    /// Counts one game or match.
    pub fn add(&mut self, s: Score) {
        match s {
            Score::Win => self.wins += 1,
            Score::Draw => self.draws += 1,
            Score::Loss => self.losses += 1,
        }
    }

    /// Counts one hand (game).
    pub fn add_hand(&mut self, s: Score) {
        match s {
            Score::Win => self.hand_wins += 1,
            Score::Draw => self.hand_draws += 1,
            Score::Loss => self.hand_losses += 1,
        }
    }

    /// The hands as a tally of their own.
    pub fn hands(&self) -> Tally {
        Tally::new(self.hand_wins, self.hand_draws, self.hand_losses)
    }

    /// Games (matches) counted.
    pub fn n(&self) -> u64 {
        self.wins + self.draws + self.losses
    }

    /// Hands (games) counted.
    pub fn hands_played(&self) -> u64 {
        self.hand_wins + self.hand_draws + self.hand_losses
    }

    /// Mean score of A in [0, 1] (0.5 with nothing counted).
    pub fn score(&self) -> f64 {
        self.elo().score
    }

    /// Elo difference of A over B with its 95% interval.
    pub fn elo(&self) -> EloEstimate {
        elo_estimate(self.wins, self.draws, self.losses)
    }

    /// Log-likelihood ratio of H1 (A is `elo1` stronger) against H0 (`elo0`), in the normal
    /// approximation (see the module documentation); compare with [`sprt_bounds`].
    pub fn sprt_llr(&self, elo0: f64, elo1: f64) -> f64 {
        let n = self.n() as f64;
        if n == 0.0 {
            return 0.0;
        }
        let s = (self.wins as f64 + 0.5 * self.draws as f64) / n;
        let (w, d, l) = (
            self.wins as f64 + 0.5,
            self.draws as f64 + 0.5,
            self.losses as f64 + 0.5,
        );
        let m = w + d + l;
        let mean = (w + 0.5 * d) / m;
        let var = (w * (1.0 - mean).powi(2) + d * (0.5 - mean).powi(2) + l * mean.powi(2)) / m;
        let score = |elo: f64| 1.0 / (1.0 + 10f64.powf(-elo / 400.0));
        let (s0, s1) = (score(elo0), score(elo1));
        n * (s1 - s0) * (2.0 * s - s0 - s1) / (2.0 * var)
    }

    /// The one-line result (see [`result_line`]).
    pub fn summary(&self) -> String {
        let e = self.elo();
        result_line(
            [self.wins, self.draws, self.losses],
            e.score,
            [e.elo, e.low, e.high],
        )
    }

    /// The header of [`Tally::row`]s.
    pub fn header() -> String {
        format!(
            "{:<8} {:>6} {:>5} {:>5} {:>5} {:>7} {:>6}  95% interval",
            "", "n", "W", "D", "L", "score", "Elo"
        )
    }

    /// The result table: the header, then a `games` row, or `hands` and `matches` rows under
    /// a consecutive-wins match rule.
    pub fn table(&self, rule: MatchRule) -> String {
        match rule {
            MatchRule::Single => format!("{}\n{}", Tally::header(), self.row("games")),
            MatchRule::ConsecutiveWins(_) => format!(
                "{}\n{}\n{}",
                Tally::header(),
                self.hands().row("hands"),
                self.row("matches")
            ),
        }
    }

    /// A table row: label, n, W, D, L, score, Elo and its 95% interval.
    pub fn row(&self, label: &str) -> String {
        let e = self.elo();
        let fmt = elo_text;
        format!(
            "{label:<8} {:>6} {:>5} {:>5} {:>5} {:>6.1}% {:>6}  [{}, {}]",
            self.n(),
            self.wins,
            self.draws,
            self.losses,
            100.0 * e.score,
            fmt(e.elo),
            fmt(e.low),
            fmt(e.high)
        )
    }
}

/// A signed, rounded Elo difference: `+12`, `-3`, `+0`, `+inf`, `-inf`.
pub fn elo_text(x: f64) -> String {
    if x.is_finite() {
        // (+ 0.0 turns -0 into 0)
        format!("{:+.0}", x.round() + 0.0)
    } else if x > 0.0 {
        "+inf".into()
    } else {
        "-inf".into()
    }
}

/// The one-line result of a pairing, the format of every short report:
/// `+W =D -L score 0.625 Elo +89 [-250, +428]` from the wins, draws and losses of the first
/// player, its mean score and its Elo with the 95% interval (`[elo, low, high]`).
pub fn result_line(wdl: [u64; 3], score: f64, elo: [f64; 3]) -> String {
    let [w, d, l] = wdl;
    let [e, low, high] = elo.map(elo_text);
    format!("+{w} ={d} -{l} score {score:.3} Elo {e} [{low}, {high}]")
}

/// A sequential probability ratio test of A against B: H0 "A is `elo0` stronger" against H1
/// "A is `elo1` stronger", alpha = beta = 0.05.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Sprt {
    /// Elo difference of H0.
    pub elo0: f64,
    /// Elo difference of H1 (above `elo0`).
    pub elo1: f64,
}

/// The state of an SPRT.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SprtVerdict {
    /// The lower bound was crossed.
    H0,
    /// The upper bound was crossed.
    H1,
    /// Neither bound yet: play on.
    Inconclusive,
}

impl std::str::FromStr for Sprt {
    type Err = ArenaError;

    /// `ELO0,ELO1` with ELO0 below ELO1 (e.g. `0,10`).
    fn from_str(s: &str) -> Result<Sprt, ArenaError> {
        let (a, b) = s
            .split_once(',')
            .ok_or_else(|| ArenaError::SprtSyntax(s.to_string()))?;
        let p = |x: &str| {
            x.trim()
                .parse::<f64>()
                .map_err(|_| ArenaError::SprtNumber(x.to_string()))
        };
        let (elo0, elo1) = (p(a)?, p(b)?);
        if elo0 >= elo1 {
            return Err(ArenaError::SprtOrder { elo0, elo1 });
        }
        Ok(Sprt { elo0, elo1 })
    }
}

impl Sprt {
    /// The log-likelihood ratio of a tally and the verdict it gives.
    pub fn test(&self, t: &Tally) -> (f64, SprtVerdict) {
        let llr = t.sprt_llr(self.elo0, self.elo1);
        let (lo, hi) = sprt_bounds();
        let v = if llr >= hi {
            SprtVerdict::H1
        } else if llr <= lo {
            SprtVerdict::H0
        } else {
            SprtVerdict::Inconclusive
        };
        (llr, v)
    }

    /// The summary line: hypotheses, LLR, bounds and verdict.
    pub fn report(&self, llr: f64, verdict: SprtVerdict) -> String {
        let (lo, hi) = sprt_bounds();
        format!(
            "sprt elo0 {} elo1 {} (alpha 0.05, beta 0.05): LLR {llr:.3}, bounds [{lo:.3}, \
             {hi:.3}]: {}",
            self.elo0,
            self.elo1,
            match verdict {
                SprtVerdict::H1 => "H1 accepted (A is at least elo1 stronger)",
                SprtVerdict::H0 => "H0 accepted (A is at most elo0 stronger)",
                SprtVerdict::Inconclusive => "inconclusive",
            }
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sprt_basics() {
        let (lo, hi) = sprt_bounds();
        assert!((lo + 2.944).abs() < 1e-3 && (hi - 2.944).abs() < 1e-3);
        assert!(Tally::new(50, 0, 50).sprt_llr(0.0, 10.0) < 0.0);
        assert!(Tally::new(300, 0, 100).sprt_llr(0.0, 10.0) > hi);
        assert!(Tally::new(100, 0, 300).sprt_llr(0.0, 10.0) < lo);
        // One win is far from conclusive.
        assert!(Tally::new(1, 0, 0).sprt_llr(0.0, 10.0) < 1.0);
        assert_eq!(Tally::default().sprt_llr(0.0, 10.0), 0.0);
        let sprt: Sprt = "0,10".parse().unwrap();
        assert_eq!((sprt.elo0, sprt.elo1), (0.0, 10.0));
        assert!("10,0".parse::<Sprt>().is_err());
        assert!("x".parse::<Sprt>().is_err());
        assert!("0,y".parse::<Sprt>().is_err());
        assert_eq!(sprt.test(&Tally::new(300, 0, 100)).1, SprtVerdict::H1);
        assert_eq!(sprt.test(&Tally::new(100, 0, 300)).1, SprtVerdict::H0);
        let (llr, v) = sprt.test(&Tally::new(1, 0, 0));
        assert_eq!(v, SprtVerdict::Inconclusive);
        let r = sprt.report(llr, v);
        assert!(
            r.starts_with("sprt elo0 0 elo1 10 (alpha 0.05, beta 0.05): LLR "),
            "{r}"
        );
        assert!(r.ends_with("bounds [-2.944, 2.944]: inconclusive"), "{r}");
    }

    #[test]
    fn counts_and_rows() {
        let mut t = Tally::default();
        for s in [Score::Win, Score::Win, Score::Draw, Score::Loss] {
            t.add(s);
            t.add_hand(s);
            t.add_hand(s.flip());
        }
        assert_eq!((t.wins, t.draws, t.losses, t.n()), (2, 1, 1, 4));
        assert_eq!(t.hands(), Tally::new(3, 2, 3));
        assert_eq!(t.hands_played(), 8);
        assert!((t.score() - 0.625).abs() < 1e-9);
        assert!(t.elo().elo > 0.0);
        let row = Tally::new(1, 0, 0).row("games");
        assert!(
            row.starts_with("games         1     1     0     0  100.0%"),
            "{row}"
        );
        assert!(row.ends_with("[+inf, +inf]") || row.contains('['), "{row}");
        assert!(Tally::header().ends_with("95% interval"));
        let e = t.elo();
        assert_eq!(
            t.summary(),
            format!(
                "+2 =1 -1 score 0.625 Elo {} [{}, {}]",
                elo_text(e.elo),
                elo_text(e.low),
                elo_text(e.high)
            )
        );
        assert_eq!(
            result_line([3, 2, 1], 0.6667, [120.4, -0.2, f64::INFINITY]),
            "+3 =2 -1 score 0.667 Elo +120 [+0, +inf]"
        );
        assert_eq!(t.table(MatchRule::Single).lines().count(), 2);
        let hand = t.table(MatchRule::ConsecutiveWins(2));
        let words: Vec<Vec<&str>> = hand
            .lines()
            .map(|l| l.split_whitespace().collect())
            .collect();
        assert_eq!(words[1][..5], ["hands", "8", "3", "2", "3"], "{hand}");
        assert_eq!(words[2][..5], ["matches", "4", "2", "1", "1"], "{hand}");
    }
}
