//! Query latency as a program embedding the database sees it: the time of single
//! [`Database::probe`] calls (the value of one node) and [`Database::analyse`] calls (the
//! value and every move's value), on random positions, first on a cold block cache and
//! then again on the same positions with their blocks decoded in memory.

use std::time::Instant;

use serde::Serialize;

use crate::error::Error;
use crate::store::Database;

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

/// Time `n` single calls of each kind on random positions (random symmetric images,
/// drawn uniformly from all the database's positions), one thread, one call at a time.
/// Every answer is checked against the other kind of call, so nothing is optimised away.
pub fn measure(db: &Database, n: usize, seed: u64) -> Result<Latency, Error> {
    measure_repeated(db, n, seed, 1)
}

/// [`measure`] with the warm passes repeated `repeat` times (the last one reported), for
/// profiling the warm path.
pub fn measure_repeated(db: &Database, n: usize, seed: u64, repeat: usize) -> Result<Latency, Error> {
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
        let a = db.analyse(&boards[k], None)?;
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
