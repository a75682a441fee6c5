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
use crate::game::forbidden::ChildTable;
use crate::game::moves::{Removal, is_immediate_win, move_index, moves, play, transform_move, unmoves};
use crate::game::{Geometry, Phase, Position};
use crate::index::{GameIndex, PhaseIndex};
use crate::solve::outcome::Outcome;
use crate::solve::progress::{Reporter, Silent};

/// Settings of a solve.
#[derive(Clone)]
pub struct SolveOptions {
    /// Receives progress.
    pub reporter: Arc<dyn Reporter>,
}

impl Default for SolveOptions {
    fn default() -> SolveOptions {
        SolveOptions { reporter: Arc::new(Silent) }
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
const EXTLOSE_SHIFT: u32 = 48; // longest loss among options outside the group

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
        (self.0 >> EXTLOSE_SHIFT) as u32
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

    /// From raw packed records.
    pub fn from_raw(phase: Phase, records: Vec<u64>) -> PhaseValues {
        PhaseValues { phase, records }
    }

    /// The record of the position with index `idx`.
    #[inline]
    pub fn record(&self, idx: u64) -> Record {
        let r = self.records[idx as usize];
        let s = (r >> 32) as u32 & 31;
        Record {
            base: val_outcome(r as Val),
            special: (s != 0).then(|| (s, val_outcome((r >> 16) as Val))),
        }
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

/// Solve every phase with at most `max_pieces` pieces, smallest first.
pub fn solve(geom: &Geometry, max_pieces: u32, opts: &SolveOptions) -> Result<Solution, Error> {
    let index = GameIndex::build(geom, max_pieces)?;
    let mut done: Vec<PhaseValues> = Vec::new();
    let all = Phase::all(geom, max_pieces);
    let mut totals: Vec<u32> = all.iter().map(|p| p.pieces()).collect();
    totals.dedup();
    for total in totals {
        let members: Vec<&PhaseIndex> = index.phases().iter().filter(|p| p.phase().pieces() == total).collect();
        let values = solve_group(geom, &index, Group::new(members), &done, opts);
        done.extend(values);
    }
    Ok(Solution { geom: geom.clone(), index, phases: done })
}

/// The generic value of a position of a finished phase, as an option for the parent.
fn finished_option(geom: &Geometry, index: &GameIndex, done: &[PhaseValues], child: &Position) -> Outcome {
    let _ = geom;
    let ph = child.phase();
    let idx = index.phase(ph).expect("finished phase indexed").index_of(child);
    let vals = done.iter().find(|v| v.phase == ph).expect("finished phase solved");
    val_outcome(vals.base_val(idx)).parent()
}

/// Events of one distance: `global index << 1 | class`.
type Bucket = Vec<u64>;

fn push_event(buckets: &mut Vec<Bucket>, d: u32, g: u64, class: u32) {
    let d = d as usize;
    if buckets.len() <= d {
        buckets.resize_with(d + 1, Vec::new);
    }
    buckets[d].push(g << 1 | class as u64);
}

fn solve_group(
    geom: &Geometry,
    index: &GameIndex,
    group: Group<'_>,
    done: &[PhaseValues],
    opts: &SolveOptions,
) -> Vec<PhaseValues> {
    let rep = &*opts.reporter;
    let n = group.len();
    let label: Vec<String> = group.phases.iter().map(|p| p.phase().to_string()).collect();
    let label = label.join("+");
    const CHUNK: u64 = 1 << 14;

    // 1. Initial states: count in-group moves, summarise captures and suicides.
    rep.begin(&format!("{label} init"), n);
    let chunks: Vec<(Vec<u64>, Vec<(u32, u64, u32)>, Vec<(u32, u64)>)> = (0..n.div_ceil(CHUNK))
        .into_par_iter()
        .map(|c| {
            let lo = c * CHUNK;
            let hi = ((c + 1) * CHUNK).min(n);
            let mut states = Vec::with_capacity((hi - lo) as usize);
            let mut events = Vec::new();
            let mut ext_wins = Vec::new();
            for g in lo..hi {
                let pos = group.position(g);
                let (st, ev, ext) = initial_state(geom, index, done, &pos);
                states.push(st.0);
                for (class, d) in ev {
                    events.push((d, g, class));
                }
                if let Some(w) = ext {
                    ext_wins.push((w, g));
                }
            }
            rep.advance(hi - lo);
            (states, events, ext_wins)
        })
        .collect();
    rep.end();
    let mut states: Vec<u64> = Vec::with_capacity(n as usize);
    let mut buckets: Vec<Bucket> = Vec::new();
    let mut ext_buckets: Vec<Vec<u64>> = Vec::new();
    for (s, ev, ext) in chunks {
        states.extend_from_slice(&s);
        for (d, g, class) in ev {
            push_event(&mut buckets, d, g, class);
        }
        for (w, g) in ext {
            let w = w as usize;
            if ext_buckets.len() <= w {
                ext_buckets.resize_with(w + 1, Vec::new);
            }
            ext_buckets[w].push(g);
        }
    }
    let states = into_atomic(states);

    // 2. Levels.
    rep.begin(&format!("{label} retrograde"), n);
    let mut d = 0usize;
    while d < buckets.len() || d < ext_buckets.len() {
        // Wins through captures at distance d.
        if d < ext_buckets.len() {
            let ext = std::mem::take(&mut ext_buckets[d]);
            let new: Vec<(u32, u64, u32)> = ext
                .par_chunks(4096)
                .flat_map_iter(|chunk| {
                    let mut out = Vec::new();
                    for &g in chunk {
                        let cell = &states[g as usize];
                        let mut emits: Emits = [None, None];
                        let _ = cell.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |v| {
                            let mut st = State(v);
                            emits = [None, None];
                            if st.gen_val() == 0 {
                                st = st.with_gen(win(d as u32));
                                emits[0] = Some((GEN, d as u32));
                            }
                            if st.s() != 0 && st.spc() == 0 {
                                st = st.with_spc(win(d as u32));
                                emits[1] = Some((SPC, d as u32));
                            }
                            Some(st.0)
                        });
                        for (class, dd) in emits.into_iter().flatten() {
                            out.push((dd, g, class));
                        }
                    }
                    out
                })
                .collect();
            for (dd, g, class) in new {
                push_event(&mut buckets, dd, g, class);
            }
        }
        if d < buckets.len() {
            let events = std::mem::take(&mut buckets[d]);
            let decided_gen = events.iter().filter(|&&e| e & 1 == GEN as u64).count() as u64;
            let new: Vec<(u32, u64, u32)> = events
                .par_chunks(1024)
                .flat_map_iter(|chunk| {
                    let mut out = Vec::new();
                    let mut slow = Vec::new();
                    let mut pending = Vec::new();
                    for &e in chunk {
                        let (g, class) = (e >> 1, (e & 1) as u32);
                        propagate(geom, &group, &states, g, class, d as u32, &mut out, &mut slow, &mut pending);
                    }
                    out
                })
                .collect();
            for (dd, g, class) in new {
                push_event(&mut buckets, dd, g, class);
            }
            rep.advance(decided_gen);
        }
        d += 1;
    }
    rep.end();

    // 3. Finish: undecided is draw; a special value equal to the generic one is no exception.
    let states = from_atomic(states);
    let mut out = Vec::new();
    for (slot, p) in group.phases.iter().enumerate() {
        let lo = group.offsets[slot] as usize;
        let hi = group.offsets[slot + 1] as usize;
        let records: Vec<u64> = states[lo..hi]
            .par_iter()
            .map(|&v| {
                let st = State(v);
                let (g, sp, s) = (st.gen_val(), st.spc(), st.s());
                if s == 0 || sp == g { g as u64 } else { g as u64 | (sp as u64) << 16 | (s as u64) << 32 }
            })
            .collect();
        out.push(PhaseValues { phase: p.phase(), records });
    }
    out
}

/// The initial state of a position, the decisions it already allows, and the distance of
/// its best win through a capture (when above 1; a win in 1 is decided at once).
fn initial_state(
    geom: &Geometry,
    index: &GameIndex,
    done: &[PhaseValues],
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
            _ => finished_option(geom, index, done, &r.child),
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
            | (extlose as u64) << EXTLOSE_SHIFT,
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
    out: &mut Vec<(u32, u64, u32)>,
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
    // The forbidden index is needed only to tell the special node from the others.
    let need_j = s != 0;
    let table = need_j.then(|| ChildTable::new(geom, &pos));
    let list = need_j.then(|| moves(geom, &pos));
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
        if let (Some(table), Some(list)) = (&table, &list) {
            let undo_index = u.undo.and_then(|m| list.index_of(m));
            let j = table.node_index_of_pred(geom, &u.pred, undo_index) as u32;
            let special = j == s;
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
                if r.removal == Removal::None && crate::game::symmetry::canonical_code(geom, &r.child) == code {
                    update(states, q, i as u32 + 1, child_wins, level, out);
                }
            }
        }
    }
}

#[inline]
fn update(states: &[AtomicU64], q: u64, i: u32, child_wins: bool, level: u32, out: &mut Vec<(u32, u64, u32)>) {
    let mut emits: Emits = [None, None];
    let _ = states[q as usize].fetch_update(Ordering::Relaxed, Ordering::Relaxed, |v| {
        let (st, e) = if child_wins { on_losing_move(State(v), i, level) } else { on_winning_move(State(v), i, level) };
        emits = e;
        Some(st.0)
    });
    for (class, d) in emits.into_iter().flatten() {
        out.push((d, q, class));
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
