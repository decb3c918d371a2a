//! A square set: one bit per square, wide enough for every board up to 36x36.

/// 64-bit words in a [`SquareSet`].
pub const WORDS: usize = crate::variant::MAX_SQUARES.div_ceil(64);

/// A set of squares, one bit per square index. Operations touch only the words that may hold
/// squares (`words`), so a small board pays for one or a few words, not for the largest board.
#[derive(Clone, Copy, Default)]
pub struct SquareSet {
    bits: [u64; WORDS],
    /// Every word from this index on is zero.
    words: u8,
}

impl PartialEq for SquareSet {
    fn eq(&self, o: &SquareSet) -> bool {
        self.bits == o.bits
    }
}

impl Eq for SquareSet {}

impl std::hash::Hash for SquareSet {
    fn hash<H: std::hash::Hasher>(&self, h: &mut H) {
        self.bits.hash(h)
    }
}

impl SquareSet {
    /// The empty set.
    pub const EMPTY: SquareSet = SquareSet {
        bits: [0; WORDS],
        words: 0,
    };

    /// Adds a square.
    #[inline(always)]
    pub fn insert(&mut self, sq: usize) {
        let w = sq >> 6;
        self.bits[w] |= 1u64 << (sq & 63);
        self.words = self.words.max(w as u8 + 1);
    }

    /// Removes a square.
    #[inline(always)]
    pub fn remove(&mut self, sq: usize) {
        self.bits[sq >> 6] &= !(1u64 << (sq & 63));
    }

    /// Whether the square is in the set.
    #[inline(always)]
    pub fn contains(&self, sq: usize) -> bool {
        self.bits[sq >> 6] >> (sq & 63) & 1 != 0
    }

    /// The words that may hold squares.
    #[inline(always)]
    fn used(&self) -> &[u64] {
        &self.bits[..self.words as usize]
    }

    /// Whether the set is empty.
    #[inline(always)]
    pub fn is_empty(&self) -> bool {
        self.used().iter().all(|&w| w == 0)
    }

    /// Number of squares in the set.
    #[inline(always)]
    pub fn len(&self) -> usize {
        self.used().iter().map(|w| w.count_ones() as usize).sum()
    }

    /// Squares in both sets.
    #[inline(always)]
    pub fn and(self, o: SquareSet) -> SquareSet {
        // Start from the shorter set: its words past `words` are already zero.
        let (mut out, other) = if self.words <= o.words {
            (self, o)
        } else {
            (o, self)
        };
        for i in 0..out.words as usize {
            out.bits[i] &= other.bits[i];
        }
        out
    }

    /// Squares in either set.
    #[inline(always)]
    pub fn or(self, o: SquareSet) -> SquareSet {
        let (mut out, other) = if self.words >= o.words {
            (self, o)
        } else {
            (o, self)
        };
        for i in 0..other.words as usize {
            out.bits[i] |= other.bits[i];
        }
        out
    }

    /// Squares of `self` not in `o`.
    #[inline(always)]
    pub fn and_not(self, o: SquareSet) -> SquareSet {
        let mut out = self;
        for i in 0..self.words.min(o.words) as usize {
            out.bits[i] &= !o.bits[i];
        }
        out
    }

    /// Iterates over the squares in increasing index order.
    #[inline(always)]
    pub fn iter(&self) -> SquareSetIter<'_> {
        SquareSetIter {
            words: self.used(),
            word: 0,
            current: self.used().first().copied().unwrap_or(0),
        }
    }
}

impl std::fmt::Debug for SquareSet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_set().entries(self.iter()).finish()
    }
}

/// Iterator over the squares of a [`SquareSet`].
pub struct SquareSetIter<'a> {
    words: &'a [u64],
    word: usize,
    current: u64,
}

impl Iterator for SquareSetIter<'_> {
    type Item = usize;
    #[inline(always)]
    fn next(&mut self) -> Option<usize> {
        loop {
            if self.current != 0 {
                let bit = self.current.trailing_zeros() as usize;
                self.current &= self.current - 1;
                return Some(self.word * 64 + bit);
            }
            self.word += 1;
            self.current = *self.words.get(self.word)?;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn insert_remove_iterate() {
        let mut s = SquareSet::EMPTY;
        for sq in [0, 63, 64, 200, 224, 1295] {
            s.insert(sq);
        }
        assert_eq!(
            s.iter().collect::<Vec<_>>(),
            vec![0, 63, 64, 200, 224, 1295]
        );
        assert_eq!(s.len(), 6);
        s.remove(64);
        assert!(!s.contains(64));
        assert!(s.contains(200));
        assert_eq!(s.len(), 5);
    }
}
