//! Fixtures from the published solver itself (eukaryo/ostle_solver, `solver -b -s 8`: the
//! breadth-first search from its (4,4) start, `tests/data/reference-s8/README.md` says how
//! they were made): the BFS files ostledb exports for the same search are those the
//! solver wrote, byte for byte, and its fingerprint is the solver's.
//!
//! The whole comparison (161 files, every file's digest and the run's fingerprint) is a
//! search of 160,900,185 positions and an export of 161 files: minutes on 2 cores, so it
//! is ignored and run by hand (`cargo test --release -- --ignored reference`). What CI
//! runs is cheaper: the solver's sample lines made again from their own depths (the
//! line rule: canonical codes, `checkmate`, which fields are empty), and the first file
//! of a search stopped at depth 10, against the solver's first file with every depth
//! past 10 written `-1`, as a stopped search writes it.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use ostledb::game::notation::base64_to_code;
use ostledb::game::symmetry::canonical_code;
use ostledb::game::{Geometry, Phase, Position};
use ostledb::progress::Silent;
use ostledb::published::export::{ExportedFile, export_bfs_by_positions, run_fingerprint};
use ostledb::published::{FIELDS, LINES_PER_FILE, bfs_nontrivial_nodes, write_bfs_line};
use ostledb::solve::bfs_positions::{Checkpoints, bfs_first_depths_from, store_first_depths};
use ostledb::store::first_depths::FirstDepthFile;

const MAX: u32 = 8;

fn data(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/reference-s8").join(name)
}

fn tmpdir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("ostledb-reference-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// `run.txt`: `key value` lines (`#` comments).
fn run_facts() -> BTreeMap<String, String> {
    std::fs::read_to_string(data("run.txt"))
        .unwrap()
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .map(|l| {
            let (k, v) = l.split_once(' ').unwrap_or((l, ""));
            (k.to_string(), v.trim().to_string())
        })
        .collect()
}

fn fact(name: &str) -> String {
    run_facts().remove(name).unwrap_or_else(|| panic!("run.txt has no `{name}`"))
}

/// `bfs-digests.txt`: every BFS file's digest by the published recipe, one a line, file
/// 0000 first; as (name, digest).
fn file_digests() -> Vec<(String, String)> {
    std::fs::read_to_string(data("bfs-digests.txt"))
        .unwrap()
        .lines()
        .enumerate()
        .map(|(n, d)| (ostledb::published::file_name(MAX, ostledb::published::Kind::Bfs, n as u64), d.to_string()))
        .collect()
}

/// `samples.txt`: lines of the solver's files, `<file> <line number> <line>`.
fn samples() -> Vec<(String, u64, String)> {
    std::fs::read_to_string(data("samples.txt"))
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

/// The phase the solver's `-s 8` starts in.
fn start() -> Phase {
    Phase::start_of(Geometry::standard(), MAX).expect("a phase of 8 pieces")
}

/// Every sample line of the solver is the line ostledb writes for that position with
/// the same depths: a canonical code, `checkmate` exactly on immediate wins, and a
/// field (a depth or `-1`) exactly on the nodes non-trivial in the BFS sense. The start
/// node (depth 0) is ostledb's start of `-s 8`.
#[test]
fn the_solvers_sample_lines_are_ostledbs() {
    let g = Geometry::standard();
    let samples = samples();
    assert!(samples.len() >= 20, "{} samples", samples.len());
    let mut start_seen = false;
    for (file, n, line) in &samples {
        let mut parts = line.split(',');
        let code = base64_to_code(parts.next().unwrap()).unwrap();
        let pos = Position::from_code(code);
        assert_eq!(canonical_code(g, &pos), code, "{file}:{n}: {line}");
        assert!(pos.phase().pieces() <= MAX, "{file}:{n}: {line}");
        let fields: Vec<&str> = parts.filter(|f| *f != "checkmate").collect();
        assert_eq!(fields.len(), FIELDS, "{file}:{n}: {line}");
        let depths: [Option<u32>; FIELDS] = std::array::from_fn(|j| fields[j].parse::<u32>().ok());
        let mut again = String::new();
        write_bfs_line(g, &pos, &depths, bfs_nontrivial_nodes(g, &pos, MAX), &mut again);
        assert_eq!(again, format!("{line}\n"), "{file}:{n}");
        if depths[0] == Some(0) {
            assert_eq!(code, canonical_code(g, &Position::start(g, start())), "{file}:{n}: the start");
            start_seen = true;
        }
    }
    assert!(start_seen, "the samples hold the start's line");
}

/// The first BFS file of ostledb's search from the (4,4) start stopped at depth 10 is
/// the solver's first file with every depth past 10 written `-1` (the depths up to 10
/// are final after layer 10; a stopped search writes `-1` for every non-trivial node it
/// did not reach). The search to depth 10 reaches 8.9 M nodes; the file is made from
/// predecessors.
#[test]
fn the_first_bfs_file_to_depth_10_is_the_solvers() {
    let g = Geometry::standard();
    let dir = tmpdir("depth-10");
    let (report, depths) = bfs_first_depths_from(g, start(), true, 10, &Checkpoints::default(), &Silent).unwrap();
    store_first_depths(&dir, &report, &depths, &Silent).unwrap();
    drop(depths);
    let file = FirstDepthFile::open(&dir, g).unwrap().expect("stored");
    let layers: Vec<u64> = report.layers.iter().map(|l| l.nodes).collect();
    let want: Vec<u64> = fact("layers").split(' ').map(|n| n.parse().unwrap()).collect();
    assert_eq!(layers, want[..11], "the solver's first 11 layers");
    let first = first_files(&file, 1, false);
    assert_eq!(first[0].name, "ostle_8_bfs_output0000.txt");
    assert_eq!(first[0].lines, LINES_PER_FILE);
    assert_eq!(first[0].sha256, fact("file0000-to-depth-10"));
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

/// The whole search from the (4,4) start, exported: every one of the solver's 161 BFS
/// files has the same digest, and the run the same fingerprint as the solver printed.
#[test]
#[ignore = "a search of 160,900,185 positions and 161 files (minutes); cargo test --release -- --ignored reference"]
fn every_bfs_file_and_the_fingerprint_are_the_solvers() {
    let g = Geometry::standard();
    let dir = tmpdir("whole");
    let (report, depths) = bfs_first_depths_from(g, start(), true, 255, &Checkpoints::default(), &Silent).unwrap();
    let layers: Vec<String> = report.layers.iter().map(|l| l.nodes.to_string()).collect();
    assert_eq!(layers.join(" "), fact("layers"));
    store_first_depths(&dir, &report, &depths, &Silent).unwrap();
    drop(depths);
    let file = FirstDepthFile::open(&dir, g).unwrap().expect("stored");
    let files = first_files(&file, usize::MAX, true);
    let got: Vec<(String, String)> = files.iter().map(|f| (f.name.clone(), f.sha256.clone())).collect();
    assert_eq!(got, file_digests());
    assert_eq!(files.iter().map(|f| f.lines).sum::<u64>().to_string(), fact("lines"));
    assert_eq!(run_fingerprint(&files).map(|f| f.to_string()), Some(fact("fingerprint")));
    let _ = std::fs::remove_dir_all(dir);
}
