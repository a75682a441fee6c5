//! Canonical form: the image with the smallest published code among the 8 symmetric
//! images of a position (OSTLE.md section 5).

use crate::game::geometry::Geometry;
use crate::game::position::Position;

/// The canonical form of `pos` and a symmetry `k` with `pos.transformed(k) == canonical`.
///
/// The canonical form is the image with the smallest [`Position::code`]. Because the
/// player set occupies the highest bits of the code, the player set's images decide
/// first; the opponent set and the hole only break ties.
#[inline]
pub fn canonical(geom: &Geometry, pos: &Position) -> (Position, usize) {
    let mut best_player = u32::MAX;
    let mut ties = 0u8;
    for k in 0..8 {
        let img = geom.sym_set(k, pos.player);
        if img < best_player {
            best_player = img;
            ties = 1 << k;
        } else if img == best_player {
            ties |= 1 << k;
        }
    }
    let best_k =
        if ties.count_ones() > 1 { least_rest(geom, pos, ties as u32).0 } else { ties.trailing_zeros() as usize };
    (pos.transformed(geom, best_k), best_k)
}

/// Among the symmetries in the bit set `syms` (bit `k`: symmetry `k`; not empty), the
/// first whose image of `pos` has the smallest rest of the code, opponent set and hole
/// (`set << 5 | square`): that symmetry, that rest, and whether another symmetry of
/// `syms` gives the same rest. The tie-break of the canonical form among the symmetries
/// that give the smallest player set.
#[inline]
pub fn least_rest(geom: &Geometry, pos: &Position, syms: u32) -> (usize, u64, bool) {
    debug_assert!(syms != 0);
    let (mut best, mut best_k, mut ties) = (u64::MAX, 0, 0);
    let mut t = syms;
    while t != 0 {
        let k = t.trailing_zeros() as usize;
        t &= t - 1;
        let rest = (geom.sym_set(k, pos.opponent) as u64) << 5 | geom.sym_square(k, pos.hole()) as u64;
        if rest < best {
            (best, best_k, ties) = (rest, k, 1);
        } else if rest == best {
            ties += 1;
        }
    }
    (best_k, best, ties > 1)
}

/// True when `pos` is its own canonical form.
#[inline]
pub fn is_canonical(geom: &Geometry, pos: &Position) -> bool {
    canonical(geom, pos).0 == *pos
}

/// The canonical code of a position.
#[inline]
pub fn canonical_code(geom: &Geometry, pos: &Position) -> u64 {
    canonical(geom, pos).0.code()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::notation::{format_board, parse_board};

    #[test]
    fn published_canonical_forms() {
        let g = Geometry::standard();
        let init = parse_board(g, "22222-00000-00300-00000-11111").unwrap();
        let (c, _) = canonical(g, &init);
        assert_eq!(format_board(g, &c), "11111-00000-00300-00000-22222");
        assert_eq!(c.code(), 34_326_183_948);

        let ex = parse_board(g, "00100-11200-00001-31022-20020").unwrap();
        assert!(is_canonical(g, &ex));
        assert_eq!(ex.code(), 88_068_631_564_303);

        let odd = parse_board(g, "00000-00000-00001-11112-22223").unwrap();
        let (c, _) = canonical(g, &odd);
        assert_eq!(format_board(g, &c), "32222-21111-10000-00000-00000");
        assert_eq!(c.code(), 2_130_303_780_800);
    }

    #[test]
    fn canonical_is_invariant_under_symmetry() {
        let g = Geometry::standard();
        let p = parse_board(g, "00100-11200-00001-31022-20020").unwrap();
        let (c, k) = canonical(g, &p);
        assert_eq!(p.transformed(g, k), c);
        for j in 0..8 {
            assert_eq!(canonical(g, &p.transformed(g, j)).0, c);
        }
    }
}
