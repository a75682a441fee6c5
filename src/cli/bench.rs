//! `ostledb bench`: the lookup backends compared in one table, measured in one run on the
//! same key sets: build time, bytes per key, resident memory of the opened index, and
//! nanoseconds per key -> index lookup for three access patterns, one lookup at a time
//! and batched. Every answer of every backend is checked against the `rank` backend's.
//! The measuring is the library's ([`crate::bench::backends`]); this module parses the
//! arguments, shows its progress notes on stderr and prints the report.

use std::path::{Path, PathBuf};

use clap::Args;

use crate::bench::backends::{BackendBenchOptions, BenchReport, measure};
use crate::bench::latency::measure_cold;
use crate::cli::progress::CliReporter;
use crate::cli::{CommonArgs, at_least_one, emit, emit_json, one_to, thousands};

/// The most codes a `--batch` hands `index_of_batch` at once (the default `--lookups`).
const MAX_BATCH: usize = 1 << 20;

/// The most timed rounds (`--rounds`, `--cold-rounds`): each is a whole pass.
const MAX_ROUNDS: usize = 1000;
use crate::error::Error;

/// Arguments of `ostledb bench`.
#[derive(Debug, Args)]
#[command(after_help = "\
Measures the largest phase of the database (for the standard board up to 8 pieces: (4,4),
160,900,185 keys). In one run, on the same key sets, for every backend:

  build s     time to write the backend's index files of the phase from its keys into a
              scratch directory (sorted, levelwise and mmap share one keys file: built and
              timed once); skipped with --no-build, which opens the database's own files
  open s      time to open the index (levelwise lays the keys out here)
  bytes/key   bytes of index data per key (files on disk; rank: none)
  RSS MB      resident memory the opened index adds: VmRSS of /proc/self/status after
              opening (`open`) and after one warm-up pass (`warm`: includes the pages of
              mmap's file the pass touched) minus before, freed heap returned first;
              a negative difference (heap handed back meanwhile) shows as 0, --json keeps it
  cold ns     the warm-up pass: one random lookup at a time, right after opening
  random / children / in-order, each `1` (one index_of at a time) and `B` (index_of_batch,
              --batch codes per call): ns per lookup, the fastest of --rounds rounds; the
              rounds visit the backends one after the other, so a burst of load elsewhere
              on the machine hits every backend alike

Queries (--queries N): whole calls of the library on N random positions of every phase
(random symmetric images), one at a time: `probe` (a node's value: canonical form, index,
block, record) and `analyse` (the value and every move's value, what `query` prints),
first with the blocks still to be decoded, then again on the same positions with the
blocks cached; p50, p99, max and mean in microseconds.

Cold queries (--cold N): on any database, the whole game included (no index is built),
`analyse` on N random positions (random symmetric images) of every phase it holds,
--cold-rounds times, with every cache of the database emptied before each call: p50,
p99, max and mean in microseconds, and the value blocks decoded per call, per phase and
over all phases. The operating system's page cache is not dropped (a block comes from
memory once its file has been read, as in a server after its first minutes). The index's
tables of symmetric piece sets are built first, once per process, and the value files'
pages are mapped into the process, as `ostledb serve` does at start (else each call's
first touches of the files' pages are page faults, 12-15% of a call on the whole game);
the header says how long each took (index_ready_seconds, pages_mapped_seconds in
--json). Every round's answers must equal the first round's.

Key sets: uniformly random positions; the children (moves that remove nothing) of random
positions, canonicalised: what the solver, verify --deep and query look up; consecutive
positions in index order. Every answer must equal the rank backend's (exit code 1 if not).

sled (cargo feature `sled`) stores ~200 bytes per key (the standard (4,4) whole would be
~32 GB) and its build holds ~3.6 KB resident per key here. For a phase of more than
--sled-keys keys it is built on a subset: the first --sled-lookups keys of each key set
(its lookups are those prefixes of the same sets) plus random others up to --sled-keys
keys, and its row says so. A smaller tree is faster, so that row flatters sled.

Examples:
  ostledb bench --db ostle.db
  ostledb bench --db ostle.db --cold 2000          # cold analyse latency of every phase
  ostledb bench --db ostle.db --backend all --lookups 200000 --json
  ostledb bench --db ostle.db --backend hash --backend rank --no-build")]
pub struct BenchArgs {
    /// Backends to measure (repeat; `all`: every compiled backend). Default: every
    /// compiled backend (with --no-build: those whose files the database has).
    #[arg(long = "backend", value_name = "NAME|all")]
    pub backends: Vec<String>,
    /// Lookups per access pattern (about 90 bytes each: more than this process can have
    /// is refused).
    #[arg(long, default_value_t = BackendBenchOptions::default().lookups, value_parser = at_least_one())]
    pub lookups: usize,
    /// Codes per index_of_batch call, 1 to 1,048,576.
    #[arg(long, default_value_t = BackendBenchOptions::default().batch, value_parser = one_to(MAX_BATCH))]
    pub batch: usize,
    /// Timed rounds over all backends, 1 to 1,000; each figure is the fastest round.
    #[arg(long, default_value_t = BackendBenchOptions::default().rounds, value_parser = one_to(MAX_ROUNDS))]
    pub rounds: usize,
    /// Do not build the indexes; open the database's own index files.
    #[arg(long)]
    pub no_build: bool,
    /// Where to build the indexes (default: a new directory in the system temp directory,
    /// removed at the end).
    #[arg(long, value_name = "DIR")]
    pub scratch: Option<PathBuf>,
    /// Keys in the sled tree at most (a larger phase gets a subset, see below); a tree
    /// whose build (about 3.7 KB a key) does not fit in memory is refused.
    #[arg(long, default_value_t = BackendBenchOptions::default().sled_keys, value_parser = clap::value_parser!(u64).range(1..))]
    pub sled_keys: u64,
    /// Lookups per pattern for sled on a subset: the first this many of each key set (so
    /// at most --lookups).
    #[arg(long, default_value_t = BackendBenchOptions::default().sled_lookups, value_parser = at_least_one())]
    pub sled_lookups: usize,
    /// Seed of the key sets.
    #[arg(long, default_value_t = BackendBenchOptions::default().seed)]
    pub seed: u64,
    /// Also time this many whole queries in the library (`Database::probe`, the value of
    /// a node, and `Database::analyse`, the value and every move's), each position twice:
    /// the first time its blocks may need decoding, the second they are cached. 0: none.
    /// About 64 bytes each: more than this process can have is refused.
    #[arg(long, default_value_t = BackendBenchOptions::default().queries, value_name = "N")]
    pub queries: usize,
    /// Measure only cold queries: `analyse` on this many random positions of every phase,
    /// every cache emptied before each call (no backend table; see below). About 256
    /// bytes a position and 8 a call per phase: more than this process can have is refused.
    #[arg(long, value_name = "N", value_parser = at_least_one())]
    pub cold: Option<usize>,
    /// Rounds of --cold, 1 to 1,000 (each position analysed once per round).
    #[arg(long, default_value_t = 3, value_name = "R", value_parser = one_to(MAX_ROUNDS))]
    pub cold_rounds: usize,
    /// Print one JSON object.
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    common: CommonArgs,
}

/// The options of the library's measurement.
fn options(args: &BenchArgs) -> BackendBenchOptions {
    BackendBenchOptions {
        backends: args.backends.clone(),
        lookups: args.lookups,
        batch: args.batch,
        rounds: args.rounds,
        no_build: args.no_build,
        scratch: args.scratch.clone(),
        sled_keys: args.sled_keys,
        sled_lookups: args.sled_lookups,
        seed: args.seed,
        queries: args.queries,
    }
}

/// Run `ostledb bench`.
pub fn run(args: BenchArgs) -> Result<(), Error> {
    if let Some(n) = args.cold {
        return run_cold(&args, n);
    }
    let reporter = CliReporter::new(args.common.quiet).with_note_prefix("bench");
    let report = measure(&args.common.db, &options(&args), &reporter)?;
    if args.json {
        return emit_json(&report);
    }
    emit(&table(&report, &args.common.db))
}

/// `ostledb bench --cold N`.
fn run_cold(args: &BenchArgs, n: usize) -> Result<(), Error> {
    let db = crate::cli::db::open(&args.common, &Default::default())?;
    crate::bench::latency::check_cold(&db, n, args.cold_rounds)?;
    if !args.common.quiet {
        eprintln!(
            "bench: analyse on {} random positions of each of {} phases, {} rounds, caches emptied before each call",
            thousands(n as u64),
            db.index().phases().len(),
            args.cold_rounds
        );
    }
    let report = measure_cold(&db, n, args.cold_rounds, args.seed)?;
    if args.json {
        return emit_json(&report);
    }
    let mut out = format!(
        "database {}: cold analyse, {} positions per phase x {} rounds, caches emptied before each call; \
         index tables ready after {:.2} s, value pages mapped in {:.2} s\n",
        args.common.db.display(),
        thousands(n as u64),
        report.rounds,
        report.index_ready_seconds,
        report.pages_mapped_seconds
    );
    out.push_str(&format!(
        "{:<7} {:>15} {:>7} {:>9} {:>9} {:>10} {:>9} {:>12}\n",
        "phase", "positions", "calls", "p50 us", "p99 us", "max us", "mean us", "blocks/call"
    ));
    for p in &report.phases {
        out.push_str(&format!(
            "{:<7} {:>15} {:>7} {:>9.1} {:>9.1} {:>10.1} {:>9.1} {:>12.1}\n",
            p.phase,
            thousands(p.positions),
            p.analyse.calls,
            p.analyse.p50_ns / 1e3,
            p.analyse.p99_ns / 1e3,
            p.analyse.max_ns / 1e3,
            p.analyse.mean_ns / 1e3,
            p.blocks_per_call
        ));
    }
    emit(&out)
}

/// The report as a text table.
fn table(r: &BenchReport, db: &Path) -> String {
    let mut out = format!(
        "database {}, phase {}: {} keys; {} lookups per pattern, batches of {}, fastest of {} rounds; {} CPUs\n",
        db.display(),
        r.phase,
        thousands(r.keys),
        thousands(r.lookups as u64),
        r.batch,
        r.rounds,
        r.cpus
    );
    out.push_str(&format!(
        "{:<10} {:>8} {:>7} {:>9} {:>7} {:>7} {:>7} | {:>7} {:>7} | {:>7} {:>7} | {:>7} {:>7}\n",
        "", "build", "open", "bytes", "RSS MB", "", "cold", "random", "", "children", "", "in-order", ""
    ));
    out.push_str(&format!(
        "{:<10} {:>8} {:>7} {:>9} {:>7} {:>7} {:>7} | {:>7} {:>7} | {:>7} {:>7} | {:>7} {:>7}\n",
        "backend", "s", "s", "/key", "open", "warm", "ns", "1 ns", "B ns", "1 ns", "B ns", "1 ns", "B ns"
    ));
    let mut notes = Vec::new();
    for b in &r.backends {
        let name = if b.note.is_empty() {
            b.backend.clone()
        } else {
            notes.push(format!("{}*: {}", b.backend, b.note));
            format!("{}*", b.backend)
        };
        out.push_str(&format!(
            "{:<10} {:>8} {:>7.2} {:>9.2} {:>7.0} {:>7.0} {:>7.0} | {:>7.0} {:>7.0} | {:>7.0} {:>7.0} | {:>7.0} {:>7.0}\n",
            name,
            b.build_seconds.map(|s| format!("{s:.1}")).unwrap_or_else(|| "-".into()),
            b.open_seconds,
            b.bytes_per_key,
            b.rss_open_bytes.max(0) as f64 / 1e6,
            b.rss_warm_bytes.max(0) as f64 / 1e6,
            b.cold_ns,
            b.random.single,
            b.random.batched,
            b.children.single,
            b.children.batched,
            b.in_order.single,
            b.in_order.batched
        ));
    }
    for n in notes {
        out.push_str(&format!("{n}\n"));
    }
    if let Some(q) = &r.queries {
        out.push_str(&format!(
            "\nqueries in the library, one at a time ({} random positions, each twice):\n",
            thousands(q.probe_cold.calls as u64)
        ));
        out.push_str(&format!("{:<22} {:>9} {:>9} {:>10} {:>9}\n", "call", "p50 us", "p99 us", "max us", "mean us"));
        for (name, p) in [
            ("probe, first time", &q.probe_cold),
            ("probe, again", &q.probe_warm),
            ("analyse, first time", &q.analyse_cold),
            ("analyse, again", &q.analyse_warm),
        ] {
            out.push_str(&format!(
                "{name:<22} {:>9.2} {:>9.2} {:>10.1} {:>9.2}\n",
                p.p50_ns / 1e3,
                p.p99_ns / 1e3,
                p.max_ns / 1e3,
                p.mean_ns / 1e3
            ));
        }
    }
    out
}
