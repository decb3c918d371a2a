//! Square sets: one bit per square. [`SquareSet`] holds every board up to 36x36; move
//! generation on boards of at most 256 squares works on [`Bits`] of four words instead, so the
//! small variants never pay for the largest board.

/// 64-bit words in a [`SquareSet`].
pub const WORDS: usize = crate::variant::MAX_SQUARES.div_ceil(64);

/// A set of squares of `W` 64-bit words, one bit per square index.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Bits<const W: usize>(pub [u64; W]);

/// A set of squares of any board (up to 36x36, 1,296 squares).
pub type SquareSet = Bits<WORDS>;

impl<const W: usize> Default for Bits<W> {
    fn default() -> Self {
        Self::EMPTY
    }
}

impl<const W: usize> Bits<W> {
    /// The empty set.
    pub const EMPTY: Bits<W> = Bits([0; W]);

    /// Adds a square.
    #[inline(always)]
    pub fn insert(&mut self, sq: usize) {
        self.0[sq >> 6] |= 1u64 << (sq & 63);
    }

    /// Removes a square.
    #[inline(always)]
    pub fn remove(&mut self, sq: usize) {
        self.0[sq >> 6] &= !(1u64 << (sq & 63));
    }

    /// Whether the square is in the set.
    #[inline(always)]
    pub fn contains(&self, sq: usize) -> bool {
        self.0[sq >> 6] >> (sq & 63) & 1 != 0
    }

    /// Whether the set is empty.
    #[inline(always)]
    pub fn is_empty(&self) -> bool {
        self.0.iter().all(|&w| w == 0)
    }

    /// Number of squares in the set.
    #[inline(always)]
    pub fn len(&self) -> usize {
        self.0.iter().map(|w| w.count_ones() as usize).sum()
    }

    /// Squares in both sets.
    #[inline(always)]
    pub fn and(mut self, o: Bits<W>) -> Bits<W> {
        for (a, b) in self.0.iter_mut().zip(o.0) {
            *a &= b;
        }
        self
    }

    /// Squares in either set.
    #[inline(always)]
    pub fn or(mut self, o: Bits<W>) -> Bits<W> {
        for (a, b) in self.0.iter_mut().zip(o.0) {
            *a |= b;
        }
        self
    }

    /// Squares of `self` not in `o`.
    #[inline(always)]
    pub fn and_not(mut self, o: Bits<W>) -> Bits<W> {
        for (a, b) in self.0.iter_mut().zip(o.0) {
            *a &= !b;
        }
        self
    }

    /// The first `W` words of a wider (or equal) set: the same set when it holds no square
    /// past `64 * W`.
    #[inline(always)]
    pub fn narrow<const V: usize>(wide: &Bits<V>) -> Bits<W> {
        let mut out = Bits::EMPTY;
        out.0.copy_from_slice(&wide.0[..W]);
        out
    }

    /// Iterates over the squares in increasing index order.
    #[inline(always)]
    pub fn iter(self) -> SquareSetIter<W> {
        SquareSetIter {
            set: self.0,
            word: 0,
        }
    }
}

impl<const W: usize> std::fmt::Debug for Bits<W> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_set().entries(self.iter()).finish()
    }
}

/// Iterator over the squares of a [`Bits`] set.
pub struct SquareSetIter<const W: usize> {
    set: [u64; W],
    word: usize,
}

impl<const W: usize> Iterator for SquareSetIter<W> {
    type Item = usize;
    #[inline(always)]
    fn next(&mut self) -> Option<usize> {
        while self.word < W {
            let w = self.set[self.word];
            if w != 0 {
                self.set[self.word] = w & (w - 1);
                return Some(self.word * 64 + w.trailing_zeros() as usize);
            }
            self.word += 1;
        }
        None
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

    #[test]
    fn narrow_keeps_the_low_words() {
        let mut wide = SquareSet::EMPTY;
        for sq in [3, 100, 255] {
            wide.insert(sq);
        }
        let small = Bits::<4>::narrow(&wide);
        assert_eq!(small.iter().collect::<Vec<_>>(), vec![3, 100, 255]);
        assert_eq!(small.and_not(Bits::narrow(&wide)), Bits::EMPTY);
    }
}
