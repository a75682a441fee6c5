//! The forbidden move: from a previous board, and as the published node index.

use crate::error::Error;
use crate::game::geometry::Geometry;
use crate::game::moves::{Move, Removal, moves, play};
use crate::game::position::Position;
use crate::game::symmetry::canonical_code;

/// The move of `current`'s side to move that would recreate `previous` (written from the
/// point of view of the side that was to move then), or `None` when the last move cannot
/// be undone. Errors when no move of `previous` leads to `current`.
pub fn forbidden_move(geom: &Geometry, current: &Position, previous: &Position) -> Result<Option<Move>, Error> {
    for m in moves(geom, previous).iter() {
        if let Some(r) = play(geom, previous, *m)
            && r.child == *current
        {
            return Ok(r.undo);
        }
    }
    Err(Error::NotAPredecessor)
}

/// The published node index of the forbidden move `undo` of `pos`: 1 + the position, in
/// the move list of `canonical` (the canonical form of `pos`), of the first move whose
/// result equals the result of `undo` up to symmetry. 0 for no forbidden move.
pub fn node_index(geom: &Geometry, pos: &Position, canonical: &Position, undo: Option<Move>) -> usize {
    let Some(u) = undo else { return 0 };
    let Some(target) = play(geom, pos, u) else { return 0 };
    if target.removal != Removal::None {
        return 0;
    }
    first_index_reaching(geom, canonical, canonical_code(geom, &target.child))
}

/// 1-based index of the first move of `pos` whose child has canonical code `target`
/// (0 if none).
pub fn first_index_reaching(geom: &Geometry, pos: &Position, target: u64) -> usize {
    for (i, m) in moves(geom, pos).iter().enumerate() {
        if let Some(r) = play(geom, pos, *m)
            && r.removal == Removal::None
            && canonical_code(geom, &r.child) == target
        {
            return i + 1;
        }
    }
    0
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::geometry::Dir;
    use crate::game::notation::parse_board;
    use crate::game::symmetry::canonical;

    #[test]
    fn worked_example_forbidden_index_is_2() {
        let g = Geometry::standard();
        let cur = parse_board(g, "00100-11200-00001-31022-20020").unwrap();
        let prev = parse_board(g, "00000-22200-00102-32011-10010").unwrap();
        let f = forbidden_move(g, &cur, &prev).unwrap();
        assert_eq!(f, Some(Move::Piece { from: 2, dir: Dir::Down }));
        let (c, _) = canonical(g, &cur);
        assert_eq!(node_index(g, &cur, &c, f), 2);
    }

    #[test]
    fn unrelated_previous_board_is_an_error() {
        let g = Geometry::standard();
        let cur = parse_board(g, "00100-11200-00001-31022-20020").unwrap();
        let prev = parse_board(g, "22222-00000-00300-00000-11111").unwrap();
        assert!(matches!(forbidden_move(g, &cur, &prev), Err(Error::NotAPredecessor)));
    }
}
