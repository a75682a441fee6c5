// TEMP STUB (replaced by branch keys)
use std::path::Path;
use crate::error::Error;
use crate::index::PhaseIndex;
use super::{Backend, KeyIndex};
pub struct Sorted(Vec<u64>);
impl Sorted { pub fn open(_dir: &Path, index: &PhaseIndex) -> Result<Sorted, Error> { Ok(Sorted((0..index.len()).map(|i| index.position_at(i).code()).collect())) } }
impl KeyIndex for Sorted {
    fn backend(&self) -> Backend { Backend::Sorted }
    fn len(&self) -> u64 { self.0.len() as u64 }
    fn index_of(&self, code: u64) -> Result<Option<u64>, Error> { Ok(self.0.binary_search(&code).ok().map(|i| i as u64)) }
    fn key_bytes(&self) -> u64 { 8 * self.0.len() as u64 }
}
