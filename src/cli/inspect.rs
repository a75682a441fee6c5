//! `ostledb inspect`: everything the engine knows about one board, without a database.

use clap::Args;
use serde::Serialize;

use crate::cli::{BoardArgs, CommonArgs, emit, emit_json};
use crate::error::Error;
use crate::game::forbidden::{forbidden_move, published_node_index};
use crate::game::moves::{moves, play};
use crate::game::notation::{code_to_base64, format_board, format_move};
use crate::game::symmetry::canonical;
use crate::game::{Geometry, moves::is_immediate_win};

/// Arguments of `ostledb inspect`.
#[derive(Debug, Args)]
#[command(
    after_help = "Examples:\n  ostledb inspect 22222-00000-00300-00000-11111\n  ostledb inspect 00100-11200-00001-31022-20020 --prev 00000-22200-00102-32011-10010\n\nMoves are written SQUARE-DIRECTION (c1-up: the piece on c1 steps up) or\nhole-DIRECTION. Columns are a..e from the left, rows 1..5 from the bottom row of\nthe notation; up is towards the first row of the notation."
)]
pub struct InspectArgs {
    /// The board and the board before it.
    #[command(flatten)]
    pub position: BoardArgs,
    /// Print one JSON object.
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    common: CommonArgs,
}

#[derive(Serialize)]
struct MoveInfo {
    index: usize,
    r#move: String,
    result: String,
    removes: &'static str,
    forbidden: bool,
}

#[derive(Serialize)]
struct Report {
    board: String,
    canonical: String,
    code: u64,
    base64: String,
    phase: [u32; 2],
    immediate_win: bool,
    forbidden_move: Option<String>,
    node_index: usize,
    moves: Vec<MoveInfo>,
}

/// Run `ostledb inspect`.
pub fn run(args: InspectArgs) -> Result<(), Error> {
    let _ = &args.common;
    let g = Geometry::standard();
    let (pos, prev) = args.position.parse(g)?;
    let forbidden = match &prev {
        Some(prev) => forbidden_move(g, &pos, prev)?,
        None => None,
    };
    let (canon, _) = canonical(g, &pos);
    let list = moves(g, &pos);
    let infos: Vec<MoveInfo> = list
        .iter()
        .enumerate()
        .map(|(i, &m)| {
            let r = play(g, &pos, m).expect("listed moves are legal");
            MoveInfo {
                index: i + 1,
                r#move: format_move(g, m),
                result: format_board(g, &r.child),
                removes: r.removal.name(),
                forbidden: Some(m) == forbidden,
            }
        })
        .collect();
    let ph = pos.phase();
    let report = Report {
        board: format_board(g, &pos),
        canonical: format_board(g, &canon),
        code: canon.code(),
        base64: code_to_base64(canon.code()),
        phase: [ph.player, ph.opponent],
        immediate_win: is_immediate_win(g, &pos),
        forbidden_move: forbidden.map(|m| format_move(g, m)),
        node_index: prev.map_or(0, |p| published_node_index(g, &canon, &p)),
        moves: infos,
    };
    if args.json {
        return emit_json(&report);
    }
    let mut out = String::new();
    out.push_str(&format!("board      {}\n", report.board));
    out.push_str(&format!("canonical  {}  code {} ({})\n", report.canonical, report.code, report.base64));
    out.push_str(&format!("phase      ({},{})\n", ph.player, ph.opponent));
    if report.immediate_win {
        out.push_str("immediate win: the side to move can capture and win now\n");
    }
    match &report.forbidden_move {
        Some(m) => {
            out.push_str(&format!("forbidden  {m} (node index {} in the canonical move list)\n", report.node_index))
        }
        None if report.node_index > 0 => out.push_str(&format!(
            "forbidden  none by the exact rule; published node index {} (that move of the canonical board reaches a mirror image of the previous board)\n",
            report.node_index
        )),
        None => out.push_str("forbidden  none\n"),
    }
    out.push_str(&format!("{} moves:\n", report.moves.len()));
    for m in &report.moves {
        let tag = match (m.forbidden, m.removes) {
            (true, _) => "  forbidden",
            (_, "opponent") => "  captures",
            (_, "own") => "  loses own piece",
            _ => "",
        };
        out.push_str(&format!("  {:>2}  {:<11} -> {}{}\n", m.index, m.r#move, m.result, tag));
    }
    emit(&out)
}
