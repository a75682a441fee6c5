//! What every move of a position is worth to the side that plays it.

use crate::error::Error;
use crate::game::geometry::Dir;
use crate::game::moves::{Move, PerMove, Played, Removal, is_immediate_win, moves, play, play_in_place};
use crate::game::node::pred_node_index;
use crate::game::symmetry::{canonical, canonical_code};
use crate::game::{Geometry, Phase, Position};
use crate::probe::RecordSource;
use crate::record::Outcome;

/// One move of a position with its value for the mover.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MoveValue {
    /// 1-based index in the move list of the position as given.
    pub index: usize,
    /// The move.
    pub mv: Move,
    /// What it removes.
    pub removal: Removal,
    /// The value of playing it, for the mover.
    pub outcome: Outcome,
    /// The position it leads to, seen from the side to move next.
    pub child: Position,
}

/// The value of every move of `pos` (in `pos`'s own move-list order, nothing forbidden),
/// for the mover.
pub fn move_values(geom: &Geometry, src: &impl RecordSource, pos: &Position) -> Result<Vec<MoveValue>, Error> {
    let played = play_all(geom, pos);
    Ok(value_played(geom, src, pos, &played)?.to_vec())
}

/// [`move_values`], or `None` when a move wins at once by a capture (found by playing the
/// moves, not by the solver's bit-parallel test): that is the best any node can do, so no
/// child is looked up. What `verify --deep` and `interesting` sweep with, once per
/// position: the list is held in place, not allocated.
pub fn move_values_unless_capture_wins(
    geom: &Geometry,
    src: &impl RecordSource,
    pos: &Position,
) -> Result<Option<PerMove<MoveValue>>, Error> {
    let played = play_all(geom, pos);
    let losing = geom.losing_count();
    if played.iter().any(|(_, r)| r.removal == Removal::Opponent && r.child.player.count_ones() == losing) {
        return Ok(None);
    }
    value_played(geom, src, pos, &played).map(Some)
}

/// True when the value of a move that played `r` needs the child's record: the rules
/// decide it otherwise (a removal that ends the game, or a child that is an immediate
/// win for its side to move).
pub fn needs_record(geom: &Geometry, r: &Played) -> bool {
    let losing = geom.losing_count();
    match r.removal {
        Removal::Opponent if r.child.player.count_ones() == losing => false,
        Removal::Own if r.child.opponent.count_ones() == losing => false,
        _ => !is_immediate_win(geom, &r.child),
    }
}

/// Every move of `pos` with what playing it gives.
pub fn play_all(geom: &Geometry, pos: &Position) -> PerMove<(Move, Played)> {
    let list = moves(geom, pos);
    let fill = Played { child: *pos, removal: Removal::None, undo: None };
    let mut out = PerMove::new((Move::Hole { dir: Dir::Up }, fill));
    for &m in list.iter() {
        out.push((m, play_in_place(geom, pos, m).expect("listed moves are legal")));
    }
    out
}

fn value_played(
    geom: &Geometry,
    src: &impl RecordSource,
    pos: &Position,
    played: &[(Move, Played)],
) -> Result<PerMove<MoveValue>, Error> {
    let losing = geom.losing_count();
    // Each move's outcome where the rules decide it, else the child to look up (located
    // once, here), so that the source hears of every record about to be read first.
    let nowhere = (pos.phase(), 0);
    let mut located = PerMove::new(nowhere);
    let mut looked_up = PerMove::new(None);
    let mut children = PerMove::new((*pos, nowhere.0, 0));
    for (_, r) in played {
        looked_up.push(if needs_record(geom, r) {
            let at = src.locate(&r.child)?;
            located.push(at);
            children.push((r.child, at.0, at.1));
            Some(at)
        } else {
            None
        });
    }
    src.will_read(&located);
    src.will_resolve(&children);
    let mut target = None;
    let fill = MoveValue {
        index: 0,
        mv: Move::Hole { dir: Dir::Up },
        removal: Removal::None,
        outcome: Outcome::Draw,
        child: *pos,
    };
    let mut out = PerMove::new(fill);
    for (i, ((mv, r), &at)) in played.iter().zip(looked_up.iter()).enumerate() {
        let outcome = match (r.removal, at) {
            (Removal::Opponent, _) if r.child.player.count_ones() == losing => Outcome::Win(1),
            (Removal::Own, _) if r.child.opponent.count_ones() == losing => Outcome::Loss(1),
            // Won in 1 ply by the rules: a capture is never forbidden.
            (_, None) => Outcome::Win(1).parent(),
            // A removal cannot be undone, so nothing is forbidden after it.
            (Removal::Opponent | Removal::Own, Some((ph, idx))) => src.record_of(&r.child, ph, idx)?.node(0).parent(),
            (Removal::None, Some((ph, idx))) => {
                let target = *target.get_or_insert_with(|| canonical_code(geom, pos));
                child_value(geom, src, target, &r.child, ph, idx)?.parent()
            }
        };
        out.push(MoveValue { index: i + 1, mv: *mv, removal: r.removal, outcome, child: r.child });
    }
    Ok(out)
}

/// The value of the node a move that removes nothing leads to: `child` as played, from
/// a parent whose canonical code is `target`, at index `idx` of phase `ph` (an immediate
/// win needs no record and does not come here; any other child is located as played,
/// one canonicalisation, by the caller). Only a child whose record has
/// a special move `s` needs its canonical form, to decide whether its node is `(child,
/// s)`: move `s` must reach an image of the parent and no earlier move may (the
/// published node identity).
fn child_value(
    geom: &Geometry,
    src: &impl RecordSource,
    target: u64,
    child: &Position,
    ph: Phase,
    idx: u64,
) -> Result<Outcome, Error> {
    let rec = src.record_of(child, ph, idx)?;
    let Some((s, special)) = rec.special else { return Ok(rec.base) };
    let (c, _) = canonical(geom, child);
    let s = s as usize;
    let list = moves(geom, &c);
    let Some(r) = list.get(s - 1).and_then(|&m| play(geom, &c, m)) else { return Ok(rec.base) };
    if r.removal != Removal::None || canonical_code(geom, &r.child) != target {
        return Ok(rec.base);
    }
    Ok(if pred_node_index(geom, &c, &r.child, Some(s)) == s { special } else { rec.base })
}
