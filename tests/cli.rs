//! The `ostledb` binary as a user runs it: output of `positions` and `inspect` (text and
//! JSON), exit code 2 with one readable line for every kind of bad input, and a closed
//! stdout pipe treated as success.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Command, ExitStatus, Output, Stdio};

use serde_json::Value;

fn ostledb(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_ostledb"))
        .args(args)
        .stdin(Stdio::null())
        .output()
        .unwrap_or_else(|e| panic!("cannot run ostledb {args:?}: {e}"))
}

/// Stdout of a run that must succeed, with every run of blanks squeezed to one space so
/// that checks do not depend on column widths.
fn ok_stdout(args: &[&str]) -> String {
    let out = ostledb(args);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "ostledb {args:?} failed: {:?}\n{stderr}", out.status);
    assert!(!stderr.contains("panicked"), "ostledb {args:?}: {stderr}");
    let stdout = String::from_utf8(out.stdout).expect("stdout is UTF-8");
    stdout.lines().map(|l| l.split_whitespace().collect::<Vec<_>>().join(" ")).collect::<Vec<_>>().join("\n")
}

fn json_stdout(args: &[&str]) -> Value {
    let text = ok_stdout(args);
    assert_eq!(text.lines().count(), 1, "ostledb {args:?}: JSON is one line");
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("ostledb {args:?}: not JSON ({e}): {text}"))
}

/// OSTLE.md section 6: phase (4,4) positions per hole representative.
const POSITIONS_4_4: [(u32, u64); 6] =
    [(0, 25_744_590), (1, 51_482_970), (2, 25_744_590), (6, 25_744_590), (7, 25_744_590), (12, 6_438_855)];

#[test]
fn positions_max_pieces_8_prints_the_published_4_4_table() {
    let text = ok_stdout(&["positions", "--max-pieces", "8"]);
    let mut rows = BTreeMap::new();
    for line in text.lines() {
        let cells: Vec<&str> = line.split(' ').collect();
        if let [hole, count] = cells[..]
            && let Ok(hole) = hole.parse::<u32>()
        {
            rows.insert(hole, count.replace(',', "").parse::<u64>().expect("a count"));
        }
    }
    assert_eq!(rows, BTreeMap::from(POSITIONS_4_4), "{text}");
    assert!(text.lines().any(|l| l == "hole (4,4)"), "{text}");
    assert!(text.lines().any(|l| l == "sum 160,900,185"), "{text}");
    assert!(text.contains("total 160,900,185 positions, 4,022,504,625 nodes"), "{text}");
}

#[test]
fn positions_json_has_the_published_4_4_counts() {
    let v = json_stdout(&["positions", "--max-pieces", "8", "--json"]);
    assert_eq!(v["max_pieces"], 8);
    assert_eq!(v["total_positions"], 160_900_185u64);
    assert_eq!(v["total_nodes"], 25 * 160_900_185u64);
    let phases = v["phases"].as_array().expect("phases");
    assert_eq!(phases.len(), 1, "max pieces 8 is phase (4,4) alone");
    let ph = &phases[0];
    assert_eq!(ph["phase"], serde_json::json!([4, 4]));
    assert_eq!(ph["positions"], 160_900_185u64);
    for (hole, count) in POSITIONS_4_4 {
        assert_eq!(ph["by_hole"][hole.to_string()], count, "hole {hole}");
    }
    assert!(ph.get("nodes").is_none(), "node counts only with --nodes");
}

/// `inspect` runs: arguments and lines (blanks squeezed) the text output must contain.
const INSPECT_CASES: &[(&[&str], &[&str])] = &[
    (
        &["inspect", "22222-00000-00300-00000-11111"],
        &[
            "board 22222-00000-00300-00000-11111",
            "canonical 11111-00000-00300-00000-22222 code 34326183948 (MAAA+f)",
            "phase (5,5)",
            "forbidden none",
            "24 moves:",
            "9 c1-up -> 11111-00000-00300-00200-22022",
            "21 hole-up -> 11111-00300-00000-00000-22222",
        ],
    ),
    (
        &["inspect", "00100-11200-00001-31022-20020", "--prev", "00000-22200-00102-32011-10010"],
        &[
            "canonical 00100-11200-00001-31022-20020 code 88068631564303 (PABgTkBU)",
            "forbidden c5-down (node index 2 in the canonical move list)",
            "21 moves:",
            "2 c5-down -> 00000-22200-00102-32011-10010 forbidden",
            "1 c5-up -> 00000-22100-00002-32011-10010 loses own piece",
        ],
    ),
    (
        &["inspect", "00000-00000-00001-11112-22223"],
        &[
            "canonical 32222-21111-10000-00000-00000 code 2130303780800 (AfAAAAf)",
            "forbidden none",
            "20 moves:",
            "2 e3-down -> 00000-00000-00000-22222-11113 captures",
        ],
    ),
    (
        // Four pieces a side; a4-up pushes the other side's a5 off the top.
        &["inspect", "22220-10000-00300-00000-11100"],
        &[
            "phase (4,4)",
            "immediate win: the side to move can capture and win now",
            "1 a4-up -> 21110-00000-00300-00000-22200 captures",
        ],
    ),
];

#[test]
fn inspect_prints_the_worked_examples() {
    for (args, want) in INSPECT_CASES {
        let text = ok_stdout(args);
        for line in *want {
            assert!(text.lines().any(|l| l == *line), "ostledb {args:?}: no line {line:?} in\n{text}");
        }
        let immediate = text.contains("immediate win");
        assert_eq!(immediate, args[1] == "22220-10000-00300-00000-11100", "ostledb {args:?}: immediate win line");
    }
}

#[test]
fn inspect_json_reports_the_worked_examples() {
    let v = json_stdout(&["inspect", "22222-00000-00300-00000-11111", "--json"]);
    assert_eq!(v["canonical"], "11111-00000-00300-00000-22222");
    assert_eq!(v["code"], 34_326_183_948u64);
    assert_eq!(v["base64"], "MAAA+f");
    assert_eq!(v["phase"], serde_json::json!([5, 5]));
    assert_eq!(v["immediate_win"], false);
    assert_eq!(v["forbidden_move"], Value::Null);
    assert_eq!(v["node_index"], 0);
    assert_eq!(v["moves"].as_array().unwrap().len(), 24);

    let v =
        json_stdout(&["inspect", "00100-11200-00001-31022-20020", "--prev", "00000-22200-00102-32011-10010", "--json"]);
    assert_eq!(v["board"], "00100-11200-00001-31022-20020");
    assert_eq!(v["code"], 88_068_631_564_303u64);
    assert_eq!(v["base64"], "PABgTkBU");
    assert_eq!(v["forbidden_move"], "c5-down");
    assert_eq!(v["node_index"], 2);
    let moves = v["moves"].as_array().unwrap();
    assert_eq!(moves.len(), 21);
    let forbidden: Vec<&Value> = moves.iter().filter(|m| m["forbidden"] == true).collect();
    assert_eq!(forbidden.len(), 1);
    assert_eq!(forbidden[0]["index"], 2);
    assert_eq!(forbidden[0]["move"], "c5-down");
    assert_eq!(forbidden[0]["result"], "00000-22200-00102-32011-10010", "the forbidden move recreates --prev");
    assert_eq!(forbidden[0]["removes"], "nothing");

    let v = json_stdout(&["inspect", "00000-00000-00001-11112-22223", "--json"]);
    assert_eq!(v["canonical"], "32222-21111-10000-00000-00000");
    assert_eq!(v["code"], 2_130_303_780_800u64);
    assert_eq!(v["base64"], "AfAAAAf");
    assert_eq!(v["moves"].as_array().unwrap().len(), 20);

    let v = json_stdout(&["inspect", "22220-10000-00300-00000-11100", "--json"]);
    assert_eq!(v["phase"], serde_json::json!([4, 4]));
    assert_eq!(v["immediate_win"], true);
    assert_eq!(v["moves"][0]["removes"], "opponent");
}

/// Bad input: arguments, and a fragment our one-line message must contain (`None` for
/// clap's own usage errors).
const BAD_INPUT: &[(&[&str], Option<&str>)] = &[
    (&["inspect", "22222-00000-00300-00000-1111"], Some("has 24 squares; a 5x5 board has 25")),
    (&["inspect", "22222-00000-00300-00000-111111"], Some("has 26 squares")),
    (&["inspect", "22222-00000-00300-00000-11117"], Some("character 29 is '7'")),
    (&["inspect", "22222-00000-00330-00000-11110"], Some("two holes")),
    (&["inspect", "22222-00000-00000-00000-11111"], Some("no hole")),
    (&["inspect", "22222-00000-00301-00000-11111"], Some("6 pieces `1`")),
    (&["inspect", "22222-00000-20302-00000-11111"], Some("7 pieces `2`")),
    (&["inspect", "22200-00000-00300-00000-11111"], Some("3 pieces `2`")),
    (&["inspect", "22222-00000-00300-00000-11111", "--prev", "2222"], Some("has 4 squares")),
    (
        &["inspect", "00100-11200-00001-31022-20020", "--prev", "22222-00000-00300-00000-11111"],
        Some("the previous board does not lead to the current board by one move"),
    ),
    (&["positions", "--max-pieces", "7"], None),
    (&["positions", "--max-pieces", "11"], None),
    (&["inspect"], None),
    (&["no-such-command"], None),
    // Counts of 0, which the commands used to take as "default" or "1" without saying.
    (&["solve", "--threads", "0", "--db", "/dev/null/ostledb"], None),
    (&["query", "22220-00000-00300-00000-11110", "--line", "--max-plies", "0"], None),
    (&["bench", "--rounds", "0"], None),
    (&["bench", "--batch", "0"], None),
    (&["bench", "--lookups", "0"], None),
    (&["bench", "--sled-keys", "0"], None),
    (&["bench", "--sled-lookups", "0"], None),
    // Counts beyond their bounds (issue 61): refused before anything is allocated, where
    // they used to abort in a failed allocation, panic or run until killed.
    (&["query", "22220-00000-00300-00000-11110", "--line", "--max-plies", "1001"], None),
    (&["query", "22220-00000-00300-00000-11110", "--line", "--max-plies", "4294967295"], None),
    (&["solve", "--threads", "1025", "--db", "/dev/null/ostledb"], None),
    (&["serve", "--threads", "100000000000"], None),
    (&["serve", "--max-probes", "18446744073709551615"], None),
    (&["serve", "--max-connections", "65537"], None),
    (&["bench", "--batch", "1048577"], None),
    (&["bench", "--rounds", "1001"], None),
    (&["bench", "--cold", "10", "--cold-rounds", "18446744073709551615"], None),
    (&["interesting", "--list", "1001"], None),
    (
        &["bench", "--db", GOLDEN, "--no-build", "--backend", "rank", "--lookups", "100000000000"],
        Some("not enough memory for the key sets of --lookups 100000000000 (8800000 MB); this process can count on"),
    ),
    (
        &["bench", "--db", GOLDEN, "--no-build", "--backend", "rank", "--lookups", "10", "--queries", "100000000000"],
        Some("not enough memory for --queries 100000000000 (6400000 MB)"),
    ),
    (
        &["bench", "--db", GOLDEN, "--cold", "100000000000"],
        Some("not enough memory for --cold 100000000000 with --cold-rounds 3"),
    ),
    (
        &["bfs", "--max-nodes", "18446744073709551615", "--max-depth", "1"],
        Some("not enough memory for the nodes of --max-nodes 18446744073709551615"),
    ),
    (
        &["query", "--db", GOLDEN, "--cache-mb", "18446744073709551615", "111-030-222"],
        Some("--cache-mb must be from 0 to 17592186044415, not 18446744073709551615"),
    ),
    (&["query", "--db", GOLDEN, "--cache-mb", "1000000000000", "111-030-222"], Some("--cache-mb 1000000000000: the ")),
];

#[test]
fn bad_input_exits_2_with_one_error_line_and_no_output() {
    for (args, fragment) in BAD_INPUT {
        let out = ostledb(args);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "ostledb {args:?}: exit status; stderr:\n{stderr}");
        assert!(out.stdout.is_empty(), "ostledb {args:?}: printed {:?}", String::from_utf8_lossy(&out.stdout));
        assert!(!stderr.contains("panicked"), "ostledb {args:?}: {stderr}");
        match fragment {
            Some(f) => {
                assert!(stderr.starts_with("ostledb: error: "), "ostledb {args:?}: {stderr}");
                assert!(stderr.ends_with('\n') && stderr.lines().count() == 1, "ostledb {args:?}: one line: {stderr}");
                assert!(stderr.contains(f), "ostledb {args:?}: {stderr:?} does not say {f:?}");
            }
            None => assert!(stderr.starts_with("error: "), "ostledb {args:?}: clap usage error: {stderr}"),
        }
    }
}

/// Run ostledb with `input` on its stdin, read the first `lines` lines of its stdout and
/// close the pipe, as `ostledb ... | head -N` does; its exit status and stderr.
fn read_lines_and_close(args: &[&str], input: String, lines: usize) -> (ExitStatus, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_ostledb"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot run ostledb {args:?}: {e}"));
    let mut stdin = child.stdin.take().unwrap();
    // Once its stdout is closed ostledb stops reading: a failed write here is expected.
    let writer = std::thread::spawn(move || {
        let _ = stdin.write_all(input.as_bytes());
    });
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    for i in 0..lines {
        let mut line = String::new();
        stdout.read_line(&mut line).unwrap();
        assert!(line.ends_with('\n'), "ostledb {args:?}: line {i} of stdout is {line:?}");
        if args.contains(&"-") {
            serde_json::from_str::<Value>(&line).unwrap_or_else(|e| panic!("ostledb {args:?}: {e}: {line}"));
        }
    }
    drop(stdout);
    let mut stderr = String::new();
    child.stderr.take().unwrap().read_to_string(&mut stderr).unwrap();
    let status = child.wait().unwrap();
    writer.join().unwrap();
    (status, stderr)
}

/// A reader that stops early (`| head`) is not an error: exit code 0 and nothing on
/// stderr, whether the pipe closes before the first write or in the middle of a stream.
#[test]
fn closed_stdout_pipe_is_success() {
    let golden = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/golden-v2");
    // 2,000 boards, about 2.5 KB of JSON each: far more than a pipe holds, so `query -`
    // is still writing when the pipe closes after its first line.
    let boards = "111-030-222\n".repeat(2000);
    let cases: [(&[&str], String, usize); 3] = [
        // The pipe closes before `positions` has built its index and written anything.
        (&["positions", "--max-pieces", "8"], String::new(), 0),
        // `stats | head -1`: its few lines are written at once, most likely before the
        // pipe closes; silent either way.
        (&["stats", "--db", golden, "--quiet"], String::new(), 1),
        (&["query", "--db", golden, "-"], boards, 1),
    ];
    for (args, input, lines) in cases {
        let (status, stderr) = read_lines_and_close(args, input, lines);
        assert!(status.success(), "ostledb {args:?}: {status:?}; stderr: {stderr}");
        assert!(stderr.is_empty(), "ostledb {args:?}: nothing on stderr: {stderr}");
    }
}

const GOLDEN: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/golden-v2");

/// `ostledb query --db GOLDEN -`, to be spawned.
fn query_golden_stdin() -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_ostledb"));
    cmd.args(["query", "--db", GOLDEN, "-"]);
    cmd
}

/// Run `cmd` with `input` written to its stdin by a thread, then closed; its output.
fn run_with_input(cmd: &mut Command, input: Vec<u8>) -> Output {
    let mut child =
        cmd.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().expect("spawn the command");
    let mut stdin = child.stdin.take().unwrap();
    // A command that stops reading early makes this write fail: its output says why.
    let writer = std::thread::spawn(move || {
        let _ = stdin.write_all(&input);
    });
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap();
    out
}

/// `ostledb query --db GOLDEN -` with `input` on its stdin: its exit code and stdout lines.
fn query_stdin(input: Vec<u8>) -> (Option<i32>, Vec<String>) {
    let out = run_with_input(&mut query_golden_stdin(), input);
    let text = String::from_utf8(out.stdout).expect("stdout is UTF-8");
    (out.status.code(), text.lines().map(str::to_string).collect())
}

/// A line that is not UTF-8 is a bad line like any other: answered in its place with
/// its input shown lossily, every line around it answered, exit code 2. (It used to end
/// the run at once, discarding the 2,000 answers before it.)
#[test]
fn query_stdin_answers_every_line_around_one_that_is_not_utf8() {
    let mut input = "111-030-222\n".repeat(2000).into_bytes();
    input.extend_from_slice(b"\xff\xfe1-030-222\n111-030-222,222-030-111\n");
    let (code, lines) = query_stdin(input);
    assert_eq!(code, Some(2));
    assert_eq!(lines.len(), 2002);
    let bad: Value = serde_json::from_str(&lines[2000]).unwrap();
    assert_eq!(bad["input"], "\u{fffd}\u{fffd}1-030-222", "{bad}");
    assert!(bad["error"].as_str().unwrap().contains("not UTF-8"), "{bad}");
    let before: Value = serde_json::from_str(&lines[1999]).unwrap();
    let after: Value = serde_json::from_str(&lines[2001]).unwrap();
    assert_eq!(before["verdict"], "win", "{before}");
    assert!(after.get("verdict").is_some() || after.get("error").is_some(), "{after}");
    assert_eq!(after["input"], "111-030-222,222-030-111");
}

/// A 10 MB line is answered by an error that shows its first 100 bytes and its length,
/// in the "input" field and in the message: not the 20 MB of echoing it twice.
#[test]
fn query_stdin_shows_a_long_line_cut_to_its_start_and_length() {
    let mut input = vec![b'1'; 10_000_000];
    input.extend_from_slice(b"\n111-030-222\n");
    let (code, lines) = query_stdin(input);
    assert_eq!(code, Some(2));
    assert_eq!(lines.len(), 2);
    assert!(lines[0].len() < 1000, "{} bytes", lines[0].len());
    let v: Value = serde_json::from_str(&lines[0]).unwrap();
    let shown = format!("{}... (10000000 bytes)", "1".repeat(100));
    assert_eq!(v["input"], shown.as_str());
    assert!(v["error"].as_str().unwrap().contains("a line of 10000000 bytes"), "{v}");
    let v: Value = serde_json::from_str(&lines[1]).unwrap();
    assert_eq!(v["verdict"], "win", "{v}");
    // A long line that is a bad board, but short enough to be read: its error cuts it too.
    let long_board = "1".repeat(1000);
    let (code, lines) = query_stdin(format!("{long_board}\n").into_bytes());
    assert_eq!(code, Some(2));
    let v: Value = serde_json::from_str(&lines[0]).unwrap();
    let shown = format!("{}... (1000 bytes)", "1".repeat(100));
    assert_eq!(v["input"], shown.as_str());
    let error = v["error"].as_str().unwrap();
    assert!(error.contains(&format!("`{shown}` has 1000 squares")) && error.len() < 300, "{error}");
}

/// A program that writes one board and waits for its answer gets it: `query -` answers
/// what it has read and flushes before it waits for more input. Each answer must come
/// within 60 s (it takes milliseconds) while stdin is still open.
#[test]
fn query_stdin_answers_a_line_before_the_next_is_written() {
    let mut child = query_golden_stdin()
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("run ostledb query -");
    let mut stdin = child.stdin.take().unwrap();
    let stdout = BufReader::new(child.stdout.take().unwrap());
    let (send, answers) = std::sync::mpsc::channel();
    let reader = std::thread::spawn(move || {
        for line in stdout.lines() {
            if send.send(line.unwrap()).is_err() {
                break;
            }
        }
    });
    // The second is a comment, a blank line and a board with its previous board.
    let boards = [("111-030-222", 0), ("# no answer\n\n111-030-222,222-300-111", 13), ("111-030-222", 0)];
    for (board, node_index) in boards {
        stdin.write_all(format!("{board}\n").as_bytes()).unwrap();
        stdin.flush().unwrap();
        let Ok(line) = answers.recv_timeout(std::time::Duration::from_secs(60)) else {
            let _ = child.kill();
            panic!("no answer to {board:?} within 60 s while stdin stays open");
        };
        let v: Value = serde_json::from_str(&line).unwrap();
        assert_eq!(v["input"].as_str(), board.lines().last(), "{v}");
        assert_eq!((v["verdict"].as_str(), v["node_index"].as_u64()), (Some("win"), Some(node_index)), "{v}");
    }
    drop(stdin);
    let status = child.wait().unwrap();
    reader.join().unwrap();
    assert!(answers.try_recv().is_err(), "one answer per board");
    assert!(status.success(), "{status:?}");
}

#[test]
fn bfs_reproduces_the_published_first_layers_in_both_conventions() {
    for (flag, want) in [("published", [1u64, 9, 102, 954, 6329]), ("strict", [1, 9, 99, 932, 6319])] {
        let v = json_stdout(&["bfs", "--convention", flag, "--max-depth", "4", "--json", "--quiet"]);
        let got: Vec<u64> =
            v["layers"].as_array().expect("layers").iter().map(|l| l["nodes"].as_u64().unwrap()).collect();
        assert_eq!(got, want, "{flag}");
    }
}

/// Deeper layers of the published breadth-first search (from the log of the published
/// full run, depths 5..8), which also settle that it expands checkmate positions: without
/// that expansion the layers differ from depth 6 on.
#[test]
#[cfg_attr(debug_assertions, ignore = "2.6 M nodes; cargo test --release runs it")]
fn bfs_reproduces_the_published_layers_to_depth_8() {
    let layers = |extra: &[&str]| -> Vec<u64> {
        let mut args = vec!["bfs", "--max-depth", "8", "--json", "--quiet"];
        args.extend_from_slice(extra);
        let v = json_stdout(&args);
        v["layers"].as_array().expect("layers").iter().map(|l| l["nodes"].as_u64().unwrap()).collect()
    };
    assert_eq!(layers(&[]), [1, 9, 102, 954, 6_329, 33_052, 147_620, 556_811, 1_863_530]);
    let without = layers(&["--no-checkmate-expansion"]);
    assert_eq!(without[..6], [1, 9, 102, 954, 6_329, 33_052]);
    assert_ne!(without[6], 147_620);
}

/// `bfs --by-positions --max-pieces 8` searches from the published solver's `-s 8`
/// start (4 pieces a side, on the first four squares of their rows) over phase (4,4)
/// only: its first layers are the solver's (its log of `solver -b -s 8`, in
/// tests/data/reference-s8/run.txt), and the text report names the start.
#[test]
fn bfs_by_positions_from_the_8_piece_start_gives_the_solvers_layers() {
    let v = json_stdout(&["bfs", "--by-positions", "--max-pieces", "8", "--max-depth", "5", "--json", "--quiet"]);
    let got: Vec<u64> = v["layers"].as_array().expect("layers").iter().map(|l| l["nodes"].as_u64().unwrap()).collect();
    assert_eq!(got, [1, 12, 133, 1_082, 5_890, 26_305]);
    assert_eq!(v["start_phase"], serde_json::json!([4, 4]));
    assert_eq!(v["positions_reached"][1], 160_900_185, "phase (4,4) alone");
    let o = ostledb(&["bfs", "--by-positions", "--max-pieces", "8", "--max-depth", "1", "--quiet"]);
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success() && text.contains("22220-00000-00300-00000-11110"), "{text}");
    // Only with --by-positions, and only 8 to 10.
    for args in [&["bfs", "--max-pieces", "8"][..], &["bfs", "--by-positions", "--max-pieces", "7"]] {
        assert_eq!(ostledb(args).status.code(), Some(2), "{args:?}");
    }
}

/// The layers of a `bfs --json` report, each without its seconds (the only field two
/// runs of the same search may differ in).
fn layers_but_seconds(v: &Value) -> Vec<Value> {
    let mut layers = v["layers"].as_array().expect("layers").clone();
    for l in &mut layers {
        l.as_object_mut().unwrap().remove("seconds");
    }
    layers
}

/// The search over positions gives the node-list search's layers (every field but the
/// seconds), counts the positions reached, answers a board with its position's first depth,
/// and refuses the strict convention.
#[test]
fn bfs_by_positions_equals_the_node_lists_and_refuses_strict() {
    let lists = json_stdout(&["bfs", "--max-depth", "6", "--json", "--quiet"]);
    let start = "22222-00000-00300-00000-11111";
    let positions = json_stdout(&["bfs", "--by-positions", "--max-depth", "6", "--json", "--quiet", "--board", start]);
    assert_eq!(layers_but_seconds(&lists), layers_but_seconds(&positions));
    assert!(lists.get("positions_reached").is_none());
    let (reached, all) =
        (positions["positions_reached"][0].as_u64().unwrap(), positions["positions_reached"][1].as_u64());
    let touched: u64 = positions["layers"].as_array().unwrap().iter().map(|l| l["positions"].as_u64().unwrap()).sum();
    assert!(reached > 0 && reached <= touched, "{reached} of {touched}");
    assert_eq!(all, Some(2_735_147_685));
    assert_eq!(positions["query"]["depth"], 0);
    assert_eq!(positions["query"]["of"], "position's first node");
    let out = ostledb(&["bfs", "--by-positions", "--strict", "--max-depth", "2", "--quiet"]);
    assert_eq!(out.status.code(), Some(2));
    let out = ostledb(&["bfs", "--by-positions", "--convention", "strict", "--max-depth", "2", "--quiet"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("published convention only"));
}

/// Run `ostledb args` until a line of its stderr contains `trigger`, then send it
/// `signal` (`KILL` or `TERM`) and wait for it: its exit status and its stderr.
fn signal_when(args: &[&str], trigger: &str, signal: &str) -> (ExitStatus, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_ostledb"))
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot run ostledb {args:?}: {e}"));
    let mut stderr = String::new();
    let mut lines = BufReader::new(child.stderr.take().expect("piped"));
    let mut line = String::new();
    let mut sent = false;
    while lines.read_line(&mut line).expect("stderr") > 0 {
        if !sent && line.contains(trigger) {
            let pid = child.id().to_string();
            assert!(Command::new("kill").args([&format!("-{signal}"), &pid]).status().expect("kill").success());
            sent = true;
        }
        stderr.push_str(&line);
        line.clear();
    }
    assert!(sent, "ostledb {args:?} never said `{trigger}`: {stderr}");
    (child.wait().expect("the process ends"), stderr)
}

/// `bfs --by-positions` resumes from its checkpoint after a kill (SIGKILL after a save)
/// and after SIGTERM (which saves at the next layer boundary and exits with 2), and the
/// layers then equal one uninterrupted search's (every field but the seconds); the
/// checkpoint is removed at the end; a damaged one is an error (exit code 1) that names
/// the file and says how to start over, and is left in place.
#[test]
fn bfs_by_positions_resumes_after_a_kill_and_after_sigterm() {
    let want = json_stdout(&["bfs", "--by-positions", "--max-depth", "8", "--json", "--quiet"]);
    let base = std::env::temp_dir().join(format!("ostledb-cli-bfs-resume-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&base);
    std::fs::create_dir_all(&base).unwrap();
    let dir = base.join("ck");
    let dir_arg = dir.to_str().unwrap();
    let ckpt = dir.join("bfs-positions.ckpt");
    let run = ["bfs", "--by-positions", "--max-depth", "8", "--checkpoint-dir", dir_arg];

    // Killed right after the save that follows depth 5 (saved after every layer).
    let mut args = run.to_vec();
    args.extend(["--checkpoint-minutes", "0"]);
    let (status, stderr) = signal_when(&args, "saved the search after depth 5", "KILL");
    assert!(!status.success(), "{stderr}");
    assert!(ckpt.is_file(), "{stderr}");
    let resume = || {
        let mut args = run.to_vec();
        args.push("--json");
        let out = ostledb(&args);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{stderr}");
        assert!(stderr.contains(&format!("resumed the search from {}", ckpt.display())), "{stderr}");
        assert!(stderr.contains("after depth "), "{stderr}");
        let got: Value = serde_json::from_slice(&out.stdout).expect("JSON");
        assert_eq!(layers_but_seconds(&got), layers_but_seconds(&want));
        assert_eq!(got["positions_reached"], want["positions_reached"]);
        assert_eq!(got["stop"], want["stop"]);
        assert!(!ckpt.exists(), "the checkpoint is removed at the end");
    };
    resume();

    // SIGTERM during a layer: saved at the next boundary, exit code 2, then resumed.
    let mut args = run.to_vec();
    args.extend(["--checkpoint-minutes", "1000"]);
    let (status, stderr) = signal_when(&args, "depth 3:", "TERM");
    assert_eq!(status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("stopped after depth") && stderr.contains("run the same command again"), "{stderr}");
    assert!(ckpt.is_file(), "{stderr}");
    let saved = std::fs::read(&ckpt).unwrap();

    // A damaged checkpoint: exit code 1, the file named, how to start over; kept.
    let mut bad = saved.clone();
    let k = bad.len() - 9;
    bad[k] ^= 0x40;
    std::fs::write(&ckpt, &bad).unwrap();
    let out = ostledb(&run);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains(&ckpt.display().to_string()) && stderr.contains("delete it to start over"), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert!(ckpt.is_file());
    std::fs::write(&ckpt, &saved).unwrap();
    resume();
    let _ = std::fs::remove_dir_all(&base);
}

/// `n` boards of phase (4,4), one a line: four pieces a side and the hole on random
/// squares (a fixed sequence for `seed`).
fn random_boards_4_4(n: usize, seed: u64) -> String {
    let mut x = seed;
    let mut next = move || {
        x = x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
        (x >> 33) as usize
    };
    let mut out = String::new();
    for _ in 0..n {
        let mut squares = [b'0'; 25];
        for piece in b"111122223" {
            let mut s = next() % 25;
            while squares[s] != b'0' {
                s = (s + 1) % 25;
            }
            squares[s] = *piece;
        }
        out.push_str(std::str::from_utf8(&squares).unwrap());
        out.push('\n');
    }
    out
}

/// The whole user journey on the real (4,4) phase: solve into a fresh directory, run it
/// again (nothing recomputed), query, stats with the published counts, verify --deep,
/// and then damage the value file: every reader must refuse it with exit code 1, never
/// panic.
#[test]
#[cfg_attr(debug_assertions, ignore = "solves 160,900,185 positions; cargo test --release runs it")]
fn solve_query_stats_verify_and_corruption_on_phase_4_4() {
    let dir = std::env::temp_dir().join(format!("ostledb-cli-e2e-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let db = dir.to_str().unwrap();
    // Ctrl-C during the solve: it stops at the end of the current step with a checkpoint
    // and says how to go on; the same command then resumes there (and everything below,
    // verify included, checks what it finished).
    let child = Command::new(env!("CARGO_BIN_EXE_ostledb"))
        .args(["solve", "--db", db])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn ostledb solve");
    std::thread::sleep(std::time::Duration::from_secs(3));
    let kill = Command::new("kill").args(["-INT", &child.id().to_string()]).status().expect("run kill");
    assert!(kill.success());
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("stopping after the current step") && err.contains("run the same command again"), "{err}");
    assert!(dir.join("group-4-4.ckpt").exists(), "{err}");
    // Resumed, also keeping the records with every loss distance for later walks.
    let records = dir.with_extension("records");
    let _ = std::fs::remove_dir_all(&records);
    let resumed = ostledb(&["solve", "--db", db, "--records-dir", records.to_str().unwrap()]);
    let notes = String::from_utf8_lossy(&resumed.stderr);
    assert!(resumed.status.success() && notes.contains("resumed from its checkpoint"), "{notes}");
    assert!(notes.contains("records with every distance written"), "{notes}");
    assert!(!notes.contains("(4,4) init"), "{notes}");
    assert!(!dir.join("group-4-4.ckpt").exists(), "the checkpoint is removed once the phase is written");
    let first = String::from_utf8_lossy(&resumed.stdout).to_string();
    let first =
        first.lines().map(|l| l.split_whitespace().collect::<Vec<_>>().join(" ")).collect::<Vec<_>>().join("\n");
    assert!(first.contains("(4,4): 160,900,185 positions"), "{first}");
    // Resumed: the finished phase is loaded, not solved again.
    let again = ostledb(&["solve", "--db", db]);
    let notes = String::from_utf8_lossy(&again.stderr);
    assert!(again.status.success() && notes.contains("finished earlier"), "{notes}");
    assert!(!notes.contains("retrograde"), "{notes}");
    assert_eq!(String::from_utf8_lossy(&again.stdout).lines().next(), first.lines().next());

    // A query: the node's value is the best value over its moves.
    let q = json_stdout(&["query", "--db", db, "22220-00000-00300-00000-11110", "--json"]);
    let moves = q["moves"].as_array().unwrap();
    assert_eq!(moves.len(), 20);
    assert!(moves.iter().any(|m| m["best"] == true && m["outcome"] == q["outcome"]), "{q}");
    assert!(q["verdict"] == "draw" && q["plies"].is_null() && q["moves"][0]["best"] == true, "{q}");
    // Many boards per process: one JSON line per input line, in order; a bad line gets
    // an error object, the others are answered, and the exit code says one failed.
    let input = "22220-00000-00300-00000-11110\n# a comment\n\n22220-00000-00300-00000-1111x\n11110-00300-00000-00000-22220,22220-00000-00300-00000-11110\n";
    let mut child = Command::new(env!("CARGO_BIN_EXE_ostledb"))
        .args(["query", "--db", db, "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::io::Write::write_all(&mut child.stdin.take().unwrap(), input.as_bytes()).unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let lines: Vec<Value> =
        String::from_utf8_lossy(&out.stdout).lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(lines.len(), 3);
    assert_eq!(lines[0]["verdict"], q["verdict"]);
    assert!(lines[1]["error"].as_str().unwrap().contains("character 29"), "{}", lines[1]);
    assert_eq!(lines[2]["node_index"], 17, "hole-down is forbidden after hole-up");
    assert_eq!(lines[2]["moves"].as_array().unwrap().iter().filter(|m| m["forbidden"] == true).count(), 1);
    // Under `ulimit -v 200000` the default cache sizes itself to the memory left: 2,000
    // random boards are all answered (they used to abort with exit code 134 and no
    // output once the 512 MB cache filled).
    let out = under_ulimit(200_000, &["query", "--db", db, "-"], &random_boards_4_4(2000, 7));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{:?}: {err}", out.status);
    assert_eq!(String::from_utf8_lossy(&out.stdout).lines().count(), 2000, "{err}");
    // A decided line ends with the capture its verdict promises.
    let l =
        json_stdout(&["query", "--db", db, "22220-00000-00300-00000-11110", "--play", "c1-right", "--line", "--json"]);
    let plies = l["plies"].as_u64().unwrap();
    assert_eq!(l["line"].as_array().unwrap().len() as u64, plies, "{l}");
    assert_eq!(l["line_end"], serde_json::json!({"reason": "game-over"}));
    // The initial board is a draw: its line comes back after 30 plies to the node of ply
    // 27 and stops there (with --max-plies 4294967295 it used to grow until killed).
    let l =
        json_stdout(&["query", "--db", db, "22220-00000-00300-00000-11110", "--line", "--max-plies", "1000", "--json"]);
    assert_eq!(l["line_end"], serde_json::json!({"reason": "repeats", "from": 27}), "{l}");
    assert_eq!(l["line"].as_array().unwrap().len(), 30, "{l}");
    // A (5,5) board is outside a max-pieces-8 database: a clear error, not a panic.
    let out = ostledb(&["query", "--db", db, "00100-11200-00001-31022-20020"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2));
    assert!(err.contains("--max-pieces 10"), "{err}");

    let stats = json_stdout(&["stats", "--db", db, "--json", "--quiet"]);
    let c = &stats["phases"][0]["counts"];
    assert_eq!(c["immediate_wins"], 84_616_783u64);
    assert_eq!(c["nontrivial_nodes"], 353_733_905u64);
    assert_eq!(c["nontrivial_with_forbidden"], 277_450_503u64);
    let p = &stats["phases"][0]["positions"];
    assert_eq!(p["win"].as_u64().unwrap() + p["loss"].as_u64().unwrap() + p["draw"].as_u64().unwrap(), 160_900_185);

    // The solver's 8-byte records are gone; the database is the packed store.
    let data = ostledb::store::directory::current_data_dir(&dir).unwrap();
    assert!(!dir.join("phase-4-4.vals").exists() && data.join("values-4-4.zst").exists());
    let v = json_stdout(&["verify", "--db", db, "--deep", "--json", "--quiet"]);
    assert_eq!(v["ok"], true, "{v}");
    assert_eq!(v["phases"][0]["report"]["mismatches"], 0, "{v}");
    // With the solver's records: the same check, no elided loss resolved.
    let out = ostledb(&["verify", "--db", db, "--deep", "--json", "--records-dir", records.to_str().unwrap()]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success() && err.contains("resolved records (4,4) (read)"), "{err}");
    assert!(!err.contains("losses (4,4)"), "nothing resolved: {err}");
    let taken: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(taken["phases"], v["phases"]);
    std::fs::remove_dir_all(&records).unwrap();

    // Damage one byte inside a value block: the block checksum catches it, and verify
    // names the block; every reader refuses with exit code 1 (corrupt), never panics.
    let file = data.join("values-4-4.zst");
    let mut f = std::fs::OpenOptions::new().read(true).write(true).open(&file).unwrap();
    use std::io::{Seek, SeekFrom};
    let mut b = [0u8; 1];
    f.seek(SeekFrom::Start(1_000_000)).unwrap();
    f.read_exact(&mut b).unwrap();
    f.seek(SeekFrom::Start(1_000_000)).unwrap();
    f.write_all(&[b[0] ^ 0x20]).unwrap();
    drop(f);
    for args in [vec!["verify", "--db", db], vec!["stats", "--db", db]] {
        let out = ostledb(&args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {err}");
        assert!(err.contains("damaged") && !err.contains("panicked"), "{args:?}: {err}");
    }
    let out = ostledb(&["verify", "--db", db]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("values-4-4.zst") && err.contains("block") && err.contains("checksum"), "{err}");
    // Truncated: even opening for a single query refuses it.
    let f = std::fs::OpenOptions::new().write(true).open(&file).unwrap();
    f.set_len(1000).unwrap();
    let out = ostledb(&["query", "--db", db, "22220-00000-00300-00000-11110"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("damaged"), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// A solved and packed database of the 4x4 board with three pieces a side (four phases
/// in three groups, 2 to 6 pieces), in a fresh temporary directory named after `name`.
pub(crate) fn small_database(name: &str) -> std::path::PathBuf {
    use ostledb::game::Geometry;
    use ostledb::solve::SolveOptions;
    use ostledb::solve::retrograde::solve_into;
    use ostledb::working::pack::{PackOptions, pack};
    let dir = std::env::temp_dir().join(format!("ostledb-cli-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let g = Geometry::new(4, 3).unwrap();
    solve_into(&g, 6, &SolveOptions { dir: Some(dir.clone()), ..Default::default() }, |_| Ok(())).unwrap();
    pack(&dir, &g, 6, &PackOptions::default(), |_| {}).unwrap();
    dir
}

/// `query --line` says how the line ended, in its text and its JSON (`line_end`): a
/// drawn line stops where it comes back to a board (with its forbidden move) it has
/// passed, a decided one where the game ends, either at --max-plies first.
#[test]
fn query_line_says_how_it_ended() {
    let dir = small_database("line-end");
    let db = dir.to_str().unwrap();
    let (mut drawn, mut decided) = (None, None);
    {
        let d = ostledb::Database::open(&dir).unwrap();
        'all: for p in d.index().phases() {
            for i in 0..p.len() {
                let a = d.analyse(&p.position_at(i), None).unwrap();
                match a.plies {
                    None if drawn.is_none() && !a.moves.is_empty() => drawn = Some(a.board.clone()),
                    Some(n) if n > 3 && decided.is_none() => decided = Some(a.board.clone()),
                    _ => {}
                }
                if drawn.is_some() && decided.is_some() {
                    break 'all;
                }
            }
        }
    }
    let (drawn, decided) = (drawn.expect("a draw"), decided.expect("a win or loss"));
    let line = |board: &str, plies: &str| {
        let args = ["query", "--db", db, board, "--line", "--max-plies", plies];
        (json_stdout(&[&args[..], &["--json"]].concat()), ok_stdout(&args))
    };
    let (j, text) = line(&drawn, "1000");
    assert_eq!(j["line_end"]["reason"], "repeats", "{j}");
    let from = j["line_end"]["from"].as_u64().unwrap();
    let steps = j["line"].as_array().unwrap();
    assert!(from >= 1 && from as usize <= steps.len() && steps.len() < 1000, "{j}");
    assert_eq!(steps.last().unwrap()["move"]["child"], steps[from as usize - 1]["board"], "{j}");
    assert!(text.contains(&format!("... repeats from ply {from}: the next position")), "{text}");
    let (j, text) = line(&drawn, "1");
    assert_eq!(j["line_end"], serde_json::json!({"reason": "max-plies"}));
    assert!(text.contains("(stopped after 1 plies; --max-plies sets the limit)"), "{text}");
    let (j, text) = line(&decided, "1000");
    assert_eq!(j["line_end"], serde_json::json!({"reason": "game-over"}));
    assert_eq!(j["line"].as_array().unwrap().len() as u64, j["plies"].as_u64().unwrap());
    assert!(text.contains("game over:"), "{text}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// `verify --deep` and `stats` with `--checkpoint`: crashed at every save in turn
/// (`OSTLEDB_FAULT=N:abort`, which ends the process as a kill does), each goes on from
/// its file, says so, and reports exactly what a walk in one go reports; the file is
/// removed at the end. A checkpoint of the database before a write is not used; a file
/// that is not a checkpoint, or one of the other command, is refused and left as it is.
#[test]
fn verify_and_stats_go_on_from_their_checkpoint_after_a_crash() {
    let dir = small_database("walk-checkpoint");
    let db = dir.to_str().unwrap();
    let ck = dir.with_extension("ckpt");
    let ckp = ck.to_str().unwrap();
    let run = |args: &[&str], fault: Option<u64>| {
        let mut c = Command::new(env!("CARGO_BIN_EXE_ostledb"));
        c.args(args).args(["--db", db, "--json", "--checkpoint", ckp, "--checkpoint-minutes", "0"]);
        if let Some(n) = fault {
            c.env("OSTLEDB_FAULT", format!("{n}:abort"));
        }
        c.stdin(Stdio::null()).output().unwrap()
    };
    let parsed = |out: &Output| -> Value {
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success(), "{:?}: {}", out.status, String::from_utf8_lossy(&out.stderr));
        serde_json::from_str(&text).unwrap()
    };
    // What matters of each report (a verify report also has the checksum pass's timing).
    let verify_part = |v: &Value| (v["ok"].clone(), v["phases"].clone());
    let plain_verify = json_stdout(&["verify", "--deep", "--json", "--quiet", "--db", db]);
    let plain_stats = json_stdout(&["stats", "--json", "--quiet", "--db", db]);
    assert_eq!(plain_verify["phases"].as_array().unwrap().len(), 4, "{plain_verify}");
    for (args, command) in [(&["verify", "--deep"][..], "verify"), (&["stats"][..], "stats")] {
        let mut crashed = 0;
        // Three write steps a save (create, write, rename): crashed as it begins each
        // save, the file holds the save before.
        for step in (1..).step_by(3) {
            let _ = std::fs::remove_file(&ck);
            let out = run(args, Some(step));
            if out.status.success() {
                break; // every save of the walk was crashed once
            }
            assert_eq!(out.status.code(), None, "{command} at step {step}: {}", String::from_utf8_lossy(&out.stderr));
            crashed += 1;
            let had = ck.exists();
            let out = run(args, None);
            let notes = String::from_utf8_lossy(&out.stderr);
            let v = parsed(&out);
            match command {
                "verify" => assert_eq!(verify_part(&v), verify_part(&plain_verify), "step {step}"),
                _ => assert_eq!(v, plain_stats, "step {step}"),
            }
            assert_eq!(had, notes.contains("going on after"), "step {step}: {notes}");
            assert!(!ck.exists(), "the checkpoint is removed once the walk is done");
        }
        assert!(crashed >= 5, "{command}: only {crashed} saves");
    }
    // A checkpoint of this database before it was written again: not used.
    let stale = run(&["stats"], Some(4));
    assert_eq!(stale.status.code(), None);
    let text = std::fs::read_to_string(&ck).unwrap();
    let mut saved: Value = serde_json::from_str(&text).unwrap();
    saved["database"] = Value::String("0123456789abcdef".into());
    std::fs::write(&ck, saved.to_string()).unwrap();
    let out = run(&["stats"], None);
    assert!(String::from_utf8_lossy(&out.stderr).contains("starting from the beginning"));
    assert_eq!(parsed(&out), plain_stats);
    // One of an earlier build, whose statistics had no longest wins: not used either
    // (going on from it would leave out the wins of the positions it had counted).
    fn without_longest(v: &mut Value) -> usize {
        match v {
            Value::Object(m) => {
                let here = m.remove("longest_win").is_some() as usize;
                here + m.values_mut().map(without_longest).sum::<usize>()
            }
            Value::Array(a) => a.iter_mut().map(without_longest).sum(),
            _ => 0,
        }
    }
    let stale = run(&["stats"], Some(4));
    assert_eq!(stale.status.code(), None);
    let mut saved: Value = serde_json::from_str(&std::fs::read_to_string(&ck).unwrap()).unwrap();
    assert!(without_longest(&mut saved) > 0, "{saved}");
    std::fs::write(&ck, saved.to_string()).unwrap();
    let out = run(&["stats"], None);
    assert!(String::from_utf8_lossy(&out.stderr).contains("another build"));
    assert_eq!(parsed(&out), plain_stats);
    // Refused, the file left as it is: not a checkpoint; another command's; no --deep.
    for (content, args) in [
        ("hello\n".to_string(), &["verify", "--deep"][..]),
        (text.clone(), &["verify", "--deep"][..]),
        (text.clone(), &["verify"][..]),
        (text.clone(), &["stats", "--longest"][..]),
    ] {
        std::fs::write(&ck, &content).unwrap();
        let out = run(args, None);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains("checkpoint") && !err.contains("panicked"), "{args:?}: {err}");
        assert_eq!(std::fs::read_to_string(&ck).unwrap(), content, "{args:?}");
    }
    let _ = std::fs::remove_file(&ck);
    let _ = std::fs::remove_dir_all(&dir);
}

/// `bench` and `interesting` on a small database (the 4x4 board, three pieces a side):
/// one table row per compiled backend with every figure present, every answer checked
/// against rank (the run would fail otherwise); the interesting counts as JSON with the
/// examples asked for; bad arguments are exit code 2.
#[test]
fn bench_and_interesting_on_a_small_database() {
    use ostledb::store::keys::Backend;
    let dir = small_database("bench");
    let db = dir.to_str().unwrap();

    let v = json_stdout(&[
        "bench",
        "--db",
        db,
        "--backend",
        "all",
        "--lookups",
        "3000",
        "--rounds",
        "1",
        "--quiet",
        "--json",
    ]);
    let rows = v["backends"].as_array().unwrap();
    let names: Vec<&str> = rows.iter().map(|r| r["backend"].as_str().unwrap()).collect();
    let want: Vec<&str> = Backend::available().iter().map(|b| b.name()).collect();
    assert_eq!(names, want, "{v}");
    for r in rows {
        for p in ["random", "children", "in_order"] {
            for m in ["single", "batched"] {
                assert!(r[p][m].as_f64().unwrap() > 0.0, "{r}");
            }
        }
    }
    assert_eq!(v["lookups"], 3000);
    // Query latency: every percentile of every kind present and ordered.
    for kind in ["probe_cold", "probe_warm", "analyse_cold", "analyse_warm"] {
        let q = &v["queries"][kind];
        assert_eq!(q["calls"], 20_000, "{v}");
        let (p50, p99, max) =
            (q["p50_ns"].as_f64().unwrap(), q["p99_ns"].as_f64().unwrap(), q["max_ns"].as_f64().unwrap());
        assert!(0.0 < p50 && p50 <= p99 && p99 <= max, "{kind}: {q}");
    }
    // --no-build opens the database's own files: the default pack has rank only.
    let v = json_stdout(&["bench", "--db", db, "--no-build", "--lookups", "500", "--rounds", "1", "--quiet", "--json"]);
    assert_eq!(v["backends"].as_array().unwrap().len(), 1, "{v}");
    let out = ostledb(&["bench", "--db", db, "--no-build", "--backend", "sorted", "--quiet"]);
    assert_eq!(out.status.code(), Some(2));
    let out = ostledb(&["bench", "--db", db, "--backend", "nonsense", "--quiet"]);
    assert_eq!(out.status.code(), Some(2));
    // Cold queries: each phase, then all of them, every call asked for timed, blocks
    // decoded on each (no cache kept between calls), after the index's tables were built
    // and the value pages mapped; the text form's header says how long those took.
    let v = json_stdout(&["bench", "--db", db, "--cold", "25", "--cold-rounds", "2", "--quiet", "--json"]);
    let rows = v["phases"].as_array().unwrap();
    let (all, phases) = rows.split_last().unwrap();
    assert!(all["phase"] == "all" && !phases.is_empty(), "{v}");
    for p in rows {
        let a = &p["analyse"];
        let calls = if p["phase"] == "all" { 50 * phases.len() } else { 50 };
        assert_eq!(a["calls"], calls, "{p}");
        let (p50, p99, max) =
            (a["p50_ns"].as_f64().unwrap(), a["p99_ns"].as_f64().unwrap(), a["max_ns"].as_f64().unwrap());
        assert!(0.0 < p50 && p50 <= p99 && p99 <= max, "{p}");
        assert!(p["blocks_per_call"].as_f64().unwrap() > 0.0, "{p}");
    }
    assert!(v["index_ready_seconds"].as_f64().unwrap() >= 0.0 && v["pages_mapped_seconds"].as_f64().unwrap() >= 0.0);
    let out = ostledb(&["bench", "--db", db, "--cold", "5", "--cold-rounds", "1", "--quiet"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success() && text.contains("value pages mapped in") && text.contains("\nall "), "{text}");

    let v = json_stdout(&["interesting", "--db", db, "--list", "2", "--quiet", "--json"]);
    let phases = v["phases"].as_array().unwrap();
    assert_eq!(phases.len(), 4, "{v}");
    let p33 = phases.iter().find(|p| p["phase"] == "(3,3)").unwrap();
    for c in p33["classes"].as_array().unwrap() {
        let (count, fastest) = (c["count"].as_u64().unwrap(), c["fastest"].as_u64().unwrap());
        assert!(fastest >= count, "{c}");
        assert_eq!(c["examples"].as_array().unwrap().len() as u64, count.min(2), "{c}");
    }
    let v = json_stdout(&["interesting", "--db", db, "--class", "hole-only", "--quiet", "--json"]);
    assert!(v["phases"].as_array().unwrap().iter().all(|p| p["classes"].as_array().unwrap().len() == 1), "{v}");
    let out = ostledb(&["interesting", "--db", db, "--class", "nonsense"]);
    assert_eq!(out.status.code(), Some(2));
    let v = json_stdout(&["interesting", "--db", db, "--max-pieces", "5", "--quiet", "--json"]);
    assert_eq!(v["phases"].as_array().unwrap().len(), 3, "{v}");
    let out = ostledb(&["interesting", "--db", db, "--max-pieces", "3"]);
    assert_eq!(out.status.code(), Some(2));
    let _ = std::fs::remove_dir_all(&dir);
}

/// Run `ostledb args` in a shell under `ulimit -v kb`, with `input` on its stdin.
fn under_ulimit(kb: u64, args: &[&str], input: &str) -> Output {
    let mut sh = Command::new("sh");
    sh.arg("-c").arg(format!("ulimit -v {kb} && exec \"$0\" \"$@\"")).arg(env!("CARGO_BIN_EXE_ostledb")).args(args);
    run_with_input(&mut sh, input.as_bytes().to_vec())
}

/// Under a memory limit (`ulimit -v 200000`, 195 MiB of address space), a cache asked
/// for beyond it is refused at once with exit code 2, and the default cache sizes
/// itself to the room left; a large allocation that fails is an error naming what it
/// was for. (Under that limit `query -` on (4,4) used to abort with exit code 134 and no
/// output when its 512 MB cache filled: see the (4,4) test for that case.)
#[test]
fn a_memory_limit_is_a_clear_error_or_a_smaller_cache_never_an_abort() {
    let out = under_ulimit(200_000, &["query", "--db", GOLDEN, "--cache-mb", "512", "111-030-222"], "");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("--cache-mb 512: the memory limit of this process (ulimit -v) leaves"), "{err}");
    let out = under_ulimit(200_000, &["query", "--db", GOLDEN, "-"], &"111-030-222\n".repeat(100));
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(String::from_utf8_lossy(&out.stdout).lines().count(), 100);
    let e = ostledb::sys::vec_with_capacity::<u64>(usize::MAX / 16, "the sorted keys of phase (5,5)", "use rank")
        .expect_err("no machine has that much memory");
    assert_eq!(e.exit_code(), 2);
    assert!(e.to_string().starts_with("not enough memory for the sorted keys of phase (5,5) ("), "{e}");
}

/// `cli::query::answer_line`, the work `query -` does per line (and a fuzz target's
/// entry point): nothing for a blank line or a comment, an answer or a bad line for any
/// other bytes, never a panic.
#[test]
fn answer_line_answers_any_bytes() {
    use ostledb::cli::query::answer_line;
    let db = ostledb::Database::open(std::path::Path::new(GOLDEN)).unwrap();
    for blank in [&b""[..], b"  \t\r", b"# 111-030-222", b"  #\xff"] {
        assert_eq!(answer_line(&db, blank, &[], None).unwrap(), None, "{blank:?}");
    }
    let (json, bad) = answer_line(&db, b" 111-030-222\r", &[], Some(5)).unwrap().unwrap();
    let v: Value = serde_json::from_str(&json).unwrap();
    assert!(!bad && v["input"] == "111-030-222" && v["line"].as_array().unwrap().len() == 5, "{v}");
    let play = vec!["hole-left".to_string()];
    let (json, bad) = answer_line(&db, b"111-030-222", &play, None).unwrap().unwrap();
    let v: Value = serde_json::from_str(&json).unwrap();
    assert!(!bad && v["board"] != "111-030-222" && v.get("line").is_none(), "{v}");
    for line in [&b"\xc3"[..], b"111-030-22x", b"111,", b",", b"111-030-222,\xff", &[b'3'; 5000]] {
        let (json, bad) = answer_line(&db, line, &[], None).unwrap().unwrap();
        let v: Value = serde_json::from_str(&json).unwrap();
        assert!(bad && v["error"].is_string() && json.len() < 600, "{line:?}: {v}");
    }
}

/// `verify --json` on a damaged database prints its JSON report all the same, then exits
/// with 1: every damaged file in `checksums.failures` (the pass goes on past the first),
/// the message that ends the run in `error`; damage met when opening the database gives
/// a report with no checksums. (It used to print no JSON at all.)
#[test]
fn verify_json_reports_damage_and_exits_1() {
    let dir = std::env::temp_dir().join(format!("ostledb-cli-verify-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    for e in std::fs::read_dir(GOLDEN).unwrap() {
        let e = e.unwrap();
        std::fs::copy(e.path(), dir.join(e.file_name())).unwrap();
    }
    let db = dir.to_str().unwrap();
    let verify = || {
        let out = ostledb(&["verify", "--db", db, "--json", "--quiet"]);
        let text = String::from_utf8(out.stdout).unwrap();
        assert_eq!(text.lines().count(), 1, "{text}");
        (out.status.code(), serde_json::from_str::<Value>(&text).unwrap(), String::from_utf8(out.stderr).unwrap())
    };
    let (code, v, _) = verify();
    assert!(code == Some(0) && v["ok"] == true && v["error"].is_null(), "{v}");
    assert_eq!(v["checksums"]["failures"].as_array().map(Vec::len), Some(0), "{v}");
    // Damage the middle of two value files: both are reported.
    for name in ["values-3-3.zst", "values-2-3.zst"] {
        let path = dir.join(name);
        let mut bytes = std::fs::read(&path).unwrap();
        let at = bytes.len() / 2;
        bytes[at] ^= 0x10;
        std::fs::write(&path, bytes).unwrap();
    }
    let (code, v, stderr) = verify();
    assert_eq!(code, Some(1), "{stderr}");
    assert_eq!(v["ok"], false, "{v}");
    let failures = v["checksums"]["failures"].as_array().unwrap();
    let files: Vec<&str> = failures.iter().map(|f| f["file"].as_str().unwrap()).collect();
    assert!(files.len() == 2 && files.iter().all(|f| f.contains("values-")), "{v}");
    assert!(failures.iter().all(|f| f["error"].as_str().unwrap().contains("checksum mismatch")), "{v}");
    assert!(stderr.contains(v["error"].as_str().unwrap()), "{v} {stderr}");
    // Damaged metadata: the database does not open; the report says so.
    let meta = dir.join("ostledb.meta");
    let mut bytes = std::fs::read(&meta).unwrap();
    bytes[40] ^= 0x01;
    std::fs::write(&meta, bytes).unwrap();
    let (code, v, _) = verify();
    assert_eq!(code, Some(1));
    assert!(v["ok"] == false && v["checksums"].is_null(), "{v}");
    assert!(v["error"].as_str().unwrap().contains("ostledb.meta: checksum mismatch"), "{v}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// `tools/whole-game.sh` with a stand-in for `ostledb` that logs its arguments, prints a
/// line of JSON, and fails the first time it is asked to verify: the first run stops at
/// `verify` (its exit code, the stages before it done); the second skips `solve` and
/// `bfs`, runs `verify` again and the rest once each; a third runs nothing. Every command
/// line the stand-in was given is accepted by the real binary's parser.
#[test]
fn the_whole_game_script_runs_each_stage_once_and_goes_on_after_a_failure() {
    let dir = std::env::temp_dir().join(format!("ostledb-cli-{}-whole-game", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let (fake, log) = (dir.join("fake-ostledb"), dir.join("calls"));
    std::fs::write(
        &fake,
        "#!/usr/bin/env bash\n\
         echo \"$*\" >> \"$FAKE_LOG\"\n\
         if [[ $1 == verify && ! -e $FAKE_LOG.failed ]]; then touch \"$FAKE_LOG.failed\"; echo 'fake: verify fails' >&2; exit 3; fi\n\
         echo \"{\\\"stage\\\": \\\"$1\\\"}\"\n",
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).unwrap();
    let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tools/whole-game.sh");
    let db = dir.join("db");
    let run = || {
        let out = Command::new("bash")
            .arg(&script)
            .args(["--db", db.to_str().unwrap(), "--ostledb", fake.to_str().unwrap()])
            .args(["--max-pieces", "8", "--bfs-depth", "4"])
            .env("FAKE_LOG", &log)
            .stdin(Stdio::null())
            .output()
            .unwrap();
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).to_string(),
            String::from_utf8_lossy(&out.stderr).to_string(),
        )
    };
    let calls = || std::fs::read_to_string(&log).unwrap_or_default().lines().map(String::from).collect::<Vec<_>>();
    let row = |table: &str, stage: &str| {
        table
            .lines()
            .find(|l| l.starts_with(&format!("{stage} ")))
            .map(|l| l.split_whitespace().map(String::from).collect::<Vec<_>>())
    };

    let (code, table, err) = run();
    assert_eq!(code, Some(3), "{err}");
    assert!(err.contains("verify failed (exit 3)"), "{err}");
    let verbs: Vec<String> = calls().iter().map(|c| c.split(' ').next().unwrap().to_string()).collect();
    assert_eq!(verbs, ["solve", "bfs", "verify"]);
    assert_eq!(row(&table, "solve").unwrap()[1..2], ["1"]);
    assert!(table.contains("failed (exit 3)"), "{table}");
    let work = dir.join("db.work");
    assert!(work.join("bfs.done").exists() && !work.join("verify.done").exists());

    let (code, table, err) = run();
    assert_eq!(code, Some(0), "{err}");
    assert!(err.contains("solve: done before, skipped") && err.contains("bfs: done before, skipped"), "{err}");
    let verbs: Vec<String> = calls().iter().map(|c| c.split(' ').next().unwrap().to_string()).collect();
    assert_eq!(verbs, ["solve", "bfs", "verify", "verify", "export"]);
    for (stage, attempts) in [("solve", "1"), ("bfs", "1"), ("verify", "2"), ("digest", "1")] {
        let r = row(&table, stage).unwrap_or_else(|| panic!("no row {stage}: {table}"));
        assert_eq!((r[1].as_str(), r.last().unwrap().as_str()), (attempts, "done"), "{table}");
    }
    assert!(row(&table, "check").unwrap().join(" ").contains("skipped"), "{table}");
    assert!(row(&table, "stats").is_none(), "the digest counts the statistics: no walk of their own: {table}");
    assert!(row(&table, "longest").is_none(), "the digest's statistics have the longest win: {table}");
    assert!(calls().last().unwrap().contains(&format!("--stats {}", work.join("stats.json").display())));
    assert_eq!(std::fs::read_to_string(work.join("digest.out")).unwrap().trim(), "{\"stage\": \"export\"}");

    let (code, _, err) = run();
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(calls().len(), 5, "nothing runs again");

    // The stages' command lines are the real binary's: each parses (`--help` after them
    // prints the help only when everything before it is a known argument).
    for c in calls() {
        let mut args: Vec<&str> = c.split(' ').collect();
        args.push("--help");
        let out = ostledb(&args);
        assert!(out.status.success(), "ostledb {c}: {}", String::from_utf8_lossy(&out.stderr));
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// A run of hours must not change course when the script is edited under it: bash reads
/// a script as it goes, so the script is one block, read whole before it runs. A copy is
/// overwritten with other text while its first stage runs; the run still does every
/// stage and prints its table.
#[test]
fn the_whole_game_script_is_read_whole_before_it_runs() {
    let dir = std::env::temp_dir().join(format!("ostledb-cli-{}-whole-game-edited", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let (fake, script, started) = (dir.join("fake-ostledb"), dir.join("whole-game.sh"), dir.join("started"));
    std::fs::write(
        &fake,
        format!(
            "#!/usr/bin/env bash\nif [[ $1 == solve ]]; then touch {}; sleep 2; fi\necho '{{}}'\n",
            started.display()
        ),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).unwrap();
    let original =
        std::fs::read_to_string(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tools/whole-game.sh"));
    std::fs::write(&script, original.unwrap()).unwrap();
    let run = Command::new("bash")
        .arg(&script)
        .args(["--db", dir.join("db").to_str().unwrap(), "--ostledb", fake.to_str().unwrap(), "--max-pieces", "8"])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let t = std::time::Instant::now();
    while !started.exists() {
        assert!(t.elapsed().as_secs() < 30, "the first stage never began");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    // Longer than the script, so that every byte it would read next is different.
    std::fs::write(&script, "echo 'the edited script ran' >&2; exit 7\n".repeat(400)).unwrap();
    let out = run.wait_with_output().unwrap();
    let (table, err) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(!err.contains("edited script"), "{err}");
    for stage in ["solve", "bfs", "verify", "digest"] {
        assert!(table.lines().any(|l| l.starts_with(stage) && l.ends_with("done")), "{stage}: {table}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// An attempt killed together with the script (the end of a session) has no timings of
/// GNU time; the next run keeps its start and last output, and the table counts that
/// much of its wall time and says so.
#[test]
fn the_whole_game_script_counts_the_wall_time_of_an_attempt_killed_with_it() {
    use std::os::unix::process::CommandExt;
    let dir = std::env::temp_dir().join(format!("ostledb-cli-{}-whole-game-killed", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let fake = dir.join("fake-ostledb");
    std::fs::write(
        &fake,
        "#!/usr/bin/env bash\n\
         if [[ -n $FAKE_HANG ]]; then echo 'fake: working' >&2; sleep 2; echo 'fake: still working' >&2; sleep 60; fi\n\
         echo '{}'\n",
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).unwrap();
    let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tools/whole-game.sh");
    let db = dir.join("db");
    let work = dir.join("db.work");
    let command = || {
        let mut c = Command::new("bash");
        c.arg(&script)
            .args(["--db", db.to_str().unwrap(), "--ostledb", fake.to_str().unwrap()])
            .args(["--max-pieces", "8", "--stages", "stats"])
            .stdin(Stdio::null());
        c
    };
    // The script and everything under it in a process group of their own, killed at once.
    let mut hung =
        command().env("FAKE_HANG", "1").stdout(Stdio::null()).stderr(Stdio::null()).process_group(0).spawn().unwrap();
    let started = std::time::Instant::now();
    while !std::fs::read_to_string(work.join("stats.err")).unwrap_or_default().contains("still working") {
        assert!(started.elapsed().as_secs() < 30, "the stand-in never said it was still working");
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    unsafe { libc::kill(-(hung.id() as i32), libc::SIGKILL) };
    hung.wait().unwrap();
    assert!(
        !work.join("stats.times").exists() || std::fs::read_to_string(work.join("stats.times")).unwrap().is_empty()
    );

    let out = command().output().unwrap();
    let (table, err) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert_eq!(out.status.code(), Some(0), "{err}");
    let killed = std::fs::read_to_string(work.join("stats.killed")).unwrap();
    let spans: Vec<Vec<u64>> = killed.lines().map(|l| l.split(' ').map(|x| x.parse().unwrap()).collect()).collect();
    assert_eq!(spans.len(), 1, "{killed}");
    // The last output came 2 s after the start (1 s at least in whole seconds).
    assert!(spans[0][1] > spans[0][0], "{killed}");
    let row = table.lines().find(|l| l.starts_with("stats ")).unwrap_or_else(|| panic!("{table}"));
    let fields: Vec<&str> = row.split_whitespace().collect();
    assert_eq!(fields[1], "2", "{table}");
    assert!(fields[2].parse::<f64>().unwrap() >= (spans[0][1] - spans[0][0]) as f64, "{table}");
    assert!(row.contains("1 attempt(s) killed") && row.contains("done"), "{table}");
    // Run again: the killed attempt is noted once, not again.
    assert!(command().output().unwrap().status.success());
    assert_eq!(std::fs::read_to_string(work.join("stats.killed")).unwrap(), killed);
    let _ = std::fs::remove_dir_all(&dir);
}

/// `ostledb review` (issue 63): each ply of a game on the golden 3x3 database, made of
/// best moves and of the worst allowed ones in turn, is valued as separate `query --play`
/// calls value it (before: the node's value; after: the move's; best: query's first
/// move), `--json` and the text agree on the blunders, and a bad move, a forbidden one or
/// one after the end exits 2 with one line.
#[test]
fn review_marks_each_ply_as_query_values_it() {
    let start = "111-030-222";
    let query = |moves: &[String]| {
        let mut args = vec!["query", "--db", GOLDEN, start, "--json"];
        let joined = moves.join(",");
        if !moves.is_empty() {
            args.extend(["--play", &joined]);
        }
        json_stdout(&args)
    };
    let mut game: Vec<String> = Vec::new();
    for k in 0..10 {
        let q = query(&game);
        let allowed: Vec<&Value> =
            q["moves"].as_array().unwrap().iter().filter(|m| m["forbidden"] == false && m["plies"] != 1).collect();
        let Some(m) = (if k % 2 == 0 { allowed.last() } else { allowed.first() }) else { break };
        game.push(m["move"].as_str().unwrap().to_string());
    }
    assert!(game.len() >= 6, "{game:?}");
    let joined = game.join(",");
    let r = json_stdout(&["review", "--db", GOLDEN, start, "--play", &joined, "--json"]);
    let plies = r["plies"].as_array().unwrap();
    assert_eq!(plies.len(), game.len());
    for (k, p) in plies.iter().enumerate() {
        let q = query(&game[..k]);
        assert_eq!(p["board"], q["board"]);
        assert_eq!(p["before"]["outcome"], q["outcome"], "ply {}", k + 1);
        assert_eq!(p["best"], q["moves"][0], "ply {}", k + 1);
        let played = q["moves"].as_array().unwrap().iter().find(|m| m["move"] == game[k].as_str()).unwrap();
        assert_eq!(&p["move"], played);
        assert_eq!(p["after"]["outcome"], played["outcome"]);
        let rank = |v: &Value| match v["verdict"].as_str().unwrap() {
            "win" | "immediate-win" => 2,
            "draw" => 1,
            _ => 0,
        };
        assert_eq!(p["blunder"], rank(&p["before"]) > rank(&p["after"]), "ply {}", k + 1);
    }
    let blunders = plies.iter().filter(|p| p["blunder"] == true).count();
    assert_eq!(r["blunders"], blunders);
    let text = ok_stdout(&["review", "--db", GOLDEN, start, "--play", &joined]);
    assert_eq!(text.matches("BLUNDER").count(), blunders, "{text}");
    assert!(text.contains(&format!("{blunders} of {} plies", game.len())), "{text}");
    let reached = query(&game);
    assert_eq!(r["reached"]["outcome"], reached["outcome"]);
    for (moves, says) in
        [(format!("{},x1-up", game[0]), "(in move 2)"), (format!("{},{}", game[0], "a1-up,a1-up,a1-up,a1-up"), "move ")]
    {
        let out = ostledb(&["review", "--db", GOLDEN, start, "--play", &moves]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{moves}: {stderr}");
        assert!(stderr.lines().count() == 1 && stderr.contains(says), "{moves}: {stderr}");
        assert!(out.stdout.is_empty());
    }
}
