//! The published text format's line parser (`published::parse_line`) and writer.
//!
//! First byte even: the rest is text, one retrograde line per line. An accepted line must
//! hold a code whose base 64 round-trips, and print back (code, then each field's
//! published value) to a line that parses to the same thing; a refused one must say why.
//! First byte odd: the next 8 bytes are a code and the 8 after them a record; when the
//! code is a position of the 5x5 board, its canonical form's line (`write_line`) must
//! parse back to that code and to exactly the fields written: `checkmate` for an
//! immediate win, else a value for each non-trivial node and nothing for the others.

#![no_main]

use libfuzzer_sys::fuzz_target;
use ostledb::game::Position;
use ostledb::game::moves::is_immediate_win;
use ostledb::game::notation::{base64_to_code, code_to_base64};
use ostledb::game::symmetry::canonical;
use ostledb::published::{FIELDS, Fields, nontrivial_nodes, parse_line, published_value, value_code, write_line};
use ostledb::record::Packed;

fn print(code: u64, fields: &Fields) -> String {
    let mut out = code_to_base64(code);
    match fields {
        Fields::Checkmate => out.push_str(",checkmate"),
        Fields::Nodes(n) => {
            for v in n {
                out.push(',');
                if let Some(c) = v {
                    let p = published_value(*c).expect("a parsed value code has a published value");
                    assert_eq!(value_code(p), Some(*c), "value code {c} round trip");
                    out.push_str(&p.to_string());
                }
            }
        }
    }
    out
}

fn lines(text: &str) {
    for line in text.split('\n').take(64) {
        match parse_line(line) {
            Ok((code, fields)) => {
                assert!(code >> 55 == 0, "{line:?}: a code of more than 55 bits");
                assert_eq!(base64_to_code(&code_to_base64(code)).unwrap(), code);
                let again = print(code, &fields);
                assert_eq!(parse_line(&again), Ok((code, fields.clone())), "{line:?} printed as {again:?}");
            }
            Err(why) => assert!(!why.is_empty()),
        }
    }
}

fn written(code: u64, record: u64) {
    let g = ostledb::game::Geometry::standard();
    let pos = Position::from_code(code & ((1 << 55) - 1));
    if pos.validate(g).is_err() {
        return;
    }
    let (canon, _) = canonical(g, &pos);
    let mut out = String::new();
    if write_line(g, &canon, record, &mut out).is_err() {
        return;
    }
    let line = out.strip_suffix('\n').expect("a written line ends with a newline");
    assert!(!line.contains('\n'));
    let (got, fields) = parse_line(line).unwrap_or_else(|e| panic!("{line:?}: {e}"));
    assert_eq!(got, canon.code());
    if is_immediate_win(g, &canon) {
        assert_eq!(fields, Fields::Checkmate);
        return;
    }
    let Fields::Nodes(n) = fields else { panic!("{line:?}: `checkmate` written for a position that is not one") };
    let reached = nontrivial_nodes(g, &canon);
    for (j, v) in n.iter().enumerate().take(FIELDS) {
        match v {
            None => assert_eq!(reached >> j & 1, 0, "{line:?}: node {j} left out"),
            Some(c) => {
                assert_eq!(reached >> j & 1, 1, "{line:?}: trivial node {j} written");
                let stored = Packed(record).node_val(j);
                assert_eq!(published_value(*c), published_value(stored), "{line:?}: node {j}");
            }
        }
    }
}

fuzz_target!(|data: &[u8]| {
    let Some((&mode, rest)) = data.split_first() else { return };
    if mode & 1 == 0 {
        if let Ok(text) = std::str::from_utf8(rest) {
            lines(text);
        }
    } else if rest.len() >= 16 {
        let code = u64::from_le_bytes(rest[..8].try_into().unwrap());
        let record = u64::from_le_bytes(rest[8..16].try_into().unwrap());
        written(code, record);
    }
});
