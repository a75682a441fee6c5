//! Integration tests: one binary, one module per concern.

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
mod published;
mod query;
// The published solver's own output (tests/data/reference-s8).
mod reference;
// `ostledb serve`: the router in process and the binary over loopback.
#[cfg(all(feature = "cli", feature = "serve"))]
mod serve;
mod store;
