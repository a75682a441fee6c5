//! `ostledb query`: the verdict of a board and of each of its moves, the principal
//! variation, and many boards per process from stdin.

use std::io::{BufRead, Write};

use clap::Args;
use rayon::prelude::*;
use serde::Serialize;

use crate::analysis::query::{DEFAULT_LINE_PLIES, LineEnd, MAX_LINE_PLIES, Report};
use crate::cli::db::{BackendArgs, open};
use crate::cli::{CommonArgs, emit, emit_json, stdout_result};
use crate::database::Database;
use crate::error::Error;

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
forbidden. Verdicts use the published terms, with plies called plies: \"checkmate, wins
in 1 ply\", \"player wins in N plies\", \"player loses in N plies\", \"draw\", N counting
plies up to and including the capture that ends the game.

Moves are written SQUARE-DIRECTION or hole-DIRECTION: `c1-up` moves the piece on c1 one
square up (pushing what is in the way), `hole-left` moves the hole. Columns are a..e from
the left, rows 1..5 from the bottom row of the board as written (row 1 = the last five
digits); up is towards the first row written. Directions may be shortened to u, d, l, r.

With `-` as the board, one board per line is read from stdin (`BOARD` or `BOARD,PREV`;
blank lines and lines starting with # are skipped) and one JSON object is written per
line, in order, flushed before ostledb waits for more input: a program may write one
board and read its answer. A bad line (not a board, not UTF-8, over 4,096 bytes) gives
{\"input\": ..., \"error\": ...} and the run goes on; the exit code is then 2. An input
over 100 bytes is shown cut, with its length. A damaged database stops the run with exit
code 1.

JSON fields: board, canonical, code, base64, node_index, checkmate, verdict
(immediate-win | win | loss | draw), plies (null for a draw), text, outcome, and moves[]
best first (the forbidden move, if any, last), each with move, index, verdict, plies, text, removes (nothing | opponent |
own), forbidden, best, child (the board after the move, seen from the side to move
next); from_start (depth, searched_to, complete, convention) when a BFS
is stored with the database; with --line also line[] (board, verdict, plies, text, move)
and line_end, how the line ended: {\"reason\": \"game-over\"}, {\"reason\": \"repeats\",
\"from\": K} (the next position is the one ply K was played from: plies K and on repeat
for ever), {\"reason\": \"max-plies\"} or {\"reason\": \"no-move\"}.")]
pub struct QueryArgs {
    /// The board (25 digits, `-` and `_` ignored), or `-` to read boards from stdin.
    pub board: String,
    /// The board before the opponent's last move, seen from the opponent.
    #[arg(long, value_name = "BOARD")]
    pub prev: Option<String>,
    /// Play these moves from the board first (comma separated, e.g. `c1-up,hole-left`),
    /// and query the position they reach (its forbidden move follows from the last one).
    #[arg(long, value_name = "MOVES", value_delimiter = ',')]
    pub play: Vec<String>,
    /// Also print the principal variation: best moves for both sides, one board per ply,
    /// to the end of the game, or, for a draw, until it comes back to a position (with the
    /// same forbidden move) it has passed, from where it would repeat for ever; at most
    /// --max-plies plies.
    #[arg(long)]
    pub line: bool,
    /// The longest line printed, 1 to 1,000 (MAX_LINE_PLIES of the library); 40 by
    /// default (DEFAULT_LINE_PLIES, as the API's and Python's).
    #[arg(long, default_value_t = DEFAULT_LINE_PLIES, value_name = "N",
          value_parser = clap::value_parser!(u32).range(1..=MAX_LINE_PLIES as i64))]
    pub max_plies: u32,
    /// Print one JSON object.
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    backend: BackendArgs,
    #[command(flatten)]
    common: CommonArgs,
}

fn answer(
    db: &Database,
    board: &str,
    prev: Option<&str>,
    play: &[String],
    line_plies: Option<u32>,
) -> Result<Report, Error> {
    db.answer(board, prev, "--prev", play, line_plies)
}

/// Run `ostledb query`.
pub fn run(args: QueryArgs) -> Result<(), Error> {
    let db = Database::from_store(open(&args.common, &args.backend)?);
    let done = answer_all(&db, &args);
    // The process ends with this command, and the system takes its memory back at once:
    // dropping a cache of a hundred thousand decoded blocks one by one was 6% of the
    // samples of a 5,000-board `query -`, and serial at the end: forgetting it took the
    // run from 0.90-0.96 s to 0.68-0.82 s (the readers' lock is an flock the system
    // releases).
    std::mem::forget(db);
    done
}

fn answer_all(db: &Database, args: &QueryArgs) -> Result<(), Error> {
    if args.board == "-" {
        return run_stdin(db, args);
    }
    let r = answer(db, &args.board, args.prev.as_deref(), &args.play, args.line.then_some(args.max_plies))?;
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
    out.push_str("moves, best first, the forbidden one last (the value for the side to move after playing it):\n");
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
        for (i, s) in line.steps.iter().enumerate() {
            out.push_str(&format!("  {:>3}. {}  {:<11} {}\n", i + 1, s.board, s.mv.notation, s.text));
        }
        match (line.end, line.steps.last()) {
            (LineEnd::GameOver, Some(s)) => out.push_str(&format!("  game over: {}\n", s.mv.text)),
            (LineEnd::Repeats { from }, _) => out.push_str(&format!(
                "  ... repeats from ply {from}: the next position, with its forbidden move, is the one ply {from} was played from\n"
            )),
            (LineEnd::MaxPlies, _) => out.push_str(&format!(
                "  ... (stopped after {} plies; --max-plies sets the limit)\n",
                line.steps.len()
            )),
            (LineEnd::NoMove, _) | (LineEnd::GameOver, None) => out.push_str("  (no allowed move)\n"),
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

/// The longest stdin line `query -` keeps, in bytes (a board and its previous board take
/// about 60): the rest of a longer line is read and counted, not kept, and the line is
/// answered as a bad line.
pub const MAX_LINE: usize = 4096;

/// Answer one line of `query -` input (`BOARD` or `BOARD,PREV`, any bytes): `None` for a
/// blank line or a comment (`#`), otherwise the JSON object written for it and whether
/// it is a bad line (one with an `"error"` field: not UTF-8, not a board, a move of
/// `play` that cannot be played...). `play` are the moves of `--play`, `line_plies` the
/// `--max-plies` of `--line` (`None`: no line). The input is repeated cut to
/// [`SHOWN_INPUT`](crate::error::SHOWN_INPUT) bytes. `Err` only for what stops the run:
/// a damaged database ([`Error::exit_code`] 1) or JSON that cannot be written.
pub fn answer_line(
    db: &Database,
    line: &[u8],
    play: &[String],
    line_plies: Option<u32>,
) -> Result<Option<(String, bool)>, Error> {
    answer_kept(db, line, line.len(), play, line_plies)
}

/// [`answer_line`] for a line of `len` bytes of which `kept` are the first (all of them
/// unless the line is longer than [`MAX_LINE`]).
fn answer_kept(
    db: &Database,
    kept: &[u8],
    len: usize,
    play: &[String],
    line_plies: Option<u32>,
) -> Result<Option<(String, bool)>, Error> {
    let text = kept.trim_ascii();
    if text.starts_with(b"#") || (text.is_empty() && len == kept.len()) {
        return Ok(None);
    }
    let lossy = String::from_utf8_lossy(text);
    let trimmed = len - (kept.len() - text.len());
    let input = crate::error::shown_input(&lossy, trimmed);
    let result = if len > kept.len() {
        Err(Error::InvalidArgument(format!(
            "a line of {len} bytes, longer than any board and its previous board (a line over {MAX_LINE} bytes is not read)"
        )))
    } else {
        match std::str::from_utf8(text) {
            Err(e) => Err(Error::InvalidArgument(format!(
                "not UTF-8 text (byte {} is not valid); a board is 25 digits",
                e.valid_up_to() + 1
            ))),
            Ok(line) => {
                let (board, prev) = match line.split_once(',') {
                    Some((b, p)) => (b.trim(), Some(p.trim())),
                    None => (line, None),
                };
                answer(db, board, prev, play, line_plies)
            }
        }
    };
    let (json, bad) = match result {
        Ok(report) => (serde_json::to_string(&LineOut { input: &input, report }), false),
        Err(e) if e.exit_code() == crate::error::EXIT_CORRUPT => return Err(e),
        Err(e) => (serde_json::to_string(&LineError { input: &input, error: e.to_string() }), true),
    };
    Ok(Some((json.map_err(|e| Error::InvalidArgument(e.to_string()))?, bad)))
}

/// Read one line from `r` (to a newline, which is consumed and not kept, or to the end of
/// the input), keeping its first `cap` bytes in `line`: the line's length in bytes, or
/// `None` at the end of the input.
fn read_line_capped(r: &mut impl BufRead, line: &mut Vec<u8>, cap: usize) -> std::io::Result<Option<usize>> {
    let mut len = None;
    loop {
        let buf = match r.fill_buf() {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if buf.is_empty() {
            return Ok(len);
        }
        let (part, used, end) = match buf.iter().position(|&b| b == b'\n') {
            Some(i) => (&buf[..i], i + 1, true),
            None => (buf, buf.len(), false),
        };
        let keep = part.len().min(cap.saturating_sub(line.len()));
        line.extend_from_slice(&part[..keep]);
        let n = len.unwrap_or(0) + part.len();
        len = Some(n);
        r.consume(used);
        if end {
            return Ok(len);
        }
    }
}

/// Answer one board per stdin line, a batch at a time in parallel, in order. A batch
/// takes the lines already read (up to 4,096); stdout is flushed
/// before every read that may wait for input, so a program that writes one board and
/// waits gets its answer.
fn run_stdin(db: &Database, args: &QueryArgs) -> Result<(), Error> {
    const BATCH: usize = 4096;
    let stdin = std::io::stdin();
    let mut input = std::io::BufReader::with_capacity(1 << 16, stdin.lock());
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::with_capacity(1 << 16, stdout.lock());
    let line_plies = args.line.then_some(args.max_plies);
    let mut failed = false;
    let mut done = false;
    while !done {
        let mut batch: Vec<(Vec<u8>, usize)> = Vec::new();
        while batch.len() < BATCH {
            // Without a whole line in the buffer the next read may wait: answer what the
            // batch holds first, or, with nothing to answer, flush what is written.
            if !input.buffer().contains(&b'\n') {
                if !batch.is_empty() {
                    break;
                }
                stdout_result(out.flush())?;
            }
            let mut line = Vec::new();
            match read_line_capped(&mut input, &mut line, MAX_LINE)
                .map_err(|e| Error::Io { path: "<stdin>".into(), source: e })?
            {
                Some(len) => batch.push((line, len)),
                None => {
                    done = true;
                    break;
                }
            }
        }
        let answers: Vec<Result<Option<(String, bool)>, Error>> =
            batch.par_iter().map(|(line, len)| answer_kept(db, line, *len, &args.play, line_plies)).collect();
        for a in answers {
            let Some((s, bad)) = a? else { continue };
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
