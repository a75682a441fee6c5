//! Key -> index lookups per compiled backend, in the three access patterns of
//! `ostledb bench` (uniformly random keys, the children of random positions, keys in index
//! order), one `index_of` at a time and one `index_of_batch` per iteration: the (4,4)
//! phase of the standard board (160,900,185 keys, a 1.29 GB keys file), and the (4,4)
//! phase of the 4x4 board (a few MB) where the `sled` baseline is also built.
//!
//! The keys files are written into a scratch directory under the system temp directory,
//! removed at the end.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use criterion::{BenchmarkId, Criterion, Throughput, black_box, criterion_group, criterion_main};
use ostledb::game::{Geometry, Phase};
use ostledb::index::{PhaseIndex, PlayerSets};
use ostledb::store::keys::workload::{self, Pattern};
use ostledb::store::keys::{self, Backend};

/// Lookups per iteration.
const PROBES: u64 = 4096;

struct Scratch(PathBuf);

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn bench_phase(c: &mut Criterion, name: &str, g: &Geometry, phase: Phase, backends: &[Backend]) {
    let dir = Scratch(std::env::temp_dir().join(format!("ostledb-bench-keys-{}-{name}", std::process::id())));
    std::fs::create_dir_all(&dir.0).expect("scratch directory");
    let index = PhaseIndex::build(g, phase, Arc::new(PlayerSets::build(g, phase.player)));
    let sets: Vec<(Pattern, Vec<u64>)> =
        Pattern::ALL.into_iter().map(|p| (p, workload::codes(g, &index, &index, p, PROBES as usize, 1))).collect();
    let mut grp = c.benchmark_group(format!("keys {name}"));
    grp.throughput(Throughput::Elements(PROBES));
    grp.sample_size(20);
    for &b in backends {
        let t = Instant::now();
        if !keys::present(b, Path::new(&dir.0), phase) || b == Backend::Sled {
            keys::build(b, &dir.0, &index).expect("build");
        }
        let built = t.elapsed();
        let t = Instant::now();
        let k = keys::open(b, &dir.0, &index).expect("open");
        eprintln!(
            "{name} {b}: {} keys, build {:.1} s, open {:.2} s, {} key bytes",
            index.len(),
            built.as_secs_f64(),
            t.elapsed().as_secs_f64(),
            k.key_bytes()
        );
        for (pattern, codes) in &sets {
            grp.bench_with_input(BenchmarkId::new(format!("{} single", pattern.name()), b), codes, |bch, codes| {
                bch.iter(|| {
                    codes
                        .iter()
                        .fold(0u64, |a, &c| a.wrapping_add(k.index_of(black_box(c)).ok().flatten().unwrap_or(0)))
                })
            });
            let mut out = vec![None; codes.len()];
            grp.bench_with_input(BenchmarkId::new(format!("{} batched", pattern.name()), b), codes, |bch, codes| {
                bch.iter(|| {
                    k.index_of_batch(black_box(codes), &mut out).expect("lookup");
                    out.iter().fold(0u64, |a, o| a.wrapping_add(o.unwrap_or(0)))
                })
            });
        }
    }
    grp.finish();
}

fn bench(c: &mut Criterion) {
    let big: Vec<Backend> = Backend::available().into_iter().filter(|&b| b != Backend::Sled).collect();
    bench_phase(c, "5x5 (4,4)", Geometry::standard(), Phase::new(4, 4), &big);
    let g = Geometry::new(4, 4).expect("4x4 board");
    bench_phase(c, "4x4 (4,4)", &g, Phase::new(4, 4), &Backend::available());
}

criterion_group!(benches, bench);
criterion_main!(benches);
