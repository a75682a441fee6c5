//! `ostledb solve`: retrograde analysis of every phase up to a piece count.

use std::sync::Arc;
use std::time::Instant;

use clap::Args;

use crate::cli::pack::{StoreArgs, pack_and_report};
use crate::cli::progress::CliReporter;
use crate::cli::{CommonArgs, OnInterrupt, Signals, emit, thousands};
use crate::error::Error;
use crate::game::Geometry;
use crate::game::notation::parse_board;
use crate::solve::SolveOptions;
use crate::solve::retrograde::solve_into;
use crate::store::Store;

/// Arguments of `ostledb solve`.
#[derive(Debug, Args)]
#[command(
    after_help = "Examples:\n  ostledb solve                    # phase (4,4), 160,900,185 positions\n  ostledb solve --max-pieces 10 --threads 2\n\nCtrl-C (or SIGTERM) stops at the end of the current step after saving a checkpoint in\nthe database directory; run the same command again to resume there. A second Ctrl-C\nquits at once and keeps the last checkpoint."
)]
pub struct SolveArgs {
    /// Solve the phases with at most this many pieces on the board: 8 = (4,4), about 85
    /// seconds and 0.9 GB of memory on 2 cores; 9 adds (5,4) and (4,5), about 16 minutes and 6 GB;
    /// 10 is the whole game: (5,5) adds about 40 minutes and needs 10 GB of memory.
    /// Phases already in the database are loaded, not solved again.
    #[arg(long, default_value_t = 8, value_parser = clap::value_parser!(u32).range(8..=10))]
    pub max_pieces: u32,
    /// Worker threads, 1 to 1,024 (default: all cores).
    #[arg(long, value_name = "N", value_parser = crate::cli::one_to(crate::cli::MAX_THREADS))]
    pub threads: Option<usize>,
    /// Inside a phase group, save the working state to the database directory at the
    /// first level boundary after this many minutes since the last save, so a killed
    /// solve resumes there (0: only finished phases are saved). A save of (5,5) writes
    /// about 8.2 GB.
    #[arg(long, default_value_t = 10, value_name = "MINUTES")]
    pub checkpoint_minutes: u64,
    #[command(flatten)]
    /// How the result store is written.
    pub store: StoreArgs,
    #[command(flatten)]
    common: CommonArgs,
}

/// What Ctrl-C (or SIGTERM) does during `ostledb solve` (see
/// [`crate::cli::Cli::on_interrupt`]): the first stops at the next level boundary after
/// saving a checkpoint; a second one quits at once, keeping the last checkpoint.
pub fn on_interrupt(args: &SolveArgs) -> OnInterrupt {
    OnInterrupt {
        stopping: (!args.common.quiet).then_some(
            "ostledb: stopping after the current step, once a checkpoint is saved (press Ctrl-C again to quit at once)",
        ),
        quitting: "ostledb: stopped; the last checkpoint in the database directory is kept",
    }
}

/// Run `ostledb solve`; it stops at the next level boundary, with a checkpoint saved,
/// once `signals.stop` is set.
pub fn run(args: SolveArgs, signals: &Signals) -> Result<(), Error> {
    crate::cli::start_threads(args.threads)?;
    let t = Instant::now();
    let g = Geometry::standard();
    // Held across solving and packing (the library calls share it).
    let lock = crate::cli::db::lock_for_writing(&args.common, "ostledb solve")?;
    // Ctrl-C (or SIGTERM) sets the flag (the binary's handler, see `on_interrupt`).
    let opts = SolveOptions {
        reporter: Arc::new(CliReporter::new(args.common.quiet)),
        dir: Some(args.common.db.clone()),
        checkpoint_every: (args.checkpoint_minutes > 0).then(|| crate::cli::minutes(args.checkpoint_minutes)),
        stop: Some(signals.stop.clone()),
    };
    let mut out = String::new();
    solve_into(g, args.max_pieces, &opts, |p| {
        out.push_str(&format!(
            "{}: {} positions: {} win, {} loss, {} draw\n",
            p.phase,
            thousands(p.positions),
            thousands(p.win),
            thousands(p.loss),
            thousands(p.draw)
        ));
        Ok(())
    })?;
    out.push_str(&format!("solved in {:.1} s\n", t.elapsed().as_secs_f64()));
    out.push_str(&pack_and_report(&args.common.db, g, args.max_pieces, &args.store.options(), args.common.quiet)?);
    drop(lock);
    // A sample query, answered from the database just written.
    let db = Store::open(&args.common.db)?;
    let sample = "22220-00000-00300-00000-11110";
    let v = db.probe(&parse_board(g, sample)?, None)?;
    out.push_str(&format!(
        "sample: {sample} (four pieces a side, side to move at the bottom): {}\n  try: ostledb query {sample}\n",
        v.describe()
    ));
    emit(&out)
}
