//! Opening a solved database directory for the read-only subcommands.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use crate::error::Error;
use crate::game::{Geometry, Phase};
use crate::index::GameIndex;
use crate::solve::checkpoint::{PhaseFile, phase_file};
use crate::solve::query::{Records, unpack};
use crate::solve::retrograde::Record;

/// The largest piece count whose phases are all present in `dir`.
pub fn solved_max_pieces(dir: &Path, geom: &Geometry) -> Result<u32, Error> {
    if !dir.is_dir() {
        return Err(Error::MissingDatabase { path: dir.to_path_buf(), phase: "(4,4)".into(), max_pieces: 8 });
    }
    let mut best = None;
    for n in 2 * geom.min_pieces()..=2 * geom.start_pieces() {
        if Phase::all(geom, n).iter().all(|&p| phase_file(dir, p).is_file()) {
            best = Some(n);
        } else {
            break;
        }
    }
    best.ok_or_else(|| Error::MissingDatabase { path: dir.to_path_buf(), phase: "(4,4)".into(), max_pieces: 8 })
}

/// Random access to a database directory: the index of its phases and lazily opened files.
pub struct Db {
    dir: PathBuf,
    geom: Geometry,
    /// Phases with at most this many pieces are present.
    pub max_pieces: u32,
    /// The position index of those phases.
    pub index: GameIndex,
    files: HashMap<Phase, PhaseFile>,
}

impl Db {
    /// Open the database at `dir` (the standard 5x5 game).
    pub fn open(dir: &Path) -> Result<Db, Error> {
        let geom = Geometry::standard().clone();
        let max_pieces = solved_max_pieces(dir, &geom)?;
        let index = GameIndex::build(&geom, max_pieces)?;
        Ok(Db { dir: dir.to_path_buf(), geom, max_pieces, index, files: HashMap::new() })
    }
}

impl Records for Db {
    fn record(&mut self, phase: Phase, idx: u64) -> Result<Record, Error> {
        if !self.files.contains_key(&phase) {
            let expect = self.index.phase(phase).map(|p| p.len()).unwrap_or(0);
            let f = PhaseFile::open(&self.dir, &self.geom, phase, expect)?.ok_or_else(|| Error::MissingDatabase {
                path: self.dir.clone(),
                phase: phase.to_string(),
                max_pieces: phase.pieces(),
            })?;
            self.files.insert(phase, f);
        }
        let f = self.files.get_mut(&phase).expect("just opened");
        Ok(unpack(f.record(idx)?))
    }
}
