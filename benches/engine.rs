//! Move generation, unmoves, the capture test and canonicalisation on 5x5, over a fixed
//! sample of (4,4) and (5,5) positions drawn from the position index.

use criterion::{Criterion, Throughput, black_box, criterion_group, criterion_main};
use ostledb::game::forbidden::{nontrivial_nodes, unmoves_with_node_index};
use ostledb::game::moves::{
    Removal, can_capture, can_capture_by_walking, move_index, moves, play, transform_move, unmoves,
};
use ostledb::game::node::{children, children_with, key_code, pred_node_index};
use ostledb::game::symmetry::canonical;
use ostledb::game::{Geometry, Phase, Position};
use ostledb::index::{GameNumbering, PhaseIndex, PlayerSets};
use ostledb::probe::moves::play_all;
use std::sync::Arc;

fn sample(phase: Phase, n: u64) -> Vec<Position> {
    let g = Geometry::standard();
    let idx = PhaseIndex::build(g, phase, Arc::new(PlayerSets::build(g, phase.player)));
    // A fixed multiplicative stride spreads the sample over the whole phase.
    (0..n).map(|i| idx.position_at(i.wrapping_mul(2_654_435_761) % idx.len())).collect()
}

fn bench(c: &mut Criterion) {
    let g = Geometry::standard();
    let positions = sample(Phase::new(5, 5), 4096);
    let mut grp = c.benchmark_group("engine");
    grp.throughput(Throughput::Elements(positions.len() as u64));
    grp.bench_function("movegen+play (per position)", |b| {
        b.iter(|| {
            let mut acc = 0u64;
            for p in &positions {
                for &m in moves(g, p).iter() {
                    acc = acc.wrapping_add(play(g, p, m).map_or(0, |r| r.child.code()));
                }
            }
            black_box(acc)
        })
    });
    // Every move played and kept, as `verify --deep`, `interesting` and `query` do before
    // looking the children up: beside the row above, what keeping them costs.
    grp.bench_function("play_all (per position)", |b| {
        b.iter(|| {
            let mut acc = 0u64;
            for p in &positions {
                for (_, r) in play_all(g, p).iter() {
                    acc = acc.wrapping_add(r.child.code());
                }
            }
            black_box(acc)
        })
    });
    grp.bench_function("movegen+play+canonical (per position)", |b| {
        b.iter(|| {
            let mut acc = 0u64;
            for p in &positions {
                for &m in moves(g, p).iter() {
                    if let Some(r) = play(g, p, m) {
                        acc = acc.wrapping_add(canonical(g, &r.child).0.code());
                    }
                }
            }
            black_box(acc)
        })
    });
    grp.bench_function("unmoves (per position)", |b| {
        b.iter(|| {
            let mut acc = 0u64;
            for p in &positions {
                unmoves(g, p, |u| acc = acc.wrapping_add(u.pred.code()));
            }
            black_box(acc)
        })
    });
    // The non-trivial node mask of every position, as `stats` and the export's lines
    // take it, against its definition (each unmove's node index, or-ed).
    grp.bench_function("nontrivial_nodes (per position)", |b| {
        b.iter(|| positions.iter().fold(0u32, |acc, p| acc ^ black_box(nontrivial_nodes(g, p))))
    });
    grp.bench_function("unmoves_with_node_index or-ed (per position)", |b| {
        b.iter(|| {
            positions.iter().fold(0u32, |acc, p| {
                let mut m = 0u32;
                unmoves_with_node_index(g, p, |_, j| m |= 1 << j);
                acc ^ black_box(m)
            })
        })
    });
    // What retrograde asks of every predecessor of a (4,4) position: can it capture?
    let preds: Vec<Position> = {
        let mut v = Vec::new();
        for p in sample(Phase::new(4, 4), 512) {
            unmoves(g, &p, |u| v.push(u.pred));
        }
        v
    };
    grp.bench_function("can_capture (per (4,4) predecessor, 4096)", |b| {
        b.iter(|| black_box(preds.iter().take(4096).filter(|p| can_capture(g, p)).count()))
    });
    grp.bench_function("can_capture_by_walking (per (4,4) predecessor, 4096)", |b| {
        b.iter(|| black_box(preds.iter().take(4096).filter(|p| can_capture_by_walking(g, p)).count()))
    });
    grp.bench_function("canonical (per position)", |b| {
        b.iter(|| {
            let mut acc = 0u64;
            for p in &positions {
                acc = acc.wrapping_add(canonical(g, p).0.code());
            }
            black_box(acc)
        })
    });
    // What the breadth-first search by positions does per expanded position: its
    // children as nodes (canonical, with the published node index), each located in the
    // game's global numbering.
    grp.bench_function("children (per position)", |b| {
        b.iter(|| {
            let mut acc = 0u64;
            for p in &positions {
                let (kids, n) = children(g, p);
                acc = acc.wrapping_add(kids[..n].iter().flatten().fold(0, |a, &k| a ^ k));
            }
            black_box(acc)
        })
    });
    // The published node index of every child that removes nothing, given as the
    // breadth-first search asks for it (the predecessor in the child's canonical frame,
    // the index of the move that restores it exactly when there is one).
    let asked: Vec<(Position, Position, Option<usize>)> = positions
        .iter()
        .flat_map(|p| moves(g, p).iter().map(move |&m| (p, m)).collect::<Vec<_>>())
        .filter_map(|(p, m)| {
            let r = play(g, p, m).filter(|r| r.removal == Removal::None)?;
            let (c, k) = canonical(g, &r.child);
            let undo_index = r.undo.map(|u| move_index(g, &c, transform_move(g, k, u)));
            Some((c, p.transformed(g, k), undo_index))
        })
        .collect();
    grp.throughput(Throughput::Elements(asked.len() as u64));
    grp.bench_function("pred_node_index (per child removing nothing)", |b| {
        b.iter(|| black_box(asked.iter().map(|(c, pred, u)| pred_node_index(g, c, pred, *u)).sum::<usize>()))
    });
    grp.throughput(Throughput::Elements(positions.len() as u64));
    let numbering = GameNumbering::build(g).expect("the 5x5 numbering");
    grp.bench_function("children+global_of (per position)", |b| {
        b.iter(|| {
            let mut acc = 0u64;
            for p in &positions {
                let (kids, n) = children(g, p);
                for &k in kids[..n].iter().flatten() {
                    let c = Position::from_code(key_code(k));
                    acc = acc.wrapping_add(numbering.global_of(&c).map_or(0, |(x, _)| x));
                }
            }
            black_box(acc)
        })
    });
    // The breadth-first search's own step per expanded position: every child as a node
    // named by its global number, with its canonical form (the step's marking is left
    // out: it is memory, not computation).
    grp.bench_function("children_with+locate (per position)", |b| {
        b.iter(|| {
            let mut acc = 0u64;
            for p in &positions {
                let (kids, n) = children_with(g, p, |x| {
                    let (global, _, found) = numbering.locate(x)?;
                    Some((found.canonical, found.sym, (global, found.canonical)))
                });
                for &((global, c), j) in kids[..n].iter().flatten() {
                    acc = acc.wrapping_add(global ^ c.code() ^ j as u64);
                }
            }
            black_box(acc)
        })
    });
    grp.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
