//! `ostledb positions`: unique position counts per phase and hole orbit.

use std::collections::BTreeMap;
use std::time::Instant;

use clap::Args;
use serde::Serialize;

use crate::analysis::stats::{NodeCounts, node_counts};
use crate::cli::progress::CliReporter;
use crate::cli::{CommonArgs, emit, emit_json, thousands};
use crate::error::Error;
use crate::game::{Geometry, Phase};
use crate::index::GameIndex;

/// Arguments of `ostledb positions`.
#[derive(Debug, Args)]
#[command(after_help = "Examples:\n  ostledb positions --max-pieces 10\n  ostledb positions --max-pieces 8 --json")]
pub struct PositionsArgs {
    /// Phases with at most this many pieces on the board: 8 = (4,4); 9 adds (5,4) and
    /// (4,5); 10 is the whole game.
    #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u32).range(8..=10))]
    pub max_pieces: u32,
    /// Also walk every position of the phases with four pieces a side to count immediate
    /// wins and non-trivial nodes (OSTLE.md section 2; about a minute on 2 cores).
    #[arg(long)]
    pub nodes: bool,
    /// Print one JSON object instead of a table.
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    common: CommonArgs,
}

#[derive(Serialize)]
struct PhaseCounts {
    phase: [u32; 2],
    positions: u64,
    by_hole: BTreeMap<u32, u64>,
    player_sets: usize,
    symmetric_player_sets: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    nodes: Option<NodeCounts>,
}

#[derive(Serialize)]
struct Report {
    max_pieces: u32,
    phases: Vec<PhaseCounts>,
    total_positions: u64,
    total_nodes: u64,
    seconds: f64,
}

/// Run `ostledb positions`.
pub fn run(args: PositionsArgs) -> Result<(), Error> {
    let t = Instant::now();
    let g = Geometry::standard();
    let index = GameIndex::build(g, args.max_pieces)?;
    let phases: Vec<PhaseCounts> = index
        .phases()
        .iter()
        .map(|p| PhaseCounts {
            phase: [p.phase().player, p.phase().opponent],
            positions: p.len(),
            by_hole: p.count_by_hole(),
            player_sets: p.player_sets(),
            symmetric_player_sets: p.symmetric_player_sets(),
            nodes: (args.nodes && p.phase() == Phase::new(4, 4))
                .then(|| node_counts(p, "(4,4) nodes", &CliReporter::new(args.common.quiet))),
        })
        .collect();
    let total = index.len();
    let report = Report {
        max_pieces: args.max_pieces,
        total_positions: total,
        total_nodes: total * 25,
        seconds: t.elapsed().as_secs_f64(),
        phases,
    };
    if args.json {
        return emit_json(&report);
    }
    let mut out = String::new();
    let w = 15;
    out.push_str(&format!("{:>6}", "hole"));
    for p in &report.phases {
        out.push_str(&format!("{:>w$}", format!("({},{})", p.phase[0], p.phase[1])));
    }
    out.push('\n');
    for rep in g.orbit_reps() {
        out.push_str(&format!("{rep:>6}"));
        for p in &report.phases {
            out.push_str(&format!("{:>w$}", thousands(p.by_hole[&rep])));
        }
        out.push('\n');
    }
    out.push_str(&format!("{:>6}", "sum"));
    for p in &report.phases {
        out.push_str(&format!("{:>w$}", thousands(p.positions)));
    }
    out.push('\n');
    out.push_str(&format!(
        "\ntotal {} positions, {} nodes (25 per position)\n",
        thousands(report.total_positions),
        thousands(report.total_nodes)
    ));
    for p in &report.phases {
        if let Some(n) = &p.nodes {
            out.push_str(&format!(
                "({},{}): {} immediate-win positions; {} non-trivial nodes, {} with a forbidden move\n",
                p.phase[0],
                p.phase[1],
                thousands(n.immediate_wins),
                thousands(n.nontrivial_nodes),
                thousands(n.nontrivial_with_forbidden)
            ));
        }
    }
    emit(&out)
}
