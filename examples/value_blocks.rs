//! The measurement behind the value-block layout (docs/measurements.md, "Value blocks"):
//! the (4,4) values of a database re-encoded as the value files encode them, with
//! immediate wins filled (0: stored as they are, 1: the previous position's base value,
//! 2: the block's most common base value), for every block size, level and dictionary
//! size asked for, on every EVERY-th block: bits per position, compression seconds
//! (scaled to the whole phase) and microseconds to decompress one block.
//!
//! ```text
//! cargo run --release --example value_blocks -- DB 4096,32768,65536 15,19 0,65536 16
//! ```
use ostledb::game::{Phase, moves::is_immediate_win};
use ostledb::record::Packed;
use ostledb::store::cache::encode_block;
use ostledb::store::values::load_file;
use rayon::prelude::*;
use std::time::Instant;
use zstd::zstd_safe::{CCtx, CDict, CParameter, DCtx, DDict};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let dir = std::path::Path::new(&args[1]);
    let db = ostledb::store::Store::open(dir).unwrap();
    let geom = db.geometry().clone();
    let phase = Phase::new(4, 4);
    let vf = db.values(phase).unwrap();
    let pidx = db.index().phase(phase).unwrap();
    let t = Instant::now();
    let recs = load_file(vf).unwrap();
    let recs: Vec<u64> = recs.raw().to_vec();
    eprintln!("loaded {} in {:?}", recs.len(), t.elapsed());
    let t = Instant::now();
    let dc: Vec<bool> =
        (0..recs.len() as u64).into_par_iter().map(|i| is_immediate_win(&geom, &pidx.position_at(i))).collect();
    let ndc = dc.iter().filter(|&&b| b).count();
    eprintln!(
        "dont-care {} of {} ({:.1}%) in {:?}",
        ndc,
        recs.len(),
        100.0 * ndc as f64 / recs.len() as f64,
        t.elapsed()
    );
    let ks: Vec<usize> = args[2].split(',').map(|s| s.parse().unwrap()).collect();
    let levels: Vec<i32> = args[3].split(',').map(|s| s.parse().unwrap()).collect();
    let dicts: Vec<usize> = args[4].split(',').map(|s| s.parse().unwrap()).collect();
    let every: usize = args[5].parse().unwrap();
    for &k in &ks {
        for fill in [0u8, 1, 2] {
            // blocks sampled: every `every`-th block
            let nblocks = recs.len().div_ceil(k);
            let planes: Vec<Vec<u8>> = (0..nblocks)
                .step_by(every)
                .collect::<Vec<_>>()
                .par_iter()
                .map(|&b| {
                    let lo = b * k;
                    let hi = ((b + 1) * k).min(recs.len());
                    let mut c: Vec<u64> = recs[lo..hi].to_vec();
                    if fill == 1 {
                        // base of the previous kept record, no special
                        let first = (lo..hi).find(|&i| !dc[i]).map(|i| recs[i] & 0xffff).unwrap_or(0);
                        let mut last = first;
                        for (j, i) in (lo..hi).enumerate() {
                            if dc[i] { c[j] = last } else { last = c[j] & 0xffff }
                        }
                    } else if fill == 2 {
                        let mut counts = std::collections::HashMap::new();
                        for i in lo..hi {
                            if !dc[i] {
                                *counts.entry(Packed(recs[i]).elided().0 & 0xffff).or_insert(0) += 1;
                            }
                        }
                        let common = counts.into_iter().max_by_key(|&(_, c)| c).map(|(v, _)| v).unwrap_or(0);
                        for (j, i) in (lo..hi).enumerate() {
                            if dc[i] {
                                c[j] = common
                            }
                        }
                    }
                    let c: Vec<u64> = c.iter().map(|&r| Packed(r).elided().0).collect();
                    encode_block(&c)
                })
                .collect();
            let raw: usize = planes.iter().map(|p| p.len()).sum();
            for &dsize in &dicts {
                let t = Instant::now();
                let dict = if dsize > 0 {
                    let samples: Vec<&Vec<u8>> = planes.iter().step_by((planes.len() / 2000).max(1)).collect();
                    zstd::dict::from_samples(&samples, dsize).unwrap()
                } else {
                    Vec::new()
                };
                let train = t.elapsed();
                for &level in &levels {
                    let cd = if dict.is_empty() { None } else { Some(CDict::create(&dict, level)) };
                    let t = Instant::now();
                    let frames: Vec<Vec<u8>> = planes
                        .par_iter()
                        .map_init(
                            || {
                                let mut c = CCtx::create();
                                c.set_parameter(CParameter::CompressionLevel(level)).unwrap();
                                c.set_parameter(CParameter::DictIdFlag(false)).unwrap();
                                c.set_parameter(CParameter::ContentSizeFlag(false)).unwrap();
                                c
                            },
                            |c, p| {
                                let mut out = Vec::with_capacity(p.len() + 64);
                                if let Some(cd) = &cd {
                                    c.ref_cdict(cd).unwrap();
                                } else {
                                    c.set_parameter(CParameter::CompressionLevel(level)).unwrap();
                                }
                                c.compress2(&mut out, p).unwrap();
                                out
                            },
                        )
                        .collect();
                    let ct = t.elapsed();
                    let comp: usize = frames.iter().map(|f| f.len()).sum();
                    // decode timing, single thread
                    let ddict = DDict::create(&dict);
                    let mut d = DCtx::create();
                    let mut buf = vec![0u8; 5 * k];
                    let t = Instant::now();
                    for (f, p) in frames.iter().zip(&planes) {
                        buf.clear();
                        if dict.is_empty() {
                            d.decompress(&mut buf, f).unwrap();
                        } else {
                            d.decompress_using_ddict(&mut buf, f, &ddict).unwrap();
                        }
                        assert_eq!(buf.len(), p.len());
                    }
                    let dt = t.elapsed();
                    let scale = every as f64;
                    println!(
                        "K={k:6} fill={fill} dict={dsize:6} level={level:2} bits/pos={:.4} est_total={:.0} (+dict {}) comp_s_est={:.1} train={:.1}s dec_us/block={:.2} raw/block={}",
                        comp as f64 * 8.0 / (planes.len() as f64 * k as f64),
                        comp as f64 * scale,
                        dict.len(),
                        ct.as_secs_f64() * scale,
                        train.as_secs_f64(),
                        dt.as_secs_f64() * 1e6 / frames.len() as f64,
                        raw / planes.len()
                    );
                }
            }
        }
    }
}
