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

use crate::game::forbidden::ChildTable;
use crate::game::moves::{Removal, moves, play};
use crate::game::symmetry::{canonical, canonical_code};
use crate::game::{Geometry, Phase, Position};
use crate::solve::outcome::Outcome;
use crate::solve::progress::Reporter;
use crate::solve::retrograde::Solution;

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

/// The value of the node a move of `parent` leads to (a move that removes nothing), from
/// the solution: the child's canonical form and its forbidden index, computed by playing
/// the child's moves.
fn child_node_value(geom: &Geometry, sol: &Solution, parent: &Position, child: &Position) -> Outcome {
    let (c, _) = canonical(geom, child);
    let ph = c.phase();
    let idx = sol.index().phase(ph).expect("phase indexed").index_of(&c);
    let rec = sol.phase(ph).expect("phase solved").record(idx);
    let Some((s, spc)) = rec.special else { return rec.base };
    // Is the child's forbidden index s? Only if its move s reaches an image of `parent`
    // and no earlier move does.
    let target = canonical_code(geom, parent);
    let list = moves(geom, &c);
    let Some(r) = play(geom, &c, list[s as usize - 1]) else { return rec.base };
    if r.removal != Removal::None || canonical_code(geom, &r.child) != target {
        return rec.base;
    }
    let table = ChildTable::new(geom, &c);
    // `parent`'s image in the child's frame is reached by move s; find the first such move.
    if table.node_index_of_pred(geom, &r.child, Some(s as usize)) == s as usize { spc } else { rec.base }
}

/// The options of every move of `pos`: `(move index, removes nothing, outcome)`.
fn options(geom: &Geometry, sol: &Solution, pos: &Position) -> Vec<(usize, bool, Outcome)> {
    let losing = geom.losing_count();
    moves(geom, pos)
        .iter()
        .enumerate()
        .map(|(i, &m)| {
            let r = play(geom, pos, m).expect("listed moves are legal");
            let o = match r.removal {
                Removal::Opponent if r.child.player.count_ones() == losing => Outcome::Win(1),
                Removal::Own if r.child.opponent.count_ones() == losing => Outcome::Loss(1),
                Removal::None => child_node_value(geom, sol, pos, &r.child).parent(),
                _ => {
                    let (c, _) = canonical(geom, &r.child);
                    let ph = c.phase();
                    let idx = sol.index().phase(ph).expect("phase indexed").index_of(&c);
                    sol.phase(ph).expect("phase solved").record(idx).base.parent()
                }
            };
            (i + 1, r.removal == Removal::None, o)
        })
        .collect()
}

fn best(opts: impl Iterator<Item = Outcome>) -> Outcome {
    opts.fold(None, |acc: Option<Outcome>, o| match acc {
        Some(a) if !o.better_than(a) => Some(a),
        _ => Some(o),
    })
    .unwrap_or(Outcome::Loss(0))
}

/// Check one position; `None` if it agrees.
pub fn check_position(geom: &Geometry, sol: &Solution, pos: &Position) -> Option<String> {
    let ph = pos.phase();
    let idx = sol.index().phase(ph)?.index_of(pos);
    let rec = sol.phase(ph)?.record(idx);
    let opts = options(geom, sol, pos);
    // Immediate win: a capture that ends the game; nothing can be forbidden.
    let top = best(opts.iter().map(|o| o.2));
    let achievers: Vec<&(usize, bool, Outcome)> = opts.iter().filter(|o| o.2 == top).collect();
    let want_special = match achievers.as_slice() {
        [(i, true, _)] => {
            let second = best(opts.iter().filter(|o| o.0 != *i).map(|o| o.2));
            Some((*i as u32, second))
        }
        _ => None,
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

/// Verify every position of `phase`.
pub fn verify_phase(geom: &Geometry, sol: &Solution, phase: Phase, reporter: &dyn Reporter) -> VerifyReport {
    let Some(pidx) = sol.index().phase(phase) else { return VerifyReport::default() };
    let n = pidx.len();
    const CHUNK: u64 = 1 << 14;
    reporter.begin(&format!("verify {phase}"), n);
    let parts: Vec<(u64, Vec<String>)> = (0..n.div_ceil(CHUNK))
        .into_par_iter()
        .map(|c| {
            let (lo, hi) = (c * CHUNK, ((c + 1) * CHUNK).min(n));
            let mut bad = 0u64;
            let mut ex = Vec::new();
            for i in lo..hi {
                if let Some(msg) = check_position(geom, sol, &pidx.position_at(i)) {
                    bad += 1;
                    if ex.len() < 5 {
                        ex.push(msg);
                    }
                }
            }
            reporter.advance(hi - lo);
            (bad, ex)
        })
        .collect();
    reporter.end();
    let mut rep = VerifyReport { positions: n, ..Default::default() };
    for (bad, ex) in parts {
        rep.mismatches += bad;
        for e in ex {
            if rep.examples.len() < 10 {
                rep.examples.push(e);
            }
        }
    }
    rep
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::solve::progress::Silent;
    use crate::solve::retrograde::{SolveOptions, solve};

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
}
