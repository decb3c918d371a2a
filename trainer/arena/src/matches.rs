//! Matches: series of games (matches of hands under a consecutive-wins rule) with a running
//! [`Tally`], played by one of two runners. Two in-process players under a node budget play in
//! lockstep, their games sharing batched network calls (`crate::lockstep`, the self-play
//! driver's match mode); every other pairing (an external engine, a clock time control) is
//! refereed one game at a time, every move checked by our rules.
//!
//! With a variant whose `match_rule` is `ConsecutiveWins(n)` (hand shogi), a *match* is a
//! series of hands (games) with alternating first player, won by the first player to win `n`
//! hands in a row (a draw breaks the streak) and drawn after [`MatchSettings::max_hands`]
//! hands.

use crate::error::ArenaError;
use crate::opening::Opening;
use crate::player::{Forfeit, Player, Turn};
use crate::record::record_line;
use crate::tally::{Score, Tally};
use rules::{Color, EndReason, MatchRule, Move, Position, Variant};
use std::sync::Arc;

/// The time control of a match.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TimeControl {
    /// A node budget: our players search their own simulations per move; external engines
    /// get `go nodes N` and [`MatchSettings::move_timeout_ms`] to answer.
    Nodes(u32),
    /// Milliseconds per move (`go movetime MS`).
    Movetime(u64),
    /// Byoyomi in milliseconds without main time (USI `go btime 0 wtime 0 byoyomi MS`, UCI
    /// `go movetime MS`).
    Byoyomi(u64),
}

impl std::fmt::Display for TimeControl {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            TimeControl::Nodes(n) => write!(f, "nodes {n}"),
            TimeControl::Movetime(ms) => write!(f, "movetime {ms} ms"),
            TimeControl::Byoyomi(ms) => write!(f, "byoyomi {ms} ms"),
        }
    }
}

/// How games of a match are played.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MatchSettings {
    /// The time control. Our in-process players always search at most their own simulations
    /// and stop early at 90% of a time limit.
    pub tc: TimeControl,
    /// Milliseconds an engine may exceed a time limit before losing on time.
    pub margin_ms: u64,
    /// Milliseconds an engine may think under [`TimeControl::Nodes`] before losing on time.
    pub move_timeout_ms: u64,
    /// Plies (counted like the position's ply number) after which a game is drawn by the move
    /// limit; 0: the variant's own limit only.
    pub max_plies: u32,
    /// Hands after which a consecutive-wins match is drawn.
    pub max_hands: u32,
}

impl Default for MatchSettings {
    /// 64 nodes, 1 s margin, 60 s per move under nodes, the variant's ply limit, 10 hands.
    fn default() -> MatchSettings {
        MatchSettings {
            tc: TimeControl::Nodes(64),
            margin_ms: 1000,
            move_timeout_ms: 60_000,
            max_plies: 0,
            max_hands: 10,
        }
    }
}

/// How a game ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GameEnd {
    /// By the rules of the variant (checkmate, repetition, move limit, ...).
    Rules(EndReason),
    /// A player lost on its turn (or could not start the game).
    Forfeit(Forfeit),
}

/// A finished game as the referee saw it.
#[derive(Clone, Debug)]
pub(crate) struct Game {
    pub(crate) start: Position,
    pub(crate) moves: Vec<Move>,
    pub(crate) winner: Option<Color>,
    pub(crate) end: GameEnd,
    pub(crate) reason: String,
}

/// One finished game of a match, with its record.
#[derive(Clone, Debug)]
pub struct MatchGame {
    /// Number of the game in the whole series, from 1 (counting hands).
    pub index: u64,
    /// Number of the match, from 1 (equal to `index` under a single-game rule).
    pub match_number: u64,
    /// Number of the hand within its match, from 1 (always 1 under a single-game rule).
    pub hand: u32,
    /// The colour player A had.
    pub a_color: Color,
    /// Name of the player who was sente.
    pub sente: String,
    /// Name of the player who was gote.
    pub gote: String,
    /// The start position of the record (before the opening's moves).
    pub start: Position,
    /// All moves from `start`, the opening's included.
    pub moves: Vec<Move>,
    /// The winner, None for a draw.
    pub winner: Option<Color>,
    /// How the game ended.
    pub end: GameEnd,
    /// Why, as text (`checkmate`, `illegal move by ...: ...`, `... resigns`).
    pub reason: String,
    /// The record line: `sfen .. moves .. result R sente NAME gote NAME reason ..`.
    pub record_line: String,
    /// A's result of the match when this game ended it (every game under a single-game rule).
    pub match_result: Option<Score>,
}

impl MatchGame {
    /// `names`: A's and B's.
    pub(crate) fn new(
        index: u64,
        match_number: u64,
        hand: u32,
        a_color: Color,
        names: [&str; 2],
        game: Game,
    ) -> MatchGame {
        let (sente, gote) = if a_color == Color::Sente {
            (names[0], names[1])
        } else {
            (names[1], names[0])
        };
        MatchGame {
            index,
            match_number,
            hand,
            a_color,
            sente: sente.to_string(),
            gote: gote.to_string(),
            record_line: record_line(
                &game.start,
                &game.moves,
                game.winner,
                [sente, gote],
                &game.reason,
            ),
            start: game.start,
            moves: game.moves,
            winner: game.winner,
            end: game.end,
            reason: game.reason,
            match_result: None,
        }
    }

    /// `A NAME (sente) vs B NAME (gote): A wins by REASON, N plies`.
    pub fn summary(&self) -> String {
        let (s, g) = if self.a_color == Color::Sente {
            ("A", "B")
        } else {
            ("B", "A")
        };
        format!(
            "{s} {} (sente) vs {g} {} (gote): {} by {}, {} plies",
            self.sente,
            self.gote,
            match self.a_score() {
                Score::Win => "A wins",
                Score::Loss => "B wins",
                Score::Draw => "draw",
            },
            self.reason,
            self.moves.len()
        )
    }

    /// A's result of this game.
    pub fn a_score(&self) -> Score {
        match self.winner {
            None => Score::Draw,
            Some(c) if c == self.a_color => Score::Win,
            Some(_) => Score::Loss,
        }
    }

    /// Whether a player broke rather than lost at play: it crashed, timed out, answered
    /// something that is not a move, or our search failed. Such a game says nothing about
    /// strength (a calibration must not count it).
    pub fn broken(&self) -> bool {
        matches!(
            self.end,
            GameEnd::Forfeit(
                Forfeit::Crash | Forfeit::Timeout | Forfeit::Malformed | Forfeit::SearchFailed
            )
        )
    }
}

/// Plays one game between A (`players[0]`, with `a_color`) and B after `opening`.
fn referee(
    players: [&mut Player; 2],
    a_color: Color,
    opening: &Opening,
    s: &MatchSettings,
) -> Game {
    let [a, b] = players;
    let (sente_p, gote_p) = if a_color == Color::Sente {
        (a, b)
    } else {
        (b, a)
    };
    let mut by_color = [sente_p, gote_p];
    let idx = |c: Color| if c == Color::Sente { 0 } else { 1 };
    let start = opening.start.clone();
    let mut pos = opening.position();
    let mut moves = opening.moves.clone();
    let mut result: Option<(Option<Color>, GameEnd, String)> = None;
    for c in [Color::Sente, Color::Gote] {
        let p = &mut by_color[idx(c)];
        if let Err(f) = p.new_game() {
            let why = format!("{}: {f}", p.name());
            result = Some((Some(c.flip()), GameEnd::Forfeit(Forfeit::of(&f)), why));
            break;
        }
    }
    let (winner, end, reason) = match result {
        Some(r) => r,
        None => loop {
            if let Some(o) = pos.outcome() {
                break (
                    o.winner,
                    GameEnd::Rules(o.reason),
                    o.reason.name().to_string(),
                );
            }
            if s.max_plies > 0 && pos.ply() >= s.max_plies as usize {
                let r = EndReason::MoveLimit;
                break (None, GameEnd::Rules(r), r.name().to_string());
            }
            let side = pos.side_to_move();
            match by_color[idx(side)].turn(&start, &moves, &pos, s) {
                Turn::Move(mv) => {
                    pos.make_move(mv);
                    moves.push(mv);
                }
                Turn::Loses(f, why) => break (Some(side.flip()), GameEnd::Forfeit(f), why),
            }
        },
    };
    for c in [Color::Sente, Color::Gote] {
        by_color[idx(c)].game_over(match winner {
            None => Score::Draw,
            Some(w) if w == c => Score::Win,
            Some(_) => Score::Loss,
        });
    }
    Game {
        start,
        moves,
        winner,
        end,
        reason,
    }
}

/// One player's run of hand results in a consecutive-wins match: its last decisive result and
/// how many hands in a row ended so; a draw breaks it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Streak {
    last: Option<Score>,
    len: u32,
}

impl Streak {
    /// Adds a hand's result; returns the match result (the player's `Win` or `Loss`) once
    /// `need` hands in a row went the same way.
    pub(crate) fn add(&mut self, s: Score, need: u32) -> Option<Score> {
        *self = match s {
            Score::Draw => Streak::default(),
            s if self.last == Some(s) => Streak {
                last: Some(s),
                len: self.len + 1,
            },
            s => Streak {
                last: Some(s),
                len: 1,
            },
        };
        self.last.filter(|_| self.len >= need)
    }
}

/// The colour of the player who was `first` in the first hand, after `hands_before` hands:
/// hands alternate who moves first (also from one match to the next).
pub(crate) fn hand_color(first: Color, hands_before: u64) -> Color {
    if hands_before.is_multiple_of(2) {
        first
    } else {
        first.flip()
    }
}

/// How a series of matches is played out: how many, and the hands a match needs and allows.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Series {
    /// Matches to play (games under a single-game rule).
    pub(crate) matches: u64,
    /// Hands in a row a player must win.
    pub(crate) need: u32,
    /// Hands after which a match is drawn.
    pub(crate) max_hands: u32,
}

impl Series {
    /// `matches` matches of `variant`'s match rule.
    pub(crate) fn new(variant: &Variant, settings: &MatchSettings, matches: u32) -> Series {
        let (need, max_hands) = match variant.match_rule {
            MatchRule::Single => (1, 1),
            MatchRule::ConsecutiveWins(n) => (n.max(1), settings.max_hands.max(1)),
        };
        Series {
            matches: matches as u64,
            need,
            max_hands,
        }
    }

    /// Hand `h` of match `m`: A's colour (alternating from hand to hand and from one match to
    /// the next, A sente first) and its opening, `openings[pair % len]`, where hands numbered
    /// `m * max_hands + h` share a pair two by two (a single-game rule: games 2k and 2k+1).
    pub(crate) fn hand<'o>(&self, m: u64, h: u32, openings: &'o [Opening]) -> (Color, &'o Opening) {
        let pair = (m * self.max_hands as u64 + h as u64) / 2;
        let opening = &openings[(pair % openings.len() as u64) as usize];
        (hand_color(Color::Sente, m + h as u64), opening)
    }

    /// The result of a match after a hand that `streak` has counted: A's win or loss when the
    /// streak decides it, a draw after the last hand, None while it goes on.
    pub(crate) fn match_result(&self, decided: Option<Score>, h: u32) -> Option<Score> {
        match decided {
            Some(r) => Some(r),
            None if h + 1 == self.max_hands => Some(Score::Draw),
            None => None,
        }
    }
}

/// Plays `games` games (matches under a consecutive-wins match rule) between `a` and `b`,
/// colours alternating (A is sente in the first game), each pair of consecutive games
/// sharing `openings[pair % openings.len()]` (under a consecutive-wins rule, hand `h` of match
/// `m` counts as game `m * max_hands + h`). Calls `on_game` after each game, in the order of
/// the series, with the finished game and the running tally; stops early when it returns
/// false (for an SPRT or a shutdown). Returns the tally from A's point of view.
///
/// Two in-process players (`model:PATH`, `mcts`) under [`TimeControl::Nodes`] play in
/// lockstep: up to [`crate::LOCKSTEP_GAMES`] games at once, each player's searches batched
/// into one network call a step, the games still in flight when `on_game` stops the match
/// dropped. Any other pairing is refereed one game at a time. Errors: no openings; in
/// lockstep, a failing network evaluation (which the referee scores as a forfeit).
pub fn play_match(
    variant: &Arc<Variant>,
    a: &mut Player,
    b: &mut Player,
    settings: &MatchSettings,
    openings: &[Opening],
    games: u32,
    on_game: &mut dyn FnMut(&MatchGame, &Tally) -> bool,
) -> Result<Tally, ArenaError> {
    if openings.is_empty() {
        return Err(ArenaError::MatchWithoutOpenings);
    }
    let series = Series::new(variant, settings, games);
    let in_process = a.searcher().is_some() && b.searcher().is_some();
    if in_process && matches!(settings.tc, TimeControl::Nodes(_)) {
        crate::lockstep::play(series, [a, b], settings, openings, on_game)
    } else {
        Ok(play_refereed(series, [a, b], settings, openings, on_game))
    }
}

/// The referee's series: one game at a time.
fn play_refereed(
    series: Series,
    players: [&mut Player; 2],
    settings: &MatchSettings,
    openings: &[Opening],
    on_game: &mut dyn FnMut(&MatchGame, &Tally) -> bool,
) -> Tally {
    let [a, b] = players;
    let names = [a.name().to_string(), b.name().to_string()];
    let mut tally = Tally::default();
    let mut played = 0u64;
    for m in 0..series.matches {
        // A's current streak of wins (or losses).
        let mut streak = Streak::default();
        for h in 0..series.max_hands {
            let (a_color, opening) = series.hand(m, h, openings);
            let game = referee([&mut *a, &mut *b], a_color, opening, settings);
            played += 1;
            let mut g = MatchGame::new(played, m + 1, h + 1, a_color, [&names[0], &names[1]], game);
            let s = g.a_score();
            tally.add_hand(s);
            let result = series.match_result(streak.add(s, series.need), h);
            if let Some(r) = result {
                tally.add(r);
                g.match_result = Some(r);
            }
            if !on_game(&g, &tally) {
                return tally;
            }
            if result.is_some() {
                break;
            }
        }
    }
    tally
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::Protocol;
    use crate::opening::random_openings;

    fn mcts(v: &Arc<Variant>, nodes: u32) -> Player {
        Player::from_spec(
            "mcts",
            Protocol::Usi,
            &[],
            v,
            nodes,
            encoding::Device::Cpu,
            &crate::network::tests::NoNetworks,
        )
        .unwrap()
    }

    #[test]
    fn a_short_match() {
        let v = Arc::new(Variant::builtin("minishogi").unwrap());
        let (mut a, mut b) = (mcts(&v, 2), mcts(&v, 2));
        let openings = random_openings(&v, 4, 2, 1);
        let settings = MatchSettings {
            max_plies: 12,
            ..MatchSettings::default()
        };
        let mut seen = Vec::new();
        let t = play_match(&v, &mut a, &mut b, &settings, &openings, 3, &mut |g, t| {
            seen.push((
                g.index,
                g.a_color,
                g.moves.len(),
                g.record_line.clone(),
                t.n(),
            ));
            assert_eq!(g.match_result, Some(g.a_score()));
            true
        })
        .unwrap();
        assert_eq!(t.n(), 3);
        assert_eq!(t.hands(), t);
        assert_eq!(seen.len(), 3);
        assert_eq!(seen[0].1, Color::Sente);
        assert_eq!(seen[1].1, Color::Gote);
        // The pair shares its opening; the move limit draws long games.
        assert!(seen[0]
            .3
            .starts_with(&seen[1].3[..seen[1].3.find(" moves ").unwrap()]));
        assert!(seen.iter().all(|s| s.2 <= 12));
        assert_eq!(seen.iter().map(|s| s.4).collect::<Vec<_>>(), [1, 2, 3]);

        // Stopping early.
        let t = play_match(&v, &mut a, &mut b, &settings, &openings, 3, &mut |_, _| {
            false
        })
        .unwrap();
        assert_eq!(t.n(), 1);
        assert!(play_match(&v, &mut a, &mut b, &settings, &[], 1, &mut |_, _| true).is_err());
    }

    /// Two in-process players play in lockstep the very games the referee plays with them
    /// (the network-free search is deterministic): the same records in the same order, the
    /// same match results and tallies; under a single-game rule and under consecutive wins.
    #[test]
    fn lockstep_plays_the_referees_games() {
        for (name, games) in [("minishogi", 6), ("hand", 3)] {
            let v = Arc::new(Variant::builtin(name).unwrap());
            let openings = random_openings(&v, 4, 8, 5);
            let settings = MatchSettings {
                max_plies: 24,
                max_hands: 3,
                ..MatchSettings::default()
            };
            let (mut a, mut b) = (mcts(&v, 3), mcts(&v, 12));
            type Seen = Vec<(u64, u64, u32, Color, String, Option<Score>, u64)>;
            let see = |seen: &mut Seen, g: &MatchGame, t: &Tally| {
                let m = (g.index, g.match_number, g.hand, g.a_color);
                seen.push((
                    m.0,
                    m.1,
                    m.2,
                    m.3,
                    g.record_line.clone(),
                    g.match_result,
                    t.n(),
                ));
                true
            };
            let (mut refereed, mut lockstep) = (Seen::new(), Seen::new());
            let series = Series::new(&v, &settings, games);
            let t1 = play_refereed(
                series,
                [&mut a, &mut b],
                &settings,
                &openings,
                &mut |g, t| see(&mut refereed, g, t),
            );
            let t2 = play_match(
                &v,
                &mut a,
                &mut b,
                &settings,
                &openings,
                games,
                &mut |g, t| see(&mut lockstep, g, t),
            )
            .unwrap();
            assert!(refereed.len() >= games as usize, "{name}");
            assert_eq!(refereed, lockstep, "{name}");
            assert_eq!((t1, t1.hands()), (t2, t2.hands()), "{name}");
        }
    }

    #[test]
    fn consecutive_wins_matches() {
        let v = Arc::new(Variant::builtin("hand").unwrap());
        let (mut a, mut b) = (mcts(&v, 2), mcts(&v, 2));
        let openings = random_openings(&v, 6, 8, 3);
        let settings = MatchSettings {
            max_plies: 40,
            max_hands: 3,
            ..MatchSettings::default()
        };
        let mut hands = 0;
        // A's results in the current match, to recompute the rule: two hand wins (or losses)
        // in a row decide, a draw breaks the streak, drawn after `max_hands`.
        let mut this_match: Vec<Score> = Vec::new();
        let t = play_match(&v, &mut a, &mut b, &settings, &openings, 4, &mut |g, _| {
            hands += 1;
            assert!(g.hand <= 3);
            // Hands alternate who moves first, also from one match to the next.
            let first = if g.index % 2 == 1 {
                Color::Sente
            } else {
                Color::Gote
            };
            assert_eq!(
                g.a_color, first,
                "hand {} of match {}",
                g.hand, g.match_number
            );
            if g.hand == 1 {
                this_match.clear();
            }
            this_match.push(g.a_score());
            let n = this_match.len();
            let s = this_match[n - 1];
            let want = if s != Score::Draw && n >= 2 && this_match[n - 2] == s {
                Some(s)
            } else if g.hand == 3 {
                Some(Score::Draw)
            } else {
                None
            };
            assert_eq!(g.match_result, want, "{this_match:?}");
            true
        })
        .unwrap();
        assert_eq!(t.n(), 4);
        assert_eq!(t.hands_played(), hands);
        assert!((8..=12).contains(&hands));
    }

    #[test]
    fn a_draw_breaks_the_streak() {
        use Score::{Draw, Loss, Win};
        // The match result after each hand, two hands in a row needed.
        let results = |hands: &[Score]| {
            let mut s = Streak::default();
            hands.iter().map(|&h| s.add(h, 2)).collect::<Vec<_>>()
        };
        assert_eq!(results(&[Win, Win]), [None, Some(Win)]);
        assert_eq!(results(&[Loss, Loss]), [None, Some(Loss)]);
        assert_eq!(results(&[Win, Draw, Win]), [None, None, None]);
        assert_eq!(
            results(&[Win, Draw, Win, Win]),
            [None, None, None, Some(Win)]
        );
        assert_eq!(results(&[Loss, Draw, Loss]), [None, None, None]);
        assert_eq!(results(&[Win, Loss, Win, Loss]), [None; 4]);
        assert_eq!(results(&[Win, Loss, Loss]), [None, None, Some(Loss)]);
        assert_eq!(results(&[Draw, Draw, Draw]), [None; 3]);
        // Three in a row under `consecutive-wins:3`; one hand under a single-game rule.
        let mut s = Streak::default();
        let got = [Win, Win, Draw, Win, Win, Win].map(|h| s.add(h, 3));
        assert_eq!(got, [None, None, None, None, None, Some(Win)]);
        assert_eq!(Streak::default().add(Loss, 1), Some(Loss));
        assert_eq!(Streak::default().add(Draw, 1), None);
    }

    #[test]
    fn hands_alternate_who_moves_first() {
        use Color::{Gote, Sente};
        let a: Vec<Color> = (0..5).map(|h| hand_color(Sente, h)).collect();
        assert_eq!(a, [Sente, Gote, Sente, Gote, Sente]);
        let b: Vec<Color> = (0..3).map(|h| hand_color(Gote, h)).collect();
        assert_eq!(b, [Gote, Sente, Gote]);
    }
}
