//! The board notation (`22222-00000-00300-00000-11111`), the published base-64 code, and a
//! readable move notation (`c1-up`, `hole-left`).

use crate::error::{Error, NotationError};
use crate::game::geometry::{Dir, Geometry};
use crate::game::moves::Move;
use crate::game::position::Position;

/// A character a board may have anywhere and that is ignored: `-`, or `_`, which a URL
/// carries unescaped (`22220_00000_00300_00000_11110`).
pub fn is_separator(c: char) -> bool {
    c == '-' || c == '_'
}

/// The squares a board's text gives: its characters other than separators (the side of
/// its board is the square root, for a caller that does not know it yet).
pub fn squares_in(text: &str) -> usize {
    text.chars().filter(|c| !is_separator(*c)).count()
}

/// Parse a board: one digit per square, row 0 first (`0` empty, `1` side to move, `2`
/// other side, `3` hole); a separator (`-` or `_`, [`is_separator`]) anywhere is
/// ignored. The position must be live: one hole, each side with `start-1` or `start`
/// pieces. This is the one parser of boards: the command line, the HTTP API and the
/// Python package all read boards through it.
pub fn parse_board(geom: &Geometry, text: &str) -> Result<Position, Error> {
    let err = |reason: String| Error::Notation(NotationError { input: text.to_string(), reason });
    let squares = geom.squares();
    let mut player = 0u32;
    let mut opponent = 0u32;
    let mut hole: Option<u32> = None;
    let mut s = 0u32;
    for (i, ch) in text.chars().enumerate() {
        match ch {
            c if is_separator(c) => continue,
            '0'..='3' if s >= squares => {
                let digits = squares_in(text);
                return Err(err(format!("has {digits} squares; a {0}x{0} board has {squares}", geom.side())));
            }
            '0' => {}
            '1' => player |= 1 << s,
            '2' => opponent |= 1 << s,
            '3' => {
                if let Some(h) = hole {
                    return Err(err(format!(
                        "has two holes (squares {h} and {s}, the second at character {}); a board has exactly one `3`",
                        i + 1
                    )));
                }
                hole = Some(s);
            }
            other => {
                return Err(err(format!(
                    "character {} is {other:?}; only 0 (empty), 1 (side to move), 2 (other side), 3 (hole) and the separators - and _ are allowed",
                    i + 1
                )));
            }
        }
        s += 1;
    }
    if s != squares {
        return Err(err(format!("has {s} squares; a {0}x{0} board has {squares}", geom.side())));
    }
    let Some(hole) = hole else {
        return Err(err("has no hole; a board has exactly one `3`".into()));
    };
    let (lo, hi) = (geom.min_pieces(), geom.start_pieces());
    for (digit, who, set) in [('1', "side to move", player), ('2', "other side", opponent)] {
        let c = set.count_ones();
        if !(lo..=hi).contains(&c) {
            return Err(err(format!(
                "has {c} pieces `{digit}` ({who}); a live position has {lo} or {hi}{}",
                if c < lo { " (with fewer the game is over)" } else { "" }
            )));
        }
    }
    Ok(Position::new(player, opponent, hole))
}

/// Print a board in the notation, rows separated by `-`.
pub fn format_board(geom: &Geometry, pos: &Position) -> String {
    let n = geom.side();
    let mut out = String::with_capacity((n * n + n) as usize);
    for s in 0..geom.squares() {
        if s > 0 && s % n == 0 {
            out.push('-');
        }
        let c = if pos.hole() == s {
            '3'
        } else if pos.player >> s & 1 != 0 {
            '1'
        } else if pos.opponent >> s & 1 != 0 {
            '2'
        } else {
            '0'
        };
        out.push(c);
    }
    out
}

const BASE64: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/// The published base-64 form of a code: little-endian digits, most significant last.
pub fn code_to_base64(code: u64) -> String {
    let mut out = String::new();
    push_base64(code, &mut out);
    out
}

/// Append [`code_to_base64`]`(code)` to `out` (no allocation: the export's lines).
pub fn push_base64(mut code: u64, out: &mut String) {
    loop {
        out.push(BASE64[(code % 64) as usize] as char);
        code /= 64;
        if code == 0 {
            break;
        }
    }
}

/// Parse the published base-64 form of a code.
pub fn base64_to_code(text: &str) -> Result<u64, Error> {
    let err = |reason: String| Error::Notation(NotationError { input: text.to_string(), reason });
    if text.is_empty() || text.len() > 10 {
        return Err(err("a base-64 code has 1 to 10 characters".into()));
    }
    let mut code = 0u64;
    for (i, ch) in text.bytes().enumerate().rev() {
        let Some(d) = BASE64.iter().position(|&b| b == ch) else {
            return Err(err(format!("character {} is not in the alphabet A-Z a-z 0-9 + /", i + 1)));
        };
        code = code * 64 + d as u64;
    }
    if code >> 55 != 0 {
        return Err(err("the code has more than 55 bits".into()));
    }
    Ok(code)
}

/// The name of a square: column letter `a..` and row number `1..` counted from the last
/// row (the side to move's home row is row 1), as on a chess board.
pub fn square_name(geom: &Geometry, s: u32) -> String {
    let (r, c) = geom.row_col(s);
    format!("{}{}", (b'a' + c as u8) as char, geom.side() - r)
}

/// Parse a square name (`a1`..`e5` on 5x5).
pub fn parse_square(geom: &Geometry, text: &str) -> Option<u32> {
    let b = text.as_bytes();
    if b.len() != 2 {
        return None;
    }
    let c = b[0].to_ascii_lowercase().checked_sub(b'a')? as u32;
    let row_num = b[1].checked_sub(b'0')? as u32;
    let n = geom.side();
    if c >= n || row_num == 0 || row_num > n {
        return None;
    }
    Some((n - row_num) * n + c)
}

/// A move in readable notation: `c1-up` (the piece on c1 steps up), `hole-left`.
/// "Up" is towards row 0 of the board notation (away from the side to move's home row
/// only when that row is the last one).
pub fn format_move(geom: &Geometry, m: Move) -> String {
    match m {
        Move::Piece { from, dir } => format!("{}-{}", square_name(geom, from as u32), dir.name()),
        Move::Hole { dir } => format!("hole-{}", dir.name()),
    }
}

/// Parse a readable move (`c1-up`, `C1-Up`, `hole-left`; directions may be abbreviated
/// to `u`, `d`, `l`, `r`).
pub fn parse_move(geom: &Geometry, text: &str) -> Result<Move, Error> {
    let err = |reason: &str| Error::Notation(NotationError { input: text.to_string(), reason: reason.to_string() });
    let lower = text.trim().to_ascii_lowercase();
    let Some((what, dir)) = lower.split_once('-') else {
        return Err(err("a move is SQUARE-DIRECTION (e.g. c1-up) or hole-DIRECTION (e.g. hole-left)"));
    };
    let dir = match dir {
        "up" | "u" => Dir::Up,
        "down" | "d" => Dir::Down,
        "left" | "l" => Dir::Left,
        "right" | "r" => Dir::Right,
        _ => return Err(err("the direction must be up, down, left or right")),
    };
    if what == "hole" || what == "h" {
        return Ok(Move::Hole { dir });
    }
    match parse_square(geom, what) {
        Some(s) => Ok(Move::Piece { from: s as u8, dir }),
        None => Err(err("the square must be a column letter and a row number, like c1")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn initial_code_in_base64_is_published() {
        assert_eq!(code_to_base64(34_326_183_948), "MAAA+f");
        assert_eq!(base64_to_code("MAAA+f").unwrap(), 34_326_183_948);
        assert_eq!(code_to_base64(88_068_631_564_303), "PABgTkBU");
        assert_eq!(code_to_base64(2_130_303_780_800), "AfAAAAf");
    }

    #[test]
    fn board_round_trips() {
        let g = Geometry::standard();
        for s in ["22222-00000-00300-00000-11111", "00100-11200-00001-31022-20020"] {
            let p = parse_board(g, s).unwrap();
            assert_eq!(format_board(g, &p), s);
        }
        assert_eq!(
            parse_board(g, "2222200000003000000011111").unwrap(),
            parse_board(g, "22222-00000-00300-00000-11111").unwrap()
        );
    }

    #[test]
    fn an_underscore_separates_as_a_dash_does() {
        let g = Geometry::standard();
        let dashed = parse_board(g, "00100-11200-00001-31022-20020").unwrap();
        assert_eq!(parse_board(g, "00100_11200_00001_31022_20020").unwrap(), dashed);
        assert_eq!(parse_board(g, "00100_11200-00001__31022_20020_").unwrap(), dashed);
        assert_eq!(squares_in("222_030-111"), 9);
        let e = parse_board(g, "00100_11200_00001_31022_2002").unwrap_err().to_string();
        assert!(e.contains("has 24 squares"), "{e}");
    }

    #[test]
    fn parse_errors_name_the_problem() {
        let g = Geometry::standard();
        let cases: &[(&str, &str)] = &[
            ("22222-00000-00300-00000-1111", "has 24 squares"),
            ("22222-00000-00300-00000-111111", "has 26 squares"),
            ("22222-00000-00300-00000-1111x", "character 29 is 'x'"),
            ("22222-00000-00330-00000-11110", "two holes"),
            ("22222-00000-00000-00000-11111", "no hole"),
            ("22222-00000-00301-00000-11111", "6 pieces `1`"),
            ("22200-00000-00300-00000-11111", "3 pieces `2`"),
        ];
        for (input, want) in cases {
            let e = parse_board(g, input).unwrap_err().to_string();
            assert!(e.contains(want), "{input}: {e}");
        }
    }

    #[test]
    fn moves_round_trip_through_notation() {
        let g = Geometry::standard();
        for s in 0..25u8 {
            for d in Dir::ALL {
                let m = Move::Piece { from: s, dir: d };
                assert_eq!(parse_move(g, &format_move(g, m)).unwrap(), m);
            }
        }
        assert_eq!(parse_move(g, "hole-l").unwrap(), Move::Hole { dir: Dir::Left });
        assert_eq!(format_move(g, Move::Piece { from: 22, dir: Dir::Up }), "c1-up");
        assert!(parse_move(g, "f1-up").is_err());
        assert!(parse_move(g, "c1-sideways").is_err());
    }
}
