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
use crate::file::open_regular;
use crate::game::Phase;
use crate::index::GameIndex;
use crate::progress::Reporter;
use crate::store::Store;
use crate::working::group::{CompactPhase, GroupValues};
use crate::working::resolved::{HEADER, ResolvedDir};

/// The resolved records of the phases of an export, open for reading.
pub struct ResolvedRecords {
    dir: ResolvedDir,
    files: Vec<(Phase, File, PathBuf)>,
}

impl ResolvedRecords {
    /// Make (or keep, when they would be taken) the files of every phase of `index` whose
    /// value file elides losses in `dir`, resolving a phase group at a time from `db`'s
    /// value files. A kept file passes the checks of a walk's
    /// ([`CompactPhase::take_resolved`]): of this database, whole, and each word, its loss
    /// distance elided again, the value file's record; a group with a file that does not
    /// is loaded and resolved, and its files written anew.
    pub fn prepare(db: &Store, index: &GameIndex, dir: ResolvedDir, reporter: &dyn Reporter) -> Result<Self, Error> {
        let (geom, all) = (db.geometry(), db.index());
        let elides = |ph: Phase| db.values(ph).is_some_and(|v| v.elides_losses());
        let mut lower = Some(Vec::new());
        let mut kept = 0;
        let groups = index.group_pieces();
        for (k, &pieces) in groups.iter().enumerate() {
            let mut taken = true;
            for p in index.phases().iter().filter(|p| p.phase().pieces() == pieces && elides(p.phase())) {
                if CompactPhase::resolved_would_be_taken(db.path(), geom, p.phase(), p.len(), &dir, reporter)? {
                    kept += 1;
                } else {
                    taken = false;
                }
            }
            if taken {
                lower = None;
                continue;
            }
            // Loading the group with the directory takes the files that pass (read again)
            // and writes the others.
            let vals = match lower.take() {
                Some(l) => GroupValues::load_above(db.path(), geom, all, pieces, l, Some(&dir), reporter)?,
                None => GroupValues::load(db.path(), geom, all, pieces, Some(&dir), reporter)?,
            };
            // The group's base values, for the next group (none after the last).
            lower = (k + 1 < groups.len()).then(|| vals.into_base());
        }
        if kept > 0 {
            reporter.note(&format!(
                "resolved records kept from a run before, each checked against its value file: {kept} phase(s)"
            ));
        }
        let mut files = Vec::new();
        for p in index.phases().iter().filter(|p| elides(p.phase())) {
            let path = dir.path(p.phase());
            let f = open_regular(&path).map_err(io(&path))?;
            files.push((p.phase(), f, path));
        }
        Ok(ResolvedRecords { dir, files })
    }

    /// True if the records of `phase` are read from here (its value file elides losses).
    pub fn has(&self, phase: Phase) -> bool {
        self.files.iter().any(|(p, _, _)| *p == phase)
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
