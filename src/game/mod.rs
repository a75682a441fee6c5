//! The game engine: geometry, positions, moves and unmoves, symmetry, notation.

pub mod forbidden;
pub mod geometry;
pub mod moves;
pub mod naive;
pub mod node;
pub mod notation;
pub mod position;
pub mod symmetry;

pub use geometry::{Dir, Geometry};
pub use moves::{MAX_MOVES, Move, MoveList, PerMove, Played, Removal, Unmove};
pub use position::{Phase, Position};
