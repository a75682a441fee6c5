//! The value file writer: [`write()`] writes v3 (zstd frames), v4 or v5 (coded with a
//! context model of the phase, which a first pass over the records counts) from any
//! source of records ([`Records`]); its options ([`WriteOptions`]), what it wrote
//! ([`Summary`]) and the filler of immediate wins ([`fill_immediate_wins`]).

use std::path::Path;

use rayon::prelude::*;

use super::coded::model_distance;
use super::zstd_frames::Entry;
use super::{
    DEFAULT_FORMAT, DEFAULT_LEVEL, ENTRY_LEN, ENTRY_LEN_V4, FLAG_ELIDED_LOSSES, FLAG_FILLED_WINS, HEADER_LEN, MAGIC,
    MAX_BLOCK, MAX_BLOCK_V4, MAX_STREAMS, MIN_MATCH, STREAMS_SHIFT, default_block, default_streams, file_name,
    immediate_win_record,
};
use crate::error::{Error, io};
use crate::file::{IndexedOut, checksum, fault_point, le_u32, prefix, remove_on_error, rename_durably, temp_name};
use crate::game::{Geometry, Phase};
use crate::record::{Packed, PhaseValues, Val};
use crate::store::cache::encode_block;
use crate::store::value_model::{Counts, Model};

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

/// Replace the record of every immediate win among `records` by filler that compresses
/// well: the base value of the closest record before it that is not an immediate win
/// (the first one after it for a leading run), with no special move.
///
/// An immediate win is told by its record, not its position: a position is won in
/// exactly 1 ply ([`immediate_win_record`]) exactly when its side to move can remove
/// the opponent's last-but-one piece ([`is_immediate_win`](crate::game::moves::is_immediate_win)), since nothing else ends
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
