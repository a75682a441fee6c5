//! The result store: a solved database on disk, compressed and index-keyed, with
//! switchable key -> index lookup backends. The read path: [`Store`] and the files it
//! reads (value files, key indexes, the metadata), the block cache, and the database
//! directory (generations, the writer and reader locks) with the metadata's repair. The
//! files of the searches from the start are a layer below ([`crate::bfs_depths`]); what
//! writes a database from the solver's files is a layer above ([`crate::working`]).

pub mod cache;
pub mod db;
pub mod directory;
pub mod keys;
pub mod meta;
pub mod repair;
pub mod value_model;
pub mod values;
pub mod warm;

pub use db::{OpenOptions, Store};
pub use keys::Backend;
