//! The move parser and playing parsed moves on a parsed board. The first byte picks the
//! geometry; the rest is three lines: a board, the board before it (may be empty), and
//! moves separated by commas (`c1-up,hole-left`, as `query --play` takes them).
//!
//! Checked on every parsed board: the move list equals the naive generator's, move by
//! move; each move prints and parses back to itself, plays like the naive board, commutes
//! with the 8 symmetries, has the published index `move_index` computes, and (when it
//! removes nothing) is found again among the child's unmoves. Then the moves are played
//! as `query --play` plays them (`play_moves`), which must agree with playing them one by
//! one: refused exactly when one is not a move, is the forbidden move or ends the game.

#![no_main]

use libfuzzer_sys::fuzz_target;
use ostledb::Error;
use ostledb::analysis::query::play_moves;
use ostledb::game::forbidden::forbidden_move;
use ostledb::game::geometry::Dir;
use ostledb::game::moves::{Move, Removal, move_index, moves, play, transform_move, unmoves};
use ostledb::game::naive::ArrayBoard;
use ostledb::game::notation::{format_move, parse_board, parse_move};
use ostledb::game::{Geometry, Position};

fn check_moves(g: &Geometry, pos: &Position) {
    let n = g.side() as usize;
    let list = moves(g, pos);
    let naive = ArrayBoard::from_position(n, pos);
    let naive_moves = naive.moves();
    assert_eq!(list.len(), naive_moves.len(), "move count");
    let min = g.min_pieces() as usize;
    for (i, (&m, &nm)) in list.iter().zip(&naive_moves).enumerate() {
        let dir = ostledb::game::naive::NAIVE_DIRS.iter().position(|d| *d == nm.1).unwrap();
        let want = match nm.0 {
            Some((r, c)) => Move::Piece { from: (r * n + c) as u8, dir: Dir::from_index(dir) },
            None => Move::Hole { dir: Dir::from_index(dir) },
        };
        assert_eq!(m, want, "move {} in published order", i + 1);
        assert_eq!(parse_move(g, &format_move(g, m)).unwrap(), m);
        assert_eq!(move_index(g, pos, m), i + 1, "{m:?}");
        assert_eq!(list.index_of(m), Some(i + 1));
        let r = play(g, pos, m).expect("a listed move plays");
        let (nb, own, opp) = naive.play(nm);
        let removal = match (own, opp) {
            (0, 0) => Removal::None,
            (_, 0) => Removal::Own,
            (0, _) => Removal::Opponent,
            _ => panic!("a move cannot drop pieces of both sides"),
        };
        assert_eq!(r.removal, removal, "{m:?}");
        // The fast child drops the fallen pieces too; a child the game has ended in is
        // still a board (one side below the minimum).
        assert_eq!(r.child, nb.to_position(), "{m:?}: the child");
        let ended = (r.child.player.count_ones() as usize) < min || (r.child.opponent.count_ones() as usize) < min;
        if !ended {
            r.child.validate(g).expect("a child the game goes on in is valid");
        }
        for k in 0..8 {
            let img = pos.transformed(g, k);
            let rk = play(g, &img, transform_move(g, k, m)).expect("the image of a move plays");
            assert_eq!(rk.child, r.child.transformed(g, k), "{m:?} under symmetry {k}");
            assert_eq!(rk.removal, r.removal);
        }
        if r.removal == Removal::None {
            let mut found = false;
            unmoves(g, &r.child, |u| {
                if u.pred == *pos && u.mv == m {
                    found = true;
                    assert_eq!(u.undo, r.undo, "{m:?}: the undo move");
                }
                let back = play(g, &u.pred, u.mv).expect("an unmove's move plays");
                assert_eq!(back.child, r.child, "an unmove's move leads to the position");
                assert_eq!(back.removal, Removal::None);
            });
            assert!(found, "{m:?}: not among the child's unmoves");
        }
    }
}

fuzz_target!(|data: &[u8]| {
    let Some((&selector, rest)) = data.split_first() else { return };
    let Ok(text) = std::str::from_utf8(rest) else { return };
    let g = ostledb_fuzz::geometry(selector);
    let mut lines = text.splitn(3, '\n');
    let board = lines.next().unwrap_or("");
    let prev_text = lines.next().unwrap_or("").trim();
    let move_text = lines.next().unwrap_or("");
    let Ok(pos) = parse_board(g, board) else { return };
    check_moves(g, &pos);
    let prev = match prev_text {
        "" => None,
        p => match parse_board(g, p) {
            Ok(q) if forbidden_move(g, &pos, &q).is_ok() => Some(q),
            _ => None,
        },
    };
    let list: Vec<String> =
        if move_text.is_empty() { Vec::new() } else { move_text.split(',').map(str::to_string).collect() };
    if list.len() > 64 {
        return;
    }
    // Play them one by one, as play_moves promises to.
    let mut cur = pos;
    let mut before = prev;
    let mut expect_err = false;
    for (i, t) in list.iter().enumerate() {
        let Ok(m) = parse_move(g, t) else {
            expect_err = true;
            break;
        };
        if !moves(g, &cur).contains(&m) {
            expect_err = true;
            break;
        }
        if let Some(b) = before
            && forbidden_move(g, &cur, &b).expect("the previous board leads here") == Some(m)
        {
            expect_err = true;
            break;
        }
        let r = play(g, &cur, m).unwrap();
        let min = g.min_pieces();
        if r.child.player.count_ones() < min || r.child.opponent.count_ones() < min {
            expect_err = true;
            break;
        }
        check_moves(g, &r.child);
        before = Some(cur);
        cur = r.child;
        let _ = i;
    }
    match play_moves(g, &pos, prev.as_ref(), &list) {
        Ok((p, q)) => {
            assert!(!expect_err, "play_moves accepted {list:?}");
            assert_eq!((p, q), (cur, before));
            if let Some(q) = q {
                ostledb_fuzz::check_prev(g, &p, &q);
            }
        }
        Err(e) => {
            assert!(expect_err, "play_moves refused {list:?}: {e}");
            assert!(matches!(e, Error::Notation(_) | Error::InvalidArgument(_)), "{e:?}");
        }
    }
});
