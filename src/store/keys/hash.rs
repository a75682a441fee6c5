//! The `hash` backend: a minimal perfect hash over the phase's canonical codes plus an
//! index array slot -> dense index.
//!
//! Why this and not a hash table: a table must store the keys (8 bytes each, or a
//! fingerprint) to resolve collisions; a minimal perfect hash never collides, so it
//! stores about 3 bits per key ([`super::mphf`]) and the index array 4 bytes per key (a
//! u32: the largest phase has 1.5e9 positions). A lookup is two hash mixes, a pilot byte
//! and one index read. It cannot tell non-keys apart (they get some position), which is
//! harmless here: the database only looks up canonical codes of valid positions, whose
//! phase it knows.
//!
//! File `keys-A-B.hash` (little-endian): a 64-byte header (magic "OSTLEMPH", version u32
//! = 1, board side u8, start pieces u8, A u8, B u8, count u64 at 16, MPHF bytes M u64 at
//! 24, body checksum u64 at 32 = XXH3-64 of everything after the header, 16 reserved zero
//! bytes, header checksum u64 at 56 = XXH3-64 of bytes 0..56), then the MPHF's own
//! serialization (M bytes), then `count` u32 dense indexes, one per slot.

use std::io::Write;
use std::path::{Path, PathBuf};

use crate::error::{Error, FileKind, checksum_mismatch, corrupt, io};
use crate::file::{Hasher, check_version_and_sum, checksum, le_u64, open_regular, prefix, write_atomic};
use crate::index::PhaseIndex;
use crate::sys::vec_with_capacity;

use super::mphf::Mphf;
use super::{Backend, INTERLEAVE, KeyIndex, check_batch, keyfile};
use crate::sys::prefetch;

const MAGIC: [u8; 8] = *b"OSTLEMPH";
const VERSION: u32 = 1;
const HEADER_LEN: usize = 64;

fn path(dir: &Path, index: &PhaseIndex) -> PathBuf {
    dir.join(&Backend::Hash.files(index.phase())[0])
}

/// The minimal perfect hash and index array of one phase, in memory.
pub struct Hash {
    mphf: Mphf,
    slots: Vec<u32>,
    file_bytes: u64,
}

/// Build the hash file of the phase of `index` in `dir` (holds all keys in memory while
/// building: 8 bytes per position).
pub(super) fn build(dir: &Path, index: &PhaseIndex) -> Result<(), Error> {
    let n = index.len();
    if n > u32::MAX as u64 {
        return Err(Error::InvalidArgument(format!("phase {} is too large for u32 indexes", index.phase())));
    }
    let mut keys = Vec::with_capacity(n as usize);
    keyfile::enumerate(index, |chunk| -> Result<(), Error> {
        keys.extend_from_slice(chunk);
        Ok(())
    })?;
    let p = path(dir, index);
    let mphf = Mphf::build(&keys).map_err(|e| Error::InvalidArgument(format!("{}: {e}", p.display())))?;
    let mut slots = vec![0u32; n as usize];
    for (i, &k) in keys.iter().enumerate() {
        slots[mphf.slot(k) as usize] = i as u32;
    }
    drop(keys);
    let mut body = Vec::with_capacity(mphf.byte_size() as usize);
    mphf.write_to(&mut body).map_err(io(&p))?;
    let m = body.len() as u64;
    let mut hasher = Hasher::new();
    hasher.update(&body);
    let mut tail = Vec::with_capacity(slots.len() * 4);
    for s in &slots {
        tail.extend_from_slice(&s.to_le_bytes());
    }
    hasher.update(&tail);
    let mut h = [0u8; HEADER_LEN];
    h[0..16].copy_from_slice(&prefix(&MAGIC, VERSION, index.geometry(), index.phase()));
    h[16..24].copy_from_slice(&n.to_le_bytes());
    h[24..32].copy_from_slice(&m.to_le_bytes());
    h[32..40].copy_from_slice(&hasher.finish().to_le_bytes());
    let hs = checksum(&h[..56]);
    h[56..64].copy_from_slice(&hs.to_le_bytes());
    write_atomic(&p, |w| {
        w.write_all(&h)?;
        w.write_all(&body)?;
        w.write_all(&tail)
    })
}

/// Check a header; the key count and MPHF size it gives.
fn check_header(p: &Path, bytes: &[u8], len: u64, index: &PhaseIndex) -> Result<(u64, u64), Error> {
    if bytes.len() < HEADER_LEN {
        return Err(corrupt(p, format!("{} bytes, shorter than its {HEADER_LEN}-byte header", bytes.len())));
    }
    let h = &bytes[..HEADER_LEN];
    check_version_and_sum(p, h, &MAGIC, VERSION, FileKind::HashKeys)?;
    let g = index.geometry();
    let ph = index.phase();
    if (bytes[12] as u32, bytes[13] as u32, bytes[14] as u32, bytes[15] as u32)
        != (g.side(), g.start_pieces(), ph.player, ph.opponent)
    {
        return Err(corrupt(p, format!("made for another board or phase than {ph}")));
    }
    let n = le_u64(bytes, 16);
    let m = le_u64(bytes, 24);
    if n != index.len() {
        return Err(corrupt(p, format!("holds {n} keys, the phase has {}", index.len())));
    }
    let want = (HEADER_LEN as u64).checked_add(m).and_then(|x| x.checked_add(4 * n));
    if want != Some(len) {
        return Err(corrupt(p, format!("{len} bytes long, its header says otherwise")));
    }
    Ok((n, m))
}

/// Read and check the whole file: header, body checksum, MPHF, index array (every entry
/// a position of the phase, each exactly once). The file is streamed: in memory are only
/// the MPHF and the index array (4 bytes per key) and a bit per key for the check, not
/// the file besides (that made (4,4) peak at 1.5 GB).
fn load(dir: &Path, index: &PhaseIndex) -> Result<Hash, Error> {
    let p = path(dir, index);
    let n = index.len() as usize;
    let what = format!("the hash key index of phase {}", index.phase());
    let mut mphf_bytes: Vec<u8> = Vec::new();
    let mut slots: Vec<u32> = vec_with_capacity(n, &what, super::IN_MEMORY_ADVICE)?;
    // A bit per key (1/32 of the index array), zeroed lazily by the allocator so that
    // huge pages can back it: fewer TLB misses in the random reads below.
    let mut seen: Vec<u64> = vec![0u64; n.div_ceil(64)];
    crate::sys::advise_huge_pages(&seen);
    let mut permutation = true;
    let (len, _, m) = stream(&p, index, |part, bytes| {
        match part {
            Part::Mphf => {
                if mphf_bytes.capacity() == 0 {
                    mphf_bytes = vec_with_capacity(bytes.len(), &what, super::IN_MEMORY_ADVICE)?;
                }
                mphf_bytes.extend_from_slice(bytes);
            }
            Part::Slots => {
                // The bits are read at random: prefetch a group's words first, so that
                // their cache misses overlap (this check was 95% of the open time).
                for group in bytes.chunks(4 * PERMUTATION_AHEAD) {
                    let at = slots.len();
                    slots.extend(group.chunks_exact(4).map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]])));
                    for &s in &slots[at..] {
                        prefetch(seen.as_ptr().wrapping_add(s as usize / 64));
                    }
                    for &s in &slots[at..] {
                        let (w, bit) = (s as usize / 64, 1u64 << (s % 64));
                        match seen.get_mut(w) {
                            Some(word) if (s as usize) < n && *word & bit == 0 => *word |= bit,
                            _ => permutation = false,
                        }
                    }
                }
            }
        }
        Ok(())
    })?;
    drop(seen);
    let (mphf, used) = Mphf::read_from(&mphf_bytes).map_err(|e| corrupt(&p, format!("hash function: {e}")))?;
    if used as u64 != m || mphf.len() != n as u64 {
        return Err(corrupt(&p, "hash function size disagrees with the header"));
    }
    if !permutation {
        return Err(corrupt(&p, "index array is not a permutation of the phase's positions"));
    }
    Ok(Hash { mphf, slots, file_bytes: len })
}

/// Index entries whose bits the permutation check of [`load`] prefetches together.
const PERMUTATION_AHEAD: usize = 64;

/// The two parts of a hash file's body.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Part {
    /// The MPHF's serialization.
    Mphf,
    /// The index array; every piece of it holds whole u32 entries.
    Slots,
}

/// Open the hash file at `p`, check its header against `index`, hand its body to
/// `piece` in order, in pieces of at most 8 MiB, and check the body checksum: the file
/// length, the key count and the MPHF bytes (M).
fn stream(
    p: &Path,
    index: &PhaseIndex,
    mut piece: impl FnMut(Part, &[u8]) -> Result<(), Error>,
) -> Result<(u64, u64, u64), Error> {
    use std::io::Read;
    let mut f = open_regular(p).map_err(io(p))?;
    let len = f.metadata().map_err(io(p))?.len();
    let mut h = Vec::with_capacity(HEADER_LEN);
    (&mut f).take(HEADER_LEN as u64).read_to_end(&mut h).map_err(io(p))?;
    let (n, m) = check_header(p, &h, len, index)?;
    let mut hasher = Hasher::new();
    let mut buf = vec![0u8; 8 << 20];
    for (part, mut left) in [(Part::Mphf, m), (Part::Slots, 4 * n)] {
        while left > 0 {
            let k = left.min(buf.len() as u64) as usize;
            f.read_exact(&mut buf[..k]).map_err(io(p))?;
            hasher.update(&buf[..k]);
            piece(part, &buf[..k])?;
            left -= k as u64;
        }
    }
    if hasher.finish() != le_u64(&h, 32) {
        return Err(checksum_mismatch(p, FileKind::HashKeys, "body", None, Some((HEADER_LEN as u64, len))));
    }
    Ok((len, n, m))
}

impl Hash {
    /// Open (read and check) the hash file of the phase of `index` in `dir`.
    pub fn open(dir: &Path, index: &PhaseIndex) -> Result<Hash, Error> {
        load(dir, index)
    }
}

/// Recompute the checksums of the hash file (streaming, without building anything);
/// the bytes checked.
pub(super) fn check(dir: &Path, index: &PhaseIndex) -> Result<u64, Error> {
    let (len, _, _) = stream(&path(dir, index), index, |_, _| Ok(()))?;
    Ok(len)
}

impl KeyIndex for Hash {
    fn backend(&self) -> Backend {
        Backend::Hash
    }

    fn len(&self) -> u64 {
        self.slots.len() as u64
    }

    #[inline]
    fn index_of(&self, code: u64) -> Result<Option<u64>, Error> {
        if self.slots.is_empty() {
            return Ok(None);
        }
        Ok(self.slots.get(self.mphf.slot(code) as usize).map(|&i| i as u64))
    }

    /// Three passes over each group of [`INTERLEAVE`] codes: prefetch every pilot byte,
    /// then compute every slot (pilots now cached) and prefetch its index entry, then read
    /// the entries; the group's misses overlap in each pass.
    fn index_of_batch(&self, codes: &[u64], out: &mut [Option<u64>]) -> Result<(), Error> {
        check_batch(codes, out)?;
        if self.slots.is_empty() {
            out.iter_mut().for_each(|o| *o = None);
            return Ok(());
        }
        let mut slot = [0usize; INTERLEAVE];
        for (c, o) in codes.chunks(INTERLEAVE).zip(out.chunks_mut(INTERLEAVE)) {
            for &code in c {
                prefetch(self.mphf.pilot_addr(code));
            }
            for (s, &code) in slot.iter_mut().zip(c) {
                *s = self.mphf.slot(code) as usize;
                prefetch(self.slots.as_ptr().wrapping_add(*s));
            }
            for (o, s) in o.iter_mut().zip(&slot) {
                *o = self.slots.get(*s).map(|&i| i as u64);
            }
        }
        Ok(())
    }

    fn key_bytes(&self) -> u64 {
        self.file_bytes
    }
}
