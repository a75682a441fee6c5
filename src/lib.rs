//! # ostledb
//!
//! Solve and query the board game Ostle (5x5, five pieces a side, a movable hole, pushes,
//! lose at two pieces lost, no immediate undo).
//!
//! Everything a program needs is named at the crate root: a [`Database`] to open and ask,
//! [`Position`]s on a [`Geometry`] with their [`moves`] and the notation
//! ([`parse_board`], [`format_move`], ...), the values ([`Outcome`], [`Analysis`],
//! [`Line`], [`Review`]), the solver ([`solve_into`], [`pack`]) and the one [`Error`].
//! The modules behind them are the crate's own; building with the feature `internals`
//! makes them public too, for the crate's tests, benches, examples and fuzz targets
//! (ARCHITECTURE.md draws them as layers: no module names one above it).
//!
//! ## Boards and moves
//!
//! ```
//! use ostledb::{Geometry, format_move, moves, parse_board, parse_move, play};
//!
//! let g = Geometry::standard();
//! let start = parse_board(g, "22222-00000-00300-00000-11111")?;
//! assert_eq!(moves(g, &start).len(), 24);
//! let m = parse_move(g, "a1-up")?;
//! let played = play(g, &start, m).expect("a move of the position");
//! assert_eq!(format_move(g, m), "a1-up");
//! // The board after it, seen from the other side, which moves next.
//! assert!(!moves(g, &played.child).is_empty());
//! # Ok::<(), ostledb::Error>(())
//! ```
//!
//! ## Solve a board and ask the database
//!
//! A 3x3 board with three pieces a side solves in well under a second; the 5x5 game's
//! phase (4,4) takes about 78 s on 2 cores (`ostledb solve`).
//!
//! ```
//! use ostledb::{Database, Geometry, Outcome, PackOptions, SolveOptions, pack, parse_board, solve_into};
//!
//! let dir = std::env::temp_dir().join(format!("ostledb-crate-doc-{}", std::process::id()));
//! # let _ = std::fs::remove_dir_all(&dir);
//! let g = Geometry::new(3, 3)?;
//! let max = 2 * g.start_pieces();
//! solve_into(&g, max, &SolveOptions { dir: Some(dir.clone()), ..SolveOptions::default() }, |_| Ok(()))?;
//! pack(&dir, &g, max, &PackOptions::default(), |_| {})?;
//!
//! let db = Database::open(&dir)?;
//! let board = parse_board(&g, "222-030-111")?;
//! let a = db.analyse(&board, None)?;
//! // The value of the position, and of each move, best first.
//! assert!(matches!(a.outcome, Outcome::Win(_) | Outcome::Loss(_) | Outcome::Draw));
//! assert_eq!(a.moves.len(), ostledb::moves(&g, &board).len());
//! // The best line from it, at most 10 plies.
//! let line = db.line(&board, None, 10)?;
//! assert!(line.steps.len() <= 10);
//! # std::fs::remove_dir_all(&dir).ok();
//! # Ok::<(), ostledb::Error>(())
//! ```
//!
//! ## Review a game
//!
//! ```no_run
//! use ostledb::{Database, Geometry, parse_board};
//!
//! let db = Database::open("ostle.db")?; // made by `ostledb solve`
//! let g = Geometry::standard();
//! let start = parse_board(g, "22220-00000-00300-00000-11110")?;
//! let played = ["c1-up".to_string(), "hole-left".to_string()];
//! for ply in db.review(&start, None, &played)?.plies {
//!     println!("{} {:?}", ply.played.notation, ply.judgement);
//! }
//! # Ok::<(), ostledb::Error>(())
//! ```
//!
//! ## Feature flags
//!
//! * `cli` (default): the `ostledb` binary and its library half (clap, indicatif,
//!   ctrlc): [`Cli`], [`run_cli`]. Without it the library builds without those crates
//!   (`default-features = false`, then name the backends wanted).
//! * `serve` (default): the HTTP server and web explorer of `ostledb serve` (axum, hyper,
//!   tokio).
//! * Lookup backends of the result store ([`Backend`]); `sorted` and `rank` are always
//!   built. Default: `levelwise`, `hash`, `mmap`. Off by default: `sled` (a baseline).
//! * `internals`: every module public, for the crate's own tests, benches, examples and
//!   fuzz targets; not a stable interface.

#![warn(missing_docs)]
// Table-building loops over square and symmetry numbers read better with indices.
#![allow(clippy::needless_range_loop)]
// Without `internals` the modules are the crate's own, and what only the crate's tests,
// benches and examples use of them (items, their modules' re-exports) is unused here; a
// build with `internals` (clippy --all-targets) still finds unused private imports.
#![cfg_attr(not(feature = "internals"), allow(dead_code, unused_imports))]
// A public item's docs may link to the module code behind it: those links work in the
// documentation with `internals` (checked in CI), and are plain text without it.
#![cfg_attr(not(feature = "internals"), allow(rustdoc::private_intra_doc_links))]

// Each module is public only with the feature `internals` (the crate's tests, benches,
// examples and fuzz targets); a program uses the names re-exported below.
#[cfg(feature = "internals")]
pub mod analysis;
#[cfg(not(feature = "internals"))]
mod analysis;
#[cfg(feature = "internals")]
pub mod bench;
#[cfg(not(feature = "internals"))]
mod bench;
#[cfg(feature = "internals")]
pub mod bfs_depths;
#[cfg(not(feature = "internals"))]
mod bfs_depths;
#[cfg(all(feature = "cli", feature = "internals"))]
pub mod cli;
#[cfg(all(feature = "cli", not(feature = "internals")))]
mod cli;
#[cfg(feature = "internals")]
pub mod database;
#[cfg(not(feature = "internals"))]
mod database;
#[cfg(feature = "internals")]
pub mod error;
#[cfg(not(feature = "internals"))]
mod error;
#[cfg(feature = "internals")]
pub mod file;
#[cfg(not(feature = "internals"))]
mod file;
#[cfg(feature = "internals")]
pub mod game;
#[cfg(not(feature = "internals"))]
mod game;
#[cfg(feature = "internals")]
pub mod index;
#[cfg(not(feature = "internals"))]
mod index;
#[cfg(feature = "internals")]
pub mod probe;
#[cfg(not(feature = "internals"))]
mod probe;
#[cfg(feature = "internals")]
pub mod progress;
#[cfg(not(feature = "internals"))]
mod progress;
#[cfg(feature = "internals")]
pub mod published;
#[cfg(not(feature = "internals"))]
mod published;
#[cfg(feature = "internals")]
pub mod record;
#[cfg(not(feature = "internals"))]
mod record;
#[cfg(all(feature = "serve", feature = "internals"))]
pub mod serve;
#[cfg(all(feature = "serve", not(feature = "internals")))]
mod serve;
#[cfg(feature = "internals")]
pub mod solve;
#[cfg(not(feature = "internals"))]
mod solve;
#[cfg(feature = "internals")]
pub mod store;
#[cfg(not(feature = "internals"))]
mod store;
#[cfg(feature = "internals")]
pub mod sys;
#[cfg(not(feature = "internals"))]
mod sys;
#[cfg(feature = "internals")]
pub mod working;
#[cfg(not(feature = "internals"))]
mod working;

// Errors.
pub use error::{EXIT_INTERRUPTED, Error, shown_input};
// The checksum of the store's files (XXH3-64), for a front end's own tags.
pub use file::checksum;
// A database: open, ask, and the memory it may take.
pub use database::Database;
pub use store::cache::budget_of_mb;
pub use store::{Backend, OpenOptions};
pub use sys::check_memory;
// Boards, moves and their notation.
pub use game::forbidden::forbidden_move;
pub use game::moves::{Move, MoveList, Played, Removal, is_immediate_win, moves, play};
pub use game::notation::{
    base64_to_code, code_to_base64, format_board, format_move, parse_board, parse_move, squares_in,
};
pub use game::symmetry::canonical;
pub use game::{Geometry, Phase, Position};
pub use index::PhaseIndex;
// Values and what a query answers.
pub use analysis::opponent::{Level, choose as choose_move};
pub use analysis::query::{
    Analysis, DEFAULT_LINE_PLIES, FromStart, Line, LineEnd, MAX_LINE_PLIES, MoveLine, Step, Verdict, check_line_plies,
    check_moves_count, ends_game, line_plies_out_of_range,
};
pub use analysis::query::{Report, parse_with_prev, split_moves};
pub use analysis::review::{Judgement, Review, ReviewPly, Valued};
pub use probe::best;
pub use record::Outcome;
// Samples of a phase's positions.
pub use store::keys::workload::{Pattern, codes};
// Solving.
pub use solve::SolveOptions;
pub use solve::retrograde::solve_into;
pub use store::values::MAX_LEVEL;
pub use working::pack::{PackOptions, pack};
// The command line (`src/main.rs`).
#[cfg(feature = "cli")]
pub use cli::{Cli, Signals, run as run_cli};

// The README's examples are doctests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
