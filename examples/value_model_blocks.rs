//! The measurement behind value file v4 (docs/measurements.md, "Value blocks"): runs of
//! 65,536 records of one phase of a database (every EVERY-th run, immediate wins filled,
//! losses elided), coded by a static context model trained on them (`store::value_model`)
//! in blocks of each size asked for, against zstd blocks as value file v3 writes them.
//! Prints bits per position (model and 2 index bytes per block included), microseconds
//! to decode one block, and nanoseconds per position to code (one thread).
//!
//! ```text
//! cargo run --release --example value_model_blocks -- DB 5,5 64 512,1024,2048,4096
//! ```
#[path = "common/sampled_runs.rs"]
mod common;
use common::{RUN, sampled_runs};
use ostledb::game::Phase;
use ostledb::store::cache::encode_block;
use ostledb::store::value_model::{Counts, Model};
use rayon::prelude::*;
use std::time::Instant;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let dir = std::path::Path::new(&args[1]);
    let (a, b) = args[2].split_once(',').unwrap();
    let phase = Phase::new(a.parse().unwrap(), b.parse().unwrap());
    let every: usize = args[3].parse().unwrap();
    let ks: Vec<usize> = args[4].split(',').map(|s| s.parse().unwrap()).collect();
    let db = ostledb::store::Store::open(dir).unwrap();
    let side = db.meta().side as usize;
    let d = side * side - (phase.player + phase.opponent) as usize;
    let vf = db.values(phase).unwrap();
    let runs = (vf.len() as usize).div_ceil(RUN);
    let sampled: Vec<Vec<u64>> = sampled_runs(vf, every);
    let n: usize = sampled.iter().map(|r| r.len()).sum();
    eprintln!("{phase}: {} of {runs} runs, {n} positions, d = {d}", sampled.len());
    // zstd as v3 writes it, for reference.
    let reference: &[(usize, i32)] =
        if std::env::var_os("NO_ZSTD").is_some() { &[] } else { &[(32768, 15), (65536, 19)] };
    for &(k, level) in reference {
        let bytes: usize = sampled
            .par_iter()
            .map(|run| {
                let mut z = zstd::bulk::Compressor::new(level).unwrap();
                z.set_parameter(zstd::zstd_safe::CParameter::MinMatch(5)).unwrap();
                run.chunks(k).map(|c| z.compress(&encode_block(c)).unwrap().len() + 24).sum::<usize>()
            })
            .sum();
        println!("zstd    {k:6} level {level}: {:.4} bits/position", 8.0 * bytes as f64 / n as f64);
    }
    println!("model   block  bits/pos  model bytes  decode us/block  code ns/pos");
    for &k in &ks {
        let counts = sampled
            .par_iter()
            .fold(
                || Counts::new(d),
                |mut c, run| {
                    for b in run.chunks(k) {
                        c.add_block(b).unwrap();
                    }
                    c
                },
            )
            .reduce_with(|mut a, b| {
                a.merge(&b);
                a
            })
            .unwrap();
        let model = Model::from_counts(&counts);
        let mbytes = model.to_bytes().len();
        let t = Instant::now();
        let blocks: Vec<(Vec<u8>, &[u64])> =
            sampled.iter().flat_map(|run| run.chunks(k)).map(|b| (model.encode(b), b)).collect();
        let code_ns = t.elapsed().as_secs_f64() * 1e9 / n as f64;
        let bytes: usize = blocks.iter().map(|b| b.0.len() + 2).sum::<usize>() + mbytes;
        // The fastest of ROUNDS passes over every block (the least disturbed by other work).
        let rounds: usize = std::env::var("ROUNDS").ok().and_then(|r| r.parse().ok()).unwrap_or(1);
        let mut us = f64::MAX;
        for _ in 0..rounds {
            let t = Instant::now();
            for (coded, b) in &blocks {
                std::hint::black_box(model.decode_planes(coded, b.len()).unwrap());
            }
            us = us.min(t.elapsed().as_secs_f64() * 1e6 / blocks.len() as f64);
        }
        // Check a few.
        for (coded, b) in blocks.iter().step_by(97) {
            assert_eq!(model.decode_planes(coded, b.len()).unwrap(), encode_block(b));
        }
        let parts = sampled.iter().flat_map(|run| run.chunks(k)).fold([0f64; 3], |mut a, b| {
            let c = model.cost(b);
            (0..3).for_each(|x| a[x] += c[x]);
            a
        });
        println!(
            "model   {k:6} {:9.4} {mbytes:12} {us:16.2} {code_ns:12.1}   base {:.4} move {:.4} special {:.4} (ideal bits/position)",
            8.0 * bytes as f64 / n as f64,
            parts[0] / n as f64,
            parts[1] / n as f64,
            parts[2] / n as f64
        );
    }
}
