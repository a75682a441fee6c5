//! Opening a database for the read-only subcommands.

use clap::Args;

use crate::cli::CommonArgs;
use crate::error::Error;
use crate::store::directory::WriteLock;
use crate::store::{Backend, Database, OpenOptions};

/// The lookup backend and cache options of the subcommands that read a database.
#[derive(Debug, Clone, Args)]
pub struct BackendArgs {
    /// Key -> index lookup backend (default: the database's first): rank, sorted,
    /// levelwise, hash, mmap, sled. It must be compiled in and the database must have
    /// its key index (`ostledb index --backend NAME` adds one).
    #[arg(long, value_name = "NAME")]
    pub backend: Option<Backend>,
    /// Megabytes of decoded value blocks kept in memory (about 0.2 MB per block of
    /// 65,536 positions; all of phase (4,4) takes about 500).
    #[arg(long, default_value_t = 512, value_name = "MB")]
    pub cache_mb: usize,
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
pub fn open(common: &CommonArgs, backend: &BackendArgs) -> Result<Database, Error> {
    Database::open_opts(&common.db, &OpenOptions { backend: backend.backend, cache_bytes: backend.cache_mb << 20 })
}
