//! Position -> index and index -> position on the (4,4) phase (160,900,185 positions).

use criterion::{Criterion, Throughput, black_box, criterion_group, criterion_main};
use ostledb::game::{Geometry, Phase, Position};
use ostledb::index::{PhaseIndex, PlayerSets};
use std::sync::Arc;

fn bench(c: &mut Criterion) {
    let g = Geometry::standard();
    let phase = Phase::new(4, 4);
    let idx = PhaseIndex::build(g, phase, Arc::new(PlayerSets::build(g, 4)));
    let n = idx.len();
    let ids: Vec<u64> = (0..4096u64).map(|i| i.wrapping_mul(2_654_435_761) % n).collect();
    // Random symmetric images, so that lookups also canonicalise.
    let positions: Vec<Position> =
        ids.iter().enumerate().map(|(i, &id)| idx.position_at(id).transformed(g, i % 8)).collect();
    let mut grp = c.benchmark_group("index (4,4)");
    grp.throughput(Throughput::Elements(ids.len() as u64));
    grp.bench_function("index_of (position -> index)", |b| {
        b.iter(|| positions.iter().fold(0u64, |a, p| a.wrapping_add(idx.index_of(black_box(p)))))
    });
    grp.bench_function("position_at (index -> position)", |b| {
        b.iter(|| ids.iter().fold(0u64, |a, &i| a.wrapping_add(idx.position_at(black_box(i)).code())))
    });
    grp.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
