//! Three classes of positions worth a puzzle, after the analysis in "Strongly solved
//! Ostle" (Takizawa, PeerJ Computer Science 9:e1560, 2023), counted over whole phases.
//!
//! Every class is about the **base node** of a position (nothing forbidden: the position
//! as set up, not reached by a move that constrains the reply) and the values of its
//! moves for the side to move:
//!
//! * [`Class::DrawNoCapture`]: the position is a draw, the side to move has at least one
//!   capture (a move that removes an opponent piece), and every capture loses.
//! * [`Class::Sacrifice`]: the position is a win, and every winning move removes one of
//!   the mover's own pieces ("must sacrifice": no other move wins at all).
//! * [`Class::HoleOnly`]: the position is a win, and every winning move is a hole move.
//!
//! Beside the strict "every winning move", [`ClassCounts::fastest`] counts the weaker
//! reading "every move that wins in the optimal number of plies" (a position where a
//! slower non-sacrifice also wins counts there, not in the strict count). Immediate wins
//! (a capture wins at once) are in no class.
//!
//! The fast [`sweep_phase`] values every move from the loaded phase records (the machinery
//! of `verify --deep`); [`naive_phase`] asks a [`Store`] one position at a time, and a
//! test checks that both agree.

use crate::analysis::verify::sweep;
use crate::error::Error;
use crate::game::moves::{Move, Removal};
use crate::game::{Geometry, Phase, Position};
use crate::probe::{MoveValue, RecordSource, move_values_unless_capture_wins};
use crate::progress::Reporter;
use crate::record::Outcome;
use crate::store::Store;

/// A class of interesting positions.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Class {
    /// A draw where the side to move can capture, but every capture loses.
    DrawNoCapture,
    /// A win where every winning move sacrifices one of the mover's own pieces.
    Sacrifice,
    /// A win where every winning move is a hole move.
    HoleOnly,
}

impl Class {
    /// The three classes.
    pub const ALL: [Class; 3] = [Class::DrawNoCapture, Class::Sacrifice, Class::HoleOnly];

    /// The name on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Class::DrawNoCapture => "draw-no-capture",
            Class::Sacrifice => "sacrifice",
            Class::HoleOnly => "hole-only",
        }
    }

    /// Parse a name.
    pub fn parse(name: &str) -> Result<Class, Error> {
        Class::ALL.into_iter().find(|c| c.name() == name).ok_or_else(|| {
            Error::InvalidArgument(format!(
                "unknown class `{name}`: expected one of {}",
                Class::ALL.map(|c| c.name()).join(", ")
            ))
        })
    }
}

impl std::str::FromStr for Class {
    type Err = Error;
    fn from_str(s: &str) -> Result<Class, Error> {
        Class::parse(s)
    }
}

/// Which classes a position is in: `(class, strict, fastest)` per class, where `strict`
/// is the definition of the module documentation and `fastest` its weaker reading (for
/// `DrawNoCapture` both are the same).
pub fn classify(value: Outcome, moves: &[MoveValue]) -> [(Class, bool, bool); 3] {
    let wins = |c: &&MoveValue| matches!(c.outcome, Outcome::Win(_));
    let is_hole = |c: &MoveValue| matches!(c.mv, Move::Hole { .. });
    let captures = || moves.iter().filter(|c| c.removal == Removal::Opponent);
    let draw_no_capture = value == Outcome::Draw
        && captures().next().is_some()
        && captures().all(|c| matches!(c.outcome, Outcome::Loss(_)));
    let (mut sac, mut hole, mut sac_fast, mut hole_fast) = (false, false, false, false);
    if let Outcome::Win(_) = value {
        let winning: Vec<&MoveValue> = moves.iter().filter(wins).collect();
        let fastest: Vec<&MoveValue> = moves.iter().filter(|c| c.outcome == value).collect();
        sac = !winning.is_empty() && winning.iter().all(|c| c.removal == Removal::Own);
        hole = !winning.is_empty() && winning.iter().all(|c| is_hole(c));
        sac_fast = !fastest.is_empty() && fastest.iter().all(|c| c.removal == Removal::Own);
        hole_fast = !fastest.is_empty() && fastest.iter().all(|c| is_hole(c));
    }
    [
        (Class::DrawNoCapture, draw_no_capture, draw_no_capture),
        (Class::Sacrifice, sac, sac_fast),
        (Class::HoleOnly, hole, hole_fast),
    ]
}

/// One example position.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Example {
    /// The canonical position.
    pub position: Position,
    /// Its value (base node).
    pub value: Outcome,
    /// Its moves, in move-list order.
    pub moves: Vec<MoveValue>,
}

/// The counts of one class in one phase.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ClassCounts {
    /// Positions in the class (strict definition).
    pub count: u64,
    /// Positions in the class under the weaker "every fastest winning move" reading.
    pub fastest: u64,
    /// The first examples (strict definition), in index order.
    pub examples: Vec<Example>,
}

/// The counts of the three classes in one phase, indexed like [`Class::ALL`].
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PhaseCounts {
    /// Positions of the phase.
    pub positions: u64,
    /// Per class.
    pub classes: [ClassCounts; 3],
}

impl PhaseCounts {
    fn add(&mut self, pos: &Position, value: Outcome, moves: &[MoveValue], list: usize) {
        self.positions += 1;
        for (k, (_, strict, fast)) in classify(value, moves).into_iter().enumerate() {
            let c = &mut self.classes[k];
            c.count += strict as u64;
            c.fastest += fast as u64;
            if strict && c.examples.len() < list {
                c.examples.push(Example { position: *pos, value, moves: moves.to_vec() });
            }
        }
    }

    fn merge(&mut self, other: PhaseCounts, list: usize) {
        self.positions += other.positions;
        for (a, b) in self.classes.iter_mut().zip(other.classes) {
            a.count += b.count;
            a.fastest += b.fastest;
            for e in b.examples {
                if a.examples.len() < list {
                    a.examples.push(e);
                }
            }
        }
    }
}

/// Count the classes over every position of `phase` in parallel, from loaded values (the
/// phase's group in full and the group below as base values: [`crate::working::group::GroupValues`]),
/// keeping up to `list` examples per class. A position's value is its stored base value.
pub fn sweep_phase(
    geom: &Geometry,
    sol: &(impl RecordSource + Sync),
    phase: Phase,
    list: usize,
    reporter: &dyn Reporter,
) -> PhaseCounts {
    sweep(
        sol,
        phase,
        &format!("interesting {phase}"),
        reporter,
        |acc: &mut PhaseCounts, pos, i| {
            // An immediate win is in no class; so is a position whose records cannot be
            // read (only a damaged source: `verify --deep` reports those).
            match (move_values_unless_capture_wins(geom, sol, pos), sol.record(phase, i)) {
                (Ok(Some(moves)), Ok(rec)) => acc.add(pos, rec.base, &moves, list),
                _ => acc.positions += 1,
            }
        },
        |total, part| total.merge(part, list),
    )
}

/// The same counts as [`sweep_phase`], the obvious way: every position of `phase` in
/// index order, one at a time, through [`Store::probe`] and [`Store::moves`]. For
/// tests on small boards.
pub fn naive_phase(db: &Store, phase: Phase, list: usize) -> Result<PhaseCounts, Error> {
    let index = db.index().phase(phase).ok_or_else(|| Error::InvalidArgument(format!("no phase {phase}")))?;
    let mut out = PhaseCounts::default();
    for i in 0..index.len() {
        let pos = index.position_at(i);
        let value = db.probe(&pos, None)?;
        out.add(&pos, value, &db.moves(&pos)?, list);
    }
    Ok(out)
}
