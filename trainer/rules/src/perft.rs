//! Perft: counting leaf nodes of the legal move tree, with bulk counting at depth one.

use crate::position::Position;
use crate::types::Move;

/// Leaf nodes at `depth` (bulk counting: the last ply counts moves without playing them).
pub fn perft(pos: &mut Position, depth: u32) -> u64 {
    let mut buffers: Vec<Vec<Move>> = (0..depth.max(1)).map(|_| Vec::with_capacity(256)).collect();
    perft_inner(pos, depth, &mut buffers)
}

fn perft_inner(pos: &mut Position, depth: u32, buffers: &mut [Vec<Move>]) -> u64 {
    if depth == 0 {
        return 1;
    }
    let (buf, rest) = buffers.split_first_mut().expect("one buffer per ply");
    pos.generate_legal(buf);
    if depth == 1 {
        return buf.len() as u64;
    }
    let mut total = 0;
    for &mv in buf.iter() {
        pos.make_move(mv);
        total += perft_inner(pos, depth - 1, rest);
        pos.unmake_move();
    }
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
