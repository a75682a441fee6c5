//! Value files: the values of one phase in compressed blocks of consecutive positions,
//! with a block index, so that one lookup decodes one small block.
//!
//! The byte layout is normative and documented in `schema/FORMAT.md` ("Value file").
//! **v4** codes blocks of 256 positions (1,024 in a phase under [`LARGE_PHASE`]
//! positions) with a static context model of the whole phase, stored in the file
//! (`store::value_model`): the whole game is 4.6% smaller than in v3, and a block is
//! decoded only as far as a read needs (about 19 ns a position), so cold queries are
//! about 3x faster. **v5** (the default) codes with the same model, but a block holds
//! several *streams* (8 of 128 positions from [`HUGE_PHASE`], 16 of 64 from
//! [`LARGE_PHASE`], 16 of 256 in a smaller phase),
//! each coded on its own and leanly (no starting state written), behind one index
//! entry: a read decodes one stream, half to a quarter of what v4 decodes, and the
//! shared index entry and lean streams make the file smaller. Readers see each stream
//! as a block. **v1 to v3** (v3 is written with `--value-format 3`, or
//! when loss distances are kept) hold zstd frames: a 72-byte header (64 in v1), the blocks, then the block index
//! (offset, compressed and decoded length, xxh3 checksum of each block). Either way a
//! block of `m` positions decodes to
//!
//! ```text
//! m bytes   base value, low byte      (value code, see FORMAT.md)
//! m bytes   base value, high byte
//! m bytes   special move s (0 = none)
//! e bytes   special value, low byte   (one per position with s != 0, in order)
//! e bytes   special value, high byte
//! ```
//!
//! Planes of like bytes compress far better than interleaved records: the high bytes are
//! almost all zero and most positions have no special move.
//!
//! A v3 file may also leave **immediate wins as "don't care"** (header flag
//! [`FLAG_FILLED_WINS`]): a position whose side to move can remove the opponent's
//! last-but-one piece is won in 1 ply by the rules alone (52.6% of (4,4)), so its stored
//! record is not read: the writer fills it with whatever compresses best (the base value
//! of the position before it, no special move) and the reader answers `Win(1)` for it
//! from the position ([`is_immediate_win`]). That takes (4,4) from 1.55 to 1.47 bits
//! per position at the same block size and level.
//!
//! A v2 file may **elide loss distances** (header flag [`FLAG_ELIDED_LOSSES`], what
//! `pack` writes by default): every loss is stored as code 1 ([`ELIDED_LOSS`](crate::record::ELIDED_LOSS)). The
//! distance is not lost: a lost node's children are all won, with exact distances, and
//! its distance is one more than the largest of theirs, so one ply of search gives it
//! back (`probe::resolve_record`). That halves the entropy of the values: (4,4)
//! goes from 2.5 to about 1.5 bits per position. Readers of single positions resolve
//! on the fly; readers of whole phases resolve a phase group at once
//! (`store::load_phase`).

use std::cell::RefCell;
use std::fs::File;
use std::io::{BufReader, Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use rayon::prelude::*;

use crate::error::{Error, FileKind, checksum_mismatch, corrupt, io};
use crate::game::moves::is_immediate_win;
use crate::game::{Geometry, Phase, Position};
use crate::index::PhaseIndex;
use crate::index::PlayerSets;
use crate::record::value::win;
use crate::record::{Packed, PhaseValues, Val};
use crate::store::cache::{BlockCache, Decoded, decode_block, default_budget, encode_block};
use crate::store::file::{
    IndexAt, IndexedOut, check_header, checksum, decompress, ends_with_checksum, fault_point, header_version, le_u32,
    le_u64, open_regular, prefix, read_index, remove_on_error, rename_durably, temp_name,
};
use crate::store::value_model::{Counts, Model};

/// The first 8 bytes of a value file.
pub const MAGIC: [u8; 8] = *b"OSTLEVZB";
/// The newest format version this code writes: v5, which it writes unless v4 or v3 is
/// asked for ([`DEFAULT_FORMAT`], [`WriteOptions::format`]; v3 also when loss distances
/// are kept).
pub const VERSION: u32 = 5;
/// The format versions this code reads.
pub const VERSIONS: std::ops::RangeInclusive<u32> = 1..=5;
/// Header size in bytes (versions 2 to 5).
pub const HEADER_LEN: usize = 72;
/// Header size in bytes of a version 1 file.
pub const HEADER_LEN_V1: usize = 64;
/// Header flag (v2, bit 0 of the flags word): every loss is stored as [`ELIDED_LOSS`](crate::record::ELIDED_LOSS).
pub const FLAG_ELIDED_LOSSES: u32 = 1;
/// Header flag (v3, bit 1 of the flags word): the records of immediate wins are not
/// stored values but filler; a reader answers `Win(1)` for them ([`is_immediate_win`]).
pub const FLAG_FILLED_WINS: u32 = 2;
/// Size of one block index entry in bytes (v1 to v3).
pub const ENTRY_LEN: usize = 24;
/// Size of one block index entry in bytes (v4: the coded length, u16, and the low 32
/// bits of the XXH3-64 of the block's bytes).
pub const ENTRY_LEN_V4: usize = 6;
/// Positions per block of v3 unless asked otherwise: half the 65,536 of v1 and v2, so a
/// cold probe decodes half as much, for 2% more bytes (docs/measurements.md, "Value blocks").
pub const DEFAULT_BLOCK: u32 = 1 << 15;
/// Positions per block of v4 unless asked otherwise, in a phase of at least
/// [`LARGE_PHASE`] positions (docs/measurements.md, "Value blocks"): a cold read decodes a
/// quarter of a block on average, and the large phases are where cold queries read most.
pub const DEFAULT_BLOCK_V4: u32 = 1 << 8;
/// Positions per block of v4 unless asked otherwise, in a smaller phase ((4,4) on the
/// 5x5 board): it stays within 3.4% of v2's size, where 256 would cost it 19%, and its
/// cold queries read a third as many blocks as the larger phases'.
pub const DEFAULT_BLOCK_V4_SMALL: u32 = 1 << 10;
/// Phases of at least this many positions get [`DEFAULT_BLOCK_V4`].
pub const LARGE_PHASE: u64 = 1 << 28;

/// Positions per block of a `count`-position phase's value file of version `format`
/// unless asked otherwise.
pub fn default_block(format: u32, count: u64) -> u32 {
    match format {
        4 if count >= LARGE_PHASE => DEFAULT_BLOCK_V4,
        4 => DEFAULT_BLOCK_V4_SMALL,
        5 if count >= HUGE_PHASE => DEFAULT_STREAM_V5,
        5 if count >= LARGE_PHASE => DEFAULT_STREAM_V5_LARGE,
        5 => DEFAULT_STREAM_V5_SMALL,
        _ => DEFAULT_BLOCK,
    }
}

/// Positions per stream of v5 unless asked otherwise, in a phase of at least
/// [`HUGE_PHASE`] positions ((5,5)): a cold read decodes 64 positions on average, half as
/// many as in v4 (docs/measurements.md, "Value blocks").
pub const DEFAULT_STREAM_V5: u32 = 1 << 7;
/// Phases of at least this many positions get [`DEFAULT_STREAM_V5`] in v5.
pub const HUGE_PHASE: u64 = 1 << 30;
/// Positions per stream of v5 unless asked otherwise, in a phase of [`LARGE_PHASE`] to
/// [`HUGE_PHASE`] positions ((5,4) and (4,5)): a cold read decodes 32 positions on
/// average; they are 9.4% larger than in streams of 128, which the whole game affords
/// ((5,5) keeps 128: 981,167,798 bytes in all against v2's 986,873,033; docs/measurements.md,
/// "Coded streams decoded where they are read").
pub const DEFAULT_STREAM_V5_LARGE: u32 = 1 << 6;
/// Positions per stream of v5 unless asked otherwise, in a smaller phase ((4,4) on the
/// 5x5 board): a quarter of what a read of v4's blocks of 1,024 decodes, within 4.3% of
/// v2's size.
pub const DEFAULT_STREAM_V5_SMALL: u32 = 1 << 8;

/// Streams per block of v5 unless asked otherwise, for a `count`-position phase: 8 of
/// 128 positions in the largest phases, 16 of 64 in large ones, 16 of 256 in smaller
/// ones. A read takes the whole block (a few hundred bytes) and checks its checksum, and
/// decodes one stream.
pub fn default_streams(count: u64) -> u32 {
    if count >= HUGE_PHASE { 8 } else { 16 }
}
/// The value file version written unless asked otherwise: v5 (v4's model, with several
/// lean streams a block, so a read decodes half to a quarter as much for fewer bytes;
/// docs/measurements.md, "Value blocks"). A file that keeps loss distances is v3.
pub const DEFAULT_FORMAT: u32 = 5;
/// Largest positions per block of v4 (of v5: per block, all its streams together): a
/// symbol codes in at most 15 bits, so a block of 8,192 positions (three symbols each at
/// most) fits the u16 length of its index entry.
pub const MAX_BLOCK_V4: u32 = 1 << 13;
/// Streams per block of v5 at most.
pub const MAX_STREAMS: u32 = 16;
/// Where a v5 header's flags hold the streams per block (bits 8..16).
const STREAMS_SHIFT: u32 = 8;
/// Largest decoded v4 model a reader accepts (a bound on what a file may ask it to
/// allocate; a whole-game phase's is about 1.5 MB).
const MAX_MODEL: usize = 1 << 26;
/// The zstd level unless asked otherwise: on (4,4), level 19 packs 4x slower than 15
/// for 2.5% fewer bytes (docs/measurements.md, "Value blocks").
pub const DEFAULT_LEVEL: i32 = 15;
/// The highest zstd level taken (`pack --level`, Python's `solve(level=...)`): zstd's own.
pub const MAX_LEVEL: i32 = 22;
/// zstd's minimum match length for the value blocks (at levels that take it; the level's
/// own is 3): measured on blocks of 32,768 at level 15, 5 compresses 18-22% faster and
/// decodes 7-13% faster for 0.2-0.7% more bytes (docs/measurements.md, "Value blocks").
/// Readers do not depend on it.
pub const MIN_MATCH: u32 = 5;
/// Largest positions per block a reader accepts (a bound on what a header may ask it
/// to allocate).
pub const MAX_BLOCK: u32 = 1 << 22;

/// The file name of a phase's values, e.g. `values-4-4.zst`.
pub fn file_name(phase: Phase) -> String {
    format!("values-{}-{}.zst", phase.player, phase.opponent)
}

/// How values are written.
#[derive(Clone, Copy, Debug)]
pub struct WriteOptions {
    /// The value file version: 5 (the default) or 4 (a context model per phase; losses
    /// elided only), or 3 (zstd frames; 4.9% larger on the whole game than v4).
    pub format: u32,
    /// Positions per block (v5: per stream); 0 for [`default_block`] of the format and
    /// the phase.
    pub block: u32,
    /// v5: streams per block (1..=[`MAX_STREAMS`]); 0 for [`default_streams`] of the
    /// phase. Must be 0 or 1 for v3 and v4.
    pub streams: u32,
    /// zstd compression level (1..=22; v3 only).
    pub level: i32,
    /// Store every loss as [`ELIDED_LOSS`](crate::record::ELIDED_LOSS) (its distance is found again by one ply of
    /// search): about 40% smaller on (4,4), whole-phase reads pay for a search.
    pub elide_losses: bool,
    /// The records of immediate wins handed to [`write()`] are filler
    /// ([`fill_immediate_wins`] made them), and the file says so ([`FLAG_FILLED_WINS`]).
    pub filled_wins: bool,
}

impl Default for WriteOptions {
    fn default() -> WriteOptions {
        WriteOptions {
            format: DEFAULT_FORMAT,
            block: 0,
            streams: 0,
            level: DEFAULT_LEVEL,
            elide_losses: true,
            filled_wins: true,
        }
    }
}

/// The record a reader answers for an immediate win: `Win(1)` for every node (a capture
/// is never a forbidden move, so no node of the position lacks it).
pub fn immediate_win_record() -> Packed {
    Packed::new(win(1), 0, 0)
}

/// Replace the record of every immediate win among `records` by filler that compresses
/// well: the base value of the closest record before it that is not an immediate win
/// (the first one after it for a leading run), with no special move.
///
/// An immediate win is told by its record, not its position: a position is won in
/// exactly 1 ply ([`immediate_win_record`]) exactly when its side to move can remove
/// the opponent's last-but-one piece ([`is_immediate_win`]), since nothing else ends
/// the game in one ply for the side to move, and such a move is never forbidden (the
/// brute-force solver checks this on every node of the 3x3 and 4x4 boards:
/// `oracle_decides_one_ply_ends_exactly_as_the_rules_say` in `tests/bruteforce.rs`).
pub fn fill_immediate_wins(records: &mut [u64]) {
    const CHUNK: usize = 1 << 16;
    let won = immediate_win_record().base();
    records.par_chunks_mut(CHUNK).for_each(|chunk| {
        let mut last = chunk.iter().map(|&r| Packed(r).base()).find(|&b| b != won).unwrap_or(0);
        for r in chunk.iter_mut() {
            let base = Packed(*r).base();
            if base == won {
                *r = Packed::new(last, 0, 0).0;
            } else {
                last = base;
            }
        }
    });
}

/// One block index entry.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Entry {
    offset: u64,
    len: u32,
    decoded: u32,
    sum: u64,
}

/// A v3 or v4 header (`model_len`: v4's model bytes, without their checksum).
fn header(
    geom: &Geometry,
    phase: Phase,
    s: &Summary,
    index_at: u64,
    index_sum: u64,
    model_len: u32,
) -> [u8; HEADER_LEN] {
    let (count, block, blocks, len) = (s.count, s.block, s.blocks, s.len);
    let flags = if s.elided_losses { FLAG_ELIDED_LOSSES } else { 0 }
        | if s.filled_wins { FLAG_FILLED_WINS } else { 0 }
        | if s.version >= 5 { s.streams << STREAMS_SHIFT } else { 0 };
    let mut h = [0u8; HEADER_LEN];
    h[0..16].copy_from_slice(&prefix(&MAGIC, s.version, geom, phase));
    h[16..24].copy_from_slice(&count.to_le_bytes());
    h[24..28].copy_from_slice(&block.to_le_bytes());
    h[28..32].copy_from_slice(&blocks.to_le_bytes());
    h[32..40].copy_from_slice(&index_at.to_le_bytes());
    h[40..48].copy_from_slice(&index_sum.to_le_bytes());
    h[48..56].copy_from_slice(&len.to_le_bytes());
    h[56..60].copy_from_slice(&flags.to_le_bytes());
    // 60..64: v4 and v5 the model's length; v3 reserved, zero
    h[60..64].copy_from_slice(&model_len.to_le_bytes());
    let sum = checksum(&h[..64]);
    h[64..72].copy_from_slice(&sum.to_le_bytes());
    h
}

/// What a value file holds, from its header.
#[derive(Clone, Copy, Debug)]
pub struct Summary {
    /// Format version.
    pub version: u32,
    /// Positions.
    pub count: u64,
    /// Positions per block (v5: per stream).
    pub block: u32,
    /// Blocks (v5: each of up to `streams` streams).
    pub blocks: u32,
    /// Streams per block: 1 before v5.
    pub streams: u32,
    /// File length in bytes.
    pub len: u64,
    /// Losses are stored without their distance.
    pub elided_losses: bool,
    /// Immediate wins are stored as filler.
    pub filled_wins: bool,
}

/// Where [`write()`] reads a phase's records: in index order, from the first, as often as
/// it needs (v4 reads them twice: once to build its model, once to code the blocks).
pub trait Records {
    /// Fill `buf` with the next records.
    fn read(&mut self, buf: &mut [u64]) -> Result<(), Error>;
    /// Start again from the first record.
    fn rewind(&mut self) -> Result<(), Error>;
}

/// Write the values of one phase, reading its `count` records from `records`. Blocks
/// are coded in parallel. The file is written under a temporary name, fsynced and
/// renamed. Returns what was written.
pub fn write(
    dir: &Path,
    geom: &Geometry,
    phase: Phase,
    count: u64,
    opts: WriteOptions,
    records: &mut dyn Records,
    progress: impl FnMut(u64),
) -> Result<Summary, Error> {
    let max = match opts.format {
        3 => MAX_BLOCK,
        4 | 5 => MAX_BLOCK_V4,
        v => return Err(Error::InvalidArgument(format!("value file v{v} cannot be written (only v3, v4 and v5)"))),
    };
    let streams = match (opts.format, opts.streams) {
        (5, 0) => default_streams(count),
        (5, s) if s <= MAX_STREAMS => s,
        (5, s) => return Err(Error::InvalidArgument(format!("{s} streams per block out of range 1..={MAX_STREAMS}"))),
        (_, 0 | 1) => 1,
        (v, _) => return Err(Error::InvalidArgument(format!("value file v{v} has one stream per block"))),
    };
    let opts = WriteOptions {
        block: if opts.block == 0 { default_block(opts.format, count) } else { opts.block },
        streams,
        ..opts
    };
    if opts.block.checked_mul(streams).is_none_or(|b| b > max) {
        return Err(Error::InvalidArgument(format!(
            "block size {}{} out of range 1..={max} for value file v{}",
            opts.block,
            if streams > 1 { format!(" x {streams} streams") } else { String::new() },
            opts.format
        )));
    }
    if opts.format >= 4 && !opts.elide_losses {
        return Err(Error::InvalidArgument(format!(
            "value file v{} stores losses elided; write v3 to keep loss distances",
            opts.format
        )));
    }
    let blocks = count.div_ceil(opts.block as u64 * streams as u64);
    let blocks = u32::try_from(blocks).map_err(|_| Error::InvalidArgument("too many blocks".into()))?;
    let path = dir.join(file_name(phase));
    let tmp = temp_name(&path);
    let summary = Summary {
        version: opts.format,
        count,
        block: opts.block,
        blocks,
        streams,
        len: 0,
        elided_losses: opts.elide_losses,
        filled_wins: opts.filled_wins,
    };
    let written = if opts.format >= 4 {
        write_coded(&tmp, geom, phase, summary, records, progress)
    } else {
        write_zstd(&tmp, geom, phase, summary, opts.level, records, progress)
    };
    let summary = remove_on_error(&tmp, written)?;
    rename_durably(&tmp, &path)?;
    Ok(summary)
}

/// The records of a batch as they are stored: losses elided when the file elides them.
fn as_stored(records: &[u64], elide: bool) -> std::borrow::Cow<'_, [u64]> {
    if elide {
        std::borrow::Cow::Owned(records.iter().map(|&r| Packed(r).elided().0).collect())
    } else {
        std::borrow::Cow::Borrowed(records)
    }
}

/// Positions read and coded at a time.
fn batch_positions(block: u32) -> usize {
    let blocks = (64usize).max(4 * rayon::current_num_threads()).max((1 << 20) / block as usize);
    blocks * block as usize
}

/// Write the file's index after its blocks, then its header over the zeros kept for it;
/// fsync. Returns the summary with the file's length.
fn finish(
    out: IndexedOut,
    (geom, phase): (&Geometry, Phase),
    mut summary: Summary,
    index: &[u8],
    model_len: u32,
) -> Result<Summary, Error> {
    summary.len = out.finish(index, |tail| {
        let s = Summary { len: tail.len, ..summary };
        header(geom, phase, &s, tail.index_at, tail.index_sum, model_len)
    })?;
    Ok(summary)
}

/// Value file v3: zstd frames.
fn write_zstd(
    tmp: &Path,
    geom: &Geometry,
    phase: Phase,
    summary: Summary,
    level: i32,
    records: &mut dyn Records,
    mut progress: impl FnMut(u64),
) -> Result<Summary, Error> {
    let (count, block) = (summary.count, summary.block as usize);
    let mut out = IndexedOut::create(tmp, HEADER_LEN)?;
    let mut entries = Vec::with_capacity(summary.blocks as usize);
    let batch = (64usize).max(4 * rayon::current_num_threads());
    let mut buf = vec![0u64; batch * block];
    let mut done = 0u64;
    while done < count {
        let n = ((count - done) as usize).min(buf.len());
        records.read(&mut buf[..n])?;
        let frames: Vec<Result<Vec<u8>, Error>> = buf[..n]
            .par_chunks(block)
            .map_init(
                || compressor(level),
                |z, c| {
                    let raw = encode_block(&as_stored(c, summary.elided_losses));
                    z.as_mut()
                        .map_err(|e| Error::Io {
                            path: tmp.to_path_buf(),
                            source: std::io::Error::other(e.to_string()),
                        })?
                        .compress(&raw)
                        .map(|z| {
                            let mut v = Vec::with_capacity(z.len() + 4);
                            v.extend_from_slice(&(raw.len() as u32).to_le_bytes());
                            v.extend_from_slice(&z);
                            v
                        })
                        .map_err(io(tmp))
                },
            )
            .collect();
        for z in frames {
            let z = z?;
            let decoded = le_u32(&z, 0);
            let frame = &z[4..];
            let offset = out.append(frame)?;
            entries.push(Entry { offset, len: frame.len() as u32, decoded, sum: checksum(frame) });
        }
        done += n as u64;
        fault_point("write blocks").map_err(io(tmp))?;
        progress(done);
    }
    let mut index = Vec::with_capacity(entries.len() * ENTRY_LEN);
    for e in &entries {
        index.extend_from_slice(&e.offset.to_le_bytes());
        index.extend_from_slice(&e.len.to_le_bytes());
        index.extend_from_slice(&e.decoded.to_le_bytes());
        index.extend_from_slice(&e.sum.to_le_bytes());
    }
    finish(out, (geom, phase), summary, &index, 0)
}

/// The context distance of a phase's model on a board of `side`, `pieces` on it: the
/// squares a hole can take.
fn model_distance(side: u32, pieces: u32) -> usize {
    (side * side).saturating_sub(pieces).max(1) as usize
}

/// One block of value file v5: its streams of `per` positions each coded lean
/// ([`Model::encode_lean`]), each but the last preceded by its length.
fn coded_block(model: &Model, records: &[u64], per: usize) -> Vec<u8> {
    let coded: Vec<Vec<u8>> = records.chunks(per).map(|c| model.encode_lean(&as_stored(c, true))).collect();
    let mut out = Vec::with_capacity(coded.iter().map(|c| c.len() + 3).sum());
    for c in &coded[..coded.len() - 1] {
        write_varint(&mut out, c.len() as u32);
    }
    for c in &coded {
        out.extend_from_slice(c);
    }
    out
}

/// LEB128: 7 bits a byte, low first, the high bit set on every byte but the last.
fn write_varint(out: &mut Vec<u8>, mut v: u32) {
    while v >= 0x80 {
        out.push(v as u8 | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
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

/// Value file v4 and v5: one pass over the records to count the model's contexts, one
/// to code the blocks with it.
fn write_coded(
    tmp: &Path,
    geom: &Geometry,
    phase: Phase,
    summary: Summary,
    records: &mut dyn Records,
    mut progress: impl FnMut(u64),
) -> Result<Summary, Error> {
    let (count, block, streams) = (summary.count, summary.block as usize, summary.streams as usize);
    let lean = summary.version >= 5;
    let d = model_distance(geom.side(), phase.player + phase.opponent);
    let threads = rayon::current_num_threads();
    let too_big = |code: Val| Error::InvalidArgument(format!("value code {code} cannot be stored in value file v4"));
    let mut buf = vec![0u64; batch_positions(summary.block * summary.streams)];
    // Pass 1: counts, one table per thread (about 45 MB each).
    let model = {
        let counts: Vec<std::sync::Mutex<Counts>> =
            (0..threads).map(|_| std::sync::Mutex::new(Counts::new(d))).collect();
        let mut done = 0u64;
        while done < count {
            let n = ((count - done) as usize).min(buf.len());
            records.read(&mut buf[..n])?;
            buf[..n].par_chunks(block).try_for_each(|c| {
                let mine = &counts[rayon::current_thread_index().unwrap_or(0) % threads];
                mine.lock().unwrap_or_else(|e| e.into_inner()).add_block(&as_stored(c, true)).map_err(too_big)
            })?;
            done += n as u64;
        }
        let mut all = counts.into_iter().map(|c| c.into_inner().unwrap_or_else(|e| e.into_inner()));
        let mut total = all.next().expect("at least one thread");
        for c in all {
            total.merge(&c);
        }
        Model::from_counts(&total)
    };
    // Pass 2: the blocks.
    records.rewind()?;
    // The model's tables are mostly small counts: zstd takes them to about a third.
    let model_bytes = zstd::bulk::compress(&model.to_bytes(), 19).map_err(io(tmp))?;
    let model_len = u32::try_from(model_bytes.len()).map_err(|_| Error::InvalidArgument("model too large".into()))?;
    let mut out = IndexedOut::create(tmp, HEADER_LEN)?;
    out.append(&model_bytes)?;
    out.append(&checksum(&model_bytes).to_le_bytes())?;
    let mut index = Vec::with_capacity(summary.blocks as usize * ENTRY_LEN_V4);
    let mut done = 0u64;
    while done < count {
        let n = ((count - done) as usize).min(buf.len());
        records.read(&mut buf[..n])?;
        let coded: Vec<Vec<u8>> = buf[..n]
            .par_chunks(block * streams)
            .map(|c| if lean { coded_block(&model, c, block) } else { model.encode(&as_stored(c, true)) })
            .collect();
        for c in coded {
            let len = u16::try_from(c.len())
                .map_err(|_| Error::InvalidArgument("a value block too large for value file v4".into()))?;
            index.extend_from_slice(&len.to_le_bytes());
            index.extend_from_slice(&(checksum(&c) as u32).to_le_bytes());
            out.append(&c)?;
        }
        done += n as u64;
        fault_point("write blocks").map_err(io(tmp))?;
        progress(done);
    }
    finish(out, (geom, phase), summary, &index, model_len)
}

/// A block compressor at `level`, with [`MIN_MATCH`].
fn compressor(level: i32) -> std::io::Result<zstd::bulk::Compressor<'static>> {
    let mut z = zstd::bulk::Compressor::new(level)?;
    z.set_parameter(zstd::zstd_safe::CParameter::MinMatch(MIN_MATCH))?;
    Ok(z)
}

/// Write the values of a phase held in memory.
pub fn write_values(dir: &Path, geom: &Geometry, values: &PhaseValues, opts: WriteOptions) -> Result<Summary, Error> {
    let raw = values.raw();
    let mut source = InMemory { records: raw, at: 0 };
    write(dir, geom, values.phase(), raw.len() as u64, opts, &mut source, |_| {})
}

/// Records held in memory, as a [`Records`] source.
pub struct InMemory<'a> {
    /// The records.
    pub records: &'a [u64],
    /// The next one to read.
    pub at: usize,
}

impl Records for InMemory<'_> {
    fn read(&mut self, buf: &mut [u64]) -> Result<(), Error> {
        let part = self.records.get(self.at..self.at + buf.len()).ok_or_else(|| {
            Error::InvalidArgument(format!("asked for more than the {} records held", self.records.len()))
        })?;
        buf.copy_from_slice(part);
        self.at += buf.len();
        Ok(())
    }

    fn rewind(&mut self) -> Result<(), Error> {
        self.at = 0;
        Ok(())
    }
}

/// An open value file: header and block index checked, blocks read on demand and kept
/// decoded in a [`BlockCache`] (its own, or one shared by a database's files).
pub struct ValueFile {
    path: PathBuf,
    file: File,
    /// The file mapped read-only, where the system allows (else `pread`): a cold query
    /// reads dozens of blocks of tens of bytes, each a system call otherwise.
    map: Option<memmap2::Mmap>,
    phase: Phase,
    count: u64,
    block: u32,
    bytes: u64,
    version: u32,
    elided: bool,
    filled: bool,
    geom: Geometry,
    /// The phase's index, built on first need: a file that fills immediate wins unranks
    /// a position to tell whether its record is filler.
    index: OnceLock<PhaseIndex>,
    layout: Layout,
    cache: Arc<BlockCache>,
    /// This file's part of the cache keys (the cache may be shared).
    cache_id: u64,
}

/// Where a file's blocks are and how they decode.
enum Layout {
    /// v1 to v3: zstd frames, one index entry each.
    Zstd(Vec<Entry>),
    /// v4: blocks coded with the file's model.
    Coded(Box<CodedBlocks>),
}

/// The blocks of a v4 or v5 file: its index entries as read (6 bytes a block) and where
/// every [`STRIDE`]-th block starts, about 6.5 bytes of memory a block in all. Opening
/// the whole game's index this way takes a third of the time and memory it took to
/// unpack it into arrays of ends and checksums (8 bytes a block), for a few additions a
/// read. A v5 block holds `streams` streams; the file's readers see each stream as a
/// block of its own (its positions, its cache entry), stream `b` in stored block `b /
/// streams`.
struct CodedBlocks {
    model: Model,
    /// The index: block `b`'s coded length (u16) and checksum (u32) at `6 * b`.
    index: Vec<u8>,
    /// Where block `STRIDE * k` starts in the file, for each `k`.
    starts: Vec<u64>,
    /// Streams per stored block (1 in v4).
    streams: usize,
    /// The streams are lean (v5), not full (v4) ([`Model::encode_lean`]).
    lean: bool,
}

/// Blocks between two entries of [`CodedBlocks::starts`].
const STRIDE: usize = 16;

impl CodedBlocks {
    /// Block `b`'s coded length.
    #[inline]
    fn len(&self, b: usize) -> u64 {
        u16::from_le_bytes([self.index[ENTRY_LEN_V4 * b], self.index[ENTRY_LEN_V4 * b + 1]]) as u64
    }

    /// Block `b`'s checksum: the low 32 bits of the XXH3-64 of its bytes.
    #[inline]
    fn sum(&self, b: usize) -> u32 {
        le_u32(&self.index, ENTRY_LEN_V4 * b + 2)
    }

    /// Block `b`'s bytes: `start..end` in the file, from the start of block `b - b %
    /// STRIDE` and the lengths of the blocks from there to `b`.
    fn span(&self, b: usize) -> (u64, u64) {
        let first = b - b % STRIDE;
        let start = self.starts[b / STRIDE] + (first..b).map(|k| self.len(k)).sum::<u64>();
        (start, start + self.len(b))
    }

    /// Ask the processor for the memory [`CodedBlocks::span`] of block `b` reads (its
    /// entry of `starts` and the index entries of blocks `b - b % STRIDE ..= b`), without
    /// waiting for it.
    fn prefetch_span(&self, b: usize) {
        let first = b - b % STRIDE;
        crate::sys::prefetch(&self.starts[b / STRIDE]);
        crate::sys::prefetch(&self.index[ENTRY_LEN_V4 * first]);
        crate::sys::prefetch(&self.index[ENTRY_LEN_V4 * (b + 1) - 1]);
    }

    /// Stored blocks.
    fn stored(&self) -> usize {
        self.index.len() / ENTRY_LEN_V4
    }

    /// Stream `k` of the `n` streams of a v5 block's `bytes`: the lengths of all but the
    /// last (LEB128) come first, then the streams in order.
    fn stream(bytes: &[u8], n: usize, k: usize) -> Result<&[u8], &'static str> {
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

impl std::fmt::Debug for ValueFile {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ValueFile").field("path", &self.path).field("count", &self.count).finish()
    }
}

impl ValueFile {
    /// Open the value file of `phase` in `dir`, expecting `expect` positions: checks
    /// magic, version, board, phase, count, length, the header checksum, the flags and
    /// the block index (its checksum and that the blocks tile the file). Reads versions
    /// 1 and 2.
    pub fn open(dir: &Path, geom: &Geometry, phase: Phase, expect: u64) -> Result<ValueFile, Error> {
        let path = dir.join(file_name(phase));
        let mut file = open_regular(&path).map_err(io(&path))?;
        let len = file.metadata().map_err(io(&path))?.len();
        let mut h = [0u8; HEADER_LEN];
        if len < HEADER_LEN_V1 as u64 {
            return Err(corrupt(&path, format!("{len} bytes, shorter than a {HEADER_LEN_V1}-byte header")));
        }
        let got = (len as usize).min(HEADER_LEN);
        file.read_exact(&mut h[..got]).map_err(io(&path))?;
        // A version field this build does not read is damage if putting 1 or 2 back
        // makes that version's header checksum hold.
        let intact = |h: &[u8]| {
            let end = if le_u32(h, 8) == 1 { HEADER_LEN_V1 } else { HEADER_LEN };
            h.len() >= end && ends_with_checksum(&h[..end])
        };
        let version = header_version(&path, &h[..got], &MAGIC, VERSIONS, FileKind::Values, intact)?;
        let header_len = if version == 1 { HEADER_LEN_V1 } else { HEADER_LEN };
        if len < header_len as u64 {
            return Err(corrupt(&path, format!("{len} bytes, shorter than its {header_len}-byte header")));
        }
        let h = &h[..header_len];
        check_header(&path, h, &MAGIC, version, FileKind::Values, geom)?;
        let flags = if version == 1 { 0 } else { le_u32(h, 56) };
        let known = match version {
            5.. => FLAG_ELIDED_LOSSES | FLAG_FILLED_WINS | 0xff << STREAMS_SHIFT,
            3 | 4 => FLAG_ELIDED_LOSSES | FLAG_FILLED_WINS,
            _ => FLAG_ELIDED_LOSSES,
        };
        if flags & !known != 0 || ((2..=3).contains(&version) && le_u32(h, 60) != 0) {
            return Err(corrupt(&path, format!("unknown header flags {flags:#x} (written by a newer ostledb?)")));
        }
        if version >= 4 && flags & FLAG_ELIDED_LOSSES == 0 {
            return Err(corrupt(&path, format!("a v{version} file that does not elide losses")));
        }
        let streams = if version >= 5 { flags >> STREAMS_SHIFT } else { 1 };
        if !(1..=MAX_STREAMS).contains(&streams) {
            return Err(corrupt(&path, format!("{streams} streams per block, out of range 1..={MAX_STREAMS}")));
        }
        if (h[14] as u32, h[15] as u32) != (phase.player, phase.opponent) {
            return Err(corrupt(&path, format!("holds phase ({},{}), expected {phase}", h[14], h[15])));
        }
        let count = le_u64(h, 16);
        if count != expect {
            return Err(corrupt(&path, format!("holds {count} positions, the phase has {expect}")));
        }
        let block = le_u32(h, 24);
        let blocks = le_u32(h, 28);
        let stored = block as u64 * streams as u64;
        if block == 0 || stored > MAX_BLOCK as u64 || blocks as u64 != count.div_ceil(stored) {
            return Err(corrupt(&path, format!("{blocks} blocks of {stored} positions cannot hold {count} positions")));
        }
        let index_at = le_u64(h, 32);
        let entry_len = if version >= 4 { ENTRY_LEN_V4 } else { ENTRY_LEN };
        let index = read_index(
            &mut file,
            &path,
            FileKind::Values,
            len,
            IndexAt {
                header_len: header_len as u64,
                stated_len: le_u64(h, 48),
                at: index_at,
                len: blocks as u64 * entry_len as u64,
                sum: le_u64(h, 40),
            },
        )?;
        let layout = if version >= 4 {
            let mut coded = Self::coded_blocks(&path, &mut file, h, index, index_at)?;
            (coded.streams, coded.lean) = (streams as usize, version >= 5);
            Layout::Coded(Box::new(coded))
        } else {
            let mut entries = Vec::with_capacity(blocks as usize);
            let mut at = header_len as u64;
            for (b, e) in index.chunks_exact(ENTRY_LEN).enumerate() {
                let e = Entry { offset: le_u64(e, 0), len: le_u32(e, 8), decoded: le_u32(e, 12), sum: le_u64(e, 16) };
                let m = (count - b as u64 * block as u64).min(block as u64);
                if e.offset != at || (e.decoded as u64) < 3 * m || e.decoded as u64 > 5 * m {
                    return Err(corrupt(&path, format!("block {b}: index entry out of place")));
                }
                at += e.len as u64;
                entries.push(e);
            }
            if at != index_at {
                return Err(corrupt(&path, "the blocks do not fill the space before the block index"));
            }
            Layout::Zstd(entries)
        };
        // SAFETY: the mapping is read-only and the store never modifies a value file in
        // place (it writes a new one and renames it over the old), so the bytes behind
        // the map do not change while it lives. A file truncated by something else after
        // this check would fault on access (SIGBUS), as the mmap keys backend's would.
        let map = unsafe { memmap2::Mmap::map(&file) }.ok().filter(|m| m.len() as u64 == len);
        Ok(ValueFile {
            path,
            file,
            map,
            phase,
            count,
            block,
            bytes: len,
            version,
            elided: flags & FLAG_ELIDED_LOSSES != 0,
            filled: flags & FLAG_FILLED_WINS != 0,
            geom: geom.clone(),
            index: OnceLock::new(),
            layout,
            cache: Arc::new(BlockCache::new(default_budget())),
            cache_id: 0,
        })
    }

    /// A v4 file's model (checked) and block index (`index`, its checksum checked).
    fn coded_blocks(
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

    /// The phase.
    pub fn phase(&self) -> Phase {
        self.phase
    }

    /// Positions.
    pub fn len(&self) -> u64 {
        self.count
    }

    /// True when the phase has no positions.
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// The file's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The file's size in bytes.
    pub fn file_len(&self) -> u64 {
        self.bytes
    }

    /// The number of blocks as read: each of [`ValueFile::block_positions`] positions
    /// (in v5, each stream of a stored block).
    pub fn blocks(&self) -> u32 {
        self.count.div_ceil(self.block as u64) as u32
    }

    /// Positions per block.
    pub fn block_positions(&self) -> u32 {
        self.block
    }

    /// The file's format version.
    pub fn version(&self) -> u32 {
        self.version
    }

    /// A v4 file's context model (none for v1-v3).
    pub fn model(&self) -> Option<&Model> {
        match &self.layout {
            Layout::Coded(c) => Some(&c.model),
            Layout::Zstd(_) => None,
        }
    }

    /// True when losses are stored without their distance (as [`ELIDED_LOSS`](crate::record::ELIDED_LOSS)): records
    /// read from this file need [`Packed::needs_resolving`] checked and resolved.
    pub fn elides_losses(&self) -> bool {
        self.elided
    }

    /// True when the records of immediate wins are filler ([`FLAG_FILLED_WINS`]): the
    /// readers here answer `Win(1)` for them.
    pub fn fills_immediate_wins(&self) -> bool {
        self.filled
    }

    /// The phase's index (built on first use).
    fn phase_index(&self) -> &PhaseIndex {
        self.index.get_or_init(|| {
            PhaseIndex::build(&self.geom, self.phase, Arc::new(PlayerSets::build(&self.geom, self.phase.player)))
        })
    }

    /// Block `b` is damaged: `why`.
    fn block_damage(&self, b: u32, why: &str) -> Error {
        corrupt(&self.path, format!("block {b}: {why}"))
    }

    /// The checksum of block `b`, bytes `start..end`, does not match.
    fn block_mismatch(&self, b: usize, start: u64, end: u64) -> Error {
        checksum_mismatch(&self.path, FileKind::Values, "values", Some(b as u64), Some((start, end)))
    }

    /// Ask the processor to bring into its caches, without waiting, what a read of the
    /// record at `idx` will touch first in a coded file that is mapped, in two steps:
    /// [`ValueFile::prefetch_index`] asks for its stored block's index entries, and
    /// [`ValueFile::prefetch_block`], which reads those entries, for the block's first
    /// bytes. A cold read of a coded stream otherwise waits on memory twice before it
    /// decodes (the entries, 0.2 MB to 9 MB of index, then the block in a file of up to
    /// 673 MB), one read after another; asked for together for all the reads to come
    /// (all first steps, then all second ones), those waits overlap. Nothing for a zstd
    /// file, a file read with `pread`, a record past the end, or a processor without the
    /// instruction; [`ValueFile::prefetches`] says whether anything is done.
    pub fn prefetch_index(&self, idx: u64) {
        if let Some((c, _)) = self.prefetched(idx) {
            c.prefetch_span(self.stored_block(c, idx));
        }
    }

    /// The second step of [`ValueFile::prefetch_index`]: the first 256 bytes of the
    /// stored block holding the record at `idx`.
    pub fn prefetch_block(&self, idx: u64) {
        let Some((c, map)) = self.prefetched(idx) else { return };
        let (start, end) = c.span(self.stored_block(c, idx));
        for at in (start..end.min(start + 256)).step_by(64) {
            if let Some(b) = map.get(at as usize) {
                crate::sys::prefetch(b);
            }
        }
    }

    /// True when [`ValueFile::prefetch_index`] and [`ValueFile::prefetch_block`] do
    /// anything: a coded file that is mapped.
    pub fn prefetches(&self) -> bool {
        matches!((&self.layout, &self.map), (Layout::Coded(_), Some(_)))
    }

    /// The coded blocks and the mapping of a file that [`ValueFile::prefetches`], for a
    /// record `idx` it holds.
    fn prefetched(&self, idx: u64) -> Option<(&CodedBlocks, &memmap2::Mmap)> {
        match (&self.layout, &self.map) {
            (Layout::Coded(c), Some(map)) if idx < self.count => Some((c, map)),
            _ => None,
        }
    }

    /// The stored block of a coded file that holds record `idx`.
    fn stored_block(&self, c: &CodedBlocks, idx: u64) -> usize {
        (idx / self.block as u64) as usize / c.streams
    }

    /// Fill this process's page tables for the whole mapped file now, from the operating
    /// system's page cache (reading the file into it where it is not there yet), so that
    /// no later read waits on a page fault: a cold `analyse` reads dozens of blocks, each
    /// on a page it has not touched before, and the faults took 12-15% of its time on
    /// the whole game (docs/measurements.md, "Value file v5"). What a server does at start;
    /// the pages count in the process's resident memory from then on (shared with the
    /// page cache, and given back under memory pressure like any file page). Linux's
    /// `MADV_POPULATE_READ` where it has it (5.14+), else a read of one byte a page;
    /// nothing for a file read with `pread`.
    pub fn map_pages(&self) {
        let Some(map) = &self.map else { return };
        #[cfg(target_os = "linux")]
        if map.advise(memmap2::Advice::PopulateRead).is_ok() {
            return;
        }
        let mut sink = 0u8;
        for page in map.chunks(4096) {
            sink ^= page[0];
        }
        std::hint::black_box(sink);
    }

    /// The bytes `start..end` of the file.
    fn read_block(&self, start: u64, end: u64) -> Result<Vec<u8>, Error> {
        let mut bytes = vec![0u8; (end - start) as usize];
        self.read_into(start, &mut bytes)?;
        Ok(bytes)
    }

    /// Fill `bytes` from the file at `start`.
    fn read_into(&self, start: u64, bytes: &mut [u8]) -> Result<(), Error> {
        if let Some(map) = &self.map {
            let at = start as usize;
            return match map.get(at..at + bytes.len()) {
                Some(b) => {
                    bytes.copy_from_slice(b);
                    Ok(())
                }
                None => Err(corrupt(&self.path, format!("bytes {at}.. are past the file's end"))),
            };
        }
        use std::os::unix::fs::FileExt;
        self.file.read_exact_at(bytes, start).map_err(io(&self.path))
    }

    /// Where stored block `b`'s bytes are in the file: `start..end` (`b` below
    /// [`ValueFile::stored_blocks`]; a checksum error names the stored block).
    pub fn block_span(&self, b: u32) -> (u64, u64) {
        match &self.layout {
            Layout::Zstd(entries) => {
                (entries[b as usize].offset, entries[b as usize].offset + entries[b as usize].len as u64)
            }
            Layout::Coded(c) => c.span(b as usize),
        }
    }

    /// The number of blocks stored, each with its index entry and checksum: in v5 a
    /// stored block holds several streams, each of which [`ValueFile::blocks`] counts.
    pub fn stored_blocks(&self) -> u32 {
        match &self.layout {
            Layout::Zstd(entries) => entries.len() as u32,
            Layout::Coded(c) => c.stored() as u32,
        }
    }

    /// Positions in block `b`.
    fn positions_in(&self, b: u32) -> usize {
        (self.count - b as u64 * self.block as u64).min(self.block as u64) as usize
    }

    /// The decoded planes of block `b` (its checksum and length checked).
    fn planes(&self, b: u32) -> Result<Vec<u8>, Error> {
        self.planes_of(b, self.positions_in(b))
    }

    /// The decoded planes of the first `n` positions of block `b` at least (all of a
    /// zstd block; exactly `n` of a coded one), its checksum checked.
    fn planes_of(&self, b: u32, n: usize) -> Result<Vec<u8>, Error> {
        let bad = |why: &str| self.block_damage(b, why);
        match &self.layout {
            Layout::Zstd(entries) => {
                let e = entries[b as usize];
                let frame = self.read_block(e.offset, e.offset + e.len as u64)?;
                if checksum(&frame) != e.sum {
                    return Err(self.block_mismatch(b as usize, e.offset, e.offset + e.len as u64));
                }
                let raw = decompress(&frame, e.decoded as usize).map_err(|_| bad("not a valid zstd frame"))?;
                if raw.len() != e.decoded as usize {
                    return Err(bad("decodes to a length other than its index entry says"));
                }
                Ok(raw)
            }
            Layout::Coded(c) => {
                // A coded block is tens of bytes: read into a buffer kept by the thread.
                thread_local! {
                    static BYTES: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
                }
                BYTES.with(|buf| {
                    let mut bytes = buf.borrow_mut();
                    bytes.clear();
                    let at = self.read_stream(c, b, &mut bytes)?;
                    let stream = &bytes[at];
                    if c.lean {
                        c.model.decode_lean(stream, self.positions_in(b), n).map_err(bad)
                    } else {
                        c.model.decode_prefix(stream, self.positions_in(b), n).map_err(bad)
                    }
                })
            }
        }
    }

    /// Read the stored block holding coded block `b` (a v5 stream) onto the end of
    /// `bytes`, check its checksum, and give where block `b`'s stream is in `bytes` (v4:
    /// the whole stored block).
    fn read_stream(&self, c: &CodedBlocks, b: u32, bytes: &mut Vec<u8>) -> Result<std::ops::Range<usize>, Error> {
        let stored = b as usize / c.streams;
        let (start, end) = c.span(stored);
        let at = bytes.len();
        bytes.resize(at + (end - start) as usize, 0);
        self.read_into(start, &mut bytes[at..])?;
        if checksum(&bytes[at..]) as u32 != c.sum(stored) {
            return Err(self.block_mismatch(stored, start, end));
        }
        if !c.lean {
            return Ok(at..bytes.len());
        }
        // The streams of this stored block: all but the phase's last have `streams`.
        let first = (stored * c.streams) as u32;
        let streams = (self.blocks() - first).min(c.streams as u32) as usize;
        let stream = CodedBlocks::stream(&bytes[at..], streams, b as usize % c.streams)
            .map_err(|why| self.block_damage(b, why))?;
        let from = at + (stream.as_ptr() as usize - bytes[at..].as_ptr() as usize);
        Ok(from..from + stream.len())
    }

    /// The coded bytes of block `b` of a v4 or v5 file (of v5: its stream), its stored
    /// block's checksum checked; `None` for a file of zstd blocks. For measuring the
    /// decoder apart from the rest of a read (`examples/decode_speed.rs`).
    pub fn coded_stream(&self, b: u32) -> Option<Result<Vec<u8>, Error>> {
        let Layout::Coded(c) = &self.layout else { return None };
        let mut bytes = Vec::new();
        Some(self.read_stream(c, b, &mut bytes).map(|r| bytes[r].to_vec()))
    }

    /// True if the streams of this coded file are lean (v5).
    pub fn lean_streams(&self) -> bool {
        matches!(&self.layout, Layout::Coded(c) if c.lean)
    }

    /// The decoded records of block `b` (its checksum checked), immediate wins answered
    /// `Win(1)` in a file that fills them (each position of the block made, one from the
    /// one before: for reading whole phases, not single positions).
    pub fn block(&self, b: u32) -> Result<Vec<u64>, Error> {
        let raw = self.planes(b)?;
        let bad = |why: &str| self.block_damage(b, why);
        let mut records =
            decode_block(&raw, self.positions_in(b)).ok_or_else(|| bad("decoded planes are inconsistent"))?;
        if self.elided && records.iter().any(|&r| Packed(r).has_loss_distance()) {
            return Err(bad("stores a loss distance, but the file elides them"));
        }
        if self.filled {
            let first = b as u64 * self.block as u64;
            let positions = self.phase_index().positions(first..first + records.len() as u64);
            for (r, pos) in records.iter_mut().zip(positions) {
                if is_immediate_win(&self.geom, &pos) {
                    *r = immediate_win_record().0;
                }
            }
        }
        Ok(records)
    }

    /// Keep decoded blocks in `cache` (shared with other files), under keys `id << 32 | block`.
    pub fn use_cache(&mut self, cache: Arc<BlockCache>, id: u32) {
        self.cache = cache;
        self.cache_id = (id as u64) << 32;
    }

    /// True if the decoded block `b` is in the cache.
    pub fn is_cached(&self, b: u32) -> bool {
        self.covers(b, 0)
    }

    /// True if block `b` is in the cache decoded up to position `i` of the block at least.
    pub fn covers(&self, b: u32, i: usize) -> bool {
        self.cache.with(self.cache_id | b as u64, |d| d.len() > i).unwrap_or(false)
    }

    /// The decoded block `b`, from the cache or read, checked and decompressed.
    pub fn decoded(&self, b: u32) -> Result<Arc<Decoded>, Error> {
        self.decoded_to(b, self.positions_in(b) - 1)
    }

    /// Block `b` decoded up to its position `i` at least, from the cache or read and
    /// checked. A coded (v4) block is decoded up to `i` itself, and again further when a
    /// later read needs more of it.
    pub fn decoded_to(&self, b: u32, i: usize) -> Result<Arc<Decoded>, Error> {
        let n = self.decode_end(b, i);
        self.cache.get_or_load_covering(self.cache_id | b as u64, i + 1, || {
            let raw = self.planes_of(b, n)?;
            Decoded::from_planes(raw, n, self.elided).map_err(|why| self.block_damage(b, why))
        })
    }

    /// True if a read of a block missing from the cache is worth handing to another
    /// thread before it is needed: a zstd block (v1-v3), whose decompression takes tens
    /// to hundreds of microseconds. A coded stream (v4, v5) decodes in a few
    /// microseconds, less than waking a thread and waiting for it costs: on (5,4)+(4,5)
    /// (v5) a cold `analyse` took 77-91 us at p50 decoding where it reads, 109-145 us
    /// decoding its children's streams ahead on two threads (docs/measurements.md, "Value
    /// file v5").
    pub fn worth_decoding_ahead(&self) -> bool {
        matches!(self.layout, Layout::Zstd(_))
    }

    /// Where block `b` must be decoded to for a read of its position `i`: a coded (v4)
    /// block to `i` (a cold read rarely comes back to a block; decoding on to the end of
    /// the 64 positions holding `i` measured 11% slower on 5,000 boards of (4,4) in blocks of 256), a zstd
    /// block whole.
    fn decode_end(&self, b: u32, i: usize) -> usize {
        let m = self.positions_in(b);
        match self.layout {
            Layout::Coded(_) => (i + 1).min(m),
            Layout::Zstd(_) => m,
        }
    }

    /// The packed record of position `idx` (see `schema/FORMAT.md`). In a file that
    /// fills immediate wins this unranks `idx`; [`ValueFile::record_for`] does not.
    pub fn record(&self, idx: u64) -> Result<Packed, Error> {
        if self.filled && idx < self.count {
            return self.record_for(&self.phase_index().position_at(idx), idx);
        }
        self.stored(idx)
    }

    /// The packed record of position `idx`, of which `pos` is a symmetric image.
    pub fn record_for(&self, pos: &Position, idx: u64) -> Result<Packed, Error> {
        if self.filled && is_immediate_win(&self.geom, pos) {
            if idx >= self.count {
                return Err(corrupt(&self.path, format!("no position {idx}")));
            }
            return Ok(immediate_win_record());
        }
        self.stored(idx)
    }

    /// The record of position `idx` as stored (filler for an immediate win in a file
    /// that fills them).
    fn stored(&self, idx: u64) -> Result<Packed, Error> {
        if idx >= self.count {
            return Err(corrupt(&self.path, format!("no position {idx}")));
        }
        let b = (idx / self.block as u64) as u32;
        let i = (idx % self.block as u64) as usize;
        if let Some(Some(r)) = self.cache.with(self.cache_id | b as u64, |d| (i < d.len()).then(|| d.record(i))) {
            return Ok(r);
        }
        Ok(self.decoded_to(b, i)?.record(i))
    }

    /// Every record, decoded in parallel, in index order, handed to `sink` block by block.
    pub fn for_each_block(&self, mut sink: impl FnMut(u64, &[u64])) -> Result<(), Error> {
        let batch = (16usize).max(4 * rayon::current_num_threads());
        let n = self.blocks();
        let mut b = 0u32;
        while b < n {
            let end = (b + batch as u32).min(n);
            let decoded: Vec<Result<Vec<u64>, Error>> = (b..end).into_par_iter().map(|k| self.block(k)).collect();
            for (k, d) in (b..end).zip(decoded) {
                sink(k as u64 * self.block as u64, &d?);
            }
            b = end;
        }
        Ok(())
    }

    /// Recompute every block's checksum (without decoding) and return the bytes
    /// checked; the first bad block is named in the error.
    pub fn check(&self) -> Result<u64, Error> {
        let f = open_regular(&self.path).map_err(io(&self.path))?;
        let mut r = BufReader::with_capacity(1 << 22, f);
        let mut bytes = Vec::new();
        // The blocks lie one after another (checked at open): one sequential read.
        for b in 0..self.stored_blocks() as usize {
            let (start, end, good) = match &self.layout {
                Layout::Zstd(entries) => (entries[b].offset, entries[b].offset + entries[b].len as u64, entries[b].sum),
                Layout::Coded(c) => {
                    let (start, end) = c.span(b);
                    (start, end, c.sum(b) as u64)
                }
            };
            if b == 0 {
                r.seek(SeekFrom::Start(start)).map_err(io(&self.path))?;
            }
            bytes.resize((end - start) as usize, 0);
            r.read_exact(&mut bytes).map_err(io(&self.path))?;
            let sum =
                if let Layout::Coded(_) = &self.layout { checksum(&bytes) as u32 as u64 } else { checksum(&bytes) };
            if sum != good {
                return Err(self.block_mismatch(b, start, end));
            }
        }
        Ok(self.bytes)
    }
}

/// The records of a value file in index order, read a block at a time (immediate wins
/// answered as [`ValueFile::block`] does).
pub struct Stream<'a> {
    file: &'a ValueFile,
    next: u32,
    block: Vec<u64>,
    at: usize,
}

impl<'a> Stream<'a> {
    /// From the first record.
    pub fn new(file: &'a ValueFile) -> Stream<'a> {
        Stream { file, next: 0, block: Vec::new(), at: 0 }
    }

    /// Start again from the first record.
    pub fn rewind(&mut self) {
        (self.next, self.at) = (0, 0);
        self.block.clear();
    }

    /// Fill `out` with the next records (an error past the end).
    pub fn read(&mut self, out: &mut [u64]) -> Result<(), Error> {
        let mut k = 0;
        while k < out.len() {
            if self.at == self.block.len() {
                if self.next >= self.file.blocks() {
                    return Err(Error::InvalidArgument(format!(
                        "{}: asked for more than its {} records",
                        self.file.path.display(),
                        self.file.count
                    )));
                }
                self.block = self.file.block(self.next)?;
                self.next += 1;
                self.at = 0;
            }
            let n = (out.len() - k).min(self.block.len() - self.at);
            out[k..k + n].copy_from_slice(&self.block[self.at..self.at + n]);
            (k, self.at) = (k + n, self.at + n);
        }
        Ok(())
    }
}

/// All records of a phase as stored in its value file (every block checked): with
/// [`ELIDED_LOSS`](crate::record::ELIDED_LOSS) for losses if the file elides them (`store::load_phase` resolves them).
pub fn load_raw(dir: &Path, geom: &Geometry, phase: Phase, expect: u64) -> Result<PhaseValues, Error> {
    load_file(&ValueFile::open(dir, geom, phase, expect)?)
}

/// All records of an open value file as stored (every block checked).
pub fn load_file(f: &ValueFile) -> Result<PhaseValues, Error> {
    let expect = f.len();
    let mut records = Vec::new();
    records
        .try_reserve_exact(expect as usize)
        .map_err(|_| Error::InvalidArgument(format!("cannot allocate {expect} records")))?;
    f.for_each_block(|_, c| records.extend_from_slice(c))?;
    Ok(PhaseValues::from_raw(f.phase(), records))
}

/// The base values of a phase (2 bytes per position) as stored in its value file.
pub fn load_base_raw(dir: &Path, geom: &Geometry, phase: Phase, expect: u64) -> Result<Vec<Val>, Error> {
    let f = ValueFile::open(dir, geom, phase, expect)?;
    let mut base = Vec::with_capacity(expect as usize);
    f.for_each_block(|_, c| base.extend(c.iter().map(|&r| Packed(r).base())))?;
    Ok(base)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::ELIDED_LOSS;

    fn tmpdir(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("ostledb-values-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    fn sample(n: u64) -> Vec<u64> {
        (0..n)
            .map(|i| {
                let base = i * 7 % 300;
                if i % 3 == 0 { base | ((i % 250) << 16) | ((i % 31 + 1) << 32) } else { base }
            })
            .collect()
    }

    #[test]
    fn blocks_round_trip() {
        let r = sample(1000);
        assert_eq!(decode_block(&encode_block(&r), r.len()).unwrap(), r);
        assert_eq!(decode_block(&encode_block(&[]), 0).unwrap(), Vec::<u64>::new());
        let mut enc = encode_block(&r);
        enc.pop();
        assert!(decode_block(&enc, r.len()).is_none());
    }

    #[test]
    fn files_round_trip_for_every_block_size() {
        let g = Geometry::new(3, 3).unwrap();
        let ph = Phase::new(2, 2);
        let dir = tmpdir("rt");
        for n in [0u64, 1, 99, 100, 101, 1000] {
            let vals = PhaseValues::from_raw(ph, sample(n));
            for block in [1u32, 7, 100, 4096] {
                let s = write_values(
                    &dir,
                    &g,
                    &vals,
                    WriteOptions { format: 3, block, streams: 0, level: 3, elide_losses: false, filled_wins: false },
                )
                .unwrap();
                assert_eq!(s.blocks as u64, n.div_ceil(block as u64));
                let f = ValueFile::open(&dir, &g, ph, n).unwrap();
                f.map_pages();
                assert!(!f.prefetches(), "a zstd file has nothing to prefetch");
                for i in 0..n + 2 {
                    f.prefetch_index(i);
                    f.prefetch_block(i);
                }
                for i in (0..n).rev() {
                    assert_eq!(f.record(i).unwrap(), vals.packed(i));
                }
                assert!(f.record(n).is_err());
                assert_eq!(f.check().unwrap(), s.len);
                assert_eq!(load_raw(&dir, &g, ph, n).unwrap().raw(), vals.raw());
            }
        }
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn coded_files_round_trip_and_every_flipped_byte_is_an_error_never_a_wrong_answer() {
        let g = Geometry::new(3, 3).unwrap();
        let ph = Phase::new(2, 2);
        let dir = tmpdir("v4");
        // v4 (one stream a block) and v5 (1, 2, 3 and 16 lean streams a block).
        let shapes = [(4u32, 1u32), (5, 1), (5, 2), (5, 3), (5, 16)];
        for n in [0u64, 1, 99, 1000, 5000] {
            let vals = PhaseValues::from_raw(ph, sample(n));
            let want = |i: u64| vals.packed(i).elided();
            for (format, streams) in shapes {
                for block in [1u32, 7, 100, 512, 8192 / streams] {
                    let opts =
                        WriteOptions { format, block, streams, level: 3, elide_losses: true, filled_wins: false };
                    let s = write_values(&dir, &g, &vals, opts).unwrap();
                    let stored = n.div_ceil(block as u64 * streams as u64);
                    assert_eq!((s.version, s.blocks as u64, s.streams), (format, stored, streams));
                    let f = ValueFile::open(&dir, &g, ph, n).unwrap();
                    assert!(f.version() == format && f.elides_losses());
                    assert_eq!(f.blocks() as u64, n.div_ceil(block as u64));
                    // Mapping the pages and prefetching (past the end too, the last stored
                    // block included) change no answer.
                    f.map_pages();
                    for i in (0..n + 2).rev() {
                        f.prefetch_index(i);
                    }
                    for i in (0..n + 2).rev() {
                        f.prefetch_block(i);
                    }
                    for i in (0..n).rev() {
                        assert_eq!(f.record(i).unwrap(), want(i));
                    }
                    // In order, through a file of its own: each block is decoded a part
                    // at a time, further as reads go on (from its start each time, so
                    // not over every position of the large blocks).
                    let f = ValueFile::open(&dir, &g, ph, n).unwrap();
                    for i in 0..n.min(1500) {
                        assert_eq!(f.record(i).unwrap(), want(i));
                    }
                    assert!(f.record(n).is_err());
                    assert_eq!(f.check().unwrap(), s.len);
                    let all = load_file(&f).unwrap();
                    assert!((0..n).all(|i| all.packed(i) == want(i)));
                }
            }
        }
        // Block 0: the format's default for the phase's size.
        for format in [3, 4, 5] {
            let vals = PhaseValues::from_raw(ph, sample(3000));
            let opts = WriteOptions { format, block: 0, streams: 0, level: 3, elide_losses: true, filled_wins: false };
            let s = write_values(&dir, &g, &vals, opts).unwrap();
            assert_eq!(s.block, default_block(format, 3000));
            assert_eq!(s.streams, if format == 5 { default_streams(3000) } else { 1 });
            assert_eq!(ValueFile::open(&dir, &g, ph, 3000).unwrap().block_positions(), s.block);
        }
        assert_eq!(
            [default_block(3, 1), default_block(4, LARGE_PHASE - 1), default_block(4, LARGE_PHASE)],
            [DEFAULT_BLOCK, DEFAULT_BLOCK_V4_SMALL, DEFAULT_BLOCK_V4]
        );
        assert_eq!(
            [default_block(5, LARGE_PHASE - 1), default_block(5, LARGE_PHASE), default_block(5, HUGE_PHASE)],
            [DEFAULT_STREAM_V5_SMALL, DEFAULT_STREAM_V5_LARGE, DEFAULT_STREAM_V5]
        );
        assert_eq!(
            [default_streams(LARGE_PHASE - 1), default_streams(LARGE_PHASE), default_streams(HUGE_PHASE)],
            [16, 16, 8]
        );
        // Every byte of a file of a few blocks flipped: refused at open, by check, or by
        // the block read; any record read is the right one.
        for (format, n, block, streams) in [(4, 5000, 1024, 1), (5, 1200, 100, 4)] {
            let vals = PhaseValues::from_raw(ph, sample(n));
            let opts = WriteOptions { format, block, streams, level: 3, elide_losses: true, filled_wins: false };
            write_values(&dir, &g, &vals, opts).unwrap();
            let path = dir.join(file_name(ph));
            let good = std::fs::read(&path).unwrap();
            for at in 0..good.len() {
                let mut bad = good.clone();
                bad[at] ^= 1 << (at % 8);
                std::fs::write(&path, &bad).unwrap();
                let Ok(f) = ValueFile::open(&dir, &g, ph, n) else { continue };
                assert!(f.check().is_err(), "v{format}: byte {at} flipped: check passes");
                let mut refused = false;
                // Last first: each block is decoded once, whole.
                for i in (0..n).rev() {
                    match f.record(i) {
                        Ok(r) => assert_eq!(r, vals.packed(i).elided(), "v{format}: byte {at} flipped: a wrong answer"),
                        Err(_) => refused = true,
                    }
                }
                assert!(refused, "v{format}: byte {at} flipped: every record read");
            }
        }
        let vals = PhaseValues::from_raw(ph, sample(5000));
        // Loss distances cannot be kept in v4 or v5; v5 takes 1..=16 streams, and a block
        // of at most 8,192 positions with all of them; v3 and v4 one stream.
        for format in [4, 5] {
            let opts =
                WriteOptions { format, block: 256, streams: 0, level: 3, elide_losses: false, filled_wins: false };
            let e = write_values(&dir, &g, &vals, opts).unwrap_err().to_string();
            assert!(e.contains(&format!("v{format} stores losses elided")), "{e}");
        }
        for (format, block, streams) in [(5, 100, 17), (5, 1024, 9), (4, 100, 2), (3, 100, 2)] {
            let opts = WriteOptions { format, block, streams, level: 3, elide_losses: true, filled_wins: false };
            assert!(write_values(&dir, &g, &vals, opts).is_err(), "v{format}, {block} x {streams}");
        }
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn eliding_keeps_wins_and_draws_and_marks_every_loss() {
        let g = Geometry::new(3, 3).unwrap();
        let ph = Phase::new(2, 2);
        let dir = tmpdir("elide");
        let vals = PhaseValues::from_raw(ph, sample(5000));
        let s = write_values(
            &dir,
            &g,
            &vals,
            WriteOptions { format: 3, block: 512, streams: 0, level: 3, elide_losses: true, filled_wins: false },
        )
        .unwrap();
        assert!(s.elided_losses);
        let f = ValueFile::open(&dir, &g, ph, 5000).unwrap();
        assert!(f.elides_losses() && f.version() == 3);
        let (mut losses, mut kept) = (0, 0);
        for i in 0..vals.len() {
            let (r, got) = (vals.packed(i), f.record(i).unwrap());
            assert_eq!(got, r.elided());
            assert!(!got.has_loss_distance());
            if r.base() & 1 == 1 {
                losses += 1;
                assert_eq!(got.base(), ELIDED_LOSS);
                assert!(got.needs_resolving());
            } else {
                kept += 1;
                assert_eq!(got.base(), r.base(), "wins and draws are stored as they are");
            }
        }
        assert!(losses > 100 && kept > 100);
        // A file whose header says "elided" but whose blocks hold loss distances is
        // damaged: its blocks are refused.
        write_values(
            &dir,
            &g,
            &vals,
            WriteOptions { format: 3, block: 512, streams: 0, level: 3, elide_losses: false, filled_wins: false },
        )
        .unwrap();
        let path = dir.join(file_name(ph));
        let mut bytes = std::fs::read(&path).unwrap();
        assert_eq!(le_u32(&bytes, 56), 0);
        bytes[56] = FLAG_ELIDED_LOSSES as u8;
        let sum = checksum(&bytes[..64]);
        bytes[64..72].copy_from_slice(&sum.to_le_bytes());
        std::fs::write(&path, &bytes).unwrap();
        let f = ValueFile::open(&dir, &g, ph, 5000).unwrap();
        let e = f.record(0).unwrap_err().to_string();
        assert!(e.contains("stores a loss distance"), "{e}");
        // An unknown flag (bit 2: none is defined) is refused at open.
        bytes[56] = 4;
        let sum = checksum(&bytes[..64]);
        bytes[64..72].copy_from_slice(&sum.to_le_bytes());
        std::fs::write(&path, &bytes).unwrap();
        let e = ValueFile::open(&dir, &g, ph, 5000).unwrap_err().to_string();
        assert!(e.contains("unknown header flags"), "{e}");
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn immediate_wins_are_filled_on_writing_and_answered_win_in_1_on_reading() {
        let g = Geometry::new(3, 3).unwrap();
        let ph = Phase::new(2, 2);
        let index = PhaseIndex::build(&g, ph, Arc::new(PlayerSets::build(&g, 2)));
        let n = index.len();
        let dir = tmpdir("fill");
        let real = sample(n);
        let won: Vec<bool> = (0..n).map(|i| is_immediate_win(&g, &index.position_at(i))).collect();
        assert!(won.iter().any(|&w| w) && won.iter().any(|&w| !w));
        // The writer tells immediate wins by their value, Win(1).
        let real: Vec<u64> = real
            .iter()
            .zip(&won)
            .map(|(&r, &w)| {
                if w {
                    immediate_win_record().0
                } else if Packed(r).base() == win(1) {
                    r + 2
                } else {
                    r
                }
            })
            .collect();
        let mut filled = real.clone();
        fill_immediate_wins(&mut filled);
        for i in 0..n as usize {
            if won[i] {
                assert_eq!(Packed(filled[i]).special_move(), 0, "filler has no special move");
            } else {
                assert_eq!(filled[i], real[i], "only immediate wins are filled");
            }
        }
        for block in [1u32, 5, 64, 100_000] {
            let opts = WriteOptions { format: 3, block, streams: 0, level: 3, elide_losses: false, filled_wins: true };
            write_values(&dir, &g, &PhaseValues::from_raw(ph, filled.clone()), opts).unwrap();
            let f = ValueFile::open(&dir, &g, ph, n).unwrap();
            assert!(f.fills_immediate_wins() && f.version() == 3);
            let want = |i: u64| Packed(real[i as usize]);
            for i in 0..n {
                assert_eq!(f.record(i).unwrap(), want(i));
                let image = index.position_at(i).transformed(&g, (i % 8) as usize);
                assert_eq!(f.record_for(&image, i).unwrap(), want(i));
            }
            let all = load_file(&f).unwrap();
            assert!((0..n).all(|i| all.packed(i) == want(i)));
        }
        // A v2 file with the flag is refused: v2 has no such flag.
        let path = dir.join(file_name(ph));
        let mut bytes = std::fs::read(&path).unwrap();
        bytes[8..12].copy_from_slice(&2u32.to_le_bytes());
        let sum = checksum(&bytes[..64]);
        bytes[64..72].copy_from_slice(&sum.to_le_bytes());
        std::fs::write(&path, &bytes).unwrap();
        let e = ValueFile::open(&dir, &g, ph, n).unwrap_err().to_string();
        assert!(e.contains("unknown header flags"), "{e}");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
