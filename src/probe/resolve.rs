//! Elided loss distances found again. A value file may store every loss without its
//! distance ([`crate::record::ELIDED_LOSS`]): a lost node's allowed moves all lead to
//! children the opponent wins, wins are stored exactly, and the node loses in one more
//! ply than the longest of those wins. So one ply of search gives the distance back, and
//! nothing is resolved recursively.

use std::path::Path;

use crate::error::{Error, corrupt};
use crate::game::notation::format_board;
use crate::game::{Geometry, Position};
use crate::probe::{RecordSource, best, move_values};
use crate::record::{Outcome, Packed, outcome_val};

/// A packed record read from a file that elides loss distances, with every elided loss
/// replaced by its exact value. `canon` is the record's position (for a special value,
/// its canonical form: the special move's index is the canonical form's); `raw` reads the
/// children as stored.
///
/// A record that claims a loss while a move wins or draws is damage: an error naming
/// `file` and the position, never a wrong answer.
pub fn resolve_record(
    geom: &Geometry,
    raw: &impl RecordSource,
    canon: &Position,
    record: Packed,
    file: &Path,
) -> Result<Packed, Error> {
    if !record.needs_resolving() {
        return Ok(record);
    }
    let options = move_values(geom, raw, canon)?;
    let s = record.special_move() as usize;
    let lost =
        |which: &str, excluded: usize| match best(options.iter().filter(|o| o.index != excluded).map(|o| o.outcome)) {
            v @ Outcome::Loss(_) => Ok(outcome_val(v)),
            v => Err(corrupt(
                file,
                format!(
                    "{}: its {which} value is stored as a loss, but its moves give {v:?}",
                    format_board(geom, canon)
                ),
            )),
        };
    let mut out = record;
    if record.base_elided() {
        out = out.with_base(lost("base", 0)?);
    }
    if record.special_elided() {
        out = out.with_special(lost("special", s)?);
    }
    Ok(out)
}
