//! Finished phases on disk: one file per phase in the database directory, written when
//! the phase is solved, so that a finished phase is never computed again and a killed
//! solve resumes after its last finished phase group.
//!
//! The byte layout is normative and documented in `schema/FORMAT.md` ("phase value
//! files"): a 40-byte little-endian header (magic, version, board, phase, count,
//! checksum) followed by one 8-byte record per position in index order. Files are
//! written to a temporary name and renamed, so a crash never leaves a half-written file
//! under the real name. Every read is checked; a damaged file is an error
//! ([`Error::Corrupt`], [`Error::BadMagic`], [`Error::ChecksumMismatch`]), never a panic.

use std::fs::File;
use std::io::{BufReader, Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

use crate::error::{Error, FileKind, checksum_mismatch, io};
use crate::file::{WordHash, header_version, open_existing, write_streamed};
use crate::game::{Geometry, Phase};
use crate::record::{Packed, PhaseValues, Val};

/// The first 8 bytes of a phase value file.
pub const MAGIC: [u8; 8] = *b"OSTLEVAL";
/// The format version this code writes and reads.
pub const VERSION: u32 = 1;
/// Header size in bytes.
pub const HEADER_LEN: u64 = 40;
/// Header flag (bytes 16..24, once reserved and zero): every record's special move names
/// a node that exists; the special value of a node no predecessor reaches is already
/// dropped (the solver marks them as it goes), so packing need not look for them.
pub const SPECIALS_PRUNED: u64 = 1;

/// The file name of a phase inside the database directory, e.g. `phase-4-4.vals`.
pub fn phase_file(dir: &Path, phase: Phase) -> PathBuf {
    dir.join(format!("phase-{}-{}.vals", phase.player, phase.opponent))
}

/// The checksum of the records: a 64-bit multiply-rotate hash over the little-endian
/// record words (see `schema/FORMAT.md`).
pub fn checksum(records: &[u64]) -> u64 {
    let mut c = WordHash::new();
    c.words(records);
    c.finish()
}

fn header(geom: &Geometry, phase: Phase, flags: u64, count: u64, sum: u64) -> [u8; HEADER_LEN as usize] {
    let mut h = [0u8; HEADER_LEN as usize];
    h[0..16].copy_from_slice(&crate::file::prefix(&MAGIC, VERSION, geom, phase));
    h[16..24].copy_from_slice(&flags.to_le_bytes());
    h[24..32].copy_from_slice(&count.to_le_bytes());
    h[32..40].copy_from_slice(&sum.to_le_bytes());
    h
}

/// Write the values of one phase (atomically: temporary file, then rename), the header
/// with `flags` (0, or [`SPECIALS_PRUNED`] when that holds of the records).
pub fn save(dir: &Path, geom: &Geometry, values: &PhaseValues, flags: u64) -> Result<PathBuf, Error> {
    let records = values.raw();
    save_with(dir, geom, values.phase(), records.len() as u64, flags, |start, buf| {
        buf.copy_from_slice(&records[start as usize..start as usize + buf.len()]);
        Ok(())
    })
}

/// Make `count` records block by block: `fill(start, buf)` fills `buf` with the records
/// from index `start` on (at most [`SAVE_BLOCK`] at a time, in order), then `sink` gets
/// the block. One buffer serves every block.
pub fn make_blocks(
    count: u64,
    mut fill: impl FnMut(u64, &mut [u64]) -> Result<(), Error>,
    mut sink: impl FnMut(&[u64]) -> Result<(), Error>,
) -> Result<(), Error> {
    let mut buf = vec![0u64; SAVE_BLOCK.min(count as usize)];
    let mut start = 0u64;
    while start < count {
        let k = (count - start).min(SAVE_BLOCK as u64) as usize;
        fill(start, &mut buf[..k])?;
        sink(&buf[..k])?;
        start += k as u64;
    }
    Ok(())
}

/// Records per call of the `fill` of [`save_with`].
pub const SAVE_BLOCK: usize = 1 << 22;

/// Write a phase file of `count` records made as they are written: `fill(start, buf)`
/// fills `buf` with the records from index `start` on, block after block in order (at
/// most [`SAVE_BLOCK`] at a time), so the records never all exist in memory (the solver
/// makes them from its working state). Atomic: temporary file, then rename; the header
/// (with `flags`, such as [`SPECIALS_PRUNED`]) and its checksum are written last.
pub fn save_with(
    dir: &Path,
    geom: &Geometry,
    phase: Phase,
    count: u64,
    flags: u64,
    fill: impl FnMut(u64, &mut [u64]) -> Result<(), Error>,
) -> Result<PathBuf, Error> {
    std::fs::create_dir_all(dir).map_err(io(dir))?;
    let path = phase_file(dir, phase);
    write_streamed(&path, HEADER_LEN as usize, |out| {
        let mut hash = WordHash::new();
        let mut bytes = Vec::with_capacity(8 * SAVE_BLOCK.min(count as usize));
        make_blocks(count, fill, |block| {
            hash.words(block);
            bytes.clear();
            bytes.extend(block.iter().flat_map(|r| r.to_le_bytes()));
            // The disk writes while the next blocks are made: the sync at the end then
            // waits for the last block only (on (4,4)'s 1.3 GB, 5 s less of waiting).
            out.block(&bytes)
        })?;
        Ok(header(geom, phase, flags, count, hash.finish()).to_vec())
    })?;
    Ok(path)
}

/// What a header says.
struct Header {
    flags: u64,
    count: u64,
    sum: u64,
}

fn read_header(path: &Path, r: &mut impl Read, geom: &Geometry, phase: Phase, expect: u64) -> Result<Header, Error> {
    let corrupt = |reason: String| Error::Corrupt { path: path.to_path_buf(), reason };
    let mut h = [0u8; HEADER_LEN as usize];
    r.read_exact(&mut h).map_err(|_| corrupt("shorter than its 40-byte header".into()))?;
    // No checksum covers the header: a version above this build's is taken as newer.
    header_version(path, &h, &MAGIC, VERSION..=VERSION, FileKind::PhaseFile, |_| false)?;
    if (h[12] as u32, h[13] as u32) != (geom.side(), geom.start_pieces()) {
        return Err(corrupt(format!("made for a {}x{} board with {} pieces a side", h[12], h[12], h[13])));
    }
    if (h[14] as u32, h[15] as u32) != (phase.player, phase.opponent) {
        return Err(corrupt(format!("holds phase ({},{}), expected {phase}", h[14], h[15])));
    }
    let count = u64::from_le_bytes(h[24..32].try_into().expect("8 bytes"));
    if count != expect {
        return Err(corrupt(format!("holds {count} positions, the phase has {expect}")));
    }
    let flags = u64::from_le_bytes(h[16..24].try_into().expect("8 bytes"));
    Ok(Header { flags, count, sum: u64::from_le_bytes(h[32..40].try_into().expect("8 bytes")) })
}

/// The checksum over the `count` records of the phase file `path` does not match.
fn records_mismatch(path: &Path, count: u64) -> Error {
    checksum_mismatch(path, FileKind::PhaseFile, "records", None, Some((HEADER_LEN, HEADER_LEN + 8 * count)))
}

/// Load and check the values of one phase; `Ok(None)` when the file does not exist.
pub fn load(dir: &Path, geom: &Geometry, phase: Phase, expect: u64) -> Result<Option<PhaseValues>, Error> {
    let mut records = Vec::new();
    let found = for_each_block(dir, geom, phase, expect, |n, c| {
        records.reserve_exact(n as usize - records.len());
        records.extend_from_slice(c)
    })?;
    Ok(found.then(|| PhaseValues::from_raw(phase, records)))
}

/// Load and check only the base values of one phase (2 bytes per position instead of 8):
/// all a phase one piece larger reads of it. `Ok(None)` when the file does not exist.
pub fn load_base(dir: &Path, geom: &Geometry, phase: Phase, expect: u64) -> Result<Option<Vec<Val>>, Error> {
    let mut base = Vec::new();
    let found = for_each_block(dir, geom, phase, expect, |n, c| {
        base.reserve_exact(n as usize - base.len());
        base.extend(c.iter().map(|&r| Packed(r).base()))
    })?;
    Ok(found.then_some(base))
}

/// Read a phase file in blocks, checking header, length and checksum: `block` gets the
/// record count and the next records, in order. False when the file does not exist.
pub fn for_each_block(
    dir: &Path,
    geom: &Geometry,
    phase: Phase,
    expect: u64,
    mut block: impl FnMut(u64, &[u64]),
) -> Result<bool, Error> {
    let path = phase_file(dir, phase);
    let Some(f) = open_existing(&path)? else { return Ok(false) };
    let len = f.metadata().map_err(io(&path))?.len();
    let mut r = BufReader::with_capacity(1 << 20, f);
    let h = read_header(&path, &mut r, geom, phase, expect)?;
    if len != HEADER_LEN + 8 * h.count {
        return Err(Error::Corrupt {
            path,
            reason: format!("{len} bytes long, a file of {} positions has {}", h.count, HEADER_LEN + 8 * h.count),
        });
    }
    let mut sum = WordHash::new();
    let mut buf = vec![0u8; 8 << 16];
    let mut words = vec![0u64; 1 << 16];
    let mut left = h.count as usize;
    while left > 0 {
        let k = left.min(1 << 16);
        let bytes = &mut buf[..k * 8];
        r.read_exact(bytes).map_err(io(&path))?;
        for (w, b) in words[..k].iter_mut().zip(bytes.chunks_exact(8)) {
            *w = u64::from_le_bytes(b.try_into().expect("8 bytes"));
        }
        sum.words(&words[..k]);
        block(h.count, &words[..k]);
        left -= k;
    }
    if sum.finish() != h.sum {
        return Err(records_mismatch(&path, h.count));
    }
    Ok(true)
}

/// Sequential reading of a phase file in caller-sized pieces, checking header, length
/// and (at [`RecordReader::finish`]) the checksum.
pub struct RecordReader {
    path: PathBuf,
    r: BufReader<File>,
    flags: u64,
    count: u64,
    left: u64,
    want: u64,
    sum: WordHash,
    bytes: Vec<u8>,
}

impl RecordReader {
    /// Open the file of `phase`; `Ok(None)` when it does not exist.
    pub fn open(dir: &Path, geom: &Geometry, phase: Phase, expect: u64) -> Result<Option<RecordReader>, Error> {
        let path = phase_file(dir, phase);
        let Some(f) = open_existing(&path)? else { return Ok(None) };
        let len = f.metadata().map_err(io(&path))?.len();
        let mut r = BufReader::with_capacity(1 << 22, f);
        let h = read_header(&path, &mut r, geom, phase, expect)?;
        if len != HEADER_LEN + 8 * h.count {
            return Err(Error::Corrupt {
                path,
                reason: format!("{len} bytes long, expected {}", HEADER_LEN + 8 * h.count),
            });
        }
        Ok(Some(RecordReader {
            path,
            r,
            flags: h.flags,
            count: h.count,
            left: h.count,
            want: h.sum,
            sum: WordHash::new(),
            bytes: Vec::new(),
        }))
    }

    /// The number of records in the file.
    pub fn count(&self) -> u64 {
        self.count
    }

    /// True when the writer dropped every special value whose node does not exist
    /// ([`SPECIALS_PRUNED`]).
    pub fn specials_pruned(&self) -> bool {
        self.flags & SPECIALS_PRUNED != 0
    }

    /// Fill `buf` with the next records.
    pub fn read(&mut self, buf: &mut [u64]) -> Result<(), Error> {
        if buf.len() as u64 > self.left {
            return Err(Error::InvalidArgument(format!(
                "{}: asked for more records than it holds",
                self.path.display()
            )));
        }
        self.bytes.resize(buf.len() * 8, 0);
        self.r.read_exact(&mut self.bytes).map_err(io(&self.path))?;
        for (w, b) in buf.iter_mut().zip(self.bytes.chunks_exact(8)) {
            *w = u64::from_le_bytes(b.try_into().expect("8 bytes"));
        }
        self.sum.words(buf);
        self.left -= buf.len() as u64;
        Ok(())
    }

    /// Check that every record was read and the checksum matches.
    pub fn finish(self) -> Result<(), Error> {
        if self.left != 0 {
            return Err(Error::Corrupt { path: self.path, reason: format!("{} records were not read", self.left) });
        }
        if self.sum.finish() != self.want {
            return Err(records_mismatch(&self.path, self.count));
        }
        Ok(())
    }
}

/// Random access to one phase file without loading it: a query reads 8 bytes per
/// position. The header is checked when opening; the checksum only by [`load`].
pub struct PhaseFile {
    path: PathBuf,
    file: File,
    count: u64,
}

impl PhaseFile {
    /// Open the file of `phase`; `Ok(None)` when it does not exist.
    pub fn open(dir: &Path, geom: &Geometry, phase: Phase, expect: u64) -> Result<Option<PhaseFile>, Error> {
        let path = phase_file(dir, phase);
        let Some(mut file) = open_existing(&path)? else { return Ok(None) };
        let h = read_header(&path, &mut file, geom, phase, expect)?;
        let len = file.metadata().map_err(io(&path))?.len();
        if len != HEADER_LEN + 8 * h.count {
            return Err(Error::Corrupt {
                path,
                reason: format!("{len} bytes long, expected {}", HEADER_LEN + 8 * h.count),
            });
        }
        Ok(Some(PhaseFile { path, file, count: h.count }))
    }

    /// The packed record of position `idx` (see [`PhaseValues`]).
    pub fn record(&mut self, idx: u64) -> Result<u64, Error> {
        if idx >= self.count {
            return Err(Error::Corrupt { path: self.path.clone(), reason: format!("no position {idx}") });
        }
        let mut b = [0u8; 8];
        self.file.seek(SeekFrom::Start(HEADER_LEN + 8 * idx)).map_err(io(&self.path))?;
        self.file.read_exact(&mut b).map_err(io(&self.path))?;
        Ok(u64::from_le_bytes(b))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tmpdir(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("ostledb-ckpt-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        d
    }

    #[test]
    fn save_then_load_round_trips_and_damage_is_detected() {
        let g = Geometry::new(3, 3).unwrap();
        let ph = Phase::new(2, 2);
        let vals = PhaseValues::from_raw(ph, (0..1000u64).map(|i| i * 7 % 13).collect());
        let dir = tmpdir("roundtrip");
        let path = save(&dir, &g, &vals, 0).unwrap();
        let back = load(&dir, &g, ph, 1000).unwrap().unwrap();
        assert_eq!(back.raw(), vals.raw());
        let base = load_base(&dir, &g, ph, 1000).unwrap().unwrap();
        assert_eq!(base, vals.base_vals());
        let mut f = PhaseFile::open(&dir, &g, ph, 1000).unwrap().unwrap();
        assert_eq!(f.record(999).unwrap(), vals.raw()[999]);
        assert!(matches!(f.record(1000), Err(Error::Corrupt { .. })));
        // Wrong expectations are refused.
        assert!(matches!(load(&dir, &g, ph, 999), Err(Error::Corrupt { .. })));
        assert!(matches!(load(&dir, &Geometry::new(4, 3).unwrap(), ph, 1000), Err(Error::Corrupt { .. })));
        // One flipped bit in a record fails the checksum.
        let mut bytes = std::fs::read(&path).unwrap();
        bytes[HEADER_LEN as usize + 17] ^= 4;
        std::fs::write(&path, &bytes).unwrap();
        let records = |e: Result<_, Error>| matches!(e, Err(Error::ChecksumMismatch { kind: FileKind::PhaseFile, section, .. }) if section == "records");
        assert!(records(load(&dir, &g, ph, 1000).map(|_| ())));
        assert!(records(load_base(&dir, &g, ph, 1000).map(|_| ())));
        // Truncation and foreign files are refused.
        std::fs::write(&path, &bytes[..100]).unwrap();
        assert!(matches!(load(&dir, &g, ph, 1000), Err(Error::Corrupt { .. })));
        std::fs::write(&path, b"hello").unwrap();
        assert!(matches!(load(&dir, &g, ph, 1000), Err(Error::Corrupt { .. })));
        assert!(load(&dir, &g, Phase::new(3, 3), 5).unwrap().is_none());
        let _ = std::fs::remove_dir_all(&dir);
    }
}
