//! The result store: a solved database on disk, compressed and index-keyed, with
//! switchable key -> index lookup backends.

pub mod analysis;
pub mod bfs;
pub mod cache;
pub mod db;
pub mod file;
pub mod keys;
pub mod latency;
pub mod meta;
pub mod pack;
pub mod published;
pub mod resolve;
pub mod values;

pub use db::{Database, OpenOptions};
pub use keys::Backend;

pub use resolve::{load_base, load_group, load_phase};
