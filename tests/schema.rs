//! The two schema documents against the code, so that neither can drift from it:
//! - schema/FORMAT.md's table "Files and versions" (file, magic, current version,
//!   versions read) equals the constants of `src/` (`MAGIC`, `VERSION`, `VERSIONS`,
//!   `OLDEST`, the value files' `DEFAULT_FORMAT`) and the first bytes of the files a solve
//!   and a pack really write (the metadata, value files, both key index files, resolved
//!   records); and the newest version of each file in its "Version history" table is the
//!   current one;
//! - schema/API.md's table of endpoints lists exactly the `/api/v1/...` routes that
//!   `src/serve` registers, and the router answers every one of them.
//!
//! The checkers are tested too, on a planted mismatch of each kind.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use ostledb::bfs_depths::{first_depths, node_keys, node_layers};
use ostledb::game::{Geometry, Phase};
use ostledb::progress::Silent;
use ostledb::solve::{bfs_checkpoint, checkpoint};
use ostledb::store::keys::Backend;
use ostledb::store::{meta, values};
use ostledb::working::phasefile;
use ostledb::working::resolved::ResolvedDir;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn read(rel: &str) -> String {
    std::fs::read_to_string(root().join(rel)).unwrap_or_else(|e| panic!("read {rel}: {e}"))
}

/// The magic and the version field (`None`: the file has none) of written files, by the
/// table's name of the file.
type Written = BTreeMap<String, (Vec<u8>, Option<u32>)>;

/// One row of the table of files: the file, its name in the version history (`-`: none),
/// its magic, its current version and the versions read (`None`: no version field).
#[derive(Clone, Debug, PartialEq)]
struct FileRow {
    file: String,
    history: String,
    magic: Vec<u8>,
    current: Option<u32>,
    read: Option<(u32, u32)>,
}

/// The cells of the markdown table rows of `lines` (from the first row that begins with
/// `|` to the first line after it that does not), header and rule rows left out.
fn table_rows(lines: &[&str]) -> Vec<Vec<String>> {
    let rows: Vec<&str> =
        lines.iter().skip_while(|l| !l.starts_with('|')).take_while(|l| l.starts_with('|')).copied().collect();
    rows.iter().skip(2).map(|r| r.trim().trim_matches('|').split('|').map(|c| c.trim().to_string()).collect()).collect()
}

/// The lines of the section under heading `heading` (to the next heading of level 2).
fn section<'a>(text: &'a str, heading: &str) -> Result<Vec<&'a str>, String> {
    let lines: Vec<&str> = text.lines().collect();
    let start = lines.iter().position(|l| l.trim_end() == heading).ok_or(format!("no heading `{heading}`"))?;
    Ok(lines[start + 1..].iter().take_while(|l| !l.starts_with("## ")).copied().collect())
}

fn unquote(cell: &str) -> &str {
    cell.trim_matches('`')
}

fn parse_magic(cell: &str) -> Result<Vec<u8>, String> {
    let s = unquote(cell);
    let mut out = Vec::new();
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' if chars.next() == Some('0') => out.push(0),
            '\\' => return Err(format!("magic `{s}`: only the escape \\0 is known")),
            c if c.is_ascii() => out.push(c as u8),
            _ => return Err(format!("magic `{s}` is not ASCII")),
        }
    }
    Ok(out)
}

fn parse_version(cell: &str) -> Result<Option<u32>, String> {
    if cell == "-" {
        return Ok(None);
    }
    cell.parse().map(Some).map_err(|_| format!("version `{cell}` is not a number"))
}

fn parse_range(cell: &str) -> Result<Option<(u32, u32)>, String> {
    if cell == "-" {
        return Ok(None);
    }
    let (a, b) = cell.split_once("..=").ok_or(format!("versions read `{cell}` is not `A..=B`"))?;
    Ok(Some((
        a.parse().map_err(|_| format!("`{a}` in `{cell}`"))?,
        b.parse().map_err(|_| format!("`{b}` in `{cell}`"))?,
    )))
}

/// FORMAT.md's table of files, by file.
fn file_table(format_md: &str) -> Result<BTreeMap<String, FileRow>, String> {
    let rows = table_rows(&section(format_md, "## Files and versions")?);
    let mut out = BTreeMap::new();
    for cells in rows {
        let [file, history, magic, current, read] = cells.as_slice() else {
            return Err(format!("a row of the table of files has {} cells, not 5: {cells:?}", cells.len()));
        };
        let row = FileRow {
            file: unquote(file).to_string(),
            history: history.clone(),
            magic: parse_magic(magic)?,
            current: parse_version(current)?,
            read: parse_range(read)?,
        };
        if out.insert(row.file.clone(), row).is_some() {
            return Err(format!("`{file}` is in the table of files twice"));
        }
    }
    Ok(out)
}

/// The newest version of each name in FORMAT.md's "Version history" (rows `| NAME vN |`).
fn history(format_md: &str) -> Result<BTreeMap<String, u32>, String> {
    let mut out = BTreeMap::new();
    for cells in table_rows(&section(format_md, "## Version history")?) {
        let name = &cells[0];
        let (what, v) = name.rsplit_once(" v").ok_or(format!("history row `{name}` does not end in vN"))?;
        let v: u32 = v.parse().map_err(|_| format!("history row `{name}` does not end in vN"))?;
        let newest = out.entry(what.to_string()).or_insert(v);
        *newest = (*newest).max(v);
    }
    Ok(out)
}

/// What the code says of each file: its constants, and the magic and version of a file it
/// wrote where one is at hand.
fn expected(written: &Written) -> Vec<FileRow> {
    let row = |file: &str, history: &str, magic: &[u8], current: u32, read: (u32, u32)| FileRow {
        file: file.into(),
        history: history.into(),
        magic: magic.to_vec(),
        current: Some(current),
        read: Some(read),
    };
    let range = |r: std::ops::RangeInclusive<u32>| (*r.start(), *r.end());
    let mut rows = vec![
        row("ostledb.meta", "database (result store)", &meta::MAGIC, meta::VERSION, range(meta::VERSIONS)),
        row("values-A-B.zst", "value file", &values::MAGIC, values::VERSION, range(values::VERSIONS)),
        row(
            "bfs-CONVENTION.zst",
            "BFS file",
            &node_keys::MAGIC,
            node_keys::VERSION,
            (node_keys::VERSION, node_keys::VERSION),
        ),
        row(
            "bfs-first-depths.zst",
            "first-depth file",
            &first_depths::MAGIC,
            first_depths::VERSION,
            (first_depths::VERSION, first_depths::VERSION),
        ),
        row(
            "bfs-node-layers/layer-DDD.zst",
            "node-layer file",
            &node_layers::MAGIC,
            node_layers::VERSION,
            (node_layers::VERSION, node_layers::VERSION),
        ),
        row(
            "phase-A-B.vals",
            "phase value file",
            &phasefile::MAGIC,
            phasefile::VERSION,
            (phasefile::VERSION, phasefile::VERSION),
        ),
        row(
            "group-A-B.ckpt",
            "group checkpoint file",
            &checkpoint::MAGIC,
            checkpoint::VERSION,
            (checkpoint::OLDEST, checkpoint::VERSION),
        ),
        row(
            "bfs-positions.ckpt",
            "BFS checkpoint file",
            &bfs_checkpoint::MAGIC,
            bfs_checkpoint::VERSION,
            (bfs_checkpoint::VERSION, bfs_checkpoint::VERSION),
        ),
    ];
    // The key index files and the resolved records keep their constants private: what a
    // pack wrote tells them (a key file's versions read are its version).
    for (file, magic, version) in [
        ("keys-A-B.sorted", &written["keys-A-B.sorted"].0, written["keys-A-B.sorted"].1),
        ("keys-A-B.hash", &written["keys-A-B.hash"].0, written["keys-A-B.hash"].1),
        ("records-A-B.u32", &written["records-A-B.u32"].0, None),
    ] {
        rows.push(FileRow {
            file: file.into(),
            history: "-".into(),
            magic: magic.clone(),
            current: version,
            read: version.map(|v| (v, v)),
        });
    }
    rows
}

/// Every disagreement between FORMAT.md's tables and what the code says.
fn check_files(
    table: &BTreeMap<String, FileRow>,
    history: &BTreeMap<String, u32>,
    expected: &[FileRow],
    written: &Written,
) -> Vec<String> {
    let mut problems = Vec::new();
    for want in expected {
        let Some(got) = table.get(&want.file) else {
            problems.push(format!("`{}` is not in FORMAT.md's table of files", want.file));
            continue;
        };
        if got != want {
            problems.push(format!("`{}`: FORMAT.md says {got:?}, the code {want:?}", want.file));
        }
        if want.history != "-" {
            match (history.get(&want.history), want.current) {
                (Some(&v), Some(c)) if v == c => {}
                (found, _) => problems.push(format!(
                    "`{}`: the version history's newest `{} vN` is {found:?}, the current version {:?}",
                    want.file, want.history, want.current
                )),
            }
        }
        if let Some((magic, version)) = written.get(&want.file)
            && (magic != &want.magic || *version != want.current)
        {
            problems.push(format!(
                "`{}`: a file written now begins with {:?} version {version:?}, FORMAT.md says {:?} version {:?}",
                want.file,
                String::from_utf8_lossy(magic),
                String::from_utf8_lossy(&want.magic),
                want.current
            ));
        }
    }
    for file in table.keys() {
        if !expected.iter().any(|w| &w.file == file) {
            problems.push(format!("`{file}` is in FORMAT.md's table of files but not known to this test"));
        }
    }
    problems
}

/// The magic and version field of the files a solve and a pack of a 3x3 database write
/// (the value files at the default format), and of a resolved records file, by the
/// table's names.
fn written() -> &'static Written {
    static WRITTEN: std::sync::OnceLock<Written> = std::sync::OnceLock::new();
    WRITTEN.get_or_init(|| {
        let dir = std::env::temp_dir().join(format!("ostledb-schema-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let geom = Geometry::new(3, 3).unwrap();
        let mut backends = vec![Backend::Rank, Backend::Sorted];
        if cfg!(feature = "hash") {
            backends.push(Backend::Hash);
        }
        crate::store::build(&geom, &dir, 5, backends);
        let records = dir.join("records");
        let phase = Phase::new(2, 2);
        ResolvedDir::with_keys(&records, vec![(phase, 0)]).unwrap().write(phase, &[0; 4], &Silent).unwrap();
        let mut files = Vec::new();
        walk(&dir, &mut files);
        let mut out = BTreeMap::new();
        for path in files {
            let name = path.file_name().unwrap().to_str().unwrap();
            let row = if name == "ostledb.meta" {
                "ostledb.meta"
            } else if name.starts_with("values-") && name.ends_with(".zst") {
                "values-A-B.zst"
            } else if name.ends_with(".sorted") {
                "keys-A-B.sorted"
            } else if name.ends_with(".hash") {
                "keys-A-B.hash"
            } else if name.starts_with("records-") && name.ends_with(".u32") {
                "records-A-B.u32"
            } else {
                continue;
            };
            let bytes = std::fs::read(&path).unwrap();
            let version = (row != "records-A-B.u32").then(|| u32::from_le_bytes(bytes[8..12].try_into().unwrap()));
            let got = (bytes[..8].to_vec(), version);
            let before = out.insert(row.to_string(), got.clone());
            assert!(
                before.as_ref().is_none_or(|b| b == &got),
                "{}: {got:?}, another such file {before:?}",
                path.display()
            );
        }
        std::fs::remove_dir_all(&dir).ok();
        if !cfg!(feature = "hash") {
            out.insert("keys-A-B.hash".into(), (b"OSTLEMPH".to_vec(), Some(1)));
        }
        out
    })
}

fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() { walk(&p, out) } else { out.push(p) }
    }
}

#[test]
fn format_md_tables_the_magic_and_versions_the_code_writes_and_reads() {
    let text = read("schema/FORMAT.md");
    let written = written();
    for file in ["ostledb.meta", "values-A-B.zst", "keys-A-B.sorted", "keys-A-B.hash", "records-A-B.u32"] {
        assert!(written.contains_key(file), "the 3x3 database wrote no `{file}`: {:?}", written.keys());
    }
    // What a solve writes by default is the newest value file version.
    assert_eq!(written["values-A-B.zst"].1, Some(values::DEFAULT_FORMAT));
    assert_eq!(values::VERSION, values::DEFAULT_FORMAT);
    let table = file_table(&text).unwrap_or_else(|e| panic!("schema/FORMAT.md: {e}"));
    let history = history(&text).unwrap_or_else(|e| panic!("schema/FORMAT.md: {e}"));
    let problems = check_files(&table, &history, &expected(written), written);
    assert!(problems.is_empty(), "schema/FORMAT.md and the code disagree:\n{}", problems.join("\n"));
}

#[test]
fn the_format_check_finds_a_planted_mismatch() {
    let text = read("schema/FORMAT.md");
    let written = written();
    let expected = expected(written);
    let check = |text: &str| {
        let table = file_table(text).unwrap_or_else(|e| panic!("{e}"));
        check_files(&table, &history(text).unwrap(), &expected, written)
    };
    assert_eq!(check(&text), Vec::<String>::new());
    let value_row = "| `values-A-B.zst` | value file | `OSTLEVZB` | 5 | 1..=5 |";
    assert!(text.contains(value_row), "the value files' row changed: update this test");
    for (planted, what) in [
        (text.replace(value_row, "| `values-A-B.zst` | value file | `OSTLEVZB` | 4 | 1..=5 |"), "the current version"),
        (text.replace(value_row, "| `values-A-B.zst` | value file | `OSTLEVZB` | 5 | 1..=4 |"), "the versions read"),
        (text.replace(value_row, "| `values-A-B.zst` | value file | `OSTLEVZX` | 5 | 1..=5 |"), "the magic"),
        (text.replace(&format!("{value_row}\n"), ""), "a row left out"),
        (text.replace("| group checkpoint file v4 |", "| group checkpoint file v3 |"), "the version history"),
        (
            text.replace(
                "| `records-A-B.u32` | - | `OSTLRECS` | - | - |",
                "| `records-A-B.u32` | - | `OSTLRECX` | - | - |",
            ),
            "the magic of a written file",
        ),
    ] {
        assert_ne!(planted, text, "{what}: nothing was planted");
        assert!(!check(&planted).is_empty(), "{what}: a planted mismatch was not found");
    }
}

/// The `/api/...` paths of API.md's table of endpoints (section `## Endpoints`; the
/// explorer's `/` is not an API path).
fn documented_routes(api_md: &str) -> Result<BTreeSet<String>, String> {
    let rows = table_rows(&section(api_md, "## Endpoints")?);
    let paths: BTreeSet<String> =
        rows.iter().map(|cells| unquote(&cells[0]).to_string()).filter(|p| p.starts_with("/api/")).collect();
    if paths.is_empty() { Err("no `/api/...` path in the table of endpoints".into()) } else { Ok(paths) }
}

/// The `/api/v1/...` paths that `.route("...")` calls register in the given sources.
fn registered_routes(sources: &[String]) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for text in sources {
        for piece in text.split(".route(\"").skip(1) {
            let path = &piece[..piece.find('"').unwrap_or(piece.len())];
            if path.starts_with("/api/") {
                out.insert(path.to_string());
            }
        }
    }
    out
}

fn serve_sources() -> Vec<String> {
    let mut files = Vec::new();
    walk(&root().join("src/serve"), &mut files);
    files.sort();
    files
        .iter()
        .filter(|p| p.extension().is_some_and(|e| e == "rs"))
        .map(|p| std::fs::read_to_string(p).unwrap())
        .collect()
}

fn route_problems(documented: &BTreeSet<String>, registered: &BTreeSet<String>) -> Vec<String> {
    let mut problems: Vec<String> =
        registered.difference(documented).map(|p| format!("{p} is served but not in schema/API.md")).collect();
    problems.extend(documented.difference(registered).map(|p| format!("{p} is in schema/API.md but not served")));
    problems
}

#[test]
fn api_md_lists_exactly_the_routes_the_server_registers() {
    let documented = documented_routes(&read("schema/API.md")).unwrap_or_else(|e| panic!("schema/API.md: {e}"));
    let registered = registered_routes(&serve_sources());
    assert!(registered.len() >= 5, "found only {registered:?} in src/serve: has the router's form changed?");
    let problems = route_problems(&documented, &registered);
    assert!(problems.is_empty(), "schema/API.md and src/serve disagree:\n{}", problems.join("\n"));
}

#[test]
fn the_route_check_finds_a_planted_mismatch() {
    let api = read("schema/API.md");
    let documented = documented_routes(&api).unwrap();
    let sources = serve_sources();
    assert_eq!(route_problems(&documented, &registered_routes(&sources)), Vec::<String>::new());
    let mut planted = sources.clone();
    planted.push(".route(\"/api/v1/undocumented\", get(x))".into());
    assert_eq!(route_problems(&documented, &registered_routes(&planted)).len(), 1);
    let row = api.lines().find(|l| l.starts_with("| `/api/v1/stats`")).expect("the stats row");
    let fewer = documented_routes(&api.replace(&format!("{row}\n"), "")).unwrap();
    assert_eq!(route_problems(&fewer, &registered_routes(&sources)).len(), 1);
}

/// Every documented path reaches a handler of the router (no `no such path` 404), and a
/// path that is not documented does not.
#[cfg(feature = "serve")]
#[test]
fn the_router_answers_every_documented_route() {
    use axum::body::Body;
    use axum::http::{Request, StatusCode};
    use ostledb::Database;
    use ostledb::serve::{Limits, router};
    use std::sync::Arc;
    use tower::ServiceExt;

    let dir = std::env::temp_dir().join(format!("ostledb-schema-routes-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    crate::store::build(&Geometry::new(3, 3).unwrap(), &dir, 5, vec![Backend::Rank]);
    let app = router(Arc::new(Database::open(&dir).unwrap()), &Limits::default());
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let status = |path: &str| {
        let (app, path) = (app.clone(), path.to_string());
        runtime.block_on(async move {
            let answer = app.oneshot(Request::get(&path).body(Body::empty()).unwrap()).await.unwrap();
            let status = answer.status();
            let body = axum::body::to_bytes(answer.into_body(), 1 << 20).await.unwrap();
            (status, String::from_utf8_lossy(&body).into_owned())
        })
    };
    let documented = documented_routes(&read("schema/API.md")).unwrap();
    for path in &documented {
        let (code, body) = status(path);
        assert!(!body.contains("no such path"), "{path}: {code} {body}");
    }
    let (code, body) = status("/api/v1/undocumented");
    assert_eq!(code, StatusCode::NOT_FOUND, "{body}");
    assert!(body.contains("no such path"), "{body}");
    std::fs::remove_dir_all(&dir).ok();
}
