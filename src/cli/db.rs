//! Opening a database for the read-only subcommands.

use clap::Args;

use crate::cli::CommonArgs;
use crate::error::Error;
use crate::store::{Backend, Database};

/// The lookup backend option of the subcommands that read a database.
#[derive(Debug, Clone, Args)]
pub struct BackendArgs {
    /// Key -> index lookup backend (default: the database's first): rank, sorted,
    /// levelwise, hash, mmap, sled. It must be compiled in and the database must have
    /// its key index (`ostledb index --backend NAME` adds one).
    #[arg(long, value_name = "NAME")]
    pub backend: Option<Backend>,
}

/// Open the database the common arguments name.
pub fn open(common: &CommonArgs, backend: &BackendArgs) -> Result<Database, Error> {
    Database::open_with(&common.db, backend.backend)
}
