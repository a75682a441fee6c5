//! How fast the coded blocks of value files v4 and v5 decode, apart from everything else
//! a query does: N random blocks (v5: streams) of a phase, each decoded up to a random
//! position (as a cold read does). With `COLD=1` a 64 MB buffer is read before each
//! block, so the model's tables come from memory, as on the first queries of a process.
//! Besides the wall time it prints the thread's time on a core (Linux's
//! `/proc/thread-self/schedstat`), which holds still while other work shares the machine.
//!
//! ```text
//! cargo run --release --example decode_speed -- DB 5,4 20000
//! ```
use ostledb::game::Phase;
use std::time::Instant;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let db = ostledb::store::Store::open(&args[1]).unwrap();
    let (a, b) = args[2].split_once(',').unwrap();
    let phase = Phase::new(a.parse().unwrap(), b.parse().unwrap());
    let n: usize = args[3].parse().unwrap();
    let cold = std::env::var_os("COLD").is_some();
    let vf = db.values(phase).unwrap();
    let model = vf.model().expect("a v4 or v5 value file (pack --value-format 4 or 5)");
    let (per, lean) = (vf.block_positions() as usize, vf.lean_streams());
    // A fixed pseudo-random sequence (xorshift), so that runs compare.
    let mut r = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = || {
        r ^= r << 13;
        r ^= r >> 7;
        r ^= r << 17;
        r
    };
    // Whole blocks only: the phase's last may be short.
    let blocks: Vec<(Vec<u8>, usize)> = (0..n)
        .map(|_| {
            let b = (next() % (vf.blocks() as u64 - 1)) as u32;
            let bytes = vf.coded_stream(b).expect("a coded file").unwrap();
            (bytes, (next() % per as u64) as usize + 1)
        })
        .collect();
    let positions: usize = blocks.iter().map(|b| b.1).sum();
    for (kind, t) in ["base values", "special moves", "special values"].iter().zip(model.shape()) {
        println!("{phase} model, {kind}: {} contexts, {} slots, {} bytes of tables", t.contexts, t.slots, t.bytes);
    }
    let junk = vec![1u8; 64 << 20];
    let (mut sink, mut spent) = (0u64, 0f64);
    let on_core = on_core_ns();
    for (bytes, end) in &blocks {
        if cold {
            sink += junk.iter().step_by(64).map(|&x| x as u64).sum::<u64>();
        }
        let t = Instant::now();
        let planes = if lean { model.decode_lean(bytes, per, *end) } else { model.decode_prefix(bytes, per, *end) };
        spent += t.elapsed().as_secs_f64();
        sink += planes.unwrap().len() as u64;
    }
    let on_core = on_core_ns().zip(on_core).map(|(b, a)| (b - a) as f64);
    println!(
        "{phase}: {:.1} ns/position, {:.2} us/block{} ({positions} positions in {n} blocks of {per}{})",
        spent * 1e9 / positions as f64,
        spent * 1e6 / n as f64,
        match on_core {
            Some(ns) if !cold => format!("; on a core {:.1} ns/position", ns / positions as f64),
            _ => String::new(),
        },
        if cold { ", caches flushed before each" } else { "" }
    );
    std::hint::black_box(sink);
}

/// Nanoseconds this thread has spent on a core (Linux), `None` elsewhere.
fn on_core_ns() -> Option<u64> {
    let s = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    s.split_whitespace().next()?.parse().ok()
}
