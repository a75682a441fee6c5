//! `ostledb query`: the verdict of a board and of each of its moves, the principal
//! variation, and many boards per process from stdin.

use std::io::{BufRead, Write};

use clap::Args;
use rayon::prelude::*;
use serde::Serialize;

use crate::analysis::query::{Analysis, Step, play_moves};
use crate::cli::db::{BackendArgs, open};
use crate::cli::{CommonArgs, emit, emit_json, parse_with_prev, stdout_result};
use crate::error::Error;
use crate::store::Database;

/// Arguments of `ostledb query`.
#[derive(Debug, Args)]
#[command(after_help = "\
Examples:
  ostledb query 22220-00000-00300-00000-11110
  ostledb query 00100-11200-00001-31022-20020 --prev 00000-22200-00102-32011-10010 --json
  ostledb query 22220-00000-00300-00000-11110 --play c1-up,hole-left --line
  printf '22220-00000-00300-00000-11110\\n' | ostledb query -

The board is seen from the side to move (1); --prev is the board before the opponent's
last move, seen from the opponent (1 = the opponent's pieces), and decides which move is
forbidden. Verdicts use the published terms: \"checkmate, wins in one move\", \"player
wins in N moves\", \"player loses in N moves\", \"draw\", with N in plies up to and
including the capture that ends the game.

Moves are written SQUARE-DIRECTION or hole-DIRECTION: `c1-up` moves the piece on c1 one
square up (pushing what is in the way), `hole-left` moves the hole. Columns are a..e from
the left, rows 1..5 from the bottom row of the board as written (row 1 = the last five
digits); up is towards the first row written. Directions may be shortened to u, d, l, r.

With `-` as the board, one board per line is read from stdin (`BOARD` or `BOARD,PREV`;
blank lines and lines starting with # are skipped) and one JSON object is written per
line, in order. A bad line gives {\"input\": ..., \"error\": ...} and the run goes on; the
exit code is then 2. A damaged database stops the run with exit code 1.

JSON fields: board, canonical, code, base64, node_index, checkmate, verdict
(immediate-win | win | loss | draw), plies (null for a draw), text, outcome, and moves[]
best first, each with move, index, verdict, plies, text, removes (nothing | opponent |
own), forbidden, best; from_start (depth, searched_to, complete, convention) when a BFS
is stored with the database; with --line also line[] (board, verdict, plies, text, move).")]
pub struct QueryArgs {
    /// The board (25 digits, `-` ignored), or `-` to read boards from stdin.
    pub board: String,
    /// The board before the opponent's last move, seen from the opponent.
    #[arg(long, value_name = "BOARD")]
    pub prev: Option<String>,
    /// Play these moves from the board first (comma separated, e.g. `c1-up,hole-left`),
    /// and query the position they reach (its forbidden move follows from the last one).
    #[arg(long, value_name = "MOVES", value_delimiter = ',')]
    pub play: Vec<String>,
    /// Also print the principal variation: best moves for both sides, one board per ply,
    /// to the end of the game (or --max-plies plies of a draw).
    #[arg(long)]
    pub line: bool,
    /// The longest line printed (a draw never ends).
    #[arg(long, default_value_t = 40, value_name = "N")]
    pub max_plies: u32,
    /// Print one JSON object.
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    backend: BackendArgs,
    #[command(flatten)]
    common: CommonArgs,
}

#[derive(Serialize)]
struct Report {
    #[serde(flatten)]
    analysis: Analysis,
    #[serde(skip_serializing_if = "Option::is_none")]
    line: Option<Vec<Step>>,
}

fn answer(db: &Database, args: &QueryArgs, board: &str, prev: Option<&str>) -> Result<Report, Error> {
    let g = db.geometry();
    let (pos, prev) = parse_with_prev(g, board, prev)?;
    let (pos, prev) = play_moves(g, &pos, prev.as_ref(), &args.play)?;
    let analysis = db.analyse(&pos, prev.as_ref())?;
    let line = if args.line { Some(db.line(&pos, prev.as_ref(), args.max_plies)?) } else { None };
    Ok(Report { analysis, line })
}

/// Run `ostledb query`.
pub fn run(args: QueryArgs) -> Result<(), Error> {
    let db = open(&args.common, &args.backend)?;
    if args.board == "-" {
        return run_stdin(&db, &args);
    }
    let r = answer(&db, &args, &args.board, args.prev.as_deref())?;
    if args.json {
        return emit_json(&r);
    }
    emit(&render(&r))
}

fn render(r: &Report) -> String {
    let a = &r.analysis;
    let mut out = String::new();
    out.push_str(&format!("board      {}\n", a.board));
    out.push_str(&format!("canonical  {}  code {} ({})\n", a.canonical, a.code, a.base64));
    out.push_str(&format!(
        "forbidden  {}\n",
        match a.moves.iter().find(|m| m.forbidden) {
            Some(m) => format!("{} (node index {})", m.notation, a.node_index),
            None => "none".to_string(),
        }
    ));
    out.push_str(&format!("verdict    {}\n", a.text));
    match &a.from_start {
        Some(f) => out.push_str(&format!(
            "from start {}\n",
            match f.depth {
                Some(d) => format!("{d} plies ({} BFS)", f.convention),
                None if f.complete => "unreachable from the initial position".to_string(),
                None => format!("more than {} plies (the stored BFS ends there)", f.searched_to),
            }
        )),
        None => out.push_str("from start not stored (`ostledb bfs --store` adds it)\n"),
    }
    out.push_str("moves, best first (the value for the side to move after playing it):\n");
    for m in &a.moves {
        let tag = if m.forbidden {
            "  forbidden"
        } else if m.best {
            "  best"
        } else {
            ""
        };
        out.push_str(&format!("  {:<11} {}{}\n", m.notation, m.text, tag));
    }
    if let Some(line) = &r.line {
        out.push_str("line (each side plays its first best move):\n");
        for (i, s) in line.iter().enumerate() {
            out.push_str(&format!("  {:>3}. {}  {:<11} {}\n", i + 1, s.board, s.mv.notation, s.text));
        }
        match line.last() {
            Some(s) if s.mv.plies == Some(1) => out.push_str(&format!("  game over: {}\n", s.mv.text)),
            Some(_) => {
                out.push_str(&format!("  ... (stopped after {} plies; --max-plies sets the limit)\n", line.len()))
            }
            None => out.push_str("  (no move)\n"),
        }
    }
    out
}

#[derive(Serialize)]
struct LineOut<'a> {
    input: &'a str,
    #[serde(flatten)]
    report: Report,
}

#[derive(Serialize)]
struct LineError<'a> {
    input: &'a str,
    error: String,
}

/// Answer one board per stdin line, a batch at a time in parallel, in order.
fn run_stdin(db: &Database, args: &QueryArgs) -> Result<(), Error> {
    const BATCH: usize = 4096;
    let stdin = std::io::stdin();
    let mut lines = stdin.lock().lines();
    let mut failed = false;
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::with_capacity(1 << 16, stdout.lock());
    loop {
        let mut batch = Vec::with_capacity(BATCH);
        for l in lines.by_ref() {
            let l = l.map_err(|e| Error::Io { path: "<stdin>".into(), source: e })?;
            let t = l.trim();
            if t.is_empty() || t.starts_with('#') {
                continue;
            }
            batch.push(t.to_string());
            if batch.len() == BATCH {
                break;
            }
        }
        if batch.is_empty() {
            break;
        }
        let answers: Vec<Result<(String, bool), Error>> = batch
            .par_iter()
            .map(|input| {
                let (board, prev) = match input.split_once(',') {
                    Some((b, p)) => (b.trim(), Some(p.trim())),
                    None => (input.as_str(), None),
                };
                let (json, bad) = match answer(db, args, board, prev) {
                    Ok(report) => (serde_json::to_string(&LineOut { input, report }), false),
                    Err(e) if e.exit_code() == crate::error::EXIT_CORRUPT => return Err(e),
                    Err(e) => (serde_json::to_string(&LineError { input, error: e.to_string() }), true),
                };
                Ok((json.map_err(|e| Error::InvalidArgument(e.to_string()))?, bad))
            })
            .collect();
        for a in answers {
            let (s, bad) = a?;
            failed |= bad;
            stdout_result(out.write_all(s.as_bytes()).and_then(|_| out.write_all(b"\n")))?;
        }
    }
    stdout_result(out.flush())?;
    if failed {
        return Err(Error::InvalidArgument("some lines could not be answered (see their \"error\" fields)".into()));
    }
    Ok(())
}
