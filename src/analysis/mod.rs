//! What people ask of a solved database: a position analysed ([`query`]: its verdict,
//! every move, the principal variation), every stored value re-derived from its children
//! ([`verify`]), whole-phase statistics ([`stats`]), those whole-database walks resumable after a kill
//! ([`sweep`]), puzzle classes ([`interesting`]) and
//! a computer opponent's move at a chosen level ([`opponent`]) and a game reviewed ply
//! by ply ([`review`]: where a win or a draw was given away).

pub mod interesting;
pub mod opponent;
pub mod query;
pub mod review;
pub mod stats;
pub mod sweep;
pub mod verify;
