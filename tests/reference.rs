//! Fixtures from the published solver itself (eukaryo/ostle_solver, `solver -b -s 8`: the
//! breadth-first search from its (4,4) start; `tests/data/reference-s8/README.md` says how
//! they were made): the BFS files ostledb exports for the same search are those the
//! solver wrote, byte for byte, and its fingerprint is the solver's.
//!
//! `depth-10/` is the solver's search stopped after depth 10 (every node past it written
//! `-1`), `whole/`, when present, its whole search. Comparing all 161 files is a pass over
//! 160,900,185 positions (minutes on 2 cores), so that test is ignored and run by hand
//! (`cargo test --release --test main -- --ignored reference`). What every release test
//! run checks is cheaper: the solver's sample lines made again from their own depths (the
//! line rule: canonical codes, `checkmate`, which fields are empty, `-1`), and the first
//! two files of ostledb's search stopped at depth 10 against the solver's.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use ostledb::bfs_depths::first_depths::FirstDepthFile;
use ostledb::bfs_depths::node_keys::BfsFile;
use ostledb::game::node::{Convention, node_key};
use ostledb::game::notation::base64_to_code;
use ostledb::game::symmetry::canonical_code;
use ostledb::game::{Geometry, Phase, Position};
use ostledb::progress::Silent;
use ostledb::published::export_bfs::export_bfs_by_positions;
use ostledb::published::export_files::{ExportedFile, run_fingerprint};
use ostledb::published::import::import_bfs;
use ostledb::published::{FIELDS, LINES_PER_FILE, bfs_nontrivial_nodes, write_bfs_line};
use ostledb::solve::bfs_positions::{Checkpoints, bfs_first_depths_from, store_first_depths};

const MAX: u32 = 8;

/// The fixtures of the solver's runs: `depth-10` always, `whole` when it was made.
fn runs() -> Vec<&'static str> {
    ["depth-10", "whole"].into_iter().filter(|r| data(r, "run.txt").exists()).collect()
}

fn data(run: &str, name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/reference-s8").join(run).join(name)
}

fn tmpdir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("ostledb-reference-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// `run.txt`: `key value` lines (`#` comments).
fn run_facts(run: &str) -> BTreeMap<String, String> {
    std::fs::read_to_string(data(run, "run.txt"))
        .unwrap()
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .map(|l| {
            let (k, v) = l.split_once(' ').unwrap_or((l, ""));
            (k.to_string(), v.trim().to_string())
        })
        .collect()
}

fn fact(run: &str, name: &str) -> String {
    run_facts(run).remove(name).unwrap_or_else(|| panic!("{run}/run.txt has no `{name}`"))
}

/// `bfs-digests.txt`: every BFS file's digest by the published recipe, one a line, file
/// 0000 first; as (name, digest).
fn file_digests(run: &str) -> Vec<(String, String)> {
    std::fs::read_to_string(data(run, "bfs-digests.txt"))
        .unwrap()
        .lines()
        .enumerate()
        .map(|(n, d)| (ostledb::published::file_name(MAX, ostledb::published::Kind::Bfs, n as u64), d.to_string()))
        .collect()
}

/// `samples.txt`: lines of the solver's files, `<file> <line number> <line>`.
fn samples(run: &str) -> Vec<(String, u64, String)> {
    std::fs::read_to_string(data(run, "samples.txt"))
        .unwrap()
        .lines()
        .filter(|l| !l.starts_with('#'))
        .map(|l| {
            let mut p = l.splitn(3, ' ');
            let (f, n, line) = (p.next().unwrap(), p.next().unwrap(), p.next().unwrap());
            (f.to_string(), n.parse().unwrap(), line.to_string())
        })
        .collect()
}

/// A solver's line read as the tests read it: its position's code and its fields
/// (`checkmate` left out).
fn code_and_fields(line: &str) -> (u64, Vec<&str>) {
    let mut parts = line.split(',');
    let code = base64_to_code(parts.next().unwrap()).unwrap();
    (code, parts.filter(|f| *f != "checkmate").collect())
}

/// The phase the solver's `-s 8` starts in.
fn start() -> Phase {
    Phase::start_of(Geometry::standard(), MAX).expect("a phase of 8 pieces")
}

/// Every sample line of the solver is the line ostledb writes for that position with
/// the same depths: a canonical code, `checkmate` exactly on immediate wins, a depth or
/// `-1` exactly on the nodes non-trivial in the BFS sense, and empty fields elsewhere.
/// The start node (depth 0) is ostledb's start of `-s 8`.
#[test]
fn the_solvers_sample_lines_are_ostledbs() {
    let g = Geometry::standard();
    assert!(runs().contains(&"depth-10"), "the depth-10 fixture is in the repository");
    for run in runs() {
        let samples = samples(run);
        assert!(samples.len() >= 20, "{run}: {} samples", samples.len());
        let (mut start_seen, mut unreached_seen) = (false, false);
        for (file, n, line) in &samples {
            let (code, fields) = code_and_fields(line);
            let pos = Position::from_code(code);
            assert_eq!(canonical_code(g, &pos), code, "{run}/{file}:{n}: {line}");
            assert!(pos.phase().pieces() <= MAX, "{run}/{file}:{n}: {line}");
            assert_eq!(fields.len(), FIELDS, "{run}/{file}:{n}: {line}");
            let depths: [Option<u32>; FIELDS] = std::array::from_fn(|j| fields[j].parse::<u32>().ok());
            unreached_seen |= fields.contains(&"-1");
            let mut again = String::new();
            write_bfs_line(g, &pos, &depths, bfs_nontrivial_nodes(g, &pos, MAX), &mut again);
            assert_eq!(again, format!("{line}\n"), "{run}/{file}:{n}");
            if depths[0] == Some(0) {
                assert_eq!(code, canonical_code(g, &Position::start(g, start())), "{run}/{file}:{n}: the start");
                start_seen = true;
            }
        }
        assert!(start_seen, "{run}: the samples hold the start's line");
        assert_eq!(unreached_seen, fact(run, "minus-ones") != "0", "{run}: a sample with -1 when the run has one");
    }
}

/// `import` reads the solver's lines: its sample lines, as a BFS file of their own
/// (ascending codes, as in its files), are accepted, and the database then holds
/// exactly their depths: every depth field a node at that depth, every `-1` and empty
/// field no node.
#[test]
fn the_solvers_sample_lines_import_to_their_own_depths() {
    let g = Geometry::standard();
    for run in runs() {
        let dir = tmpdir(&format!("import-{run}"));
        let file = dir.join(ostledb::published::file_name(MAX, ostledb::published::Kind::Bfs, 0));
        let samples = samples(run);
        let text: String = samples.iter().map(|(_, _, line)| format!("{line}\n")).collect();
        std::fs::write(&file, text).unwrap();
        let db = dir.join("db");
        std::fs::create_dir(&db).unwrap();
        let nodes = import_bfs(g, MAX, std::slice::from_ref(&file), &db).unwrap();
        let bfs = BfsFile::open(&db, g, Convention::Published).unwrap().expect("imported");
        let mut depths = 0;
        for (f, n, line) in &samples {
            let (code, fields) = code_and_fields(line);
            for (j, field) in fields.iter().enumerate() {
                let want = field.parse::<u32>().ok();
                depths += want.is_some() as u64;
                let got = bfs.depth_of_key(node_key(code, j)).unwrap();
                assert_eq!(got, want, "{run}/{f}:{n} field {j}: {line}");
            }
        }
        assert_eq!(nodes, depths, "{run}: the nodes read");
        assert!(depths > 0, "{run}: the samples hold depths");
        let _ = std::fs::remove_dir_all(dir);
    }
}

/// ostledb's search from the (4,4) start stopped at depth 10 reaches the solver's layers,
/// and its first two BFS files are the solver's stopped at the same depth, byte for byte
/// (every non-trivial node past depth 10 written `-1`, by both). The search reaches
/// 8.9 M nodes; the files are made from predecessors.
#[test]
fn the_first_bfs_files_to_depth_10_are_the_solvers() {
    let g = Geometry::standard();
    let run = "depth-10";
    let dir = tmpdir("first-files-depth-10");
    let (report, depths) = bfs_first_depths_from(g, start(), true, 10, &Checkpoints::default(), &Silent).unwrap();
    let layers: Vec<String> = report.layers.iter().map(|l| l.nodes.to_string()).collect();
    assert_eq!(layers.join(" "), fact(run, "layers"), "the solver's layers to depth 10");
    store_first_depths(&dir, &report, &depths, &Silent).unwrap();
    drop(depths);
    let file = FirstDepthFile::open(&dir, g).unwrap().expect("stored");
    let got: Vec<(String, String)> =
        first_files(&file, 2, false).iter().map(|f| (f.name.clone(), f.sha256.clone())).collect();
    assert_eq!(got[..], file_digests(run)[..2]);
    let _ = std::fs::remove_dir_all(dir);
}

/// The BFS files of the search stored in `file` (no node layers: depths from
/// predecessors), digests only, up to file `stop` (all when `usize::MAX`).
fn first_files(file: &FirstDepthFile, stop: usize, fingerprint: bool) -> Vec<ExportedFile> {
    let mut kept = Vec::new();
    let mut done = |files: &[ExportedFile], _| {
        if files.len() >= stop {
            kept = files.to_vec();
            return Err(ostledb::Error::InvalidArgument("enough files".into()));
        }
        Ok(())
    };
    let sink = (None, fingerprint);
    match export_bfs_by_positions(file, None, MAX, LINES_PER_FILE, sink, &Silent, (vec![], vec![]), &mut done) {
        Ok(all) => all,
        Err(ostledb::Error::InvalidArgument(m)) if m == "enough files" => kept,
        Err(e) => panic!("{e}"),
    }
}

/// Each of the solver's runs made again: every one of its 161 BFS files has the same
/// digest, the files the same lines, and the run the fingerprint the solver printed.
#[test]
#[ignore = "a pass over 160,900,185 positions per run (minutes); cargo test --release --test main -- --ignored reference"]
fn every_bfs_file_and_the_fingerprint_are_the_solvers() {
    let g = Geometry::standard();
    for run in runs() {
        let depth = if run == "depth-10" { 10 } else { 255 };
        let dir = tmpdir(&format!("every-file-{run}"));
        let (report, depths) =
            bfs_first_depths_from(g, start(), true, depth, &Checkpoints::default(), &Silent).unwrap();
        let layers: Vec<String> = report.layers.iter().map(|l| l.nodes.to_string()).collect();
        assert_eq!(layers.join(" "), fact(run, "layers"), "{run}");
        store_first_depths(&dir, &report, &depths, &Silent).unwrap();
        drop(depths);
        let file = FirstDepthFile::open(&dir, g).unwrap().expect("stored");
        let files = first_files(&file, usize::MAX, true);
        let got: Vec<(String, String)> = files.iter().map(|f| (f.name.clone(), f.sha256.clone())).collect();
        assert_eq!(got, file_digests(run), "{run}");
        assert_eq!(files.iter().map(|f| f.lines).sum::<u64>().to_string(), fact(run, "lines"), "{run}");
        assert_eq!(run_fingerprint(&files).map(|f| f.to_string()), Some(fact(run, "fingerprint")), "{run}");
        let _ = std::fs::remove_dir_all(dir);
    }
}
