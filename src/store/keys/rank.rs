//! The `rank` backend: no keys at all. A code is decoded into a position, checked to be a
//! canonical position of the phase, and numbered by the phase's index tables.

use crate::error::Error;
use crate::game::Position;
use crate::game::symmetry::canonical_code;
use crate::index::PhaseIndex;

use super::{Backend, KeyIndex};

/// The key -> index map computed from the index tables of one phase.
#[derive(Clone, Debug)]
pub struct Rank {
    // A clone of the phase's index: its player set tables are shared (`Arc`), the rest is
    // one offset per canonical player set and the bitmaps of the symmetric ones.
    index: PhaseIndex,
}

impl Rank {
    /// The rank backend of the phase of `index`.
    pub fn new(index: &PhaseIndex) -> Rank {
        Rank { index: index.clone() }
    }

    /// The position with canonical code `code` when it is a canonical position of this
    /// phase.
    fn canonical_position(&self, code: u64) -> Option<Position> {
        if code >> 55 != 0 {
            return None;
        }
        let pos = Position::from_code(code);
        let g = self.index.geometry();
        let phase = self.index.phase();
        let live = pos.validate(g).is_ok()
            && pos.player.count_ones() == phase.player
            && pos.opponent.count_ones() == phase.opponent;
        (live && canonical_code(g, &pos) == code).then_some(pos)
    }
}

impl KeyIndex for Rank {
    fn backend(&self) -> Backend {
        Backend::Rank
    }

    fn len(&self) -> u64 {
        self.index.len()
    }

    fn index_of(&self, code: u64) -> Result<Option<u64>, Error> {
        Ok(self.canonical_position(code).map(|p| self.index.index_of(&p)))
    }

    fn key_bytes(&self) -> u64 {
        0
    }

    fn prepare(&self) {
        self.index.build_bitmaps();
    }
}

#[cfg(test)]
mod tests {
    use super::super::keyfile::testkit::*;
    use super::*;

    #[test]
    fn every_key_maps_to_its_index_and_non_keys_to_none() {
        for index in small_phases() {
            let r = Rank::new(&index);
            assert_eq!(r.len(), index.len());
            assert_eq!(r.key_bytes(), 0);
            let keys = keys_of(&index);
            for (i, &k) in keys.iter().enumerate() {
                assert_eq!(r.index_of(k).unwrap(), Some(i as u64));
            }
            for c in non_keys(&index, &keys) {
                assert_eq!(r.index_of(c).unwrap(), None, "{c:#x}");
            }
        }
    }

    #[test]
    fn keys_of_other_phases_of_the_same_board_are_not_keys() {
        let phases = small_phases();
        for a in &phases {
            let r = Rank::new(a);
            for b in phases.iter().filter(|b| b.phase() != a.phase() && b.geometry() == a.geometry()) {
                for i in (0..b.len()).step_by(7) {
                    assert_eq!(r.index_of(b.position_at(i).code()).unwrap(), None);
                }
            }
        }
    }
}
