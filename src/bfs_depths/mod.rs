//! The files of the breadth-first search by positions (`ostledb bfs --by-positions
//! --store`, [`crate::solve::bfs_positions`]), kept beside a database: the depth at
//! which the search first reached each position ([`first_depths`], read by
//! `Store::first_depths` to tell any node's depth from the start) and, per depth,
//! which positions gained a node there ([`node_layers`], read by `export` for the
//! published BFS files). Each writer leaves the database's writer lock to its caller.
//!
//! Below the store: they name only the file primitives ([`crate::file`]) and the game,
//! and the store's [`Store`](crate::store::Store) and directory handling name
//! them. The node-key BFS file (`store::bfs`) is not here: its writer takes the
//! database's writer lock itself, which is the store's.

pub mod first_depths;
pub mod node_layers;
