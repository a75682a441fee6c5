//! The result store, end to end on small boards: one integration suite instantiated per
//! compiled lookup backend, every answer compared with the solver's in-memory solution;
//! corruption (every single flipped byte, truncation, foreign magic and versions) always
//! an error, never a panic or a wrong answer; the golden databases of formats v1, v2 and v3.

use std::path::{Path, PathBuf};

use ostledb::Error;
use ostledb::game::Geometry;
use ostledb::game::forbidden::node_exists_naive;
use ostledb::game::symmetry::canonical;
use ostledb::probe::{move_values, node_value};
use ostledb::record::Outcome;
use ostledb::solve::SolveOptions;
use ostledb::solve::retrograde::{Solution, solve, solve_into};
use ostledb::store::Store;
use ostledb::store::keys::{self, Backend};
use ostledb::store::meta;
use ostledb::store::values::WriteOptions;
use ostledb::working::pack::{PackOptions, pack};

/// Where the value and key files of the database at `dir` are now.
fn data(dir: &Path) -> std::path::PathBuf {
    ostledb::store::directory::current_data_dir(dir).unwrap()
}

fn tmpdir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("ostledb-store-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    d
}

/// Solve `geom` up to `max` pieces into `dir` and pack it with `backends`; small blocks
/// (two streams of 128 positions) so that even a small board has many of them.
pub(crate) fn build(geom: &Geometry, dir: &Path, max: u32, backends: Vec<Backend>) {
    let opts = SolveOptions { dir: Some(dir.to_path_buf()), ..SolveOptions::default() };
    solve_into(geom, max, &opts, |_| Ok(())).expect("solve");
    let p = PackOptions {
        values: WriteOptions { block: 128, streams: 2, level: 3, ..WriteOptions::default() },
        backends,
        keep_work: false,
        records: None,
    };
    pack(dir, geom, max, &p, |_| {}).expect("pack");
}

/// The oracle: the same board solved in memory.
pub(crate) fn oracle(geom: &Geometry, max: u32) -> Solution {
    solve(geom, max, &SolveOptions::default()).expect("solve in memory")
}

/// Every position of every phase: located, recorded, probed and (for a sample) every
/// move valued exactly as the in-memory solution says.
pub(crate) fn check_against(db: &Store, sol: &Solution, sample_every: u64) {
    let g = db.geometry().clone();
    let mut specials = 0u64;
    for p in sol.index().phases() {
        let ph = p.phase();
        let keys = db.keys(ph).expect("open the key index");
        for i in 0..p.len() {
            let pos = p.position_at(i);
            assert_eq!(keys.index_of(pos.code()).unwrap(), Some(i), "{} index of {ph} #{i}", db.backend());
            // Any symmetric image locates to the same index.
            let image = pos.transformed(&g, (i % 8) as usize);
            assert_eq!(db.locate(&image).unwrap(), (ph, i));
            // The record as solved. The solver keeps a special move only when its node
            // exists (some predecessor forbids it): the store holds no other.
            let (got, want_rec) = (db.record(ph, i).unwrap(), sol.phase(ph).unwrap().record(i));
            assert_eq!((got.base, got.special), (want_rec.base, want_rec.special), "{ph} #{i}");
            if let Some((s, _)) = got.special {
                assert!(node_exists_naive(&g, &pos, s as usize), "{ph} #{i}: special move {s} has no node");
                specials += 1;
            }
            let want = node_value(&g, sol, &pos, 0).unwrap();
            assert_eq!(db.probe(&image, None).unwrap(), want, "{ph} #{i}");
            if i % sample_every == 0 {
                assert_eq!(db.moves(&image).unwrap(), move_values(&g, sol, &image).unwrap());
            }
        }
        if db.backend() != Backend::Hash {
            // Codes that are not canonical positions of this phase are not found.
            for i in (0..p.len()).step_by(97) {
                let pos = p.position_at(i);
                for k in 1..8 {
                    let img = pos.transformed(&g, k);
                    let (c, _) = canonical(&g, &img);
                    if img.code() != c.code() {
                        assert_eq!(keys.index_of(img.code()).unwrap(), None, "{}: image of #{i}", db.backend());
                    }
                }
            }
            assert_eq!(keys.index_of(u64::MAX >> 9).unwrap(), None);
            assert_eq!(keys.index_of(0).unwrap(), None);
        }
    }
    assert!(specials > 0, "no special move is stored: the special values are not exercised");
}

/// One database with every compiled backend's key index, shared by the per-backend tests.
fn shared() -> &'static (PathBuf, Solution) {
    static DB: std::sync::OnceLock<(PathBuf, Solution)> = std::sync::OnceLock::new();
    DB.get_or_init(|| {
        let g = Geometry::new(4, 3).unwrap();
        let dir = tmpdir("suite");
        build(&g, &dir, 6, Backend::available());
        (dir, oracle(&g, 6))
    })
}

/// The batched lookup of `db`'s backend against the sorted oracle's single lookups, on
/// every key of every phase in shuffled order (plus, except for `hash`, which cannot tell
/// non-keys apart, codes that are not keys), cut into batches of many lengths (0, 1, a
/// partial interleave group, whole groups, one batch of everything); a batch whose
/// output has the wrong length is an error, not a panic.
fn check_batched(db: &Store, dir: &Path, sol: &Solution) {
    let g = db.geometry().clone();
    for p in sol.index().phases() {
        let ph = p.phase();
        let oracle = keys::open(Backend::Sorted, &data(dir), p).expect("the oracle");
        let k = db.keys(ph).expect("open the key index");
        let mut codes: Vec<u64> = (0..p.len()).map(|i| p.position_at(i).code()).collect();
        if db.backend() != Backend::Hash {
            for i in (0..p.len()).step_by(5) {
                let img = p.position_at(i).transformed(&g, 1 + (i % 7) as usize);
                if canonical(&g, &img).0.code() != img.code() {
                    codes.push(img.code());
                }
            }
            codes.extend([0, u64::MAX >> 9, u64::MAX]);
        }
        // A fixed shuffle (multiplicative step coprime to the length).
        let n = codes.len();
        let step = (0..).map(|d| 7919 + d).find(|s| gcd(*s, n) == 1).unwrap();
        let codes: Vec<u64> = (0..n).map(|i| codes[(i * step) % n]).collect();
        let want: Vec<Option<u64>> = codes.iter().map(|&c| oracle.index_of(c).unwrap()).collect();
        for len in [0usize, 1, 3, 16, 17, 100, n] {
            let mut got = vec![Some(u64::MAX); codes.len()];
            for (c, o) in codes.chunks(len.max(1)).zip(got.chunks_mut(len.max(1))) {
                let (c, o) = if len == 0 { (&c[..0], &mut o[..0]) } else { (c, o) };
                k.index_of_batch(c, o).unwrap();
            }
            if len > 0 {
                assert_eq!(got, want, "{} {ph}: batches of {len}", db.backend());
            }
        }
        let mut short = vec![None; 2];
        assert!(matches!(k.index_of_batch(&codes[..3], &mut short), Err(Error::InvalidArgument(_))));
    }
}

fn gcd(a: usize, b: usize) -> usize {
    if b == 0 { a } else { gcd(b, a % b) }
}

macro_rules! backend_suite {
    ($name:ident, $backend:expr, $feature:literal) => {
        #[test]
        #[cfg(feature = $feature)]
        fn $name() {
            let (dir, sol) = shared();
            let db = Store::open_with(dir, Some($backend)).unwrap();
            assert_eq!(db.backend(), $backend);
            check_against(&db, sol, 13);
            check_batched(&db, dir, sol);
            assert!(keys::check($backend, &data(dir), &sol.index().phases()[0]).is_ok());
        }
    };
    ($name:ident, $backend:expr) => {
        #[test]
        fn $name() {
            let (dir, sol) = shared();
            let db = Store::open_with(dir, Some($backend)).unwrap();
            assert_eq!(db.backend(), $backend);
            check_against(&db, sol, 13);
            check_batched(&db, dir, sol);
        }
    };
}

backend_suite!(suite_sorted, Backend::Sorted);
backend_suite!(suite_rank, Backend::Rank);
backend_suite!(suite_levelwise, Backend::Levelwise, "levelwise");
backend_suite!(suite_hash, Backend::Hash, "hash");
backend_suite!(suite_mmap, Backend::Mmap, "mmap");
backend_suite!(suite_sled, Backend::Sled, "sled");

#[test]
fn default_backend_is_the_first_built_and_missing_ones_say_how_to_add_them() {
    let g = Geometry::new(3, 3).unwrap();
    let dir = tmpdir("default");
    build(&g, &dir, 6, vec![Backend::Sorted]);
    let db = Store::open(&dir).unwrap();
    assert_eq!(db.backend(), Backend::Sorted);
    // rank needs no files: always there.
    assert_eq!(Store::open_with(&dir, Some(Backend::Rank)).unwrap().backend(), Backend::Rank);
    for b in Backend::available() {
        if b.storage() != Backend::Sorted && b != Backend::Rank {
            let e = Store::open_with(&dir, Some(b)).unwrap_err();
            assert!(matches!(e, Error::BackendMissing { .. }), "{b}: {e}");
            assert!(e.to_string().contains(&format!("ostledb index --db {} --backend {b}", dir.display())), "{e}");
        }
    }
    // An unknown name lists what there is.
    let e = Backend::parse("btree").unwrap_err();
    assert!(e.to_string().contains("unknown lookup backend `btree`") && e.to_string().contains("sorted"), "{e}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_backend_not_compiled_in_names_its_feature() {
    for b in Backend::ALL {
        if !b.compiled() {
            let e = b.require().unwrap_err();
            let f = b.feature().unwrap();
            assert!(e.to_string().contains(&format!("--features {f}")), "{e}");
        }
    }
}

#[test]
fn an_unfinished_database_never_opens() {
    let g = Geometry::new(3, 3).unwrap();
    let dir = tmpdir("unfinished");
    // Solved but not packed: the solver's files are there, the metadata is not.
    let opts = SolveOptions { dir: Some(dir.clone()), ..SolveOptions::default() };
    solve_into(&g, 6, &opts, |_| Ok(())).unwrap();
    let e = Store::open(&dir).unwrap_err();
    assert!(e.to_string().contains("not a finished database"), "{e}");
    pack(&dir, &g, 6, &PackOptions::default(), |_| {}).unwrap();
    assert!(Store::open(&dir).is_ok());
    // Packing again (from the value files) writes a new generation beside the current
    // one and switches to it; the old one is removed, as no reader has it open.
    let first = data(&dir);
    pack(&dir, &g, 6, &PackOptions::default(), |_| {}).unwrap();
    let second = data(&dir);
    assert!(first != second && !first.exists() && second.is_dir(), "{first:?} -> {second:?}");
    check_against(&Store::open(&dir).unwrap(), &oracle(&g, 6), 1);
    // No temporary file is left behind, and nothing the metadata does not list.
    for d in [&dir, &second] {
        for e in std::fs::read_dir(d).unwrap() {
            let name = e.unwrap().file_name().to_string_lossy().to_string();
            assert!(!name.ends_with(".tmp"), "{name}");
        }
    }
    let meta = meta::read(&dir).unwrap().unwrap();
    assert!(ostledb::store::directory::unlisted(&dir, &meta).is_empty());
    let _ = std::fs::remove_dir_all(&dir);
}

/// Open `dir` with `backend`, recompute every checksum and answer every position: the
/// first error, or `Ok` if everything opened, checked and agreed. A wrong answer panics
/// (that is the failure this guards against).
fn open_check_answer(dir: &Path, backend: Backend, sol: &Solution) -> Result<(), Error> {
    let db = Store::open_with(dir, Some(backend))?;
    for p in db.index().phases() {
        db.values(p.phase()).unwrap().check()?;
        for name in &db.meta().backends {
            keys::check(Backend::parse(name)?, &data(dir), p)?;
        }
    }
    let g = db.geometry().clone();
    for p in sol.index().phases() {
        for i in 0..p.len() {
            let pos = p.position_at(i);
            let got = db.probe(&pos, None)?;
            assert_eq!(got, node_value(&g, sol, &pos, 0).unwrap(), "a wrong answer from a damaged database");
        }
    }
    Ok(())
}

/// The file a damage error names: `Some` for the errors that say a file is damaged
/// (exit code 1): a bad magic, a checksum mismatch, other damage.
fn damaged_file(e: &Error) -> Option<&Path> {
    match e {
        Error::Corrupt { path, .. } | Error::BadMagic { path, .. } | Error::ChecksumMismatch { path, .. } => Some(path),
        _ => None,
    }
}

/// The metadata and the value and key files of the database at `dir`.
fn files_of(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> =
        std::fs::read_dir(data(dir)).unwrap().map(|e| e.unwrap().path()).filter(|p| p.is_file()).collect();
    v.push(dir.join(meta::FILE));
    v.sort();
    v
}

#[test]
fn every_flipped_byte_and_every_truncation_is_an_error_never_a_wrong_answer() {
    let g = Geometry::new(3, 3).unwrap();
    let dir = tmpdir("flip");
    let backends: Vec<Backend> = Backend::available().into_iter().filter(|&b| b != Backend::Sled).collect();
    build(&g, &dir, 6, backends.clone());
    let sol = oracle(&g, 6);
    for &b in &backends {
        open_check_answer(&dir, b, &sol).unwrap();
    }
    let mut flips = 0;
    for file in files_of(&dir) {
        let good = std::fs::read(&file).unwrap();
        // Every byte of small files, a spread of offsets in larger ones.
        let step = (good.len() / 1500).max(1);
        for at in (0..good.len()).step_by(step) {
            let mut bad = good.clone();
            bad[at] ^= 1 << (at % 8);
            std::fs::write(&file, &bad).unwrap();
            for &b in &backends {
                match open_check_answer(&dir, b, &sol) {
                    Err(e) if damaged_file(&e).is_some() => {
                        let path = damaged_file(&e).unwrap();
                        assert!(path.starts_with(&dir), "{}", path.display())
                    }
                    Err(e) => panic!("{}: byte {at} flipped, backend {b}: not reported as damage: {e}", file.display()),
                    Ok(()) => panic!("{}: byte {at} flipped, backend {b}: not detected", file.display()),
                }
            }
            flips += 1;
        }
        for len in [0, 1, good.len() / 2, good.len().saturating_sub(1)] {
            std::fs::write(&file, &good[..len]).unwrap();
            for &b in &backends {
                assert!(
                    matches!(open_check_answer(&dir, b, &sol), Err(Error::Corrupt { .. })),
                    "{} truncated to {len}, backend {b}",
                    file.display()
                );
            }
        }
        let mut longer = good.clone();
        longer.push(0);
        std::fs::write(&file, &longer).unwrap();
        assert!(open_check_answer(&dir, Backend::Sorted, &sol).is_err(), "{}: a byte appended", file.display());
        std::fs::write(&file, &good).unwrap();
    }
    assert!(flips > 1000, "{flips}");
    open_check_answer(&dir, Backend::Sorted, &sol).unwrap();
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn foreign_magic_and_future_versions_are_refused_with_a_clear_reason() {
    use ostledb::error::FileKind;
    let g = Geometry::new(3, 3).unwrap();
    let dir = tmpdir("magic");
    build(&g, &dir, 6, vec![Backend::Sorted]);
    let files = data(&dir);
    let cases: [(&str, usize, FileKind); 3] = [
        (meta::FILE, 0, FileKind::Metadata),
        ("values-2-2.zst", 0, FileKind::Values),
        ("keys-2-2.sorted", 0, FileKind::SortedKeys),
    ];
    for (name, at, kind) in cases {
        let file = if name == meta::FILE { dir.join(name) } else { files.join(name) };
        let good = std::fs::read(&file).unwrap();
        let mut bad = good.clone();
        bad[at] = b'X';
        std::fs::write(&file, &bad).unwrap();
        let e = open_check_answer(&dir, Backend::Sorted, &oracle(&g, 6)).unwrap_err();
        assert!(matches!(&e, Error::BadMagic { path, kind: k } if *path == file && *k == kind), "{name}: {e:?}");
        assert!(
            e.to_string().contains(&format!("not an ostledb {kind}")) && e.to_string().contains(name),
            "{name}: {e}"
        );
        std::fs::write(&file, &good).unwrap();
    }
    // A version from the future (its header checksum recomputed, as a newer ostledb
    // would write it): the reader says which versions it reads.
    let file = dir.join(meta::FILE);
    let good = std::fs::read(&file).unwrap();
    let mut bad = good.clone();
    bad[8] = 9;
    let sum = ostledb::file::checksum(&bad[..24]);
    bad[24..32].copy_from_slice(&sum.to_le_bytes());
    std::fs::write(&file, &bad).unwrap();
    let e = Store::open(&dir).unwrap_err();
    assert!(matches!(e, Error::NewerFormat { found: 9, max: 5, .. }), "{e:?}");
    assert!(e.to_string().contains("format v9") && e.to_string().contains("reads up to v5"), "{e}");
    let file = files.join("values-2-2.zst");
    let good_v = std::fs::read(&file).unwrap();
    std::fs::write(dir.join(meta::FILE), &good).unwrap();
    let mut bad = good_v.clone();
    bad[8] = 6;
    let sum = ostledb::file::checksum(&bad[..64]);
    bad[64..72].copy_from_slice(&sum.to_le_bytes());
    std::fs::write(&file, &bad).unwrap();
    let e = Store::open(&dir).unwrap_err();
    assert!(matches!(e, Error::NewerFormat { found: 6, max: 5, .. }), "{e:?}");
    assert!(e.to_string().contains("format v6") && e.to_string().contains("reads up to v5"), "{e}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// The golden databases (`tests/data/golden-vN`, a 3x3 board, written by the ostledb of
/// that format with `cargo test --release write_golden -- --ignored`): this version must
/// read each and give the solver's answers.
fn check_golden(version: u32) {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("tests/data/golden-v{version}"));
    let db = Store::open(&dir).unwrap();
    let m = db.meta();
    assert_eq!((m.format, m.side, m.start_pieces, m.max_pieces), (version, 3, 3, 6));
    assert_eq!(m.backends, vec!["rank".to_string(), "sorted".to_string()]);
    let g = Geometry::new(3, 3).unwrap();
    let sol = oracle(&g, 6);
    check_against(&db, &sol, 1);
    check_against(&Store::open_with(&dir, Some(Backend::Sorted)).unwrap(), &sol, 7);
    for p in db.index().phases() {
        let f = db.values(p.phase()).unwrap();
        f.check().unwrap();
        // v1 stores loss distances, v2 to v5 (as written by default) elide them, and
        // v3 to v5 fill immediate wins.
        assert_eq!((f.version(), f.elides_losses()), (version, version >= 2));
        assert_eq!(f.fills_immediate_wins(), version >= 3);
        keys::check(Backend::Sorted, &data(&dir), p).unwrap();
        let exact = ostledb::working::group::load_phase(&dir, &g, p.phase(), p.len()).unwrap().unwrap();
        for i in 0..p.len() {
            assert_eq!(exact.record(i).base, sol.phase(p.phase()).unwrap().record(i).base);
        }
    }
    // The counts the metadata carries are the solution's.
    for (pm, p) in m.phases.iter().zip(sol.phases()) {
        let wins = (0..p.len()).filter(|&i| matches!(p.record(i).base, Outcome::Win(_))).count() as u64;
        assert_eq!(pm.win, wins);
        assert_eq!(pm.win + pm.loss + pm.draw, p.len());
    }
}

#[test]
fn the_v1_golden_database_still_reads() {
    check_golden(1);
}

#[test]
fn the_v2_golden_database_still_reads() {
    check_golden(2);
}

#[test]
fn the_v3_golden_database_still_reads() {
    check_golden(3);
}

#[test]
fn the_v4_golden_database_still_reads() {
    check_golden(4);
}

#[test]
fn the_v5_golden_database_still_reads() {
    check_golden(5);
}

/// `Records` through a database gives the same move values as the library's own
/// helpers, for a board given in any orientation, with the previous board deciding
/// the forbidden move.
#[test]
fn probe_with_a_previous_board_uses_the_forbidden_move() {
    let (dir, sol) = shared();
    let db = Store::open(dir).unwrap();
    let g = db.geometry().clone();
    let mut checked = 0;
    for p in sol.index().phases() {
        for i in (0..p.len()).step_by(31) {
            let pos = p.position_at(i);
            let r = sol.phase(p.phase()).unwrap().record(i);
            let Some((s, special)) = r.special else { continue };
            // The board before: play the special move's reverse from the child side.
            for &m in ostledb::game::moves::moves(&g, &pos).iter() {
                let Some(out) = ostledb::game::moves::play(&g, &pos, m) else { continue };
                if out.removal != ostledb::game::moves::Removal::None {
                    continue;
                }
                // `pos` seen as the child of `prev` = out.child, whose move back is `m`'s reverse.
                let prev = out.child;
                let Ok(v) = db.probe(&pos, Some(&prev)) else { continue };
                let j = ostledb::game::forbidden::published_node_index(&g, &pos, &prev);
                let want = if j == s as usize { special } else { r.base };
                if !ostledb::game::moves::is_immediate_win(&g, &pos) {
                    assert_eq!(v, want, "#{i} prev {prev:?}");
                }
                checked += 1;
            }
        }
    }
    assert!(checked > 100, "{checked}");
}

/// Writes `tests/data/golden-v5`, the golden database of the current format (run once
/// per format version, with the name changed, then commit the files). Its value files
/// have blocks of 4 streams of 32 positions, so a phase has several blocks and a block
/// several streams.
#[test]
#[ignore = "writes the golden database of the current format; run by hand when the format changes"]
fn write_golden_v5() {
    let g = Geometry::new(3, 3).unwrap();
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/golden-v5");
    let _ = std::fs::remove_dir_all(&dir);
    let opts = SolveOptions { dir: Some(dir.to_path_buf()), ..SolveOptions::default() };
    solve_into(&g, 6, &opts, |_| Ok(())).expect("solve");
    let values = WriteOptions { format: 5, block: 32, streams: 4, ..WriteOptions::default() };
    let p = PackOptions { values, backends: vec![Backend::Rank, Backend::Sorted], keep_work: false, records: None };
    pack(&dir, &g, 6, &p, |_| {}).expect("pack");
}

/// A stored breadth-first search answers every node's depth exactly as the search in
/// memory, says "not reached" for other nodes, and every damaged byte is an error.
#[test]
fn stored_bfs_answers_as_the_search_in_memory() {
    use ostledb::bfs_depths::node_keys::file_name;
    use ostledb::bfs_depths::node_keys::{BfsFile, write};
    use ostledb::game::node::{Convention, key_code, node_key};
    use ostledb::progress::Silent;
    use ostledb::solve::bfs::bfs_layers;
    let g = Geometry::standard();
    let dir = tmpdir("bfs");
    for convention in [Convention::Published, Convention::Strict] {
        let r = bfs_layers(g, convention, 6, u64::MAX, &Silent);
        let layers: Vec<&[u64]> = (0..=r.nodes.max_depth()).filter_map(|d| r.nodes.layer(d)).collect();
        write(&dir, g, convention, true, false, &layers).unwrap();
        let f = BfsFile::open(&dir, g, convention).unwrap().expect("just written");
        assert_eq!(f.summary().layers, r.layers.iter().map(|l| l.nodes).collect::<Vec<_>>());
        for (d, l) in layers.iter().enumerate() {
            for &k in l.iter() {
                assert_eq!(f.depth_of_key(k).unwrap(), Some(d as u32));
                // The same position with another forbidden index was reached at another
                // depth or not at all: both answers agree with the search.
                let other = node_key(key_code(k), ((k & 31) as usize + 1) % 25);
                assert_eq!(f.depth_of_key(other).unwrap(), r.nodes.depth_of_key(other));
            }
        }
        // Every flipped byte (sampled) is caught by open or by the block it lands in.
        let path = dir.join(file_name(convention));
        let good = std::fs::read(&path).unwrap();
        for at in (0..good.len()).step_by((good.len() / 300).max(1)) {
            let mut bad = good.clone();
            bad[at] ^= 0x10;
            std::fs::write(&path, &bad).unwrap();
            match BfsFile::open(&dir, g, convention) {
                Err(e) if damaged_file(&e) == Some(path.as_path()) => {}
                Ok(Some(f)) => assert!(f.check().is_err(), "flip at {at} not caught"),
                other => panic!("flip at {at}: {other:?}"),
            }
        }
        std::fs::write(&path, &good[..good.len() - 1]).unwrap();
        assert!(matches!(BfsFile::open(&dir, g, convention), Err(Error::Corrupt { .. })));
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// A packed database elides loss distances by default: every loss is stored as code 1,
/// and every reader gets the solver's exact values back: single records (one ply of
/// search), whole phases and base values (a group resolved at once), the solve that
/// resumes from them. Packing with the distances kept gives the same answers from
/// larger files. A win stored as an elided loss (damage a checksum cannot see, because
/// the file was written that way) is an error naming the position, never an answer.
#[test]
fn elided_loss_distances_come_back_exact() {
    use ostledb::record::outcome_val;
    use ostledb::record::{ELIDED_LOSS, Packed};
    use ostledb::store::values::{ValueFile, file_name, write_values};
    let g = Geometry::new(4, 3).unwrap();
    let sol = oracle(&g, 6);
    let (elided, kept) = (tmpdir("elided"), tmpdir("kept"));
    build(&g, &elided, 6, vec![Backend::Rank]);
    let opts = SolveOptions { dir: Some(kept.clone()), ..SolveOptions::default() };
    solve_into(&g, 6, &opts, |_| Ok(())).expect("solve");
    let values = WriteOptions { format: 3, block: 256, streams: 0, level: 3, elide_losses: false, filled_wins: true };
    pack(&kept, &g, 6, &PackOptions { values, backends: vec![Backend::Rank], keep_work: false, records: None }, |_| {})
        .unwrap();
    let (mut small, mut large) = (0, 0);
    for p in sol.index().phases() {
        let ph = p.phase();
        let (fe, fk) = (
            ValueFile::open(&data(&elided), &g, ph, p.len()).unwrap(),
            ValueFile::open(&data(&kept), &g, ph, p.len()).unwrap(),
        );
        assert!(fe.elides_losses() && !fk.elides_losses());
        (small, large) = (small + fe.file_len(), large + fk.file_len());
        let stored = ostledb::store::values::load_raw(&data(&elided), &g, ph, p.len()).unwrap();
        let exact = ostledb::working::group::load_phase(&elided, &g, ph, p.len()).unwrap().unwrap();
        let from_kept = ostledb::working::group::load_phase(&kept, &g, ph, p.len()).unwrap().unwrap();
        let base = ostledb::working::group::load_base(&elided, &g, ph, p.len()).unwrap().unwrap();
        assert_eq!(exact.raw(), from_kept.raw(), "{ph}");
        let mut losses = 0;
        for i in 0..p.len() {
            let (want, got) = (sol.phase(ph).unwrap().record(i), exact.record(i));
            assert_eq!(got.base, want.base, "{ph} #{i}");
            assert_eq!(base[i as usize], outcome_val(want.base), "{ph} #{i}");
            if let (Some(a), Some(b)) = (got.special, want.special) {
                assert_eq!(a, b, "{ph} #{i}");
            }
            if let Outcome::Loss(_) = want.base {
                losses += 1;
                assert_eq!(stored.packed(i).base(), ELIDED_LOSS, "{ph} #{i}: stored without its distance");
            }
        }
        assert!(losses > 0, "{ph} has losses to resolve");
    }
    assert!(small < large, "eliding saves bytes: {small} vs {large}");
    // The whole solution loads exact, and a solve over the elided database resumes from
    // it: nothing is solved again and the answer is the same.
    let loaded = Solution::load(&elided, &g, 6).unwrap();
    for (a, b) in loaded.phases().iter().zip(sol.phases()) {
        for i in 0..a.len() {
            assert_eq!(a.record(i).base, b.record(i).base);
        }
    }
    // Plant a win stored as an elided loss, rewriting the file (so its checksums hold).
    let p = sol.index().phases().last().unwrap();
    let ph = p.phase();
    let mut records = ostledb::store::values::load_raw(&data(&elided), &g, ph, p.len()).unwrap();
    let i = (0..p.len())
        .find(|&i| matches!(sol.phase(ph).unwrap().record(i).base, Outcome::Win(n) if n > 1))
        .expect("a win");
    let r = &mut records.raw_mut()[i as usize];
    *r = Packed(*r).with_base(ELIDED_LOSS).0;
    let written =
        write_values(&data(&elided), &g, &records, WriteOptions { block: 256, level: 3, ..WriteOptions::default() })
            .unwrap();
    assert!(data(&elided).join(file_name(ph)).is_file());
    // The file's length is the metadata's (a v4 or v5 file's model changed with the values).
    let mut m = meta::read(&elided).unwrap().unwrap();
    let k = m.phases.iter().position(|q| (q.player as u32, q.opponent as u32) == (ph.player, ph.opponent)).unwrap();
    m.phases[k].value_bytes = written.len;
    meta::write(&elided, &m).unwrap();
    let db = Store::open(&elided).unwrap();
    let e = db.probe(&p.position_at(i), None).unwrap_err();
    assert!(matches!(e, Error::Corrupt { .. }) && e.to_string().contains("stored as a loss"), "{e}");
    let e = ostledb::working::group::load_phase(&elided, &g, ph, p.len()).unwrap_err();
    assert!(matches!(e, Error::Corrupt { .. }) && e.to_string().contains("stored as a loss"), "{e}");
    let _ = std::fs::remove_dir_all(&elided);
    let _ = std::fs::remove_dir_all(&kept);
}

/// `pack` over a database without the solver's files writes its value files again with
/// the settings asked for: the v1 golden database becomes v2 with losses elided, and
/// that one, packed with the distances kept, v2 without; every step answers as the solver.
#[test]
fn pack_rewrites_value_files_from_any_version() {
    let g = Geometry::new(3, 3).unwrap();
    let sol = oracle(&g, 6);
    let dir = tmpdir("repack");
    std::fs::create_dir_all(&dir).unwrap();
    let golden = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/golden-v1");
    for e in std::fs::read_dir(&golden).unwrap() {
        let e = e.unwrap();
        std::fs::copy(e.path(), dir.join(e.file_name())).unwrap();
    }
    for elide in [true, false] {
        let format = if elide { 4 } else { 3 };
        let values = WriteOptions { format, block: 100, streams: 0, level: 3, elide_losses: elide, filled_wins: elide };
        let opts =
            PackOptions { values, backends: vec![Backend::Rank, Backend::Sorted], keep_work: false, records: None };
        pack(&dir, &g, 6, &opts, |_| {}).unwrap();
        let db = Store::open(&dir).unwrap();
        assert_eq!(db.meta().format, meta::VERSION);
        for p in db.index().phases() {
            let f = db.values(p.phase()).unwrap();
            assert_eq!(
                (f.version(), f.elides_losses(), f.fills_immediate_wins(), f.block_positions()),
                (format, elide, elide, 100)
            );
        }
        check_against(&db, &sol, 3);
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// One kind of file in the format-error tests: where it is, how the database reads it
/// (every checksum checked), its newest version, where its header checksum is, and a
/// byte under a block or body checksum.
struct FileCase {
    kind: ostledb::error::FileKind,
    file: PathBuf,
    read: Box<dyn Fn() -> Result<(), Error>>,
    /// The newest format version this build reads.
    max: u32,
    /// The offset of the header checksum, which covers the bytes before it (`None`: the
    /// header has none).
    header_sum: Option<usize>,
    /// A byte under a block or body checksum, the section and the block it is in.
    body_byte: usize,
    section: &'static str,
    block: Option<u64>,
}

/// A 3x3 database in `dir` holding one file of every kind that has a format version:
/// the metadata, a value file, the sorted keys file, the hash key index (when
/// compiled), a BFS file and a solver's phase value file; each with how to read it.
fn format_cases(name: &str) -> (PathBuf, Vec<FileCase>) {
    use ostledb::bfs_depths::node_keys;
    use ostledb::error::FileKind;
    use ostledb::file::{le_u32, le_u64};
    use ostledb::game::Phase;
    use ostledb::game::node::Convention;
    use ostledb::store::values;
    use ostledb::working::phasefile;
    let g = Geometry::new(3, 3).unwrap();
    let dir = tmpdir(name);
    let hash = Backend::available().contains(&Backend::Hash);
    let mut backends = vec![Backend::Sorted];
    if hash {
        backends.push(Backend::Hash);
    }
    build(&g, &dir, 6, backends);
    let sol = oracle(&g, 6);
    // The largest phase: several value blocks of 256 positions (two streams each).
    let ph = Phase::new(3, 3);
    let p = sol.index().phase(ph).unwrap().clone();
    let n = p.len();
    phasefile::save(&dir, &g, sol.phase(ph).unwrap(), 0).unwrap();
    // Two BFS blocks (65,536 keys each at most).
    let layer: Vec<u64> = (0..70_000u64).map(|i| 3 * i + 1).collect();
    node_keys::write(&dir, &g, Convention::Published, true, false, &[&[0], &layer]).unwrap();

    let vpath = data(&dir).join(values::file_name(ph));
    let v = std::fs::read(&vpath).unwrap();
    let blocks = le_u32(&v, 28) as u64;
    assert!(blocks >= 3, "{blocks} value blocks");
    let b = blocks / 2;
    let (offset, end) = values::ValueFile::open(&data(&dir), &g, ph, n).unwrap().block_span(b as u32);
    let (offset, len) = (offset as usize, (end - offset) as usize);
    let bpath = dir.join(ostledb::bfs_depths::node_keys::file_name(Convention::Published));
    let f = std::fs::read(&bpath).unwrap();
    let entry = le_u64(&f, 40) as usize + 32;
    let (bfs_offset, bfs_len) = (le_u64(&f, entry + 8) as usize, le_u32(&f, entry + 16) as usize);

    let d = dir.clone();
    let (g1, g2, g3) = (g.clone(), g.clone(), g.clone());
    let (p1, p2) = (p.clone(), p.clone());
    let mut cases = vec![
        FileCase {
            kind: FileKind::Metadata,
            file: dir.join(meta::FILE),
            read: Box::new({
                let d = d.clone();
                move || meta::read(&d).map(|_| ())
            }),
            max: *meta::VERSIONS.end(),
            header_sum: Some(24),
            body_byte: 40,
            section: "metadata",
            block: None,
        },
        FileCase {
            kind: FileKind::Values,
            file: vpath,
            read: Box::new({
                let d = d.clone();
                move || values::ValueFile::open(&data(&d), &g1, ph, n)?.check().map(|_| ())
            }),
            max: *values::VERSIONS.end(),
            header_sum: Some(64),
            body_byte: offset + len / 2,
            section: "values",
            block: Some(b),
        },
        FileCase {
            kind: FileKind::SortedKeys,
            file: data(&dir).join(&Backend::Sorted.files(ph)[0]),
            read: Box::new({
                let d = d.clone();
                move || keys::check(Backend::Sorted, &data(&d), &p1).map(|_| ())
            }),
            max: 1,
            header_sum: Some(56),
            body_byte: 64 + 8 * (n as usize / 2) + 3,
            section: "keys",
            block: None,
        },
        FileCase {
            kind: FileKind::Bfs,
            file: bpath,
            read: Box::new({
                let d = d.clone();
                move || node_keys::BfsFile::open(&d, &g2, Convention::Published)?.expect("written").check().map(|_| ())
            }),
            max: node_keys::VERSION,
            header_sum: Some(72),
            body_byte: bfs_offset + bfs_len / 2,
            section: "keys and depths",
            block: Some(1),
        },
        FileCase {
            kind: FileKind::PhaseFile,
            file: phasefile::phase_file(&dir, ph),
            read: Box::new({
                let d = d.clone();
                move || phasefile::load(&d, &g3, ph, n).map(|_| ())
            }),
            max: phasefile::VERSION,
            header_sum: None,
            body_byte: phasefile::HEADER_LEN as usize + 8 * (n as usize / 2),
            section: "records",
            block: None,
        },
    ];
    if hash {
        cases.push(FileCase {
            kind: FileKind::HashKeys,
            file: data(&dir).join(&Backend::Hash.files(ph)[0]),
            read: Box::new(move || keys::check(Backend::Hash, &data(&d), &p2).map(|_| ())),
            max: 1,
            header_sum: Some(56),
            body_byte: std::fs::metadata(data(&dir).join(&Backend::Hash.files(ph)[0])).unwrap().len() as usize - 2,
            section: "body",
            block: None,
        });
    }
    (dir, cases)
}

/// Read `case`'s file with `bytes` in its place; the error (the good bytes are put back).
fn read_with(case: &FileCase, bytes: &[u8]) -> Error {
    let good = std::fs::read(&case.file).unwrap();
    std::fs::write(&case.file, bytes).unwrap();
    let e = (case.read)().expect_err("the altered file was read without an error");
    std::fs::write(&case.file, &good).unwrap();
    (case.read)().expect("the file as written reads");
    e
}

/// `bytes` with format version `v` and, where the header has a checksum, that checksum
/// recomputed: what an ostledb of format `v` could have written.
fn with_version(case: &FileCase, bytes: &[u8], v: u32, fix_sum: bool) -> Vec<u8> {
    let mut b = bytes.to_vec();
    b[8..12].copy_from_slice(&v.to_le_bytes());
    if let (Some(at), true) = (case.header_sum, fix_sum) {
        let sum = ostledb::file::checksum(&b[..at]);
        b[at..at + 8].copy_from_slice(&sum.to_le_bytes());
    }
    b
}

#[test]
fn a_wrong_magic_is_bad_magic_for_every_file_kind() {
    let (dir, cases) = format_cases("format-magic");
    for case in &cases {
        let mut bad = std::fs::read(&case.file).unwrap();
        bad[3] ^= 0x20;
        let e = read_with(case, &bad);
        let (file, kind) = (&case.file, case.kind);
        assert!(matches!(&e, Error::BadMagic { path, kind: k } if path == file && *k == kind), "{kind}: {e:?}");
        assert_eq!(e.exit_code(), ostledb::error::EXIT_CORRUPT, "{kind}");
        let msg = e.to_string();
        assert!(msg.starts_with(&file.display().to_string()), "{msg}");
        assert!(msg.contains(&format!("not an ostledb {kind} (its first bytes are not the {kind} magic)")), "{msg}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// A version above the newest this build reads, in a header whose checksum holds, is a
/// newer format (exit code 2: nothing is damaged). The same version with the header
/// checksum left as it was is a damaged version field: putting the real version back
/// makes the checksum hold, so it is a checksum mismatch in the header, not a newer
/// file; where no checksum covers the header (phase value files) it cannot be told
/// apart and is taken as newer. Version 0, which no ostledb writes, is damage.
#[test]
fn a_version_above_the_maximum_is_newer_format_unless_the_header_checksum_shows_damage() {
    let (dir, cases) = format_cases("format-newer");
    for case in &cases {
        let (kind, max, file) = (case.kind, case.max, &case.file);
        let good = std::fs::read(file).unwrap();
        let e = read_with(case, &with_version(case, &good, max + 1, true));
        assert!(
            matches!(&e, Error::NewerFormat { path, kind: k, found, max: m } if path == file && *k == kind && *found == max + 1 && *m == max),
            "{kind}: {e:?}"
        );
        assert_eq!(e.exit_code(), ostledb::error::EXIT_FAILED, "{kind}");
        let msg = e.to_string();
        let want = format!(
            "written by ostledb {} format v{}; this build reads up to v{max}: use a newer ostledb",
            kind.format_name(),
            max + 1
        );
        assert!(msg.contains(&want), "{msg}");
        // The version field altered, the checksum not recomputed.
        let e = read_with(case, &with_version(case, &good, max + 1, false));
        if case.header_sum.is_some() {
            let header = matches!(&e, Error::ChecksumMismatch { path, kind: k, section, block: None, .. } if path == file && *k == kind && section == "header");
            assert!(header, "{kind}: {e:?}");
            assert!(e.to_string().contains("checksum mismatch in the header; the file is damaged"), "{e}");
        } else {
            assert!(matches!(e, Error::NewerFormat { .. }), "{kind}: {e:?}");
        }
        let e = read_with(case, &with_version(case, &good, 0, true));
        assert!(matches!(&e, Error::Corrupt { reason, .. } if reason.contains("no ostledb writes")), "{kind}: {e:?}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_flipped_byte_in_a_block_or_body_is_a_checksum_mismatch_naming_the_section_and_block() {
    let (dir, cases) = format_cases("format-body");
    for case in &cases {
        let (kind, file) = (case.kind, &case.file);
        let mut bad = std::fs::read(file).unwrap();
        bad[case.body_byte] ^= 0x04;
        let e = read_with(case, &bad);
        let named = matches!(&e, Error::ChecksumMismatch { path, kind: k, section, block, bytes: Some((start, end)) }
            if path == file && *k == kind && section == case.section && *block == case.block
                && (*start..*end).contains(&(case.body_byte as u64)));
        assert!(named, "{kind}: {e:?}");
        assert_eq!(e.exit_code(), ostledb::error::EXIT_CORRUPT, "{kind}");
        let msg = e.to_string();
        let place = match case.block {
            Some(b) => format!("checksum mismatch in block {b} ({},", case.section),
            None => format!("checksum mismatch in the {}", case.section),
        };
        assert!(msg.contains(&place) && msg.contains("the file is damaged: "), "{msg}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// Until `done` is set, open the FIFO at `path` for writing now and then and close it at
/// once: a reader blocked opening it (waiting for a writer) then reads an empty file, so
/// a reader that does not refuse FIFOs fails its test instead of hanging it.
fn unblock_fifo_readers(path: PathBuf, done: std::sync::Arc<std::sync::atomic::AtomicBool>) {
    use std::os::unix::fs::OpenOptionsExt;
    std::thread::spawn(move || {
        std::thread::sleep(std::time::Duration::from_secs(2));
        while !done.load(std::sync::atomic::Ordering::SeqCst) {
            let _ = std::fs::OpenOptions::new().write(true).custom_flags(libc::O_NONBLOCK).open(&path);
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
    });
}

/// Puts a special file at a path.
type MakeSpecial = dyn Fn(&Path);

/// Anything but a regular file in place of a database file, once symlinks are followed,
/// is refused before it is read, with an I/O error saying what is there (exit code 2):
/// a FIFO used to block every command until a writer came, and `ostledb.meta` linked to
/// `/dev/zero` grew memory by about 1 GB/s until killed (`/dev/null` stands for it
/// here). A metadata file longer than the format allows is damage, and only that much
/// of it is read.
#[test]
fn anything_but_a_regular_file_is_refused_unread_and_without_blocking() {
    let (dir, cases) = format_cases("format-special");
    for case in &cases {
        let (kind, file) = (case.kind, &case.file);
        let good = std::fs::read(file).unwrap();
        std::fs::remove_file(file).unwrap();
        let specials: [(&str, &MakeSpecial); 3] = [
            ("a FIFO (named pipe), not a regular file", &|p| {
                let made = std::process::Command::new("mkfifo").arg(p).status().unwrap();
                assert!(made.success());
            }),
            ("a character device, not a regular file", &|p| std::os::unix::fs::symlink("/dev/null", p).unwrap()),
            ("a directory, not a regular file", &|p| std::fs::create_dir(p).unwrap()),
        ];
        for (what, make) in specials {
            make(file);
            let done = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
            unblock_fifo_readers(file.clone(), done.clone());
            let e = (case.read)().expect_err("a special file was read as a database file");
            done.store(true, std::sync::atomic::Ordering::SeqCst);
            let refused =
                matches!(&e, Error::Io { path, source } if path == file && source.to_string().starts_with(what));
            assert!(refused, "{kind}: {what}: {e:?}");
            assert_eq!(e.exit_code(), ostledb::error::EXIT_FAILED, "{kind}");
            if std::fs::remove_dir(file).is_err() {
                std::fs::remove_file(file).unwrap();
            }
        }
        std::fs::write(file, &good).unwrap();
        (case.read)().expect("the file as written reads");
    }
    // A metadata file of 2 MiB: refused as longer than a metadata file can be.
    let case = &cases[0];
    let good = std::fs::read(&case.file).unwrap();
    let mut long = good.clone();
    long.resize(2 << 20, 0);
    let e = read_with(case, &long);
    assert!(matches!(&e, Error::Corrupt { reason, .. } if reason.contains("the most a metadata file can be")), "{e:?}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Every damage message names the fix for its kind of file, with the database directory
/// (not the generation directory the file is in): `index` for a key index, `repair` for
/// the metadata, `pack` for a value file whose solver's phase file was kept, `bfs --store`
/// for a BFS file; only the solver's own files, and a value file with no phase file
/// left, say `solve`. (Every message about a truncated or otherwise damaged file used to
/// say to run `solve`, and a checksum mismatch named the generation directory as --db.)
#[test]
fn every_damage_message_names_the_fix_for_its_kind_of_file() {
    use ostledb::error::FileKind;
    let (dir, cases) = format_cases("format-advice");
    let db = dir.display().to_string();
    let fix = |kind: FileKind| match kind {
        FileKind::Metadata => format!("rebuild it with `ostledb repair --db {db}`"),
        FileKind::Values => format!("rebuild it with `ostledb pack --db {db}`"),
        FileKind::SortedKeys => format!("rebuild it with `ostledb index --db {db} --backend sorted`"),
        FileKind::HashKeys => format!("rebuild it with `ostledb index --db {db} --backend hash`"),
        FileKind::Bfs => format!("rebuild it with `ostledb bfs --db {db} --store`"),
        FileKind::PhaseFile => format!("delete it and run `ostledb solve --db {db}` again"),
        k => panic!("no case of {k}"),
    };
    for case in &cases {
        let (kind, file) = (case.kind, &case.file);
        assert_eq!(FileKind::of_path(file), Some(kind), "{}", file.display());
        let good = std::fs::read(file).unwrap();
        let mut flipped = good.clone();
        flipped[case.body_byte] ^= 0x04;
        for (what, bad) in [("truncated", &good[..good.len() - 1]), ("flipped", &flipped[..])] {
            let e = read_with(case, bad);
            assert_eq!(e.exit_code(), ostledb::error::EXIT_CORRUPT, "{kind} {what}: {e:?}");
            let msg = e.to_string();
            assert!(msg.contains(&fix(kind)), "{kind} {what}: {msg}");
            if kind != FileKind::PhaseFile {
                assert!(!msg.contains("ostledb solve"), "{kind} {what}: {msg}");
            }
        }
    }
    // Without the solver's phase file, a damaged value file can only be solved again.
    let values = cases.iter().find(|c| c.kind == FileKind::Values).unwrap();
    std::fs::remove_file(ostledb::working::phasefile::phase_file(&dir, ostledb::game::Phase::new(3, 3))).unwrap();
    let mut flipped = std::fs::read(&values.file).unwrap();
    flipped[values.body_byte] ^= 0x04;
    let msg = read_with(values, &flipped).to_string();
    assert!(msg.contains(&format!("delete it and run `ostledb solve --db {db}` again")), "{msg}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Phase value files that do not say their special values are pruned (an import, an older
/// solver) have every special move whose node does not exist dropped by `pack`; a file
/// that says so is packed as it is. Here 3x3 records are given specials no predecessor can
/// forbid: without the flag they vanish from the store, with it they stay.
#[test]
fn pack_drops_unreachable_specials_unless_the_phase_file_says_they_are_pruned() {
    use ostledb::game::moves::{Removal, is_immediate_win, moves, play};
    use ostledb::record::{Packed, PhaseValues, value::win};
    use ostledb::working::phasefile;
    let g = Geometry::new(3, 3).unwrap();
    let sol = oracle(&g, 6);
    for pruned in [false, true] {
        let dir = tmpdir(&format!("unpruned-{pruned}"));
        let mut planted = Vec::new();
        for p in sol.index().phases() {
            let ph = p.phase();
            let mut raw = sol.phase(ph).unwrap().raw().to_vec();
            for (i, r) in raw.iter_mut().enumerate() {
                let rec = Packed(*r);
                let pos = p.position_at(i as u64);
                // An immediate win is stored as filler (v3): no special move to keep.
                if rec.special_move() != 0 || i % 3 != 0 || is_immediate_win(&g, &pos) {
                    continue;
                }
                let ms = moves(&g, &pos);
                let unreachable = (1..=ms.len()).find(|&j| {
                    play(&g, &pos, ms[j - 1]).is_some_and(|m| m.removal == Removal::None)
                        && !node_exists_naive(&g, &pos, j)
                });
                if let Some(j) = unreachable {
                    let other = if rec.base() == 0 { win(3) } else { 0 };
                    *r = Packed::new(rec.base(), j as u32, other).0;
                    planted.push((ph, i as u64, j as u32, other, rec.base()));
                }
            }
            let flags = if pruned { phasefile::SPECIALS_PRUNED } else { 0 };
            phasefile::save(&dir, &g, &PhaseValues::from_raw(ph, raw), flags).unwrap();
        }
        assert!(planted.len() > 20, "{} planted", planted.len());
        let opts = PackOptions { backends: vec![Backend::Rank], ..PackOptions::default() };
        pack(&dir, &g, 6, &opts, |_| {}).unwrap();
        let db = Store::open(&dir).unwrap();
        for &(ph, i, j, other, base) in &planted {
            let got = db.record(ph, i).unwrap();
            let want = sol.phase(ph).unwrap().record(i);
            assert_eq!(got.base, want.base, "{ph} #{i}");
            if pruned {
                let written = Packed::new(base, j, other).record();
                assert_eq!(got.special, written.special, "{ph} #{i}: kept as written");
                assert!(got.special.is_some());
            } else {
                assert_eq!(got.special, None, "{ph} #{i}: node ({j}) does not exist, dropped");
            }
        }
        let _ = std::fs::remove_dir_all(&dir);
    }
}

/// A breadth-first search stored by positions gives every node's depth through its
/// predecessors: on 3x3 and 4x4 with three pieces to exhaustion (checkmates expanded or
/// not) and 4x4 with four pieces to depth 7 (not complete), every node of every position
/// has the depth the node-list search gave it, or none where that search has none; each
/// position's depth is the least of its nodes'. A flipped byte in a block is an error
/// that names the file, never a wrong depth.
#[test]
fn first_depth_file_gives_the_depth_of_every_node_like_the_node_list_search() {
    use ostledb::bfs_depths::first_depths::{FILE_NAME, FirstDepthFile};
    use ostledb::game::moves::moves;
    use ostledb::game::node::{Convention, node_key};
    use ostledb::progress::Silent;
    use ostledb::solve::bfs::bfs_layers_with;
    use ostledb::solve::bfs_positions::{bfs_first_depths, store_first_depths};

    for (n, start, max_depth, mates, every) in
        [(3, 3, 255, true, 1), (3, 3, 255, false, 1), (4, 3, 255, true, 1), (4, 4, 7, true, 37)]
    {
        let what = format!("{n}x{n} with {start} pieces to depth {max_depth}, checkmates expanded {mates}");
        let g = Geometry::new(n, start).unwrap();
        let want = bfs_layers_with(&g, Convention::Published, mates, max_depth, u64::MAX, &Silent);
        let (report, depths) = bfs_first_depths(&g, mates, max_depth, &Silent).unwrap();
        let dir = tmpdir(&format!("first-depths-{n}-{start}-{mates}"));
        std::fs::create_dir_all(&dir).unwrap();
        let (summary, len) = store_first_depths(&dir, &report, &depths, &Silent).unwrap();
        assert_eq!(summary.complete, max_depth == 255, "{what}");
        let file = FirstDepthFile::open(&dir, &g).unwrap().expect("the file just written");
        assert_eq!((file.summary(), file.file_len()), (&summary, len), "{what}");
        let (mut nodes, mut reached) = (0u64, 0u64);
        for ph in file.numbering().index().phases() {
            for i in (0..ph.len()).step_by(every) {
                let p = ph.position_at(i);
                let mut least = None;
                for j in 0..=moves(&g, &p).len() {
                    let d = want.nodes.depth_of_key(node_key(p.code(), j));
                    assert_eq!(file.node_depth(&p, j).unwrap(), d, "{what}: {p:?} node {j}");
                    least = [least, d].into_iter().flatten().min();
                    nodes += d.is_some() as u64;
                }
                assert_eq!(file.position_depth(&p).unwrap(), least, "{what}: {p:?}");
                reached += least.is_some() as u64;
            }
        }
        assert!(reached > 100 && nodes > reached, "{what}: {reached} positions, {nodes} nodes");
        if every == 1 {
            assert_eq!(nodes, want.total_nodes, "{what}");
        }
        if (n, start, mates) == (3, 3, true) {
            // Through a database's analysis: the start is at 0, each child of it at 1 (or
            // the depth its node has), and a move's child node as the search says.
            build(&g, &dir, 2 * start, vec![Backend::Rank]);
            let db = ostledb::Database::open(&dir).unwrap();
            assert!(db.has_search().unwrap(), "the first depths are a stored search (`bfs_stored` of /api/v1/stats)");
            let initial = ostledb::game::Position::initial(&g);
            let a = db.analyse(&initial, None).unwrap();
            let f = a.from_start.expect("the first-depth file is found");
            assert_eq!((f.depth, f.position_depth, f.complete), (Some(0), Some(0), true));
            assert_eq!(f.searched_to as usize, want.layers.len() - 1);
            for m in ostledb::game::moves::moves(&g, &initial).iter() {
                let played = ostledb::game::moves::play(&g, &initial, *m).unwrap();
                let a = db.analyse(&played.child, Some(&initial)).unwrap();
                let key = node_key(canonical(&g, &played.child).0.code(), a.node_index);
                assert_eq!(a.from_start.unwrap().depth, want.nodes.depth_of_key(key), "{m:?}");
            }
        }
        // Damage in the middle of the first block.
        let path = dir.join(FILE_NAME);
        let mut bytes = std::fs::read(&path).unwrap();
        bytes[100] ^= 0x10;
        std::fs::write(&path, &bytes).unwrap();
        let file = FirstDepthFile::open(&dir, &g).unwrap().unwrap();
        let err = file.depth_at(0).unwrap_err();
        assert!(matches!(err, Error::ChecksumMismatch { .. }), "{what}: {err}");
        assert!(file.check().is_err());
        let _ = std::fs::remove_dir_all(&dir);
    }
}

/// `stats --longest`: the longest win of each phase and the positions that have it, read
/// from a packed database (losses elided, immediate wins as filler, small blocks), equal
/// to a walk over every node of the in-memory solution.
#[test]
fn longest_wins_equal_a_walk_over_every_node() {
    use ostledb::analysis::stats::{LongestWins, PhaseStats, database_stats, longest_wins};
    use ostledb::analysis::sweep::Checkpoint;
    use ostledb::game::moves::{is_immediate_win, moves};
    use ostledb::progress::Silent;
    let g = Geometry::new(3, 3).unwrap();
    let sol = solve(&g, 6, &SolveOptions::default()).unwrap();
    let dir = tmpdir("longest");
    build(&g, &dir, 6, vec![Backend::Rank]);
    let db = Store::open(&dir).unwrap();
    let got = longest_wins(&db, &Silent).unwrap();
    assert_eq!(got.len(), sol.index().phases().len());
    for (l, pi) in got.iter().zip(sol.index().phases()) {
        let (mut best, mut at) = (0u32, std::collections::BTreeSet::new());
        for idx in 0..pi.len() {
            let pos = pi.position_at(idx);
            if is_immediate_win(&g, &pos) {
                continue;
            }
            for j in 0..=moves(&g, &pos).len() {
                if let Outcome::Win(d) = sol.node(&pos, j) {
                    if d > best {
                        (best, at) = (d, Default::default());
                    }
                    if d == best {
                        at.insert(idx);
                    }
                }
            }
        }
        let phase = pi.phase();
        assert_eq!(l.phase, [phase.player, phase.opponent]);
        assert_eq!(l.plies, best, "{phase}");
        let positions: std::collections::BTreeSet<u64> = l.positions.iter().map(|&(i, _)| i).collect();
        assert_eq!(positions, at, "{phase}");
        assert!(best > 5, "{phase}: {best}");
    }
    // `stats` counts the same in its walk over every position, by code (and the longest
    // of all in its sums).
    let mut ck = Checkpoint::open(None, "stats", &db, std::time::Duration::ZERO, &Silent).unwrap();
    let stats = database_stats(&db, None, &Silent, &mut ck).unwrap();
    let mut all = LongestWins::default();
    for (st, l) in stats.iter().zip(&got) {
        let pi = db.index().phase(ostledb::game::Phase::new(l.phase[0], l.phase[1])).unwrap();
        let by_code: Vec<(u64, Option<u32>)> =
            l.positions.iter().map(|&(i, w)| (pi.position_at(i).code(), w)).collect();
        assert_eq!(st.longest_win, LongestWins { plies: l.plies, positions: by_code }, "{:?}", l.phase);
        all = all.merge(st.longest_win.clone());
    }
    let total = stats.into_iter().fold(PhaseStats::default(), PhaseStats::merge);
    assert_eq!(total.longest_win, all);
    assert!(!all.positions.is_empty());
    let _ = std::fs::remove_dir_all(&dir);
}
