//! Crash tests: `pack`, `index` and `solve` of a small-board database stopped at every
//! write step, by a crash (the process ends on the spot), an I/O error or a full disk
//! (`OSTLEDB_FAULT`, see `ostledb::file::fault_point`). After each, the database
//! must answer exactly as before the write or exactly as after it, never anything else,
//! and running the write again must complete and leave nothing behind.
//!
//! Each write runs in a child process: this test binary run again with only
//! [`crash_child`], which does the write named by `OSTLEDB_CRASH_OP` and does nothing
//! when that is unset (as in a normal test run).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use ostledb::file::fault_steps_reached;
use ostledb::game::Geometry;
use ostledb::solve::retrograde::{SolveOptions, solve_into};
use ostledb::store::Store;
use ostledb::store::directory::unlisted;
use ostledb::store::keys::Backend;
use ostledb::store::meta::{self, Meta};
use ostledb::store::values::WriteOptions;
use ostledb::working::pack::{PackOptions, add_backend, pack};

use crate::store::{build, check_against, oracle};

/// The board of every crash test: 3x3, 3 pieces a side (phases of 4 to 6 pieces).
fn geometry() -> Geometry {
    Geometry::new(3, 3).unwrap()
}

/// The settings `pack` is run again with (other than the ones `build` used).
fn repack_options() -> PackOptions {
    PackOptions {
        values: WriteOptions { format: 3, block: 100, streams: 0, level: 1, elide_losses: false, filled_wins: false },
        backends: vec![Backend::Rank, Backend::Sorted],
        keep_work: false,
        records: None,
    }
}

/// Do the write `op` on the database at `dir`.
fn write(op: &str, dir: &Path) -> Result<(), ostledb::error::Error> {
    let g = geometry();
    match op {
        "pack" => pack(dir, &g, 6, &repack_options(), |_| {}).map(|_| ()),
        "index" => add_backend(dir, Backend::Levelwise.require().unwrap_or(Backend::Sorted)).map(|_| ()),
        "solve" => {
            let opts = SolveOptions { dir: Some(dir.to_path_buf()), ..SolveOptions::default() };
            solve_into(&g, 6, &opts, |_| Ok(()))?;
            pack(dir, &g, 6, &PackOptions::default(), |_| {}).map(|_| ())
        }
        _ => panic!("unknown write {op}"),
    }
}

/// The child: do the write `OSTLEDB_CRASH_OP` names on `OSTLEDB_CRASH_DIR`, print how
/// many write steps it reached, exit 0 on success and 3 on an error.
#[test]
fn crash_child() {
    let (Ok(op), Ok(dir)) = (std::env::var("OSTLEDB_CRASH_OP"), std::env::var("OSTLEDB_CRASH_DIR")) else { return };
    match write(&op, Path::new(&dir)) {
        Ok(()) => {
            println!("crash-steps {}", fault_steps_reached());
            std::process::exit(0)
        }
        Err(e) => {
            eprintln!("crash-error {e}");
            std::process::exit(3)
        }
    }
}

/// Run the child doing `op` on `dir` with `OSTLEDB_FAULT=fault`.
fn child(op: &str, dir: &Path, fault: &str) -> Output {
    Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "crash::crash_child", "--nocapture", "--test-threads=1", "--quiet"])
        .env("OSTLEDB_CRASH_OP", op)
        .env("OSTLEDB_CRASH_DIR", dir)
        .env("OSTLEDB_FAULT", fault)
        .output()
        .unwrap()
}

/// The metadata without what differs between two writes of the same content.
fn content(m: &Meta) -> Meta {
    Meta { generation: 0, format: 0, ..m.clone() }
}

/// Copy the database directory `from` to `to` (files and generation directories).
fn copy_dir(from: &Path, to: &Path) {
    let _ = std::fs::remove_dir_all(to);
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        if e.path().is_dir() {
            copy_dir(&e.path(), &to.join(e.file_name()));
        } else {
            std::fs::copy(e.path(), to.join(e.file_name())).unwrap();
        }
    }
}

/// Every `*.tmp` file under `dir`.
fn temporaries(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(temporaries(&p));
        } else if p.to_string_lossy().ends_with(".tmp") {
            out.push(p);
        }
    }
    out
}

/// The board solved in memory with at most `max` (5 or 6) pieces, once per process.
fn solution(max: u32) -> &'static ostledb::solve::retrograde::Solution {
    static SOLVED: [std::sync::OnceLock<ostledb::solve::retrograde::Solution>; 2] =
        [std::sync::OnceLock::new(), std::sync::OnceLock::new()];
    SOLVED[(max - 5) as usize].get_or_init(|| oracle(&geometry(), max))
}

/// What the database at `dir` is: `"old"` or `"new"` (its metadata is one of them and
/// every position answers as the solver says), never anything else.
fn which(dir: &Path, old: &Meta, new: &Meta, at: &str) -> &'static str {
    let db = Store::open(dir).unwrap_or_else(|e| panic!("{at}: the database does not open: {e}"));
    let m = content(db.meta());
    let state = if m == content(old) {
        "old"
    } else if m == content(new) {
        "new"
    } else {
        panic!("{at}: the metadata is neither the old nor the new one: {m:?}")
    };
    check_against(&db, solution(m.max_pieces as u32), 97);
    state
}

/// Stop `op` at each of its write steps in each way on a copy of `base`, and check what
/// is left: old or new, and a rerun completes. Returns (steps, old, new) counts.
fn crash_every_step(op: &str, base: &Path) -> (u64, usize, usize) {
    let old = meta::read(base).unwrap().unwrap();
    // A clean run: what the new database is, and how many write steps it takes.
    let clean = base.with_extension("clean");
    copy_dir(base, &clean);
    let out = child(op, &clean, "1000000000");
    assert!(out.status.success(), "{op}: {}", String::from_utf8_lossy(&out.stderr));
    let stdout = String::from_utf8_lossy(&out.stdout);
    let steps: u64 = stdout
        .lines()
        .find_map(|l| l.strip_prefix("crash-steps "))
        .and_then(|n| n.trim().parse().ok())
        .unwrap_or_else(|| panic!("{op}: no step count in {stdout}"));
    assert!(steps >= 3, "{op}: only {steps} write steps");
    let new = meta::read(&clean).unwrap().unwrap();
    assert_ne!(content(&new), content(&old), "{op} changes the database");
    let _ = std::fs::remove_dir_all(&clean);

    let (mut olds, mut news) = (0, 0);
    let work = base.with_extension("work");
    for step in 1..=steps {
        for kind in ["abort", "error", "enospc"] {
            let at = format!("{op}, step {step} of {steps}, {kind}");
            copy_dir(base, &work);
            let out = child(op, &work, &format!("{step}:{kind}"));
            let stderr = String::from_utf8_lossy(&out.stderr);
            let state = which(&work, &old, &new, &at);
            match state {
                "old" => olds += 1,
                _ => news += 1,
            }
            match (kind, out.status.code()) {
                ("abort", code) => assert!(code.is_none(), "{at}: {:?} {stderr}", out.status),
                // An error in removing the superseded generation after the switch does
                // not fail the write: the next writer removes it.
                (_, Some(0)) => assert_eq!(state, "new", "{at}"),
                (_, code) => {
                    assert_eq!(code, Some(3), "{at}: {stderr}");
                    let want = if kind == "enospc" { "No space left on device" } else { "injected fault" };
                    assert!(stderr.contains(want), "{at}: {stderr}");
                }
            }
            // A failed write leaves no new generation behind (the writer removes it).
            if out.status.code() == Some(3) {
                let m = meta::read(&work).unwrap().unwrap();
                assert!(
                    unlisted(&work, &m).iter().all(|p| p.to_string_lossy().ends_with(".tmp")),
                    "{at}: {:?}",
                    unlisted(&work, &m)
                );
            }
            // The write run again completes and leaves nothing behind.
            write(op, &work).unwrap_or_else(|e| panic!("{at}: the rerun fails: {e}"));
            assert_eq!(which(&work, &old, &new, &at), "new", "{at}: after the rerun");
            let m = meta::read(&work).unwrap().unwrap();
            assert!(unlisted(&work, &m).is_empty(), "{at}: left {:?}", unlisted(&work, &m));
            assert!(temporaries(&work).is_empty(), "{at}: left {:?}", temporaries(&work));
        }
    }
    let _ = std::fs::remove_dir_all(&work);
    (steps, olds, news)
}

fn tmpdir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("ostledb-crash-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    d
}

#[test]
fn pack_stopped_at_any_write_step_leaves_the_old_or_the_new_database() {
    let base = tmpdir("pack");
    build(&geometry(), &base, 6, vec![Backend::Rank]);
    let (steps, olds, news) = crash_every_step("pack", &base);
    eprintln!("pack: {steps} write steps x 3 ways: {olds} old, {news} new");
    assert!(olds > 0 && news > 0, "both outcomes are reached: {olds} old, {news} new");
    let _ = std::fs::remove_dir_all(&base);
}

#[test]
fn index_stopped_at_any_write_step_leaves_the_old_or_the_new_database() {
    let base = tmpdir("index");
    build(&geometry(), &base, 6, vec![Backend::Rank, Backend::Sorted]);
    let (steps, olds, news) = crash_every_step("index", &base);
    eprintln!("index: {steps} write steps x 3 ways: {olds} old, {news} new");
    assert!(olds > 0 && news > 0, "both outcomes are reached: {olds} old, {news} new");
    let _ = std::fs::remove_dir_all(&base);
}

#[test]
fn solve_stopped_at_any_write_step_leaves_the_old_or_the_new_database() {
    // The old database holds the phases of up to 5 pieces; the solve adds (3,3).
    let base = tmpdir("solve");
    build(&geometry(), &base, 5, vec![Backend::Rank]);
    let (steps, olds, news) = crash_every_step("solve", &base);
    eprintln!("solve: {steps} write steps x 3 ways: {olds} old, {news} new");
    assert!(olds > 0 && news > 0, "both outcomes are reached: {olds} old, {news} new");
    let _ = std::fs::remove_dir_all(&base);
}

/// A second writer is refused while another process holds the lock, naming it;
/// readers are not; once the holder is gone (killed), the lock is free again.
#[test]
fn a_second_writer_is_refused_and_readers_go_on() {
    let dir = tmpdir("lock");
    build(&geometry(), &dir, 6, vec![Backend::Rank]);
    // flock(1) takes the same advisory lock another ostledb process would.
    let lock = dir.join(ostledb::store::directory::LOCK_FILE);
    let mut holder = Command::new("flock").arg("-x").arg("-o").arg(&lock).args(["sleep", "30"]).spawn().unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    let e = loop {
        match pack(&dir, &geometry(), 6, &repack_options(), |_| {}) {
            Err(e) => break e,
            // flock(1) has not taken it yet: the pack went through; try again.
            Ok(_) => assert!(std::time::Instant::now() < deadline, "flock(1) never took the lock"),
        }
    };
    assert!(matches!(e, ostledb::error::Error::Locked { .. }), "{e:?}");
    assert!(e.to_string().contains("being written"), "{e}");
    check_against(&Store::open(&dir).unwrap(), solution(6), 13);
    holder.kill().unwrap();
    holder.wait().unwrap();
    pack(&dir, &geometry(), 6, &repack_options(), |_| {}).unwrap();
    let _ = std::fs::remove_dir_all(&dir);
}

/// A file size limit (`ulimit -f`) stops `index` with an error that says so (exit code
/// 1 or 2, not death by SIGXFSZ), removes what it wrote, and leaves the database as it
/// was.
#[test]
fn a_file_size_limit_is_a_write_error_and_the_database_stays() {
    let dir = tmpdir("ulimit-f");
    build(&geometry(), &dir, 6, vec![Backend::Rank]);
    let before = std::fs::read(dir.join(meta::FILE)).unwrap();
    // 4 KB: below a sorted key file of the 3x3 board's largest phase.
    let out = Command::new("sh")
        .arg("-c")
        .arg("ulimit -f 4 && exec \"$0\" \"$@\"")
        .arg(env!("CARGO_BIN_EXE_ostledb"))
        .args(["index", "--backend", "sorted", "--quiet", "--db"])
        .arg(&dir)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(matches!(out.status.code(), Some(1 | 2)), "{:?}: {err}", out.status);
    assert!(err.contains("File too large"), "{err}");
    assert_eq!(std::fs::read(dir.join(meta::FILE)).unwrap(), before);
    assert_eq!(temporaries(&dir), Vec::<PathBuf>::new());
    check_against(&Store::open(&dir).unwrap(), solution(6), 13);
    let _ = std::fs::remove_dir_all(&dir);
}
