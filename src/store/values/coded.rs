//! Value files v4 and v5: blocks coded with the phase's context model
//! ([`crate::store::value_model`]), which the file stores after its header. A v4 block
//! is one full stream; a v5 block holds several lean streams, the lengths of all but
//! the last first (LEB128). Here: the coded blocks' index as kept in memory and read
//! back from a file with its model, and the streams found in a block; the writer is
//! `write.rs`, the blocks are read by `read.rs`.

use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::Path;

use super::{ENTRY_LEN_V4, HEADER_LEN};
use crate::error::{Error, FileKind, checksum_mismatch, corrupt, io};
use crate::file::{checksum, le_u32, le_u64};
use crate::store::value_model::Model;

/// Largest decoded v4 model a reader accepts (a bound on what a file may ask it to
/// allocate; a whole-game phase's is about 1.5 MB).
const MAX_MODEL: usize = 1 << 26;

/// The context distance of a phase's model on a board of `side`, `pieces` on it: the
/// squares a hole can take.
pub(super) fn model_distance(side: u32, pieces: u32) -> usize {
    (side * side).saturating_sub(pieces).max(1) as usize
}

/// A LEB128 number of at most 3 bytes (a stream is shorter than 2^16 bytes) from the
/// start of `bytes`, and the bytes it took.
fn read_varint(bytes: &[u8]) -> Option<(usize, usize)> {
    let mut v = 0usize;
    for (k, &b) in bytes.iter().take(3).enumerate() {
        v |= ((b & 0x7f) as usize) << (7 * k);
        if b & 0x80 == 0 {
            return Some((v, k + 1));
        }
    }
    None
}

/// The blocks of a v4 or v5 file: its index entries as read (6 bytes a block) and where
/// every [`STRIDE`]-th block starts, about 6.5 bytes of memory a block in all. Opening
/// the whole game's index this way takes a third of the time and memory it took to
/// unpack it into arrays of ends and checksums (8 bytes a block), for a few additions a
/// read. A v5 block holds `streams` streams; the file's readers see each stream as a
/// block of its own (its positions, its cache entry), stream `b` in stored block `b /
/// streams`.
pub(super) struct CodedBlocks {
    pub(super) model: Model,
    /// The index: block `b`'s coded length (u16) and checksum (u32) at `6 * b`.
    pub(super) index: Vec<u8>,
    /// Where block `STRIDE * k` starts in the file, for each `k`.
    pub(super) starts: Vec<u64>,
    /// Streams per stored block (1 in v4).
    pub(super) streams: usize,
    /// The streams are lean (v5), not full (v4) ([`Model::encode_lean`]).
    pub(super) lean: bool,
}

/// Blocks between two entries of [`CodedBlocks::starts`].
const STRIDE: usize = 16;

impl CodedBlocks {
    /// Block `b`'s coded length.
    #[inline]
    pub(super) fn len(&self, b: usize) -> u64 {
        u16::from_le_bytes([self.index[ENTRY_LEN_V4 * b], self.index[ENTRY_LEN_V4 * b + 1]]) as u64
    }

    /// Block `b`'s checksum: the low 32 bits of the XXH3-64 of its bytes.
    #[inline]
    pub(super) fn sum(&self, b: usize) -> u32 {
        le_u32(&self.index, ENTRY_LEN_V4 * b + 2)
    }

    /// Block `b`'s bytes: `start..end` in the file, from the start of block `b - b %
    /// STRIDE` and the lengths of the blocks from there to `b`.
    pub(super) fn span(&self, b: usize) -> (u64, u64) {
        let first = b - b % STRIDE;
        let start = self.starts[b / STRIDE] + (first..b).map(|k| self.len(k)).sum::<u64>();
        (start, start + self.len(b))
    }

    /// Ask the processor for the memory [`CodedBlocks::span`] of block `b` reads (its
    /// entry of `starts` and the index entries of blocks `b - b % STRIDE ..= b`), without
    /// waiting for it.
    pub(super) fn prefetch_span(&self, b: usize) {
        let first = b - b % STRIDE;
        crate::sys::prefetch(&self.starts[b / STRIDE]);
        crate::sys::prefetch(&self.index[ENTRY_LEN_V4 * first]);
        crate::sys::prefetch(&self.index[ENTRY_LEN_V4 * (b + 1) - 1]);
    }

    /// Stored blocks.
    pub(super) fn stored(&self) -> usize {
        self.index.len() / ENTRY_LEN_V4
    }

    /// Stream `k` of the `n` streams of a v5 block's `bytes`: the lengths of all but the
    /// last (LEB128) come first, then the streams in order.
    pub(super) fn stream(bytes: &[u8], n: usize, k: usize) -> Result<&[u8], &'static str> {
        let bad = "its streams do not tile it";
        let (mut at, mut before, mut len) = (0, 0, 0);
        for j in 0..n - 1 {
            let (l, used) = read_varint(&bytes[at.min(bytes.len())..]).ok_or(bad)?;
            at += used;
            if j < k {
                before += l;
            } else if j == k {
                len = l;
            }
        }
        let start = at + before;
        let end = if k == n - 1 { bytes.len() } else { start + len };
        if start >= end || end > bytes.len() {
            return Err(bad);
        }
        Ok(&bytes[start..end])
    }
}

/// A v4 file's model (checked) and block index (`index`, its checksum checked).
pub(super) fn coded_blocks(
    path: &Path,
    file: &mut File,
    h: &[u8],
    index: Vec<u8>,
    index_at: u64,
) -> Result<CodedBlocks, Error> {
    let model_len = le_u32(h, 60) as u64;
    let blocks_at = HEADER_LEN as u64 + model_len + 8;
    if blocks_at > index_at {
        return Err(corrupt(path, "the value model does not fit before the block index"));
    }
    let mut bytes = vec![0u8; model_len as usize + 8];
    file.seek(SeekFrom::Start(HEADER_LEN as u64)).map_err(io(path))?;
    file.read_exact(&mut bytes).map_err(io(path))?;
    let (body, sum) = bytes.split_at(model_len as usize);
    if checksum(body) != le_u64(sum, 0) {
        let at = Some((HEADER_LEN as u64, blocks_at));
        return Err(checksum_mismatch(path, FileKind::Values, "value model", None, at));
    }
    let bad = || corrupt(path, "the value model is not a valid zstd frame of at most 64 MiB");
    let size = zstd::zstd_safe::get_frame_content_size(body).ok().flatten().filter(|&n| n <= MAX_MODEL as u64);
    let body = zstd::bulk::decompress(body, size.ok_or_else(bad)? as usize).map_err(|_| bad())?;
    let model = Model::from_bytes(&body).map_err(|why| corrupt(path, why))?;
    if model.distance() != model_distance(h[12] as u32, h[14] as u32 + h[15] as u32) {
        return Err(corrupt(path, "the value model's context distance is not the phase's"));
    }
    let n = index.len() / ENTRY_LEN_V4;
    let mut starts = Vec::with_capacity(n.div_ceil(STRIDE));
    let mut at = blocks_at;
    for (b, e) in index.chunks_exact(ENTRY_LEN_V4).enumerate() {
        if b.is_multiple_of(STRIDE) {
            starts.push(at);
        }
        let len = u16::from_le_bytes([e[0], e[1]]) as u64;
        at += len;
        if len == 0 || (len < 4 && le_u32(h, 8) == 4) {
            return Err(corrupt(path, format!("block {b}: index entry out of place")));
        }
    }
    if at != index_at {
        return Err(corrupt(path, "the blocks do not fill the space before the block index"));
    }
    Ok(CodedBlocks { model, index, starts, streams: 1, lean: false })
}
