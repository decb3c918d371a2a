//! Perft: counting leaf nodes of the legal move tree, with bulk counting at depth one.

use crate::position::Position;
use crate::types::Move;

/// The deepest perft that [`perft`]'s callers should ask for: a tree of that depth could
/// only be counted if nearly every ply had a single legal move (any two, and it holds more
/// than 2^1000 leaves). `trainer perft` refuses deeper `--depth`s.
pub const MAX_PERFT_DEPTH: u32 = 1000;

/// Leaf nodes at `depth` (bulk counting: the last ply counts moves without playing them).
/// Move buffers are allocated per ply as the search goes down, so a huge `depth` costs
/// nothing where the tree ends early (a position without moves counts 0 at once); each ply
/// reached does take a stack frame (see [`MAX_PERFT_DEPTH`]).
pub fn perft(pos: &mut Position, depth: u32) -> u64 {
    let mut buffers: Vec<Vec<Move>> = Vec::new();
    perft_inner(pos, depth, 0, &mut buffers)
}

fn perft_inner(pos: &mut Position, depth: u32, ply: usize, buffers: &mut Vec<Vec<Move>>) -> u64 {
    if depth == 0 {
        return 1;
    }
    if buffers.len() == ply {
        buffers.push(Vec::with_capacity(256));
    }
    let mut buf = std::mem::take(&mut buffers[ply]);
    pos.generate_legal(&mut buf);
    let total = if depth == 1 {
        buf.len() as u64
    } else {
        let mut total = 0;
        for &mv in buf.iter() {
            pos.make_move(mv);
            total += perft_inner(pos, depth - 1, ply + 1, buffers);
            pos.unmake_move();
        }
        total
    };
    buffers[ply] = buf;
    total
}

/// Per root move: its USI text and the leaf count below it, in generation order.
pub fn perft_divide(pos: &mut Position, depth: u32) -> Vec<(String, u64)> {
    if depth == 0 {
        return Vec::new();
    }
    let moves = pos.legal_moves();
    moves
        .into_iter()
        .map(|mv| {
            pos.make_move(mv);
            let n = perft(pos, depth - 1);
            pos.unmake_move();
            (pos.move_to_usi(mv), n)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::variant::Variant;
    use std::sync::Arc;

    /// A checkmated side has no moves: any depth counts 0 at once, without allocating a move
    /// buffer per ply of `depth` up front (4 billion of them would abort the process).
    #[test]
    fn huge_depth_without_moves_counts_zero() {
        let v = Arc::new(Variant::builtin("minishogi").unwrap());
        let mut pos = Position::from_sfen_composed(&v, "k4/G4/S4/5/4K w - 1").unwrap();
        assert!(pos.legal_moves().is_empty());
        assert_eq!(perft(&mut pos, u32::MAX), 0);
        assert_eq!(perft(&mut pos, 0), 1);
        assert_eq!(perft_divide(&mut pos, u32::MAX), Vec::new());
        let mut start = Position::start(v);
        assert_eq!(perft(&mut start, 1), 14);
    }
}
