//! `ostledb interesting`: count, per phase, the positions of three puzzle-worthy classes
//! (draws where every capture loses, wins only by a sacrifice, wins only by hole moves)
//! and list examples.

use std::time::Instant;

use clap::Args;
use serde::Serialize;

use crate::analysis::interesting::{Class, PhaseCounts, sweep_phase};
use crate::cli::progress::CliReporter;
use crate::cli::{CommonArgs, emit, emit_json, thousands};
use crate::error::Error;
use crate::game::notation::{code_to_base64, format_board, format_move};
use crate::progress::Reporter;
use crate::store::Store;
use crate::working::group::GroupValues;

/// The most examples `--list` keeps per class and phase: a list to read, not a dump (a
/// list of 10^11 grew with every position of its class, per worker).
const MAX_LIST: usize = 1000;

/// Arguments of `ostledb interesting`.
#[derive(Debug, Args)]
#[command(after_help = "\
The classes, after the analysis in \"Strongly solved Ostle\" (Takizawa, PeerJ Computer
Science 9:e1560, 2023). Each is about a position's base node (nothing forbidden) and the
values of its moves for the side to move:

  draw-no-capture  the position is a draw, the side to move has at least one capture (a
                   move that removes an opponent piece), and every capture loses
  sacrifice        the position is a win and every winning move removes one of the
                   mover's own pieces: no other move wins at all
  hole-only        the position is a win and every winning move is a hole move

`fastest` counts the weaker reading of \"must\": every move that wins in the optimal
number of plies is a sacrifice (a hole move), while a slower other move may also win.
Immediate wins (a capture that wins at once) are in no class. Positions are counted
once per symmetry class (canonical positions), like every count of ostledb.

Every position of every phase is swept in parallel (the machinery of verify --deep: one
phase group's records in memory, 8 bytes per position, and the base values of the group
below); --class selects what is printed, the sweep is the same; --max-pieces leaves out
the larger phases. (4,4) took 87 s wall (99 s CPU) on 2 cores shared with other jobs.

Examples:
  ostledb interesting --db ostle.db
  ostledb interesting --db ostle.db --class hole-only --list 3
  ostledb interesting --db ostle.db --list 1 --json
  ostledb interesting --db whole-game.db --max-pieces 9")]
pub struct InterestingArgs {
    /// Classes to report (repeat; default: all three).
    #[arg(long = "class", value_name = "draw-no-capture|sacrifice|hole-only")]
    pub classes: Vec<Class>,
    /// Sweep only the phases with at most this many pieces (default: every phase of the
    /// database).
    #[arg(long, value_name = "N")]
    pub max_pieces: Option<u32>,
    /// Examples to list per class and phase (the first in index order), 0 to 1,000: each
    /// worker keeps as many with their moves while it sweeps.
    #[arg(long, default_value_t = 0, value_name = "N",
          value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(0..=MAX_LIST as u64))]
    pub list: usize,
    /// Print one JSON object.
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    common: CommonArgs,
}

#[derive(Serialize)]
struct MoveOut {
    r#move: String,
    value: String,
    removes: &'static str,
}

#[derive(Serialize)]
struct ExampleOut {
    board: String,
    code: String,
    value: String,
    moves: Vec<MoveOut>,
}

#[derive(Serialize)]
struct ClassOut {
    class: Class,
    count: u64,
    fastest: u64,
    examples: Vec<ExampleOut>,
}

#[derive(Serialize)]
struct PhaseOut {
    phase: String,
    positions: u64,
    seconds: f64,
    classes: Vec<ClassOut>,
}

/// Run `ostledb interesting`.
pub fn run(args: InterestingArgs) -> Result<(), Error> {
    let rep = CliReporter::new(args.common.quiet);
    let db = Store::open(&args.common.db)?;
    let g = db.geometry().clone();
    let index = db.index().clone();
    let wanted: Vec<Class> = if args.classes.is_empty() { Class::ALL.to_vec() } else { args.classes.clone() };
    let limit = args.max_pieces.unwrap_or(u32::MAX);
    let totals: Vec<u32> = index.group_pieces().into_iter().filter(|&n| n <= limit).collect();
    if totals.is_empty() {
        return Err(Error::InvalidArgument(format!(
            "--max-pieces {limit}: the database has no phase with at most {limit} pieces"
        )));
    }
    let mut phases = Vec::new();
    for pieces in totals {
        let vals = GroupValues::load(&args.common.db, &g, &index, pieces, None, &rep)?;
        for ph in vals.phases() {
            let t = Instant::now();
            let counts: PhaseCounts = sweep_phase(&g, &vals.records(), ph, args.list, &rep);
            let seconds = t.elapsed().as_secs_f64();
            rep.note(&format!("{ph}: {} positions swept in {seconds:.1} s", thousands(counts.positions)));
            let classes = Class::ALL
                .iter()
                .zip(counts.classes)
                .filter(|(c, _)| wanted.contains(c))
                .map(|(&class, cc)| ClassOut {
                    class,
                    count: cc.count,
                    fastest: cc.fastest,
                    examples: cc
                        .examples
                        .iter()
                        .map(|e| ExampleOut {
                            board: format_board(&g, &e.position),
                            code: code_to_base64(e.position.code()),
                            value: e.value.describe(),
                            moves: e
                                .moves
                                .iter()
                                .map(|m| MoveOut {
                                    r#move: format_move(&g, m.mv),
                                    value: m.outcome.describe(),
                                    removes: m.removal.name(),
                                })
                                .collect(),
                        })
                        .collect(),
                })
                .collect();
            phases.push(PhaseOut { phase: ph.to_string(), positions: counts.positions, seconds, classes });
        }
    }
    if args.json {
        return emit_json(&serde_json::json!({ "phases": phases }));
    }
    let mut out = format!("{:<8} {:>16} {:<16} {:>14} {:>14}\n", "phase", "positions", "class", "count", "fastest");
    for p in &phases {
        for c in &p.classes {
            out.push_str(&format!(
                "{:<8} {:>16} {:<16} {:>14} {:>14}\n",
                p.phase,
                thousands(p.positions),
                c.class.name(),
                thousands(c.count),
                thousands(c.fastest)
            ));
        }
    }
    for p in &phases {
        for c in p.classes.iter().filter(|c| !c.examples.is_empty()) {
            out.push_str(&format!("\n{} {}:\n", p.phase, c.class.name()));
            for e in &c.examples {
                out.push_str(&format!("  {} ({}): {}\n", e.board, e.code, e.value));
                for m in &e.moves {
                    let removes =
                        if m.removes == "nothing" { String::new() } else { format!(", removes {}", m.removes) };
                    out.push_str(&format!("    {:<12} {}{removes}\n", m.r#move, m.value));
                }
            }
        }
    }
    emit(&out)
}
