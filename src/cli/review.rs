//! `ostledb review`: a game ply by ply, each ply's value before and after it, the best
//! move, and the plies that gave a win or a draw away.

use clap::Args;

use crate::analysis::review::{Judgement, Review};
use crate::cli::db::{BackendArgs, open};
use crate::cli::{CommonArgs, emit, emit_json};
use crate::database::Database;
use crate::error::Error;

/// Arguments of `ostledb review`.
#[derive(Debug, Args)]
#[command(after_help = "\
Examples:
  ostledb review 22220-00000-00300-00000-11110 --play c1-up,b4-down,hole-left
  ostledb review 22220-00000-00300-00000-11110 --play c1-up,b4-down --json

The moves are played in turn from the board, each by the side to move then, as
`query --play` plays them (the same notation and the same errors), but the last move
may end the game. At most 1,000 moves (MAX_LINE_PLIES of the library).

Each ply is marked by what it did to the result of the side that played it: kept (a win
still wins, perhaps more slowly; a draw still draws; a loss still loses), or a blunder:
win-to-draw, win-to-loss, draw-to-loss. With it: the value before the move, the value
after it (the move's own value, for the side that played it), and the first best move
with its value (the move `query` lists first and `line` plays).

JSON fields: board, blunders (how many), game_over (the last move ended the game),
reached (the position after the last move: board, node_index, verdict, plies, outcome,
text; absent when the game is over), and plies[], each with ply (from 1), mover (1 the
side to move on the start board, 2 the other), board (before the move), node_index,
before and after ({verdict, plies, outcome, text}), move and best (as in query's
moves[]), best_played, judgement (kept | win-to-draw | win-to-loss | draw-to-loss) and
blunder.")]
pub struct ReviewArgs {
    /// The board the game starts from (25 digits, `-` or `_` ignored).
    pub board: String,
    /// The board before the opponent's last move, seen from the opponent (for the first
    /// ply's forbidden move).
    #[arg(long, value_name = "BOARD")]
    pub prev: Option<String>,
    /// The moves played, comma separated (e.g. `c1-up,hole-left`).
    #[arg(long, value_name = "MOVES", value_delimiter = ',', required = true)]
    pub play: Vec<String>,
    /// Print one JSON object.
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    backend: BackendArgs,
    #[command(flatten)]
    common: CommonArgs,
}

/// Run `ostledb review`.
pub fn run(args: ReviewArgs) -> Result<(), Error> {
    let db = Database::from_store(open(&args.common, &args.backend)?);
    let r = db.review_text(&args.board, args.prev.as_deref(), "--prev", &args.play)?;
    if args.json {
        return emit_json(&r);
    }
    emit(&render(&r))
}

fn judgement_text(j: Judgement) -> &'static str {
    match j {
        Judgement::Kept => "kept",
        Judgement::WinToDraw => "BLUNDER: win to draw",
        Judgement::WinToLoss => "BLUNDER: win to loss",
        Judgement::DrawToLoss => "BLUNDER: draw to loss",
    }
}

fn render(r: &Review) -> String {
    let mut out = format!("board      {}\n", r.board);
    out.push_str("ply side move        before -> after (for the side that moved)  best move\n");
    for p in &r.plies {
        let best = if p.best_played {
            "best".to_string()
        } else {
            format!("best {} ({})", p.best.notation, p.best.text.trim_start_matches("player "))
        };
        out.push_str(&format!(
            "{:>3}  {}   {:<11} {} -> {}  {}; {}\n",
            p.ply,
            p.mover,
            p.played.notation,
            p.before.text.trim_start_matches("player "),
            p.after.text.trim_start_matches("player "),
            judgement_text(p.judgement),
            best
        ));
    }
    out.push_str(&format!(
        "{} of {} plies {}\n",
        r.blunders,
        r.plies.len(),
        if r.blunders == 1 { "was a blunder" } else { "were blunders" }
    ));
    match &r.reached {
        Some(at) => out.push_str(&format!("reached    {}: {} (for the side to move)\n", at.board, at.value.text)),
        None => out.push_str("the last move ended the game\n"),
    }
    out
}
