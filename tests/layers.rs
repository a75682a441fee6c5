//! The layer order of the library, as drawn in ARCHITECTURE.md (the first code block under
//! `## Layers`, top layer first), holds in the source: every top-level module of `src/` is
//! in the picture and every module in the picture exists, and no file of a module names a
//! module of a layer above its own: paths through the crate root (`crate::Y`, `ostledb::Y`,
//! `use crate::{Y, ..}` trees, `super::` and `self::super::` chains that climb to it), and
//! crate-root names that lib.rs re-exports (`pub use Y::x`), `#[cfg(test)]` code included;
//! comments and string and char literals are not code. What would hide a module from
//! that reading is refused in every file of `src/`: globs and aliases of the crate root
//! (`use crate::*`, `use crate as c`, `extern crate self as x`, `use super::super as r`),
//! `#[path]`, `include!`, `include_str!`/`include_bytes!` of `.rs` files,
//! `#[macro_export]`, `#[macro_use]`, and in lib.rs anything but `mod x;`, `pub use`,
//! attributes and unit structs (inline modules and code). Inside the folder of each
//! top-level module, files must not import each other round a loop: each path is followed
//! (through `use`, re-exports and globs) to the file that defines what it names, each
//! child of a folder (a file, or a subfolder as a whole) is one member, the folder's own
//! `mod.rs` none. `src/main.rs`, the binary, is only checked for the refused forms. The
//! checker is tested too, on source text it is given.

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
    /// A string, char or number literal, with its source text (quotes included).
    Literal(String),
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
            (string_end(i + 1), Some(Tok::Literal(String::new())))
        } else if ch == '\'' {
            match char_end(i) {
                Some(end) => (end, Some(Tok::Literal(String::new()))),
                // A lifetime or a loop label: the quote and the name, no token.
                None => (word_end(i + 1), None),
            }
        } else if ch.is_ascii_digit() {
            (word_end(i), Some(Tok::Literal(String::new())))
        } else if ident_start(ch) {
            let j = word_end(i);
            let word: String = c[i..j].iter().collect();
            let hashes = (j..c.len()).take_while(|&k| c[k] == '#').count();
            if matches!(word.as_str(), "r" | "br" | "cr") && at(j + hashes) == '"' {
                // A raw string: ends at a quote followed by as many `#`.
                let body = j + hashes + 1;
                let close = (body..c.len()).find(|&k| c[k] == '"' && (1..=hashes).all(|h| at(k + h) == '#'));
                (close.map_or(c.len(), |k| k + 1 + hashes), Some(Tok::Literal(String::new())))
            } else if word == "r" && hashes == 1 && ident_start(at(j + 1)) {
                // A raw identifier `r#name`.
                let k = word_end(j + 1);
                (k, Some(Tok::Ident(c[j + 1..k].iter().collect())))
            } else if matches!(word.as_str(), "b" | "c") && at(j) == '"' {
                (string_end(j + 1), Some(Tok::Literal(String::new())))
            } else if word == "b" && at(j) == '\'' && char_end(j).is_some() {
                (char_end(j).expect("a byte literal"), Some(Tok::Literal(String::new())))
            } else {
                (j, Some(Tok::Ident(word)))
            }
        } else {
            (i + 1, Some(Tok::Punct(ch)))
        };
        let end = end.min(c.len());
        if let Some(tok) = tok {
            let tok = if matches!(tok, Tok::Literal(_)) { Tok::Literal(c[i..end].iter().collect()) } else { tok };
            out.push((tok, line));
        }
        line += c[i..end].iter().filter(|&&ch| ch == '\n').count();
        i = end;
    }
    out
}

/// The module path of a file under `src/`: `src/store/mod.rs` is `[store]`,
/// `src/store/keys/rank.rs` is `[store, keys, rank]`, `src/lib.rs` is `[]` (the crate root);
/// None for `src/main.rs` (the binary, a crate of its own) and for paths not under `src/`.
fn module_path(path: &str) -> Option<Vec<String>> {
    let rest = path.strip_prefix("src/")?;
    match rest {
        "main.rs" => return None,
        "lib.rs" => return Some(Vec::new()),
        _ => {}
    }
    let mut parts: Vec<String> = rest.split('/').map(String::from).collect();
    let last = parts.pop()?;
    if last != "mod.rs" {
        parts.push(last.strip_suffix(".rs")?.to_string());
    }
    Some(parts)
}

/// What a path the checker follows does.
#[derive(Debug, Clone, PartialEq)]
enum Kind {
    /// A path in code (an expression, a type, a `pub(in ..)`): it names and binds nothing.
    Code,
    /// A leaf of a `use` tree, binding this name (its `as` name or its last segment).
    Use(String),
    /// A glob, `use path::*`.
    Glob,
}

/// A path in a file, as the checker follows it.
#[derive(Debug, Clone, PartialEq)]
struct Found {
    line: usize,
    /// The module the path is written in: the file's module and the inline `mod`s around it.
    scope: Vec<String>,
    /// The path starts at the crate root, `self` or `super`, and `segs` is the whole path from
    /// the crate root; otherwise it starts at a plain name and `segs` is relative to `scope`.
    anchored: bool,
    /// The path passes through the crate root (`crate::`, `ostledb::`, `super::` chains that
    /// climb to it); `segs[0]` is then the top-level name it goes down into.
    via_root: bool,
    segs: Vec<String>,
    kind: Kind,
}

/// What the checker reads in one file.
#[derive(Debug, Default)]
struct Scan {
    found: Vec<Found>,
    /// The names each module of the file defines at its top level (`fn`, types, `const`,
    /// `static`, `mod`, macros), for the file's module and each inline module.
    defs: BTreeMap<Vec<String>, BTreeSet<String>>,
    /// One `file:line: what` per way around the checker that the file takes.
    refused: Vec<String>,
}

/// Where a path stands while it is read: None before its first segment.
#[derive(Debug, Clone)]
struct At {
    anchored: bool,
    via_root: bool,
    segs: Vec<String>,
}

/// `at` moved by the segment `seg`, for a path written in `scope`.
fn step(at: Option<At>, seg: &str, scope: &[String]) -> At {
    match at {
        None => match seg {
            "crate" | "ostledb" => At { anchored: true, via_root: true, segs: Vec::new() },
            "self" => At { anchored: true, via_root: scope.is_empty(), segs: scope.to_vec() },
            "super" => {
                let segs = scope[..scope.len().saturating_sub(1)].to_vec();
                At { anchored: true, via_root: segs.is_empty(), segs }
            }
            name => At { anchored: false, via_root: false, segs: vec![name.to_string()] },
        },
        Some(mut at) => {
            match seg {
                "self" => {}
                "super" if at.anchored => {
                    at.segs.pop();
                    at.via_root |= at.segs.is_empty();
                }
                name => at.segs.push(name.to_string()),
            }
            at
        }
    }
}

/// The reader of one file's tokens.
struct Reader<'a> {
    path: &'a str,
    toks: Vec<(Tok, usize)>,
    /// The module being read: the file's module and the inline `mod`s open at this point.
    scope: Vec<String>,
    out: Scan,
}

impl Reader<'_> {
    fn ident(&self, i: usize) -> Option<&str> {
        match self.toks.get(i) {
            Some((Tok::Ident(w), _)) => Some(w.as_str()),
            _ => None,
        }
    }

    fn punct(&self, i: usize, p: char) -> bool {
        matches!(self.toks.get(i), Some((Tok::Punct(q), _)) if *q == p)
    }

    fn path_sep(&self, i: usize) -> bool {
        self.punct(i, ':') && self.punct(i + 1, ':')
    }

    fn line(&self, i: usize) -> usize {
        self.toks.get(i).or(self.toks.last()).map_or(1, |t| t.1)
    }

    fn refuse(&mut self, i: usize, what: &str) {
        let line = self.line(i);
        self.out.refused.push(format!("{}:{line}: {what}", self.path));
    }

    /// Reads the path or `use` tree whose next token is `i`, continuing `at`; records each
    /// leaf and returns the index past the tree.
    fn tree(&mut self, i: usize, mut at: Option<At>, in_use: bool) -> usize {
        let mut j = i;
        loop {
            match self.toks.get(j).map(|t| &t.0) {
                Some(Tok::Ident(w)) => {
                    let w = w.clone();
                    at = Some(step(at, &w, &self.scope));
                    j += 1;
                    if self.path_sep(j) {
                        j += 2;
                        continue;
                    }
                    break;
                }
                Some(Tok::Punct('{')) if at.is_some() || in_use => {
                    j += 1;
                    while j < self.toks.len() && !self.punct(j, '}') {
                        if self.punct(j, ',') {
                            j += 1;
                        } else {
                            j = self.tree(j, at.clone(), in_use).max(j + 1);
                        }
                    }
                    return j + 1;
                }
                Some(Tok::Punct('*')) if at.is_some() => {
                    self.leaf(j, at, Kind::Glob, in_use);
                    return j + 1;
                }
                Some(Tok::Punct('$')) if self.ident(j + 1) == Some("crate") => j += 1,
                Some(Tok::Punct('$')) if at.as_ref().is_some_and(|a| a.anchored) => {
                    self.refuse(j, "a path from the crate root, `self` or `super` continued by a macro variable (`crate::$m`) names a module the checker cannot see");
                    return j + 1;
                }
                _ => break,
            }
        }
        let Some(a) = at else { return j };
        let kind = if !in_use {
            Kind::Code
        } else if self.ident(j) == Some("as") {
            j += 2;
            Kind::Use(self.ident(j - 1).unwrap_or("_").to_string())
        } else {
            Kind::Use(a.segs.last().cloned().unwrap_or_default())
        };
        self.leaf(j - 1, Some(a), kind, in_use);
        j
    }

    fn leaf(&mut self, i: usize, at: Option<At>, kind: Kind, in_use: bool) {
        let Some(at) = at else { return };
        if in_use && at.anchored && at.segs.is_empty() {
            self.refuse(
                i,
                if kind == Kind::Glob {
                    "a glob of the crate root (`use crate::*`) brings every top-level module in unnamed"
                } else {
                    "an alias of the crate root (`use crate as c`, `use super::super as root`) hides the modules named through it"
                },
            );
        }
        let line = self.line(i);
        let scope = self.scope.clone();
        self.out.found.push(Found { line, scope, anchored: at.anchored, via_root: at.via_root, segs: at.segs, kind });
    }
}

/// Everything the checker reads in the source `text` of the file `path` (`src/...`): every
/// path (in `use` trees, leaf by leaf, and in code), the names each module defines, and the
/// ways around the checker, which it refuses: `#[path]` on a `mod`, `include!`,
/// `include_str!`/`include_bytes!` of a `.rs` file or of anything but one string literal,
/// `#[macro_export]`, `#[macro_use]`, `extern crate self`, globs and aliases of the crate
/// root, and in `src/lib.rs` anything but `mod` declarations, `use` re-exports, attributes
/// and unit structs (an inline `mod x { .. }` there too).
fn read(path: &str, text: &str) -> Scan {
    let module = module_path(path);
    let is_lib = module.as_ref().is_some_and(|m| m.is_empty());
    let mut r = Reader { path, toks: tokens(text), scope: module.clone().unwrap_or_default(), out: Scan::default() };
    let mut braces: usize = 0;
    // The brace depth at which each open inline module's body starts.
    let mut inline: Vec<usize> = Vec::new();
    let mut i = 0;
    while i < r.toks.len() {
        if r.punct(i, '#') && (r.punct(i + 1, '[') || (r.punct(i + 1, '!') && r.punct(i + 2, '['))) {
            let open = if r.punct(i + 1, '[') { i + 1 } else { i + 2 };
            let (mut j, mut depth) = (open, 0);
            while j < r.toks.len() {
                depth += usize::from(r.punct(j, '['));
                if r.punct(j, ']') {
                    depth -= 1;
                    if depth == 0 {
                        break;
                    }
                }
                j += 1;
            }
            for k in open..j {
                match r.ident(k) {
                    Some("path") if r.punct(k + 1, '=') => r.refuse(k, "`#[path = ..]` on a `mod` takes a file from elsewhere into this module, past the layer check; move the file instead"),
                    Some("macro_export") => r.refuse(k, "`#[macro_export]` puts a macro at the crate root, where a lower layer could call it"),
                    Some("macro_use") => r.refuse(k, "`#[macro_use]` carries macros across modules unnamed"),
                    _ => {}
                }
            }
            // The tokens inside the attribute are read as usual.
            i = open + 1;
            continue;
        }
        if r.punct(i, '{') {
            braces += 1;
            if i >= 2 && r.ident(i - 2) == Some("mod") && r.ident(i - 1).is_some() {
                if is_lib {
                    r.refuse(i, "an inline module in lib.rs (`mod x { .. }`) is in no file of src/ the layer check reads; give it a file");
                }
                let name = r.ident(i - 1).expect("a module name").to_string();
                r.scope.push(name);
                inline.push(braces);
            } else if i >= 1 && r.ident(i - 1) == Some("use") {
                i = r.tree(i, None, true);
                continue;
            } else if is_lib && braces == 1 {
                r.refuse(i, "code in lib.rs is in no module of the layer picture; lib.rs holds only `mod` declarations, `pub use` re-exports, attributes and unit structs");
            }
            i += 1;
            continue;
        }
        if r.punct(i, '}') {
            if inline.last() == Some(&braces) {
                inline.pop();
                r.scope.pop();
            }
            braces = braces
                .checked_sub(1)
                .unwrap_or_else(|| panic!("{path}:{}: a `}}` closes nothing: {MISREAD}", r.line(i)));
            i += 1;
            continue;
        }
        let Some(w) = r.ident(i).map(String::from) else {
            i += 1;
            continue;
        };
        match w.as_str() {
            "include" if r.punct(i + 1, '!') => {
                r.refuse(i, "`include!` pastes a file into this module, past the layer check");
            }
            "include_str" | "include_bytes" if r.punct(i + 1, '!') => {
                let plain = r.punct(i + 2, '(')
                    && r.punct(i + 4, ')')
                    && matches!(&r.toks.get(i + 3), Some((Tok::Literal(s), _))
                        if s.ends_with('"') && !s.trim_end_matches('#').trim_end_matches('"').ends_with(".rs"));
                if !plain {
                    r.refuse(i, "`include_str!`/`include_bytes!` of Rust source (or of a path that is not one string literal not ending in `.rs`)");
                }
            }
            "extern" if r.ident(i + 1) == Some("crate") && r.ident(i + 2) == Some("self") => {
                r.refuse(i, "`extern crate self as x` is an alias of the crate root");
            }
            _ => {}
        }
        let item_level = braces == inline.last().copied().unwrap_or(0);
        if item_level
            && matches!(w.as_str(), "fn" | "struct" | "enum" | "union" | "trait" | "type" | "const" | "static" | "mod")
            && let Some(name) = r.ident(i + 1).filter(|n| !matches!(*n, "_" | "fn" | "mut" | "unsafe"))
        {
            let name = name.to_string();
            r.out.defs.entry(r.scope.clone()).or_default().insert(name);
        }
        if item_level
            && w == "macro_rules"
            && r.punct(i + 1, '!')
            && let Some(name) = r.ident(i + 2)
        {
            let name = name.to_string();
            r.out.defs.entry(r.scope.clone()).or_default().insert(name);
        }
        if is_lib
            && braces == 0
            && matches!(w.as_str(), "fn" | "const" | "static" | "impl" | "trait" | "macro_rules" | "type")
        {
            r.refuse(i, "code in lib.rs is in no module of the layer picture; lib.rs holds only `mod` declarations, `pub use` re-exports, attributes and unit structs");
        }
        // A path starts here: not in the middle of `a::b` (a leading `::ostledb` does start
        // one), not a field or method after `.`.
        let after_sep = i >= 2 && r.path_sep(i - 2);
        let leading_sep = after_sep && !(i >= 3 && (r.ident(i - 3).is_some() || r.punct(i - 3, '>')));
        let in_use = i >= 1 && r.ident(i - 1) == Some("use");
        if (after_sep && !(leading_sep && w == "ostledb")) || (i >= 1 && r.punct(i - 1, '.')) {
            i += 1;
            continue;
        }
        if r.path_sep(i + 1) || in_use {
            i = r.tree(i, None, in_use).max(i + 1);
            continue;
        }
        i += 1;
    }
    assert_eq!(braces, 0, "{path}: braces do not balance at the end: {MISREAD}");
    r.out.refused.dedup();
    if is_lib {
        let globs: Vec<usize> = r.out.found.iter().filter(|f| f.kind == Kind::Glob).map(|f| f.line).collect();
        for line in globs {
            r.out.refused.push(format!(
                "{path}:{line}: a glob re-export in lib.rs hides which module a crate-root name comes from"
            ));
        }
    }
    r.out
}

/// Every place where the source `text` of the file `path` (`src/...`) names a top-level
/// item of the crate: paths through the crate root (`crate::Y`, `ostledb::Y`, `$crate::Y`,
/// each top-level name of a group `crate::{Y, Z::{a, b}}`, `super::` and `self::super::`
/// chains that climb to the crate root, inline `mod name { .. }` blocks counted). Names
/// that are not modules (`crate::Error`) are reported too; [`through_lib`] maps a
/// re-export of lib.rs to its module and the check ignores what is not in the picture.
/// Empty for `src/lib.rs` (its re-exports are checked through the names they bind) and
/// `src/main.rs` (the binary).
fn scan(path: &str, text: &str) -> Vec<Reference> {
    let Some(from) = module_path(path).and_then(|m| m.first().cloned()) else { return Vec::new() };
    let mut refs: Vec<Reference> = Vec::new();
    for f in read(path, text).found {
        let Some(to) = f.segs.first().filter(|_| f.via_root) else { continue };
        let r = Reference { file: path.to_string(), line: f.line, from: from.clone(), to: to.clone() };
        if refs.last() != Some(&r) {
            refs.push(r);
        }
    }
    refs
}

/// The module each crate-root name that `src/lib.rs` re-exports comes from
/// (`pub use error::Error;`: `Error` → `error`).
fn lib_reexports(lib: &str) -> BTreeMap<String, String> {
    let mut names = BTreeMap::new();
    for f in read("src/lib.rs", lib).found {
        if let (Kind::Use(name), Some(module), true) = (&f.kind, f.segs.first(), f.scope.is_empty()) {
            names.insert(name.clone(), module.clone());
        }
    }
    names
}

/// `refs` with each crate-root name that lib.rs re-exports replaced by its module.
fn through_lib(refs: Vec<Reference>, reexports: &BTreeMap<String, String>) -> Vec<Reference> {
    refs.into_iter().map(|r| Reference { to: reexports.get(&r.to).cloned().unwrap_or(r.to.clone()), ..r }).collect()
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

/// The files of the library as the checker reads them, to follow a path to the file that
/// defines what it names.
struct Crate {
    /// The file of each file module (`[store, values]` → `src/store/values.rs`).
    files: BTreeMap<Vec<String>, String>,
    scans: BTreeMap<String, Scan>,
    /// The `use` leaves and globs of each module (file and inline), and what it defines.
    uses: BTreeMap<Vec<String>, Vec<Found>>,
    defs: BTreeMap<Vec<String>, BTreeSet<String>>,
}

/// An import of one file of a top-level module by another: `from` names, at `line`, `path`,
/// which `to` defines.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
struct Import {
    from: String,
    to: String,
    line: usize,
    path: String,
}

impl Crate {
    /// The crate of the files `sources` (`(src/..., text)`); `src/main.rs` is left out.
    fn new(sources: &[(String, String)]) -> Crate {
        let mut c =
            Crate { files: BTreeMap::new(), scans: BTreeMap::new(), uses: BTreeMap::new(), defs: BTreeMap::new() };
        for (path, text) in sources {
            let Some(module) = module_path(path) else { continue };
            let scan = read(path, text);
            for f in &scan.found {
                if f.kind != Kind::Code {
                    c.uses.entry(f.scope.clone()).or_default().push(f.clone());
                }
            }
            for (scope, names) in &scan.defs {
                c.defs.entry(scope.clone()).or_default().extend(names.iter().cloned());
            }
            c.files.insert(module, path.clone());
            c.scans.insert(path.clone(), scan);
        }
        c
    }

    /// The whole path of what `name` is in module `scope`: a child module, an item it
    /// defines, a name it imports (followed), a name one of its globs brings; None for names
    /// from outside the crate. `seen` stops loops of globs.
    fn lookup(&self, scope: &[String], name: &str, seen: &mut BTreeSet<(Vec<String>, String)>) -> Option<Vec<String>> {
        if !seen.insert((scope.to_vec(), name.to_string())) {
            return None;
        }
        let child = [scope, &[name.to_string()]].concat();
        if self.files.contains_key(&child) || self.defs.get(scope).is_some_and(|d| d.contains(name)) {
            return Some(child);
        }
        let uses = self.uses.get(scope).map_or(&[][..], |u| u.as_slice());
        for f in uses.iter().filter(|f| f.kind == Kind::Use(name.to_string())) {
            if let Some(whole) = self.absolute(f, seen) {
                return Some(whole);
            }
        }
        for f in uses.iter().filter(|f| f.kind == Kind::Glob) {
            if let Some(module) = self.absolute(f, seen)
                && module != scope
                && let Some(whole) = self.lookup(&module, name, seen)
            {
                return Some(whole);
            }
        }
        None
    }

    /// The whole path from the crate root of `f`, or None if it leads out of the crate.
    fn absolute(&self, f: &Found, seen: &mut BTreeSet<(Vec<String>, String)>) -> Option<Vec<String>> {
        if f.anchored {
            return Some(f.segs.clone());
        }
        let mut whole = self.lookup(&f.scope, &f.segs[0], seen)?;
        whole.extend(f.segs[1..].iter().cloned());
        Some(whole)
    }

    /// The file that defines what the whole path `whole` names, following re-exports and
    /// globs of the modules on the way.
    fn locate(&self, whole: &[String], seen: &mut BTreeSet<(Vec<String>, String)>) -> Option<String> {
        let module = (0..=whole.len()).rev().map(|n| &whole[..n]).find(|m| self.files.contains_key(*m))?;
        let file = self.files[module].clone();
        let Some(name) = whole.get(module.len()) else { return Some(file) };
        if self.defs.get(module).is_some_and(|d| d.contains(name)) {
            return Some(file);
        }
        let rest = &whole[module.len() + 1..];
        if !seen.insert((module.to_vec(), name.clone())) {
            return Some(file);
        }
        let uses = self.uses.get(module).map_or(&[][..], |u| u.as_slice());
        for f in uses.iter().filter(|f| f.kind == Kind::Use(name.clone())) {
            if let Some(mut target) = self.absolute(f, seen) {
                target.extend(rest.iter().cloned());
                return self.locate(&target, seen);
            }
        }
        for f in uses.iter().filter(|f| f.kind == Kind::Glob) {
            if let Some(glob) = self.absolute(f, seen)
                && glob != module
                && self.lookup(&glob, name, &mut BTreeSet::new()).is_some()
            {
                return self.locate(&[&glob[..], &whole[module.len()..]].concat(), seen);
            }
        }
        Some(file)
    }

    /// Every import of one file by another file of the same top-level module, the first
    /// place of each pair of files.
    fn imports(&self) -> Vec<Import> {
        let mut first: BTreeMap<(String, String), Import> = BTreeMap::new();
        for (file, scan) in &self.scans {
            let top = module_path(file).and_then(|m| m.first().cloned());
            let Some(top) = top else { continue };
            for f in &scan.found {
                let Some(whole) = self.absolute(f, &mut BTreeSet::new()) else { continue };
                let Some(to) = self.locate(&whole, &mut BTreeSet::new()) else { continue };
                if to == *file || module_path(&to).and_then(|m| m.first().cloned()).as_ref() != Some(&top) {
                    continue;
                }
                let import = Import { from: file.clone(), to: to.clone(), line: f.line, path: whole.join("::") };
                first.entry((file.clone(), to)).or_insert(import);
            }
        }
        first.into_values().collect()
    }

    /// The import loops inside the folders of the top-level modules. In the folder of a
    /// module P (`src/store/`), each child of P (a file, or a folder with all its files)
    /// is one member; an import of a file of one member by a file of another links them,
    /// and members linked round a loop (two or more that reach each other) are one import
    /// loop, given as the imports among them. P's own `mod.rs`, the folder's front, is no
    /// member: it declares and re-exports its children and they use what it defines.
    fn import_loops(&self) -> Vec<Vec<Import>> {
        let imports = self.imports();
        let folders: BTreeSet<&Vec<String>> =
            self.files.iter().filter(|(m, f)| !m.is_empty() && f.ends_with("/mod.rs")).map(|(m, _)| m).collect();
        let mut loops = Vec::new();
        for folder in folders {
            // The member of `folder` that a file is in, if it is under the folder and not its mod.rs.
            let member = |file: &str| {
                let m = module_path(file)?;
                (m.len() > folder.len() && m.starts_with(folder)).then(|| m[folder.len()].clone())
            };
            let mut next: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
            for i in &imports {
                if let (Some(a), Some(b)) = (member(&i.from), member(&i.to))
                    && a != b
                {
                    next.entry(a).or_default().insert(b);
                }
            }
            let reach = |start: &String| {
                let mut seen: BTreeSet<String> = BTreeSet::new();
                let mut todo = vec![start.clone()];
                while let Some(m) = todo.pop() {
                    for t in next.get(&m).into_iter().flatten() {
                        if seen.insert(t.clone()) {
                            todo.push(t.clone());
                        }
                    }
                }
                seen
            };
            let reaches: BTreeMap<&String, BTreeSet<String>> = next.keys().map(|m| (m, reach(m))).collect();
            let mut placed: BTreeSet<String> = BTreeSet::new();
            for (&m, r) in &reaches {
                if placed.contains(m) || !r.contains(m) {
                    continue;
                }
                let members: BTreeSet<String> =
                    r.iter().filter(|n| reaches.get(n).is_some_and(|back| back.contains(m))).cloned().collect();
                placed.extend(members.iter().cloned());
                let inside = |file: &str| member(file).is_some_and(|x| members.contains(&x));
                loops.push(
                    imports
                        .iter()
                        .filter(|i| inside(&i.from) && inside(&i.to) && member(&i.from) != member(&i.to))
                        .cloned()
                        .collect(),
                );
            }
        }
        loops
    }
}

/// One line per import of a loop: `file:line: path (file)`.
fn describe(import_loop: &[Import]) -> String {
    import_loop.iter().map(|i| format!("  {}:{}: {} ({})", i.from, i.line, i.path, i.to)).collect::<Vec<_>>().join("\n")
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

/// The path and text of every `.rs` file under `src/` (tests/api.rs reads them too).
pub(crate) fn sources() -> Vec<(String, String)> {
    let mut files = Vec::new();
    rust_files(root(), &root().join("src"), &mut files);
    files
        .into_iter()
        .map(|file| {
            let text = std::fs::read_to_string(root().join(&file)).unwrap_or_else(|e| panic!("read {file}: {e}"));
            (file, text)
        })
        .collect()
}

#[test]
fn no_module_names_a_layer_above_its_own() {
    let layers = the_picture();
    let sources = sources();
    let lib = &sources.iter().find(|(f, _)| f == "src/lib.rs").expect("src/lib.rs").1;
    let reexports = lib_reexports(lib);
    let mut refs = Vec::new();
    for (file, text) in &sources {
        refs.extend(through_lib(scan(file, text), &reexports));
    }
    let violations = check(&layers, &refs);
    assert!(
        violations.is_empty(),
        "modules name a layer above their own (layer order: ARCHITECTURE.md, ## Layers):\n{}\n{} violation(s)",
        violations.join("\n"),
        violations.len()
    );
}

#[test]
fn no_file_takes_a_way_around_the_layer_check() {
    let refused: Vec<String> = sources().iter().flat_map(|(file, text)| read(file, text).refused).collect();
    assert!(
        refused.is_empty(),
        "files of src/ take ways around the layer check (tests/layers.rs, fn read):\n{}\n{} place(s)",
        refused.join("\n"),
        refused.len()
    );
}

#[test]
fn no_files_of_one_module_import_each_other_round_a_loop() {
    let loops = Crate::new(&sources()).import_loops();
    assert!(
        loops.is_empty(),
        "files of one top-level module import each other round a loop; move what closes it to where it belongs:\n{}\n{} loop(s)",
        loops.iter().map(|l| describe(l)).collect::<Vec<_>>().join("\n\n"),
        loops.len()
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
    let names = |v: &[&str]| Some(v.iter().map(|s| s.to_string()).collect::<Vec<_>>());
    assert_eq!(module_path("src/store/mod.rs"), names(&["store"]));
    assert_eq!(module_path("src/store/keys/rank.rs"), names(&["store", "keys", "rank"]));
    assert_eq!(module_path("src/lib.rs"), names(&[]));
    assert_eq!(module_path("src/main.rs"), None);
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

/// The ways around the checker that `read` finds in `text` as the file `path`, one line each.
fn refused(path: &str, text: &str) -> Vec<String> {
    read(path, text).refused
}

#[test]
fn globs_and_aliases_of_the_crate_root_are_refused() {
    for text in [
        "use crate::*;\n",
        "use crate::{game, *};\n",
        "pub use crate as c;\n",
        "use crate::{self as c};\n",
        "extern crate self as x;\n",
        "use super::super as root;\n",
        "use super::super::{self as root};\n",
        "use self::super::super as root;\n",
        "mod tests {\n    use super::super::super::*;\n}\n",
        "fn f() { crate::$m::x(); }\n",
    ] {
        let r = refused("src/store/db.rs", text);
        assert_eq!(r.len(), 1, "{text}: {r:?}");
        assert!(r[0].starts_with("src/store/db.rs:"), "{r:?}");
    }
    assert_eq!(refused("src/store/mod.rs", "use super::*;\n").len(), 1);
    assert!(refused("src/store/mod.rs", "use super::game::*;\n").is_empty());
    // A glob or an alias of a module below the root is no way around.
    let fine = "use super::*;\nuse crate::game::*;\nuse super::super::game as g;\nuse super::{self as s};\npub(crate) fn f() {}\npub(in crate::store) fn g() {}\n";
    assert!(refused("src/store/db.rs", fine).is_empty(), "{:?}", refused("src/store/db.rs", fine));
}

#[test]
fn self_and_super_chains_that_climb_to_the_crate_root_are_references() {
    let text = "use self::super::super::cli::a;\n\
                use super::self::super::solve::b;\n\
                fn f() { self::super::super::cli::c(); }\n\
                use self::super::keys::d;\n\
                use self::super::{super::game, values};\n";
    // src/store/db.rs is at depth 2: two `super` reach the crate root, `self` adds none.
    assert_eq!(found(text), pairs(&[(1, "cli"), (2, "solve"), (3, "cli"), (5, "game")]));
}

#[test]
fn path_attributes_includes_and_macros_across_modules_are_refused() {
    for text in [
        "#[path = \"../cli/mod.rs\"]\nmod sneaky;\n",
        "#[cfg_attr(test, path = \"x.rs\")]\nmod x;\n",
        "include!(\"../cli/query.rs\");\n",
        "fn f() { include!(concat!(\"a\", \".rs\")); }\n",
        "const S: &str = include_str!(\"../cli/query.rs\");\n",
        "const S: &[u8] = include_bytes!(r#\"x.rs\"#);\n",
        "const S: &str = include_str!(concat!(\"a\", \".html\"));\n",
        "#[macro_export]\nmacro_rules! m { () => {} }\n",
        "#[macro_use]\nmod m;\n",
    ] {
        let r = refused("src/store/db.rs", text);
        assert_eq!(r.len(), 1, "{text}: {r:?}");
    }
    let e = refused("src/store/db.rs", "\n#[path = \"a.rs\"] mod a;\n");
    assert!(e[0].starts_with("src/store/db.rs:2: `#[path"), "{e:?}");
    // The same in src/main.rs, the binary.
    assert_eq!(refused("src/main.rs", "include!(\"lib.rs\");\n").len(), 1);
    let fine = "const I: &str = include_str!(\"assets/index.html\");\n\
                #[doc = include_str!(\"../README.md\")]\nstruct S;\n\
                fn f() { let path = 1; let _ = path; }\n#[derive(Debug)]\nstruct T;\n";
    assert!(refused("src/store/db.rs", fine).is_empty(), "{:?}", refused("src/store/db.rs", fine));
}

#[test]
fn lib_holds_only_module_declarations_and_re_exports_which_name_their_module() {
    let fine = "//! Docs.\n#![warn(missing_docs)]\npub mod analysis;\n#[cfg(feature = \"cli\")]\npub mod cli;\nmod store;\n\
                pub use error::Error;\npub use crate::game::{Geometry as G, moves::{self}};\n\
                #[cfg(doctest)]\n#[doc = include_str!(\"../README.md\")]\npub struct ReadmeDoctests;\n";
    assert!(refused("src/lib.rs", fine).is_empty(), "{:?}", refused("src/lib.rs", fine));
    for text in [
        "mod x {\n    pub fn f() {}\n}\n",
        "pub mod x { use crate::cli; }\n",
        "pub fn f() -> u32 { analysis::n() }\n",
        "pub const N: u32 = analysis::N;\n",
        "impl S {}\n",
        "pub use analysis::*;\n",
    ] {
        let r = refused("src/lib.rs", text);
        assert!(!r.is_empty() && r.iter().all(|e| e.starts_with("src/lib.rs:")), "{text}: {r:?}");
    }
    assert!(refused("src/lib.rs", "mod x {\n}\n")[0].contains("inline module in lib.rs"));
    // A crate-root name that lib.rs re-exports is its module's.
    let names = lib_reexports(fine);
    assert_eq!(names.get("Error").map(String::as_str), Some("error"));
    assert_eq!(names.get("G").map(String::as_str), Some("game"));
    assert_eq!(names.get("moves").map(String::as_str), Some("game"));
    let sneaky = lib_reexports("pub use solve::run as go;\n");
    let refs = through_lib(scan("src/store/db.rs", "use crate::go;\nuse crate::Error;\n"), &sneaky);
    assert_eq!(check(&layers(), &refs), ["src/store/db.rs:1: store (layer \"store\") names solve, a layer above it"]);
}

/// The import loops of a crate of the given files, each as its imports `from:line->to`.
fn loops_of(files: &[(&str, &str)]) -> Vec<Vec<String>> {
    let sources: Vec<(String, String)> = files.iter().map(|&(p, t)| (p.to_string(), t.to_string())).collect();
    Crate::new(&sources)
        .import_loops()
        .iter()
        .map(|l| {
            l.iter()
                .map(|i| {
                    let short = |f: &str| f.trim_start_matches("src/").to_string();
                    format!("{}:{}->{}", short(&i.from), i.line, short(&i.to))
                })
                .collect()
        })
        .collect()
}

/// A store folder of `values`, `cache` and `keys/` (`rank`), `values` importing `cache`
/// as `values_text` says and `cache` as `cache_text` says.
fn store(values_text: &str, cache_text: &str) -> Vec<Vec<String>> {
    loops_of(&[
        ("src/lib.rs", "pub mod store;\npub mod game;\n"),
        ("src/game/mod.rs", "pub struct Geometry;\n"),
        (
            "src/store/mod.rs",
            "pub mod cache;\npub mod keys;\npub mod values;\npub use values::Values;\npub use cache::*;\npub struct Shared;\n",
        ),
        ("src/store/values.rs", values_text),
        ("src/store/cache.rs", cache_text),
        ("src/store/keys/mod.rs", "mod rank;\npub use rank::Rank;\npub trait Backend {}\n"),
        ("src/store/keys/rank.rs", "use super::Backend;\npub struct Rank;\nimpl Backend for Rank {}\n"),
    ])
}

#[test]
fn files_of_one_folder_that_import_each_other_round_a_loop_are_found_however_they_name_each_other() {
    let values = "use crate::store::cache::Cache;\npub struct Values;\npub fn encode() {}\n";
    let loop_of = |cache_line: usize| {
        vec![vec![
            format!("store/cache.rs:{cache_line}->store/values.rs"),
            "store/values.rs:1->store/cache.rs".to_string(),
        ]]
    };
    // Each way `cache` can name `values`, one a text.
    for (cache, line) in [
        ("use crate::store::values::encode;\npub struct Cache;\n", 1),
        ("use super::values;\npub struct Cache;\n", 1),
        ("pub struct Cache;\nfn f() { super::values::encode() }\n", 2),
        ("pub struct Cache;\nfn f() { crate::store::values::encode() }\n", 2),
        ("pub struct Cache;\nfn f() { self::super::values::encode() }\n", 2),
        // Through the re-export of mod.rs.
        ("use super::Values;\npub struct Cache;\n", 1),
        ("pub struct Cache;\nfn f() -> crate::store::Values { todo!() }\n", 2),
        // Through a glob of mod.rs, which brings its child modules.
        ("use super::*;\npub struct Cache;\nfn f() { values::encode() }\n", 3),
        ("pub struct Cache;\n#[cfg(test)]\nmod tests {\n    use crate::store::values::encode;\n}\n", 4),
        ("use crate::store::{self, values::{self as v}};\npub struct Cache;\n", 1),
    ] {
        assert_eq!(store(values, cache), loop_of(line), "{cache}");
    }
    // A folder inside the folder is one member: `keys` (its mod.rs and rank.rs) and `values`.
    let values_keys = "use super::keys::Rank;\npub struct Values;\npub fn encode() {}\n";
    let l = loops_of(&[
        ("src/lib.rs", "pub mod store;\n"),
        ("src/store/mod.rs", "pub mod keys;\npub mod values;\n"),
        ("src/store/values.rs", values_keys),
        ("src/store/keys/mod.rs", "mod rank;\npub use rank::Rank;\n"),
        ("src/store/keys/rank.rs", "use crate::store::values::encode;\npub struct Rank;\n"),
    ]);
    assert_eq!(l, [["store/keys/rank.rs:1->store/values.rs", "store/values.rs:1->store/keys/rank.rs"]]);
    // Three files round one loop are one loop.
    let l = loops_of(&[
        ("src/lib.rs", "pub mod solve;\n"),
        ("src/solve/mod.rs", "mod a;\nmod b;\nmod c;\n"),
        ("src/solve/a.rs", "use super::b::B;\npub struct A;\n"),
        ("src/solve/b.rs", "use super::c::C;\npub struct B;\n"),
        ("src/solve/c.rs", "use super::a::A;\npub struct C;\n"),
    ]);
    assert_eq!(l, [["solve/a.rs:1->solve/b.rs", "solve/b.rs:1->solve/c.rs", "solve/c.rs:1->solve/a.rs"]]);
}

#[test]
fn imports_one_way_and_between_a_folder_and_its_mod_rs_are_no_loop() {
    let values = "use super::cache::Cache;\nuse super::Shared;\nuse crate::game::Geometry;\npub struct Values;\n";
    // `cache` names its own items, mod.rs (what it defines), `keys` and another module.
    let cache = "use super::Shared;\nuse super::keys::Backend;\nuse crate::game::Geometry;\npub struct Cache;\n\
                 fn f() { Cache::new(); self::Cache::new(); }\n";
    assert!(store(values, cache).is_empty(), "{:?}", store(values, cache));
}
