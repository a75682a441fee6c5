//! Opening and probing a database whose files are arbitrary bytes. A small database
//! (3x3, every phase up to 6 pieces, key indexes `sorted` and `hash`, a stored BFS) is
//! the template; the input replaces or changes one of its files, and the copy is opened
//! with one backend, probed, queried, and its checksums (and sometimes every value) are
//! verified.
//!
//! Input: `[file][flags][payload...]`. `file` picks one of the template's files (the
//! metadata, the BFS file, then the value and key files in name order). `flags & 3` is
//! how the payload changes it: 0 = edits (5 bytes each: offset u32 LE modulo the length,
//! the new byte), 1 = the payload is the whole file, 2 = the payload is the decoded
//! content of one block of a v3 value file or of the BFS file (first byte: the block;
//! for a BFS block two more bytes: its key count), compressed and put in place (the
//! template's value files are v4, the default: their blocks are reached by edits with
//! the checksums recomputed), 3 = resize (u32 LE new
//! length modulo twice the length, padded with the rest of the payload). `flags & 4`
//! recomputes the file's checksums afterwards, so that what lies behind them is reached;
//! `(flags >> 3) % 5` picks the backend; `flags & 0x80` adds `verify --deep`.
//!
//! Every outcome must be an answer or an error, never a panic, a hang or an unbounded
//! allocation. With checksums not recomputed the database is damaged or unchanged, and
//! the store promises that damage is found, never answered: every answer must then be
//! the template's, and every error one of damage (exit code 1) or of a newer format.

#![no_main]

use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Duration;

use libfuzzer_sys::fuzz_target;
use ostledb::Error;
use ostledb::analysis::sweep::Checkpoint;
use ostledb::error::EXIT_CORRUPT;
use ostledb::game::Position;
use ostledb::game::moves::unmoves;
use ostledb::progress::Silent;
use ostledb::file::checksum;
use ostledb::store::keys::{self, Backend};
use ostledb::{Database, OpenOptions};

struct Scratch {
    dir: PathBuf,
    /// The template's files (relative path, bytes).
    files: Vec<(PathBuf, Vec<u8>)>,
    /// The file the last input changed.
    dirty: Option<usize>,
    /// The probed nodes and the template's answer to each (probe, then analyse as JSON).
    probes: Vec<(Position, Option<Position>, String)>,
}

fn scratch() -> &'static Mutex<Scratch> {
    static S: std::sync::OnceLock<Mutex<Scratch>> = std::sync::OnceLock::new();
    S.get_or_init(|| {
        let t = ostledb_fuzz::template();
        let dir = t.dir.parent().unwrap().join("scratch");
        ostledb_fuzz::copy_database(&t.dir, &dir);
        let files = ostledb_fuzz::database_files(&t.dir)
            .into_iter()
            .map(|rel| {
                let bytes = std::fs::read(t.dir.join(&rel)).unwrap();
                (rel, bytes)
            })
            .collect();
        let db = Database::open(&t.dir).unwrap();
        let mut probes = Vec::new();
        for p in db.index().phases() {
            let step = (p.len() / 2).max(1);
            for i in (0..p.len()).step_by(step as usize) {
                let pos = p.position_at(i).transformed(&t.geom, (i % 8) as usize);
                let mut prev = None;
                unmoves(&t.geom, &pos, |u| {
                    if prev.is_none() {
                        prev = Some(u.pred)
                    }
                });
                for q in [None, prev] {
                    probes.push((pos, q, answer(&db, &pos, q.as_ref()).expect("the template answers")));
                }
            }
        }
        Mutex::new(Scratch { dir, files, dirty: None, probes })
    })
}

/// What a query shows of a node: its value, then the analysis as `query --json` prints it.
fn answer(db: &Database, pos: &Position, prev: Option<&Position>) -> Result<String, Error> {
    let v = db.probe(pos, prev)?;
    let a = db.analyse(pos, prev)?;
    Ok(format!("{v:?} {}", serde_json::to_string(&a).unwrap()))
}

fn le_u32(b: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_le_bytes(b.get(at..at.checked_add(4)?)?.try_into().ok()?))
}

fn le_u64(b: &[u8], at: usize) -> Option<u64> {
    Some(u64::from_le_bytes(b.get(at..at.checked_add(8)?)?.try_into().ok()?))
}

fn put_u64(b: &mut [u8], at: usize, v: u64) {
    if let Some(s) = at.checked_add(8).and_then(|end| b.get_mut(at..end)) {
        s.copy_from_slice(&v.to_le_bytes());
    }
}

fn put_u32(b: &mut [u8], at: usize, v: u32) {
    if let Some(s) = at.checked_add(4).and_then(|end| b.get_mut(at..end)) {
        s.copy_from_slice(&v.to_le_bytes());
    }
}

/// The checksum of `b[from..to]`, if in bounds.
fn sum(b: &[u8], from: u64, to: u64) -> Option<u64> {
    let (from, to) = (usize::try_from(from).ok()?, usize::try_from(to).ok()?);
    Some(checksum(b.get(from..to)?))
}

#[derive(Clone, Copy, PartialEq)]
enum Kind {
    Meta,
    Values,
    Sorted,
    Hash,
    Bfs,
}

fn kind_of(rel: &Path) -> Kind {
    let name = rel.file_name().unwrap().to_string_lossy();
    if name == ostledb::store::meta::FILE {
        Kind::Meta
    } else if name.starts_with("bfs-") {
        Kind::Bfs
    } else if name.starts_with("values-") {
        Kind::Values
    } else if name.ends_with(".sorted") {
        Kind::Sorted
    } else {
        Kind::Hash
    }
}

/// Where index entry `i` of `size` bytes starts, if the whole entry is in `b`.
fn entry(b: &[u8], at: u64, i: u64, size: u64) -> Option<usize> {
    let e = at.checked_add(i.checked_mul(size)?)?;
    (e.checked_add(size)? <= b.len() as u64).then_some(e as usize)
}

/// Recompute every checksum of a file of kind `k` (schema/FORMAT.md), where the fields
/// that locate what they cover are in bounds: block checksums first, then the index or
/// body checksum, the header checksum last.
fn fix_checksums(k: Kind, b: &mut [u8]) {
    let len = b.len() as u64;
    match k {
        Kind::Meta => {
            if let Some(l) = le_u32(b, 12)
                && let Some(s) = sum(b, 32, 32 + l as u64)
            {
                put_u64(b, 16, s);
            }
            if let Some(s) = sum(b, 0, 24) {
                put_u64(b, 24, s);
            }
        }
        Kind::Values if le_u32(b, 8) == Some(4) => {
            // v4: the model's checksum after it, then each block's low 32 bits in its
            // 6-byte index entry (blocks follow one another from the model's checksum).
            if let Some(m) = le_u32(b, 60) {
                let model_end = 72 + m as u64;
                if let Some(s) = sum(b, 72, model_end) {
                    put_u64(b, model_end as usize, s);
                }
                if let (Some(blocks), Some(at)) = (le_u32(b, 28), le_u64(b, 32)) {
                    let mut off = model_end + 8;
                    for i in 0..blocks as u64 {
                        let Some(e) = entry(b, at, i, 6) else { break };
                        let n = u16::from_le_bytes([b[e], b[e + 1]]) as u64;
                        if let Some(s) = sum(b, off, off + n) {
                            put_u32(b, e + 2, s as u32);
                        }
                        off += n;
                    }
                    if let Some(s) = sum(b, at, at.saturating_add(blocks as u64 * 6)) {
                        put_u64(b, 40, s);
                    }
                }
            }
            if let Some(s) = sum(b, 0, 64) {
                put_u64(b, 64, s);
            }
        }
        Kind::Values => {
            let header = if le_u32(b, 8) == Some(1) { 64 } else { 72 };
            if let (Some(blocks), Some(at)) = (le_u32(b, 28), le_u64(b, 32)) {
                for i in 0..blocks as u64 {
                    let Some(e) = entry(b, at, i, 24) else { break };
                    let (Some(off), Some(clen)) = (le_u64(b, e), le_u32(b, e + 8)) else { break };
                    if let Some(s) = sum(b, off, off.saturating_add(clen as u64)) {
                        put_u64(b, e + 16, s);
                    }
                }
                if let Some(s) = sum(b, at, at.saturating_add(blocks as u64 * 24)) {
                    put_u64(b, 40, s);
                }
            }
            if let Some(s) = sum(b, 0, header - 8) {
                put_u64(b, header as usize - 8, s);
            }
        }
        Kind::Sorted | Kind::Hash => {
            let body_at = if k == Kind::Sorted { 24 } else { 32 };
            if let Some(s) = sum(b, 64, len) {
                put_u64(b, body_at, s);
            }
            if let Some(s) = sum(b, 0, 56) {
                put_u64(b, 56, s);
            }
        }
        Kind::Bfs => {
            if let (Some(blocks), Some(at)) = (le_u32(b, 36), le_u64(b, 40)) {
                for i in 0..blocks as u64 {
                    let Some(e) = entry(b, at, i, 32) else { break };
                    let (Some(off), Some(clen)) = (le_u64(b, e + 8), le_u32(b, e + 16)) else { break };
                    if let Some(s) = sum(b, off, off.saturating_add(clen as u64)) {
                        put_u64(b, e + 24, s);
                    }
                }
                if let Some(s) = sum(b, at, len) {
                    put_u64(b, 56, s);
                }
            }
            if let Some(s) = sum(b, 0, 72) {
                put_u64(b, 72, s);
            }
        }
    }
}

/// Replace block `payload[0]` of a value or BFS file (laid out as the template's) by the
/// rest of the payload, compressed; later blocks move, the index follows them.
fn replace_block(k: Kind, good: &[u8], payload: &[u8]) -> Option<Vec<u8>> {
    let (&which, rest) = payload.split_first()?;
    let (header, entry, blocks_at, index_at_at, len_at) = match k {
        Kind::Values => (72usize, 24usize, 28usize, 32usize, 48usize),
        Kind::Bfs => (80, 32, 36, 40, 48),
        _ => return None,
    };
    if k == Kind::Values && le_u32(good, 8) != Some(3) {
        // Only v3's blocks are zstd frames to replace (the template's are v4 by default).
        return None;
    }
    let blocks = le_u32(good, blocks_at)? as usize;
    let index_at = le_u64(good, index_at_at)? as usize;
    if blocks == 0 {
        return None;
    }
    let which = which as usize % blocks;
    let (count, content) = match k {
        Kind::Bfs => (Some(u16::from_le_bytes(rest.get(..2)?.try_into().ok()?) as u32), rest.get(2..)?),
        _ => (None, rest),
    };
    let frame = zstd::encode_all(content, 1).ok()?;
    let mut out = good[..header].to_vec();
    let mut index = good[index_at..index_at + blocks * entry].to_vec();
    let tail = &good[index_at + blocks * entry..];
    for b in 0..blocks {
        let e = b * entry;
        let (off_at, clen_at) = match k {
            Kind::Values => (e, e + 8),
            _ => (e + 8, e + 16),
        };
        let off = le_u64(&index, off_at)? as usize;
        let clen = le_u32(&index, clen_at)? as usize;
        let bytes: &[u8] = if b == which { &frame } else { good.get(off..off + clen)? };
        put_u64(&mut index, off_at, out.len() as u64);
        put_u32(&mut index, clen_at, bytes.len() as u32);
        if b == which {
            match k {
                Kind::Values => put_u32(&mut index, e + 12, content.len() as u32),
                _ => {
                    put_u32(&mut index, e + 20, count.unwrap_or(0));
                    if let Some(first) = le_u64(content, 0) {
                        put_u64(&mut index, e, first);
                    }
                }
            }
        }
        out.extend_from_slice(bytes);
    }
    let at = out.len() as u64;
    out.extend_from_slice(&index);
    out.extend_from_slice(tail);
    put_u64(&mut out, index_at_at, at);
    let total = out.len() as u64;
    put_u64(&mut out, len_at, total);
    Some(out)
}

const BACKENDS: [Backend; 5] = [Backend::Sorted, Backend::Rank, Backend::Levelwise, Backend::Hash, Backend::Mmap];

/// Open the scratch database with `backend`, answer every probe, check every checksum
/// and (with `deep`) every value. `check` sees each answer.
fn run(
    dir: &Path,
    backend: Backend,
    deep: bool,
    probes: &[(Position, Option<Position>, String)],
    mut check: impl FnMut(&str, &str),
) -> Result<u64, Error> {
    let db =
        Database::open_opts(dir, &OpenOptions { backend: Some(backend), cache_bytes: 1 << 20, prepare_index: false })?;
    for (pos, prev, want) in probes {
        let got = answer(&db, pos, prev.as_ref())?;
        check(&got, want);
    }
    for p in db.index().phases() {
        db.store().values(p.phase()).expect("every phase has a value file").check()?;
        if backend != Backend::Rank {
            keys::check(backend, db.store().data_path(), p)?;
        }
    }
    if let Some(b) = db.store().bfs()? {
        b.check()?;
    }
    let mut mismatches = 0;
    if deep {
        let mut no_file = Checkpoint::open(None, "verify --deep", db.store(), Duration::ZERO, &Silent)?;
        let reports = ostledb::analysis::verify::verify_database(db.store(), None, &Silent, &mut no_file)?;
        mismatches = reports.iter().map(|(_, r)| r.mismatches).sum();
    }
    Ok(mismatches)
}

fuzz_target!(|data: &[u8]| {
    let [file, flags, payload @ ..] = data else { return };
    let mut s = scratch().lock().unwrap();
    let s = &mut *s;
    if let Some(d) = s.dirty.take() {
        let (rel, good) = &s.files[d];
        std::fs::write(s.dir.join(rel), good).unwrap();
    }
    let which = *file as usize % s.files.len();
    let (rel, good) = &s.files[which];
    let kind = kind_of(rel);
    let mut bytes = match flags & 3 {
        0 => {
            let mut b = good.clone();
            for e in payload.chunks_exact(5) {
                let at = u32::from_le_bytes(e[..4].try_into().unwrap()) as usize % b.len().max(1);
                if let Some(x) = b.get_mut(at) {
                    *x = e[4];
                }
            }
            b
        }
        1 => payload.to_vec(),
        2 => match replace_block(kind, good, payload) {
            Some(b) => b,
            None => return,
        },
        _ => {
            let Some(n) = le_u32(payload, 0) else { return };
            let n = n as usize % (2 * good.len() + 1);
            let mut b = good.clone();
            b.truncate(n);
            let pad = payload.get(4..).unwrap_or(&[]);
            while b.len() < n {
                let i = b.len();
                b.push(if pad.is_empty() { 0 } else { pad[i % pad.len()] });
            }
            b
        }
    };
    let fixed = flags & 4 != 0;
    if fixed {
        fix_checksums(kind, &mut bytes);
    }
    let damaged = bytes != *good;
    std::fs::write(s.dir.join(rel), &bytes).unwrap();
    s.dirty = Some(which);
    let backend = BACKENDS[(flags >> 3) as usize % BACKENDS.len()];
    if !backend.compiled() {
        return;
    }
    let deep = flags & 0x80 != 0;
    let strict = !fixed && damaged;
    let r = run(&s.dir, backend, deep, &s.probes, |got, want| {
        if !fixed {
            assert_eq!(got, want, "{}: a wrong answer from a damaged database", rel.display());
        }
    });
    if !fixed && let Ok(m) = r {
        assert_eq!(m, 0, "{}: verify --deep found wrong values that every checksum let through", rel.display());
    }
    if !damaged {
        r.unwrap_or_else(|e| panic!("{}: the unchanged database fails: {e}", rel.display()));
    } else if let Err(e) = r
        && strict
    {
        assert!(
            e.exit_code() == EXIT_CORRUPT || matches!(e, Error::NewerFormat { .. }),
            "{}: damage reported as {e:?}",
            rel.display()
        );
    }
});
