//! Every relative link of the documents (`*.md` of the repository's root, `docs/`,
//! `schema/`, `python/` and `fuzz/`) points to a file or directory that exists. Links
//! inside code (fenced blocks and inline code spans) are not links; links with a scheme
//! (`https:`, `mailto:`) and links to an anchor of the same page are not checked. The
//! checker is tested too, on a planted broken link.

use std::path::Path;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// The targets of the markdown links of `text` (`[text](target)` and `![alt](target)`),
/// with their line numbers, outside code.
fn links(text: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    let mut fenced = false;
    for (n, line) in text.lines().enumerate() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if fenced {
            continue;
        }
        // Inline code spans are dropped: every other backtick-delimited piece.
        let prose: String = line.split('`').step_by(2).collect::<Vec<_>>().join(" ");
        let mut rest = prose.as_str();
        while let Some(i) = rest.find("](") {
            let after = &rest[i + 2..];
            let Some(end) = after.find(')') else { break };
            out.push((n + 1, after[..end].trim().to_string()));
            rest = &after[end + 1..];
        }
    }
    out
}

/// The broken relative links of the document `doc` (relative to the root), as messages.
fn broken(doc: &str, text: &str) -> Vec<String> {
    let dir = root().join(doc).parent().expect("a file").to_path_buf();
    links(text)
        .into_iter()
        .filter(|(_, target)| !target.is_empty() && !target.starts_with('#') && !target.contains("://"))
        .filter(|(_, target)| !target.starts_with("mailto:"))
        .filter_map(|(line, target)| {
            let path = target.split(['#', '?']).next().unwrap_or("");
            let path = path.split_whitespace().next().unwrap_or(""); // `(file "title")`
            (!dir.join(path).exists()).then(|| format!("{doc}:{line}: `{target}` does not exist"))
        })
        .collect()
}

fn documents() -> Vec<String> {
    let mut out = Vec::new();
    for dir in ["", "docs", "schema", "python", "fuzz"] {
        let Ok(entries) = std::fs::read_dir(root().join(dir)) else { continue };
        for e in entries {
            let name = e.expect("read dir").file_name().into_string().expect("UTF-8 name");
            if name.ends_with(".md") {
                out.push(if dir.is_empty() { name } else { format!("{dir}/{name}") });
            }
        }
    }
    out.sort();
    out
}

#[test]
fn every_relative_link_of_the_documents_resolves() {
    let docs = documents();
    for must in ["README.md", "ARCHITECTURE.md", "docs/measurements.md", "schema/FORMAT.md"] {
        assert!(docs.iter().any(|d| d == must), "{must} not found among {docs:?}");
    }
    let mut problems = Vec::new();
    let mut checked = 0;
    for doc in &docs {
        let text = std::fs::read_to_string(root().join(doc)).expect("read a document");
        checked += links(&text).len();
        problems.extend(broken(doc, &text));
    }
    assert!(checked > 0, "no link found in {docs:?}: has the link syntax changed?");
    assert!(problems.is_empty(), "broken links:\n{}", problems.join("\n"));
}

#[test]
fn the_link_check_finds_a_broken_link_and_skips_code_and_urls() {
    let text = "See [the format](schema/FORMAT.md#version-history) and ![a plot](docs/win-distances.png).\n\
        [gone](docs/no-such-file.md), [web](https://example.com/x), [top](#top), `[code](nowhere.md)`\n\
        ```\n[fenced](nowhere.md)\n```\n";
    assert_eq!(links(text).len(), 5);
    assert_eq!(broken("README.md", text), vec!["README.md:2: `docs/no-such-file.md` does not exist".to_string()]);
}

/// The lines of `text` that name a directory of someone's machine (a home or work
/// directory), as `name:line: text`.
fn machine_paths(name: &str, text: &str) -> Vec<String> {
    // Built from pieces, so that this file does not name them itself.
    let dirs = ["work", "home", "root", "Users"].map(|d| format!("/{d}/"));
    text.lines()
        .enumerate()
        .filter(|(_, l)| dirs.iter().any(|d| l.contains(d.as_str())))
        .map(|(n, l)| format!("{name}:{}: {}", n + 1, l.trim()))
        .collect()
}

/// The documents and the scripts of `tools/` name no path of the machine they were
/// written on: a reader's machine has none of them (examples say `DB`, `DIR`).
#[test]
fn no_document_or_script_names_a_path_of_a_developers_machine() {
    let mut files = documents();
    for e in std::fs::read_dir(root().join("tools")).expect("tools/") {
        let name = e.expect("read dir").file_name().into_string().expect("UTF-8 name");
        files.push(format!("tools/{name}"));
    }
    let mut found = Vec::new();
    for f in &files {
        let Ok(text) = std::fs::read_to_string(root().join(f)) else { continue };
        found.extend(machine_paths(f, &text));
    }
    assert!(files.len() > 10, "{files:?}");
    assert!(found.is_empty(), "paths of a machine:\n{}", found.join("\n"));
    let planted = format!("served from `{}db44`\nand `DB` here\n", ["/", "work", "/"].concat());
    assert_eq!(machine_paths("x.md", &planted), vec!["x.md:1: served from `/work/db44`".to_string()]);
}
