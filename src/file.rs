//! What every file of the result store shares: xxh3 checksums, little-endian field
//! access, and atomic writes (temporary name, fsync, rename, fsync of the directory).

use std::fs::File;
use std::io::{BufWriter, Read, Seek, Write};
use std::path::{Path, PathBuf};

use crate::error::{Error, FileKind, checksum_mismatch, corrupt, io};

/// The checksum of every file and block of the store: XXH3-64 with seed 0.
#[inline]
pub fn checksum(bytes: &[u8]) -> u64 {
    xxhash_rust::xxh3::xxh3_64(bytes)
}

/// A streaming XXH3-64 (seed 0), equal to [`checksum`] of the concatenated input.
pub struct Hasher(xxhash_rust::xxh3::Xxh3);

impl Hasher {
    /// A new hasher.
    pub fn new() -> Hasher {
        Hasher(xxhash_rust::xxh3::Xxh3::new())
    }
    /// Add bytes.
    pub fn update(&mut self, bytes: &[u8]) {
        self.0.update(bytes)
    }
    /// The checksum of everything added.
    pub fn finish(&self) -> u64 {
        self.0.digest()
    }
}

impl Default for Hasher {
    fn default() -> Hasher {
        Hasher::new()
    }
}

/// The checksum of the solver's files (phase files and group checkpoints): a 64-bit
/// multiply-rotate hash over little-endian 64-bit words, ending with the word count
/// (`schema/FORMAT.md`). Bytes may arrive in runs of any length; a stream of bytes is
/// padded with zero bytes to a whole word before [`WordHash::finish`].
#[derive(Clone, Copy, Debug)]
pub struct WordHash {
    h: u64,
    words: u64,
    /// Bytes of an unfinished word, and how many.
    partial: [u8; 8],
    fill: usize,
}

impl WordHash {
    /// An empty stream.
    pub fn new() -> WordHash {
        WordHash { h: 0x6f73_746c_6564_6221, words: 0, partial: [0; 8], fill: 0 }
    }
    /// Hash one word.
    #[inline]
    pub fn word(&mut self, w: u64) {
        self.h = (self.h ^ w).wrapping_mul(0x9e37_79b9_7f4a_7c15).rotate_left(29);
        self.words += 1;
    }
    /// Hash words (a whole-word stream: no bytes pending).
    #[inline]
    pub fn words(&mut self, words: &[u64]) {
        debug_assert_eq!(self.fill, 0);
        for &w in words {
            self.word(w);
        }
    }

    /// Hash a run of bytes continuing the stream (words may straddle runs).
    pub fn bytes(&mut self, mut b: &[u8]) {
        if self.fill > 0 {
            let take = (8 - self.fill).min(b.len());
            self.partial[self.fill..self.fill + take].copy_from_slice(&b[..take]);
            self.fill += take;
            b = &b[take..];
            if self.fill == 8 {
                self.word(u64::from_le_bytes(self.partial));
                self.fill = 0;
            }
        }
        let mut words = b.chunks_exact(8);
        for w in &mut words {
            self.word(u64::from_le_bytes(w.try_into().expect("8 bytes")));
        }
        let rest = words.remainder();
        self.partial[..rest.len()].copy_from_slice(rest);
        self.fill = rest.len();
    }
    /// Zero bytes still needed to end the stream on a whole word.
    pub fn pad_len(&self) -> usize {
        (8 - self.fill) % 8
    }
    /// The checksum of the words hashed.
    pub fn finish(self) -> u64 {
        debug_assert_eq!(self.fill, 0, "the stream is padded to a whole word");
        self.h ^ self.words
    }
}

impl Default for WordHash {
    fn default() -> WordHash {
        WordHash::new()
    }
}

/// The first 16 bytes every ostledb file begins with: 8 magic bytes, the format version
/// (u32), the board side, the pieces per side at the start, and the phase's `A` and `B`.
pub fn prefix(magic: &[u8; 8], version: u32, geom: &crate::game::Geometry, phase: crate::game::Phase) -> [u8; 16] {
    let mut h = [0u8; 16];
    h[0..8].copy_from_slice(magic);
    h[8..12].copy_from_slice(&version.to_le_bytes());
    h[12] = geom.side() as u8;
    h[13] = geom.start_pieces() as u8;
    h[14] = phase.player as u8;
    h[15] = phase.opponent as u8;
    h
}

/// Read a little-endian u32 at `at`.
#[inline]
pub fn le_u32(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(b[at..at + 4].try_into().expect("4 bytes"))
}

/// Read a little-endian u64 at `at`.
#[inline]
pub fn le_u64(b: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(b[at..at + 8].try_into().expect("8 bytes"))
}

/// The temporary name a file is written under before it is renamed to `path`.
pub fn temp_name(path: &Path) -> PathBuf {
    let mut name = path.file_name().map(|n| n.to_os_string()).unwrap_or_default();
    name.push(".tmp");
    path.with_file_name(name)
}

/// Write `path` atomically: `fill` writes the content into a buffered temporary file,
/// which is flushed, fsynced and renamed over `path`; then the directory is fsynced. A
/// crash leaves either the old file or the new one, and at worst a `*.tmp` file.
pub fn write_atomic(path: &Path, fill: impl FnOnce(&mut BufWriter<File>) -> std::io::Result<()>) -> Result<(), Error> {
    let tmp = temp_name(path);
    fault_point("create").map_err(io(&tmp))?;
    let f = File::create(&tmp).map_err(io(&tmp))?;
    let mut w = BufWriter::with_capacity(1 << 20, f);
    fill(&mut w).map_err(io(&tmp))?;
    fault_point("write").map_err(io(&tmp))?;
    let f = w.into_inner().map_err(|e| Error::Io { path: tmp.clone(), source: e.into_error() })?;
    f.sync_all().map_err(io(&tmp))?;
    drop(f);
    rename_durably(&tmp, path)
}

/// A file of the result store written as a body of blocks followed by their index, with
/// a header that names the index's place, the file's length and the index's checksum and
/// so is written last, over zeros kept for it at the start: the value files of phases,
/// and the first-depth, BFS and node-layer files. Written under a temporary name; the
/// caller renames it over the real one ([`rename_durably`]) when [`IndexedOut::finish`]
/// succeeds, and removes it when anything fails ([`remove_on_error`]).
pub struct IndexedOut {
    tmp: PathBuf,
    w: BufWriter<File>,
    header_len: usize,
    at: u64,
}

impl IndexedOut {
    /// Create `tmp` with `header_len` zero bytes for the header.
    pub fn create(tmp: &Path, header_len: usize) -> Result<IndexedOut, Error> {
        fault_point("create").map_err(io(tmp))?;
        let f = File::create(tmp).map_err(io(tmp))?;
        let mut w = BufWriter::with_capacity(1 << 22, f);
        w.write_all(&vec![0u8; header_len]).map_err(io(tmp))?;
        Ok(IndexedOut { tmp: tmp.to_path_buf(), w, header_len, at: header_len as u64 })
    }

    /// Append `bytes` to the body; returns their offset in the file.
    pub fn append(&mut self, bytes: &[u8]) -> Result<u64, Error> {
        self.w.write_all(bytes).map_err(io(&self.tmp))?;
        let at = self.at;
        self.at += bytes.len() as u64;
        Ok(at)
    }

    /// The offset the next appended bytes go to.
    pub fn at(&self) -> u64 {
        self.at
    }

    /// Write `index` after the body, then the header `header(tail)` over the zeros at the
    /// start (it must be as long as they are), and fsync. Returns the file's length.
    pub fn finish<H: AsRef<[u8]>>(mut self, index: &[u8], header: impl FnOnce(IndexTail) -> H) -> Result<u64, Error> {
        let index_at = self.append(index)?;
        let tail = IndexTail { index_at, len: self.at, index_sum: checksum(index) };
        let header = header(tail);
        let tmp = self.tmp;
        assert_eq!(
            header.as_ref().len(),
            self.header_len,
            "the header of {} has the length kept for it",
            tmp.display()
        );
        let mut f = self.w.into_inner().map_err(|e| Error::Io { path: tmp.clone(), source: e.into_error() })?;
        f.seek(std::io::SeekFrom::Start(0)).map_err(io(&tmp))?;
        f.write_all(header.as_ref()).map_err(io(&tmp))?;
        fault_point("write").map_err(io(&tmp))?;
        f.sync_all().map_err(io(&tmp))?;
        Ok(tail.len)
    }
}

/// What a header written by [`IndexedOut::finish`] says of the file's end.
#[derive(Clone, Copy, Debug)]
pub struct IndexTail {
    /// Where the index begins.
    pub index_at: u64,
    /// The file's length (the index ends it).
    pub len: u64,
    /// The index's checksum.
    pub index_sum: u64,
}

/// `r`, having removed the temporary file `tmp` if `r` is an error.
pub fn remove_on_error<T>(tmp: &Path, r: Result<T, Error>) -> Result<T, Error> {
    if r.is_err() {
        let _ = std::fs::remove_file(tmp);
    }
    r
}

/// Where a header says the index of a file of blocks is ([`read_index`]).
#[derive(Clone, Copy, Debug)]
pub struct IndexAt {
    /// The length of the header, before which no index can begin.
    pub header_len: u64,
    /// The file's length as its header says it.
    pub stated_len: u64,
    /// The index's offset.
    pub at: u64,
    /// The index's length, from the header's counts.
    pub len: u64,
    /// The index's checksum.
    pub sum: u64,
}

impl IndexAt {
    /// Where the 80-byte header of a first-depth, BFS or node-layer file says its index
    /// is (offset at byte 40, file length at 48, index checksum at 56), the index being
    /// `len` bytes long by the header's counts.
    pub fn in_80_byte_header(h: &[u8], len: u64) -> IndexAt {
        IndexAt { header_len: 80, stated_len: le_u64(h, 48), at: le_u64(h, 40), len, sum: le_u64(h, 56) }
    }
}

/// Read and check the block index of `file` (`file_len` bytes long), where its header
/// says it is: the file must be as long as the header says, the index must end it, and
/// its checksum must hold. The caller checks the entries.
pub fn read_index(file: &mut File, path: &Path, kind: FileKind, file_len: u64, i: IndexAt) -> Result<Vec<u8>, Error> {
    if i.stated_len != file_len {
        return Err(corrupt(
            path,
            format!("{file_len} bytes long, its header says {} (truncated or extended)", i.stated_len),
        ));
    }
    if i.at < i.header_len || i.at.checked_add(i.len) != Some(file_len) {
        return Err(corrupt(path, "the block index does not end the file"));
    }
    let mut index = vec![0u8; i.len as usize];
    file.seek(std::io::SeekFrom::Start(i.at)).map_err(io(path))?;
    file.read_exact(&mut index).map_err(io(path))?;
    if checksum(&index) != i.sum {
        return Err(checksum_mismatch(path, kind, "block index", None, Some((i.at, file_len))));
    }
    Ok(index)
}

/// Open `path` if it exists and read and check its `N`-byte header's shared start
/// ([`check_header`]). Returns the file, the header and the file's length.
pub fn open_with_header<const N: usize>(
    path: &Path,
    magic: &[u8; 8],
    version: u32,
    kind: FileKind,
    geom: &crate::game::Geometry,
) -> Result<Option<(File, [u8; N], u64)>, Error> {
    let Some(mut file) = open_existing(path)? else { return Ok(None) };
    let len = file.metadata().map_err(io(path))?.len();
    if len < N as u64 {
        return Err(corrupt(path, format!("{len} bytes, shorter than its {N}-byte header")));
    }
    let mut h = [0u8; N];
    file.read_exact(&mut h).map_err(io(path))?;
    check_header(path, &h, magic, version, kind, geom)?;
    Ok(Some((file, h, len)))
}

/// Where the body of a file written by [`write_streamed`] goes: each block is written
/// as it comes and the disk is asked to start writing it at once
/// ([`crate::sys::start_writeback`]), so the fsync at the end waits for the last block
/// only. Give it large blocks (megabytes): there is no buffer of its own.
pub struct BlockOut {
    file: File,
    path: PathBuf,
    written: u64,
}

impl BlockOut {
    /// Write `bytes`, the next part of the body.
    pub fn block(&mut self, bytes: &[u8]) -> Result<(), Error> {
        self.file.write_all(bytes).map_err(io(&self.path))?;
        crate::sys::start_writeback(&self.file);
        self.written += bytes.len() as u64;
        Ok(())
    }

    /// Bytes of the body written so far.
    pub fn written(&self) -> u64 {
        self.written
    }
}

/// Write `path` atomically when its header depends on the whole body (its length, its
/// checksum): `header_len` zero bytes are written first, then `body` streams the body
/// through a [`BlockOut`] and returns the header, which is written over the zeros; the
/// file is then fsynced and renamed over `path` ([`rename_durably`]). The body never has
/// to be in memory whole. Returns the file's length. The solver's phase value files and
/// the checkpoint of the breadth-first search by positions are written this way.
pub fn write_streamed(
    path: &Path,
    header_len: usize,
    body: impl FnOnce(&mut BlockOut) -> Result<Vec<u8>, Error>,
) -> Result<u64, Error> {
    let tmp = temp_name(path);
    fault_point("create").map_err(io(&tmp))?;
    let mut file = File::create(&tmp).map_err(io(&tmp))?;
    file.write_all(&vec![0u8; header_len]).map_err(io(&tmp))?;
    let mut out = BlockOut { file, path: tmp.clone(), written: 0 };
    let header = body(&mut out)?;
    assert_eq!(header.len(), header_len, "the header of {} has the length it was given", path.display());
    let BlockOut { mut file, written, .. } = out;
    file.seek(std::io::SeekFrom::Start(0)).map_err(io(&tmp))?;
    file.write_all(&header).map_err(io(&tmp))?;
    file.sync_all().map_err(io(&tmp))?;
    drop(file);
    rename_durably(&tmp, path)?;
    Ok(header_len as u64 + written)
}

/// Rename `from` to `to` (the last step of every atomic write) and fsync the directory.
pub fn rename_durably(from: &Path, to: &Path) -> Result<(), Error> {
    fault_point("rename").map_err(io(to))?;
    std::fs::rename(from, to).map_err(io(to))?;
    sync_dir(to.parent().unwrap_or(Path::new(".")))
}

/// What [`fault_point`] does when its turn comes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Fault {
    /// Fail the step with an I/O error.
    Error,
    /// Fail the step as a full disk does (ENOSPC).
    Full,
    /// End the process on the spot, as a crash or SIGKILL would (no cleanup runs).
    Abort,
}

/// The fault to inject and at which step, from `OSTLEDB_FAULT` (read once).
fn fault_plan() -> Option<(u64, Fault)> {
    static PLAN: std::sync::OnceLock<Option<(u64, Fault)>> = std::sync::OnceLock::new();
    *PLAN.get_or_init(|| {
        let v = std::env::var("OSTLEDB_FAULT").ok()?;
        let (n, kind) = v.split_once(':').unwrap_or((&v, "error"));
        let kind = match kind {
            "error" => Fault::Error,
            "enospc" => Fault::Full,
            "abort" => Fault::Abort,
            _ => return None,
        };
        Some((n.parse().ok()?, kind))
    })
}

static FAULT_STEPS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// The write steps this process has reached, counted while `OSTLEDB_FAULT` is set (the
/// crash tests set it to a step never reached to count them).
pub fn fault_steps_reached() -> u64 {
    FAULT_STEPS.load(std::sync::atomic::Ordering::SeqCst)
}

/// A write step, numbered in the order a process reaches them. The crash tests set
/// `OSTLEDB_FAULT=N` (or `N:enospc`, `N:abort`) to make step `N` fail with an I/O
/// error, fail as on a full disk, or end the process there; unset, this does nothing.
/// Every step of writing a database calls it: creating, filling and renaming each
/// file, making and switching generations, removing leftovers.
pub fn fault_point(step: &str) -> std::io::Result<()> {
    let Some((at, kind)) = fault_plan() else { return Ok(()) };
    let n = FAULT_STEPS.fetch_add(1, std::sync::atomic::Ordering::SeqCst) + 1;
    if n != at {
        return Ok(());
    }
    match kind {
        Fault::Error => Err(std::io::Error::other(format!("injected fault at write step {n} ({step})"))),
        Fault::Full => Err(std::io::Error::from_raw_os_error(28)),
        Fault::Abort => {
            eprintln!("ostledb: injected crash at write step {n} ({step})");
            std::process::abort()
        }
    }
}

/// Fsync a directory, so that a rename inside it is durable.
pub fn sync_dir(dir: &Path) -> Result<(), Error> {
    let dir = if dir.as_os_str().is_empty() { Path::new(".") } else { dir };
    File::open(dir).and_then(|d| d.sync_all()).map_err(io(dir))
}

/// Open the file at `path` for reading: a regular file once symlinks are followed, and
/// nothing else. A FIFO in its place would block every reader until some writer came,
/// a device such as `/dev/zero` never ends, so either is refused before it is read, and
/// without blocking: it is looked at before it is opened, and opened non-blocking in
/// case it changed in between (a regular file reads the same either way). The refusal
/// is an I/O error of kind `InvalidInput` that says what is there; a missing file is
/// `NotFound`, as from [`File::open`]. Every reader of a database file opens it here.
pub fn open_regular(path: &Path) -> std::io::Result<File> {
    is_regular(&std::fs::metadata(path)?)?;
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::custom_flags(&mut options, libc::O_NONBLOCK);
    let file = options.open(path)?;
    is_regular(&file.metadata()?)?;
    Ok(file)
}

/// [`open_regular`], with `Ok(None)` for a file that does not exist and errors naming
/// `path`.
pub fn open_existing(path: &Path) -> Result<Option<File>, Error> {
    match open_regular(path) {
        Ok(f) => Ok(Some(f)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(io(path)(e)),
    }
}

/// `Ok` for the metadata of a regular file, else an `InvalidInput` error saying what it is.
fn is_regular(m: &std::fs::Metadata) -> std::io::Result<()> {
    if m.is_file() {
        return Ok(());
    }
    let t = m.file_type();
    let what = if t.is_dir() { "a directory" } else { special_file_name(t) };
    Err(std::io::Error::new(
        std::io::ErrorKind::InvalidInput,
        format!("{what}, not a regular file; ostledb reads only regular files (a symbolic link to one is fine)"),
    ))
}

/// What kind of special file `t` is, in a sentence: "a FIFO (named pipe)".
fn special_file_name(t: std::fs::FileType) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if t.is_fifo() {
            return "a FIFO (named pipe)";
        }
        if t.is_char_device() {
            return "a character device";
        }
        if t.is_block_device() {
            return "a block device";
        }
        if t.is_socket() {
            return "a socket";
        }
    }
    let _ = t;
    "a special file"
}

/// The bytes of the regular file at `path` ([`open_regular`]), reading at most `cap + 1`
/// of them: a result longer than `cap` means the file is longer than `cap` (and the
/// rest was not read), which the caller refuses. No file is read without a bound.
pub fn read_capped(path: &Path, cap: u64) -> std::io::Result<Vec<u8>> {
    let f = open_regular(path)?;
    let mut bytes = Vec::new();
    f.take(cap.saturating_add(1)).read_to_end(&mut bytes)?;
    Ok(bytes)
}

/// Read the `frame.len()` bytes at `offset` of `file` (at `path`, for errors) into
/// `frame`, and say whether their XXH3-64 is `sum`: the one way a checksummed block of a
/// BFS or first-depth file is read.
pub fn read_summed(file: &File, path: &Path, offset: u64, frame: &mut [u8], sum: u64) -> Result<bool, Error> {
    use std::os::unix::fs::FileExt;
    file.read_exact_at(frame, offset).map_err(io(path))?;
    Ok(checksum(frame) == sum)
}

/// Write all of `bytes`.
pub fn put(w: &mut impl Write, bytes: &[u8]) -> std::io::Result<()> {
    w.write_all(bytes)
}

/// The format version of a header (bytes 8..12), checked against the `versions` this
/// build reads; `kind` names the kind of file in errors. The first 8 bytes must be
/// `magic` ([`Error::BadMagic`] if not).
///
/// A version outside `versions` is told apart from a damaged version field by the
/// file's own checksum: `intact(h)` says whether the header `h` (with a version this
/// build reads in its version field) passes the checksum that covers that field, in the
/// layout of that version (always false where no checksum covers it). If putting back
/// one of `versions` makes it pass, the field was altered: [`Error::ChecksumMismatch`]
/// in the header. Otherwise a version above the range is [`Error::NewerFormat`] (the
/// file may be intact in a layout this build does not know: never call a newer file
/// damaged, that advice would delete it) and one below it is [`Error::Corrupt`]: version
/// 0, which no ostledb writes, as damage, and any other as an earlier build's format this
/// build no longer reads (such as a group checkpoint of the previous solver).
pub fn header_version(
    path: &Path,
    h: &[u8],
    magic: &[u8; 8],
    versions: std::ops::RangeInclusive<u32>,
    kind: FileKind,
    intact: impl Fn(&[u8]) -> bool,
) -> Result<u32, Error> {
    if h.len() < 8 || h[0..8] != *magic {
        return Err(Error::BadMagic { path: path.to_path_buf(), kind });
    }
    if h.len() < 12 {
        return Err(corrupt(path, format!("{} bytes, shorter than its header", h.len())));
    }
    let found = le_u32(h, 8);
    if versions.contains(&found) {
        return Ok(found);
    }
    let altered = versions.clone().any(|v| {
        let mut restored = h.to_vec();
        restored[8..12].copy_from_slice(&v.to_le_bytes());
        intact(&restored)
    });
    if altered {
        return Err(checksum_mismatch(path, kind, "header", None, None));
    }
    if found > *versions.end() {
        return Err(Error::NewerFormat { path: path.to_path_buf(), kind, found, max: *versions.end() });
    }
    if found >= 1 {
        return Err(corrupt(
            path,
            format!(
                "format v{found}, written by an earlier ostledb, which this build no longer reads (it reads \
                 {}..={}): finish with the build that wrote it",
                versions.start(),
                versions.end()
            ),
        ));
    }
    Err(corrupt(
        path,
        format!(
            "format version {found}, which no ostledb writes (this build reads {}..={})",
            versions.start(),
            versions.end()
        ),
    ))
}

/// True when the last 8 bytes of `h` are the checksum of the bytes before them (the
/// header checksum of every header that has one at its end).
pub fn ends_with_checksum(h: &[u8]) -> bool {
    h.len() >= 8 && checksum(&h[..h.len() - 8]) == le_u64(h, h.len() - 8)
}

/// Check `magic`, the one format `version` this build reads and the header checksum in
/// the last 8 bytes of `h` (XXH3-64 of the bytes before it). `kind` names the kind of
/// file in errors.
pub fn check_version_and_sum(
    path: &Path,
    h: &[u8],
    magic: &[u8; 8],
    version: u32,
    kind: FileKind,
) -> Result<(), Error> {
    header_version(path, h, magic, version..=version, kind, ends_with_checksum)?;
    if !ends_with_checksum(h) {
        return Err(checksum_mismatch(path, kind, "header", None, None));
    }
    Ok(())
}

/// Check the start every checksummed header shares: [`check_version_and_sum`], then the
/// board (bytes 12 and 13). `kind` names the kind of file in errors.
pub fn check_header(
    path: &Path,
    h: &[u8],
    magic: &[u8; 8],
    version: u32,
    kind: FileKind,
    geom: &crate::game::Geometry,
) -> Result<(), Error> {
    check_version_and_sum(path, h, magic, version, kind)?;
    if (h[12] as u32, h[13] as u32) != (geom.side(), geom.start_pieces()) {
        return Err(corrupt(path, format!("made for a {}x{} board with {} pieces a side", h[12], h[12], h[13])));
    }
    Ok(())
}

/// Decompress one zstd frame of at most `capacity` bytes with this thread's
/// decompression context, made once per thread (making one costs about as much as
/// decoding a small block).
pub fn decompress(frame: &[u8], capacity: usize) -> std::io::Result<Vec<u8>> {
    thread_local! {
        static CONTEXT: std::cell::RefCell<Option<zstd::bulk::Decompressor<'static>>> = const { std::cell::RefCell::new(None) };
    }
    CONTEXT.with(|c| {
        let mut c = c.borrow_mut();
        if c.is_none() {
            *c = Some(zstd::bulk::Decompressor::new()?);
        }
        c.as_mut().expect("made above").decompress(frame, capacity)
    })
}
