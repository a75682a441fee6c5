//! The database directory and who may change it.
//!
//! - **One writer at a time.** Every command that writes (`solve`, `pack`, `index`,
//!   `import`, `bfs --store`) holds [`WriteLock`]: an advisory lock (`flock`) on
//!   `ostledb.lock`, which the kernel drops when its process ends, however it ends, so a
//!   crash never leaves it stuck. A second writer is refused at once with the command
//!   holding it ([`Error::Locked`]). Within one process the lock is shared: the library
//!   functions that write each take it, and `solve` holds it across solving and packing.
//! - **Generations.** The value and key files live in a subdirectory `gen-N`, `N` being
//!   the metadata's generation (formats 1 and 2 have none: generation 0, files beside
//!   the metadata). A write builds a whole new generation beside the current one (files
//!   it does not change are hard-linked into it) and switches by replacing
//!   `ostledb.meta` with one rename, so that at every instant the directory is the old
//!   database or the new one ([`NewGeneration`]).
//! - **Readers never wait.** A [`Store`](crate::store::Store) holds a shared lock
//!   on `ostledb.readers` while it is open. A writer removes a superseded generation
//!   only when it can take that lock exclusively for a moment, i.e. when no reader has
//!   one open; otherwise the next writer removes it. What a crashed writer left
//!   (`*.tmp` files, a generation never switched to) is removed when the next writer
//!   takes the lock ([`remove_leftovers`]); `verify` lists what is left ([`unlisted`]).

use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, Weak};

use crate::error::{Error, FileKind, generation_name, generation_of, io};
use crate::file::{fault_point, sync_dir};
use crate::game::Phase;
use crate::game::node::Convention;
use crate::store::keys::Backend;
use crate::store::meta::{self, Meta};
use crate::store::values;

/// The writer lock's file.
pub const LOCK_FILE: &str = "ostledb.lock";
/// The file readers hold a shared lock on.
pub const READERS_FILE: &str = "ostledb.readers";

/// Where the value and key files of the database at `dir` described by `meta` are.
pub fn data_dir(dir: &Path, meta: &Meta) -> PathBuf {
    match meta.generation {
        0 => dir.to_path_buf(),
        n => dir.join(generation_name(n)),
    }
}

/// Where the value and key files of the database at `dir` are now: its current
/// generation, or `dir` itself when it has no metadata (yet).
pub fn current_data_dir(dir: &Path) -> Result<PathBuf, Error> {
    Ok(match meta::read(dir)? {
        Some(m) => data_dir(dir, &m),
        None => dir.to_path_buf(),
    })
}

/// The files of the database `meta` describes, relative to its data directory: a value
/// file per phase, then the key index files of each backend it lists.
pub fn listed_files(meta: &Meta) -> Vec<String> {
    let phases: Vec<Phase> = meta.phases.iter().map(|p| Phase::new(p.player as u32, p.opponent as u32)).collect();
    let mut names: Vec<String> = phases.iter().map(|&p| values::file_name(p)).collect();
    for b in &meta.backends {
        let Ok(b) = Backend::parse(b) else { continue };
        for &p in &phases {
            for f in b.files(p) {
                if !names.contains(&f) {
                    names.push(f);
                }
            }
        }
    }
    names
}

/// What holds the writer lock of one directory in this process.
struct Held {
    dir: PathBuf,
    file: Weak<LockFile>,
}

/// The open lock file; it says who holds it until it is closed, and then nobody.
#[derive(Debug)]
struct LockFile(File);

impl Drop for LockFile {
    fn drop(&mut self) {
        let _ = self.0.set_len(0);
    }
}

static HELD: Mutex<Vec<Held>> = Mutex::new(Vec::new());

/// The writer lock of a database directory (see the module documentation). Dropping
/// the last handle in the process releases it.
#[derive(Clone, Debug)]
pub struct WriteLock {
    dir: PathBuf,
    _file: Arc<LockFile>,
    leftovers: Arc<Vec<PathBuf>>,
}

impl WriteLock {
    /// Take the writer lock of `dir` (created if missing) for `command` (named to a
    /// second writer), or share it if this process holds it already. Taking it removes
    /// what a crashed writer left ([`WriteLock::leftovers`] lists it).
    pub fn acquire(dir: &Path, command: &str) -> Result<WriteLock, Error> {
        WriteLock::take(dir, command, true)
    }

    /// Take the writer lock of `dir` as [`WriteLock::acquire`] does, but remove nothing
    /// and accept a directory whose metadata cannot be read: for `ostledb repair`, which
    /// rebuilds that metadata from the value files a removal would take.
    pub fn acquire_for_repair(dir: &Path, command: &str) -> Result<WriteLock, Error> {
        WriteLock::take(dir, command, false)
    }

    fn take(dir: &Path, command: &str, clean: bool) -> Result<WriteLock, Error> {
        std::fs::create_dir_all(dir).map_err(io(dir))?;
        let key = dir.canonicalize().map_err(io(dir))?;
        let mut held = HELD.lock().unwrap_or_else(|e| e.into_inner());
        held.retain(|h| h.file.strong_count() > 0);
        if let Some(file) = held.iter().find(|h| h.dir == key).and_then(|h| h.file.upgrade()) {
            return Ok(WriteLock { dir: dir.to_path_buf(), _file: file, leftovers: Arc::new(Vec::new()) });
        }
        let path = dir.join(LOCK_FILE);
        let mut file =
            OpenOptions::new().read(true).write(true).create(true).truncate(false).open(&path).map_err(io(&path))?;
        // A lock just released can look held for a moment (a child process this one
        // forks holds its descriptors until it executes), so a few tries are made.
        let mut tries = 0;
        let locked = loop {
            match file.try_lock() {
                Err(std::fs::TryLockError::WouldBlock) if tries < 20 => {
                    tries += 1;
                    std::thread::sleep(std::time::Duration::from_millis(10));
                }
                r => break r,
            }
        };
        match locked {
            Ok(()) => {}
            Err(std::fs::TryLockError::WouldBlock) => {
                let mut holder = String::new();
                let _ = file.read_to_string(&mut holder);
                let holder = holder.trim();
                return Err(Error::Locked {
                    path: dir.to_path_buf(),
                    holder: if holder.is_empty() { "another process".into() } else { holder.to_string() },
                });
            }
            Err(std::fs::TryLockError::Error(e)) => return Err(Error::Io { path, source: e }),
        }
        // Who holds it, for the message a second writer gets (not needed for locking).
        let who = format!("`{command}`, process {}", std::process::id());
        let _ = file.set_len(0).and_then(|_| file.rewind()).and_then(|_| file.write_all(who.as_bytes()));
        let file = Arc::new(LockFile(file));
        held.push(Held { dir: key, file: Arc::downgrade(&file) });
        drop(held);
        let leftovers = if clean { remove_leftovers(dir)? } else { Vec::new() };
        Ok(WriteLock { dir: dir.to_path_buf(), _file: file, leftovers: Arc::new(leftovers) })
    }

    /// The database directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// What taking the lock removed: files and generations a crashed writer left.
    pub fn leftovers(&self) -> &[PathBuf] {
        &self.leftovers
    }
}

/// A reader's shared lock on a database directory (see the module documentation); a
/// directory where it cannot be taken (read-only) needs none, as no writer can run.
#[derive(Debug)]
pub struct ReadLock(#[allow(dead_code)] Option<File>);

impl ReadLock {
    /// Take the shared lock of `dir`. It waits only while a writer removes superseded
    /// files (milliseconds).
    pub fn acquire(dir: &Path) -> ReadLock {
        let path = dir.join(READERS_FILE);
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&path)
            .or_else(|_| File::open(&path));
        ReadLock(file.ok().filter(|f| f.lock_shared().is_ok()))
    }
}

/// Run `f` while no reader has the database at `dir` open; `Ok(false)` (without
/// running it) when one has.
fn without_readers(dir: &Path, f: impl FnOnce() -> Result<(), Error>) -> Result<bool, Error> {
    let path = dir.join(READERS_FILE);
    let file = OpenOptions::new().read(true).write(true).create(true).truncate(false).open(&path).map_err(io(&path))?;
    match file.try_lock() {
        Ok(()) => {
            f()?;
            Ok(true)
        }
        Err(std::fs::TryLockError::WouldBlock) => Ok(false),
        Err(std::fs::TryLockError::Error(e)) => Err(Error::Io { path, source: e }),
    }
}

/// Remove a file or a directory tree.
fn remove(path: &Path) -> Result<(), Error> {
    fault_point("remove").map_err(io(path))?;
    let r = if path.is_dir() { std::fs::remove_dir_all(path) } else { std::fs::remove_file(path) };
    match r {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(Error::Io { path: path.to_path_buf(), source: e }),
        _ => Ok(()),
    }
}

/// Names of the entries of `dir`, sorted (none if it cannot be listed).
fn entries(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .map(|d| d.flatten().map(|e| e.file_name().to_string_lossy().into_owned()).collect())
        .unwrap_or_default();
    v.sort();
    v
}

/// True for the names the value and key files of generation 0 have.
fn is_generation_zero_file(name: &str) -> bool {
    let phase_file = |rest: &str, ext: &str| {
        rest.strip_suffix(ext).and_then(|ab| ab.split_once('-')).is_some_and(|(a, b)| {
            !a.is_empty() && !b.is_empty() && a.bytes().chain(b.bytes()).all(|c| c.is_ascii_digit())
        })
    };
    name == "keys.sled"
        || name.strip_prefix("values-").is_some_and(|r| phase_file(r, ".zst"))
        || name.strip_prefix("keys-").is_some_and(|r| phase_file(r, ".sorted") || phase_file(r, ".hash"))
}

/// The metadata of the database at `dir` for a writer: `Ok(None)` when there is none
/// and no value file lies where only a lost metadata file could have named it, else
/// [`Error::WriteRefused`] where the metadata cannot be read (damaged, of a newer
/// format, unreadable) or names nothing while value files wait in a generation that no
/// solver's phase file backs: a write then could remove the only copy of those values.
pub fn metadata_for_writing(dir: &Path) -> Result<Option<Meta>, Error> {
    let repair = format!(
        "`ostledb repair --db {}` rebuilds the metadata from the value files' own headers (`ostledb verify` then checks every file)",
        dir.display()
    );
    let meta = match meta::read(dir) {
        Ok(m) => m,
        Err(e @ Error::NewerFormat { .. }) => {
            return Err(Error::WriteRefused {
                path: dir.to_path_buf(),
                reason: format!("its metadata cannot be read by this build ({e})"),
                advice: "Write to it with the newer ostledb that made it.".into(),
            });
        }
        Err(e) => {
            return Err(Error::WriteRefused {
                path: dir.to_path_buf(),
                reason: format!(
                    "its metadata cannot be read, so which files are the database is not known ({e}), and a write would remove the value files as an interrupted write's"
                ),
                advice: format!("Run `ostledb repair --db {}` first.", dir.display()),
            });
        }
    };
    if meta.is_none() {
        for name in entries(dir) {
            let data = match generation_of(&name) {
                Some(_) => dir.join(&name),
                None if is_generation_zero_file(&name) && name.starts_with("values-") => dir.to_path_buf(),
                None => continue,
            };
            let unbacked = entries(&data).into_iter().find(|f| {
                FileKind::of_path(Path::new(f)) == Some(FileKind::Values)
                    && !dir.join(format!("phase-{}.vals", &f["values-".len()..f.len() - ".zst".len()])).is_file()
            });
            if let Some(f) = unbacked {
                return Err(Error::WriteRefused {
                    path: dir.to_path_buf(),
                    reason: format!(
                        "it has no metadata file ({}), but {} holds values that no solver's phase file backs",
                        meta::FILE,
                        data.join(f).display()
                    ),
                    advice: format!(
                        "If the metadata was lost, run {repair}; if they are what an interrupted import or pack left, remove {}.",
                        if data == dir {
                            data.join("values-*.zst").display().to_string()
                        } else {
                            data.display().to_string()
                        }
                    ),
                });
            }
        }
    }
    Ok(meta)
}

/// Remove what a writer that stopped before switching left in the database at `dir`:
/// `*.tmp` files, generations newer than the current one, and, when no reader has the
/// database open, superseded generations (and the files of generation 0 once a later
/// one is current). A generation is removed only when a readable metadata file names
/// another one: without metadata nothing but `*.tmp` files is, and where the metadata
/// cannot be read nothing is, and the write is refused ([`metadata_for_writing`]).
/// Called with the writer lock held; returns what it removed.
pub fn remove_leftovers(dir: &Path) -> Result<Vec<PathBuf>, Error> {
    let meta = metadata_for_writing(dir)?;
    let current = meta.as_ref().map_or(0, |m| m.generation);
    let mut removed = Vec::new();
    let mut old = Vec::new();
    for name in entries(dir) {
        let path = dir.join(&name);
        if name.ends_with(".tmp") {
            remove(&path)?;
            removed.push(path);
        } else if meta.is_none() {
            // Nothing names a generation: each stays until a metadata file names another.
        } else if let Some(n) = generation_of(&name) {
            if n > current {
                remove(&path)?;
                removed.push(path);
            } else if n < current {
                old.push(path);
            } else {
                for inner in entries(&path).into_iter().filter(|n| n.ends_with(".tmp")) {
                    remove(&path.join(&inner))?;
                    removed.push(path.join(inner));
                }
            }
        } else if current > 0 && is_generation_zero_file(&name) {
            old.push(path);
        }
    }
    if !old.is_empty() && without_readers(dir, || old.iter().try_for_each(|p| remove(p)))? {
        removed.extend(old);
    }
    if !removed.is_empty() {
        sync_dir(dir)?;
    }
    Ok(removed)
}

/// Entries of the database at `dir` that are not part of it: in the directory, what is
/// neither the metadata, the locks, a BFS file (node layers included), the solver's or a
/// search's working files nor the
/// current generation; inside the current generation, what the metadata does not list.
/// A writer removes them ([`remove_leftovers`]); until then they only take space.
pub fn unlisted(dir: &Path, meta: &Meta) -> Vec<PathBuf> {
    let listed = listed_files(meta);
    let bfs: Vec<String> = [Convention::Published, Convention::Strict]
        .iter()
        .map(|&c| crate::bfs_depths::node_keys::file_name(c))
        .collect();
    let current = (meta.generation > 0).then(|| generation_name(meta.generation));
    let mut out = Vec::new();
    for name in entries(dir) {
        let known = name == meta::FILE
            || name == LOCK_FILE
            || name == READERS_FILE
            || bfs.contains(&name)
            || name == crate::bfs_depths::first_depths::FILE_NAME
            || name == crate::bfs_depths::node_layers::DIR_NAME
            || name == crate::bfs_depths::node_layers::PARTIAL_DIR_NAME
            || (name.starts_with("phase-") && name.ends_with(".vals"))
            || (name.starts_with("group-") && (name.ends_with(".ckpt") || name.ends_with(".events")))
            || FileKind::of_path(Path::new(&name)) == Some(FileKind::BfsCheckpoint)
            || current.as_ref() == Some(&name)
            || (meta.generation == 0 && listed.contains(&name));
        if !known {
            out.push(dir.join(name));
        }
    }
    if let Some(g) = current {
        let gdir = dir.join(g);
        out.extend(entries(&gdir).into_iter().filter(|n| !listed.contains(n)).map(|n| gdir.join(n)));
    }
    out
}

/// Hard-link `from` (a file or a directory tree) to `to`, copying where a link cannot
/// be made.
fn link_tree(from: &Path, to: &Path) -> Result<(), Error> {
    fault_point("link").map_err(io(to))?;
    if from.is_dir() {
        std::fs::create_dir(to).map_err(io(to))?;
        for name in entries(from) {
            link_tree(&from.join(&name), &to.join(&name))?;
        }
        return Ok(());
    }
    std::fs::hard_link(from, to).or_else(|_| std::fs::copy(from, to).map(|_| ())).map_err(io(to))
}

/// A generation being built (see the module documentation): its files are written
/// into [`NewGeneration::path`], and [`NewGeneration::commit`] makes it the database.
/// Dropped without commit (a write that failed), it is removed; after a crash, the next
/// writer removes it.
#[derive(Debug)]
pub struct NewGeneration {
    lock: WriteLock,
    number: u64,
    path: PathBuf,
    committed: bool,
}

impl Drop for NewGeneration {
    fn drop(&mut self) {
        if !self.committed {
            let _ = std::fs::remove_dir_all(&self.path);
        }
    }
}

impl NewGeneration {
    /// Start the generation after the current one (and after any left over).
    pub fn begin(lock: &WriteLock) -> Result<NewGeneration, Error> {
        let dir = lock.dir();
        let current = meta::read(dir)?.map_or(0, |m| m.generation);
        let newest = entries(dir).iter().filter_map(|n| generation_of(n)).max().unwrap_or(0);
        let number = current.max(newest) + 1;
        let path = dir.join(generation_name(number));
        fault_point("create generation").map_err(io(&path))?;
        std::fs::create_dir(&path).map_err(io(&path))?;
        Ok(NewGeneration { lock: lock.clone(), number, path, committed: false })
    }

    /// The directory its files go to.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Take the files `names` of the current generation (at `from`) over unchanged.
    pub fn link(&self, from: &Path, names: &[String]) -> Result<(), Error> {
        for name in names {
            link_tree(&from.join(name), &self.path.join(name))?;
        }
        Ok(())
    }

    /// Make this generation the database: write `meta` (its format and generation set
    /// here) over the old metadata with one rename, then remove superseded files if no
    /// reader has them open.
    pub fn commit(mut self, meta: &mut Meta) -> Result<(), Error> {
        meta.format = meta::VERSION;
        meta.generation = self.number;
        sync_dir(&self.path)?;
        meta::write(self.lock.dir(), meta)?;
        self.committed = true;
        // The write is done: what cannot be removed now, the next writer removes.
        let _ = remove_leftovers(self.lock.dir());
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generation_names_round_trip_and_nothing_else_is_one() {
        for n in [1u64, 7, 12345] {
            assert_eq!(generation_of(&generation_name(n)), Some(n));
        }
        for bad in ["gen-", "gen-0", "gen-01", "gen-1a", "gen--1", "generation-1", "values-4-4.zst"] {
            assert_eq!(generation_of(bad), None, "{bad}");
        }
    }

    #[test]
    fn generation_zero_files_are_told_by_name() {
        for f in ["values-4-4.zst", "keys-3-4.sorted", "keys-4-4.hash", "keys.sled"] {
            assert!(is_generation_zero_file(f), "{f}");
        }
        for f in ["values-4-4.zst.tmp", "phase-4-4.vals", "bfs-published.zst", "values-a-4.zst", "notes.txt"] {
            assert!(!is_generation_zero_file(f), "{f}");
        }
    }

    #[test]
    fn a_second_writer_is_refused_with_the_holder_named_and_a_reader_blocks_removal() {
        let dir = std::env::temp_dir().join(format!("ostledb-lock-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let first = WriteLock::acquire(&dir, "ostledb pack").unwrap();
        // The same process shares it.
        let again = WriteLock::acquire(&dir, "ostledb index").unwrap();
        drop(again);
        // Another open file description (as another process would have) is refused.
        let f = File::open(dir.join(LOCK_FILE)).unwrap();
        assert!(matches!(f.try_lock(), Err(std::fs::TryLockError::WouldBlock)));
        let mut who = String::new();
        File::open(dir.join(LOCK_FILE)).unwrap().read_to_string(&mut who).unwrap();
        assert!(who.contains("ostledb pack") && who.contains(&std::process::id().to_string()), "{who}");
        drop(first);
        assert!(f.try_lock().is_ok(), "released when the last handle goes");
        drop(f);
        // A reader's shared lock keeps a writer from removing what it may use.
        let reader = ReadLock::acquire(&dir);
        assert!(!without_readers(&dir, || Ok(())).unwrap());
        drop(reader);
        assert!(without_readers(&dir, || Ok(())).unwrap());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
