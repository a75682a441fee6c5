//! Integration tests: one binary, one module per concern.

mod bruteforce;
// Runs the `ostledb` binary, which needs the `cli` feature (on by default).
#[cfg(feature = "cli")]
mod cli;
mod examples;
mod interesting;
mod published;
mod query;
mod store;
