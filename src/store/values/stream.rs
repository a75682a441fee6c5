//! Whole phases read from a value file in index order: [`Stream`] a block at a time, the
//! `load_*` functions all at once.

use std::path::Path;

use super::ValueFile;
use crate::error::Error;
use crate::game::{Geometry, Phase};
use crate::record::{Packed, PhaseValues, Val};

/// The records of a value file in index order, read a block at a time (immediate wins
/// answered as [`ValueFile::block`] does).
pub struct Stream<'a> {
    file: &'a ValueFile,
    next: u32,
    block: Vec<u64>,
    at: usize,
}

impl<'a> Stream<'a> {
    /// From the first record.
    pub fn new(file: &'a ValueFile) -> Stream<'a> {
        Stream { file, next: 0, block: Vec::new(), at: 0 }
    }

    /// Start again from the first record.
    pub fn rewind(&mut self) {
        (self.next, self.at) = (0, 0);
        self.block.clear();
    }

    /// Fill `out` with the next records (an error past the end).
    pub fn read(&mut self, out: &mut [u64]) -> Result<(), Error> {
        let mut k = 0;
        while k < out.len() {
            if self.at == self.block.len() {
                if self.next >= self.file.blocks() {
                    return Err(Error::InvalidArgument(format!(
                        "{}: asked for more than its {} records",
                        self.file.path.display(),
                        self.file.count
                    )));
                }
                self.block = self.file.block(self.next)?;
                self.next += 1;
                self.at = 0;
            }
            let n = (out.len() - k).min(self.block.len() - self.at);
            out[k..k + n].copy_from_slice(&self.block[self.at..self.at + n]);
            (k, self.at) = (k + n, self.at + n);
        }
        Ok(())
    }
}

/// All records of a phase as stored in its value file (every block checked): with
/// [`ELIDED_LOSS`](crate::record::ELIDED_LOSS) for losses if the file elides them (`working::group::load_phase` resolves them).
pub fn load_raw(dir: &Path, geom: &Geometry, phase: Phase, expect: u64) -> Result<PhaseValues, Error> {
    load_file(&ValueFile::open(dir, geom, phase, expect)?)
}

/// All records of an open value file as stored (every block checked).
pub fn load_file(f: &ValueFile) -> Result<PhaseValues, Error> {
    let expect = f.len();
    let mut records = Vec::new();
    records
        .try_reserve_exact(expect as usize)
        .map_err(|_| Error::InvalidArgument(format!("cannot allocate {expect} records")))?;
    f.for_each_block(|_, c| records.extend_from_slice(c))?;
    Ok(PhaseValues::from_raw(f.phase(), records))
}

/// The base values of a phase (2 bytes per position) as stored in its value file.
pub fn load_base_raw(dir: &Path, geom: &Geometry, phase: Phase, expect: u64) -> Result<Vec<Val>, Error> {
    let f = ValueFile::open(dir, geom, phase, expect)?;
    let mut base = Vec::with_capacity(expect as usize);
    f.for_each_block(|_, c| base.extend(c.iter().map(|&r| Packed(r).base())))?;
    Ok(base)
}
