//! Every phase's records with their elided losses resolved, kept on disk between
//! commands: 4 bytes per position, 10.9 GB for the whole game.
//!
//! A value file that elides loss distances is loaded as stored, then each elided loss is
//! resolved by one ply of search ([`crate::working::group::resolve_group`]). On the whole
//! game that is most of the time of loading a group: about 28 min for (4,5) and 14 min
//! for (5,5) on 2 cores, against seconds to read the value files. `stats`, `verify --deep`
//! and `export` given the same directory (`--records-dir`) resolve them once: the first
//! writes the files, the others read them. `solve` and `pack` given one write them from
//! the solver's phase files, which hold every distance, so that none is resolved at all
//! ([`crate::working::pack::PackOptions::records`]). A file is used only when it is of
//! this phase's values, whole, and agrees with the value file record for record (each of
//! its words, its loss distance elided again, is the stored record), so a stale or
//! damaged file costs time, never a wrong value; `verify --deep` then checks every
//! resolved distance against the children, as it checks every stored value.
//!
//! A file is `records-P-O.u32`: a header of 32 bytes (the magic `OSTLRECS`, the phase's
//! key ([`phase_key`]), the positions and the XXH3-64 of the body, each little-endian
//! u64), then one little-endian word per position
//! ([`crate::working::group::CompactPhase::words`]). It is written atomically. The layout is
//! in `schema/FORMAT.md` ("Resolved records").

use std::fs::File;
use std::io::Read;
use std::path::{Path, PathBuf};

use crate::error::{Error, io};
use crate::file::{Hasher, checksum, le_u64, remove_on_error, temp_name, write_streamed};
use crate::game::Phase;
use crate::progress::Reporter;
use crate::store::meta::{Meta, PhaseMeta};

const MAGIC: &[u8; 8] = b"OSTLRECS";
/// Bytes before the first word.
pub const HEADER: u64 = 32;
/// Words written, read or checked at a time.
const CHUNK: usize = 1 << 21;

/// The key of a phase's resolved records: the XXH3-64 of the board's side, the pieces a
/// side starts with, and the phase's entry of the metadata but for its file's size (the
/// piece counts as bytes, then the positions, wins, losses and draws as little-endian
/// u64). It names the values, not the file that holds them: packing again or storing a
/// breadth-first search (a new generation) leaves it as it is.
pub fn phase_key(side: u8, start_pieces: u8, m: &PhaseMeta) -> u64 {
    let mut b = vec![side, start_pieces, m.player, m.opponent];
    for v in [m.positions, m.win, m.loss, m.draw] {
        b.extend_from_slice(&v.to_le_bytes());
    }
    checksum(&b)
}

/// A directory of resolved records, of the phases of one database.
#[derive(Clone, Debug)]
pub struct ResolvedDir {
    dir: PathBuf,
    keys: Vec<(Phase, u64)>,
}

impl ResolvedDir {
    /// The directory `dir` (made if missing) for the phases of the database of `meta`.
    pub fn new(dir: &Path, meta: &Meta) -> Result<ResolvedDir, Error> {
        let keys = meta.phases.iter().map(|m| (m.phase(), phase_key(meta.side, meta.start_pieces, m))).collect();
        ResolvedDir::with_keys(dir, keys)
    }

    /// The directory `dir` (made if missing) for phases of these keys ([`phase_key`]).
    pub fn with_keys(dir: &Path, keys: Vec<(Phase, u64)>) -> Result<ResolvedDir, Error> {
        std::fs::create_dir_all(dir).map_err(io(dir))?;
        Ok(ResolvedDir { dir: dir.to_path_buf(), keys })
    }

    /// The key of `phase`'s records, if the directory is for it.
    fn key(&self, phase: Phase) -> Option<u64> {
        self.keys.iter().find(|(p, _)| *p == phase).map(|&(_, k)| k)
    }

    /// The directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The file of `phase`'s resolved records.
    pub fn path(&self, phase: Phase) -> PathBuf {
        self.dir.join(format!("records-{}-{}.u32", phase.player, phase.opponent))
    }

    /// Read the file of `phase` in order, a chunk of words at a time, giving each to
    /// `take(first position, words)`, which may refuse it (false) and so end the read.
    /// `Ok(None)`: there is no file. `Ok(Some(true))`: the file is of this database and of
    /// `positions` positions, `take` took every chunk and the body's checksum holds (known
    /// only at the end: the chunks taken before a `Some(false)` are not to be trusted).
    pub fn read_chunks(
        &self,
        phase: Phase,
        positions: u64,
        mut take: impl FnMut(u64, &[u32]) -> bool,
    ) -> Result<Option<bool>, Error> {
        let path = self.path(phase);
        let mut f = match File::open(&path) {
            Ok(f) => f,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(io(&path)(e)),
        };
        let len = f.metadata().map_err(io(&path))?.len();
        let mut header = [0u8; HEADER as usize];
        if len != HEADER + 4 * positions || f.read_exact(&mut header).is_err() {
            return Ok(Some(false));
        }
        if &header[..8] != MAGIC || Some(le_u64(&header, 8)) != self.key(phase) || le_u64(&header, 16) != positions {
            return Ok(Some(false));
        }
        let (mut sum, mut bytes, mut words) = (Hasher::new(), vec![0u8; CHUNK * 4], Vec::with_capacity(CHUNK));
        let mut first = 0u64;
        while first < positions {
            let n = (positions - first).min(CHUNK as u64) as usize;
            f.read_exact(&mut bytes[..n * 4]).map_err(io(&path))?;
            sum.update(&bytes[..n * 4]);
            words.clear();
            words.extend(bytes[..n * 4].chunks_exact(4).map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]])));
            if !take(first, &words) {
                return Ok(Some(false));
            }
            first += n as u64;
        }
        Ok(Some(sum.finish() == le_u64(&header, 24)))
    }

    /// Write the file of `phase` from `words`, atomically, as a step of `reporter`; on an
    /// error no temporary file is left.
    pub fn write(&self, phase: Phase, words: &[u32], reporter: &dyn Reporter) -> Result<(), Error> {
        let mut chunks = words.chunks(CHUNK);
        self.write_with(phase, words.len() as u64, reporter, |out| {
            out.extend_from_slice(chunks.next().unwrap_or(&[]));
            Ok(())
        })
    }

    /// Write the file of `phase`, of `positions` words, from `next`, which appends the
    /// words that follow (at least one while any are left) to the empty `Vec` it is given;
    /// atomically, as a step of `reporter`. On an error (of `next` too) no temporary file
    /// is left.
    pub fn write_with(
        &self,
        phase: Phase,
        positions: u64,
        reporter: &dyn Reporter,
        mut next: impl FnMut(&mut Vec<u32>) -> Result<(), Error>,
    ) -> Result<(), Error> {
        let path = self.path(phase);
        let key = self
            .key(phase)
            .ok_or_else(|| Error::InvalidArgument(format!("{}: no key for the records of {phase}", path.display())))?;
        reporter.begin(&format!("resolved records {phase}"), positions);
        let written = write_streamed(&path, HEADER as usize, |out| {
            let mut sum = Hasher::new();
            let (mut words, mut bytes) = (Vec::with_capacity(CHUNK), Vec::with_capacity(CHUNK * 4));
            let mut done = 0u64;
            while done < positions {
                words.clear();
                next(&mut words)?;
                if words.is_empty() || done + words.len() as u64 > positions {
                    return Err(Error::InvalidArgument(format!(
                        "{}: {} words made after {done} of {positions}",
                        path.display(),
                        words.len()
                    )));
                }
                bytes.clear();
                bytes.extend(words.iter().flat_map(|w| w.to_le_bytes()));
                sum.update(&bytes);
                out.block(&bytes)?;
                done += words.len() as u64;
                reporter.advance(words.len() as u64);
            }
            let mut header = Vec::with_capacity(HEADER as usize);
            header.extend_from_slice(MAGIC);
            for v in [key, positions, sum.finish()] {
                header.extend_from_slice(&v.to_le_bytes());
            }
            Ok(header)
        });
        reporter.end();
        remove_on_error(&temp_name(&path), written).map(|_| ())
    }
}
