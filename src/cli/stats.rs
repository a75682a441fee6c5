//! `ostledb stats`: wins, losses, draws and distances per phase of a solved database.

use clap::Args;
use serde::Serialize;

use crate::analysis::stats::{PhaseStats, ValueCounts, database_stats};
use crate::cli::progress::CliReporter;
use crate::cli::{CommonArgs, emit, emit_json, thousands};
use crate::error::Error;
use crate::store::Database;

/// Arguments of `ostledb stats`.
#[derive(Debug, Args)]
#[command(
    after_help = "Examples:\n  ostledb stats\n  ostledb stats --json --db ./ostle.db\n\nNodes are counted as published (OSTLE.md section 2): a node is non-trivial when a move\nfrom a position of the same phase group leads to it; immediate-win positions are\ncounted apart. Distances are in plies, counting the move that ends the game."
)]
pub struct StatsArgs {
    /// Print one JSON object.
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    common: CommonArgs,
}

#[derive(Serialize)]
struct Report {
    max_pieces: u32,
    phases: Vec<PhaseStats>,
    /// Sums over every phase (`phase` is `[0, 0]`).
    total: PhaseStats,
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
    let db = Database::open(&args.common.db)?;
    let max = db.max_pieces();
    let phases = database_stats(&db, &CliReporter::new(args.common.quiet))?;
    let total = phases.iter().cloned().fold(PhaseStats::default(), PhaseStats::merge);
    let report = Report { max_pieces: max, phases, total };
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
    emit(&out)
}
