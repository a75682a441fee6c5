//! Key -> index lookup: the canonical code of a position (the published 55-bit code of
//! its canonical form) mapped to its dense index in its phase, by one of several
//! interchangeable backends.
//!
//! Every backend answers the same question with the same answer: the dense index of a
//! phase orders its canonical positions by ascending code, so index `i` is the position
//! of the `i`-th smallest key. They differ in what they store and how they search:
//!
//! | backend     | feature     | stores                                   | search                         |
//! |-------------|-------------|------------------------------------------|--------------------------------|
//! | `sorted`    | (always)    | sorted keys, in memory                   | binary search (the oracle)     |
//! | `levelwise` | `levelwise` | the same keys in Eytzinger order         | branch-free descent, prefetch  |
//! | `hash`      | `hash`      | minimal perfect hash + index array       | one hash, two array reads      |
//! | `mmap`      | `mmap`      | sorted keys read through memmap2         | binary search on mapped pages  |
//! | `sled`      | `sled`      | a sled tree code -> index                | sled's B+ tree                 |
//! | `rank`      | (always)    | nothing: the index is computed           | combinatorial rank             |
//!
//! `sorted`, `levelwise` and `mmap` read the same keys file; `hash` and `sled` have their
//! own files; `rank` has none. File layouts are in `schema/FORMAT.md`.

use std::path::Path;

use crate::error::Error;
use crate::game::Phase;
use crate::index::PhaseIndex;

#[cfg(feature = "hash")]
mod hash;
mod keyfile;
#[cfg(feature = "levelwise")]
mod levelwise;
#[cfg(feature = "mmap")]
mod mmap;
#[cfg(feature = "hash")]
pub mod mphf;
mod rank;
#[cfg(feature = "sled")]
mod sled;
mod sorted;
pub mod workload;

/// A key -> index map of one phase.
pub trait KeyIndex: Send + Sync {
    /// Which backend this is.
    fn backend(&self) -> Backend;
    /// The number of keys (positions of the phase).
    fn len(&self) -> u64;
    /// True when the phase has no positions.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// The dense index of canonical code `code`, or `None` when `code` is not the
    /// canonical code of a position of this phase. (`hash` cannot tell non-keys apart
    /// without the keys: it answers `None` only when its index array does; callers pass
    /// canonical codes of valid positions of the phase.)
    fn index_of(&self, code: u64) -> Result<Option<u64>, Error>;
    /// [`KeyIndex::index_of`] of every code of `codes`, into `out` (same length, else an
    /// [`Error::InvalidArgument`]). The answers are exactly those of `index_of`; the
    /// backends that wait on memory (`sorted`, `levelwise`, `mmap`, `hash`) run the
    /// lookups of a batch interleaved, with software prefetch, so that their cache
    /// misses overlap instead of following one another. The default loops.
    fn index_of_batch(&self, codes: &[u64], out: &mut [Option<u64>]) -> Result<(), Error> {
        check_batch(codes, out)?;
        for (c, o) in codes.iter().zip(out.iter_mut()) {
            *o = self.index_of(*c)?;
        }
        Ok(())
    }
    /// Bytes of key data this backend holds on disk for this phase (0 for `rank`).
    fn key_bytes(&self) -> u64;
    /// Build now what lookups would otherwise build on first use (the `rank` backend's
    /// bitmaps of symmetric player sets), so that no later lookup pays for it. The
    /// default has nothing to build.
    fn prepare(&self) {}
}

/// Lookups run interleaved by the batched implementations: enough independent misses
/// to fill the ~10-12 line fill buffers of a core, few enough that the per-lookup state
/// stays in registers and L1.
pub(crate) const INTERLEAVE: usize = 16;

/// What to do when a key index loaded into memory does not fit there.
pub(crate) const IN_MEMORY_ADVICE: &str = "query with `--backend rank` (it computes the index and needs no memory) or `--backend mmap` (it maps the sorted keys file)";

/// The length check every `index_of_batch` starts with.
pub(crate) fn check_batch(codes: &[u64], out: &[Option<u64>]) -> Result<(), Error> {
    if codes.len() != out.len() {
        return Err(Error::InvalidArgument(format!(
            "index_of_batch: {} codes but room for {} answers",
            codes.len(),
            out.len()
        )));
    }
    Ok(())
}

use crate::sys::prefetch;

/// Lower-bound searches of up to [`INTERLEAVE`] codes at once over `n` sorted keys read
/// through `key(i)`, in lockstep: every search halves the same range size at each step
/// (branch-free, as in `Mmap::index_of`), so the step's loads are independent and the
/// midpoints of the next step (`addr` gives their addresses) are prefetched while this
/// step's compares wait. `out[g]` = the index of `codes[g]` if present.
#[inline]
pub(crate) fn lockstep_search(
    n: u64,
    key: impl Fn(u64) -> u64,
    addr: impl Fn(u64) -> *const u8,
    codes: &[u64],
    out: &mut [Option<u64>],
) {
    debug_assert!(codes.len() <= INTERLEAVE && codes.len() == out.len());
    if n == 0 {
        out.iter_mut().for_each(|o| *o = None);
        return;
    }
    let g = codes.len();
    let mut base = [0u64; INTERLEAVE];
    let mut size = n;
    while size > 1 {
        let half = size / 2;
        let next = (size - half) / 2;
        for j in 0..g {
            let mid = base[j] + half;
            // The next step probes base + next, base being either `base` or `mid`.
            prefetch(addr(base[j] + next));
            prefetch(addr(mid + next));
            if key(mid) < codes[j] {
                base[j] = mid;
            }
        }
        size -= half;
    }
    for j in 0..g {
        let i = base[j] + (key(base[j]) < codes[j]) as u64;
        out[j] = (i < n && key(i) == codes[j]).then_some(i);
    }
}

/// The lookup backends.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, bincode::Encode, bincode::Decode)]
pub enum Backend {
    /// Binary search over sorted keys in memory.
    Sorted,
    /// Eytzinger-ordered keys, branch-free search.
    Levelwise,
    /// Minimal perfect hash plus index array.
    Hash,
    /// Sorted keys through memmap2.
    Mmap,
    /// A sled tree.
    Sled,
    /// The combinatorial rank: no keys.
    Rank,
}

impl Backend {
    /// Every backend, compiled in or not.
    pub const ALL: [Backend; 6] =
        [Backend::Sorted, Backend::Levelwise, Backend::Hash, Backend::Mmap, Backend::Sled, Backend::Rank];

    /// The name used on the command line and in the metadata.
    pub fn name(self) -> &'static str {
        match self {
            Backend::Sorted => "sorted",
            Backend::Levelwise => "levelwise",
            Backend::Hash => "hash",
            Backend::Mmap => "mmap",
            Backend::Sled => "sled",
            Backend::Rank => "rank",
        }
    }

    /// The cargo feature that builds it (`None`: always built).
    pub fn feature(self) -> Option<&'static str> {
        match self {
            Backend::Sorted | Backend::Rank => None,
            Backend::Levelwise => Some("levelwise"),
            Backend::Hash => Some("hash"),
            Backend::Mmap => Some("mmap"),
            Backend::Sled => Some("sled"),
        }
    }

    /// Whether this build of ostledb contains it.
    pub fn compiled(self) -> bool {
        match self {
            Backend::Sorted | Backend::Rank => true,
            Backend::Levelwise => cfg!(feature = "levelwise"),
            Backend::Hash => cfg!(feature = "hash"),
            Backend::Mmap => cfg!(feature = "mmap"),
            Backend::Sled => cfg!(feature = "sled"),
        }
    }

    /// The compiled-in backends.
    pub fn available() -> Vec<Backend> {
        Backend::ALL.into_iter().filter(|b| b.compiled()).collect()
    }

    /// Names, comma separated.
    pub fn list(backends: &[Backend]) -> String {
        backends.iter().map(|b| b.name()).collect::<Vec<_>>().join(", ")
    }

    /// Parse a name (any known backend, compiled in or not).
    pub fn parse(name: &str) -> Result<Backend, Error> {
        Backend::ALL.into_iter().find(|b| b.name() == name).ok_or_else(|| Error::UnknownBackend {
            name: name.to_string(),
            available: Backend::list(&Backend::available()),
        })
    }

    /// An error unless compiled in.
    pub fn require(self) -> Result<Backend, Error> {
        if self.compiled() {
            Ok(self)
        } else {
            Err(Error::BackendNotCompiled {
                backend: self.name().to_string(),
                feature: self.feature().unwrap_or_default().to_string(),
            })
        }
    }

    /// The backend whose files this one reads (`levelwise` and `mmap` read `sorted`'s).
    pub fn storage(self) -> Backend {
        match self {
            Backend::Levelwise | Backend::Mmap => Backend::Sorted,
            b => b,
        }
    }

    /// The files (relative to the database directory) holding this backend's data for
    /// `phase`; empty for `rank`. A directory name for `sled` (one tree per phase).
    pub fn files(self, phase: Phase) -> Vec<String> {
        match self.storage() {
            Backend::Sorted => vec![format!("keys-{}-{}.sorted", phase.player, phase.opponent)],
            Backend::Hash => vec![format!("keys-{}-{}.hash", phase.player, phase.opponent)],
            Backend::Sled => vec!["keys.sled".to_string()],
            _ => Vec::new(),
        }
    }
}

impl std::fmt::Display for Backend {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for Backend {
    type Err = Error;
    fn from_str(s: &str) -> Result<Backend, Error> {
        Backend::parse(s)
    }
}

/// Write the files `backend` needs for the phase of `index` into `dir`, atomically
/// (temporary name, fsync, rename). Nothing to do for `rank`; `levelwise` and `mmap`
/// write `sorted`'s keys file.
pub fn build(backend: Backend, dir: &Path, index: &PhaseIndex) -> Result<(), Error> {
    match backend.require()?.storage() {
        Backend::Sorted => keyfile::write(dir, index),
        #[cfg(feature = "hash")]
        Backend::Hash => hash::build(dir, index),
        #[cfg(feature = "sled")]
        Backend::Sled => sled::build(dir, index),
        Backend::Rank => Ok(()),
        b => {
            Err(Error::BackendNotCompiled { backend: b.name().into(), feature: b.feature().unwrap_or_default().into() })
        }
    }
}

/// Build a `sled` tree over only `entries` (canonical code, index) of the phase of
/// `index` in `dir` and open it: the `sled` baseline of `ostledb bench` on phases too
/// large to copy into sled whole. Codes outside the subset are not found.
#[cfg(feature = "sled")]
pub fn build_sled_subset(dir: &Path, index: &PhaseIndex, entries: &[(u64, u64)]) -> Result<Box<dyn KeyIndex>, Error> {
    Ok(Box::new(sled::build_subset(dir, index, entries)?))
}

/// Whether the files of `backend` for this phase are present in `dir` (always for `rank`).
pub fn present(backend: Backend, dir: &Path, phase: Phase) -> bool {
    backend.files(phase).iter().all(|f| dir.join(f).exists())
}

/// Open the lookup of the phase of `index` from `dir`.
pub fn open(backend: Backend, dir: &Path, index: &PhaseIndex) -> Result<Box<dyn KeyIndex>, Error> {
    Ok(match backend.require()? {
        Backend::Sorted => Box::new(sorted::Sorted::open(dir, index)?),
        #[cfg(feature = "levelwise")]
        Backend::Levelwise => Box::new(levelwise::Levelwise::open(dir, index)?),
        #[cfg(feature = "hash")]
        Backend::Hash => Box::new(hash::Hash::open(dir, index)?),
        #[cfg(feature = "mmap")]
        Backend::Mmap => Box::new(mmap::Mmap::open(dir, index)?),
        #[cfg(feature = "sled")]
        Backend::Sled => Box::new(sled::Sled::open(dir, index)?),
        Backend::Rank => Box::new(rank::Rank::new(index)),
        #[allow(unreachable_patterns)]
        b => {
            return Err(Error::BackendNotCompiled {
                backend: b.name().into(),
                feature: b.feature().unwrap_or_default().into(),
            });
        }
    })
}

/// Recompute the checksums of the files of `backend` for the phase of `index`; the
/// number of bytes checked. A damaged file is an error naming it ([`Error::Corrupt`],
/// [`Error::BadMagic`], [`Error::ChecksumMismatch`]).
pub fn check(backend: Backend, dir: &Path, index: &PhaseIndex) -> Result<u64, Error> {
    match backend.require()?.storage() {
        Backend::Sorted => keyfile::check(dir, index),
        #[cfg(feature = "hash")]
        Backend::Hash => hash::check(dir, index),
        #[cfg(feature = "sled")]
        Backend::Sled => sled::check(dir, index),
        Backend::Rank => Ok(0),
        b => {
            Err(Error::BackendNotCompiled { backend: b.name().into(), feature: b.feature().unwrap_or_default().into() })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::keyfile::testkit::*;
    use super::*;

    /// One test body, run once per compiled backend through the public dispatch.
    #[test]
    fn every_compiled_backend_agrees_with_sorted_through_build_open_and_check() {
        for index in small_phases().into_iter().filter(|i| i.geometry().side() == 3) {
            let dir = Scratch::new("dispatch");
            build(Backend::Sorted, dir.path(), &index).unwrap();
            let oracle = open(Backend::Sorted, dir.path(), &index).unwrap();
            let keys = keys_of(&index);
            let probes: Vec<u64> = keys.iter().copied().chain(non_keys(&index, &keys)).collect();
            for b in Backend::available().into_iter().filter(|&b| b != Backend::Hash) {
                build(b, dir.path(), &index).unwrap();
                assert!(present(b, dir.path(), index.phase()), "{b}");
                assert!(check(b, dir.path(), &index).unwrap() > 0 || b == Backend::Rank, "{b}");
                let k = open(b, dir.path(), &index).unwrap();
                assert_eq!((k.backend(), k.len()), (b, index.len()));
                for &c in &probes {
                    assert_eq!(k.index_of(c).unwrap(), oracle.index_of(c).unwrap(), "{b} {c:#x}");
                }
            }
        }
    }

    #[test]
    fn a_missing_key_file_is_an_io_error_for_every_file_backend() {
        let index = small_phases().swap_remove(0);
        let dir = Scratch::new("dispatch-missing");
        for b in Backend::available().into_iter().filter(|&b| !matches!(b, Backend::Hash | Backend::Rank)) {
            assert!(!present(b, dir.path(), index.phase()), "{b}");
            assert!(matches!(open(b, dir.path(), &index), Err(Error::Io { .. })), "{b}");
            assert!(matches!(check(b, dir.path(), &index), Err(Error::Io { .. })), "{b}");
        }
    }
}
