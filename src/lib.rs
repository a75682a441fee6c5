//! # ostledb
//!
//! Solve and query the board game Ostle (5x5, five pieces a side, a movable hole, pushes,
//! lose at two pieces lost, no immediate undo).
//!
//! * [`game`]: the rules: bitboard positions, move generation with pushes, unmoves, the
//!   forbidden-move rule, the 8 symmetries and the canonical form, the 25-digit notation
//!   and the published 55-bit code.
//! * [`index`]: the dense position index of each phase, in ascending order of the
//!   published canonical code, computed from tables (no stored keys).
//!
//! ```
//! use ostledb::game::{Geometry, moves::moves, notation::parse_board, symmetry::canonical};
//! use ostledb::index::GameIndex;
//!
//! let g = Geometry::standard();
//! let start = parse_board(g, "22222-00000-00300-00000-11111")?;
//! assert_eq!(moves(g, &start).len(), 24);
//! let (canon, _) = canonical(g, &start);
//! assert_eq!(canon.code(), 34_326_183_948);
//!
//! // Number the 160,900,185 positions with four pieces a side.
//! let index = GameIndex::build(g, 8)?;
//! assert_eq!(index.len(), 160_900_185);
//! let i = index.phases()[0].index_of(&parse_board(g, "11110-00000-00300-00000-22220")?);
//! assert!(i < index.len());
//! # Ok::<(), ostledb::Error>(())
//! ```
//!
//! From the bottom up (ARCHITECTURE.md draws the layers; no module names one above it):
//!
//! * [`error`], [`sys`], [`progress`]: the one error type, memory, progress reporting.
//! * [`record`]: what is known about a solved position: [`record::Outcome`], value codes,
//!   the 64-bit [`record::Packed`] record, the records of a phase.
//! * [`probe`]: the one way to value a node and its moves over a [`probe::RecordSource`].
//! * [`file`](mod@file): what every stored file shares: headers, xxh3 checksums, block indexes,
//!   streamed and atomic writes (temporary name, fsync, rename).
//! * [`bfs_depths`]: the files of the breadth-first search by positions: first depths,
//!   node layers.
//! * [`store`]: the result database: [`store::Database`] opens a solved database and
//!   answers probes; values in zstd blocks, keys mapped to indexes by a lookup backend.
//! * [`working`]: the solver's phase files, phase groups loaded and resolved, resolved
//!   records kept between commands, and packing into a database.
//! * [`solve`]: the retrograde solver and the breadth-first search.
//! * [`analysis`]: what `ostledb query`, `verify`, `stats` and `interesting` compute;
//!   [`published`]: the published text format; [`bench`](mod@bench): measurements.
//! * `serve`: the HTTP API and the web explorer of `ostledb serve` (feature `serve`).
//! * `cli`: the `ostledb` command line (feature `cli`).
//!
//! ## Feature flags
//!
//! * `cli` (default): the `ostledb` binary and its library half, the `cli` module (clap,
//!   indicatif, ctrlc). Without it the library builds without those crates
//!   (`default-features = false`, then name the backends wanted).
//! * `serve` (default): the `serve` module, an HTTP server on axum, hyper and tokio (with
//!   `cli`, the `ostledb serve` subcommand).
//! * Lookup backends of the result store ([`store::keys`]); `sorted` and `rank` are always
//!   built. Default: `levelwise`, `hash`, `mmap`. Off by default: `sled` (a baseline).

#![warn(missing_docs)]
// Table-building loops over square and symmetry numbers read better with indices.
#![allow(clippy::needless_range_loop)]

pub mod analysis;
pub mod bench;
pub mod bfs_depths;
#[cfg(feature = "cli")]
pub mod cli;
pub mod error;
pub mod file;
pub mod game;
pub mod index;
pub mod probe;
pub mod progress;
pub mod published;
pub mod record;
#[cfg(feature = "serve")]
pub mod serve;
pub mod solve;
pub mod store;
pub mod sys;
pub mod working;

pub use error::Error;

// The README's examples are doctests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
