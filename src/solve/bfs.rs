//! Breadth-first search from the initial position: per node, the fewest plies from the
//! start (OSTLE.md section 4).
//!
//! Nodes, their keys and the two expansion conventions are in [`crate::game::node`].
//!
//! Immediate-win ("checkmate") positions are expanded like any other position by
//! [`bfs_layers`]: their winning capture has no child, every other move does. The first
//! checkmate positions are reached at depth 5, so the choice changes the counts from depth
//! 6 on; the layers of the published full run (its log gives every depth to 26: 33,052,
//! 147,620, 556,811, 1,863,530, ... at depths 5..8) are reproduced with expansion
//! (checked to depth 13, 354,715,779 nodes in all). [`bfs_layers_with`] can leave them
//! unexpanded instead.
//!
//! # Algorithm and memory
//!
//! Layer by layer with sorted, deduplicated `Vec<u64>` keys. The frontier is sorted, so
//! the nodes of one position are adjacent and the position is expanded once: under the
//! published convention all its nodes have the same children; under the strict one the
//! union of its nodes' children is every child when it has two or more nodes in the
//! frontier, and every child but move `j`'s when it has just node `(P, j)`. The frontier
//! is expanded in batches (in parallel), each batch's children are sorted, deduplicated,
//! stripped of every node in an earlier layer (a galloping merge against each sorted
//! layer) and merged in place into the next layer. Peak memory is about 8 bytes per
//! stored node (all layers, the one being built included) plus one batch of children
//! (at most 24 keys per frontier position of a batch, a batch being 1/16 of the frontier
//! or 2M nodes, whichever is more).
//!
//! The search stops after `max_depth`, when a layer is empty (the reachable graph is
//! exhausted, which happens on small boards), or when the stored nodes (all layers so
//! far plus the layer being built) would exceed `max_nodes`; the layer being built is
//! then dropped and the report says how far it got. The whole game has ~68 billion
//! nodes, far more than fit in memory this way.
//!
//! # Queries
//!
//! [`BfsReport::nodes`] keeps every computed layer; [`BfsNodes::depth_of`] binary-searches
//! them for a node's depth, and [`node_of`](crate::game::forbidden::node_of) turns a board and its forbidden move into a
//! key. A node not found has depth greater than the last computed layer (or is not
//! reachable at all).

use std::time::Instant;

use rayon::prelude::*;
use serde::Serialize;

use crate::game::moves::{is_immediate_win, moves};
use crate::game::node::{Convention, child_node, key_code, key_index, node_key, start_key};

use crate::game::{Geometry, Phase, Position};
use crate::progress::Reporter;

/// Node counts of one phase in one layer.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct PhaseLayer {
    /// `(player pieces, opponent pieces)`.
    pub phase: [u32; 2],
    /// Nodes first reached at this depth.
    pub nodes: u64,
    /// Distinct positions among them.
    pub positions: u64,
}

/// What one layer holds: the nodes first reached at `depth` plies.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct LayerStats {
    /// Plies from the initial position.
    pub depth: u32,
    /// Nodes first reached at this depth.
    pub nodes: u64,
    /// Nodes at this depth or less.
    pub cumulative: u64,
    /// Distinct canonical positions among this layer's nodes (a position may also have
    /// nodes in other layers).
    pub positions: u64,
    /// Nodes with a forbidden move (index > 0).
    pub with_forbidden: u64,
    /// Distinct immediate-win ("checkmate") positions among this layer's nodes.
    pub checkmate_positions: u64,
    /// Nodes of immediate-win positions.
    pub checkmate_nodes: u64,
    /// Counts per phase (phases without nodes included, in solving order).
    pub phases: Vec<PhaseLayer>,
    /// Wall time to build this layer.
    pub seconds: f64,
}

/// Why the search stopped.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case", tag = "reason")]
pub enum Stop {
    /// Every reachable node was found (the next layer is empty).
    Exhausted,
    /// The last computed layer is at `max_depth`.
    MaxDepth,
    /// Building layer `depth` would exceed `max_nodes` stored nodes; the layer was
    /// dropped after `partial_nodes` of its nodes had been found (a lower bound on its
    /// size) with `expanded` of the `frontier` nodes of the layer before expanded.
    NodeBudget {
        /// The layer that did not fit.
        depth: u32,
        /// Its nodes found when the budget ran out.
        partial_nodes: u64,
        /// Frontier nodes expanded by then.
        expanded: u64,
        /// Nodes of the frontier (the last complete layer).
        frontier: u64,
    },
}

/// Every computed layer as a sorted vector of node keys, for depth queries.
#[derive(Clone, Debug, Default)]
pub struct BfsNodes {
    layers: Vec<Vec<u64>>,
}

impl BfsNodes {
    /// The depth of the node with this key, if it lies within the computed layers.
    pub fn depth_of_key(&self, key: u64) -> Option<u32> {
        self.layers.iter().position(|l| l.binary_search(&key).is_ok()).map(|d| d as u32)
    }

    /// The depth of node (canonical code, forbidden index `j`), if within the computed
    /// layers. `None` means deeper than [`BfsNodes::max_depth`] or unreachable.
    pub fn depth_of(&self, code: u64, j: usize) -> Option<u32> {
        self.depth_of_key(node_key(code, j))
    }

    /// The sorted keys of the nodes first reached at `depth`.
    pub fn layer(&self, depth: u32) -> Option<&[u64]> {
        self.layers.get(depth as usize).map(|l| l.as_slice())
    }

    /// The deepest computed layer.
    pub fn max_depth(&self) -> u32 {
        self.layers.len().saturating_sub(1) as u32
    }

    /// Number of stored nodes.
    pub fn len(&self) -> u64 {
        self.layers.iter().map(|l| l.len() as u64).sum()
    }

    /// True when nothing is stored.
    pub fn is_empty(&self) -> bool {
        self.layers.is_empty()
    }

    /// Heap bytes used by the keys.
    pub fn heap_bytes(&self) -> usize {
        self.layers.iter().map(|l| l.capacity() * 8).sum()
    }
}

/// The result of a breadth-first search.
#[derive(Clone, Debug, Serialize)]
pub struct BfsReport {
    /// Expansion convention.
    pub convention: Convention,
    /// Whether immediate-win positions were expanded.
    pub expand_checkmates: bool,
    /// Board side.
    pub board_side: u32,
    /// Pieces per side at the start of the game (the board's game).
    pub start_pieces: u32,
    /// The phase of the position the search started from: `[start_pieces,
    /// start_pieces]`, or a smaller one for a search from
    /// [`Position::start`](crate::game::Position::start) of another phase
    /// ([`crate::solve::bfs_positions::bfs_positions_from`]).
    pub start_phase: [u32; 2],
    /// The depth limit asked for.
    pub max_depth: u32,
    /// The node budget asked for.
    pub max_nodes: u64,
    /// One entry per computed depth, from 0.
    pub layers: Vec<LayerStats>,
    /// Nodes in all computed layers.
    pub total_nodes: u64,
    /// Why the search stopped.
    pub stop: Stop,
    /// Wall time of the whole search.
    pub seconds: f64,
    /// Positions of the game with at least one node reached, and all positions of the
    /// game: known to the search over positions ([`crate::solve::bfs_positions`]) only.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub positions_reached: Option<(u64, u64)>,
    /// The layers' keys (not serialised).
    #[serde(skip)]
    pub nodes: BfsNodes,
}

/// Breadth-first search from the initial position of `geom` under `convention`, up to
/// `max_depth` plies and at most `max_nodes` stored nodes (see the module documentation).
/// `reporter` gets one begin/advance/end step per layer (units: frontier nodes).
pub fn bfs_layers(
    geom: &Geometry,
    convention: Convention,
    max_depth: u32,
    max_nodes: u64,
    reporter: &dyn Reporter,
) -> BfsReport {
    bfs_layers_with(geom, convention, true, max_depth, max_nodes, reporter)
}

/// Fewest frontier nodes expanded per batch (at most 24 candidate keys each); a layer is
/// expanded in at most about [`BATCHES`] batches, so that merging each batch's children
/// into the growing next layer does not dominate.
const BATCH: usize = 1 << 21;
/// Batches per layer once the frontier exceeds `BATCHES * BATCH` nodes.
const BATCHES: usize = 16;
/// Frontier nodes per parallel task.
const TASK: usize = 1 << 12;

struct Ctx<'a> {
    geom: &'a Geometry,
    convention: Convention,
    expand_checkmates: bool,
}

/// [`bfs_layers`], choosing whether immediate-win positions are expanded
/// (`expand_checkmates`; [`bfs_layers`] expands them). Unexpanded, an immediate-win
/// position's nodes still get their depth but lead nowhere.
pub fn bfs_layers_with(
    geom: &Geometry,
    convention: Convention,
    expand_checkmates: bool,
    max_depth: u32,
    max_nodes: u64,
    reporter: &dyn Reporter,
) -> BfsReport {
    let t0 = Instant::now();
    let ctx = Ctx { geom, convention, expand_checkmates };
    let mut layers = vec![vec![start_key(geom)]];
    let mut stats = vec![layer_stats(geom, 0, &layers[0], 1, 0.0)];
    let mut stored = 1u64;
    let stop = loop {
        let depth = layers.len() as u32;
        if depth > max_depth {
            break Stop::MaxDepth;
        }
        let t = Instant::now();
        match next_layer(&ctx, &layers, depth, max_nodes.saturating_sub(stored), reporter) {
            Err((partial, expanded)) => {
                break Stop::NodeBudget {
                    depth,
                    partial_nodes: partial,
                    expanded,
                    frontier: layers.last().map_or(0, |l| l.len() as u64),
                };
            }
            Ok(next) if next.is_empty() => break Stop::Exhausted,
            Ok(next) => {
                stored += next.len() as u64;
                stats.push(layer_stats(geom, depth, &next, stored, t.elapsed().as_secs_f64()));
                layers.push(next);
            }
        }
    };
    BfsReport {
        convention,
        expand_checkmates,
        board_side: geom.side(),
        start_pieces: geom.start_pieces(),
        start_phase: [geom.start_pieces(), geom.start_pieces()],
        max_depth,
        max_nodes,
        layers: stats,
        total_nodes: stored,
        stop,
        seconds: t0.elapsed().as_secs_f64(),
        positions_reached: None,
        nodes: BfsNodes { layers },
    }
}

/// The end of the run of nodes of the position at `keys[i - 1]`, at or after `i`.
fn group_end(keys: &[u64], mut i: usize) -> usize {
    while i > 0 && i < keys.len() && key_code(keys[i]) == key_code(keys[i - 1]) {
        i += 1;
    }
    i
}

/// Builds the layer at `depth` from the last of `layers`. `Err((nodes found, frontier
/// nodes expanded))` when it would hold more than `budget` nodes.
fn next_layer(
    ctx: &Ctx,
    layers: &[Vec<u64>],
    depth: u32,
    budget: u64,
    reporter: &dyn Reporter,
) -> Result<Vec<u64>, (u64, u64)> {
    let frontier = layers.last().expect("a frontier");
    reporter.begin(&format!("depth {depth}"), frontier.len() as u64);
    let mut next: Vec<u64> = Vec::new();
    let batch = BATCH.max(frontier.len() / BATCHES);
    let mut lo = 0;
    while lo < frontier.len() {
        let hi = group_end(frontier, (lo + batch).min(frontier.len()));
        let mut cand = expand(ctx, &frontier[lo..hi], reporter);
        cand.par_sort_unstable();
        cand.dedup();
        subtract(&mut cand, layers);
        merge_into(&mut next, cand);
        lo = hi;
        if next.len() as u64 > budget {
            reporter.end();
            return Err((next.len() as u64, lo as u64));
        }
    }
    reporter.end();
    next.shrink_to_fit();
    Ok(next)
}

/// Split sorted `keys` into ranges of about `TASK` keys that never split a position's nodes.
fn task_ranges(keys: &[u64]) -> Vec<(usize, usize)> {
    let mut ranges = Vec::new();
    let mut a = 0;
    while a < keys.len() {
        let b = group_end(keys, (a + TASK).min(keys.len()));
        ranges.push((a, b));
        a = b;
    }
    ranges
}

/// The children of the frontier nodes `keys` (sorted), unsorted and with duplicates.
fn expand(ctx: &Ctx, keys: &[u64], reporter: &dyn Reporter) -> Vec<u64> {
    let ranges = task_ranges(keys);
    ranges
        .par_iter()
        .flat_map_iter(|&(a, b)| {
            let mut out = Vec::with_capacity(8 * (b - a));
            expand_groups(ctx, &keys[a..b], &mut out);
            reporter.advance((b - a) as u64);
            out
        })
        .collect()
}

/// Expand each position of `keys` (a sorted run of whole position groups) once.
fn expand_groups(ctx: &Ctx, keys: &[u64], out: &mut Vec<u64>) {
    let g = ctx.geom;
    let mut i = 0;
    while i < keys.len() {
        let code = key_code(keys[i]);
        let mut e = i + 1;
        while e < keys.len() && key_code(keys[e]) == code {
            e += 1;
        }
        // The one forbidden move to leave out: only under the strict convention, and
        // only when the position has a single node in the frontier.
        let skip = match ctx.convention {
            Convention::Strict if e - i == 1 => key_index(keys[i]),
            _ => 0,
        };
        let p = Position::from_code(code);
        i = e;
        if !ctx.expand_checkmates && is_immediate_win(g, &p) {
            continue;
        }
        for (idx, &m) in moves(g, &p).iter().enumerate() {
            if idx + 1 == skip {
                continue;
            }
            if let Some(k) = child_node(g, &p, m) {
                out.push(k);
            }
        }
    }
}

/// Index of the first element `>= v` in `s[from..]` (plus `from`), by galloping.
#[inline]
fn gallop(s: &[u64], from: usize, v: u64) -> usize {
    if from >= s.len() || s[from] >= v {
        return from;
    }
    let mut step = 1;
    let mut lo = from;
    while lo + step < s.len() && s[lo + step] < v {
        lo += step;
        step *= 2;
    }
    let hi = (lo + step).min(s.len());
    lo + 1 + s[lo + 1..hi].partition_point(|&x| x < v)
}

/// Remove from the sorted, deduplicated `cand` every key of any of the sorted `layers`.
fn subtract(cand: &mut Vec<u64>, layers: &[Vec<u64>]) {
    const GONE: u64 = u64::MAX;
    cand.par_chunks_mut(1 << 16).for_each(|chunk| {
        let mut cursors: Vec<usize> = layers.iter().map(|l| l.partition_point(|&x| x < chunk[0])).collect();
        for v in chunk.iter_mut() {
            for (layer, c) in layers.iter().zip(cursors.iter_mut()) {
                *c = gallop(layer, *c, *v);
                if *c < layer.len() && layer[*c] == *v {
                    *v = GONE;
                    break;
                }
            }
        }
    });
    cand.retain(|&v| v != GONE);
}

/// Merge the sorted, deduplicated `b` into the sorted, deduplicated `a` (keys in both are
/// kept once), in place from the back: `a` grows by `b.len()` (a `realloc`, which for
/// big blocks remaps pages instead of copying), so the peak is `a + b`, not twice `a`.
fn merge_into(a: &mut Vec<u64>, b: Vec<u64>) {
    if b.is_empty() {
        return;
    }
    if a.is_empty() {
        *a = b;
        return;
    }
    let (n, m) = (a.len(), b.len());
    a.resize(n + m, 0);
    // Invariant: w - i = j + (keys found in both so far) >= 0, so writing a[w - 1] never
    // overwrites an unread a[..i].
    let (mut i, mut j, mut w) = (n, m, n + m);
    while j > 0 {
        let y = b[j - 1];
        w -= 1;
        if i > 0 && a[i - 1] >= y {
            let x = a[i - 1];
            a[w] = x;
            i -= 1;
            j -= (x == y) as usize;
        } else {
            a[w] = y;
            j -= 1;
        }
    }
    // a[..i] is already in place; close the gap left by the keys found in both.
    a.copy_within(w.., i);
    a.truncate(n + m - (w - i));
}

/// Statistics of a finished layer.
fn layer_stats(geom: &Geometry, depth: u32, keys: &[u64], cumulative: u64, seconds: f64) -> LayerStats {
    let phases = Phase::all(geom, 2 * geom.start_pieces());
    let slot = |p: Phase| phases.iter().position(|&q| q == p).expect("a live phase");
    let ranges = task_ranges(keys);
    let zero = || LayerStats { phases: vec![PhaseLayer::default(); phases.len()], ..LayerStats::default() };
    let add = |mut x: LayerStats, y: LayerStats| {
        x.positions += y.positions;
        x.with_forbidden += y.with_forbidden;
        x.checkmate_positions += y.checkmate_positions;
        x.checkmate_nodes += y.checkmate_nodes;
        for (p, q) in x.phases.iter_mut().zip(y.phases) {
            p.nodes += q.nodes;
            p.positions += q.positions;
        }
        x
    };
    let mut s = ranges
        .par_iter()
        .map(|&(a, b)| {
            let mut s = zero();
            let run = &keys[a..b];
            let mut i = 0;
            while i < run.len() {
                let code = key_code(run[i]);
                let mut e = i + 1;
                while e < run.len() && key_code(run[e]) == code {
                    e += 1;
                }
                let n = (e - i) as u64;
                let p = Position::from_code(code);
                s.positions += 1;
                s.with_forbidden += run[i..e].iter().filter(|&&k| key_index(k) != 0).count() as u64;
                if is_immediate_win(geom, &p) {
                    s.checkmate_positions += 1;
                    s.checkmate_nodes += n;
                }
                let ph = &mut s.phases[slot(p.phase())];
                ph.nodes += n;
                ph.positions += 1;
                i = e;
            }
            s
        })
        .reduce(zero, add);
    for (p, ph) in s.phases.iter_mut().zip(&phases) {
        p.phase = [ph.player, ph.opponent];
    }
    s.depth = depth;
    s.nodes = keys.len() as u64;
    s.cumulative = cumulative;
    s.seconds = seconds;
    s
}

#[cfg(test)]
mod tests {
    use std::collections::HashSet;

    use super::*;
    use crate::game::forbidden::node_of;
    use crate::game::forbidden::{ChildTable, first_index_reaching};
    use crate::game::moves::{Removal, move_index, play, transform_move};
    use crate::game::naive::ArrayBoard;
    use crate::game::node::{children, pred_node_index};
    use crate::game::symmetry::{canonical, canonical_code};
    use crate::progress::Silent;

    fn counts(r: &BfsReport) -> Vec<u64> {
        r.layers.iter().map(|l| l.nodes).collect()
    }

    /// OSTLE.md section 4: the published first layers in both conventions.
    #[test]
    fn published_first_layers() {
        let g = Geometry::standard();
        let p = bfs_layers(g, Convention::Published, 4, u64::MAX, &Silent);
        assert_eq!(counts(&p), [1, 9, 102, 954, 6329]);
        assert_eq!(p.stop, Stop::MaxDepth);
        assert_eq!(p.total_nodes, 1 + 9 + 102 + 954 + 6329);
        let s = bfs_layers(g, Convention::Strict, 4, u64::MAX, &Silent);
        assert_eq!(counts(&s), [1, 9, 99, 932, 6319]);
    }

    /// Checkmate positions are first reached at depth 5, so expanding them or not agrees up
    /// to depth 5 and differs from depth 6 on (the published run expands them).
    #[test]
    fn checkmate_expansion_first_matters_at_depth_6() {
        let g = Geometry::standard();
        for conv in [Convention::Published, Convention::Strict] {
            let with = bfs_layers_with(g, conv, true, 6, u64::MAX, &Silent);
            let without = bfs_layers_with(g, conv, false, 6, u64::MAX, &Silent);
            let first_mate = with.layers.iter().position(|l| l.checkmate_positions > 0);
            assert_eq!(first_mate, Some(5), "{conv:?}");
            assert_eq!(counts(&with)[..=5], counts(&without)[..=5], "{conv:?}");
            assert!(with.layers[6].nodes > without.layers[6].nodes, "{conv:?}");
        }
    }

    /// A naive BFS on the array board of `game::naive`: explicit (code, j) nodes in a
    /// hash map, the forbidden index by playing every move of the canonical child and
    /// comparing canonical codes, immediate wins by trying every move; nothing shared with
    /// the engine but `Position`'s fields.
    fn naive_bfs(g: &Geometry, strict: bool, expand_checkmates: bool, max_depth: u32) -> Vec<HashSet<u64>> {
        use crate::game::naive::Cell::{Opponent, Player};
        let n = g.side() as usize;
        let (losing, last_piece) = (g.start_pieces() as usize - 2, g.start_pieces() as usize - 1);
        let canon = |b: &ArrayBoard| (0..8).map(|k| b.image(k)).min_by_key(|b| b.code()).expect("8 images");
        let count = |b: &ArrayBoard, who| b.cells.iter().filter(|&&c| c == who).count();
        let start = canon(&ArrayBoard::from_position(n, &Position::initial(g)));
        let mut seen: HashSet<u64> = HashSet::from([start.code() << 5]);
        let mut layers = vec![HashSet::from([start.code() << 5])];
        for _ in 1..=max_depth {
            let mut next = HashSet::new();
            for &key in layers.last().unwrap() {
                let p = ArrayBoard::from_position(n, &Position::from_code(key >> 5));
                let mate = count(&p, Opponent) == last_piece && p.moves().iter().any(|&m| p.play(m).2 > 0);
                if mate && !expand_checkmates {
                    continue;
                }
                let p_code = p.canonical_code();
                for (i, &m) in p.moves().iter().enumerate() {
                    if strict && i + 1 == (key & 31) as usize {
                        continue;
                    }
                    let (child, own, opp) = p.play(m);
                    if count(&child, Player) == losing || count(&child, Opponent) == losing {
                        continue;
                    }
                    let c = canon(&child);
                    let j = if own + opp > 0 {
                        0
                    } else {
                        let reaches = |&mm: &crate::game::naive::NaiveMove| {
                            let (b, o, q) = c.play(mm);
                            o + q == 0 && b.canonical_code() == p_code
                        };
                        c.moves().iter().position(reaches).map_or(0, |x| x + 1)
                    };
                    let k = c.code() << 5 | j as u64;
                    if seen.insert(k) {
                        next.insert(k);
                    }
                }
            }
            if next.is_empty() {
                break;
            }
            layers.push(next);
        }
        layers
    }

    /// Every layer of the fast search equals the naive one's, in both conventions, with
    /// and without checkmate expansion. Returns the layer counts per variant.
    fn assert_same_layers(g: &Geometry, max_depth: u32) -> Vec<Vec<u64>> {
        let mut all = Vec::new();
        for conv in [Convention::Published, Convention::Strict] {
            for mates in [true, false] {
                let fast = bfs_layers_with(g, conv, mates, max_depth, u64::MAX, &Silent);
                let naive = naive_bfs(g, conv == Convention::Strict, mates, max_depth);
                assert_eq!(fast.layers.len(), naive.len(), "{g:?} {conv:?} {mates}");
                for (d, want) in naive.iter().enumerate() {
                    let got = fast.nodes.layer(d as u32).expect("a layer");
                    assert!(got.windows(2).all(|w| w[0] < w[1]), "sorted and unique");
                    assert_eq!(got.len(), want.len(), "{g:?} {conv:?} {mates} depth {d}");
                    assert!(got.iter().all(|k| want.contains(k)), "{g:?} {conv:?} {mates} depth {d}");
                    for &k in want.iter().take(50) {
                        assert_eq!(fast.nodes.depth_of_key(k), Some(d as u32));
                    }
                }
                all.push(counts(&fast));
            }
        }
        all
    }

    /// The 3x3 game is small enough to search to exhaustion; every layer equals the naive
    /// search's, and the variants really differ there.
    #[test]
    fn small_board_matches_naive_bfs_to_exhaustion() {
        let g = Geometry::new(3, 3).unwrap();
        let r = bfs_layers(&g, Convention::Published, 1000, u64::MAX, &Silent);
        assert_eq!(r.stop, Stop::Exhausted);
        assert!(r.layers.len() > 5, "{:?}", counts(&r));
        let v = assert_same_layers(&g, 1000);
        assert_ne!(v[0], v[1], "checkmate expansion matters on 3x3");
        assert_ne!(v[0], v[2], "the conventions differ on 3x3");
    }

    #[test]
    fn standard_and_4x4_boards_match_naive_bfs() {
        let v = assert_same_layers(Geometry::standard(), 4);
        assert_eq!(v[0], [1, 9, 102, 954, 6329]);
        assert_eq!(v[2], [1, 9, 99, 932, 6319]);
        assert_same_layers(&Geometry::new(4, 4).unwrap(), 7);
    }

    /// For every node the 3x3 search reaches and every move of it: the lazy child index
    /// equals the engine's `ChildTable` and the plain `first_index_reaching`.
    #[test]
    fn fast_child_index_equals_first_index_reaching_on_3x3() {
        let g = Geometry::new(3, 3).unwrap();
        let r = bfs_layers(&g, Convention::Published, 1000, u64::MAX, &Silent);
        assert!(child_indices_agree(&g, &r) > 10_000);
    }

    /// The same on the standard board, for every node to depth 5 and every move of it.
    #[test]
    fn fast_child_index_equals_first_index_reaching_on_the_standard_board() {
        let g = Geometry::standard().clone();
        let r = bfs_layers(&g, Convention::Published, 5, u64::MAX, &Silent);
        assert!(child_indices_agree(&g, &r) > 100_000);
    }

    /// Check the lazy child index of every move of every node of `r` against the engine's
    /// `ChildTable` and the plain `first_index_reaching`; the number of moves checked.
    fn child_indices_agree(g: &Geometry, r: &BfsReport) -> u64 {
        let positions = (0..=r.nodes.max_depth())
            .flat_map(|d| r.nodes.layer(d).unwrap().iter().map(|&key| Position::from_code(key_code(key))));
        let (checked, nonzero_without_undo) = child_indices_agree_over(g, positions);
        // Plain steps that cannot be undone exactly still get an index when another move
        // reaches a mirror image (the published identity); make sure the test sees some.
        assert!(nonzero_without_undo > 0);
        checked
    }

    /// [`child_indices_agree`] over any canonical positions. Each predecessor is also
    /// given to the lazy index in every other orientation (the answer is about its
    /// images, so it must not change). The number of moves checked, and of those that
    /// cannot be undone exactly but have a non-zero index.
    fn child_indices_agree_over(g: &Geometry, positions: impl Iterator<Item = Position>) -> (u64, u64) {
        let g = g.clone();
        let mut checked = 0u64;
        let mut nonzero_without_undo = 0;
        for p in positions {
            // `children` (the parent's images made once for all its moves) gives what
            // `child_node` gives move by move, removals and ends of the game included.
            let (kids, n) = children(&g, &p);
            let list = moves(&g, &p);
            assert_eq!(n, list.len());
            for (i, &m) in list.iter().enumerate() {
                assert_eq!(kids[i], child_node(&g, &p, m), "{p:?} {m:?}");
            }
            for &m in list.iter() {
                let pl = play(&g, &p, m).unwrap();
                if pl.removal != Removal::None {
                    continue;
                }
                let (c, k) = canonical(&g, &pl.child);
                let pred = p.transformed(&g, k);
                let undo_index = pl.undo.map(|u| move_index(&g, &c, transform_move(&g, k, u)));
                let lazy = pred_node_index(&g, &c, &pred, undo_index);
                let table = ChildTable::new(&g, &c).node_index_of_pred(&g, &pred, undo_index);
                let plain = first_index_reaching(&g, &c, canonical_code(&g, &p));
                assert_eq!((lazy, table), (plain, plain), "{p:?} {m:?}");
                for t in 1..8 {
                    let image = pred.transformed(&g, t);
                    assert_eq!(pred_node_index(&g, &c, &image, undo_index), plain, "{p:?} {m:?} image {t}");
                }
                assert_eq!(child_node(&g, &p, m), Some(node_key(c.code(), plain)));
                nonzero_without_undo += (pl.undo.is_none() && plain != 0) as u64;
                checked += 1;
            }
        }
        (checked, nonzero_without_undo)
    }

    /// The same over positions of every phase of the 5x5 game, spread over each phase's
    /// index (the BFS's first layers hold only positions near the start), and of the 4x4
    /// board with 4 pieces.
    #[test]
    fn fast_child_index_equals_first_index_reaching_across_every_phase() {
        for g in [Geometry::standard().clone(), Geometry::new(4, 4).expect("a valid board")] {
            let numbering = crate::index::GameNumbering::build(&g).expect("the numbering");
            let n = numbering.len();
            // A fixed multiplicative stride spreads 20,000 positions over the whole game.
            let positions = (0..20_000u64).map(|i| numbering.position_at(i.wrapping_mul(2_654_435_761) % n));
            let (checked, _) = child_indices_agree_over(&g, positions);
            assert!(checked > 100_000, "{}x{}: {checked} moves", g.side(), g.side());
        }
    }

    #[test]
    fn node_budget_stops_cleanly_and_depth_queries_work() {
        let g = Geometry::standard();
        let r = bfs_layers(g, Convention::Published, 10, 1 + 9 + 102 + 954 + 100, &Silent);
        assert_eq!(counts(&r), [1, 9, 102, 954]);
        match r.stop {
            Stop::NodeBudget { depth, partial_nodes, frontier, .. } => {
                assert_eq!((depth, frontier), (4, 954));
                assert!(partial_nodes > 100 && partial_nodes <= 6329);
            }
            ref s => panic!("{s:?}"),
        }
        assert_eq!(r.nodes.depth_of_key(start_key(g)), Some(0));
        let start = Position::initial(g);
        let m = moves(g, &start)[0];
        let child = play(g, &start, m).unwrap();
        assert_eq!(r.nodes.depth_of_key(node_of(g, &child.child, Some(&start))), Some(1));
        // A position far from the start.
        let far = crate::game::notation::parse_board(g, "00100-11200-00001-31022-20020").unwrap();
        assert_eq!(r.nodes.depth_of_key(node_of(g, &far, None)), None);
    }

    #[test]
    fn merge_and_subtract_helpers() {
        let a: Vec<u64> = (0..10_000).map(|x| x * 3).collect();
        let b: Vec<u64> = (0..7_000).map(|x| x * 5).collect();
        let mut want: Vec<u64> = a.iter().chain(&b).copied().collect();
        want.sort_unstable();
        want.dedup();
        let mut m = a.clone();
        merge_into(&mut m, b.clone());
        assert_eq!(m, want);
        let mut m = b.clone();
        merge_into(&mut m, a.clone());
        assert_eq!(m, want);
        for (x, y) in [(vec![], vec![1, 2]), (vec![1, 2], vec![]), (vec![5], vec![5]), (vec![1, 3], vec![0, 3, 4])] {
            let mut w: Vec<u64> = x.iter().chain(&y).copied().collect();
            w.sort_unstable();
            w.dedup();
            let mut m = x.clone();
            merge_into(&mut m, y.clone());
            assert_eq!(m, w, "{x:?} {y:?}");
        }
        let mut c: Vec<u64> = (0..40_000).collect();
        subtract(&mut c, &[a.clone(), b.clone()]);
        let sa: HashSet<u64> = a.into_iter().chain(b).collect();
        assert_eq!(c, (0..40_000).filter(|x| !sa.contains(x)).collect::<Vec<_>>());
        for s in [&[][..], &[5][..], &[1, 2, 3, 9, 20, 21, 40][..]] {
            for from in 0..=s.len() {
                for v in 0..45 {
                    let want = from + s[from..].partition_point(|&x| x < v);
                    assert_eq!(gallop(s, from, v), want, "{s:?} {from} {v}");
                }
            }
        }
    }
}
