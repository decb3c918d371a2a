//! A 256-bit square set: wide enough for every board up to 16x16 (256 squares).

/// A set of squares, one bit per square index.
#[derive(Clone, Copy, PartialEq, Eq, Default, Hash)]
pub struct SquareSet(pub [u64; 4]);

impl SquareSet {
    /// The empty set.
    pub const EMPTY: SquareSet = SquareSet([0; 4]);

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
        (self.0[0] | self.0[1] | self.0[2] | self.0[3]) == 0
    }

    /// Number of squares in the set.
    #[inline(always)]
    pub fn len(&self) -> usize {
        self.0.iter().map(|w| w.count_ones() as usize).sum()
    }

    /// Squares in both sets.
    #[inline(always)]
    pub fn and(self, o: SquareSet) -> SquareSet {
        SquareSet([
            self.0[0] & o.0[0],
            self.0[1] & o.0[1],
            self.0[2] & o.0[2],
            self.0[3] & o.0[3],
        ])
    }

    /// Squares in either set.
    #[inline(always)]
    pub fn or(self, o: SquareSet) -> SquareSet {
        SquareSet([
            self.0[0] | o.0[0],
            self.0[1] | o.0[1],
            self.0[2] | o.0[2],
            self.0[3] | o.0[3],
        ])
    }

    /// Squares of `self` not in `o`.
    #[inline(always)]
    pub fn and_not(self, o: SquareSet) -> SquareSet {
        SquareSet([
            self.0[0] & !o.0[0],
            self.0[1] & !o.0[1],
            self.0[2] & !o.0[2],
            self.0[3] & !o.0[3],
        ])
    }

    /// Iterates over the squares in increasing index order.
    #[inline(always)]
    pub fn iter(self) -> SquareSetIter {
        SquareSetIter {
            set: self.0,
            word: 0,
        }
    }
}

impl std::fmt::Debug for SquareSet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_set().entries(self.iter()).finish()
    }
}

/// Iterator over the squares of a [`SquareSet`].
pub struct SquareSetIter {
    set: [u64; 4],
    word: usize,
}

impl Iterator for SquareSetIter {
    type Item = usize;
    #[inline(always)]
    fn next(&mut self) -> Option<usize> {
        while self.word < 4 {
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
        for sq in [0, 63, 64, 200, 224] {
            s.insert(sq);
        }
        assert_eq!(s.iter().collect::<Vec<_>>(), vec![0, 63, 64, 200, 224]);
        assert_eq!(s.len(), 5);
        s.remove(64);
        assert!(!s.contains(64));
        assert!(s.contains(200));
        assert_eq!(s.len(), 4);
    }
}
