//! The sorted keys file `keys-A-B.sorted`, read by the `sorted`, `levelwise` and `mmap`
//! backends: the canonical codes of one phase in ascending order, so that key `i` is the
//! code of the position with index `i`.
//!
//! ```text
//! offset  size     field
//! 0       8        magic: the ASCII bytes "OSTLEKEY"
//! 8       4        format version: u32 = 1
//! 12      1        board side n
//! 13      1        pieces per side at the start
//! 14      1        A: pieces of the side to move in this phase
//! 15      1        B: pieces of the other side
//! 16      8        count: u64, number of keys (positions of the phase)
//! 24      8        body checksum: XXH3-64 (seed 0) of the body bytes 64..64+8*count
//! 32      24       reserved, zero
//! 56      8        header checksum: XXH3-64 (seed 0) of the header bytes 0..56
//! 64      8*count  body: the keys, u64 each, strictly ascending
//! ```
//!
//! All integers are little-endian. The file is exactly `64 + 8 * count` bytes.

use std::fs::File;
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use rayon::prelude::*;

use crate::error::{Error, FileKind, checksum_mismatch, corrupt, io};
use crate::file::{Hasher, check_version_and_sum, checksum, le_u64, open_regular, prefix, write_atomic};
use crate::index::PhaseIndex;

use super::Backend;

/// The first eight bytes of every keys file.
pub(super) const MAGIC: [u8; 8] = *b"OSTLEKEY";
/// The format version this code reads and writes.
pub(super) const VERSION: u32 = 1;
/// Bytes before the first key; a multiple of 8, so mapped keys are 8-byte aligned.
pub(super) const HEADER_LEN: usize = 64;

/// Keys produced by one parallel task while writing.
const CHUNK_KEYS: u64 = 1 << 16;
/// Bytes read at once while streaming a body (a multiple of 8).
const READ_BUF: usize = 8 << 20;

/// The path of the keys file of the phase of `index` in `dir`.
pub(super) fn path(dir: &Path, index: &PhaseIndex) -> PathBuf {
    dir.join(&Backend::Sorted.files(index.phase())[0])
}

/// The header bytes of a keys file for `index` with body checksum `body`.
fn encode_header(index: &PhaseIndex, body: u64) -> [u8; HEADER_LEN] {
    let mut h = [0u8; HEADER_LEN];
    h[0..16].copy_from_slice(&prefix(&MAGIC, VERSION, index.geometry(), index.phase()));
    h[16..24].copy_from_slice(&index.len().to_le_bytes());
    h[24..32].copy_from_slice(&body.to_le_bytes());
    let sum = checksum(&h[..56]);
    h[56..64].copy_from_slice(&sum.to_le_bytes());
    h
}

/// What a validated header says.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Header {
    /// Number of keys.
    pub count: u64,
    /// XXH3-64 of the body.
    pub body_checksum: u64,
}

/// Check the header of the keys file `path` against what `index` expects.
pub(super) fn decode_header(path: &Path, h: &[u8; HEADER_LEN], index: &PhaseIndex) -> Result<Header, Error> {
    check_version_and_sum(path, h, &MAGIC, VERSION, FileKind::SortedKeys)?;
    if h[32..56].iter().any(|&b| b != 0) {
        return Err(corrupt(path, "reserved header bytes 32..56 are not zero"));
    }
    let g = index.geometry();
    let (side, start) = (h[12] as u32, h[13] as u32);
    if (side, start) != (g.side(), g.start_pieces()) {
        return Err(corrupt(
            path,
            format!(
                "the file is for a {side}x{side} board with {start} pieces a side, the database for {0}x{0} with {1}",
                g.side(),
                g.start_pieces()
            ),
        ));
    }
    let ph = index.phase();
    let (a, b) = (h[14] as u32, h[15] as u32);
    if (a, b) != (ph.player, ph.opponent) {
        return Err(corrupt(path, format!("wrong phase: the file holds phase ({a},{b}), its name says {ph}")));
    }
    let count = le_u64(h, 16);
    if count != index.len() {
        return Err(corrupt(path, format!("{count} keys, phase {ph} has {} positions", index.len())));
    }
    Ok(Header { count, body_checksum: le_u64(h, 24) })
}

/// The file length a keys file of `count` keys must have.
pub(super) fn file_len(count: u64) -> u64 {
    HEADER_LEN as u64 + 8 * count
}

/// Open the keys file, check its header and its length; the file is left positioned at
/// the first key.
pub(super) fn open_checked(path: &Path, index: &PhaseIndex) -> Result<(File, Header), Error> {
    let mut f = open_regular(path).map_err(io(path))?;
    let len = f.metadata().map_err(io(path))?.len();
    if len < HEADER_LEN as u64 {
        return Err(corrupt(path, format!("truncated: {len} bytes, shorter than the {HEADER_LEN}-byte header")));
    }
    let mut h = [0u8; HEADER_LEN];
    f.read_exact(&mut h).map_err(|e| truncated_or_io(path, e))?;
    let header = decode_header(path, &h, index)?;
    let want = file_len(header.count);
    if len != want {
        let what = if len < want { "truncated" } else { "trailing bytes" };
        return Err(corrupt(path, format!("{what}: {len} bytes, {} keys need {want}", header.count)));
    }
    Ok((f, header))
}

/// An unexpected end of file is damage; anything else an I/O error.
fn truncated_or_io(path: &Path, e: std::io::Error) -> Error {
    if e.kind() == std::io::ErrorKind::UnexpectedEof {
        corrupt(path, "truncated while reading")
    } else {
        Error::Io { path: path.to_path_buf(), source: e }
    }
}

/// Stream the keys of the phase of `index` from `dir`, in ascending order, to `each` (in
/// chunks); check the header, the length, the body checksum and that the keys strictly
/// ascend. The number of bytes read. `each` may have seen keys of a file that then
/// fails: callers drop what they built on error.
pub(super) fn read(dir: &Path, index: &PhaseIndex, mut each: impl FnMut(&[u64])) -> Result<u64, Error> {
    let path = path(dir, index);
    let (mut f, header) = open_checked(&path, index)?;
    let mut bytes = vec![0u8; READ_BUF];
    let mut keys: Vec<u64> = Vec::with_capacity(READ_BUF / 8);
    let mut hasher = Hasher::new();
    let mut left = 8 * header.count;
    let mut prev: Option<u64> = None;
    let mut disorder: Option<u64> = None;
    let mut at = 0u64;
    while left > 0 {
        let n = left.min(READ_BUF as u64) as usize;
        let buf = &mut bytes[..n];
        f.read_exact(buf).map_err(|e| truncated_or_io(&path, e))?;
        hasher.update(buf);
        keys.clear();
        keys.extend(buf.chunks_exact(8).map(|c| u64::from_le_bytes([c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]])));
        if disorder.is_none() {
            disorder = first_disorder(prev, &keys).map(|i| at + i as u64);
        }
        prev = keys.last().copied();
        at += keys.len() as u64;
        each(&keys);
        left -= n as u64;
    }
    let computed = hasher.finish();
    if computed != header.body_checksum {
        let bytes = Some((HEADER_LEN as u64, file_len(header.count)));
        return Err(checksum_mismatch(&path, FileKind::SortedKeys, "keys", None, bytes));
    }
    if let Some(i) = disorder {
        return Err(corrupt(&path, format!("key {i} is not greater than key {}", i - 1)));
    }
    Ok(file_len(header.count))
}

/// The first `i` with `keys[i] <= keys[i - 1]` (`prev` is the key before `keys[0]`).
fn first_disorder(prev: Option<u64>, keys: &[u64]) -> Option<usize> {
    if let (Some(p), Some(&k)) = (prev, keys.first())
        && k <= p
    {
        return Some(0);
    }
    keys.windows(2).position(|w| w[1] <= w[0]).map(|i| i + 1)
}

/// Verify the keys file of the phase of `index` in `dir` (header, length, order, body
/// checksum); the number of bytes checked.
pub(super) fn check(dir: &Path, index: &PhaseIndex) -> Result<u64, Error> {
    read(dir, index, |_| {})
}

/// Compute the keys of the phase of `index` in parallel and hand them to `each` in
/// ascending order, a chunk at a time; at most a few chunks per thread are held at once.
pub(super) fn enumerate<E>(index: &PhaseIndex, mut each: impl FnMut(&[u64]) -> Result<(), E>) -> Result<(), E> {
    let n = index.len();
    let chunks = n.div_ceil(CHUNK_KEYS);
    let batch = 4 * rayon::current_num_threads() as u64;
    let mut first = 0;
    while first < chunks {
        let last = (first + batch).min(chunks);
        let keys: Vec<Vec<u64>> = (first..last)
            .into_par_iter()
            .map(|c| {
                let (lo, hi) = (c * CHUNK_KEYS, ((c + 1) * CHUNK_KEYS).min(n));
                (lo..hi).map(|i| index.position_at(i).code()).collect()
            })
            .collect();
        for k in &keys {
            debug_assert!(first_disorder(None, k).is_none(), "keys out of order");
            each(k)?;
        }
        first = last;
    }
    Ok(())
}

/// Write the keys file of the phase of `index` into `dir`, atomically.
pub(super) fn write(dir: &Path, index: &PhaseIndex) -> Result<(), Error> {
    write_atomic(&path(dir, index), |w| {
        // A placeholder header; the real one, with the body checksum, is written last.
        w.write_all(&[0u8; HEADER_LEN])?;
        let mut hasher = Hasher::new();
        let mut bytes = Vec::with_capacity(CHUNK_KEYS as usize * 8);
        enumerate(index, |keys| {
            bytes.clear();
            for k in keys {
                bytes.extend_from_slice(&k.to_le_bytes());
            }
            hasher.update(&bytes);
            w.write_all(&bytes)
        })?;
        w.seek(SeekFrom::Start(0))?;
        w.write_all(&encode_header(index, hasher.finish()))
    })
}

#[cfg(test)]
pub(super) mod testkit {
    //! What the tests of every backend share: small games, scratch directories, probes.

    use std::path::{Path, PathBuf};
    use std::sync::atomic::{AtomicU64, Ordering};

    use crate::game::Geometry;
    use crate::game::symmetry::canonical_code;
    use crate::index::{GameIndex, PhaseIndex};

    /// Every phase of the small test games: 3x3 and 4x4 boards with three pieces a side.
    pub fn small_phases() -> Vec<PhaseIndex> {
        let mut out = Vec::new();
        for (n, start) in [(3, 3), (4, 3)] {
            let g = Geometry::new(n, start).expect("test geometry");
            let game = GameIndex::build(&g, 2 * start).expect("test game");
            out.extend(game.phases().iter().cloned());
        }
        out
    }

    /// The sorted keys of a phase, computed directly.
    pub fn keys_of(index: &PhaseIndex) -> Vec<u64> {
        (0..index.len()).map(|i| index.position_at(i).code()).collect()
    }

    /// A fresh, empty scratch directory, removed when dropped.
    pub struct Scratch(pub PathBuf);

    impl Scratch {
        /// A new directory named after `what`.
        pub fn new(what: &str) -> Scratch {
            static NEXT: AtomicU64 = AtomicU64::new(0);
            let n = NEXT.fetch_add(1, Ordering::Relaxed);
            let dir = std::env::temp_dir().join(format!("ostledb-keys-{what}-{}-{n}", std::process::id()));
            let _ = std::fs::remove_dir_all(&dir);
            std::fs::create_dir_all(&dir).expect("scratch dir");
            Scratch(dir)
        }

        /// Its path.
        pub fn path(&self) -> &Path {
            &self.0
        }
    }

    impl Drop for Scratch {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    /// xorshift64: a fixed pseudo-random sequence.
    pub struct XorShift(pub u64);

    impl XorShift {
        /// The next value.
        pub fn next(&mut self) -> u64 {
            let mut x = self.0;
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            self.0 = x;
            x
        }
    }

    /// Codes that are not keys of `index` (random codes below 2^55 that are not keys,
    /// non-canonical images of keys, neighbours of keys, codes at and above 2^55), and the
    /// number of each kind, so that a test can see that every kind is present.
    pub fn non_keys(index: &PhaseIndex, keys: &[u64]) -> Vec<u64> {
        let g = index.geometry();
        let is_key = |c: u64| keys.binary_search(&c).is_ok();
        let mut rng = XorShift(0x9e37_79b9_7f4a_7c15 ^ index.len());
        let mut out = Vec::new();
        for _ in 0..2000 {
            let c = rng.next() >> 9;
            if !is_key(c) {
                out.push(c);
            }
        }
        let mut images = 0;
        for i in 0..keys.len().min(4000) {
            let i = (i as u64).wrapping_mul(2_654_435_761) % keys.len() as u64;
            let p = index.position_at(i);
            for k in 1..8 {
                let img = p.transformed(g, k);
                if img.code() != p.code() {
                    assert_eq!(canonical_code(g, &img), p.code());
                    assert!(!is_key(img.code()), "a non-canonical image is a key");
                    out.push(img.code());
                    images += 1;
                    break;
                }
            }
        }
        assert!(keys.len() < 8 || images > 0, "no non-canonical images found");
        for &k in keys.iter().step_by(keys.len() / 500 + 1) {
            for c in [k.wrapping_sub(1), k + 1, k ^ 1 << 40, k | 1 << 55] {
                if !is_key(c) {
                    out.push(c);
                }
            }
        }
        out.extend([0, 1 << 55, (1 << 55) - 1, u64::MAX, u64::MAX - 1]);
        out.retain(|&c| !is_key(c));
        out
    }
}

#[cfg(test)]
mod tests {
    use super::testkit::*;
    use super::*;
    use crate::file::le_u32;
    use crate::game::{Geometry, Phase};
    use crate::index::GameIndex;

    fn tiny() -> PhaseIndex {
        let g = Geometry::new(3, 3).unwrap();
        GameIndex::build(&g, 6).unwrap().phase(Phase::new(2, 2)).unwrap().clone()
    }

    fn read_all(dir: &Path, index: &PhaseIndex) -> Result<Vec<u64>, Error> {
        let mut v = Vec::new();
        read(dir, index, |k| v.extend_from_slice(k))?;
        Ok(v)
    }

    fn reason(e: Error) -> String {
        match e {
            Error::Corrupt { reason, .. } => reason,
            e => panic!("expected a corruption error, got {e:?}"),
        }
    }

    #[test]
    fn written_files_hold_the_ascending_keys_and_pass_check() {
        for index in small_phases() {
            let dir = Scratch::new("write");
            write(dir.path(), &index).unwrap();
            let want = keys_of(&index);
            assert_eq!(read_all(dir.path(), &index).unwrap(), want);
            let len = check(dir.path(), &index).unwrap();
            assert_eq!(len, 64 + 8 * index.len());
            assert_eq!(std::fs::metadata(path(dir.path(), &index)).unwrap().len(), len);
            assert!(!crate::file::temp_name(&path(dir.path(), &index)).exists());
        }
    }

    #[test]
    fn header_bytes_are_as_documented() {
        let index = tiny();
        let dir = Scratch::new("header");
        write(dir.path(), &index).unwrap();
        let bytes = std::fs::read(path(dir.path(), &index)).unwrap();
        assert_eq!(&bytes[0..8], b"OSTLEKEY");
        assert_eq!(le_u32(&bytes, 8), 1);
        assert_eq!(&bytes[12..16], &[3, 3, 2, 2]);
        assert_eq!(le_u64(&bytes, 16), index.len());
        assert_eq!(le_u64(&bytes, 24), checksum(&bytes[64..]));
        assert!(bytes[32..56].iter().all(|&b| b == 0));
        assert_eq!(le_u64(&bytes, 56), checksum(&bytes[..56]));
        assert_eq!(le_u64(&bytes, 64), index.position_at(0).code());
    }

    #[test]
    fn the_magic_is_ascii_and_unlike_the_value_file() {
        assert!(MAGIC.is_ascii());
        assert_ne!(&MAGIC, b"OSTLEVAL");
    }

    #[test]
    fn every_flipped_byte_fails_check_as_bad_magic_or_a_checksum_mismatch() {
        let index = tiny();
        let dir = Scratch::new("flip");
        write(dir.path(), &index).unwrap();
        let p = path(dir.path(), &index);
        let good = std::fs::read(&p).unwrap();
        assert!(good.len() > 1000, "the test file should have a body");
        for at in 0..good.len() {
            for flip in [0x01u8, 0x80, 0xff] {
                let mut bad = good.clone();
                bad[at] ^= flip;
                std::fs::write(&p, &bad).unwrap();
                // The magic is the magic; every other byte is under the header or the
                // body checksum (a flipped version field too: putting 1 back makes the
                // header checksum hold, so it is damage, not a newer format).
                match check(dir.path(), &index).expect_err("a flipped byte passed check") {
                    Error::BadMagic { kind: FileKind::SortedKeys, .. } => assert!(at < 8, "byte {at}"),
                    Error::ChecksumMismatch { kind: FileKind::SortedKeys, section, block: None, .. } => {
                        assert_eq!(section, if at < HEADER_LEN { "header" } else { "keys" }, "byte {at}")
                    }
                    e => panic!("byte {at}: {e:?}"),
                }
            }
        }
    }

    #[test]
    fn truncated_and_extended_files_fail() {
        let index = tiny();
        let dir = Scratch::new("trunc");
        write(dir.path(), &index).unwrap();
        let p = path(dir.path(), &index);
        let good = std::fs::read(&p).unwrap();
        for len in [0, 1, 8, 63, 64, 65, good.len() - 8, good.len() - 1] {
            std::fs::write(&p, &good[..len]).unwrap();
            let r = reason(check(dir.path(), &index).unwrap_err());
            assert!(r.contains("truncated"), "{len}: {r}");
        }
        let mut long = good.clone();
        long.extend_from_slice(&[0; 8]);
        std::fs::write(&p, &long).unwrap();
        assert!(reason(check(dir.path(), &index).unwrap_err()).contains("trailing"));
    }

    #[test]
    fn bad_magic_and_versions_are_named() {
        let index = tiny();
        let dir = Scratch::new("magic");
        write(dir.path(), &index).unwrap();
        let p = path(dir.path(), &index);
        let good = std::fs::read(&p).unwrap();
        let mut bad = good.clone();
        bad[0..8].copy_from_slice(b"OSTLEVAL");
        std::fs::write(&p, &bad).unwrap();
        let e = check(dir.path(), &index).unwrap_err();
        assert!(matches!(e, Error::BadMagic { kind: FileKind::SortedKeys, .. }), "{e:?}");
        assert!(e.to_string().contains("not an ostledb sorted keys file"), "{e}");
        // The version alone changed is a damaged header (putting 1 back makes its
        // checksum hold); with the header checksum recomputed, it is a newer format.
        let mut v2 = good.clone();
        v2[8..12].copy_from_slice(&2u32.to_le_bytes());
        std::fs::write(&p, &v2).unwrap();
        let e = check(dir.path(), &index).unwrap_err();
        assert!(matches!(&e, Error::ChecksumMismatch { section, .. } if section == "header"), "{e:?}");
        let sum = checksum(&v2[..56]);
        v2[56..64].copy_from_slice(&sum.to_le_bytes());
        std::fs::write(&p, &v2).unwrap();
        let e = check(dir.path(), &index).unwrap_err();
        assert!(matches!(e, Error::NewerFormat { kind: FileKind::SortedKeys, found: 2, max: 1, .. }), "{e:?}");
        assert!(e.to_string().contains("format v2; this build reads up to v1"), "{e}");
    }

    #[test]
    fn a_file_of_another_phase_is_refused() {
        let g = Geometry::new(3, 3).unwrap();
        let game = GameIndex::build(&g, 6).unwrap();
        let (a, b) = (game.phase(Phase::new(3, 2)).unwrap(), game.phase(Phase::new(2, 3)).unwrap());
        let dir = Scratch::new("phase");
        write(dir.path(), a).unwrap();
        std::fs::rename(path(dir.path(), a), path(dir.path(), b)).unwrap();
        let r = reason(check(dir.path(), b).unwrap_err());
        assert!(r.contains("wrong phase"), "{r}");
    }

    #[test]
    fn unordered_keys_with_good_checksums_are_refused() {
        let index = tiny();
        let dir = Scratch::new("order");
        write(dir.path(), &index).unwrap();
        let p = path(dir.path(), &index);
        let mut bytes = std::fs::read(&p).unwrap();
        // Swap keys 3 and 4, then fix both checksums.
        let (k3, k4) = (bytes[88..96].to_vec(), bytes[96..104].to_vec());
        bytes[88..96].copy_from_slice(&k4);
        bytes[96..104].copy_from_slice(&k3);
        let body = checksum(&bytes[64..]);
        bytes[24..32].copy_from_slice(&body.to_le_bytes());
        let head = checksum(&bytes[..56]);
        bytes[56..64].copy_from_slice(&head.to_le_bytes());
        std::fs::write(&p, &bytes).unwrap();
        let r = reason(check(dir.path(), &index).unwrap_err());
        assert!(r.contains("key 4 is not greater than key 3"), "{r}");
    }

    #[test]
    fn a_missing_file_is_an_io_error() {
        let index = tiny();
        let dir = Scratch::new("missing");
        assert!(matches!(check(dir.path(), &index), Err(Error::Io { .. })));
    }
}
