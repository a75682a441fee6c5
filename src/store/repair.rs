//! `ostledb repair`: a database whose metadata is damaged, unreadable or lost gets it
//! back from its value files.
//!
//! Which files are the database is the metadata's to say, so no writer touches a
//! directory whose metadata cannot be read
//! ([`metadata_for_writing`](crate::store::directory::metadata_for_writing)): it could
//! remove the only copy of the values as what an interrupted write left. This is the
//! one write that runs there. It looks at every generation `gen-N`, newest first, then
//! at the files of generation 0 beside the metadata, and takes the first whose value
//! files are every phase of a game up to some piece count, each one intact: its header
//! (board, phase, position count, checksums), its block index and every block's
//! checksum, decoded to count its wins, losses and draws as `pack` counts them. The key
//! indexes present for every phase are listed after `rank`. The metadata is then
//! written (atomically) naming that generation, and nothing else is changed or removed:
//! superseded generations are left for the next writer, once a readable metadata file
//! names another one.
//!
//! What the value files cannot tell is informative only: the zstd level (the default
//! is written) and the positions per block (the files' own when they all agree, else
//! 0), and the order of the key indexes (`rank` first; every backend answers alike).

use std::path::{Path, PathBuf};

use rayon::prelude::*;

use crate::error::{Error, FileKind, generation_of, io};
use crate::game::{Geometry, Phase};
use crate::index::GameIndex;
use crate::progress::Reporter;
use crate::record::Packed;
use crate::store::directory::{NewGeneration, WriteLock};
use crate::store::keys::Backend;
use crate::store::meta::{self, Meta, PhaseMeta};
use crate::store::values::{self, ValueFile};

/// What `repair` found and did.
#[derive(Clone, Debug, serde::Serialize)]
pub struct Repair {
    /// Why the metadata needed repair: its error, or that there was none. `None` when it
    /// read and nothing was written.
    pub was: Option<String>,
    /// The metadata the database has now (written by this repair when `was` is `Some`).
    pub meta: Meta,
    /// The directory whose value files the metadata names.
    pub data: PathBuf,
    /// Generations looked at and passed over, and why (newest first).
    pub passed_over: Vec<(PathBuf, String)>,
}

/// Repair the metadata of the database at `dir` (see the module documentation). Takes
/// the writer lock. An intact metadata file is left alone; one of a newer format is
/// refused ([`Error::WriteRefused`]), as is a directory where no generation holds a
/// whole game's intact value files (the error says what each one lacks).
pub fn repair(dir: &Path, reporter: &dyn Reporter) -> Result<Repair, Error> {
    if !dir.is_dir() {
        return Err(Error::MissingDatabase { path: dir.to_path_buf(), phase: "(4,4)".into(), max_pieces: 8 });
    }
    let lock = WriteLock::acquire_for_repair(dir, "ostledb repair")?;
    let was = match meta::read(dir) {
        Ok(Some(m)) => {
            let data = crate::store::directory::data_dir(dir, &m);
            return Ok(Repair { was: None, meta: m, data, passed_over: Vec::new() });
        }
        Ok(None) => format!("no metadata file {}", dir.join(meta::FILE).display()),
        Err(e @ Error::NewerFormat { .. }) => {
            return Err(Error::WriteRefused {
                path: dir.to_path_buf(),
                reason: format!("its metadata was written by a newer ostledb ({e})"),
                advice: "Repair it, if it needs it, with that ostledb.".into(),
            });
        }
        Err(e) => e.to_string(),
    };
    let target = dir.join(meta::FILE);
    if target.is_dir() {
        return Err(Error::WriteRefused {
            path: dir.to_path_buf(),
            reason: format!("{} is a directory, which a metadata file cannot replace", target.display()),
            advice: "Move it away and run `ostledb repair` again.".into(),
        });
    }
    let mut candidates: Vec<(u64, PathBuf)> = std::fs::read_dir(dir)
        .map_err(io(dir))?
        .flatten()
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            generation_of(&name).filter(|_| e.path().is_dir()).map(|n| (n, e.path()))
        })
        .collect();
    candidates.sort_by_key(|c| std::cmp::Reverse(c.0));
    candidates.push((0, dir.to_path_buf()));
    let mut passed_over = Vec::new();
    for (generation, data) in candidates {
        match rebuild(&data, reporter) {
            Ok(Some(mut m)) => {
                if generation == 0 {
                    // Format 5 keeps its files in a generation directory: make one of links.
                    let new = NewGeneration::begin(&lock)?;
                    new.link(&data, &crate::store::directory::listed_files(&m))?;
                    let data = new.path().to_path_buf();
                    new.commit(&mut m)?;
                    return Ok(Repair { was: Some(was), meta: m, data, passed_over });
                }
                m.generation = generation;
                meta::write(dir, &m)?;
                return Ok(Repair { was: Some(was), meta: m, data, passed_over });
            }
            Ok(None) if generation == 0 => {}
            Ok(None) => passed_over.push((data, "no value file".into())),
            Err(why) => passed_over.push((data, why)),
        }
    }
    let why: Vec<String> = passed_over.iter().map(|(p, w)| format!("{}: {w}", p.display())).collect();
    Err(Error::InvalidArgument(format!(
        "{}: no generation holds a whole game's intact value files, so its metadata cannot be rebuilt ({}); \
         its values must be solved again: `ostledb solve --db {}` with the --max-pieces it had \
         (a solver's phase files left in it, phase-A-B.vals, are packed by `ostledb pack --db {}` instead)",
        dir.display(),
        if why.is_empty() { "no value file anywhere".to_string() } else { why.join("; ") },
        dir.display(),
        dir.display()
    )))
}

/// The metadata the value files in `data` make, generation 0 (the caller sets it);
/// `Ok(None)` when there is no value file, `Err(why)` when they are not a whole game's,
/// or one is damaged.
fn rebuild(data: &Path, reporter: &dyn Reporter) -> Result<Option<Meta>, String> {
    let mut found: Vec<Phase> = Vec::new();
    let mut board: Option<(u8, u8)> = None;
    let mut names: Vec<String> = std::fs::read_dir(data)
        .map_err(|e| e.to_string())?
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| FileKind::of_path(Path::new(n)) == Some(FileKind::Values))
        .collect();
    names.sort();
    for name in &names {
        let (a, b) = name["values-".len()..name.len() - ".zst".len()].split_once('-').expect("a value file's name");
        let (Ok(a), Ok(b)) = (a.parse::<u32>(), b.parse::<u32>()) else {
            return Err(format!("{name}: not a phase"));
        };
        let path = data.join(name);
        let head = crate::file::read_capped(&path, 16).map_err(|e| format!("{name}: {e}"))?;
        if head.len() < 16 || head[..8] != values::MAGIC {
            return Err(format!("{name}: not a value file (its first bytes are not the value file magic)"));
        }
        if head[14] as u32 != a || head[15] as u32 != b {
            return Err(format!("{name}: its header says phase ({},{})", head[14], head[15]));
        }
        let this = (head[12], head[13]);
        if board.is_some_and(|b| b != this) {
            return Err(format!("{name}: another board than the other value files'"));
        }
        board = Some(this);
        found.push(Phase::new(a, b));
    }
    let Some((side, start)) = board else { return Ok(None) };
    let geom = Geometry::new(side as u32, start as u32).map_err(|e| format!("the value files' board: {e}"))?;
    found.sort_by_key(|p| (p.player, p.opponent));
    let max_pieces = (0..=2 * geom.start_pieces())
        .rev()
        .find(|&m| {
            let mut all = Phase::all(&geom, m);
            all.sort_by_key(|p| (p.player, p.opponent));
            !all.is_empty() && all == found
        })
        .ok_or_else(|| {
            let list: Vec<String> = found.iter().map(|p| p.to_string()).collect();
            format!(
                "its value files are the phases {}, not every phase of a game up to some number of pieces",
                list.join(" ")
            )
        })?;
    let index = GameIndex::build(&geom, max_pieces).map_err(|e| e.to_string())?;
    let mut phases = Vec::new();
    let mut per_block: Option<u32> = None;
    let mut agree = true;
    for p in index.phases() {
        let ph = p.phase();
        let f = ValueFile::open(data, &geom, ph, p.len()).map_err(|e| e.to_string())?;
        reporter.begin(&format!("repair: count {ph}"), p.len());
        let counts = (0..f.blocks())
            .into_par_iter()
            .map(|b| {
                let records = f.block(b)?;
                reporter.advance(records.len() as u64);
                Ok(crate::record::value::tally(records.iter().map(|&r| Packed(r).base())))
            })
            .try_reduce(|| (0, 0, 0), |x, y| Ok((x.0 + y.0, x.1 + y.1, x.2 + y.2)));
        reporter.end();
        let (win, loss, draw) = counts.map_err(|e: Error| e.to_string())?;
        if win + loss + draw != p.len() {
            return Err(format!("{}: decodes to {} positions, not {}", f.path().display(), win + loss + draw, p.len()));
        }
        agree &= per_block.is_none_or(|k| k == f.block_positions());
        per_block = Some(f.block_positions());
        phases.push(PhaseMeta {
            player: ph.player as u8,
            opponent: ph.opponent as u8,
            positions: p.len(),
            value_bytes: f.file_len(),
            win,
            loss,
            draw,
        });
    }
    let mut backends = vec![Backend::Rank.name().to_string()];
    for b in [Backend::Sorted, Backend::Hash, Backend::Sled] {
        if index.phases().iter().all(|p| b.files(p.phase()).iter().all(|f| data.join(f).exists())) {
            backends.push(b.name().to_string());
        }
    }
    Ok(Some(Meta {
        format: meta::VERSION,
        writer: format!("ostledb {} (repair)", env!("CARGO_PKG_VERSION")),
        side,
        start_pieces: start,
        max_pieces: max_pieces as u8,
        block_positions: if agree { per_block.unwrap_or(0) } else { 0 },
        zstd_level: values::DEFAULT_LEVEL,
        backends,
        phases,
        generation: 0,
    }))
}
