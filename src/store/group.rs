//! Whole phase groups in memory, with exact values: the phases of a group in full and
//! the base values of the phases one piece smaller (all a capture or a suicide leads
//! to), loaded from value files or the solver's phase files, answering as a
//! [`RecordSource`] (`verify --deep`, `interesting`, the solver's resume).
//!
//! Files that elide loss distances are loaded as stored, then every elided loss is
//! resolved by one ply of search over the group's own records and the base values of the
//! group below. The children a lost node reads are all won, and wins are stored exactly,
//! so nothing needs resolving recursively and one pass suffices.

use std::path::Path;

use rayon::prelude::*;

use crate::error::Error;
use crate::game::{Geometry, Phase};
use crate::index::GameIndex;
use crate::probe::{RecordSource, resolve_record};
use crate::progress::{Reporter, Silent};
use crate::record::{Packed, PhaseValues, Record, Val, val_outcome};
use crate::store::phasefile;
use crate::store::values::{self, ValueFile};

/// The records of a phase group as loaded: the group's phases in full and the base
/// values of the phases one piece smaller, borrowed.
#[derive(Clone, Copy)]
pub struct GroupRecords<'a> {
    index: &'a GameIndex,
    full: &'a [PhaseValues],
    lower: &'a [(Phase, Vec<Val>)],
}

impl RecordSource for GroupRecords<'_> {
    fn index(&self) -> &GameIndex {
        self.index
    }
    #[inline]
    fn record(&self, phase: Phase, idx: u64) -> Result<Record, Error> {
        if let Some(p) = self.full.iter().find(|p| p.phase() == phase) {
            return Ok(p.record(idx));
        }
        match self.lower.iter().find(|l| l.0 == phase) {
            Some((_, b)) => Ok(Record { base: val_outcome(b[idx as usize]), special: None }),
            None => Err(Error::InvalidArgument(format!("phase {phase} is not loaded"))),
        }
    }
}

/// The values that checking or sweeping one phase group needs, and no more: the group's
/// records (8 bytes per position) and the base values of the group one piece smaller (2
/// bytes). For (5,5) that is 14.4 GB instead of the 22 GB of the whole game.
pub struct GroupValues<'a> {
    index: &'a GameIndex,
    full: Vec<PhaseValues>,
    lower: Vec<(Phase, Vec<Val>)>,
}

impl<'a> GroupValues<'a> {
    /// Load, from a database directory, the phases with `pieces` pieces in full and those
    /// with one piece less as base values (every file's checksum is checked, elided loss
    /// distances resolved: see [`load_group`]).
    pub fn load(
        dir: &Path,
        geom: &Geometry,
        index: &'a GameIndex,
        pieces: u32,
        reporter: &dyn Reporter,
    ) -> Result<GroupValues<'a>, Error> {
        let missing = |n: u32| Error::MissingDatabase {
            path: dir.to_path_buf(),
            phase: index
                .phases()
                .iter()
                .filter(|p| p.phase().pieces() == n)
                .map(|p| p.phase().to_string())
                .collect::<Vec<_>>()
                .join("+"),
            max_pieces: n,
        };
        let lower = if index.phases().iter().any(|p| p.phase().pieces() + 1 == pieces) {
            let group = load_group(dir, geom, index, pieces - 1, reporter)?.ok_or_else(|| missing(pieces - 1))?;
            group.into_iter().map(|v| (v.phase(), v.base_vals())).collect()
        } else {
            Vec::new()
        };
        let full = load_group(dir, geom, index, pieces, reporter)?.ok_or_else(|| missing(pieces))?;
        Ok(GroupValues { index, full, lower })
    }

    /// The phases of the group.
    pub fn phases(&self) -> Vec<Phase> {
        self.full.iter().map(|p| p.phase()).collect()
    }

    /// The records, as a [`RecordSource`].
    pub fn records(&self) -> GroupRecords<'_> {
        GroupRecords { index: self.index, full: &self.full, lower: &self.lower }
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
    lower: &[(Phase, Vec<Val>)],
    reporter: &dyn Reporter,
) -> Result<u64, Error> {
    let data = crate::store::directory::current_data_dir(dir)?;
    let mut resolved = 0u64;
    for k in 0..full.len() {
        if !elided[k] {
            continue;
        }
        let ph = full[k].phase();
        let p = index.phase(ph).ok_or_else(|| Error::InvalidArgument(format!("phase {ph} is not indexed")))?;
        let file = data.join(values::file_name(ph));
        let n = p.len();
        reporter.begin(&format!("losses {ph}"), n);
        let mut lo = 0u64;
        while lo < n {
            let hi = (lo + BATCH).min(n);
            let updates: Vec<(usize, u64)> = {
                let src = GroupRecords { index, full: &*full, lower };
                let records = full[k].raw();
                (lo as usize..hi as usize)
                    .into_par_iter()
                    .with_min_len(1024)
                    .filter(|&i| Packed(records[i]).needs_resolving())
                    .map(|i| {
                        resolve_record(geom, &src, &p.position_at(i as u64), Packed(records[i]), &file)
                            .map(|r| (i, r.0))
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
fn stored_base(dir: &Path, geom: &Geometry, phase: Phase, expect: u64) -> Result<Option<Vec<Val>>, Error> {
    let data = crate::store::directory::current_data_dir(dir)?;
    if data.join(values::file_name(phase)).is_file() {
        return values::load_base_raw(&data, geom, phase, expect).map(Some);
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
    let data = crate::store::directory::current_data_dir(dir)?;
    let mut full = Vec::new();
    let mut elided = Vec::new();
    for p in index.phases().iter().filter(|p| p.phase().pieces() == pieces) {
        let ph = p.phase();
        if data.join(values::file_name(ph)).is_file() {
            let f = ValueFile::open(&data, geom, ph, p.len())?;
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
    let data = crate::store::directory::current_data_dir(dir)?;
    if !data.join(values::file_name(phase)).is_file() {
        return phasefile::load(dir, geom, phase, expect);
    }
    let f = ValueFile::open(&data, geom, phase, expect)?;
    if !f.elides_losses() {
        return values::load_file(&f).map(Some);
    }
    let index = GameIndex::build(geom, phase.pieces())?;
    let group = load_group(dir, geom, &index, phase.pieces(), &Silent)?;
    Ok(group.and_then(|g| g.into_iter().find(|v| v.phase() == phase)))
}

/// The exact base values of one phase (2 bytes per position).
pub fn load_base(dir: &Path, geom: &Geometry, phase: Phase, expect: u64) -> Result<Option<Vec<Val>>, Error> {
    let data = crate::store::directory::current_data_dir(dir)?;
    if data.join(values::file_name(phase)).is_file() && !ValueFile::open(&data, geom, phase, expect)?.elides_losses() {
        return values::load_base_raw(&data, geom, phase, expect).map(Some);
    }
    if !data.join(values::file_name(phase)).is_file() {
        return phasefile::load_base(dir, geom, phase, expect);
    }
    Ok(load_phase(dir, geom, phase, expect)?.map(|v| v.base_vals()))
}
