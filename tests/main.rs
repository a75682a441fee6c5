//! Integration tests: one binary, one module per concern.

mod bruteforce;
mod cli;
mod examples;
mod published;
mod query;
mod store;
