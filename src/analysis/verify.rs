//! Re-derive every stored value from the stored values of its children.
//!
//! For each position the verifier plays every move, looks up the value of the child node
//! each move leads to (with the child's forbidden index computed independently of the
//! solver's predecessor walk) and checks that:
//!
//! * the generic value is the best option over all moves;
//! * if exactly one move achieves that best and it removes nothing, it is the stored
//!   special move and the special value is the best option over the other moves;
//!   otherwise there is no special move.
//!
//! Win and loss distances must match exactly, so a wrong draw, a wrong winner or an
//! off-by-one distance anywhere is caught. Exact distances also make the check complete:
//! a labelling that satisfies it everywhere is the solution (win/loss chains strictly
//! shorten, so no cycle of wins can support itself).

use rayon::prelude::*;

use std::path::Path;

use crate::error::Error;
use crate::game::forbidden::ChildTable;
use crate::game::moves::{Move, Removal, moves, play};
use crate::game::symmetry::{canonical, canonical_code};
use crate::game::{Geometry, Phase, Position};
use crate::index::GameIndex;
use crate::progress::Reporter;
use crate::record::outcome::Outcome;
use crate::record::{PhaseValues, Record, val_outcome};
use crate::solve::Solution;

/// Where the verifier reads stored values: full records of the phases being checked and
/// of their group, and base values of the phases one piece smaller (all a capture or a
/// suicide leads to).
pub trait Values: Sync {
    /// The position index.
    fn index(&self) -> &GameIndex;
    /// The full record of position `idx` of `phase`.
    fn record(&self, phase: Phase, idx: u64) -> Record;
    /// The base value of position `idx` of `phase`.
    fn base(&self, phase: Phase, idx: u64) -> Outcome;
}

impl Values for Solution {
    fn index(&self) -> &GameIndex {
        Solution::index(self)
    }
    fn record(&self, phase: Phase, idx: u64) -> Record {
        self.phase(phase).expect("phase solved").record(idx)
    }
    fn base(&self, phase: Phase, idx: u64) -> Outcome {
        self.phase(phase).expect("phase solved").record(idx).base
    }
}

/// The values that checking one phase group needs, and no more: the group's records (8
/// bytes per position) and the base values of the group one piece smaller (2 bytes). For
/// (5,5) that is 14.4 GB instead of the 22 GB of the whole game.
pub struct GroupValues<'a> {
    index: &'a GameIndex,
    full: Vec<PhaseValues>,
    lower: Vec<(Phase, Vec<u16>)>,
}

impl<'a> GroupValues<'a> {
    /// Load, from a database directory, the phases with `pieces` pieces in full and those
    /// with one piece less as base values (every file's checksum is checked, elided loss
    /// distances resolved: see [`crate::store::load_group`]).
    pub fn load(
        dir: &Path,
        geom: &Geometry,
        index: &'a GameIndex,
        pieces: u32,
        reporter: &dyn Reporter,
    ) -> Result<GroupValues<'a>, Error> {
        let missing = |n: u32| Error::MissingDatabase {
            path: dir.to_path_buf(),
            phase: index
                .phases()
                .iter()
                .filter(|p| p.phase().pieces() == n)
                .map(|p| p.phase().to_string())
                .collect::<Vec<_>>()
                .join("+"),
            max_pieces: n,
        };
        let lower = if index.phases().iter().any(|p| p.phase().pieces() + 1 == pieces) {
            let group =
                crate::store::load_group(dir, geom, index, pieces - 1, reporter)?.ok_or_else(|| missing(pieces - 1))?;
            group.into_iter().map(|v| (v.phase(), v.raw().iter().map(|&r| r as u16).collect())).collect()
        } else {
            Vec::new()
        };
        let full = crate::store::load_group(dir, geom, index, pieces, reporter)?.ok_or_else(|| missing(pieces))?;
        Ok(GroupValues { index, full, lower })
    }

    /// The phases checked with these values.
    pub fn phases(&self) -> Vec<Phase> {
        self.full.iter().map(|p| p.phase()).collect()
    }
}

impl Values for GroupValues<'_> {
    fn index(&self) -> &GameIndex {
        self.index
    }
    fn record(&self, phase: Phase, idx: u64) -> Record {
        self.full.iter().find(|p| p.phase() == phase).expect("phase of the group").record(idx)
    }
    fn base(&self, phase: Phase, idx: u64) -> Outcome {
        match self.lower.iter().find(|l| l.0 == phase) {
            Some((_, b)) => val_outcome(b[idx as usize]),
            None => self.record(phase, idx).base,
        }
    }
}

/// What a verification found.
#[derive(Clone, Debug, Default, serde::Serialize)]
pub struct VerifyReport {
    /// Positions checked.
    pub positions: u64,
    /// Positions whose stored record disagrees with its children.
    pub mismatches: u64,
    /// The first few mismatches, described.
    pub examples: Vec<String>,
}

/// The value of the node a move of `parent` (whose canonical code is `target`) leads to
/// (a move that removes nothing), from the solution: the child's canonical form and its
/// forbidden index, computed by playing the child's moves.
fn child_node_value(geom: &Geometry, sol: &impl Values, target: u64, child: &Position) -> Outcome {
    // The index straight from the child as played (one canonicalisation, inside locate);
    // the canonical form itself is needed only when the child has a special move.
    let ph = child.phase();
    let idx = sol.index().phase(ph).expect("phase indexed").index_of(child);
    let rec = sol.record(ph, idx);
    let Some((s, spc)) = rec.special else { return rec.base };
    let (c, _) = canonical(geom, child);
    // Is the child's forbidden index s? Only if its move s reaches an image of `parent`
    // and no earlier move does.
    let list = moves(geom, &c);
    let Some(r) = play(geom, &c, list[s as usize - 1]) else { return rec.base };
    if r.removal != Removal::None || canonical_code(geom, &r.child) != target {
        return rec.base;
    }
    let table = ChildTable::new(geom, &c);
    // `parent`'s image in the child's frame is reached by move s; find the first such move.
    if table.node_index_of_pred(geom, &r.child, Some(s as usize)) == s as usize { spc } else { rec.base }
}

/// One move of a position with its value for the mover (see [`options`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MoveOption {
    /// 1-based index in the position's move list.
    pub index: usize,
    /// The move.
    pub mv: Move,
    /// What it removes.
    pub removal: Removal,
    /// The value of the node it leads to, for the mover.
    pub outcome: Outcome,
}

/// The options of every move of `pos` (nothing forbidden), valued from `sol`; `None`
/// when a move wins at once by a capture (found by playing the moves, not by the solver's
/// bit-parallel capture test): that is the best any node can do, so no child is looked up.
/// Shared by `verify --deep` and the `interesting` sweep.
pub fn options(geom: &Geometry, sol: &impl Values, pos: &Position) -> Option<Vec<MoveOption>> {
    let losing = geom.losing_count();
    let list = moves(geom, pos);
    let played: Vec<_> = list.iter().map(|&m| play(geom, pos, m).expect("listed moves are legal")).collect();
    if played.iter().any(|r| r.removal == Removal::Opponent && r.child.player.count_ones() == losing) {
        return None;
    }
    let target = canonical_code(geom, pos);
    let opts = played
        .iter()
        .zip(list.iter())
        .enumerate()
        .map(|(i, (r, &mv))| {
            let outcome = match r.removal {
                Removal::Own if r.child.opponent.count_ones() == losing => Outcome::Loss(1),
                Removal::None => child_node_value(geom, sol, target, &r.child).parent(),
                _ => {
                    let ph = r.child.phase();
                    let idx = sol.index().phase(ph).expect("phase indexed").index_of(&r.child);
                    sol.base(ph, idx).parent()
                }
            };
            MoveOption { index: i + 1, mv, removal: r.removal, outcome }
        })
        .collect();
    Some(opts)
}

/// The best of some outcomes for the side that chooses (`Loss(0)` of none).
pub fn best(opts: impl Iterator<Item = Outcome>) -> Outcome {
    opts.fold(None, |acc: Option<Outcome>, o| match acc {
        Some(a) if !o.better_than(a) => Some(a),
        _ => Some(o),
    })
    .unwrap_or(Outcome::Loss(0))
}

/// Check one position; `None` if it agrees.
pub fn check_position(geom: &Geometry, sol: &impl Values, pos: &Position) -> Option<String> {
    let ph = pos.phase();
    let idx = sol.index().phase(ph)?.index_of(pos);
    check_indexed(geom, sol, pos, idx)
}

/// Check position `pos`, whose index in its phase is `idx`; `None` if it agrees.
fn check_indexed(geom: &Geometry, sol: &impl Values, pos: &Position, idx: u64) -> Option<String> {
    let ph = pos.phase();
    let rec = sol.record(ph, idx);
    // A capture that wins at once removes a piece, so there is no special move either.
    let Some(opts) = options(geom, sol, pos) else {
        if rec.base == Outcome::Win(1) && rec.special.is_none() {
            return None;
        }
        let board = crate::game::notation::format_board(geom, pos);
        return Some(format!("{board}: stored {:?} special {:?}, an immediate win", rec.base, rec.special));
    };
    let top = best(opts.iter().map(|o| o.outcome));
    let achievers: Vec<&MoveOption> = opts.iter().filter(|o| o.outcome == top).collect();
    let want_special = match achievers.as_slice() {
        [o] if o.removal == Removal::None => {
            let second = best(opts.iter().filter(|p| p.index != o.index).map(|p| p.outcome));
            Some((o.index as u32, second))
        }
        _ => None,
    };
    // A special move whose node no predecessor reaches is not stored (the store drops
    // them); a stored one must be the right one.
    let want_special = match want_special {
        Some((s, _)) if rec.special.is_none() && !crate::game::forbidden::node_exists(geom, pos, s as usize) => None,
        w => w,
    };
    if rec.base != top || rec.special != want_special {
        let board = crate::game::notation::format_board(geom, pos);
        return Some(format!(
            "{board}: stored {:?} special {:?}, children give {:?} special {:?}",
            rec.base, rec.special, top, want_special
        ));
    }
    None
}

/// Positions per work item of a [`sweep`].
const CHUNK: u64 = 1 << 14;

/// Visit every position of `phase` in parallel (chunks of 16,384 positions over rayon's
/// threads), with progress: `visit(acc, position, index)` folds into one accumulator per
/// chunk (`A::default()`), and `merge` combines them in phase order. The whole-phase
/// walk of `verify --deep` and of the `interesting` sweep.
pub fn sweep<A: Send + Default>(
    sol: &impl Values,
    phase: Phase,
    label: &str,
    reporter: &dyn Reporter,
    visit: impl Fn(&mut A, &Position, u64) + Sync,
    merge: impl Fn(&mut A, A),
) -> A {
    let mut total = A::default();
    let Some(pidx) = sol.index().phase(phase) else { return total };
    let n = pidx.len();
    reporter.begin(label, n);
    let parts: Vec<A> = (0..n.div_ceil(CHUNK))
        .into_par_iter()
        .map(|c| {
            let (lo, hi) = (c * CHUNK, ((c + 1) * CHUNK).min(n));
            let mut acc = A::default();
            for i in lo..hi {
                visit(&mut acc, &pidx.position_at(i), i);
            }
            reporter.advance(hi - lo);
            acc
        })
        .collect();
    reporter.end();
    for p in parts {
        merge(&mut total, p);
    }
    total
}

/// Verify every position of `phase`.
pub fn verify_phase(geom: &Geometry, sol: &impl Values, phase: Phase, reporter: &dyn Reporter) -> VerifyReport {
    let mut rep = sweep(
        sol,
        phase,
        &format!("verify {phase}"),
        reporter,
        |acc: &mut VerifyReport, pos, i| {
            acc.positions += 1;
            if let Some(msg) = check_indexed(geom, sol, pos, i) {
                acc.mismatches += 1;
                if acc.examples.len() < 5 {
                    acc.examples.push(msg);
                }
            }
        },
        |total, part| {
            total.positions += part.positions;
            total.mismatches += part.mismatches;
            for e in part.examples {
                if total.examples.len() < 10 {
                    total.examples.push(e);
                }
            }
        },
    );
    rep.positions = sol.index().phase(phase).map_or(0, |p| p.len());
    rep
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::progress::Silent;
    use crate::solve::retrograde::{SolveOptions, solve};
    use crate::store::phasefile;

    #[test]
    fn small_board_solutions_agree_with_their_children() {
        for (n, k) in [(3, 3), (4, 3)] {
            let g = Geometry::new(n, k).unwrap();
            let sol = solve(&g, 2 * k, &SolveOptions::default()).unwrap();
            for ph in Phase::all(&g, 2 * k) {
                let r = verify_phase(&g, &sol, ph, &Silent);
                assert!(r.positions > 0);
                assert_eq!(r.mismatches, 0, "{n}x{n}/{k} {ph}: {:#?}", r.examples);
            }
        }
    }

    #[test]
    fn group_by_group_from_disk_agrees_and_finds_a_changed_value() {
        let g = Geometry::new(4, 3).unwrap();
        let dir = std::env::temp_dir().join(format!("ostledb-verify-groups-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let opts = SolveOptions { dir: Some(dir.clone()), ..SolveOptions::default() };
        let sol = solve(&g, 6, &opts).unwrap();
        let index = sol.index().clone();
        let check = |pieces: u32| {
            let vals = GroupValues::load(&dir, &g, &index, pieces, &crate::progress::Silent).unwrap();
            vals.phases().into_iter().map(|ph| verify_phase(&g, &vals, ph, &Silent).mismatches).sum::<u64>()
        };
        for pieces in 4..=6 {
            assert_eq!(check(pieces), 0, "{pieces} pieces");
        }
        // A wrong distance in (2,3), written with a valid checksum: its group's check finds it.
        let p23 = sol.phase(Phase::new(2, 3)).unwrap();
        let mut raw = p23.raw().to_vec();
        let i = raw.iter().position(|&r| r as u16 > 2 && r as u16 & 1 == 1).unwrap();
        raw[i] += 2;
        phasefile::save(&dir, &g, &PhaseValues::from_raw(Phase::new(2, 3), raw.clone())).unwrap();
        assert!(check(5) >= 1);
        // Every loss of (2,3) one ply longer: (3,3), which reads only (2,3)'s base values
        // through its captures, disagrees too.
        for r in raw.iter_mut().filter(|r| **r as u16 & 1 == 1) {
            *r += 2;
        }
        phasefile::save(&dir, &g, &PhaseValues::from_raw(Phase::new(2, 3), raw)).unwrap();
        assert!(check(6) >= 1);
        std::fs::remove_file(phasefile::phase_file(&dir, Phase::new(2, 3))).unwrap();
        assert!(matches!(
            GroupValues::load(&dir, &g, &index, 6, &crate::progress::Silent),
            Err(Error::MissingDatabase { .. })
        ));
        let _ = std::fs::remove_dir_all(&dir);
    }
}
