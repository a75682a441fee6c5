//! The `sled` backend: a baseline to measure the others against. One sled database, the
//! directory `keys.sled` in the database directory, holds one tree per phase.
//!
//! ```text
//! tree name      "A-B" (ASCII, e.g. "4-4"): A pieces for the side to move, B for the other
//! entry key      the canonical code, u64 as 8 big-endian bytes (so sled's byte order is
//!                numeric order)
//! entry value    the position's index, u64 as 8 little-endian bytes
//! marker key     8 bytes 0xff (above every code: codes are below 2^55)
//! marker value   16 bytes: count u64 LE, format version u32 LE = 1, board side u8,
//!                start pieces u8, A u8, B u8
//! ```
//!
//! sled cannot replace one tree atomically, so `build` drops the phase's tree, fills it,
//! flushes, and only then inserts the marker and flushes again. A tree without its marker
//! is a build that was interrupted: opening or checking it is an [`Error::Corrupt`].
//!
//! [`KeyIndex::key_bytes`] is the size of the whole sled directory shared out between
//! its complete trees in proportion to their counts (sled has no per-tree size).

use std::path::{Path, PathBuf};

use crate::error::{Error, corrupt};
use crate::index::PhaseIndex;

use super::{Backend, KeyIndex, keyfile};

/// The key of the count marker in each tree.
const MARKER: [u8; 8] = [0xff; 8];
/// The format version in the marker.
const VERSION: u32 = 1;
/// The page cache of the bench's subset tree (sled's default is 1 GB).
const SUBSET_CACHE: u64 = 256 << 20;
/// Entries inserted per sled batch.
const BATCH: usize = 1 << 14;

/// The tree of one phase in `keys.sled`.
pub struct Sled {
    // Keeps the database open as long as the tree is used.
    _db: sled::Db,
    tree: sled::Tree,
    n: u64,
    key_bytes: u64,
    path: PathBuf,
}

impl std::fmt::Debug for Sled {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Sled").field("path", &self.path).field("n", &self.n).finish()
    }
}

/// The sled directory in `dir`.
fn db_path(dir: &Path, index: &PhaseIndex) -> PathBuf {
    dir.join(&Backend::Sled.files(index.phase())[0])
}

/// The tree name of the phase of `index`.
fn tree_name(index: &PhaseIndex) -> String {
    format!("{}-{}", index.phase().player, index.phase().opponent)
}

/// A sled error on the database at `path`.
fn sled_error(path: &Path) -> impl Fn(sled::Error) -> Error + '_ {
    move |e| match e {
        sled::Error::Io(source) => Error::Io { path: path.to_path_buf(), source },
        e => corrupt(path, format!("sled: {e}")),
    }
}

/// The marker value for the phase of `index`.
fn marker_value(index: &PhaseIndex) -> [u8; 16] {
    let g = index.geometry();
    let mut v = [0u8; 16];
    v[0..8].copy_from_slice(&index.len().to_le_bytes());
    v[8..12].copy_from_slice(&VERSION.to_le_bytes());
    v[12] = g.side() as u8;
    v[13] = g.start_pieces() as u8;
    v[14] = index.phase().player as u8;
    v[15] = index.phase().opponent as u8;
    v
}

/// Open (or create) the database at `path`. sled allows one open handle per directory
/// and process (a file lock), while a database opens one key index per phase: handles
/// are shared through a process-wide table (a `sled::Db` is a shared handle). sled also
/// releases its lock from background threads some milliseconds after the last handle of
/// another process is dropped, so a lock held elsewhere is retried for up to five seconds.
fn open_sled(path: &Path) -> Result<sled::Db, Error> {
    use std::collections::HashMap;
    use std::sync::{Mutex, OnceLock};
    static OPEN: OnceLock<Mutex<HashMap<PathBuf, sled::Db>>> = OnceLock::new();
    let key = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
    let mut open = OPEN.get_or_init(|| Mutex::new(HashMap::new())).lock().unwrap_or_else(|p| p.into_inner());
    // A handle whose directory was removed and made again since is stale: reopen.
    if let Some(db) = open.get(&key) {
        if key.join("db").exists() {
            return Ok(db.clone());
        }
        open.remove(&key);
    }
    let mut tries = 0;
    loop {
        match sled::open(path) {
            Err(sled::Error::Io(e)) if tries < 100 && e.to_string().contains("could not acquire lock") => {
                tries += 1;
                std::thread::sleep(std::time::Duration::from_millis(50));
            }
            Ok(db) => {
                let key = std::fs::canonicalize(path).unwrap_or(key);
                open.insert(key, db.clone());
                return Ok(db);
            }
            Err(e) => return Err(sled_error(path)(e)),
        }
    }
}

/// Open the database at `path` when it exists (sled would create it).
fn open_db(path: &Path) -> Result<sled::Db, Error> {
    if !path.is_dir() {
        let source = std::io::Error::new(std::io::ErrorKind::NotFound, "no sled key database");
        return Err(Error::Io { path: path.to_path_buf(), source });
    }
    open_sled(path)
}

/// Open the phase's tree and check its marker; the tree and its count.
fn open_tree(db: &sled::Db, path: &Path, index: &PhaseIndex) -> Result<sled::Tree, Error> {
    let name = tree_name(index);
    if !db.tree_names().iter().any(|t| t.as_ref() == name.as_bytes()) {
        let source = std::io::Error::new(std::io::ErrorKind::NotFound, format!("no tree {name}"));
        return Err(Error::Io { path: path.to_path_buf(), source });
    }
    let tree = db.open_tree(&name).map_err(sled_error(path))?;
    let want = marker_value(index);
    match tree.get(MARKER).map_err(sled_error(path))? {
        None => Err(corrupt(path, format!("tree {name} has no count marker: its build was interrupted"))),
        Some(v) if v.as_ref() != want => {
            Err(corrupt(path, format!("tree {name}: marker {:02x?}, expected {want:02x?}", v.as_ref())))
        }
        Some(_) => Ok(tree),
    }
}

/// Build the phase's tree in `dir/keys.sled` (replacing an old or half-built one).
pub(super) fn build(dir: &Path, index: &PhaseIndex) -> Result<(), Error> {
    let path = db_path(dir, index);
    let db = open_sled(&path)?;
    let name = tree_name(index);
    db.drop_tree(&name).map_err(sled_error(&path))?;
    let tree = db.open_tree(&name).map_err(sled_error(&path))?;
    let mut next = 0u64;
    keyfile::enumerate(index, |keys| {
        for part in keys.chunks(BATCH) {
            let mut batch = sled::Batch::default();
            for &k in part {
                batch.insert(&k.to_be_bytes(), &next.to_le_bytes());
                next += 1;
            }
            tree.apply_batch(batch)?;
        }
        Ok(())
    })
    .map_err(sled_error(&path))?;
    tree.flush().map_err(sled_error(&path))?;
    tree.insert(MARKER, &marker_value(index)).map_err(sled_error(&path))?;
    tree.flush().map_err(sled_error(&path))?;
    db.flush().map_err(sled_error(&path))?;
    Ok(())
}

/// Verify the phase's tree: the marker, then every entry in order (key = the code of the
/// position with that index, value = the index), then the count. Bytes checked: 16 per
/// entry (key and value).
pub(super) fn check(dir: &Path, index: &PhaseIndex) -> Result<u64, Error> {
    let path = db_path(dir, index);
    let db = open_db(&path)?;
    let tree = open_tree(&db, &path, index)?;
    let name = tree_name(index);
    let n = index.len();
    let mut i = 0u64;
    for entry in tree.iter() {
        let (k, v) = entry.map_err(sled_error(&path))?;
        if k.as_ref() == MARKER {
            continue;
        }
        let (Ok(k), Ok(v)) = (<[u8; 8]>::try_from(k.as_ref()), <[u8; 8]>::try_from(v.as_ref())) else {
            return Err(corrupt(&path, format!("tree {name}: entry {i} is not 8 + 8 bytes")));
        };
        if i >= n {
            return Err(corrupt(&path, format!("tree {name}: more than {n} entries")));
        }
        let (code, value) = (u64::from_be_bytes(k), u64::from_le_bytes(v));
        let want = index.position_at(i).code();
        if code != want {
            return Err(corrupt(&path, format!("tree {name}: entry {i} has key {code}, expected {want}")));
        }
        if value != i {
            return Err(corrupt(&path, format!("tree {name}: key {code} has index {value}, expected {i}")));
        }
        i += 1;
    }
    if i != n {
        return Err(corrupt(&path, format!("tree {name}: {i} entries, phase {} has {n}", index.phase())));
    }
    Ok(16 * n)
}

/// A baseline for phases too large to copy into sled whole (the 160,900,185 keys of the
/// standard (4,4) at ~200 bytes per entry would be ~32 GB): a tree named `A-B-subset` in
/// `dir/keys-subset.sled` holding only `entries` (code, index), replaced if present, opened and
/// returned. Lookups of codes outside the subset answer `None`. No marker: this tree is a
/// scratch structure for `ostledb bench`, never part of a database.
pub(super) fn build_subset(dir: &Path, index: &PhaseIndex, entries: &[(u64, u64)]) -> Result<Sled, Error> {
    // A directory of its own, with a smaller page cache than sled's default 1 GB. (The
    // build still holds ~3.6 KB resident per entry here, whatever the cache size:
    // 17.7 GB for 5 million entries, 3.6 GB for 1 million.)
    let path = dir.join("keys-subset.sled");
    let db = sled::Config::new().path(&path).cache_capacity(SUBSET_CACHE).open().map_err(sled_error(&path))?;
    let name = format!("{}-subset", tree_name(index));
    db.drop_tree(&name).map_err(sled_error(&path))?;
    let tree = db.open_tree(&name).map_err(sled_error(&path))?;
    let mut sorted = entries.to_vec();
    sorted.sort_unstable();
    for part in sorted.chunks(BATCH) {
        let mut batch = sled::Batch::default();
        for &(code, i) in part {
            batch.insert(&code.to_be_bytes(), &i.to_le_bytes());
        }
        tree.apply_batch(batch).map_err(sled_error(&path))?;
    }
    tree.flush().map_err(sled_error(&path))?;
    db.flush().map_err(sled_error(&path))?;
    let key_bytes = db.size_on_disk().map_err(sled_error(&path))?;
    Ok(Sled { _db: db, tree, n: index.len(), key_bytes, path })
}

impl Sled {
    /// Open the phase's tree in `dir/keys.sled`, checking its marker.
    pub fn open(dir: &Path, index: &PhaseIndex) -> Result<Sled, Error> {
        let path = db_path(dir, index);
        let db = open_db(&path)?;
        let tree = open_tree(&db, &path, index)?;
        // The directory's size shared out by count between the complete trees.
        let total = db.size_on_disk().map_err(sled_error(&path))?;
        let mut all = 0u64;
        for name in db.tree_names() {
            let t = db.open_tree(&name).map_err(sled_error(&path))?;
            if let Some(v) = t.get(MARKER).map_err(sled_error(&path))?
                && let Ok(c) = <[u8; 8]>::try_from(&v.as_ref()[..v.len().min(8)])
            {
                all = all.saturating_add(u64::from_le_bytes(c));
            }
        }
        let n = index.len();
        let key_bytes = if all == 0 { total } else { (total as u128 * n as u128 / all.max(n) as u128) as u64 };
        Ok(Sled { _db: db, tree, n, key_bytes, path })
    }
}

impl KeyIndex for Sled {
    fn backend(&self) -> Backend {
        Backend::Sled
    }

    fn len(&self) -> u64 {
        self.n
    }

    fn index_of(&self, code: u64) -> Result<Option<u64>, Error> {
        if code >> 55 != 0 {
            return Ok(None);
        }
        let Some(v) = self.tree.get(code.to_be_bytes()).map_err(sled_error(&self.path))? else {
            return Ok(None);
        };
        match <[u8; 8]>::try_from(v.as_ref()).map(u64::from_le_bytes) {
            Ok(i) if i < self.n => Ok(Some(i)),
            _ => Err(corrupt(&self.path, format!("key {code} has a bad value {:02x?}", v.as_ref()))),
        }
    }

    fn key_bytes(&self) -> u64 {
        self.key_bytes
    }
}

#[cfg(test)]
mod tests {
    use super::super::keyfile::testkit::*;
    use super::*;

    #[test]
    fn every_key_maps_to_its_index_and_non_keys_to_none() {
        let phases = small_phases();
        // One database per board, holding the trees of all its phases.
        let dirs = [Scratch::new("sled-3"), Scratch::new("sled-4")];
        let dir_of = |index: &PhaseIndex| &dirs[index.geometry().side() as usize - 3];
        for index in &phases {
            build(dir_of(index).path(), index).unwrap();
        }
        for index in &phases {
            let dir = dir_of(index);
            assert_eq!(check(dir.path(), index).unwrap(), 16 * index.len());
            let s = Sled::open(dir.path(), index).unwrap();
            assert_eq!(s.len(), index.len());
            assert!(s.key_bytes() > 0);
            let keys = keys_of(index);
            for (i, &k) in keys.iter().enumerate() {
                assert_eq!(s.index_of(k).unwrap(), Some(i as u64));
            }
            for c in non_keys(index, &keys) {
                assert_eq!(s.index_of(c).unwrap(), None, "{c:#x}");
            }
        }
    }

    #[test]
    fn a_tree_without_marker_or_with_a_wrong_entry_is_corrupt_and_a_missing_one_absent() {
        let phases = small_phases();
        let (a, b) = (&phases[0], &phases[1]);
        let dir = Scratch::new("sled-bad");
        assert!(matches!(Sled::open(dir.path(), a), Err(Error::Io { .. })));
        build(dir.path(), a).unwrap();
        assert!(matches!(Sled::open(dir.path(), b), Err(Error::Io { .. })));
        let path = db_path(dir.path(), a);
        let edit = |f: &dyn Fn(&sled::Tree)| {
            let db = open_sled(&path).unwrap();
            f(&db.open_tree(tree_name(a)).unwrap());
            db.flush().unwrap();
        };
        edit(&|t| {
            t.remove(MARKER).unwrap();
        });
        assert!(matches!(Sled::open(dir.path(), a), Err(Error::Corrupt { .. })));
        assert!(matches!(check(dir.path(), a), Err(Error::Corrupt { .. })));
        build(dir.path(), a).unwrap();
        let code = a.position_at(3).code();
        edit(&|t| {
            t.insert(code.to_be_bytes(), &4u64.to_le_bytes()).unwrap();
        });
        assert!(matches!(check(dir.path(), a), Err(Error::Corrupt { .. })));
        build(dir.path(), a).unwrap();
        edit(&|t| {
            t.remove(code.to_be_bytes()).unwrap();
        });
        assert!(matches!(check(dir.path(), a), Err(Error::Corrupt { .. })));
        build(dir.path(), a).unwrap();
        assert_eq!(check(dir.path(), a).unwrap(), 16 * a.len());
    }
}
