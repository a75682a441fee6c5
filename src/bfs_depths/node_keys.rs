//! BFS files: the depth of every node a breadth-first search from the initial position
//! reached, stored beside a database so that `query` can say how far a node is from the
//! start and `export` can write the published BFS files.
//!
//! The byte layout is normative and documented in `schema/FORMAT.md` ("BFS file v1"). In
//! short: an 80-byte header, blocks of node keys in ascending order (the key is
//! `code << 5 | j`, see [`crate::game::node`]), each block a zstd frame holding its first
//! key, the LEB128 differences of the others and one depth byte per key, then a block
//! index (first key, offset, length, key count, xxh3 checksum per block) followed by the
//! node count of every depth.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use crate::error::{Error, FileKind, checksum_mismatch, corrupt, io};
use crate::file::{
    IndexAt, IndexedOut, checksum, decompress, le_u32, le_u64, open_with_header, prefix, read_index, read_summed,
    remove_on_error, rename_durably, temp_name,
};
use crate::game::node::Convention;
use crate::game::{Geometry, Phase};

/// The first 8 bytes of a BFS file.
pub const MAGIC: [u8; 8] = *b"OSTLEBFS";
/// The format version this code writes and reads.
pub const VERSION: u32 = 1;
/// Header size in bytes.
pub const HEADER_LEN: usize = 80;
/// Size of one block index entry in bytes.
pub const ENTRY_LEN: usize = 32;
/// Keys per block.
pub const BLOCK_KEYS: u32 = 1 << 16;

/// What a BFS file says about its search.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct BfsSummary {
    /// The expansion convention.
    pub convention: &'static str,
    /// Whether immediate-win positions were expanded (the published run did).
    pub expand_checkmates: bool,
    /// Every reachable node was found (the search ran out of nodes, not of depth).
    pub complete: bool,
    /// New nodes per depth, from depth 0.
    pub layers: Vec<u64>,
    /// Nodes stored.
    pub nodes: u64,
}

#[derive(Clone, Copy, Debug)]
struct Entry {
    first: u64,
    offset: u64,
    len: u32,
    count: u32,
    sum: u64,
}

fn encode(keys: &[(u64, u8)]) -> Vec<u8> {
    let mut out = Vec::with_capacity(keys.len() * 3 + 8);
    if let Some(&(first, _)) = keys.first() {
        out.extend_from_slice(&first.to_le_bytes());
        let mut last = first;
        for &(k, _) in &keys[1..] {
            let mut d = k - last;
            last = k;
            loop {
                let b = (d & 0x7f) as u8;
                d >>= 7;
                if d == 0 {
                    out.push(b);
                    break;
                }
                out.push(b | 0x80);
            }
        }
    }
    out.extend(keys.iter().map(|&(_, d)| d));
    out
}

fn decode(bytes: &[u8], count: usize) -> Option<Vec<(u64, u8)>> {
    if count == 0 {
        return bytes.is_empty().then(Vec::new);
    }
    let depths = bytes.get(bytes.len().checked_sub(count)?..)?;
    let body = &bytes[..bytes.len() - count];
    let mut keys = Vec::with_capacity(count);
    let mut k = u64::from_le_bytes(body.get(..8)?.try_into().ok()?);
    keys.push((k, depths[0]));
    let mut at = 8;
    for &depth in &depths[1..] {
        let mut d = 0u64;
        let mut shift = 0;
        loop {
            let b = *body.get(at)?;
            at += 1;
            if shift > 63 {
                return None;
            }
            d |= ((b & 0x7f) as u64) << shift;
            shift += 7;
            if b & 0x80 == 0 {
                break;
            }
        }
        if d == 0 {
            return None;
        }
        k = k.checked_add(d)?;
        keys.push((k, depth));
    }
    (at == body.len()).then_some(keys)
}

/// The name of the BFS file of a convention in a database directory:
/// `bfs-published.zst` or `bfs-strict.zst`.
pub fn file_name(convention: Convention) -> String {
    format!("bfs-{}.zst", convention.name())
}

/// Write the layers of a search (`layers[d]`: the sorted keys first reached at depth
/// `d`) into `dir`, atomically. Returns the file's length. The caller holds the
/// database's writer lock.
pub fn write(
    dir: &Path,
    geom: &Geometry,
    convention: Convention,
    expand_checkmates: bool,
    complete: bool,
    layers: &[&[u64]],
) -> Result<u64, Error> {
    if layers.len() > 256 {
        return Err(Error::InvalidArgument("a BFS file holds at most 256 depths".into()));
    }
    std::fs::create_dir_all(dir).map_err(io(dir))?;
    let path = dir.join(file_name(convention));
    let tmp = temp_name(&path);
    let r = (|| -> Result<u64, Error> {
        let mut out = IndexedOut::create(&tmp, HEADER_LEN)?;
        // Merge the sorted layers into one ascending run of (key, depth).
        let mut at = vec![0usize; layers.len()];
        let mut heap: std::collections::BinaryHeap<std::cmp::Reverse<(u64, usize)>> = layers
            .iter()
            .enumerate()
            .filter(|(_, l)| !l.is_empty())
            .map(|(d, l)| std::cmp::Reverse((l[0], d)))
            .collect();
        let mut entries = Vec::new();
        let mut block: Vec<(u64, u8)> = Vec::with_capacity(BLOCK_KEYS as usize);
        let mut last: Option<u64> = None;
        let mut flush = |block: &mut Vec<(u64, u8)>, out: &mut IndexedOut| -> Result<(), Error> {
            if block.is_empty() {
                return Ok(());
            }
            let z = zstd::bulk::compress(&encode(block), 19).map_err(io(&tmp))?;
            let offset = out.append(&z)?;
            entries.push(Entry {
                first: block[0].0,
                offset,
                len: z.len() as u32,
                count: block.len() as u32,
                sum: checksum(&z),
            });
            block.clear();
            Ok(())
        };
        while let Some(std::cmp::Reverse((k, d))) = heap.pop() {
            if last.is_some_and(|l| l >= k) {
                return Err(Error::InvalidArgument(format!("BFS key {k} is repeated or out of order")));
            }
            last = Some(k);
            block.push((k, d as u8));
            at[d] += 1;
            if let Some(&next) = layers[d].get(at[d]) {
                heap.push(std::cmp::Reverse((next, d)));
            }
            if block.len() == BLOCK_KEYS as usize {
                flush(&mut block, &mut out)?;
            }
        }
        flush(&mut block, &mut out)?;
        let mut index = Vec::with_capacity(entries.len() * ENTRY_LEN + layers.len() * 8);
        for e in &entries {
            index.extend_from_slice(&e.first.to_le_bytes());
            index.extend_from_slice(&e.offset.to_le_bytes());
            index.extend_from_slice(&e.len.to_le_bytes());
            index.extend_from_slice(&e.count.to_le_bytes());
            index.extend_from_slice(&e.sum.to_le_bytes());
        }
        for l in layers {
            index.extend_from_slice(&(l.len() as u64).to_le_bytes());
        }
        let nodes: u64 = layers.iter().map(|l| l.len() as u64).sum();
        out.finish(&index, |tail| {
            let mut h = [0u8; HEADER_LEN];
            let start = geom.start_pieces();
            h[0..16].copy_from_slice(&prefix(&MAGIC, VERSION, geom, Phase::new(start, start)));
            h[16] = match convention {
                Convention::Published => 0,
                Convention::Strict => 1,
            };
            h[17] = expand_checkmates as u8;
            h[18] = complete as u8;
            h[20..24].copy_from_slice(&(layers.len() as u32).to_le_bytes());
            h[24..32].copy_from_slice(&nodes.to_le_bytes());
            h[32..36].copy_from_slice(&BLOCK_KEYS.to_le_bytes());
            h[36..40].copy_from_slice(&(entries.len() as u32).to_le_bytes());
            h[40..48].copy_from_slice(&tail.index_at.to_le_bytes());
            h[48..56].copy_from_slice(&tail.len.to_le_bytes());
            h[56..64].copy_from_slice(&tail.index_sum.to_le_bytes());
            let sum = checksum(&h[..72]);
            h[72..80].copy_from_slice(&sum.to_le_bytes());
            h
        })
    })();
    let len = remove_on_error(&tmp, r)?;
    rename_durably(&tmp, &path)?;
    Ok(len)
}

/// A decoded block: (key, depth) in ascending key order.
type Block = Arc<Vec<(u64, u8)>>;

/// An open BFS file: header and index checked, blocks read on demand (the last one kept).
pub struct BfsFile {
    path: PathBuf,
    file: File,
    summary: BfsSummary,
    entries: Vec<Entry>,
    bytes: u64,
    cache: Mutex<Option<(usize, Block)>>,
}

impl std::fmt::Debug for BfsFile {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BfsFile").field("path", &self.path).field("summary", &self.summary).finish()
    }
}

impl BfsFile {
    /// Open the BFS file of `convention` in `dir`: `Ok(None)` when there is none.
    pub fn open(dir: &Path, geom: &Geometry, convention: Convention) -> Result<Option<BfsFile>, Error> {
        let path = dir.join(file_name(convention));
        let Some((mut file, h, len)) = open_with_header::<HEADER_LEN>(&path, &MAGIC, VERSION, FileKind::Bfs, geom)?
        else {
            return Ok(None);
        };
        let want = match convention {
            Convention::Published => 0,
            Convention::Strict => 1,
        };
        if h[16] != want || h[17] > 1 || h[18] > 1 {
            return Err(corrupt(&path, "the header's convention or flags are not what its name says"));
        }
        let depths = le_u32(&h, 20) as u64;
        let nodes = le_u64(&h, 24);
        let blocks = le_u32(&h, 36) as u64;
        let index_at = le_u64(&h, 40);
        if depths > 256 {
            return Err(corrupt(&path, format!("{depths} depths, more than the 256 a BFS file holds")));
        }
        let index = read_index(
            &mut file,
            &path,
            FileKind::Bfs,
            len,
            IndexAt::in_80_byte_header(&h, blocks * ENTRY_LEN as u64 + depths * 8),
        )?;
        let mut entries = Vec::with_capacity(blocks as usize);
        let mut at = HEADER_LEN as u64;
        let mut total = 0u64;
        for (b, e) in index[..(blocks as usize) * ENTRY_LEN].chunks_exact(ENTRY_LEN).enumerate() {
            let e = Entry {
                first: le_u64(e, 0),
                offset: le_u64(e, 8),
                len: le_u32(e, 16),
                count: le_u32(e, 20),
                sum: le_u64(e, 24),
            };
            let ordered = entries.last().is_none_or(|p: &Entry| p.first < e.first);
            if e.offset != at || e.count == 0 || e.count > BLOCK_KEYS || !ordered {
                return Err(corrupt(&path, format!("block {b}: index entry out of place")));
            }
            at += e.len as u64;
            total += e.count as u64;
            entries.push(e);
        }
        let layers: Vec<u64> = index[(blocks as usize) * ENTRY_LEN..]
            .chunks_exact(8)
            .map(|c| u64::from_le_bytes(c.try_into().unwrap()))
            .collect();
        if at != index_at || total != nodes || layers.iter().sum::<u64>() != nodes {
            return Err(corrupt(&path, "the blocks, the node count and the layer counts disagree"));
        }
        let summary = BfsSummary {
            convention: convention.name(),
            expand_checkmates: h[17] == 1,
            complete: h[18] == 1,
            layers,
            nodes,
        };
        Ok(Some(BfsFile { path, file, summary, entries, bytes: len, cache: Mutex::new(None) }))
    }

    /// What the file holds.
    pub fn summary(&self) -> &BfsSummary {
        &self.summary
    }

    /// The deepest stored depth (`None` for an empty search).
    pub fn max_depth(&self) -> Option<u32> {
        self.summary.layers.len().checked_sub(1).map(|d| d as u32)
    }

    /// The file's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The file's size in bytes.
    pub fn file_len(&self) -> u64 {
        self.bytes
    }

    /// The checksum of block `b` (index entry `e`) does not match.
    fn block_mismatch(&self, b: usize, e: &Entry) -> Error {
        let bytes = Some((e.offset, e.offset + e.len as u64));
        checksum_mismatch(&self.path, FileKind::Bfs, "keys and depths", Some(b as u64), bytes)
    }

    /// Forget the decoded block, so that the next read is cold.
    pub fn drop_cache(&self) {
        *self.cache.lock().unwrap_or_else(|p| p.into_inner()) = None;
    }

    fn block(&self, b: usize) -> Result<Vec<(u64, u8)>, Error> {
        let e = self.entries[b];
        let mut frame = vec![0u8; e.len as usize];
        let intact = read_summed(&self.file, &self.path, e.offset, &mut frame, e.sum)?;
        let bad = |why: &str| {
            corrupt(&self.path, format!("block {b} (bytes {}..{}): {why}", e.offset, e.offset + e.len as u64))
        };
        if !intact {
            return Err(self.block_mismatch(b, &e));
        }
        let raw = decompress(&frame, e.count as usize * 11 + 8).map_err(|_| bad("not a valid zstd frame"))?;
        let keys = decode(&raw, e.count as usize).ok_or_else(|| bad("its keys do not decode"))?;
        let depths = self.summary.layers.len();
        if keys[0].0 != e.first || keys.iter().any(|&(_, d)| d as usize >= depths) {
            return Err(bad("its keys disagree with the block index"));
        }
        Ok(keys)
    }

    /// The depth of node `key` (`code << 5 | j`), or `None` when the search did not reach it.
    pub fn depth_of_key(&self, key: u64) -> Result<Option<u32>, Error> {
        let b = self.entries.partition_point(|e| e.first <= key);
        if b == 0 {
            return Ok(None);
        }
        let b = b - 1;
        let mut cache = self.cache.lock().unwrap_or_else(|p| p.into_inner());
        let keys = match cache.as_ref() {
            Some((cb, k)) if *cb == b => k.clone(),
            _ => {
                let k = Arc::new(self.block(b)?);
                *cache = Some((b, k.clone()));
                k
            }
        };
        Ok(keys.binary_search_by_key(&key, |&(k, _)| k).ok().map(|i| keys[i].1 as u32))
    }

    /// Every stored node in ascending key order, with its depth, block by block.
    pub fn for_each_block(&self, mut sink: impl FnMut(&[(u64, u8)]) -> Result<(), Error>) -> Result<(), Error> {
        for b in 0..self.entries.len() {
            sink(&self.block(b)?)?;
        }
        Ok(())
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_round_trip_and_reject_damage() {
        let keys: Vec<(u64, u8)> = (0..1000u64).map(|i| (i * i * 37 + 5, (i % 7) as u8)).collect();
        let enc = encode(&keys);
        assert_eq!(decode(&enc, keys.len()).unwrap(), keys);
        assert_eq!(decode(&encode(&[]), 0).unwrap(), vec![]);
        assert!(decode(&enc[..enc.len() - 1], keys.len()).is_none());
        assert!(decode(&enc, keys.len() + 1).is_none());
    }

    #[test]
    fn files_round_trip_and_answer_every_key() {
        let g = Geometry::standard();
        let dir = std::env::temp_dir().join(format!("ostledb-bfsfile-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        // Three disjoint sorted layers, the middle one larger than a block.
        let l0 = vec![3000u64];
        let l1: Vec<u64> = (0..70_000u64).map(|i| i * 3 + 1).collect();
        let l2: Vec<u64> = (0..500u64).map(|i| i * 300 + 2).collect();
        write(&dir, g, Convention::Strict, true, false, &[&l0, &l1, &l2]).unwrap();
        let f = BfsFile::open(&dir, g, Convention::Strict).unwrap().unwrap();
        assert!(BfsFile::open(&dir, g, Convention::Published).unwrap().is_none());
        assert_eq!(f.summary().layers, vec![1, 70_000, 500]);
        assert_eq!(f.max_depth(), Some(2));
        assert_eq!(f.depth_of_key(3000).unwrap(), Some(0));
        for (d, l) in [(1u32, &l1), (2, &l2)] {
            for &k in l.iter().step_by(37) {
                assert_eq!(f.depth_of_key(k).unwrap(), Some(d), "key {k}");
            }
        }
        assert_eq!(f.depth_of_key(0).unwrap(), None);
        assert_eq!(f.depth_of_key(3).unwrap(), None);
        assert_eq!(f.depth_of_key(u64::MAX).unwrap(), None);
        let mut n = 0;
        f.for_each_block(|b| {
            n += b.len();
            Ok(())
        })
        .unwrap();
        assert_eq!(n, 70_501);
        assert_eq!(f.check().unwrap(), f.file_len());
        // Out-of-order or shared keys are refused.
        assert!(write(&dir, g, Convention::Strict, true, false, &[&[5, 4]]).is_err());
        assert!(write(&dir, g, Convention::Strict, true, false, &[&[5], &[5]]).is_err());
        let _ = std::fs::remove_dir_all(&dir);
    }
}
