//! Answering questions about single positions from stored records: the value of a node
//! and the value of every move, reading only the records it needs.

use crate::error::Error;
use crate::game::forbidden::ChildTable;
use crate::game::moves::{Move, Removal, is_immediate_win, moves, play};
use crate::game::symmetry::canonical;
use crate::game::{Geometry, Phase, Position};
use crate::index::GameIndex;
use crate::record::outcome::Outcome;
use crate::record::{Record, outcome_val, val_outcome};
use crate::store::values::{ELIDED_LOSS, needs_resolving};

/// A source of stored records, by phase and index.
pub trait Records {
    /// The phase and index of a position (any symmetric image): by default the
    /// combinatorial rank of `index`; a database answers through its lookup backend.
    fn locate(&mut self, pos: &Position) -> Result<(Phase, u64), Error>;
    /// The record of position `idx` of `phase`.
    fn record(&mut self, phase: Phase, idx: u64) -> Result<Record, Error>;
    /// The record of position `idx` of `phase`, of which `pos` is a symmetric image: a
    /// source that must search to complete a record starts from `pos` instead of
    /// unranking `idx`.
    fn record_of(&mut self, pos: &Position, phase: Phase, idx: u64) -> Result<Record, Error> {
        let _ = pos;
        self.record(phase, idx)
    }
}

/// Decode a packed record (see [`PhaseValues`]).
pub fn unpack(r: u64) -> Record {
    let s = (r >> 32) as u32 & 31;
    Record { base: val_outcome(r as u16), special: (s != 0).then(|| (s, val_outcome((r >> 16) as u16))) }
}

/// The value of node `(pos, j)` from a record: the special value if `j` is the special move.
pub fn node_value(rec: &Record, j: usize) -> Outcome {
    match rec.special {
        Some((s, v)) if s as usize == j => v,
        _ => rec.base,
    }
}

/// What one move does, for the side that plays it.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct MoveValue {
    /// 1-based index in the move list of the position as given.
    pub index: usize,
    /// The move.
    #[serde(skip)]
    pub mv: Move,
    /// The value of playing it, for the mover.
    pub outcome: Outcome,
    /// What it removes.
    pub removes: &'static str,
}

/// The phase and index of a position by the combinatorial rank.
pub fn locate(index: &GameIndex, pos: &Position) -> Result<(Phase, u64), Error> {
    let ph = pos.phase();
    let p =
        index.phase(ph).ok_or_else(|| Error::InvalidArgument(format!("phase {ph} is not in the database's range")))?;
    Ok((ph, p.index_of(pos)))
}

/// The value of the node the side to move of `pos` faces, with forbidden index `j` (of
/// the canonical form's move list).
pub fn position_value(geom: &Geometry, src: &mut impl Records, pos: &Position, j: usize) -> Result<Outcome, Error> {
    if is_immediate_win(geom, pos) {
        return Ok(Outcome::Win(1));
    }
    let (ph, idx) = src.locate(pos)?;
    Ok(node_value(&src.record_of(pos, ph, idx)?, j))
}

/// The value of every move of `pos` (in `pos`'s own move list order), for the mover.
pub fn move_values(geom: &Geometry, src: &mut impl Records, pos: &Position) -> Result<Vec<MoveValue>, Error> {
    let losing = geom.losing_count();
    let mut out = Vec::new();
    for (i, &m) in moves(geom, pos).iter().enumerate() {
        let r = play(geom, pos, m).expect("listed moves are legal");
        let (outcome, removes) = match r.removal {
            Removal::Opponent if r.child.player.count_ones() == losing => (Outcome::Win(1), "opponent"),
            Removal::Own if r.child.opponent.count_ones() == losing => (Outcome::Loss(1), "own"),
            Removal::Opponent | Removal::Own => {
                let v = position_value(geom, src, &r.child, 0)?;
                (v.parent(), if r.removal == Removal::Own { "own" } else { "opponent" })
            }
            Removal::None => {
                // Immediate wins need no record; only a child with a special move needs
                // its canonical form (to find its forbidden index), the rest is located
                // as played.
                let v = if is_immediate_win(geom, &r.child) {
                    Outcome::Win(1)
                } else {
                    let (ph, idx) = src.locate(&r.child)?;
                    let rec = src.record_of(&r.child, ph, idx)?;
                    match rec.special {
                        None => rec.base,
                        Some(_) => {
                            // The child's forbidden index: its first move back to an image of `pos`.
                            let (c, k) = canonical(geom, &r.child);
                            let back = pos.transformed(geom, k);
                            let j = ChildTable::new(geom, &c).node_index_of_pred(geom, &back, None);
                            node_value(&rec, j)
                        }
                    }
                };
                (v.parent(), "nothing")
            }
        };
        out.push(MoveValue { index: i + 1, mv: m, outcome, removes });
    }
    Ok(out)
}

/// A packed record read from a file that elides loss distances, with every elided loss
/// ([`ELIDED_LOSS`]) replaced by its exact value, found by one ply of search: a lost
/// node's children are all won (so stored with their distances) and its value is the
/// slowest of the losses its allowed moves lead to. `canon` is the record's (canonical)
/// position; `raw` reads the children as stored (nothing is resolved recursively).
///
/// A record that claims a loss while a move wins or draws is damage: an error naming
/// `file` and the position, never a wrong answer.
pub fn resolve_record(
    geom: &Geometry,
    raw: &mut impl Records,
    canon: &Position,
    record: u64,
    file: &std::path::Path,
) -> Result<u64, Error> {
    if !needs_resolving(record) {
        return Ok(record);
    }
    let options = move_values(geom, raw, canon)?;
    let s = (record >> 32) as usize & 31;
    let lost = |which: &str, excluded: usize| -> Result<u64, Error> {
        match crate::analysis::verify::best(options.iter().filter(|o| o.index != excluded).map(|o| o.outcome)) {
            v @ Outcome::Loss(_) => Ok(outcome_val(v) as u64),
            v => Err(crate::error::corrupt(
                file,
                format!(
                    "{}: its {which} value is stored as a loss, but its moves give {v:?}",
                    crate::game::notation::format_board(geom, canon)
                ),
            )),
        }
    };
    let mut out = record;
    if record as u16 == ELIDED_LOSS {
        out = out & !0xffff | lost("base", 0)?;
    }
    if s != 0 && (record >> 16) as u16 == ELIDED_LOSS {
        out = out & !(0xffff << 16) | lost("special", s)? << 16;
    }
    Ok(out)
}
