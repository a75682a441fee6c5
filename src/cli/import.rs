//! `ostledb import`: build a database from published retrograde text files.

use std::path::PathBuf;
use std::time::Instant;

use clap::Args;

use crate::cli::pack::StoreArgs;
use crate::cli::progress::CliReporter;
use crate::cli::{CommonArgs, emit, emit_json, thousands};
use crate::error::Error;
use crate::game::Geometry;
use crate::progress::Reporter;
use crate::published::import::import;

/// Arguments of `ostledb import`.
#[derive(Debug, Args)]
#[command(
    after_help = "Examples:\n  ostledb import --from ./published --db imported.db\n  ostledb export --digest --db imported.db      # the same digest as the files read\n\nReads every ostle_<n>_retrograde_output<NNNN>.txt of the directory (numbered from 0000,\nall with the same n) into a new database holding every phase with at most n pieces,\nand its ostle_<n>_bfs_output<NNNN>.txt, if any, into the database's stored BFS.\n\nEvery line is checked: the code is canonical and in ascending order, no position is\nmissing, exactly the non-trivial nodes have a value, each value is at most 254 (a win\nor loss in 255 plies, the longest any file holds), and at most one node of a position\ndiffers from the others. An error names the file and line. A base value that no field\ngives (node 0 trivial) is computed from the position's moves, so the database equals\nthe one a solve writes. Then every position's values are re-derived from its children,\nas `verify --deep` does, before anything is written: files holding a value the rules\ncannot give are refused, naming the position. --trust skips that step, for a source\nknown to be right. Needs 8 bytes of memory per position (1.3 GB for (4,4))."
)]
pub struct ImportArgs {
    /// Directory holding the published files.
    #[arg(long, value_name = "DIR")]
    pub from: PathBuf,
    /// Board side (5 for Ostle; smaller boards are for tests).
    #[arg(long, default_value_t = 5, hide = true)]
    pub side: u32,
    /// Pieces per side at the start (5 for Ostle).
    #[arg(long, default_value_t = 5, hide = true)]
    pub start_pieces: u32,
    /// Do not re-derive every imported value from its children before writing (for a
    /// source known to be right, e.g. files `ostledb export` wrote and nothing changed).
    #[arg(long)]
    pub trust: bool,
    /// Print one JSON object.
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    /// How the result store is written.
    pub store: StoreArgs,
    #[command(flatten)]
    common: CommonArgs,
}

/// Run `ostledb import`.
pub fn run(args: ImportArgs) -> Result<(), Error> {
    let t = Instant::now();
    let g = Geometry::new(args.side, args.start_pieces)?;
    let reporter = CliReporter::new(args.common.quiet);
    let _lock = crate::cli::db::lock_for_writing(&args.common, "ostledb import")?;
    let s = import(&g, &args.from, &args.common.db, &args.store.options(), args.trust, &reporter)?;
    if s.bfs_files > 0 {
        reporter.note(&format!("{} BFS files: {} nodes stored with their depths", s.bfs_files, thousands(s.bfs_nodes)));
    }
    if args.json {
        return emit_json(&s);
    }
    let bytes: u64 = s.meta.phases.iter().map(|p| p.value_bytes).sum();
    emit(&format!(
        "imported {} positions with at most {} pieces from {} files into {} ({} value bytes; {} base values computed from the moves; {}) in {:.1} s\n",
        thousands(s.positions),
        s.max_pieces,
        s.files,
        args.common.db.display(),
        thousands(bytes),
        thousands(s.derived),
        if args.trust {
            "not re-derived: --trust".to_string()
        } else {
            format!("{} positions re-derived from their children", thousands(s.rederived))
        },
        t.elapsed().as_secs_f64()
    ))
}
