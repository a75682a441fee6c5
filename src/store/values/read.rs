//! Reading a value file of any version: [`ValueFile`] checks the header and the block
//! index at open, then reads records and blocks on demand, decoded into a block cache
//! (zstd frames for v1-v3, coded streams for v4 and v5).

use std::cell::RefCell;
use std::fs::File;
use std::io::{BufReader, Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use rayon::prelude::*;

use super::coded::{CodedBlocks, coded_blocks};
use super::zstd_frames::{Entry, zstd_entries};
use super::{
    ENTRY_LEN, ENTRY_LEN_V4, FLAG_ELIDED_LOSSES, FLAG_FILLED_WINS, HEADER_LEN, HEADER_LEN_V1, MAGIC, MAX_BLOCK,
    MAX_STREAMS, STREAMS_SHIFT, VERSIONS, file_name, immediate_win_record,
};
use crate::error::{Error, FileKind, checksum_mismatch, corrupt, io};
use crate::file::{
    IndexAt, check_header, checksum, decompress, ends_with_checksum, header_version, le_u32, le_u64, open_regular,
    read_index,
};
use crate::game::moves::is_immediate_win;
use crate::game::{Geometry, Phase, Position};
use crate::index::{PhaseIndex, PlayerSets};
use crate::record::Packed;
use crate::store::cache::{BlockCache, Decoded, decode_block, default_budget};
use crate::store::value_model::Model;

/// An open value file: header and block index checked, blocks read on demand and kept
/// decoded in a [`BlockCache`] (its own, or one shared by a database's files).
pub struct ValueFile {
    pub(super) path: PathBuf,
    file: File,
    /// The file mapped read-only, where the system allows (else `pread`): a cold query
    /// reads dozens of blocks of tens of bytes, each a system call otherwise.
    map: Option<memmap2::Mmap>,
    phase: Phase,
    pub(super) count: u64,
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
            let mut coded = coded_blocks(&path, &mut file, h, index, index_at)?;
            (coded.streams, coded.lean) = (streams as usize, version >= 5);
            Layout::Coded(Box::new(coded))
        } else {
            Layout::Zstd(zstd_entries(&path, &index, (count, block, blocks), header_len, index_at)?)
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
