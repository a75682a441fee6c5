//! Whole-phase statistics computed by walking the index: immediate wins and non-trivial
//! nodes (OSTLE.md section 2).

use rayon::prelude::*;

use crate::game::forbidden::unmoves_with_node_index;
use crate::game::moves::is_immediate_win;
use crate::index::PhaseIndex;

/// Counts over one phase.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
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

/// Count immediate wins and non-trivial nodes of a phase whose predecessors lie in the
/// same phase (only `(4,4)` of the standard game is closed this way). `progress` is called
/// with the number of positions done after each chunk.
pub fn node_counts(index: &PhaseIndex, progress: &(dyn Fn(u64) + Sync)) -> NodeCounts {
    let geom = index.geometry();
    let n = index.len();
    const CHUNK: u64 = 1 << 16;
    (0..n.div_ceil(CHUNK))
        .into_par_iter()
        .map(|c| {
            let mut acc = NodeCounts::default();
            let end = ((c + 1) * CHUNK).min(n);
            for i in c * CHUNK..end {
                let pos = index.position_at(i);
                acc.positions += 1;
                if is_immediate_win(geom, &pos) {
                    acc.immediate_wins += 1;
                    continue;
                }
                let mut reached = 0u32;
                unmoves_with_node_index(geom, &pos, |_, j| reached |= 1 << j);
                acc.nontrivial_nodes += reached.count_ones() as u64;
                acc.nontrivial_with_forbidden += (reached & !1).count_ones() as u64;
            }
            progress(end - c * CHUNK);
            acc
        })
        .reduce(NodeCounts::default, |a, b| a + b)
}
