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
use crate::store::values::{self, ValueFile};
use crate::working::phasefile;
use crate::working::resolved::ResolvedDir;

/// The base values of the phases of a group, phase by phase (2 bytes per position).
pub type GroupBase = Vec<(Phase, Vec<Val>)>;

/// One phase's records held in memory, in either width: [`PhaseValues`] (8 bytes per
/// position, as the solver and the phase files have them) or [`CompactPhase`] (4).
pub trait HeldPhase: Sync {
    /// The phase.
    fn phase(&self) -> Phase;
    /// The record of position `idx`.
    fn packed(&self, idx: u64) -> Packed;
    /// Replace the record of position `idx`; false if this form cannot hold it.
    fn set(&mut self, idx: u64, r: Packed) -> bool;
    /// Ask for the memory of position `idx`'s record ahead of reading it
    /// ([`crate::sys::prefetch`]; `idx` out of range asks for nothing useful but is safe).
    fn prefetch(&self, idx: u64);
}

impl HeldPhase for PhaseValues {
    fn phase(&self) -> Phase {
        PhaseValues::phase(self)
    }
    #[inline]
    fn packed(&self, idx: u64) -> Packed {
        Packed(self.raw()[idx as usize])
    }
    fn set(&mut self, idx: u64, r: Packed) -> bool {
        self.raw_mut()[idx as usize] = r.0;
        true
    }
    #[inline]
    fn prefetch(&self, idx: u64) {
        crate::sys::prefetch(self.raw().as_ptr().wrapping_add(idx as usize));
    }
}

/// One phase's records in 4 bytes each, so that a whole phase group fits in memory
/// beside the group below ((5,5): 6.2 GB instead of 12.4): bits 0..9 the base value code,
/// 9..18 the special value code, 18..23 the special move. A value code fits in 9 bits
/// when its distance is at most 255 plies (the game's longest is 147); loading a
/// record that does not fit is an error, not a truncation.
pub struct CompactPhase {
    phase: Phase,
    words: Vec<u32>,
}

impl CompactPhase {
    /// The word of a record, if it fits.
    #[inline]
    pub(crate) fn word(r: Packed) -> Option<u32> {
        let (b, sp) = (r.base() as u32, r.special() as u32);
        (b < 512 && sp < 512).then_some(b | sp << 9 | r.special_move() << 18)
    }

    /// Load one phase from a database directory, block by block (the value file of the
    /// current generation, else the solver's phase file; `Ok(None)` if neither exists),
    /// every checksum checked. Returns it and whether its file elides loss distances.
    pub fn load(dir: &Path, geom: &Geometry, phase: Phase, expect: u64) -> Result<Option<(CompactPhase, bool)>, Error> {
        let data = crate::store::directory::current_data_dir(dir)?;
        let mut words: Vec<u32> = Vec::new();
        words
            .try_reserve_exact(expect as usize)
            .map_err(|_| Error::InvalidArgument(format!("cannot allocate {expect} records")))?;
        // Read at random by every sweep (a position's children lie far apart): backed by
        // 2 MiB pages where the kernel offers them, before the first write faults pages in.
        crate::sys::advise_huge_pages(words.spare_capacity_mut());
        let mut wide = None;
        let mut push = |c: &[u64]| {
            for &r in c {
                match CompactPhase::word(Packed(r)) {
                    Some(w) => words.push(w),
                    None => {
                        wide.get_or_insert(words.len() as u64);
                        words.push(0);
                    }
                }
            }
        };
        let (path, elided) = if data.join(values::file_name(phase)).is_file() {
            let f = ValueFile::open(&data, geom, phase, expect)?;
            f.for_each_block(|_, c| push(c))?;
            (f.path().to_path_buf(), f.elides_losses())
        } else {
            if !phasefile::for_each_block(dir, geom, phase, expect, |_, c| push(c))? {
                return Ok(None);
            }
            (phasefile::phase_file(dir, phase), false)
        };
        if let Some(i) = wide {
            return Err(Error::Corrupt {
                path,
                reason: format!(
                    "position {i} of {phase} has a distance above 255 plies, which no solved Ostle game has"
                ),
            });
        }
        Ok(Some((CompactPhase { phase, words }, elided)))
    }

    /// The records, a word each (bits 0..9 the base value code, 9..18 the special
    /// value code, 18..23 the special move; [`CompactPhase::unpack`]).
    pub fn words(&self) -> &[u32] {
        &self.words
    }

    /// The packed record of a word of [`CompactPhase::words`].
    #[inline]
    pub fn unpack(w: u32) -> Packed {
        Packed((w & 511) as u64 | ((w >> 9 & 511) as u64) << 16 | ((w >> 18 & 31) as u64) << 32)
    }

    /// The base value codes (2 bytes per position).
    pub fn base_vals(&self) -> Vec<Val> {
        let mut out = Vec::with_capacity(self.words.len());
        // Read at random like the records (huge pages: see `load`).
        crate::sys::advise_huge_pages(out.spare_capacity_mut());
        self.words.par_iter().map(|&w| (w & 511) as Val).collect_into_vec(&mut out);
        out
    }

    /// Take this phase's resolved records from `resolved`, its records as loaded from a
    /// file that elides losses. True if they were taken: the file is of this database and
    /// whole, and each of its words has no elided loss and, its loss distance elided
    /// again, is the record as stored. Otherwise the records are left as stored (false;
    /// a file there but not usable is named in a note of `reporter`).
    pub fn take_resolved(&mut self, resolved: &ResolvedDir, reporter: &dyn Reporter) -> Result<bool, Error> {
        match self.try_resolved(resolved, reporter)? {
            None => Ok(false),
            Some(took) => {
                if !took {
                    reporter.note(&format!(
                        "{} is not of this database, is damaged or disagrees with the value file: resolved again",
                        resolved.path(self.phase).display()
                    ));
                }
                Ok(took)
            }
        }
    }

    /// [`CompactPhase::take_resolved`] without its note: `None` when there is no file.
    fn try_resolved(&mut self, resolved: &ResolvedDir, reporter: &dyn Reporter) -> Result<Option<bool>, Error> {
        let (ph, n) = (self.phase, self.words.len() as u64);
        if !resolved.path(ph).exists() {
            return Ok(None);
        }
        reporter.begin(&format!("resolved records {ph} (read)"), n);
        let took = resolved.read_chunks(ph, n, |first, got| {
            let mine = &mut self.words[first as usize..first as usize + got.len()];
            let agree = mine.par_iter().zip(got).all(|(&stored, &w)| {
                let r = CompactPhase::unpack(w);
                !r.needs_resolving() && CompactPhase::word(r.elided()) == Some(stored)
            });
            if agree {
                mine.copy_from_slice(got);
                reporter.advance(got.len() as u64);
            }
            agree
        })?;
        reporter.end();
        if took == Some(false) {
            // Words taken before the file was found wanting go back to their stored form.
            self.words.par_iter_mut().for_each(|w| {
                *w = CompactPhase::word(CompactPhase::unpack(*w).elided()).expect("an elided record fits a word")
            });
        }
        Ok(took)
    }

    /// Whether the resolved records of `phase` in `resolved` would be taken
    /// ([`CompactPhase::take_resolved`]'s checks, every word against the value file): the
    /// phase is loaded alone from `dir` (4 bytes per position) and dropped after, unless
    /// there is no file (false). Also true for a phase whose value file keeps its loss
    /// distances (when a file is there), which needs no records.
    pub fn resolved_would_be_taken(
        dir: &Path,
        geom: &Geometry,
        phase: Phase,
        positions: u64,
        resolved: &ResolvedDir,
        reporter: &dyn Reporter,
    ) -> Result<bool, Error> {
        if !resolved.path(phase).exists() {
            // Not loaded for nothing: a first export has no files.
            return Ok(false);
        }
        let (mut c, elided) = CompactPhase::load(dir, geom, phase, positions)?.ok_or_else(|| {
            Error::MissingDatabase { path: dir.to_path_buf(), phase: phase.to_string(), max_pieces: phase.pieces() }
        })?;
        // No note here: a file not taken is noted when its group is loaded to resolve it.
        Ok(!elided || c.try_resolved(resolved, reporter)? == Some(true))
    }
}

impl HeldPhase for CompactPhase {
    fn phase(&self) -> Phase {
        self.phase
    }
    #[inline]
    fn packed(&self, idx: u64) -> Packed {
        CompactPhase::unpack(self.words[idx as usize])
    }
    fn set(&mut self, idx: u64, r: Packed) -> bool {
        match CompactPhase::word(r) {
            Some(w) => {
                self.words[idx as usize] = w;
                true
            }
            None => false,
        }
    }
    #[inline]
    fn prefetch(&self, idx: u64) {
        crate::sys::prefetch(self.words.as_ptr().wrapping_add(idx as usize));
    }
}

/// The records of a phase group as loaded: the group's phases in full and the base
/// values of the phases one piece smaller, borrowed.
pub struct GroupRecords<'a, P = PhaseValues> {
    index: &'a GameIndex,
    full: &'a [P],
    lower: &'a [(Phase, Vec<Val>)],
}

impl<P> Clone for GroupRecords<'_, P> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<P> Copy for GroupRecords<'_, P> {}

impl<P: HeldPhase> RecordSource for GroupRecords<'_, P> {
    fn index(&self) -> &GameIndex {
        self.index
    }
    #[inline]
    fn record(&self, phase: Phase, idx: u64) -> Result<Record, Error> {
        match self.held(phase) {
            Some(Held::Full(p)) => Ok(p.packed(idx).record()),
            Some(Held::Base(b)) => Ok(Record { base: val_outcome(b[idx as usize]), special: None }),
            None => Err(Error::InvalidArgument(format!("phase {phase} is not loaded"))),
        }
    }
    /// The records about to be read are asked for from memory at once, so that their
    /// cache misses overlap (the children of a position lie far apart in the group).
    fn will_read(&self, located: &[(Phase, u64)]) {
        for &(phase, idx) in located {
            match self.held(phase) {
                Some(Held::Full(p)) => p.prefetch(idx),
                Some(Held::Base(b)) => crate::sys::prefetch(b.as_ptr().wrapping_add(idx as usize)),
                None => {}
            }
        }
    }
}

/// How a phase is held by [`GroupRecords`]: in full, or its base values only.
enum Held<'a, P> {
    Full(&'a P),
    Base(&'a [Val]),
}

impl<'a, P: HeldPhase> GroupRecords<'a, P> {
    #[inline]
    fn held(&self, phase: Phase) -> Option<Held<'a, P>> {
        if let Some(p) = self.full.iter().find(|p| p.phase() == phase) {
            return Some(Held::Full(p));
        }
        self.lower.iter().find(|l| l.0 == phase).map(|(_, b)| Held::Base(b.as_slice()))
    }
}

/// The values that checking or sweeping one phase group needs, and no more: the group's
/// records (4 bytes per position, [`CompactPhase`]) and the base values of the group one
/// piece smaller (2 bytes). For (5,5) that is 8.2 GB instead of the 22 GB of the whole
/// game. The group below is read the same way, one phase at a time, and only its base
/// values kept.
pub struct GroupValues<'a> {
    index: &'a GameIndex,
    full: Vec<CompactPhase>,
    lower: Vec<(Phase, Vec<Val>)>,
}

impl<'a> GroupValues<'a> {
    /// Load, from a database directory, the phases with `pieces` pieces in full and those
    /// with one piece less as base values (every file's checksum is checked, elided loss
    /// distances resolved: see [`resolve_group`]).
    pub fn load(
        dir: &Path,
        geom: &Geometry,
        index: &'a GameIndex,
        pieces: u32,
        resolved: Option<&ResolvedDir>,
        reporter: &dyn Reporter,
    ) -> Result<GroupValues<'a>, Error> {
        let lower = match group_below(index, pieces) {
            Some(n) => {
                load_group_base(dir, geom, index, n, resolved, reporter)?.ok_or_else(|| missing_group(dir, index, n))?
            }
            None => Vec::new(),
        };
        GroupValues::load_above(dir, geom, index, pieces, lower, resolved, reporter)
    }

    /// [`GroupValues::load`] given `lower`, the exact base values of the group below (from
    /// [`GroupValues::into_base`] of that group, when walking the groups in order).
    pub fn load_above(
        dir: &Path,
        geom: &Geometry,
        index: &'a GameIndex,
        pieces: u32,
        lower: Vec<(Phase, Vec<Val>)>,
        resolved: Option<&ResolvedDir>,
        reporter: &dyn Reporter,
    ) -> Result<GroupValues<'a>, Error> {
        let full = load_compact(dir, geom, index, pieces, &lower, resolved, reporter)?;
        Ok(GroupValues { index, full, lower })
    }

    /// The group's base values, phase by phase: all the group above needs of it.
    pub fn into_base(self) -> GroupBase {
        drop(self.lower);
        self.full.into_iter().map(|c| (c.phase, c.base_vals())).collect()
    }

    /// The records of one phase of the group.
    pub fn phase(&self, phase: Phase) -> Option<&CompactPhase> {
        self.full.iter().find(|c| c.phase == phase)
    }

    /// The phases of the group.
    pub fn phases(&self) -> Vec<Phase> {
        self.full.iter().map(|p| p.phase).collect()
    }

    /// The records, as a [`RecordSource`].
    pub fn records(&self) -> GroupRecords<'_, CompactPhase> {
        GroupRecords { index: self.index, full: &self.full, lower: &self.lower }
    }
}

/// The phases with `pieces` pieces as [`CompactPhase`]s, their elided losses resolved
/// with `lower`, the base values of the group below (as stored serves). With `resolved`,
/// a phase's records are taken from there when its file is usable
/// ([`CompactPhase::take_resolved`]), and those resolved here are written there.
fn load_compact(
    dir: &Path,
    geom: &Geometry,
    index: &GameIndex,
    pieces: u32,
    lower: &[(Phase, Vec<Val>)],
    resolved: Option<&ResolvedDir>,
    reporter: &dyn Reporter,
) -> Result<Vec<CompactPhase>, Error> {
    let mut full = Vec::new();
    let mut elided = Vec::new();
    for p in index.phases().iter().filter(|p| p.phase().pieces() == pieces) {
        let (c, e) =
            CompactPhase::load(dir, geom, p.phase(), p.len())?.ok_or_else(|| missing_group(dir, index, pieces))?;
        full.push(c);
        elided.push(e);
    }
    if let Some(r) = resolved {
        for (c, e) in full.iter_mut().zip(elided.iter_mut()) {
            if *e && c.take_resolved(r, reporter)? {
                *e = false;
            }
        }
    }
    if elided.iter().any(|&e| e) {
        resolve_group(dir, geom, index, &mut full, &elided, lower, reporter)?;
        if let Some(r) = resolved {
            // Kept to save time later: a file that cannot be written (a full disk) is a
            // note, not the end of the walk that resolved it.
            for (c, _) in full.iter().zip(&elided).filter(|(_, e)| **e) {
                if let Err(e) = r.write(c.phase, &c.words, reporter) {
                    reporter.note(&format!("the resolved records of {} are not kept: {e}", c.phase));
                }
            }
        }
    }
    Ok(full)
}

/// The base values as stored of the group with `pieces` pieces (none for `None`).
fn stored_group_base(
    dir: &Path,
    geom: &Geometry,
    index: &GameIndex,
    pieces: Option<u32>,
) -> Result<Vec<(Phase, Vec<Val>)>, Error> {
    let Some(n) = pieces else { return Ok(Vec::new()) };
    let mut out = Vec::new();
    for p in index.phases().iter().filter(|p| p.phase().pieces() == n) {
        let base = stored_base(dir, geom, p.phase(), p.len())?.ok_or_else(|| missing_group(dir, index, n))?;
        out.push((p.phase(), base));
    }
    Ok(out)
}

/// The piece count of the group one piece smaller than `pieces`, if `index` has it.
fn group_below(index: &GameIndex, pieces: u32) -> Option<u32> {
    pieces.checked_sub(1).filter(|&m| index.phases().iter().any(|p| p.phase().pieces() == m))
}

/// The error for a group not in the database.
fn missing_group(dir: &Path, index: &GameIndex, pieces: u32) -> Error {
    Error::MissingDatabase {
        path: dir.to_path_buf(),
        phase: index
            .phases()
            .iter()
            .filter(|p| p.phase().pieces() == pieces)
            .map(|p| p.phase().to_string())
            .collect::<Vec<_>>()
            .join("+"),
        max_pieces: pieces,
    }
}

/// Positions resolved per batch (computed in parallel, then written back).
const BATCH: u64 = 1 << 20;

/// Resolve, in place, every elided loss of the phases of `full` whose `elided` flag is
/// set; `lower` holds the base values (as stored) of the phases one piece smaller.
/// Returns the records resolved. `dir` names the files in errors; `reporter` gets a step
/// per phase.
pub fn resolve_group<P: HeldPhase>(
    dir: &Path,
    geom: &Geometry,
    index: &GameIndex,
    full: &mut [P],
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
            let updates: Vec<(u64, Packed)> = {
                let src = GroupRecords { index, full: &*full, lower };
                let held = &full[k];
                p.par_positions(lo..hi)
                    .filter(|(i, _)| held.packed(*i).needs_resolving())
                    .map(|(i, pos)| resolve_record(geom, &src, &pos, held.packed(i), &file).map(|r| (i, r)))
                    .collect::<Result<_, Error>>()?
            };
            resolved += updates.len() as u64;
            for (i, r) in updates {
                if !full[k].set(i, r) {
                    return Err(Error::Corrupt {
                        path: file.clone(),
                        reason: format!("position {i} of {ph} resolves to a distance above 255 plies"),
                    });
                }
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

/// The exact base values of every phase with `pieces` pieces (2 bytes per position), in
/// the order of `index`; `Ok(None)` when one of them is in neither form. Files that elide
/// loss distances are resolved through the group held as [`CompactPhase`]s (4 bytes per
/// position) and the stored base values of the group below, never the 8-byte records.
pub fn load_group_base(
    dir: &Path,
    geom: &Geometry,
    index: &GameIndex,
    pieces: u32,
    resolved: Option<&ResolvedDir>,
    reporter: &dyn Reporter,
) -> Result<Option<GroupBase>, Error> {
    let data = crate::store::directory::current_data_dir(dir)?;
    let members: Vec<_> = index.phases().iter().filter(|p| p.phase().pieces() == pieces).collect();
    let mut elided = false;
    for p in &members {
        let ph = p.phase();
        if data.join(values::file_name(ph)).is_file() {
            elided |= ValueFile::open(&data, geom, ph, p.len())?.elides_losses();
        } else if !phasefile::phase_file(dir, ph).is_file() {
            return Ok(None);
        }
    }
    if !elided {
        let mut out = Vec::new();
        for p in &members {
            let base = stored_base(dir, geom, p.phase(), p.len())?.ok_or_else(|| missing_group(dir, index, pieces))?;
            out.push((p.phase(), base));
        }
        return Ok(Some(out));
    }
    // Resolving elided losses reads won children only: the base values of the group
    // below as stored serve.
    let stored = stored_group_base(dir, geom, index, group_below(index, pieces))?;
    let group = load_compact(dir, geom, index, pieces, &stored, resolved, reporter)?;
    drop(stored);
    Ok(Some(group.into_iter().map(|c| (c.phase, c.base_vals())).collect()))
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::ELIDED_LOSS;
    use crate::record::value::{loss, win};

    #[test]
    fn compact_records_hold_every_record_up_to_255_plies_exactly_and_refuse_longer() {
        let mut c = CompactPhase { phase: Phase::new(4, 4), words: vec![0; 4] };
        let records = [
            Packed::new(win(147), 0, 0),
            Packed::new(loss(255), 31, win(255)),
            Packed::new(ELIDED_LOSS, 7, ELIDED_LOSS),
            Packed::new(win(1), 5, 0),
            Packed::new(0, 0, 0),
            Packed::new(win(3), 1, loss(2)),
        ];
        for r in records {
            assert!(c.set(2, r));
            assert_eq!(c.packed(2), r, "{r:?}");
            assert_eq!(c.packed(2).record(), r.record());
        }
        assert!(!c.set(1, Packed::new(win(256), 0, 0)));
        assert!(!c.set(1, Packed::new(win(2), 3, loss(256))));
        assert_eq!(c.packed(1), Packed(0), "a refused record leaves the old one");
        assert_eq!(c.base_vals(), vec![0, 0, win(3), 0]);
    }
}
