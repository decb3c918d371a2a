//! Openings: a start position and moves played from it, parsed from text or drawn as random
//! plies. Shared by the lockstep driver and the arena's referee.

use rules::{EndReason, Move, Position, SplitMix64, Variant};
use std::sync::Arc;

/// An opening: a start position and the moves played from it (the game is not over after
/// them).
#[derive(Clone, Debug)]
pub struct Opening {
    /// The position the game record starts from.
    pub start: Position,
    /// Moves played from `start` before the players take over.
    pub moves: Vec<Move>,
}

/// Why a line is not an opening.
#[derive(Debug, thiserror::Error)]
pub enum OpeningError {
    /// A bad SFEN or move.
    #[error(transparent)]
    Rules(#[from] rules::Error),
    /// The game is over after the opening's moves.
    #[error("the opening is already over ({0:?})")]
    Over(EndReason),
}

impl Opening {
    /// The variant's start position, no moves.
    pub fn start_position(variant: &Arc<Variant>) -> Opening {
        Opening {
            start: Position::start(variant.clone()),
            moves: Vec::new(),
        }
    }

    /// The position after the opening's moves (with their history, for repetitions).
    pub fn position(&self) -> Position {
        let mut pos = self.start.clone();
        for &m in &self.moves {
            pos.make_move(m);
        }
        pos
    }
}

/// `count` openings of `plies` random legal moves from the start position, drawn in order
/// from one generator seeded with `seed` (an opening whose game is over is drawn again; the
/// start position after 1000 tries).
pub fn random_openings(
    variant: &Arc<Variant>,
    plies: u32,
    count: usize,
    seed: u64,
) -> Vec<Opening> {
    let mut rng = SplitMix64(seed);
    (0..count)
        .map(|_| Opening::random(variant, plies, &mut rng))
        .collect()
}

impl Opening {
    /// `plies` random legal moves from the start position, drawn from `rng` (drawn again
    /// while the game is over after them; the start position after 1000 tries).
    pub fn random(variant: &Arc<Variant>, plies: u32, rng: &mut SplitMix64) -> Opening {
        for _ in 0..1000 {
            let start = Position::start(variant.clone());
            let mut pos = start.clone();
            let mut moves = Vec::new();
            for _ in 0..plies {
                let legal = pos.legal_moves();
                if legal.is_empty() {
                    break;
                }
                let mv = legal[(rng.next_u64() % legal.len() as u64) as usize];
                pos.make_move(mv);
                moves.push(mv);
            }
            if pos.outcome().is_none() {
                return Opening { start, moves };
            }
        }
        Opening::start_position(variant)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn minishogi() -> Arc<Variant> {
        Arc::new(Variant::builtin("minishogi").unwrap())
    }

    #[test]
    fn random_openings_are_reproducible() {
        let v = minishogi();
        let a = random_openings(&v, 6, 5, 7);
        let b = random_openings(&v, 6, 5, 7);
        assert_eq!(a.len(), 5);
        for (x, y) in a.iter().zip(&b) {
            assert_eq!(x.moves, y.moves);
            assert_eq!(x.moves.len(), 6);
            assert!(x.position().outcome().is_none());
        }
        assert_ne!(
            a.iter().map(|o| o.moves.clone()).collect::<Vec<_>>(),
            random_openings(&v, 6, 5, 8)
                .iter()
                .map(|o| o.moves.clone())
                .collect::<Vec<_>>()
        );
        assert!(random_openings(&v, 0, 2, 1)
            .iter()
            .all(|o| o.moves.is_empty()));
    }
}
