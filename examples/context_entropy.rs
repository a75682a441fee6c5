//! The measurement behind value file v4's contexts (docs/measurements.md, "Value blocks"):
//! the empirical conditional entropy, in bits per position, of a phase's elided base
//! values, special moves and special values under candidate contexts (neighbours at
//! distance 1, 2, `H` = the squares a hole can take, and agreements among them), on
//! every EVERY-th run of 65,536 records. A lower bound for a static model of each
//! context (the model's own size is not counted; the pairs column says how large it is).
//!
//! ```text
//! cargo run --release --example context_entropy -- DB 5,5 64
//! ```
#[path = "common/sampled_runs.rs"]
mod common;
use common::{RUN, sampled_runs};
use ostledb::game::Phase;
use ostledb::record::Packed;
use std::collections::HashMap;

fn sym(code: u16) -> u32 {
    match code {
        0 | 1 => code as u32,
        c => (c / 2 + 1) as u32,
    }
}

fn entropy(counts: &HashMap<u64, u64>, n: u64) -> (f64, usize) {
    // counts keyed by (ctx << 16 | sym); conditional entropy H(sym | ctx)
    let mut ctx: HashMap<u64, u64> = HashMap::new();
    for (&k, &c) in counts {
        *ctx.entry(k >> 16).or_default() += c;
    }
    let mut bits = 0.0;
    for (&k, &c) in counts {
        let t = ctx[&(k >> 16)];
        bits -= c as f64 * (c as f64 / t as f64).log2();
    }
    (bits / n as f64, counts.len())
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let dir = std::path::Path::new(&args[1]);
    let (a, b) = args[2].split_once(',').unwrap();
    let (a, b): (u8, u8) = (a.parse().unwrap(), b.parse().unwrap());
    let phase = Phase::new(a as u32, b as u32);
    let every: usize = args[3].parse().unwrap();
    let h: usize = 25 - a as usize - b as usize;
    let db = ostledb::store::Store::open(dir).unwrap();
    let vf = db.values(phase).unwrap();
    let runs = (vf.len() as usize).div_ceil(RUN);
    let starts: Vec<usize> = (0..runs).step_by(every).map(|r| r * RUN).collect();
    let sampled: Vec<Vec<u64>> = sampled_runs(vf, every);
    let n: u64 = sampled.iter().map(|r| r.len() as u64).sum();
    let names = [
        "none",
        "i-1",
        "i-1,i-H",
        "i-1,i-2,i-H",
        "i-1,i-H,i-H-1",
        "i-1,i-H,i-2H",
        "s:base",
        "s:base,s-1",
        "s:base,s-1,s-H",
        "sv:base,s",
        "sv:base",
        "i-1,i-H,first",
        "i-1,i-H,rank",
        "i-1,i-H,first,i-2",
        "i-1,i-H,alike",
        "i-1,i-H,i-2 bucket8",
        "i-1,i-H,alike,copying",
        "i-1,i-H,alike,copying2",
        "..copying2,ahead",
        "..copying2,ahead,i-H+1",
        "S|base,s-1,s-H",
        "S|base,last,s-H",
        "S|last,s-H",
        "S|base,last,s-H,s-H+1",
    ];
    let mut counts: Vec<HashMap<u64, u64>> = vec![HashMap::new(); names.len()];
    let mut nspec = 0u64;
    for (run, &start) in sampled.iter().zip(&starts) {
        let mut last = 32u64;
        let bs: Vec<u32> = run.iter().map(|&r| sym(Packed(r).base())).collect();
        let ss: Vec<u32> = run.iter().map(|&r| Packed(r).special_move()).collect();
        let g = |i: usize, d: usize, v: &Vec<u32>| if i >= d { v[i - d] as u64 } else { 511 };
        for i in 0..run.len() {
            let x = bs[i] as u64;
            let c = [
                0u64,
                g(i, 1, &bs),
                g(i, 1, &bs) << 9 | g(i, h, &bs),
                g(i, 1, &bs) << 18 | g(i, 2, &bs) << 9 | g(i, h, &bs),
                g(i, 1, &bs) << 18 | g(i, h, &bs) << 9 | g(i, h + 1, &bs),
                g(i, 1, &bs) << 18 | g(i, h, &bs) << 9 | g(i, 2 * h, &bs),
            ];
            for (k, &cx) in c.iter().enumerate() {
                *counts[k].entry(cx << 16 | x).or_default() += 1;
            }
            let rank = ((start + i) % h) as u64;
            let first = (rank == 0) as u64;
            *counts[11].entry((c[2] << 1 | first) << 16 | x).or_default() += 1;
            *counts[12].entry((c[2] << 5 | rank) << 16 | x).or_default() += 1;
            *counts[13].entry((c[3] << 1 | first) << 16 | x).or_default() += 1;
            let alike = (i >= 2 && bs[i - 2] == bs[i - 1]) as u64;
            *counts[14].entry((c[2] << 1 | alike) << 16 | x).or_default() += 1;
            let p2 = if i >= 2 { (bs[i - 2] as u64).min(7) } else { 8 };
            *counts[15].entry((c[2] << 4 | p2) << 16 | x).or_default() += 1;
            let copying = (i > h && bs[i - 1] == bs[i - 1 - h]) as u64;
            *counts[16].entry((c[2] << 2 | alike << 1 | copying) << 16 | x).or_default() += 1;
            let copying2 = (i > h + 1 && bs[i - 2] == bs[i - 2 - h]) as u64;
            *counts[17].entry((c[2] << 3 | alike << 2 | copying << 1 | copying2) << 16 | x).or_default() += 1;
            let ahead = (i >= h && bs[i + 1 - h] == bs[i - h]) as u64;
            *counts[18]
                .entry((c[2] << 4 | alike << 3 | copying << 2 | copying2 << 1 | ahead) << 16 | x)
                .or_default() += 1;
            let nx = if i >= h { bs[i + 1 - h] as u64 } else { 511 };
            *counts[19]
                .entry(((c[2] << 4 | alike << 3 | copying << 2 | copying2 << 1 | ahead) << 9 | nx) << 16 | x)
                .or_default() += 1;
            let s = ss[i] as u64;
            *counts[6].entry(x << 16 | s).or_default() += 1;
            *counts[7].entry((x << 9 | g(i, 1, &ss)) << 16 | s).or_default() += 1;
            *counts[8].entry((x << 18 | g(i, 1, &ss) << 9 | g(i, h, &ss)) << 16 | s).or_default() += 1;
            if s != 0 {
                let sh = g(i, h, &ss);
                *counts[20].entry(((x << 9 | g(i, 1, &ss)) << 9 | sh) << 16 | s).or_default() += 1;
                *counts[21].entry(((x << 9 | last) << 9 | sh) << 16 | s).or_default() += 1;
                *counts[22].entry((last << 9 | sh) << 16 | s).or_default() += 1;
                let sh1 = if i + 1 >= h { ss[i + 1 - h] as u64 } else { 511 };
                *counts[23].entry((((x << 9 | last) << 9 | sh) << 9 | sh1) << 16 | s).or_default() += 1;
                last = s;
                nspec += 1;
                let sv = sym(Packed(run[i]).special()) as u64;
                *counts[9].entry((x << 9 | s) << 16 | sv).or_default() += 1;
                *counts[10].entry(x << 16 | sv).or_default() += 1;
            }
        }
    }
    println!("{phase:?} H={h} n={n} specials={nspec}");
    for (k, name) in names.iter().enumerate() {
        let (e, pairs) = entropy(&counts[k], n);
        println!("{name:16} {e:.4} bits/position  ({pairs} pairs)");
    }
}
