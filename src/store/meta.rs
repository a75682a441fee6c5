//! The database's metadata file, `ostledb.meta`: what the database holds (board, phases,
//! counts, value files and their sizes, key indexes). It is written last, atomically, so
//! a directory without it is not a database: an interrupted build never opens as valid.
//!
//! The body is encoded with bincode 2 in one fixed configuration ([`config`]): little
//! endian, fixed-width integers, lengths as u64, enum variants as u32, a 1 MiB limit on
//! decoding. `schema/FORMAT.md` gives the bytes this yields, field by field.
//!
//! Format 3 adds one field at the end of the body, the generation: the value and key
//! files of the database are in its subdirectory `gen-N` (see
//! [`crate::store::directory`]); formats 1 and 2 (generation 0) keep them beside the
//! metadata.

use std::path::Path;

use crate::error::{Error, FileKind, checksum_mismatch, corrupt, io};
use crate::file::{checksum, header_version, le_u32, le_u64, read_capped, write_atomic};

/// The file name of the metadata inside the database directory.
pub const FILE: &str = "ostledb.meta";
/// The first 8 bytes of the metadata file.
pub const MAGIC: [u8; 8] = *b"OSTLEDB\x00";
/// Versions of the database format this code reads (it writes the last).
pub const VERSIONS: std::ops::RangeInclusive<u32> = 1..=5;
/// The version this code writes.
pub const VERSION: u32 = 5;
/// Header length.
pub const HEADER_LEN: usize = 32;
/// The largest body a reader accepts.
pub const MAX_BODY: usize = 1 << 20;

/// The one bincode configuration of ostledb: little endian, fixed-width integers (u64
/// lengths, u32 enum tags), at most 1 MiB decoded.
pub fn config() -> bincode::config::Configuration<
    bincode::config::LittleEndian,
    bincode::config::Fixint,
    bincode::config::Limit<MAX_BODY>,
> {
    bincode::config::standard().with_little_endian().with_fixed_int_encoding().with_limit::<MAX_BODY>()
}

/// One phase of the database.
#[derive(Clone, Debug, PartialEq, Eq, bincode::Encode, bincode::Decode, serde::Serialize)]
pub struct PhaseMeta {
    /// Pieces of the side to move.
    pub player: u8,
    /// Pieces of the other side.
    pub opponent: u8,
    /// Positions (canonical, by dense index).
    pub positions: u64,
    /// Size of its value file in bytes.
    pub value_bytes: u64,
    /// Positions the side to move wins.
    pub win: u64,
    /// Positions the side to move loses.
    pub loss: u64,
    /// Drawn positions.
    pub draw: u64,
}

impl PhaseMeta {
    /// The phase this entry describes (its `Display` is `(4,4)`).
    pub fn phase(&self) -> crate::game::Phase {
        crate::game::Phase::new(self.player as u32, self.opponent as u32)
    }
}

/// The metadata of a database.
#[derive(Clone, Debug, PartialEq, Eq, bincode::Encode, bincode::Decode, serde::Serialize)]
pub struct Meta {
    /// Database format version (the header's, repeated).
    pub format: u32,
    /// What wrote it, e.g. "ostledb 0.1.0".
    pub writer: String,
    /// Board side.
    pub side: u8,
    /// Pieces per side at the start.
    pub start_pieces: u8,
    /// Every phase with at most this many pieces on the board is present.
    pub max_pieces: u8,
    /// Positions per value block.
    pub block_positions: u32,
    /// The zstd level the blocks were written with.
    pub zstd_level: i32,
    /// The key indexes present, by backend name; the first is the default for queries.
    pub backends: Vec<String>,
    /// The phases, in solving order.
    pub phases: Vec<PhaseMeta>,
    /// Which subdirectory holds the value and key files: `gen-N`, or the database
    /// directory itself for 0 (formats 1 and 2, which have no such field). Every write
    /// makes a new one and switches to it by replacing this file.
    pub generation: u64,
}

/// The body of formats 1 and 2: [`Meta`] without the generation.
#[derive(bincode::Decode)]
struct MetaV2 {
    format: u32,
    writer: String,
    side: u8,
    start_pieces: u8,
    max_pieces: u8,
    block_positions: u32,
    zstd_level: i32,
    backends: Vec<String>,
    phases: Vec<PhaseMeta>,
}

impl From<MetaV2> for Meta {
    fn from(m: MetaV2) -> Meta {
        Meta {
            format: m.format,
            writer: m.writer,
            side: m.side,
            start_pieces: m.start_pieces,
            max_pieces: m.max_pieces,
            block_positions: m.block_positions,
            zstd_level: m.zstd_level,
            backends: m.backends,
            phases: m.phases,
            generation: 0,
        }
    }
}

/// Encode the whole metadata file (format 3 only: the generation has no place in the
/// older ones).
pub fn encode(meta: &Meta) -> Result<Vec<u8>, Error> {
    if meta.format != VERSION {
        return Err(Error::InvalidArgument(format!("cannot write database format version {}", meta.format)));
    }
    let body = bincode::encode_to_vec(meta, config())
        .map_err(|e| Error::InvalidArgument(format!("cannot encode the metadata: {e}")))?;
    let mut out = Vec::with_capacity(HEADER_LEN + body.len());
    out.extend_from_slice(&MAGIC);
    out.extend_from_slice(&meta.format.to_le_bytes());
    out.extend_from_slice(&(body.len() as u32).to_le_bytes());
    out.extend_from_slice(&checksum(&body).to_le_bytes());
    let h = checksum(&out[..24]);
    out.extend_from_slice(&h.to_le_bytes());
    out.extend_from_slice(&body);
    Ok(out)
}

/// Decode a metadata file's bytes (`path` names it in errors).
pub fn decode(path: &Path, bytes: &[u8]) -> Result<Meta, Error> {
    if bytes.len() < HEADER_LEN {
        return Err(corrupt(path, format!("{} bytes, shorter than its {HEADER_LEN}-byte header", bytes.len())));
    }
    // Header checksum: bytes 0..24 in every version this build reads.
    let intact = |h: &[u8]| checksum(&h[..24]) == le_u64(h, 24);
    let version = header_version(path, &bytes[..HEADER_LEN], &MAGIC, VERSIONS, FileKind::Metadata, intact)?;
    if !intact(bytes) {
        return Err(checksum_mismatch(path, FileKind::Metadata, "header", None, None));
    }
    let len = le_u32(bytes, 12) as usize;
    if len > MAX_BODY || bytes.len() != HEADER_LEN + len {
        return Err(corrupt(path, format!("{} bytes long, its header says {}", bytes.len(), HEADER_LEN + len)));
    }
    let body = &bytes[HEADER_LEN..];
    if checksum(body) != le_u64(bytes, 16) {
        return Err(checksum_mismatch(
            path,
            FileKind::Metadata,
            "metadata",
            None,
            Some((HEADER_LEN as u64, bytes.len() as u64)),
        ));
    }
    let bad = |e: bincode::error::DecodeError| corrupt(path, format!("metadata: {e}"));
    let (meta, used): (Meta, usize) = if version < 3 {
        let (m, used): (MetaV2, usize) = bincode::decode_from_slice(body, config()).map_err(bad)?;
        (m.into(), used)
    } else {
        bincode::decode_from_slice(body, config()).map_err(bad)?
    };
    if used != body.len() {
        return Err(corrupt(path, "metadata followed by stray bytes"));
    }
    if meta.format != version {
        return Err(corrupt(path, "metadata and header disagree on the format version"));
    }
    Ok(meta)
}

/// Read the metadata of the database at `dir`; `Ok(None)` when there is none. At most
/// [`HEADER_LEN`] + [`MAX_BODY`] bytes are read: a longer file is damage, and anything
/// but a regular file is refused unread ([`open_regular`](crate::file::open_regular)).
pub fn read(dir: &Path) -> Result<Option<Meta>, Error> {
    let path = dir.join(FILE);
    let max = HEADER_LEN + MAX_BODY;
    match read_capped(&path, max as u64) {
        Ok(b) if b.len() > max => {
            Err(corrupt(&path, format!("longer than {max} bytes, the most a metadata file can be")))
        }
        Ok(b) => decode(&path, &b).map(Some),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => {
            let fix = match e.kind() {
                std::io::ErrorKind::PermissionDenied => "give this user read access to it, or rebuild it",
                _ => "move it away and rebuild it",
            };
            let db = dir.display();
            let advice = format!("{e}; {fix} with `ostledb repair --db {db}` (from the value files' own headers)");
            Err(io(&path)(std::io::Error::new(e.kind(), advice)))
        }
    }
}

/// Write the metadata of the database at `dir` (atomically).
pub fn write(dir: &Path, meta: &Meta) -> Result<(), Error> {
    let bytes = encode(meta)?;
    write_atomic(&dir.join(FILE), |w| std::io::Write::write_all(w, &bytes))
}

#[cfg(test)]
mod tests {
    use super::*;

    pub(crate) fn sample() -> Meta {
        Meta {
            format: 5,
            writer: "ostledb 0.1.0".into(),
            side: 3,
            start_pieces: 3,
            max_pieces: 6,
            block_positions: 4096,
            zstd_level: 19,
            backends: vec!["rank".into(), "sorted".into()],
            phases: vec![PhaseMeta {
                player: 2,
                opponent: 2,
                positions: 10,
                value_bytes: 99,
                win: 5,
                loss: 4,
                draw: 1,
            }],
            generation: 7,
        }
    }

    #[test]
    fn round_trip_and_exact_bytes() {
        let m = sample();
        let bytes = encode(&m).unwrap();
        assert_eq!(decode(Path::new("x"), &bytes).unwrap(), m);
        let body = &bytes[HEADER_LEN..];
        // format u32, then the writer string as u64 length + bytes, then side, start, max.
        assert_eq!(&body[..4], &5u32.to_le_bytes());
        assert_eq!(&bytes[8..12], &5u32.to_le_bytes());
        assert_eq!(&body[4..12], &13u64.to_le_bytes());
        assert_eq!(&body[12..25], b"ostledb 0.1.0");
        assert_eq!(&body[25..28], &[3, 3, 6]);
        assert_eq!(&body[28..32], &4096u32.to_le_bytes());
        assert_eq!(&body[32..36], &19i32.to_le_bytes());
        assert_eq!(&body[36..44], &2u64.to_le_bytes());
        // The generation is the body's last 8 bytes.
        assert_eq!(&body[body.len() - 8..], &7u64.to_le_bytes());
        // Every single flipped byte or truncation is refused, never a panic.
        for i in 0..bytes.len() {
            let mut b = bytes.clone();
            b[i] ^= 0x41;
            assert!(decode(Path::new("x"), &b).is_err(), "flip at {i}");
            assert!(decode(Path::new("x"), &bytes[..i]).is_err(), "truncated to {i}");
        }
    }
}
