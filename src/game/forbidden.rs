//! The forbidden move: from a previous board, and as the published node index.

use crate::error::Error;
use crate::game::geometry::{Dir, Geometry, NO_SQUARE, squares_of};
use crate::game::moves::{Move, Removal, Unmove, moves, play, play_piece, unmoves};
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
///
/// Most predecessors are reached by a move that cannot be undone (a plain step of the
/// other side's piece), and almost none of those is an image of a child: a 256-bit
/// filter of the children's invariants turns most of them away after one invariant is
/// made. A predecessor that an undo move reaches exactly is that move's child, whose
/// invariant is in the table already.
pub struct ChildTable {
    /// The child of each move of the list (unused where `inv` is [`NO_CHILD`]).
    child: [Position; 24],
    /// The child's symmetry invariant, [`NO_CHILD`] for a move that removes a piece.
    inv: [u64; 24],
    /// Bit `filter_bit(inv)` set for the invariant of every child.
    filter: [u64; 4],
    len: usize,
}

/// The invariant of a move with no child in the table (it removes a piece); no position
/// has it, as a symmetry invariant has its top bits clear.
const NO_CHILD: u64 = u64::MAX;

/// The word and bit of an invariant in [`ChildTable`]'s filter.
#[inline]
fn filter_bit(inv: u64) -> (usize, u64) {
    let h = inv.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 56;
    ((h >> 6) as usize, 1 << (h & 63))
}

impl ChildTable {
    /// Play every move of `pos` once.
    pub fn new(geom: &Geometry, pos: &Position) -> ChildTable {
        let list = moves(geom, pos);
        let mut t = ChildTable { child: [*pos; 24], inv: [NO_CHILD; 24], filter: [0; 4], len: list.len() };
        for (i, m) in list.iter().enumerate() {
            if let Some(r) = play(geom, pos, *m)
                && r.removal == Removal::None
            {
                let c = r.child;
                let inv = geom.symmetry_invariant(c.player, c.opponent, c.hole());
                let (w, b) = filter_bit(inv);
                t.filter[w] |= b;
                t.child[i] = c;
                t.inv[i] = inv;
            }
        }
        t
    }

    /// The published node index of the node that `pred` reaches by moving to this
    /// position: 1 + the index of the first move whose result is a symmetric image of
    /// `pred`, or 0 when no move reaches one. `undo`, when given, is a move known to
    /// reach `pred` exactly, so only earlier moves need checking.
    pub fn node_index_of_pred(&self, geom: &Geometry, pred: &Position, undo_index: Option<usize>) -> usize {
        let (limit, inv) = match undo_index {
            // `pred` is that move's child: its invariant is known.
            Some(u) if self.inv[u - 1] != NO_CHILD => (u - 1, self.inv[u - 1]),
            _ => {
                let inv = geom.symmetry_invariant(pred.player, pred.opponent, pred.hole());
                let (w, b) = filter_bit(inv);
                if undo_index.is_none() && self.filter[w] & b == 0 {
                    return 0;
                }
                (undo_index.map_or(self.len, |u| u - 1), inv)
            }
        };
        let mut target = None;
        for i in 0..limit {
            if self.inv[i] != inv {
                continue;
            }
            let t = *target.get_or_insert_with(|| canonical_code(geom, pred));
            if canonical_code(geom, &self.child[i]) == t {
                return i + 1;
            }
        }
        undo_index.unwrap_or(0)
    }
}

/// The non-trivial nodes of `pos` as a mask (OSTLE.md section 2, as the published counts
/// use it): bit `j` set when some predecessor reached by a move that removed nothing (an
/// unmove) reaches node `(pos, j)`. The same as
/// or-ing `1 << j` over [`unmoves_with_node_index`], which is the definition and
/// `tests/engine.rs` holds this to; this is the form the walks over every position
/// (`stats`, the export's lines) use.
///
/// Cheaper because it weighs the two kinds of unmove apart. A predecessor that a move
/// `u` of `pos` restores exactly (a hole move, or a push whose last piece was ours) is
/// `u`'s child, so its node is the first move whose child is an image of `u`'s: every
/// such `u` of `pos` is found among its own moves, with no predecessor made. The others
/// (plain steps, pushes of the other side's own piece) reach node 0 unless some child
/// is an image of them, which a filter of the children's symmetry invariants rules out
/// for almost all. A plain step's invariant, and a child's, follows from `pos`'s by the
/// one piece or hole that moved; only pushes are played.
pub fn nontrivial_nodes(geom: &Geometry, pos: &Position) -> u32 {
    let occ = pos.occupied();
    let hole = pos.hole();
    let empty = geom.all() & !occ & !(1 << hole);
    // Every child and predecessor that removed nothing has `pos`'s sides swapped: its
    // side to move has the pieces of `pos.opponent`, the other side those of `pos.player`.
    let (opp_counts, own_counts) = (geom.orbit_counts(pos.opponent), geom.orbit_counts(pos.player));
    let mut child = [*pos; 24];
    let mut inv = [NO_CHILD; 24];
    let mut filter = [0u64; 4];
    // Bit i: move i restores a predecessor exactly.
    let mut restoring = 0u32;
    let mut i = 0;
    for s in squares_of(pos.player) {
        for dir in Dir::ALL {
            let next = geom.step_raw(s, dir);
            if next == NO_SQUARE || next as u32 == hole {
                // The piece falls: its own loss, no child in the phase.
            } else if empty >> next & 1 != 0 {
                let own = own_counts - geom.orbit_unit(s) + geom.orbit_unit(next as u32);
                child[i] =
                    Position { player: pos.opponent, opponent: pos.player ^ (1 << s | 1 << next), hole: hole as u8 };
                inv[i] = geom.invariant_of_counts(hole, opp_counts, own);
            } else {
                let r = play_piece(geom, pos, s, dir);
                if r.removal == Removal::None {
                    let c = r.child;
                    child[i] = c;
                    inv[i] = geom.symmetry_invariant(c.player, c.opponent, c.hole());
                    restoring |= u32::from(r.undo.is_some()) << i;
                }
            }
            i += 1;
        }
    }
    for dir in Dir::ALL {
        let t = geom.step_raw(hole, dir);
        if t != NO_SQUARE && empty >> t & 1 != 0 {
            child[i] = Position { player: pos.opponent, opponent: pos.player, hole: t };
            inv[i] = geom.invariant_of_counts(t as u32, opp_counts, own_counts);
            restoring |= 1 << i;
            i += 1;
        }
    }
    // Into the filter in move order: a restoring move whose invariant no earlier child
    // has is its own node's first move, and needs no search.
    let mut reached = 0u32;
    let mut searched = 0u32;
    for (u, &v) in inv[..i].iter().enumerate() {
        if v != NO_CHILD {
            let (w, b) = filter_bit(v);
            if restoring >> u & 1 != 0 {
                if filter[w] & b == 0 {
                    reached |= 1 << (u + 1);
                } else {
                    searched |= 1 << u;
                }
            }
            filter[w] |= b;
        }
    }
    let mut codes = [None; 24];
    let mut code = |k: usize| *codes[k].get_or_insert_with(|| canonical_code(geom, &child[k]));
    // The exact predecessors: node 1 + the first move whose child is an image of move u's.
    while searched != 0 {
        let u = searched.trailing_zeros() as usize;
        searched &= searched - 1;
        let first = (0..u).find(|&k| inv[k] == inv[u] && code(k) == code(u)).unwrap_or(u);
        reached |= 1 << (first + 1);
    }
    // The others: node 0 unless a child is an image of the predecessor.
    unmoves(geom, pos, |m| {
        if m.undo.is_some() {
            return;
        }
        let q = &m.pred;
        let v = if q.opponent == pos.player {
            // Only pieces of the other side moved (a plain step, or a push of a run of
            // its own pieces): one square of its set emptied, one filled.
            let moved = q.player ^ pos.opponent;
            let (to, from) = ((moved & pos.opponent).trailing_zeros(), (moved & q.player).trailing_zeros());
            geom.invariant_of_counts(hole, opp_counts - geom.orbit_unit(to) + geom.orbit_unit(from), own_counts)
        } else {
            geom.symmetry_invariant(q.player, q.opponent, q.hole())
        };
        let (w, b) = filter_bit(v);
        if filter[w] & b == 0 {
            reached |= 1;
            return;
        }
        let mut target = None;
        let j = (0..i)
            .find(|&k| inv[k] == v && code(k) == *target.get_or_insert_with(|| canonical_code(geom, q)))
            .map_or(0, |k| k + 1);
        reached |= 1 << j;
    });
    reached
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
