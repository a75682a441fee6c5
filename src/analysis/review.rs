//! A game reviewed ply by ply: from a start board (and the board before it) and the
//! moves played, what each ply did to the result. Each ply's position is analysed as
//! [`analyse`] analyses it, so the values are those `query` shows: the value
//! before the move, the value of the move played, and the first best move with its
//! value. A ply keeps the result, or turns a win into a draw or a loss, or a draw into a
//! loss: a blunder. `ostledb review`, the API's `/api/v1/review` and Python's
//! `Database.review` are this one function.

use serde::Serialize;

use crate::analysis::query::{MoveLine, Verdict, analyse, check_moves_count, ends_game, play_checked, summary};
use crate::error::Error;
use crate::game::Position;
use crate::game::notation::format_board;
use crate::record::outcome::Outcome;
use crate::store::Store;

/// What one ply did to the result, for the side that played it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Judgement {
    /// The result stayed what it was: a win still wins (perhaps more slowly), a draw
    /// still draws, a loss still loses.
    Kept,
    /// A won position, and the move lets the opponent draw.
    WinToDraw,
    /// A won position, and the move loses.
    WinToLoss,
    /// A drawn position, and the move loses.
    DrawToLoss,
}

impl Judgement {
    /// What a move of value `after` does to a node of value `before` (both for the
    /// mover; `after` is never better, as `before` is the best allowed move's value).
    pub fn of(before: Outcome, after: Outcome) -> Judgement {
        match (before, after) {
            (Outcome::Win(_), Outcome::Draw) => Judgement::WinToDraw,
            (Outcome::Win(_), Outcome::Loss(_)) => Judgement::WinToLoss,
            (Outcome::Draw, Outcome::Loss(_)) => Judgement::DrawToLoss,
            _ => Judgement::Kept,
        }
    }

    /// The move gave the result away.
    pub fn is_blunder(self) -> bool {
        self != Judgement::Kept
    }
}

/// A value as the review shows it, for one side: the verdict, the plies to the end
/// (`None` for a draw), the outcome and the words.
#[derive(Clone, Debug, Serialize)]
pub struct Valued {
    /// Win, loss or draw (`immediate-win` for a position won at once).
    pub verdict: Verdict,
    /// Plies to the end of the game (`None` for a draw).
    pub plies: Option<u32>,
    /// The value.
    pub outcome: Outcome,
    /// The value in words.
    pub text: String,
}

impl Valued {
    fn of(verdict: Verdict, plies: Option<u32>, outcome: Outcome, text: &str) -> Valued {
        Valued { verdict, plies, outcome, text: text.to_string() }
    }

    fn of_move(m: &MoveLine) -> Valued {
        Valued::of(m.verdict, m.plies, m.outcome, &m.text)
    }
}

/// One ply of a reviewed game.
#[derive(Clone, Debug, Serialize)]
pub struct ReviewPly {
    /// Its number, from 1.
    pub ply: u32,
    /// Who played it, in the digits of the start board: 1 the side to move there, 2 the
    /// other side.
    pub mover: u8,
    /// The board before the move, seen from the side that played it.
    pub board: String,
    /// That board's published node index (which of its moves was forbidden).
    pub node_index: usize,
    /// The value before the move, for the side that played it.
    pub before: Valued,
    /// The value after the move, for the side that played it (the move's own value).
    pub after: Valued,
    /// The move played, as in `query`'s move list (`child` is the board after it).
    #[serde(rename = "move")]
    pub played: MoveLine,
    /// The first best move of the position (the one `query` lists first and `line`
    /// plays), with its value.
    pub best: MoveLine,
    /// The move played is as good as the best one (the same value).
    pub best_played: bool,
    /// What the move did to the result.
    pub judgement: Judgement,
    /// It turned a win into a draw or a loss, or a draw into a loss.
    pub blunder: bool,
}

/// The position a reviewed game reached, when its last move did not end the game.
#[derive(Clone, Debug, Serialize)]
pub struct Reached {
    /// The board, seen from the side to move.
    pub board: String,
    /// Its published node index.
    pub node_index: usize,
    /// Its value for the side to move.
    #[serde(flatten)]
    pub value: Valued,
}

/// A game reviewed: one entry a ply, and how the game stands after the last.
#[derive(Clone, Debug, Serialize)]
pub struct Review {
    /// The start board as given.
    pub board: String,
    /// The plies, in the order played.
    pub plies: Vec<ReviewPly>,
    /// How many plies were blunders.
    pub blunders: u32,
    /// The last move ended the game (it removed a side's second-to-last piece).
    pub game_over: bool,
    /// The position after the last move, when the game goes on (absent after the move
    /// that ends it).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reached: Option<Reached>,
}

/// Review a game: the moves `moves` (readable notation, `c1-up`) played in turn from
/// `board`, whose previous board (for its forbidden move) is `prev`. Every move must
/// be a move of the board it is played on and not the forbidden one; the last may
/// end the game, no other may. At most
/// [`MAX_LINE_PLIES`](crate::analysis::query::MAX_LINE_PLIES) moves
/// ([`Error::OutOfRange`] beyond). Each ply costs one analysis (a lookup a move).
pub fn review(db: &Store, board: &Position, prev: Option<&Position>, moves: &[String]) -> Result<Review, Error> {
    check_moves_count("the game", moves.len())?;
    let g = db.geometry();
    let mut pos = *board;
    let mut prev = prev.copied();
    let mut plies = Vec::with_capacity(moves.len());
    let mut game_over = false;
    for (n, text) in moves.iter().enumerate() {
        if game_over {
            return Err(Error::InvalidArgument(format!(
                "move {} `{}`: the game ended with move {n}, so no move can follow it",
                n + 1,
                crate::error::shown_input(text, text.len())
            )));
        }
        let (mv, child) = play_checked(g, &pos, prev.as_ref(), n, text)?;
        let a = analyse(db, &pos, prev.as_ref())?;
        let played = a.moves.iter().find(|m| m.mv == mv).cloned().expect("a legal move is listed");
        let best = a.best_move().cloned().expect("an allowed move was played, so one is best");
        let judgement = Judgement::of(a.outcome, played.outcome);
        plies.push(ReviewPly {
            ply: n as u32 + 1,
            mover: if n % 2 == 0 { 1 } else { 2 },
            board: a.board.clone(),
            node_index: a.node_index,
            before: Valued::of(a.verdict, a.plies, a.outcome, &a.text),
            after: Valued::of_move(&played),
            best_played: played.outcome == best.outcome,
            played,
            best,
            judgement,
            blunder: judgement.is_blunder(),
        });
        game_over = ends_game(g, &child);
        prev = Some(pos);
        pos = child;
    }
    let reached = if game_over {
        None
    } else {
        let a = summary(db, &pos, prev.as_ref())?;
        Some(Reached {
            board: a.board.clone(),
            node_index: a.node_index,
            value: Valued::of(a.verdict, a.plies, a.outcome, &a.text),
        })
    };
    Ok(Review {
        board: format_board(g, board),
        blunders: plies.iter().filter(|p| p.blunder).count() as u32,
        plies,
        game_over,
        reached,
    })
}
