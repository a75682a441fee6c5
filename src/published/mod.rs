//! The published text format of the earlier complete solution of Ostle (OSTLE.md section
//! 5, described as this code writes it in `schema/PUBLISHED.md`): export a database to
//! it, compute its digest, and import such files into a database.
//!
//! One line per canonical position, in ascending order of the 55-bit code over every
//! phase with at most `n` pieces, 1,000,000 lines per file:
//!
//! ```text
//! MAAA+f,checkmate                        an immediate-win position
//! PABgTkBU,12,,13,,,...                   the base-64 code, then 25 fields: field j is
//!                                         the published value v = N - 1 of node (position, j),
//!                                         empty when that node is trivial
//! ```
//!
//! A draw is written `0` (what the published query tool reads as a draw). The published
//! value of a win or loss in `N` plies is `N - 1`, so even values are wins.

pub mod export;
pub mod export_bfs;
pub mod export_files;
pub mod fingerprint;
pub mod import;
pub mod resolved;

use crate::game::Geometry;
pub use crate::game::forbidden::nontrivial_nodes;
use crate::game::moves::is_immediate_win;
use crate::game::notation::push_base64;
use crate::game::position::Position;
use crate::record::{Packed, Val};

/// Lines per published file (the last file of a set is shorter).
pub const LINES_PER_FILE: u64 = 1_000_000;
/// Fields after the code on a retrograde line: the node without a forbidden move and at
/// most 24 forbidden moves.
pub const FIELDS: usize = 25;
/// The word that follows the code of an immediate-win position.
pub const CHECKMATE: &str = "checkmate";

/// What a published file holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Kind {
    /// Fewest plies from the initial position, per node.
    Bfs,
    /// Values, per node.
    Retrograde,
}

impl Kind {
    /// The word in the file name.
    pub fn name(self) -> &'static str {
        match self {
            Kind::Bfs => "bfs",
            Kind::Retrograde => "retrograde",
        }
    }
}

/// The name of published file number `number` (0-based) of a set with at most
/// `max_pieces` pieces, e.g. `ostle_8_retrograde_output0000.txt`.
pub fn file_name(max_pieces: u32, kind: Kind, number: u64) -> String {
    format!("ostle_{max_pieces}_{}_output{number:04}.txt", kind.name())
}

/// Parse a published file name: `(max pieces, kind, number)`.
pub fn parse_file_name(name: &str) -> Option<(u32, Kind, u64)> {
    let rest = name.strip_prefix("ostle_")?.strip_suffix(".txt")?;
    let (n, rest) = rest.split_once('_')?;
    let (kind, number) = if let Some(d) = rest.strip_prefix("retrograde_output") {
        (Kind::Retrograde, d)
    } else {
        (Kind::Bfs, rest.strip_prefix("bfs_output")?)
    };
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    if !digits(n) || number.len() != 4 || !digits(number) {
        return None;
    }
    Some((n.parse().ok()?, kind, number.parse().ok()?))
}

/// The published value of a value code (see `schema/FORMAT.md`): `0` for a draw, `N - 1`
/// for a win or loss in `N` plies. `None` for a win or loss in one ply, which would be
/// written `0` like a draw: the published format has no way to write them apart from a
/// checkmate line (a non-trivial node of a position that is not an immediate win never
/// has such a value in Ostle); and `None` for code 1, a loss in 0 plies (`N - 1` would be
/// -1), which is also how a value file stores an elided loss not yet resolved. `None`
/// too for a win or loss longer than `MAX_DIST` plies, which no file of ostledb holds and
/// [`parse_line`] refuses: what is written can always be read back (found by fuzzing).
#[inline]
pub fn published_value(code: Val) -> Option<u32> {
    match code {
        0 => Some(0),
        1..=3 => None,
        c => Some(c as u32 / 2 - 1).filter(|&v| v < crate::record::value::MAX_DIST),
    }
}

/// The value code of a published value (the inverse of [`published_value`]).
#[inline]
pub fn value_code(v: u32) -> Option<Val> {
    if v == 0 {
        return Some(0);
    }
    // v = N - 1; a win (N odd, v even) is 2N, a loss (N even, v odd) 2N + 1.
    let n = v.checked_add(1)?;
    let code = 2 * n as u64 + (v % 2) as u64;
    Val::try_from(code).ok()
}

/// Why a record cannot be written as a published line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Unwritable {
    /// The node.
    pub node: usize,
    /// Its value code.
    pub code: Val,
}

/// Append the retrograde line of canonical position `pos` with packed record `record`
/// (see `schema/FORMAT.md`), with its final newline, to `out`.
pub fn write_line(geom: &Geometry, pos: &Position, record: u64, out: &mut String) -> Result<(), Unwritable> {
    let reached = (!is_immediate_win(geom, pos)).then(|| nontrivial_nodes(geom, pos));
    write_line_of(pos, record, reached, out)
}

/// [`write_line`] for a caller that has worked out what the line needs already:
/// `reached` is `None` for an immediate-win position, else its non-trivial nodes as a
/// mask of forbidden indices (`nontrivial_nodes`).
pub fn write_line_of(pos: &Position, record: u64, reached: Option<u32>, out: &mut String) -> Result<(), Unwritable> {
    push_base64(pos.code(), out);
    let Some(reached) = reached else {
        out.push(',');
        out.push_str(CHECKMATE);
        out.push('\n');
        return Ok(());
    };
    for j in 0..FIELDS {
        out.push(',');
        if reached >> j & 1 == 0 {
            continue;
        }
        let code = Packed(record).node_val(j);
        let v = published_value(code).ok_or(Unwritable { node: j, code })?;
        push_u32(out, v);
    }
    out.push('\n');
    Ok(())
}

/// The nodes of canonical position `pos` that the published solver's breadth-first
/// search counts as non-trivial, as a mask of forbidden indices: those a move leads to
/// from some position of the search's phases (every phase with at most `max_pieces`
/// pieces), immediate wins included (its `count_nontrivial_node_and_make_bitvector(false)`):
/// [`nontrivial_nodes`], and node 0 when a move that removed a piece leads to `pos` from
/// a position of those phases (one with a side of five pieces losing one). Its BFS files
/// write a field for exactly these nodes: the depth, or `-1` when the search did not
/// reach it.
pub fn bfs_nontrivial_nodes(geom: &Geometry, pos: &Position, max_pieces: u32) -> u32 {
    let mut mask = nontrivial_nodes(geom, pos);
    if mask & 1 == 0 {
        let live = geom.min_pieces()..=geom.start_pieces();
        crate::game::moves::unmoves_removing(geom, pos, |u| {
            let p = u.pred.phase();
            if live.contains(&p.player) && live.contains(&p.opponent) && p.pieces() <= max_pieces {
                mask |= 1;
            }
        });
    }
    mask
}

/// What a BFS file writes for a node that is non-trivial but that the search did not
/// reach (the published solver's depth `-1`).
pub const UNREACHED: &str = "-1";

/// Append the BFS line of canonical position `pos`, with its final newline, to `out`,
/// as the published solver writes it: the code, `checkmate` for an immediate-win
/// position, then the 25 fields: field `j` the depth `depths[j]` of node `(pos, j)`
/// when the search reached it, else `-1` when the node is non-trivial (bit `j` of
/// `nontrivial`, [`bfs_nontrivial_nodes`]), else empty. Every position of the search's
/// phases has a line, reached or not.
pub fn write_bfs_line(
    geom: &Geometry,
    pos: &Position,
    depths: &[Option<u32>; FIELDS],
    nontrivial: u32,
    out: &mut String,
) {
    push_base64(pos.code(), out);
    if is_immediate_win(geom, pos) {
        out.push(',');
        out.push_str(CHECKMATE);
    }
    for (j, d) in depths.iter().enumerate() {
        out.push(',');
        match d {
            Some(d) => push_u32(out, *d),
            None if nontrivial >> j & 1 != 0 => out.push_str(UNREACHED),
            None => {}
        }
    }
    out.push('\n');
}

fn push_u32(out: &mut String, v: u32) {
    let mut buf = [0u8; 10];
    let mut i = buf.len();
    let mut v = v;
    loop {
        i -= 1;
        buf[i] = b'0' + (v % 10) as u8;
        v /= 10;
        if v == 0 {
            break;
        }
    }
    out.push_str(std::str::from_utf8(&buf[i..]).expect("ASCII digits"));
}

/// The fields of a retrograde line after its code.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Fields {
    /// `checkmate`.
    Checkmate,
    /// Per node j, its value code, `None` when the field is empty.
    Nodes([Option<Val>; FIELDS]),
}

/// Split a retrograde line (without its newline; trailing whitespace and a CR are
/// ignored, as the published digest does) into its code and fields. The error is a
/// sentence fragment saying what is wrong.
pub fn parse_line(line: &str) -> Result<(u64, Fields), String> {
    let line = line.trim_end();
    let mut parts = line.split(',');
    let code_text = parts.next().unwrap_or("");
    let code = crate::game::notation::base64_to_code(code_text).map_err(|e| format!("bad code: {e}"))?;
    let rest: Vec<&str> = parts.collect();
    if rest.len() == 1 && rest[0] == CHECKMATE {
        return Ok((code, Fields::Checkmate));
    }
    if rest.len() != FIELDS {
        return Err(format!("{} fields after the code, expected {FIELDS} (or `{CHECKMATE}`)", rest.len()));
    }
    let mut nodes = [None; FIELDS];
    for (j, f) in rest.iter().enumerate() {
        if f.is_empty() {
            continue;
        }
        if f.len() > 6 || !f.bytes().all(|b| b.is_ascii_digit()) {
            return Err(format!("field {j} (`{f}`) is not a published value (a number, or empty)"));
        }
        let v: u32 = f.parse().map_err(|_| format!("field {j} (`{f}`) is not a number"))?;
        // N - 1 for a win or loss in N plies: N at most MAX_DIST, as every file of ostledb.
        let max = crate::record::value::MAX_DIST - 1;
        if v > max {
            return Err(format!(
                "field {j} (`{f}`) is out of range: a value is at most {max}, a win or loss in {} plies",
                max + 1
            ));
        }
        nodes[j] = Some(value_code(v).ok_or_else(|| format!("field {j} (`{f}`) is out of range"))?);
    }
    Ok((code, Fields::Nodes(nodes)))
}

/// sha256 of `bytes` as 64 lowercase hex digits.
pub fn sha256_hex(bytes: &[u8]) -> String {
    use sha2::Digest;
    hex(&sha2::Sha256::digest(bytes))
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The published digest of one file, computed as its content streams by: sha256 of its
/// lines joined by LF (no newline after the last line; the lines written here have no
/// trailing whitespace, which the published recipe strips).
#[derive(Clone, Default)]
pub struct FileDigest {
    hasher: sha2::Sha256,
    pending_newline: bool,
}

impl FileDigest {
    /// A digest of no lines yet.
    pub fn new() -> FileDigest {
        FileDigest::default()
    }

    /// Add whole lines, each ending with LF.
    pub fn update(&mut self, lines: &[u8]) {
        use sha2::Digest;
        if lines.is_empty() {
            return;
        }
        if self.pending_newline {
            self.hasher.update(b"\n");
        }
        let body = lines.strip_suffix(b"\n").unwrap_or(lines);
        self.hasher.update(body);
        self.pending_newline = lines.ends_with(b"\n");
    }

    /// The hex digest.
    pub fn finish(self) -> String {
        use sha2::Digest;
        hex(&self.hasher.finalize())
    }
}

/// The digest of a set of files by the published recipe: sha256 of the concatenated hex
/// digests of every BFS file, then every retrograde file, each group in file-name order.
pub fn set_digest<'a>(file_digests: impl IntoIterator<Item = &'a str>) -> String {
    let mut all = String::new();
    for d in file_digests {
        all.push_str(d);
    }
    sha256_hex(all.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::notation::parse_board;

    #[test]
    fn file_names_round_trip() {
        assert_eq!(file_name(8, Kind::Retrograde, 0), "ostle_8_retrograde_output0000.txt");
        assert_eq!(file_name(10, Kind::Bfs, 2735), "ostle_10_bfs_output2735.txt");
        for (n, k, i) in [(8, Kind::Retrograde, 0), (10, Kind::Bfs, 2735), (6, Kind::Retrograde, 12)] {
            assert_eq!(parse_file_name(&file_name(n, k, i)), Some((n, k, i)));
        }
        for bad in
            ["ostle_8_retrograde_output000.txt", "ostle_x_bfs_output0000.txt", "ostle_8_other_output0000.txt", "a.txt"]
        {
            assert_eq!(parse_file_name(bad), None, "{bad}");
        }
    }

    #[test]
    fn published_values_are_n_minus_1_and_draw_is_0() {
        assert_eq!(published_value(0), Some(0));
        assert_eq!(published_value(2), None); // win in 1
        assert_eq!(published_value(3), None); // loss in 1
        assert_eq!(published_value(1), None); // loss in 0, or an elided loss (overflowed: found by fuzzing)
        assert_eq!(published_value(4 + 1), Some(1)); // loss in 2
        assert_eq!(published_value(6), Some(2)); // win in 3
        assert_eq!(published_value(2 * 255 + 1), Some(254)); // loss in 255, the longest
        assert_eq!(published_value(2 * 256), None); // win in 256: beyond MAX_DIST
        assert_eq!(published_value(1919 * 2 + 3), None); // found by fuzzing: written, then refused
        for v in 0..300u32 {
            let back = published_value(value_code(v).unwrap());
            assert_eq!(back, (v < 255).then_some(v), "{v}");
        }
        assert_eq!(value_code(1), Some(5));
        assert_eq!(value_code(u32::MAX), None);
    }

    #[test]
    fn lines_of_known_positions() {
        let g = Geometry::standard();
        // OSTLE.md section 6: a position no legal move leads to has 25 empty fields.
        let p = parse_board(g, "32222-21111-10000-00000-00000").unwrap();
        let mut s = String::new();
        write_line(g, &p, 7, &mut s).unwrap();
        assert_eq!(s, format!("AfAAAAf{}\n", ",".repeat(FIELDS)));
        // An immediate win: the opponent has 4 pieces and a capture is possible.
        let p = parse_board(g, "11110-00000-00300-00000-22221").unwrap();
        assert!(crate::game::moves::is_immediate_win(g, &p));
        let (c, _) = crate::game::symmetry::canonical(g, &p);
        let mut s = String::new();
        write_line(g, &c, 2, &mut s).unwrap();
        assert_eq!(s, format!("{},checkmate\n", crate::game::notation::code_to_base64(c.code())));
        assert_eq!(parse_line(s.trim_end()).unwrap(), (c.code(), Fields::Checkmate));
    }

    #[test]
    fn base_and_special_values_go_to_their_fields() {
        let g = Geometry::standard();
        let p = parse_board(g, "00100-11200-00001-31022-20020").unwrap();
        let reached = nontrivial_nodes(g, &p);
        assert!(reached & 1 != 0 && reached & 1 << 2 != 0, "{reached:b}");
        // base: loss in 12 (code 25, v = 11); special move 2: win in 7 (code 14, v = 6).
        let record = 25 | 14 << 16 | 2 << 32;
        let mut s = String::new();
        write_line(g, &p, record, &mut s).unwrap();
        assert!(s.starts_with("PABgTkBU,11,") && s.ends_with('\n'), "{s}");
        let (code, fields) = parse_line(&s).unwrap();
        assert_eq!(code, p.code());
        let Fields::Nodes(nodes) = fields else { panic!("{s}") };
        for j in 0..FIELDS {
            let want = (reached >> j & 1 != 0).then_some(if j == 2 { 14 } else { 25 });
            assert_eq!(nodes[j], want, "field {j}: {s}");
        }
        // A value the format cannot hold is an error naming the node.
        let mut s = String::new();
        assert_eq!(write_line(g, &p, 3, &mut s), Err(Unwritable { node: 0, code: 3 }));
        // So is an elided loss (code 1) that was never resolved: it must not be written
        // as 2^32 - 1 (or overflow).
        let mut s = String::new();
        assert_eq!(write_line(g, &p, 1, &mut s), Err(Unwritable { node: 0, code: 1 }));
    }

    /// The lines as `format!` makes them: the reference of [`write_line`] and
    /// [`write_bfs_line`].
    fn line_by_format(g: &Geometry, p: &Position, record: u64) -> String {
        let code = crate::game::notation::code_to_base64(p.code());
        if crate::game::moves::is_immediate_win(g, p) {
            return format!("{code},{CHECKMATE}\n");
        }
        let reached = nontrivial_nodes(g, p);
        let field = |j: usize| match reached >> j & 1 {
            0 => String::new(),
            _ => published_value(Packed(record).node_val(j)).unwrap().to_string(),
        };
        format!("{code},{}\n", (0..FIELDS).map(field).collect::<Vec<_>>().join(","))
    }

    #[test]
    fn lines_equal_their_formatted_reference() {
        let g = Geometry::standard();
        let mut rng = 0x2545_f491_4f6c_dd1du64;
        let mut next = |n: u64| {
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            rng % n
        };
        let (mut checked, mut mates) = (0, 0);
        for _game in 0..400 {
            let mut p = Position::initial(g);
            for _ply in 0..60 {
                let (c, _) = crate::game::symmetry::canonical(g, &p);
                // Value codes 0 (a draw) and 4..=511 (every published value up to a win
                // or loss in MAX_DIST plies has one), a special move or none.
                let mut val = || if next(4) == 0 { 0 } else { 4 + next(508) };
                let record = val() | val() << 16 | next(25) << 32;
                let mut s = String::new();
                write_line(g, &c, record, &mut s).unwrap();
                assert_eq!(s, line_by_format(g, &c, record), "{c:?}");
                let depths: [Option<u32>; FIELDS] = std::array::from_fn(|_| match next(5) {
                    0 => None,
                    1 => Some(next(10) as u32),
                    2 => Some(next(1_000) as u32),
                    3 => Some(u32::MAX - next(3) as u32),
                    _ => Some(next(1 << 20) as u32),
                });
                let nontrivial = next(1 << 25) as u32;
                let mut b = String::new();
                write_bfs_line(g, &c, &depths, nontrivial, &mut b);
                let mate = crate::game::moves::is_immediate_win(g, &c);
                let fields: Vec<String> = (0..FIELDS)
                    .map(|j| match depths[j] {
                        Some(d) => d.to_string(),
                        None if nontrivial >> j & 1 == 1 => "-1".to_string(),
                        None => String::new(),
                    })
                    .collect();
                let code = crate::game::notation::code_to_base64(c.code());
                let head = if mate { format!("{code},{CHECKMATE}") } else { code };
                assert_eq!(b, format!("{head},{}\n", fields.join(",")));
                checked += 1;
                mates += mate as u32;
                let list = crate::game::moves::moves(g, &p);
                let r = crate::game::moves::play(g, &p, list[next(list.len() as u64) as usize]).unwrap();
                if r.child.player.count_ones().min(r.child.opponent.count_ones()) < g.min_pieces() {
                    break; // the game is over
                }
                p = r.child;
            }
        }
        assert!(checked > 1_000 && mates > 0, "{checked} lines, {mates} immediate wins");
    }

    #[test]
    fn malformed_lines_are_errors() {
        for bad in ["", "MAAA+f", "MAAA+f,checkmat", "MA!A,checkmate", "MAAA+f,1,2", "MAAA+f,x,,,,,,,,,,,,,,,,,,,,,,,,"]
        {
            assert!(parse_line(bad).is_err(), "{bad:?}");
        }
        assert!(parse_line(&format!("MAAA+f{}", ",".repeat(26))).is_err());
        assert!(parse_line(&format!("MAAA+f,-1{}", ",".repeat(24))).is_err());
        assert!(parse_line(&format!("MAAA+f,0{}\r", ",".repeat(24))).is_ok());
    }

    #[test]
    fn file_digest_ignores_the_final_newline_and_chunking() {
        let mut a = FileDigest::new();
        a.update(b"x,1\ny,2\n");
        a.update(b"z,3\n");
        let mut b = FileDigest::new();
        b.update(b"x,1\n");
        b.update(b"y,2\nz,3\n");
        let want = sha256_hex(b"x,1\ny,2\nz,3");
        assert_eq!(a.finish(), want);
        assert_eq!(b.finish(), want);
        assert_eq!(FileDigest::new().finish(), sha256_hex(b""));
        // sha256("abc"), the FIPS 180-2 example.
        assert_eq!(sha256_hex(b"abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    }
}
