//! A minimal perfect hash function (MPHF) over distinct `u64` keys: [`Mphf::slot`] maps
//! each of the `n` keys it was built from to a distinct slot in `0..n`.
//!
//! The `hash` key backend stores one per phase beside an index array slot -> dense index;
//! the MPHF itself knows nothing of positions. It cannot tell keys from non-keys: a
//! non-key gets some slot in `0..n` (or 0 when `n == 0`), never a panic.
//!
//! # Design
//!
//! A pilot-based "hash and displace" scheme in the style of PTHash and PtrHash:
//!
//! - **Sharding.** Every key is hashed once with a fixed seed, `h0 = mix(key ^ SHARD_SEED)`
//!   (`mix` is a bijective multiply-xorshift finalizer, so distinct keys have distinct
//!   hashes). The shard is `h0 * S >> 64` for `S = ceil(n / 2^18)` shards, so about 2^18
//!   keys each. Shards are independent MPHFs over consecutive slot ranges: they are built
//!   in parallel with rayon, each fails and retries on its own, and the per-shard working
//!   set (about 16 bytes per key of the shard, 4 MiB; the hot part, a bit per table slot
//!   and a bucket id per slot, about 1 MiB) stays in the caches.
//! - **Batches.** The build groups consecutive shards into batches of at most
//!   `max(2^23, n / 8)` keys and makes one pass over the key array per batch, so it holds
//!   about 16 bytes per key of one batch (2 bytes per key of the whole set, plus the output:
//!   about 0.37 bytes per key) beyond the caller's key array.
//! - **Buckets.** Within a shard of `k` keys, `h = mix(h0 ^ seed)` with the shard's seed.
//!   The shard has `B = ceil(k / 3)` buckets; the bucket is a skewed, monotone function
//!   of the top 32 bits of `h`: the lowest 60% of that range goes to the first 30% of the
//!   buckets (average size 6), the rest to the other 70% (average size 1.7).
//! - **Pilots.** The shard's table has `k' = k + ceil(k / 99)` slots (load factor
//!   alpha ~= 0.99). Each bucket has a pilot `p: u8`; a key of the bucket lands on table
//!   slot `((h ^ (p + 1) * PILOT_MUL) * SLOT_MUL) * k' >> 64` (all arithmetic wrapping mod
//!   2^64 but the last product, taken in 128 bits). Buckets are placed largest first; a
//!   bucket takes the first pilot (0, 1, ...) whose slots are all free and distinct.
//!   When no pilot fits, the pilot whose slots collide with the least total squared
//!   bucket size (and with none of the 16 most recently placed buckets) is chosen, the
//!   buckets it collides with are evicted and queued again by size (cuckoo-style
//!   displacement, as in PtrHash). More than `4 k + 1000` evictions, or a bucket with no
//!   usable pilot, retries the shard with the next seed (at most 12 seeds).
//! - **Remap (minimal fix-up).** The `k' - k` table slots `>= k` of a shard each get a
//!   `u32` entry: for a slot holding a key, a free slot `< k` of the same shard (assigned in
//!   increasing order), for an empty one 0. So every key maps into `0..k`, then the shard's
//!   slot base is added.
//!
//! Size: 8 / 3 = 2.67 bits per key for the pilots, 32 / 99 = 0.32 for the remap, and 96
//! bits per shard (about 0.0004 per key): 2.99 bits per key.
//!
//! A query is two `mix`es, one read of the shard's 64-byte descriptor (about 610 of them
//! for 1.6e8 keys: cached), one pilot byte, and for about 1% of the keys one remap entry.
//! Duplicate keys have equal hashes, hence the same shard and bucket: the build compares
//! the hashes inside every bucket and reports duplicates as an error.
//!
//! # Serialized layout (format version 1)
//!
//! All integers little-endian, fixed width, no padding, in this order:
//!
//! | field     | width               | meaning                                              |
//! |-----------|---------------------|------------------------------------------------------|
//! | magic     | 4 bytes             | `b"MPHF"`                                            |
//! | version   | u32                 | 1                                                    |
//! | n         | u64                 | number of keys                                       |
//! | `S`       | u32                 | number of shards: 0 iff `n == 0`, else `1..=n`       |
//! | shards    | `S` x (u32, u64)    | per shard `i`: `keys_i` (<= 2^31, sum `n`), `seed_i` |
//! | pilots    | `sum B_i` x u8      | shard 0's `B_0` pilots, then shard 1's, ...          |
//! | remap     | `sum R_i` x u32     | shard 0's `R_0` entries, then shard 1's, ...         |
//!
//! where `B_i = ceil(keys_i / 3)` (shard `i`'s buckets, in bucket order) and
//! `R_i = ceil(keys_i / 99)` (shard `i`'s table slots `keys_i..keys_i + R_i`, in order;
//! each entry `< keys_i`, 0 for an empty slot).
//!
//! The total is `20 + 12 S + sum B_i + 4 sum R_i` bytes ([`Mphf::byte_size`]). The number
//! of shards is stored, not derived, so the shard size can change without a format change.
//! There is no checksum: the file that embeds this carries one.
//! [`Mphf::read_from`] checks every count against the bytes left before allocating, the
//! shard sizes against `n` and every remap entry against its shard, so a parsed value never
//! indexes out of bounds; corrupt pilots or seeds only give other slots.
//!
//! # Measurements
//!
//! Intel Xeon VM (2 cores, 2 MiB L2 each), shared with other jobs (load average 5-6 during
//! the runs, so wall times include waiting for a core: the CPU times are the fairer
//! numbers), random distinct 55-bit keys, in the scratch crate:
//! `cargo test --release -- --ignored --nocapture measure` (env `MPHF_SIZES` sets the key
//! counts; `RAYON_NUM_THREADS=1` for one thread). Queries: 2e7 (or n) random keys of the
//! set; "independent" sums the slots, "dependent" feeds each slot into the next key (latency).
//!
//! | n     | threads | build wall | build CPU (per core) | bits/key | query ns, wall / CPU | dependent |
//! |-------|---------|------------|----------------------|----------|----------------------|-----------|
//! | 1e6   | 1       | 0.15 s     | 0.10 s (10.0 M/s)    | 2.991    | 24.1 / 10.6          | 32.9 / 19.9 |
//! | 1e7   | 1       | 1.30 s     | 1.10 s (9.1 M/s)     | 2.990    | 16.6 / 13.3          | 40.1 / 36.2 |
//! | 1.6e8 | 1       | 31.9 s     | 23.4 s (6.8 M/s)     | 2.990    | 62.1 / 41.9          | 281 / 193   |
//! | 1e6   | 2       | 0.19 s     | 0.11 s (9.1 M/s)     | 2.991    | 18.4 / 8.0           | 42.2 / 23.1 |
//! | 1e7   | 2       | 1.39 s     | 1.09 s (9.2 M/s)     | 2.990    | 24.3 / 14.3          | 62.6 / 40.9 |
//! | 1.6e8 | 2       | 32.7 s     | 23.7 s (6.7 M/s)     | 2.990    | 62.6 / 41.8          | 199 / 170   |
//!
//! Two threads did not shorten the wall time here only because the other jobs held the
//! cores; the shards of a batch are independent. At 1.6e8 keys the pilots (53 MB) no longer
//! fit in cache: a dependent query is one DRAM and TLB miss (about 170 ns CPU on this VM),
//! independent queries overlap their misses (about 42 ns).

use std::collections::BinaryHeap;

use rayon::prelude::*;

/// File magic.
const MAGIC: [u8; 4] = *b"MPHF";
/// Format version.
const VERSION: u32 = 1;
/// Bytes before the shard table: magic, version, n, shard count.
const HEADER_BYTES: u64 = 4 + 4 + 8 + 4;
/// Bytes per shard in the shard table: key count (u32), seed (u64).
const SHARD_BYTES: u64 = 4 + 8;
/// Expected keys per shard.
const SHARD_TARGET: u64 = 1 << 18;
/// The most keys a shard may hold (keeps every per-shard product below 2^64).
const MAX_SHARD_KEYS: u64 = 1 << 31;
/// The fewest keys per build batch (see [`batch_keys`]).
const MIN_BATCH_KEYS: u64 = 1 << 23;
/// Average keys per bucket (lambda). 3.5 gives 2.6 bits per key but builds about half
/// as fast; 4 is much slower still.
const BUCKET_KEYS: u64 = 3;
/// A shard of `k` keys has `ceil(k / KEYS_PER_EXTRA_SLOT)` more table slots than keys
/// (load factor alpha = 0.99). 49 (alpha = 0.98) costs 0.33 bits per key and hardly speeds
/// the build up.
const KEYS_PER_EXTRA_SLOT: u64 = 99;
/// Seed of the shard hash.
const SHARD_SEED: u64 = 0x6f73_746c_6564_6221;
/// Multiplier of the pilot hash.
const PILOT_MUL: u64 = 0x9e37_79b9_7f4a_7c15;
/// Multiplier applied to `h ^ pilot hash` before reducing to a table slot.
const SLOT_MUL: u64 = 0xd6e8_feb8_6659_fd93;
/// Top-32-bit hash values below this (60% of 2^32) go to the dense buckets.
const DENSE_THRESHOLD: u64 = 2_576_980_377;
/// Seeds tried per shard before the build gives up.
const MAX_ATTEMPTS: u64 = 12;
/// Recently placed buckets a displacement may not evict (breaks eviction cycles).
const RECENT: usize = 16;
/// Owner of a free table slot.
const FREE: u32 = u32::MAX;
/// Keys per rayon task when scanning the key array.
const SCAN_CHUNK: usize = 1 << 16;

/// A bijective 64-bit mixer (xorshift-multiply finalizer; the constants are Stafford's
/// "Mix13", also splitmix64's).
#[inline]
fn mix(x: u64) -> u64 {
    let x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    let x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

/// `x * m >> 64`: maps a uniform `x` to `0..m`.
#[inline]
fn mul_high(x: u64, m: u64) -> u64 {
    ((x as u128 * m as u128) >> 64) as u64
}

/// The shard hash of a key.
#[inline]
fn shard_hash(key: u64) -> u64 {
    mix(key ^ SHARD_SEED)
}

/// The hash a pilot xors into a key hash.
#[inline]
fn pilot_hash(pilot: u8) -> u64 {
    (pilot as u64 + 1).wrapping_mul(PILOT_MUL)
}

/// The table slot (in `0..table`) of key hash `h` under pilot hash `hp`.
#[inline]
fn table_slot(h: u64, hp: u64, table: u64) -> u64 {
    mul_high((h ^ hp).wrapping_mul(SLOT_MUL), table)
}

/// Buckets of a shard of `keys` keys: `ceil(keys / BUCKET_KEYS)`.
fn bucket_count(keys: u64) -> u64 {
    keys.div_ceil(BUCKET_KEYS)
}

/// Remap entries of a shard of `keys` keys: its table has `keys + remap_count(keys)` slots.
fn remap_count(keys: u64) -> u64 {
    keys.div_ceil(KEYS_PER_EXTRA_SLOT)
}

/// Keys per build batch for `n` keys.
fn batch_keys(n: u64) -> u64 {
    (n / 8).max(MIN_BATCH_KEYS)
}

/// One shard: its geometry (derived from its key count), seed and where its slots,
/// pilots and remap entries start.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[repr(align(64))]
struct Shard {
    /// Keys of the shard.
    keys: u64,
    /// Table slots: `keys + remap_count(keys)`.
    table: u64,
    /// Seed of the in-shard hash.
    seed: u64,
    /// Dense buckets (the first 30%).
    dense_buckets: u64,
    /// `floor(dense_buckets * 2^32 / DENSE_THRESHOLD)`.
    dense_mul: u64,
    /// `floor(sparse_buckets * 2^32 / (2^32 - DENSE_THRESHOLD))`.
    sparse_mul: u64,
    /// First global slot (sum of the keys of the shards before).
    slot_base: u64,
    /// First pilot (sum of the buckets of the shards before).
    pilot_base: u64,
    /// First remap entry (sum of the remap entries of the shards before).
    remap_base: u64,
}

impl Shard {
    /// The geometry of a shard of `keys <= MAX_SHARD_KEYS` keys (bases 0).
    fn new(keys: u64, seed: u64) -> Shard {
        let buckets = bucket_count(keys);
        let dense_buckets = buckets * 3 / 10;
        let sparse_buckets = buckets - dense_buckets;
        Shard {
            keys,
            table: keys + remap_count(keys),
            seed,
            dense_buckets,
            dense_mul: (dense_buckets << 32) / DENSE_THRESHOLD,
            sparse_mul: (sparse_buckets << 32) / ((1 << 32) - DENSE_THRESHOLD),
            ..Shard::default()
        }
    }

    /// Buckets of the shard.
    fn buckets(&self) -> u64 {
        bucket_count(self.keys)
    }

    /// The in-shard hash of a key with shard hash `h0`.
    #[inline]
    fn hash(&self, h0: u64) -> u64 {
        mix(h0 ^ self.seed)
    }

    /// The bucket (in `0..buckets()`, when `keys > 0`) of in-shard hash `h`.
    #[inline]
    fn bucket(&self, h: u64) -> u64 {
        let x = h >> 32;
        let dense = (x * self.dense_mul) >> 32;
        let sparse = self.dense_buckets + (x.wrapping_sub(DENSE_THRESHOLD).wrapping_mul(self.sparse_mul) >> 32);
        if x < DENSE_THRESHOLD { dense } else { sparse }
    }
}

/// A minimal perfect hash function over a set of distinct `u64` keys (see the module
/// documentation for the scheme and the serialized layout).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Mphf {
    /// Number of keys.
    n: u64,
    /// The shards, in slot order.
    shards: Vec<Shard>,
    /// Every shard's pilots, one per bucket.
    pilots: Vec<u8>,
    /// Every shard's remap entries (shard-local slots).
    remap: Vec<u32>,
}

/// What one shard's build produced.
struct ShardBuild {
    /// The seed that worked.
    seed: u64,
    /// One pilot per bucket.
    pilots: Vec<u8>,
    /// The remap entries.
    remap: Vec<u32>,
}

/// Why one shard's build failed.
enum ShardError {
    /// Two keys are equal.
    Duplicate,
    /// No seed worked.
    Failed,
}

impl Mphf {
    /// Build over distinct keys (any order). `Err(reason)` if two keys are equal or the
    /// construction fails repeatedly (which random-looking keys do not make happen).
    pub fn build(keys: &[u64]) -> Result<Mphf, String> {
        Mphf::build_with(keys, SHARD_TARGET, batch_keys(keys.len() as u64))
    }

    /// [`Mphf::build`] with about `shard_target` keys per shard and batches of at most
    /// `batch` keys (one shard at least).
    fn build_with(keys: &[u64], shard_target: u64, batch: u64) -> Result<Mphf, String> {
        let n = keys.len() as u64;
        if n == 0 {
            return Ok(Mphf::default());
        }
        let shard_count = n.div_ceil(shard_target.max(1));
        if shard_count > u32::MAX as u64 {
            return Err(format!("{n} keys need {shard_count} shards, more than 2^32 - 1"));
        }
        let counts = keys
            .par_chunks(SCAN_CHUNK)
            .fold(
                || vec![0u64; shard_count as usize],
                |mut counts, chunk| {
                    for &key in chunk {
                        counts[mul_high(shard_hash(key), shard_count) as usize] += 1;
                    }
                    counts
                },
            )
            .reduce(
                || vec![0u64; shard_count as usize],
                |mut a, b| {
                    a.iter_mut().zip(&b).for_each(|(a, b)| *a += b);
                    a
                },
            );
        if let Some(big) = counts.iter().find(|&&c| c > MAX_SHARD_KEYS) {
            return Err(format!("a shard got {big} keys, more than {MAX_SHARD_KEYS}: the keys are not random-looking"));
        }

        let mut mphf =
            Mphf { n, shards: Vec::with_capacity(shard_count as usize), pilots: Vec::new(), remap: Vec::new() };
        let mut lo = 0;
        while lo < counts.len() {
            let mut hi = lo + 1;
            let mut total = counts[lo];
            while hi < counts.len() && total + counts[hi] <= batch {
                total += counts[hi];
                hi += 1;
            }
            let (lo64, hi64) = (lo as u64, hi as u64);
            // The shard hashes of this batch's keys, grouped by shard.
            let parts: Vec<Vec<u64>> = keys
                .par_chunks(SCAN_CHUNK)
                .map(|chunk| {
                    chunk
                        .iter()
                        .map(|&key| shard_hash(key))
                        .filter(|&h0| (lo64..hi64).contains(&mul_high(h0, shard_count)))
                        .collect()
                })
                .collect();
            let mut cursor = Vec::with_capacity(hi - lo);
            let mut start = 0;
            for &c in &counts[lo..hi] {
                cursor.push(start as usize);
                start += c;
            }
            let mut grouped = vec![0u64; total as usize];
            for part in parts {
                for h0 in part {
                    let s = (mul_high(h0, shard_count) - lo64) as usize;
                    grouped[cursor[s]] = h0;
                    cursor[s] += 1;
                }
            }
            let mut slices = Vec::with_capacity(hi - lo);
            let mut rest = &grouped[..];
            for (s, &c) in (lo..hi).zip(&counts[lo..hi]) {
                let (shard, tail) = rest.split_at(c as usize);
                slices.push((s as u64, shard));
                rest = tail;
            }
            let built: Vec<Result<ShardBuild, ShardError>> =
                slices.into_par_iter().map(|(s, h0s)| build_shard(h0s, s)).collect();
            for (s, result) in (lo..hi).zip(built) {
                let shard = match result {
                    Ok(shard) => shard,
                    Err(ShardError::Duplicate) => return Err("the keys are not distinct: two keys are equal".into()),
                    Err(ShardError::Failed) => {
                        return Err(format!("construction failed for shard {s} with {MAX_ATTEMPTS} seeds"));
                    }
                };
                mphf.push_shard(counts[s], shard.seed, &shard.pilots, &shard.remap);
            }
            lo = hi;
        }
        Ok(mphf)
    }

    /// Append a shard of `keys` keys: its seed, pilots and remap entries.
    fn push_shard(&mut self, keys: u64, seed: u64, pilots: &[u8], remap: &[u32]) {
        let mut shard = Shard::new(keys, seed);
        if let Some(last) = self.shards.last() {
            shard.slot_base = last.slot_base + last.keys;
        }
        shard.pilot_base = self.pilots.len() as u64;
        shard.remap_base = self.remap.len() as u64;
        self.shards.push(shard);
        self.pilots.extend_from_slice(pilots);
        self.remap.extend_from_slice(remap);
    }

    /// The slot of `key` in `0..len()`: distinct for the keys the function was built
    /// from; some slot in `0..len()` for other values (0 when empty). Never panics.
    #[inline]
    pub fn slot(&self, key: u64) -> u64 {
        if self.shards.is_empty() {
            return 0;
        }
        let h0 = shard_hash(key);
        let shard = &self.shards[mul_high(h0, self.shards.len() as u64) as usize];
        if shard.keys == 0 {
            return 0;
        }
        let h = shard.hash(h0);
        let pilot = self.pilots[(shard.pilot_base + shard.bucket(h)) as usize];
        let slot = table_slot(h, pilot_hash(pilot), shard.table);
        if slot < shard.keys {
            shard.slot_base + slot
        } else {
            shard.slot_base + self.remap[(shard.remap_base + slot - shard.keys) as usize] as u64
        }
    }

    /// The address of the pilot byte [`Mphf::slot`] reads for `key` (the one random
    /// read before the slot is known), for a prefetch; null when there is none.
    #[inline]
    pub fn pilot_addr(&self, key: u64) -> *const u8 {
        if self.shards.is_empty() {
            return std::ptr::null();
        }
        let h0 = shard_hash(key);
        let shard = &self.shards[mul_high(h0, self.shards.len() as u64) as usize];
        if shard.keys == 0 {
            return std::ptr::null();
        }
        let h = shard.hash(h0);
        self.pilots.as_ptr().wrapping_add((shard.pilot_base + shard.bucket(h)) as usize)
    }

    /// The number of keys (slots are `0..len()`).
    pub fn len(&self) -> u64 {
        self.n
    }

    /// True when built over no keys.
    pub fn is_empty(&self) -> bool {
        self.n == 0
    }

    /// The size of the serialization ([`Mphf::write_to`]) in bytes.
    pub fn byte_size(&self) -> u64 {
        HEADER_BYTES + SHARD_BYTES * self.shards.len() as u64 + self.pilots.len() as u64 + 4 * self.remap.len() as u64
    }

    /// Append the serialization: little-endian, fixed width, laid out as the module
    /// documentation's table says (magic `b"MPHF"`, version u32 = 1, n u64, shard count
    /// u32, per shard its key count u32 and seed u64, the pilots as bytes, the remap
    /// entries as u32), [`Mphf::byte_size`] bytes in all.
    pub fn write_to(&self, out: &mut impl std::io::Write) -> std::io::Result<()> {
        let mut head = Vec::with_capacity((HEADER_BYTES + SHARD_BYTES * self.shards.len() as u64) as usize);
        head.extend_from_slice(&MAGIC);
        head.extend_from_slice(&VERSION.to_le_bytes());
        head.extend_from_slice(&self.n.to_le_bytes());
        head.extend_from_slice(&(self.shards.len() as u32).to_le_bytes());
        for shard in &self.shards {
            head.extend_from_slice(&(shard.keys as u32).to_le_bytes());
            head.extend_from_slice(&shard.seed.to_le_bytes());
        }
        out.write_all(&head)?;
        out.write_all(&self.pilots)?;
        let mut buf = Vec::with_capacity(1 << 16);
        for chunk in self.remap.chunks(1 << 14) {
            buf.clear();
            chunk.iter().for_each(|e| buf.extend_from_slice(&e.to_le_bytes()));
            out.write_all(&buf)?;
        }
        Ok(())
    }

    /// Parse a serialization ([`Mphf::write_to`]) from the start of `bytes`: the function
    /// and the number of bytes it took. `Err(reason)` on malformed input: wrong magic or
    /// version, truncation, shard sizes that do not add up to `n`, remap entries out of
    /// their shard. Never panics; allocates only after checking the bytes are there.
    pub fn read_from(bytes: &[u8]) -> Result<(Mphf, usize), String> {
        let mut r = Reader { bytes, pos: 0 };
        if r.take(4, "magic")? != MAGIC {
            return Err("not an MPHF: wrong magic (expected \"MPHF\")".into());
        }
        let version = r.u32("version")?;
        if version != VERSION {
            return Err(format!("unsupported MPHF format version {version} (this build reads {VERSION})"));
        }
        let n = r.u64("key count")?;
        let shard_count = r.u32("shard count")? as u64;
        if (n == 0) != (shard_count == 0) || shard_count > n {
            return Err(format!("inconsistent MPHF header: {n} keys in {shard_count} shards"));
        }
        if shard_count * SHARD_BYTES > r.remaining() {
            return Err(format!("truncated MPHF: {shard_count} shards need {} bytes", shard_count * SHARD_BYTES));
        }
        let mut mphf =
            Mphf { n, shards: Vec::with_capacity(shard_count as usize), pilots: Vec::new(), remap: Vec::new() };
        let (mut slots, mut pilots, mut remap) = (0u64, 0u64, 0u64);
        for i in 0..shard_count {
            let keys = r.u32("shard keys")? as u64;
            let seed = r.u64("shard seed")?;
            if keys > MAX_SHARD_KEYS {
                return Err(format!("corrupt MPHF: shard {i} has {keys} keys, more than {MAX_SHARD_KEYS}"));
            }
            let mut shard = Shard::new(keys, seed);
            shard.slot_base = slots;
            shard.pilot_base = pilots;
            shard.remap_base = remap;
            mphf.shards.push(shard);
            slots += keys;
            pilots += shard.buckets();
            remap += shard.table - keys;
        }
        if slots != n {
            return Err(format!("corrupt MPHF: the shards hold {slots} keys, the header says {n}"));
        }
        if pilots > r.remaining() {
            return Err(format!("truncated MPHF: {pilots} pilot bytes expected, {} left", r.remaining()));
        }
        mphf.pilots = r.take(pilots as usize, "pilots")?.to_vec();
        if remap.checked_mul(4).is_none_or(|b| b > r.remaining()) {
            return Err(format!("truncated MPHF: {remap} remap entries expected, {} bytes left", r.remaining()));
        }
        let entries = r.take(remap as usize * 4, "remap")?;
        mphf.remap = entries.chunks_exact(4).map(|e| u32::from_le_bytes([e[0], e[1], e[2], e[3]])).collect();
        for (i, shard) in mphf.shards.iter().enumerate() {
            let own = &mphf.remap[shard.remap_base as usize..(shard.remap_base + shard.table - shard.keys) as usize];
            if let Some(bad) = own.iter().find(|&&e| e as u64 >= shard.keys) {
                return Err(format!(
                    "corrupt MPHF: remap entry {bad} of shard {i} is not below its {} keys",
                    shard.keys
                ));
            }
        }
        Ok((mphf, r.pos))
    }
}

/// A bounds-checked cursor over untrusted bytes.
struct Reader<'a> {
    /// All the bytes.
    bytes: &'a [u8],
    /// Bytes consumed.
    pos: usize,
}

impl<'a> Reader<'a> {
    /// Bytes left.
    fn remaining(&self) -> u64 {
        (self.bytes.len() - self.pos) as u64
    }

    /// The next `len` bytes, or an error naming `what` was truncated.
    fn take(&mut self, len: usize, what: &str) -> Result<&'a [u8], String> {
        let end = self.pos.checked_add(len).filter(|&end| end <= self.bytes.len());
        let end = end.ok_or_else(|| format!("truncated MPHF: {what} needs {len} bytes, {} left", self.remaining()))?;
        let taken = &self.bytes[self.pos..end];
        self.pos = end;
        Ok(taken)
    }

    /// The next little-endian u32.
    fn u32(&mut self, what: &str) -> Result<u32, String> {
        let b = self.take(4, what)?;
        Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }

    /// The next little-endian u64.
    fn u64(&mut self, what: &str) -> Result<u64, String> {
        let b = self.take(8, what)?;
        Ok(u64::from_le_bytes([b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]]))
    }
}

/// Build one shard from the shard hashes of its keys: try seeds until one places every
/// bucket.
fn build_shard(h0s: &[u64], index: u64) -> Result<ShardBuild, ShardError> {
    let keys = h0s.len() as u64;
    if keys == 0 {
        return Ok(ShardBuild { seed: 0, pilots: Vec::new(), remap: Vec::new() });
    }
    for attempt in 0..MAX_ATTEMPTS {
        let shard = Shard::new(keys, mix(index.wrapping_mul(MAX_ATTEMPTS).wrapping_add(attempt) ^ SLOT_MUL));
        // The in-shard hashes, grouped by bucket (counting sort): bucket b's are
        // hashes[start[b]..start[b + 1]].
        let buckets = shard.buckets() as usize;
        let mut start = vec![0u32; buckets + 1];
        for &h0 in h0s {
            start[shard.bucket(shard.hash(h0)) as usize + 1] += 1;
        }
        for b in 0..buckets {
            start[b + 1] += start[b];
        }
        let mut cursor = start[..buckets].to_vec();
        let mut hashes = vec![0u64; h0s.len()];
        for &h0 in h0s {
            let h = shard.hash(h0);
            let b = shard.bucket(h) as usize;
            hashes[cursor[b] as usize] = h;
            cursor[b] += 1;
        }
        drop(cursor);
        // `hash` is a bijection: equal hashes are equal keys, and land in one bucket.
        for b in 0..buckets {
            let bucket = &hashes[start[b] as usize..start[b + 1] as usize];
            for (i, h) in bucket.iter().enumerate() {
                if bucket[i + 1..].contains(h) {
                    return Err(ShardError::Duplicate);
                }
            }
        }
        if let Some(pilots) = place(&shard, &hashes, &start) {
            let remap = remap(&shard, &hashes, &start, &pilots);
            return Ok(ShardBuild { seed: shard.seed, pilots, remap });
        }
    }
    Err(ShardError::Failed)
}

/// Find a pilot for every bucket so that the shard's keys land on distinct table slots,
/// largest buckets first, displacing placed buckets when no pilot fits. `None` when a
/// bucket has no usable pilot or the displacements exceed their budget.
fn place(shard: &Shard, hashes: &[u64], start: &[u32]) -> Option<Vec<u8>> {
    let buckets = start.len() - 1;
    let table = shard.table;
    let size = |b: u32| start[b as usize + 1] - start[b as usize];
    let keys_of = |b: u32| &hashes[start[b as usize] as usize..start[b as usize + 1] as usize];
    let pilot_hashes: Vec<u64> = (0..=255u8).map(pilot_hash).collect();

    // Nonempty buckets by decreasing size (counting sort).
    let max_size = (0..buckets as u32).map(size).max().unwrap_or(0) as usize;
    let mut by_size = vec![0usize; max_size + 2];
    for b in 0..buckets as u32 {
        by_size[max_size - size(b) as usize + 1] += 1;
    }
    for s in 0..=max_size {
        by_size[s + 1] += by_size[s];
    }
    let mut order = vec![0u32; buckets];
    for b in 0..buckets as u32 {
        let at = &mut by_size[max_size - size(b) as usize];
        order[*at] = b;
        *at += 1;
    }
    order.truncate(buckets - (0..buckets as u32).filter(|&b| size(b) == 0).count());

    // The bucket holding each table slot, and the same as a bit set (1: taken) for the
    // fast first-fit search.
    let mut owner = vec![FREE; table as usize];
    let mut taken = vec![0u64; table.div_ceil(64) as usize];
    let mut pilots = vec![0u8; buckets];
    let mut evicted: BinaryHeap<(u32, u32)> = BinaryHeap::new();
    let mut recent = [FREE; RECENT];
    let mut placed = 0usize;
    let mut next = 0;
    let mut evictions = 0u64;
    let budget = 4 * shard.keys + 1000;
    let mut rng = shard.seed;
    let mut slots: Vec<u64> = Vec::with_capacity(max_size);
    loop {
        let b = match evicted.peek() {
            Some(&(s, b)) if next >= order.len() || s >= size(order[next]) => {
                evicted.pop();
                b
            }
            _ if next < order.len() => {
                next += 1;
                order[next - 1]
            }
            _ => break,
        };
        let bucket = keys_of(b);
        let mut found = None;
        'pilots: for (p, &hp) in pilot_hashes.iter().enumerate() {
            slots.clear();
            for &h in bucket {
                let slot = table_slot(h, hp, table);
                if taken[slot as usize / 64] >> (slot % 64) & 1 != 0 {
                    continue 'pilots;
                }
                slots.push(slot);
            }
            if distinct(&slots) {
                found = Some(p as u8);
                break;
            }
        }
        let pilot = match found {
            Some(p) => p,
            None => {
                evictions += 1;
                if evictions > budget {
                    return None;
                }
                rng = mix(rng);
                let first = rng as u8;
                let mut best: Option<(u64, u8)> = None;
                'candidates: for i in 0..=255u8 {
                    let p = first.wrapping_add(i);
                    let hp = pilot_hashes[p as usize];
                    slots.clear();
                    let mut cost = 0u64;
                    for &h in bucket {
                        let slot = table_slot(h, hp, table);
                        let o = owner[slot as usize];
                        if o != FREE {
                            if recent.contains(&o) {
                                continue 'candidates;
                            }
                            cost += (size(o) as u64).pow(2);
                            if best.is_some_and(|(c, _)| cost >= c) {
                                continue 'candidates;
                            }
                        }
                        slots.push(slot);
                    }
                    if distinct(&slots) {
                        best = Some((cost, p));
                    }
                }
                let (_, p) = best?;
                let hp = pilot_hashes[p as usize];
                for &h in bucket {
                    let o = owner[table_slot(h, hp, table) as usize];
                    if o != FREE {
                        let ohp = pilot_hashes[pilots[o as usize] as usize];
                        for &oh in keys_of(o) {
                            let slot = table_slot(oh, ohp, table);
                            owner[slot as usize] = FREE;
                            taken[slot as usize / 64] &= !(1 << (slot % 64));
                        }
                        evicted.push((size(o), o));
                    }
                }
                p
            }
        };
        let hp = pilot_hashes[pilot as usize];
        for &h in bucket {
            let slot = table_slot(h, hp, table);
            owner[slot as usize] = b;
            taken[slot as usize / 64] |= 1 << (slot % 64);
        }
        pilots[b as usize] = pilot;
        recent[placed % RECENT] = b;
        placed += 1;
    }
    Some(pilots)
}

/// Whether the few `slots` of one bucket are pairwise distinct.
fn distinct(slots: &[u64]) -> bool {
    slots.iter().enumerate().all(|(i, s)| !slots[i + 1..].contains(s))
}

/// The remap entries of a placed shard: for each table slot `>= keys` that holds a key,
/// the next free slot `< keys`; 0 for the empty ones.
fn remap(shard: &Shard, hashes: &[u64], start: &[u32], pilots: &[u8]) -> Vec<u32> {
    let mut taken = vec![false; shard.table as usize];
    for (b, &pilot) in pilots.iter().enumerate() {
        let hp = pilot_hash(pilot);
        for &h in &hashes[start[b] as usize..start[b + 1] as usize] {
            taken[table_slot(h, hp, shard.table) as usize] = true;
        }
    }
    let keys = shard.keys as usize;
    let mut free = (0..keys).filter(|&s| !taken[s]);
    taken[keys..].iter().map(|&t| if t { free.next().unwrap_or(0) as u32 } else { 0 }).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The splitmix64 generator: deterministic test keys.
    struct SplitMix(u64);

    impl SplitMix {
        fn next(&mut self) -> u64 {
            self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
            mix(self.0)
        }
    }

    /// `n` distinct random 55-bit keys: a bijection of `0..2^55` (xorshifts and odd
    /// multipliers mod 2^55) applied to `offset..offset + n`.
    fn keys55(n: u64, offset: u64) -> Vec<u64> {
        const MASK: u64 = (1 << 55) - 1;
        (offset..offset + n)
            .map(|i| {
                let x = i & MASK;
                let x = (x ^ (x >> 29)).wrapping_mul(0xbf58_476d_1ce4_e5b9) & MASK;
                let x = (x ^ (x >> 26)).wrapping_mul(0x94d0_49bb_1331_11eb) & MASK;
                x ^ (x >> 31)
            })
            .collect()
    }

    /// `n` distinct random full-width keys from splitmix64.
    fn random_keys(n: usize, seed: u64) -> Vec<u64> {
        let mut rng = SplitMix(seed);
        let mut keys: Vec<u64> = (0..n + n / 100 + 10).map(|_| rng.next()).collect();
        keys.sort_unstable();
        keys.dedup();
        keys.truncate(n);
        assert_eq!(keys.len(), n);
        keys
    }

    /// Panics unless `mphf` maps `keys` one-to-one onto `0..keys.len()`.
    fn assert_minimal_perfect(mphf: &Mphf, keys: &[u64]) {
        let n = keys.len() as u64;
        assert_eq!(mphf.len(), n);
        assert_eq!(mphf.is_empty(), n == 0);
        let mut seen = vec![false; keys.len()];
        for &key in keys {
            let slot = mphf.slot(key);
            assert!(slot < n, "key {key}: slot {slot} not below {n}");
            assert!(!seen[slot as usize], "key {key}: slot {slot} taken twice");
            seen[slot as usize] = true;
        }
    }

    fn serialize(mphf: &Mphf) -> Vec<u8> {
        let mut bytes = Vec::new();
        mphf.write_to(&mut bytes).unwrap();
        assert_eq!(bytes.len() as u64, mphf.byte_size());
        bytes
    }

    #[test]
    fn every_size_up_to_200_is_minimal_and_perfect() {
        for n in 0..=200 {
            let keys = random_keys(n, n as u64);
            assert_minimal_perfect(&Mphf::build(&keys).unwrap(), &keys);
        }
    }

    #[test]
    fn random_sizes_up_to_a_million_are_minimal_and_perfect() {
        let mut rng = SplitMix(7);
        let sizes: Vec<u64> =
            [1_000_000, 262_144, 262_145].into_iter().chain((0..4).map(|_| rng.next() % 400_000)).collect();
        for n in sizes {
            let keys = keys55(n, rng.next() >> 10);
            let mphf = Mphf::build(&keys).unwrap();
            assert_minimal_perfect(&mphf, &keys);
            let bits = mphf.byte_size() as f64 * 8.0 / n as f64;
            assert!(n < 10_000 || bits < 3.1, "{bits} bits per key for {n} keys");
        }
    }

    #[test]
    fn structured_keys_are_minimal_and_perfect() {
        let consecutive: Vec<u64> = (0..100_000).collect();
        let strided: Vec<u64> = (0..100_000).map(|i| i << 20).collect();
        let high: Vec<u64> = (0..100_000).map(|i| u64::MAX - i).collect();
        let edges = vec![0, 1, u64::MAX, (1 << 55) - 1, 1 << 63];
        for keys in [consecutive, strided, high, edges] {
            assert_minimal_perfect(&Mphf::build(&keys).unwrap(), &keys);
        }
    }

    #[test]
    fn many_shards_and_batches_are_minimal_and_perfect() {
        for (n, shard_target, batch) in [(50_000, 1_000, 7_000), (5_000, 1, 100), (3_000, 64, 1), (10, 1, 1)] {
            let keys = keys55(n, n);
            let mphf = Mphf::build_with(&keys, shard_target, batch).unwrap();
            assert_eq!(mphf.shards.len() as u64, n.div_ceil(shard_target));
            assert_minimal_perfect(&mphf, &keys);
            let (read, used) = Mphf::read_from(&serialize(&mphf)).unwrap();
            assert_eq!(used as u64, mphf.byte_size());
            assert_eq!(read, mphf);
        }
    }

    #[test]
    fn round_trip_gives_identical_slots() {
        let mut rng = SplitMix(11);
        for n in [0, 1, 2, 3, 100, 5_000, 300_000] {
            let keys = keys55(n, 1 << 40);
            let mphf = Mphf::build(&keys).unwrap();
            let mut bytes = serialize(&mphf);
            bytes.extend_from_slice(b"trailing");
            let (read, used) = Mphf::read_from(&bytes).unwrap();
            assert_eq!(used as u64, mphf.byte_size());
            assert_eq!(read, mphf);
            assert!(keys.iter().all(|&k| read.slot(k) == mphf.slot(k)));
            for _ in 0..1000 {
                let other = rng.next();
                assert_eq!(read.slot(other), mphf.slot(other));
            }
        }
    }

    #[test]
    fn non_keys_get_slots_in_range() {
        let mut rng = SplitMix(3);
        for n in [0, 1, 7, 20_000] {
            let mphf = Mphf::build(&keys55(n, 0)).unwrap();
            for _ in 0..10_000 {
                let slot = mphf.slot(rng.next());
                assert!(slot < n.max(1));
            }
        }
    }

    #[test]
    fn duplicate_keys_are_rejected() {
        let mut rng = SplitMix(5);
        assert!(Mphf::build(&[7, 7]).is_err());
        assert!(Mphf::build(&[0; 1000]).is_err());
        for n in [2, 3, 10, 1000, 100_000] {
            let mut keys = keys55(n, 99);
            let (i, j) = ((rng.next() % n) as usize, (rng.next() % n) as usize);
            keys[i] = keys[if i == j { (j + 1) % n as usize } else { j }];
            let err = Mphf::build(&keys).unwrap_err();
            assert!(err.contains("not distinct"), "{err}");
            assert!(Mphf::build_with(&keys, 100, 1000).is_err());
        }
    }

    #[test]
    fn every_truncation_is_an_error() {
        for n in [0, 1, 300, 2_000] {
            let keys = keys55(n, 5);
            let bytes = serialize(&Mphf::build_with(&keys, 500, 1000).unwrap());
            for len in 0..bytes.len() {
                assert!(Mphf::read_from(&bytes[..len]).is_err(), "n {n}: prefix of {len} bytes parsed");
            }
        }
    }

    #[test]
    fn corrupt_bytes_never_panic() {
        let mut rng = SplitMix(13);
        let keys = keys55(3_000, 17);
        let bytes = serialize(&Mphf::build_with(&keys, 700, 100_000).unwrap());
        for round in 0..20_000 {
            let mut bad = bytes.clone();
            for _ in 0..1 + round % 4 {
                let at = if round % 2 == 0 { rng.next() as usize % 80 } else { rng.next() as usize % bad.len() };
                bad[at] ^= 1 << (rng.next() % 8);
            }
            if let Ok((mphf, used)) = Mphf::read_from(&bad) {
                assert!(used <= bad.len());
                let n = mphf.len();
                for &key in keys.iter().step_by(97) {
                    assert!(mphf.slot(key) < n.max(1));
                }
            }
        }
        // Absurd counts must be refused before anything is allocated.
        let mut huge = bytes[..20].to_vec();
        huge[8..16].copy_from_slice(&u64::MAX.to_le_bytes());
        huge[16..20].copy_from_slice(&u32::MAX.to_le_bytes());
        assert!(Mphf::read_from(&huge).is_err());
    }

    /// CPU seconds used by this process so far (all threads; Linux, 100 ticks per
    /// second), or 0 where `/proc` is missing.
    fn process_cpu_seconds() -> f64 {
        let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
        let fields: Vec<&str> = stat.rsplit(')').next().unwrap_or("").split_whitespace().collect();
        let ticks = |i: usize| fields.get(i).and_then(|f| f.parse::<f64>().ok()).unwrap_or(0.0);
        (ticks(11) + ticks(12)) / 100.0
    }

    /// Nanoseconds the calling thread has run on a CPU (Linux), or 0.
    fn thread_cpu_nanos() -> f64 {
        let stat = std::fs::read_to_string("/proc/thread-self/schedstat").unwrap_or_default();
        stat.split_whitespace().next().and_then(|f| f.parse().ok()).unwrap_or(0.0)
    }

    /// Build and query timings (see the module documentation):
    /// `cargo test --release -- --ignored --nocapture measure`. Wall and CPU times: the
    /// machine is shared, so wall time includes time spent waiting for a core.
    #[test]
    #[ignore]
    fn measure() {
        use std::hint::black_box;
        use std::time::Instant;
        let sizes = std::env::var("MPHF_SIZES").unwrap_or_else(|_| "1000000,10000000,160000000".into());
        for n in sizes.split(',').map(|s| s.trim().parse::<u64>().unwrap()) {
            let keys = keys55(n, 12345);
            let (t, cpu) = (Instant::now(), process_cpu_seconds());
            let mphf = Mphf::build(&keys).unwrap();
            let (build, build_cpu) = (t.elapsed().as_secs_f64(), process_cpu_seconds() - cpu);
            let bits = mphf.byte_size() as f64 * 8.0 / n as f64;
            // Random keys of the set, in random order.
            let mut rng = SplitMix(n);
            let queries: Vec<u64> = (0..n.min(20_000_000)).map(|_| keys[(rng.next() % n) as usize]).collect();
            let per_query = |t: Instant, cpu: f64| {
                let count = queries.len() as f64;
                (t.elapsed().as_nanos() as f64 / count, (thread_cpu_nanos() - cpu) / count)
            };
            let (t, cpu) = (Instant::now(), thread_cpu_nanos());
            let mut sum = 0u64;
            for &k in &queries {
                sum = sum.wrapping_add(mphf.slot(black_box(k)));
            }
            let (independent, independent_cpu) = per_query(t, cpu);
            // Latency: each query depends on the previous answer.
            let (t, cpu) = (Instant::now(), thread_cpu_nanos());
            let mut slot = 0u64;
            for &k in &queries {
                slot = mphf.slot(k ^ (slot & 1));
            }
            let (dependent, dependent_cpu) = per_query(t, cpu);
            black_box((sum, slot));
            println!(
                "n {n}: {} threads, build {build:.2} s wall ({:.1} M keys/s), {build_cpu:.2} s CPU ({:.1} M keys/s \
                 per core), {bits:.3} bits/key; query wall/CPU ns: {independent:.1}/{independent_cpu:.1} independent, \
                 {dependent:.1}/{dependent_cpu:.1} dependent",
                rayon::current_num_threads(),
                n as f64 / build / 1e6,
                n as f64 / build_cpu / 1e6,
            );
        }
    }
}
