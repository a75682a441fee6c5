//! The solver's working files and what makes a database of them: between the solver
//! (above) and the read path ([`crate::store`], below).
//!
//! * [`phasefile`]: the solver's phase files, one per finished phase, before packing.
//! * [`group`]: whole phase groups loaded (from value files or phase files) with
//!   their elided losses resolved, for `verify --deep`, `interesting`, `export` and the
//!   solver's resume.
//! * [`resolved`]: those resolved records kept on disk between commands.
//! * [`pack`]: packing: phase files into value files, key indexes and the metadata.
//!
//! None of it is named by the read path: a [`Store`](crate::store::Store) reads
//! what packing wrote.

pub mod group;
pub mod pack;
pub mod phasefile;
pub mod resolved;
