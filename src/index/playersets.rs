//! Canonical player sets and the table that finds the canonical slot of any player set.

use crate::game::geometry::{Geometry, squares_of};
use crate::index::binomial;

/// Colex rank of a set among the sets of the same size: `sum C(s_i, i + 1)` over its
/// elements `s_0 < s_1 < ...`. Colex order is ascending integer order of the bit masks.
#[inline]
pub fn colex_rank(set: u32) -> u64 {
    let mut r = 0u64;
    for (i, s) in squares_of(set).enumerate() {
        r += binomial(s, i as u32 + 1);
    }
    r
}

/// The `k`-subset of `0..n` with colex rank `rank` (`rank < C(n, k)`). Each element is
/// the largest `c` below the previous one with `C(c, i) <= rank`, found by stepping down,
/// so a whole set costs at most `n` steps.
#[inline]
pub fn colex_unrank(mut rank: u64, k: u32, n: u32) -> u32 {
    debug_assert!(rank < binomial(n, k), "rank {rank} of a {k}-subset of 0..{n}");
    let mut set = 0u32;
    let mut c = n;
    for i in (1..=k).rev() {
        // C(i - 1, i) = 0 <= rank, so the step down stops at i - 1 at the latest.
        c -= 1;
        while binomial(c, i) > rank {
            c -= 1;
        }
        rank -= binomial(c, i);
        set |= 1 << c;
    }
    set
}

/// Entry of the lookup table: the canonical slot of a player set and the symmetries that
/// map the set onto that canonical set. Four bytes, so that the table of five-piece sets
/// (53,130 entries, read at random by every position located) takes 212 KB, not 425.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Lookup {
    slot: u16,
    syms: u8,
}

/// All player sets of one size: the canonical ones (smallest of their 8 images) ascending,
/// with their stabilisers, and a table from the colex rank of any set to its canonical slot.
#[derive(Clone, Debug)]
pub struct PlayerSets {
    size: u32,
    canon: Vec<u32>,
    stabiliser: Vec<u8>,
    by_colex: Vec<Lookup>,
}

impl PlayerSets {
    /// Build the tables for sets of `size` pieces on `geom`.
    pub fn build(geom: &Geometry, size: u32) -> PlayerSets {
        let total = binomial(geom.squares(), size);
        let mut canon = Vec::new();
        let mut stabiliser = Vec::new();
        let mut min_of = Vec::with_capacity(total as usize);
        let mut syms_of = Vec::with_capacity(total as usize);
        for r in 0..total {
            let set = colex_unrank(r, size, geom.squares());
            let imgs: [u32; 8] = std::array::from_fn(|k| geom.sym_set(k, set));
            let min = *imgs.iter().min().expect("8 images");
            let mut syms = 0u8;
            for (k, &img) in imgs.iter().enumerate() {
                if img == min {
                    syms |= 1 << k;
                }
            }
            if min == set {
                canon.push(set);
                stabiliser.push(syms);
            }
            min_of.push(min);
            syms_of.push(syms);
        }
        // Colex order is ascending integer order, so `canon` is already sorted.
        debug_assert!(canon.windows(2).all(|w| w[0] < w[1]));
        // 6,814 on the largest board the geometry allows (5x5, five pieces a side).
        assert!(canon.len() <= u16::MAX as usize + 1, "{} canonical sets overflow the table's slots", canon.len());
        let by_colex = min_of
            .iter()
            .zip(&syms_of)
            .map(|(&min, &syms)| Lookup {
                slot: canon.binary_search(&min).expect("the minimum image is canonical") as u16,
                syms,
            })
            .collect();
        PlayerSets { size, canon, stabiliser, by_colex }
    }

    /// Pieces per set.
    pub fn size(&self) -> u32 {
        self.size
    }

    /// Number of canonical sets.
    pub fn len(&self) -> usize {
        self.canon.len()
    }

    /// True when there is none.
    pub fn is_empty(&self) -> bool {
        self.canon.is_empty()
    }

    /// The canonical set in `slot`.
    #[inline]
    pub fn set(&self, slot: usize) -> u32 {
        self.canon[slot]
    }

    /// The stabiliser of the canonical set in `slot`, as a mask of symmetries (bit 0, the
    /// identity, always set).
    #[inline]
    pub fn stabiliser(&self, slot: usize) -> u8 {
        self.stabiliser[slot]
    }

    /// The canonical slot of any set of this size and the mask of symmetries mapping it
    /// onto the canonical set.
    #[inline]
    pub fn lookup(&self, set: u32) -> (usize, u8) {
        let e = self.by_colex[colex_rank(set) as usize];
        (e.slot as usize, e.syms)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn colex_round_trips_in_integer_order() {
        let mut prev = 0u32;
        for r in 0..binomial(25, 5) {
            let s = colex_unrank(r, 5, 25);
            assert_eq!(s.count_ones(), 5);
            assert_eq!(colex_rank(s), r);
            assert!(r == 0 || s > prev);
            prev = s;
        }
    }

    #[test]
    fn a_lookup_entry_takes_four_bytes() {
        assert_eq!(std::mem::size_of::<Lookup>(), 4);
        assert_eq!(PlayerSets::build(Geometry::standard(), 5).len(), 6_814);
    }

    #[test]
    fn every_player_set_maps_to_its_smallest_image() {
        for side in [3, 4, 5] {
            let g = Geometry::new(side, 3).expect("a board side the geometry allows");
            for size in 1..=(g.squares() / 2).min(5) {
                let ps = PlayerSets::build(&g, size);
                for r in 0..binomial(g.squares(), size) {
                    let set = colex_unrank(r, size, g.squares());
                    let (slot, syms) = ps.lookup(set);
                    let min = (0..8).map(|k| g.sym_set(k, set)).min().unwrap();
                    assert_eq!(ps.set(slot), min);
                    for k in 0..8 {
                        assert_eq!(
                            syms >> k & 1 == 1,
                            g.sym_set(k, set) == min,
                            "{side}x{side}, {set:#b}, symmetry {k}"
                        );
                    }
                }
            }
        }
    }
}
