//! `ostledb query -`: stdin lines, `BOARD` or `BOARD,PREV`, answered against a small
//! database (3x3, solved once per process), each line twice: as `query -` answers it
//! (`cli::query::answer_line`, any bytes, `--line`), and through the library (trimmed;
//! blank and `#` lines skipped; split at the first comma; each part trimmed; parsed by
//! `cli::parse_with_prev`; `Database::analyse` and `Database::line`). The two must agree:
//! the same lines refused, the same verdict and plies.
//!
//! Checked: a line that cannot be answered is never reported as a damaged database; an
//! answer agrees with the solver's in-memory solution (the node and every move), its
//! value is the best allowed move's (the rule `verify --deep` checks), and the principal
//! variation counts down: each step is the previous one's best move played, one ply
//! closer to the end, turns alternating, and it ends as its `end` says (the game over, a
//! drawn line come back to a board it has passed, or the plies asked).

#![no_main]

use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use ostledb::analysis::query::{LineEnd, Verdict};
use ostledb::error::EXIT_CORRUPT;
use ostledb::game::moves::play;
use ostledb::game::notation::format_board;
use ostledb::probe::{best, move_values, node_value};
use ostledb::record::Outcome;
use ostledb::Database;

fn db() -> &'static Database {
    static DB: OnceLock<Database> = OnceLock::new();
    DB.get_or_init(|| Database::open(&ostledb_fuzz::template().dir).expect("open the template"))
}

const MAX_PLIES: u32 = 24;

/// Check the answer to one board (and previous board); the node's verdict and plies when
/// the line is a board of the database.
fn answer(board: &str, prev: Option<&str>) -> Option<(Verdict, Option<u32>)> {
    let t = ostledb_fuzz::template();
    let db = db();
    let g = db.geometry();
    let (pos, prev) = match ostledb::cli::parse_with_prev(g, board, prev) {
        Ok(x) => x,
        Err(e) => {
            assert_ne!(e.exit_code(), EXIT_CORRUPT, "a bad line reported as damage: {e}");
            return None;
        }
    };
    ostledb_fuzz::check_board(g, &pos);
    let a = match db.analyse(&pos, prev.as_ref()) {
        Ok(a) => a,
        Err(e) => panic!("a parsed board of the database's geometry is not answered: {e}"),
    };
    let line = db.line(&pos, prev.as_ref(), MAX_PLIES).expect("the principal variation");
    serde_json::to_string(&a).expect("the answer serialises");
    serde_json::to_string(&line).expect("the line serialises");
    let (end, line) = (line.end, line.steps);

    // Against the solver.
    assert_eq!(a.board, format_board(g, &pos));
    assert_eq!(a.outcome, node_value(g, &t.solution, &pos, a.node_index).unwrap(), "{board} {prev:?}");
    let want = move_values(g, &t.solution, &pos).unwrap();
    assert_eq!(a.moves.len(), want.len());
    for m in &a.moves {
        let w = want.iter().find(|w| w.mv == m.mv).expect("every move listed once");
        assert_eq!((m.outcome, m.index), (w.outcome, w.index), "{}", m.notation);
        assert_eq!((m.verdict, m.plies), Verdict::of(false, m.outcome));
    }
    assert!(a.moves.iter().filter(|m| m.forbidden).count() <= 1);
    assert_eq!(a.moves.iter().any(|m| m.forbidden), a.node_index > 0);
    // The value is the best allowed move's.
    let allowed = best(a.moves.iter().filter(|m| !m.forbidden).map(|m| m.outcome));
    if a.checkmate {
        assert_eq!(a.outcome, Outcome::Win(1));
        assert!(a.moves.iter().any(|m| m.outcome == Outcome::Win(1)));
    } else {
        assert_eq!(a.outcome, allowed, "{board} {prev:?}: the value and the best allowed move");
    }
    assert_eq!((a.verdict, a.plies), Verdict::of(a.checkmate, a.outcome));
    for m in &a.moves {
        assert_eq!(m.best, !m.forbidden && m.outcome == allowed);
    }

    // The principal variation.
    assert!(line.len() <= MAX_PLIES as usize);
    let mut cur = pos;
    for (i, s) in line.iter().enumerate() {
        assert_eq!(s.board, format_board(g, &cur), "step {i}");
        assert!(s.mv.best, "step {i} plays a best move");
        let r = play(g, &cur, s.mv.mv).expect("a line move plays");
        if let (Some(next), Some(n)) = (line.get(i + 1), s.plies) {
            assert!(n > 1, "step {i}: a game one ply from its end goes on");
            assert_eq!(next.plies, Some(n - 1), "step {i}: one ply closer to the end");
            let won = |v: Verdict| matches!(v, Verdict::Win | Verdict::ImmediateWin);
            assert_ne!(won(s.verdict), won(next.verdict), "step {i}: turns alternate");
        }
        if s.plies.is_none() {
            assert_eq!(s.verdict, Verdict::Draw);
        }
        cur = r.child;
    }
    match (end, line.last()) {
        (LineEnd::GameOver, Some(last)) => assert_eq!(last.mv.plies, Some(1), "a line over ends the game"),
        (LineEnd::MaxPlies, _) => assert_eq!(line.len(), MAX_PLIES as usize),
        (LineEnd::Repeats { from }, Some(_)) => {
            assert!(from >= 1 && from as usize <= line.len());
            assert!(line.iter().all(|s| s.verdict == Verdict::Draw), "only a draw repeats");
            // `cur` is the board after the last move.
            assert_eq!(format_board(g, &cur), line[from as usize - 1].board, "the line comes back to ply {from}");
        }
        (LineEnd::NoMove, _) => {}
        (e, None) => panic!("an empty line that ends with {e:?}"),
    }
    Some((a.verdict, a.plies))
}

fuzz_target!(|data: &[u8]| {
    for raw in data.split(|&b| b == b'\n').take(8) {
        // What `query -` writes for the line (cli::query::answer_line, any bytes): never
        // an error from an intact database, and a JSON object with an error or an answer.
        let got = ostledb::cli::query::answer_line(db(), raw, &[], Some(MAX_PLIES))
            .unwrap_or_else(|e| panic!("{raw:?}: the intact database fails: {e}"));
        if let Some((json, bad)) = &got {
            let v: serde_json::Value = serde_json::from_str(json).expect("query - writes JSON");
            assert!(v.get("input").is_some(), "{json}");
            assert_eq!(v.get("error").is_some(), *bad, "{json}");
            assert_eq!(v.get("verdict").is_some(), !bad, "{json}");
        }
        // The same line through the library's parsers and Database::analyse and line.
        let Ok(text) = std::str::from_utf8(raw) else { continue };
        let t = text.trim_matches(|c: char| c.is_ascii_whitespace());
        if t.is_empty() || t.starts_with('#') {
            assert!(got.is_none(), "{t:?}: a blank line or a comment is answered");
            continue;
        }
        let (board, prev) = match t.split_once(',') {
            Some((b, p)) => (b.trim(), Some(p.trim())),
            None => (t, None),
        };
        let mine = answer(board, prev);
        let (json, bad) = got.expect("a line that is not blank is answered");
        match mine {
            Some((verdict, plies)) => {
                assert!(!bad, "{t:?}: answered here, refused by query -: {json}");
                let v: serde_json::Value = serde_json::from_str(&json).unwrap();
                assert_eq!(v["verdict"], serde_json::to_value(verdict).unwrap(), "{json}");
                assert_eq!(v["plies"], serde_json::to_value(plies).unwrap(), "{json}");
            }
            None => assert!(bad, "{t:?}: refused here, answered by query -: {json}"),
        }
    }
});
