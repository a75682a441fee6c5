//! A position: the side to move ("player"), the other side ("opponent") and the hole.

use crate::error::Error;
use crate::game::geometry::Geometry;

/// A position seen from the side to move. Square sets are bit masks (`1 << s`).
///
/// A `Position` carries no geometry; functions that need the board take a [`Geometry`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Position {
    /// Squares of the side to move.
    pub player: u32,
    /// Squares of the other side.
    pub opponent: u32,
    /// The hole's square.
    pub hole: u8,
}

/// Phase `(a, b)`: `a` pieces for the side to move, `b` for the other side.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Phase {
    /// Pieces of the side to move.
    pub player: u32,
    /// Pieces of the other side.
    pub opponent: u32,
}

impl Phase {
    /// Phase `(player, opponent)`.
    pub const fn new(player: u32, opponent: u32) -> Phase {
        Phase { player, opponent }
    }

    /// The phase seen from the other side.
    pub const fn swapped(self) -> Phase {
        Phase { player: self.opponent, opponent: self.player }
    }

    /// Total pieces on the board.
    pub const fn pieces(self) -> u32 {
        self.player + self.opponent
    }

    /// All live phases of a geometry with at most `max_pieces` pieces on the board, in
    /// solving order (fewest pieces first; `(5,4)` before `(4,5)`).
    pub fn all(geom: &Geometry, max_pieces: u32) -> Vec<Phase> {
        let lo = geom.min_pieces();
        let hi = geom.start_pieces();
        let mut phases = Vec::new();
        for total in 2 * lo..=2 * hi {
            for a in (lo..=hi).rev() {
                let b = total.wrapping_sub(a);
                if (lo..=hi).contains(&b) && total <= max_pieces {
                    phases.push(Phase::new(a, b));
                }
            }
        }
        phases
    }

    /// The phase a game restricted to at most `max_pieces` pieces starts in, as the
    /// published solver's `-s N` runs it: `(ceil(N/2), floor(N/2))`, the side to move
    /// with the extra piece (`(5,5)` for 10, `(5,4)` for 9, `(4,4)` for 8 on 5x5). `None`
    /// when no live phase of `geom` has that many pieces.
    pub fn start_of(geom: &Geometry, max_pieces: u32) -> Option<Phase> {
        let phase = Phase::new(max_pieces.div_ceil(2), max_pieces / 2);
        let live = geom.min_pieces()..=geom.start_pieces();
        (live.contains(&phase.player) && live.contains(&phase.opponent)).then_some(phase)
    }
}

impl std::fmt::Display for Phase {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "({},{})", self.player, self.opponent)
    }
}

impl Position {
    /// A position from its three parts (not checked; see [`Position::validate`]).
    #[inline]
    pub const fn new(player: u32, opponent: u32, hole: u32) -> Position {
        Position { player, opponent, hole: hole as u8 }
    }

    /// The initial position of a geometry, side to move on the last row.
    pub fn initial(geom: &Geometry) -> Position {
        let s = geom.start_pieces();
        Position::start(geom, Phase::new(s, s))
    }

    /// The start of a game with `phase.player` pieces for the side to move (on the last
    /// row) and `phase.opponent` for the other side (on the first row), the hole at the
    /// centre: [`Position::initial`] for the game's own phase, and for a smaller one the
    /// start the published solver's `-s 8` and `-s 9` runs search from (`Phase::start_of`;
    /// on 5x5 four pieces take the first four squares of their row, as there). A row with
    /// fewer pieces than squares has them centred, rounded toward square 0.
    pub fn start(geom: &Geometry, phase: Phase) -> Position {
        let n = geom.side();
        let row = |k: u32| ((1u32 << k) - 1) << ((n - k) / 2);
        Position::new(row(phase.player) << (n * (n - 1)), row(phase.opponent), geom.start_hole())
    }

    /// The hole's square.
    #[inline]
    pub fn hole(&self) -> u32 {
        self.hole as u32
    }

    /// All occupied squares (both sides' pieces, not the hole).
    #[inline]
    pub fn occupied(&self) -> u32 {
        self.player | self.opponent
    }

    /// The phase of this position.
    #[inline]
    pub fn phase(&self) -> Phase {
        Phase::new(self.player.count_ones(), self.opponent.count_ones())
    }

    /// The same board seen from the other side.
    #[inline]
    pub fn swapped(&self) -> Position {
        Position { player: self.opponent, opponent: self.player, hole: self.hole }
    }

    /// The published 55-bit code: bits 0..4 hole, 5..29 opponent, 30..54 player.
    #[inline]
    pub fn code(&self) -> u64 {
        self.hole as u64 | (self.opponent as u64) << 5 | (self.player as u64) << 30
    }

    /// The position with the given published code (not checked).
    #[inline]
    pub fn from_code(code: u64) -> Position {
        Position {
            hole: (code & 31) as u8,
            opponent: ((code >> 5) & 0x1ff_ffff) as u32,
            player: ((code >> 30) & 0x1ff_ffff) as u32,
        }
    }

    /// Check that this is a live position of `geom`: sets inside the board and disjoint,
    /// the hole on a free square, each side with `start-1` or `start` pieces.
    pub fn validate(&self, geom: &Geometry) -> Result<(), Error> {
        let all = geom.all();
        let bad = |why: String| Err(Error::InvalidPosition(why));
        if self.hole() >= geom.squares() {
            return bad(format!("hole square {} is off the board", self.hole));
        }
        if (self.player | self.opponent) & !all != 0 {
            return bad("a piece is off the board".into());
        }
        if self.player & self.opponent != 0 {
            return bad("a square holds pieces of both sides".into());
        }
        if self.occupied() >> self.hole & 1 != 0 {
            return bad(format!("the hole square {} holds a piece", self.hole));
        }
        let (lo, hi) = (geom.min_pieces(), geom.start_pieces());
        for (who, set) in [("the side to move", self.player), ("the other side", self.opponent)] {
            let c = set.count_ones();
            if !(lo..=hi).contains(&c) {
                return bad(format!("{who} has {c} pieces; a live position has {lo} or {hi}"));
            }
        }
        Ok(())
    }

    /// The position under symmetry `k`.
    #[inline]
    pub fn transformed(&self, geom: &Geometry, k: usize) -> Position {
        Position {
            player: geom.sym_set(k, self.player),
            opponent: geom.sym_set(k, self.opponent),
            hole: geom.sym_square(k, self.hole()) as u8,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn code_round_trips_and_matches_the_initial_position_fact() {
        let g = Geometry::standard();
        let p = Position::initial(g);
        assert_eq!(Position::from_code(p.code()), p);
        // The initial position with the side to move at the bottom; its canonical
        // form (side to move on top) has code 34326183948 (OSTLE.md section 3/5).
        let flipped = p.transformed(g, 2);
        assert_eq!(flipped.code(), 34_326_183_948);
    }

    #[test]
    fn phases_in_solving_order() {
        let g = Geometry::standard();
        let ph = Phase::all(g, 10);
        assert_eq!(ph, vec![Phase::new(4, 4), Phase::new(5, 4), Phase::new(4, 5), Phase::new(5, 5)]);
        assert_eq!(Phase::all(g, 8), vec![Phase::new(4, 4)]);
        assert_eq!(Phase::all(g, 9).len(), 3);
    }

    #[test]
    fn validate_rejects_broken_positions() {
        let g = Geometry::standard();
        let ok = Position::initial(g);
        assert!(ok.validate(g).is_ok());
        let mut two = ok;
        two.opponent |= ok.player & ok.player.wrapping_neg();
        assert!(two.validate(g).is_err());
        let mut hole_on_piece = ok;
        hole_on_piece.hole = ok.player.trailing_zeros() as u8;
        assert!(hole_on_piece.validate(g).is_err());
        let mut few = ok;
        few.player &= few.player - 1;
        few.player &= few.player - 1;
        assert!(few.validate(g).is_err());
    }
}
