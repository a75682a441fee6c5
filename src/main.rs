//! The `ostledb` binary: parse the command line and dispatch.

use clap::Parser;

fn main() {
    let cli = ostledb::cli::Cli::parse();
    if let Err(e) = ostledb::cli::run(cli) {
        eprintln!("ostledb: error: {e}");
        std::process::exit(e.exit_code());
    }
}
