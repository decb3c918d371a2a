//! Matches between two in-process players in lockstep: the self-play driver's match mode plays
//! many games of the series at once, each step's leaves of one player going to its network in
//! one batch. Games finish out of order; they are handed over in the order of the series, so
//! the caller sees what the referee would show: the same numbering, colours, openings, tally
//! and records.

use crate::error::ArenaError;
use crate::matches::{Game, GameEnd, MatchGame, MatchSettings, Series, Streak};
use crate::opening::Opening;
use crate::player::Player;
use crate::tally::{Score, Tally};
use rules::{Color, EndReason};
use search::Evaluator;
use selfplay::{Control, GameRecord, GameStart, Mode, PlayStats, SelfPlayConfig};
use std::collections::{BTreeMap, BTreeSet, HashMap};

/// The most games a match plays at once in lockstep (matches of hands under a consecutive-wins
/// rule: the most matches, each playing one hand at a time).
pub const LOCKSTEP_GAMES: usize = 64;

/// Plays the series between two in-process players (A = `players[0]`); see
/// [`crate::play_match`].
pub(crate) fn play(
    series: Series,
    players: [&mut Player; 2],
    settings: &MatchSettings,
    openings: &[Opening],
    on_game: &mut dyn FnMut(&MatchGame, &Tally) -> bool,
) -> Result<Tally, ArenaError> {
    let [a, b] = players;
    let names = [a.name().to_string(), b.name().to_string()];
    let (Some(sa), Some(sb)) = (a.searcher(), b.searcher()) else {
        return Err(ArenaError::NotInProcess);
    };
    let (enc_a, net_a, search_a) = sa.lockstep_parts();
    let (enc_b, net_b, search_b) = sb.lockstep_parts();
    let evaluators: Vec<Box<dyn Evaluator + '_>> = vec![Box::new(net_a), Box::new(net_b)];
    let cfg = SelfPlayConfig {
        parallel_games: (series.matches as usize).clamp(1, LOCKSTEP_GAMES),
        pipeline: 1,
        max_plies: settings.max_plies,
        ..SelfPlayConfig::default()
    };
    let mut control = Hands {
        series,
        openings,
        names: [&names[0], &names[1]],
        next_match: 0,
        ready: BTreeSet::new(),
        streaks: HashMap::new(),
        finished: BTreeMap::new(),
        next: (0, 0),
        played: 0,
        tally: Tally::default(),
        on_game,
        error: None,
        stopped: false,
    };
    // Without noise the searches ignore the seed.
    selfplay::run_games(
        &[enc_a, enc_b],
        evaluators,
        &[search_a, search_b],
        &cfg,
        Mode::Match,
        0,
        &mut control,
    )
    .map_err(ArenaError::LockstepSearch)?;
    match control.error {
        Some(e) => Err(e),
        None => Ok(control.tally),
    }
}

/// A finished hand waiting for the earlier ones of the series.
struct Finished {
    game: Game,
    a_color: Color,
    /// A's result of the match when this hand ended it.
    result: Option<Score>,
}

/// The driver's owner in a match: starts the hands of the series (a match's next hand once
/// its last one has ended), gives each its opening and colours, and hands the finished games
/// over in series order.
struct Hands<'a> {
    series: Series,
    openings: &'a [Opening],
    names: [&'a str; 2],
    /// The first match not started.
    next_match: u64,
    /// (match, hand) of the hands whose match goes on, to start.
    ready: BTreeSet<(u64, u32)>,
    /// A's streak in each match in flight.
    streaks: HashMap<u64, Streak>,
    finished: BTreeMap<(u64, u32), Finished>,
    /// (match, hand) to hand over next.
    next: (u64, u32),
    played: u64,
    tally: Tally,
    on_game: &'a mut dyn FnMut(&MatchGame, &Tally) -> bool,
    error: Option<ArenaError>,
    stopped: bool,
}

impl Hands<'_> {
    fn tag(&self, m: u64, h: u32) -> u64 {
        m * self.series.max_hands as u64 + h as u64
    }

    fn hand(&self, tag: u64) -> (u64, u32) {
        let n = self.series.max_hands as u64;
        (tag / n, (tag % n) as u32)
    }

    /// Hands the finished games over while the next one of the series is among them; false
    /// once `on_game` stops the match.
    fn hand_over(&mut self) -> bool {
        while let Some(f) = self.finished.remove(&self.next) {
            let (m, h) = self.next;
            self.played += 1;
            let mut g = MatchGame::new(self.played, m + 1, h + 1, f.a_color, self.names, f.game);
            self.tally.add_hand(g.a_score());
            if let Some(r) = f.result {
                self.tally.add(r);
                g.match_result = Some(r);
            }
            self.next = if f.result.is_some() {
                (m + 1, 0)
            } else {
                (m, h + 1)
            };
            if !(self.on_game)(&g, &self.tally) {
                self.stopped = true;
                return false;
            }
        }
        true
    }
}

impl Control<'_> for Hands<'_> {
    fn start_game(&mut self) -> Option<u64> {
        if self.stopped || self.error.is_some() {
            return None;
        }
        let (m, h) = match self.ready.pop_first() {
            Some(hand) => hand,
            None if self.next_match < self.series.matches => {
                self.next_match += 1;
                (self.next_match - 1, 0)
            }
            None => return None,
        };
        Some(self.tag(m, h))
    }

    fn game_start(&mut self, _: usize, tag: u64) -> GameStart {
        let (m, h) = self.hand(tag);
        let (a_color, opening) = self.series.hand(m, h, self.openings);
        GameStart {
            opening: Some(opening.clone()),
            sente: usize::from(a_color != Color::Sente),
        }
    }

    fn game_over(&mut self, _: usize, tag: u64, record: GameRecord, _: &PlayStats) -> bool {
        let (m, h) = self.hand(tag);
        let (a_color, opening) = self.series.hand(m, h, self.openings);
        let game = match replay(opening, &record) {
            Ok(g) => g,
            Err(e) => {
                self.error = Some(e);
                return false;
            }
        };
        let score = match game.winner {
            None => Score::Draw,
            Some(c) if c == a_color => Score::Win,
            Some(_) => Score::Loss,
        };
        let decided = self
            .streaks
            .entry(m)
            .or_default()
            .add(score, self.series.need);
        let result = self.series.match_result(decided, h);
        if result.is_some() {
            self.streaks.remove(&m);
        } else {
            self.ready.insert((m, h + 1));
        }
        let f = Finished {
            game,
            a_color,
            result,
        };
        self.finished.insert((m, h), f);
        self.hand_over()
    }
}

/// The referee's view of a driver's game record, which starts at the opening's start
/// position with its moves: the moves replayed under the rules, and how the game ended.
fn replay(opening: &Opening, record: &GameRecord) -> Result<Game, ArenaError> {
    let start = opening.start.clone();
    let mut pos = start.clone();
    let mut moves = Vec::with_capacity(record.moves.len());
    for usi in &record.moves {
        let mv = pos.parse_usi(usi).map_err(ArenaError::LockstepRecord)?;
        pos.make_move(mv);
        moves.push(mv);
    }
    let end = pos.outcome().map_or(EndReason::MoveLimit, |o| o.reason);
    Ok(Game {
        start,
        moves,
        winner: record.result.winner(),
        end: GameEnd::Rules(end),
        reason: record.reason.clone(),
    })
}
