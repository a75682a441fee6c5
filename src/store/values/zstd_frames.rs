//! Value files v1 to v3: each block a zstd frame, with one block index entry (offset,
//! compressed and decoded length, xxh3 checksum). The versions differ only in their
//! header: v1's is 64 bytes and has no flags, v2 adds the flag for elided losses, v3 the
//! one for filled immediate wins. Here: the index entry, and the index read back into
//! entries; the writer (v3) is `write.rs`, the frames are read by `read.rs`.

use std::path::Path;

use super::ENTRY_LEN;
use crate::error::{Error, corrupt};
use crate::file::{le_u32, le_u64};

/// One block index entry.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Entry {
    pub(super) offset: u64,
    pub(super) len: u32,
    pub(super) decoded: u32,
    pub(super) sum: u64,
}

/// The block index of a v1-v3 file, `index` (its checksum checked), read into its
/// entries, each checked: the blocks lie one after another from the end of the
/// `header_len`-byte header to the index at `index_at`, and each decodes to 3 to 5 bytes
/// a position of the `count` positions in `blocks` blocks of `block`.
pub(super) fn zstd_entries(
    path: &Path,
    index: &[u8],
    (count, block, blocks): (u64, u32, u32),
    header_len: usize,
    index_at: u64,
) -> Result<Vec<Entry>, Error> {
    let mut entries = Vec::with_capacity(blocks as usize);
    let mut at = header_len as u64;
    for (b, e) in index.chunks_exact(ENTRY_LEN).enumerate() {
        let e = Entry { offset: le_u64(e, 0), len: le_u32(e, 8), decoded: le_u32(e, 12), sum: le_u64(e, 16) };
        let m = (count - b as u64 * block as u64).min(block as u64);
        if e.offset != at || (e.decoded as u64) < 3 * m || e.decoded as u64 > 5 * m {
            return Err(corrupt(path, format!("block {b}: index entry out of place")));
        }
        at += e.len as u64;
        entries.push(e);
    }
    if at != index_at {
        return Err(corrupt(path, "the blocks do not fill the space before the block index"));
    }
    Ok(entries)
}
