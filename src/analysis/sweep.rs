//! Whole-phase walks that a kill does not undo: the positions of a phase folded in
//! parallel chunks, in rounds, and a checkpoint file that keeps, between rounds, what the
//! walks over a database have found so far (`verify --deep --checkpoint`,
//! `stats --checkpoint`).
//!
//! A walk over the whole game takes most of an hour. A [`Checkpoint`] holds the result of
//! every phase done and the fold of the phase under way up to a round boundary; it is
//! written (atomically, JSON) at the first round boundary some minutes after the last
//! save and at the end of every phase, and removed when the walk is done. Run again with
//! the same file, the walk skips the phases done and goes on from the saved position of
//! the one under way. A checkpoint names the command that wrote it and the database it
//! walked (a digest of its metadata, which every write changes): one of another command or
//! of a database since rewritten is not used; the walk starts again and says so.
//! [`CheckpointFile`], the file itself, also keeps the progress of `export --digest`.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use rayon::prelude::*;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use crate::error::{Error, io};
use crate::file::{read_capped, write_atomic};
use crate::game::{Phase, Position};
use crate::index::PhaseIndex;
use crate::progress::{Reporter, thousands};
use crate::store::Store;
use crate::working::group::GroupValues;
use crate::working::resolved::ResolvedDir;

/// Chunks per round at most: the positions between two chances to save. Rounds are
/// seconds long on the whole game, and the threads wait at a round's end for its last
/// chunk only. A phase of fewer than `16 * ROUND` chunks has rounds of a sixteenth of it
/// (at least a chunk per thread).
const ROUND: u64 = 256;

/// Fold positions `start..n` of a phase into `total`, in parallel chunks of `chunk`
/// positions: `visit(lo, hi)` folds positions `lo..hi` into a new accumulator, and
/// `merge` adds one into the total, in position order. After every round of chunks,
/// `between(done, &total)` is told how many positions are folded in (`start` and the
/// rounds since); its error ends the walk. `start` is any position: one that is not a
/// chunk boundary (a checkpoint of a build with other chunks) is folded up to the next
/// boundary first.
pub fn fold_chunks<A: Send>(
    n: u64,
    chunk: u64,
    start: u64,
    mut total: A,
    visit: impl Fn(u64, u64) -> A + Sync,
    merge: impl Fn(&mut A, A),
    mut between: impl FnMut(u64, &A) -> Result<(), Error>,
) -> Result<A, Error> {
    let chunks = n.div_ceil(chunk);
    let round = ROUND.min(chunks.div_ceil(16)).max(rayon::current_num_threads() as u64);
    if !start.is_multiple_of(chunk) && start < n {
        let part = visit(start, start.next_multiple_of(chunk).min(n));
        merge(&mut total, part);
    }
    let mut c = start.div_ceil(chunk);
    while c < chunks {
        let end = (c + round).min(chunks);
        let parts: Vec<A> = (c..end).into_par_iter().map(|k| visit(k * chunk, ((k + 1) * chunk).min(n))).collect();
        for p in parts {
            merge(&mut total, p);
        }
        c = end;
        between((c * chunk).min(n), &total)?;
    }
    Ok(total)
}

/// Fold every position of a phase from a saved point, as one step of `reporter` named
/// `label`: positions `0..start` are folded into `total` already; `visit(acc, position,
/// index)` folds each of the rest into one accumulator per chunk of `chunk` positions
/// (`A::default()`), and `merge` adds them in phase order ([`fold_chunks`], whose
/// `between` saves the fold after every round). The walk of `verify --deep`, `stats`,
/// `interesting` and `positions --nodes`.
#[allow(clippy::too_many_arguments)]
pub fn fold_positions<A: Send + Default>(
    index: &PhaseIndex,
    chunk: u64,
    label: &str,
    reporter: &dyn Reporter,
    (start, total): (u64, A),
    visit: impl Fn(&mut A, &Position, u64) + Sync,
    merge: impl Fn(&mut A, A),
    between: impl FnMut(u64, &A) -> Result<(), Error>,
) -> Result<A, Error> {
    let n = index.len();
    reporter.begin(label, n);
    reporter.resumed(start);
    let visit_chunk = |lo: u64, hi: u64| {
        let mut acc = A::default();
        // Each position made from the one before, not unranked anew.
        for (i, pos) in (lo..).zip(index.positions(lo..hi)) {
            visit(&mut acc, &pos, i);
        }
        reporter.advance(hi - lo);
        acc
    };
    let total = fold_chunks(n, chunk, start, total, visit_chunk, merge, between);
    reporter.end();
    total
}

/// What the first line of a checkpoint file says.
const FORMAT: &str = "ostledb sweep checkpoint 1";
/// The largest checkpoint file read (they are kilobytes).
const MAX_BYTES: u64 = 64 << 20;

/// A checkpoint file: its header and what the job keeps in it (`body`, flattened).
#[derive(Serialize, Deserialize)]
struct Saved<B> {
    format: String,
    /// The command that wrote it, e.g. `verify --deep`.
    command: String,
    /// The database it walked: [`database_digest`].
    database: String,
    #[serde(flatten)]
    body: B,
}

/// What a walk over phases keeps.
#[derive(Serialize, Deserialize)]
struct Walk<A> {
    /// Every phase done, in walking order, and its result.
    done: Vec<(String, A)>,
    /// The phase under way, if any.
    current: Option<Partial<A>>,
}

/// A phase under way: its positions `0..done` folded into `acc`.
#[derive(Serialize, Deserialize)]
struct Partial<A> {
    phase: String,
    done: u64,
    acc: A,
}

/// What identifies a database to a checkpoint: the XXH3-64 of its metadata as JSON,
/// which holds its generation (every write makes a new one) and every phase's size and
/// counts.
fn database_digest(db: &Store) -> String {
    let json = serde_json::to_vec(db.meta()).expect("metadata serialises");
    format!("{:016x}", xxhash_rust::xxh3::xxh3_64(&json))
}

/// The file where a long read-only job over a database (a walk, an export's digest) keeps
/// its progress: JSON, written atomically, naming the command and the database; removed
/// when the job is done. Without a path nothing is read or saved.
pub struct CheckpointFile {
    path: Option<PathBuf>,
    command: String,
    database: String,
    every: Duration,
    last: Instant,
}

impl CheckpointFile {
    /// The checkpoint file of `command` over `db` at `path`, to be saved at least `every`
    /// apart ([`CheckpointFile::due`]), and what it holds when it is one of the same
    /// command over the same database and build (else `None`, with a note saying why it is
    /// not used). A file that is not a checkpoint, or one of another command, is an error
    /// (it is not overwritten).
    pub fn open<B: DeserializeOwned>(
        path: Option<&Path>,
        command: &str,
        db: &Store,
        every: Duration,
        reporter: &dyn Reporter,
    ) -> Result<(CheckpointFile, Option<B>), Error> {
        let database = database_digest(db);
        let file = CheckpointFile {
            path: path.map(Path::to_path_buf),
            command: command.into(),
            database,
            every,
            last: Instant::now(),
        };
        let Some(path) = path else { return Ok((file, None)) };
        let bytes = match read_capped(path, MAX_BYTES) {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok((file, None)),
            Err(e) => return Err(io(path)(e)),
        };
        let not_ours = || {
            Error::InvalidArgument(format!(
                "{} is not a checkpoint of `ostledb {command}` (nor of another walk of ostledb), so it is \
                 left as it is; name another file with --checkpoint, or remove it",
                path.display()
            ))
        };
        let head: serde_json::Value = serde_json::from_slice(&bytes).map_err(|_| not_ours())?;
        if head.get("format").and_then(|f| f.as_str()) != Some(FORMAT) {
            return Err(not_ours());
        }
        let (cmd, dbd) = (head["command"].as_str().unwrap_or(""), head["database"].as_str().unwrap_or(""));
        if cmd != command {
            return Err(Error::InvalidArgument(format!(
                "{} is the checkpoint of `ostledb {cmd}`, not of `ostledb {command}`; name another file with \
                 --checkpoint",
                path.display()
            )));
        }
        if dbd != file.database {
            reporter.note(&format!(
                "{}: a checkpoint of another database, or of this one before it was last written; starting \
                 from the beginning",
                path.display()
            ));
            return Ok((file, None));
        }
        // Ours, of this command and database, but not of what this build keeps (one
        // written before the statistics kept the longest wins, say): not used.
        let Ok(saved) = serde_json::from_value::<Saved<B>>(head) else {
            reporter.note(&format!(
                "{}: a checkpoint of another build of ostledb, which keeps other counts; starting from the beginning",
                path.display()
            ));
            return Ok((file, None));
        };
        Ok((file, Some(saved.body)))
    }

    /// Whether a save is due: there is a file and the last save is `every` ago.
    pub fn due(&self) -> bool {
        self.path.is_some() && self.last.elapsed() >= self.every
    }

    /// Save `body` (nothing without a path).
    pub fn save<B: Serialize>(&mut self, body: &B) -> Result<(), Error> {
        let Some(path) = &self.path else { return Ok(()) };
        let saved =
            Saved { format: FORMAT.into(), command: self.command.clone(), database: self.database.clone(), body };
        let json = serde_json::to_vec(&saved).expect("a checkpoint serialises");
        write_atomic(path, |w| std::io::Write::write_all(w, &json))?;
        self.last = Instant::now();
        Ok(())
    }

    /// The job is done: the file is removed.
    pub fn finish(self) -> Result<(), Error> {
        match &self.path {
            Some(p) => match std::fs::remove_file(p) {
                Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(io(p)(e)),
                _ => Ok(()),
            },
            None => Ok(()),
        }
    }
}

/// The progress of a walk over a database's phases, saved to a file if it has one.
pub struct Checkpoint<A> {
    file: CheckpointFile,
    saved: Walk<A>,
}

impl<A: Serialize + DeserializeOwned + Clone> Checkpoint<A> {
    /// The checkpoint of `command` over `db` at `path`, saved at least `every` apart
    /// within a phase: what the file holds when it is one of the same command over the
    /// same database, else a new one ([`CheckpointFile::open`]). No path: nothing is
    /// saved or read.
    pub fn open(
        path: Option<&Path>,
        command: &str,
        db: &Store,
        every: Duration,
        reporter: &dyn Reporter,
    ) -> Result<Checkpoint<A>, Error> {
        let (file, body) = CheckpointFile::open::<Walk<A>>(path, command, db, every, reporter)?;
        let Some(saved) = body else { return Ok(Checkpoint { file, saved: Walk { done: Vec::new(), current: None } }) };
        let under_way = match &saved.current {
            Some(p) => format!(", and {} positions of {}", thousands(p.done), p.phase),
            None => String::new(),
        };
        let path = path.expect("a body comes from a file");
        reporter.note(&format!("{}: going on after {} phase(s) done{under_way}", path.display(), saved.done.len()));
        Ok(Checkpoint { file, saved })
    }

    /// The result of `phase` if it is done.
    pub fn done(&self, phase: Phase) -> Option<A> {
        let name = phase.to_string();
        self.saved.done.iter().find(|(p, _)| *p == name).map(|(_, a)| a.clone())
    }

    /// Where `phase` goes on from: positions done and their fold (`0` and `None` when it
    /// has not begun).
    pub fn resume(&self, phase: Phase) -> (u64, Option<A>) {
        match &self.saved.current {
            Some(p) if p.phase == phase.to_string() => (p.done, Some(p.acc.clone())),
            _ => (0, None),
        }
    }

    /// Positions `0..done` of `phase` are folded into `acc`: saved if the last save is
    /// `every` ago.
    pub fn progress(&mut self, phase: Phase, done: u64, acc: &A) -> Result<(), Error> {
        if !self.file.due() {
            return Ok(());
        }
        self.saved.current = Some(Partial { phase: phase.to_string(), done, acc: acc.clone() });
        self.file.save(&self.saved)
    }

    /// `phase` is done with result `acc`: saved.
    pub fn phase_done(&mut self, phase: Phase, acc: &A) -> Result<(), Error> {
        self.saved.current = None;
        self.saved.done.push((phase.to_string(), acc.clone()));
        self.file.save(&self.saved)
    }

    /// The walk is done: the file is removed.
    pub fn finish(self) -> Result<(), Error> {
        self.file.finish()
    }
}

/// Walk the phases of a database one phase group at a time, in solving order, with a
/// checkpoint: `walk(group, phase, (positions done, fold so far), between)` walks one
/// phase from the checkpoint's saved point (`between` saves its progress); `done(phase,
/// result)` gets each phase's result in order, taken from the checkpoint for the phases
/// it holds. A group is loaded with the base values of the group below as the walk left
/// them, or from the value files when the walk skipped that group. With `resolved`, the
/// records with elided losses resolved are taken from there when usable and written
/// there when resolved here ([`crate::working::resolved`]).
pub fn walk_groups<A: Serialize + DeserializeOwned + Clone + Default>(
    db: &Store,
    resolved: Option<&ResolvedDir>,
    reporter: &dyn Reporter,
    checkpoint: &mut Checkpoint<A>,
    mut walk: impl FnMut(&GroupValues, Phase, (u64, A), &mut dyn FnMut(u64, &A) -> Result<(), Error>) -> Result<A, Error>,
    mut done: impl FnMut(Phase, A),
) -> Result<(), Error> {
    let (g, index) = (db.geometry(), db.index());
    // Each group's exact base values are what the next one needs of it.
    let mut lower = Some(Vec::new());
    for pieces in index.group_pieces() {
        let members: Vec<Phase> = index.phases().iter().map(|p| p.phase()).filter(|p| p.pieces() == pieces).collect();
        if members.iter().all(|&ph| checkpoint.done(ph).is_some()) {
            for ph in members {
                let r = checkpoint.done(ph).expect("done");
                reporter.note(&format!("{ph}: done before (the checkpoint)"));
                done(ph, r);
            }
            lower = None;
            continue;
        }
        let vals = match lower.take() {
            Some(l) => GroupValues::load_above(db.path(), g, index, pieces, l, resolved, reporter)?,
            None => GroupValues::load(db.path(), g, index, pieces, resolved, reporter)?,
        };
        for ph in vals.phases() {
            let r = match checkpoint.done(ph) {
                Some(r) => r,
                None => {
                    let (start, acc) = checkpoint.resume(ph);
                    let r =
                        walk(&vals, ph, (start, acc.unwrap_or_default()), &mut |n, a| checkpoint.progress(ph, n, a))?;
                    checkpoint.phase_done(ph, &r)?;
                    r
                }
            };
            done(ph, r);
        }
        lower = Some(vals.into_base());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fold_resumed_at_any_position_equals_the_fold_in_one_go() {
        let (n, chunk) = (100_003u64, 97u64);
        let visit = |lo: u64, hi: u64| (lo..hi).map(|i| i * i % 1_000_003).collect::<Vec<u64>>();
        let merge = |t: &mut Vec<u64>, p: Vec<u64>| t.extend(p);
        let whole = fold_chunks(n, chunk, 0, Vec::new(), visit, merge, |_, _| Ok(())).unwrap();
        assert_eq!(whole, (0..n).map(|i| i * i % 1_000_003).collect::<Vec<_>>());
        // Every boundary reported, and a fold resumed from it with what was folded by then.
        let mut seen = Vec::new();
        fold_chunks(n, chunk, 0, Vec::new(), visit, merge, |done, t: &Vec<u64>| {
            seen.push((done, t.clone()));
            Ok(())
        })
        .unwrap();
        assert_eq!(seen.last().unwrap().0, n);
        assert!(seen.len() > 3);
        for (done, t) in &seen {
            assert!(done % chunk == 0 || *done == n);
            assert_eq!(t.len() as u64, *done);
            let resumed = fold_chunks(n, chunk, *done, t.clone(), visit, merge, |_, _| Ok(())).unwrap();
            assert_eq!(resumed, whole);
        }
        // A start between two boundaries, with what was folded by then.
        for done in [1, 5, chunk + 3, n - 1] {
            let t = whole[..done as usize].to_vec();
            let resumed = fold_chunks(n, chunk, done, t, visit, merge, |_, _| Ok(())).unwrap();
            assert_eq!(resumed, whole, "from {done}");
        }
        // An error between rounds ends the walk.
        let err = fold_chunks(n, chunk, 0, Vec::new(), visit, merge, |_, _| Err(Error::InvalidArgument("stop".into())));
        assert!(err.is_err());
    }
}
