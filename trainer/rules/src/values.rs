//! The fixed sets of words some config keys take (`promotion = "forced"`,
//! `end.stalemate = "draw"`), as enums: a word outside its set is refused when the file is read,
//! with the key and the allowed words.

use crate::error::Error;
use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

/// Whether a piece promotes; in a config, `pieces[].promotion`.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum PromotionMode {
    /// No promoted form (in a config: the piece never promotes, even with a promoted form).
    None,
    /// May promote on a move into, out of or within the zone.
    Optional,
    /// Must promote on any move into, out of or within the zone.
    Forced,
    /// Turns over to its other side (promoted, then back) by itself, anywhere, on every move
    /// or on every capture (`Variant::flip_on_capture`). Set on both sides of the piece.
    Flip,
}

impl PromotionMode {
    /// The word of the config file (`"forced"`).
    pub fn as_str(self) -> &'static str {
        match self {
            PromotionMode::None => "none",
            PromotionMode::Optional => "optional",
            PromotionMode::Forced => "forced",
            PromotionMode::Flip => "flip",
        }
    }
}

/// What the side to move gets when it has no legal move (stalemate), or when a repetition ends
/// the game; in a config, `end.stalemate` and `end.repetition_result`.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum StalemateValue {
    /// The stalemated side loses (shogi convention).
    Loss,
    /// The game is drawn.
    Draw,
    /// The stalemated side wins.
    Win,
}

/// Whose result `end.repetition_result` is: the side to move when the repetition occurs
/// (default), or sente whoever moves (minishogi's rule: a repetition loses for sente).
#[derive(Clone, Copy, PartialEq, Eq, Debug, Deserialize, Serialize)]
pub enum RepetitionFor {
    /// The side to move when the position occurs for the last time.
    #[serde(rename = "side-to-move")]
    SideToMove,
    /// Sente, the player who moved first, whoever is to move.
    #[serde(rename = "sente")]
    Sente,
}

impl StalemateValue {
    /// The word of the config file (`"loss"`).
    pub fn as_str(self) -> &'static str {
        match self {
            StalemateValue::Loss => "loss",
            StalemateValue::Draw => "draw",
            StalemateValue::Win => "win",
        }
    }
}

/// The result of a perpetual check for the side that gave it (`end.perpetual_check`).
#[derive(Clone, Copy, PartialEq, Eq, Debug, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum PerpetualCheck {
    /// The checking side loses (shogi).
    Loss,
    /// A plain repetition.
    Draw,
}

/// Whose moves a piece makes (`moves_from`).
#[derive(Clone, Copy, PartialEq, Eq, Debug, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum MovesFrom {
    /// Its own.
    Own,
    /// Those of the friendly piece directly behind it, if any (Annan shogi).
    Behind,
}

/// When pieces with `promotion = "flip"` turn over (`promotion.flip_on`).
#[derive(Clone, Copy, PartialEq, Eq, Debug, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum FlipOn {
    /// On every move.
    Move,
    /// On every capture.
    Capture,
}

/// Which moves may promote (`promotion.moves`).
#[derive(Clone, Copy, PartialEq, Eq, Debug, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum PromotionMoves {
    /// Any move starting or ending in the zone.
    Touching,
    /// A move from outside into the zone, or a capture by a piece starting in it (Chu shogi).
    Entering,
    /// Every capture, anywhere, promotes the capturer by itself (the large variants from
    /// Dai-dai shogi on); there is no zone.
    Capture,
}

/// Which lines count for the n-in-a-row goal (`end.connect_directions`).
#[derive(Clone, Copy, PartialEq, Eq, Debug, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ConnectDirections {
    /// Ranks and files only (Dai hasami shogi).
    Orthogonal,
    /// Ranks, files and diagonals.
    All,
}

/// A match rule for the arena and play (`match`): `single` or `consecutive-wins:N`.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Deserialize, Serialize)]
#[serde(try_from = "String", into = "String")]
pub enum MatchRule {
    /// One game is one match.
    Single,
    /// A match is won by winning this many games in a row (Hand shogi: 2).
    ConsecutiveWins(u32),
}

impl fmt::Display for MatchRule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            MatchRule::Single => f.write_str("single"),
            MatchRule::ConsecutiveWins(n) => write!(f, "consecutive-wins:{n}"),
        }
    }
}

impl FromStr for MatchRule {
    type Err = Error;
    fn from_str(s: &str) -> Result<MatchRule, Error> {
        let count = s.strip_prefix("consecutive-wins:").map(str::parse::<u32>);
        match (s, count) {
            ("single", _) => Ok(MatchRule::Single),
            (_, Some(Ok(n))) if n >= 1 => Ok(MatchRule::ConsecutiveWins(n)),
            _ => Err(Error::Value {
                what: "match rule".into(),
                value: format!("{s:?}"),
                expected: "single or consecutive-wins:N, N at least 1".into(),
            }),
        }
    }
}

impl TryFrom<String> for MatchRule {
    type Error = Error;
    fn try_from(s: String) -> Result<MatchRule, Error> {
        s.parse()
    }
}

impl From<MatchRule> for String {
    fn from(m: MatchRule) -> String {
        m.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn match_rules_read_and_write_their_words() {
        for m in [MatchRule::Single, MatchRule::ConsecutiveWins(2)] {
            assert_eq!(m.to_string().parse::<MatchRule>(), Ok(m));
        }
        for bad in ["", "double", "consecutive-wins:", "consecutive-wins:0"] {
            let e = bad.parse::<MatchRule>().unwrap_err().to_string();
            assert!(e.contains("consecutive-wins:N") && e.contains(bad), "{e}");
        }
    }
}
