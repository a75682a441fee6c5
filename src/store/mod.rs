//! The result store: a solved database on disk, compressed and index-keyed, with
//! switchable key -> index lookup backends.

pub mod file;
pub mod keys;
