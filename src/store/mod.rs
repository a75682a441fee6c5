//! The result store: a solved database on disk, compressed and index-keyed, with
//! switchable key -> index lookup backends.

pub mod bfs;
pub mod cache;
pub mod db;
pub mod directory;
pub mod group;
pub mod keys;
pub mod meta;
pub mod pack;
pub mod phasefile;
pub mod repair;
pub mod resolved;
pub mod value_model;
pub mod values;

pub use db::{Database, OpenOptions};
pub use keys::Backend;

pub use group::{load_base, load_group, load_phase};
