//! Making an open store ready before it is asked: key indexes prepared, value pages
//! mapped and the block cache filled (`ostledb serve` at start).

use std::sync::atomic::{AtomicBool, Ordering};

use crate::error::Error;
use crate::store::Store;

impl Store {
    /// Make the database ready before clients ask: [`Store::prepare`], then [`Store::fill_cache`]. Returns
    /// the blocks decoded. A database whose blocks all fit in the cache (phase (4,4) in the
    /// default 512 MB) then answers every probe from memory; without this the first seconds
    /// of a server pay for bitmaps, page faults and decoding (a read and a decompression per
    /// block). `ostledb serve` runs it before it accepts connections (in two steps, so that
    /// it can size the cache to the memory left between them).
    pub fn warm(&self, stop: &AtomicBool) -> Result<u64, Error> {
        self.prepare(stop)?;
        self.fill_cache(stop)
    }

    /// Build what each phase's key index would otherwise build on first use
    /// ([`crate::store::keys::KeyIndex::prepare`]: the `rank` backend's bitmaps), then map
    /// the value files' pages ([`Store::map_value_pages`]); stop early when `stop` is set.
    pub fn prepare(&self, stop: &AtomicBool) -> Result<(), Error> {
        for phase in self.index().phases().iter().map(|p| p.phase()) {
            if stop.load(Ordering::Relaxed) {
                return Ok(());
            }
            self.keys(phase)?.prepare();
        }
        if !stop.load(Ordering::Relaxed) {
            self.map_value_pages();
        }
        Ok(())
    }

    /// Fill the block cache: the value blocks of each phase in turn, in solving order, until
    /// the cache is nine-tenths full, every block is in, or `stop` is set. Returns the blocks
    /// decoded.
    pub fn fill_cache(&self, stop: &AtomicBool) -> Result<u64, Error> {
        let cache = self.cache();
        let mut decoded = 0;
        for phase in self.index().phases().iter().map(|p| p.phase()) {
            let Some(values) = self.values(phase) else { continue };
            for b in 0..values.blocks() as u64 {
                if stop.load(Ordering::Relaxed) {
                    return Ok(decoded);
                }
                // Stop before the cache would evict what it holds: a block takes at most
                // the average so far (plus room while none is in).
                let per_block = if decoded > 0 { cache.bytes() / decoded as usize } else { 0 };
                if cache.bytes() + per_block > cache.budget() / 10 * 9 {
                    return Ok(decoded);
                }
                // The block itself: a record read could be answered without it (an
                // immediate win in a file that fills them).
                values.decoded(b as u32)?;
                decoded += 1;
            }
        }
        Ok(decoded)
    }
}
