//! Export a database to the published text format, streaming: positions come from
//! every phase's value file in index order (= ascending code within a phase), are
//! merged by code across phases, turned into lines in parallel batches and written (or
//! only hashed) in order. Memory stays at a few batches, whatever the database's size.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use rayon::prelude::*;

use crate::analysis::stats::{PhaseStats, tally};
use crate::analysis::sweep::CheckpointFile;
use crate::bfs_depths::node_layers;
use crate::error::{Error, io};
use crate::file::temp_name;
use crate::game::Position;
use crate::game::notation::code_to_base64;
use crate::index::{GameIndex, PhaseIndex, Positions};
use crate::progress::Reporter;
use crate::published::resolved::ResolvedRecords;
use crate::published::{
    FIELDS, FileDigest, Kind, LINES_PER_FILE, bfs_nontrivial_nodes, file_name, parse_file_name, set_digest,
    write_bfs_line, write_line, write_line_of,
};
use crate::record::Packed;
use crate::store::Database;
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

/// One file of an export.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ExportedFile {
    /// Its name, e.g. `ostle_8_retrograde_output0000.txt`.
    pub name: String,
    /// Lines (positions).
    pub lines: u64,
    /// Bytes, with a LF after every line.
    pub bytes: u64,
    /// sha256 of its lines joined by LF (the published per-file digest), hex.
    pub sha256: String,
    /// With [`ExportOptions::fingerprint`]: what its lines give the fingerprint of the
    /// run, numbered after the files before it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fingerprint: Option<FilePrint>,
}

/// What one file gives the fingerprint of its run.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct FilePrint {
    /// Its nodes (fields not empty).
    pub nodes: u64,
    /// The XOR of its blocks' ciphertexts, 32 hex digits (a little-endian 128-bit
    /// number written most significant digit first).
    pub xor: String,
}

impl FilePrint {
    fn xor(&self) -> Option<u128> {
        u128::from_str_radix(&self.xor, 16).ok().filter(|_| self.xor.len() == 32)
    }
}

/// The published solver's fingerprints of the runs an export wrote (as its log prints
/// them), decimal.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Fingerprints {
    /// Of the retrograde files.
    pub retrograde: String,
    /// Of the BFS files, when there are.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bfs: Option<String>,
}

/// The fingerprint of a run from its files (each with its part), `None` when one lacks
/// its part.
pub fn run_fingerprint(files: &[ExportedFile]) -> Option<u64> {
    let mut xor = 0u128;
    for f in files {
        xor ^= f.fingerprint.as_ref()?.xor()?;
    }
    Some(crate::published::fingerprint::fold(xor))
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

/// Where the files so far end, told to the writer with the end of each: the positions
/// of each phase (in index order) in them and, for retrograde files with statistics,
/// those of these positions.
#[derive(Default)]
pub struct Mark {
    /// Positions of each phase in the files so far.
    pub consumed: Vec<u64>,
    /// Their statistics, when counted.
    pub stats: Option<Vec<PhaseStats>>,
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
        db: &Database,
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

/// Positions per batch turned into lines in parallel (and written in order).
const BATCH: usize = 1 << 18;
/// Lines per parallel task.
const TASK: usize = 4096;
/// Positions decoded ahead per phase.
const LOOKAHEAD: u64 = 1 << 18;

/// The positions of one phase in index order, decoded a window at a time.
struct Cursor<'a> {
    db: &'a Database,
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
        db: &'a Database,
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

/// Where lines go: a file per published file (or nowhere), each hashed as it streams.
struct Output {
    dir: Option<PathBuf>,
    current: Option<OpenFile>,
    done: Vec<ExportedFile>,
    /// The fingerprint's cipher, when it is computed.
    cipher: Option<crate::published::fingerprint::Cipher>,
}

struct OpenFile {
    name: String,
    tmp: PathBuf,
    writer: Option<BufWriter<File>>,
    digest: FileDigest,
    lines: u64,
    bytes: u64,
    /// Its part of the fingerprint so far.
    print: crate::published::fingerprint::Part,
}

impl Output {
    fn open(&mut self, name: String) -> Result<(), Error> {
        let (tmp, writer) = match &self.dir {
            Some(d) => {
                let tmp = temp_name(&d.join(&name));
                let f = File::create(&tmp).map_err(io(&tmp))?;
                (tmp, Some(BufWriter::with_capacity(1 << 22, f)))
            }
            None => (PathBuf::new(), None),
        };
        let print = crate::published::fingerprint::Part::default();
        self.current = Some(OpenFile { name, tmp, writer, digest: FileDigest::new(), lines: 0, bytes: 0, print });
        Ok(())
    }

    /// Write lines to the current file: `texts`, each text with its number of lines.
    fn write_all(&mut self, texts: &[(String, u64)]) -> Result<(), Error> {
        if let Some(cipher) = &self.cipher {
            let f = self.current.as_ref().expect("a file is open");
            // Position and node numbers go on from the files before and the lines so far.
            let before = |get: fn(&ExportedFile) -> u64| self.done.iter().map(get).sum::<u64>();
            let first_position = before(|d| d.lines) + f.lines;
            let first_node = before(|d| d.fingerprint.as_ref().map_or(0, |p| p.nodes)) + f.print.nodes;
            let just: Vec<&str> = texts.iter().map(|(t, _)| t.as_str()).collect();
            let part = crate::published::fingerprint::part_of_texts(cipher, &just, first_position, first_node)
                .map_err(|e| Error::InvalidArgument(format!("{}: the export's own line: {e}", f.name)))?;
            let f = self.current.as_mut().expect("a file is open");
            f.print = f.print.then(part);
        }
        for (t, lines) in texts {
            self.write(t, *lines)?;
        }
        Ok(())
    }

    fn write(&mut self, text: &str, lines: u64) -> Result<(), Error> {
        let f = self.current.as_mut().expect("a file is open");
        f.digest.update(text.as_bytes());
        f.lines += lines;
        f.bytes += text.len() as u64;
        if let Some(w) = f.writer.as_mut() {
            w.write_all(text.as_bytes()).map_err(io(&f.tmp))?;
        }
        Ok(())
    }

    fn close(&mut self) -> Result<(), Error> {
        let Some(f) = self.current.take() else { return Ok(()) };
        if let (Some(w), Some(d)) = (f.writer, &self.dir) {
            let file = w.into_inner().map_err(|e| Error::Io { path: f.tmp.clone(), source: e.into_error() })?;
            drop(file);
            let path = d.join(&f.name);
            std::fs::rename(&f.tmp, &path).map_err(io(&path))?;
        }
        let fingerprint =
            self.cipher.as_ref().map(|_| FilePrint { nodes: f.print.nodes, xor: format!("{:032x}", f.print.xor) });
        self.done.push(ExportedFile {
            name: f.name,
            lines: f.lines,
            bytes: f.bytes,
            sha256: f.digest.finish(),
            fingerprint,
        });
        Ok(())
    }
}

/// Export the phases with at most `opts.max_pieces` pieces of `db` as published
/// retrograde files into `out` (created if missing; it must not already hold published
/// files of the same piece count), or with `out = None` only compute the digest.
/// Progress goes to `reporter`.
pub fn export(
    db: &Database,
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
    db: &Database,
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
    db: &Database,
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

/// Run `produce` with a writer thread beside it that writes (or only hashes) the files
/// it sends, in order: one batch is written while the next is made. The files are
/// those after `done`; `file_done` is told at the end of each. Returns what `produce`
/// returned and every file. The writer's error comes first (it makes the producer's
/// sends fail too).
fn with_writer<R: Send>(
    (out, fingerprint): (Option<&Path>, bool),
    done: Vec<ExportedFile>,
    file_done: &mut FileDone<'_>,
    produce: impl FnOnce(&std::sync::mpsc::SyncSender<Message>) -> Result<R, Error>,
) -> Result<(R, Vec<ExportedFile>), Error> {
    let (tx, rx) = std::sync::mpsc::sync_channel::<Message>(2);
    let out_dir = out.map(Path::to_path_buf);
    let cipher = fingerprint.then(crate::published::fingerprint::Cipher::new);
    let (produced, written) = std::thread::scope(|scope| {
        let writer = scope.spawn(move || {
            let mut output = Output { dir: out_dir, current: None, done, cipher };
            for m in rx {
                match m {
                    Message::Open(name) => output.open(name)?,
                    Message::Lines(texts) => output.write_all(&texts)?,
                    Message::Close(mark) => {
                        output.close()?;
                        file_done(&output.done, mark)?;
                    }
                }
            }
            output.close()?;
            Ok::<_, Error>(output.done)
        });
        let produced = produce(&tx);
        drop(tx);
        let written =
            writer.join().unwrap_or_else(|_| Err(Error::InvalidArgument("the export writer thread failed".into())));
        (produced, written)
    });
    match (produced, written) {
        (Ok(r), Ok(d)) => Ok((r, d)),
        (_, Err(e)) => Err(e),
        (Err(e), _) => Err(e),
    }
}

/// Write the published BFS files of a stored breadth-first search, as the published
/// solver does: one line for every position with at most `max` pieces, in ascending code
/// order: the code, `checkmate` for an immediate-win position, then 25 fields, field j
/// the depth of node (position, j), `-1` when the search did not reach it but the node
/// is non-trivial ([`bfs_nontrivial_nodes`] over the phases with at most `max` pieces),
/// else empty.
pub fn export_bfs(
    geom: &crate::game::Geometry,
    bfs: &crate::store::bfs::BfsFile,
    max: u32,
    lines_per_file: u64,
    (out, fingerprint): (Option<&Path>, bool),
    reporter: &dyn Reporter,
) -> Result<Vec<ExportedFile>, Error> {
    use crate::game::node::{key_code, key_index};
    let index = GameIndex::build(geom, max)?;
    let mut walks: Vec<Positions<'_>> = index.phases().iter().map(|p| p.positions(0..p.len())).collect();
    let heads: Vec<Option<Position>> = walks.iter_mut().map(|w| w.next()).collect();
    let mut all = AllPositions { walks, heads };
    let mut fields = [None::<u32>; FIELDS];
    let mut current: Option<u64> = None;
    reporter.begin("export BFS", index.len());
    let result = with_writer((out, fingerprint), Vec::new(), &mut |_, _| Ok(()), |tx| {
        let mut lines = BfsLines::new(geom, FileSplitter::new(tx, max, Kind::Bfs, lines_per_file, 0), reporter);
        // The lines of every position before the one of `code`, then its own.
        let mut up_to = |lines: &mut BfsLines<'_, '_>, code: u64, fields: &[Option<u32>; FIELDS]| {
            if Position::from_code(code).phase().pieces() > max {
                return Ok(());
            }
            while let Some(p) = all.next_below(code) {
                lines.position(p, [None; FIELDS])?;
            }
            match all.next_below(code + 1) {
                Some(p) => lines.position(p, *fields),
                None => Err(crate::error::corrupt(
                    bfs.path(),
                    format!("a node of {}, which is not a canonical position of the phases", code_to_base64(code)),
                )),
            }
        };
        bfs.for_each_block(|block| {
            for &(key, depth) in block {
                let code = key_code(key);
                if let Some(c) = current.filter(|&c| c != code) {
                    up_to(&mut lines, c, &fields)?;
                    fields = [None; FIELDS];
                }
                current = Some(code);
                fields[key_index(key)] = Some(depth as u32);
            }
            Ok(())
        })?;
        if let Some(c) = current {
            up_to(&mut lines, c, &fields)?;
        }
        while let Some(p) = all.next_below(u64::MAX) {
            lines.position(p, [None; FIELDS])?;
        }
        lines.flush()
    });
    reporter.end();
    result.map(|((), files)| files)
}

/// Every position of some phases in ascending code order, merged from each phase's walk.
struct AllPositions<'a> {
    walks: Vec<Positions<'a>>,
    /// Each phase's next position.
    heads: Vec<Option<Position>>,
}

impl AllPositions<'_> {
    /// The next position if its code is below `code`.
    fn next_below(&mut self, code: u64) -> Option<Position> {
        let k = (0..self.heads.len())
            .filter(|&k| self.heads[k].is_some())
            .min_by_key(|&k| self.heads[k].map(|h| h.code()))?;
        let head = self.heads[k].filter(|h| h.code() < code)?;
        self.heads[k] = self.walks[k].next();
        Some(head)
    }
}

/// Told at the end of every file: the files so far and where they end ([`Mark`]).
pub type FileDone<'a> = dyn FnMut(&[ExportedFile], Mark) -> Result<(), Error> + Send + 'a;

/// [`export_bfs`] from a search stored by positions (the first-depth file): the depths
/// are decoded into memory (one byte per position of the game), the positions of every
/// phase with at most `max` pieces that the search reached are merged by code, and each
/// one's node depths are read from the search's node layers when it kept them
/// (`layers`: the blocks of every layer that a batch's positions fall in, decoded in
/// parallel), or else found from its predecessors' first depths
/// ([`crate::bfs_depths::first_depths::node_sources`], every predecessor's depth asked for
/// from memory before any is read), in parallel batches; a writer thread hashes (and
/// writes) one batch while the next is made. The same lines as from a node-list search
/// of the same depth. `from`: the files done and the positions of each phase in them, to
/// go on after them (none and `[]` to begin); `file_done(files, mark)` is called at
/// the end of every file (an error from it ends the export with that error).
#[allow(clippy::too_many_arguments)]
pub fn export_bfs_by_positions(
    depths: &crate::bfs_depths::first_depths::FirstDepthFile,
    layers: Option<&node_layers::NodeLayers>,
    max: u32,
    lines_per_file: u64,
    (out, fingerprint): (Option<&Path>, bool),
    reporter: &dyn Reporter,
    (files, consumed): (Vec<ExportedFile>, Vec<u64>),
    file_done: &mut FileDone<'_>,
) -> Result<Vec<ExportedFile>, Error> {
    use crate::bfs_depths::first_depths::{NOT_REACHED, depths_from_sources, node_sources};
    let numbering = depths.numbering();
    let geom = numbering.index().geometry();
    // The search's phases: those its start can reach.
    let universe = depths.summary().start.pieces();
    if max > universe {
        return Err(Error::InvalidArgument(format!(
            "the stored breadth-first search starts in phase {} and reaches the phases with at most {universe} \
             pieces only: its BFS files are those of --max-pieces {universe}",
            depths.summary().start
        )));
    }
    let all = depths.load_all()?;
    let at = |g: u64| Some(all[g as usize]).filter(|&d| d != NOT_REACHED).map(u32::from);
    let phases: Vec<(u64, &PhaseIndex)> = numbering
        .index()
        .phases()
        .iter()
        .enumerate()
        .filter(|(_, p)| p.phase().pieces() <= max)
        .map(|(s, p)| (numbering.start(s), p))
        .collect();
    // Per phase, its positions from where the export stands (every position has a
    // line, reached or not), and the index of the next one.
    let mut walks: Vec<(u64, Positions<'_>)> = phases
        .iter()
        .enumerate()
        .map(|(k, &(_, p))| {
            let from = consumed.get(k).copied().unwrap_or(0);
            (from, p.positions(from..p.len()))
        })
        .collect();
    // Per phase: its next index and position.
    let mut next_position = |k: usize| -> Option<(u64, Position)> {
        let (at, walk) = &mut walks[k];
        let pos = walk.next()?;
        *at += 1;
        Some((*at - 1, pos))
    };
    let mut heads: Vec<Option<(u64, Position)>> = (0..phases.len()).map(&mut next_position).collect();
    let lines_before: u64 = files.iter().map(|f| f.lines).sum();
    let summary = depths.summary();
    reporter.begin("export BFS", phases.iter().map(|(_, p)| p.len()).sum());
    reporter.resumed(lines_before);
    let first_file = files.len() as u64;
    // With node layers: the blocks (of every layer) that the batch's positions are in.
    let mut blocks = LayerBlocks::default();
    let result = with_writer((out, fingerprint), files, file_done, |tx| {
        let mut files = FileSplitter::new(tx, max, Kind::Bfs, lines_per_file, first_file);
        let mut batch: Vec<(u64, Position)> = Vec::with_capacity(BATCH);
        loop {
            batch.clear();
            // A batch ends at the end of a file at the latest, where the progress is kept.
            let want = (BATCH as u64).min(files.room()) as usize;
            while batch.len() < want {
                let Some(k) =
                    (0..heads.len()).filter(|&k| heads[k].is_some()).min_by_key(|&k| heads[k].map(|h| h.1.code()))
                else {
                    break;
                };
                let (i, pos) = heads[k].expect("chosen among the present");
                batch.push((phases[k].0 + i, pos));
                heads[k] = next_position(k);
            }
            if batch.is_empty() {
                return Ok(());
            }
            let texts: Vec<(String, u64)> = match layers {
                Some(layers) => {
                    blocks.load(layers, &batch)?;
                    let texts: Vec<Result<(String, u64), Error>> = batch
                        .par_chunks(TASK)
                        .map(|chunk| {
                            let mut s = String::with_capacity(chunk.len() * 64);
                            for (g, p) in chunk {
                                let fields = match all[*g as usize] {
                                    NOT_REACHED => [None; FIELDS],
                                    first => layers.node_depths(blocks.of(*g), g % LAYER_BLOCK, first.into())?,
                                };
                                write_bfs_line(geom, p, &fields, bfs_nontrivial_nodes(geom, p, universe), &mut s);
                            }
                            Ok((s, chunk.len() as u64))
                        })
                        .collect();
                    texts.into_iter().collect::<Result<_, Error>>()?
                }
                // Each position's predecessors are found and their depths asked for from
                // memory before any is read, so that their cache misses overlap.
                None => batch
                    .par_chunks(TASK)
                    .map_init(Vec::new, |sources, chunk| {
                        let mut s = String::with_capacity(chunk.len() * 64);
                        for (_, p) in chunk {
                            let start = node_sources(numbering, summary, p, None, sources);
                            for &(g, _) in sources.iter() {
                                crate::sys::prefetch(all.as_ptr().wrapping_add(g as usize));
                            }
                            let fields = depths_from_sources(summary, sources, start, at);
                            write_bfs_line(geom, p, &fields, bfs_nontrivial_nodes(geom, p, universe), &mut s);
                        }
                        (s, chunk.len() as u64)
                    })
                    .collect(),
            };
            files.send(texts, batch.len() as u64, || Mark {
                consumed: heads.iter().zip(&phases).map(|(h, (_, p))| h.as_ref().map_or(p.len(), |h| h.0)).collect(),
                stats: None,
            })?;
            reporter.advance(batch.len() as u64);
        }
    });
    reporter.end();
    result.map(|((), files)| files)
}

/// Positions per block of the node layers.
const LAYER_BLOCK: u64 = node_layers::BLOCK_POSITIONS as u64;

/// The blocks of the node layers that a batch of an export needs, every layer's, decoded:
/// by block number, ascending. A block the next batch needs too is kept for it.
#[derive(Default)]
struct LayerBlocks {
    blocks: Vec<(u64, Vec<Option<node_layers::LayerBlock>>)>,
}

impl LayerBlocks {
    /// Have the blocks of the positions of `batch` (global numbers first), and no others.
    fn load(&mut self, layers: &node_layers::NodeLayers, batch: &[(u64, Position)]) -> Result<(), Error> {
        let mut need: Vec<u64> = batch.iter().map(|(g, _)| g / LAYER_BLOCK).collect();
        need.sort_unstable();
        need.dedup();
        self.blocks.retain(|(b, _)| need.binary_search(b).is_ok());
        let missing: Vec<(u64, usize)> = need
            .iter()
            .filter(|&&b| self.blocks.binary_search_by_key(&b, |(x, _)| *x).is_err())
            .flat_map(|&b| (0..layers.depths()).map(move |d| (b, d)))
            .collect();
        let decoded: Vec<Result<_, Error>> = missing.par_iter().map(|&(b, d)| layers.block(d, b)).collect();
        let mut decoded = decoded.into_iter();
        for pair in missing.chunks(layers.depths().max(1)) {
            let per_layer = decoded.by_ref().take(pair.len()).collect::<Result<Vec<_>, Error>>()?;
            self.blocks.push((pair[0].0, per_layer));
        }
        self.blocks.sort_unstable_by_key(|(b, _)| *b);
        Ok(())
    }

    /// Every layer's block of the position with global number `g` (one of the batch's).
    fn of(&self, g: u64) -> &[Option<node_layers::LayerBlock>] {
        let i = self.blocks.binary_search_by_key(&(g / LAYER_BLOCK), |(b, _)| *b).expect("loaded for the batch");
        &self.blocks[i].1
    }
}

/// The published BFS files of a node-list search being made: positions in order, made
/// into lines in parallel batches (a batch ends at the end of a file at the latest).
struct BfsLines<'a, 't> {
    geom: &'a crate::game::Geometry,
    files: FileSplitter<'t>,
    batch: Vec<(Position, [Option<u32>; FIELDS])>,
    reporter: &'a dyn Reporter,
}

impl<'a, 't> BfsLines<'a, 't> {
    /// The lines from the first file on.
    fn new(geom: &'a crate::game::Geometry, files: FileSplitter<'t>, reporter: &'a dyn Reporter) -> BfsLines<'a, 't> {
        BfsLines { geom, files, batch: Vec::with_capacity(BATCH), reporter }
    }

    /// The line of canonical position `pos` with its node depths.
    fn position(&mut self, pos: Position, fields: [Option<u32>; FIELDS]) -> Result<(), Error> {
        self.batch.push((pos, fields));
        if self.batch.len() as u64 >= (BATCH as u64).min(self.files.room()) {
            self.flush()?;
        }
        Ok(())
    }

    fn flush(&mut self) -> Result<(), Error> {
        if self.batch.is_empty() {
            return Ok(());
        }
        let (geom, max) = (self.geom, self.files.max);
        let texts: Vec<(String, u64)> = self
            .batch
            .par_chunks(TASK)
            .map(|chunk| {
                let mut s = String::with_capacity(chunk.len() * 64);
                for (p, fields) in chunk {
                    write_bfs_line(geom, p, fields, bfs_nontrivial_nodes(geom, p, max), &mut s);
                }
                (s, chunk.len() as u64)
            })
            .collect();
        let n = self.batch.len() as u64;
        self.files.send(texts, n, Mark::default)?;
        self.reporter.advance(n);
        self.batch.clear();
        Ok(())
    }
}

/// Splits the lines a producer makes into published files of `lines_per_file` lines
/// each for the writer thread: it opens a file before its first lines and closes it
/// after its last, with the positions of each phase that the files so far hold.
struct FileSplitter<'t> {
    tx: &'t std::sync::mpsc::SyncSender<Message>,
    max: u32,
    kind: Kind,
    lines_per_file: u64,
    next_file: u64,
    in_file: u64,
}

impl<'t> FileSplitter<'t> {
    /// Files of `kind` with `max` pieces, numbered from `first_file` on.
    fn new(
        tx: &'t std::sync::mpsc::SyncSender<Message>,
        max: u32,
        kind: Kind,
        lines_per_file: u64,
        first_file: u64,
    ) -> FileSplitter<'t> {
        FileSplitter { tx, max, kind, lines_per_file, next_file: first_file, in_file: 0 }
    }

    /// How many more lines the current file (or the next, none being open) takes.
    fn room(&self) -> u64 {
        self.lines_per_file - self.in_file
    }

    /// Send `texts`, `lines` lines in all (at most [`FileSplitter::room`]); a file that
    /// they fill is closed with the mark that `mark` gives.
    fn send(&mut self, texts: Vec<(String, u64)>, lines: u64, mark: impl FnOnce() -> Mark) -> Result<(), Error> {
        debug_assert!(lines <= self.room());
        let gone = |_| Error::InvalidArgument("the export writer stopped".into());
        if self.in_file == 0 {
            self.tx.send(Message::Open(file_name(self.max, self.kind, self.next_file))).map_err(gone)?;
            self.next_file += 1;
        }
        self.tx.send(Message::Lines(texts)).map_err(gone)?;
        self.in_file += lines;
        if self.in_file == self.lines_per_file {
            self.tx.send(Message::Close(mark())).map_err(gone)?;
            self.in_file = 0;
        }
        Ok(())
    }
}

/// What the producer sends the writer thread.
enum Message {
    /// Start the file of this name.
    Open(String),
    /// Lines for the current file: text and its number of lines.
    Lines(Vec<(String, u64)>),
    /// End the current file; where the files so far end.
    Close(Mark),
}

/// Merge the phases by code, format the lines in parallel batches and send them to the
/// writer, file by file, from file `first_file` on with `written` positions in the files
/// before, and with `stats` (per phase of `cursors`) count the positions into them too.
/// Returns the number of positions sent and before, and the statistics.
#[allow(clippy::too_many_arguments)]
fn produce(
    geom: &crate::game::Geometry,
    db: &Database,
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
