// How a27f678 (the reader of issue 16 "today") is measured the way `bench --cold` measures:
// copy this file to examples/cold_a27.rs in a checkout of a27f678 and run
//   cargo run --release --example cold_a27 -- DB 300 2 16 1   (positions a phase, rounds, cache MB, seed)
// (docs/measurements.md, "Against v2, measured both ways"). It does not build in this tree.
//! Stop 38 (issue 16): `bench --cold`'s measurement, run by a27f678's reader (which has
//! no cold mode): analyse on N random positions (random symmetric images) of every phase,
//! the same positions as `bench --cold` with the same seed, R rounds, one call at a time;
//! the block cache is CACHE_MB (a few calls' blocks, so that a call rarely finds a block
//! an earlier one decoded: a27f678 cannot empty it). A warm-up of 2,000 other random
//! positions a phase first builds the index's lazy tables.
use ostledb::store::{Database, OpenOptions};
use std::time::Instant;

fn splitmix(x: &mut u64) -> u64 {
    *x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    let mut z = *x;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

fn pct(mut ns: Vec<f64>) -> String {
    ns.sort_by(f64::total_cmp);
    let at = |q: f64| ns[((ns.len() as f64 - 1.0) * q).round() as usize] / 1000.0;
    format!(
        "{:>7} {:>9.1} {:>9.1} {:>10.1} {:>9.1}",
        ns.len(),
        at(0.5),
        at(0.99),
        ns[ns.len() - 1] / 1000.0,
        ns.iter().sum::<f64>() / ns.len() as f64 / 1000.0
    )
}

fn main() {
    let a: Vec<String> = std::env::args().collect();
    let (n, rounds, cache_mb, seed): (usize, usize, usize, u64) =
        (a[2].parse().unwrap(), a[3].parse().unwrap(), a[4].parse().unwrap(), a[5].parse().unwrap());
    let db = Database::open_opts(&a[1], &OpenOptions { backend: None, cache_bytes: cache_mb << 20 }).unwrap();
    let g = db.geometry().clone();
    let mut warm = 0x5eed_u64;
    for _ in 0..2000 {
        for p in db.index().phases() {
            let b = p.position_at(splitmix(&mut warm) % p.len()).transformed(&g, (splitmix(&mut warm) % 8) as usize);
            db.analyse(&b, None).unwrap();
        }
    }
    let mut rng = seed;
    let mut all = Vec::new();
    println!("phase     calls    p50 us    p99 us     max us   mean us");
    for p in db.index().phases() {
        let boards: Vec<_> = (0..n)
            .map(|_| p.position_at(splitmix(&mut rng) % p.len()).transformed(&g, (splitmix(&mut rng) % 8) as usize))
            .collect();
        let mut ns = Vec::new();
        for _ in 0..rounds {
            for b in &boards {
                let t = Instant::now();
                std::hint::black_box(db.analyse(b, None).unwrap());
                ns.push(t.elapsed().as_nanos() as f64);
            }
        }
        all.extend_from_slice(&ns);
        println!("{:<7} {}", p.phase().to_string(), pct(ns));
    }
    println!("{:<7} {}", "all", pct(all));
}
