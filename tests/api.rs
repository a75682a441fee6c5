//! The public API is what `src/lib.rs` re-exports at the crate root; without the feature
//! `internals` the modules behind it are the crate's own. The server (`src/serve/`) and
//! the Python package (`python/src/`, built without `internals`, so the compiler holds it
//! too) name the library only through those names: `crate::Database`, never
//! `crate::store::Store`. Comments and doc links are not read. What a database answers is
//! one type in one file: `Database`'s methods are all in `src/database.rs`, and the
//! `Store` below it has methods only in `src/store/`.

use std::collections::BTreeSet;
use std::path::Path;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// The code of `text` without comments: each line cut at `//`.
fn code(text: &str) -> Vec<(usize, String)> {
    text.lines().enumerate().map(|(n, l)| (n + 1, l.split("//").next().unwrap_or("").to_string())).collect()
}

/// The names `lib.rs` re-exports: every `pub use a::b::{C, D as E};` binds C and E.
fn root_names(lib: &str) -> BTreeSet<String> {
    let text: String = code(lib).into_iter().map(|(_, l)| l + "\n").collect();
    let mut names = BTreeSet::new();
    for stmt in text.split(';') {
        let Some(at) = stmt.find("pub use ") else { continue };
        let body = &stmt[at + 8..];
        let inner = match (body.find('{'), body.rfind('}')) {
            (Some(a), Some(b)) => &body[a + 1..b],
            _ => body.rsplit("::").next().unwrap_or(""),
        };
        for item in inner.split(',').map(str::trim).filter(|i| !i.is_empty()) {
            names.insert(item.rsplit(" as ").next().unwrap().trim().to_string());
        }
    }
    names
}

/// Where `text` (a file called `name`) names the library as `prefix::X` with `X` not a
/// crate-root name (nor one of `allowed_modules`), as `name:line: path`. A group
/// `prefix::{A, B}` is read name by name.
fn off_api(name: &str, text: &str, prefix: &str, roots: &BTreeSet<String>, allowed_modules: &[&str]) -> Vec<String> {
    let mut out = Vec::new();
    let lines = code(text);
    let joined: String = lines.iter().map(|(_, l)| l.clone() + "\n").collect();
    let line_of = |byte: usize| joined[..byte].matches('\n').count() + 1;
    let pat = format!("{prefix}::");
    let mut from = 0;
    while let Some(i) = joined[from..].find(&pat) {
        let at = from + i;
        from = at + pat.len();
        let before = joined[..at].chars().next_back();
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == ':') {
            continue;
        }
        let rest = &joined[from..];
        let names: Vec<String> = if let Some(group) = rest.strip_prefix('{') {
            let end = group.find('}').unwrap_or(group.len());
            group[..end]
                .split(',')
                .map(|n| n.split(" as ").next().unwrap().trim().split("::").next().unwrap().to_string())
                .collect()
        } else {
            vec![rest.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect()]
        };
        for n in names.into_iter().filter(|n| !n.is_empty()) {
            if !roots.contains(&n) && !allowed_modules.contains(&n.as_str()) {
                out.push(format!("{name}:{}: {prefix}::{n}", line_of(at)));
            }
        }
    }
    out
}

fn rust_files(dir: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(root().join(dir)).expect("a source folder") {
        let path = e.expect("read dir").path();
        if path.extension().is_some_and(|x| x == "rs") {
            let name = path.strip_prefix(root()).unwrap().display().to_string();
            out.push((name, std::fs::read_to_string(&path).expect("a source file")));
        }
    }
    out.sort();
    out
}

#[test]
fn the_server_and_the_python_package_use_only_the_public_api() {
    let roots = root_names(&std::fs::read_to_string(root().join("src/lib.rs")).expect("lib.rs"));
    for must in ["Database", "Position", "parse_board", "Outcome", "Error", "solve_into", "Review"] {
        assert!(roots.contains(must), "lib.rs re-exports {must}: {roots:?}");
    }
    let mut found = Vec::new();
    let serve = rust_files("src/serve");
    assert!(serve.len() >= 5, "{serve:?}");
    for (name, text) in &serve {
        found.extend(off_api(name, text, "crate", &roots, &["serve"]));
    }
    let python = rust_files("python/src");
    assert!(!python.is_empty());
    for (name, text) in &python {
        found.extend(off_api(name, text, "ostledb", &roots, &[]));
    }
    assert!(
        found.is_empty(),
        "names outside the public API (re-export them in lib.rs, or use the re-export):\n{}",
        found.join("\n")
    );
}

#[test]
fn the_check_finds_a_module_path_and_reads_groups_and_aliases() {
    let roots =
        root_names("pub use store::{Backend, Database};\npub use cli::{Cli, run as run_cli};\npub use error::Error;\n");
    assert_eq!(roots, ["Backend", "Cli", "Database", "Error", "run_cli"].map(String::from).into_iter().collect());
    let text = "use crate::{Database, Error};\nuse crate::store::Database;\n// crate::store::keys in a comment\nlet x = crate::run_cli(c);\nuse crate::serve::Limits;\nuse crate::{Error, game::Geometry as G};\n";
    assert_eq!(
        off_api("f.rs", text, "crate", &roots, &["serve"]),
        vec!["f.rs:2: crate::store".to_string(), "f.rs:6: crate::game".to_string()]
    );
}

/// The lines of `text` (comments cut) that open an inherent `impl` block of the type
/// named `ty` (by any path: `impl Ty`, `impl crate::m::Ty`, `impl<'a> Ty<'a>`), as
/// `name:line`. An `impl Trait for Ty` is not one.
fn inherent_impls(name: &str, text: &str, ty: &str) -> Vec<String> {
    let mut out = Vec::new();
    for (n, line) in code(text) {
        let l = line.trim_start();
        let Some(rest) = l.strip_prefix("impl") else { continue };
        if !(rest.starts_with(' ') || rest.starts_with('<')) || l.contains(" for ") {
            continue;
        }
        // Skip the impl's own generics, then read the type's path up to `<`, `{` or `where`.
        let rest = rest.trim_start();
        let rest = if rest.starts_with('<') {
            let mut depth = 0;
            let end = rest
                .char_indices()
                .find(|&(_, c)| {
                    depth += match c {
                        '<' => 1,
                        '>' => -1,
                        _ => 0,
                    };
                    depth == 0
                })
                .map_or(rest.len(), |(i, _)| i + 1);
            &rest[end..]
        } else {
            rest
        };
        let path: String =
            rest.trim_start().chars().take_while(|c| c.is_alphanumeric() || *c == '_' || *c == ':').collect();
        if path.rsplit("::").next() == Some(ty) {
            out.push(format!("{name}:{n}"));
        }
    }
    out
}

#[test]
fn the_read_api_of_a_database_is_one_type_in_one_file() {
    let mut found = Vec::new();
    let files = crate::layers::sources();
    assert!(files.iter().any(|(n, _)| n == "src/database.rs") && files.iter().any(|(n, _)| n == "src/store/db.rs"));
    for (name, text) in &files {
        if name != "src/database.rs" {
            found.extend(
                inherent_impls(name, text, "Database")
                    .into_iter()
                    .map(|at| format!("{at}: methods of Database outside src/database.rs")),
            );
        }
        if !name.starts_with("src/store/") {
            found.extend(
                inherent_impls(name, text, "Store")
                    .into_iter()
                    .map(|at| format!("{at}: methods of Store outside src/store/")),
            );
        }
    }
    assert!(found.is_empty(), "{}", found.join("\n"));
    let db = std::fs::read_to_string(root().join("src/database.rs")).expect("database.rs");
    assert_eq!(inherent_impls("src/database.rs", &db, "Database").len(), 1, "one impl block holds the read API");
}

#[test]
fn the_impl_check_finds_an_inherent_impl_by_any_path() {
    let text = "impl Store {\n}\nimpl crate::store::Store {\nimpl<'a> Store<'a> {\n// impl Store {\nimpl RecordSource for Store {\nimpl StoreKeys {\nimpl std::fmt::Debug for crate::store::Store {\n    impl super::Store {\n";
    assert_eq!(inherent_impls("f.rs", text, "Store"), ["f.rs:1", "f.rs:3", "f.rs:4", "f.rs:9"]);
}
