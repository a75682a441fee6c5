//! The `levelwise` backend: the keys of the keys file laid out in Eytzinger order (the
//! breadth-first order of a complete binary search tree, 1-based: the children of slot
//! `k` are `2k` and `2k + 1`), searched by a branch-free descent.
//!
//! # Slot and rank
//!
//! The dense index of a key is its rank in sorted order, which is the in-order position
//! of its slot in the tree. It is computed, not stored. Take the tree of `n` keys: its
//! levels `0..h` are full (`h = floor(log2 n)`) and level `h` holds `m = n - 2^h + 1`
//! nodes, leftmost first. In the *perfect* tree of height `h` (`2^(h+1) - 1` nodes), the
//! node `k` at depth `d = floor(log2 k)` has the 1-based in-order position
//! `p = (2 (k - 2^d) + 1) * 2^(h - d)`; the odd positions are the nodes of the last level
//! and the even ones the nodes above it. Of the positions `1..=p`, `floor(p / 2)` are
//! inner nodes (all present) and `ceil(p / 2)` last-level nodes, of which the first `m`
//! are present. So the 0-based rank of slot `k` is
//!
//! ```text
//! rank(k) = floor(p / 2) + min(ceil(p / 2), m) - 1
//! ```
//!
//! and, inversely, a 1-based rank `r <= 2m` sits at perfect position `p = r` and a
//! larger one at `p = 2 (r - m)`; the depth is `h - trailing_zeros(p)`. Both directions
//! are a handful of integer operations (O(1)), so no slot -> rank array is stored: the
//! backend holds exactly one `u64` per key (plus one unused slot and alignment padding).

use std::path::Path;

use crate::error::Error;
use crate::index::PhaseIndex;

use super::{Backend, INTERLEAVE, KeyIndex, check_batch, keyfile};
use crate::sys::prefetch;

/// Keys per 64-byte cache line.
const LINE: usize = 8;

/// The keys of one phase in Eytzinger order, in memory.
#[derive(Debug)]
pub struct Levelwise {
    /// `slots[pad + k]` holds the key of slot `k` (`1..=n`); `pad` aligns slot 0 to a
    /// cache line, so that the 8 slots `8k..8k+8` three levels below `k` share one line.
    slots: Vec<u64>,
    pad: usize,
    n: usize,
    file_bytes: u64,
}

impl Levelwise {
    /// Read and check the keys file of the phase of `index` in `dir` (header, length,
    /// order, body checksum) and lay the keys out in Eytzinger order.
    pub fn open(dir: &Path, index: &PhaseIndex) -> Result<Levelwise, Error> {
        let what = format!("the levelwise keys of phase {}", index.phase());
        let slots = crate::sys::vec_with_capacity(index.len() as usize + 1 + LINE, &what, super::IN_MEMORY_ADVICE)?;
        let mut b = Builder::with_slots(index.len() as usize, slots);
        let file_bytes = keyfile::read(dir, index, |chunk| b.extend(chunk))?;
        let mut l = b.finish();
        l.file_bytes = file_bytes;
        Ok(l)
    }

    /// The slots `0..=n` (slot 0 unused).
    #[inline]
    fn tree(&self) -> &[u64] {
        &self.slots[self.pad..]
    }

    /// The sorted rank of the key equal to `key`, if any.
    #[inline]
    fn search(&self, key: u64) -> Option<u64> {
        let t = self.tree();
        let n = self.n;
        let mut k = 1usize;
        while k <= n {
            prefetch(t.as_ptr().wrapping_add(k * LINE));
            k = 2 * k + (key > t[k]) as usize;
        }
        // The path bits of `k` after the leading 1: 1 = went right. The lower bound (the
        // first slot whose key is >= `key`) is where the path last went left.
        k >>= k.trailing_ones() + 1;
        if k == 0 || t[k] != key { None } else { Some(slot_to_rank(k as u64, n as u64)) }
    }

    /// [`Levelwise::search`] of up to [`INTERLEAVE`] keys, descending in lockstep: the
    /// first `h = floor(log2 n)` levels are full, so every descent takes those steps
    /// together and each step's loads (one per key, independent) overlap; the last,
    /// partial level is one more guarded step.
    #[inline]
    fn search_group(&self, keys: &[u64], out: &mut [Option<u64>]) {
        let t = self.tree();
        let n = self.n;
        let g = keys.len();
        if n == 0 {
            out.iter_mut().for_each(|o| *o = None);
            return;
        }
        let mut k = [1usize; INTERLEAVE];
        for _ in 0..n.ilog2() {
            for j in 0..g {
                prefetch(t.as_ptr().wrapping_add(k[j] * LINE));
                k[j] = 2 * k[j] + (keys[j] > t[k[j]]) as usize;
            }
        }
        for j in 0..g {
            let mut kk = k[j];
            if kk <= n {
                kk = 2 * kk + (keys[j] > t[kk]) as usize;
            }
            kk >>= kk.trailing_ones() + 1;
            out[j] = if kk == 0 || t[kk] != keys[j] { None } else { Some(slot_to_rank(kk as u64, n as u64)) };
        }
    }
}

impl KeyIndex for Levelwise {
    fn backend(&self) -> Backend {
        Backend::Levelwise
    }

    fn len(&self) -> u64 {
        self.n as u64
    }

    fn index_of(&self, code: u64) -> Result<Option<u64>, Error> {
        Ok(self.search(code))
    }

    fn index_of_batch(&self, codes: &[u64], out: &mut [Option<u64>]) -> Result<(), Error> {
        check_batch(codes, out)?;
        for (c, o) in codes.chunks(INTERLEAVE).zip(out.chunks_mut(INTERLEAVE)) {
            self.search_group(c, o);
        }
        Ok(())
    }

    fn key_bytes(&self) -> u64 {
        self.file_bytes
    }
}

/// Fills an Eytzinger tree from keys given in ascending order.
struct Builder {
    slots: Vec<u64>,
    pad: usize,
    n: usize,
    next: usize,
}

impl Builder {
    /// A builder for `n` keys laid out in `slots`, an empty vector with room for
    /// `n + 1 + LINE` of them.
    fn with_slots(n: usize, mut slots: Vec<u64>) -> Builder {
        slots.resize(n + 1 + LINE, 0);
        let misalign = slots.as_ptr() as usize % (LINE * 8);
        let pad = if misalign == 0 { 0 } else { (LINE * 8 - misalign) / 8 };
        Builder { slots, pad, n, next: 0 }
    }

    /// Place the next keys (ascending; never more than `n` in all).
    fn extend(&mut self, keys: &[u64]) {
        let (n, pad) = (self.n as u64, self.pad);
        for &key in keys {
            if self.next >= self.n {
                // More keys than announced: the caller's reader reports the damage.
                return;
            }
            self.slots[pad + rank_to_slot(self.next as u64, n) as usize] = key;
            self.next += 1;
        }
    }

    fn finish(self) -> Levelwise {
        Levelwise { slots: self.slots, pad: self.pad, n: self.n, file_bytes: 0 }
    }
}

/// The 0-based sorted rank of slot `k` (`1..=n`) of an Eytzinger tree of `n` keys.
#[inline]
fn slot_to_rank(k: u64, n: u64) -> u64 {
    let h = n.ilog2();
    let d = k.ilog2();
    let m = n - (1 << h) + 1;
    let p = (2 * (k - (1 << d)) + 1) << (h - d);
    p / 2 + p.div_ceil(2).min(m) - 1
}

/// The slot of the key with 0-based sorted rank `r` (`r < n`): the inverse of
/// [`slot_to_rank`].
#[inline]
fn rank_to_slot(r: u64, n: u64) -> u64 {
    let h = n.ilog2();
    let m = n - (1 << h) + 1;
    let r = r + 1;
    let p = if r <= 2 * m { r } else { 2 * (r - m) };
    let tz = p.trailing_zeros();
    (1 << (h - tz)) + (p >> (tz + 1))
}

#[cfg(test)]
mod tests {
    use super::super::keyfile::testkit::*;
    use super::*;

    fn from_sorted(keys: &[u64]) -> Levelwise {
        let mut b = Builder::with_slots(keys.len(), Vec::new());
        b.extend(keys);
        b.finish()
    }

    /// The Eytzinger order by the textbook recursion: in-order walk, filling slots.
    fn naive_slots(n: usize) -> Vec<usize> {
        fn walk(k: usize, n: usize, out: &mut Vec<usize>) {
            if k <= n {
                walk(2 * k, n, out);
                out.push(k);
                walk(2 * k + 1, n, out);
            }
        }
        let mut out = Vec::new();
        walk(1, n, &mut out);
        out
    }

    #[test]
    fn rank_arithmetic_matches_the_in_order_walk() {
        for n in 1..=1100usize {
            let slots = naive_slots(n);
            for (r, &k) in slots.iter().enumerate() {
                assert_eq!(rank_to_slot(r as u64, n as u64), k as u64, "n {n} rank {r}");
                assert_eq!(slot_to_rank(k as u64, n as u64), r as u64, "n {n} slot {k}");
            }
        }
        for n in [(1u64 << 31) - 1, 1 << 31, 1_500_000_000, (1 << 40) + 12345] {
            for r in [0, 1, n / 3, n / 2, n - 2, n - 1] {
                assert_eq!(slot_to_rank(rank_to_slot(r, n), n), r, "n {n} rank {r}");
            }
        }
    }

    #[test]
    fn the_layout_is_a_search_tree_and_aligned() {
        for n in [1usize, 2, 3, 7, 8, 9, 100, 1000] {
            let keys: Vec<u64> = (0..n as u64).map(|i| 10 * i).collect();
            let l = from_sorted(&keys);
            let t = l.tree();
            for k in 2..=n {
                if k % 2 == 0 {
                    assert!(t[k] < t[k / 2]);
                } else {
                    assert!(t[k] > t[k / 2]);
                }
            }
            assert_eq!(t.as_ptr() as usize % 64, 0);
        }
    }

    #[test]
    fn search_agrees_with_binary_search_for_every_small_size() {
        for n in 0..=1000u64 {
            // Odd keys; every even number in range and beyond is absent.
            let keys: Vec<u64> = (0..n).map(|i| 2 * i + 1).collect();
            let l = from_sorted(&keys);
            assert_eq!(l.len(), n);
            for probe in 0..=2 * n + 2 {
                let want = keys.binary_search(&probe).ok().map(|i| i as u64);
                assert_eq!(l.search(probe), want, "n {n} probe {probe}");
            }
            assert_eq!(l.search(u64::MAX), None);
            // The lockstep batch gives the same answers, for every batch length.
            let probes: Vec<u64> = (0..=2 * n + 2).rev().chain([u64::MAX]).collect();
            let mut out = vec![Some(7); probes.len()];
            l.index_of_batch(&probes, &mut out).unwrap();
            for (p, o) in probes.iter().zip(&out) {
                assert_eq!(*o, l.search(*p), "n {n} batched probe {p}");
            }
        }
    }

    #[test]
    fn search_agrees_with_binary_search_for_random_larger_sets() {
        let mut rng = XorShift(0x2545_f491_4f6c_dd1d);
        for n in [1023usize, 1024, 1025, 4095, 65_536, 100_003, 262_145] {
            let mut keys: Vec<u64> = (0..n).map(|_| rng.next() >> 9).collect();
            keys.sort_unstable();
            keys.dedup();
            let l = from_sorted(&keys);
            for (i, &k) in keys.iter().enumerate() {
                assert_eq!(l.search(k), Some(i as u64));
            }
            for _ in 0..20_000 {
                let probe = rng.next() >> 9;
                assert_eq!(l.search(probe), keys.binary_search(&probe).ok().map(|i| i as u64));
            }
            for probe in [0, keys[0].wrapping_sub(1), keys[0] + 1, keys[n / 2] + 1, u64::MAX] {
                assert_eq!(l.search(probe), keys.binary_search(&probe).ok().map(|i| i as u64));
            }
        }
    }

    #[test]
    fn every_key_of_the_small_games_maps_to_its_index_and_non_keys_to_none() {
        for index in small_phases() {
            let dir = Scratch::new("levelwise");
            keyfile::write(dir.path(), &index).unwrap();
            let l = Levelwise::open(dir.path(), &index).unwrap();
            let keys = keys_of(&index);
            assert_eq!(l.len(), index.len());
            assert_eq!(l.key_bytes(), 64 + 8 * index.len());
            for (i, &k) in keys.iter().enumerate() {
                assert_eq!(l.index_of(k).unwrap(), Some(i as u64));
            }
            for c in non_keys(&index, &keys) {
                assert_eq!(l.index_of(c).unwrap(), None, "{c:#x}");
            }
        }
    }

    #[test]
    fn open_refuses_a_damaged_body() {
        let index = small_phases().swap_remove(0);
        let dir = Scratch::new("levelwise-bad");
        keyfile::write(dir.path(), &index).unwrap();
        let p = keyfile::path(dir.path(), &index);
        let mut bytes = std::fs::read(&p).unwrap();
        bytes[70] ^= 1;
        std::fs::write(&p, &bytes).unwrap();
        let e = Levelwise::open(dir.path(), &index).unwrap_err();
        assert!(matches!(&e, Error::ChecksumMismatch { section, block: None, .. } if section == "keys"), "{e:?}");
    }
}
