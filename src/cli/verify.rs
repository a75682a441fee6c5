//! `ostledb verify`: check every checksum of a database, and with `--deep` re-derive
//! every stored value from its children.

use clap::Args;

use crate::analysis::verify::{check_checksums, verify_database};
use crate::cli::progress::CliReporter;
use crate::cli::{CommonArgs, emit, emit_json, thousands};
use crate::error::Error;
use crate::store::Database;

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

/// Run `ostledb verify`.
pub fn run(args: VerifyArgs) -> Result<(), Error> {
    let rep = CliReporter::new(args.common.quiet);
    let db = Database::open(&args.common.db)?;
    let sums = check_checksums(&db, &rep)?;
    let rate = sums.bytes as f64 / sums.seconds.max(1e-9) / 1e9;
    let mut out = format!(
        "checksums: {} files, {} bytes, all good ({:.2} s, {:.2} GB/s)\n",
        sums.files.len(),
        thousands(sums.bytes),
        sums.seconds,
        rate
    );
    for u in &sums.unlisted {
        out.push_str(&format!("not part of the database (the next write removes it): {u}\n"));
    }
    let reports = if args.deep { verify_database(&db, &rep)? } else { Vec::new() };
    let bad: u64 = reports.iter().map(|r| r.1.mismatches).sum();
    if args.json {
        let v: Vec<_> = reports.iter().map(|(p, r)| serde_json::json!({"phase": p.to_string(), "report": r})).collect();
        emit_json(&serde_json::json!({
            "ok": bad == 0,
            "checksums": sums,
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
