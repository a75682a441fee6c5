//! `ostledb pack`: turn solved phases into the compressed result store, and
//! `ostledb index`: add a key index of another lookup backend to a database.

use std::time::Instant;

use clap::Args;

use crate::cli::db::lock_for_writing;
use crate::cli::{CommonArgs, emit, thousands};
use crate::error::Error;
use crate::game::{Geometry, Phase};
use crate::store::Backend;
use crate::store::values::{DEFAULT_FORMAT, DEFAULT_LEVEL, MAX_BLOCK, MAX_LEVEL, MAX_STREAMS, WriteOptions, file_name};
use crate::working::pack::{PackOptions, add_backend, pack};
use crate::working::phasefile::phase_file;

/// Arguments of `ostledb pack`.
#[derive(Debug, Args)]
#[command(
    after_help = "`ostledb solve` packs its results itself; run this to pack again with other settings\n(it reads the solver's phase value files if kept with --keep-work, else the value files).\n\nExamples:\n  ostledb pack --db ostle.db --backend rank --backend sorted\n  ostledb pack --db old.db                        # rewrite an older database's values as v5\n  ostledb pack --db ostle.db --block 256 --streams 4   # v5 blocks of 4 streams of 256 positions\n  ostledb pack --db ostle.db --value-format 3     # zstd blocks: larger, cold queries several times slower"
)]
pub struct PackArgs {
    /// Pack the phases with at most this many pieces (default: every phase present).
    #[arg(long, value_parser = clap::value_parser!(u32).range(8..=10))]
    pub max_pieces: Option<u32>,
    #[command(flatten)]
    /// How the result store is written.
    pub store: StoreArgs,
    #[command(flatten)]
    common: CommonArgs,
}

/// How the store is written (shared by `solve` and `pack`).
#[derive(Debug, Clone, Args)]
pub struct StoreArgs {
    /// Value file version: 5 (the default unless --keep-loss-distances: small streams
    /// coded with a context model of each phase, several to a block; losses elided
    /// only), 4 (one stream a block: the whole game in 0.984 GB; a cold read decodes
    /// about twice what v5's does) or 3 (zstd blocks of 32,768 positions; the whole game
    /// in 1.032 GB, cold queries about 3x slower than v4's; the default with
    /// --keep-loss-distances).
    #[arg(long, value_name = "VERSION", value_parser = clap::value_parser!(u32).range(3..=5))]
    pub value_format: Option<u32>,
    /// zstd level of v3 value blocks (1..=22). On (4,4), 19 packs about 4x slower than
    /// the default 15 for 2.5% fewer bytes; 9 is about 8x faster and 12% larger.
    #[arg(long, default_value_t = DEFAULT_LEVEL, value_parser = clap::value_parser!(i32).range(1..=MAX_LEVEL as i64))]
    pub level: i32,
    /// Positions per value block (v5: per stream): a lookup decodes (part of) one.
    /// Default: in v5, 128 in a phase of 2^30 positions or more ((5,5)), 64 in one of 2^28
    /// or more ((5,4), (4,5)) and 256 in a smaller one ((4,4): within 4.3% of v2's size);
    /// the whole game 981,167,798 bytes; in v4, 256 and 1,024; 32,768 in v3. v4 takes at
    /// most 8,192, v5 as many with all the streams of a block.
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=MAX_BLOCK as i64))]
    pub block: Option<u32>,
    /// v5: streams per value block (1..=16), each of --block positions: a lookup reads
    /// one block (and checks its checksum) and decodes (part of) one of its streams; more
    /// streams share one 6-byte index entry. Default: 8 in a phase of 2^30 positions or
    /// more, 16 in a smaller one.
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=MAX_STREAMS as i64))]
    pub streams: Option<u32>,
    /// Key index to build (repeat for several; the first is the default for queries):
    /// rank (no keys: the index is computed), sorted, levelwise, mmap (one sorted keys
    /// file), hash (minimal perfect hash + index array), sled.
    #[arg(long = "backend", value_name = "NAME", default_value = "rank")]
    pub backends: Vec<Backend>,
    /// Store every loss with its distance. By default a loss is stored without it (the
    /// distance is one more than the largest win distance among its moves, found by one
    /// ply of search when read): 38% smaller on (4,4), 34% on the whole game; cold
    /// random queries of the whole game are about 2.6x slower, export about 1.8x.
    #[arg(long)]
    pub keep_loss_distances: bool,
    /// Store the value of every immediate win (a position whose side to move removes
    /// the opponent's last-but-one piece: won in 1 ply by the rules). By default such a
    /// record is filler chosen to compress well and readers answer `Win(1)` from the
    /// position: 5% smaller on (4,4), which is 53% immediate wins.
    #[arg(long)]
    pub keep_immediate_wins: bool,
    /// Keep the solver's 8-byte-per-position phase value files after packing.
    #[arg(long)]
    pub keep_work: bool,
    /// Also write each phase's records with every loss distance into DIR (4 bytes per
    /// position, 10.9 GB for the whole game), from the solver's phase files, for
    /// `verify --deep`, `stats` and `export` given the same --records-dir: they then
    /// resolve no elided loss, which takes them about 20 s of (4,4) and 25 min of the
    /// whole game on 2 cores. Only phases packed from the solver's files, into values
    /// that elide losses, are written.
    #[arg(long, value_name = "DIR")]
    pub records_dir: Option<std::path::PathBuf>,
}

impl StoreArgs {
    /// The options these arguments give.
    pub fn options(&self) -> PackOptions {
        let format = self.value_format.unwrap_or(if self.keep_loss_distances { 3 } else { DEFAULT_FORMAT });
        PackOptions {
            values: WriteOptions {
                format,
                block: self.block.unwrap_or(0),
                streams: self.streams.unwrap_or(0),
                level: self.level,
                elide_losses: !self.keep_loss_distances,
                filled_wins: !self.keep_immediate_wins,
            },
            backends: self.backends.clone(),
            keep_work: self.keep_work,
            records: self.records_dir.clone(),
        }
    }
}

/// The largest piece count whose phases are all present in `dir`, as solver files or
/// value files.
fn present_max(dir: &std::path::Path, g: &Geometry) -> Option<u32> {
    let data = crate::store::directory::current_data_dir(dir).ok()?;
    let mut best = None;
    for n in 2 * g.min_pieces()..=2 * g.start_pieces() {
        let all = Phase::all(g, n).iter().all(|&p| phase_file(dir, p).is_file() || data.join(file_name(p)).is_file());
        if !all {
            break;
        }
        best = Some(n);
    }
    best
}

/// Pack, printing a line per phase.
pub fn pack_and_report(
    dir: &std::path::Path,
    g: &Geometry,
    max: u32,
    opts: &PackOptions,
    quiet: bool,
) -> Result<String, Error> {
    let t = Instant::now();
    let meta = pack(dir, g, max, opts, |p| {
        if !quiet {
            eprintln!(
                "packed ({},{}): {} positions, {} bytes ({:.3} bits/position) in {:.1} s{}",
                p.meta.player,
                p.meta.opponent,
                thousands(p.meta.positions),
                thousands(p.meta.value_bytes),
                8.0 * p.meta.value_bytes as f64 / p.meta.positions.max(1) as f64,
                p.seconds,
                match &p.records {
                    Some(Ok(s)) => format!("; records with every distance written in {s:.1} s"),
                    _ => String::new(),
                }
            )
        }
        if let Some(Err(e)) = &p.records {
            // Said even with --quiet: a walk given the directory will resolve the phase.
            eprintln!(
                "ostledb: the records of ({},{}) with every distance were not kept ({e}); verify --deep, stats and export will resolve them",
                p.meta.player, p.meta.opponent
            );
        }
    })?;
    let positions: u64 = meta.phases.iter().map(|p| p.positions).sum();
    let bytes: u64 = meta.phases.iter().map(|p| p.value_bytes).sum();
    Ok(format!(
        "database {}: {} positions, values {} bytes ({:.3} bits/position), key index {}; packed in {:.1} s\n",
        dir.display(),
        thousands(positions),
        thousands(bytes),
        8.0 * bytes as f64 / positions.max(1) as f64,
        meta.backends.join(", "),
        t.elapsed().as_secs_f64()
    ))
}

/// Run `ostledb pack`.
pub fn run(args: PackArgs) -> Result<(), Error> {
    let g = Geometry::standard();
    let dir = &args.common.db;
    let _lock = lock_for_writing(&args.common, "ostledb pack")?;
    let max = match args.max_pieces {
        Some(m) => m,
        None => present_max(dir, g).ok_or_else(|| Error::MissingDatabase {
            path: dir.clone(),
            phase: "(4,4)".into(),
            max_pieces: 8,
        })?,
    };
    emit(&pack_and_report(dir, g, max, &args.store.options(), args.common.quiet)?)
}

/// Arguments of `ostledb index`.
#[derive(Debug, Args)]
#[command(
    after_help = "Example:\n  ostledb index --db ostle.db --backend hash\n  ostledb query --db ostle.db --backend hash 22220-00000-00300-00000-11110"
)]
pub struct IndexArgs {
    /// The backend whose key index to build.
    #[arg(long)]
    pub backend: Backend,
    #[command(flatten)]
    common: CommonArgs,
}

/// Run `ostledb index`.
pub fn run_index(args: IndexArgs) -> Result<(), Error> {
    let t = Instant::now();
    let _lock = lock_for_writing(&args.common, &format!("ostledb index --backend {}", args.backend))?;
    let meta = add_backend(&args.common.db, args.backend)?;
    emit(&format!(
        "{}: built the {} key index in {:.1} s; the database has: {}\n",
        args.common.db.display(),
        args.backend,
        t.elapsed().as_secs_f64(),
        meta.backends.join(", ")
    ))
}
