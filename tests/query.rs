//! What `query` shows, checked on small boards against the in-memory solution: verdicts,
//! moves best first with the forbidden one marked, principal variations that end as the
//! verdict says, and moves typed in the readable notation.

use std::path::PathBuf;

use ostledb::Database;
use ostledb::analysis::query::{LineEnd, MAX_LINE_PLIES, Verdict, play_moves};
use ostledb::game::Geometry;
use ostledb::game::moves::{Unmove, moves, play, unmoves};
use ostledb::game::notation::{format_board, format_move, parse_board};
use ostledb::game::symmetry::{canonical, canonical_code};
use ostledb::probe::move_values;
use ostledb::record::Outcome;
use ostledb::solve::SolveOptions;
use ostledb::solve::retrograde::{solve, solve_into};
use ostledb::store::values::WriteOptions;
use ostledb::working::pack::{PackOptions, pack};

fn build(geom: &Geometry, name: &str, max: u32) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("ostledb-query-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let opts = SolveOptions { dir: Some(dir.clone()), ..SolveOptions::default() };
    solve_into(geom, max, &opts, |_| Ok(())).expect("solve");
    let p = PackOptions {
        values: WriteOptions { block: 512, level: 3, ..WriteOptions::default() },
        ..PackOptions::default()
    };
    pack(&dir, geom, max, &p, |_| {}).expect("pack");
    dir
}

/// Every position of the 3x3 board (and a sample of the 4x4 one) with no previous board
/// and with each of its predecessors: the verdict is the solution's node value, the
/// moves are the solution's move values, the playable ones sorted best first and the
/// forbidden one last (so the first can be played), exactly one move is marked
/// forbidden when a previous move can be undone up to symmetry, it reaches an image of
/// the previous board, and the best moves are the allowed ones with the node's value.
#[test]
fn analysis_agrees_with_the_solution_for_every_node() {
    for (g, max, every) in [(Geometry::new(3, 3).unwrap(), 6, 1u64), (Geometry::new(4, 3).unwrap(), 6, 41)] {
        let dir = build(&g, &format!("an{}", g.side()), max);
        let db = Database::open(&dir).unwrap();
        let sol = solve(&g, max, &SolveOptions::default()).unwrap();
        let (mut nodes, mut with_forbidden) = (0u64, 0u64);
        for p in sol.index().phases() {
            for i in (0..p.len()).step_by(every as usize) {
                let pos = p.position_at(i).transformed(&g, (i % 8) as usize);
                let mut preds: Vec<Option<Unmove>> = vec![None];
                unmoves(&g, &pos, |u| preds.push(Some(u)));
                for u in preds {
                    let prev = u.as_ref().map(|u| u.pred);
                    let a = db.analyse(&pos, prev.as_ref()).unwrap();
                    nodes += 1;
                    let (c, _) = canonical(&g, &pos);
                    let want = sol.node(&c, a.node_index);
                    assert_eq!(a.outcome, want, "{}", format_board(&g, &pos));
                    let (v, plies) = Verdict::of(a.checkmate, want);
                    assert_eq!((a.verdict, a.plies), (v, plies));
                    // The same moves and values as the solution, best first.
                    let mut expect = move_values(&g, &sol, &pos).unwrap();
                    assert_eq!(a.moves.len(), expect.len());
                    // The playable moves best first, then the forbidden one last: the
                    // first entry can be played whenever any move can (issue 63).
                    for w in a.moves.windows(2) {
                        assert!(!w[0].forbidden, "the forbidden move is not last");
                        assert!(!w[1].outcome.better_than(w[0].outcome) || w[1].forbidden, "not best first");
                    }
                    if a.moves.len() > 1 {
                        assert!(!a.moves[0].forbidden && a.moves[0].best, "moves[0] is not a best playable move");
                    }
                    for m in &a.moves {
                        let k = expect.iter().position(|e| e.index == m.index).expect("a listed move");
                        let e = expect.swap_remove(k);
                        assert_eq!((e.mv, e.outcome), (m.mv, m.outcome));
                        assert_eq!(m.notation, format_move(&g, m.mv));
                    }
                    let forbidden: Vec<_> = a.moves.iter().filter(|m| m.forbidden).collect();
                    assert_eq!(forbidden.len(), usize::from(a.node_index > 0));
                    // Where the rules forbid a move (the exact undo), that is the move
                    // marked, also on a symmetric board whose node forbids an image of
                    // it: a move listed as playable is one `query --play` plays.
                    if let Some(prev) = prev
                        && let Some(u) = ostledb::game::forbidden::forbidden_move(&g, &pos, &prev).unwrap()
                    {
                        assert_eq!(forbidden.first().map(|f| f.mv), Some(u), "{}", format_board(&g, &pos));
                    }
                    if let (Some(f), Some(prev)) = (forbidden.first(), prev) {
                        with_forbidden += 1;
                        let child = play(&g, &pos, f.mv).unwrap().child;
                        assert_eq!(
                            canonical_code(&g, &child),
                            canonical_code(&g, &prev),
                            "forbidden move reaches prev"
                        );
                    }
                    if u.as_ref().is_some_and(|u| u.undo.is_some()) {
                        assert!(a.node_index > 0, "an exact undo is always forbidden");
                    }
                    let best_allowed = a.moves.iter().find(|m| !m.forbidden).map(|m| m.outcome);
                    assert_eq!(best_allowed.unwrap_or(Outcome::Loss(0)), want, "the node value is its best move");
                    for m in &a.moves {
                        assert_eq!(m.best, !m.forbidden && Some(m.outcome) == best_allowed);
                    }
                }
            }
        }
        assert!(nodes > 1000 && with_forbidden > 100, "{nodes} nodes, {with_forbidden} with a forbidden move");
        let _ = std::fs::remove_dir_all(&dir);
    }
}

/// A decided node's line has exactly as many plies as its verdict says, alternates win
/// and loss with distances falling by one, and ends with a move that ends the game; a
/// draw's line stays drawn and stops where it comes back to a node it has passed (the
/// board after its last move, with that move's forbidden undo, is the node of ply
/// `from`), or at the plies asked; a length outside 1..=MAX_LINE_PLIES is refused.
#[test]
fn lines_end_as_the_verdict_says() {
    let g = Geometry::new(3, 3).unwrap();
    let dir = build(&g, "line", 6);
    let db = Database::open(&dir).unwrap();
    let (mut decided, mut draws) = (0, 0);
    for p in db.index().phases().to_vec() {
        for i in (0..p.len()).step_by(3) {
            let pos = p.position_at(i);
            let a = db.analyse(&pos, None).unwrap();
            let line = db.line(&pos, None, MAX_LINE_PLIES).unwrap();
            match a.plies {
                Some(n) if !a.moves.is_empty() => {
                    decided += 1;
                    assert_eq!(line.end, LineEnd::GameOver, "{}", a.board);
                    let line = line.steps;
                    assert_eq!(line.len() as u32, n, "{}", a.board);
                    for (k, s) in line.iter().enumerate() {
                        assert_eq!(s.plies, Some(n - k as u32));
                        let wins = (n - k as u32) % 2 == n % 2;
                        assert_eq!(
                            matches!(s.verdict, Verdict::Win | Verdict::ImmediateWin),
                            wins == a.outcome.better_than(Outcome::Draw)
                        );
                    }
                    assert_eq!(line.last().unwrap().mv.plies, Some(1), "the last move ends the game");
                }
                Some(_) => assert!(line.steps.is_empty()),
                None => {
                    draws += 1;
                    let LineEnd::Repeats { from } = line.end else { panic!("{}: {:?}", a.board, line.end) };
                    let steps = &line.steps;
                    assert!(from >= 1 && from as usize <= steps.len(), "{}", a.board);
                    assert!(steps.iter().all(|s| s.verdict == Verdict::Draw && s.mv.outcome == Outcome::Draw));
                    // The node after the last move is the node ply `from` was played from.
                    let last = steps.last().unwrap();
                    let before = parse_board(&g, &last.board).unwrap();
                    let after = play(&g, &before, last.mv.mv).unwrap().child;
                    let again = &steps[from as usize - 1];
                    assert_eq!(format_board(&g, &after), again.board, "{}", a.board);
                    let prev = (from >= 2).then(|| parse_board(&g, &steps[from as usize - 2].board).unwrap());
                    let at = parse_board(&g, &again.board).unwrap();
                    assert_eq!(
                        db.analyse(&after, Some(&before)).unwrap().node_index,
                        db.analyse(&at, prev.as_ref()).unwrap().node_index,
                        "{}",
                        a.board
                    );
                    let short = db.line(&pos, None, 12).unwrap();
                    match short.end {
                        LineEnd::MaxPlies => assert_eq!(short.steps.len(), 12),
                        LineEnd::Repeats { .. } => assert!(short.steps.len() <= 12 && short.end == line.end),
                        e => panic!("{}: {e:?}", a.board),
                    }
                }
            }
        }
    }
    assert!(decided > 100 && draws > 10, "{decided} decided, {draws} drawn");
    let pos = db.index().phases()[0].position_at(0);
    for bad in [0, MAX_LINE_PLIES + 1, u32::MAX] {
        let e = db.line(&pos, None, bad).expect_err("out of range");
        assert!(matches!(e, ostledb::Error::OutOfRange { .. }), "{e}");
        assert!(e.to_string().starts_with(&format!("max_plies must be from 1 to 1000, not {bad} (")), "{e}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// Moves typed in the notation: legal ones are played in turn (the next position's
/// forbidden move follows from the last one); an illegal move, the forbidden move and a
/// move after the game has ended are refused with the reason.
#[test]
fn played_moves_follow_the_rules() {
    let g = Geometry::standard();
    let start = ostledb::game::notation::parse_board(g, "22220-00000-00300-00000-11110").unwrap();
    let (pos, prev) = play_moves(g, &start, None, &["hole-up".into()]).unwrap();
    assert_eq!(format_board(g, &pos), "11110-00300-00000-00000-22220");
    assert_eq!(prev, Some(start));
    let err = play_moves(g, &start, None, &["hole-up".into(), "hole-down".into()]).unwrap_err().to_string();
    assert!(err.contains("move 2 `hole-down`") && err.contains("forbidden"), "{err}");
    let err = play_moves(g, &start, None, &["e1-up".into()]).unwrap_err().to_string();
    assert!(err.contains("not a move of") && err.contains("a1-up"), "{err}");
    let err = play_moves(g, &start, None, &["c1-sideways".into()]).unwrap_err().to_string();
    assert!(err.contains("direction"), "{err}");
    // Dropping the own second-to-last piece ends the game.
    let err = play_moves(g, &start, None, &["a1-down".into()]).unwrap_err().to_string();
    assert!(err.contains("ends the game"), "{err}");
    // Every legal move of the start, in notation, is accepted.
    for m in moves(g, &start).iter() {
        let r = play(g, &start, *m).unwrap();
        let ends = r.child.player.count_ones() < 4 || r.child.opponent.count_ones() < 4;
        assert_eq!(play_moves(g, &start, None, &[format_move(g, *m)]).is_ok(), !ends);
    }
}

/// `Database::probe_many` answers as `probe` one board at a time, in the order given:
/// every position of the 3x3 board (each as a different symmetric image), the in-memory
/// solution's generic value, with malformed boards and a phase the database lacks mixed
/// in; and `summary` is `analyse` without its moves.
#[test]
fn probe_many_and_summary_answer_as_probe_and_analyse() {
    use ostledb::game::Position;
    let g = Geometry::new(3, 3).unwrap();
    let dir = build(&g, "many", 6);
    let small = build(&g, "many-small", 5);
    let sol = solve(&g, 6, &SolveOptions::default()).unwrap();
    let mut boards: Vec<Position> = Vec::new();
    for p in sol.index().phases() {
        for i in 0..p.len() {
            boards.push(p.position_at(i).transformed(&g, (i % 8) as usize));
        }
    }
    let n = boards.len();
    // Not live: no hole on the board (code 0), and a side without pieces.
    boards.insert(n / 2, Position::from_code(0));
    boards.insert(n / 3, Position { player: 0b111, opponent: 0, hole: 4 });
    for (db_dir, phases) in [(&dir, 4usize), (&small, 3)] {
        let db = Database::open(db_dir).unwrap();
        assert_eq!(db.index().phases().len(), phases);
        let many = db.probe_many(&boards);
        assert_eq!(many.len(), boards.len());
        let (mut ok, mut missing, mut bad) = (0, 0, 0);
        for (b, got) in boards.iter().zip(&many) {
            match (db.probe(b, None), got) {
                (Ok(want), Ok(got)) => {
                    assert_eq!(*got, want, "{}", format_board(&g, b));
                    let (c, _) = canonical(&g, b);
                    assert_eq!(want, sol.node(&c, 0));
                    ok += 1;
                }
                (Err(want), Err(got)) => {
                    assert_eq!(want.to_string(), got.to_string());
                    match got {
                        ostledb::Error::MissingDatabase { .. } => missing += 1,
                        _ => bad += 1,
                    }
                }
                (want, got) => panic!("{}: probe {want:?}, probe_many {got:?}", format_board(&g, b)),
            }
        }
        assert_eq!(bad, 2);
        assert_eq!(ok + missing + bad, boards.len());
        assert_eq!(missing > 0, phases == 3, "(3,3) is missing from the small database only");
        for b in boards.iter().step_by(7).filter(|b| db.probe(b, None).is_ok()) {
            let full = db.analyse(b, None).unwrap();
            let mut head = serde_json::to_value(&full).unwrap();
            head["moves"] = serde_json::json!([]);
            assert_eq!(serde_json::to_value(db.summary(b, None).unwrap()).unwrap(), head);
        }
    }
}

/// A game reviewed ply by ply (issue 63): on the 3x3 game, games from every fourth
/// position, each side playing its best move except at plies chosen to give a result
/// away where the position allows it (a win thrown to a draw or a loss, a draw to a
/// loss), and now and then a move that keeps the result but not the best one. Every
/// ply's values are checked against independent queries (`answer` with the moves so
/// far, as `query START --play ...`): the value before is the node's, the value after
/// the node reached seen from the mover (a move that ends the game: a capture wins in
/// 1, a suicide loses in 1), the best move is the query's first move, and the judgement
/// follows from the two values. Illegal and forbidden moves and one after the game
/// ended are refused, as `query --play` refuses them.
#[test]
fn a_review_marks_each_ply_as_independent_queries_value_it() {
    use ostledb::analysis::review::Judgement;
    let g = Geometry::new(3, 3).unwrap();
    let dir = build(&g, "review", 6);
    let db = Database::open(&dir).unwrap();
    let mut seen = std::collections::BTreeMap::new();
    let mut rng = 0x2545_F491_4F6C_DD1Du64;
    let mut next = || {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        rng
    };
    let (mut games, mut plies) = (0, 0);
    for p in db.index().phases().to_vec() {
        for i in (0..p.len()).step_by(4) {
            let start = format_board(&g, &p.position_at(i));
            // Make the game with the analysis, then review it.
            let mut list: Vec<String> = Vec::new();
            for _ in 0..12 {
                let a = db.answer(&start, None, "prev", &list, None).unwrap().analysis;
                let allowed: Vec<_> = a.moves.iter().filter(|m| !m.forbidden).collect();
                let Some(best) = allowed.first() else { break };
                let worse: Vec<_> =
                    allowed.iter().filter(|m| Judgement::of(a.outcome, m.outcome).is_blunder()).collect();
                let other: Vec<_> = allowed.iter().filter(|m| m.outcome != best.outcome).collect();
                let m = match next() % 4 {
                    0 if !worse.is_empty() => worse[next() as usize % worse.len()],
                    1 if !other.is_empty() => other[next() as usize % other.len()],
                    _ => best,
                };
                list.push(m.notation.clone());
                if m.plies == Some(1) {
                    break; // it ends the game
                }
            }
            if list.is_empty() {
                continue;
            }
            let r = db.review_text(&start, None, "prev", &list).unwrap();
            assert_eq!(r.plies.len(), list.len());
            for (k, ply) in r.plies.iter().enumerate() {
                let q = db.answer(&start, None, "prev", &list[..k], None).unwrap().analysis;
                assert_eq!((ply.board.as_str(), ply.node_index), (q.board.as_str(), q.node_index));
                assert_eq!(
                    (ply.before.outcome, ply.before.verdict),
                    (q.outcome, q.verdict),
                    "{start} {list:?} ply {k}"
                );
                assert_eq!(ply.played.notation, list[k]);
                assert_eq!(ply.best.notation, q.moves[0].notation, "the best move is query's first");
                let after = match db.answer(&start, None, "prev", &list[..=k], None) {
                    Ok(child) => child.analysis.outcome.parent(),
                    Err(_) => {
                        assert_eq!(k + 1, list.len(), "only the last move may end the game");
                        assert!(r.game_over && r.reached.is_none());
                        match ply.played.removes {
                            "opponent" => Outcome::Win(1),
                            _ => Outcome::Loss(1),
                        }
                    }
                };
                assert_eq!(ply.after.outcome, after, "{start} {list:?} ply {k}");
                let want = match (q.outcome, after) {
                    (Outcome::Win(_), Outcome::Draw) => "win-to-draw",
                    (Outcome::Win(_), Outcome::Loss(_)) => "win-to-loss",
                    (Outcome::Draw, Outcome::Loss(_)) => "draw-to-loss",
                    _ => "kept",
                };
                assert_eq!(serde_json::to_value(ply.judgement).unwrap(), want);
                assert_eq!(ply.blunder, want != "kept");
                assert_eq!(ply.best_played, after == q.moves[0].outcome);
                assert_eq!(ply.mover, if k % 2 == 0 { 1 } else { 2 });
                *seen.entry(want).or_insert(0) += 1;
                plies += 1;
            }
            assert_eq!(r.blunders as usize, r.plies.iter().filter(|p| p.blunder).count());
            if let Some(at) = &r.reached {
                let q = db.answer(&start, None, "prev", &list, None).unwrap().analysis;
                assert_eq!((at.board.as_str(), at.value.outcome), (q.board.as_str(), q.outcome));
            }
            games += 1;
        }
    }
    // Every kind of ply was made and checked.
    for kind in ["kept", "win-to-draw", "win-to-loss", "draw-to-loss"] {
        assert!(seen.get(kind).copied().unwrap_or(0) >= 5, "{seen:?}");
    }
    assert!(games > 200 && plies > 1000, "{games} games, {plies} plies");
    // What `query --play` refuses, a review refuses the same way; a move after the end too.
    let start = format_board(&g, &db.index().phases()[0].position_at(0));
    let a = db.analyse(&parse_board(&g, &start).unwrap(), None).unwrap();
    let bad = db.review_text(&start, None, "prev", &["a1-sideways".into()]).unwrap_err();
    assert!(bad.to_string().contains("in move 1"), "{bad}");
    let first = a.moves.iter().find(|m| m.plies != Some(1)).unwrap().notation.clone();
    let child = db.answer(&start, None, "prev", std::slice::from_ref(&first), None).unwrap().analysis;
    let undo = child.moves.iter().find(|m| m.forbidden).map(|m| m.notation.clone());
    if let Some(undo) = undo {
        let e = db.review_text(&start, None, "prev", &[first.clone(), undo]).unwrap_err();
        assert!(e.to_string().contains("move 2") && e.to_string().contains("forbidden"), "{e}");
    }
    let too_many = vec![first; MAX_LINE_PLIES as usize + 1];
    let e = db.review_text(&start, None, "prev", &too_many).unwrap_err();
    assert!(e.to_string().contains("must be from 0 to 1000"), "{e}");
    let _ = std::fs::remove_dir_all(&dir);
}
