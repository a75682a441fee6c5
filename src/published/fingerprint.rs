//! The published solver's 64-bit fingerprint of a run (OSTLE.md section 5; its
//! `calc_final_result_hashvalue`), computed from the lines of its files.
//!
//! AES-128 (the standard cipher) under the key whose 16 bytes are the little-endian
//! 64-bit 123456 and eight zero bytes encrypts 16-byte blocks, each the little-endian
//! 64-bit index and then the little-endian 64-bit datum:
//!
//! - `(i, code)` for the `i`-th position (0-based, ascending code, over every file of the
//!   run);
//! - `(i, mask)`, the mask of its nodes that have a field (bit `j` for field `j`): the
//!   run's non-trivial nodes (none for a `code,checkmate` retrograde line);
//! - `(k, value)` for the `k`-th such node in the order (position, `j`), the field's
//!   number as a signed 16-bit integer sign-extended to 64 bits (`-1` in a BFS file:
//!   not reached).
//!
//! The ciphertexts are XORed together; the fingerprint is the XOR of the two 64-bit
//! halves of the result. A line holds everything its blocks need, so the fingerprint of
//! a set of files is a function of their lines, and XOR lets each part of the lines be
//! encrypted on its own ([`Part`]) once its first position and node are known.

use aes::Aes128;
use aes::cipher::generic_array::GenericArray;
use aes::cipher::{BlockEncrypt, KeyInit};

use super::{CHECKMATE, FIELDS};
use crate::game::notation::base64_to_code;

/// The key, as the published solver gives it (`Encoder_AES encoder(123456)`).
pub const KEY: u64 = 123_456;

/// Blocks encrypted at a time (AES-NI interleaves several).
const BUFFER: usize = 64;

/// The cipher of the fingerprint.
#[derive(Clone)]
pub struct Cipher(Aes128);

impl Default for Cipher {
    fn default() -> Cipher {
        Cipher::new()
    }
}

impl Cipher {
    /// AES-128 under [`KEY`].
    pub fn new() -> Cipher {
        let mut key = [0u8; 16];
        key[..8].copy_from_slice(&KEY.to_le_bytes());
        Cipher(Aes128::new(&key.into()))
    }

    /// The ciphertext of block `(index, datum)`, as a little-endian 128-bit number.
    pub fn encrypt(&self, index: u64, datum: u64) -> u128 {
        self.xor(std::iter::once((index, datum)))
    }

    /// The XOR of the ciphertexts of `blocks`, each `(index, datum)`.
    pub fn xor(&self, blocks: impl IntoIterator<Item = (u64, u64)>) -> u128 {
        let mut buf = [GenericArray::default(); BUFFER];
        let mut n = 0;
        let mut acc = 0u128;
        let drain = |buf: &mut [aes::Block], acc: &mut u128| {
            self.0.encrypt_blocks(buf);
            for b in buf.iter() {
                *acc ^= u128::from_le_bytes((*b).into());
            }
        };
        for (index, datum) in blocks {
            let b = &mut buf[n];
            b[..8].copy_from_slice(&index.to_le_bytes());
            b[8..].copy_from_slice(&datum.to_le_bytes());
            n += 1;
            if n == BUFFER {
                drain(&mut buf, &mut acc);
                n = 0;
            }
        }
        drain(&mut buf[..n], &mut acc);
        acc
    }
}

/// The 64-bit fingerprint of an accumulated XOR: its two halves XORed.
pub fn fold(xor: u128) -> u64 {
    xor as u64 ^ (xor >> 64) as u64
}

/// What some consecutive lines of a run give the fingerprint.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Part {
    /// The XOR of their blocks' ciphertexts.
    pub xor: u128,
    /// Their lines (positions).
    pub lines: u64,
    /// Their nodes (fields that are not empty).
    pub nodes: u64,
}

impl Part {
    /// This part followed by `other` (whose blocks were numbered after this one's).
    pub fn then(self, other: Part) -> Part {
        Part { xor: self.xor ^ other.xor, lines: self.lines + other.lines, nodes: self.nodes + other.nodes }
    }
}

/// The lines of a text parsed for the fingerprint: per line its code and mask, and
/// every node's value in order.
#[derive(Clone, Debug, Default)]
pub struct Parsed {
    positions: Vec<(u64, u64)>,
    values: Vec<u64>,
}

impl Parsed {
    /// Parse `text`, whole lines each ending with LF, of a published retrograde or BFS
    /// file. The error names the line (1-based within `text`) and what is wrong.
    pub fn of(text: &str) -> Result<Parsed, String> {
        let mut out = Parsed::default();
        for (n, line) in text.split_terminator('\n').enumerate() {
            out.line(line.trim_end()).map_err(|e| format!("line {}: {e}", n + 1))?;
        }
        Ok(out)
    }

    fn line(&mut self, line: &str) -> Result<(), String> {
        let mut parts = line.split(',');
        let code = base64_to_code(parts.next().unwrap_or("")).map_err(|e| format!("bad code: {e}"))?;
        let mut fields = parts.peekable();
        if fields.peek() == Some(&CHECKMATE) {
            fields.next();
        }
        let mut mask = 0u64;
        let mut count = 0;
        for (j, f) in fields.enumerate() {
            count = j + 1;
            if j >= FIELDS {
                break;
            }
            if f.is_empty() {
                continue;
            }
            let v: i16 = f.parse().map_err(|_| format!("field {j} (`{f}`) is not a 16-bit number"))?;
            mask |= 1 << j;
            // Sign-extended, as the solver's int16_t becomes a uint64_t.
            self.values.push(i64::from(v) as u64);
        }
        if count != 0 && count != FIELDS {
            return Err(format!("{count} fields after the code, expected {FIELDS} (or `{CHECKMATE}` alone)"));
        }
        self.positions.push((code, mask));
        Ok(())
    }

    /// The lines parsed.
    pub fn lines(&self) -> u64 {
        self.positions.len() as u64
    }

    /// The nodes parsed.
    pub fn nodes(&self) -> u64 {
        self.values.len() as u64
    }

    /// Their part of the fingerprint, the first line being position `first_position`
    /// and its first node node `first_node` of the run.
    pub fn part(&self, cipher: &Cipher, first_position: u64, first_node: u64) -> Part {
        let at = |i: usize| first_position + i as u64;
        let codes = self.positions.iter().enumerate().map(|(i, &(code, _))| (at(i), code));
        let masks = self.positions.iter().enumerate().map(|(i, &(_, mask))| (at(i), mask));
        let values = self.values.iter().enumerate().map(|(k, &v)| (first_node + k as u64, v));
        Part { xor: cipher.xor(codes.chain(masks).chain(values)), lines: self.lines(), nodes: self.nodes() }
    }
}

/// The fingerprint part of consecutive texts (each of whole lines), the first line
/// being position `first_position` and its first node node `first_node` of the run:
/// parsed and encrypted in parallel.
pub fn part_of_texts(
    cipher: &Cipher,
    texts: &[impl AsRef<str> + Sync],
    first_position: u64,
    first_node: u64,
) -> Result<Part, String> {
    use rayon::prelude::*;
    let parsed: Vec<Parsed> = texts.par_iter().map(|t| Parsed::of(t.as_ref())).collect::<Result<_, _>>()?;
    let mut starts = Vec::with_capacity(parsed.len());
    let (mut i, mut k) = (first_position, first_node);
    for p in &parsed {
        starts.push((i, k));
        i += p.lines();
        k += p.nodes();
    }
    Ok(parsed.par_iter().zip(starts).map(|(p, (i, k))| p.part(cipher, i, k)).reduce(Part::default, |a, b| Part {
        xor: a.xor ^ b.xor,
        lines: a.lines + b.lines,
        nodes: a.nodes + b.nodes,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The FIPS-197 example (appendix C.1): the cipher is the standard AES-128.
    #[test]
    fn the_cipher_is_standard_aes_128() {
        let key: [u8; 16] = std::array::from_fn(|i| i as u8);
        let plain: [u8; 16] = std::array::from_fn(|i| (i as u8) * 0x11);
        let mut b = GenericArray::from(plain);
        Aes128::new(&key.into()).encrypt_block(&mut b);
        let want = [0x69, 0xc4, 0xe0, 0xd8, 0x6a, 0x7b, 0x04, 0x30, 0xd8, 0xcd, 0xb7, 0x80, 0x70, 0xb4, 0xc5, 0x5a];
        assert_eq!(<[u8; 16]>::from(b), want);
    }

    /// Figures from the published solver's own code: its `Encoder_AES` class (commit
    /// c87c671 of eukaryo/ostle_solver, `Source.cpp`) compiled alone with a `main` that
    /// folds, as its `calc_final_result_hashvalue` does, the blocks of three lines:
    /// positions `MAAA+f` (a retrograde checkmate line), `PABgTkBU` (fields 0 and 2: `3`
    /// and `-1`) and `AfAAAAf` (no field); and the ciphertext of block (0, 0).
    #[test]
    fn the_published_solvers_cipher_gives_the_same_fingerprint() {
        let c = Cipher::new();
        let x = c.encrypt(0, 0);
        assert_eq!((x as u64, (x >> 64) as u64), (0xab33_2fcc_3062_2cc3, 0xd315_88c6_0f00_4f75));
        let empty = ",".repeat(FIELDS);
        let text = format!("MAAA+f,checkmate\nPABgTkBU,3,,-1{}\nAfAAAAf{empty}\n", &empty[3..]);
        let p = Parsed::of(&text).unwrap();
        assert_eq!(fold(p.part(&c, 0, 0).xor), 4_468_558_580_891_680_690);
    }

    #[test]
    fn buffered_xor_equals_one_block_at_a_time() {
        let c = Cipher::new();
        let blocks: Vec<(u64, u64)> = (0..200u64).map(|i| (i, i.wrapping_mul(0x9e37_79b9_7f4a_7c15))).collect();
        let one = blocks.iter().fold(0u128, |a, &(i, d)| a ^ c.encrypt(i, d));
        assert_eq!(c.xor(blocks.iter().copied()), one);
        assert_ne!(one, 0);
        assert_eq!(c.xor(std::iter::empty()), 0);
    }

    #[test]
    fn lines_give_codes_masks_and_signed_values() {
        let c = Cipher::new();
        let empty = ",".repeat(FIELDS);
        let text = format!("MAAA+f,checkmate\nBAAAAB,3,,-1{}\nCAAAAB,checkmate{empty}\n", &empty[3..]);
        let p = Parsed::of(&text).unwrap();
        assert_eq!((p.lines(), p.nodes()), (3, 2));
        let code = |s: &str| base64_to_code(s).unwrap();
        let want = c.xor([
            (10, code("MAAA+f")),
            (10, 0),
            (11, code("BAAAAB")),
            (11, 0b101),
            (12, code("CAAAAB")),
            (12, 0),
            (7, 3),
            (8, u64::MAX),
        ]);
        assert_eq!(p.part(&c, 10, 7), Part { xor: want, lines: 3, nodes: 2 });
        // Split anywhere, the parts of the pieces make the whole.
        let cut = text.find('\n').unwrap() + 1;
        let whole = part_of_texts(&c, &[&text[..cut], &text[cut..]], 10, 7).unwrap();
        assert_eq!(whole, Part { xor: want, lines: 3, nodes: 2 });
        // Bad lines are errors, not panics.
        for bad in ["", "MAAA+f,1", "!,", "MAAA+f,70000,,,,,,,,,,,,,,,,,,,,,,,,", "MAAA+f,x,,,,,,,,,,,,,,,,,,,,,,,,"] {
            assert!(Parsed::of(&format!("{bad}\n")).is_err(), "{bad}");
        }
    }
}
