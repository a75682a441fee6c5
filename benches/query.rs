//! Query latency percentiles in the library (`ostledb::bench::latency`): single probes
//! and whole analyses (value and every move), cold and then warm, on a solved database.
//!
//! `OSTLEDB_DB=ostle.db cargo bench --bench query` (default `./ostle.db`; skipped when
//! there is none). Percentiles are what matter here, not criterion's mean, so this
//! bench prints its own table.

use ostledb::OpenOptions;
use ostledb::bench::latency;
use ostledb::store::Store;

fn main() {
    let path = std::env::var("OSTLEDB_DB").unwrap_or_else(|_| "ostle.db".into());
    let n: usize = std::env::var("OSTLEDB_QUERIES").ok().and_then(|s| s.parse().ok()).unwrap_or(20_000);
    let db = match Store::open_opts(&path, &OpenOptions { cache_bytes: 2 << 30, ..OpenOptions::default() }) {
        Ok(db) => db,
        Err(e) => {
            eprintln!("query bench skipped: {e}");
            return;
        }
    };
    let repeat: usize = std::env::var("OSTLEDB_REPEAT").ok().and_then(|s| s.parse().ok()).unwrap_or(1);
    let r = latency::measure_repeated(&db, n, 1, repeat).expect("measure");
    println!("{:<14} {:>8} {:>10} {:>10} {:>10} {:>10}", "call", "calls", "p50 us", "p99 us", "max us", "mean us");
    for (name, p) in [
        ("probe cold", &r.probe_cold),
        ("probe warm", &r.probe_warm),
        ("analyse cold", &r.analyse_cold),
        ("analyse warm", &r.analyse_warm),
    ] {
        println!(
            "{name:<14} {:>8} {:>10.2} {:>10.2} {:>10.1} {:>10.2}",
            p.calls,
            p.p50_ns / 1e3,
            p.p99_ns / 1e3,
            p.max_ns / 1e3,
            p.mean_ns / 1e3
        );
    }
    println!("cache: {} blocks, {:.1} MB", db.cache().blocks(), db.cache().bytes() as f64 / 1e6);
}
