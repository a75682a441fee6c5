//! `ostledb verify`: re-derive every stored value from its children.

use clap::Args;

use crate::cli::db::solved_max_pieces;
use crate::cli::progress::CliReporter;
use crate::cli::{CommonArgs, emit, emit_json, thousands};
use crate::error::Error;
use crate::game::Geometry;
use crate::solve::Solution;
use crate::solve::verify::{VerifyReport, verify_phase};

/// Arguments of `ostledb verify`.
#[derive(Debug, Args)]
#[command(
    after_help = "Every file's checksum is checked on loading. Then, for every position, each move's\nchild node is looked up and the stored value must be the minimax of the children,\nwith exact distances; the special move must be the unique best move. Exit code 2 if\nanything disagrees."
)]
pub struct VerifyArgs {
    /// Print one JSON object.
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    common: CommonArgs,
}

/// Run `ostledb verify`.
pub fn run(args: VerifyArgs) -> Result<(), Error> {
    let g = Geometry::standard();
    let max = solved_max_pieces(&args.common.db, g)?;
    let sol = Solution::load(&args.common.db, g, max)?;
    let rep = CliReporter::new(args.common.quiet);
    let reports: Vec<(String, VerifyReport)> =
        sol.phases().iter().map(|p| (p.phase().to_string(), verify_phase(g, &sol, p.phase(), &rep))).collect();
    let bad: u64 = reports.iter().map(|r| r.1.mismatches).sum();
    if args.json {
        let v: Vec<_> = reports.iter().map(|(p, r)| serde_json::json!({"phase": p, "report": r})).collect();
        emit_json(&serde_json::json!({"ok": bad == 0, "phases": v}))?;
    } else {
        let mut out = String::new();
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
