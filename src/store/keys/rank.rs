// TEMP STUB (replaced by branch keys)
use crate::error::Error;
use crate::index::PhaseIndex;
use crate::game::Position;
use super::{Backend, KeyIndex};
pub struct Rank(PhaseIndex);
impl Rank { pub fn new(index: &PhaseIndex) -> Rank { Rank(index.clone()) } }
impl KeyIndex for Rank {
    fn backend(&self) -> Backend { Backend::Rank }
    fn len(&self) -> u64 { self.0.len() }
    fn index_of(&self, code: u64) -> Result<Option<u64>, Error> { Ok(Some(self.0.index_of(&Position::from_code(code)))) }
    fn key_bytes(&self) -> u64 { 0 }
}
