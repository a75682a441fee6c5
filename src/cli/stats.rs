//! `ostledb stats`: wins, losses, draws and distances per phase of a solved database.

use clap::Args;
use serde::Serialize;

use crate::analysis::stats::{PhaseStats, ValueCounts, database_stats, longest_wins};
use crate::cli::progress::CliReporter;
use crate::cli::{CommonArgs, WalkCheckpointArgs, emit, emit_json, thousands};
use crate::error::Error;
use crate::store::Store;

/// Arguments of `ostledb stats`.
#[derive(Debug, Args)]
#[command(
    after_help = "Examples:\n  ostledb stats\n  ostledb stats --json --db ./ostle.db\n  ostledb stats --checkpoint stats.ckpt   (the whole game: a killed run goes on from its last save)\n\nNodes are counted as published (OSTLE.md section 2): a node is non-trivial when a move\nfrom a position of the same phase group leads to it; immediate-win positions are\ncounted apart. Distances are in plies, counting the move that ends the game. The walk also\nfinds each phase's longest win and the positions that have it (by code), and prints those\nof the longest win of all with their boards and, with stored first depths, their distances\nfrom the start; --longest finds every phase's by a read of the value files alone."
)]
pub struct StatsArgs {
    /// Only the longest win of each phase and the positions that have it, by one read of
    /// the value files (seconds, not the full sweep), with their distance from the start
    /// when the database stores the first depths (`ostledb bfs --by-positions --store`).
    #[arg(long)]
    pub longest: bool,
    /// Print one JSON object.
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    walk: WalkCheckpointArgs,
    #[command(flatten)]
    common: CommonArgs,
}

/// What `stats --json` prints (and `export --stats FILE` writes).
#[derive(Serialize)]
pub struct Report {
    max_pieces: u32,
    phases: Vec<PhaseStats>,
    /// Sums over every phase (`phase` is `[0, 0]`).
    total: PhaseStats,
    /// The positions of the longest win of all (`total.longest_win`), as `stats --longest`
    /// shows them: board, code and distance from the start.
    longest_wins: Vec<Longest>,
}

impl Report {
    /// The report of `phases`, of `db` (or of its export) up to `max_pieces` pieces.
    pub fn new(db: &Store, max_pieces: u32, phases: Vec<PhaseStats>) -> Result<Report, Error> {
        let total = phases.iter().cloned().fold(PhaseStats::default(), PhaseStats::merge);
        let mut longest_wins = Vec::new();
        for &(code, which) in &total.longest_win.positions {
            let pos = crate::game::Position::from_code(code);
            let pi = db.index().phase(pos.phase()).ok_or_else(|| {
                Error::InvalidArgument(format!("a longest win of a position of no phase of the database ({code})"))
            })?;
            longest_wins.push(longest_row(db, pi, total.longest_win.plies, pi.index_of(&pos), which)?);
        }
        Ok(Report { max_pieces, phases, total, longest_wins })
    }
}

fn line(out: &mut String, what: &str, v: &ValueCounts) {
    let (lw, ll) = v.longest();
    out.push_str(&format!(
        "  {what:<10} {:>15} win  {:>15} loss  {:>13} draw   longest win {lw}, loss {ll}\n",
        thousands(v.win),
        thousands(v.loss),
        thousands(v.draw)
    ));
}

/// Run `ostledb stats`.
pub fn run(args: StatsArgs) -> Result<(), Error> {
    if args.longest && args.walk.records_dir.is_some() {
        return Err(Error::InvalidArgument(
            "--records-dir keeps the resolved records of the full walk; --longest reads only wins, which are \
             never elided"
                .into(),
        ));
    }
    if args.longest && args.walk.checkpoint.is_some() {
        return Err(Error::InvalidArgument(
            "--checkpoint keeps the progress of the full walk; --longest is one read of the value files, \
             minutes on the whole game, and keeps none"
                .into(),
        ));
    }
    let db = Store::open(&args.common.db)?;
    if args.longest {
        return run_longest(&db, &args);
    }
    let max = db.max_pieces();
    let rep = CliReporter::new(args.common.quiet);
    let mut checkpoint = args.walk.open("stats", &db, &rep)?;
    let resolved = args.walk.resolved(&db)?;
    let phases = database_stats(&db, resolved.as_ref(), &rep, &mut checkpoint)?;
    checkpoint.finish()?;
    let report = Report::new(&db, max, phases)?;
    if args.json {
        return emit_json(&report);
    }
    let mut out = String::new();
    let several = report.phases.len() > 1;
    for p in report.phases.iter().chain(several.then_some(&report.total)) {
        let c = &p.counts;
        let name =
            if p.phase == [0, 0] { "all phases".to_string() } else { format!("phase ({},{})", p.phase[0], p.phase[1]) };
        out.push_str(&format!(
            "{name}: {} positions, {} immediate wins, {} non-trivial nodes ({} with a forbidden move), {} positions with a special move\n",
            thousands(c.positions),
            thousands(c.immediate_wins),
            thousands(c.nontrivial_nodes),
            thousands(c.nontrivial_with_forbidden),
            thousands(p.positions_with_special)
        ));
        line(&mut out, "positions", &p.positions);
        line(&mut out, "nodes", &p.nodes);
        out.push_str("  distance histogram of non-trivial nodes (plies: wins / losses):\n");
        let len = p.nodes.win_by_distance.len().max(p.nodes.loss_by_distance.len());
        for d in 0..len {
            let w = p.nodes.win_by_distance.get(d).copied().unwrap_or(0);
            let l = p.nodes.loss_by_distance.get(d).copied().unwrap_or(0);
            if w + l > 0 {
                out.push_str(&format!("    {d:>4} {:>14} {:>14}\n", thousands(w), thousands(l)));
            }
        }
    }
    if !report.longest_wins.is_empty() {
        out.push_str(&format!(
            "longest win of all: {} plies, {} position(s)\n",
            report.total.longest_win.plies,
            report.longest_wins.len()
        ));
        longest_lines(&mut out, &report.longest_wins, db.first_depths()?.is_some());
    }
    emit(&out)
}

/// A position with a phase's longest win, as `stats --longest` shows it.
#[derive(Serialize)]
struct Longest {
    phase: [u32; 2],
    plies: u32,
    board: String,
    base64: String,
    /// `None`: the base value (every node but the special one); `Some(j)`: node `j`.
    special_node: Option<u32>,
    /// The depth of the position's first node, when the first depths are stored.
    position_depth: Option<u32>,
    /// The least depth among the nodes that have the value, when the first depths are
    /// stored.
    node_depth: Option<u32>,
}

/// The row of the position at dense index `idx` of phase `pi`, a longest win of `plies`
/// by its base value (`which` `None`) or by its node `j` (`Some(j)`).
fn longest_row(
    db: &Store,
    pi: &crate::index::PhaseIndex,
    plies: u32,
    idx: u64,
    which: Option<u32>,
) -> Result<Longest, Error> {
    let g = db.geometry();
    let pos = pi.position_at(idx);
    let (position_depth, node_depth) = match db.first_depths()? {
        Some(f) => {
            let nodes: Vec<usize> = match which {
                Some(j) => vec![j as usize],
                None => {
                    let s = db.values(pi.phase()).expect("its file").record(idx)?.special_move() as usize;
                    (0..=crate::game::moves::moves(g, &pos).len()).filter(|&j| s == 0 || j != s).collect()
                }
            };
            let mut least = None;
            for j in nodes {
                least = [least, f.node_depth(&pos, j)?].into_iter().flatten().min();
            }
            (f.position_depth(&pos)?, least)
        }
        None => (None, None),
    };
    let phase = pi.phase();
    Ok(Longest {
        phase: [phase.player, phase.opponent],
        plies,
        board: crate::game::notation::format_board(g, &pos),
        base64: crate::game::notation::code_to_base64(pos.code()),
        special_node: which,
        position_depth,
        node_depth,
    })
}

/// The lines of `rows` (positions with a longest win), as `stats` and `stats --longest`
/// print them; `stored_depths`: whether the database has the first depths.
fn longest_lines<'a>(out: &mut String, rows: impl IntoIterator<Item = &'a Longest>, stored_depths: bool) {
    for r in rows {
        let which = match r.special_node {
            Some(j) => format!("node {j} (its special move)"),
            None => "base value".to_string(),
        };
        let from_start = match (stored_depths, r.position_depth, r.node_depth) {
            (false, _, _) => String::new(),
            (true, Some(p), n) => format!(
                ", first reached at depth {p}{}",
                n.map_or(", the node not reached".to_string(), |n| format!(", the node at {n}"))
            ),
            (true, None, _) => ", not reached from the start".to_string(),
        };
        out.push_str(&format!("  {} ({}) {which}{from_start}\n", r.board, r.base64));
    }
}

fn run_longest(db: &Store, args: &StatsArgs) -> Result<(), Error> {
    let phases = longest_wins(db, &CliReporter::new(args.common.quiet))?;
    let depths = db.first_depths()?;
    let mut rows = Vec::new();
    for l in &phases {
        let pi = db.index().phase(crate::game::Phase::new(l.phase[0], l.phase[1])).expect("a phase of the database");
        for &(idx, special) in &l.positions {
            rows.push(longest_row(db, pi, l.plies, idx, special)?);
        }
    }
    if args.json {
        return emit_json(&rows);
    }
    let mut out = String::new();
    for l in &phases {
        out.push_str(&format!(
            "phase ({},{}): longest win {} plies, {} position(s)\n",
            l.phase[0],
            l.phase[1],
            l.plies,
            l.positions.len()
        ));
        longest_lines(&mut out, rows.iter().filter(|r| r.phase == l.phase), depths.is_some());
    }
    emit(&out)
}
