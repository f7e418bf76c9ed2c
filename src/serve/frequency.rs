//! How often each asset was asked for lately, in a few bytes per cache
//! entry: the cache's admission filter (TinyLFU, the rule Caffeine and
//! Ristretto use).
//!
//! A count-min sketch: four rows of small counters, each key hashed to one
//! counter per row, its estimate the smallest of the four (collisions only
//! ever add, so the smallest is the closest). An access raises only the
//! counters equal to that minimum (conservative update), which keeps the
//! other keys' estimates from drifting up. Counters stop at 15, and after
//! ten accesses per counter of a row every counter is halved, so the
//! estimates follow what is asked for now, not what was popular an hour
//! ago.
//!
//! Why the cache needs it: under traffic that rarely repeats (a crawler,
//! or uniform requests over a catalog ten times the cache), a plain LRU
//! inserts every miss and evicts an entry for it, paying an insertion, an
//! eviction and a freshly allocated body for an entry that is unlikely to
//! be asked again before it is evicted in turn. With the filter, a miss
//! enters a full cache only when it has been asked for clearly more often
//! than the entry it would push out (the cache's `LEAD`; bench/RPS.md
//! measures what that saves).

/// Counters per row for a cache of `entries`: eight per entry, as a power
/// of two between 64 and 2^20 (4 MiB for the four rows). Eight, not one:
/// the keys that pass through are many more than the entries kept (a crawl,
/// uniform traffic over a big catalog), and with one counter per entry
/// their collisions raise every estimate until a key asked for once looks
/// as popular as one asked for every second.
fn width_for(entries: usize) -> usize {
    entries
        .saturating_mul(8)
        .clamp(64, 1 << 20)
        .next_power_of_two()
}

/// The most a counter holds: 4 bits' worth, as in TinyLFU.
const MAX_COUNT: u8 = 15;
/// Accesses per cache entry between two halvings: how far back "lately"
/// reaches.
const SAMPLE_PER_ENTRY: usize = 10;
/// Rows: four independent hashes of the key.
const ROWS: usize = 4;
/// Odd multipliers that spread one 64-bit hash into four row indexes.
const SEEDS: [u64; ROWS] = [
    0x9E37_79B9_7F4A_7C15,
    0xC2B2_AE3D_27D4_EB4F,
    0x1656_67B1_9E37_79F9,
    0xD6E8_FEB8_6659_FD93,
];

/// Recent access counts of keys, by their 64-bit hash.
pub(super) struct Frequency {
    /// `ROWS` rows of `width` counters, row after row.
    counters: Box<[u8]>,
    /// `64 - log2(width)`: the shift that turns a mixed hash into an index.
    shift: u32,
    width: usize,
    /// The cache size it was sized for.
    entries: usize,
    /// Accesses since the last halving.
    accesses: usize,
    sample: usize,
}

impl Frequency {
    /// A sketch sized for a cache of `entries` entries.
    pub(super) fn new(entries: usize) -> Frequency {
        let width = width_for(entries);
        Frequency {
            counters: vec![0; ROWS * width].into_boxed_slice(),
            shift: 64 - width.trailing_zeros(),
            width,
            entries,
            accesses: 0,
            sample: SAMPLE_PER_ENTRY.saturating_mul(entries.max(8)),
        }
    }

    /// The cache size it was sized for.
    pub(super) fn entries(&self) -> usize {
        self.entries
    }

    /// The counter of `hash` in each row.
    fn slots(&self, hash: u64) -> [usize; ROWS] {
        std::array::from_fn(|row| {
            let mixed = (hash ^ (hash >> 29)).wrapping_mul(SEEDS[row]);
            row * self.width + (mixed >> self.shift) as usize
        })
    }

    /// How often `hash` was accessed lately (at most 15).
    pub(super) fn estimate(&self, hash: u64) -> u8 {
        self.slots(hash)
            .into_iter()
            .map(|slot| self.counters[slot])
            .min()
            .unwrap_or(0)
    }

    /// Counts one access to `hash`; returns its estimate, this one included.
    pub(super) fn record(&mut self, hash: u64) -> u8 {
        let slots = self.slots(hash);
        let least = slots
            .iter()
            .map(|&slot| self.counters[slot])
            .min()
            .unwrap_or(0);
        if least < MAX_COUNT {
            for slot in slots {
                if self.counters[slot] == least {
                    self.counters[slot] += 1;
                }
            }
        }
        self.accesses += 1;
        if self.accesses >= self.sample {
            self.age();
        }
        least.saturating_add(1).min(MAX_COUNT)
    }

    /// Halves every counter, so old popularity fades.
    fn age(&mut self) {
        for counter in self.counters.iter_mut() {
            *counter >>= 1;
        }
        self.accesses /= 2;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::hash::BuildHasher;

    fn hash(key: u32) -> u64 {
        foldhash::fast::FixedState::with_seed(7).hash_one(key)
    }

    #[test]
    fn estimates_count_accesses_up_to_fifteen() {
        let mut f = Frequency::new(1000);
        assert_eq!(f.estimate(hash(1)), 0);
        for n in 1..=20u8 {
            assert_eq!(f.record(hash(1)), n.min(15));
        }
        assert_eq!(f.estimate(hash(1)), 15);
        assert_eq!(f.estimate(hash(2)), 0, "another key is not counted");
    }

    #[test]
    fn estimates_stay_close_when_many_keys_share_the_rows() {
        // Eight times as many keys as the cache holds, each accessed 3
        // times: collisions may add, never take away, and the minimum over
        // four rows keeps most estimates exact.
        let mut f = Frequency::new(1024);
        f.sample = usize::MAX; // no halving in this test
        for _ in 0..3 {
            for key in 0..8192 {
                f.record(hash(key));
            }
        }
        let estimates: Vec<u8> = (0..8192).map(|k| f.estimate(hash(k))).collect();
        assert!(estimates.iter().all(|&e| e >= 3), "never under");
        let exact = estimates.iter().filter(|&&e| e == 3).count();
        assert!(exact > 8192 * 3 / 4, "{exact} of 8192 exact");
    }

    #[test]
    fn old_popularity_fades() {
        let mut f = Frequency::new(16);
        for _ in 0..15 {
            f.record(hash(1));
        }
        // Enough other accesses to halve the counters twice.
        for key in 0..(2 * 16 * SAMPLE_PER_ENTRY) as u32 {
            f.record(hash(1000 + key % 7));
        }
        assert!(f.estimate(hash(1)) <= 4, "{}", f.estimate(hash(1)));
    }

    #[test]
    fn widths_are_powers_of_two_within_bounds() {
        assert_eq!(width_for(0), 64);
        assert_eq!(width_for(256), 2048);
        assert_eq!(width_for(4000), 32768);
        assert_eq!(width_for(usize::MAX), 1 << 20);
    }
}
