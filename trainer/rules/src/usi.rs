//! USI move notation: `7g7f`, `10j9h`, `P*5e`, `+` to promote; `+P*5e` drops a piece promoted
//! side up where the variant allows it; a two-step move names its three squares, `6f6e6d` (the
//! last may be the first: `6f6e6f` captures on 6e without moving, or passes if 6e is empty); a
//! compound move (Ko shogi) names where the piece goes, then after a comma each square whose
//! piece it takes on the way or by shooting: `3g4f,4c`; `7i5g,` takes nothing besides what
//! stands on its end square (a sumo wrestler's two steps), `7i7i,` passes.

use crate::error::{Error, Result};
use crate::position::Position;
use crate::types::{Letter, Move, Square};
use crate::variant::Variant;

impl Variant {
    /// USI name of a square: file number then rank letter (`5e`, `10j`); boards of more than
    /// 26 ranks go on with two letters after `z`, `aa` to `aj` (ranks 27 to 36).
    pub fn square_name(&self, sq: usize) -> String {
        let (_, y) = self.coords(sq);
        format!("{}{}", self.file_number(sq), rank_name(y))
    }

    /// Parses a USI square name (`5e`, `10j`, `36aj`).
    pub fn parse_square(&self, s: &str) -> Option<usize> {
        let b = s.as_bytes();
        let digits = b.iter().take_while(|c| c.is_ascii_digit()).count();
        if digits == 0 || digits > 2 || b[0] == b'0' {
            return None;
        }
        let file: usize = s[..digits].parse().ok()?;
        let y = parse_rank(&b[digits..])?;
        if file == 0 || file > self.files as usize || y >= self.ranks as usize {
            return None;
        }
        Some(self.square(self.files as usize - file, y))
    }

    /// USI text of a move.
    pub fn move_to_usi(&self, mv: Move) -> String {
        match mv {
            Move::Normal { from, to, promote } => format!(
                "{}{}{}",
                self.square_name(from as usize),
                self.square_name(to as usize),
                if promote { "+" } else { "" }
            ),
            Move::Double { from, via, to } => format!(
                "{}{}{}",
                self.square_name(from as usize),
                self.square_name(via as usize),
                self.square_name(to as usize)
            ),
            Move::Line { from, to } => {
                let [v1, v2] = Move::line_vias(from, to);
                format!(
                    "{}{}{}{}",
                    self.square_name(from as usize),
                    self.square_name(v1),
                    self.square_name(v2),
                    self.square_name(to as usize)
                )
            }
            Move::Multi { from, to, .. } => {
                let mut s = format!(
                    "{}{}",
                    self.square_name(from as usize),
                    self.square_name(to as usize)
                );
                // Always a comma: `FROM TO,` takes nothing besides its end square.
                let taken: Vec<String> = self
                    .compound_taken(mv)
                    .into_iter()
                    .map(|sq| self.square_name(sq))
                    .collect();
                s.push(',');
                s.push_str(&taken.join(","));
                s
            }
            Move::Drop { kind, to } => format!(
                "{}{}*{}",
                if self.kinds[kind as usize].promoted {
                    "+"
                } else {
                    ""
                },
                self.kinds[kind as usize].letter,
                self.square_name(to as usize)
            ),
        }
    }

    /// Parses the syntax of a USI move (squares on the board, piece letter known); legality is
    /// checked by [`Position::parse_usi`].
    pub fn parse_usi_syntax(&self, token: &str) -> Result<Move> {
        let bad = |why: &str| Error::usi(token, why);
        if token.is_empty() {
            return Err(bad("empty move"));
        }
        if !token.is_ascii() {
            return Err(bad("non-ASCII character"));
        }
        if let Some((piece, sq)) = token.split_once('*') {
            let (promoted, piece) = match piece.strip_prefix('+') {
                Some(p) if self.promoted_drops => (true, p),
                _ => (false, piece),
            };
            let Some((l, _)) = Letter::parse(piece) else {
                return Err(bad("a drop is LETTER*SQUARE, e.g. P*5e"));
            };
            let kind = self
                .kind_by(l, promoted)
                .filter(|&k| self.hand_index_of(k).is_some())
                .ok_or_else(|| {
                    bad(&format!(
                        "{piece:?} is not a piece that can be dropped in {}",
                        self.name
                    ))
                })?;
            let to = self
                .parse_square(sq)
                .ok_or_else(|| bad(&format!("{sq:?} is not a square of this board")))?;
            return Ok(Move::Drop {
                kind,
                to: to as Square,
            });
        }
        if let Some((head, rest)) = token.split_once(',') {
            return self.parse_compound_usi(token, head, rest);
        }
        let (body, promote) = match token.strip_suffix('+') {
            Some(b) => (b, true),
            None => (token, false),
        };
        // Squares are digits then one or two letters: split after each run of letters.
        let mut squares = Vec::new();
        let mut rest = body;
        while !rest.is_empty() {
            let digits = rest.bytes().take_while(|c| c.is_ascii_digit()).count();
            let letters = rest
                .bytes()
                .skip(digits)
                .take_while(|c| c.is_ascii_lowercase())
                .count();
            if digits == 0 || letters == 0 || squares.len() == 4 {
                return Err(bad("expected FROM TO[+], e.g. 7g7f or 10j9h+"));
            }
            let (sq, tail) = rest.split_at(digits + letters);
            let s = self
                .parse_square(sq)
                .ok_or_else(|| bad(&format!("{sq:?} is not a square of this board")))?;
            squares.push(s as Square);
            rest = tail;
        }
        match squares[..] {
            [from, to] if from == to => Err(bad("from and to are the same square")),
            [from, to] => Ok(Move::Normal { from, to, promote }),
            [_, _, _] if !self.has_legs && !self.has_lion_lines => Err(bad(&format!(
                "three squares name a two-step move, which no piece of {} makes",
                self.name
            ))),
            [_, _, _] | [_, _, _, _] if promote => {
                Err(bad("a move of several steps never promotes with +"))
            }
            [from, via, to] => Ok(Move::Double { from, via, to }),
            [_, _, _, _] if !self.has_lion_lines => Err(bad(&format!(
                "four squares name a three-step move along a line, which no piece of {} makes",
                self.name
            ))),
            [from, a, b, to] => {
                let line = self.line_of(from as usize, to as usize);
                match line == Some([a as usize, b as usize]) {
                    true => Ok(Move::Line { from, to }),
                    false => Err(bad(
                        "four squares name a three-step move along one line: FROM, the two \
                         squares between, then TO three squares away",
                    )),
                }
            }
            _ => Err(bad("expected FROM TO[+], e.g. 7g7f or 10j9h+")),
        }
    }
}

impl Variant {
    /// A compound move `FROM TO,SQ,SQ`: where the piece goes, then the squares whose pieces it
    /// takes besides the one it lands on.
    fn parse_compound_usi(&self, token: &str, head: &str, rest: &str) -> Result<Move> {
        let bad = |why: &str| Error::usi(token, why);
        if !self.has_compound {
            return Err(bad(&format!(
                "a comma lists the squares a compound move takes, which no piece of {} makes",
                self.name
            )));
        }
        let split = head
            .char_indices()
            .skip(1)
            .find(|&(i, c)| c.is_ascii_digit() && !head.as_bytes()[i - 1].is_ascii_digit())
            .map(|(i, _)| i)
            .ok_or_else(|| bad("expected FROM TO,SQUARE..., e.g. 3g4f,4c"))?;
        let square = |s: &str| {
            self.parse_square(s)
                .ok_or_else(|| bad(&format!("{s:?} is not a square of this board")))
        };
        let (from, to) = (square(&head[..split])?, square(&head[split..])?);
        let taken = match rest {
            "" => Vec::new(),
            _ => rest.split(',').map(square).collect::<Result<Vec<_>>>()?,
        };
        self.compound_move(from, to, &taken).ok_or_else(|| {
            bad(&format!(
                "no piece of {} makes a compound move of this shape",
                self.name
            ))
        })
    }

    /// The two squares between `from` and `to` when `to` is three steps away along a rank, a
    /// file or a diagonal.
    fn line_of(&self, from: usize, to: usize) -> Option<[usize; 2]> {
        let ((fx, fy), (tx, ty)) = (self.coords(from), self.coords(to));
        let (dx, dy) = (tx as isize - fx as isize, ty as isize - fy as isize);
        let straight = dx == 0 || dy == 0 || dx.abs() == dy.abs();
        (straight && dx.abs().max(dy.abs()) == 3)
            .then(|| Move::line_vias(from as Square, to as Square))
    }
}

/// A rank's letters: `a` to `z`, then `aa` to `aj` for ranks 27 to 36.
fn rank_name(y: usize) -> String {
    match y {
        0..26 => ((b'a' + y as u8) as char).to_string(),
        _ => format!("a{}", (b'a' + (y - 26) as u8) as char),
    }
}

/// The rank index of a rank's letters ([`rank_name`]'s inverse).
fn parse_rank(b: &[u8]) -> Option<usize> {
    let letter = |c: u8| c.is_ascii_lowercase().then(|| (c - b'a') as usize);
    match *b {
        [c] => letter(c),
        [b'a', c] => Some(26 + letter(c)?),
        _ => None,
    }
}

impl Position {
    /// Parses a USI move and checks that it is legal here.
    pub fn parse_usi(&self, token: &str) -> Result<Move> {
        let v = &*self.variant;
        let mv = v.parse_usi_syntax(token)?;
        if self.is_legal(mv) {
            return Ok(mv);
        }
        let why = match mv {
            Move::Double { from, .. } | Move::Line { from, .. } | Move::Multi { from, .. } => {
                match self.board[from as usize] {
                    p if p.is_empty() => format!("no piece on {}", v.square_name(from as usize)),
                    p if p.color() != self.side => format!(
                        "the piece on {} is not the mover's",
                        v.square_name(from as usize)
                    ),
                    _ => "illegal move of several steps in this position".to_string(),
                }
            }
            Move::Normal { from, promote, .. } => {
                let p = self.board[from as usize];
                if p.is_empty() {
                    format!("no piece on {}", v.square_name(from as usize))
                } else if p.color() != self.side {
                    format!(
                        "the piece on {} is not the mover's",
                        v.square_name(from as usize)
                    )
                } else if self.is_legal(Move::Normal {
                    from,
                    to: mv.to() as Square,
                    promote: !promote,
                }) {
                    if promote {
                        "this piece cannot promote on this move".to_string()
                    } else {
                        "this move must promote (add +)".to_string()
                    }
                } else {
                    "illegal move in this position".to_string()
                }
            }
            Move::Drop { kind, .. } => {
                if self.hand_count(self.side, kind) == 0 {
                    format!("no {} in hand", v.kinds[kind as usize].letter)
                } else {
                    "illegal drop in this position".to_string()
                }
            }
        };
        Err(Error::usi(token, why))
    }

    /// USI text of a move in this position's variant.
    pub fn move_to_usi(&self, mv: Move) -> String {
        self.variant.move_to_usi(mv)
    }

    /// Plays a sequence of USI moves, stopping at the first bad one.
    pub fn play_usi(&mut self, moves: &str) -> Result<()> {
        for tok in moves.split_whitespace() {
            let mv = self.parse_usi(tok)?;
            self.make_move(mv);
        }
        Ok(())
    }
}
