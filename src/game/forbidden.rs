//! The forbidden move: from a previous board, and as the published node index.

use crate::error::Error;
use crate::game::geometry::Geometry;
use crate::game::moves::{Move, Removal, Unmove, moves, play, unmoves};
use crate::game::node::pred_node_index;
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

/// The published node index of the node `canonical` is in after the move from
/// `previous` (any symmetric image of the previous position, seen from its side to
/// move): 1 + the index of the first move of `canonical` whose result is a symmetric image
/// of `previous`, or 0 if there is none. Unlike [`node_index`] this is non-zero also when
/// the last move cannot be undone exactly but another move reaches a mirror image of the
/// previous position (OSTLE.md section 2); the database is keyed this way.
pub fn published_node_index(geom: &Geometry, canonical: &Position, previous: &Position) -> usize {
    first_index_reaching(geom, canonical, canonical_code(geom, previous))
}

/// The node index of the exact forbidden move `undo` of `pos`: 1 + the position, in
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

/// The children of one position that removed nothing, with their symmetry invariants,
/// for answering "which of my moves reaches this predecessor up to symmetry" many times.
pub struct ChildTable {
    /// `(child, invariant)` per move of the list, `None` for a move that removes a piece.
    children: [Option<(Position, u64)>; 24],
    len: usize,
}

impl ChildTable {
    /// Play every move of `pos` once.
    pub fn new(geom: &Geometry, pos: &Position) -> ChildTable {
        let list = moves(geom, pos);
        let mut children = [None; 24];
        for (slot, m) in children.iter_mut().zip(list.iter()) {
            if let Some(r) = play(geom, pos, *m)
                && r.removal == Removal::None
            {
                let c = r.child;
                *slot = Some((c, geom.symmetry_invariant(c.player, c.opponent, c.hole())));
            }
        }
        ChildTable { children, len: list.len() }
    }

    /// The published node index of the node that `pred` reaches by moving to this
    /// position: 1 + the index of the first move whose result is a symmetric image of
    /// `pred`, or 0 when no move reaches one. `undo`, when given, is a move known to
    /// reach `pred` exactly, so only earlier moves need checking.
    pub fn node_index_of_pred(&self, geom: &Geometry, pred: &Position, undo_index: Option<usize>) -> usize {
        let limit = undo_index.map_or(self.len, |u| u - 1);
        let inv = geom.symmetry_invariant(pred.player, pred.opponent, pred.hole());
        let mut target = None;
        for (i, c) in self.children[..limit].iter().enumerate() {
            let Some((child, cinv)) = c else { continue };
            if *cinv != inv {
                continue;
            }
            let t = *target.get_or_insert_with(|| canonical_code(geom, pred));
            if canonical_code(geom, child) == t {
                return i + 1;
            }
        }
        undo_index.unwrap_or(0)
    }
}

/// Call `f` for every unmove of `pos` (see [`crate::game::moves::unmoves`]) with the
/// published node index of the node it reaches: 1 + the index of the first move of `pos`
/// whose result is a symmetric image of the predecessor, or 0 if there is none. This is
/// also non-zero for some plain steps that cannot be undone exactly (a different move
/// reaches a mirror image of the predecessor); OSTLE.md section 2 counts nodes this way.
pub fn unmoves_with_node_index(geom: &Geometry, pos: &Position, mut f: impl FnMut(&Unmove, usize)) {
    let table = ChildTable::new(geom, pos);
    let list = moves(geom, pos);
    unmoves(geom, pos, |u| {
        let undo_index = u.undo.and_then(|m| list.index_of(m));
        let j = table.node_index_of_pred(geom, &u.pred, undo_index);
        f(&u, j);
    });
}

/// The predecessors whose node forbids move `j` (`j >= 1`) of `pos`: the images of the
/// result `t` of move `j`, given as `t` with its symmetry invariant and canonical code,
/// or `None` when no node can forbid move `j`: it removes a piece, does not exist, or an
/// earlier move also reaches an image of `t` (the node index then names that move).
///
/// Whether an earlier move reaches an image of `t` is the question [`pred_node_index`]
/// answers for a child and its parent, with move `j` as the one known to restore `t`;
/// [`first_index_reaching`], which plays every move, is its plain twin in the tests.
pub fn forbidding_predecessors(geom: &Geometry, pos: &Position, j: usize) -> Option<(Position, u64, u64)> {
    let mj = j.checked_sub(1).and_then(|i| moves(geom, pos).get(i).copied())?;
    let r = play(geom, pos, mj)?;
    if r.removal != Removal::None {
        return None;
    }
    let t = r.child;
    if pred_node_index(geom, pos, &t, Some(j)) != j {
        return None;
    }
    Some((t, geom.symmetry_invariant(t.player, t.opponent, t.hole()), canonical_code(geom, &t)))
}

/// Whether node `(pos, j)` exists (`j >= 1`): some predecessor of `pos` reaches it, i.e.
/// forbids move `j`. A special move whose node does not exist is never needed: no game
/// can reach the position with that move forbidden.
///
/// Node `(pos, j)` is reached from a predecessor `Q` exactly when move `j` of `pos`
/// leads to an image of `Q` and no earlier move does. So it exists when move `j` removes
/// nothing, no earlier move reaches an image of its result `t`, and some move of `t`
/// reaches an image of `pos` (then an image of `t` is a predecessor): two lists of moves
/// played instead of every unmove of `pos` weighed against every move (see
/// [`node_exists_naive`], which `tests/engine.rs` holds it to).
pub fn node_exists(geom: &Geometry, pos: &Position, j: usize) -> bool {
    let Some((t, _, _)) = forbidding_predecessors(geom, pos, j) else { return false };
    let pinv = geom.symmetry_invariant(pos.player, pos.opponent, pos.hole());
    let mut pcode = None;
    moves(geom, &t).iter().any(|&m| {
        let Some(r) = play(geom, &t, m) else { return false };
        let c = r.child;
        r.removal == Removal::None
            && geom.symmetry_invariant(c.player, c.opponent, c.hole()) == pinv
            && canonical_code(geom, &c) == *pcode.get_or_insert_with(|| canonical_code(geom, pos))
    })
}

/// [`node_exists`] by definition: every unmove of `pos` with the node index it reaches.
pub fn node_exists_naive(geom: &Geometry, pos: &Position, j: usize) -> bool {
    let mut found = false;
    unmoves_with_node_index(geom, pos, |_, k| found |= k == j);
    found
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
