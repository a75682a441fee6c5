//! Every phase's records with their elided losses resolved, a phase group at a time, in
//! scratch files for an export (4 bytes per position: 10.9 GB for the whole game).
//!
//! An export writes the phases merged by code, so all of them are under way at once.
//! Resolving an elided loss where its line is written is a search over its children, each
//! a random read of a value block (most of a whole-game digest's time). Resolved a group
//! at a time instead, as `verify --deep` and `stats` do ([`GroupValues`]: the group's
//! records and the base values of the group below in memory, 8.2 GB for (5,5)), every
//! record is read once, in order; the export then reads the words back in index order.
//!
//! A file is `records-P-O.u32`: a header of 32 bytes (the magic `OSTLRECS`, the
//! database's [`Database::identity`], the positions and the XXH3-64 of the body, each
//! little-endian u64), then one little-endian word per position
//! ([`CompactPhase::words`]). It is written atomically; a file of another database, of
//! another length or whose body does not match its checksum is written again.

use std::fs::File;
use std::io::Read;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

use crate::error::{Error, io};
use crate::game::Phase;
use crate::index::GameIndex;
use crate::progress::Reporter;
use crate::store::Database;
use crate::store::file::{Hasher, le_u64, write_streamed};
use crate::store::group::{CompactPhase, GroupValues};

const MAGIC: &[u8; 8] = b"OSTLRECS";
/// Bytes before the first word.
const HEADER: u64 = 32;
/// Words written or checked at a time.
const CHUNK: usize = 1 << 21;

/// The file of `phase`'s resolved records in `dir`.
fn file_name(dir: &Path, phase: Phase) -> PathBuf {
    dir.join(format!("records-{}-{}.u32", phase.player, phase.opponent))
}

/// The scratch files of the phases of an export, open for reading.
pub struct ResolvedRecords {
    dir: PathBuf,
    files: Vec<(Phase, File, PathBuf)>,
}

impl ResolvedRecords {
    /// Make (or keep, when a run before left them whole) the files of every phase of
    /// `index` in `dir`, resolving a phase group at a time from `db`'s value files.
    pub fn prepare(db: &Database, index: &GameIndex, dir: &Path, reporter: &dyn Reporter) -> Result<Self, Error> {
        std::fs::create_dir_all(dir).map_err(io(dir))?;
        let id = db.identity();
        let mut whole = Vec::new();
        for p in index.phases() {
            let path = file_name(dir, p.phase());
            if path.exists() {
                if check(&path, id, p.len())? {
                    whole.push(p.phase());
                } else {
                    reporter.note(&format!("{} is not of this database or is damaged: written again", path.display()));
                }
            }
        }
        if !whole.is_empty() {
            reporter.note(&format!("resolved records kept from a run before: {} phase(s)", whole.len()));
        }
        let (geom, all) = (db.geometry(), db.index());
        let mut lower = Some(Vec::new());
        let groups = index.group_pieces();
        for (k, &pieces) in groups.iter().enumerate() {
            let members: Vec<Phase> =
                index.phases().iter().map(|p| p.phase()).filter(|p| p.pieces() == pieces).collect();
            if members.iter().all(|ph| whole.contains(ph)) {
                lower = None;
                continue;
            }
            let vals = match lower.take() {
                Some(l) => GroupValues::load_above(db.path(), geom, all, pieces, l, reporter)?,
                None => GroupValues::load(db.path(), geom, all, pieces, reporter)?,
            };
            for &ph in members.iter().filter(|ph| !whole.contains(ph)) {
                let held = vals.phase(ph).expect("a phase of the group");
                write(&file_name(dir, ph), id, held.words(), &format!("resolved records {ph}"), reporter)?;
            }
            // The group's base values, for the next group (none after the last).
            lower = (k + 1 < groups.len()).then(|| vals.into_base());
        }
        let mut files = Vec::new();
        for p in index.phases() {
            let path = file_name(dir, p.phase());
            let f = File::open(&path).map_err(io(&path))?;
            files.push((p.phase(), f, path));
        }
        Ok(ResolvedRecords { dir: dir.to_path_buf(), files })
    }

    /// Remove the files (and their directory, when nothing else is in it); a file that
    /// cannot be removed is named in a note.
    pub fn remove(self, reporter: &dyn Reporter) {
        for (_, f, path) in self.files {
            drop(f);
            if let Err(e) = std::fs::remove_file(&path) {
                reporter.note(&format!("could not remove {}: {e}", path.display()));
            }
        }
        let _ = std::fs::remove_dir(&self.dir);
    }

    /// The records of positions `first..first + n` of `phase`, packed, into `out`.
    pub fn read(&self, phase: Phase, first: u64, out: &mut Vec<u64>, n: usize) -> Result<(), Error> {
        let (_, f, path) = self
            .files
            .iter()
            .find(|(p, _, _)| *p == phase)
            .ok_or_else(|| Error::InvalidArgument(format!("no resolved records of phase {phase}")))?;
        let mut bytes = vec![0u8; n * 4];
        f.read_exact_at(&mut bytes, HEADER + first * 4).map_err(io(path))?;
        out.clear();
        out.extend(bytes.chunks_exact(4).map(|c| CompactPhase::unpack(u32::from_le_bytes([c[0], c[1], c[2], c[3]])).0));
        Ok(())
    }
}

/// Write `words` to `path` with its header, atomically.
fn write(path: &Path, id: u64, words: &[u32], label: &str, reporter: &dyn Reporter) -> Result<(), Error> {
    reporter.begin(label, words.len() as u64);
    write_streamed(path, HEADER as usize, |out| {
        let mut sum = Hasher::new();
        let mut bytes = Vec::with_capacity(CHUNK * 4);
        for chunk in words.chunks(CHUNK) {
            bytes.clear();
            bytes.extend(chunk.iter().flat_map(|w| w.to_le_bytes()));
            sum.update(&bytes);
            out.block(&bytes)?;
            reporter.advance(chunk.len() as u64);
        }
        let mut header = Vec::with_capacity(HEADER as usize);
        header.extend_from_slice(MAGIC);
        for v in [id, words.len() as u64, sum.finish()] {
            header.extend_from_slice(&v.to_le_bytes());
        }
        Ok(header)
    })?;
    reporter.end();
    Ok(())
}

/// True if `path` holds the records of `positions` positions of the database `id`, its
/// body whole.
fn check(path: &Path, id: u64, positions: u64) -> Result<bool, Error> {
    let mut f = File::open(path).map_err(io(path))?;
    let len = f.metadata().map_err(io(path))?.len();
    let mut header = [0u8; HEADER as usize];
    if len != HEADER + 4 * positions || f.read_exact(&mut header).is_err() {
        return Ok(false);
    }
    if &header[..8] != MAGIC || le_u64(&header, 8) != id || le_u64(&header, 16) != positions {
        return Ok(false);
    }
    let (mut sum, mut buf) = (Hasher::new(), vec![0u8; CHUNK * 4]);
    loop {
        let n = f.read(&mut buf).map_err(io(path))?;
        if n == 0 {
            break;
        }
        sum.update(&buf[..n]);
    }
    Ok(sum.finish() == le_u64(&header, 24))
}
