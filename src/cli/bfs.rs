//! `ostledb bfs`: breadth-first search from the initial position, layer by layer.

use std::time::Instant;

use clap::{Args, ValueEnum};
use serde::Serialize;

use crate::bfs_depths::first_depths::{FILE_NAME, FirstDepthSummary, NOT_REACHED};
use crate::cli::progress::CliReporter;
use crate::cli::{CommonArgs, OnInterrupt, Signals, emit, emit_json, thousands};
use crate::error::Error;
use crate::game::forbidden::node_of;
use crate::game::node::{Convention, key_code, key_index};
use crate::game::notation::{code_to_base64, format_board};
use crate::game::position::Position;
use crate::game::{Geometry, Phase};
use crate::progress::Reporter;
use crate::solve::bfs::{BfsReport, Stop, bfs_layers_with};
use crate::solve::bfs_positions::{Checkpoints, bfs_first_depths_from, bfs_positions_from, store_first_depths};

/// The expansion convention on the command line.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum ConventionArg {
    /// Expand a node by all moves of its position, its own forbidden move included (the
    /// relaxation the published BFS numbers use).
    Published,
    /// Leave out the node's forbidden move.
    Strict,
}

/// `--max-nodes` unless given: 3.2 GB of stored nodes, which stops the standard game's node
/// lists near depth 13.
const DEFAULT_MAX_NODES: u64 = 400_000_000;

/// Arguments of `ostledb bfs`.
#[derive(Debug, Args)]
#[command(
    after_help = "Examples:\n  ostledb bfs\n  ostledb bfs --strict --max-depth 6 --json\n  ostledb bfs --max-depth 6 --board 22222-00000-00300-00000-11111\n\nWith --store, the depths are kept in --db for `query` and `export`.\n\nDepth 0 is the initial position. A node is (canonical position, forbidden move);\nthe published layers are 1, 9, 102, 954, 6329, 33052, 147620, 556811, 1863530, ...\n(strict: 1, 9, 99, 932, 6319, ...); the default reproduces them (checked to depth 13).\n\nThe whole game (the published run found 27 layers, depths 0..26), kept for query:\n  ostledb bfs --by-positions --max-depth 200 --store --db ostle.db\n12.0 GB (11.2 GiB: a 4-byte mask of reached nodes and first depth per position, three\nbitmaps), about 2 hours on 2 cores. It saves a checkpoint in the database directory\n(up to 11.3 GB of disk) every 10 minutes and when Ctrl-C or SIGTERM stops it; the same\ncommand, run again after a kill or a stop, goes on from there. Without --store, give\n--checkpoint-dir DIR for the same."
)]
pub struct BfsArgs {
    /// Which moves expand a node: `published` plays all moves of the position (the
    /// published numbers), `strict` leaves out the node's forbidden move.
    #[arg(long, value_enum, default_value_t = ConventionArg::Published)]
    pub convention: ConventionArg,
    /// Shorthand for `--convention strict`.
    #[arg(long, conflicts_with = "convention")]
    pub strict: bool,
    /// Do not expand immediate-win ("checkmate") positions: their nodes get a depth but
    /// lead nowhere. Not the published convention: the counts differ from depth 6 on (the
    /// published run expands them).
    #[arg(long)]
    pub no_checkmate_expansion: bool,
    /// Stop after this many plies.
    #[arg(long, default_value_t = 10, value_name = "N")]
    pub max_depth: u32,
    /// Stop cleanly before the stored nodes (all layers) exceed this many (8 bytes each,
    /// plus working space of about the size of the last layer). Default: 400,000,000
    /// (3.2 GB); a value whose nodes do not fit in the memory this process can have
    /// (`ulimit -v`, available memory) is refused.
    #[arg(long, value_name = "N")]
    pub max_nodes: Option<u64>,
    /// Search over positions instead of node lists: 4.375 bytes per position of the game
    /// and nothing per node, so the whole game to its last layer fits in 12.0 GB (the node
    /// lists stop near depth 13). Published convention only; --max-nodes does not apply.
    /// With --board it reports the depth of the board's position's first node, and with
    /// --store it keeps every position's first depth in `bfs-first-depths.zst`,
    /// from which `query` gives any node's depth.
    #[arg(long, conflicts_with_all = ["strict"])]
    pub by_positions: bool,
    /// With --by-positions: search the game restricted to at most N pieces, as the
    /// published solver's `-b -s N` does: from its start for N, the side to move with
    /// ceil(N/2) pieces on the last row, the other side with floor(N/2) on the first (four
    /// pieces on the first four squares of their row), the hole at the centre; only the
    /// phases with at most N pieces are reached. 10 (the default) is the game's initial
    /// position. `export --max-pieces N` of the stored search writes the solver's
    /// `ostle_N_bfs_output` files.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(8..=10), requires = "by_positions")]
    pub max_pieces: Option<u32>,
    /// With --by-positions: write the depth of every position's first node to FILE, one
    /// byte per position (255: not reached), the phases in solving order, each in its
    /// index order (schema/FORMAT.md). Readable
    /// as it is, e.g. by numpy.fromfile(FILE, dtype=numpy.uint8).
    #[arg(long, value_name = "FILE", requires = "by_positions")]
    pub first_depths_out: Option<std::path::PathBuf>,
    /// Store a search made earlier instead of searching: the file its --first-depths-out
    /// wrote (with --store and --by-positions; needs --import-report).
    #[arg(long, value_name = "FILE", requires_all = ["store", "by_positions", "import_report"])]
    pub import_first_depths: Option<std::path::PathBuf>,
    /// The --json output of the search that wrote --import-first-depths (its layer
    /// counts and how it stopped are stored with the depths).
    #[arg(long, value_name = "FILE", requires = "import_first_depths")]
    pub import_report: Option<std::path::PathBuf>,
    /// Also report the depth of this board's node (25 digits, 1 = side to move).
    #[arg(long, value_name = "BOARD")]
    pub board: Option<String>,
    /// The board before the opponent's last move, seen from the opponent; fixes the
    /// forbidden move of `--board`.
    #[arg(long, value_name = "BOARD", requires = "board")]
    pub prev: Option<String>,
    /// With --by-positions: save the search's state to `bfs-positions.ckpt` in DIR at
    /// layer boundaries (see --checkpoint-minutes), and resume from it when it is there:
    /// a search that is killed, or stopped by Ctrl-C or SIGTERM (it saves first), goes on
    /// from its last saved depth when run again with the same DIR (--max-depth may
    /// differ). The file is removed once the search ends and its results are stored or
    /// written (--store, --first-depths-out). With --store the database
    /// directory (--db) is the default. A save of the whole game writes up to 11.3 GB.
    #[arg(long, value_name = "DIR", requires = "by_positions")]
    pub checkpoint_dir: Option<std::path::PathBuf>,
    /// With a checkpoint directory: save at the first layer boundary after this many
    /// minutes since the search started, resumed or last saved (0: after every layer).
    #[arg(long, default_value_t = 10, value_name = "MINUTES", requires = "by_positions")]
    pub checkpoint_minutes: u64,
    /// Print one JSON object instead of a table.
    #[arg(long)]
    pub json: bool,
    /// Store every node's depth in the database directory (`--db`), as
    /// `bfs-published.zst` or `bfs-strict.zst`: `query` then shows each node's distance
    /// from the start and `export` writes the BFS files.
    #[arg(long)]
    pub store: bool,
    /// With --store and --by-positions: also keep, for every depth, the positions that
    /// gained a node then with their masks of reached nodes (`bfs-node-layers/`, one
    /// file per depth; written as each layer ends, beside the checkpoint), so that
    /// `export` reads every node's depth from them instead of searching each position's
    /// predecessors, which on the whole game is most of its time. A few GB for the
    /// whole game. A search resumed from a checkpoint saved without them does not keep
    /// them.
    #[arg(long, requires_all = ["store", "by_positions"], conflicts_with = "import_first_depths")]
    pub node_layers: bool,
    #[command(flatten)]
    common: CommonArgs,
}

#[derive(Serialize)]
struct Query {
    board: String,
    canonical: String,
    code: u64,
    base64: String,
    node_index: usize,
    /// `None`: deeper than the last computed layer, or unreachable.
    depth: Option<u32>,
    /// What `depth` is of: the node, or (`--by-positions`) the first node of its position.
    of: &'static str,
}

#[derive(Serialize)]
struct Output<'a> {
    #[serde(flatten)]
    report: &'a BfsReport,
    #[serde(skip_serializing_if = "Option::is_none")]
    query: Option<Query>,
}

impl BfsArgs {
    /// Where a search by positions keeps its checkpoint: --checkpoint-dir, or the database
    /// directory with --store; `None` for a search that does not resume.
    fn checkpoint_dir(&self) -> Option<std::path::PathBuf> {
        if !self.by_positions || self.import_first_depths.is_some() {
            return None;
        }
        self.checkpoint_dir.clone().or_else(|| self.store.then(|| self.common.db.clone()))
    }
}

/// What Ctrl-C (or SIGTERM) does during `ostledb bfs` (see
/// [`crate::cli::Cli::on_interrupt`]): for a search by positions with a checkpoint
/// directory, the first saves the search at the next layer boundary and stops it, a
/// second quits at once, keeping the last checkpoint; for any other search, nothing
/// (the default: the process ends at once).
pub fn on_interrupt(args: &BfsArgs) -> Option<OnInterrupt> {
    args.checkpoint_dir()?;
    Some(OnInterrupt {
        stopping: (!args.common.quiet).then_some(
            "ostledb: stopping after the current layer, once a checkpoint is saved (press Ctrl-C again to quit at once)",
        ),
        quitting: "ostledb: stopped; the last checkpoint in the checkpoint directory is kept",
    })
}

/// Run `ostledb bfs`; a search by positions with a checkpoint directory stops at the next
/// layer boundary, its checkpoint saved, once `signals.stop` is set.
pub fn run(args: BfsArgs, signals: &Signals) -> Result<(), Error> {
    let t = Instant::now();
    let g = Geometry::standard();
    let convention = match (args.strict, args.convention) {
        (true, _) | (_, ConventionArg::Strict) => Convention::Strict,
        _ => Convention::Published,
    };
    // Parse the query first so that a bad board fails before a long search.
    let query_node = match &args.board {
        Some(b) => {
            let (pos, prev) = crate::cli::parse_with_prev(g, b, args.prev.as_deref())?;
            Some((pos, node_of(g, &pos, prev.as_ref())))
        }
        None => None,
    };
    let reporter = CliReporter::new(args.common.quiet);
    let _lock =
        args.store.then(|| crate::cli::db::lock_for_writing(&args.common, "ostledb bfs --store")).transpose()?;
    if args.by_positions && convention != Convention::Published {
        return Err(Error::InvalidArgument(
            "--by-positions searches the published convention only (a strict node skips its own forbidden \
             move, so a position may need expanding again)"
                .into(),
        ));
    }
    if let Some(path) = &args.first_depths_out {
        let dir = path.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(std::path::Path::new("."));
        if !dir.is_dir() {
            return Err(Error::InvalidArgument(format!(
                "--first-depths-out {}: the directory {} does not exist",
                path.display(),
                dir.display()
            )));
        }
    }
    let max_nodes = match args.max_nodes {
        Some(n) if !args.by_positions => {
            crate::sys::check_memory(&format!("the nodes of --max-nodes {n}"), n, 8, "nodes")?;
            n
        }
        _ => DEFAULT_MAX_NODES,
    };
    let mates = !args.no_checkmate_expansion;
    let start = Phase::start_of(g, args.max_pieces.unwrap_or(2 * g.start_pieces())).expect("clap keeps N in 8..=10");
    if let Some(raw) = &args.import_first_depths {
        let report = args.import_report.as_deref().expect("clap requires --import-report");
        let (summary, len) = import_first_depths(g, start, &args.common.db, raw, report, &reporter)?;
        return emit_stored_first_depths(&args, &summary, len, t);
    }
    let mut stored_first_depths = None;
    let checkpoints = Checkpoints {
        dir: args.checkpoint_dir(),
        every: Some(crate::cli::minutes(args.checkpoint_minutes)),
        stop: Some(signals.stop.clone()),
        node_layers: args.node_layers,
    };
    let (report, first_depth) = if !args.by_positions {
        (bfs_layers_with(g, convention, mates, args.max_depth, max_nodes, &reporter), None)
    } else if query_node.is_some() || args.first_depths_out.is_some() || args.store || checkpoints.dir.is_some() {
        let (report, depths) = bfs_first_depths_from(g, start, mates, args.max_depth, &checkpoints, &reporter)?;
        if let Some(path) = &args.first_depths_out {
            crate::file::write_atomic(path, |w| depths.write_raw(w))?;
        }
        if args.store {
            stored_first_depths = Some(store_first_depths(&args.common.db, &report, &depths, &reporter)?);
            if let Some(partial) = depths.node_layers() {
                let to = crate::bfs_depths::node_layers::commit(partial, &args.common.db, report.layers.len() as u32)?;
                reporter.note(&format!(
                    "kept the node layers of the {} depths in {}",
                    report.layers.len(),
                    to.display()
                ));
            }
        }
        // Kept until the results are: a failure above resumes from the last save.
        checkpoints.finish()?;
        let d = query_node.as_ref().map(|(pos, _)| depths.depth_of(pos)).transpose()?;
        (report, d)
    } else {
        (bfs_positions_from(g, start, mates, args.max_depth, &reporter)?, None)
    };
    let stored = if args.store && !args.by_positions {
        let layers: Vec<&[u64]> = (0..=report.nodes.max_depth()).filter_map(|d| report.nodes.layer(d)).collect();
        let complete = matches!(report.stop, Stop::Exhausted);
        let len = crate::bfs_depths::node_keys::write(
            &args.common.db,
            g,
            convention,
            !args.no_checkmate_expansion,
            complete,
            &layers,
        )?;
        Some((args.common.db.join(crate::bfs_depths::node_keys::file_name(convention)), len))
    } else {
        None
    };
    let query = query_node.map(|(pos, key)| {
        let canon = Position::from_code(key_code(key));
        Query {
            board: format_board(g, &pos),
            canonical: format_board(g, &canon),
            code: canon.code(),
            base64: code_to_base64(canon.code()),
            node_index: key_index(key),
            depth: if args.by_positions { first_depth.flatten() } else { report.nodes.depth_of_key(key) },
            of: if args.by_positions { "position's first node" } else { "node" },
        }
    });
    if args.json {
        return emit_json(&Output { report: &report, query });
    }
    let mut out = String::new();
    let from = match report.start_phase {
        [a, b] if a == g.start_pieces() && b == g.start_pieces() => "the initial position".to_string(),
        [a, b] => format!(
            "the start with {a} and {b} pieces ({}, as the published solver's -s {})",
            format_board(g, &Position::start(g, Phase::new(a, b))),
            a + b
        ),
    };
    out.push_str(&format!(
        "breadth-first search from {from}, {} convention{}\n",
        convention.name(),
        if report.expand_checkmates { "" } else { ", checkmate positions not expanded" }
    ));
    out.push_str(&format!(
        "{:>5} {:>15} {:>15} {:>15} {:>13} {:>9}\n",
        "depth", "new nodes", "cumulative", "positions", "checkmates", "seconds"
    ));
    for l in &report.layers {
        out.push_str(&format!(
            "{:>5} {:>15} {:>15} {:>15} {:>13} {:>9.1}\n",
            l.depth,
            thousands(l.nodes),
            thousands(l.cumulative),
            thousands(l.positions),
            thousands(l.checkmate_positions),
            l.seconds
        ));
    }
    let last = report.layers.last().map_or(0, |l| l.depth);
    match &report.stop {
        Stop::Exhausted => out.push_str(&format!("every reachable node found (deepest: {last} plies)\n")),
        Stop::MaxDepth => out.push_str(&format!("stopped at --max-depth {}\n", report.max_depth)),
        Stop::NodeBudget { depth, partial_nodes, expanded, frontier } => out.push_str(&format!(
            "stopped: depth {depth} would exceed --max-nodes {}; it has at least {} new nodes \
             ({} of the {} nodes at depth {last} expanded)\n",
            thousands(report.max_nodes),
            thousands(*partial_nodes),
            thousands(*expanded),
            thousands(*frontier),
        )),
    }
    if let Some((reached, all)) = report.positions_reached {
        out.push_str(&format!(
            "positions with a node reached: {} of {}; {} with none\n",
            thousands(reached),
            thousands(all),
            thousands(all - reached)
        ));
    }
    if let Some(q) = &query {
        let depth = match q.depth {
            Some(d) => format!("depth {d}"),
            None => format!("not within depth {last}"),
        };
        out.push_str(&format!(
            "{} -> canonical {} ({}), node index {}: {} at {depth}\n",
            q.board, q.canonical, q.base64, q.node_index, q.of
        ));
    }
    if let Some((summary, len)) = &stored_first_depths {
        out.push_str(&first_depths_line(&args, summary, *len));
    }
    if let Some((path, len)) = &stored {
        out.push_str(&format!(
            "stored {} nodes in {} ({} bytes, {:.2} bits/node)\n",
            thousands(report.total_nodes),
            path.display(),
            thousands(*len),
            8.0 * *len as f64 / report.total_nodes.max(1) as f64
        ));
    }
    out.push_str(&format!("{:.1} s\n", t.elapsed().as_secs_f64()));
    emit(&out)
}

/// The line that says where the first depths went.
fn first_depths_line(args: &BfsArgs, summary: &FirstDepthSummary, len: u64) -> String {
    format!(
        "stored the first depth of {} positions ({} reached) in {} ({} bytes, {:.2} bits/position)\n",
        thousands(summary.positions),
        thousands(summary.reached()),
        args.common.db.join(FILE_NAME).display(),
        thousands(len),
        8.0 * len as f64 / summary.positions.max(1) as f64
    )
}

fn emit_stored_first_depths(args: &BfsArgs, summary: &FirstDepthSummary, len: u64, t: Instant) -> Result<(), Error> {
    if args.json {
        #[derive(Serialize)]
        struct Stored<'a> {
            stored: &'a FirstDepthSummary,
            path: String,
            bytes: u64,
            seconds: f64,
        }
        let path = args.common.db.join(FILE_NAME).display().to_string();
        return emit_json(&Stored { stored: summary, path, bytes: len, seconds: t.elapsed().as_secs_f64() });
    }
    emit(&format!("{}{:.1} s\n", first_depths_line(args, summary, len), t.elapsed().as_secs_f64()))
}

/// Store the first depths a search wrote with --first-depths-out (`raw`), with the
/// layers and the stop of its --json output (`report`), after checking that they belong
/// together: same board, published convention, one byte per position of the game, and
/// as many positions reached as the report says.
fn import_first_depths(
    g: &Geometry,
    start: Phase,
    db: &std::path::Path,
    raw: &std::path::Path,
    report: &std::path::Path,
    reporter: &dyn Reporter,
) -> Result<(FirstDepthSummary, u64), Error> {
    use std::io::Read;
    let io = |p: &std::path::Path| {
        let p = p.to_path_buf();
        move |e| Error::Io { path: p.clone(), source: e }
    };
    // A bound no report of `bfs --json` comes near (a few KB), and never a FIFO.
    let bytes = crate::file::read_capped(report, 1 << 20).map_err(io(report))?;
    if bytes.len() > 1 << 20 {
        return Err(Error::InvalidArgument(format!(
            "--import-report {}: over 1 MiB, not the --json output of `ostledb bfs`",
            report.display()
        )));
    }
    let text = String::from_utf8(bytes)
        .map_err(|_| Error::InvalidArgument(format!("--import-report {}: not UTF-8 text", report.display())))?;
    let bad = |why: String| Error::InvalidArgument(format!("--import-report {}: {why}", report.display()));
    let r: serde_json::Value = serde_json::from_str(&text).map_err(|e| bad(format!("not JSON: {e}")))?;
    let field =
        |k: &str| r.get(k).ok_or_else(|| bad(format!("no field `{k}` (not the --json output of `ostledb bfs`)")));
    if field("convention")?.as_str() != Some("published")
        || field("board_side")?.as_u64() != Some(g.side() as u64)
        || field("start_pieces")?.as_u64() != Some(g.start_pieces() as u64)
    {
        return Err(bad("not a search of the published convention on this board".into()));
    }
    // Reports written before searches had other starts have none: the game's own.
    let started = match r.get("start_phase") {
        None => Phase::new(g.start_pieces(), g.start_pieces()),
        Some(p) => match serde_json::from_value::<[u32; 2]>(p.clone()) {
            Ok([a, b]) => Phase::new(a, b),
            Err(_) => return Err(bad("`start_phase` is not a pair of piece counts".into())),
        },
    };
    if started != start {
        return Err(bad(format!(
            "a search from a start in phase {started}, not {start} (give the --max-pieces of the search)"
        )));
    }
    let layers: Vec<u64> = field("layers")?
        .as_array()
        .ok_or_else(|| bad("`layers` is not a list".into()))?
        .iter()
        .map(|l| l.get("nodes").and_then(|n| n.as_u64()))
        .collect::<Option<_>>()
        .ok_or_else(|| bad("a layer without a node count".into()))?;
    let complete = match field("stop")?.get("reason").and_then(|s| s.as_str()) {
        Some("exhausted") => true,
        Some("max_depth") => false,
        _ => return Err(bad("`stop` is neither exhausted nor max_depth".into())),
    };
    let expand_checkmates = field("expand_checkmates")?.as_bool().ok_or_else(|| bad("no checkmate flag".into()))?;
    let reached = field("positions_reached")?
        .get(0)
        .and_then(|n| n.as_u64())
        .ok_or_else(|| bad("no `positions_reached` (not a search by positions)".into()))?;
    let positions = crate::index::GameNumbering::build_max(g, start.pieces())?.len();
    let file_len = std::fs::metadata(raw).map_err(io(raw))?.len();
    if file_len != positions {
        return Err(Error::InvalidArgument(format!(
            "--import-first-depths {}: {file_len} bytes, but the search's phases have {positions} positions (one byte each)",
            raw.display()
        )));
    }
    // One pass to count the positions first reached at each depth, one to store.
    let mut first_reached = vec![0u64; 256];
    let mut f = std::io::BufReader::with_capacity(1 << 22, crate::file::open_regular(raw).map_err(io(raw))?);
    let mut buf = vec![0u8; 1 << 22];
    loop {
        let n = f.read(&mut buf).map_err(io(raw))?;
        if n == 0 {
            break;
        }
        buf[..n].iter().for_each(|&d| first_reached[d as usize] += 1);
    }
    let counted: u64 = first_reached[..NOT_REACHED as usize].iter().sum();
    if counted != reached || first_reached[layers.len()..NOT_REACHED as usize].iter().any(|&c| c > 0) {
        return Err(Error::InvalidArgument(format!(
            "--import-first-depths {} reaches {counted} positions within {} depths, its report says {reached}: \
             they are not of the same search",
            raw.display(),
            layers.len()
        )));
    }
    first_reached.truncate(layers.len());
    let summary = FirstDepthSummary { expand_checkmates, complete, layers, first_reached, positions, start };
    let mut f = crate::file::open_regular(raw).map_err(io(raw))?;
    let len =
        crate::bfs_depths::first_depths::write(db, g, &summary, |_, out| f.read_exact(out).map_err(io(raw)), reporter)?;
    Ok((summary, len))
}
