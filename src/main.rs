//! The `ostledb` binary: parse the command line, handle Ctrl-C for a command that stops on
//! request, dispatch, and turn the result into the exit code. Only this file ends the
//! process; the library (`ostledb::run_cli` included) always returns.

use std::sync::atomic::Ordering;

use clap::Parser;
use ostledb::{Cli, EXIT_INTERRUPTED, Signals};

fn main() {
    // A file size limit (`ulimit -f`) is a write error like a full disk, so that the
    // writer cleans up and says what happened: by default the kernel kills the process
    // with SIGXFSZ (exit code 153, no message, a `*.tmp` file left for the next writer).
    #[cfg(unix)]
    // SAFETY: setting a signal's disposition to "ignore" runs no code in the handler.
    unsafe {
        libc::signal(libc::SIGXFSZ, libc::SIG_IGN);
    }
    let cli = Cli::parse();
    let signals = Signals::default();
    // Only for a command that stops cleanly on request (`solve`, `bfs --by-positions` with
    // a checkpoint directory); the others keep the default, an immediate exit. The first
    // Ctrl-C (or SIGTERM) sets the stop flag: the solve (the search) saves a checkpoint at
    // the next level (layer) boundary and returns an error (exit code 2). A second one
    // quits at once, keeping the last checkpoint. `set_handler` also replaces an
    // inherited "ignore SIGINT" (a shell's background job), so a stop request is never
    // lost; a failure to install leaves the default (immediate exit, last checkpoint
    // kept).
    if let Some(on) = cli.on_interrupt() {
        let stop = signals.stop.clone();
        let _ = ctrlc::set_handler(move || {
            if stop.swap(true, Ordering::SeqCst) {
                eprintln!("{}", on.quitting);
                std::process::exit(EXIT_INTERRUPTED);
            }
            if let Some(m) = on.stopping {
                eprintln!("{m}");
            }
        });
    }
    // A closed stdout pipe is `Ok` already (`cli::run`): exit code 0, nothing printed.
    if let Err(e) = ostledb::run_cli(cli, &signals) {
        eprintln!("ostledb: error: {e}");
        std::process::exit(e.exit_code());
    }
}
