//! Small value types: colours, pieces, moves.

/// The side: sente (black, moves first, uppercase, at the bottom) or gote.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Hash, PartialOrd, Ord)]
pub enum Color {
    /// First player ("b" in SFEN), uppercase letters.
    Sente = 0,
    /// Second player ("w" in SFEN), lowercase letters.
    Gote = 1,
}

impl Color {
    /// The other side.
    #[inline(always)]
    pub fn flip(self) -> Color {
        match self {
            Color::Sente => Color::Gote,
            Color::Gote => Color::Sente,
        }
    }

    /// 0 for sente, 1 for gote.
    #[inline(always)]
    pub fn index(self) -> usize {
        self as usize
    }

    /// Both colours, sente first.
    pub const ALL: [Color; 2] = [Color::Sente, Color::Gote];
}

/// A square's index: `y * files + x`, `y` counted from gote's side (two bytes: boards up to
/// 36x36 have 1,296 squares).
pub type Square = u16;

/// Index of a piece kind in its variant (promoted forms are kinds of their own; two bytes:
/// Taikyoku shogi's pieces with their promoted forms are some 500 kinds).
pub type Kind = u16;

/// A piece on a square: 0 is empty, otherwise `1 + kind + 32768 * colour`.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Hash, Default)]
pub struct Piece(pub u16);

impl Piece {
    /// The empty square.
    pub const EMPTY: Piece = Piece(0);

    /// A piece of `kind` owned by `color`.
    #[inline(always)]
    pub fn new(color: Color, kind: Kind) -> Piece {
        Piece(1 + kind + ((color as u16) << 15))
    }

    /// Whether this is an empty square.
    #[inline(always)]
    pub fn is_empty(self) -> bool {
        self.0 == 0
    }

    /// The owner (meaningless for the empty square).
    #[inline(always)]
    pub fn color(self) -> Color {
        if self.0 & 0x8000 != 0 {
            Color::Gote
        } else {
            Color::Sente
        }
    }

    /// The kind (meaningless for the empty square).
    #[inline(always)]
    pub fn kind(self) -> Kind {
        (self.0 & 0x7fff) - 1
    }

    /// Whether a piece of `color` stands here.
    #[inline(always)]
    pub fn is_color(self, color: Color) -> bool {
        self.0 != 0 && (self.0 >> 15) == color as u16
    }
}

/// A move: a board move (from, to, promotion) or a drop of a kind from the hand.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Hash)]
pub enum Move {
    /// A piece moves on the board, possibly capturing and possibly promoting.
    Normal {
        /// Square left.
        from: Square,
        /// Square reached.
        to: Square,
        /// Whether the piece promotes at the end of the move.
        promote: bool,
    },
    /// A piece makes two steps in one move (Chu shogi's Lion, Horned Falcon, Soaring Eagle):
    /// it passes `via`, capturing what stands there, and ends on `to`, which may be `from`
    /// itself (a capture without moving, or a pass when `via` was empty). Never promotes.
    Double {
        /// Square left.
        from: Square,
        /// Square of the first step.
        via: Square,
        /// Square reached by the second step.
        to: Square,
    },
    /// A piece from the hand is placed on an empty square.
    Drop {
        /// Kind dropped (always an unpromoted kind).
        kind: Kind,
        /// Square dropped on.
        to: Square,
    },
    /// A piece makes three steps along one line (the Lion Dog's Lion power, `lion_line`): it
    /// passes the two squares between `from` and `to`, taking the enemy pieces on both, and
    /// ends on `to`, three squares away. Never promotes by itself. The squares between are
    /// [`Move::line_vias`].
    Line {
        /// Square left.
        from: Square,
        /// Square reached, three steps along the line.
        to: Square,
    },
    /// A compound move (`shoot` and `repeat`: Ko shogi's bows, guns and pieces that move
    /// several times a turn): the piece ends on `to` (which may be `from`) and takes, besides
    /// what stands there, the enemy pieces on the squares of the type `id` of the variant's
    /// compound moves ending at that offset ([`crate::CompoundTable`]). Promotes by itself only
    /// (a forced promotion, a capture that promotes).
    Multi {
        /// Square left.
        from: Square,
        /// Square reached.
        to: Square,
        /// The type among the variant's compound moves with this end offset (owner's view).
        id: u16,
    },
}

impl Move {
    /// The same move with each of its squares mapped by `f` (a board symmetry: a mirror, or
    /// the half turn between the two sides' views). A compound move keeps its type: map one
    /// with [`crate::Variant::mirror_move`] or [`crate::Variant::turned_move`].
    pub fn map_squares(self, f: impl Fn(Square) -> Square) -> Move {
        match self {
            Move::Normal { from, to, promote } => Move::Normal {
                from: f(from),
                to: f(to),
                promote,
            },
            Move::Double { from, via, to } => Move::Double {
                from: f(from),
                via: f(via),
                to: f(to),
            },
            Move::Line { from, to } => Move::Line {
                from: f(from),
                to: f(to),
            },
            Move::Multi { from, to, id } => Move::Multi {
                from: f(from),
                to: f(to),
                id,
            },
            Move::Drop { kind, to } => Move::Drop { kind, to: f(to) },
        }
    }

    /// The two squares between the ends of a [`Move::Line`] (on a board numbered rank by rank,
    /// the squares of a line are evenly spaced).
    #[inline(always)]
    pub fn line_vias(from: Square, to: Square) -> [usize; 2] {
        let (f, t) = (from as isize, to as isize);
        let d = (t - f) / 3;
        [(f + d) as usize, (f + 2 * d) as usize]
    }

    /// The destination square.
    #[inline(always)]
    pub fn to(self) -> usize {
        match self {
            Move::Normal { to, .. }
            | Move::Double { to, .. }
            | Move::Line { to, .. }
            | Move::Multi { to, .. }
            | Move::Drop { to, .. } => to as usize,
        }
    }

    /// The origin square, if a board move.
    #[inline(always)]
    pub fn from(self) -> Option<usize> {
        match self {
            Move::Normal { from, .. }
            | Move::Double { from, .. }
            | Move::Line { from, .. }
            | Move::Multi { from, .. } => Some(from as usize),
            Move::Drop { .. } => None,
        }
    }

    /// The square of the first step of a two-step move, or the first square between the ends
    /// of a [`Move::Line`].
    #[inline(always)]
    pub fn via(self) -> Option<usize> {
        match self {
            Move::Double { via, .. } => Some(via as usize),
            Move::Line { from, to } => Some(Move::line_vias(from, to)[0]),
            _ => None,
        }
    }

    /// Whether this move promotes the piece.
    #[inline(always)]
    pub fn promotes(self) -> bool {
        matches!(self, Move::Normal { promote: true, .. })
    }

    /// Whether this move is a drop.
    #[inline(always)]
    pub fn is_drop(self) -> bool {
        matches!(self, Move::Drop { .. })
    }
}

/// The name of a piece kind in SFEN and USI: an ASCII letter, uppercase for sente and lowercase
/// for gote, and for variants with more kinds than letters an optional mark after it, `'` or
/// `!` (XBoard's convention for large shogi: `N'`, `l!`), or one of [`Letter::MARKS`]' others
/// where even those run out (`^` for Tai shogi's 93 pieces; 338 letters in all).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct Letter {
    /// The letter, uppercase.
    pub ch: char,
    /// The mark after the letter, if any.
    pub mark: Option<char>,
}

impl Letter {
    /// The marks a letter may carry: none is a digit, `+`, `*`, `/` or `-`, which SFEN and USI
    /// read otherwise.
    pub const MARKS: [char; 12] = ['\'', '!', '^', '~', '=', '?', '@', '$', '%', '&', ':', ';'];

    /// A letter without a mark.
    pub fn plain(ch: char) -> Letter {
        Letter {
            ch: ch.to_ascii_uppercase(),
            mark: None,
        }
    }

    /// Reads a letter and its optional mark at the start of `s`: the letter, whether it was
    /// written in uppercase (sente), and the bytes read. None if `s` starts with no letter.
    pub fn read(s: &[u8]) -> Option<(Letter, bool, usize)> {
        let c = *s.first()? as char;
        if !c.is_ascii_alphabetic() {
            return None;
        }
        let mark = s
            .get(1)
            .map(|&m| m as char)
            .filter(|m| Self::MARKS.contains(m));
        let letter = Letter {
            ch: c.to_ascii_uppercase(),
            mark,
        };
        Some((letter, c.is_ascii_uppercase(), 1 + mark.is_some() as usize))
    }

    /// Parses a whole token such as `N'` (either case): the letter and whether it was uppercase.
    pub fn parse(s: &str) -> Option<(Letter, bool)> {
        match Self::read(s.as_bytes()) {
            Some((l, upper, n)) if n == s.len() => Some((l, upper)),
            _ => None,
        }
    }

    /// The letter in one side's case: uppercase for sente, lowercase for gote.
    pub fn cased(self, color: Color) -> String {
        let ch = match color {
            Color::Sente => self.ch,
            Color::Gote => self.ch.to_ascii_lowercase(),
        };
        match self.mark {
            Some(m) => format!("{ch}{m}"),
            None => ch.to_string(),
        }
    }

    /// The plain letter, or None when the letter has a mark.
    pub fn unmarked(self) -> Option<char> {
        match self.mark {
            None => Some(self.ch),
            Some(_) => None,
        }
    }
}

impl std::fmt::Display for Letter {
    /// The letter in sente's case (uppercase).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.cased(Color::Sente))
    }
}
