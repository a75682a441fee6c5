//! Building a database from solved phases: the solver's phase value files (8 bytes per
//! position, its working files) become compressed value files, key indexes and, last,
//! the metadata that makes the directory a database.

use std::path::{Path, PathBuf};
use std::time::Instant;

use crate::error::Error;
use crate::game::Geometry;
use crate::index::GameIndex;
use crate::record::Packed;
use crate::store::directory::{self, NewGeneration, WriteLock};
use crate::store::keys::{self, Backend};
use crate::store::meta::{self, Meta, PhaseMeta};
use crate::store::values::{self, ValueFile, WriteOptions};
use crate::working::group::CompactPhase;
use crate::working::phasefile::{RecordReader, phase_file};
use crate::working::resolved::{ResolvedDir, phase_key};

/// How to build.
#[derive(Clone, Debug)]
pub struct PackOptions {
    /// Value block size and zstd level.
    pub values: WriteOptions,
    /// Key indexes to build; the first is the database's default. `rank` needs no files.
    pub backends: Vec<Backend>,
    /// Keep the solver's phase value files after packing (they let a later solve of more
    /// pieces start without unpacking, and `ostledb pack` run again).
    pub keep_work: bool,
    /// Also write, into this directory, the resolved records
    /// ([`crate::working::resolved`]) of every phase packed from the solver's phase file
    /// into a value file that elides loss distances: the phase file holds every distance,
    /// so the walks and the export given the same directory resolve none.
    pub records: Option<PathBuf>,
}

impl Default for PackOptions {
    fn default() -> PackOptions {
        PackOptions { values: WriteOptions::default(), backends: vec![Backend::Rank], keep_work: false, records: None }
    }
}

/// What happened to one phase, for progress lines.
#[derive(Clone, Debug)]
pub struct PackedPhase {
    /// Its metadata entry.
    pub meta: PhaseMeta,
    /// Seconds spent compressing.
    pub seconds: f64,
    /// Its resolved records ([`PackOptions::records`]), when asked for and packed from the
    /// solver's file into values that elide losses: the seconds spent writing them, or why
    /// they could not be (the packing goes on without them; a walk resolves the phase).
    pub records: Option<Result<f64, String>>,
}

/// Drop the special move of every record whose special node does not exist (no
/// predecessor forbids that move: `first` is the index of `records[0]` in `phase`): no
/// query can ever ask for it, and about half of all special moves are such.
pub fn drop_unreachable_specials(geom: &Geometry, phase: &crate::index::PhaseIndex, first: u64, records: &mut [u64]) {
    use rayon::prelude::*;
    const CHUNK: usize = 1 << 14;
    records.par_chunks_mut(CHUNK).enumerate().for_each(|(c, chunk)| {
        let from = first + (c * CHUNK) as u64;
        for (r, pos) in chunk.iter_mut().zip(phase.positions(from..from + CHUNK as u64)) {
            let s = Packed(*r).special_move() as usize;
            if s != 0 && !crate::game::forbidden::node_exists(geom, &pos, s) {
                *r = Packed(*r).without_special().0;
            }
        }
    });
}

/// Where a phase's records are packed from.
enum Source<'a> {
    /// The solver's phase value file.
    Solver(RecordReader),
    /// A value file that elides loss distances, resolved in memory.
    Resolved(crate::record::PhaseValues),
    /// A value file, read as it is stored.
    AsStored(values::Stream<'a>),
}

/// A phase's records as packed: read from their source, unreachable special moves
/// dropped, counted into the phase's metadata, immediate wins filled.
struct PackRecords<'a, 'm> {
    source: Source<'a>,
    dir: &'a Path,
    geom: &'a Geometry,
    phase: &'a crate::index::PhaseIndex,
    /// The index of the next record.
    at: u64,
    meta: &'m mut PhaseMeta,
    fill: bool,
}

impl values::Records for PackRecords<'_, '_> {
    fn read(&mut self, buf: &mut [u64]) -> Result<(), Error> {
        match &mut self.source {
            Source::Solver(r) => {
                r.read(buf)?;
                if !r.specials_pruned() {
                    drop_unreachable_specials(self.geom, self.phase, self.at, buf);
                }
            }
            Source::Resolved(v) => buf.copy_from_slice(&v.raw()[self.at as usize..self.at as usize + buf.len()]),
            Source::AsStored(stream) => stream.read(buf)?,
        }
        count(buf, self.meta);
        if self.fill {
            values::fill_immediate_wins(buf);
        }
        self.at += buf.len() as u64;
        Ok(())
    }

    /// Start again; the solver's file is read through once first (its checksum checked).
    fn rewind(&mut self) -> Result<(), Error> {
        match &mut self.source {
            Source::Solver(r) => {
                let (ph, n) = (self.phase.phase(), self.phase.len());
                let again = RecordReader::open(self.dir, self.geom, ph, n)?.ok_or_else(|| Error::MissingDatabase {
                    path: self.dir.to_path_buf(),
                    phase: ph.to_string(),
                    max_pieces: ph.pieces(),
                })?;
                std::mem::replace(r, again).finish()?;
            }
            Source::Resolved(_) => {}
            Source::AsStored(stream) => stream.rewind(),
        }
        self.at = 0;
        (self.meta.win, self.meta.loss, self.meta.draw) = (0, 0, 0);
        Ok(())
    }
}

fn count(records: &[u64], m: &mut PhaseMeta) {
    let (w, l, d) = crate::record::value::tally(records.iter().map(|&r| Packed(r).base()));
    (m.win, m.loss, m.draw) = (m.win + w, m.loss + l, m.draw + d);
}

/// Build the database at `dir` holding every phase with at most `max_pieces` pieces.
/// Each phase is read from the solver's phase value file, or, when that is gone, from
/// the current value file (any version), which is written again with these settings.
/// Everything is written into a new generation and switched to by one rename of the
/// metadata (see [`crate::store::directory`]), so the directory is the old database
/// until the new one is complete. Takes the writer lock of `dir`.
pub fn pack(
    dir: &Path,
    geom: &Geometry,
    max_pieces: u32,
    opts: &PackOptions,
    mut report: impl FnMut(&PackedPhase),
) -> Result<Meta, Error> {
    if opts.backends.is_empty() {
        return Err(Error::InvalidArgument("no key index backend given".into()));
    }
    for b in &opts.backends {
        b.require()?;
    }
    let index = GameIndex::build(geom, max_pieces)?;
    let lock = WriteLock::acquire(dir, "ostledb pack")?;
    let old = directory::current_data_dir(dir)?;
    let new = NewGeneration::begin(&lock)?;
    let mut phases = Vec::new();
    for p in index.phases() {
        let ph = p.phase();
        let t = Instant::now();
        let mut m = PhaseMeta {
            player: ph.player as u8,
            opponent: ph.opponent as u8,
            positions: p.len(),
            value_bytes: 0,
            win: 0,
            loss: 0,
            draw: 0,
        };
        let missing =
            || Error::MissingDatabase { path: dir.to_path_buf(), phase: ph.to_string(), max_pieces: ph.pieces() };
        // The records come from the solver's file, or else from the existing value file,
        // written again with these settings (read as the new one is written beside it,
        // then replaced); distances asked back from a file that elides them need the
        // whole phase resolved first.
        let solver = RecordReader::open(dir, geom, ph, p.len())?;
        let old = match solver {
            Some(_) => None,
            None => Some(ValueFile::open(&old, geom, ph, p.len()).map_err(|e| match e {
                Error::Io { .. } => missing(),
                e => e,
            })?),
        };
        let source = match (solver, &old) {
            (Some(r), _) => Source::Solver(r),
            (None, Some(f)) if f.elides_losses() && !opts.values.elide_losses => {
                Source::Resolved(crate::working::group::load_phase(dir, geom, ph, p.len())?.ok_or_else(missing)?)
            }
            (None, Some(f)) => Source::AsStored(values::Stream::new(f)),
            (None, None) => return Err(missing()),
        };
        let mut records =
            PackRecords { source, dir, geom, phase: p, at: 0, meta: &mut m, fill: opts.values.filled_wins };
        let s = values::write(new.path(), geom, ph, p.len(), opts.values, &mut records, |_| {})?;
        let from_solver = matches!(records.source, Source::Solver(_));
        if let Source::Solver(r) = records.source {
            r.finish()?;
        }
        m.value_bytes = s.len;
        for &b in &opts.backends {
            keys::build(b, new.path(), p)?;
        }
        let seconds = t.elapsed().as_secs_f64();
        let records = opts.records.as_deref().filter(|_| from_solver && opts.values.elide_losses).map(|out| {
            let t = Instant::now();
            write_resolved(out, dir, geom, p, &m).map(|()| t.elapsed().as_secs_f64()).map_err(|e| e.to_string())
        });
        report(&PackedPhase { meta: m.clone(), seconds, records });
        phases.push(m);
    }
    let mut names: Vec<String> = Vec::new();
    for b in &opts.backends {
        if !names.iter().any(|n| n == b.name()) {
            names.push(b.name().to_string());
        }
    }
    let mut meta = Meta {
        format: meta::VERSION,
        writer: format!("ostledb {}", env!("CARGO_PKG_VERSION")),
        side: geom.side() as u8,
        start_pieces: geom.start_pieces() as u8,
        max_pieces: max_pieces as u8,
        block_positions: opts.values.block,
        zstd_level: opts.values.level,
        backends: names,
        phases,
        generation: 0,
    };
    new.commit(&mut meta)?;
    if !opts.keep_work {
        for p in index.phases() {
            let f = phase_file(dir, p.phase());
            match std::fs::remove_file(&f) {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => return Err(Error::Io { path: f, source: e }),
            }
        }
    }
    Ok(meta)
}

/// Write the resolved records of `phase` (whose metadata entry is `m`) into `out` from
/// the solver's phase file in `dir`: each record as the value file's reader answers it
/// (unreachable special moves dropped; an immediate win is `Win(1)` either way), with its
/// loss distances, one word each ([`CompactPhase::words`]).
fn write_resolved(
    out: &Path,
    dir: &Path,
    geom: &Geometry,
    phase: &crate::index::PhaseIndex,
    m: &PhaseMeta,
) -> Result<(), Error> {
    let ph = phase.phase();
    let resolved = ResolvedDir::with_keys(out, vec![(ph, phase_key(geom.side() as u8, geom.start_pieces() as u8, m))])?;
    let reader = RecordReader::open(dir, geom, ph, phase.len())?.ok_or_else(|| Error::MissingDatabase {
        path: dir.to_path_buf(),
        phase: ph.to_string(),
        max_pieces: ph.pieces(),
    })?;
    // Read as `pack` reads it for the value file, but with immediate wins as they are,
    // and counted again: the words must be the records the metadata counted.
    let mut counted = PhaseMeta { win: 0, loss: 0, draw: 0, ..m.clone() };
    let mut records =
        PackRecords { source: Source::Solver(reader), dir, geom, phase, at: 0, meta: &mut counted, fill: false };
    let mut buf = vec![0u64; 1 << 20];
    resolved.write_with(ph, phase.len(), &crate::progress::Silent, |words| {
        let at = records.at;
        let n = (phase.len() - at).min(buf.len() as u64) as usize;
        values::Records::read(&mut records, &mut buf[..n])?;
        for (i, &r) in buf[..n].iter().enumerate() {
            words.push(CompactPhase::word(Packed(r)).ok_or_else(|| {
                Error::InvalidArgument(format!(
                    "position {} of {ph} has a distance above 255 plies: its records cannot be kept in {}",
                    at + i as u64,
                    out.display()
                ))
            })?);
        }
        Ok(())
    })?;
    if let Source::Solver(r) = records.source {
        r.finish()?;
    }
    if (counted.win, counted.loss, counted.draw) != (m.win, m.loss, m.draw) {
        let _ = std::fs::remove_file(resolved.path(ph));
        return Err(Error::InvalidArgument(format!(
            "{}: the solver's file of {ph} changed while it was packed (counts {:?} then {:?})",
            dir.display(),
            (m.win, m.loss, m.draw),
            (counted.win, counted.loss, counted.draw)
        )));
    }
    Ok(())
}

/// Add the key index of `backend` to the database at `dir` (rebuilding it if present)
/// and list it in the metadata: in a new generation that takes the other files over
/// unchanged, switched to at the end. Takes the writer lock of `dir`.
pub fn add_backend(dir: &Path, backend: Backend) -> Result<Meta, Error> {
    backend.require()?;
    let lock = WriteLock::acquire(dir, &format!("ostledb index --backend {backend}"))?;
    let mut meta = meta::read(dir)?.ok_or_else(|| Error::MissingDatabase {
        path: dir.to_path_buf(),
        phase: "(4,4)".into(),
        max_pieces: 8,
    })?;
    let geom = Geometry::new(meta.side as u32, meta.start_pieces as u32)?;
    let index = GameIndex::build(&geom, meta.max_pieces as u32)?;
    let new = NewGeneration::begin(&lock)?;
    let own: Vec<String> = index.phases().iter().flat_map(|p| backend.files(p.phase())).collect();
    let keep: Vec<String> = directory::listed_files(&meta).into_iter().filter(|f| !own.contains(f)).collect();
    new.link(&directory::data_dir(dir, &meta), &keep)?;
    for p in index.phases() {
        keys::build(backend, new.path(), p)?;
    }
    if !meta.backends.iter().any(|b| b == backend.name()) {
        meta.backends.push(backend.name().to_string());
    }
    new.commit(&mut meta)?;
    Ok(meta)
}
