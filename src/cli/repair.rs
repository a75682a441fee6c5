//! `ostledb repair`: give a database whose metadata is damaged, unreadable or lost its
//! metadata back, from its value files.

use clap::Args;

use crate::cli::progress::CliReporter;
use crate::cli::{CommonArgs, emit, emit_json, thousands};
use crate::error::Error;
use crate::store::repair::repair;

/// Arguments of `ostledb repair`.
#[derive(Debug, Args)]
#[command(
    after_help = "When the metadata file ostledb.meta is damaged (a flipped byte, truncated, too long, not a\nregular file), unreadable or gone, no command writes to the database: each would take\nthe value files for what an interrupted write left and remove them. This command\nrebuilds the metadata from the value files' own headers: of the newest generation\n(gen-N) whose value files are every phase up to some piece count, each intact (every\nblock's checksum is checked and its values counted, about a minute for the whole game\non 2 cores). It changes and removes nothing else. An intact metadata file is left as\nit is; one written by a newer ostledb is refused. Run `ostledb verify` afterwards.\n\nExamples:\n  ostledb repair --db ostle.db\n  ostledb verify --db ostle.db"
)]
pub struct RepairArgs {
    /// Print one JSON object: `was` (why it needed repair, null when it did not), the
    /// metadata, the directory of the files it names, the generations passed over.
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    common: CommonArgs,
}

/// Run `ostledb repair`.
pub fn run(args: RepairArgs) -> Result<(), Error> {
    let reporter = CliReporter::new(args.common.quiet);
    let r = repair(&args.common.db, &reporter)?;
    if args.json {
        return emit_json(&r);
    }
    let mut out = String::new();
    match &r.was {
        None => out.push_str(&format!(
            "{}: the metadata reads; nothing to repair (`ostledb verify` checks every file)\n",
            args.common.db.display()
        )),
        Some(was) => {
            out.push_str(&format!("was: {was}\n"));
            let positions: u64 = r.meta.phases.iter().map(|p| p.positions).sum();
            out.push_str(&format!(
                "rebuilt {} from the value files in {}: {} phases up to {} pieces, {} positions; key indexes: {}\n",
                crate::store::meta::FILE,
                r.data.display(),
                r.meta.phases.len(),
                r.meta.max_pieces,
                thousands(positions),
                r.meta.backends.join(", ")
            ));
            for (p, why) in &r.passed_over {
                out.push_str(&format!("passed over {}: {why}\n", p.display()));
            }
            out.push_str(&format!("next: ostledb verify --db {}\n", args.common.db.display()));
        }
    }
    emit(&out)
}
