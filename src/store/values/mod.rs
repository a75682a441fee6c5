//! Value files: the values of one phase in compressed blocks of consecutive positions,
//! with a block index, so that one lookup decodes one small block.
//!
//! The byte layout is normative and documented in `schema/FORMAT.md` ("Value file").
//! **v4** codes blocks of 256 positions (1,024 in a phase under [`LARGE_PHASE`]
//! positions) with a static context model of the whole phase, stored in the file
//! (`store::value_model`): the whole game is 4.6% smaller than in v3, and a block is
//! decoded only as far as a read needs (about 19 ns a position), so cold queries are
//! about 3x faster. **v5** (the default) codes with the same model, but a block holds
//! several *streams* (8 of 128 positions from [`HUGE_PHASE`], 16 of 64 from
//! [`LARGE_PHASE`], 16 of 256 in a smaller phase),
//! each coded on its own and leanly (no starting state written), behind one index
//! entry: a read decodes one stream, half to a quarter of what v4 decodes, and the
//! shared index entry and lean streams make the file smaller. Readers see each stream
//! as a block. **v1 to v3** (v3 is written with `--value-format 3`, or
//! when loss distances are kept) hold zstd frames: a 72-byte header (64 in v1), the blocks, then the block index
//! (offset, compressed and decoded length, xxh3 checksum of each block). Either way a
//! block of `m` positions decodes to
//!
//! ```text
//! m bytes   base value, low byte      (value code, see FORMAT.md)
//! m bytes   base value, high byte
//! m bytes   special move s (0 = none)
//! e bytes   special value, low byte   (one per position with s != 0, in order)
//! e bytes   special value, high byte
//! ```
//!
//! Planes of like bytes compress far better than interleaved records: the high bytes are
//! almost all zero and most positions have no special move.
//!
//! A v3 file may also leave **immediate wins as "don't care"** (header flag
//! [`FLAG_FILLED_WINS`]): a position whose side to move can remove the opponent's
//! last-but-one piece is won in 1 ply by the rules alone (52.6% of (4,4)), so its stored
//! record is not read: the writer fills it with whatever compresses best (the base value
//! of the position before it, no special move) and the reader answers `Win(1)` for it
//! from the position ([`is_immediate_win`](crate::game::moves::is_immediate_win)). That takes (4,4) from 1.55 to 1.47 bits
//! per position at the same block size and level.
//!
//! A v2 file may **elide loss distances** (header flag [`FLAG_ELIDED_LOSSES`], what
//! `pack` writes by default): every loss is stored as code 1 ([`ELIDED_LOSS`](crate::record::ELIDED_LOSS)). The
//! distance is not lost: a lost node's children are all won, with exact distances, and
//! its distance is one more than the largest of theirs, so one ply of search gives it
//! back (`probe::resolve_record`). That halves the entropy of the values: (4,4)
//! goes from 2.5 to about 1.5 bits per position. Readers of single positions resolve
//! on the fly; readers of whole phases resolve a phase group at once
//! (`working::group::load_phase`).
//!
//! The code divides where the layouts do, the writer apart from the readers:
//!
//! * `mod.rs` (here): the format's constants, file names and defaults.
//! * `zstd_frames`: v1 to v3, blocks as zstd frames, one index entry each.
//! * `coded`: v4 and v5, blocks coded with the phase's context model, v5's streams.
//! * `read`: [`ValueFile`], an open file of any version: its header checked, its
//!   records read, its blocks decoded and cached.
//! * `stream`: whole phases in index order ([`Stream`], [`load_raw`] and the like).
//! * `write`: the writer ([`write()`], [`WriteOptions`]): v3, v4 and v5.

mod coded;
mod read;
mod stream;
mod write;
mod zstd_frames;

pub use read::ValueFile;
pub use stream::{Stream, load_base_raw, load_file, load_raw};
pub use write::{InMemory, Records, Summary, WriteOptions, fill_immediate_wins, write, write_values};

use crate::game::Phase;
use crate::record::Packed;
use crate::record::value::win;

/// The first 8 bytes of a value file.
pub const MAGIC: [u8; 8] = *b"OSTLEVZB";
/// The newest format version this code writes: v5, which it writes unless v4 or v3 is
/// asked for ([`DEFAULT_FORMAT`], [`WriteOptions::format`]; v3 also when loss distances
/// are kept).
pub const VERSION: u32 = 5;
/// The format versions this code reads.
pub const VERSIONS: std::ops::RangeInclusive<u32> = 1..=5;
/// Header size in bytes (versions 2 to 5).
pub const HEADER_LEN: usize = 72;
/// Header size in bytes of a version 1 file.
pub const HEADER_LEN_V1: usize = 64;
/// Header flag (v2, bit 0 of the flags word): every loss is stored as [`ELIDED_LOSS`](crate::record::ELIDED_LOSS).
pub const FLAG_ELIDED_LOSSES: u32 = 1;
/// Header flag (v3, bit 1 of the flags word): the records of immediate wins are not
/// stored values but filler; a reader answers `Win(1)` for them ([`is_immediate_win`](crate::game::moves::is_immediate_win)).
pub const FLAG_FILLED_WINS: u32 = 2;
/// Size of one block index entry in bytes (v1 to v3).
pub const ENTRY_LEN: usize = 24;
/// Size of one block index entry in bytes (v4: the coded length, u16, and the low 32
/// bits of the XXH3-64 of the block's bytes).
pub const ENTRY_LEN_V4: usize = 6;
/// Positions per block of v3 unless asked otherwise: half the 65,536 of v1 and v2, so a
/// cold probe decodes half as much, for 2% more bytes (docs/measurements.md, "Value blocks").
pub const DEFAULT_BLOCK: u32 = 1 << 15;
/// Positions per block of v4 unless asked otherwise, in a phase of at least
/// [`LARGE_PHASE`] positions (docs/measurements.md, "Value blocks"): a cold read decodes a
/// quarter of a block on average, and the large phases are where cold queries read most.
pub const DEFAULT_BLOCK_V4: u32 = 1 << 8;
/// Positions per block of v4 unless asked otherwise, in a smaller phase ((4,4) on the
/// 5x5 board): it stays within 3.4% of v2's size, where 256 would cost it 19%, and its
/// cold queries read a third as many blocks as the larger phases'.
pub const DEFAULT_BLOCK_V4_SMALL: u32 = 1 << 10;
/// Phases of at least this many positions get [`DEFAULT_BLOCK_V4`].
pub const LARGE_PHASE: u64 = 1 << 28;

/// Positions per block of a `count`-position phase's value file of version `format`
/// unless asked otherwise.
pub fn default_block(format: u32, count: u64) -> u32 {
    match format {
        4 if count >= LARGE_PHASE => DEFAULT_BLOCK_V4,
        4 => DEFAULT_BLOCK_V4_SMALL,
        5 if count >= HUGE_PHASE => DEFAULT_STREAM_V5,
        5 if count >= LARGE_PHASE => DEFAULT_STREAM_V5_LARGE,
        5 => DEFAULT_STREAM_V5_SMALL,
        _ => DEFAULT_BLOCK,
    }
}

/// Positions per stream of v5 unless asked otherwise, in a phase of at least
/// [`HUGE_PHASE`] positions ((5,5)): a cold read decodes 64 positions on average, half as
/// many as in v4 (docs/measurements.md, "Value blocks").
pub const DEFAULT_STREAM_V5: u32 = 1 << 7;
/// Phases of at least this many positions get [`DEFAULT_STREAM_V5`] in v5.
pub const HUGE_PHASE: u64 = 1 << 30;
/// Positions per stream of v5 unless asked otherwise, in a phase of [`LARGE_PHASE`] to
/// [`HUGE_PHASE`] positions ((5,4) and (4,5)): a cold read decodes 32 positions on
/// average; they are 9.4% larger than in streams of 128, which the whole game affords
/// ((5,5) keeps 128: 981,167,798 bytes in all against v2's 986,873,033; docs/measurements.md,
/// "Coded streams decoded where they are read").
pub const DEFAULT_STREAM_V5_LARGE: u32 = 1 << 6;
/// Positions per stream of v5 unless asked otherwise, in a smaller phase ((4,4) on the
/// 5x5 board): a quarter of what a read of v4's blocks of 1,024 decodes, within 4.3% of
/// v2's size.
pub const DEFAULT_STREAM_V5_SMALL: u32 = 1 << 8;

/// Streams per block of v5 unless asked otherwise, for a `count`-position phase: 8 of
/// 128 positions in the largest phases, 16 of 64 in large ones, 16 of 256 in smaller
/// ones. A read takes the whole block (a few hundred bytes) and checks its checksum, and
/// decodes one stream.
pub fn default_streams(count: u64) -> u32 {
    if count >= HUGE_PHASE { 8 } else { 16 }
}
/// The value file version written unless asked otherwise: v5 (v4's model, with several
/// lean streams a block, so a read decodes half to a quarter as much for fewer bytes;
/// docs/measurements.md, "Value blocks"). A file that keeps loss distances is v3.
pub const DEFAULT_FORMAT: u32 = 5;
/// Largest positions per block of v4 (of v5: per block, all its streams together): a
/// symbol codes in at most 15 bits, so a block of 8,192 positions (three symbols each at
/// most) fits the u16 length of its index entry.
pub const MAX_BLOCK_V4: u32 = 1 << 13;
/// Streams per block of v5 at most.
pub const MAX_STREAMS: u32 = 16;
/// Where a v5 header's flags hold the streams per block (bits 8..16).
const STREAMS_SHIFT: u32 = 8;
/// The zstd level unless asked otherwise: on (4,4), level 19 packs 4x slower than 15
/// for 2.5% fewer bytes (docs/measurements.md, "Value blocks").
pub const DEFAULT_LEVEL: i32 = 15;
/// The highest zstd level taken (`pack --level`, Python's `solve(level=...)`): zstd's own.
pub const MAX_LEVEL: i32 = 22;
/// zstd's minimum match length for the value blocks (at levels that take it; the level's
/// own is 3): measured on blocks of 32,768 at level 15, 5 compresses 18-22% faster and
/// decodes 7-13% faster for 0.2-0.7% more bytes (docs/measurements.md, "Value blocks").
/// Readers do not depend on it.
pub const MIN_MATCH: u32 = 5;
/// Largest positions per block a reader accepts (a bound on what a header may ask it
/// to allocate).
pub const MAX_BLOCK: u32 = 1 << 22;

/// The file name of a phase's values, e.g. `values-4-4.zst`.
pub fn file_name(phase: Phase) -> String {
    format!("values-{}-{}.zst", phase.player, phase.opponent)
}

/// The record a reader answers for an immediate win: `Win(1)` for every node (a capture
/// is never a forbidden move, so no node of the position lacks it).
pub fn immediate_win_record() -> Packed {
    Packed::new(win(1), 0, 0)
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;
    use std::sync::Arc;

    use super::*;
    use crate::file::{checksum, le_u32};
    use crate::game::Geometry;
    use crate::game::moves::is_immediate_win;
    use crate::index::{PhaseIndex, PlayerSets};
    use crate::record::{ELIDED_LOSS, PhaseValues};
    use crate::store::cache::{decode_block, encode_block};

    fn tmpdir(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("ostledb-values-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    fn sample(n: u64) -> Vec<u64> {
        (0..n)
            .map(|i| {
                let base = i * 7 % 300;
                if i % 3 == 0 { base | ((i % 250) << 16) | ((i % 31 + 1) << 32) } else { base }
            })
            .collect()
    }

    #[test]
    fn blocks_round_trip() {
        let r = sample(1000);
        assert_eq!(decode_block(&encode_block(&r), r.len()).unwrap(), r);
        assert_eq!(decode_block(&encode_block(&[]), 0).unwrap(), Vec::<u64>::new());
        let mut enc = encode_block(&r);
        enc.pop();
        assert!(decode_block(&enc, r.len()).is_none());
    }

    #[test]
    fn files_round_trip_for_every_block_size() {
        let g = Geometry::new(3, 3).unwrap();
        let ph = Phase::new(2, 2);
        let dir = tmpdir("rt");
        for n in [0u64, 1, 99, 100, 101, 1000] {
            let vals = PhaseValues::from_raw(ph, sample(n));
            for block in [1u32, 7, 100, 4096] {
                let s = write_values(
                    &dir,
                    &g,
                    &vals,
                    WriteOptions { format: 3, block, streams: 0, level: 3, elide_losses: false, filled_wins: false },
                )
                .unwrap();
                assert_eq!(s.blocks as u64, n.div_ceil(block as u64));
                let f = ValueFile::open(&dir, &g, ph, n).unwrap();
                f.map_pages();
                assert!(!f.prefetches(), "a zstd file has nothing to prefetch");
                for i in 0..n + 2 {
                    f.prefetch_index(i);
                    f.prefetch_block(i);
                }
                for i in (0..n).rev() {
                    assert_eq!(f.record(i).unwrap(), vals.packed(i));
                }
                assert!(f.record(n).is_err());
                assert_eq!(f.check().unwrap(), s.len);
                assert_eq!(load_raw(&dir, &g, ph, n).unwrap().raw(), vals.raw());
            }
        }
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn coded_files_round_trip_and_every_flipped_byte_is_an_error_never_a_wrong_answer() {
        let g = Geometry::new(3, 3).unwrap();
        let ph = Phase::new(2, 2);
        let dir = tmpdir("v4");
        // v4 (one stream a block) and v5 (1, 2, 3 and 16 lean streams a block).
        let shapes = [(4u32, 1u32), (5, 1), (5, 2), (5, 3), (5, 16)];
        for n in [0u64, 1, 99, 1000, 5000] {
            let vals = PhaseValues::from_raw(ph, sample(n));
            let want = |i: u64| vals.packed(i).elided();
            for (format, streams) in shapes {
                for block in [1u32, 7, 100, 512, 8192 / streams] {
                    let opts =
                        WriteOptions { format, block, streams, level: 3, elide_losses: true, filled_wins: false };
                    let s = write_values(&dir, &g, &vals, opts).unwrap();
                    let stored = n.div_ceil(block as u64 * streams as u64);
                    assert_eq!((s.version, s.blocks as u64, s.streams), (format, stored, streams));
                    let f = ValueFile::open(&dir, &g, ph, n).unwrap();
                    assert!(f.version() == format && f.elides_losses());
                    assert_eq!(f.blocks() as u64, n.div_ceil(block as u64));
                    // Mapping the pages and prefetching (past the end too, the last stored
                    // block included) change no answer.
                    f.map_pages();
                    for i in (0..n + 2).rev() {
                        f.prefetch_index(i);
                    }
                    for i in (0..n + 2).rev() {
                        f.prefetch_block(i);
                    }
                    for i in (0..n).rev() {
                        assert_eq!(f.record(i).unwrap(), want(i));
                    }
                    // In order, through a file of its own: each block is decoded a part
                    // at a time, further as reads go on (from its start each time, so
                    // not over every position of the large blocks).
                    let f = ValueFile::open(&dir, &g, ph, n).unwrap();
                    for i in 0..n.min(1500) {
                        assert_eq!(f.record(i).unwrap(), want(i));
                    }
                    assert!(f.record(n).is_err());
                    assert_eq!(f.check().unwrap(), s.len);
                    let all = load_file(&f).unwrap();
                    assert!((0..n).all(|i| all.packed(i) == want(i)));
                }
            }
        }
        // Block 0: the format's default for the phase's size.
        for format in [3, 4, 5] {
            let vals = PhaseValues::from_raw(ph, sample(3000));
            let opts = WriteOptions { format, block: 0, streams: 0, level: 3, elide_losses: true, filled_wins: false };
            let s = write_values(&dir, &g, &vals, opts).unwrap();
            assert_eq!(s.block, default_block(format, 3000));
            assert_eq!(s.streams, if format == 5 { default_streams(3000) } else { 1 });
            assert_eq!(ValueFile::open(&dir, &g, ph, 3000).unwrap().block_positions(), s.block);
        }
        assert_eq!(
            [default_block(3, 1), default_block(4, LARGE_PHASE - 1), default_block(4, LARGE_PHASE)],
            [DEFAULT_BLOCK, DEFAULT_BLOCK_V4_SMALL, DEFAULT_BLOCK_V4]
        );
        assert_eq!(
            [default_block(5, LARGE_PHASE - 1), default_block(5, LARGE_PHASE), default_block(5, HUGE_PHASE)],
            [DEFAULT_STREAM_V5_SMALL, DEFAULT_STREAM_V5_LARGE, DEFAULT_STREAM_V5]
        );
        assert_eq!(
            [default_streams(LARGE_PHASE - 1), default_streams(LARGE_PHASE), default_streams(HUGE_PHASE)],
            [16, 16, 8]
        );
        // Every byte of a file of a few blocks flipped: refused at open, by check, or by
        // the block read; any record read is the right one.
        for (format, n, block, streams) in [(4, 5000, 1024, 1), (5, 1200, 100, 4)] {
            let vals = PhaseValues::from_raw(ph, sample(n));
            let opts = WriteOptions { format, block, streams, level: 3, elide_losses: true, filled_wins: false };
            write_values(&dir, &g, &vals, opts).unwrap();
            let path = dir.join(file_name(ph));
            let good = std::fs::read(&path).unwrap();
            for at in 0..good.len() {
                let mut bad = good.clone();
                bad[at] ^= 1 << (at % 8);
                std::fs::write(&path, &bad).unwrap();
                let Ok(f) = ValueFile::open(&dir, &g, ph, n) else { continue };
                assert!(f.check().is_err(), "v{format}: byte {at} flipped: check passes");
                let mut refused = false;
                // Last first: each block is decoded once, whole.
                for i in (0..n).rev() {
                    match f.record(i) {
                        Ok(r) => assert_eq!(r, vals.packed(i).elided(), "v{format}: byte {at} flipped: a wrong answer"),
                        Err(_) => refused = true,
                    }
                }
                assert!(refused, "v{format}: byte {at} flipped: every record read");
            }
        }
        let vals = PhaseValues::from_raw(ph, sample(5000));
        // Loss distances cannot be kept in v4 or v5; v5 takes 1..=16 streams, and a block
        // of at most 8,192 positions with all of them; v3 and v4 one stream.
        for format in [4, 5] {
            let opts =
                WriteOptions { format, block: 256, streams: 0, level: 3, elide_losses: false, filled_wins: false };
            let e = write_values(&dir, &g, &vals, opts).unwrap_err().to_string();
            assert!(e.contains(&format!("v{format} stores losses elided")), "{e}");
        }
        for (format, block, streams) in [(5, 100, 17), (5, 1024, 9), (4, 100, 2), (3, 100, 2)] {
            let opts = WriteOptions { format, block, streams, level: 3, elide_losses: true, filled_wins: false };
            assert!(write_values(&dir, &g, &vals, opts).is_err(), "v{format}, {block} x {streams}");
        }
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn eliding_keeps_wins_and_draws_and_marks_every_loss() {
        let g = Geometry::new(3, 3).unwrap();
        let ph = Phase::new(2, 2);
        let dir = tmpdir("elide");
        let vals = PhaseValues::from_raw(ph, sample(5000));
        let s = write_values(
            &dir,
            &g,
            &vals,
            WriteOptions { format: 3, block: 512, streams: 0, level: 3, elide_losses: true, filled_wins: false },
        )
        .unwrap();
        assert!(s.elided_losses);
        let f = ValueFile::open(&dir, &g, ph, 5000).unwrap();
        assert!(f.elides_losses() && f.version() == 3);
        let (mut losses, mut kept) = (0, 0);
        for i in 0..vals.len() {
            let (r, got) = (vals.packed(i), f.record(i).unwrap());
            assert_eq!(got, r.elided());
            assert!(!got.has_loss_distance());
            if r.base() & 1 == 1 {
                losses += 1;
                assert_eq!(got.base(), ELIDED_LOSS);
                assert!(got.needs_resolving());
            } else {
                kept += 1;
                assert_eq!(got.base(), r.base(), "wins and draws are stored as they are");
            }
        }
        assert!(losses > 100 && kept > 100);
        // A file whose header says "elided" but whose blocks hold loss distances is
        // damaged: its blocks are refused.
        write_values(
            &dir,
            &g,
            &vals,
            WriteOptions { format: 3, block: 512, streams: 0, level: 3, elide_losses: false, filled_wins: false },
        )
        .unwrap();
        let path = dir.join(file_name(ph));
        let mut bytes = std::fs::read(&path).unwrap();
        assert_eq!(le_u32(&bytes, 56), 0);
        bytes[56] = FLAG_ELIDED_LOSSES as u8;
        let sum = checksum(&bytes[..64]);
        bytes[64..72].copy_from_slice(&sum.to_le_bytes());
        std::fs::write(&path, &bytes).unwrap();
        let f = ValueFile::open(&dir, &g, ph, 5000).unwrap();
        let e = f.record(0).unwrap_err().to_string();
        assert!(e.contains("stores a loss distance"), "{e}");
        // An unknown flag (bit 2: none is defined) is refused at open.
        bytes[56] = 4;
        let sum = checksum(&bytes[..64]);
        bytes[64..72].copy_from_slice(&sum.to_le_bytes());
        std::fs::write(&path, &bytes).unwrap();
        let e = ValueFile::open(&dir, &g, ph, 5000).unwrap_err().to_string();
        assert!(e.contains("unknown header flags"), "{e}");
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn immediate_wins_are_filled_on_writing_and_answered_win_in_1_on_reading() {
        let g = Geometry::new(3, 3).unwrap();
        let ph = Phase::new(2, 2);
        let index = PhaseIndex::build(&g, ph, Arc::new(PlayerSets::build(&g, 2)));
        let n = index.len();
        let dir = tmpdir("fill");
        let real = sample(n);
        let won: Vec<bool> = (0..n).map(|i| is_immediate_win(&g, &index.position_at(i))).collect();
        assert!(won.iter().any(|&w| w) && won.iter().any(|&w| !w));
        // The writer tells immediate wins by their value, Win(1).
        let real: Vec<u64> = real
            .iter()
            .zip(&won)
            .map(|(&r, &w)| {
                if w {
                    immediate_win_record().0
                } else if Packed(r).base() == win(1) {
                    r + 2
                } else {
                    r
                }
            })
            .collect();
        let mut filled = real.clone();
        fill_immediate_wins(&mut filled);
        for i in 0..n as usize {
            if won[i] {
                assert_eq!(Packed(filled[i]).special_move(), 0, "filler has no special move");
            } else {
                assert_eq!(filled[i], real[i], "only immediate wins are filled");
            }
        }
        for block in [1u32, 5, 64, 100_000] {
            let opts = WriteOptions { format: 3, block, streams: 0, level: 3, elide_losses: false, filled_wins: true };
            write_values(&dir, &g, &PhaseValues::from_raw(ph, filled.clone()), opts).unwrap();
            let f = ValueFile::open(&dir, &g, ph, n).unwrap();
            assert!(f.fills_immediate_wins() && f.version() == 3);
            let want = |i: u64| Packed(real[i as usize]);
            for i in 0..n {
                assert_eq!(f.record(i).unwrap(), want(i));
                let image = index.position_at(i).transformed(&g, (i % 8) as usize);
                assert_eq!(f.record_for(&image, i).unwrap(), want(i));
            }
            let all = load_file(&f).unwrap();
            assert!((0..n).all(|i| all.packed(i) == want(i)));
        }
        // A v2 file with the flag is refused: v2 has no such flag.
        let path = dir.join(file_name(ph));
        let mut bytes = std::fs::read(&path).unwrap();
        bytes[8..12].copy_from_slice(&2u32.to_le_bytes());
        let sum = checksum(&bytes[..64]);
        bytes[64..72].copy_from_slice(&sum.to_le_bytes());
        std::fs::write(&path, &bytes).unwrap();
        let e = ValueFile::open(&dir, &g, ph, n).unwrap_err().to_string();
        assert!(e.contains("unknown header flags"), "{e}");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
