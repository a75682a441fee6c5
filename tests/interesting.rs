//! `interesting`: the parallel sweep over loaded phase records against the naive count
//! through `Store::probe` and `Store::moves`, one position at a time, on every
//! phase of a small board.

use ostledb::analysis::interesting::{Class, naive_phase, sweep_phase};
use ostledb::game::Geometry;
use ostledb::progress::Silent;
use ostledb::solve::SolveOptions;
use ostledb::solve::retrograde::solve_into;
use ostledb::store::Store;
use ostledb::store::values::WriteOptions;
use ostledb::working::group::GroupValues;
use ostledb::working::pack::{PackOptions, pack};

#[test]
fn the_sweep_agrees_with_the_naive_count_on_every_phase_of_the_4x4_board() {
    let g = Geometry::new(4, 3).unwrap();
    let dir = std::env::temp_dir().join(format!("ostledb-interesting-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let opts = SolveOptions { dir: Some(dir.clone()), ..SolveOptions::default() };
    solve_into(&g, 6, &opts, |_| Ok(())).unwrap();
    // Small blocks: the naive side decompresses a block for nearly every move it values.
    let p = PackOptions {
        values: WriteOptions { block: 256, level: 3, ..WriteOptions::default() },
        ..PackOptions::default()
    };
    pack(&dir, &g, 6, &p, |_| {}).unwrap();
    let db = Store::open(&dir).unwrap();
    let index = db.index().clone();
    let mut seen = [0u64; 3];
    for pieces in 4..=6 {
        let vals = GroupValues::load(&dir, &g, &index, pieces, None, &ostledb::progress::Silent).unwrap();
        for ph in vals.phases() {
            let fast = sweep_phase(&g, &vals.records(), ph, 4, &Silent);
            let naive = naive_phase(&db, ph, 4).unwrap();
            assert_eq!(fast, naive, "{ph}");
            assert_eq!(fast.positions, index.phase(ph).unwrap().len());
            for (k, c) in fast.classes.iter().enumerate() {
                // Every winning move a sacrifice implies every fastest one is.
                assert!(c.fastest >= c.count, "{ph} {}", Class::ALL[k].name());
                seen[k] += c.count;
            }
        }
    }
    // Every class occurs on this board, so the comparison is not of empty sets.
    assert!(seen.iter().all(|&s| s > 0), "{seen:?}");
    let _ = std::fs::remove_dir_all(&dir);
}
