//! Query latency as a program embedding the database sees it: the time of single
//! [`Store::probe`] calls (the value of one node) and [`analyse`](crate::analysis::query::analyse) calls (the
//! value and every move's value), on random positions, first on a cold block cache and
//! then again on the same positions with their blocks decoded in memory; and
//! ([`measure_cold`]) `analyse` on random positions of every phase with every cache
//! emptied before each call, the figure of a server asked about positions it has not
//! seen.

use std::time::Instant;

use serde::Serialize;

use crate::error::Error;
use crate::store::Store;

/// Percentiles of one kind of call, in nanoseconds.
#[derive(Clone, Debug, Serialize)]
pub struct Percentiles {
    /// Calls timed.
    pub calls: usize,
    /// Median.
    pub p50_ns: f64,
    /// 99th percentile.
    pub p99_ns: f64,
    /// Slowest.
    pub max_ns: f64,
    /// Mean.
    pub mean_ns: f64,
}

impl Percentiles {
    fn of(mut ns: Vec<f64>) -> Percentiles {
        ns.sort_by(f64::total_cmp);
        let at = |q: f64| ns.get(((ns.len() as f64 - 1.0) * q).round() as usize).copied().unwrap_or(0.0);
        Percentiles {
            calls: ns.len(),
            p50_ns: at(0.5),
            p99_ns: at(0.99),
            max_ns: ns.last().copied().unwrap_or(0.0),
            mean_ns: ns.iter().sum::<f64>() / ns.len().max(1) as f64,
        }
    }
}

/// The latency report.
#[derive(Clone, Debug, Serialize)]
pub struct Latency {
    /// `probe` with the blocks still to be read and decompressed (page cache as it is).
    pub probe_cold: Percentiles,
    /// `probe` again on the same positions: blocks decoded in the cache.
    pub probe_warm: Percentiles,
    /// `analyse` (value and every move's value), first time.
    pub analyse_cold: Percentiles,
    /// `analyse` again on the same positions.
    pub analyse_warm: Percentiles,
}

fn splitmix(x: &mut u64) -> u64 {
    *x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    let mut z = *x;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// A random position of `phase` (index drawn uniformly), as a random symmetric image.
fn random_position(db: &Store, phase: &crate::index::PhaseIndex, rng: &mut u64) -> crate::game::Position {
    phase.position_at(splitmix(rng) % phase.len()).transformed(db.geometry(), (splitmix(rng) % 8) as usize)
}

/// Cold `analyse` latency of one phase, or of all of them.
#[derive(Clone, Debug, Serialize)]
pub struct ColdPhase {
    /// The phase, e.g. `(4,4)`, or `all`.
    pub phase: String,
    /// Positions of the phase (of all phases for `all`).
    pub positions: u64,
    /// `analyse` on an empty cache.
    pub analyse: Percentiles,
    /// Value blocks decoded per call, on average.
    pub blocks_per_call: f64,
}

/// The cold-query report: one row per phase, then all phases together.
#[derive(Clone, Debug, Serialize)]
pub struct ColdLatency {
    /// Random positions per phase.
    pub per_phase: usize,
    /// Rounds (each position analysed once per round).
    pub rounds: usize,
    /// Seconds from the start of the measurement until the index's tables of symmetric
    /// piece sets were all built (the database starts building them as it opens).
    pub index_ready_seconds: f64,
    /// Seconds then spent mapping the value files' pages into the process
    /// ([`Store::map_value_pages`], as `ostledb serve` does at start), so that the
    /// calls measure decoding, not first touches of the file's pages.
    pub pages_mapped_seconds: f64,
    /// Per phase, in the database's order, then `all`.
    pub phases: Vec<ColdPhase>,
}

/// Bytes a position of [`measure_cold`] costs besides its times: the board and the first
/// round's answer (its moves' values).
const COLD_POSITION_BYTES: u64 = 256;

/// Refuse a [`measure_cold`] of `per_phase` positions and `rounds` rounds whose memory
/// this process cannot have (a time, 8 bytes, per call in its phase and in the total of
/// all phases), before any of it is allocated.
pub fn check_cold(db: &Store, per_phase: usize, rounds: usize) -> Result<(), Error> {
    let phases = db.index().phases().len() as u64;
    let (n, r) = (per_phase.max(1) as u64, rounds.max(1) as u64);
    let each = r.saturating_mul(8 * (phases + 1)).saturating_add(COLD_POSITION_BYTES);
    crate::sys::check_memory(&format!("--cold {n} with --cold-rounds {r}"), n, each, "positions")
}

/// Time [`analyse`](crate::analysis::query::analyse) on `per_phase` random positions (random symmetric images)
/// of every phase the database holds, `rounds` times, every cache of the database
/// emptied before each call ([`Store::drop_caches`]; the operating system's page
/// cache is left as it is, so blocks are read from memory once the file has been read).
/// One thread, one call at a time. Every round's answer must equal the first round's.
/// The index's tables of symmetric piece sets are built first (a once-per-process cost
/// that the database pays as it opens, [`crate::store::OpenOptions::prepare_index`]),
/// so that the first calls do not wait for them, and the value files' pages are mapped
/// into the process ([`Store::map_value_pages`]), as `ostledb serve` does at start.
pub fn measure_cold(db: &Store, per_phase: usize, rounds: usize, seed: u64) -> Result<ColdLatency, Error> {
    check_cold(db, per_phase, rounds)?;
    let t = std::time::Instant::now();
    for phase in db.index().phases() {
        phase.build_bitmaps();
    }
    let index_ready_seconds = t.elapsed().as_secs_f64();
    let t = std::time::Instant::now();
    db.map_value_pages();
    let pages_mapped_seconds = t.elapsed().as_secs_f64();
    let mut rng = seed;
    let mut phases = Vec::new();
    let (mut all_ns, mut all_blocks) = (Vec::new(), 0usize);
    for phase in db.index().phases() {
        let boards: Vec<_> = (0..per_phase.max(1)).map(|_| random_position(db, phase, &mut rng)).collect();
        let mut first = Vec::with_capacity(boards.len());
        let (mut ns, mut blocks) = (Vec::with_capacity(boards.len() * rounds), 0usize);
        for round in 0..rounds.max(1) {
            for (k, b) in boards.iter().enumerate() {
                db.drop_caches();
                let t = Instant::now();
                let a = crate::analysis::query::analyse(db, b, None)?;
                ns.push(t.elapsed().as_nanos() as f64);
                blocks += db.cache().blocks();
                let answer = (a.outcome, a.moves.iter().map(|m| m.outcome).collect::<Vec<_>>());
                if round == 0 {
                    first.push(answer);
                } else {
                    check(first[k] == answer, k)?;
                }
            }
        }
        all_ns.extend_from_slice(&ns);
        all_blocks += blocks;
        let calls = ns.len();
        phases.push(ColdPhase {
            phase: phase.phase().to_string(),
            positions: phase.len(),
            analyse: Percentiles::of(ns),
            blocks_per_call: blocks as f64 / calls.max(1) as f64,
        });
    }
    let calls = all_ns.len();
    phases.push(ColdPhase {
        phase: "all".into(),
        positions: db.index().phases().iter().map(|p| p.len()).sum(),
        analyse: Percentiles::of(all_ns),
        blocks_per_call: all_blocks as f64 / calls.max(1) as f64,
    });
    Ok(ColdLatency { per_phase, rounds, index_ready_seconds, pages_mapped_seconds, phases })
}

/// Bytes a query of [`measure`] costs: the board (16), its value (16) and a time (8)
/// for each of the four kinds of call.
pub const QUERY_BYTES: u64 = 64;

/// Time `n` single calls of each kind on random positions (random symmetric images,
/// drawn uniformly from all the database's positions), one thread, one call at a time.
/// Every answer is checked against the other kind of call, so nothing is optimised away.
pub fn measure(db: &Store, n: usize, seed: u64) -> Result<Latency, Error> {
    measure_repeated(db, n, seed, 1)
}

/// [`measure`] with the warm passes repeated `repeat` times (the last one reported), for
/// profiling the warm path.
pub fn measure_repeated(db: &Store, n: usize, seed: u64, repeat: usize) -> Result<Latency, Error> {
    crate::sys::check_memory(&format!("{n} queries"), n.max(1) as u64, QUERY_BYTES, "queries")?;
    let g = db.geometry().clone();
    let total: u64 = db.index().phases().iter().map(|p| p.len()).sum();
    let mut rng = seed;
    let boards: Vec<_> = (0..n.max(1))
        .map(|_| {
            let mut i = splitmix(&mut rng) % total;
            let p = db.index().phases().iter().find(|p| {
                let hit = i < p.len();
                if !hit {
                    i -= p.len();
                }
                hit
            });
            let p = p.expect("i < total");
            p.position_at(i).transformed(&g, (splitmix(&mut rng) % 8) as usize)
        })
        .collect();
    let mut values = Vec::with_capacity(boards.len());
    let time = |f: &mut dyn FnMut(usize) -> Result<(), Error>| -> Result<Percentiles, Error> {
        let mut ns = Vec::with_capacity(boards.len());
        for k in 0..boards.len() {
            let t = Instant::now();
            f(k)?;
            ns.push(t.elapsed().as_nanos() as f64);
        }
        Ok(Percentiles::of(ns))
    };
    let probe_cold = time(&mut |k| {
        values.push(db.probe(&boards[k], None)?);
        Ok(())
    })?;
    let probe_warm = time(&mut |k| {
        let v = db.probe(&boards[k], None)?;
        check(v == values[k], k)
    })?;
    let mut analyse = |k: usize| -> Result<(), Error> {
        let a = crate::analysis::query::analyse(db, &boards[k], None)?;
        check(a.outcome == values[k], k)
    };
    let analyse_cold = time(&mut analyse)?;
    let mut analyse_warm = time(&mut analyse)?;
    for _ in 1..repeat {
        analyse_warm = time(&mut analyse)?;
    }
    Ok(Latency { probe_cold, probe_warm, analyse_cold, analyse_warm })
}

fn check(ok: bool, k: usize) -> Result<(), Error> {
    if ok { Ok(()) } else { Err(Error::InvalidArgument(format!("query {k} gave two different answers"))) }
}
