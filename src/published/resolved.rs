//! Every phase's records with their elided losses resolved, for an export, read back in
//! index order from the files of a [`ResolvedDir`] (4 bytes per position: 10.9 GB for
//! the whole game).
//!
//! An export writes the phases merged by code, so all of them are under way at once.
//! Resolving an elided loss where its line is written is a search over its children, each
//! a random read of a value block (most of a whole-game digest's time). Resolved a group
//! at a time instead, as `verify --deep` and `stats` do ([`GroupValues`]: the group's
//! records and the base values of the group below in memory, 8.2 GB for (5,5)), every
//! record is read once, in order; the export then reads the words back in index order.
//! Files a killed run, or `stats` or `verify --deep` with the same directory, left whole
//! are used as they are.

use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::PathBuf;

use crate::error::{Error, io};
use crate::game::Phase;
use crate::index::GameIndex;
use crate::progress::Reporter;
use crate::store::Database;
use crate::store::group::{CompactPhase, GroupValues};
use crate::store::resolved::{HEADER, ResolvedDir};

/// The resolved records of the phases of an export, open for reading.
pub struct ResolvedRecords {
    dir: ResolvedDir,
    files: Vec<(Phase, File, PathBuf)>,
}

impl ResolvedRecords {
    /// Make (or keep, when they are whole) the files of every phase of `index` in `dir`,
    /// resolving a phase group at a time from `db`'s value files.
    pub fn prepare(db: &Database, index: &GameIndex, dir: ResolvedDir, reporter: &dyn Reporter) -> Result<Self, Error> {
        let mut whole = Vec::new();
        for p in index.phases() {
            if dir.holds(p.phase(), p.len())? {
                whole.push(p.phase());
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
            // Loading the group with the directory writes the files it lacks.
            let vals = match lower.take() {
                Some(l) => GroupValues::load_above(db.path(), geom, all, pieces, l, Some(&dir), reporter)?,
                None => GroupValues::load(db.path(), geom, all, pieces, Some(&dir), reporter)?,
            };
            // The group's base values, for the next group (none after the last).
            lower = (k + 1 < groups.len()).then(|| vals.into_base());
        }
        let mut files = Vec::new();
        for p in index.phases() {
            let path = dir.path(p.phase());
            let f = File::open(&path).map_err(io(&path))?;
            files.push((p.phase(), f, path));
        }
        Ok(ResolvedRecords { dir, files })
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
        let _ = std::fs::remove_dir(self.dir.dir());
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
