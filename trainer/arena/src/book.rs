//! Balanced opening books: random openings that an external engine rates close to even.
//!
//! From random plies most openings of a small variant are already decided (in minishogi after
//! four random plies, Fairy-Stockfish rates some five in eight 300 cp or more for one side,
//! and that side wins both games of the pair), so a match over them spends most of its games
//! where neither player's strength shows. A book of openings an engine rates within a bound
//! spends them where the score is made, as the balanced books of engine testing do.

use crate::engine::{EngineScore, ExternalEngine};
use crate::error::{ArenaError, Failure};
use crate::opening::Opening;
use rules::{Color, Position, SplitMix64, Variant};
use std::collections::HashSet;
use std::sync::Arc;
use std::time::Duration;

/// What [`balanced_openings`] draws and keeps.
#[derive(Clone, Debug)]
pub struct BookSettings {
    /// Random plies from the start position.
    pub plies: u32,
    /// Openings to keep.
    pub count: usize,
    /// Keep an opening when the engine's score, in centipawns, is at most this far from 0
    /// (mate scores are never kept).
    pub max_cp: i32,
    /// The arguments of `go` for each evaluation (e.g. `movetime 300`).
    pub go: String,
    /// How long an evaluation may take before the engine is given up on.
    pub timeout: Duration,
    /// Seed of the random plies.
    pub seed: u64,
    /// Most distinct openings to evaluate before giving up.
    pub max_candidates: usize,
}

/// A kept opening and the engine's view of it.
#[derive(Clone, Debug)]
pub struct BookEntry {
    /// The opening.
    pub opening: Opening,
    /// The engine's score from sente's side, in centipawns.
    pub sente_cp: i32,
}

/// The book and how it was drawn.
#[derive(Clone, Debug)]
pub struct Book {
    /// The kept openings, in the order they were drawn.
    pub entries: Vec<BookEntry>,
    /// Distinct openings the engine evaluated.
    pub evaluated: usize,
    /// Openings drawn again (the same position as an earlier one) and skipped.
    pub repeats: usize,
}

/// Draws random openings of `s.plies` plies (the generator of [`crate::random_openings`],
/// seeded with `s.seed`), has `engine` evaluate each distinct one (by its position: two
/// move orders to one position are one opening), each in a fresh engine process, and keeps
/// those within `s.max_cp`, until
/// `s.count` are kept. `progress(evaluated, kept)` is called after each evaluation. Errors:
/// the engine fails or gives no score, or `s.max_candidates` distinct openings (or 100 times
/// as many draws) do not give `s.count`.
pub fn balanced_openings(
    variant: &Arc<Variant>,
    engine: &mut ExternalEngine,
    s: &BookSettings,
    mut progress: impl FnMut(usize, usize),
) -> Result<Book, ArenaError> {
    let mut rng = SplitMix64(s.seed);
    let mut seen = HashSet::new();
    let mut book = Book {
        entries: Vec::new(),
        evaluated: 0,
        repeats: 0,
    };
    let max_draws = s.max_candidates.saturating_mul(100);
    let mut draws = 0usize;
    while book.entries.len() < s.count {
        if book.evaluated >= s.max_candidates || draws >= max_draws {
            return Err(ArenaError::Book(format!(
                "only {} of {} openings within {} cp after {} distinct ones of {} random plies \
                 ({draws} draws); allow more candidates or a wider bound",
                book.entries.len(),
                s.count,
                s.max_cp,
                book.evaluated,
                s.plies
            )));
        }
        draws += 1;
        let opening = Opening::random(variant, s.plies, &mut rng);
        let pos = opening.position();
        if !seen.insert(position_key(&pos.to_sfen())) {
            book.repeats += 1;
            continue;
        }
        let line = opening_line(variant, &opening);
        let fail = |f: Failure| ArenaError::Book(format!("evaluating `{line}`: {f}"));
        engine.new_game().map_err(fail)?;
        let scored = engine.go_scored(&opening.start, &opening.moves, &s.go, s.timeout);
        // A fresh process for each opening: `ucinewgame` clears the hash but not all of an
        // engine's state (Stockfish's table ages), so a score would depend on the openings
        // before it, and could not be checked alone.
        engine.quit();
        let (_, score) = scored.map_err(fail)?;
        book.evaluated += 1;
        let score = score.ok_or_else(|| {
            ArenaError::Book(format!("evaluating `{line}`: the engine gave no score"))
        })?;
        if let EngineScore::Cp(cp) = score {
            // In i64: an engine's `cp -2147483648` must not overflow.
            if i64::from(cp).abs() <= i64::from(s.max_cp) {
                let sente_cp = if pos.side_to_move() == Color::Sente {
                    cp
                } else {
                    -cp
                };
                book.entries.push(BookEntry { opening, sente_cp });
            }
        }
        progress(book.evaluated, book.entries.len());
    }
    Ok(book)
}

/// An SFEN without its move number: the same position reached at another ply is the same.
fn position_key(sfen: &str) -> String {
    let fields: Vec<&str> = sfen.split_whitespace().collect();
    match fields.split_last() {
        Some((last, rest)) if last.parse::<u32>().is_ok() => rest.join(" "),
        _ => fields.join(" "),
    }
}

/// An opening as a line of an openings file (`startpos moves ...`, or `sfen ... moves ...`
/// when it starts elsewhere), which [`crate::parse_game_line`] reads back.
pub fn opening_line(variant: &Arc<Variant>, o: &Opening) -> String {
    let from_start = o.start.to_sfen() == Position::start(variant.clone()).to_sfen();
    let mut line = if from_start {
        "startpos".to_string()
    } else {
        format!("sfen {}", o.start.to_sfen())
    };
    if !o.moves.is_empty() {
        line.push_str(" moves");
        for &m in &o.moves {
            line.push(' ');
            line.push_str(&variant.move_to_usi(m));
        }
    }
    line
}
