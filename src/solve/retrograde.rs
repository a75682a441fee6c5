//! Retrograde analysis, phase group by phase group, with one 64-bit state per position.
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

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use rayon::prelude::*;

use crate::error::Error;
use crate::game::moves::{Removal, is_immediate_win, move_index, moves, play, transform_move, unmoves};
use crate::game::symmetry::canonical_code;
use crate::game::{Geometry, Phase, Position};
use crate::index::{GameIndex, PhaseIndex};
use crate::solve::checkpoint;
use crate::solve::groupfile::{self, ChunkQueue};
use crate::solve::outcome::Outcome;
use crate::solve::progress::{Reporter, Silent};

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

// ---------------------------------------------------------------------------------------
// Values: a 16-bit code, 0 = undecided (in the working state) or draw (once finished),
// 2n = Win(n), 2n + 1 = Loss(n).

/// A value in 16 bits: 0 draw/undecided, `2n` win in `n`, `2n + 1` loss in `n`.
pub type Val = u16;

#[inline]
fn win(n: u32) -> Val {
    debug_assert!(n < 1 << 15);
    (2 * n) as Val
}

#[inline]
fn loss(n: u32) -> Val {
    debug_assert!(n < 1 << 15);
    (2 * n + 1) as Val
}

/// The [`Outcome`] of a finished value.
#[inline]
pub fn val_outcome(v: Val) -> Outcome {
    match v {
        0 => Outcome::Draw,
        v if v & 1 == 0 => Outcome::Win(v as u32 / 2),
        v => Outcome::Loss(v as u32 / 2),
    }
}

/// The 16-bit code of an outcome.
#[inline]
pub fn outcome_val(o: Outcome) -> Val {
    match o {
        Outcome::Draw => 0,
        Outcome::Win(n) => win(n),
        Outcome::Loss(n) => loss(n),
    }
}

#[inline]
fn dist(v: Val) -> u32 {
    v as u32 / 2
}

// ---------------------------------------------------------------------------------------
// The working state of a position, packed in a u64.

const U_SHIFT: u32 = 0; // moves not yet known to lose (5 bits)
const X_SHIFT: u32 = 5; // XOR of their indices (5 bits)
const S_SHIFT: u32 = 10; // special move index, 0 = none (5 bits)
const CAN_LOSE: u64 = 1 << 15; // no capture or draw option outside the group
const GEN_SHIFT: u32 = 16;
const SPC_SHIFT: u32 = 32;
// Options outside the group: with CAN_LOSE, the longest loss among them; without, the
// shortest win among them (0: none, the position has a draw outside instead).
const OUTSIDE_SHIFT: u32 = 48;

#[derive(Clone, Copy)]
struct State(u64);

impl State {
    #[inline]
    fn u(self) -> u32 {
        (self.0 >> U_SHIFT) as u32 & 31
    }
    #[inline]
    fn x(self) -> u32 {
        (self.0 >> X_SHIFT) as u32 & 31
    }
    #[inline]
    fn s(self) -> u32 {
        (self.0 >> S_SHIFT) as u32 & 31
    }
    #[inline]
    fn can_lose(self) -> bool {
        self.0 & CAN_LOSE != 0
    }
    #[inline]
    fn gen_val(self) -> Val {
        (self.0 >> GEN_SHIFT) as Val
    }
    #[inline]
    fn spc(self) -> Val {
        (self.0 >> SPC_SHIFT) as Val
    }
    #[inline]
    fn extlose(self) -> u32 {
        debug_assert!(self.can_lose());
        (self.0 >> OUTSIDE_SHIFT) as u32
    }
    #[inline]
    fn ext_win(self) -> u32 {
        debug_assert!(!self.can_lose());
        (self.0 >> OUTSIDE_SHIFT) as u32
    }
    #[inline]
    fn with_ux(self, u: u32, x: u32) -> State {
        State(self.0 & !(0x3ff << U_SHIFT) | (u as u64) << U_SHIFT | (x as u64) << X_SHIFT)
    }
    #[inline]
    fn with_s(self, s: u32) -> State {
        State(self.0 & !(31 << S_SHIFT) | (s as u64) << S_SHIFT)
    }
    #[inline]
    fn with_gen(self, v: Val) -> State {
        State(self.0 & !(0xffff << GEN_SHIFT) | (v as u64) << GEN_SHIFT)
    }
    #[inline]
    fn with_spc(self, v: Val) -> State {
        State(self.0 & !(0xffff << SPC_SHIFT) | (v as u64) << SPC_SHIFT)
    }
}

/// Which value class of a position an event propagates.
const GEN: u32 = 0;
const SPC: u32 = 1;

/// Decisions one update made: up to two `(class, distance)`.
type Emits = [Option<(u32, u32)>; 2];

/// A move of the position whose child node was just decided `Loss` at distance `level - 1`.
#[inline]
fn on_winning_move(st: State, i: u32, level: u32) -> (State, Emits) {
    let mut out: Emits = [None, None];
    if st.gen_val() == 0 {
        let s = if st.s() == 0 { i } else { st.s() };
        out[0] = Some((GEN, level));
        return (st.with_gen(win(level)).with_s(s), out);
    }
    if st.s() != 0 && st.s() != i && st.spc() == 0 {
        out[0] = Some((SPC, level));
        return (st.with_spc(win(level)), out);
    }
    (st, out)
}

/// A move of the position whose child node was just decided `Win` at distance `level - 1`.
#[inline]
fn on_losing_move(st: State, i: u32, level: u32) -> (State, Emits) {
    let mut out: Emits = [None, None];
    let (u, x) = (st.u() - 1, st.x() ^ i);
    let mut st = st.with_ux(u, x);
    if !st.can_lose() {
        return (st, out);
    }
    let d = level.max(st.extlose());
    if u == 1 {
        if st.gen_val() == 0 && st.s() == 0 {
            st = st.with_s(x).with_spc(loss(d));
            out[0] = Some((SPC, d));
        } else if st.gen_val() != 0 && st.s() == x && st.spc() == 0 {
            st = st.with_spc(loss(d));
            out[0] = Some((SPC, d));
        }
    } else if u == 0 && st.gen_val() == 0 {
        st = st.with_gen(loss(d));
        out[0] = Some((GEN, d));
        if st.s() != 0 && st.spc() == 0 {
            st = st.with_spc(loss(d));
            out[1] = Some((SPC, d));
        }
    }
    (st, out)
}

// ---------------------------------------------------------------------------------------
// Finished values.

/// The finished values of one phase: per position a generic value, and possibly a special
/// move index with its own value.
#[derive(Clone, Debug)]
pub struct PhaseValues {
    phase: Phase,
    /// Per position: bits 0..16 generic value, 16..32 special value, 32..37 special move.
    records: Vec<u64>,
}

/// The stored facts about one position.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Record {
    /// Value of every node whose forbidden move is not the special one.
    pub base: Outcome,
    /// The special move (1-based) and the value of the node that forbids it.
    pub special: Option<(u32, Outcome)>,
}

impl PhaseValues {
    /// The phase.
    pub fn phase(&self) -> Phase {
        self.phase
    }

    /// Number of positions.
    pub fn len(&self) -> u64 {
        self.records.len() as u64
    }

    /// True when empty.
    pub fn is_empty(&self) -> bool {
        self.records.is_empty()
    }

    /// The raw packed records (see the struct docs).
    pub fn raw(&self) -> &[u64] {
        &self.records
    }

    /// The packed records, to change in place.
    pub fn raw_mut(&mut self) -> &mut [u64] {
        &mut self.records
    }

    /// From raw packed records.
    pub fn from_raw(phase: Phase, records: Vec<u64>) -> PhaseValues {
        PhaseValues { phase, records }
    }

    /// The record of the position with index `idx`.
    #[inline]
    pub fn record(&self, idx: u64) -> Record {
        let r = self.records[idx as usize];
        let s = (r >> 32) as u32 & 31;
        Record { base: val_outcome(r as Val), special: (s != 0).then(|| (s, val_outcome((r >> 16) as Val))) }
    }

    /// The generic value code of a position (the value of its node without a forbidden move).
    #[inline]
    pub fn base_val(&self, idx: u64) -> Val {
        self.records[idx as usize] as Val
    }

    /// The value of node `(idx, j)`.
    #[inline]
    pub fn node(&self, idx: u64, j: usize) -> Outcome {
        let r = self.records[idx as usize];
        let s = (r >> 32) as usize & 31;
        if s != 0 && s == j { val_outcome((r >> 16) as Val) } else { val_outcome(r as Val) }
    }
}

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
    pub fn node(&self, canonical: &Position, j: usize) -> Outcome {
        let ph = canonical.phase();
        let idx = self.index.phase(ph).expect("a solved phase").index_of(canonical);
        self.phase(ph).expect("a solved phase").node(idx, j)
    }

    /// The values of one phase.
    pub fn phase(&self, phase: Phase) -> Option<&PhaseValues> {
        self.phases.iter().find(|p| p.phase == phase)
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
        let mut totals: Vec<u32> = index.phases().iter().map(|p| p.phase().pieces()).collect();
        totals.dedup();
        for total in totals {
            match crate::store::load_group(dir, geom, &index, total, &Silent)? {
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
}

/// Solve every phase with at most `max_pieces` pieces, smallest first, keeping every
/// phase in memory (for small boards and tests; see [`solve_into`] for the real game).
pub fn solve(geom: &Geometry, max_pieces: u32, opts: &SolveOptions) -> Result<Solution, Error> {
    let index = GameIndex::build(geom, max_pieces)?;
    let mut phases = Vec::new();
    solve_phases(geom, &index, opts, |v| {
        phases.push(v);
        Ok(())
    })?;
    Ok(Solution { geom: geom.clone(), index, phases })
}

/// Solve every phase with at most `max_pieces` pieces, handing each finished phase to
/// `sink` (which may drop it). Phases found in `opts.dir` are loaded instead of solved;
/// phases solved are written there. Later phases only keep the generic values of earlier
/// ones (2 bytes per position), so memory is bounded by the largest phase group.
pub fn solve_into(
    geom: &Geometry,
    max_pieces: u32,
    opts: &SolveOptions,
    sink: impl FnMut(PhaseValues) -> Result<(), Error>,
) -> Result<GameIndex, Error> {
    let index = GameIndex::build(geom, max_pieces)?;
    solve_phases(geom, &index, opts, sink)?;
    Ok(index)
}

/// The generic values of a finished phase, all a later phase needs of it.
pub(crate) struct Finished {
    phase: Phase,
    base: Vec<Val>,
}

impl Finished {
    fn of(v: &PhaseValues) -> Finished {
        Finished { phase: v.phase, base: v.records.par_iter().map(|&r| r as Val).collect() }
    }
}

fn solve_phases(
    geom: &Geometry,
    index: &GameIndex,
    opts: &SolveOptions,
    mut sink: impl FnMut(PhaseValues) -> Result<(), Error>,
) -> Result<(), Error> {
    let mut done: Vec<Finished> = Vec::new();
    let mut totals: Vec<u32> = index.phases().iter().map(|p| p.phase().pieces()).collect();
    totals.dedup();
    let last = totals.last().copied();
    for total in totals {
        let members: Vec<&PhaseIndex> = index.phases().iter().filter(|p| p.phase().pieces() == total).collect();
        let mut values = Vec::new();
        if let Some(dir) = &opts.dir {
            if let Some(v) = crate::store::load_group(dir, geom, index, total, opts.reporter.as_ref())? {
                values = v;
            }
            if !values.is_empty() && values.len() == members.len() {
                let names: Vec<String> = members.iter().map(|p| p.phase().to_string()).collect();
                opts.reporter.note(&format!("{}: finished earlier, loaded from {}", names.join("+"), dir.display()));
            } else {
                values.clear();
            }
        }
        if values.is_empty() {
            // Captures and suicides remove one piece: only the group just below is read.
            done.retain(|f| f.phase.pieces() + 1 == total);
            values = solve_group(geom, index, Group::new(members), &done, opts)?;
            if let Some(dir) = &opts.dir {
                for v in &values {
                    checkpoint::save(dir, geom, v)?;
                }
                let phases: Vec<Phase> = values.iter().map(|v| v.phase).collect();
                groupfile::remove(dir, &phases)?;
            }
        }
        for v in values {
            if Some(total) != last {
                done.push(Finished::of(&v));
            }
            sink(v)?;
        }
    }
    Ok(())
}

/// The generic value of a position of a finished phase, as an option for the parent.
fn finished_option(index: &GameIndex, done: &[Finished], child: &Position) -> Outcome {
    let ph = child.phase();
    let idx = index.phase(ph).expect("finished phase indexed").index_of(child);
    let vals = done.iter().find(|v| v.phase == ph).expect("finished phase solved");
    val_outcome(vals.base[idx as usize]).parent()
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

fn solve_group(
    geom: &Geometry,
    index: &GameIndex,
    group: Group<'_>,
    done: &[Finished],
    opts: &SolveOptions,
) -> Result<Vec<PhaseValues>, Error> {
    let rep = &*opts.reporter;
    let n = group.len();
    let label: Vec<String> = group.phases.iter().map(|p| p.phase().to_string()).collect();
    let label = label.join("+");
    let phases: Vec<Phase> = group.phases.iter().map(|p| p.phase()).collect();
    let resumed = match &opts.dir {
        Some(dir) => groupfile::load(dir, geom, &phases, CHUNK, n)?,
        None => None,
    };
    let (states, mut queues, last, mut buckets, mut d) = match resumed {
        Some(r) => {
            rep.note(&format!(
                "{label}: resumed from its checkpoint at level {}; {}",
                r.level,
                crate::sys::rss_summary()
            ));
            (into_atomic(r.states), r.queues, r.last as usize, r.buckets, r.level as usize)
        }
        None => {
            let (states, queues, last) = init_group(geom, index, &group, done, rep, &label);
            (states, queues, last, Vec::new(), 0)
        }
    };
    let mut saved = std::time::Instant::now();

    // 2. Levels: at level d, first the wins through a capture at distance d (they come
    // before any propagation of level d, which only decides distances above d), then every
    // decision of distance d is propagated.
    rep.begin(&format!("{label} retrograde"), n);
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
            let part: Vec<(Vec<Bucket>, u64, usize)> = queues
                .par_iter_mut()
                .enumerate()
                .with_min_len(64)
                .fold(
                    || (Vec::new(), 0u64, 0usize, Scratch::default()),
                    |(mut out, mut gen_count, mut count, mut scratch), (c, q)| {
                        let lo = (c * CHUNK) as u64;
                        while let Some(&e) = q.decided.get(q.next.0 as usize) {
                            let (g, class) = (lo + (e >> 1) as u64, (e & 1) as u32);
                            let st = State(states[g as usize].load(Ordering::Relaxed));
                            let v = if class == GEN { st.gen_val() } else { st.spc() };
                            debug_assert!(dist(v) as usize >= d);
                            if dist(v) as usize != d {
                                break;
                            }
                            q.next.0 += 1;
                            gen_count += u64::from(class == GEN);
                            count += 1;
                            scratch.propagate(geom, &group, &states, g, class, level, &mut out);
                        }
                        (out, gen_count, count, scratch)
                    },
                )
                .map(|(out, gen_count, count, _)| (out, gen_count, count))
                .collect();
            for (out, gen_count, count) in part {
                new.push(out);
                decided_gen += gen_count;
                n_events += count;
            }
        }
        if d < buckets.len() {
            let events = std::mem::take(&mut buckets[d]);
            decided_gen += events.iter().filter(|&&e| e & 1 == GEN).count() as u64;
            n_events += events.len();
            new.extend(
                events
                    .par_chunks(1024)
                    .fold(
                        || (Vec::new(), Scratch::default()),
                        |(mut out, mut scratch), chunk| {
                            for &e in chunk {
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
        let n_new: usize = new.iter().flatten().map(|b| b.len()).sum();
        append_buckets(&mut buckets, new);
        if n_events >= 1 << 20 {
            crate::sys::release_free_memory();
            rep.note(&format!(
                "{label} level {d}: {n_events} decisions propagated, {n_new} new; {}",
                crate::sys::rss_summary()
            ));
        }
        rep.advance(decided_gen);
        d += 1;
        let stop = opts.stop.as_ref().is_some_and(|s| s.load(Ordering::Relaxed));
        let more = d <= last || d < buckets.len();
        if let Some(dir) = &opts.dir
            && more
            && (stop || opts.checkpoint_every.is_some_and(|t| saved.elapsed() >= t))
        {
            let t = std::time::Instant::now();
            let path = groupfile::save(dir, geom, &phases, CHUNK, d as u32, last as u32, &states, &queues, &buckets)?;
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

    // 3. Finish, in place: undecided is draw; a special value equal to the generic one is
    // no exception.
    let mut records = from_atomic(states);
    records.par_iter_mut().for_each(|v| {
        let st = State(*v);
        let (g, sp, s) = (st.gen_val(), st.spc(), st.s());
        *v = if s == 0 || sp == g { g as u64 } else { g as u64 | (sp as u64) << 16 | (s as u64) << 32 };
    });
    let mut out = Vec::new();
    for (slot, p) in group.phases.iter().enumerate().rev() {
        let tail = split_tail(&mut records, group.offsets[slot] as usize);
        out.push(PhaseValues { phase: p.phase(), records: tail });
    }
    out.reverse();
    rep.note(&format!("{label}: every position decided; {}", crate::sys::rss_summary()));
    Ok(out)
}

/// Step 1 of a group: the initial state of every position (in-group moves counted,
/// captures and suicides summarised). What is already decided, and the wins through a
/// capture, wait in per-chunk queues. Returns the states, the queues and the largest
/// distance in them.
fn init_group(
    geom: &Geometry,
    index: &GameIndex,
    group: &Group<'_>,
    done: &[Finished],
    rep: &dyn Reporter,
    label: &str,
) -> (Vec<AtomicU64>, Vec<ChunkQueue>, usize) {
    let n = group.len();
    rep.begin(&format!("{label} init"), n);
    let mut states: Vec<u64> = vec![0; n as usize];
    crate::sys::advise_huge_pages(&states);
    let (queues, last): (Vec<ChunkQueue>, Vec<u32>) = states
        .par_chunks_mut(CHUNK)
        .enumerate()
        .map(|(c, slice)| {
            let lo = (c * CHUNK) as u64;
            let mut decided: Vec<(u32, u16)> = Vec::new();
            let mut ext: Vec<(u32, u16)> = Vec::new();
            for (k, cell) in slice.iter_mut().enumerate() {
                let pos = group.position(lo + k as u64);
                let (st, ev, w) = initial_state(geom, index, done, &pos);
                *cell = st.0;
                for (class, d) in ev {
                    decided.push((d, (k as u16) << 1 | class as u16));
                }
                if let Some(w) = w {
                    ext.push((w, k as u16));
                }
            }
            rep.advance(slice.len() as u64);
            decided.sort_by_key(|&(d, _)| d);
            ext.sort_by_key(|&(w, _)| w);
            let last = decided.iter().chain(&ext).map(|&(d, _)| d).max().unwrap_or(0);
            let q = ChunkQueue {
                decided: decided.into_iter().map(|(_, e)| e).collect(),
                ext: ext.into_iter().map(|(_, k)| k).collect(),
                next: (0, 0),
            };
            (q, last)
        })
        .unzip();
    rep.end();
    let last = last.into_iter().max().unwrap_or(0) as usize;
    let states = into_atomic(states);
    crate::sys::release_free_memory();
    let queued: usize = queues.iter().map(|q| q.decided.len() + q.ext.len()).sum();
    rep.note(&format!("{label} init: {queued} decisions and capture wins queued; {}", crate::sys::rss_summary()));

    (states, queues, last)
}

/// Move `v[at..]` into a vector of its own. The whole vector is moved without a copy; a
/// tail is copied block by block from the end, giving each block's memory back as soon as
/// it is copied, so the two never both hold the tail.
fn split_tail(v: &mut Vec<u64>, at: usize) -> Vec<u64> {
    if at == 0 {
        return std::mem::take(v);
    }
    let mut tail = vec![0u64; v.len() - at];
    const BLOCK: usize = 1 << 24;
    while v.len() > at {
        let start = at.max(v.len().saturating_sub(BLOCK));
        tail[start - at..v.len() - at].copy_from_slice(&v[start..]);
        v.truncate(start);
        v.shrink_to_fit();
    }
    tail
}

/// Positions per init chunk: an offset in the chunk shifted left once (for the value
/// class) fits in a `u16`.
const CHUNK: usize = 1 << 15;

/// Apply the win through a capture of position `g` if its distance is `level`; false if
/// its distance is larger (the chunk queue waits for that level).
#[inline]
fn apply_capture_win(cell: &AtomicU64, g: u64, level: u32, out: &mut Vec<Bucket>) -> bool {
    let st = State(cell.load(Ordering::Relaxed));
    debug_assert!(!st.can_lose() && st.ext_win() >= level);
    if st.ext_win() != level {
        return false;
    }
    let mut emits: Emits = [None, None];
    let _ = cell.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |v| {
        let mut st = State(v);
        emits = [None, None];
        if st.gen_val() == 0 {
            st = st.with_gen(win(level));
            emits[0] = Some((GEN, level));
        }
        if st.s() != 0 && st.spc() == 0 {
            st = st.with_spc(win(level));
            emits[1] = Some((SPC, level));
        }
        Some(st.0)
    });
    for (class, dd) in emits.into_iter().flatten() {
        push_event(out, dd, event(g, class));
    }
    true
}

/// Per-task buffers of [`propagate`], reused from event to event.
#[derive(Default)]
struct Scratch {
    found: Vec<(u32, u32)>,
    slow: Vec<u64>,
    pending: Vec<(u64, u32)>,
}

impl Scratch {
    /// Propagate one decision and queue what it decides in `out`.
    #[allow(clippy::too_many_arguments)]
    fn propagate(
        &mut self,
        geom: &Geometry,
        group: &Group<'_>,
        states: &[AtomicU64],
        g: u64,
        class: u32,
        d: u32,
        out: &mut Vec<Bucket>,
    ) {
        self.found.clear();
        propagate(geom, group, states, g, class, d, &mut self.found, &mut self.slow, &mut self.pending);
        for &(dd, e) in &self.found {
            push_event(out, dd, e);
        }
    }
}

/// Append per-chunk buckets to `buckets`, reserving each bucket's growth once.
fn append_buckets(buckets: &mut Vec<Bucket>, parts: Vec<Vec<Bucket>>) {
    let levels = parts.iter().map(|p| p.len()).max().unwrap_or(0);
    if buckets.len() < levels {
        buckets.resize_with(levels, Vec::new);
    }
    let mut sizes = vec![0usize; levels];
    for p in &parts {
        for (d, b) in p.iter().enumerate() {
            sizes[d] += b.len();
        }
    }
    for (d, &n) in sizes.iter().enumerate() {
        buckets[d].reserve_exact(n);
    }
    for p in parts {
        for (d, b) in p.into_iter().enumerate() {
            buckets[d].extend_from_slice(&b);
        }
    }
}

/// The initial state of a position, the decisions it already allows, and the distance of
/// its best win through a capture (when above 1; a win in 1 is decided at once).
fn initial_state(
    geom: &Geometry,
    index: &GameIndex,
    done: &[Finished],
    pos: &Position,
) -> (State, Vec<(u32, u32)>, Option<u32>) {
    let list = moves(geom, pos);
    let (mut u, mut x) = (0u32, 0u32);
    // In-group moves into an immediate win of the opponent: their child is decided
    // `Win(1)` without any search, so they are applied here instead of propagated.
    let mut into_mate = 0u32;
    let mut ext_win: Option<u32> = None;
    let mut ext_draw = false;
    let mut extlose = 0u32;
    let losing = geom.losing_count();
    for (i, &m) in list.iter().enumerate() {
        let r = play(geom, pos, m).expect("listed moves are legal");
        let opt = match r.removal {
            Removal::None => {
                u += 1;
                x ^= i as u32 + 1;
                if is_immediate_win(geom, &r.child) {
                    into_mate |= 1 << i;
                }
                continue;
            }
            // The child is seen from the other side: its player is the side that lost a piece.
            Removal::Opponent if r.child.player.count_ones() == losing => Outcome::Win(1),
            Removal::Own if r.child.opponent.count_ones() == losing => Outcome::Loss(1),
            _ => finished_option(index, done, &r.child),
        };
        match opt {
            Outcome::Win(k) => ext_win = Some(ext_win.map_or(k, |w| w.min(k))),
            Outcome::Draw => ext_draw = true,
            Outcome::Loss(k) => extlose = extlose.max(k),
        }
    }
    let can_lose = ext_win.is_none() && !ext_draw;
    let mut st = State(
        (u as u64) << U_SHIFT
            | (x as u64) << X_SHIFT
            | if can_lose { CAN_LOSE } else { 0 }
            | (if can_lose { extlose } else { ext_win.unwrap_or(0) } as u64) << OUTSIDE_SHIFT,
    );
    let mut emits = Vec::new();
    if ext_win == Some(1) {
        // Every parent applies this win itself (see `into_mate`): nothing to propagate.
        return (st.with_gen(win(1)), emits, None);
    }
    if can_lose {
        if u == 0 {
            st = st.with_gen(loss(extlose));
            emits.push((GEN, extlose));
        } else if u == 1 {
            st = st.with_s(x).with_spc(loss(extlose));
            emits.push((SPC, extlose));
        }
    }
    while into_mate != 0 {
        let i = into_mate.trailing_zeros() + 1;
        into_mate &= into_mate - 1;
        let (next, e) = on_losing_move(st, i, 2);
        st = next;
        emits.extend(e.into_iter().flatten());
    }
    (st, emits, ext_win)
}

/// Propagate the decision of class `class` of position `g` (distance `d`) to the
/// predecessors inside the group.
#[allow(clippy::too_many_arguments)]
fn propagate(
    geom: &Geometry,
    group: &Group<'_>,
    states: &[AtomicU64],
    g: u64,
    class: u32,
    d: u32,
    out: &mut Vec<(u32, u32)>,
    slow: &mut Vec<u64>,
    pending: &mut Vec<(u64, u32)>,
) {
    let st = State(states[g as usize].load(Ordering::Relaxed));
    let s = st.s();
    let v = if class == GEN { st.gen_val() } else { st.spc() };
    debug_assert!(v != 0 && dist(v) == d, "event of distance {d} has value {v}");
    let child_wins = v & 1 == 0;
    let pos = group.position(g);
    let pred_phase = pos.phase().swapped();
    let pslot = group.slot_of(pred_phase);
    let pidx = group.phases[pslot];
    let poff = group.offsets[pslot];
    // The predecessors whose node forbids the special move `s` are the images of the
    // result of move `s`, unless an earlier move also reaches an image of it (then the
    // node index names that earlier move and no node forbids `s`).
    let special_target = if s != 0 { special_predecessor(geom, &pos, s as usize) } else { None };
    if class == SPC && special_target.is_none() {
        return;
    }
    let mut stab = 0u8;
    let (_, set_syms) = group.phases[group.slot_of(pos.phase())].sets().lookup(pos.player);
    if set_syms != 1 {
        for k in 1..8 {
            if set_syms >> k & 1 != 0 && pos.transformed(geom, k) == pos {
                stab |= 1 << k;
            }
        }
    }
    slow.clear();
    pending.clear();
    let level = d + 1;
    unmoves(geom, &pos, |u| {
        if let Some((inv, code)) = special_target {
            let p = &u.pred;
            let special =
                geom.symmetry_invariant(p.player, p.opponent, p.hole()) == inv && canonical_code(geom, p) == code;
            if special != (class == SPC) {
                return;
            }
        }
        // A symmetric child: keep one unmove per image of the predecessor.
        let mut fixed = false;
        if stab != 0 {
            let code = u.pred.code();
            let mut t = stab;
            while t != 0 {
                let k = t.trailing_zeros() as usize;
                t &= t - 1;
                let c = u.pred.transformed(geom, k).code();
                if c < code {
                    return;
                }
                fixed |= c == code;
            }
        }
        let (local, k, symmetric) = pidx.locate(&u.pred);
        let q = poff + local;
        if symmetric || fixed {
            slow.push(q);
            return;
        }
        let canon = u.pred.transformed(geom, k);
        let i = move_index(geom, &canon, transform_move(geom, k, u.mv)) as u32;
        prefetch(&states[q as usize]);
        pending.push((q, i));
    });
    for &(q, i) in pending.iter() {
        update(states, q, i, child_wins, level, out);
    }
    if !slow.is_empty() {
        slow.sort_unstable();
        slow.dedup();
        let code = pos.code();
        for &q in slow.iter() {
            let qpos = group.position(q);
            for (i, &m) in moves(geom, &qpos).iter().enumerate() {
                let r = play(geom, &qpos, m).expect("listed moves are legal");
                if r.removal == Removal::None && canonical_code(geom, &r.child) == code {
                    update(states, q, i as u32 + 1, child_wins, level, out);
                }
            }
        }
    }
}

/// The symmetry invariant and canonical code of the predecessors whose node forbids move
/// `s` of `pos`, or `None` if no node does.
fn special_predecessor(geom: &Geometry, pos: &Position, s: usize) -> Option<(u64, u64)> {
    let list = moves(geom, pos);
    let r = play(geom, pos, list[s - 1]).expect("listed moves are legal");
    debug_assert_eq!(r.removal, Removal::None, "a special move removes nothing");
    let t = r.child;
    let inv = geom.symmetry_invariant(t.player, t.opponent, t.hole());
    let mut code = None;
    for &m in &list[..s - 1] {
        let Some(r) = play(geom, pos, m) else { continue };
        let c = r.child;
        if r.removal != Removal::None || geom.symmetry_invariant(c.player, c.opponent, c.hole()) != inv {
            continue;
        }
        let tc = *code.get_or_insert_with(|| canonical_code(geom, &t));
        if canonical_code(geom, &c) == tc {
            return None;
        }
    }
    Some((inv, code.unwrap_or_else(|| canonical_code(geom, &t))))
}

#[inline]
fn update(states: &[AtomicU64], q: u64, i: u32, child_wins: bool, level: u32, out: &mut Vec<(u32, u32)>) {
    let cell = &states[q as usize];
    let st = State(cell.load(Ordering::Relaxed));
    if st.gen_val() != 0 && (st.s() == 0 || st.spc() != 0) {
        return; // every node of the parent is decided
    }
    let mut emits: Emits = [None, None];
    let _ = cell.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |v| {
        let (st, e) = if child_wins { on_losing_move(State(v), i, level) } else { on_winning_move(State(v), i, level) };
        emits = e;
        Some(st.0)
    });
    for (class, d) in emits.into_iter().flatten() {
        out.push((d, event(q, class)));
    }
}

/// Ask the memory system for a cache line we will update soon.
#[inline(always)]
fn prefetch<T>(p: &T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: prefetching is a hint; any address is allowed.
    unsafe {
        std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(p as *const T as *const i8);
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}

fn into_atomic(v: Vec<u64>) -> Vec<AtomicU64> {
    let mut v = std::mem::ManuallyDrop::new(v);
    // SAFETY: AtomicU64 has the same size, alignment and bit validity as u64.
    unsafe { Vec::from_raw_parts(v.as_mut_ptr() as *mut AtomicU64, v.len(), v.capacity()) }
}

fn from_atomic(v: Vec<AtomicU64>) -> Vec<u64> {
    let mut v = std::mem::ManuallyDrop::new(v);
    // SAFETY: as in `into_atomic`; we own the only reference.
    unsafe { Vec::from_raw_parts(v.as_mut_ptr() as *mut u64, v.len(), v.capacity()) }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;

    /// Counts the notes and steps a solve reports.
    #[derive(Default)]
    struct Log(Mutex<Vec<String>>);

    impl Reporter for Log {
        fn begin(&self, label: &str, _: u64) {
            self.0.lock().unwrap().push(format!("begin {label}"));
        }
        fn advance(&self, _: u64) {}
        fn end(&self) {}
        fn note(&self, m: &str) {
            self.0.lock().unwrap().push(format!("note {m}"));
        }
    }

    #[test]
    fn a_resumed_solve_loads_finished_phases_and_ends_identical() {
        let g = Geometry::new(4, 3).unwrap();
        let dir = std::env::temp_dir().join(format!("ostledb-resume-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let fresh = solve(&g, 6, &SolveOptions::default()).unwrap();
        let log = Arc::new(Log::default());
        let opts = SolveOptions { reporter: log.clone(), dir: Some(dir.clone()), ..SolveOptions::default() };
        let first = solve(&g, 6, &opts).unwrap();
        // A solve killed during the last group: its files are missing.
        std::fs::remove_file(checkpoint::phase_file(&dir, Phase::new(3, 3))).unwrap();
        log.0.lock().unwrap().clear();
        let resumed = solve(&g, 6, &opts).unwrap();
        let steps = log.0.lock().unwrap().clone();
        assert!(steps.iter().any(|s| s.starts_with("note (2,2)")), "{steps:?}");
        assert!(steps.iter().any(|s| s.starts_with("note (3,2)+(2,3)")), "{steps:?}");
        assert!(steps.iter().any(|s| s == "begin (3,3) init"), "{steps:?}");
        assert!(!steps.iter().any(|s| s.starts_with("begin (2,2)")), "{steps:?}");
        for ((a, b), c) in fresh.phases().iter().zip(first.phases()).zip(resumed.phases()) {
            assert_eq!(a.raw(), b.raw());
            assert_eq!(a.raw(), c.raw());
        }
        let loaded = Solution::load(&dir, &g, 6).unwrap();
        assert_eq!(loaded.phases().len(), 4);
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// Asks a solve to stop after `levels` levels of the group whose label starts with
    /// `group`, and logs the notes.
    struct StopAfter {
        group: &'static str,
        levels: usize,
        seen: std::sync::atomic::AtomicUsize,
        active: std::sync::atomic::AtomicBool,
        stop: Arc<std::sync::atomic::AtomicBool>,
        log: Log,
    }

    impl StopAfter {
        fn new(group: &'static str, levels: usize) -> Arc<StopAfter> {
            Arc::new(StopAfter {
                group,
                levels,
                seen: Default::default(),
                active: Default::default(),
                stop: Default::default(),
                log: Log::default(),
            })
        }
    }

    impl Reporter for StopAfter {
        fn begin(&self, label: &str, total: u64) {
            self.active.store(label.starts_with(self.group) && label.ends_with("retrograde"), Ordering::Relaxed);
            self.log.begin(label, total);
        }
        fn advance(&self, _: u64) {
            // One call per level in the retrograde step.
            if self.active.load(Ordering::Relaxed) && self.seen.fetch_add(1, Ordering::Relaxed) + 1 == self.levels {
                self.stop.store(true, Ordering::Relaxed);
            }
        }
        fn end(&self) {}
        fn note(&self, m: &str) {
            self.log.note(m);
        }
    }

    #[test]
    fn a_solve_stopped_inside_a_group_resumes_there_and_ends_identical() {
        let g = Geometry::new(4, 3).unwrap();
        let fresh = solve(&g, 6, &SolveOptions::default()).unwrap();
        for (group, first, second) in [("(3,2)+(2,3)", 1, 4), ("(3,3)", 3, 2), ("(2,2)", 2, 1)] {
            let dir = std::env::temp_dir().join(format!("ostledb-midgroup-{}-{first}", std::process::id()));
            let _ = std::fs::remove_dir_all(&dir);
            let run = |levels| {
                let rep = StopAfter::new(group, levels);
                let opts = SolveOptions {
                    reporter: rep.clone(),
                    dir: Some(dir.clone()),
                    checkpoint_every: None,
                    stop: Some(rep.stop.clone()),
                };
                (solve(&g, 6, &opts), rep.log.0.lock().unwrap().clone())
            };
            // Stopped: an error naming the level; the checkpoint is on disk.
            let (r, _) = run(first);
            match r {
                Err(Error::Interrupted { group: gr, level, saved: true }) => {
                    assert_eq!((gr.as_str(), level as usize), (group, first), "{group}");
                }
                other => panic!("{group}: expected an interrupted solve, got {other:?}"),
            }
            let phases: Vec<Phase> =
                fresh.phases().iter().map(|p| p.phase()).filter(|p| group.contains(&p.to_string())).collect();
            assert!(groupfile::group_file(&dir, &phases).exists(), "{group}");
            // Resumed, stopped again further on, resumed again to the end.
            let (r, notes) = run(second);
            assert!(matches!(r, Err(Error::Interrupted { .. })), "{group}: {r:?}");
            assert!(
                notes.iter().any(|n| n.contains(&format!("resumed from its checkpoint at level {first}"))),
                "{notes:?}"
            );
            let (r, notes) = run(usize::MAX);
            let resumed = r.unwrap();
            let at = format!("resumed from its checkpoint at level {}", first + second);
            assert!(notes.iter().any(|n| n.contains(&at)), "{group}: {notes:?}");
            for (a, b) in fresh.phases().iter().zip(resumed.phases()) {
                assert_eq!(a.raw(), b.raw(), "{group} {}", a.phase());
            }
            assert!(!groupfile::group_file(&dir, &phases).exists(), "{group}: checkpoint left behind");
            let _ = std::fs::remove_dir_all(&dir);
        }
    }

    #[test]
    fn a_stop_without_a_directory_saves_nothing_and_says_so() {
        let g = Geometry::new(3, 3).unwrap();
        let rep = StopAfter::new("(2,2)", 1);
        let opts = SolveOptions { reporter: rep.clone(), stop: Some(rep.stop.clone()), ..SolveOptions::default() };
        let e = solve(&g, 4, &opts).unwrap_err();
        assert!(matches!(e, Error::Interrupted { saved: false, .. }), "{e:?}");
        assert!(e.to_string().contains("nothing saved"), "{e}");
    }

    #[test]
    fn split_tail_moves_exactly_the_tail() {
        for (len, at) in [(0, 0), (5, 0), (5, 5), (5, 2), ((1 << 25) + 3, 7)] {
            let mut v: Vec<u64> = (0..len as u64).collect();
            let tail = split_tail(&mut v, at);
            assert_eq!(v, (0..at as u64).collect::<Vec<_>>());
            assert_eq!(tail, (at as u64..len as u64).collect::<Vec<_>>());
        }
    }

    #[test]
    fn node_values_follow_the_special_move() {
        let v = PhaseValues::from_raw(Phase::new(4, 4), vec![win(3) as u64 | (loss(8) as u64) << 16 | 5 << 32, 0]);
        assert_eq!(v.node(0, 0), Outcome::Win(3));
        assert_eq!(v.node(0, 5), Outcome::Loss(8));
        assert_eq!(v.node(0, 4), Outcome::Win(3));
        assert_eq!(v.node(1, 3), Outcome::Draw);
        assert_eq!(v.record(0).special, Some((5, Outcome::Loss(8))));
    }
}
