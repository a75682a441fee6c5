//! The forbidden move: from a previous board, and as the published node index.

use crate::error::Error;
use crate::game::geometry::{Dir, Geometry, NO_SQUARE, squares_of};
use crate::game::moves::{MAX_MOVES, Move, Removal, Unmove, moves, play, play_piece, unmoves};
use crate::game::node::{node_key, pred_node_index};
use crate::game::position::Position;
use crate::game::symmetry::{canonical, canonical_code};

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

/// The key of the node of `pos` (any orientation) reached from `previous` (the board
/// before the last move, seen from its side to move), with the published node index.
pub fn node_of(geom: &Geometry, pos: &Position, previous: Option<&Position>) -> u64 {
    let (c, _) = canonical(geom, pos);
    node_key(c.code(), previous.map_or(0, |p| published_node_index(geom, &c, p)))
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
    child: [Position; MAX_MOVES],
    /// The child's symmetry invariant, [`NO_CHILD`] for a move that removes a piece.
    inv: [u64; MAX_MOVES],
    /// Bit `filter_bit(inv)` set for the invariant of every child.
    filter: [u64; 4],
    /// Bit `i` set when move `i` restores a predecessor exactly: its child has an undo
    /// move (a hole move, or a push whose last piece was the mover's).
    restoring: u32,
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
    /// The children of every move of `pos`, in the order of [`moves`]. Only pushes are
    /// played: a plain step or a hole move changes one square, so its child and that
    /// child's invariant follow from `pos`'s orbit counts by the one piece or hole that
    /// moved (`Geometry::orbit_unit`, `Geometry::invariant_of_counts`).
    pub fn new(geom: &Geometry, pos: &Position) -> ChildTable {
        let occ = pos.occupied();
        let hole = pos.hole();
        let empty = geom.all() & !occ & !(1 << hole);
        // A child that removed nothing has `pos`'s sides swapped: its side to move has the
        // pieces of `pos.opponent`, the other side those of `pos.player`.
        let (opp_counts, own_counts) = (geom.orbit_counts(pos.opponent), geom.orbit_counts(pos.player));
        let mut t =
            ChildTable { child: [*pos; MAX_MOVES], inv: [NO_CHILD; MAX_MOVES], filter: [0; 4], restoring: 0, len: 0 };
        let mut i = 0;
        for s in squares_of(pos.player) {
            for dir in Dir::ALL {
                let next = geom.step_raw(s, dir);
                if next == NO_SQUARE || next as u32 == hole {
                    // The piece falls: its own loss, no child in the phase.
                } else if empty >> next & 1 != 0 {
                    let own = own_counts - geom.orbit_unit(s) + geom.orbit_unit(next as u32);
                    t.child[i] = Position {
                        player: pos.opponent,
                        opponent: pos.player ^ (1 << s | 1 << next),
                        hole: hole as u8,
                    };
                    t.inv[i] = geom.invariant_of_counts(hole, opp_counts, own);
                } else {
                    let r = play_piece(geom, pos, s, dir);
                    if r.removal == Removal::None {
                        let c = r.child;
                        t.child[i] = c;
                        t.inv[i] = geom.symmetry_invariant(c.player, c.opponent, c.hole());
                        t.restoring |= u32::from(r.undo.is_some()) << i;
                    }
                }
                i += 1;
            }
        }
        for dir in Dir::ALL {
            let h = geom.step_raw(hole, dir);
            if h != NO_SQUARE && empty >> h & 1 != 0 {
                t.child[i] = Position { player: pos.opponent, opponent: pos.player, hole: h };
                t.inv[i] = geom.invariant_of_counts(h as u32, opp_counts, own_counts);
                t.restoring |= 1 << i;
                i += 1;
            }
        }
        t.len = i;
        debug_assert_eq!(i, moves(geom, pos).len());
        for &v in &t.inv[..i] {
            if v != NO_CHILD {
                let (w, b) = filter_bit(v);
                t.filter[w] |= b;
            }
        }
        t
    }

    /// The index of the first move before `limit` whose child has invariant `inv` (that
    /// of `pred`) and is a symmetric image of `pred`, or `None`.
    fn first_image(&self, geom: &Geometry, limit: usize, inv: u64, pred: &Position) -> Option<usize> {
        let mut target = None;
        (0..limit).find(|&k| {
            self.inv[k] == inv
                && canonical_code(geom, &self.child[k]) == *target.get_or_insert_with(|| canonical_code(geom, pred))
        })
    }

    /// Whether the filter holds `inv`: false means no child has it.
    #[inline]
    fn may_hold(&self, inv: u64) -> bool {
        let (w, b) = filter_bit(inv);
        self.filter[w] & b != 0
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
                if undo_index.is_none() && !self.may_hold(inv) {
                    return 0;
                }
                (undo_index.map_or(self.len, |u| u - 1), inv)
            }
        };
        self.first_image(geom, limit, inv, pred).map_or(undo_index.unwrap_or(0), |k| k + 1)
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
/// is an image of them, which the [`ChildTable`]'s filter rules out for almost all. A
/// plain step's invariant follows from `pos`'s by the one piece that moved.
pub fn nontrivial_nodes(geom: &Geometry, pos: &Position) -> u32 {
    let table = ChildTable::new(geom, pos);
    let hole = pos.hole();
    let (opp_counts, own_counts) = (geom.orbit_counts(pos.opponent), geom.orbit_counts(pos.player));
    // The exact predecessors: node 1 + the first move whose child is an image of move u's.
    let mut reached = 0u32;
    let mut restoring = table.restoring;
    while restoring != 0 {
        let u = restoring.trailing_zeros() as usize;
        restoring &= restoring - 1;
        let first = table.first_image(geom, u, table.inv[u], &table.child[u]).unwrap_or(u);
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
        reached |=
            if table.may_hold(v) { 1 << table.first_image(geom, table.len, v, q).map_or(0, |k| k + 1) } else { 1 };
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
