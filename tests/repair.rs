//! A damaged, unreadable or lost metadata file: every writer refuses and touches
//! nothing, the error advises `ostledb repair`, and that repair gives back a database
//! that answers exactly as before (its published digest, `verify`, single queries).
//!
//! Each kind of damage a user or a disk can do to `ostledb.meta`: a flipped byte (body
//! and version field), truncated (to 10 bytes and to nothing), grown to 5 GB (sparse), a
//! link to /dev/zero, a FIFO in its place, unreadable to the user (a non-root user
//! through `setpriv`, when that can be had), a valid metadata file of a newer format,
//! and deleted. Before the fix a write after any of these removed `gen-1`, the only
//! value files, and `bfs --store` even exited 0.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use ostledb::file::checksum;
use ostledb::store::meta;

use crate::cli::small_database;

fn run(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_ostledb"))
        .args(args)
        .stdin(Stdio::null())
        .output()
        .unwrap_or_else(|e| panic!("cannot run ostledb {args:?}: {e}"))
}

/// Every entry under `dir` (not following links) with its kind, size and, for a
/// regular file, the XXH3 of its bytes (the metadata file only by size: a 5 GB file is
/// not read).
fn snapshot(dir: &Path) -> BTreeMap<PathBuf, (String, u64, u64)> {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let p = e.path();
            let m = std::fs::symlink_metadata(&p).unwrap();
            let rel = p.strip_prefix(dir).unwrap().to_path_buf();
            let kind = format!("{:?}", m.file_type());
            if m.is_dir() {
                stack.push(p.clone());
                out.insert(rel, (kind, 0, 0));
            } else if m.is_file() && !rel.ends_with(meta::FILE) && !rel.ends_with("ostledb.lock") {
                out.insert(rel, (kind, m.len(), checksum(&std::fs::read(&p).unwrap())));
            } else if !rel.ends_with("ostledb.lock") {
                out.insert(rel, (kind, m.len(), 0));
            }
        }
    }
    out
}

/// The metadata file's bytes with the format version set to `v` in the header and the
/// body, both checksums made to hold: a valid file of another format.
fn with_version(good: &[u8], v: u32) -> Vec<u8> {
    let mut b = good.to_vec();
    b[8..12].copy_from_slice(&v.to_le_bytes());
    b[32..36].copy_from_slice(&v.to_le_bytes());
    let body = checksum(&b[32..]);
    b[16..24].copy_from_slice(&body.to_le_bytes());
    let head = checksum(&b[..24]);
    b[24..32].copy_from_slice(&head.to_le_bytes());
    b
}

/// What the database answers: its published digest, and `verify`'s exit code.
fn answers(db: &str) -> (String, Option<i32>) {
    let out = run(&["export", "--digest", "--quiet", "--db", db]);
    let digest = String::from_utf8_lossy(&out.stdout).lines().next().unwrap_or_default().to_string();
    (digest, run(&["verify", "--quiet", "--db", db]).status.code())
}

fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

#[test]
fn a_damaged_metadata_file_stops_every_writer_and_repair_gives_the_database_back() {
    let base = small_database("repair");
    let db_s = base.to_str().unwrap().to_string();
    let published = base.with_extension("published");
    let _ = std::fs::remove_dir_all(&published);
    let out = run(&["export", "--format", "published", "--quiet", "--db", &db_s, "--out", published.to_str().unwrap()]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let before = answers(&db_s);
    assert_eq!(before.1, Some(0));
    assert!(before.0.starts_with("digest "), "{}", before.0);
    let good = std::fs::read(base.join(meta::FILE)).unwrap();
    let work = base.with_extension("work");

    // (name, how to damage the metadata at its path, repairable)
    type Damage = Box<dyn Fn(&Path)>;
    let write = |bytes: Vec<u8>| -> Damage { Box::new(move |p: &Path| std::fs::write(p, &bytes).unwrap()) };
    let mut body_flip = good.clone();
    body_flip[40] ^= 0x01;
    let mut version_flip = good.clone();
    version_flip[8] ^= 0x01;
    let mut cases: Vec<(&str, Damage, bool)> = vec![
        ("a flipped byte in the body", write(body_flip), true),
        ("a flipped byte in the version field", write(version_flip), true),
        ("truncated to 10 bytes", write(good[..10].to_vec()), true),
        ("truncated to nothing", write(Vec::new()), true),
        (
            "grown to 5 GB",
            Box::new(|p: &Path| std::fs::OpenOptions::new().write(true).open(p).unwrap().set_len(5 << 30).unwrap()),
            true,
        ),
        (
            "a link to /dev/zero",
            Box::new(|p: &Path| {
                std::fs::remove_file(p).unwrap();
                std::os::unix::fs::symlink("/dev/zero", p).unwrap();
            }),
            true,
        ),
        (
            "a FIFO",
            Box::new(|p: &Path| {
                std::fs::remove_file(p).unwrap();
                let c = std::ffi::CString::new(p.to_str().unwrap()).unwrap();
                // SAFETY: a valid NUL-terminated path.
                assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0);
            }),
            true,
        ),
        ("deleted", Box::new(|p: &Path| std::fs::remove_file(p).unwrap()), true),
        ("a valid metadata file of a newer format", write(with_version(&good, meta::VERSION + 1)), false),
    ];
    // Unreadable to the user: as root every file reads, so the commands run as nobody.
    let as_nobody = is_root() && Path::new("/usr/bin/setpriv").exists();
    if !is_root() {
        cases.push((
            "unreadable",
            Box::new(|p: &Path| {
                use std::os::unix::fs::PermissionsExt;
                std::fs::set_permissions(p, std::fs::Permissions::from_mode(0o000)).unwrap();
            }),
            true,
        ));
    }

    let writers: Vec<Vec<String>> = vec![
        vec!["pack".into()],
        vec!["index".into(), "--backend".into(), "sorted".into()],
        vec!["solve".into()],
        vec!["bfs".into(), "--store".into(), "--max-depth".into(), "2".into()],
        vec![
            "import".into(),
            "--side".into(),
            "4".into(),
            "--start-pieces".into(),
            "3".into(),
            "--from".into(),
            published.to_str().unwrap().into(),
        ],
    ];
    for (name, damage, repairable) in &cases {
        let _ = std::fs::remove_dir_all(&work);
        copy_tree(&base, &work);
        let w = work.to_str().unwrap();
        damage(&work.join(meta::FILE));
        // A reader says what is wrong and names the repair.
        let q = run(&["query", "--db", w, "0000-0110-0300-0220"]);
        let err = String::from_utf8_lossy(&q.stderr);
        assert_ne!(q.status.code(), Some(0), "{name}: query answers: {err}");
        if *repairable {
            assert!(err.contains(&format!("ostledb repair --db {w}")), "{name}: {err}");
        }
        let snap = snapshot(&work);
        for args in &writers {
            let mut a: Vec<&str> = args.iter().map(|s| s.as_str()).collect();
            a.extend(["--db", w, "--quiet"]);
            let out = run(&a);
            let err = String::from_utf8_lossy(&out.stderr);
            assert_eq!(out.status.code(), Some(2), "{name}: {a:?}: {err}");
            assert!(err.contains("nothing was written or removed"), "{name}: {a:?}: {err}");
            if *repairable {
                assert!(err.contains(&format!("ostledb repair --db {w}")), "{name}: {a:?}: {err}");
            }
            assert_eq!(snapshot(&work), snap, "{name}: {a:?} changed the directory");
        }
        let out = run(&["repair", "--db", w]);
        let text = String::from_utf8_lossy(&out.stdout);
        let err = String::from_utf8_lossy(&out.stderr);
        if !repairable {
            assert_eq!(out.status.code(), Some(2), "{name}: repair: {err}");
            assert!(err.contains("newer ostledb"), "{name}: {err}");
            assert_eq!(snapshot(&work), snap, "{name}: repair changed the directory");
            continue;
        }
        assert!(out.status.success(), "{name}: repair: {err}");
        assert!(text.contains("rebuilt ostledb.meta from the value files in"), "{name}: {text}");
        assert_eq!(answers(w), before, "{name}: the repaired database answers otherwise");
        // The repair changed only the metadata file.
        let after = snapshot(&work);
        let changed: Vec<_> = after.iter().filter(|(k, v)| snap.get(*k) != Some(*v)).map(|(k, _)| k).collect();
        assert!(
            changed.iter().all(|p| p.ends_with(meta::FILE) || p.ends_with("ostledb.readers")),
            "{name}: {changed:?}"
        );
        // A writer works again; repair of an intact database changes nothing.
        let out = run(&["index", "--backend", "sorted", "--db", w, "--quiet"]);
        assert!(out.status.success(), "{name}: index after repair: {}", String::from_utf8_lossy(&out.stderr));
        let out = run(&["repair", "--db", w]);
        assert!(String::from_utf8_lossy(&out.stdout).contains("nothing to repair"), "{name}");
        assert_eq!(answers(w), before, "{name}: after a write");
    }
    if as_nobody {
        unreadable_as_nobody(&base, &work, &before);
    }
    let _ = std::fs::remove_dir_all(&work);
    let _ = std::fs::remove_dir_all(&published);
    let _ = std::fs::remove_dir_all(&base);
}

/// Run as root: the metadata made unreadable to `nobody`, who owns everything else;
/// nobody's writes are refused, nobody's repair rebuilds it.
fn unreadable_as_nobody(base: &Path, work: &Path, before: &(String, Option<i32>)) {
    use std::os::unix::fs::PermissionsExt;
    let _ = std::fs::remove_dir_all(work);
    copy_tree(base, work);
    let w = work.to_str().unwrap();
    let chown = Command::new("chown").args(["-R", "nobody", w]).status().unwrap();
    assert!(chown.success());
    // The path to it must be searchable by nobody.
    let mut up = work.parent();
    while let Some(d) = up {
        let mode = std::fs::metadata(d).unwrap().permissions().mode();
        assert!(mode & 0o001 != 0, "{} is not searchable by others", d.display());
        up = d.parent();
    }
    std::fs::set_permissions(work.join(meta::FILE), std::fs::Permissions::from_mode(0o000)).unwrap();
    let nobody = |args: &[&str]| {
        Command::new("setpriv")
            .args(["--reuid=nobody", "--regid=nogroup", "--clear-groups", env!("CARGO_BIN_EXE_ostledb")])
            .args(args)
            .stdin(Stdio::null())
            .output()
            .unwrap()
    };
    let snap = snapshot(work);
    let out = nobody(&["pack", "--db", w, "--quiet"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "unreadable: pack: {err}");
    assert!(err.contains("nothing was written or removed") && err.contains("ostledb repair --db"), "{err}");
    assert_eq!(snapshot(work), snap, "unreadable: pack changed the directory");
    let out = nobody(&["repair", "--db", w]);
    assert!(out.status.success(), "unreadable: repair: {}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(&answers(w), before, "unreadable: the repaired database answers otherwise");
}

fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap().flatten() {
        let (p, q) = (e.path(), to.join(e.file_name()));
        if p.is_dir() {
            copy_tree(&p, &q);
        } else {
            std::fs::copy(&p, &q).unwrap();
        }
    }
}
