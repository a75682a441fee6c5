//! The measurement behind the first-depth file's block size and level (docs/measurements.md,
//! "The whole BFS by positions"): the raw first depths `ostledb bfs --by-positions
//! --first-depths-out FILE` wrote (one byte per position), cut into blocks of each size
//! asked for (every EVERY-th block), compressed at each zstd level: bits per position
//! over the sample, microseconds to decompress one block, and the entropy of the depths
//! (the bound of any coder that sees one position at a time).
//!
//! ```text
//! cargo run --release --example first_depth_blocks -- FILE 4096,16384,65536 3,9,19 16
//! ```
use std::io::{Read, Seek, SeekFrom};
use std::time::Instant;

fn list<T: std::str::FromStr>(s: &str) -> Vec<T> {
    s.split(',').map(|x| x.parse().ok().expect("a comma-separated list of numbers")).collect()
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() != 5 {
        eprintln!("usage: first_depth_blocks FILE SIZES LEVELS EVERY");
        std::process::exit(2);
    }
    let mut f = std::fs::File::open(&args[1]).expect("the raw first-depth file");
    let len = f.metadata().expect("its length").len();
    let sizes: Vec<usize> = list(&args[2]);
    let levels: Vec<i32> = list(&args[3]);
    let every: u64 = args[4].parse().expect("EVERY");
    // Entropy over the whole file, by one pass.
    let mut counts = [0u64; 256];
    let mut buf = vec![0u8; 1 << 22];
    loop {
        let n = f.read(&mut buf).expect("read");
        if n == 0 {
            break;
        }
        buf[..n].iter().for_each(|&d| counts[d as usize] += 1);
    }
    let h: f64 = counts
        .iter()
        .filter(|&&c| c > 0)
        .map(|&c| {
            let p = c as f64 / len as f64;
            -p * p.log2()
        })
        .sum();
    println!("positions {len}, entropy {h:.3} bits/position ({:.0} bytes)", h * len as f64 / 8.0);
    for &size in &sizes {
        let blocks = len.div_ceil(size as u64);
        let mut sample = Vec::new();
        for b in (0..blocks).step_by(every as usize) {
            let start = b * size as u64;
            let n = (len - start).min(size as u64) as usize;
            let mut block = vec![0u8; n];
            f.seek(SeekFrom::Start(start)).expect("seek");
            f.read_exact(&mut block).expect("read");
            sample.push(block);
        }
        let positions: usize = sample.iter().map(|b| b.len()).sum();
        for &level in &levels {
            let t = Instant::now();
            let frames: Vec<Vec<u8>> =
                sample.iter().map(|b| zstd::bulk::compress(b, level).expect("compress")).collect();
            let ct = t.elapsed().as_secs_f64();
            let bytes: usize = frames.iter().map(|z| z.len()).sum();
            let t = Instant::now();
            for (z, b) in frames.iter().zip(&sample) {
                let d = zstd::bulk::decompress(z, size).expect("decompress");
                assert_eq!(&d, b);
            }
            let dt = t.elapsed().as_secs_f64();
            println!(
                "block {size:>6} level {level:>2}: {:.3} bits/position (whole file ~{:.0} bytes), decode {:.1} us/block, compress {:.1} ns/position",
                8.0 * bytes as f64 / positions as f64,
                bytes as f64 / positions as f64 * len as f64,
                dt * 1e6 / frames.len() as f64,
                ct * 1e9 / positions as f64
            );
        }
    }
}
