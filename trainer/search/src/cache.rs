//! A fixed-size table of network answers keyed by position (lc0's NN cache, KataGo's
//! `nnCacheSizePowerOfTwo`): a leaf already evaluated by the same network, in this game's tree
//! under another move order or in another game, is expanded from the table instead of the
//! network. The key must cover everything the encoder reads (see `Encoder::cache_key`); the
//! table belongs to one network and is cleared when the network changes.

/// The default size of the tables of self-play (`selfplay.eval_cache`), of the USI engine
/// (`NNCacheSize`) and of the arena's in-process players.
pub const DEFAULT_EVAL_CACHE: usize = 1 << 16;

/// One slot: the key and the answer for the position's legal moves, in generation order.
#[derive(Clone, Default)]
struct Slot {
    key: u64,
    used: bool,
    wdl: [f32; 3],
    logits: Vec<f32>,
}

/// A direct-mapped table of `2^k` answers; a new answer replaces the one in its slot.
#[derive(Clone, Default)]
pub struct EvalCache {
    slots: Vec<Slot>,
    mask: usize,
}

impl EvalCache {
    /// A table of at least `entries` slots (rounded up to a power of two); 0 disables it.
    pub fn new(entries: usize) -> EvalCache {
        if entries == 0 {
            return EvalCache::default();
        }
        let n = entries.next_power_of_two();
        EvalCache {
            slots: vec![Slot::default(); n],
            mask: n - 1,
        }
    }

    /// Whether the table holds anything at all (0 entries: every lookup misses).
    pub fn enabled(&self) -> bool {
        !self.slots.is_empty()
    }

    /// Slots in the table.
    pub fn capacity(&self) -> usize {
        self.slots.len()
    }

    /// The answer stored under `key` with `moves` logits, if any.
    #[inline]
    pub fn get(&self, key: u64, moves: usize) -> Option<(&[f32], [f32; 3])> {
        let s = self.slots.get(self.index(key))?;
        (s.used && s.key == key && s.logits.len() == moves).then(|| (&s.logits[..], s.wdl))
    }

    /// Stores an answer under `key` (its slot's buffer is reused).
    pub fn insert(&mut self, key: u64, logits: &[f32], wdl: [f32; 3]) {
        let i = self.index(key);
        if let Some(s) = self.slots.get_mut(i) {
            s.key = key;
            s.used = true;
            s.wdl = wdl;
            s.logits.clear();
            s.logits.extend_from_slice(logits);
        }
    }

    /// Forgets every answer (a new network), keeping the size.
    pub fn clear(&mut self) {
        for s in &mut self.slots {
            s.used = false;
        }
    }

    fn index(&self, key: u64) -> usize {
        // The high bits: Zobrist keys are uniform, and the low ones may carry a small mix-in.
        ((key >> 32) ^ key) as usize & self.mask
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stores_and_replaces_by_slot() {
        let mut c = EvalCache::new(3);
        assert_eq!(c.capacity(), 4);
        assert!(c.get(7, 2).is_none());
        c.insert(7, &[1.0, 2.0], [0.5, 0.25, 0.25]);
        assert_eq!(c.get(7, 2), Some((&[1.0, 2.0][..], [0.5, 0.25, 0.25])));
        // The same key with another move count is not the same position.
        assert!(c.get(7, 3).is_none());
        // A key mapping to the same slot replaces the answer.
        c.insert(7 + 4, &[3.0], [1.0, 0.0, 0.0]);
        assert!(c.get(7, 2).is_none());
        assert_eq!(c.get(11, 1), Some((&[3.0][..], [1.0, 0.0, 0.0])));
        c.clear();
        assert!(c.get(11, 1).is_none());
    }

    #[test]
    fn zero_entries_disable_it() {
        let mut c = EvalCache::new(0);
        assert!(!c.enabled());
        c.insert(1, &[1.0], [1.0, 0.0, 0.0]);
        assert!(c.get(1, 1).is_none());
    }
}
