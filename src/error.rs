//! The one error type of ostledb.

use std::path::PathBuf;

/// A board or move that could not be parsed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NotationError {
    /// The text as given.
    pub input: String,
    /// Why it was rejected (a sentence fragment following the input).
    pub reason: String,
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
    /// An I/O error on a file.
    #[error("{path}: {source}")]
    Io {
        /// The file concerned.
        path: PathBuf,
        /// The underlying error.
        source: std::io::Error,
    },
}
