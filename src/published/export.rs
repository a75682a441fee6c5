//! Export a database to the published text format, streaming: positions come from
//! every phase's value file in index order (= ascending code within a phase), are
//! merged by code across phases, turned into lines in parallel batches and written (or
//! only hashed) in order. Memory stays at a few batches, whatever the database's size.
//! This file holds what to export, what an export wrote, its checkpoint and the
//! retrograde files; the BFS files are made in [`crate::published::export_bfs`], and
//! both go out through [`crate::published::export_files`].

use std::path::{Path, PathBuf};

use rayon::prelude::*;

use crate::analysis::stats::{PhaseStats, tally};
use crate::analysis::sweep::CheckpointFile;
use crate::bfs_depths::node_layers;
use crate::error::{Error, io};
use crate::game::Position;
use crate::game::notation::code_to_base64;
use crate::index::{GameIndex, PhaseIndex};
use crate::progress::Reporter;
use crate::published::export_bfs::{export_bfs, export_bfs_by_positions};
use crate::published::export_files::{
    BATCH, ExportedFile, FileSplitter, Fingerprints, Mark, Message, TASK, run_fingerprint, with_writer,
};
use crate::published::resolved::ResolvedRecords;
use crate::published::{Kind, LINES_PER_FILE, parse_file_name, set_digest, write_line, write_line_of};
use crate::record::Packed;
use crate::store::Store;
use crate::store::values::ValueFile;
use crate::working::resolved::ResolvedDir;

/// What to export.
#[derive(Clone, Debug)]
pub struct ExportOptions {
    /// Export the phases with at most this many pieces (default: every phase of the
    /// database).
    pub max_pieces: Option<u32>,
    /// Lines per file: [`LINES_PER_FILE`] for the published format (smaller values only
    /// to test the file splitting on small boards).
    pub lines_per_file: u64,
    /// Resolve the elided losses of every phase a phase group at a time first, into
    /// scratch files in this directory (4 bytes per position, [`ResolvedRecords`]; files
    /// left whole by a killed run are kept), instead of by a search per position as its
    /// line is made. The files are removed when the retrograde files are done, unless
    /// `keep_records`. `None`: no scratch files.
    pub records_dir: Option<PathBuf>,
    /// Keep the files of `records_dir` when done (for `stats` and `verify --deep` with
    /// the same directory, [`crate::working::resolved`]).
    pub keep_records: bool,
    /// Also count the statistics of every exported phase, as
    /// [`crate::analysis::stats::database_stats`] does, from the records and nodes each
    /// retrograde line is made of ([`ExportSummary::stats`]).
    pub stats: bool,
    /// Also compute the published solver's fingerprint of each run (its retrograde
    /// files, its BFS files) from their lines ([`crate::published::fingerprint`],
    /// [`ExportSummary::fingerprints`]).
    pub fingerprint: bool,
}

impl Default for ExportOptions {
    fn default() -> ExportOptions {
        ExportOptions {
            max_pieces: None,
            lines_per_file: LINES_PER_FILE,
            records_dir: None,
            keep_records: false,
            stats: false,
            fingerprint: false,
        }
    }
}

/// What an export wrote (or, for a digest, would write).
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct ExportSummary {
    /// Phases with at most this many pieces.
    pub max_pieces: u32,
    /// Positions, one line each.
    pub positions: u64,
    /// BFS files (none when the database stores no BFS).
    pub bfs_files: Vec<ExportedFile>,
    /// The retrograde files, in order.
    pub retrograde_files: Vec<ExportedFile>,
    /// The digest of the whole set by the published recipe.
    pub digest: String,
    /// With [`ExportOptions::stats`]: the statistics of every exported phase, in index
    /// order.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stats: Option<Vec<PhaseStats>>,
    /// With [`ExportOptions::fingerprint`]: the published solver's fingerprint of each
    /// run.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fingerprints: Option<Fingerprints>,
}

/// What the checkpoint of `export --digest` keeps: the files done and, at the end of the
/// last of them, how many positions of each exported phase (in index order) the part
/// under way (retrograde files, then BFS files) has put into them.
#[derive(Clone, Debug, Default, serde::Serialize, serde::Deserialize)]
pub struct ExportProgress {
    max_pieces: u32,
    lines_per_file: u64,
    retrograde_files: Vec<ExportedFile>,
    /// Every retrograde file is done: the BFS files are under way.
    retrograde_done: bool,
    bfs_files: Vec<ExportedFile>,
    consumed: Vec<u64>,
    /// When statistics are counted: those of the positions in the retrograde files so
    /// far, per exported phase in index order (`None` in a checkpoint of an export
    /// without them, or written before they were kept).
    #[serde(default)]
    stats: Option<Vec<PhaseStats>>,
}

/// Where a digest keeps its progress between files ([`CheckpointFile`]): saved at the
/// end of a file when the last save is some minutes ago, and when the retrograde files
/// are done. Run again with the same file, the digest goes on after the last file saved.
pub struct ExportCheckpoint {
    file: Option<CheckpointFile>,
    from: Option<ExportProgress>,
}

/// What a checkpoint file of an export says it is.
pub const EXPORT_COMMAND: &str = "export --digest";

impl ExportCheckpoint {
    /// No checkpoint: nothing is read or saved.
    pub fn none() -> ExportCheckpoint {
        ExportCheckpoint { file: None, from: None }
    }

    /// The checkpoint of a digest of `db` at `path`, saved at most `every` apart.
    pub fn open(
        path: &Path,
        db: &Store,
        every: std::time::Duration,
        reporter: &dyn Reporter,
    ) -> Result<ExportCheckpoint, Error> {
        let (file, from) = CheckpointFile::open::<ExportProgress>(Some(path), EXPORT_COMMAND, db, every, reporter)?;
        Ok(ExportCheckpoint { file: Some(file), from })
    }

    /// Where an export of `max` pieces in files of `lines_per_file` lines, over phases of
    /// `lens` positions, goes on from (a new start, with a note, for a checkpoint of
    /// another export or one whose positions do not fit the phases).
    /// With `stats` the progress must hold the statistics of the retrograde files done.
    fn start(
        &mut self,
        max: u32,
        lines_per_file: u64,
        lens: &[u64],
        (stats, fingerprint): (bool, bool),
        reporter: &dyn Reporter,
    ) -> ExportProgress {
        let fresh = ExportProgress { max_pieces: max, lines_per_file, ..ExportProgress::default() };
        let lacks_stats = |p: &ExportProgress| {
            let begun = p.retrograde_done || !p.retrograde_files.is_empty();
            stats && begun && p.stats.as_ref().is_none_or(|s| s.len() != lens.len())
        };
        let fits = |c: &[u64]| c.is_empty() || (c.len() == lens.len() && c.iter().zip(lens).all(|(a, b)| a <= b));
        let lacks_prints = |p: &ExportProgress| {
            let printed = |f: &ExportedFile| f.fingerprint.as_ref().is_some_and(|p| p.xor().is_some());
            fingerprint && !p.retrograde_files.iter().chain(&p.bfs_files).all(printed)
        };
        match self.from.take() {
            Some(p) if p.max_pieces != max || p.lines_per_file != lines_per_file => {
                reporter.note("the checkpoint is of an export of other phases; starting from the beginning");
                fresh
            }
            Some(p) if !fits(&p.consumed) => {
                reporter
                    .note("the checkpoint's positions do not fit this database's phases; starting from the beginning");
                fresh
            }
            Some(p) if lacks_prints(&p) => {
                reporter.note(
                    "the checkpoint is of an export that computed no fingerprint (--fingerprint); starting from the \
                     beginning",
                );
                fresh
            }
            Some(p) if lacks_stats(&p) => {
                reporter.note(
                    "the checkpoint is of an export that counted no statistics (--stats); starting from the beginning",
                );
                fresh
            }
            Some(p) => {
                reporter.note(&format!(
                    "the checkpoint: going on after {} retrograde and {} BFS files",
                    p.retrograde_files.len(),
                    p.bfs_files.len()
                ));
                p
            }
            None => fresh,
        }
    }

    /// A file of the part under way is done: `progress` saved if a save is due.
    fn file_done(&mut self, progress: impl FnOnce() -> ExportProgress) -> Result<(), Error> {
        match &mut self.file {
            Some(f) if f.due() => f.save(&progress()),
            _ => Ok(()),
        }
    }

    /// Save `progress` now.
    fn save(&mut self, progress: &ExportProgress) -> Result<(), Error> {
        match &mut self.file {
            Some(f) => f.save(progress),
            None => Ok(()),
        }
    }

    /// The export is done: the file is removed.
    pub fn finish(self) -> Result<(), Error> {
        self.file.map_or(Ok(()), CheckpointFile::finish)
    }
}

/// Positions decoded ahead per phase.
const LOOKAHEAD: u64 = 1 << 18;

/// The positions of one phase in index order, decoded a window at a time.
struct Cursor<'a> {
    db: &'a Store,
    phase: &'a PhaseIndex,
    values: &'a ValueFile,
    /// The phase's records resolved before, read instead of the value file.
    resolved: Option<&'a ResolvedRecords>,
    next_block: u32,
    /// The index of the window's first position.
    first: u64,
    /// Positions of the next window to skip (a start inside a block).
    skip: usize,
    positions: Vec<Position>,
    codes: Vec<u64>,
    records: Vec<u64>,
    at: usize,
}

impl<'a> Cursor<'a> {
    /// The cursor of `phase` at position `start`.
    fn new(
        db: &'a Store,
        phase: &'a PhaseIndex,
        values: &'a ValueFile,
        resolved: Option<&'a ResolvedRecords>,
        start: u64,
    ) -> Cursor<'a> {
        let per = values.block_positions() as u64;
        Cursor {
            db,
            phase,
            values,
            resolved,
            next_block: (start / per) as u32,
            first: start - start % per,
            skip: (start % per) as usize,
            positions: Vec::new(),
            codes: Vec::new(),
            records: Vec::new(),
            at: 0,
        }
    }

    /// The code of the next position, `None` at the end of the phase.
    #[inline]
    fn head(&mut self) -> Result<Option<u64>, Error> {
        if self.at == self.codes.len() {
            self.refill()?;
        }
        Ok(self.codes.get(self.at).copied())
    }

    /// The positions of the phase before the head.
    fn consumed(&self) -> u64 {
        self.first + (self.at + self.skip) as u64
    }

    fn refill(&mut self) -> Result<(), Error> {
        let (per, blocks) = (self.values.block_positions() as u64, self.values.blocks());
        self.first = (self.next_block as u64 * per).min(self.phase.len());
        self.at = 0;
        self.positions.clear();
        self.codes.clear();
        self.records.clear();
        if self.next_block >= blocks {
            return Ok(());
        }
        let end = (self.next_block as u64 + LOOKAHEAD.div_ceil(per)).min(blocks as u64) as u32;
        let first = self.next_block as u64 * per;
        if let Some(r) = self.resolved {
            let n = (end as u64 * per).min(self.phase.len()) - first;
            r.read(self.phase.phase(), first, &mut self.records, n as usize)?;
        } else {
            let decoded: Vec<Result<Vec<u64>, Error>> =
                (self.next_block..end).into_par_iter().map(|b| self.values.block(b)).collect();
            for d in decoded {
                self.records.extend_from_slice(&d?);
            }
        }
        let phase = self.phase;
        self.positions = phase.par_positions(first..first + self.records.len() as u64).map(|(_, p)| p).collect();
        if self.resolved.is_none() && self.values.elides_losses() {
            // Elided loss distances, by one ply of search each (in parallel).
            let db = self.db;
            self.records
                .par_iter_mut()
                .zip(self.positions.par_iter())
                .with_min_len(1024)
                .try_for_each(|(r, p)| db.resolve(p, Packed(*r)).map(|v| *r = v.0))?;
        }
        self.codes = self.positions.iter().map(|p| p.code()).collect();
        self.next_block = end;
        self.at = std::mem::take(&mut self.skip);
        Ok(())
    }
}

/// Export the phases with at most `opts.max_pieces` pieces of `db` as published
/// retrograde files into `out` (created if missing; it must not already hold published
/// files of the same piece count), or with `out = None` only compute the digest.
/// Progress goes to `reporter`.
pub fn export(
    db: &Store,
    opts: &ExportOptions,
    out: Option<&Path>,
    reporter: &dyn Reporter,
) -> Result<ExportSummary, Error> {
    export_with(db, opts, out, reporter, &mut ExportCheckpoint::none())
}

/// [`export`] with a checkpoint, which goes on from the file its checkpoint names and
/// saves its progress between files (a digest only: with `out`, a checkpoint file is an
/// error).
pub fn export_with(
    db: &Store,
    opts: &ExportOptions,
    out: Option<&Path>,
    reporter: &dyn Reporter,
    checkpoint: &mut ExportCheckpoint,
) -> Result<ExportSummary, Error> {
    if out.is_some() && checkpoint.file.is_some() {
        return Err(Error::InvalidArgument("a checkpoint keeps the progress of a digest only (--digest)".into()));
    }
    let geom = db.geometry();
    let max = opts.max_pieces.unwrap_or(db.max_pieces());
    if max > db.max_pieces() {
        return Err(Error::MissingDatabase {
            path: db.path().to_path_buf(),
            phase: format!("with {max} pieces"),
            max_pieces: max,
        });
    }
    if opts.lines_per_file == 0 {
        return Err(Error::InvalidArgument("lines per file must be at least 1".into()));
    }
    // A search from a smaller start (`bfs --max-pieces`) has BFS files of its own
    // phases only: said before any file is written.
    if let Some(f) = db.first_depths()?
        && f.summary().start.pieces() < max
    {
        return Err(Error::InvalidArgument(format!(
            "the stored breadth-first search starts in phase {} and reaches the phases with at most {} pieces \
             only: export --max-pieces {} (or store a search from the initial position)",
            f.summary().start,
            f.summary().start.pieces(),
            f.summary().start.pieces()
        )));
    }
    let index = GameIndex::build(geom, max)?;
    if let Some(dir) = out {
        std::fs::create_dir_all(dir).map_err(io(dir))?;
        for e in std::fs::read_dir(dir).map_err(io(dir))? {
            let name = e.map_err(io(dir))?.file_name().to_string_lossy().into_owned();
            let stem = name.strip_suffix(".tmp").unwrap_or(&name);
            if let Some((n, _, _)) = parse_file_name(stem)
                && n == max
            {
                return Err(Error::InvalidArgument(format!(
                    "{} already holds published files with {max} pieces ({name}); remove them or choose another --out",
                    dir.display()
                )));
            }
        }
    }
    let lens: Vec<u64> = index.phases().iter().map(|p| p.len()).collect();
    let mut progress = checkpoint.start(max, opts.lines_per_file, &lens, (opts.stats, opts.fingerprint), reporter);
    let retro_from = if progress.retrograde_done { Vec::new() } else { std::mem::take(&mut progress.consumed) };
    let mut phase_values = Vec::new();
    for p in index.phases() {
        phase_values.push(db.values(p.phase()).ok_or_else(|| Error::MissingDatabase {
            path: db.path().to_path_buf(),
            phase: p.phase().to_string(),
            max_pieces: p.phase().pieces(),
        })?);
    }
    let resolved = match &opts.records_dir {
        Some(dir) if !progress.retrograde_done && phase_values.iter().any(|v| v.elides_losses()) => {
            Some(ResolvedRecords::prepare(db, &index, ResolvedDir::new(dir, db.meta())?, reporter)?)
        }
        _ => None,
    };
    let mut cursors = Vec::new();
    for (k, (p, values)) in index.phases().iter().zip(phase_values).enumerate() {
        let from_records = resolved.as_ref().filter(|r| r.has(p.phase()));
        cursors.push(Cursor::new(db, p, values, from_records, retro_from.get(k).copied().unwrap_or(0)));
    }
    let total = index.len();
    if !opts.stats {
        progress.stats = None;
    } else if progress.stats.is_none() {
        let phase = |p: &PhaseIndex| [p.phase().player, p.phase().opponent];
        progress.stats =
            Some(index.phases().iter().map(|p| PhaseStats { phase: phase(p), ..Default::default() }).collect());
    }
    let (done, written) = if progress.retrograde_done {
        (progress.retrograde_files.clone(), total)
    } else {
        let r = export_retrograde(db, max, opts, out, &mut cursors, &progress, checkpoint, reporter)?;
        progress.retrograde_files = r.files.clone();
        progress.retrograde_done = true;
        progress.stats = r.stats;
        checkpoint.save(&progress)?;
        (r.files, r.positions)
    };
    drop(cursors);
    if let Some(r) = resolved.filter(|_| !opts.keep_records) {
        r.remove(reporter);
    }
    if written != total {
        return Err(crate::error::corrupt(db.path(), format!("{written} positions read, the phases hold {total}")));
    }
    let bfs_files = match (db.first_depths()?, db.bfs()?) {
        (Some(f), _) => {
            let s = f.summary();
            let layers = node_layers::NodeLayers::open(
                db.path(),
                geom,
                s.layers.len() as u32,
                s.start,
                s.expand_checkmates,
                s.positions,
            )?;
            let from = (std::mem::take(&mut progress.bfs_files), std::mem::take(&mut progress.consumed));
            let mut file_done = |files: &[ExportedFile], mark: Mark| {
                checkpoint.file_done(|| ExportProgress {
                    bfs_files: files.to_vec(),
                    consumed: mark.consumed,
                    ..progress.clone()
                })
            };
            let sink = (out, opts.fingerprint);
            export_bfs_by_positions(f, layers.as_ref(), max, opts.lines_per_file, sink, reporter, from, &mut file_done)?
        }
        (None, Some(b)) => export_bfs(geom, b, max, opts.lines_per_file, (out, opts.fingerprint), reporter)?,
        (None, None) => Vec::new(),
    };
    let digest = set_digest(bfs_files.iter().chain(&done).map(|f| f.sha256.as_str()));
    let stats = progress.stats;
    let fingerprints = if !opts.fingerprint {
        None
    } else {
        let missing = || Error::InvalidArgument("a file of the export lacks its part of the fingerprint".into());
        let bfs = (!bfs_files.is_empty()).then(|| run_fingerprint(&bfs_files).ok_or_else(missing)).transpose()?;
        let retrograde = run_fingerprint(&done).ok_or_else(missing)?;
        Some(Fingerprints { retrograde: retrograde.to_string(), bfs: bfs.map(|b| b.to_string()) })
    };
    Ok(ExportSummary {
        max_pieces: max,
        positions: total,
        bfs_files,
        retrograde_files: done,
        digest,
        stats,
        fingerprints,
    })
}

/// The retrograde files of an export, from `cursors` on (the files of `progress` done):
/// the files in order, the positions of all of them and, when `progress` counts them,
/// their statistics.
#[allow(clippy::too_many_arguments)]
fn export_retrograde(
    db: &Store,
    max: u32,
    opts: &ExportOptions,
    out: Option<&Path>,
    cursors: &mut [Cursor<'_>],
    progress: &ExportProgress,
    checkpoint: &mut ExportCheckpoint,
    reporter: &dyn Reporter,
) -> Result<Retrograde, Error> {
    let geom = db.geometry();
    let total: u64 = cursors.iter().map(|c| c.phase.len()).sum();
    let before: u64 = cursors.iter().map(Cursor::consumed).sum();
    reporter.begin(&format!("export {max} pieces"), total);
    reporter.resumed(before);
    let mut file_done = |files: &[ExportedFile], mark: Mark| {
        checkpoint.file_done(|| ExportProgress {
            retrograde_files: files.to_vec(),
            consumed: mark.consumed,
            stats: mark.stats,
            ..progress.clone()
        })
    };
    let first_file = progress.retrograde_files.len() as u64;
    let stats = progress.stats.clone();
    let result = with_writer((out, opts.fingerprint), progress.retrograde_files.clone(), &mut file_done, |tx| {
        produce(geom, db, max, opts.lines_per_file, cursors, (first_file, before, stats), tx, reporter)
    });
    reporter.end();
    result.map(|((positions, stats), files)| Retrograde { files, positions, stats })
}

/// What the retrograde part of an export made.
struct Retrograde {
    /// Every retrograde file, in order.
    files: Vec<ExportedFile>,
    /// The positions in them.
    positions: u64,
    /// Their statistics, when counted.
    stats: Option<Vec<PhaseStats>>,
}

/// The lines a parallel task of an export made: their text, how many, and with
/// statistics their counts per phase.
type TaskLines = (String, u64, Vec<PhaseStats>);

/// Merge the phases by code, format the lines in parallel batches and send them to the
/// writer, file by file, from file `first_file` on with `written` positions in the files
/// before, and with `stats` (per phase of `cursors`) count the positions into them too.
/// Returns the number of positions sent and before, and the statistics.
#[allow(clippy::too_many_arguments)]
fn produce(
    geom: &crate::game::Geometry,
    db: &Store,
    max: u32,
    lines_per_file: u64,
    cursors: &mut [Cursor<'_>],
    (first_file, mut written, mut stats): (u64, u64, Option<Vec<PhaseStats>>),
    tx: &std::sync::mpsc::SyncSender<Message>,
    reporter: &dyn Reporter,
) -> Result<(u64, Option<Vec<PhaseStats>>), Error> {
    let mut files = FileSplitter::new(tx, max, Kind::Retrograde, lines_per_file, first_file);
    // Each position with its record and the phase (cursor) it comes from.
    let mut batch: Vec<(Position, u64, usize)> = Vec::with_capacity(BATCH);
    let mut last: Option<u64> = None;
    loop {
        let want = (BATCH as u64).min(files.room()) as usize;
        batch.clear();
        while batch.len() < want {
            let mut best: Option<(usize, u64)> = None;
            for (k, c) in cursors.iter_mut().enumerate() {
                if let Some(code) = c.head()?
                    && best.is_none_or(|(_, b)| code < b)
                {
                    best = Some((k, code));
                }
            }
            let Some((k, code)) = best else { break };
            if last.is_some_and(|l| l >= code) {
                return Err(crate::error::corrupt(db.path(), "the phases' positions are not in ascending code order"));
            }
            last = Some(code);
            let c = &mut cursors[k];
            batch.push((c.positions[c.at], c.records[c.at], k));
            c.at += 1;
        }
        if batch.is_empty() {
            return Ok((written, stats));
        }
        let phases = cursors.len();
        let counting = stats.is_some();
        let texts: Vec<Result<TaskLines, Error>> = batch
            .par_chunks(TASK)
            .map(|chunk| {
                let mut s = String::with_capacity(chunk.len() * 64);
                let mut counted = if counting { vec![PhaseStats::default(); phases] } else { Vec::new() };
                for &(ref pos, rec, k) in chunk {
                    let written = match counted.get_mut(k) {
                        Some(acc) => write_line_of(pos, rec, tally(geom, pos, Packed(rec), acc), &mut s),
                        None => write_line(geom, pos, rec, &mut s),
                    };
                    written.map_err(|u| {
                        Error::InvalidArgument(format!(
                            "position {} ({}) node {} has value code {}, which the published format cannot write (0 means a draw)",
                            code_to_base64(pos.code()),
                            pos.phase(),
                            u.node,
                            u.code
                        ))
                    })?;
                }
                Ok((s, chunk.len() as u64, counted))
            })
            .collect();
        let mut lines = Vec::with_capacity(texts.len());
        for t in texts {
            let (text, n, counted) = t?;
            if let Some(stats) = stats.as_mut() {
                for (total, part) in stats.iter_mut().zip(counted) {
                    *total = std::mem::take(total).merge(part);
                }
            }
            lines.push((text, n));
        }
        files.send(lines, batch.len() as u64, || Mark {
            consumed: cursors.iter().map(Cursor::consumed).collect(),
            stats: stats.clone(),
        })?;
        written += batch.len() as u64;
        reporter.advance(batch.len() as u64);
    }
}
