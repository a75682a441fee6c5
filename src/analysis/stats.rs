//! Whole-phase statistics computed by walking the index: immediate wins and non-trivial
//! nodes (OSTLE.md section 2).

use rayon::prelude::*;

use crate::analysis::sweep::{Checkpoint, fold_positions, walk_groups};
use crate::error::Error;
use crate::game::forbidden::nontrivial_nodes;
use crate::game::moves::is_immediate_win;
use crate::game::{Geometry, Position};
use crate::index::PhaseIndex;
use crate::progress::Reporter;
use crate::store::Store;
use crate::working::group::GroupValues;
use crate::working::resolved::ResolvedDir;

/// Counts over one phase.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct NodeCounts {
    /// Canonical positions.
    pub positions: u64,
    /// Positions where the side to move can capture with the opponent one piece from losing.
    pub immediate_wins: u64,
    /// Nodes (position, forbidden index) some legal move inside the phase leads to,
    /// excluding immediate-win positions.
    pub nontrivial_nodes: u64,
    /// Of those, the nodes with a forbidden move (index > 0).
    pub nontrivial_with_forbidden: u64,
}

impl std::ops::Add for NodeCounts {
    type Output = NodeCounts;
    fn add(self, o: NodeCounts) -> NodeCounts {
        NodeCounts {
            positions: self.positions + o.positions,
            immediate_wins: self.immediate_wins + o.immediate_wins,
            nontrivial_nodes: self.nontrivial_nodes + o.nontrivial_nodes,
            nontrivial_with_forbidden: self.nontrivial_with_forbidden + o.nontrivial_with_forbidden,
        }
    }
}

/// Count one position into `acc`: its non-trivial nodes as a mask of forbidden indices
/// (`None` for an immediate win, which has none).
fn count_position(geom: &Geometry, pos: &Position, acc: &mut NodeCounts) -> Option<u32> {
    acc.positions += 1;
    if is_immediate_win(geom, pos) {
        acc.immediate_wins += 1;
        return None;
    }
    let reached = nontrivial_nodes(geom, pos);
    acc.nontrivial_nodes += reached.count_ones() as u64;
    acc.nontrivial_with_forbidden += (reached & !1).count_ones() as u64;
    Some(reached)
}

/// Count immediate wins and non-trivial nodes of a phase whose predecessors lie in the
/// same phase (only `(4,4)` of the standard game is closed this way), as one step of
/// `reporter` named `label`.
pub fn node_counts(index: &PhaseIndex, label: &str, reporter: &dyn Reporter) -> NodeCounts {
    let geom = index.geometry();
    let visit = |acc: &mut NodeCounts, pos: &Position, _| {
        count_position(geom, pos, acc);
    };
    let merge = |t: &mut NodeCounts, p| *t = *t + p;
    fold_positions(index, CHUNK, label, reporter, (0, NodeCounts::default()), visit, merge, |_, _| Ok(()))
        .expect("nothing between rounds fails")
}

/// Positions per work item of the walks of a phase.
const CHUNK: u64 = 1 << 16;

/// Counts of wins, losses and draws with the distribution of distances.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ValueCounts {
    /// Wins for the side to move.
    pub win: u64,
    /// Losses for the side to move.
    pub loss: u64,
    /// Draws.
    pub draw: u64,
    /// `win_by_distance[n]`: wins in exactly `n` plies.
    pub win_by_distance: Vec<u64>,
    /// `loss_by_distance[n]`: losses in exactly `n` plies.
    pub loss_by_distance: Vec<u64>,
}

impl ValueCounts {
    fn add(&mut self, o: crate::record::Outcome) {
        use crate::record::Outcome::*;
        let bump = |h: &mut Vec<u64>, n: u32| {
            if h.len() <= n as usize {
                h.resize(n as usize + 1, 0);
            }
            h[n as usize] += 1;
        };
        match o {
            Win(n) => {
                self.win += 1;
                bump(&mut self.win_by_distance, n);
            }
            Loss(n) => {
                self.loss += 1;
                bump(&mut self.loss_by_distance, n);
            }
            Draw => self.draw += 1,
        }
    }

    fn merge(mut self, o: ValueCounts) -> ValueCounts {
        self.win += o.win;
        self.loss += o.loss;
        self.draw += o.draw;
        for (a, b) in [(&mut self.win_by_distance, o.win_by_distance), (&mut self.loss_by_distance, o.loss_by_distance)]
        {
            if a.len() < b.len() {
                a.resize(b.len(), 0);
            }
            for (x, y) in a.iter_mut().zip(b) {
                *x += y;
            }
        }
        self
    }

    /// The longest win and the longest loss, in plies.
    pub fn longest(&self) -> (usize, usize) {
        let last = |h: &Vec<u64>| h.iter().rposition(|&c| c > 0).unwrap_or(0);
        (last(&self.win_by_distance), last(&self.loss_by_distance))
    }
}

/// Statistics of one solved phase.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct PhaseStats {
    /// The phase, `[player, opponent]`.
    pub phase: [u32; 2],
    /// Node and position counts (as [`node_counts`]).
    pub counts: NodeCounts,
    /// Positions with a special move (a node whose value differs from the position's) as
    /// stored: the result store keeps only special moves whose node exists.
    pub positions_with_special: u64,
    /// Values of the positions (their node without a forbidden move).
    pub positions: ValueCounts,
    /// Values of the non-trivial nodes (immediate-win positions excluded, as published).
    pub nodes: ValueCounts,
    /// The longest win of any node of the positions (immediate wins excluded) and the
    /// positions that have it, by code. In the sums over phases, the longest of all. (A
    /// checkpoint without it, of an earlier build, is not used.)
    pub longest_win: LongestWins,
}

/// The longest win among some positions' values and the positions that have it: what
/// `stats` counts (by position code) and `stats --longest` reads (by dense index).
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct LongestWins {
    /// In plies (0 when no win has been seen).
    pub plies: u32,
    /// Every position with a value of that distance, in the order seen, each with which
    /// of its values has it: `None` the base value (every node but the special one),
    /// `Some(j)` the special value (node `j` only).
    pub positions: Vec<(u64, Option<u32>)>,
}

impl LongestWins {
    /// See the values of record `rec` of the position `at` (its code or index).
    #[inline]
    pub fn add(&mut self, rec: &crate::record::Record, at: u64) {
        use crate::record::Outcome::Win;
        if let Win(d) = rec.base {
            self.add_win(d, at, None);
        }
        if let Some((j, Win(d))) = rec.special {
            self.add_win(d, at, Some(j));
        }
    }

    /// Whether [`LongestWins::add`] would keep a value of `rec`: a win at least as long as
    /// the longest so far (for a caller to skip what it must work out before adding).
    #[inline]
    pub fn would_keep(&self, rec: &crate::record::Record) -> bool {
        let longer = |o: crate::record::Outcome| matches!(o, crate::record::Outcome::Win(d) if d >= self.plies);
        longer(rec.base) || rec.special.is_some_and(|(_, o)| longer(o))
    }

    #[inline]
    fn add_win(&mut self, plies: u32, at: u64, which: Option<u32>) {
        if plies < self.plies {
            return;
        }
        if plies > self.plies {
            self.plies = plies;
            self.positions.clear();
        }
        self.positions.push((at, which));
    }

    /// The longest of two (both lists, `self`'s first, when they are equally long).
    pub fn merge(mut self, o: LongestWins) -> LongestWins {
        match self.plies.cmp(&o.plies) {
            std::cmp::Ordering::Less => o,
            std::cmp::Ordering::Greater => self,
            std::cmp::Ordering::Equal => {
                self.positions.extend(o.positions);
                self
            }
        }
    }
}

impl PhaseStats {
    /// The sums of two statistics (the phase of `self` is kept).
    pub fn merge(self, o: PhaseStats) -> PhaseStats {
        PhaseStats {
            phase: self.phase,
            counts: self.counts + o.counts,
            positions_with_special: self.positions_with_special + o.positions_with_special,
            positions: self.positions.merge(o.positions),
            nodes: self.nodes.merge(o.nodes),
            longest_win: self.longest_win.merge(o.longest_win),
        }
    }
}

/// Count canonical position `pos`, whose record is `packed` (with every distance), into
/// `acc`: its value, its special move, its node counts, the values of its non-trivial
/// nodes and its wins if they are the longest so far. Returns those nodes as a mask of
/// forbidden indices (`None` for an immediate win, which has none), for a caller that
/// writes them out too (`export --stats`).
pub fn tally(geom: &Geometry, pos: &Position, packed: crate::record::Packed, acc: &mut PhaseStats) -> Option<u32> {
    let rec = packed.record();
    acc.positions.add(rec.base);
    acc.positions_with_special += rec.special.is_some() as u64;
    let reached = count_position(geom, pos, &mut acc.counts)?;
    acc.longest_win.add(&rec, pos.code());
    let mut left = reached;
    while left != 0 {
        let j = left.trailing_zeros() as usize;
        left &= left - 1;
        acc.nodes.add(packed.node(j));
    }
    Some(reached)
}

/// Walk a solved phase from a saved point, as one step of `reporter` named `label`: value
/// counts of its positions and of its non-trivial nodes. `from` is `(start, total)`:
/// positions `0..start` are counted in `total` already; `between` is called after every
/// round of chunks, to save the counts ([`fold_positions`]).
pub fn phase_stats_from(
    index: &PhaseIndex,
    values: &impl crate::working::group::HeldPhase,
    label: &str,
    reporter: &dyn Reporter,
    from: (u64, PhaseStats),
    between: impl FnMut(u64, &PhaseStats) -> Result<(), Error>,
) -> Result<PhaseStats, Error> {
    let geom = index.geometry();
    let visit = |acc: &mut PhaseStats, pos: &Position, i| {
        tally(geom, pos, values.packed(i), acc);
    };
    let merge = |t: &mut PhaseStats, p: PhaseStats| *t = std::mem::take(t).merge(p);
    let mut st = fold_positions(index, CHUNK, label, reporter, from, visit, merge, between)?;
    st.phase = [index.phase().player, index.phase().opponent];
    Ok(st)
}

/// The statistics of every phase of a database, one phase group in memory at a time (4
/// bytes per position, [`GroupValues`]; elided loss distances are resolved a group at a
/// time); `reporter` gets the loading and a step per phase. `checkpoint` keeps the
/// statistics of the phases done and the counts of the one under way ([`Checkpoint`]):
/// phases it holds are not walked again. `resolved`: where records with their elided
/// losses resolved are kept between commands ([`walk_groups`]).
pub fn database_stats(
    db: &Store,
    resolved: Option<&ResolvedDir>,
    reporter: &dyn Reporter,
    checkpoint: &mut Checkpoint<PhaseStats>,
) -> Result<Vec<PhaseStats>, Error> {
    let index = db.index();
    let mut phases = Vec::new();
    let walk = |group: &GroupValues, ph, from, between: &mut dyn FnMut(u64, &PhaseStats) -> Result<(), Error>| {
        let pi = index.phase(ph).expect("a phase of the index");
        let held = group.phase(ph).expect("a phase of the group");
        phase_stats_from(pi, held, &format!("stats {ph}"), reporter, from, between)
    };
    walk_groups(db, resolved, reporter, checkpoint, walk, |_, st| phases.push(st))?;
    Ok(phases)
}

/// The longest win of a phase and where it is.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct LongestWin {
    /// The phase `[player, opponent]`.
    pub phase: [u32; 2],
    /// The longest win of any node of the phase, in plies (0 when the phase has no win
    /// but immediate ones).
    pub plies: u32,
    /// Every canonical position with a node of that value: its dense index and which of
    /// its values has it (`None`: the base value, shared by every node but the special
    /// one; `Some(j)`: the special value, node `j` only).
    pub positions: Vec<(u64, Option<u32>)>,
}

/// The longest win of every phase of a database and the positions that have it, by one
/// read of its value files (wins are stored with their distances even where losses are
/// elided; immediate-win positions, whose records may be filler, are left out), blocks
/// in parallel; `reporter` gets a step per phase (units: blocks). `stats` counts the
/// same in its walk over every position ([`PhaseStats::longest_win`], by code).
pub fn longest_wins(db: &Store, reporter: &dyn Reporter) -> Result<Vec<LongestWin>, Error> {
    let g = db.geometry();
    let mut out = Vec::new();
    for pi in db.index().phases() {
        let ph = pi.phase();
        let Some(file) = db.values(ph) else { continue };
        reporter.begin(&format!("longest wins {ph}"), file.blocks() as u64);
        let per = file.block_positions() as u64;
        let best = (0..file.blocks())
            .into_par_iter()
            .map(|b| -> Result<LongestWins, Error> {
                let records = file.block(b)?;
                let mut best = LongestWins::default();
                for (i, &r) in records.iter().enumerate() {
                    let rec = crate::record::Packed(r).record();
                    if !best.would_keep(&rec) {
                        continue;
                    }
                    let idx = b as u64 * per + i as u64;
                    if !is_immediate_win(g, &pi.position_at(idx)) {
                        best.add(&rec, idx);
                    }
                }
                reporter.advance(1);
                Ok(best)
            })
            .try_reduce(LongestWins::default, |a, b| Ok(a.merge(b)))?;
        reporter.end();
        let mut positions = best.positions;
        positions.sort_unstable();
        out.push(LongestWin { phase: [ph.player, ph.opponent], plies: best.plies, positions });
    }
    Ok(out)
}
