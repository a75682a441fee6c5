//! What people ask of a solved database: a position analysed ([`query`]: its verdict,
//! every move, the principal variation), every stored value re-derived from its children
//! ([`verify`]), whole-phase statistics ([`stats`]) and puzzle classes ([`interesting`]).

pub mod interesting;
pub mod query;
pub mod stats;
pub mod verify;
