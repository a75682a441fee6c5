//! [`Store`]: the files of a solved database, opened and read for queries. The library's
//! entry point, [`crate::Database`], asks through it.
//!
//! A database is a directory holding `ostledb.meta` (what it holds) and, in the
//! subdirectory of its current generation ([`crate::store::directory`]), one value file
//! per phase (`values-A-B.zst`) and the files of its key indexes (see
//! [`crate::store::keys`]). An open database holds the readers' shared lock, so no
//! writer removes files it may still read.
//! Opening reads the metadata and the header and block index of each value file; key
//! indexes are opened on first use, value blocks are read and decompressed on demand (the
//! last block of each phase is kept).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use crate::error::{Error, FileKind};
use crate::game::forbidden::published_node_index;
use crate::game::symmetry::canonical;
use crate::game::{Geometry, Phase, Position};
use crate::index::GameIndex;
use crate::probe::moves::{needs_record, play_all};
use crate::probe::{MoveValue, RecordSource, move_values, node_value, resolve_record};
use crate::record::{Outcome, Packed, Record};
use crate::store::cache::{BlockCache, RecordCache, default_budget};
use crate::store::directory::{ReadLock, data_dir};
use crate::store::keys::{self, Backend, KeyIndex};
use crate::store::meta::{self, Meta};
use crate::store::values::ValueFile;

struct Slot {
    values: ValueFile,
    keys: OnceLock<Arc<dyn KeyIndex>>,
    /// Held while the key index is opened, so that threads asking at once open it once
    /// (two copies of a 1.3 GB sorted index at once doubled a reader's peak memory).
    opening: std::sync::Mutex<()>,
    /// The error of an attempt to open the key index that found it damaged: said again
    /// at once, instead of reading the whole index again for every later lookup (a
    /// `query -` of 2,000 boards read a damaged 1.3 GB index 2,000 times).
    damaged: OnceLock<String>,
}

/// A solved database, open for queries. Cheap to share between threads (`&Store` is
/// all a query needs).
pub struct Store {
    dir: PathBuf,
    /// Where its value and key files are (the current generation when it was opened).
    data: PathBuf,
    _readers: ReadLock,
    geom: Geometry,
    meta: Meta,
    /// Shared with the thread that builds its bitmaps at open.
    index: Arc<GameIndex>,
    backend: Backend,
    slots: HashMap<Phase, Slot>,
    cache: Arc<BlockCache>,
    /// Records with elided losses resolved, by phase and index.
    resolved: RecordCache,
    bfs: OnceLock<Option<crate::bfs_depths::node_keys::BfsFile>>,
    first_depths: OnceLock<Option<crate::bfs_depths::first_depths::FirstDepthFile>>,
}

/// A node as a query sees it: the canonical position, the symmetry that maps the board
/// as given onto it, and the published forbidden index `j` (0: nothing forbidden).
pub(crate) struct Node {
    pub(crate) canon: Position,
    pub(crate) symmetry: usize,
    pub(crate) j: usize,
}

/// How to open a database.
#[derive(Clone, Debug)]
pub struct OpenOptions {
    /// The key -> index lookup backend (`None`: the database's first).
    pub backend: Option<Backend>,
    /// Bytes of decoded value blocks kept in memory (shared by all phases; the least
    /// recently used block goes first). A block of 32,768 positions takes about 0.1 MB.
    pub cache_bytes: usize,
    /// Build the index's lookup tables of symmetric piece sets (which ranking a
    /// position may need, a second or more per phase) in a thread of their own as the
    /// database opens, instead of on the first query that needs each.
    pub prepare_index: bool,
}

impl Default for OpenOptions {
    fn default() -> OpenOptions {
        OpenOptions { backend: None, cache_bytes: default_budget(), prepare_index: true }
    }
}

/// The smallest block cache [`Store::decode_ahead`] decodes into: room for a few
/// hundred blocks, so that what it decodes is still there when read.
const DECODE_AHEAD_MIN_CACHE: usize = 32 << 20;

impl std::fmt::Debug for Store {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Store").field("dir", &self.dir).field("backend", &self.backend).finish()
    }
}

/// The backends a database has files for (`rank` always), in its order of preference.
pub fn backends_of(meta: &Meta) -> Vec<String> {
    let mut v = meta.backends.clone();
    if !v.iter().any(|b| b == "rank") {
        v.push("rank".into());
    }
    v
}

impl Store {
    /// Open the database at `dir` with its default lookup backend (the first it lists).
    pub fn open(dir: impl AsRef<Path>) -> Result<Store, Error> {
        Store::open_with(dir, None)
    }

    /// Open the database at `dir`, looking keys up with `backend` (default: the
    /// database's first). The backend must be compiled in and its files present.
    pub fn open_with(dir: impl AsRef<Path>, backend: Option<Backend>) -> Result<Store, Error> {
        Store::open_opts(dir, &OpenOptions { backend, ..OpenOptions::default() })
    }

    /// Open the database at `dir` as `opts` say.
    pub fn open_opts(dir: impl AsRef<Path>, opts: &OpenOptions) -> Result<Store, Error> {
        let backend = opts.backend;
        let cache = Arc::new(BlockCache::new(opts.cache_bytes));
        let dir = dir.as_ref().to_path_buf();
        let readers = ReadLock::acquire(&dir);
        let meta = match meta::read(&dir)? {
            Some(m) => m,
            None => return Err(missing(&dir)),
        };
        let data = data_dir(&dir, &meta);
        let mpath = dir.join(meta::FILE);
        let geom = Geometry::new(meta.side as u32, meta.start_pieces as u32)
            .map_err(|e| crate::error::corrupt(&mpath, format!("board: {e}")))?;
        let index = Arc::new(
            GameIndex::build(&geom, meta.max_pieces as u32)
                .map_err(|e| crate::error::corrupt(&mpath, format!("phases: {e}")))?,
        );
        let has = backends_of(&meta);
        let backend = match backend {
            Some(b) => b,
            None => Backend::parse(&has[0])
                .map_err(|_| crate::error::corrupt(&mpath, format!("unknown backend `{}`", has[0])))?,
        };
        backend.require()?;
        if !has.iter().any(|b| b == backend.storage().name() || b == backend.name()) {
            return Err(Error::BackendMissing {
                path: dir.clone(),
                backend: backend.name().into(),
                available: has.join(", "),
            });
        }
        if index.phases().len() != meta.phases.len() {
            return Err(crate::error::corrupt(&mpath, "the phase list does not match the piece count"));
        }
        let mut slots = HashMap::new();
        for (p, m) in index.phases().iter().zip(&meta.phases) {
            let ph = p.phase();
            if (m.player as u32, m.opponent as u32) != (ph.player, ph.opponent) || m.positions != p.len() {
                return Err(crate::error::corrupt(&mpath, format!("phase {ph}: listed wrongly")));
            }
            let mut values = ValueFile::open(&data, &geom, ph, p.len())?;
            values.use_cache(cache.clone(), slots.len() as u32);
            if values.file_len() != m.value_bytes {
                return Err(crate::error::corrupt(
                    values.path(),
                    format!("{} bytes, the metadata says {}", values.file_len(), m.value_bytes),
                ));
            }
            slots.insert(
                ph,
                Slot { values, keys: OnceLock::new(), opening: std::sync::Mutex::new(()), damaged: OnceLock::new() },
            );
        }
        if opts.prepare_index {
            prepare_in_background(index.clone());
        }
        let resolved = RecordCache::new();
        Ok(Store {
            dir,
            data,
            _readers: readers,
            geom,
            meta,
            index,
            backend,
            slots,
            cache,
            resolved,
            bfs: OnceLock::new(),
            first_depths: OnceLock::new(),
        })
    }

    /// The database directory.
    pub fn path(&self) -> &Path {
        &self.dir
    }

    /// The directory of its value and key files (its generation when it was opened).
    pub fn data_path(&self) -> &Path {
        &self.data
    }

    /// The board.
    pub fn geometry(&self) -> &Geometry {
        &self.geom
    }

    /// What the database holds.
    pub fn meta(&self) -> &Meta {
        &self.meta
    }

    /// What identifies the content of this database: a checksum of its metadata, which
    /// names its generation, settings and per-phase counts; every write makes a new
    /// generation, so answers under one identity never change (HTTP ETags use it).
    pub fn identity(&self) -> u64 {
        meta::encode(&self.meta).map(|b| crate::file::checksum(&b)).unwrap_or(0)
    }

    /// Every phase with at most this many pieces is present.
    pub fn max_pieces(&self) -> u32 {
        self.meta.max_pieces as u32
    }

    /// The stored breadth-first search of the published convention (`ostledb bfs
    /// --store`), if any; opened on first use.
    pub fn bfs(&self) -> Result<Option<&crate::bfs_depths::node_keys::BfsFile>, Error> {
        if let Some(b) = self.bfs.get() {
            return Ok(b.as_ref());
        }
        let b = crate::bfs_depths::node_keys::BfsFile::open(
            &self.dir,
            &self.geom,
            crate::game::node::Convention::Published,
        )?;
        let _ = self.bfs.set(b);
        Ok(self.bfs.get().and_then(|b| b.as_ref()))
    }

    /// The stored first depth of every position (`bfs-first-depths.zst`, from `ostledb bfs
    /// --by-positions --store`), opened on first use; `None` when there is none.
    pub fn first_depths(&self) -> Result<Option<&crate::bfs_depths::first_depths::FirstDepthFile>, Error> {
        if let Some(f) = self.first_depths.get() {
            return Ok(f.as_ref());
        }
        let f = crate::bfs_depths::first_depths::FirstDepthFile::open(&self.dir, &self.geom)?;
        let _ = self.first_depths.set(f);
        Ok(self.first_depths.get().and_then(|f| f.as_ref()))
    }

    /// Map every value file's pages into this process now ([`ValueFile::map_pages`]), so
    /// that no query waits on a page fault: `ostledb serve` does this at start, and
    /// `bench --cold` before it measures.
    pub fn map_value_pages(&self) {
        for slot in self.slots.values() {
            slot.values.map_pages();
        }
    }

    /// Forget every decoded block (of values, first depths and a stored search) and
    /// resolved record, so that the next read is cold (the operating system's page cache
    /// is left as it is).
    pub fn drop_caches(&self) {
        self.cache.clear();
        self.resolved.clear();
        if let Some(Some(f)) = self.first_depths.get() {
            f.drop_cache();
        }
        if let Some(Some(b)) = self.bfs.get() {
            b.drop_cache();
        }
    }

    /// The cache of decoded value blocks.
    pub fn cache(&self) -> &BlockCache {
        &self.cache
    }

    /// The lookup backend in use.
    pub fn backend(&self) -> Backend {
        self.backend
    }

    /// The position index (the combinatorial rank).
    pub fn index(&self) -> &GameIndex {
        &self.index
    }

    /// The value file of a phase.
    pub fn values(&self, phase: Phase) -> Option<&ValueFile> {
        self.slots.get(&phase).map(|s| &s.values)
    }

    fn slot(&self, phase: Phase) -> Result<&Slot, Error> {
        self.slots.get(&phase).ok_or_else(|| Error::MissingDatabase {
            path: self.dir.clone(),
            phase: phase.to_string(),
            max_pieces: phase.pieces(),
        })
    }

    /// The key index of a phase (opened on first use).
    pub fn keys(&self, phase: Phase) -> Result<&Arc<dyn KeyIndex>, Error> {
        let slot = self.slot(phase)?;
        if let Some(k) = slot.keys.get() {
            return Ok(k);
        }
        let _opening = slot.opening.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(k) = slot.keys.get() {
            return Ok(k);
        }
        if let Some(first) = slot.damaged.get() {
            return Err(Error::FoundDamaged(first.clone()));
        }
        let p = self.index.phase(phase).expect("phase of the index");
        let k: Arc<dyn KeyIndex> = match keys::open(self.backend, &self.data, p) {
            Ok(k) => Arc::from(k),
            Err(e) if e.exit_code() == crate::error::EXIT_CORRUPT => {
                let _ = slot.damaged.set(e.to_string());
                return Err(e);
            }
            Err(e) => return Err(e),
        };
        let _ = slot.keys.set(k);
        Ok(slot.keys.get().expect("just set"))
    }

    /// The phase and index of a position (any symmetric image), through the backend.
    pub fn locate(&self, pos: &Position) -> Result<(Phase, u64), Error> {
        pos.validate(&self.geom)?;
        let ph = pos.phase();
        let (c, _) = canonical(&self.geom, pos);
        if self.backend == Backend::Rank {
            // The position is live and canonical: rank it directly (the backend would
            // decode and canonicalise the code again to check it).
            self.slot(ph)?;
            let p = self.index.phase(ph).expect("a phase with a slot is in the index");
            return Ok((ph, p.index_of(&c)));
        }
        let code = c.code();
        match self.keys(ph)?.index_of(code)? {
            // mmap and sled read their keys lazily, so a damaged key file is not caught
            // at open: their answer is checked against the rank (a ~100 ns unrank) so
            // that damage is an error, never a wrong answer.
            Some(i) if matches!(self.backend, Backend::Mmap | Backend::Sled) => {
                let p = self.index.phase(ph).expect("phase of the index");
                if i < p.len() && p.position_at(i).code() == code {
                    Ok((ph, i))
                } else {
                    Err(crate::error::corrupt(
                        &self.data.join(&self.backend.files(ph)[0]),
                        format!("the key index maps code {code} to position {i}, which holds another position"),
                    ))
                }
            }
            Some(i) => Ok((ph, i)),
            None => Err(crate::error::corrupt(
                &self.data,
                format!("the {} key index of phase {ph} lacks the position with code {code}", self.backend),
            )),
        }
    }

    /// The record of position `idx` of `phase`, exact: an elided loss distance (see
    /// [`crate::store::values::FLAG_ELIDED_LOSSES`]) is found by one ply of search.
    pub fn record(&self, phase: Phase, idx: u64) -> Result<Record, Error> {
        let values = &self.slot(phase)?.values;
        if values.fills_immediate_wins() {
            let pos = self.index.phase(phase).expect("a phase with a slot is in the index").position_at(idx);
            return self.record_of(&pos, phase, idx);
        }
        let raw = values.record(idx)?;
        if !(values.elides_losses() && raw.needs_resolving()) {
            return Ok(raw.record());
        }
        let pos = self.index.phase(phase).expect("a phase with a slot is in the index").position_at(idx);
        self.resolved_record(&pos, phase, idx, raw)
    }

    /// The packed record of position `idx` of `phase` as stored (an elided loss is
    /// [`crate::record::ELIDED_LOSS`]; an immediate win is `Win(1)` whether stored or
    /// filled).
    pub fn stored_record(&self, phase: Phase, idx: u64) -> Result<Packed, Error> {
        self.slot(phase)?.values.record(idx)
    }

    /// `raw`, the stored record of position `idx` of `phase` (of which `pos` is an image),
    /// with its elided losses found by one ply of search, or taken from the cache of
    /// records resolved before.
    fn resolved_record(&self, pos: &Position, phase: Phase, idx: u64, raw: Packed) -> Result<Record, Error> {
        let key = resolved_key(phase, idx);
        if let Some(r) = self.resolved.get(key) {
            return Ok(r.record());
        }
        let values = &self.slot(phase)?.values;
        let r = resolve_record(&self.geom, &AsStored(self), &self.resolved_from(pos, raw), raw, values.path())?;
        self.resolved.put(key, r);
        Ok(r.record())
    }

    /// The position an elided loss of `pos` (as played) is resolved from: `pos` itself,
    /// or its canonical form when the special value is elided (its move index is the
    /// canonical form's).
    fn resolved_from(&self, pos: &Position, raw: Packed) -> Position {
        if raw.special_elided() { canonical(&self.geom, pos).0 } else { *pos }
    }

    /// A packed record read from this database's files, its elided losses resolved
    /// (`canon` is its position).
    pub fn resolve(&self, canon: &Position, raw: Packed) -> Result<Packed, Error> {
        let values = &self.slot(canon.phase())?.values;
        if !values.elides_losses() {
            return Ok(raw);
        }
        resolve_record(&self.geom, &AsStored(self), canon, raw, values.path())
    }

    /// [`Store::record`] of the position `pos` is an image of: a base value is
    /// resolved from `pos` as it is (its moves are the canonical form's, transformed),
    /// and only a special value, whose move index is the canonical form's, needs the
    /// canonical form; no unranking.
    fn record_of(&self, pos: &Position, phase: Phase, idx: u64) -> Result<Record, Error> {
        let values = &self.slot(phase)?.values;
        let raw = values.record_for(pos, idx)?;
        if !(values.elides_losses() && raw.needs_resolving()) {
            return Ok(raw.record());
        }
        self.resolved_record(pos, phase, idx, raw)
    }

    /// Decode, in parallel, the zstd value blocks holding these positions that the block
    /// cache lacks, and keep them there: a cold `analyse` reads one block per child (and
    /// per grandchild of a child whose loss is elided), one after another, so on 2 cores
    /// this about halves its wait. Nothing is done on one thread, for fewer than two
    /// missing blocks, when the cache is too small to keep what is decoded (it would be
    /// decoded twice), or for coded streams, which decode faster than a thread wakes
    /// ([`ValueFile::worth_decoding_ahead`]). Errors are left for the reads that follow
    /// to report.
    fn decode_ahead(&self, located: &[(Phase, u64)]) {
        self.prefetch(located);
        if located.len() < 2 || !self.decodes_ahead() {
            return;
        }
        // Each block missing from the cache, with the last of its positions asked for
        // (a coded block is decoded only that far).
        let mut missing: Vec<(Phase, u32, usize)> = located
            .iter()
            .filter_map(|&(ph, idx)| {
                let values = &self.slot(ph).ok()?.values;
                if !values.worth_decoding_ahead() {
                    return None;
                }
                let k = values.block_positions() as u64;
                let (b, i) = (u32::try_from(idx / k).ok()?, (idx % k) as usize);
                (!values.covers(b, i)).then_some((ph, b, i))
            })
            .collect();
        missing.sort_unstable_by_key(|x| (x.0, x.1, std::cmp::Reverse(x.2)));
        missing.dedup_by_key(|x| (x.0, x.1));
        if missing.len() < 2 {
            return;
        }
        use rayon::prelude::*;
        missing.par_iter().for_each(|&(ph, b, i)| {
            if let Ok(slot) = self.slot(ph) {
                let _ = slot.values.decoded_to(b, i);
            }
        });
    }

    /// Ask the processor for the memory that reading `located` will touch first: every
    /// record's index entries, then (reading those) every record's first block bytes
    /// ([`ValueFile::prefetch_index`], [`ValueFile::prefetch_block`]), what the reads of
    /// a coded file wait on. Nothing when no phase's file [`ValueFile::prefetches`].
    fn prefetch(&self, located: &[(Phase, u64)]) {
        if located.len() < 2 || !self.slots.values().any(|s| s.values.prefetches()) {
            return;
        }
        // Children mostly lie in one or two phases: the last file found is kept.
        let mut last: Option<(Phase, &ValueFile)> = None;
        let mut file = |ph: Phase| match last {
            Some((p, f)) if p == ph => Some(f),
            _ => {
                let f = &self.slot(ph).ok()?.values;
                last = Some((ph, f));
                Some(f)
            }
        };
        for &(ph, idx) in located {
            if let Some(f) = file(ph) {
                f.prefetch_index(idx);
            }
        }
        for &(ph, idx) in located {
            if let Some(f) = file(ph) {
                f.prefetch_block(idx);
            }
        }
    }

    /// True when [`Store::decode_ahead`] may decode anything: two threads at least,
    /// a cache large enough to keep what it decodes, and a phase of zstd blocks.
    fn decodes_ahead(&self) -> bool {
        self.cache.budget() >= DECODE_AHEAD_MIN_CACHE
            && rayon::current_num_threads() >= 2
            && self.slots.values().any(|s| s.values.worth_decoding_ahead())
    }

    /// Decode ahead, in one go, the blocks of the children of every one of `children`
    /// (positions as played, located) whose stored record is an elided loss not yet
    /// resolved: resolving them reads all of those, one child after another otherwise
    /// (each child's own decode-ahead then has a fraction of the blocks to share among
    /// the threads). Errors are left for the reads that follow to report.
    fn decode_ahead_resolving(&self, children: &[(Position, Phase, u64)]) {
        if !self.decodes_ahead() {
            return;
        }
        let mut grandchildren = Vec::new();
        for (pos, ph, idx) in children {
            let Ok(slot) = self.slot(*ph) else { continue };
            if !slot.values.elides_losses() {
                continue;
            }
            let Ok(raw) = slot.values.record_for(pos, *idx) else { continue };
            if !raw.needs_resolving() || self.resolved.get(resolved_key(*ph, *idx)).is_some() {
                continue;
            }
            for (_, r) in play_all(&self.geom, &self.resolved_from(pos, raw)).iter() {
                if needs_record(&self.geom, r)
                    && let Ok(at) = self.locate(&r.child)
                {
                    grandchildren.push(at);
                }
            }
        }
        self.decode_ahead(&grandchildren);
    }

    fn check_range(&self, pos: &Position) -> Result<(), Error> {
        pos.validate(&self.geom)?;
        if pos.phase().pieces() > self.max_pieces() {
            return Err(Error::MissingDatabase {
                path: self.dir.clone(),
                phase: pos.phase().to_string(),
                max_pieces: pos.phase().pieces(),
            });
        }
        Ok(())
    }

    /// The value of `board` for the side to move; `prev` is the board before the
    /// opponent's last move, seen from the opponent, which decides the forbidden move.
    pub fn probe(&self, board: &Position, prev: Option<&Position>) -> Result<Outcome, Error> {
        self.node_value(&self.node(board, prev)?)
    }

    /// [`Store::probe`] of many boards, nothing forbidden, answered in the order given.
    /// Parallel (rayon), and ordered for the store: the boards are located first and
    /// valued in order of phase and index, so that a block that several of them need is
    /// decompressed once, while it is cached. An error (a bad board, a phase this
    /// database lacks, a damaged block) is that board's answer and stops no other.
    pub fn probe_many(&self, boards: &[Position]) -> Vec<Result<Outcome, Error>> {
        use rayon::prelude::*;
        enum Step {
            Done(Result<Outcome, Error>),
            At(Phase, u64),
        }
        let steps: Vec<Step> = boards
            .par_iter()
            .map(|b| {
                if let Err(e) = self.check_range(b) {
                    return Step::Done(Err(e));
                }
                if crate::game::moves::is_immediate_win(&self.geom, b) {
                    return Step::Done(Ok(Outcome::Win(1)));
                }
                match self.locate(b) {
                    Ok((ph, idx)) => Step::At(ph, idx),
                    Err(e) => Step::Done(Err(e)),
                }
            })
            .collect();
        let mut order: Vec<(Phase, u64, usize)> = steps
            .iter()
            .enumerate()
            .filter_map(|(i, s)| match s {
                Step::At(ph, idx) => Some((*ph, *idx, i)),
                Step::Done(_) => None,
            })
            .collect();
        order.par_sort_unstable_by_key(|&(ph, idx, _)| (ph.player, ph.opponent, idx));
        let valued: Vec<Result<Outcome, Error>> = order
            .par_iter()
            .with_min_len(64)
            .map(|&(ph, idx, i)| self.record_of(&boards[i], ph, idx).map(|r| r.node(0)))
            .collect();
        let mut out: Vec<Option<Result<Outcome, Error>>> = steps
            .into_iter()
            .map(|s| match s {
                Step::Done(r) => Some(r),
                Step::At(..) => None,
            })
            .collect();
        for (&(_, _, i), r) in order.iter().zip(valued) {
            out[i] = Some(r);
        }
        out.into_iter().map(|r| r.expect("every board answered")).collect()
    }

    /// The node `board` is in after `prev` (checked: in range, and `prev` leads to it).
    pub(crate) fn node(&self, board: &Position, prev: Option<&Position>) -> Result<Node, Error> {
        self.check_range(board)?;
        let (canon, symmetry) = canonical(&self.geom, board);
        let j = match prev {
            Some(p) => {
                p.validate(&self.geom)?;
                crate::game::forbidden::forbidden_move(&self.geom, board, p)?;
                published_node_index(&self.geom, &canon, p)
            }
            None => 0,
        };
        Ok(Node { canon, symmetry, j })
    }

    /// The value of a node.
    pub(crate) fn node_value(&self, n: &Node) -> Result<Outcome, Error> {
        node_value(&self.geom, self, &n.canon, n.j)
    }

    /// Every move of `board` with its value for the side that plays it, in `board`'s own
    /// move order (the forbidden move, if any, is listed too).
    pub fn moves(&self, board: &Position) -> Result<Vec<MoveValue>, Error> {
        self.check_range(board)?;
        move_values(&self.geom, self, board)
    }
}

/// The database's records as stored, for resolving an elided loss from its children
/// (which are wins, stored exactly).
struct AsStored<'a>(&'a Store);

impl RecordSource for AsStored<'_> {
    fn index(&self) -> &GameIndex {
        &self.0.index
    }
    fn locate(&self, pos: &Position) -> Result<(Phase, u64), Error> {
        self.0.locate(pos)
    }
    fn record(&self, phase: Phase, idx: u64) -> Result<Record, Error> {
        self.0.stored_record(phase, idx).map(Packed::record)
    }
    fn record_of(&self, pos: &Position, phase: Phase, idx: u64) -> Result<Record, Error> {
        self.0.slot(phase)?.values.record_for(pos, idx).map(Packed::record)
    }
    fn will_read(&self, located: &[(Phase, u64)]) {
        self.0.decode_ahead(located);
    }
}

/// Build every phase's bitmaps of symmetric piece sets in a thread of its own, largest
/// phase first (most random positions are there); a query that needs one meanwhile
/// waits for it rather than building it again.
fn prepare_in_background(index: Arc<GameIndex>) {
    let _ = std::thread::Builder::new().name("ostledb-index".into()).spawn(move || {
        let mut phases: Vec<_> = index.phases().iter().collect();
        phases.sort_by_key(|p| std::cmp::Reverse(p.len()));
        for p in phases {
            p.build_bitmaps();
        }
    });
}

impl RecordSource for Store {
    fn index(&self) -> &GameIndex {
        &self.index
    }
    fn locate(&self, pos: &Position) -> Result<(Phase, u64), Error> {
        Store::locate(self, pos)
    }
    fn record(&self, phase: Phase, idx: u64) -> Result<Record, Error> {
        Store::record(self, phase, idx)
    }
    fn record_of(&self, pos: &Position, phase: Phase, idx: u64) -> Result<Record, Error> {
        Store::record_of(self, pos, phase, idx)
    }
    fn will_read(&self, located: &[(Phase, u64)]) {
        self.decode_ahead(located);
    }
    fn will_resolve(&self, children: &[(Position, Phase, u64)]) {
        self.decode_ahead_resolving(children);
    }
    fn wants_resolve_hint(&self) -> bool {
        true
    }
}

/// The key of a position's resolved record in [`Store`]'s cache of them.
fn resolved_key(phase: Phase, idx: u64) -> u64 {
    (phase.player as u64) << 60 | (phase.opponent as u64) << 56 | idx
}

/// The error for a directory without a database: what to run.
fn missing(dir: &Path) -> Error {
    let unpacked = std::fs::read_dir(dir)
        .map(|d| d.flatten().any(|e| e.file_name().to_string_lossy().ends_with(".vals")))
        .unwrap_or(false);
    // Value files in a generation no metadata names: the metadata was lost.
    let orphan = std::fs::read_dir(dir).ok().and_then(|d| {
        d.flatten().map(|e| e.path()).find(|p| {
            p.file_name().and_then(|n| n.to_str()).and_then(crate::error::generation_of).is_some()
                && std::fs::read_dir(p).is_ok_and(|mut g| {
                    g.any(|f| f.is_ok_and(|f| FileKind::of_path(&f.path()) == Some(FileKind::Values)))
                })
        })
    });
    if let Some(generation) = orphan {
        return Error::InvalidArgument(format!(
            "{} has no metadata file ({}), but {} holds value files: if the metadata was lost, `ostledb repair --db {}` rebuilds it from them",
            dir.display(),
            meta::FILE,
            generation.display(),
            dir.display()
        ));
    }
    if unpacked {
        Error::InvalidArgument(format!(
            "{} holds solved phases but is not a finished database (no {}): run `ostledb pack --db {}` to finish it",
            dir.display(),
            meta::FILE,
            dir.display()
        ))
    } else {
        Error::MissingDatabase { path: dir.to_path_buf(), phase: "(4,4)".into(), max_pieces: 8 }
    }
}
