//! Import published retrograde files into a database: the lines are checked (code,
//! canonical form, ascending order, completeness, which fields are empty) and turned
//! into the records the solver writes (a base value per position and at most one
//! special move), which are then packed by the same writer as a solve.
//!
//! What the files do not say is recovered from the rules. The base value of a position
//! is the value of node 0, written in field 0 unless node 0 is trivial (no move leads to
//! the position without forbidding something). Then it is the value shared by the
//! other fields when that is decided (at least two of them agree, at most one differs);
//! otherwise (one field, two different fields, or none) it is computed from the
//! position's moves, as the best of its children's values, which the files give: a move
//! that removes nothing leads to a non-trivial node, and a capture leads to a smaller
//! phase, completed first. So the database holds exactly what a solve stores, and
//! exporting it again gives the same bytes.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};

use rayon::prelude::*;

use crate::analysis::verify::verify_phase;
use crate::error::{Error, io};
use crate::file::open_regular;
use crate::game::moves::is_immediate_win;
use crate::game::notation::code_to_base64;
use crate::game::symmetry::{canonical_code, is_canonical};
use crate::game::{Geometry, Phase, Position};
use crate::index::GameIndex;
use crate::probe::{RecordSource, best, move_values};
use crate::progress::Reporter;
use crate::published::{FIELDS, Fields, Kind, file_name, nontrivial_nodes, parse_file_name, parse_line};
use crate::record::{Packed, PhaseValues, Record, Val, outcome_val};
use crate::store::directory::WriteLock;
use crate::store::meta::{self, Meta};
use crate::working::pack::{PackOptions, pack};

/// What an import did.
#[derive(Clone, Debug, serde::Serialize)]
pub struct ImportSummary {
    /// Phases with at most this many pieces.
    pub max_pieces: u32,
    /// Retrograde files read.
    pub files: usize,
    /// BFS files read (into the database's `bfs-published.zst`).
    pub bfs_files: usize,
    /// Nodes they hold.
    pub bfs_nodes: u64,
    /// Positions imported.
    pub positions: u64,
    /// Positions whose base value was computed from their moves (node 0 trivial and the
    /// other fields not deciding it).
    pub derived: u64,
    /// Positions whose every node was re-derived from its children before anything was
    /// written (0 with `trust`).
    pub rederived: u64,
    /// The new database's metadata.
    pub meta: Meta,
}

/// The retrograde files of a directory, in order, and their piece count; also the
/// number of BFS files present.
pub fn list_files(from: &Path) -> Result<(u32, Vec<PathBuf>, Vec<PathBuf>), Error> {
    let mut found: Vec<(u64, String)> = Vec::new();
    let mut n: Option<u32> = None;
    let mut bfs: Vec<(u64, u32, String)> = Vec::new();
    for e in std::fs::read_dir(from).map_err(io(from))? {
        let name = e.map_err(io(from))?.file_name().to_string_lossy().into_owned();
        let Some((m, kind, number)) = parse_file_name(&name) else { continue };
        if kind == Kind::Bfs {
            bfs.push((number, m, name));
            continue;
        }
        if let Some(k) = n
            && k != m
        {
            return Err(Error::InvalidArgument(format!(
                "{} holds retrograde files of {k} and of {m} pieces; give a directory with one set",
                from.display()
            )));
        }
        n = Some(m);
        found.push((number, name));
    }
    let Some(n) = n else {
        return Err(Error::InvalidArgument(format!(
            "{} holds no published retrograde files (ostle_<n>_retrograde_output<NNNN>.txt)",
            from.display()
        )));
    };
    found.sort();
    for (i, (number, _)) in found.iter().enumerate() {
        if *number != i as u64 {
            let missing = from.join(file_name(n, Kind::Retrograde, i as u64));
            return Err(Error::Io {
                path: missing,
                source: std::io::Error::new(
                    std::io::ErrorKind::NotFound,
                    "missing: the files are numbered from 0000 without gaps",
                ),
            });
        }
    }
    bfs.sort();
    for (i, (number, m, name)) in bfs.iter().enumerate() {
        if *m != n || *number != i as u64 {
            return Err(Error::InvalidArgument(format!(
                "{}: BFS files must be numbered from 0000 without gaps and have the retrograde files' piece count {n}",
                from.join(name).display()
            )));
        }
    }
    Ok((
        n,
        found.into_iter().map(|(_, name)| from.join(name)).collect(),
        bfs.into_iter().map(|(_, _, name)| from.join(name)).collect(),
    ))
}

/// Read published BFS files (in order) into the database's stored BFS (published
/// convention). Every line is checked: a canonical position with at most `n` pieces,
/// codes ascending, `checkmate` exactly on immediate wins, 25 fields, each a depth below
/// 256, `-1` (not reached) or empty, a field exactly on the non-trivial nodes
/// ([`super::bfs_nontrivial_nodes`] over the phases with at most `n` pieces; a depth 0
/// may also be on a trivial node, the start's). The published solver writes a line for
/// every position, those without a reached node too (their fields empty or `-1`); a
/// position without a line reads as one whose nodes were not reached. Returns the nodes
/// read (those with a depth).
pub fn import_bfs(geom: &Geometry, n: u32, files: &[PathBuf], db: &Path) -> Result<u64, Error> {
    use crate::game::node::{Convention, node_key};
    let mut layers: Vec<Vec<u64>> = Vec::new();
    let mut last: Option<u64> = None;
    let mut nodes = 0u64;
    for path in files {
        let f = open_regular(path).map_err(io(path))?;
        for (k, line) in BufReader::with_capacity(1 << 20, f).lines().enumerate() {
            let line = line.map_err(io(path))?;
            let bad = |reason: String| Error::BadInput { path: path.clone(), line: k as u64 + 1, reason };
            let line = line.trim_end();
            let mut parts = line.split(',');
            let code = crate::game::notation::base64_to_code(parts.next().unwrap_or(""))
                .map_err(|e| bad(format!("bad code: {e}")))?;
            let pos = crate::game::Position::from_code(code);
            let live = code >> 55 == 0 && pos.validate(geom).is_ok() && pos.phase().pieces() <= n;
            if !live || crate::game::symmetry::canonical_code(geom, &pos) != code {
                return Err(bad(format!(
                    "{} is not a canonical position with at most {n} pieces",
                    code_to_base64(code)
                )));
            }
            if last.is_some_and(|l| l >= code) {
                return Err(bad("codes must ascend".into()));
            }
            last = Some(code);
            let mut fields: Vec<&str> = parts.collect();
            let mate = crate::game::moves::is_immediate_win(geom, &pos);
            if mate != (fields.first() == Some(&super::CHECKMATE)) {
                return Err(bad(format!(
                    "`checkmate` belongs exactly after immediate wins; this position is {}one",
                    if mate { "" } else { "not " }
                )));
            }
            if mate {
                fields.remove(0);
            }
            if fields.len() != super::FIELDS {
                return Err(bad(format!("{} fields after the code, not {}", fields.len(), super::FIELDS)));
            }
            let nontrivial = super::bfs_nontrivial_nodes(geom, &pos, n);
            for (j, f) in fields.iter().enumerate() {
                let given = !f.is_empty();
                if given && *f == super::UNREACHED {
                    if nontrivial >> j & 1 == 0 {
                        return Err(bad(format!("field {j} is `-1` (not reached), but node {j} is trivial")));
                    }
                    continue;
                }
                if !given {
                    if nontrivial >> j & 1 != 0 {
                        return Err(bad(format!("field {j} is empty, but node {j} is non-trivial (a depth or -1)")));
                    }
                    continue;
                }
                // Decimal as the solver writes it: digits only, no leading zero.
                let plain = f.bytes().all(|b| b.is_ascii_digit()) && (f.len() == 1 || !f.starts_with('0'));
                let d: u8 = plain
                    .then(|| f.parse().ok())
                    .flatten()
                    .ok_or_else(|| bad(format!("field {j} is `{f}`, not a depth 0..=255 or -1")))?;
                if d != 0 && nontrivial >> j & 1 == 0 {
                    return Err(bad(format!(
                        "field {j} holds depth {d}, but node {j} is trivial (no move leads to it)"
                    )));
                }
                if layers.len() <= d as usize {
                    layers.resize(d as usize + 1, Vec::new());
                }
                layers[d as usize].push(node_key(code, j));
                nodes += 1;
            }
        }
    }
    let refs: Vec<&[u64]> = layers.iter().map(|l| l.as_slice()).collect();
    // Shared with `import`'s own lock when it calls this.
    let _lock = WriteLock::acquire(db, "ostledb import")?;
    crate::bfs_depths::node_keys::write(db, geom, Convention::Published, true, false, &refs)?;
    Ok(nodes)
}

/// One parsed line.
struct Parsed {
    code: u64,
    slot: usize,
    idx: u64,
    record: u64,
    /// `Some(first field)` (`NO_FIELD` when none) when the base value must be derived
    /// from the moves; the record then answers every non-trivial node correctly.
    pending: Option<u8>,
}

const NO_FIELD: u8 = u8::MAX;

fn record(base: Val, special: Option<(usize, Val)>) -> u64 {
    let (s, v) = special.unwrap_or((0, 0));
    Packed::new(base, s as u32, v).0
}

/// The record of a position from its non-empty fields `(j, value code)`, in order.
fn classify(fields: &[(usize, Val)]) -> Result<(u64, Option<u8>), String> {
    let differ = |base: Val| fields.iter().filter(|f| f.1 != base).copied().collect::<Vec<_>>();
    if let Some(&(0, base)) = fields.first() {
        let d = differ(base);
        if d.len() > 1 {
            return Err(format!(
                "fields {} and {} both differ from field 0; at most one node of a position has another value",
                d[0].0, d[1].0
            ));
        }
        return Ok((record(base, d.first().copied()), None));
    }
    match fields {
        [] => Ok((0, Some(NO_FIELD))),
        [(j, v)] => Ok((*v as u64, Some(*j as u8))),
        [(j, v), (k, w)] if v != w => Ok((record(*v, Some((*k, *w))), Some(*j as u8))),
        _ => {
            // At least two fields: the base value is the one all but at most one share.
            let a = fields[0].1;
            let (d, base) = match differ(a).len() {
                0 | 1 => (differ(a), a),
                _ => {
                    let b = differ(a)[0].1;
                    (differ(b), b)
                }
            };
            if d.len() > 1 {
                return Err(format!(
                    "fields {} and {} differ from the value of the other nodes; at most one node of a position has another value",
                    d[0].0, d[1].0
                ));
            }
            Ok((record(base, d.first().copied()), None))
        }
    }
}

fn parse(geom: &Geometry, index: &GameIndex, bytes: &[u8]) -> Result<Parsed, String> {
    let line = std::str::from_utf8(bytes).map_err(|_| "not UTF-8 text".to_string())?;
    let line = line.strip_suffix('\n').unwrap_or(line);
    let (code, fields) = parse_line(line)?;
    let b64 = code_to_base64(code);
    let pos = Position::from_code(code);
    pos.validate(geom).map_err(|e| format!("code {b64} ({code}) is not a position of this board: {e}"))?;
    let ph: Phase = pos.phase();
    let slot =
        index.phases().iter().position(|p| p.phase() == ph).ok_or_else(|| {
            format!("code {b64} is a position of phase {ph}, which has more pieces than the file name's")
        })?;
    if !is_canonical(geom, &pos) {
        return Err(format!(
            "code {b64} is not a canonical position (its canonical form is {})",
            code_to_base64(canonical_code(geom, &pos))
        ));
    }
    let idx = index.phases()[slot].index_of(&pos);
    let win = is_immediate_win(geom, &pos);
    let nodes = match fields {
        Fields::Checkmate if win => return Ok(Parsed { code, slot, idx, record: 2, pending: None }),
        Fields::Checkmate => return Err(format!("{b64} is written `checkmate` but is not an immediate win")),
        Fields::Nodes(_) if win => return Err(format!("{b64} is an immediate win, written `{b64},checkmate`")),
        Fields::Nodes(n) => n,
    };
    let reached = nontrivial_nodes(geom, &pos);
    let mut fields = Vec::with_capacity(FIELDS);
    for (j, v) in nodes.iter().enumerate() {
        match (v, reached >> j & 1 != 0) {
            (Some(v), true) => fields.push((j, *v)),
            (None, false) => {}
            (Some(_), false) => {
                return Err(format!("field {j} has a value, but node {j} of {b64} is trivial (no move leads to it)"));
            }
            (None, true) => {
                return Err(format!("field {j} is empty, but node {j} of {b64} is non-trivial (a move leads to it)"));
            }
        }
    }
    let (record, pending) = classify(&fields).map_err(|e| format!("{b64}: {e}"))?;
    Ok(Parsed { code, slot, idx, record, pending })
}

/// Records of every phase in memory, answering [`RecordSource`] by the combinatorial rank.
struct Memory<'a> {
    index: &'a GameIndex,
    records: &'a [Vec<u64>],
}

impl RecordSource for Memory<'_> {
    fn index(&self) -> &GameIndex {
        self.index
    }
    fn record(&self, phase: Phase, idx: u64) -> Result<Record, Error> {
        let slot = self
            .index
            .phases()
            .iter()
            .position(|p| p.phase() == phase)
            .ok_or_else(|| Error::InvalidArgument(format!("phase {phase} is not imported")))?;
        Ok(Packed(self.records[slot][idx as usize]).record())
    }
}

/// Lines read and parsed in parallel at a time.
const BATCH: usize = 1 << 16;

/// Import the published retrograde files in `from` into a new database at `db` (board
/// `geom`), packed with `opts`. Every record is held in memory until it is written (8
/// bytes per position: 1.3 GB for (4,4)). Unless `trust`, every position's record is
/// then re-derived from its children, as `verify --deep` does, and one that disagrees
/// stops the import before anything is written: a value in range can still be one the
/// rules cannot give.
pub fn import(
    geom: &Geometry,
    from: &Path,
    db: &Path,
    opts: &PackOptions,
    trust: bool,
    reporter: &dyn Reporter,
) -> Result<ImportSummary, Error> {
    let (n, files, bfs) = list_files(from)?;
    let index = GameIndex::build(geom, n)?;
    let _lock = WriteLock::acquire(db, "ostledb import")?;
    if meta::read(db)?.is_some() {
        return Err(Error::InvalidArgument(format!(
            "{} already holds a database; import into a new directory",
            db.display()
        )));
    }
    std::fs::create_dir_all(db).map_err(io(db))?;
    let phases = index.phases();
    let mut records: Vec<Vec<u64>> = Vec::new();
    for p in phases {
        let mut v = Vec::new();
        v.try_reserve_exact(p.len() as usize).map_err(|_| {
            Error::InvalidArgument(format!("cannot allocate {} records for phase {}", p.len(), p.phase()))
        })?;
        records.push(v);
    }
    let mut pending: Vec<Vec<(u64, u8)>> = vec![Vec::new(); phases.len()];
    let mut last: Option<(u64, PathBuf, u64)> = None;
    reporter.begin(&format!("import {n} pieces"), index.len());
    let mut buf: Vec<u8> = Vec::new();
    let mut starts: Vec<usize> = Vec::new();
    for path in &files {
        let f = open_regular(path).map_err(io(path))?;
        let mut r = BufReader::with_capacity(1 << 22, f);
        let mut line_no = 0u64;
        loop {
            buf.clear();
            starts.clear();
            starts.push(0);
            while starts.len() <= BATCH {
                let got = r.read_until(b'\n', &mut buf).map_err(io(path))?;
                if got == 0 {
                    break;
                }
                starts.push(buf.len());
            }
            let lines = starts.len() - 1;
            if lines == 0 {
                break;
            }
            let parsed: Vec<Result<Parsed, String>> =
                (0..lines).into_par_iter().map(|k| parse(geom, &index, &buf[starts[k]..starts[k + 1]])).collect();
            for (k, p) in parsed.into_iter().enumerate() {
                let line = line_no + k as u64 + 1;
                let bad = |reason: String| Error::BadInput { path: path.clone(), line, reason };
                let p = p.map_err(bad)?;
                if let Some((code, ref at, l)) = last
                    && code >= p.code
                {
                    return Err(bad(format!(
                        "code {} is not after the previous line's {} ({}, line {l}): lines must be in ascending code order",
                        code_to_base64(p.code),
                        code_to_base64(code),
                        at.display()
                    )));
                }
                let have = records[p.slot].len() as u64;
                if p.idx != have {
                    let missing = phases[p.slot].position_at(have);
                    return Err(bad(format!(
                        "position {} of phase {} is missing before this line",
                        code_to_base64(missing.code()),
                        phases[p.slot].phase()
                    )));
                }
                records[p.slot].push(p.record);
                if let Some(j) = p.pending {
                    pending[p.slot].push((p.idx, j));
                }
                last = Some((p.code, path.clone(), line));
            }
            line_no += lines as u64;
            reporter.advance(lines as u64);
        }
    }
    reporter.end();
    for (slot, p) in phases.iter().enumerate() {
        let have = records[slot].len() as u64;
        if have != p.len() {
            let (path, line) = last.as_ref().map(|(_, p, l)| (p.clone(), *l)).unwrap_or((from.to_path_buf(), 0));
            return Err(Error::BadInput {
                path,
                line,
                reason: format!(
                    "the files end after {have} of the {} positions of phase {}; position {} and the ones after it are missing",
                    p.len(),
                    p.phase(),
                    code_to_base64(p.position_at(have).code())
                ),
            });
        }
    }
    // Base values no field decides, from the moves; fewest pieces first, so a capture
    // always leads to a completed phase.
    let mut derived = 0u64;
    for slot in 0..phases.len() {
        let list = std::mem::take(&mut pending[slot]);
        derived += list.len() as u64;
        let fixed: Vec<Result<u64, Error>> = {
            let recs = &records;
            let index = &index;
            list.par_iter()
                .map(|&(idx, first)| {
                    let pos = index.phases()[slot].position_at(idx);
                    let mem = Memory { index, records: recs };
                    let base = outcome_val(best(move_values(geom, &mem, &pos)?.iter().map(|m| m.outcome)));
                    let old = Packed(recs[slot][idx as usize]);
                    let mut fields = Vec::with_capacity(2);
                    if first != NO_FIELD {
                        fields.push((first as usize, old.base()));
                    }
                    let s = old.special_move() as usize;
                    if s != 0 {
                        fields.push((s, old.special()));
                    }
                    let differ: Vec<_> = fields.into_iter().filter(|f| f.1 != base).collect();
                    if differ.len() > 1 {
                        return Err(Error::InvalidArgument(format!(
                            "position {}: nodes {} and {} both differ from the value its moves give; the files contradict each other",
                            code_to_base64(pos.code()),
                            differ[0].0,
                            differ[1].0
                        )));
                    }
                    Ok(record(base, differ.first().copied()))
                })
                .collect()
        };
        for (&(idx, _), r) in list.iter().zip(fixed) {
            records[slot][idx as usize] = r?;
        }
    }
    let rederived = if trust { 0 } else { rederive(geom, &index, &records, from, reporter)? };
    for (slot, p) in phases.iter().enumerate() {
        let values = PhaseValues::from_raw(p.phase(), std::mem::take(&mut records[slot]));
        crate::working::phasefile::save(db, geom, &values, 0)?;
    }
    let meta = pack(db, geom, n, opts, |_| {})?;
    let bfs_nodes = if bfs.is_empty() { 0 } else { import_bfs(geom, n, &bfs, db)? };
    Ok(ImportSummary {
        max_pieces: n,
        files: files.len(),
        bfs_files: bfs.len(),
        bfs_nodes,
        positions: index.len(),
        derived,
        rederived,
        meta,
    })
}

/// Re-derive every position's record in `records` from its children (fewest pieces
/// first, so that a wrong value is named where it is, not where it spreads); the
/// positions checked, or an error describing the first positions that disagree.
fn rederive(
    geom: &Geometry,
    index: &GameIndex,
    records: &[Vec<u64>],
    from: &Path,
    reporter: &dyn Reporter,
) -> Result<u64, Error> {
    let mem = Memory { index, records };
    let (mut checked, mut wrong) = (0u64, 0u64);
    let mut examples: Vec<String> = Vec::new();
    for p in index.phases() {
        let r = verify_phase(geom, &mem, p.phase(), reporter);
        checked += r.positions;
        wrong += r.mismatches;
        examples.extend(r.examples.into_iter().take(3usize.saturating_sub(examples.len())));
        if wrong > 0 {
            return Err(Error::InvalidArgument(format!(
                "{}: {wrong} position(s) of phase {} hold a value their moves do not give, for example {}; \
                 nothing was imported (every value is re-derived from its children, as `verify --deep` does; \
                 --trust skips that for a source known to be right)",
                from.display(),
                p.phase(),
                examples.join("; ")
            )));
        }
    }
    Ok(checked)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_base_value_is_the_one_all_but_one_field_share() {
        // field 0 decides; one other field may differ.
        assert_eq!(classify(&[(0, 9), (3, 9), (5, 12)]), Ok((record(9, Some((5, 12))), None)));
        assert!(classify(&[(0, 9), (3, 10), (5, 12)]).is_err());
        // no field 0: a majority decides, or the moves must.
        assert_eq!(classify(&[(2, 9), (3, 9)]), Ok((9, None)));
        assert_eq!(classify(&[(2, 12), (3, 9), (4, 9)]), Ok((record(9, Some((2, 12))), None)));
        assert_eq!(classify(&[(2, 9), (3, 9), (4, 12)]), Ok((record(9, Some((4, 12))), None)));
        assert!(classify(&[(2, 9), (3, 9), (4, 12), (5, 12)]).is_err());
        assert_eq!(classify(&[(7, 9)]), Ok((9, Some(7))));
        assert_eq!(classify(&[(7, 9), (8, 12)]), Ok((record(9, Some((8, 12))), Some(7))));
        assert_eq!(classify(&[]), Ok((0, Some(NO_FIELD))));
    }
}
