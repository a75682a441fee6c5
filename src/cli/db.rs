//! Opening a database for the read-only subcommands.

use clap::Args;

use crate::cli::CommonArgs;
use crate::error::Error;
use crate::store::directory::WriteLock;
use crate::store::{Backend, OpenOptions, Store};

/// The lookup backend and cache options of the subcommands that read a database.
#[derive(Debug, Clone, Default, Args)]
pub struct BackendArgs {
    /// Key -> index lookup backend (default: the database's first): rank, sorted,
    /// levelwise, hash, mmap, sled. It must be compiled in and the database must have
    /// its key index (`ostledb index --backend NAME` adds one).
    #[arg(long, value_name = "NAME")]
    pub backend: Option<Backend>,
    /// Megabytes of decoded value blocks kept in memory (about 3.3 bytes a position:
    /// under 0.5 KB per v5 stream of 128, 0.1 MB per v3 block of 32,768; all of phase (4,4)
    /// takes about 500). Default: 512, or half the
    /// memory left to the process where that is less (`ulimit -v`, available memory). 0
    /// keeps no block: every probe decodes the blocks it reads. Refused above half the
    /// room `ulimit -v` leaves, or above the machine's available memory.
    #[arg(long, value_name = "MB")]
    pub cache_mb: Option<u64>,
}

/// Take the writer lock of the database the common arguments name, for `command`, and
/// say what a crashed writer left there that taking it removed.
pub fn lock_for_writing(common: &CommonArgs, command: &str) -> Result<WriteLock, Error> {
    let lock = WriteLock::acquire(&common.db, command)?;
    if !lock.leftovers().is_empty() && !common.quiet {
        let names: Vec<String> = lock.leftovers().iter().map(|p| p.display().to_string()).collect();
        eprintln!("ostledb: removed what an interrupted write left: {}", names.join(", "));
    }
    Ok(lock)
}

/// Open the database the common arguments name.
pub fn open(common: &CommonArgs, backend: &BackendArgs) -> Result<Store, Error> {
    let cache_bytes = match backend.cache_mb {
        Some(mb) => crate::store::cache::budget_of_mb(mb, "--cache-mb")?,
        None => crate::store::cache::default_budget(),
    };
    Store::open_opts(&common.db, &OpenOptions { backend: backend.backend, cache_bytes, ..OpenOptions::default() })
}
