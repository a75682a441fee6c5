//! Checkpoints inside a phase group: the whole working state of a solve between two
//! levels, so that a killed solve of a long group ((5,5) runs for most of an hour)
//! resumes at its last checkpoint instead of at the start of the group.
//!
//! One file per group in the database directory, `group-A-B[-C-D].ckpt`, written like
//! the phase value files (temporary name, fsync, rename) and removed once the group's
//! phase value files are written. The byte layout is in `schema/FORMAT.md` ("group
//! checkpoint file"). Everything read back is checked (header fields, lengths, ranges,
//! a checksum over the body); a damaged file is an error ([`Error::Corrupt`],
//! [`Error::BadMagic`], [`Error::ChecksumMismatch`]).

use std::fs::File;
use std::io::{BufReader, BufWriter, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};

use crate::error::{Error, FileKind, checksum_mismatch, io};
use crate::file::{WordHash, fault_point, header_version, open_existing, open_regular, rename_durably};
use crate::game::{Geometry, Phase};

/// The first 8 bytes of a group checkpoint file.
pub const MAGIC: [u8; 8] = *b"OSTLEGRP";
/// The format version this code writes; it reads this one and the one before.
pub const VERSION: u32 = 4;
/// The oldest format version this code reads: v3, the same file without the decisions
/// done (the progress of a group resumed from one starts from 0, as it did).
pub const OLDEST: u32 = 3;
/// Header size in bytes.
pub const HEADER_LEN: usize = 64;

/// What one chunk of positions still has to propagate from the start of its group, as
/// 16-bit offsets into the chunk: 2 bytes per entry, written once, never merged.
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct ChunkQueue {
    /// Decisions made at init, `offset << 1 | class`, in increasing distance.
    pub decided: Box<[u16]>,
    /// The distances of `decided`: `(distance, end)`, entries `previous end..end` have
    /// that distance (increasing distances, the last end is `decided.len()`).
    pub runs: Box<[(u32, u32)]>,
    /// Positions with a win through a capture at distance above 1, in increasing distance
    /// (held in the state's outside field).
    pub ext: Box<[u16]>,
    /// How many entries of `decided` and of `ext` are done.
    pub next: (u32, u32),
}

/// A group's working state read back from its checkpoint.
#[derive(Debug)]
pub(crate) struct Resumed {
    /// The next level to process: every level below it is done.
    pub level: u32,
    /// The largest distance in the chunk queues.
    pub last: u32,
    /// One working state per position of the group.
    pub states: Vec<u32>,
    /// One queue per chunk of positions.
    pub queues: Vec<ChunkQueue>,
    /// Pending events by distance (levels below `level` are empty).
    pub buckets: Vec<Vec<u32>>,
    /// How many events the group's event log holds at the end of each level below
    /// `level`.
    pub log_ends: Vec<u64>,
    /// How far the group's progress had counted (its decisions of the generic values
    /// propagated); 0 from a v3 file.
    pub advanced: u64,
}

/// The checkpoint file of the group made of `phases`, e.g. `group-5-4-4-5.ckpt`.
pub fn group_file(dir: &Path, phases: &[Phase]) -> PathBuf {
    let name: Vec<String> = phases.iter().map(|p| format!("{}-{}", p.player, p.opponent)).collect();
    dir.join(format!("group-{}.ckpt", name.join("-")))
}

/// Writes bytes and hashes them word by word.
struct Out<W: Write> {
    w: W,
    hash: WordHash,
    path: PathBuf,
}

impl<W: Write> Out<W> {
    fn bytes(&mut self, b: &[u8]) -> Result<(), Error> {
        self.w.write_all(b).map_err(io(&self.path))?;
        self.hash.bytes(b);
        Ok(())
    }

    fn u64s(&mut self, it: impl Iterator<Item = u64>) -> Result<(), Error> {
        let mut buf = Vec::with_capacity(8 << 16);
        for v in it {
            buf.extend_from_slice(&v.to_le_bytes());
            if buf.len() == buf.capacity() {
                self.bytes(&buf)?;
                buf.clear();
            }
        }
        self.bytes(&buf)
    }

    fn u32s(&mut self, v: &[u32]) -> Result<(), Error> {
        for c in v.chunks(1 << 16) {
            let b: Vec<u8> = c.iter().flat_map(|x| x.to_le_bytes()).collect();
            self.bytes(&b)?;
        }
        Ok(())
    }

    fn u16s(&mut self, v: &[u16]) -> Result<(), Error> {
        let b: Vec<u8> = v.iter().flat_map(|x| x.to_le_bytes()).collect();
        self.bytes(&b)
    }

    /// Pad to a whole word; the checksum.
    fn finish(mut self) -> Result<(W, u64), Error> {
        let n = self.hash.pad_len();
        self.bytes(&[0u8; 8][..n])?;
        Ok((self.w, self.hash.finish()))
    }
}

/// Where a group stands in a header: the next level, the last distance of the queues and
/// the progress counted.
#[derive(Clone, Copy)]
struct At {
    level: u32,
    last: u32,
    advanced: u64,
}

#[allow(clippy::too_many_arguments)]
fn header(geom: &Geometry, phases: &[Phase], chunk: u32, n: u64, version: u32, at: At, sum: u64) -> [u8; 64] {
    let mut h = [0u8; HEADER_LEN];
    h[0..8].copy_from_slice(&MAGIC);
    h[8..12].copy_from_slice(&version.to_le_bytes());
    h[12] = geom.side() as u8;
    h[13] = geom.start_pieces() as u8;
    h[14] = phases.len() as u8;
    for (k, p) in phases.iter().enumerate().take(2) {
        h[16 + 2 * k] = p.player as u8;
        h[17 + 2 * k] = p.opponent as u8;
    }
    h[20..24].copy_from_slice(&chunk.to_le_bytes());
    h[24..32].copy_from_slice(&n.to_le_bytes());
    h[32..36].copy_from_slice(&at.level.to_le_bytes());
    h[36..40].copy_from_slice(&at.last.to_le_bytes());
    h[40..48].copy_from_slice(&at.advanced.to_le_bytes());
    h[56..64].copy_from_slice(&sum.to_le_bytes());
    h
}

/// The checksum covers the header up to the checksum field, then the body.
fn header_words(h: &[u8; HEADER_LEN], hash: &mut WordHash) {
    for w in h[..56].chunks_exact(8) {
        hash.word(u64::from_le_bytes(w.try_into().expect("8 bytes")));
    }
}

/// u32 words per chunk in the queue table: lengths of `decided` and `ext`, the two
/// `next` counts, the number of runs.
const TABLE: usize = 5;

/// Write the working state of a group between two levels (atomically). `level` is the
/// next level to process, `advanced` how far its progress has counted. Called with no
/// other thread touching `states`.
#[allow(clippy::too_many_arguments)]
pub(crate) fn save(
    dir: &Path,
    geom: &Geometry,
    phases: &[Phase],
    chunk: usize,
    level: u32,
    last: u32,
    states: &[AtomicU32],
    queues: &[ChunkQueue],
    buckets: &[Vec<u32>],
    log_ends: &[u64],
    advanced: u64,
) -> Result<PathBuf, Error> {
    let at = At { level, last, advanced };
    std::fs::create_dir_all(dir).map_err(io(dir))?;
    let path = group_file(dir, phases);
    let tmp = path.with_extension("ckpt.tmp");
    let n = states.len() as u64;
    fault_point("create").map_err(io(&tmp))?;
    let f = File::create(&tmp).map_err(io(&tmp))?;
    let mut w = BufWriter::with_capacity(1 << 20, f);
    let mut hash = WordHash::new();
    header_words(&header(geom, phases, chunk as u32, n, VERSION, at, 0), &mut hash);
    w.write_all(&[0u8; HEADER_LEN]).map_err(io(&tmp))?;
    let mut out = Out { w, hash, path: tmp.clone() };
    for c in states.chunks(1 << 16) {
        let v: Vec<u32> = c.iter().map(|s| s.load(Ordering::Relaxed)).collect();
        out.u32s(&v)?;
    }
    let mut table = Vec::with_capacity(queues.len() * TABLE);
    for q in queues {
        table.extend([q.decided.len() as u32, q.ext.len() as u32, q.next.0, q.next.1, q.runs.len() as u32]);
    }
    out.u32s(&table)?;
    for q in queues {
        out.u16s(&q.decided)?;
        out.u16s(&q.ext)?;
        let runs: Vec<u32> = q.runs.iter().flat_map(|&(d, end)| [d, end]).collect();
        out.u32s(&runs)?;
    }
    out.u64s(std::iter::once(buckets.len() as u64).chain(buckets.iter().map(|b| b.len() as u64)))?;
    for b in buckets {
        out.u32s(b)?;
    }
    out.u64s(std::iter::once(log_ends.len() as u64).chain(log_ends.iter().copied()))?;
    let (w, sum) = out.finish()?;
    let mut f = w.into_inner().map_err(|e| Error::Io { path: tmp.clone(), source: e.into_error() })?;
    f.seek(SeekFrom::Start(0)).map_err(io(&tmp))?;
    f.write_all(&header(geom, phases, chunk as u32, n, VERSION, at, sum)).map_err(io(&tmp))?;
    f.sync_all().map_err(io(&tmp))?;
    drop(f);
    rename_durably(&tmp, &path)?;
    Ok(path)
}

/// Reads bytes and hashes them word by word (every read here is a whole number of words
/// except the u16/u32 runs, which are joined the same way as when written).
struct In<R: Read> {
    r: R,
    hash: WordHash,
}

impl<R: Read> In<R> {
    fn bytes(&mut self, buf: &mut [u8]) -> std::io::Result<()> {
        self.r.read_exact(buf)?;
        self.hash.bytes(buf);
        Ok(())
    }

    fn u64s(&mut self, out: &mut [u64]) -> std::io::Result<()> {
        let mut buf = vec![0u8; 8 << 16];
        for c in out.chunks_mut(1 << 16) {
            let b = &mut buf[..c.len() * 8];
            self.bytes(b)?;
            for (v, x) in c.iter_mut().zip(b.chunks_exact(8)) {
                *v = u64::from_le_bytes(x.try_into().expect("8 bytes"));
            }
        }
        Ok(())
    }

    fn u32s(&mut self, len: usize) -> std::io::Result<Vec<u32>> {
        let mut out = vec![0u32; len];
        let mut buf = vec![0u8; 4 << 16];
        for c in out.chunks_mut(1 << 16) {
            let b = &mut buf[..c.len() * 4];
            self.bytes(b)?;
            for (v, x) in c.iter_mut().zip(b.chunks_exact(4)) {
                *v = u32::from_le_bytes(x.try_into().expect("4 bytes"));
            }
        }
        Ok(out)
    }

    fn u16s(&mut self, len: usize) -> std::io::Result<Box<[u16]>> {
        let mut b = vec![0u8; len * 2];
        self.bytes(&mut b)?;
        Ok(b.chunks_exact(2).map(|x| u16::from_le_bytes([x[0], x[1]])).collect())
    }
}

/// Read the checkpoint of the group made of `phases` (with `n` positions in chunks of
/// `chunk`); `Ok(None)` when there is none.
pub(crate) fn load(
    dir: &Path,
    geom: &Geometry,
    phases: &[Phase],
    chunk: usize,
    n: u64,
) -> Result<Option<Resumed>, Error> {
    let path = group_file(dir, phases);
    let Some(f) = open_existing(&path)? else { return Ok(None) };
    let corrupt = |reason: String| Error::Corrupt { path: path.clone(), reason };
    let short = |_| corrupt("truncated: shorter than its header and lengths say".into());
    let mut r = BufReader::with_capacity(1 << 20, f);
    let mut h = [0u8; HEADER_LEN];
    r.read_exact(&mut h).map_err(|_| corrupt("shorter than its 64-byte header".into()))?;
    let version =
        header_version(&path, &h, &MAGIC, OLDEST..=VERSION, FileKind::Checkpoint, |h| whole_file_holds(&path, h))?;
    let u32_at = |k: usize| u32::from_le_bytes(h[k..k + 4].try_into().expect("4 bytes"));
    let u64_at = |k: usize| u64::from_le_bytes(h[k..k + 8].try_into().expect("8 bytes"));
    let (level, last) = (u32_at(32), u32_at(36));
    let advanced = if version >= 4 { u64_at(40) } else { 0 };
    let expect = header(geom, phases, chunk as u32, n, version, At { level, last, advanced }, u64_at(56));
    if h != expect {
        return Err(corrupt(format!(
            "made for another board, group, chunk size or position count (expected {} positions of {})",
            n,
            phases.iter().map(|p| p.to_string()).collect::<Vec<_>>().join("+")
        )));
    }
    let mut hash = WordHash::new();
    header_words(&h, &mut hash);
    let mut inp = In { r, hash };
    let mut states = vec![0u32; n as usize];
    crate::sys::advise_huge_pages(&states);
    for c in states.chunks_mut(1 << 16) {
        c.copy_from_slice(&inp.u32s(c.len()).map_err(short)?);
    }
    let chunks = (n as usize).div_ceil(chunk);
    let table = inp.u32s(chunks * TABLE).map_err(short)?;
    let mut queues = Vec::with_capacity(chunks);
    for (c, t) in table.chunks_exact(TABLE).enumerate() {
        let len = chunk.min(n as usize - c * chunk);
        let (nd, ne, nr) = (t[0] as usize, t[1] as usize, t[4] as usize);
        if nd > 2 * len || ne > len || t[2] as usize > nd || t[3] as usize > ne || nr > nd {
            return Err(corrupt(format!("chunk {c}: queue lengths out of range")));
        }
        let decided = inp.u16s(nd).map_err(short)?;
        let ext = inp.u16s(ne).map_err(short)?;
        let runs: Box<[(u32, u32)]> = inp.u32s(2 * nr).map_err(short)?.chunks_exact(2).map(|r| (r[0], r[1])).collect();
        if decided.iter().any(|&e| (e >> 1) as usize >= len) || ext.iter().any(|&k| k as usize >= len) {
            return Err(corrupt(format!("chunk {c}: a queued position is outside the chunk")));
        }
        let ordered = runs.windows(2).all(|w| w[0].0 < w[1].0 && w[0].1 < w[1].1);
        if !ordered || runs.last().map_or(0, |r| r.1 as usize) != nd || runs.first().is_some_and(|r| r.1 == 0) {
            return Err(corrupt(format!("chunk {c}: the distances of its queue are out of order")));
        }
        queues.push(ChunkQueue { decided, runs, ext, next: (t[2], t[3]) });
    }
    let mut levels = [0u64];
    inp.u64s(&mut levels).map_err(short)?;
    if levels[0] > 1 << 16 {
        return Err(corrupt(format!("{} event levels", levels[0])));
    }
    let mut lens = vec![0u64; levels[0] as usize];
    inp.u64s(&mut lens).map_err(short)?;
    let mut buckets = Vec::with_capacity(lens.len());
    for &len in &lens {
        if len > 2 * n {
            return Err(corrupt(format!("an event level of {len} events")));
        }
        let b = inp.u32s(len as usize).map_err(short)?;
        if b.iter().any(|&e| (e >> 1) as u64 >= n) {
            return Err(corrupt("an event names a position outside the group".into()));
        }
        buckets.push(b);
    }
    let mut count = [0u64];
    inp.u64s(&mut count).map_err(short)?;
    if count[0] != level as u64 {
        return Err(corrupt(format!("an event log of {} levels at level {level}", count[0])));
    }
    let mut log_ends = vec![0u64; level as usize];
    inp.u64s(&mut log_ends).map_err(short)?;
    if log_ends.windows(2).any(|w| w[0] > w[1]) {
        return Err(corrupt("the event log's level ends are out of order".into()));
    }
    if inp.hash.pad_len() > 0 {
        let mut pad = vec![0u8; inp.hash.pad_len()];
        inp.bytes(&mut pad).map_err(short)?;
    }
    let mut extra = [0u8; 1];
    if inp.r.read(&mut extra).map_err(io(&path))? != 0 {
        return Err(corrupt("longer than its lengths say".into()));
    }
    if inp.hash.finish() != u64_at(56) {
        return Err(checksum_mismatch(&path, FileKind::Checkpoint, "header and body", None, None));
    }
    Ok(Some(Resumed { level, last, states, queues, buckets, log_ends, advanced }))
}

/// True when the checkpoint at `path`, with the header `h` in place of its own, passes
/// its checksum (the header's first 56 bytes, then the rest of the file, as words): how
/// a version field this build does not read is told from a damaged one. Reads the
/// whole file, only on that error path.
fn whole_file_holds(path: &Path, h: &[u8]) -> bool {
    let Ok(f) = open_regular(path) else { return false };
    let mut r = BufReader::with_capacity(1 << 20, f);
    if r.seek(SeekFrom::Start(HEADER_LEN as u64)).is_err() {
        return false;
    }
    let mut hash = WordHash::new();
    hash.bytes(&h[..56]);
    let mut buf = vec![0u8; 1 << 20];
    loop {
        match r.read(&mut buf) {
            Ok(0) => break,
            Ok(k) => hash.bytes(&buf[..k]),
            Err(_) => return false,
        }
    }
    // A checkpoint is padded to whole words.
    hash.pad_len() == 0 && hash.finish() == u64::from_le_bytes(h[56..64].try_into().expect("8 bytes"))
}

/// Remove the checkpoint of a group (after its phase value files are written).
pub(crate) fn remove(dir: &Path, phases: &[Phase]) -> Result<(), Error> {
    let path = group_file(dir, phases);
    match std::fs::remove_file(&path) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(Error::Io { path, source: e }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> (Vec<AtomicU32>, Vec<ChunkQueue>, Vec<Vec<u32>>, Vec<u64>) {
        let states: Vec<AtomicU32> = (0..21u32).map(|i| AtomicU32::new(i.wrapping_mul(0x0123_4567))).collect();
        let queues = vec![
            ChunkQueue {
                decided: vec![1, 4, 5].into(),
                runs: vec![(2, 1), (5, 3)].into(),
                ext: vec![3].into(),
                next: (1, 0),
            },
            ChunkQueue { decided: vec![].into(), runs: vec![].into(), ext: vec![0, 7, 2].into(), next: (0, 3) },
            ChunkQueue { decided: vec![9].into(), runs: vec![(3, 1)].into(), ext: vec![].into(), next: (0, 0) },
        ];
        let buckets = vec![vec![], vec![7, 40, 3], vec![1]];
        (states, queues, buckets, vec![0, 4])
    }

    #[test]
    fn round_trip_and_every_damage_is_refused() {
        let g = Geometry::new(3, 3).unwrap();
        let phases = [Phase::new(3, 2), Phase::new(2, 3)];
        let dir = std::env::temp_dir().join(format!("ostledb-grp-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let (states, queues, buckets, ends) = sample();
        let path = save(&dir, &g, &phases, 8, 2, 9, &states, &queues, &buckets, &ends, 1234).unwrap();
        let back = load(&dir, &g, &phases, 8, 21).unwrap().unwrap();
        assert_eq!((back.level, back.last), (2, 9));
        assert_eq!(back.states, states.iter().map(|s| s.load(Ordering::Relaxed)).collect::<Vec<_>>());
        assert_eq!(back.queues, queues);
        assert_eq!(back.buckets, buckets);
        assert_eq!(back.log_ends, ends);
        assert_eq!(back.advanced, 1234);
        // Other expectations are refused, not misread.
        assert!(matches!(load(&dir, &g, &phases, 16, 21), Err(Error::Corrupt { .. })));
        assert!(matches!(load(&dir, &g, &phases, 8, 20), Err(Error::Corrupt { .. })));
        assert!(load(&dir, &g, &phases[..1], 8, 21).unwrap().is_none());
        // Any flipped byte, any truncation and any extra byte is an error.
        let bytes = std::fs::read(&path).unwrap();
        for k in 0..bytes.len() {
            let mut b = bytes.clone();
            b[k] ^= 0x10;
            std::fs::write(&path, &b).unwrap();
            let e = load(&dir, &g, &phases, 8, 21);
            assert!(
                matches!(e, Err(Error::Corrupt { .. } | Error::BadMagic { .. } | Error::ChecksumMismatch { .. })),
                "byte {k}: {e:?}"
            );
        }
        for len in [0, 10, 64, 100, bytes.len() - 1] {
            std::fs::write(&path, &bytes[..len]).unwrap();
            assert!(matches!(load(&dir, &g, &phases, 8, 21), Err(Error::Corrupt { .. })), "length {len}");
        }
        let mut longer = bytes.clone();
        longer.push(0);
        std::fs::write(&path, &longer).unwrap();
        assert!(matches!(load(&dir, &g, &phases, 8, 21), Err(Error::Corrupt { .. })));
        remove(&dir, &phases).unwrap();
        assert!(load(&dir, &g, &phases, 8, 21).unwrap().is_none());
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// The format errors of a checkpoint, each told apart: a wrong magic, a version above
    /// this build's (its checksum recomputed: a newer file, not damage; left as it was: a
    /// damaged version field), an intact file of the previous format (an earlier build's),
    /// a flipped byte of the body.
    #[test]
    fn bad_magic_newer_format_and_checksum_mismatch_are_told_apart() {
        let g = Geometry::new(3, 3).unwrap();
        let phases = [Phase::new(3, 2), Phase::new(2, 3)];
        let dir = std::env::temp_dir().join(format!("ostledb-grp-format-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let (states, queues, buckets, ends) = sample();
        let path = save(&dir, &g, &phases, 8, 2, 9, &states, &queues, &buckets, &ends, 1234).unwrap();
        let good = std::fs::read(&path).unwrap();
        let read = |bytes: &[u8]| {
            std::fs::write(&path, bytes).unwrap();
            load(&dir, &g, &phases, 8, 21).unwrap_err()
        };
        let mut bad = good.clone();
        bad[0] = b'X';
        let e = read(&bad);
        assert!(matches!(&e, Error::BadMagic { kind: FileKind::Checkpoint, path: p } if *p == path), "{e:?}");
        assert_eq!(e.exit_code(), crate::error::EXIT_CORRUPT);
        let mut newer = good.clone();
        newer[8..12].copy_from_slice(&(VERSION + 1).to_le_bytes());
        let e = read(&newer);
        assert!(matches!(&e, Error::ChecksumMismatch { section, .. } if section == "header"), "{e:?}");
        let mut hash = WordHash::new();
        hash.bytes(&newer[..56]);
        hash.bytes(&newer[64..]);
        let sum = hash.finish();
        newer[56..64].copy_from_slice(&sum.to_le_bytes());
        let e = read(&newer);
        assert!(
            matches!(e, Error::NewerFormat { kind: FileKind::Checkpoint, found, max, .. } if found == VERSION + 1 && max == VERSION),
            "{e:?}"
        );
        assert_eq!(e.exit_code(), crate::error::EXIT_FAILED);
        assert!(e.to_string().contains("or delete it"), "{e}");
        // An intact file of the previous format, v3 (no progress count), is read: its
        // progress starts from 0. One with a count where v3 has zeros is damaged.
        let resum = |bytes: &mut Vec<u8>| {
            let mut hash = WordHash::new();
            hash.bytes(&bytes[..56]);
            hash.bytes(&bytes[64..]);
            let sum = hash.finish();
            bytes[56..64].copy_from_slice(&sum.to_le_bytes());
        };
        let mut v3 = good.clone();
        v3[8..12].copy_from_slice(&OLDEST.to_le_bytes());
        resum(&mut v3);
        let e = read(&v3);
        assert!(matches!(&e, Error::Corrupt { reason, .. } if reason.contains("made for another")), "{e:?}");
        v3[40..48].fill(0);
        resum(&mut v3);
        std::fs::write(&path, &v3).unwrap();
        let back = load(&dir, &g, &phases, 8, 21).unwrap().unwrap();
        assert_eq!((back.level, back.last, back.advanced, back.log_ends.as_slice()), (2, 9, 0, &[0u64, 4][..]));
        // An intact file of a format before that: an earlier build's, said so.
        let mut older = good.clone();
        older[8..12].copy_from_slice(&(OLDEST - 1).to_le_bytes());
        resum(&mut older);
        let e = read(&older);
        let text = e.to_string();
        assert!(matches!(e, Error::Corrupt { .. }), "{e:?}");
        assert!(text.contains(&format!("format v{}, written by an earlier ostledb", OLDEST - 1)), "{text}");
        assert!(text.contains("finish with the build that wrote it"), "{text}");
        let mut flipped = good.clone();
        flipped[HEADER_LEN + 3] ^= 0x01;
        let e = read(&flipped);
        let section = "header and body";
        assert!(matches!(&e, Error::ChecksumMismatch { section: s, block: None, .. } if s == section), "{e:?}");
        assert!(e.to_string().contains("checksum mismatch in the header and body"), "{e}");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
