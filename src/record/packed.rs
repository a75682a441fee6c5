//! The packed record of a position: 64 bits, the same in the solver's memory, its phase
//! files and (after decoding) the value files.
//!
//! | bits | field |
//! |---|---|
//! | 0..16 | base value code: the value of every node whose forbidden move is not the special one |
//! | 16..32 | special value code (meaningful only with a special move) |
//! | 32..37 | special move `s`, 1-based (0: none) |
//! | 37..64 | zero |
//!
//! A value file may *elide loss distances*: every loss, base or special, is stored as
//! [`ELIDED_LOSS`] and found again by one ply of search (the probe layer resolves it).

use crate::record::Outcome;
use crate::record::value::{Val, is_loss, val_outcome};

/// The value code stored for every loss by a file that elides loss distances (the code
/// of `Loss(0)`).
pub const ELIDED_LOSS: Val = 1;

/// The stored facts about one position, decoded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Record {
    /// Value of every node whose forbidden move is not the special one.
    pub base: Outcome,
    /// The special move (1-based) and the value of the node that forbids it.
    pub special: Option<(u32, Outcome)>,
}

impl Record {
    /// The value of node `(position, j)`: the special value if `j` is the special move.
    #[inline]
    pub fn node(&self, j: usize) -> Outcome {
        match self.special {
            Some((s, v)) if s as usize == j => v,
            _ => self.base,
        }
    }
}

/// A packed record (see the module documentation).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[repr(transparent)]
pub struct Packed(pub u64);

impl Packed {
    const SPECIAL_SHIFT: u32 = 16;
    const MOVE_SHIFT: u32 = 32;

    /// A record of a base value, and a special move `s` (1-based, 0: none) with its value.
    #[inline]
    pub fn new(base: Val, s: u32, special: Val) -> Packed {
        debug_assert!(s < 32);
        if s == 0 {
            Packed(base as u64)
        } else {
            Packed(base as u64 | (special as u64) << Self::SPECIAL_SHIFT | (s as u64) << Self::MOVE_SHIFT)
        }
    }

    /// The base value code.
    #[inline]
    pub fn base(self) -> Val {
        self.0 as Val
    }

    /// The special move, 1-based (0: none).
    #[inline]
    pub fn special_move(self) -> u32 {
        (self.0 >> Self::MOVE_SHIFT) as u32 & 31
    }

    /// The special value code (meaningful only with a special move).
    #[inline]
    pub fn special(self) -> Val {
        (self.0 >> Self::SPECIAL_SHIFT) as Val
    }

    /// The same record with another base value code.
    #[inline]
    pub fn with_base(self, v: Val) -> Packed {
        Packed(self.0 & !0xffff | v as u64)
    }

    /// The same record with another special value code (the special move kept).
    #[inline]
    pub fn with_special(self, v: Val) -> Packed {
        Packed(self.0 & !(0xffff << Self::SPECIAL_SHIFT) | (v as u64) << Self::SPECIAL_SHIFT)
    }

    /// The same record without its special move.
    #[inline]
    pub fn without_special(self) -> Packed {
        Packed(self.base() as u64)
    }

    /// The code of node `(position, j)`: the special value if `j` is the special move.
    #[inline]
    pub fn node_val(self, j: usize) -> Val {
        let s = self.special_move() as usize;
        if s != 0 && s == j { self.special() } else { self.base() }
    }

    /// The value of node `(position, j)`.
    #[inline]
    pub fn node(self, j: usize) -> Outcome {
        val_outcome(self.node_val(j))
    }

    /// Decoded.
    #[inline]
    pub fn record(self) -> Record {
        let s = self.special_move();
        Record { base: val_outcome(self.base()), special: (s != 0).then(|| (s, val_outcome(self.special()))) }
    }

    /// With its loss distances elided: a base or special value that is a loss becomes
    /// [`ELIDED_LOSS`].
    #[inline]
    pub fn elided(self) -> Packed {
        let mut r = self;
        if is_loss(r.base()) {
            r = r.with_base(ELIDED_LOSS);
        }
        if r.special_move() != 0 && is_loss(r.special()) {
            r = r.with_special(ELIDED_LOSS);
        }
        r
    }

    /// True when the base value is an elided loss.
    #[inline]
    pub fn base_elided(self) -> bool {
        self.base() == ELIDED_LOSS
    }

    /// True when there is a special move and its value is an elided loss.
    #[inline]
    pub fn special_elided(self) -> bool {
        self.special_move() != 0 && self.special() == ELIDED_LOSS
    }

    /// True when the record holds an elided loss (base or special value): it needs one
    /// ply of search before use.
    #[inline]
    pub fn needs_resolving(self) -> bool {
        self.base_elided() || self.special_elided()
    }

    /// True when the record stores a loss with a distance (a value a file that elides
    /// them never holds).
    #[inline]
    pub fn has_loss_distance(self) -> bool {
        (is_loss(self.base()) && !self.base_elided())
            || (self.special_move() != 0 && is_loss(self.special()) && !self.special_elided())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::value::{loss, win};

    #[test]
    fn fields_round_trip_and_a_missing_special_move_keeps_no_special_value() {
        let r = Packed::new(win(5), 7, loss(4));
        assert_eq!((r.base(), r.special_move(), r.special()), (win(5), 7, loss(4)));
        assert_eq!(r.record(), Record { base: Outcome::Win(5), special: Some((7, Outcome::Loss(4))) });
        assert_eq!((r.node(7), r.node(0), r.node(3)), (Outcome::Loss(4), Outcome::Win(5), Outcome::Win(5)));
        assert_eq!(Packed::new(win(5), 0, loss(4)), Packed(win(5) as u64));
        assert_eq!(r.without_special(), Packed::new(win(5), 0, 0));
        assert_eq!(r.with_base(0).record().base, Outcome::Draw);
    }

    #[test]
    fn eliding_keeps_wins_and_draws_and_marks_every_loss() {
        let r = Packed::new(loss(9), 3, loss(2)).elided();
        assert_eq!((r.base(), r.special()), (ELIDED_LOSS, ELIDED_LOSS));
        assert!(r.needs_resolving() && !r.has_loss_distance());
        let w = Packed::new(win(9), 3, 0);
        assert_eq!(w.elided(), w);
        assert!(!w.needs_resolving());
        assert!(Packed::new(win(2), 1, loss(6)).has_loss_distance());
        // A special value of a record without a special move is not a value at all.
        assert!(!Packed((ELIDED_LOSS as u64) << 16).needs_resolving());
    }
}
