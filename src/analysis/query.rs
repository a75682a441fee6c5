//! What a person asks of a position: its verdict in the published terms, every move with
//! its outcome (best first, the forbidden one last and marked), and the principal variation.

use serde::Serialize;

use crate::error::Error;
use crate::game::forbidden::forbidden_move;
use crate::game::moves::{Move, Removal, is_immediate_win, moves, play, transform_move};
use crate::game::notation::{code_to_base64, format_board, format_move};
use crate::game::{Geometry, Position};
use crate::record::outcome::Outcome;
use crate::store::Store;

/// The verdict of a node in the published terms (OSTLE.md section 4).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Verdict {
    /// The side to move can capture the opponent's second-to-last piece at once
    /// ("checkmate, wins in 1 ply").
    ImmediateWin,
    /// The side to move wins.
    Win,
    /// The side to move loses.
    Loss,
    /// Neither side can force a win.
    Draw,
}

impl Verdict {
    /// The verdict and ply count (`None` for a draw) of a node's value.
    pub fn of(checkmate: bool, o: Outcome) -> (Verdict, Option<u32>) {
        match o {
            Outcome::Win(n) if checkmate => (Verdict::ImmediateWin, Some(n)),
            Outcome::Win(n) => (Verdict::Win, Some(n)),
            Outcome::Loss(n) => (Verdict::Loss, Some(n)),
            Outcome::Draw => (Verdict::Draw, None),
        }
    }
}

/// A node's value in words: the published tool's wording ("checkmate", "player wins in
/// N ..."), with its "moves" said as what they are, plies (issue 63).
pub fn published_text(checkmate: bool, o: Outcome) -> String {
    if checkmate { "checkmate, wins in 1 ply".to_string() } else { o.describe() }
}

/// One move of an analysed position.
#[derive(Clone, Debug, Serialize)]
pub struct MoveLine {
    /// The move in readable notation (`c1-up`, `hole-left`).
    #[serde(rename = "move")]
    pub notation: String,
    /// 1-based index in the move list of the board as given.
    pub index: usize,
    /// The move itself.
    #[serde(skip)]
    pub mv: Move,
    /// For the side that plays it: win, loss or draw (`immediate-win` is not used for
    /// moves; a capture that ends the game is a win in 1).
    pub verdict: Verdict,
    /// Plies to the end of the game after choosing it, counting this move (`None` for a draw).
    pub plies: Option<u32>,
    /// Its value for the mover.
    pub outcome: Outcome,
    /// The value in words.
    pub text: String,
    /// What it removes: "nothing", "opponent" or "own".
    pub removes: &'static str,
    /// This is the forbidden move (it would undo the opponent's last move).
    pub forbidden: bool,
    /// Among the best allowed moves.
    pub best: bool,
    /// The board after the move, seen from the side to move next (the digits 1 and 2
    /// swap; the board is not turned). After a move of 1 ply (`plies` is 1) the game is
    /// over and this board is not a position to query.
    pub child: String,
}

/// A position as `ostledb query` shows it.
#[derive(Clone, Debug, Serialize)]
pub struct Analysis {
    /// The board as given.
    pub board: String,
    /// Its canonical form.
    pub canonical: String,
    /// The canonical 55-bit code.
    pub code: u64,
    /// That code in the published base 64.
    pub base64: String,
    /// The published node index (0: nothing forbidden).
    pub node_index: usize,
    /// An immediate-win ("checkmate") position.
    pub checkmate: bool,
    /// The node's verdict.
    pub verdict: Verdict,
    /// Plies to the end of the game (`None` for a draw).
    pub plies: Option<u32>,
    /// The node's value.
    pub outcome: Outcome,
    /// The value in the published words.
    pub text: String,
    /// The fewest plies from the initial position to this node, when a breadth-first
    /// search is stored with the database (absent otherwise).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub from_start: Option<FromStart>,
    /// Every legal move: the playable ones best first (ties in move-list order), then
    /// the forbidden one, if any, last, with `forbidden` set. The first entry is a move
    /// that can be played unless the forbidden move is the only one.
    pub moves: Vec<MoveLine>,
    /// The position.
    #[serde(skip)]
    pub position: Position,
}

/// A node's distance from the initial position, from a stored breadth-first search.
#[derive(Clone, Debug, Serialize)]
pub struct FromStart {
    /// The plies (`None`: not reached within the stored depths).
    pub depth: Option<u32>,
    /// The deepest stored depth.
    pub searched_to: u32,
    /// The search found every reachable node (so `None` means unreachable).
    pub complete: bool,
    /// The expansion convention (`published`).
    pub convention: &'static str,
    /// The depth of the first node of the board's position (any forbidden move), when the
    /// search is stored by positions (`ostledb bfs --by-positions --store`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub position_depth: Option<u32>,
}

impl Analysis {
    /// The first best allowed move (`None` when there is no allowed move).
    pub fn best_move(&self) -> Option<&MoveLine> {
        self.moves.iter().find(|m| m.best)
    }
}

/// A side has fewer than the pieces a live position needs: the move to `child` ended
/// the game.
pub fn ends_game(g: &Geometry, child: &Position) -> bool {
    child.player.count_ones() < g.min_pieces() || child.opponent.count_ones() < g.min_pieces()
}

fn move_text(removal: Removal, o: Outcome) -> String {
    match (removal, o) {
        (Removal::Opponent, Outcome::Win(1)) => "wins at once (captures the opponent's second piece)".to_string(),
        (Removal::Own, Outcome::Loss(1)) => "loses at once (drops its own second piece)".to_string(),
        _ => o.describe(),
    }
}

/// The verdict of `board` (with `prev`, the board before the opponent's last move
/// seen from the opponent, which decides the forbidden move) and of every move.
pub fn analyse(db: &Store, board: &Position, prev: Option<&Position>) -> Result<Analysis, Error> {
    let (mut a, node) = head(db, board, prev)?;
    let g = db.geometry();
    let (canon, k, j) = (node.canon, node.symmetry, node.j);
    let forbidden_canon = (j > 0).then(|| moves(g, &canon)[j - 1]);
    // The node forbids move j of the canonical form: the first that reaches an image
    // of the previous board. On a symmetric board that can be the image of another
    // move than the exact undo, which the rules forbid and `play_moves` refuses; both
    // reach images of the previous board, so they are worth the same, and the exact
    // undo is the one marked, so that the list's playable moves are the ones the
    // rules let be played (issue 63).
    let undo = match prev {
        Some(p) if j > 0 => forbidden_move(g, board, p)?,
        _ => None,
    };
    let allowed = |mv| match undo {
        Some(u) => mv != u,
        None => forbidden_canon != Some(transform_move(g, k, mv)),
    };
    let mut list: Vec<MoveLine> = db
        .moves(board)?
        .into_iter()
        .map(|v| {
            let (verdict, plies) = Verdict::of(false, v.outcome);
            MoveLine {
                child: format_board(g, &v.child),
                notation: format_move(g, v.mv),
                index: v.index,
                mv: v.mv,
                verdict,
                plies,
                outcome: v.outcome,
                text: move_text(v.removal, v.outcome),
                removes: v.removal.name(),
                forbidden: !allowed(v.mv),
                best: false,
            }
        })
        .collect();
    // The one place the order of a move list is made (`query`, the API and Python
    // all show this list): the playable moves best first, a stable sort keeping
    // move-list order among equal values, and the forbidden move last, so that the
    // first entry is always a move that can be played (issue 63).
    list.sort_by(|a, b| {
        a.forbidden.cmp(&b.forbidden).then_with(|| {
            if a.outcome.better_than(b.outcome) {
                std::cmp::Ordering::Less
            } else if b.outcome.better_than(a.outcome) {
                std::cmp::Ordering::Greater
            } else {
                std::cmp::Ordering::Equal
            }
        })
    });
    let best = list.first().filter(|m| !m.forbidden).map(|m| m.outcome);
    for m in &mut list {
        m.best = !m.forbidden && Some(m.outcome) == best;
    }
    a.moves = list;
    Ok(a)
}

/// [`analyse`] without the moves (`moves` is empty): the node's own verdict,
/// at the cost of one lookup instead of one per move.
pub fn summary(db: &Store, board: &Position, prev: Option<&Position>) -> Result<Analysis, Error> {
    head(db, board, prev).map(|(a, _)| a)
}

fn head(db: &Store, board: &Position, prev: Option<&Position>) -> Result<(Analysis, crate::store::db::Node), Error> {
    let g = db.geometry();
    let node = db.node(board, prev)?;
    let value = db.node_value(&node)?;
    let (canon, j) = (node.canon, node.j);
    let checkmate = is_immediate_win(g, board);
    let (verdict, plies) = Verdict::of(checkmate, value);
    let from_start = from_start(db, &canon, j)?;
    let a = Analysis {
        from_start,
        board: format_board(g, board),
        canonical: format_board(g, &canon),
        code: canon.code(),
        base64: code_to_base64(canon.code()),
        node_index: j,
        checkmate,
        verdict,
        plies,
        outcome: value,
        text: published_text(checkmate, value),
        moves: Vec::new(),
        position: *board,
    };
    Ok((a, node))
}

/// How far node `(canon, j)` is from the start: by the first depths of positions when
/// they are stored (every node of the game), else by a stored node-list search, else
/// `None`.
pub fn from_start(db: &Store, canon: &Position, j: usize) -> Result<Option<FromStart>, Error> {
    if let Some(f) = db.first_depths()? {
        return Ok(Some(FromStart {
            depth: f.node_depth(canon, j)?,
            searched_to: f.max_depth(),
            complete: f.summary().complete,
            convention: crate::game::node::Convention::Published.name(),
            position_depth: f.position_depth(canon)?,
        }));
    }
    Ok(match db.bfs()? {
        Some(b) => Some(FromStart {
            depth: b.depth_of_key(crate::game::node::node_key(canon.code(), j))?,
            searched_to: b.max_depth().unwrap_or(0),
            complete: b.summary().complete,
            convention: b.summary().convention,
            position_depth: None,
        }),
        None => None,
    })
}

/// The principal variation from `board`: each side plays its first best allowed
/// move, until the game ends (a decided node), the line comes back to a node it has
/// passed (a draw), or for `max_plies` plies, which must be from 1 to
/// [`MAX_LINE_PLIES`] ([`Error::OutOfRange`] otherwise). Each step is the position
/// before the move and the move's line; [`Line::end`] says how the line ended.
///
/// A node is a board as it stands with its published node index (which of its moves
/// is forbidden): the moves played from it, and so the rest of the line, depend on
/// nothing else. Once a node recurs the line repeats the plies since its first visit
/// for ever, so it stops there with [`LineEnd::Repeats`] (a decided line never
/// repeats: its distances fall by one a ply).
pub fn line(db: &Store, board: &Position, prev: Option<&Position>, max_plies: u32) -> Result<Line, Error> {
    check_line_plies("max_plies", max_plies as u64)?;
    let g = db.geometry();
    let mut pos = *board;
    let mut prev = prev.copied();
    let mut steps = Vec::new();
    // The ply (0-based) at which each node of the line was left.
    let mut seen: std::collections::HashMap<(Position, usize), u32> = std::collections::HashMap::new();
    let end = loop {
        let a = analyse(db, &pos, prev.as_ref())?;
        if let Some(&k) = seen.get(&(pos, a.node_index)) {
            break LineEnd::Repeats { from: k + 1 };
        }
        if steps.len() >= max_plies as usize {
            break LineEnd::MaxPlies;
        }
        seen.insert((pos, a.node_index), steps.len() as u32);
        let Some(m) = a.best_move().cloned() else { break LineEnd::NoMove };
        let r = play(g, &pos, m.mv).expect("listed moves are legal");
        steps.push(Step { board: a.board, verdict: a.verdict, plies: a.plies, text: a.text, mv: m });
        if ends_game(g, &r.child) {
            break LineEnd::GameOver;
        }
        prev = Some(pos);
        pos = r.child;
    };
    Ok(Line { steps, end })
}

/// The most plies [`line()`] plays, and so the bound of every front end's line
/// length: `query --max-plies`, the HTTP API's `max_plies` (the server's
/// `Limits::max_line_plies` defaults to it and cannot exceed it) and Python's
/// `Database.line`. A decided line is as many plies as its distance, at most 255 (the
/// longest of the game is 147); a drawn one stops where it starts to repeat. A longer
/// line could only be a drawn line that has not repeated yet, and each ply costs a
/// node's analysis and about 0.5 KB of steps: unbounded, `max_plies` = 2^31 filled
/// memory (issue 61).
pub const MAX_LINE_PLIES: u32 = 1000;

/// The length of a principal variation when none is asked for: `query --max-plies`, the
/// HTTP API's `max_plies` and Python's `Database.line` all default to it. Longer than
/// most decided lines of the game, short enough to read on a screen.
pub const DEFAULT_LINE_PLIES: u32 = 40;

/// Refuse a line length outside 1..=[`MAX_LINE_PLIES`]; `what` names the argument as
/// the caller wrote it (`max_plies`, `--max-plies`, `line`).
pub fn check_line_plies(what: &str, n: u64) -> Result<u32, Error> {
    if (1..=MAX_LINE_PLIES as u64).contains(&n) {
        return Ok(n as u32);
    }
    Err(line_plies_out_of_range(what, n.to_string()))
}

/// The error of a line length `given` (as written) outside 1..=[`MAX_LINE_PLIES`].
pub fn line_plies_out_of_range(what: &str, given: String) -> Error {
    Error::OutOfRange {
        what: what.to_string(),
        given,
        min: 1,
        max: MAX_LINE_PLIES as u64,
        why: "MAX_LINE_PLIES: a decided line is at most 255 plies, a drawn one stops where it repeats".to_string(),
    }
}

/// How a principal variation ended. In JSON (`query --json --line`, the API's `/line`)
/// it is the `line_end` object, its kind in `reason`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "reason", rename_all = "kebab-case")]
pub enum LineEnd {
    /// The last move ended the game: the line of a decided node, as many plies as its
    /// distance.
    GameOver,
    /// The next node (board and forbidden move) is the one ply `from` (1-based) was
    /// played from: the line would repeat plies `from` to the last for ever. Only a
    /// drawn line repeats.
    Repeats {
        /// The ply the repetition starts again from.
        from: u32,
    },
    /// `max_plies` plies were played before the game ended or the line repeated.
    MaxPlies,
    /// The side to move has no allowed move (its only move is forbidden).
    NoMove,
}

/// A principal variation: its plies and how it ended.
#[derive(Clone, Debug, Serialize)]
pub struct Line {
    /// One step a ply, from the board asked about.
    #[serde(rename = "line")]
    pub steps: Vec<Step>,
    /// Why it stops where it does.
    #[serde(rename = "line_end")]
    pub end: LineEnd,
}

/// One ply of a principal variation.
#[derive(Clone, Debug, Serialize)]
pub struct Step {
    /// The board before the move, seen from the side to move.
    pub board: String,
    /// Its verdict.
    pub verdict: Verdict,
    /// Plies to the end (`None` for a draw).
    pub plies: Option<u32>,
    /// The verdict in words.
    pub text: String,
    /// The move played.
    #[serde(rename = "move")]
    pub mv: MoveLine,
}

/// What a query answers: the analysis of a position and, when asked, its principal
/// variation. `ostledb query --json` prints it, and so does the HTTP API.
#[derive(Clone, Debug, Serialize)]
pub struct Report {
    /// The position analysed.
    #[serde(flatten)]
    pub analysis: Analysis,
    /// The principal variation (with `--line`, or the API's `/line`): the fields `line`
    /// (its steps) and `line_end` (how it ended).
    #[serde(flatten)]
    pub line: Option<Line>,
}

/// Parse a board and an optional previous board (checked to lead to it by one move);
/// `prev_name` names the previous board in messages (`--prev`, `prev`).
pub fn parse_with_prev(
    g: &Geometry,
    board: &str,
    prev: Option<&str>,
    prev_name: &str,
) -> Result<(Position, Option<Position>), Error> {
    let pos = crate::game::notation::parse_board(g, board)?;
    let prev = match prev {
        Some(p) => {
            let p = crate::game::notation::parse_board(g, p)
                .map_err(|e| e.in_context(&format!("the previous board ({prev_name})")))?;
            forbidden_move(g, &pos, &p)?;
            Some(p)
        }
        None => None,
    };
    Ok((pos, prev))
}

/// Play readable moves (`c1-up,hole-left`) from `board`, each by the side to move then,
/// refusing an illegal move, the forbidden move and moves after the game has ended.
/// Returns the final board and the board before it (for its forbidden move).
pub fn play_moves(
    g: &Geometry,
    board: &Position,
    prev: Option<&Position>,
    list: &[String],
) -> Result<(Position, Option<Position>), Error> {
    let mut pos = *board;
    let mut prev = prev.copied();
    for (n, text) in list.iter().enumerate() {
        let (_, child) = play_checked(g, &pos, prev.as_ref(), n, text)?;
        if ends_game(g, &child) {
            let at = |why: &str| Error::InvalidArgument(format!("move {} `{text}`: {why}", n + 1));
            if n + 1 < list.len() {
                return Err(at("it ends the game, so no move can follow it"));
            }
            return Err(at("it ends the game; there is no position after it to query"));
        }
        prev = Some(pos);
        pos = child;
    }
    Ok((pos, prev))
}

/// Move `n` (0-based) of a list, `text`, played from `pos` (whose previous board is
/// `prev`): the move and the board it leads to, or the error every front end gives for
/// it (not written right, not a move of the board, forbidden). Whether the game goes on
/// after it is the caller's question.
pub fn play_checked(
    g: &Geometry,
    pos: &Position,
    prev: Option<&Position>,
    n: usize,
    text: &str,
) -> Result<(Move, Position), Error> {
    let at = |why: String| Error::InvalidArgument(format!("move {} `{text}`: {why}", n + 1));
    let mv = crate::game::notation::parse_move(g, text).map_err(|e| e.in_context(&format!("move {}", n + 1)))?;
    if !moves(g, pos).contains(&mv) {
        let legal: Vec<String> = moves(g, pos).iter().map(|m| format_move(g, *m)).collect();
        return Err(at(format!("not a move of {}; its moves are {}", format_board(g, pos), legal.join(", "))));
    }
    if let Some(p) = prev
        && forbidden_move(g, pos, p)? == Some(mv)
    {
        return Err(at("forbidden: it would undo the opponent's last move".into()));
    }
    let r = play(g, pos, mv).expect("listed moves are legal");
    Ok((mv, r.child))
}

/// The moves of a list as `query --play` takes them and the API's `moves` parameter
/// carries them: comma separated (`c1-up,hole-left`); an empty text is no moves. More
/// than [`MAX_LINE_PLIES`] moves are refused ([`Error::OutOfRange`], naming `what`): a
/// game to review or replay is bounded as a line is.
pub fn split_moves(what: &str, text: &str) -> Result<Vec<String>, Error> {
    if text.is_empty() {
        return Ok(Vec::new());
    }
    let list: Vec<String> = text.split(',').map(str::to_string).collect();
    check_moves_count(what, list.len())?;
    Ok(list)
}

/// Refuse a list of more than [`MAX_LINE_PLIES`] moves (`what` names it).
pub fn check_moves_count(what: &str, n: usize) -> Result<(), Error> {
    if n <= MAX_LINE_PLIES as usize {
        return Ok(());
    }
    Err(Error::OutOfRange {
        what: format!("the number of moves in {what}"),
        given: n.to_string(),
        min: 0,
        max: MAX_LINE_PLIES as u64,
        why: "MAX_LINE_PLIES: a game given move by move is bounded as a line is".to_string(),
    })
}
