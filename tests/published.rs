//! The published text format on a small board: export -> import -> export gives the
//! same bytes and digest, every field is the in-memory solution's node value, the
//! digest script agrees, and malformed input is an error naming file and line, never a
//! panic.

use std::path::{Path, PathBuf};

use ostledb::Error;
use ostledb::game::{Geometry, Position};
use ostledb::progress::Silent;
use ostledb::published::export::{ExportOptions, ExportSummary, export};
use ostledb::published::import::import;
use ostledb::published::{Fields, nontrivial_nodes, parse_line};
use ostledb::record::outcome_val;
use ostledb::solve::SolveOptions;
use ostledb::solve::retrograde::{solve, solve_into};
use ostledb::store::Store;
use ostledb::store::values::WriteOptions;
use ostledb::working::pack::{PackOptions, pack};

const MAX: u32 = 6;
/// Small files, so that the 3x3 board's positions span several.
const LINES: u64 = 500;

fn tmpdir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("ostledb-published-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    d
}

fn geom() -> Geometry {
    Geometry::new(3, 3).expect("3x3 board")
}

fn pack_opts() -> PackOptions {
    PackOptions { values: WriteOptions { block: 256, level: 3, ..WriteOptions::default() }, ..PackOptions::default() }
}

/// The 3x3 board with three pieces a side, solved and packed.
fn solved_db(name: &str) -> PathBuf {
    let dir = tmpdir(name);
    let opts = SolveOptions { dir: Some(dir.clone()), ..SolveOptions::default() };
    solve_into(&geom(), MAX, &opts, |_| Ok(())).expect("solve");
    pack(&dir, &geom(), MAX, &pack_opts(), |_| {}).expect("pack");
    dir
}

fn export_to(db: &Path, out: Option<&Path>) -> ExportSummary {
    let db = Store::open(db).expect("open");
    let opts = ExportOptions { lines_per_file: LINES, ..ExportOptions::default() };
    export(&db, &opts, out, &Silent).expect("export")
}

/// The published solver's fingerprint of the run whose files, in order, are `names` in
/// `dir`, computed line by line.
fn fingerprint_of_files(dir: &Path, names: &[&str]) -> u64 {
    use ostledb::published::fingerprint::{Cipher, Parsed, fold};
    let cipher = Cipher::new();
    let (mut xor, mut positions, mut nodes) = (0u128, 0u64, 0u64);
    for name in names {
        for line in std::fs::read_to_string(dir.join(name)).unwrap().lines() {
            let p = Parsed::of(&format!("{line}\n")).unwrap();
            xor ^= p.part(&cipher, positions, nodes).xor;
            positions += p.lines();
            nodes += p.nodes();
        }
    }
    fold(xor)
}

fn files_of(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut v: Vec<(String, Vec<u8>)> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| {
            let e = e.unwrap();
            (e.file_name().to_string_lossy().into_owned(), std::fs::read(e.path()).unwrap())
        })
        .collect();
    v.sort();
    v
}

#[test]
fn export_import_export_is_byte_identical() {
    let db = solved_db("rt-db");
    // With a stored BFS (the whole reachable graph of the 3x3 board), its files too.
    let r =
        ostledb::solve::bfs::bfs_layers(&geom(), ostledb::game::node::Convention::Published, 200, u64::MAX, &Silent);
    let layers: Vec<&[u64]> = (0..=r.nodes.max_depth()).filter_map(|d| r.nodes.layer(d)).collect();
    ostledb::bfs_depths::node_keys::write(
        &db,
        &geom(),
        ostledb::game::node::Convention::Published,
        true,
        true,
        &layers,
    )
    .unwrap();
    let (a, b, db2) = (tmpdir("rt-a"), tmpdir("rt-b"), tmpdir("rt-db2"));
    let first = export_to(&db, Some(&a));
    assert!(first.retrograde_files.len() > 3, "{first:?}");
    assert!(!first.bfs_files.is_empty() && first.bfs_files[0].name == "ostle_6_bfs_output0000.txt", "{first:?}");
    assert_eq!(first.retrograde_files[0].name, "ostle_6_retrograde_output0000.txt");
    assert!(first.retrograde_files.iter().rev().skip(1).all(|f| f.lines == LINES));
    // The digest without writing equals the digest of the files written.
    assert_eq!(export_to(&db, None), first);
    let s = import(&geom(), &a, &db2, &pack_opts(), false, &Silent).expect("import");
    assert_eq!(s.positions, first.positions);
    assert_eq!(s.rederived, s.positions, "every position re-derived before writing");
    assert!(s.derived > 0, "the 3x3 board has positions whose node 0 is trivial");
    assert_eq!((s.bfs_files, s.bfs_nodes), (first.bfs_files.len(), r.total_nodes));
    let second = export_to(&db2, Some(&b));
    assert_eq!(second, first);
    assert_eq!(files_of(&a), files_of(&b));
    // The fingerprint of each run, as the export computes it, is that of its files'
    // lines read back one by one; the imported database's is the same.
    let printed = |db: &Path| {
        let opts = ExportOptions { lines_per_file: LINES, fingerprint: true, ..ExportOptions::default() };
        export(&Store::open(db).unwrap(), &opts, None, &Silent).unwrap()
    };
    let with_prints = printed(&db);
    let f = with_prints.fingerprints.clone().expect("asked for");
    let bfs_names: Vec<&str> = first.bfs_files.iter().map(|f| f.name.as_str()).collect();
    let retro_names: Vec<&str> = first.retrograde_files.iter().map(|f| f.name.as_str()).collect();
    assert_eq!(f.bfs, Some(fingerprint_of_files(&a, &bfs_names).to_string()));
    assert_eq!(f.retrograde, fingerprint_of_files(&a, &retro_names).to_string());
    assert_ne!(f.bfs, Some(f.retrograde.clone()));
    assert_eq!(printed(&db2).fingerprints, Some(f));
    assert_eq!(with_prints.digest, first.digest);
    // The imported database holds what the solve stored, record for record.
    let (d1, d2) = (Store::open(&db).unwrap(), Store::open(&db2).unwrap());
    for p in d1.index().phases() {
        for i in 0..p.len() {
            assert_eq!(d1.record(p.phase(), i).unwrap(), d2.record(p.phase(), i).unwrap(), "{} #{i}", p.phase());
        }
    }
    // Exporting into a directory that already holds such files is refused.
    let again = export(&d1, &ExportOptions { lines_per_file: LINES, ..ExportOptions::default() }, Some(&a), &Silent);
    assert!(matches!(again, Err(Error::InvalidArgument(_))), "{again:?}");
    // Importing over an existing database is refused.
    assert!(import(&geom(), &a, &db2, &pack_opts(), false, &Silent).is_err());
    // A damaged BFS line is refused with its file and line.
    let bfs0 = a.join(&first.bfs_files[0].name);
    let good = std::fs::read_to_string(&bfs0).unwrap();
    for (from, to) in [(",", ",,"), (",", ",x"), (",", ",checkmate,")] {
        std::fs::write(&bfs0, good.replacen(from, to, 1)).unwrap();
        let db3 = tmpdir("rt-db3");
        match import(&geom(), &a, &db3, &pack_opts(), false, &Silent) {
            Err(Error::BadInput { line: 1, .. }) => {}
            other => panic!("{from} -> {to}: {other:?}"),
        }
        let _ = std::fs::remove_dir_all(db3);
    }
    for d in [db, a, b, db2] {
        let _ = std::fs::remove_dir_all(d);
    }
}

#[test]
fn every_field_is_the_solution_node_value() {
    let db = solved_db("fields-db");
    let out = tmpdir("fields-out");
    export_to(&db, Some(&out));
    let g = geom();
    let sol = solve(&g, MAX, &SolveOptions::default()).expect("solve in memory");
    let (mut lines, mut values, mut checkmates) = (0u64, 0u64, 0u64);
    for (_, bytes) in files_of(&out) {
        for line in std::str::from_utf8(&bytes).unwrap().lines() {
            lines += 1;
            let (code, fields) = parse_line(line).expect("a line we wrote parses");
            let pos = Position::from_code(code);
            match fields {
                Fields::Checkmate => {
                    assert!(ostledb::game::moves::is_immediate_win(&g, &pos));
                    checkmates += 1;
                }
                Fields::Nodes(nodes) => {
                    let reached = nontrivial_nodes(&g, &pos);
                    for (j, v) in nodes.iter().enumerate() {
                        assert_eq!(v.is_some(), reached >> j & 1 != 0, "{line}: field {j}");
                        if let Some(v) = v {
                            assert_eq!(*v, outcome_val(sol.node(&pos, j)), "{line}: field {j}");
                            values += 1;
                        }
                    }
                }
            }
        }
    }
    assert_eq!(lines, sol.index().len());
    assert!(values > 0 && checkmates > 0);
    for d in [db, out] {
        let _ = std::fs::remove_dir_all(d);
    }
}

/// Export once, then for each damage: copy the files, damage them, import, expect an
/// error (of the kind given, naming the line when there is one).
#[test]
fn malformed_input_is_an_error_never_a_panic() {
    let db = solved_db("bad-db");
    let good = tmpdir("bad-good");
    export_to(&db, Some(&good));
    let first = "ostle_6_retrograde_output0000.txt";
    type Damage = fn(&mut Vec<String>);
    let cases: Vec<(&str, &str, Damage, Option<u64>)> = vec![
        ("bad base64", first, |l| l[3] = l[3].replacen(|c: char| c.is_ascii_alphanumeric(), "!", 1), Some(4)),
        ("wrong field count", first, |l| l[5] = l[5].replacen(',', "", 1), Some(6)),
        ("unsorted", first, |l| l.swap(10, 11), Some(11)),
        ("missing position", first, |l| drop(l.remove(7)), Some(8)),
        (
            "value in a trivial field",
            first,
            |l| {
                let k = l.iter().position(|s| s.contains(",,")).expect("a line with an empty field");
                l[k] = l[k].replacen(",,", ",4,", 1);
            },
            None,
        ),
        (
            "not a number",
            first,
            |l| {
                let k = l.iter().position(|s| !s.ends_with("checkmate") && s.contains(",0")).expect("a draw");
                l[k] = l[k].replacen(",0", ",x", 1);
            },
            None,
        ),
        (
            "checkmate that is not",
            first,
            |l| {
                let k = l.iter().position(|s| !s.ends_with("checkmate")).unwrap();
                let code = l[k].split(',').next().unwrap().to_string();
                l[k] = format!("{code},checkmate");
            },
            None,
        ),
        ("truncated last file", "", |l| drop(l.pop()), None),
    ];
    let names: Vec<String> = files_of(&good).into_iter().map(|(n, _)| n).collect();
    for (what, file, damage, line) in cases {
        let dir = tmpdir(&format!("bad-{}", what.replace(' ', "-")));
        std::fs::create_dir_all(&dir).unwrap();
        let target = if file.is_empty() { names.last().unwrap().as_str() } else { file };
        for (name, bytes) in files_of(&good) {
            let mut text = String::from_utf8(bytes).unwrap();
            if name == target {
                let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
                damage(&mut lines);
                text = lines.join("\n") + "\n";
            }
            std::fs::write(dir.join(&name), text).unwrap();
        }
        let dbdir = tmpdir(&format!("bad-{}-db", what.replace(' ', "-")));
        match import(&geom(), &dir, &dbdir, &pack_opts(), false, &Silent) {
            Err(Error::BadInput { path, line: l, reason }) => {
                assert!(path.ends_with(target), "{what}: {path:?} {reason}");
                if let Some(want) = line {
                    assert_eq!(l, want, "{what}: {reason}");
                }
                assert!(!reason.is_empty());
            }
            other => panic!("{what}: expected a bad-input error, got {other:?}"),
        }
        assert!(Store::open(&dbdir).is_err(), "{what}: no database is left behind");
        let _ = std::fs::remove_dir_all(&dir);
        let _ = std::fs::remove_dir_all(&dbdir);
    }
    // A missing file in the middle of the numbering, and a directory with no files.
    let dir = tmpdir("bad-missing-file");
    std::fs::create_dir_all(&dir).unwrap();
    for (name, bytes) in files_of(&good) {
        if name != "ostle_6_retrograde_output0001.txt" {
            std::fs::write(dir.join(&name), bytes).unwrap();
        }
    }
    let dbdir = tmpdir("bad-missing-file-db");
    match import(&geom(), &dir, &dbdir, &pack_opts(), false, &Silent) {
        Err(Error::Io { path, .. }) => assert!(path.ends_with("ostle_6_retrograde_output0001.txt"), "{path:?}"),
        other => panic!("missing file: {other:?}"),
    }
    let empty = tmpdir("bad-empty");
    std::fs::create_dir_all(&empty).unwrap();
    assert!(matches!(import(&geom(), &empty, &dbdir, &pack_opts(), false, &Silent), Err(Error::InvalidArgument(_))));
    assert!(import(&geom(), &tmpdir("bad-nonexistent"), &dbdir, &pack_opts(), false, &Silent).is_err());
    for d in [db, good, dir, dbdir, empty] {
        let _ = std::fs::remove_dir_all(d);
    }
}

#[test]
fn the_digest_script_agrees_when_python_is_there() {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tools/published-digest.py");
    let Ok(out) = std::process::Command::new("python3").arg("--version").output() else { return };
    if !out.status.success() {
        return;
    }
    let db = solved_db("py-db");
    let dir = tmpdir("py-out");
    let s = export_to(&db, Some(&dir));
    // CRLF line ends and trailing blanks do not change the published digest.
    let last = dir.join(&s.retrograde_files[0].name);
    let text = std::fs::read_to_string(&last).unwrap().replace('\n', " \r\n");
    std::fs::write(&last, text).unwrap();
    let out = std::process::Command::new("python3").arg(&script).arg(&dir).output().expect("run the script");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(String::from_utf8(out.stdout).unwrap().trim(), s.digest);
    for d in [db, dir] {
        let _ = std::fs::remove_dir_all(d);
    }
}

#[test]
fn the_cli_exports_a_digest_and_imports() {
    let db = solved_db("cli-db");
    let (out, db2) = (tmpdir("cli-out"), tmpdir("cli-db2"));
    let run = |args: &[&str]| {
        let o = std::process::Command::new(env!("CARGO_BIN_EXE_ostledb")).args(args).output().unwrap();
        let err = String::from_utf8_lossy(&o.stderr).into_owned();
        assert!(!err.contains("panicked"), "{args:?}: {err}");
        (o.status.code(), String::from_utf8(o.stdout).unwrap(), err)
    };
    let (code, digest, _) = run(&["export", "--digest", "--quiet", "--db", db.to_str().unwrap()]);
    assert_eq!(code, Some(0));
    let digest = digest.split_whitespace().nth(1).expect("digest <hex>").to_string();
    let one_file = export(&Store::open(&db).unwrap(), &ExportOptions::default(), None, &Silent).unwrap();
    assert_eq!(one_file.retrograde_files.len(), 1, "1,000,000 lines per file hold the whole 3x3 board");
    assert_eq!(digest, one_file.digest);
    let (code, _, _) = run(&[
        "export",
        "--format",
        "published",
        "--quiet",
        "--db",
        db.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(code, Some(0));
    let (code, _, _) = run(&[
        "import",
        "--quiet",
        "--side",
        "3",
        "--start-pieces",
        "3",
        "--from",
        out.to_str().unwrap(),
        "--db",
        db2.to_str().unwrap(),
    ]);
    assert_eq!(code, Some(0));
    let (code, json, _) =
        run(&["export", "--digest", "--json", "--fingerprint", "--quiet", "--db", db2.to_str().unwrap()]);
    assert_eq!(code, Some(0));
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(v["digest"], digest.as_str());
    let opts = ExportOptions { fingerprint: true, ..ExportOptions::default() };
    let printed = export(&Store::open(&db).unwrap(), &opts, None, &Silent).unwrap();
    assert_eq!(v["fingerprints"]["retrograde"], printed.fingerprints.unwrap().retrograde.as_str());
    let (code, text, _) = run(&["export", "--digest", "--fingerprint", "--quiet", "--db", db2.to_str().unwrap()]);
    assert_eq!(code, Some(0));
    assert!(
        text.contains(&format!(
            "fingerprint of the retrograde files {}\n",
            v["fingerprints"]["retrograde"].as_str().unwrap()
        )),
        "{text}"
    );
    assert_eq!(v["retrograde_files"][0]["name"], "ostle_6_retrograde_output0000.txt");
    // Bad input: exit code 2 and one line naming the file.
    let (code, _, err) = run(&["import", "--from", "/nonexistent-ostle-dir", "--db", db2.to_str().unwrap()]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("/nonexistent-ostle-dir"), "{err}");
    for d in [db, out, db2] {
        let _ = std::fs::remove_dir_all(d);
    }
}

/// BFS files from a stored search (depth 4 of the 3x3 board, so that some nodes are
/// not reached), as the published solver writes them: one line for every position, in
/// ascending code order across files, `checkmate` exactly on immediate wins, and field
/// j the depth the search in memory gives node j, `-1` when it did not reach it but the
/// node is non-trivial, else empty; their digest comes first in the set digest.
#[test]
fn bfs_files_hold_every_position_and_every_reached_node_at_its_depth() {
    use ostledb::bfs_depths::node_keys::{BfsFile, write};
    use ostledb::game::moves::is_immediate_win;
    use ostledb::game::node::Convention;
    use ostledb::game::notation::base64_to_code;
    use ostledb::index::GameIndex;
    use ostledb::published::export_bfs::export_bfs;
    use ostledb::published::{bfs_nontrivial_nodes, set_digest};
    use ostledb::solve::bfs::bfs_layers;
    let g = geom();
    let r = bfs_layers(&g, Convention::Published, 4, u64::MAX, &Silent);
    let dir = tmpdir("bfs-store");
    let layers: Vec<&[u64]> = (0..=r.nodes.max_depth()).filter_map(|d| r.nodes.layer(d)).collect();
    write(&dir, &g, Convention::Published, true, false, &layers).unwrap();
    let bfs = BfsFile::open(&dir, &g, Convention::Published).unwrap().unwrap();
    let out = tmpdir("bfs-out");
    std::fs::create_dir_all(&out).unwrap();
    let files = export_bfs(&g, &bfs, MAX, LINES, (Some(&out), false), &Silent).unwrap();
    assert!(files.len() > 2, "{} files", files.len());
    let (mut last, mut fields_seen, mut lines, mut unreached, mut bare) = (None, 0u64, 0u64, 0u64, 0u64);
    for f in &files {
        let text = std::fs::read_to_string(out.join(&f.name)).unwrap();
        assert_eq!(text.lines().count() as u64, f.lines);
        for line in text.lines() {
            lines += 1;
            let mut parts = line.split(',');
            let code = base64_to_code(parts.next().unwrap()).unwrap();
            assert!(last.is_none_or(|l| l < code), "ascending codes");
            last = Some(code);
            let mut rest: Vec<&str> = parts.collect();
            let pos = Position::from_code(code);
            let mate = is_immediate_win(&g, &pos);
            assert_eq!(rest.first() == Some(&"checkmate"), mate, "{line}");
            if mate {
                rest.remove(0);
            }
            assert_eq!(rest.len(), 25, "{line}");
            let nontrivial = bfs_nontrivial_nodes(&g, &pos, MAX);
            let mut reached = false;
            for (j, field) in rest.iter().enumerate() {
                let want = match r.nodes.depth_of(code, j) {
                    Some(d) => d.to_string(),
                    None if nontrivial >> j & 1 == 1 => "-1".to_string(),
                    None => String::new(),
                };
                assert_eq!(*field, want, "{line} field {j}");
                fields_seen += (!field.is_empty() && *field != "-1") as u64;
                unreached += (*field == "-1") as u64;
                reached |= !field.is_empty() && *field != "-1";
            }
            bare += !reached as u64;
        }
    }
    assert_eq!(fields_seen, r.total_nodes, "every node once");
    assert_eq!(lines, GameIndex::build(&g, MAX).unwrap().len(), "every position once");
    assert!(unreached > 0 && bare > 0, "{unreached} nodes not reached, {bare} positions without a reached node");
    assert_eq!(set_digest(files.iter().map(|f| f.sha256.as_str())).len(), 64);
    for d in [dir, out] {
        let _ = std::fs::remove_dir_all(d);
    }
}

/// A search from a smaller start (the published solver's `-s N`: here the 3x3 board's
/// (3,2) start, 5 pieces) covers the phases with at most that many pieces only: its
/// first-depth file numbers only those, `export` of more pieces is refused before any
/// file is written, and the BFS files of its own pieces have a line for every position
/// of those phases, the start at depth 0, the same from node lists imported back.
#[test]
fn a_search_from_a_smaller_start_covers_its_own_phases() {
    use ostledb::game::Phase;
    use ostledb::game::symmetry::canonical_code;
    use ostledb::index::GameIndex;
    use ostledb::solve::bfs_positions::{Checkpoints, bfs_first_depths_from, store_first_depths};
    let g = geom();
    let start = Phase::start_of(&g, 5).expect("a phase of 5 pieces");
    assert_eq!(start, Phase::new(3, 2));
    let db = solved_db("smaller-start");
    let (report, depths) = bfs_first_depths_from(&g, start, true, 200, &Checkpoints::default(), &Silent).unwrap();
    assert_eq!(report.start_phase, [3, 2]);
    assert_eq!(depths.len(), GameIndex::build(&g, 5).unwrap().len());
    store_first_depths(&db, &report, &depths, &Silent).unwrap();
    let out = tmpdir("smaller-start-out");
    let d = Store::open(&db).unwrap();
    let all = export(&d, &ExportOptions { lines_per_file: LINES, ..ExportOptions::default() }, Some(&out), &Silent);
    assert!(matches!(&all, Err(Error::InvalidArgument(m)) if m.contains("--max-pieces 5")), "{all:?}");
    assert!(!out.exists() || std::fs::read_dir(&out).unwrap().next().is_none(), "no file written");
    let opts = ExportOptions { max_pieces: Some(5), lines_per_file: LINES, ..ExportOptions::default() };
    let five = export(&d, &opts, Some(&out), &Silent).unwrap();
    let lines: u64 = five.bfs_files.iter().map(|f| f.lines).sum();
    assert_eq!((lines, five.positions), (GameIndex::build(&g, 5).unwrap().len(), lines));
    let start_code = ostledb::game::notation::code_to_base64(canonical_code(&g, &Position::start(&g, start)));
    let text: String = five.bfs_files.iter().map(|f| std::fs::read_to_string(out.join(&f.name)).unwrap()).collect();
    let start_line = text.lines().find(|l| l.starts_with(&format!("{start_code},"))).expect("the start's line");
    assert_eq!(start_line.split(',').nth(1), Some("0"), "{start_line}");
    assert_eq!(text.lines().filter(|l| l.split(',').any(|f| f == "0")).count(), 1, "one node at depth 0");
    // Imported back (node lists) and exported again: the same files.
    let db2 = tmpdir("smaller-start-db2");
    import(&g, &out, &db2, &pack_opts(), false, &Silent).expect("import");
    let again = tmpdir("smaller-start-again");
    let d2 = Store::open(&db2).unwrap();
    assert_eq!(export(&d2, &opts, Some(&again), &Silent).unwrap(), five);
    assert_eq!(files_of(&out), files_of(&again));
    for d in [db, out, db2, again] {
        let _ = std::fs::remove_dir_all(d);
    }
}

/// The BFS files from a search stored by positions (the first-depth file, node depths
/// found from predecessors) are byte for byte those from the node-list search of the
/// same graph, with checkmates expanded (the published way) or not.
#[test]
fn bfs_files_by_positions_equal_those_of_the_node_lists() {
    use ostledb::game::node::Convention;
    use ostledb::solve::bfs::bfs_layers_with;
    use ostledb::solve::bfs_positions::{bfs_first_depths, store_first_depths};
    for mates in [true, false] {
        let db = solved_db(&format!("bfs-by-positions-{mates}"));
        let r = bfs_layers_with(&geom(), Convention::Published, mates, 200, u64::MAX, &Silent);
        let layers: Vec<&[u64]> = (0..=r.nodes.max_depth()).filter_map(|d| r.nodes.layer(d)).collect();
        ostledb::bfs_depths::node_keys::write(&db, &geom(), Convention::Published, mates, true, &layers).unwrap();
        let (a, b) = (tmpdir(&format!("bfs-lists-{mates}")), tmpdir(&format!("bfs-positions-{mates}")));
        let lists = export_to(&db, Some(&a));
        let (report, depths) = bfs_first_depths(&geom(), mates, 200, &Silent).unwrap();
        store_first_depths(&db, &report, &depths, &Silent).unwrap();
        let positions = export_to(&db, Some(&b));
        assert!(lists.bfs_files.len() > 1, "{lists:?}");
        assert_eq!(positions, lists, "checkmates expanded: {mates}");
        assert_eq!(files_of(&a), files_of(&b));
        for d in [db, a, b] {
            let _ = std::fs::remove_dir_all(d);
        }
    }
}

/// With the search's node layers kept beside its first depths, the BFS files are the
/// same, byte for byte, as those from predecessors (and so as the node lists'); a layer
/// file damaged, missing or extra is an error naming it, never other lines; storing first
/// depths again removes the layers (they would be of another search).
#[test]
fn bfs_files_from_node_layers_equal_those_from_predecessors() {
    use ostledb::bfs_depths::node_layers::{self, DIR_NAME};
    use ostledb::solve::bfs_positions::{Checkpoints, bfs_first_depths, bfs_first_depths_with, store_first_depths};
    for mates in [true, false] {
        let db = solved_db(&format!("bfs-node-layers-{mates}"));
        let (report, depths) = bfs_first_depths(&geom(), mates, 200, &Silent).unwrap();
        store_first_depths(&db, &report, &depths, &Silent).unwrap();
        let (a, b) = (tmpdir(&format!("bfs-preds-{mates}")), tmpdir(&format!("bfs-layers-{mates}")));
        let preds = export_to(&db, Some(&a));
        let ck = Checkpoints { dir: Some(db.clone()), node_layers: true, ..Checkpoints::default() };
        let (report, depths) = bfs_first_depths_with(&geom(), mates, 200, &ck, &Silent).unwrap();
        store_first_depths(&db, &report, &depths, &Silent).unwrap();
        node_layers::commit(depths.node_layers().unwrap(), &db, report.layers.len() as u32).unwrap();
        ck.finish().unwrap();
        let layers = export_to(&db, Some(&b));
        assert!(preds.bfs_files.len() > 1, "{preds:?}");
        assert_eq!(layers, preds, "checkmates expanded: {mates}");
        assert_eq!(files_of(&a), files_of(&b));
        // Part of the database: not a leftover for a writer to remove, and in the
        // checksum pass, one entry per layer file.
        let opened = Store::open(&db).unwrap();
        assert!(ostledb::store::directory::unlisted(&db, opened.meta()).is_empty());
        let sums = ostledb::analysis::verify::check_checksums(&opened, &Silent).unwrap();
        let checked = sums.files.iter().filter(|f| f.file.contains(&format!("/{DIR_NAME}/"))).count();
        assert_eq!(checked, report.layers.len(), "{:?}", sums.files);
        drop(opened);
        // Damage: a flipped byte in a block of a middle layer, a missing layer, an extra file.
        let dir = db.join(DIR_NAME);
        let mid = node_layers::layer_path(&dir, report.layers.len() as u32 / 2);
        let good = std::fs::read(&mid).unwrap();
        let digest = |db: &Path| {
            let db = Store::open(db).expect("open");
            let opts = ExportOptions { lines_per_file: LINES, ..ExportOptions::default() };
            export(&db, &opts, None, &Silent)
        };
        let mut bad = good.clone();
        bad[90] ^= 0x10;
        std::fs::write(&mid, &bad).unwrap();
        let e = digest(&db).expect_err("a damaged block");
        assert!(matches!(&e, Error::ChecksumMismatch { path, .. } if *path == mid), "{e:?}");
        let sums = ostledb::analysis::verify::check_checksums(&Store::open(&db).unwrap(), &Silent).unwrap();
        assert_eq!(sums.failures.len(), 1, "{:?}", sums.failures);
        assert!(sums.failures[0].file.ends_with(&*mid.file_name().unwrap().to_string_lossy()));
        std::fs::remove_file(&mid).unwrap();
        let e = digest(&db).expect_err("a missing layer");
        assert!(matches!(&e, Error::Corrupt { reason, .. } if reason.contains("no file of layer")), "{e:?}");
        std::fs::write(&mid, &good).unwrap();
        let extra = node_layers::layer_path(&dir, report.layers.len() as u32);
        std::fs::write(&extra, &good).unwrap();
        let e = digest(&db).expect_err("an extra layer");
        assert!(
            matches!(&e, Error::Corrupt { reason, .. } if reason.contains("not a layer of the stored search")),
            "{e:?}"
        );
        std::fs::remove_file(&extra).unwrap();
        assert_eq!(digest(&db).unwrap(), preds);
        store_first_depths(&db, &report, &depths, &Silent).unwrap();
        assert!(!dir.exists(), "first depths stored again: the layers are gone");
        for d in [db, a, b] {
            let _ = std::fs::remove_dir_all(d);
        }
    }
}

/// `ostledb export --digest --json` of the database `db` in files of [`LINES`] lines,
/// with `extra` arguments, crashed at write step `fault` if given.
fn run_digest(db: &Path, extra: &[&str], fault: Option<u64>) -> std::process::Output {
    let mut c = std::process::Command::new(env!("CARGO_BIN_EXE_ostledb"));
    c.args(["export", "--digest", "--json", "--db", db.to_str().unwrap(), "--lines-per-file", &LINES.to_string()]);
    c.args(extra);
    if let Some(n) = fault {
        c.env("OSTLEDB_FAULT", format!("{n}:abort"));
    }
    c.stdin(std::process::Stdio::null()).output().unwrap()
}

/// What a successful [`run_digest`] printed: digest, positions, BFS and retrograde files.
fn digest_files(out: &std::process::Output) -> serde_json::Value {
    assert!(out.status.success(), "{:?}: {}", out.status, String::from_utf8_lossy(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    serde_json::json!([v["digest"], v["positions"], v["bfs_files"], v["retrograde_files"]])
}

#[test]
fn a_digest_from_records_resolved_by_groups_equals_the_plain_one_and_survives_crashes() {
    let db = solved_db("digest-records");
    let (ck, records) = (db.with_extension("ckpt"), db.with_extension("ckpt.records"));
    let ckp = ck.to_str().unwrap();
    let run = |extra: &[&str], fault: Option<u64>| run_digest(&db, extra, fault);
    let phases = Store::open(&db).unwrap().index().phases().len();
    let files = digest_files;
    let plain = files(&run(&["--quiet"], None));
    // Into a directory of one's own: the same digest, and the directory is removed.
    let dir = db.with_extension("records");
    assert_eq!(files(&run(&["--records-dir", dir.to_str().unwrap()], None)), plain);
    assert!(!dir.exists(), "the scratch files are removed when the retrograde files are done");
    // Beside the checkpoint by default; a crash at each of its write steps (create and
    // rename of each phase's file, then the checkpoint's saves), then a run to the end.
    let with_ck = ["--checkpoint", ckp, "--checkpoint-minutes", "0"];
    for step in 1..=2 * phases as u64 + 1 {
        let _ = std::fs::remove_file(&ck);
        let _ = std::fs::remove_dir_all(&records);
        let out = run(&with_ck, Some(step));
        assert_eq!(out.status.code(), None, "step {step}: {}", String::from_utf8_lossy(&out.stderr));
        let kept = std::fs::read_dir(&records)
            .map_or(0, |d| d.flatten().filter(|e| e.path().extension().is_some_and(|x| x == "u32")).count());
        let out = run(&with_ck, None);
        let notes = String::from_utf8_lossy(&out.stderr).into_owned();
        assert_eq!(files(&out), plain, "step {step}");
        assert_eq!(kept > 0, notes.contains("kept from a run before"), "step {step}: {notes}");
        assert!(!records.exists() && !ck.exists(), "step {step}: removed once the digest is done");
    }
    // A damaged or foreign scratch file is written again, never read.
    let _ = std::fs::remove_dir_all(&records);
    let out = run(&with_ck, Some(2 * phases as u64 + 1));
    assert_eq!(out.status.code(), None);
    let mut damaged = 0;
    for e in std::fs::read_dir(&records).unwrap().flatten() {
        let mut bytes = std::fs::read(e.path()).unwrap();
        let at = if damaged == 0 { bytes.len() - 1 } else { 9 };
        bytes[at] ^= 1;
        std::fs::write(e.path(), bytes).unwrap();
        damaged += 1;
    }
    assert_eq!(damaged, phases);
    let out = run(&with_ck, None);
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("resolved again"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(files(&out), plain);
    // --keep-records: the files stay, and `stats` and `verify --deep` with the same
    // directory take them instead of resolving again, with the same results.
    let kept = db.with_extension("kept");
    let _ = std::fs::remove_dir_all(&kept);
    assert_eq!(files(&run(&["--records-dir", kept.to_str().unwrap(), "--keep-records"], None)), plain);
    let written = std::fs::read_dir(&kept).unwrap().count();
    assert!(written > 0 && written <= phases, "{written} files kept");
    let cli = |args: &[&str]| {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_ostledb"))
            .args(args)
            .args(["--json", "--db", db.to_str().unwrap()])
            .stdin(std::process::Stdio::null())
            .output()
            .unwrap();
        assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        (v, String::from_utf8_lossy(&out.stderr).into_owned())
    };
    let dir_arg = ["--records-dir", kept.to_str().unwrap()];
    let (plain_stats, err) = cli(&["stats"]);
    assert!(err.contains("losses"), "without the files every elided phase is resolved: {err}");
    let (stats, err) = cli(&[&["stats"][..], &dir_arg].concat());
    assert_eq!(stats, plain_stats);
    assert!(!err.contains("losses") && err.contains("(read)"), "taken, not resolved: {err}");
    let (verify, err) = cli(&[&["verify", "--deep"][..], &dir_arg].concat());
    assert_eq!(verify["ok"], true, "{verify}");
    assert!(!err.contains("losses"), "{err}");
    assert_eq!(std::fs::read_dir(&kept).unwrap().count(), written, "nothing added or removed");
    // A kept file whose checksum holds but one of whose wins is not the value file's is
    // not exported: the export checks every word as the walks do, resolves it again and
    // writes it anew.
    let target = std::fs::read_dir(&kept).unwrap().flatten().next().unwrap().path();
    let mut b = std::fs::read(&target).unwrap();
    let is_win = |w: u32| w & 511 >= 2 && w & 1 == 0;
    let i = (32..b.len()).step_by(4).find(|&i| is_win(u32::from_le_bytes(b[i..i + 4].try_into().unwrap())));
    let i = i.expect("a win");
    let w = u32::from_le_bytes(b[i..i + 4].try_into().unwrap()) + 2;
    b[i..i + 4].copy_from_slice(&w.to_le_bytes());
    let sum = ostledb::file::checksum(&b[32..]);
    b[24..32].copy_from_slice(&sum.to_le_bytes());
    std::fs::write(&target, b).unwrap();
    let keep = [&dir_arg[..], &["--keep-records"]].concat();
    let out = run(&keep, None);
    let notes = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(files(&out), plain, "{notes}");
    assert_eq!(notes.matches("resolved again").count(), 1, "{notes}");
    assert!(notes.contains(&format!("kept from a run before, each checked against its value file: {}", written - 1)));
    let out = run(&keep, None);
    let notes = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(files(&out), plain);
    assert!(!notes.contains("resolved again") && !notes.contains("losses"), "written anew: {notes}");
    let _ = std::fs::remove_dir_all(&kept);
    let _ = std::fs::remove_dir_all(&db);
}

/// `export --digest --checkpoint`: crashed at every save in turn (`OSTLEDB_FAULT=N:abort`,
/// which ends the process as a kill does; a save is written after every file), run again
/// it goes on after the last file saved, says so, and prints exactly the files and digest
/// of a digest in one go, through the retrograde files and then the BFS files (from first
/// depths); the file is removed at the end. A checkpoint of another export's phases is
/// not used; `--checkpoint` without `--digest` is refused.
#[test]
fn a_digest_goes_on_from_its_checkpoint_after_a_crash() {
    use std::process::Command;

    use ostledb::solve::bfs_positions::{bfs_first_depths, store_first_depths};
    let db = solved_db("digest-checkpoint");
    let (report, depths) = bfs_first_depths(&geom(), true, 200, &Silent).unwrap();
    store_first_depths(&db, &report, &depths, &Silent).unwrap();
    let ck = db.with_extension("ckpt");
    let ckp = ck.to_str().unwrap();
    let run = |extra: &[&str], fault: Option<u64>| run_digest(&db, extra, fault);
    let files = digest_files;
    let plain = files(&run(&["--quiet"], None));
    let (retro, bfs) = (plain[3].as_array().unwrap().len(), plain[2].as_array().unwrap().len());
    assert!(retro > 3 && bfs > 3, "{plain}");
    // (No scratch files of resolved records: their writes are the next test's.)
    let with_ck = ["--checkpoint", ckp, "--checkpoint-minutes", "0", "--no-records"];
    let mut crashed = 0;
    // Three write steps a save (create, write, rename): crashed as it begins each save,
    // the file holds the save before.
    for step in (1..).step_by(3) {
        let _ = std::fs::remove_file(&ck);
        let out = run(&with_ck, Some(step));
        if out.status.success() {
            break; // every save was crashed once
        }
        assert_eq!(out.status.code(), None, "step {step}: {}", String::from_utf8_lossy(&out.stderr));
        crashed += 1;
        let had = ck.exists();
        let out = run(&with_ck, None);
        let notes = String::from_utf8_lossy(&out.stderr).into_owned();
        assert_eq!(files(&out), plain, "step {step}");
        assert_eq!(had, notes.contains("going on after"), "step {step}: {notes}");
        assert!(!ck.exists(), "the checkpoint is removed once the digest is done");
    }
    // A save after every file but the last of each part, and one when the retrograde
    // files are done.
    assert_eq!(crashed, retro + bfs - 1, "saves crashed");
    // A checkpoint of a digest of fewer pieces: not used.
    let out = run(&with_ck, Some(4));
    assert_eq!(out.status.code(), None);
    let mut saved: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&ck).unwrap()).unwrap();
    saved["max_pieces"] = serde_json::json!(MAX - 1);
    std::fs::write(&ck, saved.to_string()).unwrap();
    let out = run(&with_ck, None);
    assert!(String::from_utf8_lossy(&out.stderr).contains("starting from the beginning"));
    assert_eq!(files(&out), plain);
    // A checkpoint whose positions do not fit the phases: not used.
    let out = run(&with_ck, Some(4));
    assert_eq!(out.status.code(), None);
    let mut saved: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&ck).unwrap()).unwrap();
    saved["consumed"] = serde_json::json!([u64::MAX]);
    std::fs::write(&ck, saved.to_string()).unwrap();
    let out = run(&with_ck, None);
    assert!(String::from_utf8_lossy(&out.stderr).contains("starting from the beginning"));
    assert_eq!(files(&out), plain);
    // Files and a checkpoint: refused by the command line.
    let out = Command::new(env!("CARGO_BIN_EXE_ostledb"))
        .args(["export", "--db", db.to_str().unwrap(), "--out", db.join("out").to_str().unwrap(), "--checkpoint", ckp])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", String::from_utf8_lossy(&out.stderr));
    let _ = std::fs::remove_file(&ck);
    let _ = std::fs::remove_dir_all(&db);
}

/// `export --digest --stats FILE` counts in its walk what `ostledb stats` counts in its
/// own (the database elides losses, resolved by the cursors or from scratch files), with
/// the same files and digest as without; crashed at every save of its checkpoint in
/// turn and run again it goes on with the counts saved, to the same statistics. A
/// checkpoint of a digest without statistics is not used by one with them.
#[test]
fn a_digest_with_stats_counts_what_stats_counts_through_crashes() {
    let db = solved_db("digest-stats");
    let ck = db.with_extension("ckpt");
    let (ckp, out_file) = (ck.to_str().unwrap(), db.with_extension("stats.json"));
    let stats_arg = ["--stats", out_file.to_str().unwrap()];
    let run = |extra: &[&str], fault: Option<u64>| run_digest(&db, extra, fault);
    let stats = std::process::Command::new(env!("CARGO_BIN_EXE_ostledb"))
        .args(["stats", "--json", "--quiet", "--db", db.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(stats.status.success(), "{}", String::from_utf8_lossy(&stats.stderr));
    // The phases in one order (`stats` walks them group by group, the export in index order).
    let by_phase = |v: serde_json::Value| {
        let mut phases = v["phases"].as_array().unwrap().clone();
        phases.sort_by_key(|p| p["phase"].to_string());
        (v["max_pieces"].clone(), phases, v["total"].clone())
    };
    let want = by_phase(serde_json::from_slice(&stats.stdout).unwrap());
    assert!(want.2["positions"]["loss"].as_u64().unwrap() > 0 && want.1.len() > 3, "{want:?}");
    let written = || {
        let v = by_phase(serde_json::from_str(&std::fs::read_to_string(&out_file).unwrap()).unwrap());
        std::fs::remove_file(&out_file).unwrap();
        v
    };
    let plain = digest_files(&run(&["--quiet"], None));
    assert!(!out_file.exists());
    for records in [&["--no-records"][..], &["--records-dir", db.with_extension("records").to_str().unwrap()]] {
        assert_eq!(digest_files(&run(&[&stats_arg[..], records].concat(), None)), plain);
        assert_eq!(written(), want, "{records:?}");
    }
    let with_ck = [&stats_arg[..], &["--checkpoint", ckp, "--checkpoint-minutes", "0", "--no-records"]].concat();
    let mut crashed = 0;
    for step in (1..).step_by(3) {
        let _ = std::fs::remove_file(&ck);
        let out = run(&with_ck, Some(step));
        if out.status.success() {
            break;
        }
        assert_eq!(out.status.code(), None, "step {step}: {}", String::from_utf8_lossy(&out.stderr));
        assert!(!out_file.exists(), "written only when the export is done");
        crashed += 1;
        let out = run(&with_ck, None);
        assert_eq!(digest_files(&out), plain, "step {step}");
        assert_eq!(written(), want, "step {step}");
    }
    assert!(crashed > 3, "{crashed} saves crashed");
    // A checkpoint of a digest that counted nothing: started again, with a note.
    let without = [&with_ck[2..]].concat();
    let out = run(&without, Some(4));
    assert_eq!(out.status.code(), None);
    let out = run(&with_ck, None);
    assert!(String::from_utf8_lossy(&out.stderr).contains("counted no statistics"));
    assert_eq!(digest_files(&out), plain);
    assert_eq!(written(), want);
    let _ = std::fs::remove_dir_all(db.with_extension("records"));
    let _ = std::fs::remove_dir_all(&db);
}

/// What a walk told its reporter: the steps begun and the notes.
#[derive(Default)]
struct Told(std::sync::Mutex<(Vec<String>, Vec<String>)>);

impl ostledb::progress::Reporter for Told {
    fn begin(&self, label: &str, _: u64) {
        self.0.lock().unwrap().0.push(label.to_string());
    }
    fn advance(&self, _: u64) {}
    fn end(&self) {}
    fn note(&self, message: &str) {
        self.0.lock().unwrap().1.push(message.to_string());
    }
}

/// `stats` and `verify --deep` with `--records-dir`: the first walk writes the records it
/// resolves, a later one takes them instead of resolving again, with the same results.
/// A file that is damaged, of another database or disagrees with its value file is
/// resolved again and written anew; a wrong loss distance in a file that agrees with
/// its value file is taken, and `verify --deep` finds it.
#[test]
fn resolved_records_are_shared_by_walks_and_checked_before_use() {
    use ostledb::analysis::stats::database_stats;
    use ostledb::analysis::sweep::Checkpoint;
    use ostledb::analysis::verify::verify_database;
    use ostledb::file::checksum;
    use ostledb::working::resolved::ResolvedDir;

    let dir = solved_db("resolved-shared");
    let db = Store::open(&dir).unwrap();
    let records = dir.with_extension("resolved");
    let _ = std::fs::remove_dir_all(&records);
    let stats = |r: Option<&ResolvedDir>| {
        let told = Told::default();
        let mut ck = Checkpoint::open(None, "stats", &db, std::time::Duration::ZERO, &told).unwrap();
        let st = database_stats(&db, r, &told, &mut ck).unwrap();
        (serde_json::to_value(st).unwrap(), told.0.into_inner().unwrap())
    };
    let mismatches = |r: Option<&ResolvedDir>| {
        let mut ck = Checkpoint::open(None, "verify --deep", &db, std::time::Duration::ZERO, &Silent).unwrap();
        verify_database(&db, r, &Silent, &mut ck).unwrap().iter().map(|(_, r)| r.mismatches).sum::<u64>()
    };
    let resolving = |labels: &[String]| labels.iter().filter(|l| l.starts_with("losses ")).count();
    let (plain, (labels, _)) = stats(None);
    let phases_resolved = resolving(&labels);
    assert!(phases_resolved > 0, "the packed files elide losses: {labels:?}");

    let here = ResolvedDir::new(&records, db.meta()).unwrap();
    let (first, (labels, _)) = stats(Some(&here));
    assert_eq!(first, plain);
    assert_eq!(resolving(&labels), phases_resolved, "nothing to take yet: every phase resolved");
    let files: Vec<PathBuf> = {
        let mut f: Vec<PathBuf> = std::fs::read_dir(&records).unwrap().map(|e| e.unwrap().path()).collect();
        f.sort();
        f
    };
    assert_eq!(files.len(), phases_resolved, "a file per phase resolved: {files:?}");
    let (second, (labels, notes)) = stats(Some(&here));
    assert_eq!(second, plain);
    assert_eq!(resolving(&labels), 0, "every phase taken from the files: {labels:?}");
    assert!(notes.iter().all(|n| !n.contains("resolved again")), "{notes:?}");
    assert_eq!(mismatches(Some(&here)), 0);

    // Of another database (here one draw of every phase a win): every file resolved again.
    let mut another = db.meta().clone();
    for m in &mut another.phases {
        (m.win, m.draw) = (m.win + 1, m.draw.wrapping_sub(1));
    }
    let other = ResolvedDir::new(&records, &another).unwrap();
    let (s, (labels, notes)) = stats(Some(&other));
    assert_eq!(s, plain);
    assert_eq!(resolving(&labels), phases_resolved);
    assert_eq!(notes.iter().filter(|n| n.contains("resolved again")).count(), phases_resolved, "{notes:?}");
    let (_, (labels, _)) = stats(Some(&here));
    assert_eq!(resolving(&labels), phases_resolved, "the files were written for the other database");
    let (_, (labels, _)) = stats(Some(&here));
    assert_eq!(resolving(&labels), 0);

    // Rewrite word `i` of a file with `f`, with its checksum made to hold again or not.
    let rewrite = |path: &Path, f: &dyn Fn(u32) -> Option<u32>, fix_sum: bool| {
        let mut b = std::fs::read(path).unwrap();
        let i = (32..b.len()).step_by(4).find(|&i| f(u32::from_le_bytes(b[i..i + 4].try_into().unwrap())).is_some());
        let i = i.expect("a word to change");
        let w = f(u32::from_le_bytes(b[i..i + 4].try_into().unwrap())).unwrap();
        b[i..i + 4].copy_from_slice(&w.to_le_bytes());
        if fix_sum {
            let sum = checksum(&b[32..]);
            b[24..32].copy_from_slice(&sum.to_le_bytes());
        }
        std::fs::write(path, b).unwrap();
    };
    let is_loss = |w: u32| w & 511 > 2 && w & 1 == 1;
    let is_win = |w: u32| w & 511 >= 2 && w & 1 == 0;
    let longer_loss = |w: u32| is_loss(w).then_some(w + 2);
    let other_win = |w: u32| is_win(w).then_some(w + 2);
    let target = files.iter().find(|p| {
        let b = std::fs::read(p).unwrap();
        let words: Vec<u32> = b[32..].chunks_exact(4).map(|c| u32::from_le_bytes(c.try_into().unwrap())).collect();
        words.iter().any(|&w| is_loss(w)) && words.iter().any(|&w| is_win(w))
    });
    let target = target.expect("a phase with losses and wins");
    let name = target.file_name().unwrap().to_string_lossy().into_owned();

    // Damaged (its checksum fails): resolved again, the same statistics, the file whole again.
    rewrite(target, &longer_loss, false);
    let (s, (labels, notes)) = stats(Some(&here));
    assert_eq!(s, plain);
    assert_eq!(resolving(&labels), 1, "{labels:?}");
    assert!(notes.iter().any(|n| n.contains(&name) && n.contains("resolved again")), "{notes:?}");
    let (_, (labels, _)) = stats(Some(&here));
    assert_eq!(resolving(&labels), 0, "written anew");

    // A win that is not the value file's, the checksum made to hold: resolved again.
    rewrite(target, &other_win, true);
    let (s, (labels, notes)) = stats(Some(&here));
    assert_eq!(s, plain);
    assert_eq!(resolving(&labels), 1, "{labels:?}");
    assert!(notes.iter().any(|n| n.contains(&name) && n.contains("resolved again")), "{notes:?}");

    // A loss one move longer, the checksum made to hold: it agrees with the value file,
    // whose losses have no distance, so it is taken; the statistics change, and verify
    // --deep finds the distance its children do not give. Without the files it finds none.
    rewrite(target, &longer_loss, true);
    let (s, (labels, _)) = stats(Some(&here));
    assert_eq!(resolving(&labels), 0);
    assert_ne!(s, plain);
    assert!(mismatches(Some(&here)) >= 1);
    assert_eq!(mismatches(None), 0);

    // A file that cannot be written (here a directory stands where its temporary file
    // goes): a note, the walk goes on with the same statistics, and no file is kept.
    std::fs::remove_file(target).unwrap();
    let blocker = ostledb::file::temp_name(target);
    std::fs::create_dir(&blocker).unwrap();
    let (s, (labels, notes)) = stats(Some(&here));
    assert_eq!(s, plain);
    assert_eq!(resolving(&labels), 1, "{labels:?}");
    assert!(notes.iter().any(|n| n.contains("are not kept")), "{notes:?}");
    assert!(!target.exists(), "nothing kept in its place");
    std::fs::remove_dir(&blocker).unwrap();
    let (_, (labels, notes)) = stats(Some(&here));
    assert_eq!(resolving(&labels), 1, "written now that it can be");
    assert!(notes.iter().all(|n| !n.contains("are not kept")), "{notes:?}");
    let (_, (labels, _)) = stats(Some(&here));
    assert_eq!(resolving(&labels), 0);
    let _ = std::fs::remove_dir_all(&records);
    let _ = std::fs::remove_dir_all(&dir);
}

/// `solve`'s packing with a records directory (`PackOptions::records`) writes, from the
/// solver's phase files, the very files a walk writes by resolving the elided losses;
/// a walk then resolves none and finds no mismatch, and the files stay usable after the
/// database is written again (a new generation: here a key index added).
#[test]
fn records_written_from_the_solver_are_those_a_walk_resolves() {
    use ostledb::analysis::stats::database_stats;
    use ostledb::analysis::sweep::Checkpoint;
    use ostledb::analysis::verify::verify_database;
    use ostledb::store::keys::Backend;
    use ostledb::working::resolved::ResolvedDir;

    let dir = tmpdir("records-from-solver");
    let from_solver = dir.with_extension("from-solver");
    let by_walk = dir.with_extension("by-walk");
    for d in [&from_solver, &by_walk] {
        let _ = std::fs::remove_dir_all(d);
    }
    let opts = SolveOptions { dir: Some(dir.clone()), ..SolveOptions::default() };
    solve_into(&geom(), MAX, &opts, |_| Ok(())).expect("solve");
    // A directory that cannot be made (a file stands there): the packing goes on without
    // the records, and says why for every phase.
    std::fs::write(&from_solver, b"not a directory").unwrap();
    let mut failed = Vec::new();
    let p = PackOptions { records: Some(from_solver.clone()), keep_work: true, ..pack_opts() };
    pack(&dir, &geom(), MAX, &p, |ph| failed.push(ph.records.clone())).expect("pack without the records");
    assert!(!failed.is_empty() && failed.iter().all(|r| matches!(r, Some(Err(_)))), "{failed:?}");
    Store::open(&dir).unwrap();
    std::fs::remove_file(&from_solver).unwrap();

    let mut written = Vec::new();
    let p = PackOptions { records: Some(from_solver.clone()), ..pack_opts() };
    pack(&dir, &geom(), MAX, &p, |ph| written.push((ph.meta.phase(), matches!(ph.records, Some(Ok(_))))))
        .expect("pack");
    assert!(written.iter().all(|&(_, w)| w), "every phase's records written: {written:?}");

    let labels_of = |db: &Store, r: &ResolvedDir| {
        let told = Told::default();
        let mut ck = Checkpoint::open(None, "stats", db, std::time::Duration::ZERO, &told).unwrap();
        let st = database_stats(db, Some(r), &told, &mut ck).unwrap();
        (serde_json::to_value(st).unwrap(), told.0.into_inner().unwrap().0)
    };
    let resolving = |labels: &[String]| labels.iter().filter(|l| l.starts_with("losses ")).count();
    let db = Store::open(&dir).unwrap();
    let (walked, labels) = labels_of(&db, &ResolvedDir::new(&by_walk, db.meta()).unwrap());
    assert_eq!(resolving(&labels), written.len(), "the walk resolves every phase: {labels:?}");
    let body = |d: &Path, ph: ostledb::game::Phase| {
        std::fs::read(d.join(format!("records-{}-{}.u32", ph.player, ph.opponent))).unwrap()[32..].to_vec()
    };
    for &(ph, _) in &written {
        assert_eq!(body(&from_solver, ph), body(&by_walk, ph), "{ph}: the same words");
    }

    // Written again (a key index added: a new generation, another metadata digest): the
    // solver's files are still taken, with the same statistics and no mismatch.
    let before = db.identity();
    drop(db);
    ostledb::working::pack::add_backend(&dir, Backend::Sorted).unwrap();
    let db = Store::open(&dir).unwrap();
    assert_ne!(db.identity(), before, "a new generation");
    let solver_dir = ResolvedDir::new(&from_solver, db.meta()).unwrap();
    let (taken, labels) = labels_of(&db, &solver_dir);
    assert_eq!(resolving(&labels), 0, "every phase taken: {labels:?}");
    assert_eq!(taken, walked);
    let mut ck = Checkpoint::open(None, "verify --deep", &db, std::time::Duration::ZERO, &Silent).unwrap();
    let reports = verify_database(&db, Some(&solver_dir), &Silent, &mut ck).unwrap();
    assert!(reports.iter().all(|(_, r)| r.mismatches == 0 && r.positions > 0), "{reports:?}");
    for d in [&dir, &from_solver, &by_walk] {
        let _ = std::fs::remove_dir_all(d);
    }
}

/// The exported files of the solved 3x3 board in a new directory `name`, with the line
/// of the first position whose every field holds the same non-zero value replaced by
/// `change(line, value)`.
fn exported_with_one_line_changed(name: &str, change: impl Fn(&str, u32) -> String) -> PathBuf {
    let db = solved_db(&format!("{name}-db"));
    let dir = tmpdir(name);
    export_to(&db, Some(&dir));
    let _ = std::fs::remove_dir_all(db);
    for (file, bytes) in files_of(&dir) {
        let mut lines: Vec<String> = String::from_utf8(bytes).unwrap().lines().map(str::to_string).collect();
        let values = |l: &str| l.split(',').skip(1).filter(|f| !f.is_empty()).map(str::to_string).collect::<Vec<_>>();
        let k = lines.iter().position(|l| {
            let v = values(l);
            !v.is_empty() && v[0] != "0" && v[0] != "checkmate" && v.iter().all(|f| *f == v[0])
        });
        if let Some(k) = k {
            let v: u32 = values(&lines[k])[0].parse().unwrap();
            lines[k] = change(&lines[k], v);
            std::fs::write(dir.join(&file), lines.join("\n") + "\n").unwrap();
            return dir;
        }
    }
    panic!("no line whose fields all hold one non-zero value");
}

/// `line` with every field that is not empty replaced by `to`.
fn every_value(line: &str, to: u32) -> String {
    let fields = line.split(',').enumerate();
    fields
        .map(|(i, f)| if i == 0 || f.is_empty() { f.to_string() } else { to.to_string() })
        .collect::<Vec<_>>()
        .join(",")
}

#[test]
fn a_value_out_of_range_is_refused_with_its_line() {
    // 301 would be a loss in 302 plies: beyond the 255 any file of ostledb holds.
    let dir = exported_with_one_line_changed("range", |line, _| every_value(line, 301));
    let dbdir = tmpdir("range-db");
    match import(&geom(), &dir, &dbdir, &pack_opts(), false, &Silent) {
        Err(Error::BadInput { reason, .. }) => assert!(reason.contains("out of range"), "{reason}"),
        other => panic!("a field of 301: {other:?}"),
    }
    assert!(Store::open(&dbdir).is_err());
    // The largest value in range parses; the next does not.
    let line = |v: u32| format!("AAAAAA,{}", vec![v.to_string(); 25].join(","));
    assert!(parse_line(&line(254)).is_ok());
    assert!(parse_line(&line(255)).unwrap_err().contains("out of range"));
    for d in [dir, dbdir] {
        let _ = std::fs::remove_dir_all(d);
    }
}

#[test]
fn a_value_the_rules_cannot_give_is_refused_unless_trusted() {
    // Every value of one position 4 plies longer: in range, consistent within its line,
    // and wrong.
    let dir = exported_with_one_line_changed("wrong", |line, v| every_value(line, v + 4));
    let dbdir = tmpdir("wrong-db");
    match import(&geom(), &dir, &dbdir, &pack_opts(), false, &Silent) {
        Err(Error::InvalidArgument(m)) => {
            assert!(m.contains("do not give") && m.contains("nothing was imported"), "{m}")
        }
        other => panic!("a wrong value: {other:?}"),
    }
    assert!(Store::open(&dbdir).is_err(), "nothing is written");
    let _ = std::fs::remove_dir_all(&dbdir);
    // Trusted, the files are taken as they are.
    let s = import(&geom(), &dir, &dbdir, &pack_opts(), true, &Silent).expect("trusted import");
    assert_eq!(s.rederived, 0);
    for d in [dir, dbdir] {
        let _ = std::fs::remove_dir_all(d);
    }
}

#[test]
fn a_fifo_in_place_of_a_file_is_refused_not_waited_on() {
    let db = solved_db("fifo-db");
    let dir = tmpdir("fifo");
    export_to(&db, Some(&dir));
    let victim = dir.join("ostle_6_retrograde_output0001.txt");
    std::fs::remove_file(&victim).unwrap();
    let made = std::process::Command::new("mkfifo").arg(&victim).status().expect("mkfifo");
    assert!(made.success());
    let dbdir = tmpdir("fifo-target");
    let (tx, rx) = std::sync::mpsc::channel();
    let (d, t) = (dir.clone(), dbdir.clone());
    std::thread::spawn(move || {
        let _ = tx.send(import(&geom(), &d, &t, &pack_opts(), false, &Silent).map(|_| ()));
    });
    // No writer ever opens the FIFO: an import that opens it blocks for ever.
    match rx.recv_timeout(std::time::Duration::from_secs(60)) {
        Ok(Err(Error::Io { path, source })) => {
            assert!(path.ends_with("ostle_6_retrograde_output0001.txt"), "{path:?}");
            assert!(
                source.to_string().contains("not a regular file") || source.to_string().contains("FIFO"),
                "{source}"
            );
        }
        other => panic!("import of a FIFO: {other:?} (a timeout means it waited on it)"),
    }
    for d in [db, dir, dbdir] {
        let _ = std::fs::remove_dir_all(d);
    }
}
