//! The `ostledb` command line: one module per subcommand, each with its own argument
//! struct and a `run` function (built with the `cli` feature). `main.rs` parses, installs
//! Ctrl-C handling for a command that wants it ([`Cli::on_interrupt`], [`Signals`]),
//! dispatches to [`run`] and turns its result into the exit code: nothing here ends the
//! process, everything returns.

pub mod bench;
pub mod bfs;
pub mod db;
pub mod export;
pub mod import;
pub mod inspect;
pub mod interesting;
pub mod pack;
pub mod positions;
pub mod progress;
pub mod query;
pub mod repair;
pub mod review;
#[cfg(feature = "serve")]
pub mod serve;
pub mod solve;
pub mod stats;
pub mod verify;

pub use crate::progress::thousands;
use std::io::Write;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use clap::{Args, Parser, Subcommand};

use crate::error::Error;

/// Solve and query the board game Ostle.
///
/// Boards are written as 25 digits, row 0 first: 0 empty, 1 a piece of the side to move,
/// 2 a piece of the other side, 3 the hole; `-` and `_` are ignored, so the initial position with
/// the side to move at the bottom is 22222-00000-00300-00000-11111.
#[derive(Debug, Parser)]
#[command(name = "ostledb", version, about, long_about = None, propagate_version = true)]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Count the unique positions per phase and hole square (OSTLE.md section 6).
    Positions(positions::PositionsArgs),
    /// Show a board: canonical form, code, phase, moves and the forbidden move.
    Inspect(inspect::InspectArgs),
    /// Solve the game by retrograde analysis, phase by phase, into a database directory.
    Solve(solve::SolveArgs),
    /// The verdict of a board and of each of its moves (best first), its line and its distance from the start.
    Query(query::QueryArgs),
    /// Review a game: each ply's value before and after, the best move, and the plies that gave a win or a draw away.
    Review(review::ReviewArgs),
    /// Wins, losses, draws and distances per phase of a solved database.
    Stats(stats::StatsArgs),
    /// Check every checksum of a database; with --deep, re-derive every value from its children.
    Verify(verify::VerifyArgs),
    /// Compress solved phases into the result store (solve does this itself).
    Pack(pack::PackArgs),
    /// Add a key index of another lookup backend to a database.
    Index(pack::IndexArgs),
    /// Time the lookup backends of a database against each other, and query latency.
    Bench(bench::BenchArgs),
    /// Count and list draws where every capture loses, wins only by a sacrifice, wins only by hole moves.
    Interesting(interesting::InterestingArgs),
    /// Breadth-first search from the initial position: the fewest plies to each node.
    Bfs(bfs::BfsArgs),
    /// Write the database in the published text format, or compute that format's digest.
    Export(export::ExportArgs),
    /// Build a database from published text files (retrograde, and BFS when present).
    Import(import::ImportArgs),
    /// Rebuild a damaged, unreadable or lost metadata file from the value files.
    Repair(repair::RepairArgs),
    /// Serve the database over HTTP: a JSON API and the web explorer (read-only, loopback by default).
    #[cfg(feature = "serve")]
    Serve(serve::ServeArgs),
}

/// Options every subcommand takes.
#[derive(Debug, Clone, Args)]
pub struct CommonArgs {
    /// The result database.
    #[arg(long, global = true, default_value = "./ostle.db", value_name = "PATH")]
    pub db: PathBuf,
    /// No progress output on stderr (errors are still printed).
    #[arg(long, short, global = true)]
    pub quiet: bool,
}

/// Where a walk over every position of a database (`verify --deep`, `stats`) keeps its
/// progress, so that a kill does not undo it.
#[derive(Debug, Clone, Args)]
pub struct WalkCheckpointArgs {
    /// Save the walk's progress to FILE (JSON, kilobytes): each phase's result when it is
    /// done, and the counts so far of the phase under way (see --checkpoint-minutes). Run
    /// again with the same FILE, a walk that was killed or stopped goes on from its last
    /// save; FILE is removed when the walk is done. A checkpoint of another database, or of
    /// this one before it was last written, is not used: the walk starts again and says so.
    #[arg(long, value_name = "FILE")]
    pub checkpoint: Option<PathBuf>,
    /// With --checkpoint: save the phase under way at most this often, in minutes (0:
    /// after every round of a few million positions).
    #[arg(long, default_value_t = 1, value_name = "MINUTES", requires = "checkpoint")]
    pub checkpoint_minutes: u64,
    /// Keep each phase's records with their elided loss distances resolved in DIR, 4
    /// bytes per position (10.9 GB for the whole game), and take them from there when a
    /// later run finds them: resolving is most of the time of loading a phase group
    /// (about 28 min for (4,5) on 2 cores). `stats`, `verify --deep` and `export
    /// --records-dir DIR --keep-records` share them, and `solve --records-dir DIR` writes
    /// them from its own files before any of them runs. A file of another database, damaged,
    /// or that disagrees with its value file is resolved again; resolved distances are
    /// checked against the children by `verify --deep` like every other value. The files
    /// stay when the walk is done: remove DIR when you no longer need them.
    #[arg(long, value_name = "DIR")]
    pub records_dir: Option<PathBuf>,
}

impl WalkCheckpointArgs {
    /// The directory of resolved records these arguments name, for `db`.
    pub fn resolved(&self, db: &crate::store::Store) -> Result<Option<crate::working::resolved::ResolvedDir>, Error> {
        self.records_dir.as_deref().map(|d| crate::working::resolved::ResolvedDir::new(d, db.meta())).transpose()
    }

    /// The checkpoint of walk `command` over `db` these arguments ask for.
    pub fn open<A: serde::Serialize + serde::de::DeserializeOwned + Clone>(
        &self,
        command: &str,
        db: &crate::store::Store,
        reporter: &dyn crate::progress::Reporter,
    ) -> Result<crate::analysis::sweep::Checkpoint<A>, Error> {
        let every = minutes(self.checkpoint_minutes);
        crate::analysis::sweep::Checkpoint::open(self.checkpoint.as_deref(), command, db, every, reporter)
    }
}

/// A board and the board before the opponent's last move: the arguments of the
/// subcommands that look at one position.
#[derive(Debug, Clone, Args)]
pub struct BoardArgs {
    /// The board, 25 digits (0 empty, 1 side to move, 2 other side, 3 hole; `-` and `_` ignored).
    pub board: String,
    /// The board before the opponent's last move, seen from the opponent (1 = the
    /// opponent's pieces); it decides which move is forbidden.
    #[arg(long, value_name = "BOARD")]
    pub prev: Option<String>,
}

impl BoardArgs {
    /// Parse both boards; the previous one must lead to the board by one move.
    pub fn parse(
        &self,
        g: &crate::game::Geometry,
    ) -> Result<(crate::game::Position, Option<crate::game::Position>), Error> {
        parse_with_prev(g, &self.board, self.prev.as_deref())
    }
}

/// Parse a board and an optional previous board (`--prev`), checked to lead to it by one
/// move.
pub fn parse_with_prev(
    g: &crate::game::Geometry,
    board: &str,
    prev: Option<&str>,
) -> Result<(crate::game::Position, Option<crate::game::Position>), Error> {
    crate::analysis::query::parse_with_prev(g, board, prev, "--prev")
}

/// What the binary hands to [`run`] about Ctrl-C and SIGTERM. The binary owns the signal
/// handler (installed only when [`Cli::on_interrupt`] asks for one); the library only
/// reads the flag.
#[derive(Debug, Clone, Default)]
pub struct Signals {
    /// Set by the binary at the first Ctrl-C or SIGTERM; `solve` passes it on as
    /// [`crate::solve::SolveOptions::stop`], so the solve saves a checkpoint and returns
    /// [`Error::Interrupted`] at the next level boundary, and `bfs --by-positions` with a
    /// checkpoint directory as [`crate::solve::bfs_positions::Checkpoints::stop`], so the
    /// search saves one and returns [`Error::BfsStopped`] at the next layer boundary.
    pub stop: Arc<AtomicBool>,
}

/// How the binary is to handle Ctrl-C (and SIGTERM) for a command that stops cleanly on
/// request: the first signal sets [`Signals::stop`] and prints `stopping`, a second one
/// prints `quitting` and ends the process at once with
/// [`EXIT_INTERRUPTED`](crate::error::EXIT_INTERRUPTED).
#[derive(Debug, Clone)]
pub struct OnInterrupt {
    /// Said on stderr at the first signal (`None` with `--quiet`).
    pub stopping: Option<&'static str>,
    /// Said on stderr at the second signal, just before the process ends.
    pub quitting: &'static str,
}

impl Cli {
    /// Whether this command stops cleanly when [`Signals::stop`] is set, and what to say
    /// then: `solve`, and `bfs --by-positions` with a checkpoint directory, do (they save a
    /// checkpoint first). For every other command the
    /// binary installs no handler, so Ctrl-C ends the process at once, as by default.
    pub fn on_interrupt(&self) -> Option<OnInterrupt> {
        match &self.command {
            Command::Solve(a) => Some(solve::on_interrupt(a)),
            Command::Bfs(a) => bfs::on_interrupt(a),
            _ => None,
        }
    }
}

/// Run the parsed command line; `Ok` means exit code 0. A closed stdout pipe
/// ([`Error::ClosedPipe`], `ostledb query - | head -1`) ends the command early and is
/// `Ok` here: the reader has all it wanted.
pub fn run(cli: Cli, signals: &Signals) -> Result<(), Error> {
    match dispatch(cli, signals) {
        Err(Error::ClosedPipe) => Ok(()),
        r => r,
    }
}

fn dispatch(cli: Cli, signals: &Signals) -> Result<(), Error> {
    // `solve --threads N` starts its own number of them.
    if !matches!(cli.command, Command::Solve(_)) {
        start_threads(None)?;
    }
    match cli.command {
        Command::Positions(a) => positions::run(a),
        Command::Inspect(a) => inspect::run(a),
        Command::Solve(a) => solve::run(a, signals),
        Command::Query(a) => query::run(a),
        Command::Review(a) => review::run(a),
        Command::Stats(a) => stats::run(a),
        Command::Verify(a) => verify::run(a),
        Command::Bfs(a) => bfs::run(a, signals),
        Command::Pack(a) => pack::run(a),
        Command::Bench(a) => bench::run(a),
        Command::Interesting(a) => interesting::run(a),
        Command::Index(a) => pack::run_index(a),
        Command::Export(a) => export::run(a),
        Command::Import(a) => import::run(a),
        Command::Repair(a) => repair::run(a),
        #[cfg(feature = "serve")]
        Command::Serve(a) => serve::run(a),
    }
}

/// The value parser of a count that must be at least 1 (`--threads`, `--rounds`...):
/// clap then refuses 0 with exit code 2 instead of the command reading it as "default"
/// or "1" without saying so.
pub fn at_least_one() -> clap::builder::RangedU64ValueParser<usize> {
    clap::builder::RangedU64ValueParser::<usize>::new().range(1..)
}

/// The value parser of a count from 1 to `max`: clap refuses anything else with exit
/// code 2, naming the range.
pub fn one_to(max: usize) -> clap::builder::RangedU64ValueParser<usize> {
    clap::builder::RangedU64ValueParser::<usize>::new().range(1..=max as u64)
}

/// The most threads a command starts (`solve --threads`, `serve --threads`,
/// `serve --max-probes`): far more than any machine has cores; each thread takes a
/// stack, and 10^11 of them used to abort `serve` in a failed 800 GB allocation.
pub const MAX_THREADS: usize = 1024;

/// The most connections `serve --max-connections` keeps open at once (each is a file
/// descriptor and its buffers); more used to panic in the runtime's semaphore.
pub const MAX_CONNECTIONS: usize = 65_536;

/// Minutes in seconds for a checkpoint interval, saturating (a huge `--checkpoint-minutes`
/// is "never" rather than an overflow).
pub fn minutes(m: u64) -> std::time::Duration {
    std::time::Duration::from_secs(m.saturating_mul(60))
}

/// Start the process's worker threads (rayon's global pool): `threads` of them, or one per
/// core, each made to allocate once. Every command does this before it opens a
/// database, so that what the threads take (stacks, the allocator's per-thread arenas)
/// is taken when the block cache sizes itself to the memory left; and a thread that
/// cannot be started (`ulimit -v`, `ulimit -u`) is an error with exit code 2, not a
/// panic at the first parallel step. Once per process: later calls change nothing.
pub fn start_threads(threads: Option<usize>) -> Result<(), Error> {
    static STARTED: std::sync::Mutex<bool> = std::sync::Mutex::new(false);
    let mut started = STARTED.lock().unwrap_or_else(|e| e.into_inner());
    if *started {
        return Ok(());
    }
    // Before any thread allocates: under `ulimit -v`, fewer heaps of the allocator's own.
    crate::sys::fit_malloc_to_limit();
    let mut pool = rayon::ThreadPoolBuilder::new();
    if let Some(t) = threads {
        pool = pool.num_threads(t);
    }
    pool.build_global().map_err(|e| {
        let n = threads.map_or("the worker".to_string(), |t| t.to_string());
        Error::InvalidArgument(format!("cannot start {n} threads: {e}"))
    })?;
    rayon::broadcast(|_| std::hint::black_box(Box::new(0u8)));
    *started = true;
    Ok(())
}

/// Write to stdout; a closed pipe (`ostledb ... | head`) is not an error.
pub fn emit(text: &str) -> Result<(), Error> {
    let mut out = std::io::stdout().lock();
    stdout_result(out.write_all(text.as_bytes()).and_then(|_| out.flush()))
}

/// The result of a write to stdout: a closed pipe is [`Error::ClosedPipe`], which the
/// caller passes up (`?`) to [`run`], where it becomes success (the reader has all it
/// wanted); any other failure is an I/O error.
pub fn stdout_result(r: std::io::Result<()>) -> Result<(), Error> {
    match r {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Err(Error::ClosedPipe),
        Err(e) => Err(Error::Io { path: "<stdout>".into(), source: e }),
    }
}

/// Print a JSON value on one line.
pub fn emit_json<T: serde::Serialize>(value: &T) -> Result<(), Error> {
    let mut s = serde_json::to_string(value).map_err(|e| Error::InvalidArgument(e.to_string()))?;
    s.push('\n');
    emit(&s)
}
