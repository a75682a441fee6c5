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

use std::time::Instant;

use crate::analysis::sweep::{Checkpoint, fold_positions, walk_groups};
use crate::bfs_depths::node_keys::BfsFile;
use crate::error::Error;
use crate::game::forbidden::node_exists;
use crate::game::moves::Removal;
use crate::game::node::Convention;
use crate::game::notation::format_board;
use crate::game::{Geometry, Phase, Position};
use crate::probe::{RecordSource, best, move_outcomes_unless_capture_wins};
use crate::progress::{Reporter, thousands};
use crate::record::Outcome;
use crate::store::directory::unlisted;
use crate::store::keys::{self, Backend};
use crate::store::{Store, meta};
use crate::working::group::GroupValues;
use crate::working::resolved::ResolvedDir;

/// What a verification found.
#[derive(Clone, Debug, Default, serde::Serialize, serde::Deserialize)]
pub struct VerifyReport {
    /// Positions checked.
    pub positions: u64,
    /// Positions whose stored record disagrees with its children.
    pub mismatches: u64,
    /// The first few mismatches, described.
    pub examples: Vec<String>,
}

/// Check one position; `None` if it agrees.
pub fn check_position(geom: &Geometry, sol: &impl RecordSource, pos: &Position) -> Option<String> {
    let ph = pos.phase();
    let idx = sol.index().phase(ph)?.index_of(pos);
    check_indexed(geom, sol, pos, idx)
}

/// Check position `pos`, whose index in its phase is `idx`; `None` if it agrees. A
/// record that cannot be read is a disagreement too, described.
fn check_indexed(geom: &Geometry, sol: &impl RecordSource, pos: &Position, idx: u64) -> Option<String> {
    check_record(geom, sol, pos, idx).unwrap_or_else(|e| Some(format!("{}: {e}", format_board(geom, pos))))
}

/// [`check_indexed`], with the errors of reading records returned as they are.
fn check_record(geom: &Geometry, sol: &impl RecordSource, pos: &Position, idx: u64) -> Result<Option<String>, Error> {
    let rec = sol.record(pos.phase(), idx)?;
    // A capture that wins at once removes a piece, so there is no special move either.
    let Some((played, outcomes)) = move_outcomes_unless_capture_wins(geom, sol, pos)? else {
        if rec.base == Outcome::Win(1) && rec.special.is_none() {
            return Ok(None);
        }
        let board = format_board(geom, pos);
        return Ok(Some(format!("{board}: stored {:?} special {:?}, an immediate win", rec.base, rec.special)));
    };
    let top = best(outcomes.iter().copied());
    let mut achievers = outcomes.iter().enumerate().filter(|&(_, &o)| o == top);
    let want_special = match (achievers.next(), achievers.next()) {
        (Some((i, _)), None) if played[i].1.removal == Removal::None => {
            let second = best(outcomes.iter().enumerate().filter(|&(j, _)| j != i).map(|(_, &o)| o));
            Some((i as u32 + 1, second))
        }
        _ => None,
    };
    // A special move whose node no predecessor reaches is not stored (the store drops
    // them); a stored one must be the right one.
    let want_special = match want_special {
        Some((s, _)) if rec.special.is_none() && !node_exists(geom, pos, s as usize) => None,
        w => w,
    };
    if rec.base != top || rec.special != want_special {
        let board = format_board(geom, pos);
        return Ok(Some(format!(
            "{board}: stored {:?} special {:?}, children give {:?} special {:?}",
            rec.base, rec.special, top, want_special
        )));
    }
    Ok(None)
}

/// Positions per work item of a [`sweep`].
const CHUNK: u64 = 1 << 14;

/// Visit every position of `phase` in parallel (chunks of 16,384 positions over rayon's
/// threads), with progress: `visit(acc, position, index)` folds into one accumulator per
/// chunk (`A::default()`), and `merge` combines them in phase order. The whole-phase
/// walk of the `interesting` sweep ([`fold_positions`]).
pub fn sweep<A: Send + Default>(
    sol: &(impl RecordSource + Sync),
    phase: Phase,
    label: &str,
    reporter: &dyn Reporter,
    visit: impl Fn(&mut A, &Position, u64) + Sync,
    merge: impl Fn(&mut A, A),
) -> A {
    let Some(pidx) = sol.index().phase(phase) else { return A::default() };
    fold_positions(pidx, CHUNK, label, reporter, (0, A::default()), visit, merge, |_, _| Ok(()))
        .expect("nothing between rounds fails")
}

/// Verify every position of `phase`.
pub fn verify_phase(
    geom: &Geometry,
    sol: &(impl RecordSource + Sync),
    phase: Phase,
    reporter: &dyn Reporter,
) -> VerifyReport {
    verify_phase_from(geom, sol, phase, reporter, (0, VerifyReport::default()), |_, _| Ok(()))
        .expect("nothing between rounds fails")
}

/// [`verify_phase`] from a saved point, `between` saving it ([`fold_positions`]).
fn verify_phase_from(
    geom: &Geometry,
    sol: &(impl RecordSource + Sync),
    phase: Phase,
    reporter: &dyn Reporter,
    from: (u64, VerifyReport),
    between: impl FnMut(u64, &VerifyReport) -> Result<(), Error>,
) -> Result<VerifyReport, Error> {
    let Some(pidx) = sol.index().phase(phase) else { return Ok(from.1) };
    fold_positions(
        pidx,
        CHUNK,
        &format!("verify {phase}"),
        reporter,
        from,
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
        between,
    )
}

/// The checksums of one file, verified.
#[derive(Clone, Debug, serde::Serialize)]
pub struct FileCheck {
    /// The file (or key index) checked.
    pub file: String,
    /// Its bytes covered by checksums.
    pub bytes: u64,
}

/// A file whose checksums (or header) show damage.
#[derive(Debug, serde::Serialize)]
pub struct Failure {
    /// The file (or key index).
    pub file: String,
    /// What is wrong and how to fix it: the message of `cause`.
    pub error: String,
    /// The error (a damage error: exit code 1).
    #[serde(skip)]
    pub cause: Error,
}

/// What the checksum pass over a database found.
#[derive(Debug, serde::Serialize)]
pub struct ChecksumReport {
    /// Every file checked and found intact.
    pub files: Vec<FileCheck>,
    /// Every file found damaged (the pass goes on past one), in the order checked.
    pub failures: Vec<Failure>,
    /// Their bytes in all.
    pub bytes: u64,
    /// Entries of the database directory that are not part of the database (left by a
    /// writer that stopped, or superseded while a reader had them open): the next
    /// writer removes them.
    pub unlisted: Vec<String>,
    /// Wall time of the pass.
    pub seconds: f64,
}

/// Recompute every checksum of the database: the metadata (read at open), the header,
/// block index and every block of each value file, every key index file of a compiled
/// backend (one of a backend this build lacks is skipped, with a note) and any stored
/// BFS (node-list file, first depths and their node layers). A damaged file is a [`Failure`] in the report and the pass goes on; any other
/// error (I/O) is the error.
pub fn check_checksums(db: &Store, reporter: &dyn Reporter) -> Result<ChecksumReport, Error> {
    let t = Instant::now();
    let dir = db.path();
    let mut files = vec![FileCheck {
        file: meta::FILE.into(),
        bytes: std::fs::metadata(dir.join(meta::FILE)).map(|m| m.len()).unwrap_or(0),
    }];
    let mut failures = Vec::new();
    // Record a check's outcome: the bytes checked, or the damage found.
    let mut record = |file: String, checked: Result<u64, Error>| -> Result<(), Error> {
        match checked {
            Ok(bytes) if bytes > 0 => files.push(FileCheck { file, bytes }),
            Ok(_) => {}
            Err(e) if e.exit_code() == crate::error::EXIT_CORRUPT => {
                failures.push(Failure { file, error: e.to_string(), cause: e })
            }
            Err(e) => return Err(e),
        }
        Ok(())
    };
    for p in db.index().phases() {
        let v = db.values(p.phase()).expect("every phase is open");
        record(v.path().display().to_string(), v.check())?;
        for name in &db.meta().backends {
            let b = Backend::parse(name)?;
            if !b.compiled() {
                reporter.note(&format!(
                    "{}: key index `{name}` not checked: this ostledb lacks feature `{}`",
                    p.phase(),
                    b.feature().unwrap_or_default()
                ));
                continue;
            }
            record(format!("{} key index ({})", name, p.phase()), keys::check(b, db.data_path(), p))?;
        }
    }
    for c in [Convention::Published, Convention::Strict] {
        let path = dir.join(crate::bfs_depths::node_keys::file_name(c)).display().to_string();
        match BfsFile::open(dir, db.geometry(), c) {
            Ok(Some(b)) => record(path, b.check())?,
            Ok(None) => {}
            Err(e) => record(path, Err(e))?,
        }
    }
    let path = dir.join(crate::bfs_depths::first_depths::FILE_NAME).display().to_string();
    match crate::bfs_depths::first_depths::FirstDepthFile::open(dir, db.geometry()) {
        Ok(Some(f)) => {
            let summary = f.summary().clone();
            record(path, f.check())?;
            let layers_dir = dir.join(crate::bfs_depths::node_layers::DIR_NAME).display().to_string();
            match crate::bfs_depths::node_layers::NodeLayers::open(
                dir,
                db.geometry(),
                summary.layers.len() as u32,
                summary.start,
                summary.expand_checkmates,
                summary.positions,
            ) {
                Ok(Some(layers)) => {
                    for (file, checked) in layers.check() {
                        record(file.display().to_string(), checked)?;
                    }
                }
                Ok(None) => {}
                Err(e) => record(layers_dir, Err(e))?,
            }
        }
        Ok(None) => {}
        Err(e) => record(path, Err(e))?,
    }
    let bytes = files.iter().map(|f| f.bytes).sum();
    let unlisted = unlisted(dir, db.meta()).iter().map(|p| p.display().to_string()).collect();
    Ok(ChecksumReport { files, failures, bytes, unlisted, seconds: t.elapsed().as_secs_f64() })
}

/// Re-derive every stored value of the database from its children, one phase group at a
/// time (its records and the base values of the group below: [`GroupValues`]); `reporter`
/// gets the loading, a step per phase and a note per phase checked. `checkpoint` keeps
/// the reports of the phases done and the progress into the one under way (see
/// [`Checkpoint`]): phases it holds are not checked again, and a group all of whose
/// phases are done is not loaded. `resolved`: where records with their elided losses
/// resolved are kept between commands ([`walk_groups`]); the distances taken from there
/// are checked against the children like every other value.
pub fn verify_database(
    db: &Store,
    resolved: Option<&ResolvedDir>,
    reporter: &dyn Reporter,
    checkpoint: &mut Checkpoint<VerifyReport>,
) -> Result<Vec<(Phase, VerifyReport)>, Error> {
    let mut reports = Vec::new();
    let walk = |vals: &GroupValues, ph, from, between: &mut dyn FnMut(u64, &VerifyReport) -> Result<(), Error>| {
        let r = verify_phase_from(db.geometry(), &vals.records(), ph, reporter, from, between)?;
        reporter.note(&format!("{ph}: {} positions checked, {} mismatches", thousands(r.positions), r.mismatches));
        Ok(r)
    };
    walk_groups(db, resolved, reporter, checkpoint, walk, |ph, r| reports.push((ph, r)))?;
    Ok(reports)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::progress::Silent;
    use crate::record::{Packed, PhaseValues};
    use crate::solve::retrograde::{SolveOptions, solve};
    use crate::working::phasefile;

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
            let vals = GroupValues::load(&dir, &g, &index, pieces, None, &crate::progress::Silent).unwrap();
            vals.phases().into_iter().map(|ph| verify_phase(&g, &vals.records(), ph, &Silent).mismatches).sum::<u64>()
        };
        for pieces in 4..=6 {
            assert_eq!(check(pieces), 0, "{pieces} pieces");
        }
        // A wrong distance in (2,3), written with a valid checksum: its group's check finds it.
        let p23 = sol.phase(Phase::new(2, 3)).unwrap();
        let mut raw = p23.raw().to_vec();
        let i = raw.iter().position(|&r| Packed(r).base() > 2 && Packed(r).base() & 1 == 1).unwrap();
        raw[i] += 2;
        phasefile::save(&dir, &g, &PhaseValues::from_raw(Phase::new(2, 3), raw.clone()), 0).unwrap();
        assert!(check(5) >= 1);
        // Every loss of (2,3) one ply longer: (3,3), which reads only (2,3)'s base values
        // through its captures, disagrees too.
        for r in raw.iter_mut().filter(|r| Packed(**r).base() & 1 == 1) {
            *r += 2;
        }
        phasefile::save(&dir, &g, &PhaseValues::from_raw(Phase::new(2, 3), raw), 0).unwrap();
        assert!(check(6) >= 1);
        std::fs::remove_file(phasefile::phase_file(&dir, Phase::new(2, 3))).unwrap();
        assert!(matches!(
            GroupValues::load(&dir, &g, &index, 6, None, &crate::progress::Silent),
            Err(Error::MissingDatabase { .. })
        ));
        let _ = std::fs::remove_dir_all(&dir);
    }
}
