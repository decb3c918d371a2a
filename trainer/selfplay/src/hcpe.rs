//! dlshogi's training records (`hcpe`): 38 bytes a position, so that dlshogi's trainer (and
//! anything reading it with cshogi) learns from our self-play games of standard shogi.
//!
//! A record is the position Huffman-coded in 32 bytes (Apery's `HuffmanCodedPos`), the
//! evaluation for the side to move as a signed 16-bit score (dlshogi's scale: win probability
//! `1 / (1 + exp(-eval / 756.09))`), the best move as a 16-bit move (`to | from << 7 |
//! promote << 14`, drops `from = 81 + piece type - 1`, squares `(file - 1) * 9 + rank`), the
//! game's result (0 draw, 1 sente won, 2 gote won) and one padding byte; little-endian.

use crate::error::SelfPlayError;
use crate::samples::GameRecord;
use encoding::{dlshogi, Encoder};
use rules::{Color, GameResult, Move, Position};

/// Bytes of one record.
pub const RECORD_LEN: usize = 38;

/// dlshogi's scale between a score and a win probability.
const EVAL_SCALE: f64 = 756.086_496_295_176_2;
/// Largest score written (dlshogi writes +-30000 for mates).
const EVAL_LIMIT: f64 = 30_000.0;

/// A Huffman code: its value and its number of bits (written lowest bit first).
type Code = (u8, u8);
/// A piece's SFEN token and its codes for sente and for gote.
type PieceCodes = (&'static str, Code, Code);

/// Huffman codes (value, bits; written lowest bit first) of the pieces on the board, by SFEN
/// token, for sente then gote. Empty squares are one 0 bit; kings are coded by square instead.
const BOARD_CODES: [PieceCodes; 13] = [
    ("P", (0b1, 4), (0b101, 4)),
    ("L", (0b11, 6), (0b10011, 6)),
    ("N", (0b111, 6), (0b10111, 6)),
    ("S", (0b1011, 6), (0b11011, 6)),
    ("B", (0b11111, 8), (0b1011111, 8)),
    ("R", (0b111111, 8), (0b1111111, 8)),
    ("G", (0b1111, 6), (0b101111, 6)),
    ("+P", (0b1001, 4), (0b1101, 4)),
    ("+L", (0b100011, 6), (0b110011, 6)),
    ("+N", (0b100111, 6), (0b110111, 6)),
    ("+S", (0b101011, 6), (0b111011, 6)),
    ("+B", (0b10011111, 8), (0b11011111, 8)),
    ("+R", (0b10111111, 8), (0b11111111, 8)),
];
/// Huffman codes of the pieces in hand, in Apery's hand order, for sente then gote.
const HAND_CODES: [PieceCodes; 7] = [
    ("P", (0b0, 3), (0b100, 3)),
    ("L", (0b1, 5), (0b10001, 5)),
    ("N", (0b11, 5), (0b10011, 5)),
    ("S", (0b101, 5), (0b10101, 5)),
    ("G", (0b111, 5), (0b10111, 5)),
    ("B", (0b11111, 7), (0b1011111, 7)),
    ("R", (0b111111, 7), (0b1111111, 7)),
];
/// Piece type number minus 1 of the drops, in dlshogi's piece type order.
const DROP_TYPES: [&str; 7] = ["P", "L", "N", "S", "B", "R", "G"];

/// Writes bits into 32 bytes, lowest bit of each byte first.
struct Bits {
    data: [u8; 32],
    at: usize,
}

impl Bits {
    fn put(&mut self, value: u8, bits: u8) -> Result<(), SelfPlayError> {
        for i in 0..bits {
            if self.at >= 256 {
                return Err(SelfPlayError::Hcpe(
                    "more than 256 bits: not a position of standard shogi's 40 pieces".into(),
                ));
            }
            self.data[self.at / 8] |= ((value >> i) & 1) << (self.at % 8);
            self.at += 1;
        }
        Ok(())
    }
}

fn hcpe(reason: impl Into<String>) -> SelfPlayError {
    SelfPlayError::Hcpe(reason.into())
}

fn color_code(codes: &PieceCodes, c: Color) -> Code {
    match c {
        Color::Sente => codes.1,
        Color::Gote => codes.2,
    }
}

/// The 32-byte Huffman code of a standard shogi position with all 40 pieces.
pub fn huffman_coded(pos: &Position) -> Result<[u8; 32], SelfPlayError> {
    let v = pos.variant();
    let mut b = Bits {
        data: [0; 32],
        at: 0,
    };
    b.put(u8::from(pos.side_to_move() == Color::Gote), 1)?;
    for c in Color::ALL {
        let k = pos
            .king_square(c)
            .ok_or_else(|| hcpe("a king is missing"))?;
        b.put(dlshogi::square(k) as u8, 7)?;
    }
    // dlshogi's square order: file 1 first, each file from rank a down.
    let mut squares: Vec<usize> = (0..81).collect();
    squares.sort_by_key(|&sq| dlshogi::square(sq));
    for sq in squares {
        let p = pos.piece_at(sq);
        if p.is_empty() {
            b.put(0, 1)?;
            continue;
        }
        if v.kinds[p.kind() as usize].royal {
            continue;
        }
        let token = v.kind_token(p.kind());
        let codes = BOARD_CODES
            .iter()
            .find(|c| c.0 == token)
            .ok_or_else(|| hcpe(format!("piece {token} is not a piece of standard shogi")))?;
        let (value, bits) = color_code(codes, p.color());
        b.put(value, bits)?;
    }
    for c in Color::ALL {
        for codes in &HAND_CODES {
            let kind = v
                .kind_by_letter(codes.0.chars().next().unwrap_or(' '), false)
                .ok_or_else(|| hcpe("a hand kind is missing"))?;
            let (value, bits) = color_code(codes, c);
            for _ in 0..pos.hand_count(c, kind) {
                b.put(value, bits)?;
            }
        }
    }
    if b.at != 256 {
        return Err(hcpe(format!(
            "{} bits: a position without all of standard shogi's 40 pieces",
            b.at
        )));
    }
    Ok(b.data)
}

/// dlshogi's 16-bit form of a move.
pub fn move16(pos: &Position, mv: Move) -> u16 {
    let v = pos.variant();
    match mv {
        Move::Normal { from, to, promote } => {
            dlshogi::square(to as usize) as u16
                | (dlshogi::square(from as usize) as u16) << 7
                | u16::from(promote) << 14
        }
        Move::Double { .. } | Move::Line { .. } | Move::Multi { .. } => {
            unreachable!("standard shogi has no moves of several steps")
        }
        Move::Drop { kind, to } => {
            let token = v.kind_token(kind);
            let t = DROP_TYPES.iter().position(|&d| d == token).unwrap_or(0);
            dlshogi::square(to as usize) as u16 | ((81 + t) as u16) << 7
        }
    }
}

/// dlshogi's score of a value in [-1, 1] for the side to move.
pub fn eval_of(value: f32) -> i16 {
    let p = ((value as f64 + 1.0) / 2.0).clamp(0.0, 1.0);
    let eval = -(1.0 / p - 1.0).ln() * EVAL_SCALE;
    eval.clamp(-EVAL_LIMIT, EVAL_LIMIT) as i16
}

/// One record.
pub fn record(
    pos: &Position,
    eval: i16,
    best: Move,
    result: GameResult,
) -> Result<[u8; RECORD_LEN], SelfPlayError> {
    let mut r = [0u8; RECORD_LEN];
    r[..32].copy_from_slice(&huffman_coded(pos)?);
    r[32..34].copy_from_slice(&eval.to_le_bytes());
    r[34..36].copy_from_slice(&move16(pos, best).to_le_bytes());
    r[36] = match result {
        GameResult::Draw => 0,
        GameResult::SenteWins => 1,
        GameResult::GoteWins => 2,
    };
    Ok(r)
}

/// A position of a game with its training target, as the hcpe record holds it.
#[derive(Clone, Debug)]
pub struct TargetPosition {
    /// The position.
    pub position: Position,
    /// The search's best move: the most visited (the policy target's largest share).
    pub best: Move,
    /// The root value for the side to move.
    pub value: f32,
}

/// The positions of a game that have a training target (full searches), with their best
/// moves, decoded with the encoder of the run that wrote the game.
pub fn target_positions(
    rec: &GameRecord,
    encoder: &Encoder,
) -> Result<Vec<TargetPosition>, SelfPlayError> {
    let v = encoder.variant();
    let mut pos = Position::from_sfen(v, &rec.start_sfen)?;
    let mut out = Vec::new();
    for (ply, (usi, target)) in rec.moves.iter().zip(&rec.targets).enumerate() {
        let mv = pos
            .parse_usi(usi)
            .map_err(|source| SelfPlayError::Move { ply, source })?;
        if let Some(t) = target {
            let legal = encoder.legal_indices(&pos);
            let best = t
                .policy
                .iter()
                .filter_map(|&(i, p)| legal.iter().find(|l| l.0 == i as usize).map(|l| (l.1, p)))
                .max_by(|a, b| a.1.total_cmp(&b.1))
                .map(|(m, _)| m)
                .ok_or_else(|| SelfPlayError::target(ply, "the policy target has no legal move"))?;
            out.push(TargetPosition {
                position: pos.clone(),
                best,
                value: t.value,
            });
        }
        pos.make_move(mv);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rules::Variant;
    use std::sync::Arc;

    fn shogi() -> Arc<Variant> {
        Arc::new(Variant::builtin("shogi").unwrap())
    }

    // Golden bytes from cshogi 1.1.0 (`Board.to_hcp`, `move16`), dlshogi's own position code.
    const START: [u8; 32] = [
        88, 164, 73, 33, 12, 215, 87, 33, 126, 142, 77, 33, 44, 175, 66, 120, 20, 194, 171, 16,
        158, 77, 33, 44, 215, 95, 33, 62, 142, 73, 33, 12,
    ];
    const AFTER_BISHOP_TRADE: [u8; 32] = [
        88, 164, 73, 33, 12, 215, 86, 136, 159, 3, 69, 88, 94, 133, 240, 40, 132, 87, 33, 60, 155,
        34, 88, 174, 191, 66, 56, 38, 133, 48, 124, 190,
    ];

    #[test]
    fn positions_and_moves_code_as_in_cshogi() {
        let mut pos = Position::start(shogi());
        assert_eq!(huffman_coded(&pos).unwrap(), START);
        pos.play_usi("7g7f 3c3d 8h2b+ 3a2b").unwrap();
        assert_eq!(huffman_coded(&pos).unwrap(), AFTER_BISHOP_TRADE);
        assert_eq!(move16(&pos, pos.parse_usi("B*4e").unwrap()), 10911);
        assert_eq!(move16(&pos, pos.parse_usi("2g2f").unwrap()), 1934);
    }

    #[test]
    fn records_hold_eval_move_and_result() {
        let pos = Position::start(shogi());
        let mv = pos.parse_usi("7g7f").unwrap();
        let r = record(&pos, eval_of(0.5), mv, GameResult::GoteWins).unwrap();
        let eval = i16::from_le_bytes([r[32], r[33]]);
        // Win probability 0.75 -> 756.09 * ln 3.
        assert_eq!(eval, 830);
        assert_eq!(u16::from_le_bytes([r[34], r[35]]), move16(&pos, mv));
        assert_eq!((r[36], r[37]), (2, 0));
        assert_eq!(eval_of(1.0), 30_000);
        assert_eq!(eval_of(-1.0), -30_000);
        assert_eq!(eval_of(0.0), 0);
    }

    #[test]
    fn other_variants_are_refused() {
        let mini = Arc::new(Variant::builtin("minishogi").unwrap());
        assert!(huffman_coded(&Position::start(mini)).is_err());
    }
}
