//! The key sets lookups are measured on (`ostledb bench`, `benches/keys.rs`): canonical
//! codes of one phase drawn in three access patterns.
//!
//! * [`Pattern::Random`]: uniformly random positions of the phase.
//! * [`Pattern::Children`]: the children of random positions: every move that removes
//!   nothing played from a random position of the phase that moves *into* the benchmarked
//!   one (the same phase for (4,4); `(b,a)` for `(a,b)`, colours swap at each move),
//!   canonicalised, in move order. This is what the solver, `verify --deep` and `query`
//!   look up: runs of ~20 codes with nothing in common but their parent.
//! * [`Pattern::InOrder`]: consecutive positions in index (= code) order from a random
//!   start, wrapping around: the best case of every search structure.

use crate::game::moves::{Removal, moves, play};
use crate::game::symmetry::canonical;
use crate::game::{Geometry, Phase};
use crate::index::PhaseIndex;

/// An access pattern.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Pattern {
    /// Uniformly random keys.
    Random,
    /// The children of random positions.
    Children,
    /// Keys in index order.
    InOrder,
}

impl Pattern {
    /// The three patterns.
    pub const ALL: [Pattern; 3] = [Pattern::Random, Pattern::Children, Pattern::InOrder];

    /// Short name.
    pub fn name(self) -> &'static str {
        match self {
            Pattern::Random => "random",
            Pattern::Children => "children",
            Pattern::InOrder => "in-order",
        }
    }
}

/// SplitMix64: the random numbers of the key sets (deterministic for a seed).
pub fn splitmix(x: &mut u64) -> u64 {
    *x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    let mut z = *x;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// `n` canonical codes of the phase of `index` in `pattern`; `parents` is the index of
/// the phase whose moves lead into it (used by [`Pattern::Children`] only; the same
/// index for a phase `(a,a)`). Empty when the phase is; for `Children`, also when no
/// move of `parents` removing nothing leads into the phase.
pub fn codes(
    geom: &Geometry,
    index: &PhaseIndex,
    parents: &PhaseIndex,
    pattern: Pattern,
    n: usize,
    seed: u64,
) -> Vec<u64> {
    let len = index.len();
    let mut rng = seed ^ (pattern as u64).wrapping_mul(0x5851_f42d_4c95_7f2d);
    if len == 0 {
        return Vec::new();
    }
    match pattern {
        Pattern::Random => (0..n).map(|_| index.position_at(splitmix(&mut rng) % len).code()).collect(),
        Pattern::InOrder => {
            let start = splitmix(&mut rng) % len;
            (0..n as u64).map(|i| index.position_at((start + i) % len).code()).collect()
        }
        Pattern::Children => {
            let target: Phase = index.phase();
            let mut out = Vec::with_capacity(n);
            if parents.is_empty() || parents.phase().swapped() != target {
                return out;
            }
            // Bounded: a phase whose parents have no quiet move would loop forever.
            let mut tries = 0usize;
            while out.len() < n && tries < 16 * n + 1024 {
                tries += 1;
                let p = parents.position_at(splitmix(&mut rng) % parents.len());
                for &m in moves(geom, &p).iter() {
                    if let Some(r) = play(geom, &p, m)
                        && r.removal == Removal::None
                        && out.len() < n
                    {
                        out.push(canonical(geom, &r.child).0.code());
                    }
                }
            }
            out
        }
    }
}
