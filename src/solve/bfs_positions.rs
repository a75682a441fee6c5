//! Breadth-first search from the initial position over *positions* instead of node
//! lists: the published convention (OSTLE.md section 4) in a fixed amount of memory per
//! position, nothing per node, so the whole 5x5 game fits (the node-list search of
//! [`crate::solve::bfs`] needs 8 bytes per node and stops at depth 13).
//!
//! # Algorithm
//!
//! Under [`Convention::Published`] every node `(P, j)` of a position `P` has the same
//! children (all moves of `P` are played), so `P` is expanded once, in the layer where its
//! first node is reached; a later node of `P` would only reach nodes already reached.
//! Every position of the game has a global number: the phases of
//! [`GameIndex::build`]`(geom, 2 * start_pieces)` in solving order, each numbered by its
//! dense index, concatenated. Per position the search keeps a 32-bit *mask*: bit `J` set
//! when node `(P, J)` has been reached (`J <= 24`, bits 0..=24). Expanding the layer at
//! depth `d`, each child node `(C, J)` ([`children_with`]) sets bit `J` of `C`'s mask; a bit
//! newly set is a node first reached at depth `d + 1`, and a mask whose node bits go from
//! zero to non-zero puts `C` into the next frontier. The frontiers are two bitmaps over
//! the global numbering, the positions first reached at `d` (expanded now) and at `d + 1`
//! (filled now); they swap after each layer. The current frontier is expanded in parallel
//! (rayon) over chunks of its bitmap, and each word is zeroed as it is read, so after the
//! layer it is the empty bitmap the next one fills. A flag per chunk of 16,384 positions
//! says whether the chunk may hold a bit, so a sparse layer (the first and last ones)
//! skips the rest of the bitmap.
//!
//! Immediate-win ("checkmate") positions are expanded or not as `expand_checkmates`
//! says, exactly as [`bfs_layers_with`](crate::solve::bfs::bfs_layers_with) does
//! (expanded, the default of the published run: their winning capture has no child).
//!
//! # Counting a layer exactly
//!
//! Every count of [`LayerStats`] comes from the marking step, with no per-node storage:
//!
//! * `nodes`, `with_forbidden`, `checkmate_nodes` and each phase's `nodes`: one per bit
//!   newly set (the compare-and-swap that sets it sees the old mask, so exactly one thread
//!   counts each node), split by `J > 0`, by whether `C` is an immediate win, and by `C`'s
//!   phase.
//! * `positions`, `checkmate_positions` and each phase's `positions` count the distinct
//!   positions among the layer's new nodes, which include positions first reached in an
//!   earlier layer that gain a new node now. A third bitmap marks the positions that
//!   gained a node in the layer: the thread whose `fetch_or` sets a position's bit counts
//!   it, and the bitmap is cleared after the layer.
//!
//! The spare high bits of the mask (25..=31) hold the depth of the position's first node,
//! written by the same compare-and-swap that sets its first node bit (depths of 127 and
//! more read as 127; the whole 5x5 game has 27 layers, depths 0..=26 in the published
//! run), so the first depths ([`bfs_first_depths`]) cost nothing more.
//!
//! # Memory
//!
//! Per position: 4 bytes of mask plus 3 bits of bitmaps (two frontiers, the layer's
//! touched positions), 4.375 bytes; nothing per node. The whole 5x5 game has
//! 2,735,147,685 positions: 10.94 GB of masks plus 1.03 GB of bitmaps, 11.97 GB = 11.15
//! GiB (plus the index tables and the chunk flags, a few MB), first depths included.
//! The arrays are allocated zeroed by the operating system, so pages never written stay
//! unused (a search to depth 13 or more asks for huge pages, `HUGE_PAGES_FROM_DEPTH`, so
//! there a page is 2 MB): a shallow search touches a small part of them (the 5x5 game to
//! depth 8 stayed under 0.25 GB resident, the node-list search of the same test
//! included), and the resident size grows toward the figures above as the search spreads
//! over the game. [`search_bytes`] gives them for a board.
//!
//! # Checkpoints
//!
//! [`bfs_first_depths_with`] saves the search's state at layer boundaries into a
//! checkpoint directory ([`Checkpoints`]; the file is [`crate::solve::bfs_checkpoint`]'s)
//! and resumes from it: at a boundary the state is the masks, the frontier about to be
//! expanded and the layer statistics (the other bitmaps are empty then), so a resumed
//! search gives the same report and first depths as one that never stopped.
//!
//! # What the report leaves out
//!
//! The report is a [`BfsReport`] like the node-list search's, so the two compare
//! directly, but [`BfsReport::nodes`] is empty (this search keeps no node lists),
//! `max_nodes` is `u64::MAX` (memory is fixed, there is no node budget), and the search
//! stops only at `max_depth` or when a layer is empty ([`Stop::MaxDepth`],
//! [`Stop::Exhausted`]). The strict convention, where a node does not play its own
//! forbidden move and a position can need expanding again, is not done here.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU8, AtomicU32, AtomicU64, Ordering::Relaxed};
use std::time::{Duration, Instant};

use rayon::prelude::*;

use crate::bfs_depths::first_depths::FirstDepthSummary;
use crate::bfs_depths::node_layers;
use crate::error::{Error, io};
use crate::game::moves::is_immediate_win;
use crate::game::node::{Convention, children_with, key_code, key_index, start_key_of};
use crate::game::{Geometry, Phase, Position};
use crate::index::{GameIndex, GameNumbering};
use crate::progress::{Reporter, thousands};
use crate::solve::bfs::{BfsNodes, BfsReport, LayerStats, PhaseLayer, Stop};
use crate::solve::bfs_checkpoint::{self, DEPTH_SHIFT, MAX_FIRST_DEPTH, Progress};

/// Bytes per position of the masks.
pub const MASK_BYTES_PER_POSITION: u64 = 4;
/// Bits per position of the bitmaps together: the two frontiers and the positions
/// touched in the current layer.
pub const BITMAP_BITS_PER_POSITION: u64 = 3;

/// Mask bits holding the reached forbidden indices `0..=24` (the node-layer files keep
/// these bits of each mask).
pub(crate) use crate::bfs_depths::node_layers::NODE_BITS;
/// Frontier bitmap words per parallel task and per dirty flag (64 positions each).
const CHUNK_WORDS: usize = 256;
/// Stored for a position whose first node was not reached (see [`FirstDepths::get`]);
/// the first-depth file stores the same byte.
pub use crate::bfs_depths::first_depths::NOT_REACHED;

/// Bytes the search needs for `positions` positions: masks and bitmaps (first depths
/// included).
pub fn search_bytes(positions: u64) -> u64 {
    positions * MASK_BYTES_PER_POSITION + 3 * positions.div_ceil(64) * 8
}

/// `n` zeros, lazily zeroed (see [`crate::sys::zeroed_vec`]), or [`Error::OutOfMemory`]
/// with this search's advice.
fn zeroed<T: crate::sys::ZeroIsValid>(n: usize, what: &str) -> Result<Vec<T>, Error> {
    crate::sys::zeroed_vec(
        n,
        what,
        "the breadth-first search over positions needs 4.375 bytes per position of the game (12.0 GB for \
         5x5); search a smaller board or free memory",
    )
}

/// One layer's counts as the marking step finds them.
#[derive(Clone, Debug)]
struct Tally {
    nodes: u64,
    with_forbidden: u64,
    positions: u64,
    checkmate_positions: u64,
    checkmate_nodes: u64,
    /// Positions first reached (the next frontier).
    first_reached: u64,
    phase_nodes: Vec<u64>,
    phase_positions: Vec<u64>,
}

impl Tally {
    fn new(phases: usize) -> Tally {
        Tally {
            nodes: 0,
            with_forbidden: 0,
            positions: 0,
            checkmate_positions: 0,
            checkmate_nodes: 0,
            first_reached: 0,
            phase_nodes: vec![0; phases],
            phase_positions: vec![0; phases],
        }
    }

    fn add(mut self, o: Tally) -> Tally {
        self.nodes += o.nodes;
        self.with_forbidden += o.with_forbidden;
        self.positions += o.positions;
        self.checkmate_positions += o.checkmate_positions;
        self.checkmate_nodes += o.checkmate_nodes;
        self.first_reached += o.first_reached;
        for (a, b) in self.phase_nodes.iter_mut().zip(o.phase_nodes) {
            *a += b;
        }
        for (a, b) in self.phase_positions.iter_mut().zip(o.phase_positions) {
            *a += b;
        }
        self
    }

    fn into_stats(self, phases: &[Phase], depth: u32, cumulative: u64, seconds: f64) -> LayerStats {
        LayerStats {
            depth,
            nodes: self.nodes,
            cumulative,
            positions: self.positions,
            with_forbidden: self.with_forbidden,
            checkmate_positions: self.checkmate_positions,
            checkmate_nodes: self.checkmate_nodes,
            phases: phases
                .iter()
                .zip(self.phase_nodes.iter().zip(&self.phase_positions))
                .map(|(ph, (&nodes, &positions))| PhaseLayer { phase: [ph.player, ph.opponent], nodes, positions })
                .collect(),
            seconds,
        }
    }
}

/// The depth of each position's first node, by global number (see
/// [`bfs_first_depths`]).
#[derive(Debug)]
pub struct FirstDepths {
    universe: GameNumbering,
    /// The phase of the start position ([`Position::start`]).
    start: Phase,
    /// The search's masks: node bits, and the first depth in the high bits.
    masks: Vec<AtomicU32>,
    /// The directory of the search's node layers, every layer's file there, when it
    /// kept them ([`Checkpoints::node_layers`]).
    node_layers: Option<std::path::PathBuf>,
}

impl FirstDepths {
    /// Number of positions (all phases of the game).
    pub fn len(&self) -> u64 {
        self.masks.len() as u64
    }

    /// True when there is no position (never for a real board).
    pub fn is_empty(&self) -> bool {
        self.masks.is_empty()
    }

    /// The depth of the first node of the position with global number `g` (its phase's
    /// dense index plus the sizes of the phases before it in solving order),
    /// [`NOT_REACHED`] when the search did not reach it (deeper than the last computed
    /// layer, or unreachable), `None` when `g` is out of range. Depths of
    /// [`MAX_FIRST_DEPTH`] and more read as that.
    pub fn get(&self, g: u64) -> Option<u8> {
        self.masks.get(usize::try_from(g).ok()?).map(|m| first_depth(m.load(Relaxed)))
    }

    /// The global number of `pos` (any orientation), or an error when it is not a live
    /// position of the board.
    pub fn global_index(&self, pos: &Position) -> Result<u64, Error> {
        pos.validate(self.universe.index().geometry())?;
        self.universe
            .global_of(pos)
            .map(|(g, _)| g)
            .ok_or_else(|| Error::InvalidPosition(format!("phase {} is not in the index", pos.phase())))
    }

    /// The depth of the first node of `pos` (any orientation), `None` when not reached,
    /// or an error when `pos` is not a live position of the board.
    pub fn depth_of(&self, pos: &Position) -> Result<Option<u32>, Error> {
        let g = self.global_index(pos)?;
        Ok(self.get(g).filter(|&d| d != NOT_REACHED).map(u32::from))
    }

    /// Positions per first-node depth (index = depth), up to the deepest reached.
    pub fn histogram(&self) -> Vec<u64> {
        let counts = self
            .masks
            .par_chunks(1 << 16)
            .fold(
                || vec![0u64; 256],
                |mut h, c| {
                    for m in c {
                        h[first_depth(m.load(Relaxed)) as usize] += 1;
                    }
                    h
                },
            )
            .reduce(
                || vec![0u64; 256],
                |mut a, b| {
                    a.iter_mut().zip(b).for_each(|(x, y)| *x += y);
                    a
                },
            );
        let deepest = counts[..NOT_REACHED as usize].iter().rposition(|&c| c > 0).map_or(0, |d| d + 1);
        counts[..deepest].to_vec()
    }

    /// Write the depth of every position's first node, one byte per position in global
    /// order ([`FirstDepths::get`]: [`NOT_REACHED`] for a position not reached), as the
    /// raw file of `ostledb bfs --first-depths-out` (schema/FORMAT.md).
    pub fn write_raw(&self, w: &mut impl std::io::Write) -> std::io::Result<()> {
        let mut buf = Vec::with_capacity(1 << 20);
        for chunk in self.masks.chunks(1 << 20) {
            buf.clear();
            buf.extend(chunk.iter().map(|m| first_depth(m.load(Relaxed))));
            w.write_all(&buf)?;
        }
        Ok(())
    }

    /// The position index the global numbers are made of.
    pub fn index(&self) -> &GameIndex {
        self.universe.index()
    }

    /// The phase of the position the search started from ([`Position::start`]).
    pub fn start(&self) -> Phase {
        self.start
    }

    /// The directory of the search's node layers ([`crate::bfs_depths::node_layers`]), one
    /// file per layer, when it kept them: to be made a database's with
    /// [`crate::bfs_depths::node_layers::commit`] once its first depths are stored.
    pub fn node_layers(&self) -> Option<&std::path::Path> {
        self.node_layers.as_deref()
    }
}

/// Breadth-first search over positions under the published convention from the initial
/// position of `geom`, up to `max_depth` plies or until a layer is empty (see the module
/// documentation). Returns the same [`BfsReport`] as
/// [`bfs_layers_with`](crate::solve::bfs::bfs_layers_with)`(geom, Convention::Published,
/// expand_checkmates, max_depth, ..)` but with empty [`BfsReport::nodes`] and a
/// `max_nodes` of `u64::MAX`. `reporter` gets one begin/advance/end step per layer
/// (units: frontier positions). Fails only when the memory cannot be had.
pub fn bfs_positions(
    geom: &Geometry,
    expand_checkmates: bool,
    max_depth: u32,
    reporter: &dyn Reporter,
) -> Result<BfsReport, Error> {
    bfs_positions_from(geom, game_start(geom), expand_checkmates, max_depth, reporter)
}

/// [`bfs_positions`] from [`Position::start`]`(geom, start)` instead of the initial
/// position: for a phase with fewer pieces, the search of the published solver's `-s 8`
/// or `-s 9` run ([`Phase::start_of`]), which reaches only the phases with at most as
/// many pieces.
pub fn bfs_positions_from(
    geom: &Geometry,
    start: Phase,
    expand_checkmates: bool,
    max_depth: u32,
    reporter: &dyn Reporter,
) -> Result<BfsReport, Error> {
    let universe = GameNumbering::build_max(geom, start.pieces())?;
    search(geom, &universe, start, expand_checkmates, max_depth, &Checkpoints::default(), reporter)
        .map(|(report, ..)| report)
}

/// The phase of the game's initial position.
fn game_start(geom: &Geometry) -> Phase {
    Phase::new(geom.start_pieces(), geom.start_pieces())
}

/// [`bfs_positions`], also giving per position the depth of its first node (kept in the
/// search's masks, so at no extra cost).
pub fn bfs_first_depths(
    geom: &Geometry,
    expand_checkmates: bool,
    max_depth: u32,
    reporter: &dyn Reporter,
) -> Result<(BfsReport, FirstDepths), Error> {
    bfs_first_depths_with(geom, expand_checkmates, max_depth, &Checkpoints::default(), reporter)
}

/// Where and when the search by positions saves its state ([`bfs_first_depths_with`]),
/// so that a run that is killed or stopped resumes at its last layer boundary.
#[derive(Clone, Debug, Default)]
pub struct Checkpoints {
    /// The directory of the checkpoint file ([`crate::solve::bfs_checkpoint::FILE_NAME`]);
    /// `None`: nothing is saved or resumed.
    pub dir: Option<std::path::PathBuf>,
    /// Save at the first layer boundary this long after the search started, was resumed
    /// or last saved (`Duration::ZERO`: after every layer); `None`: only when stopped.
    pub every: Option<Duration>,
    /// Set (by a Ctrl-C handler, say) to stop the search at the next layer boundary,
    /// after saving its state there when `dir` is given: the search then returns
    /// [`Error::BfsStopped`].
    pub stop: Option<Arc<AtomicBool>>,
    /// Keep the search's node layers ([`crate::bfs_depths::node_layers`]) in `dir`'s
    /// [`PARTIAL_DIR_NAME`](crate::bfs_depths::node_layers::PARTIAL_DIR_NAME), a file as each
    /// layer is done (needs `dir`). A search resumed from a checkpoint saved without
    /// them, or whose earlier layers' files are gone, does not keep them (and says so).
    pub node_layers: bool,
}

impl Checkpoints {
    /// Remove the checkpoint, if there is one: call it once the results of a finished
    /// search are kept (stored, written out).
    pub fn finish(&self) -> Result<(), Error> {
        match &self.dir {
            Some(dir) => bfs_checkpoint::remove(dir),
            None => Ok(()),
        }
    }
}

/// [`bfs_first_depths`] that saves its state at layer boundaries and resumes from a
/// saved one, as `checkpoints` says. With a directory, a search that finds a checkpoint
/// there continues from it (and [`Reporter::note`]s so), and the result is the one an
/// uninterrupted search gives: every layer's statistics but their times, every first
/// depth (the report's and the layers' seconds add those of the runs before). The
/// checkpoint must be of a search of the same board with the same `expand_checkmates`,
/// at most `max_depth` deep (`max_depth` may differ from the run that saved it); any
/// other, and a damaged one, is an error that names the file. The last checkpoint stays
/// when the search ends (its last layer empty, or `max_depth` reached) until
/// [`Checkpoints::finish`] removes it, to be called once the results are kept: a
/// failure while storing them then costs the layers since the last save, not the
/// whole search. An error or a stop leaves it in place too.
pub fn bfs_first_depths_with(
    geom: &Geometry,
    expand_checkmates: bool,
    max_depth: u32,
    checkpoints: &Checkpoints,
    reporter: &dyn Reporter,
) -> Result<(BfsReport, FirstDepths), Error> {
    bfs_first_depths_from(geom, game_start(geom), expand_checkmates, max_depth, checkpoints, reporter)
}

/// [`bfs_first_depths_with`] from [`Position::start`]`(geom, start)` (see
/// [`bfs_positions_from`]). A checkpoint must be of a search from the same start.
pub fn bfs_first_depths_from(
    geom: &Geometry,
    start: Phase,
    expand_checkmates: bool,
    max_depth: u32,
    checkpoints: &Checkpoints,
    reporter: &dyn Reporter,
) -> Result<(BfsReport, FirstDepths), Error> {
    let universe = GameNumbering::build_max(geom, start.pieces())?;
    let (report, masks, node_layers) =
        search(geom, &universe, start, expand_checkmates, max_depth, checkpoints, reporter)?;
    Ok((report, FirstDepths { universe, start, masks, node_layers }))
}

/// The first depth a mask holds ([`NOT_REACHED`] without a node).
#[inline]
fn first_depth(mask: u32) -> u8 {
    if mask & NODE_BITS == 0 { NOT_REACHED } else { (mask >> DEPTH_SHIFT) as u8 }
}

/// Store the first depths of a search ([`bfs_first_depths`]) in database directory `dir`
/// as its first-depth file ([`crate::bfs_depths::first_depths`]), with the search's layer
/// counts and whether it was complete; `reporter` gets a step for the writing. Returns
/// what was stored and the file's length.
pub fn store_first_depths(
    dir: &std::path::Path,
    report: &BfsReport,
    depths: &FirstDepths,
    reporter: &dyn Reporter,
) -> Result<(FirstDepthSummary, u64), Error> {
    if report.layers.len() > MAX_FIRST_DEPTH as usize {
        return Err(Error::InvalidArgument(format!(
            "a search of {} layers: first depths of {MAX_FIRST_DEPTH} and more are not told apart, so it cannot be stored",
            report.layers.len()
        )));
    }
    let mut first_reached = depths.histogram();
    first_reached.resize(report.layers.len(), 0);
    let summary = FirstDepthSummary {
        expand_checkmates: report.expand_checkmates,
        complete: matches!(report.stop, Stop::Exhausted),
        layers: report.layers.iter().map(|l| l.nodes).collect(),
        first_reached,
        positions: depths.len(),
        start: depths.start(),
    };
    let geom = depths.index().geometry();
    let len = crate::bfs_depths::first_depths::write(
        dir,
        geom,
        &summary,
        |start, out| {
            for (i, d) in out.iter_mut().enumerate() {
                *d = depths.get(start + i as u64).unwrap_or(NOT_REACHED);
            }
            Ok(())
        },
        reporter,
    )?;
    Ok((summary, len))
}

fn len_usize(n: u64) -> Result<usize, Error> {
    usize::try_from(n).map_err(|_| Error::InvalidArgument(format!("{n} positions do not fit this machine's memory")))
}

/// The least `max_depth` for which the search's arrays ask for huge pages. On the 5x5
/// game (docs/measurements.md, "The whole BFS by positions"): to depth 14, 246.5-254.2 s with
/// them against 297.6-312.5 s without (1.17x-1.27x), 11.7 GB resident against 8.4 GB
/// (the whole search ends with every page resident either way); to depth 8, 2.97 s and
/// 1.98 GB against 1.21 s and 0.22 GB. From depth 13 on, a layer reaches tens of millions
/// of positions, a few in nearly every 2 MB of the masks.
const HUGE_PAGES_FROM_DEPTH: u32 = 13;

/// The search's shared state.
struct Search<'a> {
    geom: &'a Geometry,
    universe: &'a GameNumbering,
    /// The phase of the start position.
    start: Phase,
    expand_checkmates: bool,
    masks: &'a [AtomicU32],
    /// The positions that gained a node in the current layer.
    touched: &'a [AtomicU64],
}

fn search(
    geom: &Geometry,
    universe: &GameNumbering,
    start_phase: Phase,
    expand_checkmates: bool,
    max_depth: u32,
    checkpoints: &Checkpoints,
    reporter: &dyn Reporter,
) -> Result<(BfsReport, Vec<AtomicU32>, Option<std::path::PathBuf>), Error> {
    let t0 = Instant::now();
    if checkpoints.node_layers && checkpoints.dir.is_none() {
        return Err(Error::InvalidArgument(
            "the node layers of a search are kept beside its checkpoint: give a checkpoint directory".into(),
        ));
    }
    if !universe.phases().contains(&start_phase) {
        return Err(Error::InvalidArgument(format!("phase {start_phase} is not a phase of {geom:?}")));
    }
    let n = len_usize(universe.len())?;
    let masks = zeroed::<AtomicU32>(n, "the reached-node masks of every position")?;
    let words = n.div_ceil(64);
    let mut cur = Frontier {
        words: zeroed::<AtomicU64>(words, "a frontier bitmap")?,
        dirty: zeroed::<AtomicU8>(words.div_ceil(CHUNK_WORDS), "a frontier bitmap")?,
    };
    let mut next = Frontier {
        words: zeroed::<AtomicU64>(words, "a frontier bitmap")?,
        dirty: zeroed::<AtomicU8>(words.div_ceil(CHUNK_WORDS), "a frontier bitmap")?,
    };
    let touched = zeroed::<AtomicU64>(words, "the positions touched in a layer")?;
    // Every child sets a bit of its mask, the next frontier and the touched bitmap, at
    // random over gigabytes: huge pages spare most of the page walks that costs (the
    // solver's state array does the same). A shallow search touches few of the arrays'
    // 2 MB pages and would make each of them resident whole, so only a deep one asks.
    if max_depth >= HUGE_PAGES_FROM_DEPTH {
        crate::sys::advise_huge_pages(&masks);
        crate::sys::advise_huge_pages(&cur.words);
        crate::sys::advise_huge_pages(&next.words);
        crate::sys::advise_huge_pages(&touched);
    }
    let s = Search { geom, universe, start: start_phase, expand_checkmates, masks: &masks, touched: &touched };
    let phases = universe.phases();

    let resumed = match &checkpoints.dir {
        Some(dir) => {
            let t = Instant::now();
            let found = bfs_checkpoint::load(
                dir,
                geom,
                &phases,
                start_phase,
                expand_checkmates,
                max_depth,
                &masks,
                |w, bits| {
                    cur.words[w].store(bits, Relaxed);
                    cur.dirty[w / CHUNK_WORDS].store(1, Relaxed);
                },
            )?;
            found.map(|(path, p)| (path, p, t.elapsed().as_secs_f64()))
        }
        None => None,
    };
    let from_checkpoint = resumed.is_some();
    // Where this search keeps its node layers: the files of the layers before its
    // checkpoint must be there to go on, and a new search starts an empty directory.
    let partial = checkpoints.dir.as_ref().map(|d| d.join(node_layers::PARTIAL_DIR_NAME));
    let mut layer_dir = None;
    if let Some(dir) = &partial {
        let kept = match &resumed {
            Some((_, p, _)) => {
                let touched: Vec<u64> = p.layers.iter().map(|l| l.positions).collect();
                node_layers::holds_layers(dir, geom, (start_phase, expand_checkmates), universe.len(), &touched)
            }
            None => false,
        };
        if checkpoints.node_layers && kept {
            layer_dir = Some(dir.clone());
        } else {
            if checkpoints.node_layers && resumed.is_some() {
                reporter.note(&format!(
                    "the checkpoint's search did not keep its node layers in {}: this one does not keep them \
                     either (delete the checkpoint to search again from depth 0 with them)",
                    dir.display()
                ));
            }
            if dir.exists() {
                std::fs::remove_dir_all(dir).map_err(io(dir))?;
            }
            if checkpoints.node_layers && resumed.is_none() {
                std::fs::create_dir_all(dir).map_err(io(dir))?;
                layer_dir = Some(dir.clone());
            }
        }
    }
    let mut progress = match resumed {
        Some((path, p, read)) => {
            let last = p.layers.last().expect("a checkpoint holds layer 0");
            reporter.note(&format!(
                "resumed the search from {} after depth {} ({} nodes, {} positions reached; {} positions to expand \
                 at depth {}), read in {read:.1} s",
                path.display(),
                last.depth,
                thousands(last.cumulative),
                thousands(p.reached),
                thousands(p.frontier),
                last.depth + 1
            ));
            p
        }
        None => {
            // Layer 0: the start node.
            let start = start_key_of(geom, start_phase);
            let p = Position::from_code(key_code(start));
            let Some((g, slot)) = universe.global_of(&p) else {
                return Err(Error::InvalidArgument(format!("the start position of {geom:?} is not in the index")));
            };
            masks[g as usize].store(1 << key_index(start), Relaxed);
            cur.set(g);
            if layer_dir.is_some() {
                // Layer 0's file is written from the touched bitmap, as every layer's.
                touched[(g / 64) as usize].fetch_or(1 << (g % 64), Relaxed);
            }
            let mut t = Tally::new(phases.len());
            let mate = is_immediate_win(geom, &p) as u64;
            (t.nodes, t.positions, t.first_reached) = (1, 1, 1);
            (t.with_forbidden, t.checkmate_nodes, t.checkmate_positions) = ((key_index(start) != 0) as u64, mate, mate);
            (t.phase_nodes[slot], t.phase_positions[slot]) = (1, 1);
            Progress {
                expand_checkmates,
                layers: vec![t.into_stats(&phases, 0, 1, 0.0)],
                reached: 1,
                frontier: 1,
                seconds: 0.0,
            }
        }
    };
    if let (Some(dir), false) = (&layer_dir, from_checkpoint) {
        s.keep_layer(dir, 0, 1, reporter)?;
        s.clear_touched();
    }
    let earlier = progress.seconds;
    // The number of layers the checkpoint on disk holds, if there is one.
    let mut saved = from_checkpoint.then_some(progress.layers.len());
    let mut saved_at = Instant::now();

    let stop = loop {
        let depth = progress.layers.len() as u32;
        if depth > max_depth {
            break Stop::MaxDepth;
        }
        // A layer boundary: every layer below `depth` is done, `cur` holds the positions
        // first reached at `depth - 1`, `next` and `touched` are empty.
        let asked = checkpoints.stop.as_ref().is_some_and(|s| s.load(Relaxed));
        if let Some(dir) = &checkpoints.dir {
            let due = checkpoints.every.is_some_and(|e| saved_at.elapsed() >= e);
            if (asked || due) && saved != Some(progress.layers.len()) {
                let t = Instant::now();
                progress.seconds = earlier + t0.elapsed().as_secs_f64();
                let (path, len) = bfs_checkpoint::save(dir, geom, &phases, &masks, &cur.words, &progress)?;
                reporter.note(&format!(
                    "saved the search after depth {} to {} ({:.2} GB in {:.1} s)",
                    depth - 1,
                    path.display(),
                    len as f64 / 1e9,
                    t.elapsed().as_secs_f64()
                ));
                saved = Some(progress.layers.len());
                saved_at = Instant::now();
            }
        }
        if asked {
            let checkpoint = match &checkpoints.dir {
                Some(dir) if saved == Some(progress.layers.len()) => Some(bfs_checkpoint::file(dir)),
                _ => None,
            };
            return Err(Error::BfsStopped { depth: depth - 1, checkpoint });
        }
        let t = Instant::now();
        reporter.begin(&format!("depth {depth}"), progress.frontier);
        let tally = s.expand(depth, &cur, &next, phases.len(), reporter);
        reporter.end();
        if let Some(dir) = layer_dir.as_ref().filter(|_| tally.nodes > 0) {
            s.keep_layer(dir, depth, tally.positions, reporter)?;
        }
        s.clear_touched();
        std::mem::swap(&mut cur, &mut next);
        if tally.nodes == 0 {
            break Stop::Exhausted;
        }
        let cumulative = progress.layers.last().map_or(0, |l| l.cumulative) + tally.nodes;
        progress.frontier = tally.first_reached;
        progress.reached += tally.first_reached;
        progress.layers.push(tally.into_stats(&phases, depth, cumulative, t.elapsed().as_secs_f64()));
    };
    let total_nodes = progress.layers.last().map_or(0, |l| l.cumulative);
    let report = BfsReport {
        convention: Convention::Published,
        expand_checkmates,
        board_side: geom.side(),
        start_pieces: geom.start_pieces(),
        start_phase: [start_phase.player, start_phase.opponent],
        max_depth,
        max_nodes: u64::MAX,
        layers: progress.layers,
        total_nodes,
        stop,
        seconds: earlier + t0.elapsed().as_secs_f64(),
        positions_reached: Some((progress.reached, universe.len())),
        nodes: BfsNodes::default(),
    };
    Ok((report, masks, layer_dir))
}

/// A frontier: a bit per position, and a flag per chunk of [`CHUNK_WORDS`] words that
/// may have a bit set, so that a sparse layer does not read the whole bitmap.
struct Frontier {
    words: Vec<AtomicU64>,
    dirty: Vec<AtomicU8>,
}

impl Frontier {
    /// Put the position with global number `g` into the frontier.
    #[inline]
    fn set(&self, g: u64) {
        let w = (g / 64) as usize;
        self.words[w].fetch_or(1 << (g % 64), Relaxed);
        let flag = &self.dirty[w / CHUNK_WORDS];
        if flag.load(Relaxed) == 0 {
            flag.store(1, Relaxed);
        }
    }
}

impl Search<'_> {
    /// Expand every position of the frontier `cur` (first reached at `depth - 1`), zeroing
    /// `cur` as it goes, marking the nodes first reached at `depth` and putting their
    /// positions first reached into `next`.
    fn expand(&self, depth: u32, cur: &Frontier, next: &Frontier, phases: usize, reporter: &dyn Reporter) -> Tally {
        let st = depth.min(MAX_FIRST_DEPTH);
        cur.words
            .par_chunks(CHUNK_WORDS)
            .zip(cur.dirty.par_iter())
            .enumerate()
            .filter(|(_, (_, flag))| flag.load(Relaxed) != 0)
            .fold(
                || Tally::new(phases),
                |mut t, (c, (words, flag))| {
                    flag.store(0, Relaxed);
                    let mut expanded = 0;
                    for (i, w) in words.iter().enumerate() {
                        let mut bits = w.load(Relaxed);
                        if bits == 0 {
                            continue;
                        }
                        w.store(0, Relaxed);
                        let base = ((c * CHUNK_WORDS + i) as u64) << 6;
                        while bits != 0 {
                            let g = base | bits.trailing_zeros() as u64;
                            bits &= bits - 1;
                            expanded += 1;
                            self.expand_position(g, st, next, &mut t);
                        }
                    }
                    if expanded > 0 {
                        reporter.advance(expanded);
                    }
                    t
                },
            )
            .reduce(|| Tally::new(phases), Tally::add)
    }

    /// Mark the children of the position with global number `g`.
    #[inline]
    fn expand_position(&self, g: u64, st: u32, next: &Frontier, t: &mut Tally) {
        let p = self.universe.position_at(g);
        if !self.expand_checkmates && is_immediate_win(self.geom, &p) {
            return;
        }
        // Every child is located (its number found with the symmetry that makes it
        // canonical), and its mask asked for, before any is marked, so that the
        // children's cache misses overlap instead of following one another.
        let (kids, n) = children_with(self.geom, &p, |x| {
            let located = self.universe.locate(x);
            debug_assert!(located.is_some(), "a child outside the live phases: {x:?}");
            let (g, slot, at) = located?;
            crate::sys::prefetch(&self.masks[g as usize]);
            crate::sys::prefetch(&self.touched[(g / 64) as usize]);
            Some((at.canonical, at.sym, (g, slot, at.canonical)))
        });
        for &((g, slot, c), j) in kids[..n].iter().flatten() {
            debug_assert!(j <= 24, "forbidden index {j}");
            self.mark(g, slot, j, &c, st, next, t);
        }
    }

    /// Set bit `j` (node `(c, j)`) in the mask of position `c` (global number `g`, phase
    /// slot `slot`); when it is new, count it (and its position, the first time in this
    /// layer) and, for a position first reached, record `st` (the depth, at most
    /// [`MAX_FIRST_DEPTH`]) as its first depth and put it into `next`.
    #[inline]
    #[allow(clippy::too_many_arguments)]
    fn mark(&self, g: u64, slot: usize, j: usize, c: &Position, st: u32, next: &Frontier, t: &mut Tally) {
        let cell = &self.masks[g as usize];
        let bit = 1u32 << j;
        let mut old = cell.load(Relaxed);
        loop {
            if old & bit != 0 {
                return;
            }
            let new = if old & NODE_BITS == 0 { bit | st << DEPTH_SHIFT } else { old | bit };
            match cell.compare_exchange_weak(old, new, Relaxed, Relaxed) {
                Ok(_) => break,
                Err(x) => old = x,
            }
        }
        let mate = is_immediate_win(self.geom, c);
        t.nodes += 1;
        t.with_forbidden += (j != 0) as u64;
        t.checkmate_nodes += mate as u64;
        t.phase_nodes[slot] += 1;
        let (w, b) = ((g / 64) as usize, 1u64 << (g % 64));
        if self.touched[w].fetch_or(b, Relaxed) & b == 0 {
            t.positions += 1;
            t.checkmate_positions += mate as u64;
            t.phase_positions[slot] += 1;
        }
        if old & NODE_BITS == 0 {
            t.first_reached += 1;
            next.set(g);
        }
    }

    /// Write the file of layer `depth` into `dir`: the positions touched in it
    /// (`positions` of them, as the layer counted) with their masks.
    fn keep_layer(
        &self,
        dir: &std::path::Path,
        depth: u32,
        positions: u64,
        reporter: &dyn Reporter,
    ) -> Result<(), Error> {
        let t = Instant::now();
        let masks = self.masks;
        let (len, written) = node_layers::write_layer(
            dir,
            self.geom,
            self.start,
            self.expand_checkmates,
            depth,
            masks.len() as u64,
            self.touched,
            |g| masks[g as usize].load(Relaxed) & NODE_BITS,
        )?;
        if written != positions {
            return Err(Error::InvalidArgument(format!(
                "layer {depth}: {written} positions written to its node-layer file, the layer counted {positions}"
            )));
        }
        reporter.note(&format!(
            "kept the {} positions of depth {depth} in {} ({:.1} MB in {:.1} s)",
            thousands(written),
            node_layers::layer_path(dir, depth).display(),
            len as f64 / 1e6,
            t.elapsed().as_secs_f64()
        ));
        Ok(())
    }

    /// Empty the bitmap of positions touched in the layer (words already zero are not
    /// written, so that pages never touched stay unused).
    fn clear_touched(&self) {
        self.touched.par_chunks(1 << 12).for_each(|c| {
            for w in c {
                if w.load(Relaxed) != 0 {
                    w.store(0, Relaxed);
                }
            }
        });
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use super::*;
    use crate::progress::Silent;
    use crate::solve::bfs::bfs_layers_with;

    /// The layers without their wall times.
    fn layers(r: &BfsReport) -> Vec<LayerStats> {
        r.layers.iter().map(|l| LayerStats { seconds: 0.0, ..l.clone() }).collect()
    }

    /// Both searches to `max_depth`, checkmates expanded or not as in `mates`: every
    /// layer's statistics, the stop reason and the node total are equal.
    fn assert_same_as_node_lists(g: &Geometry, max_depth: u32, mates: &[bool]) -> Vec<BfsReport> {
        let mut out = Vec::new();
        for &mates in mates {
            let want = bfs_layers_with(g, Convention::Published, mates, max_depth, u64::MAX, &Silent);
            let got = bfs_positions(g, mates, max_depth, &Silent).expect("memory for the search");
            let what = format!("{}x{} with {} pieces, expand_checkmates {mates}", g.side(), g.side(), g.start_pieces());
            assert_eq!(layers(&got), layers(&want), "{what}");
            assert_eq!((got.stop.clone(), got.total_nodes), (want.stop, want.total_nodes), "{what}");
            assert_eq!(got.convention, Convention::Published);
            assert_eq!(got.expand_checkmates, mates);
            assert!(got.nodes.is_empty());
            out.push(got);
        }
        out
    }

    /// The small boards to exhaustion: the whole `layers` vector equals the node-list
    /// search's, with and without checkmate expansion, and the two differ (so the test
    /// sees checkmates both ways).
    #[test]
    fn bfs_positions_equals_node_lists_to_exhaustion_on_3x3_and_4x4_with_3_pieces() {
        for (n, start) in [(3, 3), (4, 3)] {
            let g = Geometry::new(n, start).expect("a valid board");
            let r = assert_same_as_node_lists(&g, u32::MAX, &[true, false]);
            assert_eq!((&r[0].stop, &r[1].stop), (&Stop::Exhausted, &Stop::Exhausted), "{n}x{n}");
            assert!(r[0].layers.len() > 10, "{n}x{n}");
            assert_ne!(layers(&r[0]), layers(&r[1]), "{n}x{n}: checkmate expansion matters");
        }
    }

    /// The 4x4 board with 4 pieces to exhaustion (18 layers, 7.4 million nodes), the
    /// published way (checkmates expanded); the node-list search takes most of the time.
    #[test]
    fn bfs_positions_equals_node_lists_to_exhaustion_on_4x4_with_4_pieces() {
        let g = Geometry::new(4, 4).expect("a valid board");
        let r = assert_same_as_node_lists(&g, u32::MAX, &[true]);
        assert_eq!(r[0].stop, Stop::Exhausted);
        assert!(r[0].layers.len() > 10);
    }

    /// The standard game to depth 8, both ways of treating checkmates (first reached at
    /// depth 5).
    #[test]
    fn bfs_positions_equals_node_lists_on_the_standard_board_to_depth_8() {
        let r = assert_same_as_node_lists(Geometry::standard(), 8, &[true, false]);
        assert_eq!(r[0].stop, Stop::MaxDepth);
        assert_eq!(r[0].layers.len(), 9);
        assert!(r[0].layers[5].checkmate_positions > 0);
    }

    /// The published numbers: OSTLE.md's first layers and the whole-game run's per-depth
    /// node counts (tools/published-whole-game.json) to depth 8.
    #[test]
    fn bfs_positions_reproduces_the_published_layers() {
        let json: serde_json::Value =
            serde_json::from_str(include_str!("../../tools/published-whole-game.json")).expect("valid JSON");
        let published: Vec<u64> = json["bfs_layers_published_convention"]
            .as_array()
            .expect("per-depth counts")
            .iter()
            .map(|v| v.as_u64().expect("a count"))
            .collect();
        assert_eq!(published[..5], [1, 9, 102, 954, 6329]);
        let r = bfs_positions(Geometry::standard(), true, 8, &Silent).expect("memory for the search");
        let got: Vec<u64> = r.layers.iter().map(|l| l.nodes).collect();
        assert_eq!(got, published[..=8]);
        assert_eq!(r.total_nodes, published[..=8].iter().sum::<u64>());
    }

    /// Each position's recorded first depth is the least depth of its nodes in the
    /// node-list search, unreached positions read as `NOT_REACHED`, and the histogram
    /// counts the positions first reached per layer.
    #[test]
    fn bfs_positions_first_depths_are_the_least_node_depths() {
        for (n, start, max_depth) in [(3, 3, u32::MAX), (4, 3, u32::MAX), (4, 4, 9)] {
            let g = Geometry::new(n, start).expect("a valid board");
            let want = bfs_layers_with(&g, Convention::Published, true, max_depth, u64::MAX, &Silent);
            let (report, depths) = bfs_first_depths(&g, true, max_depth, &Silent).expect("memory for the search");
            assert_eq!(layers(&report), layers(&want));
            let reached: u64 = depths.histogram().iter().sum();
            assert_eq!(report.positions_reached, Some((reached, depths.len())), "{n}x{n}: positions reached");
            let mut first: HashMap<u64, u32> = HashMap::new();
            for d in 0..=want.nodes.max_depth() {
                for &k in want.nodes.layer(d).expect("a layer") {
                    first.entry(key_code(k)).or_insert(d);
                }
            }
            let mut per_depth = vec![0u64; want.layers.len()];
            for &d in first.values() {
                per_depth[d as usize] += 1;
            }
            // The histogram ends at the deepest first depth; the last layers may only add
            // nodes to positions reached before.
            while per_depth.last() == Some(&0) {
                per_depth.pop();
            }
            assert_eq!(depths.histogram(), per_depth, "{n}x{n}");
            // Some layer's new nodes fall on positions first reached earlier (more
            // positions among them than first reached), so the stamps are exercised.
            let first_at = |d: usize| per_depth.get(d).copied().unwrap_or(0);
            assert!(report.layers.iter().enumerate().any(|(d, l)| l.positions > first_at(d)), "{n}x{n}");
            let mut reached = 0;
            for ph in depths.index().phases() {
                for p in ph.positions(0..ph.len()) {
                    let got = depths.depth_of(&p).expect("a live position");
                    assert_eq!(got, first.get(&p.code()).copied(), "{n}x{n} {p:?}");
                    reached += got.is_some() as usize;
                }
            }
            assert_eq!(reached, first.len());
            if max_depth != u32::MAX {
                assert!(depths.len() > reached as u64, "{n}x{n}: positions deeper than {max_depth}");
            }
            assert_eq!(depths.get(depths.len()), None);
        }
    }

    /// A search that kept its node layers, stored in database directory `db` as `ostledb
    /// bfs --store --node-layers` does (first depths, then the layers made the
    /// database's), and the layers opened.
    fn stored_with_layers(
        g: &Geometry,
        mates: bool,
        max_depth: u32,
        db: &std::path::Path,
    ) -> (BfsReport, FirstDepths, node_layers::NodeLayers) {
        let ck = Checkpoints { dir: Some(db.to_path_buf()), node_layers: true, ..Checkpoints::default() };
        let (report, depths) = bfs_first_depths_with(g, mates, max_depth, &ck, &Silent).expect("a search");
        let (summary, _) = store_first_depths(db, &report, &depths, &Silent).expect("stored");
        let partial = depths.node_layers().expect("kept its layers");
        node_layers::commit(partial, db, report.layers.len() as u32).expect("made the database's");
        ck.finish().expect("no checkpoint left");
        let layers = node_layers::NodeLayers::open(
            db,
            g,
            summary.layers.len() as u32,
            summary.start,
            summary.expand_checkmates,
            summary.positions,
        )
        .expect("valid")
        .expect("there");
        (report, depths, layers)
    }

    /// Every position's node depths as its node layers give them (`None` for a position
    /// not reached), by canonical code.
    fn depths_from_layers(depths: &FirstDepths, layers: &node_layers::NodeLayers) -> HashMap<u64, [Option<u32>; 25]> {
        let block = node_layers::BLOCK_POSITIONS as u64;
        let mut out = HashMap::new();
        // Every layer's block, decoded once.
        let mut blocks: HashMap<u64, Vec<Option<node_layers::LayerBlock>>> = HashMap::new();
        for ph in depths.index().phases() {
            for p in ph.positions(0..ph.len()) {
                let g = depths.global_index(&p).expect("a live position");
                let Some(first) = depths.get(g).filter(|&d| d != NOT_REACHED) else { continue };
                let of = blocks.entry(g / block).or_insert_with(|| {
                    (0..layers.depths()).map(|d| layers.block(d, g / block).expect("a valid block")).collect()
                });
                out.insert(p.code(), layers.node_depths(of, g % block, first as u32).expect("consistent"));
            }
        }
        out
    }

    /// The node layers give every node the depth the node-list search gives it, and no
    /// depth to a node it did not reach: 3x3 and 4x4 with 3 pieces to exhaustion
    /// (checkmates expanded or not), 4x4 with 4 pieces to depth 9; the files hold as many
    /// positions per layer as the layer counted.
    #[test]
    fn node_layers_give_every_node_its_depth_in_the_node_list_search() {
        for (n, start, max_depth, mates) in [
            (3, 3, u32::MAX, true),
            (3, 3, u32::MAX, false),
            (4, 3, u32::MAX, true),
            (4, 3, u32::MAX, false),
            (4, 4, 9, true),
        ] {
            let g = Geometry::new(n, start).expect("a valid board");
            let what = format!("{n}x{n} with {start} pieces, checkmates expanded {mates}");
            let want = bfs_layers_with(&g, Convention::Published, mates, max_depth, u64::MAX, &Silent);
            let mut fields: HashMap<u64, [Option<u32>; 25]> = HashMap::new();
            for d in 0..=want.nodes.max_depth() {
                for &k in want.nodes.layer(d).expect("a layer") {
                    let f = fields.entry(key_code(k)).or_insert([None; 25]);
                    assert_eq!(f[key_index(k)], None, "{what}: a node in two layers");
                    f[key_index(k)] = Some(d);
                }
            }
            let db = temp_dir(&format!("layers-{n}-{start}-{mates}"));
            let (report, depths, layers) = stored_with_layers(&g, mates, max_depth, &db);
            assert_eq!(layers.depths(), report.layers.len(), "{what}");
            for (d, l) in report.layers.iter().enumerate() {
                assert_eq!(layers.touched(d), l.positions, "{what}: positions of layer {d}");
            }
            assert_eq!(depths_from_layers(&depths, &layers), fields, "{what}");
            let _ = std::fs::remove_dir_all(&db);
        }
    }

    #[test]
    fn bfs_positions_depth_of_rejects_bad_positions() {
        let g = Geometry::new(3, 3).expect("a valid board");
        let (_, depths) = bfs_first_depths(&g, true, 2, &Silent).expect("memory for the search");
        let start = Position::initial(&g);
        assert_eq!(depths.depth_of(&start).expect("a live position"), Some(0));
        for bad in [
            Position::new(start.player, start.player, start.hole()),
            Position::new(start.player, start.opponent, 40),
            Position::new(0b1, start.opponent, start.hole()),
        ] {
            assert!(depths.depth_of(&bad).is_err(), "{bad:?}");
        }
    }

    /// A reporter that asks the search to stop when the layer `label` begins (the search
    /// stops at the boundary after that layer; for depth 0, which has no step, the flag
    /// is set from the start) and keeps the notes.
    struct StopAt {
        label: String,
        stop: Arc<AtomicBool>,
        notes: std::sync::Mutex<Vec<String>>,
    }

    impl StopAt {
        fn new(depth: u32) -> StopAt {
            let stop = Arc::new(AtomicBool::new(depth == 0));
            StopAt { label: format!("depth {depth}"), stop, notes: Default::default() }
        }
    }

    impl Reporter for StopAt {
        fn begin(&self, label: &str, _: u64) {
            if label == self.label {
                self.stop.store(true, Relaxed);
            }
        }
        fn advance(&self, _: u64) {}
        fn end(&self) {}
        fn note(&self, message: &str) {
            self.notes.lock().expect("not poisoned").push(message.to_string());
        }
    }

    /// An empty directory of its own for a test.
    fn temp_dir(name: &str) -> std::path::PathBuf {
        let dir = std::env::temp_dir().join(format!("ostledb-bfs-ckpt-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("a temporary directory");
        dir
    }

    /// True when two searches have the same masks (node bits and first depths), compared
    /// in place: the standard board's are 10.9 GB each, mostly pages never written, which
    /// a copy would make resident (17.5 GB measured for the test that copied them).
    fn same_masks(a: &FirstDepths, b: &FirstDepths) -> bool {
        a.masks.len() == b.masks.len()
            && a.masks.iter().zip(b.masks.iter()).all(|(x, y)| x.load(Relaxed) == y.load(Relaxed))
    }

    /// For each of `stop_lists`: stop the search after each layer of the list in turn
    /// (each run resumes from the checkpoint the one before it saved, searching without
    /// a depth limit), then resume to `max_depth`: the report (every layer's statistics
    /// but their times, the stop, the totals) and every mask (first depths included)
    /// equal one uninterrupted search's, each run says where it resumed, and the
    /// checkpoint is there until [`Checkpoints::finish`].
    /// The node layers are kept through every stop, and their files are byte for byte
    /// those of one uninterrupted search.
    fn assert_resumes_as_one_run(g: &Geometry, mates: bool, max_depth: u32, stop_lists: &[&[u32]], name: &str) {
        let one = temp_dir(&format!("{name}-one"));
        let (want, want_depths, _) = stored_with_layers(g, mates, max_depth, &one);
        let want_layers = layer_files(&one.join(node_layers::DIR_NAME));
        for stops in stop_lists {
            assert_resumes_as(g, mates, max_depth, stops, name, &want, &want_depths, &want_layers);
        }
        let _ = std::fs::remove_dir_all(&one);
    }

    /// The files of a node-layer directory: name and bytes, by name.
    fn layer_files(dir: &std::path::Path) -> Vec<(String, Vec<u8>)> {
        let mut v: Vec<_> = std::fs::read_dir(dir)
            .expect("a node-layer directory")
            .map(|e| {
                let e = e.expect("an entry");
                (e.file_name().to_string_lossy().into_owned(), std::fs::read(e.path()).expect("readable"))
            })
            .collect();
        v.sort();
        v
    }

    /// [`assert_resumes_as_one_run`] for one list of stops, against `want`.
    #[allow(clippy::too_many_arguments)]
    fn assert_resumes_as(
        g: &Geometry,
        mates: bool,
        max_depth: u32,
        stops: &[u32],
        name: &str,
        want: &BfsReport,
        want_depths: &FirstDepths,
        want_layers: &[(String, Vec<u8>)],
    ) {
        let dir = temp_dir(name);
        let path = crate::solve::bfs_checkpoint::file(&dir);
        let what = format!("{}x{} with {} pieces, checkmates expanded {mates}", g.side(), g.side(), g.start_pieces());
        let mut resumed_from = None;
        for &k in stops {
            let r = StopAt::new(k);
            let ck = Checkpoints { dir: Some(dir.clone()), every: None, stop: Some(r.stop.clone()), node_layers: true };
            let e = bfs_first_depths_with(g, mates, u32::MAX, &ck, &r).expect_err("stopped");
            assert!(
                matches!(&e, Error::BfsStopped { depth, checkpoint: Some(p) } if *depth == k && *p == path),
                "{what}, stop after {k}: {e:?}"
            );
            let notes = r.notes.lock().expect("not poisoned").join("\n");
            match resumed_from {
                Some(d) => assert!(notes.contains(&format!("after depth {d} (")), "{what}: {notes}"),
                None => assert!(!notes.contains("resumed"), "{what}: {notes}"),
            }
            assert!(notes.contains(&format!("saved the search after depth {k} to")), "{what}: {notes}");
            assert!(path.is_file(), "{what}: the checkpoint after {k}");
            resumed_from = Some(k);
        }
        let r = StopAt::new(u32::MAX);
        let ck = Checkpoints { dir: Some(dir.clone()), every: None, stop: Some(r.stop.clone()), node_layers: true };
        let (got, depths) = bfs_first_depths_with(g, mates, max_depth, &ck, &r).expect("resumed");
        let notes = r.notes.lock().expect("not poisoned").join("\n");
        assert!(!notes.contains("did not keep its node layers"), "{what}: {notes}");
        let partial = depths.node_layers().expect("kept its node layers");
        let db = dir.join("db");
        std::fs::create_dir_all(&db).expect("a database directory");
        node_layers::commit(partial, &db, got.layers.len() as u32).expect("made the database's");
        assert_eq!(layer_files(&db.join(node_layers::DIR_NAME)), want_layers, "{what}, stopped after {stops:?}");
        assert!(
            notes.contains(&format!(
                "resumed the search from {} after depth {}",
                path.display(),
                stops[stops.len() - 1]
            )),
            "{what}: {notes}"
        );
        assert_eq!(layers(&got), layers(want), "{what}, stopped after {stops:?}");
        assert_eq!(
            (&got.stop, got.total_nodes, got.positions_reached, got.max_depth),
            (&want.stop, want.total_nodes, want.positions_reached, want.max_depth),
            "{what}"
        );
        assert!(same_masks(&depths, want_depths), "{what}, stopped after {stops:?}: the masks differ");
        assert!(path.is_file(), "{what}: the checkpoint stays until the results are kept");
        ck.finish().expect("removed");
        assert!(!path.exists(), "{what}: the checkpoint is removed at the end");
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// 3x3 and 4x4 with 3 pieces to exhaustion, checkmates expanded or not, stopped after
    /// several layers (the first, one in the middle, the last but one), also twice.
    #[test]
    fn bfs_positions_resumed_after_a_stop_equals_one_run_on_small_boards() {
        for (n, start) in [(3, 3), (4, 3)] {
            let g = Geometry::new(n, start).expect("a valid board");
            let last = bfs_positions(&g, true, u32::MAX, &Silent).expect("memory").layers.len() as u32 - 1;
            assert!(last > 6, "{n}x{n}");
            for mates in [true, false] {
                let stops: [&[u32]; 5] = [&[0], &[1], &[last / 2], &[last - 1], &[2, last - 2]];
                assert_resumes_as_one_run(&g, mates, u32::MAX, &stops, &format!("{n}-{start}-{mates}"));
            }
        }
    }

    /// 4x4 with 4 pieces to exhaustion (18 layers), stopped early, then in the middle and
    /// late; and to depth 12 from a checkpoint after depth 12 (resumed, it has nothing
    /// left to do).
    #[test]
    fn bfs_positions_resumed_after_a_stop_equals_one_run_on_4x4_with_4_pieces() {
        let g = Geometry::new(4, 4).expect("a valid board");
        assert_resumes_as_one_run(&g, true, u32::MAX, &[&[3], &[9, 15]], "4-4");
        assert_resumes_as_one_run(&g, true, 12, &[&[12]], "4-4-12");
    }

    /// The standard board to depth 6, stopped after depths 1, 3 and 5 in turn (checkmate
    /// positions first appear at depth 5).
    #[test]
    fn bfs_positions_resumed_after_a_stop_equals_one_run_on_the_standard_board() {
        assert_resumes_as_one_run(Geometry::standard(), true, 6, &[&[1, 3, 5]], "5-5");
    }

    /// A search resumed from a checkpoint saved without node layers does not keep them
    /// (it says so, and leaves no partial directory); one that asks for them without a
    /// checkpoint directory is refused.
    #[test]
    fn bfs_positions_resumed_without_earlier_node_layers_keeps_none() {
        let g = Geometry::new(4, 3).expect("a valid board");
        let dir = temp_dir("no-earlier-layers");
        let r = StopAt::new(3);
        let ck = Checkpoints { dir: Some(dir.clone()), every: None, stop: Some(r.stop.clone()), node_layers: false };
        bfs_first_depths_with(&g, true, u32::MAX, &ck, &r).expect_err("stopped");
        let r = StopAt::new(u32::MAX);
        let ck = Checkpoints { stop: Some(r.stop.clone()), node_layers: true, ..ck };
        let (_, depths) = bfs_first_depths_with(&g, true, u32::MAX, &ck, &r).expect("resumed");
        let notes = r.notes.lock().expect("not poisoned").join("\n");
        assert!(notes.contains("did not keep its node layers"), "{notes}");
        assert!(depths.node_layers().is_none());
        assert!(!dir.join(node_layers::PARTIAL_DIR_NAME).exists());
        ck.finish().expect("removed");
        let ck = Checkpoints { dir: None, node_layers: true, ..Checkpoints::default() };
        let e = bfs_first_depths_with(&g, true, 3, &ck, &Silent).expect_err("refused");
        assert!(matches!(e, Error::InvalidArgument(_)), "{e:?}");
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// Saved after every layer (`every` zero), the search gives the same result, the
    /// last checkpoint left for [`Checkpoints::finish`]; without `every` and without a
    /// stop it writes nothing; a stop without a directory saves nothing and says so.
    #[test]
    fn bfs_positions_checkpoints_after_every_layer_and_only_when_asked() {
        let g = Geometry::new(4, 3).expect("a valid board");
        let (want, want_depths) = bfs_first_depths(&g, true, u32::MAX, &Silent).expect("memory");
        for every in [Some(Duration::ZERO), None] {
            let dir = temp_dir(&format!("every-{every:?}"));
            let r = StopAt::new(u32::MAX);
            let ck = Checkpoints { dir: Some(dir.clone()), every, stop: None, node_layers: false };
            let (got, depths) = bfs_first_depths_with(&g, true, u32::MAX, &ck, &r).expect("a search");
            assert_eq!(layers(&got), layers(&want));
            assert!(same_masks(&depths, &want_depths));
            let saves = r.notes.lock().expect("not poisoned").iter().filter(|n| n.starts_with("saved")).count();
            // Saved at every boundary: after depths 0 to the last.
            let expect = if every.is_some() { want.layers.len() } else { 0 };
            assert_eq!(saves, expect, "{every:?}");
            let left = || std::fs::read_dir(&dir).expect("the directory").count();
            assert_eq!(left(), every.is_some() as usize, "{every:?}: the last checkpoint, nothing else");
            ck.finish().expect("removed");
            assert_eq!(left(), 0, "{every:?}: nothing left");
            let _ = std::fs::remove_dir_all(&dir);
        }
        let r = StopAt::new(3);
        let ck = Checkpoints { dir: None, every: Some(Duration::ZERO), stop: Some(r.stop.clone()), node_layers: false };
        let e = bfs_first_depths_with(&g, true, u32::MAX, &ck, &r).expect_err("stopped");
        assert!(matches!(e, Error::BfsStopped { depth: 3, checkpoint: None }), "{e:?}");
        assert!(e.to_string().contains("nothing saved"), "{e}");
    }

    /// The budget of the module documentation for the whole 5x5 game.
    #[test]
    fn bfs_positions_budget_of_the_whole_game() {
        assert_eq!(search_bytes(2_735_147_685), 10_940_590_740 + 3 * 341_893_464);
        assert!(search_bytes(2_735_147_685) < 12 << 30);
        let g = GameNumbering::build(Geometry::standard()).expect("the standard index");
        assert_eq!(g.len(), 2_735_147_685);
    }
}

// The checkpoint file's tests make their checkpoints by running the search, which sits
// above the file, so they live here.
#[cfg(test)]
mod checkpoint_file_tests {
    use std::sync::Arc;
    use std::sync::atomic::AtomicBool;

    use super::*;
    use std::path::{Path, PathBuf};

    use crate::error::FileKind;
    use crate::index::GameNumbering;
    use crate::progress::Silent;
    use crate::solve::bfs_checkpoint::{FILE_NAME, HEADER_LEN, file, load};

    /// A checkpoint of the 3x3 board (3 pieces, checkmates expanded) after depth 4, in a
    /// directory of its own.
    fn saved(name: &str) -> (PathBuf, Geometry) {
        let dir = std::env::temp_dir().join(format!("ostledb-bfs-ckpt-file-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let g = Geometry::new(3, 3).expect("a valid board");
        let stop = Arc::new(AtomicBool::new(false));
        struct StopAt5(Arc<AtomicBool>);
        impl crate::progress::Reporter for StopAt5 {
            fn begin(&self, label: &str, _: u64) {
                if label == "depth 4" {
                    self.0.store(true, Relaxed);
                }
            }
            fn advance(&self, _: u64) {}
            fn end(&self) {}
        }
        let ck = Checkpoints { dir: Some(dir.clone()), every: None, stop: Some(stop.clone()), node_layers: false };
        let e = bfs_first_depths_with(&g, true, u32::MAX, &ck, &StopAt5(stop)).expect_err("stopped");
        assert!(matches!(e, Error::BfsStopped { depth: 4, checkpoint: Some(_) }), "{e:?}");
        (dir, g)
    }

    /// Read the checkpoint in `dir` for a search of `g` as the search would.
    fn read(dir: &Path, g: &Geometry, mates: bool, max_depth: u32) -> Result<Option<(PathBuf, Progress)>, Error> {
        let universe = GameNumbering::build(g).expect("an index");
        let masks: Vec<AtomicU32> = (0..universe.len()).map(|_| AtomicU32::new(0)).collect();
        let s = g.start_pieces();
        load(dir, g, &universe.phases(), Phase::new(s, s), mates, max_depth, &masks, |_, _| {})
    }

    #[test]
    fn the_checkpoint_name_is_known_as_a_bfs_checkpoint() {
        assert_eq!(FileKind::of_path(Path::new(FILE_NAME)), Some(FileKind::BfsCheckpoint));
        assert_eq!(FileKind::of_path(&file(Path::new("db"))), Some(FileKind::BfsCheckpoint));
    }

    /// Any flipped byte, any truncation and an extra byte is an error (a damaged file,
    /// never a panic, never read as a valid one), which names the file and says how to
    /// start over; the file is left in place.
    #[test]
    fn every_damaged_checkpoint_is_refused() {
        let (dir, g) = saved("damage");
        let path = file(&dir);
        let (_, p) = read(&dir, &g, true, u32::MAX).expect("intact").expect("there");
        assert_eq!(p.layers.len(), 5);
        let bytes = std::fs::read(&path).expect("the checkpoint");
        assert!(bytes.len() < 200_000, "{} bytes", bytes.len());
        let damaged = |b: &[u8], what: &str| {
            std::fs::write(&path, b).expect("written");
            let e = read(&dir, &g, true, u32::MAX).expect_err(what);
            assert!(
                matches!(e, Error::Corrupt { .. } | Error::BadMagic { .. } | Error::ChecksumMismatch { .. }),
                "{what}: {e:?}"
            );
            e
        };
        for k in 0..bytes.len() {
            let mut b = bytes.clone();
            b[k] ^= 0x10;
            damaged(&b, &format!("byte {k}"));
        }
        for len in [0, 10, HEADER_LEN - 1, HEADER_LEN, HEADER_LEN + 100, bytes.len() / 2, bytes.len() - 1] {
            let e = damaged(&bytes[..len], &format!("length {len}"));
            assert!(matches!(e, Error::Corrupt { .. }), "length {len}: {e:?}");
        }
        let mut longer = bytes.clone();
        longer.push(0);
        let e = damaged(&longer, "one byte more");
        let text = e.to_string();
        assert!(text.contains(&path.display().to_string()) && text.contains("delete it to start over"), "{text}");
        let mut body = bytes.clone();
        body[HEADER_LEN + 8] ^= 0x01;
        let e = damaged(&body, "a byte of the body");
        assert!(e.to_string().contains("start over"), "{e}");
        // A damaged checkpoint stops the search with the same error, and stays.
        std::fs::write(&path, &body).expect("written");
        let ck = Checkpoints { dir: Some(dir.clone()), every: None, stop: None, node_layers: false };
        let e = bfs_first_depths_with(&g, true, u32::MAX, &ck, &Silent).expect_err("damaged");
        assert!(matches!(e, Error::Corrupt { .. } | Error::ChecksumMismatch { .. }), "{e:?}");
        assert!(path.is_file());
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// A checkpoint of another search is refused, naming the file and saying how to
    /// start over: another board, the other checkmate convention, a depth past the
    /// `max_depth` asked for. The same depth, or a larger `max_depth`, reads.
    #[test]
    fn a_checkpoint_of_another_search_is_refused() {
        let (dir, g) = saved("other");
        let path = file(&dir);
        let refused = |e: Error, what: &str| {
            let text = e.to_string();
            assert!(matches!(e, Error::InvalidArgument(_)), "{what}: {e:?}");
            assert!(text.contains(&path.display().to_string()) && text.contains("start over"), "{what}: {text}");
            text
        };
        let other = Geometry::new(4, 3).expect("a valid board");
        let text = refused(read(&dir, &other, true, u32::MAX).expect_err("another board"), "board");
        assert!(text.contains("3x3 board with 3 pieces"), "{text}");
        let text = refused(read(&dir, &g, false, u32::MAX).expect_err("no checkmate expansion"), "checkmates");
        assert!(text.contains("--no-checkmate-expansion"), "{text}");
        let text = refused(read(&dir, &g, true, 3).expect_err("past max_depth"), "depth");
        assert!(text.contains("depth 4"), "{text}");
        for max_depth in [4, 5, u32::MAX] {
            assert!(read(&dir, &g, true, max_depth).expect("the same search").is_some(), "{max_depth}");
        }
        // Through the search: refused, and the checkpoint is kept.
        let ck = Checkpoints { dir: Some(dir.clone()), every: None, stop: None, node_layers: false };
        let e = bfs_first_depths_with(&other, true, u32::MAX, &ck, &Silent).expect_err("another board");
        refused(e, "search on another board");
        let e = bfs_first_depths_with(&g, false, u32::MAX, &ck, &Silent).expect_err("other checkmates");
        refused(e, "search with other checkmates");
        let e = bfs_first_depths_from(&g, Phase::new(3, 2), true, u32::MAX, &ck, &Silent).expect_err("another start");
        let text = refused(e, "search from another start");
        assert!(
            text.contains(
                "over 4 phases (2436 positions), this one covers 3 (1788 positions) from a start in phase (3,2)"
            ),
            "{text}"
        );
        assert!(path.is_file());
        let _ = std::fs::remove_dir_all(&dir);
    }
}
