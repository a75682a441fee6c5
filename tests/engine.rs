//! The engine's fast paths against plain ones, over positions drawn from the position
//! index of whole phases (the engine itself sits below the index, so these live here).

use ostledb::game::Geometry;
use ostledb::game::forbidden::{
    first_index_reaching, forbidding_predecessors, node_exists, node_exists_naive, nontrivial_nodes,
    unmoves_with_node_index,
};
use ostledb::game::moves::{Removal, can_capture, can_capture_by_walking, moves, play, unmoves, unmoves_removing};
use ostledb::game::symmetry::{canonical, canonical_code};
use ostledb::index::GameIndex;

#[test]
fn bit_parallel_capture_test_agrees_with_walking_chains() {
    for g in [Geometry::standard().clone(), Geometry::new(4, 4).unwrap(), Geometry::new(3, 3).unwrap()] {
        let idx = GameIndex::build(&g, 2 * g.start_pieces()).unwrap();
        let (mut yes, mut no) = (0, 0);
        for ph in idx.phases() {
            for i in 0..20_000u64 {
                let p = ph.position_at(i.wrapping_mul(2_654_435_761) % ph.len());
                for k in 0..8 {
                    let q = p.transformed(&g, k);
                    let want = can_capture_by_walking(&g, &q);
                    assert_eq!(can_capture(&g, &q), want, "{q:?}");
                    if want { yes += 1 } else { no += 1 }
                }
            }
        }
        assert!(yes > 0 && no > 0);
    }
}

#[test]
fn fast_node_index_equals_plain_first_match() {
    // One table of a position's children answers all of its unmoves; each answer is held
    // to the plain walk over every move.
    // Every phase of 5x5, 4x4 and 3x3 (where an earlier move reaching a mirror image of
    // the predecessor is common), 3,000 positions of each.
    let mut nonzero_without_undo = 0;
    for g in [Geometry::standard().clone(), Geometry::new(4, 4).unwrap(), Geometry::new(3, 3).unwrap()] {
        let idx = GameIndex::build(&g, 2 * g.start_pieces()).unwrap();
        for ph in idx.phases() {
            for i in 0..3000u64 {
                let p = ph.position_at(i.wrapping_mul(2_654_435_761) % ph.len());
                assert_eq!(canonical(&g, &p).0, p);
                unmoves_with_node_index(&g, &p, |u, j| {
                    let want = first_index_reaching(&g, &p, canonical_code(&g, &u.pred));
                    assert_eq!(j, want, "{p:?} {u:?}");
                    nonzero_without_undo += (u.undo.is_none() && j != 0) as u32;
                });
            }
        }
    }
    assert!(nonzero_without_undo > 0);
}

#[test]
fn nontrivial_node_mask_equals_every_unmove_weighed_against_every_move() {
    // The mask the walks use, held to its definition: for every unmove of the position,
    // 1 + the first move whose result is an image of the predecessor (every move played,
    // every result canonicalised). Every position of every phase of 3x3, 30,000 of each
    // 4x4 phase and 10,000 of each 5x5 phase, each in all eight orientations (the walks
    // give canonical positions; the function holds for any).
    let mut seen = [0u64; 4]; // restored exactly with an earlier image; node > 0 without undo; node 0; any
    for (g, per_phase) in [
        (Geometry::new(3, 3).unwrap(), u64::MAX),
        (Geometry::new(4, 4).unwrap(), 30_000),
        (Geometry::standard().clone(), 10_000),
    ] {
        let idx = GameIndex::build(&g, 2 * g.start_pieces()).unwrap();
        for ph in idx.phases() {
            let step = (ph.len() / per_phase).max(1);
            for i in (0..ph.len()).step_by(step as usize) {
                let canonical_pos = ph.position_at(i.wrapping_mul(2_654_435_761) % ph.len());
                for k in 0..8 {
                    let p = canonical_pos.transformed(&g, k);
                    let mut want = 0u32;
                    let list = moves(&g, &p);
                    unmoves(&g, &p, |u| {
                        let j = first_index_reaching(&g, &p, canonical_code(&g, &u.pred));
                        want |= 1 << j;
                        let undo = u.undo.and_then(|m| list.index_of(m));
                        seen[0] += u64::from(undo.is_some_and(|x| x != j));
                        seen[1] += u64::from(undo.is_none() && j != 0);
                        seen[2] += u64::from(j == 0);
                    });
                    assert_eq!(nontrivial_nodes(&g, &p), want, "{p:?}");
                    seen[3] += 1;
                }
            }
        }
    }
    println!("restored with an earlier image, node > 0 without undo, node 0, positions: {seen:?}");
    assert!(seen.iter().all(|&n| n > 100), "{seen:?}");
}

#[test]
fn forbidding_predecessors_agree_with_the_first_move_reaching_each_result() {
    // Move j can be forbidden exactly when it removes nothing and no earlier move reaches
    // an image of its result: the plain walk over every move says which move is first.
    // About 2,000 positions of every phase of 5x5, 4x4 and 3x3, in two orientations.
    // (On 5x5 an earlier move reaching an image of the result is rare: the small boards
    // supply those cases.)
    let mut none_earlier = 0;
    for g in [Geometry::standard().clone(), Geometry::new(4, 4).unwrap(), Geometry::new(3, 3).unwrap()] {
        let idx = GameIndex::build(&g, 2 * g.start_pieces()).unwrap();
        let mut some = 0;
        for ph in idx.phases() {
            for i in 0..2_000u64 {
                let canonical_pos = ph.position_at(i.wrapping_mul(2_654_435_761) % ph.len());
                for k in [0, 5] {
                    let pos = canonical_pos.transformed(&g, k);
                    let list = moves(&g, &pos);
                    for j in 1..=list.len() + 1 {
                        let got = forbidding_predecessors(&g, &pos, j);
                        let want = list.get(j - 1).and_then(|&m| play(&g, &pos, m)).and_then(|r| {
                            let t = r.child;
                            let code = canonical_code(&g, &t);
                            let first = first_index_reaching(&g, &pos, code);
                            none_earlier += usize::from(r.removal == Removal::None && first != j);
                            (r.removal == Removal::None && first == j)
                                .then(|| (t, g.symmetry_invariant(t.player, t.opponent, t.hole()), code))
                        });
                        assert_eq!(got, want, "{pos:?} move {j}");
                        some += usize::from(got.is_some());
                    }
                }
            }
        }
        assert!(some > 1000, "{}x{}: {some}", g.side(), g.side());
    }
    assert!(none_earlier > 0);
}

#[test]
fn node_exists_agrees_with_its_definition() {
    // Every position of 3x3 with three pieces a side, and about 4,000 of each 5x5 phase
    // up to (4,4); every move index and one past the last.
    fn check(geom: &Geometry, max_pieces: u32, per_phase: u64) -> (usize, usize) {
        let (mut checked, mut existing) = (0, 0);
        let index = GameIndex::build(geom, max_pieces).unwrap();
        for p in index.phases() {
            let step = (p.len() / per_phase).max(1);
            for i in (0..p.len()).step_by(step as usize) {
                let pos = p.position_at(i);
                for j in 1..=ostledb::game::moves::moves(geom, &pos).len() + 1 {
                    let fast = node_exists(geom, &pos, j);
                    assert_eq!(fast, node_exists_naive(geom, &pos, j), "{pos:?} move {j}");
                    checked += 1;
                    existing += usize::from(fast);
                }
            }
        }
        (checked, existing)
    }
    for (geom, max_pieces, per_phase) in [(&Geometry::new(3, 3).unwrap(), 6, u64::MAX), (Geometry::standard(), 8, 4000)]
    {
        let (checked, existing) = check(geom, max_pieces, per_phase);
        assert!(existing > 1000 && existing < checked, "{existing} of {checked}");
    }
}

#[test]
fn unmoves_find_exactly_the_predecessors_that_moves_reach() {
    // Every move of sampled positions (every phase of 5x5, 4x4 and 3x3, in all eight
    // orientations) played forward: its result's unmoves, with and without removal, must
    // hold the position and the move; and every unmove of a result played forward gives
    // the result back.
    for g in [Geometry::standard().clone(), Geometry::new(4, 4).unwrap(), Geometry::new(3, 3).unwrap()] {
        let idx = GameIndex::build(&g, 2 * g.start_pieces()).unwrap();
        let (mut removing, mut plain) = (0u64, 0u64);
        for ph in idx.phases() {
            for i in 0..300u64 {
                let base = ph.position_at(i.wrapping_mul(2_654_435_761) % ph.len());
                for k in 0..8 {
                    let q = base.transformed(&g, k);
                    for &m in moves(&g, &q).iter() {
                        let r = play(&g, &q, m).unwrap();
                        let mut found = 0;
                        let mut check = |u: ostledb::game::moves::Unmove| {
                            let back = play(&g, &u.pred, u.mv).expect("an unmove's move is legal");
                            assert_eq!(back.child, r.child, "{u:?}");
                            assert_eq!(back.removal == Removal::None, r.removal == Removal::None, "{u:?}");
                            found += usize::from(u.pred == q && u.mv == m);
                        };
                        if r.removal == Removal::None {
                            plain += 1;
                            unmoves(&g, &r.child, &mut check);
                        } else {
                            removing += 1;
                            unmoves_removing(&g, &r.child, &mut check);
                        }
                        assert_eq!(found, 1, "{q:?} {m:?} -> {:?}", r.child);
                    }
                }
            }
        }
        assert!(removing > 100 && plain > 100, "{removing} {plain}");
    }
}
