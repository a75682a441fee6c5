//! `ostledb export`: write a database in the published text format (or only its digest).

use std::io::Write;
use std::path::PathBuf;
use std::time::Instant;

use clap::{Args, ValueEnum};
use serde::Serialize;

use crate::cli::progress::CliReporter;
use crate::cli::{CommonArgs, emit, emit_json, thousands};
use crate::error::Error;
use crate::file::write_atomic;
use crate::progress::Reporter;
use crate::published::export::{ExportCheckpoint, ExportOptions, ExportSummary, export_with};
use crate::store::Store;

/// Output formats of `ostledb export`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// The text files of the earlier complete solution (OSTLE.md section 5, schema/PUBLISHED.md).
    Published,
}

/// Arguments of `ostledb export`.
#[derive(Debug, Args)]
#[command(
    after_help = "Examples:\n  ostledb export --format published --db ostle.db --out ./published     # (4,4): 161 files, 4.7 GB\n  ostledb export --digest --db ostle.db                                  # the digest only, no files\n  ostledb export --digest --verbose --max-pieces 8\n  ostledb export --digest --checkpoint digest.ckpt                       # the whole game: a killed run goes on\n  python3 tools/published-digest.py ./published                          # the same digest from the files\n\nFiles `ostle_<n>_retrograde_output<NNNN>.txt`, numbered from 0000, of 1,000,000 lines\n(the last shorter), positions in ascending canonical code over every phase with at\nmost n pieces. A field is the published value v = N - 1 of a node (N plies; even v: the\nside to move wins), `0` for a draw, empty for a node no move leads to; an\nimmediate-win position is `code,checkmate`. With a stored BFS (`ostledb bfs --store`, or by\npositions: `ostledb bfs --by-positions --store`, which covers the whole game) the\nBFS files `ostle_<n>_bfs_output<NNNN>.txt` come first: a line per position, `checkmate`\nafter the code of an immediate win, field j the depth of node j, -1 when a move leads\nto node j but the search did not reach it, empty when no move leads to it.\nThe digest follows the published recipe: sha256 of every file's lines joined by LF,\nthen sha256 of those hex digests concatenated in file-name order (BFS files first)."
)]
pub struct ExportArgs {
    /// The output format.
    #[arg(long, value_enum, default_value = "published")]
    pub format: Format,
    /// Directory to write the files into (created if missing; it must not already hold
    /// published files with the same piece count).
    #[arg(long, value_name = "DIR", default_value = "./ostle-published")]
    pub out: PathBuf,
    /// Export the phases with at most this many pieces (default: every phase of the database).
    #[arg(long, value_parser = clap::value_parser!(u32).range(4..=10))]
    pub max_pieces: Option<u32>,
    /// Write no files: compute and print the digest the files would have.
    #[arg(long)]
    pub digest: bool,
    /// Also print every file's name, lines and sha256.
    #[arg(long, short)]
    pub verbose: bool,
    /// Print one JSON object (with every file's digest).
    #[arg(long)]
    pub json: bool,
    /// Also compute the published solver's 64-bit fingerprint of each run, as its log
    /// prints it at the end of the run: of the retrograde files, and of the BFS files.
    /// AES-128 over every position's code and non-trivial-node mask and every node's
    /// value, from the lines (schema/PUBLISHED.md, "Fingerprint"). With --checkpoint, a
    /// checkpoint without it starts over.
    #[arg(long)]
    pub fingerprint: bool,
    /// With --digest: save the progress to FILE (JSON: every file's digest so far and where
    /// each phase stands) at the end of a file, at most every --checkpoint-minutes. Run
    /// again with the same FILE, a digest that was killed goes on after the last file saved;
    /// FILE is removed when the digest is done. A checkpoint of another database, or of
    /// this one before it was last written, is not used.
    #[arg(long, value_name = "FILE", requires = "digest")]
    pub checkpoint: Option<PathBuf>,
    /// With --checkpoint: save at most this often, in minutes (0: after every file).
    #[arg(long, default_value_t = 1, value_name = "MINUTES", requires = "checkpoint")]
    pub checkpoint_minutes: u64,
    /// Resolve the elided loss distances a phase group at a time first (as stats and
    /// verify --deep do: up to 8.2 GB of memory for the whole game), into scratch files in
    /// DIR, 4 bytes per position (10.9 GB for the whole game), removed when the retrograde
    /// files are done. Files a killed run (or `stats` or `verify --deep` with the same DIR)
    /// left are taken when they are of this database, whole, and agree word for word with
    /// the value files; any other is resolved again. Without it each loss is resolved by a
    /// search as its line is made, one random read per child. Default: with --checkpoint
    /// FILE, FILE.records; else none.
    #[arg(long, value_name = "DIR")]
    pub records_dir: Option<PathBuf>,
    /// Also count what `ostledb stats` counts, in the same walk, and write it to FILE as
    /// `ostledb stats --json` prints it (written when the export is done; a checkpoint
    /// keeps the counts so far). The lines are made from the records and non-trivial
    /// nodes that the statistics count, so the whole game's statistics cost little more
    /// than its digest, instead of a walk of their own (12 min on 2 cores).
    #[arg(long, value_name = "FILE")]
    pub stats: Option<PathBuf>,
    /// Keep the files of --records-dir when done, for `stats --records-dir DIR` and
    /// `verify --deep --records-dir DIR`, which then take them instead of resolving again.
    #[arg(long, requires = "records_dir")]
    pub keep_records: bool,
    /// No scratch files, even with --checkpoint: each loss is resolved as its line is made
    /// (less memory and no disk, several times slower on the whole game).
    #[arg(long, conflicts_with = "records_dir")]
    pub no_records: bool,
    /// Lines per file (the published format has 1,000,000; smaller only to test the
    /// splitting into files on small boards).
    #[arg(long, hide = true, default_value_t = crate::published::LINES_PER_FILE,
          value_parser = clap::value_parser!(u64).range(1..))]
    pub lines_per_file: u64,
    #[command(flatten)]
    common: CommonArgs,
}

#[derive(Serialize)]
struct Report<'a> {
    format: &'static str,
    written: bool,
    out: Option<String>,
    seconds: f64,
    #[serde(flatten)]
    summary: &'a ExportSummary,
}

/// Run `ostledb export`.
pub fn run(args: ExportArgs) -> Result<(), Error> {
    let t = Instant::now();
    let db = Store::open(&args.common.db)?;
    let reporter = CliReporter::new(args.common.quiet);
    if db.first_depths()?.is_none() && db.bfs()?.is_none() {
        reporter
            .note("the database stores no BFS (`ostledb bfs --store` adds one): only retrograde files are exported");
    }
    // (clap refuses --records-dir with --no-records.)
    let records_dir = match (&args.records_dir, &args.checkpoint) {
        _ if args.no_records => None,
        (Some(dir), _) => Some(dir.clone()),
        (None, Some(c)) => {
            let mut name = c.as_os_str().to_os_string();
            name.push(".records");
            Some(PathBuf::from(name))
        }
        (None, None) => None,
    };
    let opts = ExportOptions {
        max_pieces: args.max_pieces,
        lines_per_file: args.lines_per_file,
        records_dir,
        keep_records: args.keep_records,
        stats: args.stats.is_some(),
        fingerprint: args.fingerprint,
    };
    let out = (!args.digest).then_some(args.out.as_path());
    let mut checkpoint = match &args.checkpoint {
        Some(path) => {
            let every = crate::cli::minutes(args.checkpoint_minutes);
            ExportCheckpoint::open(path, &db, every, &reporter)?
        }
        None => ExportCheckpoint::none(),
    };
    let summary = export_with(&db, &opts, out, &reporter, &mut checkpoint)?;
    if let (Some(path), Some(stats)) = (&args.stats, &summary.stats) {
        let report = crate::cli::stats::Report::new(&db, summary.max_pieces, stats.clone())?;
        write_atomic(path, |w| {
            serde_json::to_writer(&mut *w, &report)?;
            w.write_all(b"\n")
        })?;
    }
    checkpoint.finish()?;
    let seconds = t.elapsed().as_secs_f64();
    if args.json {
        return emit_json(&Report {
            format: "published",
            written: out.is_some(),
            out: out.map(|o| o.display().to_string()),
            seconds,
            summary: &summary,
        });
    }
    let mut text = String::new();
    if args.verbose {
        for f in summary.bfs_files.iter().chain(&summary.retrograde_files) {
            text.push_str(&format!("{}  {}  {} lines\n", f.sha256, f.name, thousands(f.lines)));
        }
    }
    let all: Vec<_> = summary.bfs_files.iter().chain(&summary.retrograde_files).collect();
    let bytes: u64 = all.iter().map(|f| f.bytes).sum();
    let kinds = format!("{} BFS + {} retrograde files", summary.bfs_files.len(), summary.retrograde_files.len());
    let what = match out {
        Some(o) => format!("wrote {kinds} ({} bytes) to {}", thousands(bytes), o.display()),
        None => format!("{kinds} ({} bytes) not written", thousands(bytes)),
    };
    text.push_str(&format!("digest {}\n", summary.digest));
    if let Some(f) = &summary.fingerprints {
        text.push_str(&format!("fingerprint of the retrograde files {}\n", f.retrograde));
        if let Some(b) = &f.bfs {
            text.push_str(&format!("fingerprint of the BFS files {b}\n"));
        }
    }
    text.push_str(&format!(
        "{} positions with at most {} pieces; {what} in {seconds:.1} s\n",
        thousands(summary.positions),
        summary.max_pieces
    ));
    emit(&text)
}
