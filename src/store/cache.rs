//! Decoded value blocks kept in memory, shared by the value files of a database, up to a
//! byte budget; the least recently used block is evicted first.
//!
//! A block is kept as its planes were decompressed (3 bytes per position and 2 per
//! special value), with a bit per position saying whether it has a special move and a
//! count of those before every 64 positions. A record is rebuilt on access with a few
//! reads (base bytes, bit, count, special bytes), so decoding a block copies nothing and
//! the whole (4,4) phase fits in about 0.5 GB instead of 1.3 GB of packed records.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use crate::record::{Packed, Val};

/// Encode the records of consecutive positions into a block's planes.
pub fn encode_block(records: &[u64]) -> Vec<u8> {
    let m = records.len();
    let e = records.iter().filter(|&&r| Packed(r).special_move() != 0).count();
    let mut out = vec![0u8; 3 * m + 2 * e];
    let (planes, special) = out.split_at_mut(3 * m);
    let (lo_sp, hi_sp) = special.split_at_mut(e);
    let mut k = 0;
    for (i, &r) in records.iter().enumerate() {
        let r = Packed(r);
        [planes[i], planes[m + i]] = r.base().to_le_bytes();
        let s = r.special_move();
        planes[2 * m + i] = s as u8;
        if s != 0 {
            [lo_sp[k], hi_sp[k]] = r.special().to_le_bytes();
            k += 1;
        }
    }
    out
}

/// Decode a block's planes back into records (`None` if they are not a valid block of
/// `m` positions).
pub fn decode_block(bytes: &[u8], m: usize) -> Option<Vec<u64>> {
    if bytes.len() < 3 * m {
        return None;
    }
    let (planes, special) = bytes.split_at(3 * m);
    let s = &planes[2 * m..];
    if s.iter().any(|&s| s > 31) {
        return None;
    }
    let e = s.iter().filter(|&&s| s != 0).count();
    if special.len() != 2 * e {
        return None;
    }
    let mut k = 0;
    let mut out = Vec::with_capacity(m);
    for i in 0..m {
        let base = Val::from_le_bytes([planes[i], planes[m + i]]);
        let mut special_value = 0;
        if s[i] != 0 {
            special_value = Val::from_le_bytes([special[k], special[e + k]]);
            k += 1;
        }
        out.push(Packed::new(base, s[i] as u32, special_value).0);
    }
    Some(out)
}

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

/// A cache budget asked for in megabytes (`what` names the argument: `--cache-mb`,
/// `cache_mb`), in bytes; refused when it does not fit in a `usize`, or when this
/// process's address-space limit (`ulimit -v`) leaves less than twice that (the cache
/// would fill until an allocation fails), or when it is more than the machine's
/// available memory. 0 is taken: no block is kept.
pub fn budget_of_mb(mb: u64, what: &str) -> Result<usize, crate::error::Error> {
    use crate::error::Error;
    let bytes = mb.checked_mul(1 << 20).filter(|&b| b <= usize::MAX as u64).ok_or_else(|| Error::OutOfRange {
        what: what.to_string(),
        given: mb.to_string(),
        min: 0,
        max: usize::MAX as u64 >> 20,
        why: "megabytes in a usize".to_string(),
    })?;
    if let Some(left) = crate::sys::address_space_left()
        && bytes > left / 2
    {
        return Err(Error::InvalidArgument(format!(
            "{what} {mb}: the memory limit of this process (ulimit -v) leaves {} MB; give at most {}, or leave {what} out",
            left >> 20,
            left >> 21
        )));
    }
    if let Some(free) = crate::sys::memory_available()
        && bytes > free
    {
        return Err(Error::InvalidArgument(format!(
            "{what} {mb}: the machine has {} MB of memory available; give at most that, or leave {what} out",
            free >> 20
        )));
    }
    Ok(bytes as usize)
}

/// One decoded block: its planes as decompressed (`schema/FORMAT.md`: base low bytes,
/// base high bytes, special moves, then the special values' low and high bytes), kept
/// as they are, plus a rank directory over the special moves, so that decoding a block
/// is one pass of checks and no copy.
#[derive(Debug, Default)]
pub struct Decoded {
    planes: Vec<u8>,
    /// Positions.
    m: usize,
    /// Positions with a special move.
    e: usize,
    /// Bit `i % 64` of word `i / 64`: position `i` has a special move.
    has: Vec<u64>,
    /// Positions with a special move before each word of `has` (a rank directory, so a
    /// lookup is a few reads however many specials the block has).
    before: Vec<u32>,
}

impl Decoded {
    /// Build from packed records (see `schema/FORMAT.md`: base in bits 0..16, special
    /// value in 16..32, special move in 32..37).
    pub fn from_records(records: &[u64]) -> Decoded {
        Decoded::from_planes(encode_block(records), records.len(), false).expect("encoded planes are consistent")
    }

    /// Build from a block's decoded planes of `m` positions; `elided`: the file stores
    /// every loss as code 1, and a block holding another loss code is refused. The error
    /// says what is wrong.
    pub fn from_planes(planes: Vec<u8>, m: usize, elided: bool) -> Result<Decoded, &'static str> {
        const INCONSISTENT: &str = "decoded planes are inconsistent";
        if planes.len() < 3 * m {
            return Err(INCONSISTENT);
        }
        let (lo, rest) = planes.split_at(m);
        let (hi, rest) = rest.split_at(m);
        let (s, special) = rest.split_at(m);
        // Folds without early exits, so that they vectorise: this runs on every block a
        // cold query decodes.
        if s.iter().fold(0u8, |acc, &x| acc.max(x)) > 31 {
            return Err(INCONSISTENT);
        }
        let words = m.div_ceil(64);
        let mut has = Vec::with_capacity(words);
        let mut before = Vec::with_capacity(words);
        let mut e = 0usize;
        for chunk in s.chunks(64) {
            let bits = nonzero_bits(chunk);
            has.push(bits);
            before.push(e as u32);
            e += bits.count_ones() as usize;
        }
        if special.len() != 2 * e {
            return Err(INCONSISTENT);
        }
        if elided {
            // An odd code other than 1 anywhere (a code is odd when its low byte is).
            let (slo, shi) = special.split_at(e);
            let bad = |lo: &[u8], hi: &[u8]| {
                lo.iter().zip(hi).fold(0u8, |acc, (&l, &h)| acc | (l & 1 & ((l != 1) | (h != 0)) as u8))
            };
            if bad(lo, hi) | bad(slo, shi) != 0 {
                return Err("stores a loss distance, but the file elides them");
            }
        }
        Ok(Decoded { planes, m, e, has, before })
    }

    /// The packed record of position `i` of the block.
    #[inline]
    pub fn record(&self, i: usize) -> Packed {
        let (m, p) = (self.m, &self.planes);
        let base = p[i] as Val | (p[m + i] as Val) << 8;
        let (w, bit) = (self.has[i / 64], 1u64 << (i % 64));
        if w & bit == 0 {
            return Packed::new(base, 0, 0);
        }
        let k = self.before[i / 64] as usize + (w & (bit - 1)).count_ones() as usize;
        let at = 3 * m + k;
        Packed::new(base, p[2 * m + i] as u32, p[at] as Val | (p[at + self.e] as Val) << 8)
    }

    /// Positions in the block.
    pub fn len(&self) -> usize {
        self.m
    }

    /// True for an empty block.
    pub fn is_empty(&self) -> bool {
        self.m == 0
    }

    /// Bytes of memory it holds.
    pub fn bytes(&self) -> usize {
        self.planes.capacity() + self.has.capacity() * 8 + self.before.capacity() * 4 + 96
    }
}

/// Bit `j` set for each non-zero byte `j` of `bytes` (at most 64), eight bytes at a time.
#[inline]
fn nonzero_bits(bytes: &[u8]) -> u64 {
    const LOW7: u64 = 0x7f7f_7f7f_7f7f_7f7f;
    let mut bits = 0u64;
    let mut groups = bytes.chunks_exact(8);
    for (g, group) in groups.by_ref().enumerate() {
        let x = u64::from_le_bytes(group.try_into().expect("8 bytes"));
        // The top bit of each byte of `nz` is set iff that byte of `x` is non-zero.
        let nz = ((x & LOW7) + LOW7) | x;
        // Gather the eight top bits into one byte.
        let packed = ((nz >> 7) & 0x0101_0101_0101_0101).wrapping_mul(0x0102_0408_1020_4080) >> 56;
        bits |= packed << (8 * g);
    }
    let done = bytes.len() - groups.remainder().len();
    for (j, &b) in groups.remainder().iter().enumerate() {
        bits |= ((b != 0) as u64) << (done + j);
    }
    bits
}

/// Records whose elided loss distances were found by a search ([`crate::probe::resolve_record`]),
/// by (file, position): a resolved loss costs one ply of search, a few dozen record reads,
/// so a server asked about the same positions again answers from here. A fixed table of
/// [`RECORD_SLOTS`] entries (16 bytes each), direct-mapped: a new record takes the slot of
/// whatever was there.
pub struct RecordCache {
    shards: Vec<Mutex<Vec<(u64, u64)>>>,
}

/// Entries of a [`RecordCache`] (1 MiB).
pub const RECORD_SLOTS: usize = 1 << 16;

impl RecordCache {
    /// An empty cache.
    pub fn new() -> RecordCache {
        RecordCache { shards: (0..SHARDS).map(|_| Mutex::new(Vec::new())).collect() }
    }

    fn slot(key: u64) -> (usize, usize) {
        let h = key.wrapping_mul(0x9e37_79b9_7f4a_7c15);
        let per = RECORD_SLOTS / SHARDS;
        ((h >> 60) as usize % SHARDS, (h >> 32) as usize % per)
    }

    /// The record stored under `key`, if still there.
    pub fn get(&self, key: u64) -> Option<Packed> {
        if key == u64::MAX {
            return None;
        }
        let (s, i) = RecordCache::slot(key);
        let shard = self.shards[s].lock().unwrap_or_else(|e| e.into_inner());
        // Keys are stored plus one, so an empty slot (0) matches no key.
        shard.get(i).filter(|e| e.0 == key.wrapping_add(1)).map(|e| Packed(e.1))
    }

    /// Keep `record` under `key` (any key but `u64::MAX`, which is never kept: keys are
    /// stored plus one, and 0 marks an empty slot).
    pub fn put(&self, key: u64, record: Packed) {
        if key == u64::MAX {
            return;
        }
        let (s, i) = RecordCache::slot(key);
        let mut shard = self.shards[s].lock().unwrap_or_else(|e| e.into_inner());
        if shard.is_empty() {
            shard.resize(RECORD_SLOTS / SHARDS, (0, 0));
        }
        shard[i] = (key.wrapping_add(1), record.0);
    }

    /// Forget every record. The slots stay allocated, emptied in place: a table is
    /// allocated (64 KiB a shard) once, not by the first `put` after every clear.
    pub fn clear(&self) {
        for s in &self.shards {
            s.lock().unwrap_or_else(|e| e.into_inner()).fill((0, 0));
        }
    }
}

impl Default for RecordCache {
    fn default() -> RecordCache {
        RecordCache::new()
    }
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
    /// The budget of each shard (changed by [`BlockCache::set_budget`]).
    per_shard: std::sync::atomic::AtomicUsize,
}

impl std::fmt::Debug for BlockCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BlockCache").field("budget", &self.budget()).finish()
    }
}

impl BlockCache {
    /// A cache holding at most about `budget` bytes of decoded blocks (at least the block
    /// being read is always kept, so a budget of 0 caches the last block of each shard).
    pub fn new(budget: usize) -> BlockCache {
        BlockCache {
            shards: (0..SHARDS).map(|_| Mutex::new(Shard::default())).collect(),
            per_shard: (budget / SHARDS).into(),
        }
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
        self.get_or_load_covering(key, 0, load)
    }

    /// The block `key` holding at least `n` positions (a block may be cached decoded
    /// only up to a position), decoding it with `load` when it is not cached so.
    pub fn get_or_load_covering<E>(
        &self,
        key: u64,
        n: usize,
        load: impl FnOnce() -> Result<Decoded, E>,
    ) -> Result<Arc<Decoded>, E> {
        let shard = self.shard(key);
        {
            let mut s = shard.lock().unwrap_or_else(|p| p.into_inner());
            s.tick += 1;
            let tick = s.tick;
            if let Some((d, t)) = s.map.get_mut(&key)
                && d.len() >= n
            {
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
        let per_shard = self.per_shard.load(std::sync::atomic::Ordering::Relaxed);
        if s.bytes > per_shard && s.map.len() > 1 {
            // Evict the least recently used blocks down to 7/8 of the budget in one sort,
            // so that a full cache of many small blocks pays O(log n) per insert, not a
            // scan of the shard.
            let mut by_age: Vec<(u64, u64, usize)> =
                s.map.iter().filter(|(k, _)| **k != key).map(|(k, (d, t))| (*t, *k, d.bytes())).collect();
            by_age.sort_unstable();
            let target = per_shard - per_shard / 8;
            for (_, k, bytes) in by_age {
                if s.bytes <= target {
                    break;
                }
                s.map.remove(&k);
                s.bytes -= bytes;
            }
        }
        Ok(d)
    }

    /// The most bytes of decoded blocks it holds (about).
    pub fn budget(&self) -> usize {
        self.per_shard.load(std::sync::atomic::Ordering::Relaxed) * SHARDS
    }

    /// Hold at most about `budget` bytes from now on: a program that learns how much
    /// memory it can spare only once the database is open (`ostledb serve` under a
    /// memory limit) sets it before it fills the cache. Blocks held beyond it go at the
    /// next insert into their shard.
    pub fn set_budget(&self, budget: usize) {
        self.per_shard.store(budget / SHARDS, std::sync::atomic::Ordering::Relaxed);
    }

    /// Bytes of decoded blocks held now.
    pub fn bytes(&self) -> usize {
        self.shards.iter().map(|s| s.lock().unwrap_or_else(|p| p.into_inner()).bytes).sum()
    }

    /// Forget every block (the budget stays).
    pub fn clear(&self) {
        for s in &self.shards {
            let mut s = s.lock().unwrap_or_else(|p| p.into_inner());
            s.map.clear();
            s.bytes = 0;
        }
    }

    /// Blocks held now.
    pub fn blocks(&self) -> usize {
        self.shards.iter().map(|s| s.lock().unwrap_or_else(|p| p.into_inner()).map.len()).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nonzero_bits_equal_a_byte_by_byte_scan() {
        let mut x = 7u64;
        for len in 0..=64 {
            for _ in 0..50 {
                let bytes: Vec<u8> = (0..len)
                    .map(|_| {
                        x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                        // Mostly zeros, and every value 1..=255 now and then.
                        if x >> 62 == 0 { (x >> 40) as u8 } else { 0 }
                    })
                    .collect();
                let naive = bytes.iter().enumerate().fold(0u64, |a, (j, &b)| a | ((b != 0) as u64) << j);
                assert_eq!(nonzero_bits(&bytes), naive, "{bytes:?}");
            }
        }
        assert_eq!(nonzero_bits(&[0x80; 64]), u64::MAX);
        assert_eq!(nonzero_bits(&[1; 64]), u64::MAX);
    }

    #[test]
    fn the_record_cache_keeps_what_it_was_given_until_cleared() {
        let c = RecordCache::new();
        assert_eq!(c.get(5), None);
        c.put(5, Packed(42));
        c.put(u64::MAX - 1, Packed(7));
        assert_eq!(c.get(5), Some(Packed(42)));
        assert_eq!(c.get(u64::MAX - 1), Some(Packed(7)));
        assert_eq!(c.get(6), None);
        // u64::MAX is not kept, and an empty slot is no record of it.
        c.put(u64::MAX, Packed(9));
        assert_eq!(c.get(u64::MAX), None);
        c.clear();
        assert_eq!((c.get(5), c.get(u64::MAX - 1), c.get(u64::MAX)), (None, None, None));
        c.put(5, Packed(43));
        assert_eq!((c.get(5), c.get(u64::MAX)), (Some(Packed(43)), None));
    }

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
        for n in [0usize, 1, 63, 64, 65, 1000, 4096] {
            let r = records(n, n as u64 + 11);
            let planes = encode_block(&r);
            let d = Decoded::from_planes(planes.clone(), n, false).unwrap();
            assert_eq!(d.len(), n);
            for (i, &want) in r.iter().enumerate() {
                assert_eq!(d.record(i), Packed(want), "n {n} i {i}");
            }
            assert!(
                Decoded::from_planes(planes[..planes.len().saturating_sub(1)].to_vec(), n, false).is_err() || n == 0
            );
            // An elided block reads back; loss distances in a block said to elide them do not.
            let el: Vec<u64> = r.iter().map(|&x| Packed(x).elided().0).collect();
            let d = Decoded::from_planes(encode_block(&el), n, true).unwrap();
            assert!(el.iter().enumerate().all(|(i, &want)| d.record(i) == Packed(want)));
            if r.iter().any(|&x| Packed(x).has_loss_distance()) {
                assert!(Decoded::from_planes(planes.clone(), n, true).is_err(), "n {n}");
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
        // A smaller budget set later holds from the next inserts on.
        cache.set_budget(SHARDS * one);
        assert_eq!(cache.budget(), SHARDS * one);
        for k in 200..400u64 {
            let _ = cache.get_or_load::<()>(k, || Ok(Decoded::from_records(&records(1000, 5))));
        }
        assert!(cache.bytes() <= SHARDS * one, "{} over {}", cache.bytes(), SHARDS * one);
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
