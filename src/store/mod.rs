//! The result store: a solved database on disk, compressed and index-keyed, with
//! switchable key -> index lookup backends.

pub mod analysis;
pub mod bfs;
pub mod cache;
pub mod db;
pub mod file;
pub mod keys;
pub mod latency;
pub mod meta;
pub mod pack;
pub mod published;
pub mod values;

pub use db::{Database, OpenOptions};
pub use keys::Backend;

use std::path::Path;

use crate::error::Error;
use crate::game::{Geometry, Phase};
use crate::solve::checkpoint;
use crate::solve::retrograde::PhaseValues;

/// The solved values of a phase from a database directory: the compressed value file
/// if present (what the database answers from), else the solver's phase value file;
/// `Ok(None)` when neither exists. Every block or record checksum is checked.
pub fn load_phase(dir: &Path, geom: &Geometry, phase: Phase, expect: u64) -> Result<Option<PhaseValues>, Error> {
    if dir.join(values::file_name(phase)).is_file() {
        return values::load(dir, geom, phase, expect).map(Some);
    }
    checkpoint::load(dir, geom, phase, expect)
}

/// The base values of a phase (2 bytes per position), from either kind of file.
pub fn load_base(dir: &Path, geom: &Geometry, phase: Phase, expect: u64) -> Result<Option<Vec<u16>>, Error> {
    if dir.join(values::file_name(phase)).is_file() {
        return values::load_base(dir, geom, phase, expect).map(Some);
    }
    checkpoint::load_base(dir, geom, phase, expect)
}
