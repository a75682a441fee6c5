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

/// Exit code of `ostledb` when the database is damaged or wrong (a bad magic, a
/// checksum mismatch, other damage, values that disagree with their children).
pub const EXIT_CORRUPT: i32 = 1;
/// Exit code of `ostledb` when it could not do what was asked (bad input, no database,
/// an I/O error, a stopped solve, a file written by a newer ostledb). Also what clap
/// uses for a bad command line.
pub const EXIT_FAILED: i32 = 2;
/// Exit code of `ostledb` when a second Ctrl-C (or SIGTERM) quits a solve at once
/// (128 + SIGINT, as a shell reports a process that SIGINT ended).
pub const EXIT_INTERRUPTED: i32 = 130;

impl Error {
    /// The process exit code for this error: [`EXIT_CORRUPT`] for a damaged database
    /// ([`Error::Corrupt`], [`Error::BadMagic`], [`Error::ChecksumMismatch`]) or values
    /// that disagree with their children ([`Error::VerifyFailed`]); 0 for
    /// [`Error::ClosedPipe`] (not a failure); [`EXIT_FAILED`] otherwise,
    /// [`Error::NewerFormat`] included: a file written by a newer ostledb is not damaged,
    /// this build just cannot read it.
    pub fn exit_code(&self) -> i32 {
        match self {
            Error::Corrupt { .. }
            | Error::BadMagic { .. }
            | Error::ChecksumMismatch { .. }
            | Error::VerifyFailed(_)
            | Error::FoundDamaged(_) => EXIT_CORRUPT,
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

/// The most of a user's input that an error message (or `query -`'s "input" field)
/// repeats, in bytes: a longer input is cut and its length said instead.
pub const SHOWN_INPUT: usize = 100;

/// An input as an error repeats it: `text` shows (lossily, perhaps) at least the start of
/// an input `len` bytes long; whole when the input is at most [`SHOWN_INPUT`] bytes,
/// otherwise its first [`SHOWN_INPUT`] bytes (to a character boundary) and "... (N
/// bytes)". A 10 MB line is then not echoed twice in its error.
pub fn shown_input(text: &str, len: usize) -> std::borrow::Cow<'_, str> {
    if len <= SHOWN_INPUT {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut end = SHOWN_INPUT.min(text.len());
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    std::borrow::Cow::Owned(format!("{}... ({len} bytes)", &text[..end]))
}

/// An I/O error on `path` (for `map_err`).
pub fn io(path: &Path) -> impl Fn(std::io::Error) -> Error + '_ {
    move |source| Error::Io { path: path.to_path_buf(), source }
}

/// A damaged-file error.
pub fn corrupt(path: &Path, reason: impl Into<String>) -> Error {
    Error::Corrupt { path: path.to_path_buf(), reason: reason.into() }
}

/// A checksum that does not match: `section` of the `kind` of file at `path` (block
/// `block` where the section is made of blocks), at bytes `bytes` where known.
pub fn checksum_mismatch(
    path: &Path,
    kind: FileKind,
    section: &str,
    block: Option<u64>,
    bytes: Option<(u64, u64)>,
) -> Error {
    Error::ChecksumMismatch { path: path.to_path_buf(), kind, section: section.into(), block, bytes }
}

/// The kinds of file ostledb reads: each error about a file's format names its kind and
/// says how to rebuild that kind of file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum FileKind {
    /// The metadata `ostledb.meta`.
    Metadata,
    /// A value file `values-A-B.zst`.
    Values,
    /// A sorted keys file `keys-A-B.sorted` (backends sorted, levelwise and mmap).
    SortedKeys,
    /// A hash key index `keys-A-B.hash`.
    HashKeys,
    /// A stored breadth-first search `bfs-CONVENTION.zst`.
    Bfs,
    /// A stored search's first depth of every position `bfs-first-depths.zst`.
    FirstDepths,
    /// A solver's phase value file `phase-A-B.vals`.
    PhaseFile,
    /// A solver's group checkpoint `group-A-B[-C-D].ckpt`.
    Checkpoint,
    /// The checkpoint of a breadth-first search by positions `bfs-positions.ckpt`.
    BfsCheckpoint,
    /// A layer of a stored search's node layers `bfs-node-layers/layer-DDD.zst`.
    NodeLayers,
}

impl FileKind {
    /// What the file is, in a sentence: "value file".
    pub fn name(self) -> &'static str {
        match self {
            FileKind::Metadata => "metadata file",
            FileKind::Values => "value file",
            FileKind::SortedKeys => "sorted keys file",
            FileKind::HashKeys => "hash key index",
            FileKind::Bfs => "BFS file",
            FileKind::FirstDepths => "first-depth file",
            FileKind::PhaseFile => "phase value file",
            FileKind::Checkpoint => "group checkpoint",
            FileKind::BfsCheckpoint => "BFS checkpoint",
            FileKind::NodeLayers => "node-layer file",
        }
    }

    /// Whose format version the file carries, in a sentence: "value file", "database"
    /// (the metadata's version is the database format's).
    pub fn format_name(self) -> &'static str {
        match self {
            FileKind::Metadata => "database",
            k => k.name(),
        }
    }

    /// The kind of the database file at `path`, known by its name (`schema/FORMAT.md`
    /// names every file): `None` for a name no kind has.
    pub fn of_path(path: &Path) -> Option<FileKind> {
        let name = path.file_name()?.to_str()?;
        let phase = |rest: &str, ext: &str| {
            rest.strip_suffix(ext).and_then(|ab| ab.split_once('-')).is_some_and(|(a, b)| {
                !a.is_empty() && !b.is_empty() && a.bytes().chain(b.bytes()).all(|c| c.is_ascii_digit())
            })
        };
        match name {
            "ostledb.meta" => Some(FileKind::Metadata),
            n if n.strip_prefix("values-").is_some_and(|r| phase(r, ".zst")) => Some(FileKind::Values),
            n if n.strip_prefix("keys-").is_some_and(|r| phase(r, ".sorted")) => Some(FileKind::SortedKeys),
            n if n.strip_prefix("keys-").is_some_and(|r| phase(r, ".hash")) => Some(FileKind::HashKeys),
            "bfs-first-depths.zst" => Some(FileKind::FirstDepths),
            n if n.starts_with("bfs-") && n.ends_with(".zst") => Some(FileKind::Bfs),
            n if n.strip_prefix("phase-").is_some_and(|r| phase(r, ".vals")) => Some(FileKind::PhaseFile),
            n if n.starts_with("group-") && n.ends_with(".ckpt") => Some(FileKind::Checkpoint),
            "bfs-positions.ckpt" => Some(FileKind::BfsCheckpoint),
            n if n
                .strip_prefix("layer-")
                .and_then(|r| r.strip_suffix(".zst"))
                .is_some_and(|d| d.len() >= 3 && d.bytes().all(|c| c.is_ascii_digit())) =>
            {
                Some(FileKind::NodeLayers)
            }
            _ => None,
        }
    }

    /// How to replace an unusable file of this kind at `path`: what the commands that
    /// write it can rebuild it from, with the database directory they take (the file's
    /// directory, or its parent for a file inside a generation directory `gen-N`).
    pub fn advice(self, path: &Path) -> String {
        let db = database_dir_of(path);
        let dir = db.display();
        match self {
            FileKind::Metadata => format!(
                "rebuild it with `ostledb repair --db {dir}` (it reads the value files' own headers and counts their values; no other command writes to the database until then)"
            ),
            FileKind::Values => {
                // The solver's phase file of the same phase, if it was kept, holds every value.
                let phase_file = path
                    .file_name()
                    .and_then(|n| n.to_str())
                    .and_then(|n| n.strip_prefix("values-")?.strip_suffix(".zst"))
                    .map(|ab| db.join(format!("phase-{ab}.vals")));
                match phase_file {
                    Some(p) if p.is_file() => format!(
                        "rebuild it with `ostledb pack --db {dir}` (the solver's phase file {} holds its values)",
                        p.display()
                    ),
                    _ => format!(
                        "no solver's phase file is left to rebuild it from (`--keep-work` keeps them): delete it and run `ostledb solve --db {dir}` again with the database's --max-pieces"
                    ),
                }
            }
            FileKind::SortedKeys => format!("rebuild it with `ostledb index --db {dir} --backend sorted`"),
            FileKind::HashKeys => format!("rebuild it with `ostledb index --db {dir} --backend hash`"),
            FileKind::Bfs => {
                let strict = path.file_name().is_some_and(|n| n.to_string_lossy().contains("strict"));
                format!(
                    "rebuild it with `ostledb bfs --db {dir} --store{}` and the other options it was made with (--max-depth), or delete it (it is optional)",
                    if strict { " --strict" } else { "" }
                )
            }
            FileKind::FirstDepths => format!(
                "rebuild it with `ostledb bfs --db {dir} --by-positions --store --max-depth 255`, or delete it (it is optional)"
            ),
            FileKind::PhaseFile => format!(
                "delete it and run `ostledb solve --db {dir}` again with the same --max-pieces (its phase is solved again, or read from its value file)"
            ),
            FileKind::Checkpoint => {
                format!("delete it: the next `ostledb solve --db {dir}` solves its phase group from the start")
            }
            FileKind::BfsCheckpoint => format!(
                "delete it to start over: the next `ostledb bfs --by-positions --checkpoint-dir {}` then searches from depth 0",
                // A checkpoint directory need not be a database: its own directory.
                path.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new(".")).display()
            ),
            FileKind::NodeLayers => {
                // The layers' directory is in the database directory.
                let layers = path.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
                let db = layers.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
                format!(
                    "delete the directory {} (it is optional: `export` then finds every node's depth from its predecessors), or rebuild it with `ostledb bfs --db {} --by-positions --store --node-layers --max-depth 255`",
                    layers.display(),
                    db.display()
                )
            }
        }
    }

    /// What to do, besides using a newer ostledb, with a file of this kind from a newer
    /// ostledb.
    fn newer_advice(self) -> &'static str {
        match self {
            FileKind::Checkpoint => "or delete it: this one then solves its phase group from the start",
            FileKind::BfsCheckpoint => "or delete it: this one then searches from depth 0",
            FileKind::PhaseFile => "or delete it and solve its phase again with this one",
            _ => "or rebuild the database with this one",
        }
    }
}

impl std::fmt::Display for FileKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// How to replace the damaged file at `path`: its kind's advice, by its name
/// ([`FileKind::of_path`]), or, for a file no kind has, solving again.
fn damage_advice(path: &Path) -> String {
    match FileKind::of_path(path) {
        Some(kind) => kind.advice(path),
        None => "delete it and run `ostledb solve` again to rebuild it".to_string(),
    }
}

/// Where in a file a checksum failed: "block 17 (values, bytes 72..1090)", "the header".
fn checksum_place(section: &str, block: Option<u64>, bytes: Option<(u64, u64)>) -> String {
    match (block, bytes) {
        (Some(b), Some((s, e))) => format!("block {b} ({section}, bytes {s}..{e})"),
        (Some(b), None) => format!("block {b} ({section})"),
        (None, Some((s, e))) => format!("the {section} (bytes {s}..{e})"),
        (None, None) => format!("the {section}"),
    }
}

/// Everything that can go wrong in ostledb.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A board, move or code in text form could not be parsed.
    #[error("`{}` {}", shown_input(&.0.input, .0.input.len()), .0.reason)]
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
    /// A file found damaged before, said again without reading it again (a key index
    /// that failed its checks when first opened): the first error's message.
    #[error("{0}")]
    FoundDamaged(String),
    /// A count or size outside the range ostledb takes for it (a line of more plies than
    /// [`MAX_LINE_PLIES`](crate::analysis::query::MAX_LINE_PLIES), say): `what` must be
    /// from `min` to `max`.
    #[error("{what} must be from {min} to {max}, not {given}{}", if .why.is_empty() { String::new() } else { format!(" ({})", .why) })]
    OutOfRange {
        /// The argument, as the caller wrote it: `max_plies`, `--max-plies`.
        what: String,
        /// The value given, as written (a Python integer may be wider than any Rust one).
        given: String,
        /// The least value taken.
        min: u64,
        /// The greatest value taken.
        max: u64,
        /// Why the bound is there, in a few words (may be empty).
        why: String,
    },
    /// A database file is damaged or is not what its name says: truncated, impossible
    /// values, another board or phase. (A bad magic, a file of a newer format and a
    /// checksum mismatch have variants of their own.)
    #[error("{}: the file is damaged ({reason}); {}", .path.display(), damage_advice(.path))]
    Corrupt {
        /// The file concerned.
        path: PathBuf,
        /// What is wrong with it.
        reason: String,
    },
    /// A file whose first 8 bytes are not the magic of the kind of file its name says:
    /// another file took its name, or its start is damaged.
    #[error(
        "{path}: not an ostledb {kind} (its first bytes are not the {kind} magic); {}",
        .kind.advice(.path)
    )]
    BadMagic {
        /// The file concerned.
        path: PathBuf,
        /// The kind of file expected there.
        kind: FileKind,
    },
    /// A file of a format version above those this build reads: written by a newer
    /// ostledb, not damaged. Reported only when the version field cannot be shown to be
    /// damaged, i.e. when putting back a version this build reads does not make the
    /// checksum over the version field hold (see `schema/FORMAT.md`, "Format errors").
    #[error(
        "{path}: written by ostledb {} format v{found}; this build reads up to v{max}: use a newer ostledb ({})",
        .kind.format_name(),
        .kind.newer_advice()
    )]
    NewerFormat {
        /// The file concerned.
        path: PathBuf,
        /// Its kind.
        kind: FileKind,
        /// The format version in the file.
        found: u32,
        /// The newest version of that kind this build reads.
        max: u32,
    },
    /// A checksum that does not match what it covers: the file is damaged.
    #[error(
        "{path}: checksum mismatch in {}; the file is damaged: {}",
        checksum_place(.section, *.block, *.bytes),
        .kind.advice(.path)
    )]
    ChecksumMismatch {
        /// The file concerned.
        path: PathBuf,
        /// Its kind.
        kind: FileKind,
        /// The part of the file the checksum covers: "header", "block index", "values"
        /// (a value block), "keys", "body", "metadata", "records"...
        section: String,
        /// The block, for sections made of blocks (value files, BFS files).
        block: Option<u64>,
        /// The bytes the checksum covers (start..end in the file), where known.
        bytes: Option<(u64, u64)>,
    },
    /// A write refused before it touched anything, because it could lose data: the
    /// database's metadata cannot be read (so which files are the database is not
    /// known), or value files lie in a generation that no metadata names and that no
    /// solver's phase file backs. Not damage in itself: exit code 2.
    #[error("{}: {reason}; nothing was written or removed. {advice}", .path.display())]
    WriteRefused {
        /// The database directory.
        path: PathBuf,
        /// Why the write could lose data.
        reason: String,
        /// What to do: `ostledb repair`, as a rule.
        advice: String,
    },
    /// Another process is writing the database.
    #[error("{path} is being written by {holder}; wait for it to finish (one writer at a time)")]
    Locked {
        /// The database directory.
        path: PathBuf,
        /// The command and process holding the writer lock.
        holder: String,
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
    /// A breadth-first search by positions was asked to stop (Ctrl-C, SIGTERM); with a
    /// checkpoint directory its state was saved at the layer boundary where it stopped.
    #[error(
        "the breadth-first search stopped after depth {depth}{}",
        match .checkpoint {
            Some(p) => format!("; its checkpoint is {}: run the same command again to resume there", p.display()),
            None => " (nothing saved: no checkpoint directory)".to_string(),
        }
    )]
    BfsStopped {
        /// The deepest layer done.
        depth: u32,
        /// The checkpoint holding the search's state after that layer.
        checkpoint: Option<PathBuf>,
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
    /// Memory for something large that a command needs could not be had (a key index
    /// loaded into memory, say), under the process's limit (`ulimit -v`) or the machine's.
    #[error("not enough memory for {what} ({} MB); {advice}", bytes.div_ceil(1_000_000))]
    OutOfMemory {
        /// What the memory was for: "the sorted keys of phase (4,4)".
        what: String,
        /// How many bytes were asked for.
        bytes: u64,
        /// What to do instead.
        advice: String,
    },
    /// An I/O error on a file.
    #[error("{path}: {source}")]
    Io {
        /// The file concerned.
        path: PathBuf,
        /// The underlying error.
        source: std::io::Error,
    },
}

/// The prefix of a generation's subdirectory in a database directory (`gen-N`; see
/// `store::directory`). It is named here, at the bottom, because an error about a file
/// must name the database the file belongs to.
const GENERATION_PREFIX: &str = "gen-";

/// The subdirectory name of generation `n` (`n` > 0).
pub fn generation_name(n: u64) -> String {
    format!("{GENERATION_PREFIX}{n}")
}

/// The generation a directory entry's name is, if it is one.
pub fn generation_of(name: &str) -> Option<u64> {
    let n = name.strip_prefix(GENERATION_PREFIX)?;
    if n.is_empty() || n.starts_with('0') || !n.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    n.parse().ok()
}

/// The database directory a database file at `path` belongs to: its directory, or the
/// one above when the file lives in a generation's subdirectory (`.` for a bare name).
pub fn database_dir_of(path: &Path) -> &Path {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => return Path::new("."),
    };
    match (dir.file_name(), dir.parent()) {
        (Some(name), Some(up)) if name.to_str().and_then(generation_of).is_some() => {
            if up.as_os_str().is_empty() {
                Path::new(".")
            } else {
                up
            }
        }
        _ => dir,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn advice_names_the_database_not_the_generation_directory() {
        for (file, db) in [
            ("/d/gen-2/values-4-4.zst", "/d"),
            ("/d/values-4-4.zst", "/d"),
            ("gen-7/keys-4-4.sorted", "."),
            ("values-4-4.zst", "."),
            ("/d/gen-0/values-4-4.zst", "/d/gen-0"),
            ("/d/generation/values-4-4.zst", "/d/generation"),
        ] {
            assert_eq!(database_dir_of(Path::new(file)), Path::new(db), "{file}");
        }
        let advice = FileKind::SortedKeys.advice(Path::new("/data/ostle.db/gen-3/keys-4-4.sorted"));
        assert!(advice.contains("`ostledb index --db /data/ostle.db --backend sorted`"), "{advice}");
    }
}
