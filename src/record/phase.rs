//! The finished records of one phase, in the order of its dense index.

use crate::game::Phase;
use crate::record::value::Val;
use crate::record::{Outcome, Packed, Record};

/// The finished values of one phase: per position a generic value, and possibly a special
/// move index with its own value, as [`Packed`] records.
#[derive(Clone, Debug)]
pub struct PhaseValues {
    phase: Phase,
    /// Per position, a [`Packed`] record.
    records: Vec<u64>,
}

impl PhaseValues {
    /// The phase.
    pub fn phase(&self) -> Phase {
        self.phase
    }

    /// Number of positions.
    pub fn len(&self) -> u64 {
        self.records.len() as u64
    }

    /// True when empty.
    pub fn is_empty(&self) -> bool {
        self.records.is_empty()
    }

    /// The raw packed records (see [`Packed`]).
    pub fn raw(&self) -> &[u64] {
        &self.records
    }

    /// The packed records, to change in place.
    pub fn raw_mut(&mut self) -> &mut [u64] {
        &mut self.records
    }

    /// From raw packed records.
    pub fn from_raw(phase: Phase, records: Vec<u64>) -> PhaseValues {
        PhaseValues { phase, records }
    }

    /// The packed record of the position with index `idx`.
    #[inline]
    pub fn packed(&self, idx: u64) -> Packed {
        Packed(self.records[idx as usize])
    }

    /// The record of the position with index `idx`.
    #[inline]
    pub fn record(&self, idx: u64) -> Record {
        self.packed(idx).record()
    }

    /// The generic value code of a position (the value of its node without a forbidden move).
    #[inline]
    pub fn base_val(&self, idx: u64) -> Val {
        self.packed(idx).base()
    }

    /// The value of node `(idx, j)`.
    #[inline]
    pub fn node(&self, idx: u64, j: usize) -> Outcome {
        self.packed(idx).node(j)
    }

    /// The base value codes of every position (what a phase one piece larger reads
    /// through its captures).
    pub fn base_vals(&self) -> Vec<Val> {
        self.records.iter().map(|&r| Packed(r).base()).collect()
    }
}
