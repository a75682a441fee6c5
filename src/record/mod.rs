//! What is known about a position once it is solved, in memory and on disk alike: the
//! [`Outcome`] of a node, its 16-bit value code ([`Val`]), the 64-bit packed record of a
//! position ([`Packed`]: a base value and at most one special move with its own value),
//! the elision of loss distances that value files may use, and the records of a whole
//! phase ([`PhaseValues`]).
//!
//! Every reader and writer of records (the solver, the value files, the published text
//! files, the verifier) decodes them here and nowhere else.

pub mod outcome;
pub mod packed;
pub mod phase;
pub mod value;

pub use outcome::Outcome;
pub use packed::{ELIDED_LOSS, Packed, Record};
pub use phase::PhaseValues;
pub use value::{Val, outcome_val, val_outcome};
