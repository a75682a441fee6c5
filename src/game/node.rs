//! Nodes of the game graph and their 64-bit keys: a node is a canonical position and
//! its forbidden index, found by the published identity; the expansion conventions of a
//! breadth-first search; the children of a position as nodes.
//!
//! A node is a canonical position and a forbidden index `j` (0 = nothing forbidden,
//! otherwise the 1-based index of the forbidden move in the canonical position's move
//! list). It is stored as one `u64` key, `code << 5 | j` ([`node_key`]): the published
//! 55-bit canonical code in the high bits, so sorting keys sorts by code, and a
//! position's nodes are adjacent.
//!
//! The start node is (canonical initial position, 0). Move `m` of a canonical position
//! `P` leads to
//!
//! * no node when it ends the game (a side is left with `start - 2` pieces: a capture
//!   that wins, or a suicide);
//! * `(canonical(child), 0)` when it removed a piece otherwise (a removal cannot be
//!   undone);
//! * `(canonical(child), J)` when it removed nothing, where `J` is 1 + the index, in the
//!   canonical child's move list, of the *first* move whose result is a symmetric image
//!   of `P`, or 0 if none (the published node identity, OSTLE.md section 2). Because a
//!   different move can reach a mirror image of `P`, `J` can be non-zero even when the
//!   move itself cannot be undone exactly.
//!
//! # Conventions
//!
//! * [`Convention::Published`] (a relaxation, the one the published numbers use): a node
//!   `(P, j)` is expanded by *all* moves of `P`, ignoring its own forbidden move `j`. The
//!   children then depend only on `P`.
//! * [`Convention::Strict`]: move `j` of `P` is not played when expanding `(P, j)`.
//!

use serde::Serialize;

use crate::game::geometry::{Dir, NO_SQUARE, squares_of};
use crate::game::moves::{Move, Removal, move_index, moves, play, transform_move};
use crate::game::symmetry::{canonical, canonical_code};
use crate::game::{Geometry, Position};

/// Bits of a key holding the forbidden index.
pub const INDEX_BITS: u32 = 5;

/// Which moves expand a node (OSTLE.md section 4).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Convention {
    /// All moves of the position, the node's own forbidden move included (the relaxation
    /// the published numbers were computed with).
    Published,
    /// All moves but the node's forbidden move.
    Strict,
}

impl Convention {
    /// `published` or `strict`.
    pub fn name(self) -> &'static str {
        match self {
            Convention::Published => "published",
            Convention::Strict => "strict",
        }
    }
}

/// The key of node (canonical code, forbidden index `j`): `code << 5 | j`.
#[inline]
pub fn node_key(code: u64, j: usize) -> u64 {
    debug_assert!(j < 1 << INDEX_BITS);
    code << INDEX_BITS | j as u64
}

/// The canonical code of a key.
#[inline]
pub fn key_code(key: u64) -> u64 {
    key >> INDEX_BITS
}

/// The forbidden index of a key.
#[inline]
pub fn key_index(key: u64) -> usize {
    (key & ((1 << INDEX_BITS) - 1)) as usize
}

/// The key of the node of `pos` (any orientation) reached from `previous` (the board
/// before the last move, seen from its side to move), with the published node index.
pub fn node_of(geom: &Geometry, pos: &Position, previous: Option<&Position>) -> u64 {
    let (c, _) = canonical(geom, pos);
    node_key(c.code(), previous.map_or(0, |p| crate::game::forbidden::published_node_index(geom, &c, p)))
}

/// The key of the start node: the canonical initial position, nothing forbidden.
pub fn start_key(geom: &Geometry) -> u64 {
    node_key(canonical_code(geom, &Position::initial(geom)), 0)
}

/// The published node index of the node that `pred` reaches by its move to the canonical
/// position `c`: 1 + the index of the first move of `c` whose result is a symmetric image
/// of `pred`, or 0. `undo_index`, when given, is the 1-based index of a move of `c` known
/// to restore `pred` exactly, so only earlier moves need checking.
///
/// Same answer as [`crate::game::forbidden::ChildTable::node_index_of_pred`], but lazy:
/// only moves before `undo_index` are looked at, a move whose hole lands in a different
/// square orbit than `pred`'s is skipped unplayed, and the symmetry invariant filters
/// before any canonical form is computed.
#[inline]
pub fn pred_node_index(geom: &Geometry, c: &Position, pred: &Position, undo_index: Option<usize>) -> usize {
    // Moves are walked in list order ([`moves`]: each piece, ascending, in the four
    // directions, then the legal hole moves) without building the list.
    let limit = undo_index.map_or(usize::MAX, |u| u - 1);
    let pred_hole = geom.orbit_rep(pred.hole());
    let same_hole = geom.orbit_rep(c.hole()) == pred_hole;
    // A move of `c` that pushes none of its opponent's pieces (a hole move, a step onto
    // an empty square) leaves `c.opponent` as its result's player set, so it reaches an
    // image of `pred` only if `c.opponent` is an image of `pred.player`: where the
    // orbit counts of the two sets differ (nearly always after a piece move), such moves
    // are skipped unplayed.
    let plain_moves_can_match = geom.orbit_counts(c.opponent) == geom.orbit_counts(pred.player);
    let occ = c.occupied();
    let mut inv = None;
    let mut target = None;
    let mut reaches = |m: Move| -> bool {
        let Some(r) = play(geom, c, m) else { return false };
        if r.removal != Removal::None {
            return false;
        }
        let ch = r.child;
        let want = *inv.get_or_insert_with(|| geom.symmetry_invariant(pred.player, pred.opponent, pred.hole()));
        if geom.symmetry_invariant(ch.player, ch.opponent, ch.hole()) != want {
            return false;
        }
        let t = *target.get_or_insert_with(|| canonical_code(geom, pred));
        canonical_code(geom, &ch) == t
    };
    let mut i = 0usize;
    for from in squares_of(c.player) {
        for dir in Dir::ALL {
            if i >= limit {
                return undo_index.unwrap_or(0);
            }
            i += 1;
            if !same_hole {
                continue;
            }
            if !plain_moves_can_match {
                let t = geom.step_raw(from, dir);
                // Off the board or into the hole: a suicide; onto an empty square: plain.
                if t == NO_SQUARE || occ >> t & 1 == 0 {
                    continue;
                }
            }
            if reaches(Move::Piece { from: from as u8, dir }) {
                return i;
            }
        }
    }
    for dir in Dir::ALL {
        let t = geom.step_raw(c.hole(), dir);
        if t == NO_SQUARE || occ >> t & 1 != 0 {
            continue; // not a legal hole move, not in the list
        }
        if i >= limit {
            break;
        }
        i += 1;
        if plain_moves_can_match && geom.orbit_rep(t as u32) == pred_hole && reaches(Move::Hole { dir }) {
            return i;
        }
    }
    undo_index.unwrap_or(0)
}

/// The node that move `m` of the canonical position `p` leads to, or `None` when the move
/// ends the game (see the module documentation).
#[inline]
pub fn child_node(geom: &Geometry, p: &Position, m: Move) -> Option<u64> {
    let r = play(geom, p, m)?;
    if r.removal != Removal::None {
        let lost = geom.losing_count();
        if r.child.player.count_ones() == lost || r.child.opponent.count_ones() == lost {
            return None;
        }
        return Some(node_key(canonical_code(geom, &r.child), 0));
    }
    let (c, k) = canonical(geom, &r.child);
    let pred = p.transformed(geom, k);
    let undo_index = r.undo.map(|u| move_index(geom, &c, transform_move(geom, k, u)));
    Some(node_key(c.code(), pred_node_index(geom, &c, &pred, undo_index)))
}

/// The children of every move of the canonical position `p`, in move-list order (`None`
/// for a move that ends the game), and the number of moves.
#[inline]
pub fn children(geom: &Geometry, p: &Position) -> ([Option<u64>; 24], usize) {
    let list = moves(geom, p);
    let mut out = [None; 24];
    for (slot, &m) in out.iter_mut().zip(list.iter()) {
        *slot = child_node(geom, p, m);
    }
    (out, list.len())
}
