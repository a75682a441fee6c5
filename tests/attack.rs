//! `tools/attack.py --quick` on a small database: every quick attack (concurrent
//! writers, kills, a full disk, damaged metadata before each writer and its repair,
//! hostile `query -` input, special files, memory caps, hostile imports and HTTP
//! clients) must hold, judged by the tool, which exits 1 on a defect. The full table
//! runs on a (4,4) database by hand (README, "Guarantees").

use std::process::Command;

use crate::cli::small_database;

#[test]
#[cfg_attr(debug_assertions, ignore = "runs the binary about 70 times; cargo test --release runs it")]
fn every_quick_attack_holds() {
    let db = small_database("attack");
    let tool = concat!(env!("CARGO_MANIFEST_DIR"), "/tools/attack.py");
    let out = Command::new("python3")
        .args([
            tool,
            env!("CARGO_BIN_EXE_ostledb"),
            db.to_str().unwrap(),
            "--quick",
            "--side",
            "4",
            "--start-pieces",
            "3",
            "--phase",
            "3,3",
        ])
        .output()
        .expect("python3 runs tools/attack.py");
    let table = String::from_utf8_lossy(&out.stdout);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{table}\n{err}");
    assert!(table.contains(" held, 0 defects"), "{table}");
    let _ = std::fs::remove_dir_all(db);
}
