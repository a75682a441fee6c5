//! The board parser: any text given as a board (and as `--prev`), on the 5x5 board and
//! the small ones. The first byte picks the geometry; the rest is `BOARD` or
//! `BOARD,PREV`. An accepted board must print and parse back to itself and agree with
//! the naive canonical form and the position index (`ostledb_fuzz::check_board`); an
//! accepted previous board must lead to the board (`check_prev`); a refused one must be
//! a notation error, never a panic.

#![no_main]

use libfuzzer_sys::fuzz_target;
use ostledb::Error;
use ostledb::game::notation::parse_board;

fuzz_target!(|data: &[u8]| {
    let Some((&selector, rest)) = data.split_first() else { return };
    let Ok(text) = std::str::from_utf8(rest) else { return };
    let g = ostledb_fuzz::geometry(selector);
    let (board, prev) = match text.split_once(',') {
        Some((b, p)) => (b, Some(p)),
        None => (text, None),
    };
    let pos = match parse_board(g, board) {
        Ok(p) => p,
        Err(e) => {
            assert!(matches!(e, Error::Notation(_)), "{board:?}: {e:?}");
            return;
        }
    };
    ostledb_fuzz::check_board(g, &pos);
    let Some(prev) = prev else { return };
    // The command line's path: the same parser, then the previous board must lead here.
    match ostledb::cli::parse_with_prev(g, board, Some(prev)) {
        Ok((p, Some(q))) => {
            assert_eq!(p, pos);
            ostledb_fuzz::check_board(g, &q);
            ostledb_fuzz::check_prev(g, &pos, &q);
        }
        Ok((_, None)) => panic!("a previous board given but none returned"),
        Err(e) => {
            assert!(matches!(e, Error::Notation(_) | Error::NotAPredecessor), "{prev:?}: {e:?}");
            if let Ok(q) = parse_board(g, prev) {
                ostledb_fuzz::check_board(g, &q);
                ostledb_fuzz::check_prev(g, &pos, &q);
            }
        }
    }
});
