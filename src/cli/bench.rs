//! `ostledb bench`: measure a database's lookup backends against each other on the same
//! random positions: open time, bytes of key data, key -> index lookups and whole probes.

use std::time::Instant;

use clap::Args;
use serde::Serialize;

use crate::cli::{CommonArgs, emit, emit_json, thousands};
use crate::error::Error;
use crate::store::keys::{self, Backend};
use crate::store::{Database, db::backends_of};

/// Arguments of `ostledb bench`.
#[derive(Debug, Args)]
#[command(
    after_help = "Every backend is timed on the same random positions of the largest phase, in one\nrun, so their ratios are comparable even on a noisy machine. Lookups are key -> index\nonly (the canonical codes are computed beforehand); probes are whole queries of a\nboard (canonical form, lookup, block read and decompression, with a one-block cache).\n\nExamples:\n  ostledb bench --db ostle.db\n  ostledb bench --db ostle.db --backend rank --backend hash --lookups 1000000 --json"
)]
pub struct BenchArgs {
    /// Backends to time (repeat; default: every compiled backend whose key index the
    /// database has).
    #[arg(long = "backend", value_name = "NAME")]
    pub backends: Vec<Backend>,
    /// Random key -> index lookups per backend.
    #[arg(long, default_value_t = 1_000_000)]
    pub lookups: usize,
    /// Random probes per backend.
    #[arg(long, default_value_t = 2_000)]
    pub probes: usize,
    /// Seed of the random positions.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Print one JSON object.
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    common: CommonArgs,
}

/// One backend's figures.
#[derive(Debug, Serialize)]
pub struct BackendBench {
    /// Backend name.
    pub backend: String,
    /// Bytes of key data on disk, all phases.
    pub key_bytes: u64,
    /// Bits of key data per position.
    pub key_bits_per_position: f64,
    /// Seconds to open the key index of the benchmarked phase.
    pub open_seconds: f64,
    /// Nanoseconds per key -> index lookup, first pass over the random codes (includes
    /// page faults of mapped files and lazily built tables).
    pub cold_lookup_ns: f64,
    /// Nanoseconds per key -> index lookup, second pass over the same codes.
    pub lookup_ns: f64,
    /// Microseconds per probe.
    pub probe_us: f64,
}

/// The report.
#[derive(Debug, Serialize)]
pub struct BenchReport {
    /// The phase the lookups were drawn from.
    pub phase: String,
    /// Positions in the database.
    pub positions: u64,
    /// Bytes of the value files.
    pub value_bytes: u64,
    /// Bits of values per position.
    pub value_bits_per_position: f64,
    /// Per backend.
    pub backends: Vec<BackendBench>,
}

fn splitmix(x: &mut u64) -> u64 {
    *x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    let mut z = *x;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// Run `ostledb bench`.
pub fn run(args: BenchArgs) -> Result<(), Error> {
    let base = Database::open(&args.common.db)?;
    let has = backends_of(base.meta());
    let backends: Vec<Backend> = if args.backends.is_empty() {
        Backend::available()
            .into_iter()
            .filter(|b| has.iter().any(|h| h == b.storage().name() || h == b.name()))
            .collect()
    } else {
        args.backends.clone()
    };
    let index = base.index().clone();
    let phase = index.phases().iter().max_by_key(|p| p.len()).expect("a phase");
    let g = base.geometry().clone();
    let mut rng = args.seed;
    let n = phase.len();
    let picks: Vec<u64> = (0..args.lookups.max(1)).map(|_| splitmix(&mut rng) % n).collect();
    let codes: Vec<u64> = picks.iter().map(|&i| phase.position_at(i).code()).collect();
    let boards: Vec<_> = picks
        .iter()
        .take(args.probes.max(1))
        .map(|&i| phase.position_at(i).transformed(&g, (i % 8) as usize))
        .collect();
    let positions: u64 = base.meta().phases.iter().map(|p| p.positions).sum();
    let value_bytes: u64 = base.meta().phases.iter().map(|p| p.value_bytes).sum();
    let mut rows = Vec::new();
    for b in backends {
        let db = Database::open_with(&args.common.db, Some(b))?;
        let t = Instant::now();
        let k = db.keys(phase.phase())?.clone();
        let open_seconds = t.elapsed().as_secs_f64();
        let mut key_bytes = 0;
        for p in index.phases() {
            key_bytes +=
                if p.phase() == phase.phase() { k.key_bytes() } else { keys::open(b, &args.common.db, p)?.key_bytes() };
        }
        if !args.common.quiet {
            eprintln!("bench {b}: opened in {open_seconds:.3} s; {} lookups", thousands(codes.len() as u64));
        }
        // Lookups, twice over the same codes: every answer is checked, so nothing is
        // optimised away.
        let pass = || -> Result<f64, Error> {
            let t = Instant::now();
            for (c, &want) in codes.iter().zip(&picks) {
                if k.index_of(*c)? != Some(want) {
                    return Err(Error::Corrupt {
                        path: args.common.db.clone(),
                        reason: format!("the {b} key index gives a wrong index for code {c}"),
                    });
                }
            }
            Ok(t.elapsed().as_secs_f64() * 1e9 / codes.len() as f64)
        };
        let cold_lookup_ns = pass()?;
        let lookup_ns = pass()?;
        let t = Instant::now();
        for board in &boards {
            db.probe(board, None)?;
        }
        let probe_us = t.elapsed().as_secs_f64() * 1e6 / boards.len() as f64;
        rows.push(BackendBench {
            backend: b.name().into(),
            key_bytes,
            key_bits_per_position: 8.0 * key_bytes as f64 / positions.max(1) as f64,
            open_seconds,
            cold_lookup_ns,
            lookup_ns,
            probe_us,
        });
    }
    let report = BenchReport {
        phase: phase.phase().to_string(),
        positions,
        value_bytes,
        value_bits_per_position: 8.0 * value_bytes as f64 / positions.max(1) as f64,
        backends: rows,
    };
    if args.json {
        return emit_json(&report);
    }
    let mut out = format!(
        "database {}: {} positions; values {} bytes ({:.3} bits/position); lookups drawn from {}\n",
        args.common.db.display(),
        thousands(report.positions),
        thousands(report.value_bytes),
        report.value_bits_per_position,
        report.phase
    );
    out.push_str(&format!(
        "{:<10} {:>16} {:>10} {:>9} {:>9} {:>9} {:>9}\n",
        "backend", "key bytes", "bits/pos", "open s", "cold ns", "warm ns", "probe us"
    ));
    for r in &report.backends {
        out.push_str(&format!(
            "{:<10} {:>16} {:>10.3} {:>9.3} {:>9.1} {:>9.1} {:>9.1}\n",
            r.backend,
            thousands(r.key_bytes),
            r.key_bits_per_position,
            r.open_seconds,
            r.cold_lookup_ns,
            r.lookup_ns,
            r.probe_us
        ));
    }
    emit(&out)
}
