//! The node layers of a breadth-first search by positions
//! ([`crate::solve::bfs_positions`]): for every depth, which positions gained a node at
//! that depth and, for each of them, its mask of reached nodes as the layer left it. A
//! node's depth is then the first layer whose mask has its bit, read in order, with no
//! search: what `export` needs for the published BFS files, one line per position with
//! the depth of each of its nodes. Without them every position's node depths are found
//! from its predecessors' first depths ([`crate::bfs_depths::first_depths::node_sources`]),
//! which on the whole game is most of the export's time.
//!
//! One file per depth, `layer-DDD.zst`, in the directory [`DIR_NAME`] of a database
//! (written by `ostledb bfs --by-positions --store --node-layers`; while the search runs,
//! in [`PARTIAL_DIR_NAME`] beside its checkpoint, each file written when its layer is
//! done, so that a resumed search has those of the layers before its checkpoint). The
//! byte layout is normative and documented in `schema/FORMAT.md` ("Node-layer file v1").
//! In short: an 80-byte header, then a zstd frame per block of [`BLOCK_POSITIONS`]
//! positions of the game's global numbering that has a touched position (the block's
//! bitmap of touched positions, then one 32-bit mask per touched position, in order), then
//! an index (offset, length, touched positions and xxh3 checksum of each block; a block
//! with none has no frame).

use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

use rayon::prelude::*;

use crate::error::{Error, FileKind, checksum_mismatch, corrupt, io};
use crate::file::{
    IndexAt, IndexedOut, checksum, decompress, fault_point, le_u32, le_u64, open_with_header, prefix, read_index,
    read_summed, remove_on_error, rename_durably, sync_dir, temp_name,
};
use crate::game::{Geometry, Phase};

/// The first 8 bytes of a node-layer file.
pub const MAGIC: [u8; 8] = *b"OSTLEBNL";
/// The format version this code writes and reads.
pub const VERSION: u32 = 1;
/// Header size in bytes.
pub const HEADER_LEN: usize = 80;
/// Size of one block index entry in bytes.
pub const ENTRY_LEN: usize = 24;
/// Positions per block (a multiple of 64: a block's bitmap is whole words).
pub const BLOCK_POSITIONS: u32 = 1 << 16;
/// The zstd level of the blocks.
pub const LEVEL: i32 = 3;
/// The directory of a database's node layers.
pub const DIR_NAME: &str = "bfs-node-layers";
/// The directory of the node layers of a search under way, beside its checkpoint.
pub const PARTIAL_DIR_NAME: &str = "bfs-node-layers.partial";
/// The bits of a mask that name nodes (node `j` is bit `j`).
pub const NODE_BITS: u32 = (1 << 25) - 1;

/// The file of layer `depth` in directory `dir`.
pub fn layer_path(dir: &Path, depth: u32) -> PathBuf {
    dir.join(format!("layer-{depth:03}.zst"))
}

/// The depth a node-layer file's name gives (`layer-007.zst`: 7).
pub fn depth_of_name(name: &str) -> Option<u32> {
    let d = name.strip_prefix("layer-")?.strip_suffix(".zst")?;
    (d.len() >= 3 && d.bytes().all(|c| c.is_ascii_digit())).then(|| d.parse().ok()).flatten()
}

#[derive(Clone, Copy, Debug)]
struct Entry {
    offset: u64,
    len: u32,
    touched: u32,
    sum: u64,
}

/// Write the file of layer `depth` of a search into `dir`, atomically: the positions of
/// bitmap `touched` (bit `g % 64` of word `g / 64` for the position of global number
/// `g`, of `positions`) with their masks, `mask(g)` (only [`NODE_BITS`]). Returns the
/// file's length and the number of positions written.
#[allow(clippy::too_many_arguments)]
pub fn write_layer(
    dir: &Path,
    geom: &Geometry,
    start: Phase,
    expand_checkmates: bool,
    depth: u32,
    positions: u64,
    touched: &[AtomicU64],
    mask: impl Fn(u64) -> u32 + Sync,
) -> Result<(u64, u64), Error> {
    let path = layer_path(dir, depth);
    let tmp = temp_name(&path);
    let block = BLOCK_POSITIONS as u64;
    let blocks = positions.div_ceil(block);
    if touched.len() as u64 != positions.div_ceil(64) {
        return Err(Error::InvalidArgument(format!("a bitmap of {} words for {positions} positions", touched.len())));
    }
    let r = (|| -> Result<(u64, u64), Error> {
        let mut out = IndexedOut::create(&tmp, HEADER_LEN)?;
        let mut entries = Vec::with_capacity(blocks as usize);
        let mut total = 0u64;
        // A batch of blocks is gathered and compressed in parallel, then written in order.
        const BATCH: u64 = 64;
        let words_per_block = (block / 64) as usize;
        let mut b0 = 0u64;
        while b0 < blocks {
            let b1 = (b0 + BATCH).min(blocks);
            let frames: Vec<std::io::Result<(u32, Vec<u8>)>> = (b0..b1)
                .into_par_iter()
                .map(|b| {
                    let w0 = b as usize * words_per_block;
                    let words = &touched[w0..(w0 + words_per_block).min(touched.len())];
                    let count: u32 = words.iter().map(|w| w.load(Relaxed).count_ones()).sum();
                    if count == 0 {
                        return Ok((0, Vec::new()));
                    }
                    let mut raw = Vec::with_capacity(words.len() * 8 + count as usize * 4);
                    for w in words {
                        raw.extend_from_slice(&w.load(Relaxed).to_le_bytes());
                    }
                    for (k, w) in words.iter().enumerate() {
                        let mut bits = w.load(Relaxed);
                        while bits != 0 {
                            let g = ((w0 + k) as u64) * 64 + bits.trailing_zeros() as u64;
                            raw.extend_from_slice(&(mask(g) & NODE_BITS).to_le_bytes());
                            bits &= bits - 1;
                        }
                    }
                    Ok((count, zstd::bulk::compress(&raw, LEVEL)?))
                })
                .collect();
            for z in frames {
                let (count, z) = z.map_err(io(&tmp))?;
                let offset = out.append(&z)?;
                let sum = if z.is_empty() { 0 } else { checksum(&z) };
                entries.push(Entry { offset, len: z.len() as u32, touched: count, sum });
                total += count as u64;
            }
            b0 = b1;
        }
        let mut index = Vec::with_capacity(entries.len() * ENTRY_LEN);
        for e in &entries {
            index.extend_from_slice(&e.offset.to_le_bytes());
            index.extend_from_slice(&e.len.to_le_bytes());
            index.extend_from_slice(&e.touched.to_le_bytes());
            index.extend_from_slice(&e.sum.to_le_bytes());
        }
        let len = out.finish(&index, |tail| {
            let mut h = [0u8; HEADER_LEN];
            h[0..16].copy_from_slice(&prefix(&MAGIC, VERSION, geom, start));
            h[16] = expand_checkmates as u8;
            h[20..24].copy_from_slice(&depth.to_le_bytes());
            h[24..32].copy_from_slice(&positions.to_le_bytes());
            h[32..36].copy_from_slice(&BLOCK_POSITIONS.to_le_bytes());
            h[36..40].copy_from_slice(&(blocks as u32).to_le_bytes());
            h[40..48].copy_from_slice(&tail.index_at.to_le_bytes());
            h[48..56].copy_from_slice(&tail.len.to_le_bytes());
            h[56..64].copy_from_slice(&tail.index_sum.to_le_bytes());
            h[64..72].copy_from_slice(&total.to_le_bytes());
            let sum = checksum(&h[..72]);
            h[72..80].copy_from_slice(&sum.to_le_bytes());
            h
        })?;
        Ok((len, total))
    })();
    let out = remove_on_error(&tmp, r)?;
    rename_durably(&tmp, &path)?;
    Ok(out)
}

/// One open layer file: its header and index checked.
#[derive(Debug)]
struct LayerFile {
    path: PathBuf,
    file: File,
    entries: Vec<Entry>,
    touched: u64,
    bytes: u64,
}

impl LayerFile {
    /// Open the file of layer `depth` in `dir` (`Ok(None)` when there is none) and
    /// check it is of a search of `geom` from the start of phase `start` with
    /// `expand_checkmates` over `positions`.
    fn open(
        dir: &Path,
        geom: &Geometry,
        depth: u32,
        (start, expand_checkmates): (Phase, bool),
        positions: u64,
    ) -> Result<Option<LayerFile>, Error> {
        let path = layer_path(dir, depth);
        let Some((mut file, h, len)) =
            open_with_header::<HEADER_LEN>(&path, &MAGIC, VERSION, FileKind::NodeLayers, geom)?
        else {
            return Ok(None);
        };
        let started = Phase::new(h[14] as u32, h[15] as u32);
        if h[16] != expand_checkmates as u8
            || le_u32(&h, 20) != depth
            || le_u64(&h, 24) != positions
            || started != start
        {
            return Err(corrupt(
                &path,
                format!(
                    "a layer of another search: depth {}, {} positions, checkmates expanded {}, start in {started} \
                     (the database's search: depth {depth}, {positions} positions, {expand_checkmates}, {start})",
                    le_u32(&h, 20),
                    le_u64(&h, 24),
                    h[16] == 1
                ),
            ));
        }
        let blocks = le_u32(&h, 36) as u64;
        if le_u32(&h, 32) != BLOCK_POSITIONS || blocks != positions.div_ceil(BLOCK_POSITIONS as u64) {
            return Err(corrupt(&path, "the header's block size or block count disagrees with its positions"));
        }
        let index_at = le_u64(&h, 40);
        let index = read_index(
            &mut file,
            &path,
            FileKind::NodeLayers,
            len,
            IndexAt::in_80_byte_header(&h, blocks * ENTRY_LEN as u64),
        )?;
        let mut entries = Vec::with_capacity(blocks as usize);
        let mut at = HEADER_LEN as u64;
        let mut touched = 0u64;
        for (b, e) in index.chunks_exact(ENTRY_LEN).enumerate() {
            let e = Entry { offset: le_u64(e, 0), len: le_u32(e, 8), touched: le_u32(e, 12), sum: le_u64(e, 16) };
            if e.offset != at || (e.len == 0) != (e.touched == 0) || e.touched as u64 > BLOCK_POSITIONS as u64 {
                return Err(corrupt(&path, format!("block {b}: index entry out of place")));
            }
            at += e.len as u64;
            touched += e.touched as u64;
            entries.push(e);
        }
        if at != index_at || touched != le_u64(&h, 64) {
            return Err(corrupt(&path, "the blocks and the count of positions disagree"));
        }
        Ok(Some(LayerFile { path, file, entries, touched, bytes: len }))
    }

    /// Check the checksum of every block; returns the file's length.
    fn check(&self) -> Result<u64, Error> {
        let mut frame = Vec::new();
        for (b, e) in self.entries.iter().enumerate().filter(|(_, e)| e.len > 0) {
            frame.resize(e.len as usize, 0);
            if !read_summed(&self.file, &self.path, e.offset, &mut frame, e.sum)? {
                let place = Some((e.offset, e.offset + e.len as u64));
                return Err(checksum_mismatch(&self.path, FileKind::NodeLayers, "blocks", Some(b as u64), place));
            }
        }
        Ok(self.bytes)
    }

    /// Block `b`, decoded and checked (`None`: no position of it is in the layer).
    fn block(&self, b: u64) -> Result<Option<LayerBlock>, Error> {
        let e = self.entries[b as usize];
        if e.len == 0 {
            return Ok(None);
        }
        let mut frame = vec![0u8; e.len as usize];
        let place = Some((e.offset, e.offset + e.len as u64));
        if !read_summed(&self.file, &self.path, e.offset, &mut frame, e.sum)? {
            return Err(checksum_mismatch(&self.path, FileKind::NodeLayers, "blocks", Some(b), place));
        }
        let words = (BLOCK_POSITIONS / 64) as usize;
        let expect = words * 8 + e.touched as usize * 4;
        let bad = |why: &str| corrupt(&self.path, format!("block {b}: {why}"));
        let raw = decompress(&frame, expect).map_err(|_| bad("not a zstd frame of its size"))?;
        // The last block's bitmap is shorter: as many words as its positions need.
        let n = raw.len().checked_sub(e.touched as usize * 4).filter(|n| n % 8 == 0 && *n <= words * 8);
        let Some(n) = n else { return Err(bad("its length disagrees with its positions")) };
        let bits: Vec<u64> = raw[..n].chunks_exact(8).map(|c| le_u64(c, 0)).collect();
        let mut ranks = Vec::with_capacity(bits.len());
        let mut r = 0u32;
        for w in &bits {
            ranks.push(r);
            r += w.count_ones();
        }
        let masks: Vec<u32> = raw[n..].chunks_exact(4).map(|c| le_u32(c, 0)).collect();
        if r != e.touched || masks.iter().any(|&m| m == 0 || m & !NODE_BITS != 0) {
            return Err(bad("its bitmap, its masks and its index entry disagree"));
        }
        Ok(Some(LayerBlock { bits, ranks, masks }))
    }
}

/// One decoded block of a layer: which of its positions gained a node, and their masks.
#[derive(Debug)]
pub struct LayerBlock {
    bits: Vec<u64>,
    ranks: Vec<u32>,
    masks: Vec<u32>,
}

impl LayerBlock {
    /// The mask of the block's position `i` (its offset in the block) as the layer left
    /// it, if it gained a node in the layer.
    #[inline]
    pub fn mask(&self, i: u64) -> Option<u32> {
        let w = *self.bits.get((i / 64) as usize)?;
        let bit = 1u64 << (i % 64);
        (w & bit != 0).then(|| self.masks[(self.ranks[(i / 64) as usize] + (w & (bit - 1)).count_ones()) as usize])
    }
}

/// A database's node layers, every file's header and index checked.
#[derive(Debug)]
pub struct NodeLayers {
    dir: PathBuf,
    layers: Vec<LayerFile>,
}

impl NodeLayers {
    /// Open the node layers in database directory `db` of the search of `depths` layers
    /// from a start in phase `start` over `positions` positions, immediate wins expanded
    /// or not (`expand_checkmates`), as its first-depth file's summary says: `Ok(None)`
    /// when there are none. Every layer of that search must be there, of the same search
    /// (board, start, checkmates, positions), and no other.
    pub fn open(
        db: &Path,
        geom: &Geometry,
        depths: u32,
        start: Phase,
        expand_checkmates: bool,
        positions: u64,
    ) -> Result<Option<NodeLayers>, Error> {
        let dir = db.join(DIR_NAME);
        if !dir.is_dir() {
            return Ok(None);
        }
        let mut layers = Vec::with_capacity(depths as usize);
        for d in 0..depths {
            let Some(f) = LayerFile::open(&dir, geom, d, (start, expand_checkmates), positions)? else {
                return Err(corrupt(
                    &dir,
                    format!("no file of layer {d}, though the stored search has {depths} layers"),
                ));
            };
            layers.push(f);
        }
        for e in std::fs::read_dir(&dir).map_err(io(&dir))? {
            let name = e.map_err(io(&dir))?.file_name().to_string_lossy().into_owned();
            if depth_of_name(&name).is_none_or(|d| d >= depths) {
                return Err(corrupt(
                    &dir,
                    format!("{name} is not a layer of the stored search ({depths} layers: layer-000.zst..)"),
                ));
            }
        }
        Ok(Some(NodeLayers { dir, layers }))
    }

    /// The directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Check the checksum of every block of every layer: each file's path and length,
    /// or the damage found in it.
    pub fn check(&self) -> Vec<(PathBuf, Result<u64, Error>)> {
        self.layers.iter().map(|l| (l.path.clone(), l.check())).collect()
    }

    /// Layers (depths 0..).
    pub fn depths(&self) -> usize {
        self.layers.len()
    }

    /// Bytes of all the files.
    pub fn bytes(&self) -> u64 {
        self.layers.iter().map(|l| l.bytes).sum()
    }

    /// Positions that gained a node in layer `depth`.
    pub fn touched(&self, depth: usize) -> u64 {
        self.layers[depth].touched
    }

    /// Block `b` of layer `depth`, decoded (`None`: no position of it gained a node then).
    pub fn block(&self, depth: usize, b: u64) -> Result<Option<LayerBlock>, Error> {
        self.layers[depth].block(b)
    }

    /// The node depths of position `offset` of block `blocks`' positions, whose first
    /// node is at depth `first`, from that block of every layer (`blocks[d]`, `None` for
    /// a layer where none of the block's positions gained a node): field `j` the depth of
    /// node `j`, `None` when it was not reached. An error when the layer of `first` does
    /// not give the position a node (the layers and the first depths disagree).
    pub fn node_depths(
        &self,
        blocks: &[Option<LayerBlock>],
        offset: u64,
        first: u32,
    ) -> Result<[Option<u32>; 25], Error> {
        let mut out = [None; 25];
        let mut seen = 0u32;
        for (d, blk) in blocks.iter().enumerate().skip(first as usize) {
            let Some(m) = blk.as_ref().and_then(|b| b.mask(offset)) else {
                if d == first as usize {
                    return Err(corrupt(
                        &self.dir,
                        format!("a position first reached at depth {first} has no node in that layer's file"),
                    ));
                }
                continue;
            };
            let mut new = m & !seen;
            while new != 0 {
                out[new.trailing_zeros() as usize] = Some(d as u32);
                new &= new - 1;
            }
            seen |= m;
        }
        Ok(out)
    }
}

/// Whether directory `dir` holds the files of layers `0..touched.len()` of a search of
/// `geom` from the start of phase `start` with `expand_checkmates` over `positions`,
/// layer `d` with `touched[d]` positions (what a search resumed from its checkpoint
/// needs to go on keeping its layers). Damaged or missing files are `false`.
pub fn holds_layers(
    dir: &Path,
    geom: &Geometry,
    (start, expand_checkmates): (Phase, bool),
    positions: u64,
    touched: &[u64],
) -> bool {
    touched.iter().enumerate().all(|(d, &t)| {
        let search = (start, expand_checkmates);
        matches!(LayerFile::open(dir, geom, d as u32, search, positions), Ok(Some(f)) if f.touched == t)
    })
}

/// Remove the node layers of database directory `db` (its first-depth file is being
/// replaced, and they would describe another search).
pub fn remove(db: &Path) -> Result<(), Error> {
    let dir = db.join(DIR_NAME);
    if dir.exists() {
        fault_point("remove").map_err(io(&dir))?;
        std::fs::remove_dir_all(&dir).map_err(io(&dir))?;
        sync_dir(db)?;
    }
    Ok(())
}

/// Make the node layers of a finished search of `depths` layers, in `partial` (its
/// [`PARTIAL_DIR_NAME`] directory), those of database directory `db`: files of deeper
/// layers (left by a run that went further before it was resumed with a smaller maximum
/// depth) are removed, then the directory is renamed into place.
pub fn commit(partial: &Path, db: &Path, depths: u32) -> Result<PathBuf, Error> {
    for e in std::fs::read_dir(partial).map_err(io(partial))? {
        let e = e.map_err(io(partial))?;
        let name = e.file_name().to_string_lossy().into_owned();
        if depth_of_name(&name).is_none_or(|d| d >= depths) {
            std::fs::remove_file(e.path()).map_err(io(&e.path()))?;
        }
    }
    remove(db)?;
    let to = db.join(DIR_NAME);
    rename_durably(partial, &to)?;
    Ok(to)
}
