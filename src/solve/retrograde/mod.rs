//! Retrograde analysis, phase group by phase group, with one 32-bit state per position.
//!
//! # The model
//!
//! A node is a canonical position `P` and a forbidden index `j` (0: nothing forbidden).
//! Its value is the best option over every move of `P` except move `j`. Forbidden indices
//! only ever name moves that remove nothing, so captures and suicides are always
//! available. The key fact: the value of `(P, j)` equals the value of `(P, 0)` unless move
//! `j` is the *unique* best move of `P`. So a position has a **generic** value (every node
//! whose forbidden move is not special) and at most one **special** move `s` whose node
//! `(P, s)` has its own value.
//!
//! # The algorithm
//!
//! Level-synchronous retrograde analysis with counters. Values are decided in increasing
//! order of distance. At level `d` the decisions of distance `d` are propagated to the
//! predecessors:
//!
//! * a child node decided `Loss(d)` gives each parent move leading to it a winning option:
//!   the parent's generic value becomes `Win(d+1)` with that move as the special one; a
//!   second winning move (at any later level) decides the special node too.
//! * a child node decided `Win(d)` removes one move from the parent's count `U` of moves
//!   not yet known to lose (an XOR of their indices tracks which one is left): at `U = 1`
//!   the node forbidding the last move is lost, at `U = 0` every node is.
//!
//! Options through a capture or a suicide lead to finished smaller phases (or end the
//! game); they are summarised once per position when the group starts. Nothing is
//! decided twice and every edge is visited at most twice (once per value class of the
//! child), so a phase costs a small constant number of passes over its edges instead of
//! one full sweep per distance.
//!
//! # Symmetry
//!
//! Predecessors are found by unmoves of the canonical child, in the child's frame. A
//! predecessor with a trivial stabiliser maps each unmove to exactly one of its moves;
//! a child fixed by a symmetry yields the same parent move once per stabiliser element,
//! so only the unmove with the smallest predecessor code among those images is kept. A
//! parent fixed by a symmetry has several moves leading to images of the same child;
//! for it the moves are found by playing all of its moves (rare: under 1% of positions).

use crate::store::directory::WriteLock;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};

use rayon::prelude::*;

use crate::error::Error;
use crate::game::forbidden::forbidding_predecessors;
use crate::game::moves::{MAX_MOVES, Removal, is_immediate_win, move_index, moves, play, transform_move, unmoves};
use crate::game::symmetry::canonical_code;
use crate::game::{Geometry, Phase, Position};
use crate::index::{GameIndex, PhaseIndex};
use crate::probe::RecordSource;
use crate::progress::{Reporter, Silent};
use crate::record::value::{loss, tally, val_outcome, win};
use crate::record::{Outcome, Packed, PhaseValues, Record, Val};
use crate::solve::checkpoint::{self, ChunkQueue};
use crate::working::phasefile;

/// Settings of a solve.
#[derive(Clone)]
pub struct SolveOptions {
    /// Receives progress.
    pub reporter: Arc<dyn Reporter>,
    /// Where finished phases are written and found again (`None`: memory only).
    pub dir: Option<std::path::PathBuf>,
    /// Inside a phase group, write a checkpoint of the working state at the first level
    /// boundary after this much time since the last one (`None`: only finished phases are
    /// saved). Needs `dir`.
    pub checkpoint_every: Option<std::time::Duration>,
    /// When set (by another thread, a signal handler, a test), the solve writes a
    /// checkpoint at the next level boundary (if `dir` is set) and returns
    /// [`Error::Interrupted`].
    pub stop: Option<Arc<std::sync::atomic::AtomicBool>>,
}

impl Default for SolveOptions {
    fn default() -> SolveOptions {
        SolveOptions { reporter: Arc::new(Silent), dir: None, checkpoint_every: None, stop: None }
    }
}

impl std::fmt::Debug for SolveOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SolveOptions").finish_non_exhaustive()
    }
}

mod init;
mod log;
mod propagate;
mod state;

use init::*;
use log::*;
use propagate::*;
use state::*;
#[cfg(test)]
mod tests;

/// The solved game: the index and the finished values of every phase.
#[derive(Clone, Debug)]
pub struct Solution {
    geom: Geometry,
    index: GameIndex,
    phases: Vec<PhaseValues>,
}

impl Solution {
    /// The value of node `(canonical, j)`; `canonical` must be a canonical position of a
    /// solved phase and `j` its forbidden index: 0, or a move that removes nothing (a
    /// move that removes a piece can never undo the opponent's move, so no node forbids one).
    /// A node that does not exist (no predecessor forbids move `j`) has the value of
    /// nothing forbidden: no game asks for it, and the solver keeps no value for it.
    pub fn node(&self, canonical: &Position, j: usize) -> Outcome {
        let ph = canonical.phase();
        let idx = self.index.phase(ph).expect("a solved phase").index_of(canonical);
        self.phase(ph).expect("a solved phase").node(idx, j)
    }

    /// The values of one phase.
    pub fn phase(&self, phase: Phase) -> Option<&PhaseValues> {
        self.phases.iter().find(|p| p.phase() == phase)
    }

    /// All phases, in solving order.
    pub fn phases(&self) -> &[PhaseValues] {
        &self.phases
    }

    /// The position index.
    pub fn index(&self) -> &GameIndex {
        &self.index
    }

    /// The geometry.
    pub fn geometry(&self) -> &Geometry {
        &self.geom
    }

    /// Load a solved database directory: every phase with at most `max_pieces` pieces,
    /// each file fully read and its checksum checked.
    pub fn load(dir: &std::path::Path, geom: &Geometry, max_pieces: u32) -> Result<Solution, Error> {
        let index = GameIndex::build(geom, max_pieces)?;
        let mut phases = Vec::new();
        let totals = index.group_pieces();
        for total in totals {
            match crate::working::group::load_group(dir, geom, &index, total, &Silent)? {
                Some(v) => phases.extend(v),
                None => {
                    let p = index.phases().iter().find(|p| p.phase().pieces() == total).expect("a phase of the total");
                    return Err(Error::MissingDatabase {
                        path: dir.to_path_buf(),
                        phase: p.phase().to_string(),
                        max_pieces: total,
                    });
                }
            }
        }
        Ok(Solution { geom: geom.clone(), index, phases })
    }

    /// Assemble from parts (phases in solving order).
    pub fn from_parts(geom: Geometry, index: GameIndex, phases: Vec<PhaseValues>) -> Solution {
        Solution { geom, index, phases }
    }
}

impl RecordSource for Solution {
    fn index(&self) -> &GameIndex {
        &self.index
    }
    fn record(&self, phase: Phase, idx: u64) -> Result<Record, Error> {
        let p = self
            .phase(phase)
            .ok_or_else(|| Error::InvalidArgument(format!("phase {phase} is not in this solution")))?;
        Ok(p.record(idx))
    }
}

// ---------------------------------------------------------------------------------------
// Groups: the phases solved together (same number of pieces; they feed each other).

struct Group<'a> {
    phases: Vec<&'a PhaseIndex>,
    offsets: Vec<u64>,
}

impl<'a> Group<'a> {
    fn new(phases: Vec<&'a PhaseIndex>) -> Group<'a> {
        let mut offsets = vec![0];
        for p in &phases {
            offsets.push(offsets.last().copied().unwrap_or(0) + p.len());
        }
        Group { phases, offsets }
    }

    fn len(&self) -> u64 {
        self.offsets[self.phases.len()]
    }

    #[inline]
    fn slot_of(&self, phase: Phase) -> usize {
        self.phases.iter().position(|p| p.phase() == phase).expect("phase in group")
    }

    #[inline]
    fn split(&self, g: u64) -> (usize, u64) {
        let slot = if self.phases.len() == 1 || g < self.offsets[1] { 0 } else { 1 };
        (slot, g - self.offsets[slot])
    }

    #[inline]
    fn position(&self, g: u64) -> Position {
        let (slot, local) = self.split(g);
        self.phases[slot].position_at(local)
    }

    /// The positions with global indices `range`, in order (see [`PhaseIndex::positions`]).
    fn positions(&self, range: std::ops::Range<u64>) -> impl Iterator<Item = Position> + '_ {
        self.phases.iter().enumerate().flat_map(move |(slot, p)| {
            let (a, b) = (self.offsets[slot], self.offsets[slot + 1]);
            let (lo, hi) = (range.start.clamp(a, b), range.end.clamp(a, b));
            p.positions(lo - a..hi - a)
        })
    }
}

/// Solve every phase with at most `max_pieces` pieces, smallest first, keeping every
/// phase in memory (for small boards and tests; see [`solve_into`] for the real game).
pub fn solve(geom: &Geometry, max_pieces: u32, opts: &SolveOptions) -> Result<Solution, Error> {
    let index = GameIndex::build(geom, max_pieces)?;
    let mut phases = Vec::new();
    solve_phases(geom, &index, opts, true, |_, v| {
        phases.extend(v);
        Ok(())
    })?;
    Ok(Solution { geom: geom.clone(), index, phases })
}

/// What a solve reports of each finished phase: its positions by base value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PhaseCounts {
    /// The phase.
    pub phase: Phase,
    /// Its positions.
    pub positions: u64,
    /// Positions won, lost and drawn (nothing forbidden).
    pub win: u64,
    /// See `win`.
    pub loss: u64,
    /// See `win`.
    pub draw: u64,
}

impl PhaseCounts {
    fn new(phase: Phase) -> PhaseCounts {
        PhaseCounts { phase, positions: 0, win: 0, loss: 0, draw: 0 }
    }

    /// Count base values.
    fn add(&mut self, base: &[Val]) {
        let (w, l, d) = base
            .par_chunks(1 << 16)
            .map(|c| tally(c.iter().copied()))
            .reduce(|| (0, 0, 0), |a, b| (a.0 + b.0, a.1 + b.1, a.2 + b.2));
        self.positions += base.len() as u64;
        (self.win, self.loss, self.draw) = (self.win + w, self.loss + l, self.draw + d);
    }
}

/// Solve every phase with at most `max_pieces` pieces, handing the counts of each
/// finished phase to `sink`. Phases found in `opts.dir` are loaded instead of solved;
/// phases solved are written there, made from the working state block by block as they
/// are written. Nothing keeps a whole phase's records: later phases only keep the
/// generic values of the group just below (2 bytes per position), so memory is bounded
/// by the largest phase group's working state (4 bytes per position; see
/// ARCHITECTURE.md, "Memory budget").
pub fn solve_into(
    geom: &Geometry,
    max_pieces: u32,
    opts: &SolveOptions,
    mut sink: impl FnMut(PhaseCounts) -> Result<(), Error>,
) -> Result<GameIndex, Error> {
    let index = GameIndex::build(geom, max_pieces)?;
    // The solver writes phase files and checkpoints into the database directory.
    let _lock = opts.dir.as_deref().map(|d| WriteLock::acquire(d, "ostledb solve")).transpose()?;
    solve_phases(geom, &index, opts, false, |c, _| sink(c))?;
    Ok(index)
}

/// The generic values of a finished phase, all a later phase needs of it.
pub(crate) struct Finished {
    phase: Phase,
    base: Vec<Val>,
}

/// A finished phase as a group hands it on: its counts, its generic values when a later
/// group needs them, all its records when the caller keeps them.
struct Solved {
    counts: PhaseCounts,
    base: Option<Vec<Val>>,
    values: Option<PhaseValues>,
}

impl Solved {
    fn of(v: PhaseValues, need_base: bool, keep: bool) -> Solved {
        let base: Vec<Val> = v.raw().par_iter().map(|&r| Packed(r).base()).collect();
        let mut counts = PhaseCounts::new(v.phase());
        counts.add(&base);
        Solved { counts, base: need_base.then_some(base), values: keep.then_some(v) }
    }
}

/// The phases of group `total` finished earlier in `dir` (`None` unless every one is):
/// whole when `keep`, else only their generic values (2 bytes per position).
fn load_finished(
    dir: &std::path::Path,
    geom: &Geometry,
    index: &GameIndex,
    total: u32,
    opts: &SolveOptions,
    keep: bool,
    need_base: bool,
) -> Result<Option<Vec<Solved>>, Error> {
    let members: Vec<&PhaseIndex> = index.phases().iter().filter(|p| p.phase().pieces() == total).collect();
    if keep {
        let Some(values) = crate::working::group::load_group(dir, geom, index, total, opts.reporter.as_ref())? else {
            return Ok(None);
        };
        return Ok((values.len() == members.len())
            .then(|| values.into_iter().map(|v| Solved::of(v, need_base, true)).collect()));
    }
    let Some(bases) = crate::working::group::load_group_base(dir, geom, index, total, None, opts.reporter.as_ref())?
    else {
        return Ok(None);
    };
    Ok(Some(
        bases
            .into_iter()
            .map(|(phase, base)| {
                let mut counts = PhaseCounts::new(phase);
                counts.add(&base);
                Solved { counts, base: need_base.then_some(base), values: None }
            })
            .collect(),
    ))
}

/// Solve (or load) every group in order; `sink` gets each phase's counts, and its
/// records when `keep`.
fn solve_phases(
    geom: &Geometry,
    index: &GameIndex,
    opts: &SolveOptions,
    keep: bool,
    mut sink: impl FnMut(PhaseCounts, Option<PhaseValues>) -> Result<(), Error>,
) -> Result<(), Error> {
    // Captures and suicides remove one piece: only the group just below is read.
    let mut done: Vec<Finished> = Vec::new();
    let totals = index.group_pieces();
    let last = totals.last().copied();
    for total in totals {
        let members: Vec<&PhaseIndex> = index.phases().iter().filter(|p| p.phase().pieces() == total).collect();
        let need_base = Some(total) != last;
        let mut found = None;
        if let Some(dir) = &opts.dir {
            found = load_finished(dir, geom, index, total, opts, keep, need_base)?;
            if found.is_some() {
                let names: Vec<String> = members.iter().map(|p| p.phase().to_string()).collect();
                opts.reporter.note(&format!("{}: finished earlier, loaded from {}", names.join("+"), dir.display()));
            }
        }
        let solved = match found {
            Some(s) => s,
            None => {
                let phases: Vec<Phase> = members.iter().map(|p| p.phase()).collect();
                let r = solve_group(geom, index, Group::new(members), std::mem::take(&mut done), opts, keep, need_base);
                // A log no checkpoint counts (a group failed before its first one) is of no
                // use: the group starts over.
                if let (Err(_), Some(dir)) = (&r, &opts.dir)
                    && !checkpoint::group_file(dir, &phases).exists()
                {
                    let _ = EventLog::remove(&log_file(dir, &phases));
                }
                r?
            }
        };
        done.clear();
        for s in solved {
            if let Some(base) = s.base {
                done.push(Finished { phase: s.counts.phase, base });
            }
            sink(s.counts, s.values)?;
        }
    }
    Ok(())
}

/// The generic value code of a position of a finished phase (where it is kept).
fn finished_value<'a>(index: &GameIndex, done: &'a [Finished], child: &Position) -> &'a Val {
    let ph = child.phase();
    let idx = index.phase(ph).expect("finished phase indexed").index_of(child);
    let vals = done.iter().find(|v| v.phase == ph).expect("finished phase solved");
    &vals.base[idx as usize]
}

/// Events of one distance: `global index << 1 | class` (a group has under 2^31 positions).
type Bucket = Vec<u32>;

#[inline]
fn event(g: u64, class: u32) -> u32 {
    debug_assert!(g < 1 << 31);
    (g << 1) as u32 | class
}

fn push_event(buckets: &mut Vec<Bucket>, d: u32, e: u32) {
    let d = d as usize;
    if buckets.len() <= d {
        buckets.resize_with(d + 1, Vec::new);
    }
    buckets[d].push(e);
}

/// Disk a group's solve writes into its directory, per position, at most at once: the
/// phase value files (8 bytes), the checkpoint (the 4-byte states and the init queues,
/// 5.4 bytes measured on (5,5)) and the event log (6.0 bytes on (5,5)); the last two
/// are removed when the group is done.
const DISK_BYTES_PER_POSITION: u64 = 20;

/// Say before a group starts how much disk it will need in `dir`, and warn (the command
/// line shows it even when quiet) when less is free: a full disk stops it only at the
/// records, after the levels (it then resumes from its checkpoint once space is freed).
fn check_free_disk(dir: &std::path::Path, n: u64, label: &str, rep: &dyn crate::progress::Reporter) {
    let need = n.saturating_mul(DISK_BYTES_PER_POSITION);
    let Some(free) = crate::sys::free_disk_bytes(dir) else { return };
    let gb = |b: u64| b as f64 / 1e9;
    rep.note(&format!(
        "{label}: needs about {:.1} GB of disk in {} ({:.1} GB free)",
        gb(need),
        dir.display(),
        gb(free)
    ));
    if free < need {
        rep.warn(&format!(
            "{label} will write about {:.1} GB into {} (its phase files, checkpoint and event log) \
             but only {:.1} GB is free there; free space or solve into another directory (--db). A solve stopped \
             by a full disk resumes from its last checkpoint",
            gb(need),
            dir.display(),
            gb(free)
        ));
    }
}

#[allow(clippy::too_many_arguments)]
fn solve_group(
    geom: &Geometry,
    index: &GameIndex,
    group: Group<'_>,
    done: Vec<Finished>,
    opts: &SolveOptions,
    keep: bool,
    need_base: bool,
) -> Result<Vec<Solved>, Error> {
    let rep = &*opts.reporter;
    let n = group.len();
    let label: Vec<String> = group.phases.iter().map(|p| p.phase().to_string()).collect();
    let label = label.join("+");
    let phases: Vec<Phase> = group.phases.iter().map(|p| p.phase()).collect();
    let log_path = opts.dir.as_deref().map(|d| log_file(d, &phases));
    let resumed = match &opts.dir {
        Some(dir) => checkpoint::load(dir, geom, &phases, CHUNK, n)?,
        None => None,
    };
    let (states, mut queues, last, mut buckets, mut d, mut log, before) = match resumed {
        Some(r) => {
            rep.note(&format!(
                "{label}: resumed from its checkpoint at level {}; {}",
                r.level,
                crate::sys::rss_summary()
            ));
            let path = log_path.as_deref().expect("a checkpoint is read from a directory");
            let log = EventLog::resume(path, r.log_ends)?;
            (into_atomic(r.states), r.queues, r.last as usize, r.buckets, r.level as usize, log, Some(r.advanced))
        }
        None => {
            if let Some(dir) = &opts.dir {
                check_free_disk(dir, n, &label, rep);
            }
            let (states, queues, last) = init_group(geom, index, &group, &done, rep, &label);
            let log = match &log_path {
                Some(path) => EventLog::create(path)?,
                None => EventLog::memory(),
            };
            (states, queues, last, Vec::new(), 0, log, None)
        }
    };
    // Only init reads the group below.
    drop(done);
    crate::sys::release_free_memory();
    let mut saved = std::time::Instant::now();

    // 2. Levels: at level d, first the wins through a capture at distance d (they come
    // before any propagation of level d, which only decides distances above d), then every
    // decision of distance d is propagated, and logged: its distance is the level.
    // A resumed group's bar goes on from where its checkpoint counted.
    rep.begin(&format!("{label} retrograde"), n);
    let mut advanced = before.unwrap_or(0);
    if before.is_some() {
        rep.advance(advanced);
    }
    while d <= last || d < buckets.len() {
        let level = d as u32;
        if d <= last {
            let new: Vec<Vec<Bucket>> = queues
                .par_iter_mut()
                .enumerate()
                .with_min_len(64)
                .fold(Vec::new, |mut out, (c, q)| {
                    let lo = (c * CHUNK) as u64;
                    while let Some(&k) = q.ext.get(q.next.1 as usize) {
                        let g = lo + k as u64;
                        if apply_capture_win(&states[g as usize], g, level, &mut out) {
                            q.next.1 += 1;
                        } else {
                            break;
                        }
                    }
                    out
                })
                .collect();
            append_buckets(&mut buckets, new);
        }
        let mut decided_gen = 0u64;
        let mut n_events = 0usize;
        let mut new: Vec<Vec<Bucket>> = Vec::new();
        if d <= last {
            // Decisions made at init, from the chunk queues.
            let part: Vec<(Vec<Bucket>, Vec<u32>, u64)> = queues
                .par_iter_mut()
                .enumerate()
                .with_min_len(64)
                .fold(
                    || (Vec::new(), Vec::new(), 0u64, Scratch::default()),
                    |(mut out, mut logged, mut gen_count, mut scratch), (c, q)| {
                        let lo = (c * CHUNK) as u64;
                        let at = q.next.0;
                        // The run of entries of this distance, if the next entry has it.
                        let end = q.runs.iter().find(|r| r.1 > at).filter(|r| r.0 == level).map_or(at, |r| r.1);
                        for &e in &q.decided[at as usize..end as usize] {
                            let (g, class) = (lo + (e >> 1) as u64, (e & 1) as u32);
                            gen_count += u64::from(class == GEN);
                            logged.push(event(g, class));
                            scratch.propagate(geom, &group, &states, g, class, level, &mut out);
                        }
                        q.next.0 = end;
                        (out, logged, gen_count, scratch)
                    },
                )
                .map(|(out, logged, gen_count, _)| (out, logged, gen_count))
                .collect();
            for (out, logged, gen_count) in part {
                new.push(out);
                log.append(&logged)?;
                decided_gen += gen_count;
                n_events += logged.len();
            }
        }
        if d < buckets.len() {
            let events = std::mem::take(&mut buckets[d]);
            log.append(&events)?;
            decided_gen += events.iter().filter(|&&e| e & 1 == GEN).count() as u64;
            n_events += events.len();
            new.extend(
                events
                    .par_chunks(1024)
                    .fold(
                        || (Vec::new(), Scratch::default()),
                        |(mut out, mut scratch), chunk| {
                            for (k, &e) in chunk.iter().enumerate() {
                                // Events come in no order: ask early for a later one's state.
                                if let Some(&ahead) = chunk.get(k + 8) {
                                    crate::sys::prefetch(&states[(ahead >> 1) as usize]);
                                }
                                let (g, class) = ((e >> 1) as u64, e & 1);
                                scratch.propagate(geom, &group, &states, g, class, level, &mut out);
                            }
                            (out, scratch)
                        },
                    )
                    .map(|(out, _)| out)
                    .collect::<Vec<_>>(),
            );
        }
        log.end_level(d);
        if n_events > 0 && level > MAX_DIST {
            return Err(Error::InvalidArgument(format!(
                "{label}: a decision at distance {level}, above the {MAX_DIST} plies the solver stores"
            )));
        }
        let n_new: usize = new.iter().flatten().map(|b| b.len()).sum();
        append_buckets(&mut buckets, new);
        if n_events >= 1 << 20 {
            crate::sys::release_free_memory();
            rep.note(&format!(
                "{label} level {d}: {n_events} decisions propagated, {n_new} new; {}",
                crate::sys::rss_summary()
            ));
        }
        d += 1;
        let more = d <= last || d < buckets.len();
        // After the last level the positions no level decided (the draws, and the wins
        // decided at init) are settled too: the bar ends full, so that only a step
        // stopped early reads "X of Y done".
        advanced += decided_gen;
        rep.advance(if more { decided_gen } else { decided_gen + n.saturating_sub(advanced) });
        let stop = opts.stop.as_ref().is_some_and(|s| s.load(Ordering::Relaxed));
        if let Some(dir) = &opts.dir
            && more
            && (stop || opts.checkpoint_every.is_some_and(|t| saved.elapsed() >= t))
        {
            let t = std::time::Instant::now();
            log.sync()?;
            let path = checkpoint::save(
                dir,
                geom,
                &phases,
                CHUNK,
                d as u32,
                last as u32,
                &states,
                &queues,
                &buckets,
                log.ends(),
                advanced,
            )?;
            rep.note(&format!("{label}: checkpoint at level {d} written to {} in {:.1?}", path.display(), t.elapsed()));
            saved = std::time::Instant::now();
        }
        if stop && more {
            rep.end();
            return Err(Error::Interrupted { group: label, level: d as u32, saved: opts.dir.is_some() });
        }
    }
    rep.end();
    drop(queues);
    drop(buckets);
    finish_group(geom, &group, states, log, log_path.as_deref(), opts, keep, need_base, &label)
}

/// Step 3 of a group: the distances written back into the states from the log, then the
/// records made block by block: written to the phase files (with a directory), counted,
/// and kept as the caller asks. Then the checkpoint and the log are removed.
#[allow(clippy::too_many_arguments)]
fn finish_group(
    geom: &Geometry,
    group: &Group<'_>,
    states: Vec<AtomicU32>,
    log: EventLog,
    log_path: Option<&std::path::Path>,
    opts: &SolveOptions,
    keep: bool,
    need_base: bool,
    label: &str,
) -> Result<Vec<Solved>, Error> {
    let t = std::time::Instant::now();
    states
        .par_iter()
        .with_min_len(1 << 16)
        .for_each(|c| c.store(finished(c.load(Ordering::Relaxed)), Ordering::Relaxed));
    let twice = AtomicBool::new(false);
    log.replay(|d, events| {
        events.par_iter().with_min_len(1 << 12).for_each(|&e| {
            let (g, class) = ((e >> 1) as usize, e & 1);
            if was_logged(states[g].fetch_or(logged(class, d), Ordering::Relaxed), class) {
                twice.store(true, Ordering::Relaxed);
            }
        });
        Ok(())
    })?;
    let damaged = |what: &str| match log_path {
        Some(p) => Error::Corrupt { path: p.to_path_buf(), reason: format!("{label}: {what}") },
        None => Error::InvalidArgument(format!("{label}: the event log {what}")),
    };
    if twice.load(Ordering::Relaxed) {
        return Err(damaged("holds a decision twice"));
    }
    let mut out = Vec::new();
    for (slot, p) in group.phases.iter().enumerate() {
        let (off, len) = (group.offsets[slot] as usize, p.len());
        let mut counts = PhaseCounts::new(p.phase());
        let mut base: Vec<Val> = Vec::new();
        let mut kept: Vec<u64> = Vec::new();
        let mut fill = |start: u64, buf: &mut [u64]| -> Result<(), Error> {
            let from = &states[off + start as usize..off + start as usize + buf.len()];
            let ok = buf
                .par_iter_mut()
                .zip(from)
                .with_min_len(1 << 12)
                .map(|(r, c)| match record(c.load(Ordering::Relaxed)) {
                    Some(v) => {
                        *r = v;
                        true
                    }
                    None => false,
                })
                .all(|b| b);
            if !ok {
                return Err(damaged("misses the distance of a decided node"));
            }
            let b: Vec<Val> = buf.par_iter().map(|&r| Packed(r).base()).collect();
            counts.add(&b);
            if need_base {
                base.extend_from_slice(&b);
            }
            if keep {
                kept.extend_from_slice(buf);
            }
            Ok(())
        };
        match &opts.dir {
            Some(dir) => {
                phasefile::save_with(dir, geom, p.phase(), len, phasefile::SPECIALS_PRUNED, &mut fill)?;
            }
            None => phasefile::make_blocks(len, &mut fill, |_| Ok(()))?,
        }
        out.push(Solved {
            counts,
            base: need_base.then_some(base),
            values: keep.then(|| PhaseValues::from_raw(p.phase(), kept)),
        });
    }
    drop(states);
    if let Some(dir) = &opts.dir {
        let phases: Vec<Phase> = group.phases.iter().map(|p| p.phase()).collect();
        checkpoint::remove(dir, &phases)?;
        if let Some(path) = log_path {
            EventLog::remove(path)?;
        }
    }
    opts.reporter.note(&format!(
        "{label}: every position decided, records made in {:.1?}; {}",
        t.elapsed(),
        crate::sys::rss_summary()
    ));
    Ok(out)
}
