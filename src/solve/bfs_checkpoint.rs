//! The checkpoint of the breadth-first search by positions
//! ([`crate::solve::bfs_positions`]): everything the search needs to go on from a layer
//! boundary, so that a run killed or stopped (the whole 5x5 game runs about 2 hours)
//! resumes there instead of at depth 0.
//!
//! One file, [`FILE_NAME`] in the checkpoint directory, written atomically in large
//! blocks ([`crate::file::write_streamed`]: temporary name, fsync, rename) with
//! an XXH3-64 checksum over its body and one over its header. It holds the masks of
//! every position, the frontier bitmap of the next layer to expand, the layer
//! statistics so far and the options of the search; the masks and the frontier are
//! stored in pages of 4,096 bytes, and a page of zeros is left out (a bitmap says which
//! pages are stored), so a shallow search writes little and a resumed one leaves the
//! pages it never needed untouched. The byte layout is in `schema/FORMAT.md` ("BFS
//! checkpoint file"). Everything read back is checked (header fields, lengths, every
//! mask and frontier bit against the depth reached, the checksums); a damaged file is
//! an error ([`Error::Corrupt`], [`Error::BadMagic`], [`Error::ChecksumMismatch`]) and
//! a checkpoint of another search (board, checkmate expansion, a depth past the one
//! asked for) is refused with [`Error::InvalidArgument`], each naming the file and
//! saying how to start over.

use std::fs::File;
use std::io::{BufReader, Read};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering::Relaxed};

use rayon::prelude::*;

use crate::bfs_depths::node_layers::NODE_BITS;
use crate::error::{Error, FileKind, checksum_mismatch, corrupt, io};
use crate::file::{BlockOut, Hasher, check_version_and_sum, le_u32, le_u64, open_existing, write_streamed};
use crate::game::{Geometry, Phase};
use crate::solve::bfs::{LayerStats, PhaseLayer};

/// The first depth's place in a position's mask (bits 25..=31; the forbidden indices
/// reached are [`NODE_BITS`]), as the search keeps it and this file stores it.
pub(crate) const DEPTH_SHIFT: u32 = 25;
/// The largest first depth a mask holds; deeper ones read as this.
pub const MAX_FIRST_DEPTH: u32 = (1 << (32 - DEPTH_SHIFT)) - 1;
/// The checkpoint's name inside its directory.
pub const FILE_NAME: &str = "bfs-positions.ckpt";
/// The first 8 bytes of a BFS checkpoint.
pub const MAGIC: [u8; 8] = *b"OSTLEBCK";
/// The format version this code writes and reads.
pub const VERSION: u32 = 1;
/// Header size in bytes.
pub const HEADER_LEN: usize = 80;
/// Bytes of a page of the masks or of the frontier: stored whole, or left out when zero.
pub const PAGE_BYTES: usize = 4096;
/// Bytes written (and read) at a time.
const IO_BYTES: usize = 32 << 20;

/// The checkpoint file in directory `dir`.
pub fn file(dir: &Path) -> PathBuf {
    dir.join(FILE_NAME)
}

/// What the search keeps beside its masks and frontier at a layer boundary.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Progress {
    /// Whether immediate-win positions are expanded.
    pub expand_checkmates: bool,
    /// The layers done, depths `0..layers.len()`.
    pub layers: Vec<LayerStats>,
    /// Positions with a node reached.
    pub reached: u64,
    /// Positions in the frontier (first reached at the last layer's depth).
    pub frontier: u64,
    /// Seconds the search has run so far.
    pub seconds: f64,
}

/// Bytes of one layer's statistics with `phases` phases.
fn layer_len(phases: usize) -> u64 {
    7 * 8 + 16 * phases as u64
}

fn header(geom: &Geometry, phases: usize, positions: u64, p: &Progress, body_len: u64, body_sum: u64) -> Vec<u8> {
    let mut h = vec![0u8; HEADER_LEN];
    h[0..8].copy_from_slice(&MAGIC);
    h[8..12].copy_from_slice(&VERSION.to_le_bytes());
    h[12] = geom.side() as u8;
    h[13] = geom.start_pieces() as u8;
    h[14] = 0; // the published convention, the only one this search runs
    h[15] = p.expand_checkmates as u8;
    h[16..24].copy_from_slice(&positions.to_le_bytes());
    h[24..28].copy_from_slice(&(p.layers.len() as u32).to_le_bytes());
    h[28..32].copy_from_slice(&(phases as u32).to_le_bytes());
    h[32..40].copy_from_slice(&p.reached.to_le_bytes());
    h[40..48].copy_from_slice(&p.frontier.to_le_bytes());
    h[48..56].copy_from_slice(&p.seconds.to_bits().to_le_bytes());
    h[56..64].copy_from_slice(&body_len.to_le_bytes());
    h[64..72].copy_from_slice(&body_sum.to_le_bytes());
    let sum = crate::file::checksum(&h[..72]);
    h[72..80].copy_from_slice(&sum.to_le_bytes());
    h
}

/// The body as it is written: hashed, gathered into large blocks.
struct Body<'a> {
    out: &'a mut BlockOut,
    hash: Hasher,
    buf: Vec<u8>,
    len: u64,
}

impl Body<'_> {
    fn put(&mut self, bytes: &[u8]) -> Result<(), Error> {
        self.hash.update(bytes);
        self.len += bytes.len() as u64;
        if self.buf.len() + bytes.len() > IO_BYTES {
            self.out.block(&self.buf)?;
            self.buf.clear();
        }
        self.buf.extend_from_slice(bytes);
        Ok(())
    }

    fn flush(&mut self) -> Result<(), Error> {
        self.out.block(&self.buf)?;
        self.buf.clear();
        Ok(())
    }
}

/// A word array as stored: the bitmap of its non-zero pages, then those pages.
/// `word(i)` gives word `i`'s little-endian bytes (`W` of them).
fn put_paged<T: Sync, const W: usize>(
    body: &mut Body<'_>,
    words: &[T],
    word: impl Fn(&T) -> [u8; W] + Sync,
) -> Result<(), Error> {
    let per_page = PAGE_BYTES / W;
    let stored: Vec<bool> =
        words.par_chunks(per_page).map(|c| c.iter().any(|w| word(w).iter().any(|&b| b != 0))).collect();
    let mut bitmap = vec![0u64; stored.len().div_ceil(64)];
    for (p, _) in stored.iter().enumerate().filter(|(_, s)| **s) {
        bitmap[p / 64] |= 1 << (p % 64);
    }
    let bytes: Vec<u8> = bitmap.iter().flat_map(|w| w.to_le_bytes()).collect();
    body.put(&bytes)?;
    let mut page = vec![0u8; PAGE_BYTES];
    for (c, _) in words.chunks(per_page).zip(&stored).filter(|(_, s)| **s) {
        for (b, w) in page.chunks_exact_mut(W).zip(c) {
            b.copy_from_slice(&word(w));
        }
        body.put(&page[..c.len() * W])?;
    }
    Ok(())
}

/// Write the search's state at a layer boundary (atomically) into `dir`: the masks of
/// every position, the frontier of the next layer to expand (`frontier`, a bit per
/// position) and `p`. Called with no other thread touching the arrays. Returns the
/// file and its length.
pub(crate) fn save(
    dir: &Path,
    geom: &Geometry,
    phases: &[Phase],
    masks: &[AtomicU32],
    frontier: &[AtomicU64],
    p: &Progress,
) -> Result<(PathBuf, u64), Error> {
    std::fs::create_dir_all(dir).map_err(io(dir))?;
    let path = file(dir);
    let len = write_streamed(&path, HEADER_LEN, |out| {
        let mut body = Body { out, hash: Hasher::new(), buf: Vec::with_capacity(IO_BYTES), len: 0 };
        put_paged(&mut body, masks, |m| m.load(Relaxed).to_le_bytes())?;
        put_paged(&mut body, frontier, |w| w.load(Relaxed).to_le_bytes())?;
        let mut bytes = Vec::with_capacity(p.layers.len() * layer_len(phases.len()) as usize);
        for l in &p.layers {
            for v in [l.nodes, l.cumulative, l.positions, l.with_forbidden, l.checkmate_positions, l.checkmate_nodes] {
                bytes.extend_from_slice(&v.to_le_bytes());
            }
            bytes.extend_from_slice(&l.seconds.to_bits().to_le_bytes());
            for ph in &l.phases {
                bytes.extend_from_slice(&ph.nodes.to_le_bytes());
                bytes.extend_from_slice(&ph.positions.to_le_bytes());
            }
        }
        body.put(&bytes)?;
        body.flush()?;
        Ok(header(geom, phases.len(), masks.len() as u64, p, body.len, body.hash.finish()))
    })?;
    Ok((path, len))
}

/// The body as it is read: hashed, counted against its length.
struct Input {
    r: BufReader<File>,
    hash: Hasher,
    /// Bytes read.
    len: u64,
    path: PathBuf,
}

impl Input {
    fn read(&mut self, buf: &mut [u8]) -> Result<(), Error> {
        self.r.read_exact(buf).map_err(|e| match e.kind() {
            std::io::ErrorKind::UnexpectedEof => {
                corrupt(&self.path, "truncated: shorter than its header and page bitmaps say")
            }
            _ => io(&self.path)(e),
        })?;
        self.hash.update(buf);
        self.len += buf.len() as u64;
        Ok(())
    }

    /// Read a paged array of `n` words of `W` bytes: `page(first word, bytes)` gets each
    /// stored page.
    fn paged<const W: usize>(
        &mut self,
        n: u64,
        mut page: impl FnMut(u64, &[u8]) -> Result<(), Error>,
    ) -> Result<(), Error> {
        let per_page = (PAGE_BYTES / W) as u64;
        let pages = n.div_ceil(per_page);
        let mut bitmap = vec![0u8; 8 * pages.div_ceil(64) as usize];
        self.read(&mut bitmap)?;
        let bit = |p: u64| bitmap[(p / 8) as usize] >> (p % 8) & 1 == 1;
        if (pages..8 * bitmap.len() as u64).any(bit) {
            return Err(corrupt(&self.path, "a page bitmap names a page past the end of its array"));
        }
        let mut buf = vec![0u8; PAGE_BYTES];
        for p in (0..pages).filter(|&p| bit(p)) {
            let first = p * per_page;
            let len = (n - first).min(per_page) as usize * W;
            self.read(&mut buf[..len])?;
            page(first, &buf[..len])?;
        }
        Ok(())
    }
}

/// Read the checkpoint in `dir` into `masks` and the frontier (all zero before), for a
/// search of `geom` whose global numbering has `phases` and `masks.len()` positions,
/// from the start position of phase `start` (checked against the checkpoint's layer 0),
/// with checkmates expanded as `expand_checkmates` says, to `max_depth`: `Ok(None)` when
/// there is none. `set_frontier(w, bits)` stores frontier word `w` (only the words not
/// zero). Returns the file and what else the checkpoint holds.
#[allow(clippy::too_many_arguments)]
pub(crate) fn load(
    dir: &Path,
    geom: &Geometry,
    phases: &[Phase],
    start: Phase,
    expand_checkmates: bool,
    max_depth: u32,
    masks: &[AtomicU32],
    mut set_frontier: impl FnMut(usize, u64),
) -> Result<Option<(PathBuf, Progress)>, Error> {
    let path = file(dir);
    let Some(f) = open_existing(&path)? else { return Ok(None) };
    let file_len = f.metadata().map_err(io(&path))?.len();
    let mut r = BufReader::with_capacity(IO_BYTES, f);
    let mut h = [0u8; HEADER_LEN];
    r.read_exact(&mut h).map_err(|_| corrupt(&path, format!("shorter than its {HEADER_LEN}-byte header")))?;
    check_version_and_sum(&path, &h, &MAGIC, VERSION, FileKind::BfsCheckpoint)?;
    let start_over = "use another checkpoint directory, or delete it to start over";
    if (h[12] as u32, h[13] as u32) != (geom.side(), geom.start_pieces()) {
        return Err(Error::InvalidArgument(format!(
            "{}: the checkpoint of a search on a {}x{} board with {} pieces a side, not {}x{} with {}: {start_over}",
            path.display(),
            h[12],
            h[12],
            h[13],
            geom.side(),
            geom.side(),
            geom.start_pieces()
        )));
    }
    if h[14] != 0 {
        return Err(corrupt(&path, format!("convention {}, not 0 (published)", h[14])));
    }
    let mates = |m: bool| if m { "expanded" } else { "not expanded (--no-checkmate-expansion)" };
    match h[15] {
        0 | 1 if (h[15] == 1) == expand_checkmates => {}
        0 | 1 => {
            return Err(Error::InvalidArgument(format!(
                "{}: the checkpoint of a search with checkmate positions {}, this one has them {}: run with the same \
                 option to resume it, or {start_over}",
                path.display(),
                mates(h[15] == 1),
                mates(expand_checkmates)
            )));
        }
        x => return Err(corrupt(&path, format!("checkmate flag {x}, neither 0 nor 1"))),
    }
    let n = masks.len() as u64;
    let positions = le_u64(&h, 16);
    let layers = le_u32(&h, 24);
    let phase_count = le_u32(&h, 28) as usize;
    if phase_count != phases.len() {
        // A search from a smaller start (`bfs --max-pieces`) covers fewer phases.
        return Err(Error::InvalidArgument(format!(
            "{}: the checkpoint of a search over {phase_count} phases ({positions} positions), this one covers {} \
             ({n} positions) from a start in phase {start}: {start_over}",
            path.display(),
            phases.len()
        )));
    }
    if positions != n {
        return Err(corrupt(
            &path,
            format!(
                "holds {positions} positions in {phase_count} phases, the game on this board has {n} in {}",
                phases.len()
            ),
        ));
    }
    if layers == 0 || layers > 1 << 16 {
        return Err(corrupt(&path, format!("{layers} layers")));
    }
    let depth = layers - 1;
    if depth > max_depth {
        return Err(Error::InvalidArgument(format!(
            "{}: the checkpoint is past depth {depth}, deeper than the --max-depth {max_depth} asked for: search to \
             depth {depth} or more to resume it, or delete it to start over",
            path.display()
        )));
    }
    let (reached, frontier) = (le_u64(&h, 32), le_u64(&h, 40));
    let seconds = f64::from_bits(le_u64(&h, 48));
    let (body_len, body_sum) = (le_u64(&h, 56), le_u64(&h, 64));
    if file_len != HEADER_LEN as u64 + body_len {
        return Err(corrupt(&path, format!("{file_len} bytes long, its header says {}", HEADER_LEN as u64 + body_len)));
    }
    let mut input = Input { r, hash: Hasher::new(), len: 0, path: path.clone() };

    // The masks: a node bit set with a first depth of a layer done, or all zero.
    let stamp = depth.min(MAX_FIRST_DEPTH);
    let mut counted = 0u64;
    input.paged::<4>(n, |first, bytes| {
        for (i, b) in bytes.chunks_exact(4).enumerate() {
            let m = u32::from_le_bytes(b.try_into().expect("4 bytes"));
            if m == 0 {
                continue;
            }
            if m & NODE_BITS == 0 || m >> DEPTH_SHIFT > stamp {
                return Err(corrupt(
                    &path,
                    format!("position {}: mask {m:#010x} after depth {depth}", first + i as u64),
                ));
            }
            masks[(first + i as u64) as usize].store(m, Relaxed);
            counted += 1;
        }
        Ok(())
    })?;
    if counted != reached {
        return Err(corrupt(&path, format!("{counted} positions reached, its header says {reached}")));
    }

    // The frontier: positions first reached at the last layer's depth.
    let words = n.div_ceil(64);
    let mut in_frontier = 0u64;
    input.paged::<8>(words, |first, bytes| {
        for (i, b) in bytes.chunks_exact(8).enumerate() {
            let w = first + i as u64;
            let mut bits = u64::from_le_bytes(b.try_into().expect("8 bytes"));
            if bits == 0 {
                continue;
            }
            set_frontier(w as usize, bits);
            while bits != 0 {
                let g = w * 64 + bits.trailing_zeros() as u64;
                bits &= bits - 1;
                let m = masks.get(g as usize).map_or(0, |m| m.load(Relaxed));
                if m & NODE_BITS == 0 || m >> DEPTH_SHIFT != stamp {
                    return Err(corrupt(
                        &path,
                        format!("position {g} is in the frontier, not first reached at {depth}"),
                    ));
                }
                in_frontier += 1;
            }
        }
        Ok(())
    })?;
    if in_frontier != frontier {
        return Err(corrupt(&path, format!("{in_frontier} positions in the frontier, its header says {frontier}")));
    }

    // The layer statistics.
    let mut bytes = vec![0u8; layers as usize * layer_len(phases.len()) as usize];
    input.read(&mut bytes)?;
    let mut stats = Vec::with_capacity(layers as usize);
    let mut cumulative = 0u64;
    for (d, b) in bytes.chunks_exact(layer_len(phases.len()) as usize).enumerate() {
        let at = |k: usize| le_u64(b, 8 * k);
        let l = LayerStats {
            depth: d as u32,
            nodes: at(0),
            cumulative: at(1),
            positions: at(2),
            with_forbidden: at(3),
            checkmate_positions: at(4),
            checkmate_nodes: at(5),
            seconds: f64::from_bits(at(6)),
            phases: phases
                .iter()
                .enumerate()
                .map(|(k, ph)| PhaseLayer {
                    phase: [ph.player, ph.opponent],
                    nodes: at(7 + 2 * k),
                    positions: at(8 + 2 * k),
                })
                .collect(),
        };
        cumulative = cumulative.wrapping_add(l.nodes);
        if l.nodes == 0 || l.cumulative != cumulative || l.positions > l.nodes {
            return Err(corrupt(&path, format!("the statistics of depth {d} do not add up")));
        }
        stats.push(l);
    }
    if input.len != body_len {
        return Err(corrupt(&path, format!("a body of {} bytes, its header says {body_len}", input.len)));
    }
    if input.hash.finish() != body_sum {
        let end = HEADER_LEN as u64 + body_len;
        return Err(checksum_mismatch(&path, FileKind::BfsCheckpoint, "body", None, Some((HEADER_LEN as u64, end))));
    }
    // Layer 0 is the start node alone: its phase says where the search started.
    let started = stats[0].phases.iter().find(|l| l.nodes > 0).map(|l| Phase::new(l.phase[0], l.phase[1]));
    if started != Some(start) {
        return Err(Error::InvalidArgument(format!(
            "{}: the checkpoint of a search from a start in phase {}, this one starts in {start}: {start_over}",
            path.display(),
            started.map_or("(none)".to_string(), |p| p.to_string())
        )));
    }
    let p = Progress { expand_checkmates, layers: stats, reached, frontier, seconds };
    Ok(Some((path, p)))
}

/// Remove the checkpoint in `dir` (the search has ended), if there is one, and the
/// temporary file of a save that was killed.
pub(crate) fn remove(dir: &Path) -> Result<(), Error> {
    let path = file(dir);
    let mut removed = false;
    for p in [crate::file::temp_name(&path), path] {
        match std::fs::remove_file(&p) {
            Ok(()) => removed = true,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(Error::Io { path: p, source: e }),
        }
    }
    if removed { crate::file::sync_dir(dir) } else { Ok(()) }
}
