//! The solver: retrograde analysis phase by phase (see `ARCHITECTURE.md`).

pub mod bfs;
pub mod checkpoint;
pub mod groupfile;
pub mod interesting;
pub mod outcome;
pub mod progress;
pub mod query;
pub mod retrograde;
pub mod verify;

pub use outcome::Outcome;
pub use retrograde::{PhaseValues, Record, Solution, SolveOptions, solve};
