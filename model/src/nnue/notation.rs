//! Positions and moves as Fairy-Stockfish writes them for a variant (its `Position::fen` and
//! `UCI::move`), for training data its tools read.
//!
//! FEN: our SFEN's board, the hands in brackets where pieces are dropped (sente's first, each
//! side's pieces by piece type from the highest `PieceType` value down), `w` for sente or `b`, no castling and no en
//! passant square, the halfmove clock and the move number. Moves: squares as file letter from
//! the left and rank number from sente's side (`c3c4`); a move that turns its piece over ends
//! in `+` (up) or `-` (down: Kyoto and Micro shogi's pieces turning back); drops are `P@c4`,
//! `+P@c4` for a piece dropped promoted side up.

use super::layout::FeatureLayout;
use rules::{Color, Move, Position};

impl FeatureLayout {
    fn square_name(&self, sq: usize) -> String {
        let (files, ranks) = self.board();
        let (x, y) = (sq % files, sq / files);
        format!("{}{}", char::from(b'a' + x as u8), ranks - y)
    }

    /// Fairy-Stockfish's FEN of `pos` with halfmove clock `halfmove`; the move number follows
    /// from our SFEN's (which counts plies from 1).
    pub fn fsf_fen(&self, pos: &Position, halfmove: u32) -> String {
        let v = pos.variant();
        let sfen = pos.to_sfen();
        let mut fields = sfen.split_whitespace();
        let board = fields.next().unwrap_or_default();
        let ply: u64 = fields
            .nth(2)
            .and_then(|n| n.parse().ok())
            .unwrap_or(1u64)
            .saturating_sub(1);
        let gote = pos.side_to_move() == Color::Gote;
        let fullmove = 1 + ply.saturating_sub(u64::from(gote)) / 2;
        let mut hand_kinds = v.hand_kinds.clone();
        hand_kinds.sort_by_key(|&k| std::cmp::Reverse(self.fsf_type_of(k)));
        let mut hands = String::new();
        for color in Color::ALL {
            for &k in &hand_kinds {
                let letter = v.kinds[k as usize].letter.ch;
                let letter = match color {
                    Color::Sente => letter.to_ascii_uppercase(),
                    Color::Gote => letter.to_ascii_lowercase(),
                };
                for _ in 0..pos.hand_count(color, k) {
                    hands.push(letter);
                }
            }
        }
        let side = if gote { 'b' } else { 'w' };
        let hands = if self.rules().drops {
            format!("[{hands}]")
        } else {
            hands
        };
        format!("{board}{hands} {side} - - {halfmove} {fullmove}")
    }

    /// The `ply` Fairy-Stockfish derives from [`FeatureLayout::fsf_fen`]'s move number and
    /// side: `2 * (fullmove - 1)`, plus one with gote to move.
    pub fn fsf_game_ply(&self, pos: &Position) -> u64 {
        let sfen = pos.to_sfen();
        let ply: u64 = sfen
            .split_whitespace()
            .nth(3)
            .and_then(|n| n.parse().ok())
            .unwrap_or(1u64)
            .saturating_sub(1);
        let gote = pos.side_to_move() == Color::Gote;
        let fullmove = 1 + ply.saturating_sub(u64::from(gote)) / 2;
        2 * (fullmove - 1) + u64::from(gote)
    }

    /// Fairy-Stockfish's UCI notation of the legal move `mv` in `pos`.
    pub fn fsf_move(&self, pos: &Position, mv: Move) -> String {
        let v = pos.variant();
        match mv {
            Move::Drop { kind, to } => {
                let k = &v.kinds[kind as usize];
                format!(
                    "{}{}@{}",
                    if k.promoted { "+" } else { "" },
                    k.letter.ch.to_ascii_uppercase(),
                    self.square_name(usize::from(to))
                )
            }
            Move::Normal { from, to, .. } => {
                let before = pos.piece_at(usize::from(from)).kind();
                let mut after = pos.clone();
                after.make_move(mv);
                let now = after.piece_at(usize::from(to)).kind();
                let suffix = if now == before {
                    ""
                } else if v.kinds[now as usize].promoted {
                    "+"
                } else {
                    "-"
                };
                format!(
                    "{}{}{suffix}",
                    self.square_name(usize::from(from)),
                    self.square_name(usize::from(to))
                )
            }
            // No variant Fairy-Stockfish plays has two-step moves; written as its moves in two
            // parts are.
            Move::Double { from, via, to } => {
                let via = self.square_name(usize::from(via));
                format!(
                    "{}{via},{via}{}",
                    self.square_name(usize::from(from)),
                    self.square_name(usize::from(to))
                )
            }
            // Nor three steps along a line; written in three parts the same way.
            Move::Line { from, to } => {
                let [a, b] = Move::line_vias(from, to).map(|s| self.square_name(s));
                format!(
                    "{}{a},{a}{b},{b}{}",
                    self.square_name(usize::from(from)),
                    self.square_name(usize::from(to))
                )
            }
            // Compound moves (Ko shogi) have no Fairy-Stockfish form: such variants are never
            // exported; the squares it goes between stand for it.
            Move::Multi { from, to, .. } => format!(
                "{}{}",
                self.square_name(usize::from(from)),
                self.square_name(usize::from(to))
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::layout::FsfRules;
    use super::*;
    use std::sync::Arc;

    fn layout(name: &str) -> (Arc<rules::Variant>, FeatureLayout) {
        let v = Arc::new(rules::Variant::builtin(name).unwrap());
        let l = FeatureLayout::new(&v, &FsfRules::for_variant(&v, None).unwrap()).unwrap();
        (v, l)
    }

    #[test]
    fn fens_and_moves_as_fairy_stockfish_writes_them() {
        let (v, l) = layout("minishogi");
        let mut pos = Position::start(v.clone());
        assert_eq!(l.fsf_fen(&pos, 0), "rbsgk/4p/5/P4/KGSBR[] w - - 0 1");
        // As its `d` printed after a2a3 e4e3 a3a4 e3e2: the pawns' moves do not reset it.
        pos.play_usi("5d5c 1b1c 5c5b 1c1d").unwrap();
        assert_eq!(l.fsf_fen(&pos, 4), "rbsgk/P4/5/4p/KGSBR[] w - - 4 3");
        assert_eq!(l.fsf_game_ply(&pos), 4);
        let mv = pos.parse_usi("5b5a+").unwrap();
        assert_eq!(l.fsf_move(&pos, mv), "a4a5+");
        pos.make_move(mv);
        assert_eq!(l.fsf_game_ply(&pos), 5);
        // Hands: sente first, higher piece types first (gold 22 before pawn 19).
        let p = Position::from_sfen(&v, "rbs1k/5/5/S3G/K2BR b GPp 9").unwrap();
        assert_eq!(l.fsf_fen(&p, 0), "rbs1k/5/5/S3G/K2BR[GPp] w - - 0 5");
        let drop = p.parse_usi("P*3c").unwrap();
        assert_eq!(l.fsf_move(&p, drop), "P@c3");
    }

    #[test]
    fn kyoto_moves_turn_up_and_down() {
        let (v, l) = layout("kyoto");
        let pos = Position::start(v.clone());
        let names: Vec<String> = pos
            .legal_moves()
            .into_iter()
            .map(|m| l.fsf_move(&pos, m))
            .collect();
        // Its `go perft 1` from the start.
        for m in ["b1a2+", "a1a2-", "d1c2-", "c1b2", "b1b2+", "e1e2+"] {
            assert!(names.contains(&m.to_string()), "{m} not in {names:?}");
        }
        assert_eq!(names.len(), 12);
        let p = Position::from_sfen(&v, "p+nks+l/5/5/5/+LSK+N1 b P 1").unwrap();
        let drops: Vec<String> = p
            .legal_moves()
            .into_iter()
            .filter(|m| m.is_drop())
            .map(|m| l.fsf_move(&p, m))
            .collect();
        assert!(drops.contains(&"+P@e1".to_string()) && drops.contains(&"P@c3".to_string()));
    }
}
