//! The measurement behind value file v4 (docs/measurements.md, "Value blocks"): runs of
//! 65,536 records of one phase of a database (every EVERY-th run), re-encoded as value
//! file v3 does (three planes of 16-bit codes and special moves) and as one byte per
//! position (a symbol per base value code, a bitmap of positions with a special move, then
//! their moves and special symbols), at each block size and zstd level asked for: bits
//! per position microseconds to decompress one block and nanoseconds per position to compress
//! (one thread).
//!
//! ```text
//! cargo run --release --example value_layouts -- DB 5,5 8192,16384,32768,65536 15,19 64
//! ```
#[path = "common/sampled_runs.rs"]
mod common;
use common::{RUN, sampled_runs};
use ostledb::game::Phase;
use ostledb::record::Packed;
use ostledb::store::cache::encode_block;
use std::time::Instant;
use zstd::zstd_safe::{CCtx, CParameter, DCtx};

/// One byte for an elided value code: draw 0, loss 1, `Win(d)` `d + 1`.
fn sym(code: u16) -> u8 {
    match code {
        0 | 1 => code as u8,
        c => {
            assert!(c % 2 == 0 && c / 2 < 255, "code {c}");
            (c / 2 + 1) as u8
        }
    }
}

fn bytes_block(records: &[u64]) -> Vec<u8> {
    let m = records.len();
    let mut out = vec![0u8; m + m.div_ceil(8)];
    let mut moves = Vec::new();
    let mut specials = Vec::new();
    for (i, &r) in records.iter().enumerate() {
        let r = Packed(r);
        out[i] = sym(r.base());
        if r.special_move() != 0 {
            out[m + i / 8] |= 1 << (i % 8);
            moves.push(r.special_move() as u8);
            specials.push(sym(r.special()));
        }
    }
    out.extend_from_slice(&moves);
    out.extend_from_slice(&specials);
    out
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let dir = std::path::Path::new(&args[1]);
    let (a, b) = args[2].split_once(',').unwrap();
    let phase = Phase::new(a.parse().unwrap(), b.parse().unwrap());
    let ks: Vec<usize> = args[3].split(',').map(|s| s.parse().unwrap()).collect();
    let levels: Vec<i32> = args[4].split(',').map(|s| s.parse().unwrap()).collect();
    let every: usize = args[5].parse().unwrap();
    // Optional zstd parameter sets tried at each level: "mml:slog:tlen" lists, 0 = the
    // level's own.
    let tunings: Vec<[u32; 3]> = args
        .get(6)
        .map(|a| {
            a.split(',')
                .map(|t| {
                    let v: Vec<u32> = t.split(':').map(|x| x.parse().unwrap()).collect();
                    [v[0], v[1], v[2]]
                })
                .collect()
        })
        .unwrap_or_else(|| vec![[0, 0, 0]]);
    let db = ostledb::store::Store::open(dir).unwrap();
    let vf = db.values(phase).unwrap();
    let runs = (vf.len() as usize).div_ceil(RUN);
    let t = Instant::now();
    let sampled: Vec<Vec<u64>> = sampled_runs(vf, every);
    let n: usize = sampled.iter().map(|r| r.len()).sum();
    let specials = sampled.iter().flatten().filter(|&&r| Packed(r).special_move() != 0).count();
    eprintln!(
        "{phase:?}: {} runs of {} sampled, {n} positions, {:.2}% with a special move, loaded in {:?}",
        sampled.len(),
        runs,
        100.0 * specials as f64 / n as f64,
        t.elapsed()
    );
    println!("layout  block  level  bits/pos  decoded B/pos  decode us/block  us/MB decoded  compress ns/pos");
    for &k in &ks {
        for layout in ["planes", "bytes"] {
            let raws: Vec<Vec<u8>> = sampled
                .iter()
                .flat_map(|run| run.chunks(k))
                .map(|c| if layout == "planes" { encode_block(c) } else { bytes_block(c) })
                .collect();
            let raw_bytes: usize = raws.iter().map(|r| r.len()).sum();
            for (&level, &[mml, slog, tlen]) in levels.iter().flat_map(|l| tunings.iter().map(move |t| (l, t))) {
                let t = Instant::now();
                let mut cctx = CCtx::create();
                let frames: Vec<Vec<u8>> = raws
                    .iter()
                    .map(|r| {
                        cctx.reset(zstd::zstd_safe::ResetDirective::SessionAndParameters).unwrap();
                        cctx.set_parameter(CParameter::CompressionLevel(level)).unwrap();
                        cctx.set_parameter(CParameter::ContentSizeFlag(true)).unwrap();
                        if mml != 0 {
                            cctx.set_parameter(CParameter::MinMatch(mml)).unwrap();
                        }
                        if slog != 0 {
                            cctx.set_parameter(CParameter::SearchLog(slog)).unwrap();
                        }
                        if tlen != 0 {
                            cctx.set_parameter(CParameter::TargetLength(tlen)).unwrap();
                        }
                        let mut out = Vec::with_capacity(zstd::zstd_safe::compress_bound(r.len()));
                        cctx.compress2(&mut out, r).unwrap();
                        out
                    })
                    .collect();
                let cus = t.elapsed().as_secs_f64() * 1e6;
                let bytes: usize = frames.iter().map(|f| f.len()).sum();
                let mut dctx = DCtx::create();
                let mut out = vec![0u8; raws.iter().map(|r| r.len()).max().unwrap()];
                let t = Instant::now();
                for (f, r) in frames.iter().zip(&raws) {
                    let got = dctx.decompress(&mut out[..], f).unwrap();
                    assert_eq!(got, r.len());
                }
                let us = t.elapsed().as_secs_f64() * 1e6;
                println!(
                    "{layout:7} {k:6} {:>6} {:9.4} {:14.3} {:16.2} {:14.1} {:16.1}",
                    format!("{level}/{mml}:{slog}:{tlen}"),
                    8.0 * bytes as f64 / n as f64,
                    raw_bytes as f64 / n as f64,
                    us / frames.len() as f64,
                    us / (raw_bytes as f64 / 1e6),
                    cus * 1e3 / n as f64
                );
            }
        }
    }
}
