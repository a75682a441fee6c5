//! Shared by the value-layout measurements (`value_layouts`, `value_model_blocks`,
//! `context_entropy`): every `every`-th run of [`RUN`] records of a value file, as the
//! writer stores them (immediate wins filled, losses elided), decoded in parallel.
use ostledb::record::Packed;
use ostledb::store::values::{ValueFile, fill_immediate_wins};
use rayon::prelude::*;

/// Records per sampled run.
pub const RUN: usize = 1 << 16;

/// The sampled runs, in order; run `k` starts at position `k * every * RUN`.
pub fn sampled_runs(vf: &ValueFile, every: usize) -> Vec<Vec<u64>> {
    let k0 = vf.block_positions() as usize;
    assert!(RUN.is_multiple_of(k0), "blocks of {k0} positions do not tile runs of {RUN}");
    let runs = (vf.len() as usize).div_ceil(RUN);
    (0..runs)
        .step_by(every)
        .collect::<Vec<_>>()
        .par_iter()
        .map(|&r| {
            let mut recs = Vec::with_capacity(RUN);
            for b in (r * RUN / k0)..((r + 1) * RUN / k0).min(vf.blocks() as usize) {
                recs.extend(vf.block(b as u32).unwrap());
            }
            fill_immediate_wins(&mut recs);
            recs.iter().map(|&r| Packed(r).elided().0).collect()
        })
        .collect()
}
