//! Move generation on boards written in the board notation: pushes, captures, the hole,
//! undo moves, unmoves and symmetry (the notation sits above the moves in `game`, so these
//! live here).

use ostledb::game::geometry::{Dir, Geometry};
use ostledb::game::moves::{Move, Removal, move_index, moves, play, transform_move, unmoves, unmoves_removing};
use ostledb::game::notation::parse_board;
use ostledb::game::position::Position;

fn pos(s: &str) -> Position {
    parse_board(Geometry::standard(), s).unwrap()
}

#[test]
fn worked_example_has_21_moves() {
    assert_eq!(moves(Geometry::standard(), &pos("00100-11200-00001-31022-20020")).len(), 21);
}

#[test]
fn push_shifts_the_chain_and_drops_the_last_piece_off_the_edge() {
    let g = Geometry::standard();
    // 1 1 2 on row 0 columns 2..4 pushing right: the 2 on column 4 falls off.
    let p = pos("00112-20000-00300-00000-22111");
    let r = play(g, &p, Move::Piece { from: 2, dir: Dir::Right }).unwrap();
    assert_eq!(r.removal, Removal::Opponent);
    // The child is seen from the other side: the mover's pieces are now its opponent.
    assert_eq!(r.child.opponent, 1 << 3 | 1 << 4 | 1 << 22 | 1 << 23 | 1 << 24);
    assert_eq!(r.child.player, 1 << 5 | 1 << 20 | 1 << 21);
    assert_eq!(r.undo, None);
}

#[test]
fn the_hole_stops_a_chain_and_swallows_its_last_piece() {
    let g = Geometry::standard();
    // Row 2: 1 2 3 0 0 ; piece on 10 pushes right, the 2 on 11 falls into the hole on 12.
    let p = pos("22200-00000-12300-00000-11100");
    let r = play(g, &p, Move::Piece { from: 10, dir: Dir::Right }).unwrap();
    assert_eq!(r.removal, Removal::Opponent);
    assert_eq!(r.child.hole, 12);
    assert_eq!(r.child.opponent & (1 << 11), 1 << 11);
}

#[test]
fn stepping_into_the_hole_is_a_suicide() {
    let g = Geometry::standard();
    let p = pos("22220-00000-01300-00000-11100");
    let r = play(g, &p, Move::Piece { from: 11, dir: Dir::Right }).unwrap();
    assert_eq!(r.removal, Removal::Own);
}

#[test]
fn push_ending_on_an_opponent_piece_is_undoable() {
    let g = Geometry::standard();
    let p = pos("00000-12000-00300-00002-11122");
    let r = play(g, &p, Move::Piece { from: 5, dir: Dir::Right }).unwrap();
    assert_eq!(r.removal, Removal::None);
    assert_eq!(r.undo, Some(Move::Piece { from: 7, dir: Dir::Left }));
    let back = play(g, &r.child, r.undo.unwrap()).unwrap();
    assert_eq!(back.child, p);
}

#[test]
fn worked_example_forbidden_move_restores_previous_board() {
    let g = Geometry::standard();
    let cur = pos("00100-11200-00001-31022-20020");
    let prev = pos("00000-22200-00102-32011-10010");
    let m = Move::Piece { from: 2, dir: Dir::Down };
    assert_eq!(play(g, &cur, m).unwrap().child, prev);
}

#[test]
fn every_unmove_played_forward_restores_the_position() {
    let g = Geometry::standard();
    for s in ["00100-11200-00001-31022-20020", "22222-00000-00300-00000-11111", "12120-21210-00300-01000-00002"] {
        let p = pos(s);
        let mut n = 0;
        unmoves(g, &p, |u| {
            n += 1;
            let r = play(g, &u.pred, u.mv).expect("legal");
            assert_eq!(r.child, p, "{s}: {u:?}");
            assert_eq!(r.removal, Removal::None);
            assert_eq!(r.undo, u.undo);
        });
        assert!(n > 0);
    }
}

#[test]
fn every_removing_unmove_played_forward_restores_the_position() {
    let g = Geometry::standard();
    for s in ["00100-11200-00001-31022-20020", "12120-21210-00300-01000-00002", "21002-00000-20302-00000-11120"] {
        let p = pos(s);
        let mut n = 0;
        unmoves_removing(g, &p, |u| {
            n += 1;
            let r = play(g, &u.pred, u.mv).expect("legal");
            assert_eq!(r.child, p, "{s}: {u:?}");
            assert_ne!(r.removal, Removal::None);
        });
        assert!(n > 0);
    }
}

#[test]
fn transformed_moves_commute_with_play_and_index_matches_the_list() {
    let g = Geometry::standard();
    for s in ["00100-11200-00001-31022-20020", "22222-00000-00300-00000-11111", "12120-21210-00300-01000-00002"] {
        let p = pos(s);
        let list = moves(g, &p);
        for (i, &m) in list.iter().enumerate() {
            assert_eq!(move_index(g, &p, m), i + 1);
            let r = play(g, &p, m).unwrap();
            for k in 0..8 {
                let pk = p.transformed(g, k);
                let mk = transform_move(g, k, m);
                let rk = play(g, &pk, mk).expect("image of a legal move is legal");
                assert_eq!(rk.child, r.child.transformed(g, k), "{s} {m:?} k={k}");
                assert_eq!(rk.removal, r.removal);
            }
        }
    }
}
