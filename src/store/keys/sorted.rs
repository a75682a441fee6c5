//! The `sorted` backend: the keys file read into memory, binary search. The oracle every
//! other backend is tested against.

use std::path::Path;

use crate::error::Error;
use crate::index::PhaseIndex;

use super::{Backend, INTERLEAVE, KeyIndex, check_batch, keyfile, lockstep_search};

/// The keys of one phase in ascending order, in memory: key `i` has index `i`.
#[derive(Clone, Debug)]
pub struct Sorted {
    keys: Vec<u64>,
    file_bytes: u64,
}

impl Sorted {
    /// Read and check (header, length, order, body checksum) the keys file of the phase
    /// of `index` in `dir`.
    pub fn open(dir: &Path, index: &PhaseIndex) -> Result<Sorted, Error> {
        let what = format!("the sorted keys of phase {}", index.phase());
        let mut keys = crate::sys::vec_with_capacity(index.len() as usize, &what, super::IN_MEMORY_ADVICE)?;
        let file_bytes = keyfile::read(dir, index, |chunk| keys.extend_from_slice(chunk))?;
        Ok(Sorted { keys, file_bytes })
    }
}

impl KeyIndex for Sorted {
    fn backend(&self) -> Backend {
        Backend::Sorted
    }

    fn len(&self) -> u64 {
        self.keys.len() as u64
    }

    fn index_of(&self, code: u64) -> Result<Option<u64>, Error> {
        Ok(self.keys.binary_search(&code).ok().map(|i| i as u64))
    }

    fn index_of_batch(&self, codes: &[u64], out: &mut [Option<u64>]) -> Result<(), Error> {
        check_batch(codes, out)?;
        let keys = &self.keys;
        for (c, o) in codes.chunks(INTERLEAVE).zip(out.chunks_mut(INTERLEAVE)) {
            lockstep_search(
                keys.len() as u64,
                |i| keys[i as usize],
                |i| keys.as_ptr().wrapping_add(i as usize) as *const u8,
                c,
                o,
            );
        }
        Ok(())
    }

    fn key_bytes(&self) -> u64 {
        self.file_bytes
    }
}

#[cfg(test)]
mod tests {
    use super::super::keyfile::testkit::*;
    use super::*;

    #[test]
    fn every_key_maps_to_its_index_and_non_keys_to_none() {
        for index in small_phases() {
            let dir = Scratch::new("sorted");
            keyfile::write(dir.path(), &index).unwrap();
            let s = Sorted::open(dir.path(), &index).unwrap();
            assert_eq!(s.len(), index.len());
            assert_eq!(s.key_bytes(), 64 + 8 * index.len());
            for i in 0..index.len() {
                assert_eq!(s.index_of(index.position_at(i).code()).unwrap(), Some(i));
            }
            for c in non_keys(&index, &s.keys) {
                assert_eq!(s.index_of(c).unwrap(), None, "{c:#x}");
            }
        }
    }

    #[test]
    fn open_refuses_a_damaged_body() {
        let index = small_phases().swap_remove(0);
        let dir = Scratch::new("sorted-bad");
        keyfile::write(dir.path(), &index).unwrap();
        let p = keyfile::path(dir.path(), &index);
        let mut bytes = std::fs::read(&p).unwrap();
        let last = bytes.len() - 1;
        bytes[last] ^= 4;
        std::fs::write(&p, &bytes).unwrap();
        let e = Sorted::open(dir.path(), &index).unwrap_err();
        assert!(matches!(&e, Error::ChecksumMismatch { section, block: None, .. } if section == "keys"), "{e:?}");
    }
}
