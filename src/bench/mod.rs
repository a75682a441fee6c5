//! Measurements of a database as a program embedding it sees them: the key -> index
//! lookup backends compared on one phase ([`backends`], what `ostledb bench` prints as a
//! table) and query latency percentiles ([`latency`]).

pub mod backends;
pub mod latency;
