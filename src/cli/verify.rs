//! `ostledb verify`: check every checksum of a database, and with `--deep` re-derive
//! every stored value from its children.

use clap::Args;
use serde_json::json;

use crate::analysis::verify::{check_checksums, verify_database};
use crate::cli::progress::CliReporter;
use crate::cli::{CommonArgs, WalkCheckpointArgs, emit, emit_json, thousands};
use crate::error::{EXIT_CORRUPT, Error};
use crate::store::Store;

/// Arguments of `ostledb verify`.
#[derive(Debug, Args)]
#[command(
    after_help = "Without --deep: the metadata, the header and block index of every value file, every\nvalue block's checksum, every key index file's checksums and those of a stored BFS are\nrecomputed; the first bad block is named with its file and byte range.\n\nWith --deep, then: for every position, each move's child node is looked up and the\nstored value must be the minimax of the children, with exact distances; a stored\nspecial move must be the unique best move, and a unique best move that is not stored\nmust be one no predecessor forbids. One phase group is held at a time (its records, 4\nbytes per position, and the base values of the group below, 2 bytes): 9.1 GB peak\nfor the whole game, measured. On 2 cores, (4,4) takes 1 to 2 minutes, the whole game 1 to 2 hours\n(60 min measured on an idle machine, 1 h 37 min beside a solve): with --checkpoint FILE a killed run goes on from its last save when run again, e.g.\n  ostledb verify --deep --checkpoint verify.ckpt\n\nExit codes: 0 all good; 1 the database is corrupt or wrong; 2 verify could not run\n(no database, bad arguments, I/O error, a file written by a newer ostledb)."
)]
pub struct VerifyArgs {
    /// Also re-derive every stored value from its children's stored values.
    #[arg(long)]
    pub deep: bool,
    /// Print one JSON object.
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    walk: WalkCheckpointArgs,
    #[command(flatten)]
    common: CommonArgs,
}

/// Run `ostledb verify`. Damage is exit code 1; with `--json` the JSON report is printed
/// first all the same: `ok` false, the damaged files in `checksums.failures`, and the
/// message of the error that ends the run in `error` (a damaged file met when opening the
/// database or by `--deep`, where `checksums` is null or its phases are missing).
pub fn run(args: VerifyArgs) -> Result<(), Error> {
    let rep = CliReporter::new(args.common.quiet);
    if args.walk.checkpoint.is_some() && !args.deep {
        return Err(Error::InvalidArgument(
            "--checkpoint keeps the progress of --deep (the checksum pass takes seconds); add --deep".into(),
        ));
    }
    if args.walk.records_dir.is_some() && !args.deep {
        return Err(Error::InvalidArgument(
            "--records-dir keeps the resolved records of --deep (the checksum pass reads no records); add --deep"
                .into(),
        ));
    }
    let db = match Store::open(&args.common.db) {
        Ok(db) => db,
        Err(e) if args.json && e.exit_code() == EXIT_CORRUPT => {
            emit_json(
                &json!({"ok": false, "checksums": null, "deep": args.deep, "phases": [], "error": e.to_string()}),
            )?;
            return Err(e);
        }
        Err(e) => return Err(e),
    };
    let mut sums = check_checksums(&db, &rep)?;
    // A deep pass over damaged files would only find the damage again.
    let (reports, deep_error) = match args.deep && sums.failures.is_empty() {
        true => {
            let mut checkpoint = args.walk.open("verify --deep", &db, &rep)?;
            let resolved = args.walk.resolved(&db)?;
            match verify_database(&db, resolved.as_ref(), &rep, &mut checkpoint) {
                Ok(r) => {
                    checkpoint.finish()?;
                    (r, None)
                }
                Err(e) if e.exit_code() == EXIT_CORRUPT => (Vec::new(), Some(e)),
                Err(e) => return Err(e),
            }
        }
        false => (Vec::new(), None),
    };
    let bad: u64 = reports.iter().map(|r| r.1.mismatches).sum();
    let error = match sums.failures.first() {
        Some(f) => Some(f.error.clone()),
        None => deep_error.as_ref().map(|e| e.to_string()),
    };
    if args.json {
        let v: Vec<_> = reports.iter().map(|(p, r)| json!({"phase": p.to_string(), "report": r})).collect();
        emit_json(&json!({
            "ok": bad == 0 && error.is_none(),
            "checksums": sums,
            "deep": args.deep,
            "phases": v,
            "error": error,
        }))?;
    } else {
        let rate = sums.bytes as f64 / sums.seconds.max(1e-9) / 1e9;
        let mut out = match sums.failures.len() {
            0 => format!(
                "checksums: {} files, {} bytes, all good ({:.2} s, {:.2} GB/s)\n",
                sums.files.len(),
                thousands(sums.bytes),
                sums.seconds,
                rate
            ),
            n => format!("checksums: {} files good, {n} damaged ({:.2} s)\n", sums.files.len(), sums.seconds),
        };
        for f in &sums.failures {
            out.push_str(&format!("damaged: {}\n", f.error));
        }
        for u in &sums.unlisted {
            out.push_str(&format!("not part of the database (the next write removes it): {u}\n"));
        }
        for (p, r) in &reports {
            out.push_str(&format!("{p}: {} positions checked, {} mismatches\n", thousands(r.positions), r.mismatches));
            for e in &r.examples {
                out.push_str(&format!("  {e}\n"));
            }
        }
        emit(&out)?;
    }
    if !sums.failures.is_empty() {
        return Err(sums.failures.swap_remove(0).cause);
    }
    if let Some(e) = deep_error {
        return Err(e);
    }
    if bad > 0 {
        return Err(Error::VerifyFailed(bad));
    }
    Ok(())
}
