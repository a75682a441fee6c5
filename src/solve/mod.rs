//! The solver: retrograde analysis phase group by phase group with checkpoints inside a
//! group, and the breadth-first search from the initial position (see `ARCHITECTURE.md`).

pub mod bfs;
pub mod bfs_checkpoint;
pub mod bfs_positions;
pub mod checkpoint;
pub mod retrograde;

pub use retrograde::{Solution, SolveOptions, solve};
