//! Decoded value blocks kept in memory, shared by the value files of a database, up to a
//! byte budget; the least recently used block is evicted first.
//!
//! A block is kept compact: the base value code of every position (2 bytes), a bit per
//! position saying whether it has a special move with a count of those before every 64
//! positions, and the packed special parts. A record is rebuilt on access with a few
//! reads (base, bit, count, special), so the
//! whole (4,4) phase fits in about 0.4 GB instead of 1.3 GB of packed records.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use crate::record::{Packed, Val};

/// The most a database's cache holds unless told otherwise ([`default_budget`]).
pub const DEFAULT_CACHE_BYTES: usize = 512 << 20;

/// The cache budget a database uses unless told otherwise: [`DEFAULT_CACHE_BYTES`], or
/// half the memory this process can still count on
/// ([`memory_headroom`](crate::sys::memory_headroom)) where that is less, so that a
/// process under a small memory limit (`ulimit -v 200000`) does not fill its cache
/// until an allocation fails.
pub fn default_budget() -> usize {
    match crate::sys::memory_headroom() {
        Some(left) => DEFAULT_CACHE_BYTES.min((left / 2).min(usize::MAX as u64) as usize),
        None => DEFAULT_CACHE_BYTES,
    }
}

/// One decoded block.
#[derive(Debug, Default)]
pub struct Decoded {
    base: Vec<u16>,
    /// Bit `i % 64` of word `i / 64`: position `i` has a special move.
    has: Vec<u64>,
    /// Positions with a special move before each word of `has` (a rank directory, so a
    /// lookup is a few reads however many specials the block has).
    before: Vec<u32>,
    special: Vec<u32>,
}

impl Decoded {
    /// Build from packed records (see `schema/FORMAT.md`: base in bits 0..16, special
    /// value in 16..32, special move in 32..37).
    pub fn from_records(records: &[u64]) -> Decoded {
        let words = records.len().div_ceil(64);
        let mut d = Decoded {
            base: Vec::with_capacity(records.len()),
            has: vec![0; words],
            before: Vec::with_capacity(words),
            special: Vec::new(),
        };
        for (i, &r) in records.iter().enumerate() {
            let r = Packed(r);
            if i % 64 == 0 {
                d.before.push(d.special.len() as u32);
            }
            d.base.push(r.base());
            if r.special_move() != 0 {
                d.has[i / 64] |= 1 << (i % 64);
                d.special.push(special_part(r.special_move(), r.special()));
            }
        }
        d
    }

    /// Build straight from a block's decoded planes (`schema/FORMAT.md`: base low bytes,
    /// base high bytes, special moves, then the special values' low and high bytes) of
    /// `m` positions, without packing records first; `elided`: the file stores every loss
    /// as code 1, and a block holding another loss code is refused. The error says what
    /// is wrong.
    pub fn from_planes(bytes: &[u8], m: usize, elided: bool) -> Result<Decoded, &'static str> {
        if bytes.len() < 3 * m {
            return Err("decoded planes are inconsistent");
        }
        let (lo, rest) = bytes.split_at(m);
        let (hi, rest) = rest.split_at(m);
        let (s, special) = rest.split_at(m);
        if s.iter().any(|&s| s > 31) {
            return Err("decoded planes are inconsistent");
        }
        let e = s.iter().filter(|&&s| s != 0).count();
        if special.len() != 2 * e {
            return Err("decoded planes are inconsistent");
        }
        let base: Vec<u16> = lo.iter().zip(hi).map(|(&l, &h)| l as u16 | (h as u16) << 8).collect();
        let (slo, shi) = special.split_at(e);
        if elided {
            // Branch-free folds (they vectorise): an odd code other than 1 anywhere.
            let bad_base = base.iter().fold(0u16, |acc, &v| acc | ((v & 1) * (v != 1) as u16));
            let bad_special =
                slo.iter().zip(shi).fold(0u8, |acc, (&l, &h)| acc | ((l & 1) * ((l != 1) | (h != 0)) as u8));
            if bad_base | bad_special as u16 != 0 {
                return Err("stores a loss distance, but the file elides them");
            }
        }
        let words = m.div_ceil(64);
        let mut has = Vec::with_capacity(words);
        let mut before = Vec::with_capacity(words);
        let mut special = Vec::with_capacity(e);
        for (w, chunk) in s.chunks(64).enumerate() {
            before.push(special.len() as u32);
            let bits = chunk.iter().enumerate().fold(0u64, |acc, (j, &sj)| acc | ((sj != 0) as u64) << j);
            has.push(bits);
            let mut left = bits;
            while left != 0 {
                let j = left.trailing_zeros() as usize;
                let k = special.len();
                special.push(special_part(s[w * 64 + j] as u32, slo[k] as Val | (shi[k] as Val) << 8));
                left &= left - 1;
            }
        }
        Ok(Decoded { base, has, before, special })
    }

    /// The packed record of position `i` of the block.
    #[inline]
    pub fn record(&self, i: usize) -> Packed {
        let base = self.base[i];
        let (w, bit) = (self.has[i / 64], 1u64 << (i % 64));
        if w & bit == 0 {
            return Packed::new(base, 0, 0);
        }
        let sp = self.special[self.before[i / 64] as usize + (w & (bit - 1)).count_ones() as usize];
        Packed::new(base, sp >> 16, sp as Val)
    }

    /// Positions in the block.
    pub fn len(&self) -> usize {
        self.base.len()
    }

    /// True for an empty block.
    pub fn is_empty(&self) -> bool {
        self.base.is_empty()
    }

    /// Bytes of memory it holds.
    pub fn bytes(&self) -> usize {
        self.base.capacity() * 2
            + self.has.capacity() * 8
            + self.before.capacity() * 4
            + self.special.capacity() * 4
            + 96
    }
}

/// The special part of a record as a block keeps it: the special value code in the low
/// 16 bits, the special move above.
#[inline]
fn special_part(s: u32, v: Val) -> u32 {
    v as u32 | s << 16
}

const SHARDS: usize = 16;

/// Keys are (file, block) numbers: one multiply spreads them well enough, and is much
/// cheaper than the default SipHash on this hot path.
#[derive(Default, Clone, Copy)]
struct KeyHasher(u64);

impl std::hash::Hasher for KeyHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 << 8 | b as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        }
    }
    fn write_u64(&mut self, k: u64) {
        self.0 = k.wrapping_mul(0x9e37_79b9_7f4a_7c15);
    }
}

type KeyMap<V> = HashMap<u64, V, std::hash::BuildHasherDefault<KeyHasher>>;

#[derive(Default)]
struct Shard {
    map: KeyMap<(Arc<Decoded>, u64)>,
    tick: u64,
    bytes: usize,
}

/// A bounded cache of decoded blocks, keyed by (file, block). Safe to share between
/// threads: it is split into shards with a lock each.
pub struct BlockCache {
    shards: Vec<Mutex<Shard>>,
    per_shard: usize,
}

impl std::fmt::Debug for BlockCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BlockCache").field("budget", &(self.per_shard * SHARDS)).finish()
    }
}

impl BlockCache {
    /// A cache holding at most about `budget` bytes of decoded blocks (at least the block
    /// being read is always kept, so a budget of 0 caches the last block of each shard).
    pub fn new(budget: usize) -> BlockCache {
        BlockCache { shards: (0..SHARDS).map(|_| Mutex::new(Shard::default())).collect(), per_shard: budget / SHARDS }
    }

    fn shard(&self, key: u64) -> &Mutex<Shard> {
        // Consecutive blocks of one file go to different shards.
        let h = key.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 60;
        &self.shards[h as usize % SHARDS]
    }

    /// `read(block)` of the block `key` if it is cached (without taking a reference to
    /// it), else `None`.
    #[inline]
    pub fn with<T>(&self, key: u64, read: impl FnOnce(&Decoded) -> T) -> Option<T> {
        let mut s = self.shard(key).lock().unwrap_or_else(|p| p.into_inner());
        s.tick += 1;
        let tick = s.tick;
        let (d, t) = s.map.get_mut(&key)?;
        *t = tick;
        Some(read(d))
    }

    /// The block `key`, decoding it with `load` when it is not cached.
    pub fn get_or_load<E>(&self, key: u64, load: impl FnOnce() -> Result<Decoded, E>) -> Result<Arc<Decoded>, E> {
        let shard = self.shard(key);
        {
            let mut s = shard.lock().unwrap_or_else(|p| p.into_inner());
            s.tick += 1;
            let tick = s.tick;
            if let Some((d, t)) = s.map.get_mut(&key) {
                *t = tick;
                return Ok(d.clone());
            }
        }
        // Decode without holding the lock: other threads keep reading meanwhile (two
        // threads may decode the same block at once; the second insert wins, harmlessly).
        let d = Arc::new(load()?);
        let mut s = shard.lock().unwrap_or_else(|p| p.into_inner());
        s.tick += 1;
        let tick = s.tick;
        let add = d.bytes();
        if let Some((old, _)) = s.map.insert(key, (d.clone(), tick)) {
            s.bytes -= old.bytes();
        }
        s.bytes += add;
        while s.bytes > self.per_shard && s.map.len() > 1 {
            let victim = s.map.iter().filter(|(k, _)| **k != key).min_by_key(|(_, (_, t))| *t).map(|(k, _)| *k);
            let Some(v) = victim else { break };
            if let Some((old, _)) = s.map.remove(&v) {
                s.bytes -= old.bytes();
            }
        }
        Ok(d)
    }

    /// The most bytes of decoded blocks it holds (about).
    pub fn budget(&self) -> usize {
        self.per_shard * SHARDS
    }

    /// Bytes of decoded blocks held now.
    pub fn bytes(&self) -> usize {
        self.shards.iter().map(|s| s.lock().unwrap_or_else(|p| p.into_inner()).bytes).sum()
    }

    /// Blocks held now.
    pub fn blocks(&self) -> usize {
        self.shards.iter().map(|s| s.lock().unwrap_or_else(|p| p.into_inner()).map.len()).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn records(n: usize, seed: u64) -> Vec<u64> {
        (0..n as u64)
            .map(|i| {
                let x = (i + 1).wrapping_mul(seed | 1).wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 20;
                let base = x % 400;
                if x % 7 == 0 { base | ((x >> 8) % 300) << 16 | ((x >> 20) % 31 + 1) << 32 } else { base }
            })
            .collect()
    }

    #[test]
    fn decoded_blocks_give_back_every_record() {
        for n in [0usize, 1, 2, 100, 4096] {
            let r = records(n, n as u64 + 3);
            let d = Decoded::from_records(&r);
            assert_eq!(d.len(), n);
            for (i, &want) in r.iter().enumerate() {
                assert_eq!(d.record(i), Packed(want), "n {n} i {i}");
            }
        }
    }

    #[test]
    fn blocks_decoded_from_planes_equal_blocks_from_records() {
        use crate::store::values::encode_block;
        for n in [0usize, 1, 63, 64, 65, 1000, 4096] {
            let r = records(n, n as u64 + 11);
            let planes = encode_block(&r);
            let d = Decoded::from_planes(&planes, n, false).unwrap();
            assert_eq!(d.len(), n);
            for (i, &want) in r.iter().enumerate() {
                assert_eq!(d.record(i), Packed(want), "n {n} i {i}");
            }
            assert!(Decoded::from_planes(&planes[..planes.len().saturating_sub(1)], n, false).is_err() || n == 0);
            // An elided block reads back; loss distances in a block said to elide them do not.
            let el: Vec<u64> = r.iter().map(|&x| Packed(x).elided().0).collect();
            let d = Decoded::from_planes(&encode_block(&el), n, true).unwrap();
            assert!(el.iter().enumerate().all(|(i, &want)| d.record(i) == Packed(want)));
            if r.iter().any(|&x| Packed(x).has_loss_distance()) {
                assert!(Decoded::from_planes(&planes, n, true).is_err(), "n {n}");
            }
        }
    }

    #[test]
    fn the_budget_bounds_what_is_kept_and_hits_skip_loading() {
        let one = Decoded::from_records(&records(1000, 5)).bytes();
        let cache = BlockCache::new(SHARDS * one * 3);
        let mut loads = 0;
        for round in 0..3 {
            for k in 0..200u64 {
                let d = cache
                    .get_or_load::<()>(k, || {
                        loads += 1;
                        Ok(Decoded::from_records(&records(1000, 5)))
                    })
                    .unwrap();
                assert_eq!(d.len(), 1000);
            }
            assert!(cache.bytes() <= SHARDS * one * 3, "round {round}");
        }
        assert!(loads >= 200, "every block was loaded at least once");
        // A block just used stays cached: getting it again loads nothing.
        let _ = cache.get_or_load::<()>(7, || Ok(Decoded::from_records(&records(1000, 5))));
        for _ in 0..10 {
            let d = cache.get_or_load::<()>(7, || Err(())).expect("block 7 stays cached");
            assert_eq!(d.len(), 1000);
        }
    }

    #[test]
    fn a_failed_load_is_not_cached() {
        let cache = BlockCache::new(1 << 20);
        assert_eq!(cache.get_or_load(1, || Err("bad")).err(), Some("bad"));
        assert_eq!(cache.blocks(), 0);
        assert_eq!(cache.get_or_load::<()>(1, || Ok(Decoded::from_records(&[5]))).unwrap().record(0), Packed(5));
    }
}
