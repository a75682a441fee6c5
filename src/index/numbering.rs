//! The global numbering of a whole game's positions: every phase in solving order, each
//! by its dense index, one after another (the breadth-first search over positions and
//! the first-depth file of a stored search use it).

use crate::error::Error;
use crate::game::{Geometry, Phase, Position};
use crate::index::{GameIndex, Located};

/// The global numbering of positions: every phase of the game in solving order, each by
/// its dense index, one after another.
#[derive(Clone, Debug)]
pub struct GameNumbering {
    index: GameIndex,
    /// `starts[s]`: the global number of phase slot `s`'s first position; one more entry
    /// holds the total.
    starts: Vec<u64>,
    /// `slot_of[player * 32 + opponent]`: the phase slot of that phase, or `u8::MAX`.
    slot_of: Vec<u8>,
}

impl GameNumbering {
    /// Number every position of every phase of the game on `geom` (all piece counts).
    pub fn build(geom: &Geometry) -> Result<GameNumbering, Error> {
        GameNumbering::build_max(geom, 2 * geom.start_pieces())
    }

    /// Number every position of the phases of `geom` with at most `max_pieces` pieces:
    /// those a game from [`Position::start`](crate::game::Position::start) of
    /// [`Phase::start_of`]`(geom, max_pieces)` can reach (the universe of the published
    /// solver's `-s N` run).
    pub fn build_max(geom: &Geometry, max_pieces: u32) -> Result<GameNumbering, Error> {
        let index = GameIndex::build(geom, max_pieces)?;
        let mut starts = vec![0u64];
        let mut slot_of = vec![u8::MAX; 32 * 32];
        for (s, ph) in index.phases().iter().enumerate() {
            starts.push(starts[s] + ph.len());
            let p = ph.phase();
            slot_of[(p.player * 32 + p.opponent) as usize] = s as u8;
        }
        Ok(GameNumbering { index, starts, slot_of })
    }

    /// The number of positions of the game.
    pub fn len(&self) -> u64 {
        self.starts[self.starts.len() - 1]
    }

    /// The phases, in solving order.
    pub fn phases(&self) -> Vec<Phase> {
        self.index.phases().iter().map(|p| p.phase()).collect()
    }

    /// The phase slot of `pos`, if its phase is live (piece counts checked, nothing else).
    #[inline]
    pub fn slot(&self, pos: &Position) -> Option<usize> {
        let (a, b) = (pos.player.count_ones(), pos.opponent.count_ones());
        match self.slot_of[(a * 32 + b) as usize] {
            u8::MAX => None,
            s => Some(s as usize),
        }
    }

    /// The global number and phase slot of a valid position (any orientation) of a live
    /// phase.
    #[inline]
    pub fn global_of(&self, pos: &Position) -> Option<(u64, usize)> {
        let s = self.slot(pos)?;
        Some((self.starts[s] + self.index.phases()[s].index_of(pos), s))
    }

    /// [`Self::global_of`] with the rest of what [`crate::index::PhaseIndex::locate`]
    /// finds: the global number, the phase slot, and where `pos` is in its phase
    /// (`index` there is the phase's own number).
    #[inline]
    pub fn locate(&self, pos: &Position) -> Option<(u64, usize, Located)> {
        let s = self.slot(pos)?;
        let at = self.index.phases()[s].locate(pos);
        Some((self.starts[s] + at.index, s, at))
    }

    /// The canonical position with global number `g < len()`.
    #[inline]
    pub fn position_at(&self, g: u64) -> Position {
        let s = self.starts.partition_point(|&x| x <= g) - 1;
        self.index.phases()[s].position_at(g - self.starts[s])
    }

    /// The global number of the first position of phase slot `slot` (`slot ==
    /// phases().len()`: the total).
    pub fn start(&self, slot: usize) -> u64 {
        self.starts[slot]
    }

    /// The position index the numbers are made of.
    pub fn index(&self) -> &GameIndex {
        &self.index
    }

    /// True when there is no position (never for a real board).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}
