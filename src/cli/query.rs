//! `ostledb query`: the value of a board, and of each of its moves, from a solved database.

use clap::Args;
use serde::Serialize;

use crate::cli::db::{BackendArgs, open};
use crate::cli::{BoardArgs, CommonArgs, emit, emit_json};
use crate::error::Error;
use crate::game::forbidden::published_node_index;
use crate::game::moves::{is_immediate_win, moves, transform_move};
use crate::game::notation::{code_to_base64, format_board, format_move};
use crate::game::symmetry::canonical;
use crate::solve::Outcome;

/// Arguments of `ostledb query`.
#[derive(Debug, Args)]
#[command(
    after_help = "Examples:\n  ostledb query 22220-00000-00300-00000-11110\n  ostledb query 00100-11200-00001-31022-20020 --prev 00000-22200-00102-32011-10010 --json\n\nThe board is seen from the side to move (1). Distances count plies up to and including\nthe capture that ends the game. Solve the database first with `ostledb solve`."
)]
pub struct QueryArgs {
    /// The board and the board before it.
    #[command(flatten)]
    pub position: BoardArgs,
    /// Print one JSON object.
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    backend: BackendArgs,
    #[command(flatten)]
    common: CommonArgs,
}

#[derive(Serialize)]
struct MoveReport {
    index: usize,
    r#move: String,
    outcome: Outcome,
    text: String,
    removes: &'static str,
    forbidden: bool,
    best: bool,
}

#[derive(Serialize)]
struct Report {
    board: String,
    canonical: String,
    code: u64,
    base64: String,
    node_index: usize,
    checkmate: bool,
    outcome: Outcome,
    text: String,
    moves: Vec<MoveReport>,
}

/// The published wording of a node's value.
pub fn published_text(checkmate: bool, o: Outcome) -> String {
    if checkmate { "checkmate, wins in one move".to_string() } else { o.describe() }
}

/// Run `ostledb query`.
pub fn run(args: QueryArgs) -> Result<(), Error> {
    let db = open(&args.common, &args.backend)?;
    let g = db.geometry().clone();
    let g = &g;
    let (pos, prev) = args.position.parse(g)?;
    let (canon, k) = canonical(g, &pos);
    let j = prev.map_or(0, |p| published_node_index(g, &canon, &p));
    let checkmate = is_immediate_win(g, &pos);
    let outcome = db.probe(&pos, prev.as_ref())?;
    let forbidden_canon = (j > 0).then(|| moves(g, &canon)[j - 1]);
    let values = db.moves(&pos)?;
    let allowed = |mv| forbidden_canon != Some(transform_move(g, k, mv));
    let best = values.iter().filter(|v| allowed(v.mv)).map(|v| v.outcome).fold(None, |a: Option<Outcome>, o| match a {
        Some(b) if !o.better_than(b) => Some(b),
        _ => Some(o),
    });
    let moves: Vec<MoveReport> = values
        .iter()
        .map(|v| MoveReport {
            index: v.index,
            r#move: format_move(g, v.mv),
            outcome: v.outcome,
            text: match (v.removes, v.outcome) {
                ("opponent", Outcome::Win(1)) => "wins at once (captures the opponent's second piece)".to_string(),
                ("own", Outcome::Loss(1)) => "loses at once (drops its own second piece)".to_string(),
                _ => v.outcome.describe(),
            },
            removes: v.removes,
            forbidden: !allowed(v.mv),
            best: allowed(v.mv) && Some(v.outcome) == best,
        })
        .collect();
    let report = Report {
        board: format_board(g, &pos),
        canonical: format_board(g, &canon),
        code: canon.code(),
        base64: code_to_base64(canon.code()),
        node_index: j,
        checkmate,
        outcome,
        text: published_text(checkmate, outcome),
        moves,
    };
    if args.json {
        return emit_json(&report);
    }
    let mut out = String::new();
    out.push_str(&format!("board      {}\n", report.board));
    out.push_str(&format!("canonical  {}  code {} ({})\n", report.canonical, report.code, report.base64));
    out.push_str(&format!("forbidden  {}\n", if j == 0 { "none".to_string() } else { format!("node index {j}") }));
    out.push_str(&format!("value      {}\n", report.text));
    out.push_str("moves (value for the side to move after playing it):\n");
    for m in &report.moves {
        let tag = if m.forbidden {
            "  forbidden"
        } else if m.best {
            "  best"
        } else {
            ""
        };
        out.push_str(&format!("  {:>2}  {:<11} {}{}\n", m.index, m.r#move, m.text, tag));
    }
    emit(&out)
}
