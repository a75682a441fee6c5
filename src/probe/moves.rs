//! What every move of a position is worth to the side that plays it.

use crate::error::Error;
use crate::game::geometry::Dir;
use crate::game::moves::{Move, PerMove, Played, Removal, is_immediate_win, moves, play_in_place};
use crate::game::node::{Images, pred_node_index_of_images};
use crate::game::symmetry::canonical;
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
    let outcomes = outcomes_played(geom, src, pos, &played)?;
    Ok(valued(pos, &played, &outcomes).to_vec())
}

/// [`move_values`], or `None` when a move wins at once by a capture:
/// [`move_outcomes_unless_capture_wins`] with a [`MoveValue`] made for each move. What
/// `interesting` sweeps with, once per position: the list is held in place, not allocated.
pub fn move_values_unless_capture_wins(
    geom: &Geometry,
    src: &impl RecordSource,
    pos: &Position,
) -> Result<Option<PerMove<MoveValue>>, Error> {
    Ok(move_outcomes_unless_capture_wins(geom, src, pos)?.map(|(played, outcomes)| valued(pos, &played, &outcomes)))
}

/// Every move of `pos` played ([`play_all`]) with its value for the mover, in the same
/// order, or `None` when a move wins at once by a capture (found by playing the moves, not
/// by the solver's bit-parallel test): that is the best any node can do, so no child is
/// looked up. `verify --deep` needs no more than each move's value and what it removes.
pub fn move_outcomes_unless_capture_wins(
    geom: &Geometry,
    src: &impl RecordSource,
    pos: &Position,
) -> Result<Option<(AllPlayed, PerMove<Outcome>)>, Error> {
    let played = play_all(geom, pos);
    let losing = geom.losing_count();
    if played.iter().any(|(_, r)| r.removal == Removal::Opponent && r.child.player.count_ones() == losing) {
        return Ok(None);
    }
    let outcomes = outcomes_played(geom, src, pos, &played)?;
    Ok(Some((played, outcomes)))
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

/// Every move of a position with what playing it gives, in move-list order.
pub type AllPlayed = PerMove<(Move, Played)>;

/// Every move of `pos` with what playing it gives.
pub fn play_all(geom: &Geometry, pos: &Position) -> AllPlayed {
    let list = moves(geom, pos);
    let fill = Played { child: *pos, removal: Removal::None, undo: None };
    let mut out = PerMove::new((Move::Hole { dir: Dir::Up }, fill));
    for &m in list.iter() {
        out.push((m, play_in_place(geom, pos, m).expect("listed moves are legal")));
    }
    out
}

/// The moves of `pos` played, with their values: one [`MoveValue`] each.
fn valued(pos: &Position, played: &[(Move, Played)], outcomes: &[Outcome]) -> PerMove<MoveValue> {
    let fill = MoveValue {
        index: 0,
        mv: Move::Hole { dir: Dir::Up },
        removal: Removal::None,
        outcome: Outcome::Draw,
        child: *pos,
    };
    let mut out = PerMove::new(fill);
    for (i, ((mv, r), &outcome)) in played.iter().zip(outcomes.iter()).enumerate() {
        out.push(MoveValue { index: i + 1, mv: *mv, removal: r.removal, outcome, child: r.child });
    }
    out
}

/// The value for the mover of each move of `pos` played, in the order of `played`.
fn outcomes_played(
    geom: &Geometry,
    src: &impl RecordSource,
    pos: &Position,
    played: &[(Move, Played)],
) -> Result<PerMove<Outcome>, Error> {
    let losing = geom.losing_count();
    // The children whose value the rules do not decide, located once, here (bit `i` of
    // `looked_up` for move `i`, in order in `located`), so that the source hears of every
    // record about to be read first (and, when it asks, of each as played with it).
    let nowhere = (pos.phase(), 0);
    let mut located = PerMove::new(nowhere);
    let mut looked_up = 0u32;
    let mut children = src.wants_resolve_hint().then(|| PerMove::new((*pos, nowhere.0, 0)));
    for (i, (_, r)) in played.iter().enumerate() {
        if needs_record(geom, r) {
            let (ph, idx) = src.locate(&r.child)?;
            located.push((ph, idx));
            if let Some(children) = &mut children {
                children.push((r.child, ph, idx));
            }
            looked_up |= 1 << i;
        }
    }
    src.will_read(&located);
    if let Some(children) = &children {
        src.will_resolve(children);
    }
    let mut images = None;
    let mut out = PerMove::new(Outcome::Draw);
    let mut next = located.iter();
    for (i, (_, r)) in played.iter().enumerate() {
        let at = if looked_up >> i & 1 != 0 { next.next().copied() } else { None };
        out.push(match (r.removal, at) {
            (Removal::Opponent, _) if r.child.player.count_ones() == losing => Outcome::Win(1),
            (Removal::Own, _) if r.child.opponent.count_ones() == losing => Outcome::Loss(1),
            // Won in 1 ply by the rules: a capture is never forbidden.
            (_, None) => Outcome::Win(1).parent(),
            // A removal cannot be undone, so nothing is forbidden after it.
            (Removal::Opponent | Removal::Own, Some((ph, idx))) => src.record_of(&r.child, ph, idx)?.node(0).parent(),
            (Removal::None, Some((ph, idx))) => {
                let images = images.get_or_insert_with(|| Images::of(geom, pos));
                child_value(geom, src, images, &r.child, ph, idx)?.parent()
            }
        });
    }
    Ok(out)
}

/// The value of the node a move that removes nothing leads to: `child` as played, from
/// a parent whose symmetric images are `parent`, at index `idx` of phase `ph` (an
/// immediate win needs no record and does not come here; any other child is located as
/// played, one canonicalisation, by the caller). Only a child whose record has a special
/// move `s` needs its canonical form (the index's, from its table of player sets), to
/// decide whether its node is `(child, s)`: move `s` must reach an image of the parent
/// and no earlier move may (the published node identity), which is the child's node
/// index from the parent's images ([`pred_node_index_of_images`]: no move list, no
/// canonical code).
fn child_value(
    geom: &Geometry,
    src: &impl RecordSource,
    parent: &Images,
    child: &Position,
    ph: Phase,
    idx: u64,
) -> Result<Outcome, Error> {
    let rec = src.record_of(child, ph, idx)?;
    let Some((s, special)) = rec.special else { return Ok(rec.base) };
    let c = match src.index().phase(ph) {
        Some(p) => p.canonical(child),
        None => canonical(geom, child).0,
    };
    Ok(if pred_node_index_of_images(geom, &c, parent, None) == s as usize { special } else { rec.base })
}
