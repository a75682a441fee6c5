//! The one way to value a node and its moves from stored records, over one
//! [`RecordSource`]: the solver's memory, a phase group loaded from files, a database
//! read block by block, or records being imported all answer through it.
//!
//! * [`node_value`]: the value of node `(position, j)`;
//! * [`moves::move_values`]: what every move of a position is worth to the mover, each
//!   child looked up once (`verify --deep`, `interesting`, `query` and the resolution of
//!   elided losses all use it);
//! * [`resolve::resolve_record`]: an elided loss distance found again by one ply of search.

pub mod moves;
pub mod resolve;

pub use moves::{MoveValue, move_outcomes_unless_capture_wins, move_values, move_values_unless_capture_wins};
pub use resolve::resolve_record;

use crate::error::Error;
use crate::game::moves::is_immediate_win;
use crate::game::{Geometry, Phase, Position};
use crate::index::GameIndex;
use crate::record::{Outcome, Record};

/// A source of records, by phase and index.
pub trait RecordSource {
    /// The position index the records are ordered by.
    fn index(&self) -> &GameIndex;

    /// The phase and index of a position (any symmetric image): by default the
    /// combinatorial rank of [`RecordSource::index`]; a database answers through its
    /// lookup backend.
    fn locate(&self, pos: &Position) -> Result<(Phase, u64), Error> {
        locate(self.index(), pos)
    }

    /// The record of position `idx` of `phase`.
    fn record(&self, phase: Phase, idx: u64) -> Result<Record, Error>;

    /// The record of position `idx` of `phase`, of which `pos` is a symmetric image: a
    /// source that must search to complete a record starts from `pos` instead of
    /// unranking `idx`.
    fn record_of(&self, pos: &Position, phase: Phase, idx: u64) -> Result<Record, Error> {
        let _ = pos;
        self.record(phase, idx)
    }

    /// A hint that the records of these positions (phase and index each) are about to be
    /// read, one after another: a source that decodes blocks of records may decode the
    /// ones it lacks now, in parallel. It must not change any answer. By default nothing.
    fn will_read(&self, located: &[(Phase, u64)]) {
        let _ = located;
    }

    /// A hint, after [`RecordSource::will_read`], that the records of these positions
    /// (each as played, with its phase and index) are about to be read, and that any
    /// stored as an elided loss will be resolved from its own children: a source that
    /// decodes blocks may decode all those grandchildren's blocks now, in one go, rather
    /// than a child at a time. It must not change any answer. By default nothing.
    fn will_resolve(&self, children: &[(Position, Phase, u64)]) {
        let _ = children;
    }

    /// Whether [`RecordSource::will_resolve`] does anything, so that a caller need not
    /// gather its list when it does not. By default not; a source that implements
    /// `will_resolve` says yes.
    fn wants_resolve_hint(&self) -> bool {
        false
    }
}

/// The phase and index of a position by the combinatorial rank.
pub fn locate(index: &GameIndex, pos: &Position) -> Result<(Phase, u64), Error> {
    let ph = pos.phase();
    let p =
        index.phase(ph).ok_or_else(|| Error::InvalidArgument(format!("phase {ph} is not in the database's range")))?;
    Ok((ph, p.index_of(pos)))
}

/// The value of node `(pos, j)` for its side to move: `pos` is any image of the position
/// and `j` the forbidden index in the canonical form's move list (0: nothing forbidden).
/// An immediate win needs no record.
pub fn node_value(geom: &Geometry, src: &impl RecordSource, pos: &Position, j: usize) -> Result<Outcome, Error> {
    if is_immediate_win(geom, pos) {
        return Ok(Outcome::Win(1));
    }
    let (ph, idx) = src.locate(pos)?;
    Ok(src.record_of(pos, ph, idx)?.node(j))
}

/// The best of some outcomes for the side that chooses (`Loss(0)` of none): a win beats
/// a draw beats a loss, a faster win and a slower loss are better.
pub fn best(outcomes: impl Iterator<Item = Outcome>) -> Outcome {
    outcomes
        .fold(None, |acc: Option<Outcome>, o| match acc {
            Some(a) if !o.better_than(a) => Some(a),
            _ => Some(o),
        })
        .unwrap_or(Outcome::Loss(0))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn best_prefers_fast_wins_then_draws_then_slow_losses() {
        use Outcome::*;
        assert_eq!(best([Loss(3), Win(9), Draw, Win(4)].into_iter()), Win(4));
        assert_eq!(best([Loss(3), Draw, Loss(8)].into_iter()), Draw);
        assert_eq!(best([Loss(3), Loss(8)].into_iter()), Loss(8));
        assert_eq!(best(std::iter::empty()), Loss(0));
    }
}
