//! The layer order of the library, as drawn in ARCHITECTURE.md (the first code block under
//! `## Layers`, top layer first), holds in the source: every top-level module of `src/` is
//! in the picture and every module in the picture exists, and no file of a module names a
//! module of a layer above its own (`crate::Y`, `use crate::{Y, ..}` trees, `ostledb::Y`,
//! and `super::` chains that climb to the crate root), `#[cfg(test)]` code included;
//! comments and string and char literals are not code. `src/main.rs` and `src/lib.rs`
//! are exempt. The checker is tested too, on source text it is given.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// The layers of the picture, top layer first; each layer is one or more module names.
#[derive(Debug, PartialEq)]
struct Layers(Vec<Vec<String>>);

impl Layers {
    /// The position of `module`'s layer (0 = the top layer), if it is in the picture.
    fn layer_of(&self, module: &str) -> Option<usize> {
        self.0.iter().position(|layer| layer.iter().any(|m| m == module))
    }

    /// The name of layer `i` in messages: its modules.
    fn label(&self, i: usize) -> String {
        self.0[i].join(", ")
    }

    fn modules(&self) -> impl Iterator<Item = &String> {
        self.0.iter().flatten()
    }
}

/// A place where a file of module `from` names top-level module `to`.
#[derive(Debug, Clone, PartialEq)]
struct Reference {
    file: String,
    line: usize,
    from: String,
    to: String,
}

/// A lowercase Rust identifier (`[a-z_][a-z0-9_]*`, not `_` alone).
fn is_module_name(s: &str) -> bool {
    let mut chars = s.chars();
    matches!(chars.next(), Some('a'..='z' | '_')) && s != "_" && chars.all(|c| matches!(c, 'a'..='z' | '0'..='9' | '_'))
}

/// The layers drawn in the first fenced code block under the heading `## Layers` of
/// `markdown` (ARCHITECTURE.md): lines that hold only `↓` separate layers, every other
/// non-empty line is `module  description` (two or more spaces between them).
fn parse_layers(markdown: &str) -> Result<Layers, String> {
    let lines: Vec<&str> = markdown.lines().collect();
    let heading =
        lines.iter().position(|l| l.trim_end() == "## Layers").ok_or("ARCHITECTURE.md has no heading `## Layers`")?;
    let mut open = None;
    for (i, l) in lines.iter().enumerate().skip(heading + 1) {
        if l.trim_start().starts_with("```") {
            open = Some(i);
            break;
        }
        if l.starts_with("# ") || l.starts_with("## ") {
            break;
        }
    }
    let open = open.ok_or("ARCHITECTURE.md: no fenced code block (```) in the section `## Layers`")?;
    let close = (open + 1..lines.len())
        .find(|&i| lines[i].trim_start().starts_with("```"))
        .ok_or(format!("ARCHITECTURE.md line {}: the code block under `## Layers` is never closed", open + 1))?;

    let mut layers: Vec<Vec<String>> = vec![vec![]];
    let mut seen: BTreeMap<String, usize> = BTreeMap::new();
    for (i, line) in lines.iter().enumerate().take(close).skip(open + 1) {
        let n = i + 1;
        if line.trim().is_empty() {
            continue;
        }
        if line.trim() == "↓" {
            if layers.last().is_some_and(|l| l.is_empty()) {
                return Err(format!("ARCHITECTURE.md line {n}: `↓` with no module above it in the layer picture"));
            }
            layers.push(vec![]);
            continue;
        }
        let name_len = line.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).unwrap_or(line.len());
        let (name, rest) = line.split_at(name_len);
        if !is_module_name(name) || !rest.starts_with("  ") || rest.trim().is_empty() {
            return Err(format!(
                "ARCHITECTURE.md line {n}: `{line}` in the layer picture is neither `↓` nor \
                 `module  description` (a lowercase module name, two or more spaces, a description)"
            ));
        }
        if let Some(first) = seen.insert(name.to_string(), n) {
            return Err(format!(
                "ARCHITECTURE.md line {n}: module `{name}` is in the layer picture twice (lines {first} and {n})"
            ));
        }
        layers.last_mut().expect("at least one layer").push(name.to_string());
    }
    if seen.is_empty() {
        return Err("ARCHITECTURE.md: the code block under `## Layers` lists no module".to_string());
    }
    if layers.last().is_some_and(|l| l.is_empty()) {
        return Err("ARCHITECTURE.md: the layer picture ends with `↓`, with no module below it".to_string());
    }
    Ok(Layers(layers))
}

/// The top-level modules of the library under `src`: `X.rs` (not `lib.rs`, `main.rs`)
/// and directories `X/` holding `mod.rs`.
fn top_level_modules(src: &Path) -> Vec<String> {
    let mut modules = BTreeSet::new();
    for entry in std::fs::read_dir(src).expect("read src/") {
        let path = entry.expect("read src/").path();
        let name = path.file_name().and_then(|n| n.to_str()).expect("UTF-8 file name").to_string();
        if path.is_dir() {
            if path.join("mod.rs").is_file() {
                modules.insert(name);
            }
        } else if let Some(stem) = name.strip_suffix(".rs")
            && stem != "lib"
            && stem != "main"
        {
            modules.insert(stem.to_string());
        }
    }
    modules.into_iter().collect()
}

/// What is wrong between the picture and the modules that exist: one line per module
/// missing from the picture or pictured but missing from `src/`.
fn check_picture(layers: &Layers, modules: &[String]) -> Vec<String> {
    let pictured: BTreeSet<&String> = layers.modules().collect();
    let existing: BTreeSet<&String> = modules.iter().collect();
    let mut problems = Vec::new();
    for m in existing.difference(&pictured) {
        problems.push(format!("module {m} (src/{m}.rs or src/{m}/mod.rs) is not in the layer picture"));
    }
    for m in pictured.difference(&existing) {
        problems.push(format!("module {m} is in the layer picture, but there is no src/{m}.rs or src/{m}/mod.rs"));
    }
    problems
}

/// One token of Rust source; comments and whitespace make none, literals make `Literal`.
#[derive(Debug, PartialEq)]
enum Tok {
    Ident(String),
    Punct(char),
    Literal,
}

/// The tokens of `src` with their line numbers (from 1). Comments (nested block comments
/// too), strings (raw, byte and C strings too), chars and numbers are skipped or made
/// `Literal`, so nothing inside them is taken for code; a lifetime or label (`'a`) makes no
/// token and does not start a char literal.
fn tokens(src: &str) -> Vec<(Tok, usize)> {
    let c: Vec<char> = src.chars().collect();
    let at = |i: usize| c.get(i).copied().unwrap_or('\0');
    let ident_start = |ch: char| ch == '_' || ch.is_alphabetic();
    let ident_continue = |ch: char| ch == '_' || ch.is_alphanumeric();
    // The end of the identifier (or number) starting at `i`.
    let word_end = |mut i: usize| {
        while i < c.len() && ident_continue(c[i]) {
            i += 1;
        }
        i
    };
    // The end of a quoted string whose body starts at `i` (past the closing quote).
    let string_end = |mut i: usize| {
        while i < c.len() && c[i] != '"' {
            i += if c[i] == '\\' { 2 } else { 1 };
        }
        i + 1
    };
    // The end of a char literal starting at the quote `i`, or None for a lifetime.
    let char_end = |i: usize| {
        if at(i + 1) == '\\' {
            (i + 3..c.len()).find(|&j| c[j] == '\'').map(|j| j + 1).or(Some(c.len()))
        } else if at(i + 2) == '\'' {
            Some(i + 3)
        } else {
            None
        }
    };
    let mut out = Vec::new();
    let mut line = 1;
    let mut i = 0;
    while i < c.len() {
        let ch = c[i];
        // Where this token (or comment, or whitespace) ends, and what it is.
        let (end, tok) = if ch.is_whitespace() {
            (i + 1, None)
        } else if ch == '/' && at(i + 1) == '/' {
            ((i..c.len()).find(|&j| c[j] == '\n').unwrap_or(c.len()), None)
        } else if ch == '/' && at(i + 1) == '*' {
            let (mut j, mut depth) = (i + 2, 1);
            while j < c.len() && depth > 0 {
                if c[j] == '/' && at(j + 1) == '*' {
                    depth += 1;
                    j += 2;
                } else if c[j] == '*' && at(j + 1) == '/' {
                    depth -= 1;
                    j += 2;
                } else {
                    j += 1;
                }
            }
            (j, None)
        } else if ch == '"' {
            (string_end(i + 1), Some(Tok::Literal))
        } else if ch == '\'' {
            match char_end(i) {
                Some(end) => (end, Some(Tok::Literal)),
                // A lifetime or a loop label: the quote and the name, no token.
                None => (word_end(i + 1), None),
            }
        } else if ch.is_ascii_digit() {
            (word_end(i), Some(Tok::Literal))
        } else if ident_start(ch) {
            let j = word_end(i);
            let word: String = c[i..j].iter().collect();
            let hashes = (j..c.len()).take_while(|&k| c[k] == '#').count();
            if matches!(word.as_str(), "r" | "br" | "cr") && at(j + hashes) == '"' {
                // A raw string: ends at a quote followed by as many `#`.
                let body = j + hashes + 1;
                let close = (body..c.len()).find(|&k| c[k] == '"' && (1..=hashes).all(|h| at(k + h) == '#'));
                (close.map_or(c.len(), |k| k + 1 + hashes), Some(Tok::Literal))
            } else if word == "r" && hashes == 1 && ident_start(at(j + 1)) {
                // A raw identifier `r#name`.
                let k = word_end(j + 1);
                (k, Some(Tok::Ident(c[j + 1..k].iter().collect())))
            } else if matches!(word.as_str(), "b" | "c") && at(j) == '"' {
                (string_end(j + 1), Some(Tok::Literal))
            } else if word == "b" && at(j) == '\'' && char_end(j).is_some() {
                (char_end(j).expect("a byte literal"), Some(Tok::Literal))
            } else {
                (j, Some(Tok::Ident(word)))
            }
        } else {
            (i + 1, Some(Tok::Punct(ch)))
        };
        let end = end.min(c.len());
        if let Some(tok) = tok {
            out.push((tok, line));
        }
        line += c[i..end].iter().filter(|&&ch| ch == '\n').count();
        i = end;
    }
    out
}

/// The top-level module of a file under `src/` and its module depth (`src/X.rs` and
/// `src/X/mod.rs`: 1, `src/X/a.rs`: 2, ...); None for `src/lib.rs` and `src/main.rs`,
/// which are exempt, and for paths not under `src/`.
fn module_of(path: &str) -> Option<(String, usize)> {
    let parts: Vec<&str> = path.strip_prefix("src/")?.split('/').collect();
    if parts.len() == 1 && matches!(parts[0], "lib.rs" | "main.rs") {
        return None;
    }
    let module = parts[0].strip_suffix(".rs").unwrap_or(parts[0]).to_string();
    let depth = if parts.last() == Some(&"mod.rs") { parts.len() - 1 } else { parts.len() };
    Some((module, depth))
}

/// Every place where the source `text` of the file `path` (`src/...`) names a top-level
/// item of the crate: `crate::Y` and `ostledb::Y` paths, each top-level name of a group
/// `crate::{Y, Z::{a, b}}`, and `super::` chains that climb exactly to the crate root
/// (inline `mod name { .. }` blocks counted). Names that are not modules (`crate::Error`)
/// are reported too; the check ignores what is not in the picture. Empty for the exempt
/// `src/lib.rs` and `src/main.rs`.
fn scan(path: &str, text: &str) -> Vec<Reference> {
    let Some((from, file_depth)) = module_of(path) else { return Vec::new() };
    let toks = tokens(text);
    let ident = |i: usize| match toks.get(i) {
        Some((Tok::Ident(w), _)) => Some(w.as_str()),
        _ => None,
    };
    let punct = |i: usize, p: char| matches!(toks.get(i), Some((Tok::Punct(q), _)) if *q == p);
    let path_sep = |i: usize| punct(i, ':') && punct(i + 1, ':');
    let is_root_name = |w: &str| !matches!(w, "self" | "super" | "crate");
    let mut refs = Vec::new();
    let mut name = |to: &str, line: usize| {
        refs.push(Reference { file: path.to_string(), line, from: from.clone(), to: to.to_string() })
    };
    let mut braces: usize = 0;
    let mut inline_mods: Vec<usize> = Vec::new();
    for i in 0..toks.len() {
        if punct(i, '{') {
            braces += 1;
            if i >= 2 && ident(i - 2) == Some("mod") && ident(i - 1).is_some() {
                inline_mods.push(braces);
            }
            continue;
        }
        if punct(i, '}') {
            if inline_mods.last() == Some(&braces) {
                inline_mods.pop();
            }
            braces = braces
                .checked_sub(1)
                .unwrap_or_else(|| panic!("{path}:{}: a `}}` closes nothing: {MISREAD}", toks[i].1));
            continue;
        }
        // A path that starts here (not the middle of `a::b`) and reaches the crate root.
        if i >= 1 && punct(i - 1, ':') {
            continue;
        }
        let root = match ident(i) {
            Some("crate" | "ostledb") if path_sep(i + 1) => i + 3,
            Some("super") => {
                let (mut j, mut supers) = (i, 0);
                while ident(j) == Some("super") && path_sep(j + 1) {
                    supers += 1;
                    j += 3;
                }
                if supers == 0 || supers != file_depth + inline_mods.len() {
                    continue;
                }
                j
            }
            _ => continue,
        };
        match &toks.get(root) {
            Some((Tok::Ident(w), line)) if is_root_name(w) => name(w, *line),
            Some((Tok::Punct('{'), _)) => {
                // A group: the first name of each item at its top level.
                let (mut j, mut depth, mut item_start) = (root + 1, 1, true);
                while j < toks.len() && depth > 0 {
                    match &toks[j] {
                        (Tok::Punct('{'), _) => depth += 1,
                        (Tok::Punct('}'), _) => depth -= 1,
                        (Tok::Punct(','), _) if depth == 1 => {
                            item_start = true;
                            j += 1;
                            continue;
                        }
                        (Tok::Ident(w), line) if depth == 1 && item_start && is_root_name(w) => name(w, *line),
                        _ => {}
                    }
                    item_start = false;
                    j += 1;
                }
            }
            _ => {}
        }
    }
    assert_eq!(braces, 0, "{path}: braces do not balance at the end: {MISREAD}");
    refs
}

/// Why braces that do not balance fail the scan: Rust source balances them outside
/// comments and literals, so the tokenizer has misread one.
const MISREAD: &str = "the layer checker misread a comment or literal (tests/layers.rs, fn tokens)";

/// One line per reference to a module of a layer above the referring module's, sorted,
/// each place once. References within a layer, downward, or to or from names that are
/// not in the picture are not violations.
fn check(layers: &Layers, refs: &[Reference]) -> Vec<String> {
    let mut violations = BTreeSet::new();
    for r in refs {
        let (Some(from), Some(to)) = (layers.layer_of(&r.from), layers.layer_of(&r.to)) else { continue };
        if to < from {
            violations.insert((
                r.file.clone(),
                r.line,
                format!(
                    "{}:{}: {} (layer \"{}\") names {}, a layer above it",
                    r.file,
                    r.line,
                    r.from,
                    layers.label(from),
                    r.to
                ),
            ));
        }
    }
    violations.into_iter().map(|(_, _, v)| v).collect()
}

/// Every `.rs` file under `dir`, as paths relative to `root` with `/` separators, sorted.
fn rust_files(root: &Path, dir: &Path, out: &mut Vec<String>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir).expect("read dir").map(|e| e.expect("read dir").path()).collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            rust_files(root, &path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            let rel = path.strip_prefix(root).expect("under the root");
            out.push(
                rel.components().map(|c| c.as_os_str().to_str().expect("UTF-8 path")).collect::<Vec<_>>().join("/"),
            );
        }
    }
}

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn the_picture() -> Layers {
    let text = std::fs::read_to_string(root().join("ARCHITECTURE.md")).expect("read ARCHITECTURE.md");
    parse_layers(&text).unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn every_module_is_in_the_layer_picture_and_every_pictured_module_exists() {
    let layers = the_picture();
    let problems = check_picture(&layers, &top_level_modules(&root().join("src")));
    assert!(
        problems.is_empty(),
        "the layer picture of ARCHITECTURE.md (## Layers) and the modules of src/ disagree:\n{}\n{} problem(s)",
        problems.join("\n"),
        problems.len()
    );
}

#[test]
fn no_module_names_a_layer_above_its_own() {
    let layers = the_picture();
    let mut files = Vec::new();
    rust_files(root(), &root().join("src"), &mut files);
    let mut refs = Vec::new();
    for file in &files {
        let text = std::fs::read_to_string(root().join(file)).unwrap_or_else(|e| panic!("read {file}: {e}"));
        refs.extend(scan(file, &text));
    }
    let violations = check(&layers, &refs);
    assert!(
        violations.is_empty(),
        "modules name a layer above their own (layer order: ARCHITECTURE.md, ## Layers):\n{}\n{} violation(s)",
        violations.join("\n"),
        violations.len()
    );
}

// The checker itself, on text it is given.

const PICTURE: &str = "# x\n\n## Layers\n\nSome words.\n\n```text\n\
    cli          one file per subcommand\n  ↓\n\
    solve        the solver\nstats        walks\n   ↓  \n\
    store        the database\n  ↓\n\
    game         rules\nerror        the one error type\n```\n\n## Next\n";

fn layers() -> Layers {
    parse_layers(PICTURE).expect("the test picture parses")
}

/// The (line, target) pairs `scan` finds in `text` as a file of `store`.
fn found(text: &str) -> Vec<(usize, String)> {
    scan("src/store/db.rs", text).into_iter().map(|r| (r.line, r.to)).collect()
}

fn pairs(v: &[(usize, &str)]) -> Vec<(usize, String)> {
    v.iter().map(|&(l, s)| (l, s.to_string())).collect()
}

#[test]
fn the_layer_picture_is_read_top_layer_first_with_modules_side_by_side_in_one_layer() {
    let names = |v: &[&[&str]]| Layers(v.iter().map(|l| l.iter().map(|s| s.to_string()).collect()).collect());
    assert_eq!(layers(), names(&[&["cli"], &["solve", "stats"], &["store"], &["game", "error"]]));
    assert_eq!(layers().label(1), "solve, stats");
}

#[test]
fn a_malformed_layer_picture_is_an_error_saying_what_is_wrong() {
    let with_block = |block: &str| parse_layers(&format!("## Layers\n\n```\n{block}```\n"));
    let err = |r: Result<Layers, String>| r.expect_err("malformed");
    assert!(err(parse_layers("# x\n\nno layers\n")).contains("no heading `## Layers`"));
    assert!(err(parse_layers("## Layers\n\ntext\n\n## Other\n\n```\na  b\n```\n")).contains("no fenced code block"));
    assert!(err(parse_layers("## Layers\n\n```\ncli  x\n")).contains("never closed"));
    assert!(err(with_block("")).contains("lists no module"));
    let e = err(with_block("cli  x\n  ↓\nsrc/game/  rules\n"));
    assert!(e.contains("line 6") && e.contains("src/game/") && e.contains("neither"), "{e}");
    assert!(err(with_block("cli x\n")).contains("neither"));
    assert!(err(with_block("Cli  x\n")).contains("neither"));
    assert!(err(with_block("cli\n")).contains("neither"));
    assert!(err(with_block("cli  x\n  ↓\n  ↓\ngame  y\n")).contains("no module above it"));
    assert!(err(with_block("  ↓\ngame  y\n")).contains("no module above it"));
    assert!(err(with_block("cli  x\n  ↓\n")).contains("no module below it"));
    let e = err(with_block("game  x\n  ↓\nerror  y\ngame  z\n"));
    assert!(e.contains("`game` is in the layer picture twice (lines 4 and 7)"), "{e}");
}

#[test]
fn a_missing_or_extra_module_in_the_picture_is_reported() {
    let modules: Vec<String> = ["cli", "solve", "stats", "store", "game", "error"].map(String::from).to_vec();
    assert!(check_picture(&layers(), &modules).is_empty());
    let mut more = modules.clone();
    more.push("sys".to_string());
    more.retain(|m| m != "stats");
    let problems = check_picture(&layers(), &more);
    assert_eq!(problems.len(), 2, "{problems:?}");
    assert!(problems[0].contains("module sys") && problems[0].contains("not in the layer picture"));
    assert!(problems[1].contains("module stats is in the layer picture, but there is no src/stats.rs"));
}

#[test]
fn a_planted_upward_reference_is_found_on_its_line() {
    let text = "use crate::game::Geometry;\n\
                use crate::error::Error;\n\
                \n\
                fn f() {\n    let x = crate::solve::run();\n}\n\
                #[cfg(test)]\nmod tests {\n    use crate::cli::main;\n}\n";
    let refs = scan("src/store/db.rs", text);
    assert_eq!(
        refs.iter().map(|r| (r.line, r.to.as_str())).collect::<Vec<_>>(),
        [(1, "game"), (2, "error"), (5, "solve"), (9, "cli")]
    );
    assert!(refs.iter().all(|r| r.from == "store" && r.file == "src/store/db.rs"));
    assert_eq!(
        check(&layers(), &refs),
        [
            "src/store/db.rs:5: store (layer \"store\") names solve, a layer above it",
            "src/store/db.rs:9: store (layer \"store\") names cli, a layer above it",
        ]
    );
}

#[test]
fn references_within_a_layer_downward_or_to_names_outside_the_picture_are_allowed() {
    let refs = scan(
        "src/solve/mod.rs",
        "use crate::stats::x;\nuse crate::solve::y;\nuse crate::game::z;\nuse crate::Error;\n",
    );
    assert_eq!(refs.len(), 4);
    assert!(check(&layers(), &refs).is_empty());
    // A module that is not in the picture is reported by the picture check, not here.
    assert!(check(&layers(), &scan("src/sys.rs", "use crate::cli::x;\n")).is_empty());
    let e = check(&layers(), &scan("src/stats.rs", "use crate::cli::x;\n"));
    assert_eq!(e, ["src/stats.rs:1: stats (layer \"solve, stats\") names cli, a layer above it"]);
}

#[test]
fn references_in_comments_and_literals_are_not_found() {
    let text = r####"// use crate::solve::a;
/// Calls [`crate::solve::b`].
//! See crate::cli.
/* crate::solve::c
   /* nested */ crate::solve::d */
/** crate::solve::e */
fn f() {
    let a = "crate::solve::f \" crate::solve::g";
    let b = r#"crate::solve::h " still in the string"#;
    let c = r##"crate::solve::i "# still"##;
    let d = b"crate::solve::j";
    let e = br#"crate::solve::k"#;
    let q = '"'; let crate_word = crate::game::x();
    let s = "
crate::solve::l
";
    let bq = b'"'; let e2 = '\''; let u = '\u{22}';
}
use crate::game::y;
"####;
    assert_eq!(found(text), pairs(&[(13, "game"), (19, "game")]));
}

#[test]
fn grouped_and_nested_use_trees_name_each_top_level_module() {
    let text = "use crate::{solve, game::Geometry};\n\
                use crate::{\n    cli::{a, b::{c, d}},\n    self,\n    error::{self, Error},\n    stats::*,\n};\n\
                use ostledb::{index::{x, y}, sys};\n";
    assert_eq!(
        found(text),
        pairs(&[(1, "solve"), (1, "game"), (3, "cli"), (5, "error"), (6, "stats"), (8, "index"), (8, "sys")])
    );
}

#[test]
fn a_lifetime_does_not_start_a_char_literal() {
    let text = "struct S<'a> { x: &'a str }\n\
                fn f<'a, 'b: 'a>(x: &'a str, _: &'b str) -> &'a str { 'outer: loop { break 'outer; } crate::solve::g(x) }\n\
                impl<'a> S<'a> { fn h(&self) -> char { let _ = crate::cli::k(); 'x' } }\n\
                const C: &'static str = crate::game::N;\n";
    assert_eq!(found(text), pairs(&[(2, "solve"), (3, "cli"), (4, "game")]));
}

#[test]
fn ostledb_paths_and_super_chains_to_the_crate_root_are_references_but_deeper_paths_are_not() {
    let text = "fn f() { ostledb::solve::a(); ostledb :: cli :: b(); }\n\
                use super::super::solve::x;\n\
                use super::keys::y;\n\
                use self::crate_like::z;\n\
                fn g() { foo::crate_x::solve(); other::ostledb::cli::q(); }\n\
                mod tests {\n    use super::super::super::cli::t;\n    use super::super::game::u;\n}\n\
                use super::super::{error, index::v};\n";
    // src/store/db.rs is at depth 2: two `super` reach the crate root, three inside `mod tests`.
    assert_eq!(found(text), pairs(&[(1, "solve"), (1, "cli"), (2, "solve"), (7, "cli"), (10, "error"), (10, "index")]));
    assert_eq!(module_of("src/store/mod.rs"), Some(("store".to_string(), 1)));
    assert_eq!(module_of("src/store/keys/rank.rs"), Some(("store".to_string(), 3)));
    assert_eq!(scan("src/store/mod.rs", "use super::solve;").len(), 1);
}

#[test]
fn main_and_lib_are_exempt() {
    assert!(scan("src/main.rs", "use ostledb::cli::run;\nuse crate::cli;\n").is_empty());
    assert!(scan("src/lib.rs", "pub use crate::error::Error;\n").is_empty());
    assert_eq!(scan("src/game/mod.rs", "use crate::cli;\n").len(), 1);
}

#[test]
#[should_panic(expected = "a `}` closes nothing")]
fn a_brace_that_closes_nothing_fails_the_scan_as_a_misread() {
    scan("src/store/db.rs", "fn f() {}\n}\n");
}

#[test]
#[should_panic(expected = "braces do not balance")]
fn a_brace_left_open_fails_the_scan_as_a_misread() {
    scan("src/store/db.rs", "fn f() {\n");
}
