//! The first-depth file: for every position of the game, the depth at which a
//! breadth-first search from the initial position (published convention, by positions:
//! [`crate::solve::bfs_positions`]) first reached one of its nodes. One byte per position
//! in the global numbering ([`GameNumbering`]), in zstd blocks, beside a database, so that
//! `query` can say how far any node is from the start: a node's depth is one more than
//! the least first depth among the positions that have a move to it (its predecessors),
//! because every node of a position has the same moves under that convention and the
//! position is expanded at its first node's depth.
//!
//! The byte layout is normative and documented in `schema/FORMAT.md` ("First-depth file
//! v1"). In short: an 80-byte header, the blocks (each a zstd frame of
//! [`BLOCK_POSITIONS`] depth bytes, the last one shorter, [`NOT_REACHED`] for a position
//! the search did not reach), then an index (offset, length and xxh3 checksum of each
//! block) followed by the new nodes of every depth and the positions first reached at
//! every depth.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use rayon::prelude::*;

use crate::error::{Error, FileKind, checksum_mismatch, corrupt, io};
use crate::file::{
    IndexAt, IndexedOut, checksum, decompress, le_u32, le_u64, open_with_header, prefix, read_index, read_summed,
    remove_on_error, rename_durably, temp_name,
};
use crate::game::forbidden::unmoves_with_node_index;
use crate::game::moves::{is_immediate_win, unmoves_removing};
use crate::game::node::{node_key, start_key_of};
use crate::game::{Geometry, Phase, Position};
use crate::index::GameNumbering;

/// The first 8 bytes of a first-depth file.
pub const MAGIC: [u8; 8] = *b"OSTLEBFD";
/// The format version this code writes and reads.
pub const VERSION: u32 = 1;
/// Header size in bytes.
pub const HEADER_LEN: usize = 80;
/// Size of one block index entry in bytes.
pub const ENTRY_LEN: usize = 24;
/// Positions per block this build writes (readers take any power of two from
/// [`MIN_BLOCK`] to [`MAX_BLOCK`] that the header names).
pub const BLOCK_POSITIONS: u32 = 1 << 14;
/// The smallest block a reader accepts.
pub const MIN_BLOCK: u32 = 1 << 8;
/// The largest block a reader accepts.
pub const MAX_BLOCK: u32 = 1 << 16;
/// The depth byte of a position the search did not reach.
pub const NOT_REACHED: u8 = u8::MAX;
/// The file's name in a database directory.
pub const FILE_NAME: &str = "bfs-first-depths.zst";
/// The zstd level of the blocks. Measured on the whole game's first depths
/// (`examples/first_depth_blocks.rs`, ARCHITECTURE.md): blocks of 16,384 at level 6 are
/// 1.770 bits per position, decode in 31 us and compress at 17 ns a position, against
/// 1.571 bits, 33 us and 279 ns at level 19, which made storing the whole game's depths
/// take 6 minutes of the BFS's 52 (2 cores) for 12% less disk.
pub const LEVEL: i32 = 6;
/// Decoded blocks a reader keeps (the predecessors of one node are a few dozen).
const CACHED_BLOCKS: usize = 64;

/// What a first-depth file says about its search.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct FirstDepthSummary {
    /// Whether immediate-win positions were expanded (the published run did).
    pub expand_checkmates: bool,
    /// Every reachable node was found (the search ran out of nodes, not of depth).
    pub complete: bool,
    /// New nodes per depth, from depth 0 (the search's layers).
    pub layers: Vec<u64>,
    /// Positions whose first node is at each depth, from depth 0.
    pub first_reached: Vec<u64>,
    /// Positions of the game (reached or not).
    pub positions: u64,
    /// The phase of the position the search started from
    /// ([`Position::start`]): the game's own phase, or a smaller one for a search of the
    /// published solver's `-s 8` or `-s 9` kind (`ostledb bfs --max-pieces`). Serialised
    /// as `[player, opponent]`.
    #[serde(serialize_with = "phase_pair")]
    pub start: Phase,
}

fn phase_pair<S: serde::Serializer>(p: &Phase, s: S) -> Result<S::Ok, S::Error> {
    serde::Serialize::serialize(&[p.player, p.opponent], s)
}

impl FirstDepthSummary {
    /// All nodes the search reached.
    pub fn nodes(&self) -> u64 {
        self.layers.iter().sum()
    }

    /// Positions the search reached.
    pub fn reached(&self) -> u64 {
        self.first_reached.iter().sum()
    }
}

#[derive(Clone, Copy, Debug)]
struct Entry {
    offset: u64,
    len: u32,
    sum: u64,
}

/// Write the first-depth file of a search into `dir`, atomically, removing the node
/// layers there ([`crate::bfs_depths::node_layers`], of the search it replaces). `fill(start, out)` puts
/// the depths of the positions with global numbers `start..start + out.len()` into `out`
/// (called in ascending order, [`NOT_REACHED`] for a position not reached); `summary`
/// says what the search was, and its `first_reached` must agree with the depths (checked
/// as they are written). `reporter` gets one step, in positions. Returns the file's
/// length.
pub fn write(
    dir: &Path,
    geom: &Geometry,
    summary: &FirstDepthSummary,
    mut fill: impl FnMut(u64, &mut [u8]) -> Result<(), Error>,
    reporter: &dyn crate::progress::Reporter,
) -> Result<u64, Error> {
    let depths = summary.layers.len();
    if depths == 0 || depths > NOT_REACHED as usize || summary.first_reached.len() != depths {
        return Err(Error::InvalidArgument(format!(
            "a first-depth file holds 1 to 254 depths, with as many layer counts as first-reached counts \
             ({} and {})",
            depths,
            summary.first_reached.len()
        )));
    }
    let path = dir.join(FILE_NAME);
    let tmp = temp_name(&path);
    let r = (|| -> Result<u64, Error> {
        let mut out = IndexedOut::create(&tmp, HEADER_LEN)?;
        let mut entries = Vec::new();
        let mut seen = vec![0u64; 256];
        // A batch of blocks is filled in order, compressed in parallel, then written.
        const BATCH: u64 = 64;
        let block = BLOCK_POSITIONS as u64;
        let mut buf = vec![0u8; (BATCH * block) as usize];
        let mut start = 0u64;
        reporter.begin("store the first depths", summary.positions);
        while start < summary.positions {
            let n = (summary.positions - start).min(BATCH * block) as usize;
            let buf = &mut buf[..n];
            fill(start, buf)?;
            for &d in buf.iter() {
                seen[d as usize] += 1;
            }
            let frames: Vec<std::io::Result<Vec<u8>>> =
                buf.par_chunks(block as usize).map(|c| zstd::bulk::compress(c, LEVEL)).collect();
            for z in frames {
                let z = z.map_err(io(&tmp))?;
                let offset = out.append(&z)?;
                entries.push(Entry { offset, len: z.len() as u32, sum: checksum(&z) });
            }
            start += n as u64;
            reporter.advance(n as u64);
        }
        reporter.end();
        if seen[..depths] != summary.first_reached[..] || seen[depths..NOT_REACHED as usize].iter().any(|&c| c > 0) {
            return Err(Error::InvalidArgument(
                "the depths written disagree with the search's count of positions first reached at each depth".into(),
            ));
        }
        let mut index = Vec::with_capacity(entries.len() * ENTRY_LEN + depths * 16);
        for e in &entries {
            index.extend_from_slice(&e.offset.to_le_bytes());
            index.extend_from_slice(&e.len.to_le_bytes());
            index.extend_from_slice(&0u32.to_le_bytes());
            index.extend_from_slice(&e.sum.to_le_bytes());
        }
        for &n in summary.layers.iter().chain(&summary.first_reached) {
            index.extend_from_slice(&n.to_le_bytes());
        }
        out.finish(&index, |tail| {
            let mut h = [0u8; HEADER_LEN];
            h[0..16].copy_from_slice(&prefix(&MAGIC, VERSION, geom, summary.start));
            h[16] = summary.expand_checkmates as u8;
            h[17] = summary.complete as u8;
            h[20..24].copy_from_slice(&(depths as u32).to_le_bytes());
            h[24..32].copy_from_slice(&summary.positions.to_le_bytes());
            h[32..36].copy_from_slice(&BLOCK_POSITIONS.to_le_bytes());
            h[36..40].copy_from_slice(&(entries.len() as u32).to_le_bytes());
            h[40..48].copy_from_slice(&tail.index_at.to_le_bytes());
            h[48..56].copy_from_slice(&tail.len.to_le_bytes());
            h[56..64].copy_from_slice(&tail.index_sum.to_le_bytes());
            h[64..72].copy_from_slice(&summary.nodes().to_le_bytes());
            let sum = checksum(&h[..72]);
            h[72..80].copy_from_slice(&sum.to_le_bytes());
            h
        })
    })();
    let len = remove_on_error(&tmp, r)?;
    // Node layers kept beside the file before are of another search: they go first, so
    // that no crash leaves them beside the new depths.
    crate::bfs_depths::node_layers::remove(dir)?;
    rename_durably(&tmp, &path)?;
    Ok(len)
}

/// An open first-depth file: header and index checked, blocks read on demand (the
/// last 64 kept), and the game's numbering to find a position's byte.
pub struct FirstDepthFile {
    path: PathBuf,
    file: File,
    summary: FirstDepthSummary,
    entries: Vec<Entry>,
    /// Positions per block.
    per_block: u32,
    bytes: u64,
    numbering: GameNumbering,
    cache: Mutex<Vec<(usize, Arc<Vec<u8>>)>>,
}

impl std::fmt::Debug for FirstDepthFile {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FirstDepthFile").field("path", &self.path).field("summary", &self.summary).finish()
    }
}

impl FirstDepthFile {
    /// Open the first-depth file in `dir`: `Ok(None)` when there is none.
    pub fn open(dir: &Path, geom: &Geometry) -> Result<Option<FirstDepthFile>, Error> {
        let path = dir.join(FILE_NAME);
        let Some((mut file, h, len)) =
            open_with_header::<HEADER_LEN>(&path, &MAGIC, VERSION, FileKind::FirstDepths, geom)?
        else {
            return Ok(None);
        };
        if h[16] > 1 || h[17] > 1 {
            return Err(corrupt(&path, "the header's flags are not 0 or 1"));
        }
        let depths = le_u32(&h, 20) as u64;
        let positions = le_u64(&h, 24);
        let blocks = le_u32(&h, 36) as u64;
        let block = le_u32(&h, 32);
        if !block.is_power_of_two()
            || !(MIN_BLOCK..=MAX_BLOCK).contains(&block)
            || blocks != positions.div_ceil(block as u64)
        {
            return Err(corrupt(&path, "the header's block size or block count disagrees with its positions"));
        }
        if depths == 0 || depths >= NOT_REACHED as u64 {
            return Err(corrupt(&path, format!("{depths} depths, out of range 1..{NOT_REACHED}")));
        }
        let index_at = le_u64(&h, 40);
        let index = read_index(
            &mut file,
            &path,
            FileKind::FirstDepths,
            len,
            IndexAt::in_80_byte_header(&h, blocks * ENTRY_LEN as u64 + depths * 16),
        )?;
        let mut entries = Vec::with_capacity(blocks as usize);
        let mut at = HEADER_LEN as u64;
        for (b, e) in index[..(blocks as usize) * ENTRY_LEN].chunks_exact(ENTRY_LEN).enumerate() {
            let e = Entry { offset: le_u64(e, 0), len: le_u32(e, 8), sum: le_u64(e, 16) };
            if e.offset != at || e.len == 0 {
                return Err(corrupt(&path, format!("block {b}: index entry out of place")));
            }
            at += e.len as u64;
            entries.push(e);
        }
        let counts: Vec<u64> = index[(blocks as usize) * ENTRY_LEN..].chunks_exact(8).map(|c| le_u64(c, 0)).collect();
        let (layers, first_reached) = counts.split_at(depths as usize);
        let start = Phase::new(h[14] as u32, h[15] as u32);
        if !Phase::all(geom, u32::MAX).contains(&start) {
            return Err(corrupt(&path, format!("the start's phase {start} is not a phase of the board")));
        }
        let summary = FirstDepthSummary {
            expand_checkmates: h[16] == 1,
            complete: h[17] == 1,
            layers: layers.to_vec(),
            first_reached: first_reached.to_vec(),
            positions,
            start,
        };
        if at != index_at || summary.nodes() != le_u64(&h, 64) || summary.reached() > positions {
            return Err(corrupt(&path, "the blocks, the node count and the layer counts disagree"));
        }
        // The search's universe: the phases its start can reach.
        let numbering = GameNumbering::build_max(geom, start.pieces())?;
        if numbering.len() != positions {
            return Err(corrupt(
                &path,
                format!(
                    "{positions} positions, but the phases with at most {} pieces on this board have {}",
                    start.pieces(),
                    numbering.len()
                ),
            ));
        }
        Ok(Some(FirstDepthFile {
            path,
            file,
            summary,
            entries,
            per_block: block,
            bytes: len,
            numbering,
            cache: Mutex::new(Vec::new()),
        }))
    }

    /// What the file holds.
    pub fn summary(&self) -> &FirstDepthSummary {
        &self.summary
    }

    /// The deepest depth of the search.
    pub fn max_depth(&self) -> u32 {
        self.summary.layers.len() as u32 - 1
    }

    /// The file's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The file's size in bytes.
    pub fn file_len(&self) -> u64 {
        self.bytes
    }

    /// The numbering the file is in.
    pub fn numbering(&self) -> &GameNumbering {
        &self.numbering
    }

    fn block_mismatch(&self, b: usize, e: &Entry) -> Error {
        let bytes = Some((e.offset, e.offset + e.len as u64));
        checksum_mismatch(&self.path, FileKind::FirstDepths, "depths", Some(b as u64), bytes)
    }

    /// The positions of block `b`.
    fn block_len(&self, b: usize) -> usize {
        let first = b as u64 * self.per_block as u64;
        (self.summary.positions - first).min(self.per_block as u64) as usize
    }

    fn read_block(&self, b: usize) -> Result<Vec<u8>, Error> {
        let e = self.entries[b];
        let mut frame = vec![0u8; e.len as usize];
        let intact = read_summed(&self.file, &self.path, e.offset, &mut frame, e.sum)?;
        if !intact {
            return Err(self.block_mismatch(b, &e));
        }
        let bad = |why: &str| {
            corrupt(&self.path, format!("block {b} (bytes {}..{}): {why}", e.offset, e.offset + e.len as u64))
        };
        let raw = decompress(&frame, self.per_block as usize).map_err(|_| bad("not a valid zstd frame"))?;
        let depths = self.summary.layers.len();
        if raw.len() != self.block_len(b) || raw.iter().any(|&d| d != NOT_REACHED && d as usize >= depths) {
            return Err(bad("its depths disagree with the header"));
        }
        Ok(raw)
    }

    fn block(&self, b: usize) -> Result<Arc<Vec<u8>>, Error> {
        let mut cache = self.cache.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(i) = cache.iter().position(|(cb, _)| *cb == b) {
            let hit = cache.remove(i);
            cache.insert(0, hit.clone());
            return Ok(hit.1);
        }
        drop(cache);
        let block = Arc::new(self.read_block(b)?);
        let mut cache = self.cache.lock().unwrap_or_else(|p| p.into_inner());
        cache.insert(0, (b, block.clone()));
        cache.truncate(CACHED_BLOCKS);
        Ok(block)
    }

    /// Forget every decoded block, so that the next read is cold.
    pub fn drop_cache(&self) {
        self.cache.lock().unwrap_or_else(|p| p.into_inner()).clear();
    }

    /// Decode, in parallel, the blocks holding the positions of these global numbers
    /// that the cache lacks (as many as it keeps, at most), and keep them there: a node's
    /// predecessors are a few dozen positions in as many blocks, which its depth would
    /// otherwise read one after another. Nothing is done on one thread or for fewer than
    /// two missing blocks; errors are left for the reads that follow to report.
    fn read_ahead(&self, globals: &[u64]) {
        if rayon::current_num_threads() < 2 {
            return;
        }
        let per = self.per_block as u64;
        let mut missing: Vec<usize> =
            globals.iter().filter(|&&g| g < self.summary.positions).map(|&g| (g / per) as usize).collect();
        missing.sort_unstable();
        missing.dedup();
        {
            let cache = self.cache.lock().unwrap_or_else(|p| p.into_inner());
            missing.retain(|b| !cache.iter().any(|(cb, _)| cb == b));
        }
        missing.truncate(CACHED_BLOCKS);
        if missing.len() < 2 {
            return;
        }
        let decoded: Vec<(usize, Arc<Vec<u8>>)> =
            missing.par_iter().filter_map(|&b| self.read_block(b).ok().map(|d| (b, Arc::new(d)))).collect();
        let mut cache = self.cache.lock().unwrap_or_else(|p| p.into_inner());
        for (b, d) in decoded {
            if !cache.iter().any(|(cb, _)| *cb == b) {
                cache.insert(0, (b, d));
            }
        }
        cache.truncate(CACHED_BLOCKS);
    }

    /// The depth of the first node of the position with global number `g`, `None` when
    /// the search did not reach it (or `g` is out of range).
    pub fn depth_at(&self, g: u64) -> Result<Option<u32>, Error> {
        if g >= self.summary.positions {
            return Ok(None);
        }
        let b = (g / self.per_block as u64) as usize;
        let d = self.block(b)?[(g % self.per_block as u64) as usize];
        Ok((d != NOT_REACHED).then_some(d as u32))
    }

    /// The depth of the first node of `pos` (any orientation), `None` when the search did
    /// not reach it or it is not a position of the game's phases.
    pub fn position_depth(&self, pos: &Position) -> Result<Option<u32>, Error> {
        match self.numbering.global_of(pos) {
            Some((g, _)) => self.depth_at(g),
            None => Ok(None),
        }
    }

    /// The depth of node `(canon, j)` (`canon` a canonical position, `j` its published
    /// node index), `None` when it was not reached within the searched depths: see
    /// [`node_sources`]. The blocks of its predecessors, and that of `canon` itself (whose
    /// [`FirstDepthFile::position_depth`] a caller most often asks for too), are read
    /// ahead in parallel.
    pub fn node_depth(&self, canon: &Position, j: usize) -> Result<Option<u32>, Error> {
        let mut err = None;
        if j >= 25 {
            return Ok(None);
        }
        let mut sources = Vec::new();
        let start = node_sources(&self.numbering, &self.summary, canon, Some(j), &mut sources);
        let mut wanted: Vec<u64> = self.numbering.global_of(canon).map(|(g, _)| g).into_iter().collect();
        wanted.extend(sources.iter().map(|&(g, _)| g));
        self.read_ahead(&wanted);
        let depths = depths_from_sources(&self.summary, &sources, start, |g| match self.depth_at(g) {
            Ok(d) => d,
            Err(e) => {
                err.get_or_insert(e);
                None
            }
        });
        match err {
            Some(e) => Err(e),
            None => Ok(depths.get(j).copied().flatten()),
        }
    }

    /// Every depth of the file, decoded (blocks in parallel): one byte per position in
    /// the global numbering, [`NOT_REACHED`] where the search did not reach.
    pub fn load_all(&self) -> Result<Vec<u8>, Error> {
        let mut all = vec![
            0u8;
            usize::try_from(self.summary.positions).map_err(|_| {
                Error::InvalidArgument(format!("{} positions do not fit this machine's memory", self.summary.positions))
            })?
        ];
        all.par_chunks_mut(self.per_block as usize).enumerate().try_for_each(|(b, out)| {
            out.copy_from_slice(&self.read_block(b)?);
            Ok::<_, Error>(())
        })?;
        Ok(all)
    }

    /// Recompute every block's checksum; returns the bytes checked.
    pub fn check(&self) -> Result<u64, Error> {
        let mut frame = Vec::new();
        for (b, e) in self.entries.iter().enumerate() {
            frame.resize(e.len as usize, 0);
            if !read_summed(&self.file, &self.path, e.offset, &mut frame, e.sum)? {
                return Err(self.block_mismatch(b, e));
            }
        }
        Ok(self.bytes)
    }
}

/// The predecessors whose first depths give the nodes of canonical position `canon`
/// (node `(canon, j)` for index `j`) their depths in the search `summary` describes,
/// into `sources` (cleared first): every predecessor by a move without removal, with the
/// index of the node its move reaches, and every predecessor by a move that removed a
/// piece, at node 0; each as its global number and that index. An immediate-win
/// predecessor only when the search expanded those. With `only: Some(j)`, those of node
/// `j` only. Returns whether node 0 is the start node. [`depths_from_sources`] turns them
/// into depths; a caller that reads depths from memory can ask for them all ahead
/// ([`crate::sys::prefetch`]) first, so that their cache misses overlap.
pub fn node_sources(
    numbering: &GameNumbering,
    summary: &FirstDepthSummary,
    canon: &Position,
    only: Option<usize>,
    sources: &mut Vec<(u64, u8)>,
) -> bool {
    let geom = numbering.index().geometry();
    sources.clear();
    let mut offer = |p: &Position, j: usize| {
        if only.is_some_and(|o| o != j) {
            return;
        }
        let Some((g, _)) = numbering.global_of(p) else { return };
        if !summary.expand_checkmates && is_immediate_win(geom, p) {
            return;
        }
        sources.push((g, j as u8));
    };
    unmoves_with_node_index(geom, canon, |u, j| offer(&u.pred, j));
    if only.is_none_or(|o| o == 0) {
        unmoves_removing(geom, canon, |u| offer(&u.pred, 0));
    }
    only.is_none_or(|o| o == 0) && node_key(canon.code(), 0) == start_key_of(geom, summary.start)
}

/// The depth of every node from [`node_sources`]' answer and the first depths of
/// positions (`depth_at(g)` for global number `g`, `None` when not reached): 0 for the
/// start node, otherwise one more than the least first depth among its sources; `None`
/// for a node no source reached within the searched depths (and for indices past the
/// last move, and for the nodes `only` left out).
pub fn depths_from_sources(
    summary: &FirstDepthSummary,
    sources: &[(u64, u8)],
    start: bool,
    mut depth_at: impl FnMut(u64) -> Option<u32>,
) -> [Option<u32>; 25] {
    let mut out = [None::<u32>; 25];
    let max = summary.layers.len() as u32 - 1;
    for &(g, j) in sources {
        if let Some(d) = depth_at(g).map(|d| d + 1).filter(|&d| d <= max) {
            let o = &mut out[j as usize];
            *o = Some(o.map_or(d, |b| b.min(d)));
        }
    }
    if start {
        out[0] = Some(0);
    }
    out
}
