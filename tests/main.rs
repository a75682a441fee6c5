//! Integration tests: one binary, one module per concern.

// The server and the Python package use only what lib.rs re-exports.
mod api;
// tools/attack.py --quick on a small database (runs the binary).
#[cfg(all(feature = "cli", feature = "serve"))]
mod attack;
mod bruteforce;
// The web explorer in Chromium, through chromedriver.
#[cfg(all(feature = "cli", feature = "serve"))]
mod browser;
// Runs the `ostledb` binary, which needs the `cli` feature (on by default).
#[cfg(feature = "cli")]
mod cli;
mod crash;
mod engine;
mod examples;
mod interesting;
mod layers;
// Every relative link of the markdown documents resolves.
mod links;
// Move generation on boards in notation (the notation sits above the moves).
mod moves;
mod published;
mod query;
// The published solver's own output (tests/data/reference-s8).
mod reference;
// schema/FORMAT.md's table of files and schema/API.md's endpoints against the code.
mod schema;
// A damaged metadata file: writers refuse, `ostledb repair` rebuilds it (runs the binary).
#[cfg(feature = "cli")]
mod repair;
// `ostledb serve`: the router in process and the binary over loopback.
#[cfg(all(feature = "cli", feature = "serve"))]
mod serve;
mod store;
