//! Measurements of a database as a program embedding it sees them: query latency
//! percentiles ([`latency`]).

pub mod latency;
