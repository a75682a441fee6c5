//! The one error type of ostledb.

use std::path::{Path, PathBuf};

/// A board or move that could not be parsed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NotationError {
    /// The text as given.
    pub input: String,
    /// Why it was rejected (a sentence fragment following the input).
    pub reason: String,
}

/// Exit code of `ostledb` when the database is damaged or wrong.
pub const EXIT_CORRUPT: i32 = 1;
/// Exit code of `ostledb` when it could not do what was asked (bad input, no database,
/// an I/O error, a stopped solve). Also what clap uses for a bad command line.
pub const EXIT_FAILED: i32 = 2;
/// Exit code of `ostledb` when a second Ctrl-C (or SIGTERM) quits a solve at once
/// (128 + SIGINT, as a shell reports a process that SIGINT ended).
pub const EXIT_INTERRUPTED: i32 = 130;

impl Error {
    /// The process exit code for this error: [`EXIT_CORRUPT`] for a damaged database or
    /// values that disagree with their children, 0 for [`Error::ClosedPipe`] (not a
    /// failure), [`EXIT_FAILED`] otherwise.
    pub fn exit_code(&self) -> i32 {
        match self {
            Error::Corrupt { .. } | Error::VerifyFailed(_) => EXIT_CORRUPT,
            Error::ClosedPipe => 0,
            _ => EXIT_FAILED,
        }
    }

    /// Say which input a notation error is about ("the previous board (--prev)").
    pub fn in_context(self, what: &str) -> Error {
        match self {
            Error::Notation(mut n) => {
                n.reason = format!("{} (in {what})", n.reason);
                Error::Notation(n)
            }
            e => e,
        }
    }
}

/// An I/O error on `path` (for `map_err`).
pub fn io(path: &Path) -> impl Fn(std::io::Error) -> Error + '_ {
    move |source| Error::Io { path: path.to_path_buf(), source }
}

/// A damaged-file error.
pub fn corrupt(path: &Path, reason: impl Into<String>) -> Error {
    Error::Corrupt { path: path.to_path_buf(), reason: reason.into() }
}

/// Everything that can go wrong in ostledb.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A board, move or code in text form could not be parsed.
    #[error("`{}` {}", .0.input, .0.reason)]
    Notation(NotationError),
    /// A position that breaks the rules (used by programmatic constructors).
    #[error("invalid position: {0}")]
    InvalidPosition(String),
    /// The previous board given does not lead to the current board by one move.
    #[error(
        "the previous board does not lead to the current board by one move; give the board as it was just before the opponent's last move, seen from the opponent (1 = the opponent's pieces)"
    )]
    NotAPredecessor,
    /// A command-line or API argument out of range.
    #[error("{0}")]
    InvalidArgument(String),
    /// A database file is damaged or is not what its name says.
    #[error("{path}: the file is damaged ({reason}); delete it and run `ostledb solve` again to rebuild it")]
    Corrupt {
        /// The file concerned.
        path: PathBuf,
        /// What is wrong with it.
        reason: String,
    },
    /// No solved database where one was expected.
    #[error(
        "no solved database at {path} for phase {phase}; run `ostledb solve --db {path} --max-pieces {max_pieces}` first"
    )]
    MissingDatabase {
        /// The database path.
        path: PathBuf,
        /// The phase that is missing, e.g. "(4,4)".
        phase: String,
        /// The piece count that would solve it.
        max_pieces: u32,
    },
    /// `ostledb verify` found stored values that disagree with their children.
    #[error(
        "{0} positions disagree with their children; the database is wrong: delete it and solve again, and please report this"
    )]
    VerifyFailed(u64),
    /// A solve was asked to stop; with a database directory its working state was saved.
    #[error(
        "the solve stopped at level {level} of {group}{}",
        if *.saved { "; its checkpoint is saved: run the same command again to resume there" } else { " (nothing saved: no database directory)" }
    )]
    Interrupted {
        /// The phase group being solved, e.g. "(5,5)".
        group: String,
        /// The next level it would have processed.
        level: u32,
        /// Whether a checkpoint was written.
        saved: bool,
    },
    /// A lookup backend that this build of ostledb does not contain.
    #[error(
        "the lookup backend `{backend}` is not compiled into this ostledb; rebuild with `cargo build --release --features {feature}`"
    )]
    BackendNotCompiled {
        /// The backend asked for.
        backend: String,
        /// The cargo feature that builds it.
        feature: String,
    },
    /// A backend name that no version of ostledb knows.
    #[error("unknown lookup backend `{name}`; this ostledb has: {available}")]
    UnknownBackend {
        /// The name given.
        name: String,
        /// The compiled-in backends, comma separated.
        available: String,
    },
    /// A database lacks the files of the lookup backend asked for.
    #[error(
        "{path} has no `{backend}` key index; add one with `ostledb index --db {path} --backend {backend}`, or query with one it has: {available}"
    )]
    BackendMissing {
        /// The database.
        path: PathBuf,
        /// The backend asked for.
        backend: String,
        /// The backends whose files the database holds, comma separated.
        available: String,
    },
    /// A line of an input file (published text files given to `ostledb import`) that
    /// is malformed or contradicts the rules or the lines before it.
    #[error("{}, line {line}: {reason}", .path.display())]
    BadInput {
        /// The file.
        path: PathBuf,
        /// The line number, from 1.
        line: u64,
        /// What is wrong with it.
        reason: String,
    },
    /// Standard output was closed by its reader (`ostledb query - | head -1`): the
    /// command stops writing and ends early. Not a failure: the reader has all it wanted,
    /// so `ostledb` exits with 0 and prints nothing.
    #[error("standard output was closed by its reader")]
    ClosedPipe,
    /// An I/O error on a file.
    #[error("{path}: {source}")]
    Io {
        /// The file concerned.
        path: PathBuf,
        /// The underlying error.
        source: std::io::Error,
    },
}
