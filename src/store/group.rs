//! Whole phases with exact values from files that elide loss distances: a phase group is
//! loaded as stored, then every elided loss is resolved by one ply of search over the
//! group's own records and the base values of the phases one piece smaller (a capture
//! or a suicide leads there). The children a lost node reads are all won, and wins are
//! stored exactly, so nothing needs resolving recursively and one pass suffices.

use std::path::Path;

use rayon::prelude::*;

use crate::error::Error;
use crate::game::{Geometry, Phase, Position};
use crate::index::GameIndex;
use crate::probe::{Records, locate, resolve_record};
use crate::progress::{Reporter, Silent};
use crate::record::{PhaseValues, Record, val_outcome};
use crate::store::phasefile;
use crate::store::values::{self, ValueFile, needs_resolving};

/// Records as stored, in memory: the phases of a group in full and the base values of
/// the phases below (what a lost node of the group can lead to).
#[derive(Clone, Copy)]
struct Stored<'a> {
    index: &'a GameIndex,
    full: &'a [PhaseValues],
    lower: &'a [(Phase, Vec<u16>)],
}

impl Records for Stored<'_> {
    fn locate(&mut self, pos: &Position) -> Result<(Phase, u64), Error> {
        locate(self.index, pos)
    }
    fn record(&mut self, phase: Phase, idx: u64) -> Result<Record, Error> {
        if let Some(p) = self.full.iter().find(|p| p.phase() == phase) {
            return Ok(p.record(idx));
        }
        match self.lower.iter().find(|l| l.0 == phase) {
            Some((_, b)) => Ok(Record { base: val_outcome(b[idx as usize]), special: None }),
            None => Err(Error::InvalidArgument(format!("phase {phase} is not loaded"))),
        }
    }
}

/// Positions resolved per batch (computed in parallel, then written back).
const BATCH: u64 = 1 << 20;

/// Resolve, in place, every elided loss of the phases of `full` whose `elided` flag is
/// set; `lower` holds the base values (as stored) of the phases one piece smaller.
/// Returns the records resolved. `dir` names the files in errors; `reporter` gets a step
/// per phase.
pub fn resolve_group(
    dir: &Path,
    geom: &Geometry,
    index: &GameIndex,
    full: &mut [PhaseValues],
    elided: &[bool],
    lower: &[(Phase, Vec<u16>)],
    reporter: &dyn Reporter,
) -> Result<u64, Error> {
    let mut resolved = 0u64;
    for k in 0..full.len() {
        if !elided[k] {
            continue;
        }
        let ph = full[k].phase();
        let p = index.phase(ph).ok_or_else(|| Error::InvalidArgument(format!("phase {ph} is not indexed")))?;
        let file = dir.join(values::file_name(ph));
        let n = p.len();
        reporter.begin(&format!("losses {ph}"), n);
        let mut lo = 0u64;
        while lo < n {
            let hi = (lo + BATCH).min(n);
            let updates: Vec<(usize, u64)> = {
                let src = Stored { index, full: &*full, lower };
                let records = full[k].raw();
                (lo as usize..hi as usize)
                    .into_par_iter()
                    .with_min_len(1024)
                    .filter(|&i| needs_resolving(records[i]))
                    .map(|i| {
                        let mut src = src;
                        resolve_record(geom, &mut src, &p.position_at(i as u64), records[i], &file).map(|r| (i, r))
                    })
                    .collect::<Result<_, Error>>()?
            };
            resolved += updates.len() as u64;
            let records = full[k].raw_mut();
            for (i, r) in updates {
                records[i] = r;
            }
            reporter.advance(hi - lo);
            lo = hi;
        }
        reporter.end();
    }
    Ok(resolved)
}

/// The base values of a phase as stored (either kind of file).
fn stored_base(dir: &Path, geom: &Geometry, phase: Phase, expect: u64) -> Result<Option<Vec<u16>>, Error> {
    if dir.join(values::file_name(phase)).is_file() {
        return values::load_base_raw(dir, geom, phase, expect).map(Some);
    }
    phasefile::load_base(dir, geom, phase, expect)
}

/// The exact values of every phase with `pieces` pieces (a phase group), in the order of
/// `index`: from value files (elided loss distances resolved) or the solver's phase
/// files; `Ok(None)` when one of them is in neither form. Every checksum is checked;
/// `reporter` sees the resolution, a step per phase.
pub fn load_group(
    dir: &Path,
    geom: &Geometry,
    index: &GameIndex,
    pieces: u32,
    reporter: &dyn Reporter,
) -> Result<Option<Vec<PhaseValues>>, Error> {
    let mut full = Vec::new();
    let mut elided = Vec::new();
    for p in index.phases().iter().filter(|p| p.phase().pieces() == pieces) {
        let ph = p.phase();
        if dir.join(values::file_name(ph)).is_file() {
            let f = ValueFile::open(dir, geom, ph, p.len())?;
            elided.push(f.elides_losses());
            full.push(values::load_file(&f)?);
        } else {
            match phasefile::load(dir, geom, ph, p.len())? {
                Some(v) => full.push(v),
                None => return Ok(None),
            }
            elided.push(false);
        }
    }
    if elided.iter().any(|&e| e) {
        let mut lower = Vec::new();
        for p in index.phases().iter().filter(|p| p.phase().pieces() + 1 == pieces) {
            let ph = p.phase();
            let base = stored_base(dir, geom, ph, p.len())?.ok_or_else(|| Error::MissingDatabase {
                path: dir.to_path_buf(),
                phase: ph.to_string(),
                max_pieces: ph.pieces(),
            })?;
            lower.push((ph, base));
        }
        resolve_group(dir, geom, index, &mut full, &elided, &lower, reporter)?;
    }
    Ok(Some(full))
}

/// The exact values of one phase (loading and resolving its whole group if its file
/// elides loss distances); `Ok(None)` when it is in neither form.
pub fn load_phase(dir: &Path, geom: &Geometry, phase: Phase, expect: u64) -> Result<Option<PhaseValues>, Error> {
    if !dir.join(values::file_name(phase)).is_file() {
        return phasefile::load(dir, geom, phase, expect);
    }
    let f = ValueFile::open(dir, geom, phase, expect)?;
    if !f.elides_losses() {
        return values::load_file(&f).map(Some);
    }
    let index = GameIndex::build(geom, phase.pieces())?;
    let group = load_group(dir, geom, &index, phase.pieces(), &Silent)?;
    Ok(group.and_then(|g| g.into_iter().find(|v| v.phase() == phase)))
}

/// The exact base values of one phase (2 bytes per position).
pub fn load_base(dir: &Path, geom: &Geometry, phase: Phase, expect: u64) -> Result<Option<Vec<u16>>, Error> {
    if dir.join(values::file_name(phase)).is_file() && !ValueFile::open(dir, geom, phase, expect)?.elides_losses() {
        return values::load_base_raw(dir, geom, phase, expect).map(Some);
    }
    if !dir.join(values::file_name(phase)).is_file() {
        return phasefile::load_base(dir, geom, phase, expect);
    }
    Ok(load_phase(dir, geom, phase, expect)?.map(|v| v.raw().iter().map(|&r| r as u16).collect()))
}
