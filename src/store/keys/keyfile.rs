// TEMP STUB (replaced by branch keys)
use std::path::Path;
use crate::error::Error;
use crate::index::PhaseIndex;
pub(super) fn write(_dir: &Path, _index: &PhaseIndex) -> Result<(), Error> { Ok(()) }
pub(super) fn check(_dir: &Path, _index: &PhaseIndex) -> Result<u64, Error> { Ok(0) }
