//! SFEN reading and writing for any board size (decimal runs of empty squares).

use crate::error::{Error, Result};
use crate::position::{HistoryEntry, Position, MAX_HAND_KINDS};
use crate::types::{Color, Letter, Piece, Square};
use crate::variant::{Variant, MAX_HAND_COUNT};
use std::sync::Arc;

impl Position {
    /// Parses an SFEN (`board side hand [move-number]`) for `variant`.
    /// Positions no game of the variant can reach are refused with the reason: a side without
    /// its royal piece, more unpromoted pieces of a kind on one file than its `max_per_file` drop
    /// limit (nifu: two; for kinds that keep their file), a piece that could never move again,
    /// more pieces of a kind than the variant has.
    pub fn from_sfen(variant: &Arc<Variant>, sfen: &str) -> Result<Position> {
        Position::from_sfen_with(variant.clone(), sfen)
    }

    /// Like [`Position::from_sfen`], but accepts positions no game can reach (composed test
    /// positions for perft, for example); the format is still checked.
    pub fn from_sfen_composed(variant: &Arc<Variant>, sfen: &str) -> Result<Position> {
        Position::parse_sfen(variant.clone(), sfen, false)
    }

    pub(crate) fn from_sfen_with(variant: Arc<Variant>, sfen: &str) -> Result<Position> {
        Position::parse_sfen(variant, sfen, true)
    }

    fn parse_sfen(variant: Arc<Variant>, sfen: &str, reachable: bool) -> Result<Position> {
        let fields = sfen_fields(&variant, sfen)?;
        let mut pos = Position::empty(variant);
        pos.read_board(fields[0])?;
        match fields.get(1).copied() {
            None | Some("b") => pos.side = Color::Sente,
            Some("w") => pos.side = Color::Gote,
            Some(s) => return Err(Error::sfen(s, "side to move must be b or w")),
        }
        let hand = fields.get(2).copied();
        pos.read_hand_field(hand)?;
        if let Some(&n) = fields.get(3) {
            match n.parse::<u32>() {
                Ok(n) if (1..1_000_000).contains(&n) => pos.start_move_number = n,
                _ => return Err(Error::sfen(n, "move number must be a positive integer")),
            }
        }
        pos.check_totals(hand.unwrap_or("-"))?;
        if reachable {
            pos.check_possible(fields[0], hand.unwrap_or("-"))?;
        }
        pos.finish_setup(fields[0])?;
        Ok(pos)
    }

    /// Reads the board field onto the empty board.
    fn read_board(&mut self, board: &str) -> Result<()> {
        let v = Arc::clone(&self.variant);
        let rows: Vec<&str> = board.split('/').collect();
        if rows.len() != v.ranks as usize {
            return Err(Error::sfen(
                board,
                format!("{} ranks, the variant has {}", rows.len(), v.ranks),
            ));
        }
        for (y, row) in rows.iter().enumerate() {
            let bytes = row.as_bytes();
            let mut x = 0usize;
            let mut i = 0;
            while i < bytes.len() {
                if !bytes[i].is_ascii_digit() {
                    i += self.read_piece(row, i, x, y)?;
                    x += 1;
                    continue;
                }
                let s = i;
                while i < bytes.len() && bytes[i].is_ascii_digit() {
                    i += 1;
                }
                let run: usize = row[s..i].parse().unwrap_or(usize::MAX);
                if run == 0 || run > v.files as usize {
                    return Err(Error::sfen(
                        row.to_string(),
                        format!("bad empty run {:?}", &row[s..i]),
                    ));
                }
                x += run;
            }
            if x != v.files as usize {
                return Err(Error::sfen(
                    row.to_string(),
                    format!("rank has {x} files, the variant has {}", v.files),
                ));
            }
        }
        Ok(())
    }

    /// Reads the piece token at `row[i..]` and puts it on (`x`, `y`); returns its length.
    fn read_piece(&mut self, row: &str, i: usize, x: usize, y: usize) -> Result<usize> {
        let v = Arc::clone(&self.variant);
        let bytes = row.as_bytes();
        let promoted = bytes[i] == b'+';
        let at = i + usize::from(promoted);
        let Some(&l) = bytes.get(at) else {
            return Err(Error::sfen(row.to_string(), "'+' at the end of a rank"));
        };
        let Some((letter, upper, len)) = Letter::read(&bytes[at..]) else {
            return Err(Error::sfen(
                row.to_string(),
                format!("unexpected character {:?}", l as char),
            ));
        };
        let token = &row[i..at + len];
        let Some(kind) = v.kind_by(letter, promoted) else {
            return Err(Error::sfen(token, format!("no such piece in {}", v.name)));
        };
        if x >= v.files as usize {
            return Err(Error::sfen(
                row.to_string(),
                format!("rank {} is longer than {} files", y + 1, v.files),
            ));
        }
        let color = if upper { Color::Sente } else { Color::Gote };
        if v.kinds[kind as usize].royal && self.royals[color.index()] > 0 && !v.several_royals {
            return Err(Error::sfen(token, "more than one royal piece for a side"));
        }
        self.put(v.square(x, y), Piece::new(color, kind));
        Ok(at + len - i)
    }

    /// Reads the hands field; in a variant without drops but with the counter-strike rule, the
    /// square of a Lion just taken by a non-Lion instead (Lishogi's Chu shogi SFEN).
    fn read_hand_field(&mut self, field: Option<&str>) -> Result<()> {
        let v = Arc::clone(&self.variant);
        let counter_strike = field
            .filter(|_| v.lion_counter_strike && !v.drops)
            .and_then(|f| v.parse_square(f).map(|sq| (f, sq)));
        if let Some((field, sq)) = counter_strike {
            let p = self.board[sq];
            if p.is_empty() || p.color() == self.side {
                return Err(Error::sfen(
                    field,
                    "the square of a Lion just taken must hold the piece that took it, of the \
                     side not to move",
                ));
            }
            self.start_counter_strike = Some(sq as Square);
            return Ok(());
        }
        match field {
            Some(hand) if hand != "-" => self.read_hands(hand),
            _ => Ok(()),
        }
    }

    /// Reads the pieces in hand (`2Pb`: two pawns for sente, a bishop for gote).
    fn read_hands(&mut self, hand: &str) -> Result<()> {
        let v = Arc::clone(&self.variant);
        let b = hand.as_bytes();
        let mut i = 0;
        while i < b.len() {
            let s = i;
            while i < b.len() && b[i].is_ascii_digit() {
                i += 1;
            }
            let count: usize = if s == i {
                1
            } else {
                hand[s..i].parse().unwrap_or(usize::MAX)
            };
            if i >= b.len() {
                return Err(Error::sfen(hand, "count without a piece letter"));
            }
            let Some((letter, upper, len)) = Letter::read(&b[i..]) else {
                return Err(Error::sfen(&hand[s..=i], "expected a piece letter"));
            };
            let token = &hand[s..i + len];
            let hi = v
                .kind_by(letter, false)
                .and_then(|k| v.kinds[k as usize].hand_index);
            let Some(hi) = hi else {
                return Err(Error::sfen(
                    token,
                    format!("not a piece that can be in hand in {}", v.name),
                ));
            };
            let color = if upper { Color::Sente } else { Color::Gote };
            let total = self.hands[color.index()][hi] as usize + count;
            if count == 0 || total > MAX_HAND_COUNT {
                return Err(Error::sfen(
                    token,
                    format!("count must be 1 to {MAX_HAND_COUNT}"),
                ));
            }
            self.hands[color.index()][hi] = total as u8;
            i += len;
        }
        Ok(())
    }

    /// Every kind's total (board, promoted forms and both hands) must fit a hand count.
    fn check_totals(&self, hand: &str) -> Result<()> {
        let v = &*self.variant;
        let totals = self.material();
        for &k in v.hand_kinds.iter() {
            if totals[k as usize] > MAX_HAND_COUNT {
                return Err(Error::sfen(
                    hand,
                    format!(
                        "more than {MAX_HAND_COUNT} pieces of kind {}",
                        v.kinds[k as usize].letter
                    ),
                ));
            }
        }
        Ok(())
    }

    /// Sets the hash and the first history entry, after refusing a position where the side not
    /// to move is in check.
    fn finish_setup(&mut self, board: &str) -> Result<()> {
        let v = &*self.variant;
        self.hash = self.full_hash();
        let side_unarmed = v.unarmed_until_royal && self.royals[self.side.index()] == 0;
        // With royal capture a royal piece may stand attacked (it is simply taken).
        let safe_anyway = side_unarmed || v.royal_capture;
        if let (Some(k), false) = (self.king[self.side.flip().index()], safe_anyway) {
            if self.is_attacked(k as usize, self.side) {
                return Err(Error::sfen(
                    board,
                    "the side not to move is in check (its royal piece could be captured)",
                ));
            }
        }
        let in_check = self.compute_in_check();
        self.history.push(HistoryEntry {
            hash: self.hash,
            in_check,
        });
        Ok(())
    }

    /// Pieces of each unpromoted kind (promoted pieces count as their unpromoted kind) on the
    /// board and in both hands.
    pub(crate) fn material(&self) -> Vec<usize> {
        let v = &*self.variant;
        let mut totals = vec![0usize; v.kinds.len()];
        for sq in 0..v.n {
            let p = self.board[sq];
            if !p.is_empty() {
                totals[v.kinds[p.kind() as usize].captured_as as usize] += 1;
            }
        }
        for (hi, &k) in v.hand_kinds.iter().enumerate() {
            totals[k as usize] += self.hands[0][hi] as usize + self.hands[1][hi] as usize;
        }
        totals
    }

    /// Refuses positions no game can reach: a side without its royal piece, more unpromoted
    /// pieces of a kind on one file than `max_per_file` (nifu: two), a piece that could never
    /// move again, more pieces of a kind than the variant has.
    fn check_possible(&self, board: &str, hand: &str) -> Result<()> {
        let v = &*self.variant;
        if v.kinds.iter().any(|k| k.royal) {
            for c in Color::ALL {
                let in_hand = v
                    .hand_kinds
                    .iter()
                    .enumerate()
                    .any(|(h, &k)| v.kinds[k as usize].royal && self.hands[c.index()][h] > 0);
                // With royal capture such a position ends a game that lost it.
                if self.royals[c.index()] == 0 && !in_hand && !v.royal_capture {
                    let who = if c == Color::Sente { "sente" } else { "gote" };
                    return Err(Error::sfen(board, format!("{who} has no royal piece")));
                }
            }
        }
        let mut on_file = std::collections::HashMap::new();
        for sq in 0..v.n {
            let p = self.board[sq];
            if p.is_empty() {
                continue;
            }
            let info = &v.kinds[p.kind() as usize];
            let name = v.square_name(sq);
            if let Some(max) = info.max_per_file {
                if !info.promoted && v.keeps_file(p.kind()) {
                    let n = on_file
                        .entry((p.color(), p.kind(), sq % v.files as usize))
                        .or_insert(0u8);
                    *n += 1;
                    if *n > max {
                        let count = if max == 1 {
                            "two".to_string()
                        } else {
                            format!("more than {max}")
                        };
                        return Err(Error::sfen(
                            board,
                            format!(
                                "{count} unpromoted {} of one side on the file of {name}",
                                info.name
                            ),
                        ));
                    }
                }
            }
            // Such a piece arrives by neither a move nor a drop when both rules forbid it.
            let drops_forbid = v.forbid_immobile_drops || !v.drops;
            if v.forbid_immobile_moves && drops_forbid && v.is_immobile(p.color(), p.kind(), sq) {
                return Err(Error::sfen(
                    board,
                    format!("the {} on {name} could never move", info.name),
                ));
            }
        }
        if v.has_fates {
            self.check_fates(board)?;
        }
        if !v.max_material.is_empty() {
            for (k, (&have, &most)) in self.material().iter().zip(&v.max_material).enumerate() {
                if have > most {
                    let field = if self.hands.iter().flatten().any(|&n| n > 0) {
                        hand
                    } else {
                        board
                    };
                    return Err(Error::sfen(
                        field,
                        format!(
                            "{have} pieces of kind {} (the variant has {most})",
                            v.kinds[k].letter
                        ),
                    ));
                }
            }
        }
        Ok(())
    }

    /// Refuses promoted pieces that would have turned back (`promotes_with`, `reverts_near`).
    fn check_fates(&self, board: &str) -> Result<()> {
        let v = &*self.variant;
        for c in Color::ALL {
            for sq in self.occ[c.index()].iter() {
                let info = &v.kinds[self.board[sq].kind() as usize];
                if !info.promoted {
                    continue;
                }
                let name = v.square_name(sq);
                if let Some(k) = info.links.promotes_with.filter(|&k| !self.side_has(c, k)) {
                    return Err(Error::sfen(
                        board,
                        format!(
                            "the {} on {name} is promoted while its side has no {}: it would \
                             have turned back",
                            info.name, v.kinds[k as usize].name
                        ),
                    ));
                }
                if let Some((k, within)) = info.links.reverts_near {
                    if self.kind_near(sq, k, within) {
                        return Err(Error::sfen(
                            board,
                            format!(
                                "the {} on {name} stands within {within} squares of a {}: it \
                                 would have turned back",
                                info.name, v.kinds[k as usize].name
                            ),
                        ));
                    }
                }
            }
        }
        Ok(())
    }

    /// The current position in SFEN, with the move number.
    pub fn to_sfen(&self) -> String {
        self.sfen_of(false)
    }

    /// The SFEN of this position's mirror image, left and right swapped (file 1 becomes the
    /// highest file): where a [`crate::Variant::mirror_symmetric`] variant has the mirrored
    /// moves and the same value.
    pub fn mirrored_sfen(&self) -> String {
        self.sfen_of(true)
    }

    fn sfen_of(&self, mirror: bool) -> String {
        let v = &*self.variant;
        let files = v.files as usize;
        let file = |x: usize| if mirror { files - 1 - x } else { x };
        let mut s = String::new();
        for y in 0..v.ranks as usize {
            if y > 0 {
                s.push('/');
            }
            let mut run = 0;
            for x in 0..files {
                let p = self.board[v.square(file(x), y)];
                if p.is_empty() {
                    run += 1;
                    continue;
                }
                if run > 0 {
                    s.push_str(&run.to_string());
                    run = 0;
                }
                s.push_str(&v.kind_token_for(p.color(), p.kind()));
            }
            if run > 0 {
                s.push_str(&run.to_string());
            }
        }
        s.push(' ');
        s.push(if self.side == Color::Sente { 'b' } else { 'w' });
        s.push(' ');
        let mut hand = String::new();
        for c in Color::ALL {
            for (hi, &k) in v.hand_kinds.iter().enumerate() {
                let n = self.hands[c.index()][hi];
                if n == 0 {
                    continue;
                }
                if n > 1 {
                    hand.push_str(&n.to_string());
                }
                hand.push_str(&v.kinds[k as usize].letter.cased(c));
            }
        }
        if hand.is_empty() {
            match self.counter_strike().filter(|_| !v.drops) {
                Some(sq) if mirror => hand.push_str(&v.square_name(v.mirror_square(sq))),
                Some(sq) => hand.push_str(&v.square_name(sq)),
                None => hand.push('-'),
            }
        }
        s.push_str(&hand);
        s.push(' ');
        s.push_str(&self.move_number().to_string());
        s
    }
}

/// The fields of an SFEN, checked for what needs no board: at least one, ASCII, at most four.
fn sfen_fields<'a>(v: &Variant, sfen: &'a str) -> Result<Vec<&'a str>> {
    let fields: Vec<&str> = sfen.split_whitespace().collect();
    if fields.is_empty() {
        return Err(Error::sfen("", "empty SFEN"));
    }
    if let Some(bad) = fields.iter().find(|f| !f.is_ascii()) {
        return Err(Error::sfen(*bad, "non-ASCII character"));
    }
    if fields.len() > 4 {
        return Err(Error::sfen(
            fields[4],
            "unexpected extra field after the move number",
        ));
    }
    if v.hand_kinds.len() > MAX_HAND_KINDS {
        return Err(Error::sfen(fields[0], "variant has too many hand kinds"));
    }
    Ok(fields)
}
