//! The explorer's page, rendered on the server for the URL asked (`/?board=...`): the
//! board, the value, every move as a link to the position it leads to, and the moves
//! played, so the page reads, and its links open, without JavaScript. The script
//! (`assets/explorer.js`) then takes the same page over and plays without reloading.
//!
//! A URL holds a whole game: the board it starts from (`board`, with `prev` and `turn`,
//! the colour of the side to move: `a` blue, `b` orange), the moves played from it
//! (`moves=c1-up,hole-left`), the ply shown (`at`, by default the last: the moves after
//! it are the ones redo plays again), and the computer's side and level (`cpu`,
//! `level`). The moves are replayed here by the rules; whether the game is over is
//! derived from them, never taken from the URL (an old link's `over` is ignored).

use std::fmt::Write as _;

use serde::Serialize;

use crate::{
    Database, Error, Geometry, Judgement, Level, Move, MoveLine, Position, Report, Review, ReviewPly, Verdict,
    ends_game, forbidden_move, format_board, format_move, moves, parse_move, parse_with_prev, play,
};

/// The most plies a game's URL may hold (the longest principal variation the API gives).
pub const MAX_GAME_PLIES: usize = crate::MAX_LINE_PLIES as usize;

/// The most plies the page reviews itself (about 1 KB a ply in the page's data); the
/// script fetches the review of a longer game.
const PAGE_REVIEW_PLIES: usize = 200;

const TEMPLATE: &str = include_str!("assets/index.html");

/// One ply of a game: the move, the board it was played on and the board after it
/// (both seen from the side to move then), and, when it ended the game, its result for
/// the side that played it (`win` or `loss`).
#[derive(Clone, Debug, Serialize)]
pub struct Ply {
    /// The move (`c1-up`).
    #[serde(rename = "move")]
    pub mv: String,
    /// The board it was played on.
    pub board: String,
    /// The board after it.
    pub child: String,
    /// Its result for its mover when it ended the game: `win` or `loss`.
    pub ends: Option<&'static str>,
}

/// A game as its URL gives it, its moves replayed.
#[derive(Clone, Debug, Serialize)]
pub struct Game {
    /// The board it starts from.
    pub board: String,
    /// The board before it, which decides its forbidden move.
    pub prev: Option<String>,
    /// The colour of the side to move at the start: `a` blue, `b` orange.
    pub turn: &'static str,
    /// The moves played, replayed.
    pub moves: Vec<Ply>,
    /// The ply shown (the moves after it are redo).
    pub at: usize,
    /// The colour the computer plays, or empty.
    pub cpu: &'static str,
    /// The computer's level.
    pub level: &'static str,
}

impl Game {
    /// The colour to move after `ply` plies.
    fn turn_at(&self, ply: usize) -> &'static str {
        if ply.is_multiple_of(2) { self.turn } else { other(self.turn) }
    }

    /// The URL of this game with `moves` played and `at` shown (the last when `None`).
    fn url(&self, moves: &[&str], at: Option<usize>) -> String {
        let mut u = format!("/?board={}", self.board);
        if let Some(p) = &self.prev {
            let _ = write!(u, "&prev={p}");
        }
        if self.turn != "a" {
            let _ = write!(u, "&turn={}", self.turn);
        }
        if !moves.is_empty() {
            let _ = write!(u, "&moves={}", moves.join(","));
        }
        if let Some(k) = at.filter(|&k| k != moves.len()) {
            let _ = write!(u, "&at={k}");
        }
        if !self.cpu.is_empty() {
            let _ = write!(u, "&cpu={}&level={}", self.cpu, self.level);
        }
        u
    }

    fn names(&self) -> Vec<&str> {
        self.moves.iter().map(|p| p.mv.as_str()).collect()
    }

    /// The URL of the game after playing `mv` at the ply shown (the moves after it
    /// dropped).
    fn url_playing(&self, mv: &str) -> String {
        let mut names = self.names();
        names.truncate(self.at);
        names.push(mv);
        self.url(&names, None)
    }

    /// The URL of the same game showing ply `at`.
    fn url_at(&self, at: usize) -> String {
        self.url(&self.names(), Some(at))
    }

    /// The board shown and the board before it.
    fn current(&self) -> (&str, Option<&str>) {
        match self.at {
            0 => (&self.board, self.prev.as_deref()),
            k => (&self.moves[k - 1].child, Some(&self.moves[k - 1].board)),
        }
    }

    /// The result of the last move shown, when it ended the game.
    fn over(&self) -> Option<&'static str> {
        self.at.checked_sub(1).and_then(|k| self.moves[k].ends)
    }
}

fn other(turn: &'static str) -> &'static str {
    if turn == "a" { "b" } else { "a" }
}

fn colour_name(turn: &str) -> &'static str {
    if turn == "a" { "Blue" } else { "Orange" }
}

/// What the script reads from the page (`<script id="data">`).
#[derive(Serialize)]
struct Data<'a> {
    side: u32,
    start_pieces: u32,
    min_pieces: u32,
    /// The board a new game starts from.
    start: &'a str,
    game: Option<&'a Game>,
    /// The analysis of the position shown, as `/api/v1/position` gives it.
    position: Option<&'a Report>,
    /// The review of the game's moves, as `/api/v1/review` gives it (when it has moves).
    review: Option<&'a Review>,
    error: Option<&'a str>,
}

/// The board a new game starts from: the initial position of the game when the database
/// holds it, else the most pieces a side it holds with as many on both sides, in the
/// back rows from the left, the hole in the centre.
pub fn start_board(db: &Database) -> String {
    let g = db.geometry();
    let m = db.meta();
    let n = g.side() as usize;
    let pieces = if m.max_pieces >= 2 * m.start_pieces {
        m.start_pieces as usize
    } else {
        let even = m.phases.iter().filter(|p| p.player == p.opponent).map(|p| p.player).max();
        even.or_else(|| m.phases.iter().map(|p| p.player).min()).unwrap_or(m.start_pieces) as usize
    };
    let mut cells = vec![b'0'; n * n];
    for c in 0..pieces.min(n) {
        cells[c] = b'2';
        cells[(n - 1) * n + c] = b'1';
    }
    cells[(n / 2) * n + n / 2] = b'3';
    let digits = String::from_utf8(cells).expect("ASCII");
    let rows: Vec<&str> = (0..n).map(|r| &digits[r * n..(r + 1) * n]).collect();
    rows.join("-")
}

/// The parameters of a page's URL, percent-decoded.
fn params(query: &str) -> Result<Vec<(String, String)>, String> {
    const KNOWN: [&str; 8] = ["board", "prev", "turn", "moves", "at", "cpu", "level", "over"];
    crate::serve::query_string::parameters(query, &KNOWN, |k| {
        format!("unknown parameter `{k}` in the page's URL; it takes board, prev, turn, moves, at, cpu and level")
    })
}

/// Read a game from a page's query string and replay its moves. A move that cannot be
/// played ends the game read there, with the reason.
fn read_game(db: &Database, query: &str) -> Result<(Game, Option<String>), String> {
    let g = db.geometry();
    let p = params(query)?;
    let get = |name: &str| p.iter().find(|(k, _)| k == name).map(|(_, v)| v.as_str());
    let board = match get("board") {
        Some(b) => b.to_string(),
        None => start_board(db),
    };
    let (pos, prev) = parse_with_prev(g, &board, get("prev"), "prev").map_err(|e| e.to_string())?;
    let turn = match get("turn") {
        None | Some("a") => "a",
        Some("b") => "b",
        Some(t) => {
            return Err(format!("`turn` is a or b (blue or orange to move), not `{}`", crate::shown_input(t, t.len())));
        }
    };
    let cpu = match get("cpu") {
        None | Some("") => "",
        Some("a") => "a",
        Some("b") => "b",
        Some(c) => {
            return Err(format!(
                "`cpu` is a or b (the side the computer plays), not `{}`",
                crate::shown_input(c, c.len())
            ));
        }
    };
    let level = match get("level") {
        None => "medium",
        Some(l) => Level::parse(l).map_err(|e| e.to_string())?.name(),
    };
    let mut game = Game {
        board: format_board(g, &pos),
        prev: prev.map(|p| format_board(g, &p)),
        turn,
        moves: Vec::new(),
        at: 0,
        cpu,
        level,
    };
    let list: Vec<&str> = get("moves").unwrap_or("").split(',').filter(|m| !m.is_empty()).collect();
    let mut problem = None;
    if list.len() > MAX_GAME_PLIES {
        problem = Some(format!("the game has {} plies; the page replays the first {MAX_GAME_PLIES}", list.len()));
    }
    let (mut pos, mut prev) = (pos, prev);
    for (n, text) in list.iter().take(MAX_GAME_PLIES).enumerate() {
        match replay(g, &pos, prev.as_ref(), text) {
            Ok((mv, child, ends)) => {
                game.moves.push(Ply {
                    mv: format_move(g, mv),
                    board: format_board(g, &pos),
                    child: format_board(g, &child),
                    ends,
                });
                if ends.is_some() {
                    if n + 1 < list.len() {
                        problem = Some(format!("move {} ended the game: the moves after it are left out", n + 1));
                    }
                    break;
                }
                prev = Some(pos);
                pos = child;
            }
            Err(why) => {
                problem = Some(format!(
                    "move {} `{}` cannot be played ({why}): the game stops before it",
                    n + 1,
                    crate::shown_input(text, text.len())
                ));
                break;
            }
        }
    }
    game.at = match get("at") {
        None => game.moves.len(),
        Some(a) => match a.parse::<usize>() {
            Ok(k) if k <= game.moves.len() => k,
            _ => {
                problem = Some(format!("`at` is a ply from 0 to {}", game.moves.len()));
                game.moves.len()
            }
        },
    };
    Ok((game, problem))
}

/// Play `text` on `pos` (after `prev`): the move, the board after it, and its result for
/// the mover when it ends the game.
fn replay(
    g: &Geometry,
    pos: &Position,
    prev: Option<&Position>,
    text: &str,
) -> Result<(Move, Position, Option<&'static str>), String> {
    let mv = parse_move(g, text).map_err(|e| e.to_string())?;
    if !moves(g, pos).contains(&mv) {
        return Err(format!("not a move of {}", format_board(g, pos)));
    }
    if let Some(p) = prev
        && forbidden_move(g, pos, p).map_err(|e| e.to_string())? == Some(mv)
    {
        return Err("forbidden: it would undo the opponent's last move".into());
    }
    let r = play(g, pos, mv).ok_or("not a move of this board")?;
    // The child is seen from the side to move next: when that side has too few pieces
    // the mover won; when the mover has (it pushed off its own piece), the mover lost.
    let ends =
        ends_game(g, &r.child).then(|| if r.child.player.count_ones() < g.min_pieces() { "win" } else { "loss" });
    Ok((mv, r.child, ends))
}

/// Escape text for HTML (content and quoted attributes).
fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

fn plies_text(n: u32) -> String {
    format!("{n} {}", if n == 1 { "ply" } else { "plies" })
}

/// The status line of a position: its text and class.
fn status_of(a: &crate::Analysis, turn: &str) -> (String, &'static str) {
    let who = colour_name(turn);
    let n = a.plies.unwrap_or(0);
    match a.verdict {
        Verdict::ImmediateWin => (format!("{who} to move wins at once (a capture ends the game)"), "win"),
        Verdict::Win => (format!("{who} to move wins in {}", plies_text(n)), "win"),
        Verdict::Loss => (format!("{who} to move loses in {}", plies_text(n)), "loss"),
        Verdict::Draw => ("Draw: neither side can force a win".to_string(), "draw"),
    }
}

/// The title and explanation of a finished game, `over` the last move's result for its
/// mover, `turn` the colour that would move next.
fn over_text(over: &str, turn: &str) -> (String, String) {
    let mover = colour_name(other(if turn == "a" { "a" } else { "b" }));
    let next = colour_name(turn);
    if over == "win" {
        (
            format!("Game over: {mover} wins"),
            format!("{mover}'s last move took a piece of {next}, who has too few left."),
        )
    } else {
        (
            format!("Game over: {next} wins"),
            format!("{mover}'s last move pushed off one of {mover}'s own pieces, and {mover} has too few left."),
        )
    }
}

fn move_value(m: &MoveLine) -> String {
    let n = m.plies.unwrap_or(0);
    match (m.verdict, n) {
        (Verdict::Draw, _) => "draw".into(),
        (Verdict::Loss, 1) => "loses at once".into(),
        (_, 1) => "wins at once".into(),
        (Verdict::Loss, n) => format!("loses in {n}"),
        (_, n) => format!("wins in {n}"),
    }
}

/// The square a move starts from and the one it goes to, on `board` (notation).
fn squares_of(g: &Geometry, board: &str, mv: &str) -> Option<(u32, Option<u32>)> {
    let mv = parse_move(g, mv).ok()?;
    let (from, dir) = match mv {
        Move::Piece { from, dir } => (from as u32, dir),
        Move::Hole { dir } => (board.chars().filter(|c| *c != '-').position(|c| c == '3')? as u32, dir),
    };
    Some((from, g.step(from, dir)))
}

fn board_html(g: &Geometry, board: &str, turn: &str, last: Option<(u32, Option<u32>)>) -> String {
    let n = g.side();
    let mut out = String::new();
    for (i, d) in board.chars().filter(|c| *c != '-').enumerate() {
        let i = i as u32;
        let (row, col) = (i / n, i % n);
        let name = format!("{}{}", (b'a' + col as u8) as char, n - row);
        let (what, inner) = match d {
            '3' => ("hole".to_string(), r#"<div class="holemark"></div>"#.to_string()),
            '1' | '2' => {
                let c = if d == '1' { turn } else { other(if turn == "a" { "a" } else { "b" }) };
                (colour_name(c).to_string(), format!(r#"<div class="piece {c}"></div>"#))
            }
            _ => ("empty".to_string(), String::new()),
        };
        let mut class = String::from("sq");
        if let Some((from, to)) = last {
            if from == i {
                class.push_str(" last-from");
            }
            if to == Some(i) {
                class.push_str(" last-to");
            }
        }
        let _ = write!(out, r#"<div class="{class}" data-sq="{i}" role="img" aria-label="{name} {what}">"#);
        if col == 0 {
            let _ = write!(out, r#"<span class="coord rank">{}</span>"#, n - row);
        }
        if row == n - 1 {
            let _ = write!(out, r#"<span class="coord file">{}</span>"#, (b'a' + col as u8) as char);
        }
        out.push_str(&inner);
        out.push_str("</div>");
    }
    out
}

fn moves_html(game: &Game, a: &crate::Analysis) -> String {
    let mut out = String::new();
    let groups = [("win", "Winning"), ("draw", "Drawing"), ("loss", "Losing"), ("forbidden", "Forbidden")];
    for (kind, title) in groups {
        let list: Vec<&MoveLine> = a
            .moves
            .iter()
            .filter(|m| {
                if kind == "forbidden" {
                    m.forbidden
                } else {
                    !m.forbidden
                        && match m.verdict {
                            Verdict::Win | Verdict::ImmediateWin => kind == "win",
                            Verdict::Draw => kind == "draw",
                            Verdict::Loss => kind == "loss",
                        }
                }
            })
            .collect();
        if list.is_empty() {
            continue;
        }
        let _ = write!(out, r#"<div class="group {kind}"><h3>{title} ({})</h3>"#, list.len());
        if kind == "forbidden" {
            out.push_str(
                r#"<p class="why muted">It would undo the opponent's last move, which the rules do not allow.</p>"#,
            );
        }
        for m in list {
            let name = esc(&m.notation);
            if m.forbidden {
                let _ = write!(
                    out,
                    r#"<span class="mv forbidden" data-move="{name}" aria-disabled="true" title="Forbidden: it would undo the opponent's last move"><span><span class="name">{name}</span></span><span class="val">cannot be played</span></span>"#
                );
                continue;
            }
            let mut badges = String::new();
            if m.best {
                badges.push_str(r#"<span class="badge best">best</span>"#);
            }
            if m.plies == Some(1) {
                badges.push_str(r#"<span class="badge end">ends the game</span>"#);
            } else if m.removes != "nothing" {
                let what = if m.removes == "own" { "drops own piece" } else { "captures" };
                let _ = write!(badges, r#"<span class="badge end">{what}</span>"#);
            }
            let _ = write!(
                out,
                r#"<a class="mv" href="{}" data-move="{name}" title="{}"><span><span class="name">{name}</span>{badges}</span><span class="val">{}</span></a>"#,
                esc(&game.url_playing(&m.notation)),
                esc(&m.text),
                move_value(m)
            );
        }
        out.push_str("</div>");
    }
    out
}

/// The moves played, one entry a ply, each a link to the game at that ply. Each entry
/// has a `.mark`: what the ply did to the result, from the game's review when there is
/// one (a blunder, the best move, or a result kept less well).
fn played_html(game: &Game, review: Option<&Review>) -> String {
    let mut out = String::new();
    let here = |k: usize| if k == game.at { r#" here" aria-current="step""# } else { "\"" };
    let _ = write!(out, r#"<li class="ply start{}><a href="{}">start</a></li>"#, here(0), esc(&game.url_at(0)));
    for (k, p) in game.moves.iter().enumerate() {
        let ply = k + 1;
        let future = if ply > game.at { " future" } else { "" };
        let mark = match review.and_then(|r| r.plies.get(k)) {
            Some(r) => {
                let (text, class) = mark_of(r);
                format!(r#"<span class="mark {class}" title="{}">{text}</span>"#, esc(&mark_title(r)))
            }
            None => r#"<span class="mark"></span>"#.to_string(),
        };
        let _ = write!(
            out,
            r#"<li class="ply{future}{} data-ply="{ply}"><a href="{}"><span class="n">{ply}.</span><span class="dot {}"></span><span class="mono">{}</span></a>{mark}</li>"#,
            here(ply),
            esc(&game.url_at(ply)),
            game.turn_at(k),
            esc(&p.mv)
        );
    }
    out
}

/// A judgement in a few characters: `win→loss`.
fn judgement_words(j: Judgement) -> &'static str {
    match j {
        Judgement::Kept => "kept",
        Judgement::WinToDraw => "win→draw",
        Judgement::WinToLoss => "win→loss",
        Judgement::DrawToLoss => "draw→loss",
    }
}

/// A reviewed ply's mark and its class: `?? win→loss` for a won game thrown away, `?`
/// for a win drawn or a draw lost, a tick for the best move, `kept` for a move that keeps
/// the result less well (a slower win, a quicker loss). `explorer.js` writes the same.
fn mark_of(p: &ReviewPly) -> (String, &'static str) {
    match p.judgement {
        Judgement::WinToLoss => (format!("?? {}", judgement_words(p.judgement)), "blunder severe"),
        Judgement::WinToDraw | Judgement::DrawToLoss => (format!("? {}", judgement_words(p.judgement)), "blunder"),
        Judgement::Kept if p.best_played => ("✓".into(), "best"),
        Judgement::Kept => ("kept".into(), "kept"),
    }
}

/// A value in a few words, as the move list gives it (`wins in 7`).
fn value_words(verdict: Verdict, plies: Option<u32>) -> String {
    match (verdict, plies.unwrap_or(0)) {
        (Verdict::Draw, _) => "draw".into(),
        (Verdict::ImmediateWin, _) | (Verdict::Win, 1) => "wins at once".into(),
        (Verdict::Loss, 1) => "loses at once".into(),
        (Verdict::Loss, n) => format!("loses in {n}"),
        (Verdict::Win, n) => format!("wins in {n}"),
    }
}

/// A reviewed ply's tooltip: the value before and after it, and the best move.
fn mark_title(p: &ReviewPly) -> String {
    format!(
        "{} → {}; best {} ({})",
        value_words(p.before.verdict, p.before.plies),
        value_words(p.after.verdict, p.after.plies),
        p.best.notation,
        value_words(p.best.verdict, p.best.plies)
    )
}

/// The line above the moves played: the blunders, each a link to its ply.
fn review_html(game: &Game, review: Option<&Review>) -> String {
    let Some(r) = review else { return String::new() };
    let blunders: Vec<&ReviewPly> = r.plies.iter().filter(|p| p.blunder).collect();
    if blunders.is_empty() {
        return format!("No blunders in {}.", plies_text(r.plies.len() as u32));
    }
    let list: Vec<String> = blunders
        .iter()
        .map(|p| {
            format!(
                r#"<a href="{}" data-ply="{}">ply {}</a> ({})"#,
                esc(&game.url_at(p.ply as usize)),
                p.ply,
                p.ply,
                judgement_words(p.judgement)
            )
        })
        .collect();
    let n = blunders.len();
    format!(r#"<strong>{n} {}</strong>: {}"#, if n == 1 { "blunder" } else { "blunders" }, list.join(", "))
}

/// A link attribute: `href="..."` when there is somewhere to go, else disabled.
fn href(url: Option<String>) -> String {
    match url {
        Some(u) => format!(r#"href="{}""#, esc(&u)),
        None => r#"aria-disabled="true""#.to_string(),
    }
}

/// The page for `query` (the URL's query string): its HTTP status and its HTML.
pub fn render(db: &Database, query: &str) -> (u16, String) {
    let g = db.geometry();
    let start = start_board(db);
    let held: Vec<String> = db.meta().phases.iter().map(|p| p.phase().to_string()).collect();
    let dbinfo =
        format!("{0}×{0} board · database of {1} · ostledb {2}", g.side(), held.join(", "), env!("CARGO_PKG_VERSION"));
    let (game, mut problem, mut status) = match read_game(db, query) {
        Ok((game, problem)) => (Some(game), problem, 200),
        Err(e) => (None, Some(e), 400),
    };
    let mut report: Option<Report> = None;
    let mut review: Option<Review> = None;
    let mut fields: Vec<(&str, String)> = vec![("dbinfo", esc(&dbinfo)), ("side", g.side().to_string())];
    let (title, class);
    if let Some(game) = &game {
        let (board, prev) = game.current();
        let turn = game.turn_at(game.at);
        let last = game.at.checked_sub(1).and_then(|k| squares_of(g, &game.moves[k].board, &game.moves[k].mv));
        fields.push(("board", board_html(g, board, turn, last)));
        let names = game.names();
        let undo = (game.at > 0).then(|| game.url_at(game.at - 1));
        let redo = (game.at < names.len()).then(|| game.url_at(game.at + 1));
        let mut best = None;
        if let Some(over) = game.over() {
            let (t, why) = over_text(over, turn);
            fields.push((
                "moves",
                format!(r#"<div class="over"><strong>{}</strong><p>{}</p><p class="muted">No moves: undo to go back.</p></div>"#, esc(&t), esc(&why)),
            ));
            fields.push(("turn", String::new()));
            (title, class) = (t, "over");
        } else {
            let analysed = parse_with_prev(g, board, prev, "prev").and_then(|(p, q)| db.analyse(&p, q.as_ref()));
            match analysed {
                Ok(a) => {
                    let (t, c) = status_of(&a, turn);
                    (title, class) = (t, c);
                    fields.push(("moves", moves_html(game, &a)));
                    best = a.best_move().map(|m| game.url_playing(&m.notation));
                    fields.push((
                        "turn",
                        format!(
                            r#"<span class="who"><span class="dot {turn}"></span> {} to move</span>"#,
                            colour_name(turn)
                        ),
                    ));
                    report = Some(Report { analysis: a, line: None });
                }
                Err(e) => {
                    status = if matches!(e, Error::MissingDatabase { .. }) { 404 } else { 400 };
                    (title, class) = (e.to_string(), "error");
                    fields.push(("moves", String::new()));
                    fields.push(("turn", String::new()));
                }
            }
        }
        fields.push(("undo", href(undo)));
        fields.push(("redo", href(redo)));
        fields.push(("best", href(best)));
        // The review of the moves played, for the marks (its failure only leaves them out;
        // a longer game is left to the script, which fetches it).
        if !game.moves.is_empty() && game.moves.len() <= PAGE_REVIEW_PLIES {
            let names: Vec<String> = game.names().iter().map(|m| m.to_string()).collect();
            review = db.review_text(&game.board, game.prev.as_deref(), "prev", &names).ok();
        }
        fields.push(("played", played_html(game, review.as_ref())));
        fields.push(("review", review_html(game, review.as_ref())));
        let json = match prev {
            Some(p) => format!("/api/v1/position?board={board}&prev={p}"),
            None => format!("/api/v1/position?board={board}"),
        };
        fields.push(("jsonlink", esc(&json)));
        let fresh = Game {
            board: start.clone(),
            prev: None,
            turn: "a",
            moves: Vec::new(),
            at: 0,
            cpu: game.cpu,
            level: game.level,
        };
        fields.push(("newgame", esc(&fresh.url(&[], None))));
    } else {
        (title, class) = (problem.take().unwrap_or_default(), "error");
        for f in ["board", "moves", "turn", "played", "review"] {
            fields.push((f, String::new()));
        }
        for f in ["undo", "redo", "best"] {
            fields.push((f, href(None)));
        }
        fields.push(("jsonlink", "/api/v1/stats".into()));
        fields.push(("newgame", "/".into()));
    }
    fields.push(("title", esc(&title)));
    fields.push(("status", esc(&title)));
    fields.push(("status_class", class.to_string()));
    fields.push(("message", problem.as_deref().map(esc).unwrap_or_default()));
    let data = Data {
        side: g.side(),
        start_pieces: g.start_pieces(),
        min_pieces: g.min_pieces(),
        start: &start,
        game: game.as_ref(),
        position: report.as_ref(),
        review: review.as_ref(),
        error: problem.as_deref(),
    };
    // Inside <script>, `<` is written as an escape so no `</script>` can end it early.
    let json = serde_json::to_string(&data).unwrap_or_else(|_| "null".into()).replace('<', "\\u003c");
    fields.push(("data", json));
    (status, fill(TEMPLATE, &fields))
}

/// The template with every `{{name}}` replaced by its field.
fn fill(template: &str, fields: &[(&str, String)]) -> String {
    let mut out = String::with_capacity(template.len() + 16 * 1024);
    let mut rest = template;
    while let Some(i) = rest.find("{{") {
        out.push_str(&rest[..i]);
        let after = &rest[i + 2..];
        let Some(j) = after.find("}}") else {
            out.push_str(&rest[i..]);
            return out;
        };
        let name = &after[..j];
        if let Some((_, v)) = fields.iter().find(|(k, _)| *k == name) {
            out.push_str(v);
        }
        rest = &after[j + 2..];
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fill_replaces_every_field_and_drops_unknown_ones() {
        let f = [("a", "1".to_string()), ("b", "<2>".to_string())];
        assert_eq!(fill("x{{a}}y{{b}}z{{c}}", &f), "x1y<2>z");
        assert_eq!(fill("no end {{a", &f), "no end {{a");
    }

    #[test]
    fn html_is_escaped() {
        assert_eq!(esc(r#"<a href="x">&'"#), "&lt;a href=&quot;x&quot;&gt;&amp;&#39;");
    }
}
