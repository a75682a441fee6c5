//! `ostledb verify`: check every checksum of a database, and with `--deep` re-derive
//! every stored value from its children.

use std::time::Instant;

use clap::Args;

use crate::analysis::verify::{GroupValues, VerifyReport, verify_phase};
use crate::cli::progress::CliReporter;
use crate::cli::{CommonArgs, emit, emit_json, thousands};
use crate::error::Error;
use crate::game::node::Convention;
use crate::progress::Reporter;
use crate::store::bfs::BfsFile;
use crate::store::keys::{self, Backend};
use crate::store::{Database, meta};

/// Arguments of `ostledb verify`.
#[derive(Debug, Args)]
#[command(
    after_help = "Without --deep: the metadata, the header and block index of every value file, every\nvalue block's checksum, every key index file's checksums and those of a stored BFS are\nrecomputed; the first\nbad block is named with its file and byte range.\n\nWith --deep, then: for every position, each move's child node is looked up and the\nstored value must be the minimax of the children, with exact distances; a stored\nspecial move must be the unique best move, and a unique best move that is not stored\nmust be one no predecessor forbids. One phase group is held at a time (its records, 8\nbytes per position, and the base values of the group below, 2 bytes): about 14.5 GB\nfor (5,5). On 2 cores, (4,4) takes about 1 minute.\n\nExit codes: 0 all good; 1 the database is corrupt or wrong; 2 verify could not run\n(no database, bad arguments, I/O error, a file written by a newer ostledb)."
)]
pub struct VerifyArgs {
    /// Also re-derive every stored value from its children's stored values.
    #[arg(long)]
    pub deep: bool,
    /// Print one JSON object.
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    common: CommonArgs,
}

/// Checksums of one file.
#[derive(serde::Serialize)]
struct FileCheck {
    file: String,
    bytes: u64,
}

/// Run `ostledb verify`.
pub fn run(args: VerifyArgs) -> Result<(), Error> {
    let rep = CliReporter::new(args.common.quiet);
    let db = Database::open(&args.common.db)?;
    let g = db.geometry().clone();
    let index = db.index().clone();
    let t = Instant::now();
    let mut files = vec![FileCheck {
        file: meta::FILE.into(),
        bytes: std::fs::metadata(args.common.db.join(meta::FILE)).map(|m| m.len()).unwrap_or(0),
    }];
    for p in index.phases() {
        let v = db.values(p.phase()).expect("every phase is open");
        files.push(FileCheck { file: v.path().display().to_string(), bytes: v.check()? });
        for name in &db.meta().backends {
            let b = Backend::parse(name)?;
            if !b.compiled() {
                rep.note(&format!(
                    "{}: key index `{name}` not checked: this ostledb lacks feature `{}`",
                    p.phase(),
                    b.feature().unwrap_or_default()
                ));
                continue;
            }
            let n = keys::check(b, &args.common.db, p)?;
            if n > 0 {
                files.push(FileCheck { file: format!("{} key index ({})", name, p.phase()), bytes: n });
            }
        }
    }
    for c in [Convention::Published, Convention::Strict] {
        if let Some(b) = BfsFile::open(&args.common.db, &g, c)? {
            files.push(FileCheck { file: b.path().display().to_string(), bytes: b.check()? });
        }
    }
    let secs = t.elapsed().as_secs_f64();
    let bytes: u64 = files.iter().map(|f| f.bytes).sum();
    let rate = bytes as f64 / secs.max(1e-9) / 1e9;
    let mut out = format!(
        "checksums: {} files, {} bytes, all good ({:.2} s, {:.2} GB/s)\n",
        files.len(),
        thousands(bytes),
        secs,
        rate
    );
    let mut reports: Vec<(String, VerifyReport)> = Vec::new();
    if args.deep {
        let mut totals: Vec<u32> = index.phases().iter().map(|p| p.phase().pieces()).collect();
        totals.dedup();
        // One phase group at a time: its records and the base values of the group below.
        for pieces in totals {
            let vals = GroupValues::load(&args.common.db, &g, &index, pieces, &rep)?;
            for ph in vals.phases() {
                let r = verify_phase(&g, &vals, ph, &rep);
                rep.note(&format!("{ph}: {} positions checked, {} mismatches", thousands(r.positions), r.mismatches));
                reports.push((ph.to_string(), r));
            }
        }
    }
    let bad: u64 = reports.iter().map(|r| r.1.mismatches).sum();
    if args.json {
        let v: Vec<_> = reports.iter().map(|(p, r)| serde_json::json!({"phase": p, "report": r})).collect();
        emit_json(&serde_json::json!({
            "ok": bad == 0,
            "checksums": {"files": files, "bytes": bytes, "seconds": secs},
            "deep": args.deep,
            "phases": v,
        }))?;
    } else {
        for (p, r) in &reports {
            out.push_str(&format!("{p}: {} positions checked, {} mismatches\n", thousands(r.positions), r.mismatches));
            for e in &r.examples {
                out.push_str(&format!("  {e}\n"));
            }
        }
        emit(&out)?;
    }
    if bad > 0 {
        return Err(Error::VerifyFailed(bad));
    }
    Ok(())
}
