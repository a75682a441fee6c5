//! The files of the breadth-first searches, kept beside a database. Of the search by
//! positions (`ostledb bfs --by-positions --store`, [`crate::solve::bfs_positions`]): the
//! depth at which it first reached each position ([`first_depths`], read by
//! `Store::first_depths` to tell any node's depth from the start) and, per depth, which
//! positions gained a node there ([`node_layers`], read by `export` for the published BFS
//! files). Of the search by nodes (`ostledb bfs --store`): every node's depth by its key
//! ([`node_keys`], read by `Store::bfs`). Each writer leaves the database's writer lock to
//! its caller.
//!
//! Below the store: they name only the file primitives ([`crate::file`]) and the game,
//! and the store's [`Store`](crate::store::Store) and directory handling name them.

pub mod first_depths;
pub mod node_keys;
pub mod node_layers;
