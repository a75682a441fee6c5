//! [`Database`]: a solved database opened for queries, and everything a program asks of
//! it, in one place.
//!
//! A database is a directory (`ostledb solve` makes one): `ostledb.meta` says what it
//! holds, and its current generation holds a value file and key indexes per phase
//! (`schema/FORMAT.md`). [`Database`] is the read API over it: opening, the value of a
//! board and of its moves, the analysis `query` shows, the principal variation, the review
//! of a game, and making it ready before a server answers. Below it, the crate's
//! [`Store`] reads the files and the `analysis` layer computes what a query shows; this
//! type only forwards, so that a program, the server and the Python package see one API.
//!
//! Opening reads the metadata and the header and block index of each value file; key
//! indexes are opened on first use, value blocks are read and decompressed on demand. An
//! open database holds the readers' shared lock, so no writer removes a file it may still
//! read. `&Database` is all a query needs, and it can be shared between threads.

use std::path::Path;
use std::sync::atomic::AtomicBool;

use crate::analysis::query::{self, Analysis, Line, Report};
use crate::analysis::review::{self, Review};
use crate::error::Error;
use crate::game::{Geometry, Position};
use crate::index::GameIndex;
use crate::probe::MoveValue;
use crate::record::Outcome;
use crate::store::meta::Meta;
use crate::store::{Backend, OpenOptions, Store};

/// A solved database, open for queries.
pub struct Database {
    store: Store,
}

impl std::fmt::Debug for Database {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Database").field("dir", &self.store.path()).field("backend", &self.store.backend()).finish()
    }
}

impl Database {
    /// Open the database at `dir` with its default lookup backend (the first it lists).
    /// A directory with no database, a damaged metadata file or a value file that does not
    /// match it is an error ([`Error::MissingDatabase`], [`Error::Corrupt`], ...), never a
    /// panic.
    pub fn open(dir: impl AsRef<Path>) -> Result<Database, Error> {
        Store::open(dir).map(Database::from_store)
    }

    /// Open the database at `dir`, looking keys up with `backend` (default: the
    /// database's first). The backend must be compiled in and its files present.
    pub fn open_with(dir: impl AsRef<Path>, backend: Option<Backend>) -> Result<Database, Error> {
        Store::open_with(dir, backend).map(Database::from_store)
    }

    /// Open the database at `dir` as `opts` say (backend, cache size, index tables built
    /// at open).
    pub fn open_opts(dir: impl AsRef<Path>, opts: &OpenOptions) -> Result<Database, Error> {
        Store::open_opts(dir, opts).map(Database::from_store)
    }

    /// The database directory.
    pub fn path(&self) -> &Path {
        self.store.path()
    }

    /// The board: its side and the pieces a side starts with.
    pub fn geometry(&self) -> &Geometry {
        self.store.geometry()
    }

    /// What the database holds: its phases and their counts, its settings and generation.
    pub fn meta(&self) -> &Meta {
        self.store.meta()
    }

    /// What identifies the content of this database: a checksum of its metadata, which
    /// names its generation, settings and per-phase counts. Every write makes a new
    /// generation, so answers under one identity never change (the server's `ETag`).
    pub fn identity(&self) -> u64 {
        self.store.identity()
    }

    /// Every phase with at most this many pieces is present.
    pub fn max_pieces(&self) -> u32 {
        self.store.max_pieces()
    }

    /// The lookup backend in use.
    pub fn backend(&self) -> Backend {
        self.store.backend()
    }

    /// The position index: the phases held, and each phase's numbering of its positions
    /// ([`crate::PhaseIndex`]).
    pub fn index(&self) -> &GameIndex {
        self.store.index()
    }

    /// Whether a breadth-first search from the start is stored with the database (`ostledb
    /// bfs --store`), so that an analysis says how far a board is from the start.
    pub fn has_search(&self) -> Result<bool, Error> {
        Ok(self.store.first_depths()?.is_some() || self.store.bfs()?.is_some())
    }

    /// The value of `board` for the side to move; `prev` is the board before the
    /// opponent's last move, seen from the opponent, which decides the forbidden move.
    pub fn probe(&self, board: &Position, prev: Option<&Position>) -> Result<Outcome, Error> {
        self.store.probe(board, prev)
    }

    /// [`Database::probe`] of many boards, nothing forbidden, answered in the order given.
    /// Parallel (rayon), and ordered for the store: the boards are located first and
    /// valued in order of phase and index, so that a block that several of them need is
    /// decompressed once, while it is cached. An error (a bad board, a phase this
    /// database lacks, a damaged block) is that board's answer and stops no other.
    pub fn probe_many(&self, boards: &[Position]) -> Vec<Result<Outcome, Error>> {
        self.store.probe_many(boards)
    }

    /// Every move of `board` with its value for the side that plays it, in `board`'s own
    /// move order (the forbidden move, if any, is listed too).
    pub fn moves(&self, board: &Position) -> Result<Vec<MoveValue>, Error> {
        self.store.moves(board)
    }

    /// The verdict of `board` (with `prev`, which decides the forbidden move) and of every
    /// move, the playable moves best first and the forbidden move last: what `query`,
    /// the API's `/api/v1/position` and Python's `Database.query` show.
    pub fn analyse(&self, board: &Position, prev: Option<&Position>) -> Result<Analysis, Error> {
        query::analyse(&self.store, board, prev)
    }

    /// [`Database::analyse`] without the moves (`moves` is empty): the node's own verdict,
    /// at the cost of one lookup instead of one per move.
    pub fn summary(&self, board: &Position, prev: Option<&Position>) -> Result<Analysis, Error> {
        query::summary(&self.store, board, prev)
    }

    /// The principal variation from `board`: each side plays its first best allowed
    /// move, until the game ends, the line comes back to a node it has passed (a draw),
    /// or for `max_plies` plies, from 1 to [`crate::MAX_LINE_PLIES`] ([`Error::OutOfRange`]
    /// otherwise). [`Line::end`] says how the line ended.
    pub fn line(&self, board: &Position, prev: Option<&Position>, max_plies: u32) -> Result<Line, Error> {
        query::line(&self.store, board, prev, max_plies)
    }

    /// Review a game: the moves `moves` (readable notation, `c1-up`) played in turn from
    /// `board`, whose previous board is `prev`. Every move must be a move of the board it
    /// is played on and not the forbidden one; the last may end the game, no other may. At
    /// most [`crate::MAX_LINE_PLIES`] moves. Each ply costs one analysis.
    pub fn review(&self, board: &Position, prev: Option<&Position>, moves: &[String]) -> Result<Review, Error> {
        review::review(&self.store, board, prev, moves)
    }

    /// A query given as text, as `ostledb query` and the API take it: `board` and `prev`
    /// in any board notation ([`crate::parse_with_prev`]; `prev_name` names the previous
    /// board in messages), the moves `play` played from it first, and the principal
    /// variation of `line_plies` plies when asked.
    pub fn answer(
        &self,
        board: &str,
        prev: Option<&str>,
        prev_name: &str,
        play: &[String],
        line_plies: Option<u32>,
    ) -> Result<Report, Error> {
        let g = self.geometry();
        let (pos, prev) = query::parse_with_prev(g, board, prev, prev_name)?;
        let (pos, prev) = query::play_moves(g, &pos, prev.as_ref(), play)?;
        let analysis = self.analyse(&pos, prev.as_ref())?;
        let line = match line_plies {
            Some(n) => Some(self.line(&pos, prev.as_ref(), n)?),
            None => None,
        };
        Ok(Report { analysis, line })
    }

    /// [`Database::review`] of a game given as text, `board` and `prev` read as
    /// [`Database::answer`] reads them.
    pub fn review_text(
        &self,
        board: &str,
        prev: Option<&str>,
        prev_name: &str,
        moves: &[String],
    ) -> Result<Review, Error> {
        let (pos, prev) = query::parse_with_prev(self.geometry(), board, prev, prev_name)?;
        self.review(&pos, prev.as_ref(), moves)
    }

    /// Make the database ready before it is asked: [`Database::prepare`], then
    /// [`Database::fill_cache`]. Returns the value blocks decoded.
    pub fn warm(&self, stop: &AtomicBool) -> Result<u64, Error> {
        self.store.warm(stop)
    }

    /// Build what each phase's key index would otherwise build on first use, then map the
    /// value files' pages; stop early when `stop` is set.
    pub fn prepare(&self, stop: &AtomicBool) -> Result<(), Error> {
        self.store.prepare(stop)
    }

    /// Fill the block cache, phase by phase in solving order, until it is nine-tenths
    /// full, every block is in, or `stop` is set. Returns the value blocks decoded. A
    /// database whose blocks all fit (phase (4,4) in the default 512 MB) then answers
    /// every probe from memory.
    pub fn fill_cache(&self, stop: &AtomicBool) -> Result<u64, Error> {
        self.store.fill_cache(stop)
    }

    /// The files below: the store that reads them, for the crate's own commands and,
    /// with the feature `internals`, its tests.
    #[cfg(feature = "internals")]
    pub fn store(&self) -> &Store {
        &self.store
    }

    /// The files below: the store that reads them, for the crate's own commands.
    #[cfg(not(feature = "internals"))]
    pub(crate) fn store(&self) -> &Store {
        &self.store
    }

    /// The database over an open store.
    pub(crate) fn from_store(store: Store) -> Database {
        Database { store }
    }
}
