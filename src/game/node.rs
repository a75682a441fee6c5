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

use crate::game::geometry::{Dir, NO_SQUARE};
use crate::game::moves::{MAX_MOVES, Move, Removal, move_index, moves, play, transform_move};
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

/// The key of the start node: the canonical initial position, nothing forbidden.
pub fn start_key(geom: &Geometry) -> u64 {
    node_key(canonical_code(geom, &Position::initial(geom)), 0)
}

/// The key of the start node of a search from [`Position::start`]`(geom, phase)`
/// ([`start_key`] for the game's own phase).
pub fn start_key_of(geom: &Geometry, phase: crate::game::Phase) -> u64 {
    node_key(canonical_code(geom, &Position::start(geom, phase)), 0)
}

/// The published node index of the node that `pred` reaches by its move to the canonical
/// position `c`: 1 + the index of the first move of `c` whose result is a symmetric image
/// of `pred`, or 0. `undo_index`, when given, is the 1-based index of a move of `c` known
/// to restore `pred` exactly, so only earlier moves need checking.
///
/// Same answer as [`crate::game::forbidden::ChildTable::node_index_of_pred`] (the plain
/// walk over every move, kept as its twin), found from the images of `pred` instead of
/// the moves of `c`, with at most one move played per image. A move that removes nothing
/// changes which squares are occupied in one of two ways:
///
/// * a piece move leaves the hole and empties exactly one occupied square, the one it
///   moves from, and fills exactly one empty square, the one after its chain: it turns
///   `c` into the image `s(pred)` only when `s` maps `pred`'s hole to `c`'s and the
///   occupied squares of `c` and `s(pred)` differ in exactly those two squares, which
///   name the move (the square it moves from, and the direction toward the other);
/// * a hole move keeps every piece where it is: it reaches `s(pred)` only when
///   `s(pred.player) == c.opponent`, `s(pred.opponent) == c.player`, and it moves the
///   hole to `s(pred.hole)`.
///
/// Each candidate is then played (or, for a hole move, its sets compared) to confirm it.
/// Nothing is canonicalised.
#[inline]
pub fn pred_node_index(geom: &Geometry, c: &Position, pred: &Position, undo_index: Option<usize>) -> usize {
    pred_node_index_of_images(geom, c, &Images::of(geom, pred), undo_index)
}

/// The 8 symmetric images of a position (hole, player set, opponent set), in no
/// particular order: made once for a position, they serve [`pred_node_index_of_images`]
/// for every child of it.
#[derive(Clone, Copy, Debug)]
pub struct Images {
    hole: [u8; 8],
    player: [u32; 8],
    opponent: [u32; 8],
}

impl Images {
    /// The images of `p` under the 8 symmetries.
    #[inline]
    pub fn of(geom: &Geometry, p: &Position) -> Images {
        let mut im = Images { hole: [0; 8], player: [0; 8], opponent: [0; 8] };
        for k in 0..8 {
            im.hole[k] = geom.sym_square(k, p.hole()) as u8;
            im.player[k] = geom.sym_set(k, p.player);
            im.opponent[k] = geom.sym_set(k, p.opponent);
        }
        im
    }
}

/// [`pred_node_index`] given the images of `pred` instead of `pred`: the same for any
/// image of `pred` (the answer asks only whether a move reaches *some* image, and the
/// images of an image are the same eight), so a position's images, made once, give the
/// node index of each of its children, whatever symmetry made the child canonical.
#[inline]
pub fn pred_node_index_of_images(geom: &Geometry, c: &Position, images: &Images, undo_index: Option<usize>) -> usize {
    // Moves are numbered in list order ([`moves`]: each piece of `c.player`, ascending,
    // in the four directions, then the legal hole moves), 0-based here; only moves before
    // `first` can still be the answer.
    let mut first = undo_index.map_or(usize::MAX, |u| u - 1);
    let limit = first;
    let (hole, occ) = (c.hole(), c.occupied());
    let hole_moves = 4 * c.player.count_ones() as usize;
    // The squares a hole move of `c` can take the hole to (none when no hole move can
    // still be the answer), a bit each; and those of them that are the holes of images
    // of `pred` with `c`'s occupied squares.
    let mut legal_holes = 0u32;
    if hole_moves < first {
        for dir in Dir::ALL {
            let t = geom.step_raw(hole, dir);
            if t != NO_SQUARE && occ >> t & 1 == 0 {
                legal_holes |= 1 << t;
            }
        }
    }
    let mut hole_targets = 0u32;
    for k in 0..8 {
        let image_hole = images.hole[k] as u32;
        let image_occ = images.player[k] | images.opponent[k];
        if image_hole != hole {
            if legal_holes >> image_hole & 1 != 0 && image_occ == occ {
                hole_targets |= 1 << image_hole;
            }
            continue;
        }
        let moved = image_occ ^ occ;
        let from = moved & c.player;
        if moved.count_ones() != 2 || from.count_ones() != 1 || moved & occ != from {
            continue; // not one square of `c.player` emptied and one empty square filled
        }
        let (from, to) = (from.trailing_zeros(), (moved & !occ).trailing_zeros());
        let ((fr, fc), (tr, tc)) = (geom.row_col(from), geom.row_col(to));
        let dir = match (fr == tr, fc == tc) {
            (true, _) if tc > fc => Dir::Right,
            (true, _) => Dir::Left,
            (_, true) if tr > fr => Dir::Down,
            (_, true) => Dir::Up,
            _ => continue,
        };
        let i = 4 * (c.player & ((1u32 << from) - 1)).count_ones() as usize + dir.index();
        if i >= first {
            continue;
        }
        let Some(r) = play(geom, c, Move::Piece { from: from as u8, dir }) else { continue };
        if r.removal == Removal::None && r.child.player == images.player[k] && r.child.opponent == images.opponent[k] {
            first = i;
        }
    }
    if hole_targets != 0 && hole_moves < first {
        // Confirm the sets of the images whose hole a hole move can reach.
        let mut confirmed = 0u32;
        for k in 0..8 {
            let image_hole = images.hole[k] as u32;
            if hole_targets >> image_hole & 1 != 0 && images.player[k] == c.opponent && images.opponent[k] == c.player {
                confirmed |= 1 << image_hole;
            }
        }
        let mut i = hole_moves;
        for dir in Dir::ALL {
            let t = geom.step_raw(hole, dir);
            if t == NO_SQUARE || legal_holes >> t & 1 == 0 {
                continue; // not a legal hole move, not in the list
            }
            if i >= first {
                break;
            }
            if confirmed >> t & 1 != 0 {
                first = i;
                break;
            }
            i += 1;
        }
    }
    if first < limit { first + 1 } else { undo_index.unwrap_or(0) }
}

/// The node that move `m` of the canonical position `p` leads to, or `None` when the move
/// ends the game (see the module documentation).
#[inline]
pub fn child_node(geom: &Geometry, p: &Position, m: Move) -> Option<u64> {
    let (code, j) = child_node_with(geom, p, &Images::of(geom, p), m, &mut |x| canonical_with_code(geom, x))?;
    Some(node_key(code, j))
}

/// The canonical form of `x`, the symmetry that makes it, and its code: the naming of
/// [`child_node`] and [`children`].
#[inline]
fn canonical_with_code(geom: &Geometry, x: &Position) -> Option<(Position, usize, u64)> {
    let (c, k) = canonical(geom, x);
    Some((c, k, c.code()))
}

/// The child of move `m` of `p` as `(name, forbidden index)`, or `None` when the move
/// ends the game or `canon` names no child. `images` are `p`'s ([`Images::of`]); `canon`
/// gives, for a child in any orientation, its canonical form, the symmetry `k` with
/// `child.transformed(k)` that form, and the caller's name for it (its code, or its place
/// in a numbering, found with the symmetry at no extra cost).
#[inline]
fn child_node_with<T>(
    geom: &Geometry,
    p: &Position,
    images: &Images,
    m: Move,
    canon: &mut impl FnMut(&Position) -> Option<(Position, usize, T)>,
) -> Option<(T, usize)> {
    let r = play(geom, p, m)?;
    if r.removal != Removal::None {
        let lost = geom.losing_count();
        if r.child.player.count_ones() == lost || r.child.opponent.count_ones() == lost {
            return None;
        }
        return canon(&r.child).map(|(_, _, name)| (name, 0));
    }
    let (c, k, name) = canon(&r.child)?;
    let undo_index = r.undo.map(|u| move_index(geom, &c, transform_move(geom, k, u)));
    Some((name, pred_node_index_of_images(geom, &c, images, undo_index)))
}

/// The children of every move of the canonical position `p`, in move-list order (`None`
/// for a move that ends the game), and the number of moves.
#[inline]
pub fn children(geom: &Geometry, p: &Position) -> ([Option<u64>; MAX_MOVES], usize) {
    let (named, n) = children_with(geom, p, |x| canonical_with_code(geom, x));
    (named.map(|c| c.map(|(code, j)| node_key(code, j))), n)
}

/// [`children`] with each child named by `canon` instead of by its canonical code:
/// `canon` gives, for a child in any orientation, its canonical form, the symmetry `k`
/// with `child.transformed(k)` that form, and the caller's name for it (`None`: no such
/// child). `(name, forbidden index)` per move, in move-list order, and the number of
/// moves. A search over a numbering of the positions names a child by its
/// number, which finds the symmetry that makes the child canonical anyway, so the child
/// is not canonicalised twice. The parent's images are made once for all its moves.
#[inline]
pub fn children_with<T: Copy>(
    geom: &Geometry,
    p: &Position,
    mut canon: impl FnMut(&Position) -> Option<(Position, usize, T)>,
) -> ([Option<(T, usize)>; MAX_MOVES], usize) {
    let list = moves(geom, p);
    let images = Images::of(geom, p);
    let mut out = [None; MAX_MOVES];
    for (slot, &m) in out.iter_mut().zip(list.iter()) {
        *slot = child_node_with(geom, p, &images, m, &mut canon);
    }
    (out, list.len())
}
