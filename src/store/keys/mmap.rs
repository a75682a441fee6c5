//! The `mmap` backend: binary search over the keys file mapped into memory with
//! memmap2. Opening checks the header and the file length only, so it takes no time
//! whatever the phase; `ostledb verify` (the keys file's `check`) reads the body and
//! recomputes its checksum.

use std::path::Path;

use crate::error::{Error, io};
use crate::index::PhaseIndex;

use super::keyfile::{self, HEADER_LEN};
use super::{Backend, INTERLEAVE, KeyIndex, check_batch, lockstep_search};

/// The keys file of one phase, mapped read-only.
#[derive(Debug)]
pub struct Mmap {
    map: memmap2::Mmap,
    n: u64,
}

impl Mmap {
    /// Map the keys file of the phase of `index` in `dir`, after checking its header and
    /// that its length is the one the header implies (a shorter file would fault on
    /// access). A file truncated *after* it was opened still faults (SIGBUS): the store
    /// never truncates files in place, it replaces them by rename.
    pub fn open(dir: &Path, index: &PhaseIndex) -> Result<Mmap, Error> {
        let path = keyfile::path(dir, index);
        let (file, header) = keyfile::open_checked(&path, index)?;
        // SAFETY: the mapping is read-only and the store never modifies a keys file in
        // place (it writes a new one and renames it over the old), so the bytes behind
        // the map do not change while it lives.
        let map = unsafe { memmap2::Mmap::map(&file) }.map_err(|e| match e.raw_os_error() {
            // ENOMEM: no room in the address space (`ulimit -v`) for the whole file.
            Some(12) => Error::OutOfMemory {
                what: format!("mapping the sorted keys of phase {}", index.phase()),
                bytes: keyfile::file_len(header.count),
                advice: "query with `--backend rank` (it computes the index and needs no memory)".into(),
            },
            _ => io(&path)(e),
        })?;
        if map.len() as u64 != keyfile::file_len(header.count) {
            return Err(crate::error::corrupt(&path, "the file changed size while it was opened"));
        }
        Ok(Mmap { map, n: header.count })
    }

    /// The key with index `i < n`.
    #[inline]
    fn key(&self, i: u64) -> u64 {
        let at = HEADER_LEN + 8 * i as usize;
        let b = &self.map[at..at + 8];
        u64::from_le_bytes([b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]])
    }
}

impl KeyIndex for Mmap {
    fn backend(&self) -> Backend {
        Backend::Mmap
    }

    fn len(&self) -> u64 {
        self.n
    }

    fn index_of(&self, code: u64) -> Result<Option<u64>, Error> {
        // Lower bound by halving: `base` is the last index known to hold a key < code,
        // or the start; the loop has no data-dependent branch.
        let (mut base, mut size) = (0u64, self.n);
        if size == 0 {
            return Ok(None);
        }
        while size > 1 {
            let half = size / 2;
            let mid = base + half;
            if self.key(mid) < code {
                base = mid;
            }
            size -= half;
        }
        let i = base + (self.key(base) < code) as u64;
        Ok((i < self.n && self.key(i) == code).then_some(i))
    }

    fn index_of_batch(&self, codes: &[u64], out: &mut [Option<u64>]) -> Result<(), Error> {
        check_batch(codes, out)?;
        let base = self.map.as_ptr();
        for (c, o) in codes.chunks(INTERLEAVE).zip(out.chunks_mut(INTERLEAVE)) {
            lockstep_search(self.n, |i| self.key(i), |i| base.wrapping_add(HEADER_LEN + 8 * i as usize), c, o);
        }
        Ok(())
    }

    fn key_bytes(&self) -> u64 {
        self.map.len() as u64
    }
}

#[cfg(test)]
mod tests {
    use super::super::keyfile::testkit::*;
    use super::*;

    #[test]
    fn every_key_maps_to_its_index_and_non_keys_to_none() {
        for index in small_phases() {
            let dir = Scratch::new("mmap");
            keyfile::write(dir.path(), &index).unwrap();
            let m = Mmap::open(dir.path(), &index).unwrap();
            let keys = keys_of(&index);
            assert_eq!(m.len(), index.len());
            assert_eq!(m.key_bytes(), 64 + 8 * index.len());
            for (i, &k) in keys.iter().enumerate() {
                assert_eq!(m.index_of(k).unwrap(), Some(i as u64));
            }
            for c in non_keys(&index, &keys) {
                assert_eq!(m.index_of(c).unwrap(), None, "{c:#x}");
            }
        }
    }

    #[test]
    fn damaged_headers_and_short_files_are_refused_and_damaged_bodies_never_panic() {
        let index = small_phases().swap_remove(0);
        let dir = Scratch::new("mmap-bad");
        keyfile::write(dir.path(), &index).unwrap();
        let p = keyfile::path(dir.path(), &index);
        let good = std::fs::read(&p).unwrap();
        let keys = keys_of(&index);
        for at in 0..good.len() {
            let mut bad = good.clone();
            bad[at] ^= 0x41;
            std::fs::write(&p, &bad).unwrap();
            match Mmap::open(dir.path(), &index) {
                Err(Error::BadMagic { .. }) => assert!(at < 8, "byte {at}"),
                Err(Error::ChecksumMismatch { section, .. }) => {
                    assert!((8..HEADER_LEN).contains(&at) && section == "header", "byte {at}")
                }
                Err(e) => panic!("byte {at}: {e:?}"),
                Ok(m) => {
                    // Opening does not read the body; lookups must still not panic.
                    assert!(at >= HEADER_LEN, "a damaged header byte {at} was accepted");
                    for &k in &keys {
                        let _ = m.index_of(k).unwrap();
                    }
                }
            }
        }
        for len in [0, 10, 63, 64, good.len() - 8] {
            std::fs::write(&p, &good[..len]).unwrap();
            assert!(matches!(Mmap::open(dir.path(), &index), Err(Error::Corrupt { .. })), "{len}");
        }
    }
}
