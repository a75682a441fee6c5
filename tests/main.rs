//! Integration tests: one binary, one module per concern.

mod bruteforce;
mod cli;
mod engine;
mod examples;
mod interesting;
mod layers;
mod published;
mod query;
mod store;
