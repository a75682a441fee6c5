//! `ostledb serve`, on 3x3 databases solved in the test. The router, called in process:
//! every endpoint answers as the library does, the computer opponent keeps to its level,
//! every class of bad request gets its status and a JSON `{"error"}` (a malformed or
//! impossible board, a wrong previous board, a missing phase, a damaged database, an
//! unknown path or method, a query string too long or not UTF-8), and ETags give 304.
//! The binary, over loopback: it prints where it listens, answers every position of the
//! database exactly as `ostledb query -` does over one keep-alive connection, closes a
//! slow or idle client, answers one that half-closes, refuses an oversized head or a
//! body, takes hundreds of connections at once and stops cleanly on SIGTERM. Clients
//! that never read (issue 61): 1,030 of them are all closed while `/health` answers at
//! once, a newcomer takes the place of one when all are taken, the long answers held
//! for them are bounded, and under `ulimit -v 200000` and `400000` the server fits
//! itself in the limit or exits 2 naming `--cache-mb`, never aborting.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use axum::body::Body;
use axum::http::{Request, StatusCode, header};
use ostledb::Database;
use ostledb::analysis::opponent::Level;
use ostledb::game::Geometry;
use ostledb::game::notation::{format_board, parse_board};
use ostledb::game::symmetry::canonical;
use ostledb::serve::{Limits, router};
use ostledb::store::keys::Backend;
use serde_json::Value;
use tower::ServiceExt;

use crate::store::build;

fn geometry() -> Geometry {
    Geometry::new(3, 3).unwrap()
}

/// A 3x3 database with at most `max` (5 or 6) pieces, solved once per process.
fn database(max: u32) -> &'static Path {
    static DIRS: [OnceLock<PathBuf>; 2] = [OnceLock::new(), OnceLock::new()];
    DIRS[(max - 5) as usize].get_or_init(|| {
        let d = std::env::temp_dir().join(format!("ostledb-serve-{}-{max}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        build(&geometry(), &d, max, vec![Backend::Rank, Backend::Sorted]);
        d
    })
}

/// Every position of the database at `dir`, as boards.
fn boards(dir: &Path) -> Vec<String> {
    let db = Database::open(dir).unwrap();
    let g = db.geometry().clone();
    db.index().phases().iter().flat_map(|p| (0..p.len()).map(|i| format_board(&g, &p.position_at(i)))).collect()
}

struct Answer {
    status: StatusCode,
    headers: axum::http::HeaderMap,
    body: Vec<u8>,
}

impl Answer {
    fn json(&self) -> Value {
        serde_json::from_slice(&self.body)
            .unwrap_or_else(|e| panic!("not JSON ({e}): {}", String::from_utf8_lossy(&self.body)))
    }

    /// The error message of a JSON error answer of status `status`.
    fn error(&self, status: StatusCode) -> String {
        assert_eq!(self.status, status, "{}", String::from_utf8_lossy(&self.body));
        assert_eq!(self.headers[header::CONTENT_TYPE], "application/json");
        assert_eq!(self.headers[header::CACHE_CONTROL], "no-store");
        let v = self.json();
        assert_eq!(v.as_object().map(|o| o.len()), Some(1), "{v}");
        v["error"].as_str().expect("an error message").to_string()
    }
}

async fn call(app: &axum::Router, method: &str, uri: &str, if_none_match: Option<&str>) -> Answer {
    let headers: Vec<(header::HeaderName, &str)> =
        if_none_match.map(|t| (header::IF_NONE_MATCH, t)).into_iter().collect();
    call_with(app, method, uri, &headers).await
}

/// A request with these headers.
async fn call_with(app: &axum::Router, method: &str, uri: &str, headers: &[(header::HeaderName, &str)]) -> Answer {
    let mut req = Request::builder().method(method).uri(uri);
    for (name, value) in headers {
        req = req.header(name, *value);
    }
    let r = app.clone().oneshot(req.body(Body::empty()).unwrap()).await.unwrap();
    let (parts, body) = r.into_parts();
    let body = axum::body::to_bytes(body, usize::MAX).await.unwrap().to_vec();
    Answer { status: parts.status, headers: parts.headers, body }
}

async fn get(app: &axum::Router, uri: &str) -> Answer {
    call(app, "GET", uri, None).await
}

fn app(max: u32) -> (axum::Router, Arc<Database>) {
    let db = Arc::new(Database::open(database(max)).unwrap());
    (router(db.clone(), &Limits::default()), db)
}

/// A board and a previous board that leads to it, from the first position of the
/// database with a move that removes nothing.
fn board_with_prev(db: &Database) -> (String, String) {
    for b in boards(db.path()) {
        let a = db.answer(&b, None, "prev", &[], None).unwrap().analysis;
        if let Some(m) = a.moves.iter().find(|m| m.removes == "nothing" && m.plies != Some(1)) {
            return (m.child.clone(), b);
        }
    }
    panic!("no quiet move in the database");
}

#[tokio::test]
async fn position_answers_what_the_library_answers_for_every_position() {
    let (app, db) = app(6);
    let all = boards(db.path());
    assert!(all.len() > 2000, "{}", all.len());
    for b in &all {
        let r = get(&app, &format!("/api/v1/position?board={b}")).await;
        assert_eq!(r.status, StatusCode::OK, "{b}: {}", String::from_utf8_lossy(&r.body));
        assert_eq!(r.headers[header::CONTENT_TYPE], "application/json");
        let want = serde_json::to_value(db.answer(b, None, "prev", &[], None).unwrap()).unwrap();
        assert_eq!(r.json(), want, "{b}");
    }
}

#[tokio::test]
async fn a_previous_board_marks_the_forbidden_move_and_a_wrong_one_is_refused() {
    let (app, db) = app(6);
    let (board, prev) = board_with_prev(&db);
    let v = get(&app, &format!("/api/v1/position?board={board}&prev={prev}")).await.json();
    let forbidden: Vec<&Value> = v["moves"].as_array().unwrap().iter().filter(|m| m["forbidden"] == true).collect();
    assert_eq!(forbidden.len(), 1, "{v}");
    let g = geometry();
    let canon = |b: &str| canonical(&g, &parse_board(&g, b).unwrap()).0;
    assert_eq!(canon(forbidden[0]["child"].as_str().unwrap()), canon(&prev), "the forbidden move undoes the last one");
    assert_ne!(v["node_index"], 0);
    // The board itself as its own previous board: no move leads from it to itself.
    let e = get(&app, &format!("/api/v1/position?board={board}&prev={board}")).await.error(StatusCode::BAD_REQUEST);
    assert!(e.contains("does not lead to the current board"), "{e}");
    let e = get(&app, &format!("/api/v1/position?board={board}&prev=12")).await.error(StatusCode::BAD_REQUEST);
    assert!(e.contains("previous board (prev)"), "{e}");
}

#[tokio::test]
async fn the_line_starts_with_the_first_best_move_and_its_length_is_bounded() {
    let (app, db) = app(6);
    let mut checked = 0;
    for b in boards(db.path()).iter().step_by(37) {
        let v = get(&app, &format!("/api/v1/line?board={b}&max_plies=200")).await.json();
        let first_best = v["moves"].as_array().unwrap().iter().find(|m| m["best"] == true).unwrap();
        let line = v["line"].as_array().unwrap();
        assert_eq!(&line[0]["move"], first_best, "{b}");
        assert_eq!(line[0]["board"], b.as_str());
        if v["verdict"] != "draw" {
            // A decided line ends with the move that ends the game, after `plies` plies.
            assert_eq!(line.len() as u64, v["plies"].as_u64().unwrap(), "{b}");
            assert_eq!(line.last().unwrap()["move"]["plies"], 1);
            assert_eq!(v["line_end"]["reason"], "game-over", "{b}");
        } else {
            // A drawn line stops where it repeats (issue 61), or at max_plies.
            let end = &v["line_end"];
            assert!(end["reason"] == "repeats" || (end["reason"] == "max-plies" && line.len() == 200), "{b}: {end}");
        }
        checked += 1;
    }
    assert!(checked > 50);
    let b = &boards(db.path())[0];
    for bad in ["0", "1001", "x", "-1"] {
        let e = get(&app, &format!("/api/v1/line?board={b}&max_plies={bad}")).await.error(StatusCode::BAD_REQUEST);
        assert!(e.contains("`max_plies` must be a whole number from 1 to 1000"), "{e}");
    }
    let short = get(&app, &format!("/api/v1/line?board={b}&max_plies=1")).await.json();
    assert_eq!(short["line"].as_array().unwrap().len(), 1);
}

#[tokio::test]
async fn the_computer_plays_allowed_moves_at_its_level() {
    let (app, db) = app(6);
    let rank = |v: &Value| match v["verdict"].as_str().unwrap() {
        "win" => 2,
        "draw" => 1,
        _ => 0,
    };
    let mut weaker_moves = 0;
    for b in boards(db.path()).iter().step_by(11) {
        let a = get(&app, &format!("/api/v1/position?board={b}")).await.json();
        let best = a["moves"].as_array().unwrap().iter().find(|m| m["best"] == true).unwrap().clone();
        for level in Level::ALL {
            let uri = format!("/api/v1/play?board={b}&level={}&seed=7", level.name());
            let r = get(&app, &uri).await;
            let v = r.json();
            assert_eq!(v["level"], level.name());
            assert_eq!(v["seed"], 7);
            let mv = &v["move"];
            assert!(a["moves"].as_array().unwrap().contains(mv), "{b} {level:?}: {mv} is one of its moves");
            assert_eq!(mv["forbidden"], false);
            match level {
                Level::Perfect => assert_eq!(mv, &best, "{b}"),
                Level::Strong => {
                    assert_eq!(rank(mv), rank(&best), "{b}: strong keeps the result");
                    if rank(&best) == 2 {
                        assert_eq!(mv["plies"], best["plies"], "{b}: strong wins by a fastest move");
                    }
                }
                _ => weaker_moves += usize::from(rank(mv) < rank(&best)),
            }
            // A seed fixes the move: asked again, the same answer, and cacheable.
            let again = get(&app, &uri).await;
            assert_eq!(again.json(), v);
            assert!(again.headers.contains_key(header::ETAG));
        }
    }
    assert!(weaker_moves > 0, "the weaker levels make mistakes");
    let b = &boards(db.path())[0];
    let r = get(&app, &format!("/api/v1/play?board={b}&level=easy")).await;
    assert_eq!(r.status, StatusCode::OK);
    assert_eq!(r.headers[header::CACHE_CONTROL], "no-store", "a drawn seed is not cached");
    assert!(!r.headers.contains_key(header::ETAG));
    let e = get(&app, &format!("/api/v1/play?board={b}&level=grandmaster")).await.error(StatusCode::BAD_REQUEST);
    assert!(e.contains("perfect, strong, medium, easy, random"), "{e}");
}

#[tokio::test]
async fn stats_and_health_describe_the_database() {
    let (app, db) = app(6);
    let v = get(&app, "/api/v1/stats").await.json();
    assert_eq!(v["side"], 3);
    assert_eq!(v["max_pieces"], 6);
    assert_eq!(v["identity"], format!("{:016x}", db.identity()));
    assert_eq!(v["bfs_stored"], false, "this database stores no search");
    assert!(!db.has_search().unwrap());
    let phases = v["phases"].as_array().unwrap();
    assert_eq!(phases.len(), db.meta().phases.len());
    for (p, m) in phases.iter().zip(&db.meta().phases) {
        assert_eq!(p["positions"], m.positions);
        assert_eq!(p["win"].as_u64().unwrap() + p["loss"].as_u64().unwrap() + p["draw"].as_u64().unwrap(), m.positions);
    }
    let h = get(&app, "/api/v1/health").await;
    assert_eq!(h.status, StatusCode::OK);
    assert_eq!(h.headers[header::CACHE_CONTROL], "no-store");
    assert_eq!(h.json()["status"], "ok");
}

#[tokio::test]
async fn bad_requests_get_their_status_and_a_json_error() {
    let (app, db) = app(5);
    let good = boards(db.path())[0].clone();
    let cases: Vec<(String, StatusCode, &str)> = vec![
        ("/api/v1/position".into(), StatusCode::BAD_REQUEST, "`board` is missing"),
        ("/api/v1/position?board=12".into(), StatusCode::BAD_REQUEST, "`12`"),
        ("/api/v1/position?board=xyz-120-003".into(), StatusCode::BAD_REQUEST, "`xyz-120-003`"),
        // Two holes, and a side with too few pieces: not positions of the game.
        ("/api/v1/position?board=331-000-222".into(), StatusCode::BAD_REQUEST, "331-000-222"),
        ("/api/v1/position?board=111-030-200".into(), StatusCode::BAD_REQUEST, "111-030-200"),
        (format!("/api/v1/position?board={good}&baord=1"), StatusCode::BAD_REQUEST, "unknown parameter `baord`"),
        (format!("/api/v1/position?board={good}&board={good}"), StatusCode::BAD_REQUEST, "given twice"),
        ("/api/v1/position?board=%FF%FE".into(), StatusCode::BAD_REQUEST, "not UTF-8"),
        ("/api/v1/position?board=%ZZ".into(), StatusCode::BAD_REQUEST, "two hex digits"),
        (format!("/api/v1/position?board={}", "1".repeat(13_000)), StatusCode::URI_TOO_LONG, "over the 12288"),
        ("/api/v1/stats?x=1".into(), StatusCode::BAD_REQUEST, "this endpoint takes"),
        // (3,3) is not in a database of at most 5 pieces.
        ("/api/v1/position?board=111-030-222".into(), StatusCode::NOT_FOUND, "phase (3,3) is not in this database"),
        ("/api/v1/line?board=111-030-222".into(), StatusCode::NOT_FOUND, "phase (3,3)"),
        ("/api/v1/play?board=111-030-222".into(), StatusCode::NOT_FOUND, "phase (3,3)"),
        (
            format!("/api/v1/play?board={good}&seed=9007199254740992"),
            StatusCode::BAD_REQUEST,
            "from 0 to 9007199254740991 (2^53 - 1",
        ),
        (format!("/api/v1/review?board={good}"), StatusCode::BAD_REQUEST, "`moves` is missing"),
        (format!("/api/v1/position?board={good}&moves=a1-sideways"), StatusCode::BAD_REQUEST, "(in move 1)"),
        ("/api/v2/position".into(), StatusCode::NOT_FOUND, "no such path: /api/v2/position"),
        ("/favicon.ico".into(), StatusCode::NOT_FOUND, "no such path"),
    ];
    for (uri, status, says) in cases {
        let e = get(&app, &uri).await.error(status);
        assert!(e.contains(says), "{uri}: {e}");
    }
    // An unknown parameter: every endpoint says what it takes, or that it takes none.
    for (path, takes) in [
        ("position", "`board`, `prev`, `moves`"),
        ("line", "`board`, `prev`, `moves`, `max_plies`"),
        ("play", "`board`, `prev`, `moves`, `level`, `seed`"),
        ("review", "`board`, `prev`, `moves`"),
        ("stats", "no parameters"),
        ("health", "no parameters"),
    ] {
        let e = get(&app, &format!("/api/v1/{path}?x=1")).await.error(StatusCode::BAD_REQUEST);
        assert_eq!(e, format!("unknown parameter `x`; this endpoint takes {takes}"), "{path}");
    }
    for method in ["POST", "PUT", "DELETE"] {
        let r = call(&app, method, "/api/v1/position?board=1", None).await;
        assert!(r.error(StatusCode::METHOD_NOT_ALLOWED).contains("read-only"));
        assert_eq!(r.headers[header::ALLOW], "GET, HEAD");
    }
}

#[tokio::test]
async fn a_damaged_database_answers_500_and_the_server_goes_on() {
    let dir = std::env::temp_dir().join(format!("ostledb-serve-{}-damaged", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    build(&geometry(), &dir, 5, vec![Backend::Rank]);
    // Damage the middle block of every value file, not its header, model or block index.
    let spans: Vec<(std::path::PathBuf, (u64, u64))> = {
        let db = Database::open(&dir).unwrap();
        db.index()
            .phases()
            .iter()
            .map(|p| {
                let f = db.store().values(p.phase()).unwrap();
                (f.path().to_path_buf(), f.block_span(f.stored_blocks() / 2))
            })
            .collect()
    };
    for (p, (start, end)) in spans {
        let mut bytes = std::fs::read(&p).unwrap();
        let mid = ((start + end) / 2) as usize;
        let (from, to) = ((mid - 8).max(start as usize), (mid + 8).min(end as usize));
        for b in &mut bytes[from..to] {
            *b ^= 0x5a;
        }
        std::fs::write(&p, bytes).unwrap();
    }
    let db = Arc::new(Database::open(&dir).unwrap());
    let app = router(db.clone(), &Limits::default());
    let mut damaged = 0;
    for b in boards(&dir) {
        let r = get(&app, &format!("/api/v1/position?board={b}")).await;
        match r.status {
            StatusCode::OK => {}
            StatusCode::INTERNAL_SERVER_ERROR => {
                let e = r.error(StatusCode::INTERNAL_SERVER_ERROR);
                assert!(e.contains("the file is damaged"), "{e}");
                damaged += 1;
            }
            s => panic!("{b}: {s}"),
        }
    }
    assert!(damaged > 0, "the damage is seen");
    assert_eq!(get(&app, "/api/v1/health").await.json()["server_errors"], damaged);
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test]
async fn answers_carry_the_database_etag_and_a_matching_request_gets_304() {
    let (app, db) = app(6);
    let b = &boards(db.path())[5];
    let uri = format!("/api/v1/position?board={b}");
    let r = get(&app, &uri).await;
    let tag = r.headers[header::ETAG].to_str().unwrap().to_string();
    assert_eq!(tag, format!("\"v1-{:016x}\"", db.identity()));
    assert_eq!(r.headers[header::CACHE_CONTROL], "public, max-age=86400");
    let again = call(&app, "GET", &uri, Some(&tag)).await;
    assert_eq!(again.status, StatusCode::NOT_MODIFIED);
    assert!(again.body.is_empty());
    let other = call(&app, "GET", &uri, Some("\"v1-0000000000000000\"")).await;
    assert_eq!(other.status, StatusCode::OK);
    // The explorer's files too, by their own content.
    for path in ["/", "/explorer.js", "/explorer.css"] {
        let r = get(&app, path).await;
        assert_eq!(r.status, StatusCode::OK, "{path}");
        let tag = r.headers[header::ETAG].to_str().unwrap().to_string();
        assert_eq!(call(&app, "GET", path, Some(&tag)).await.status, StatusCode::NOT_MODIFIED, "{path}");
    }
    assert!(String::from_utf8_lossy(&get(&app, "/").await.body).contains("<html"));
}

// ---- The binary over loopback ----

/// A running `ostledb serve`, killed when dropped.
pub(crate) struct Server {
    child: Child,
    pub(crate) addr: SocketAddr,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Start `ostledb serve` on a free loopback port with `args`, and read where it listens.
pub(crate) fn start(db: &Path, args: &[&str]) -> Server {
    let mut child = Command::new(env!("CARGO_BIN_EXE_ostledb"))
        .args(["serve", "--quiet", "--db"])
        .arg(db)
        .args(["--bind", "127.0.0.1:0"])
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .spawn()
        .expect("ostledb serve starts");
    let mut first = String::new();
    BufReader::new(child.stdout.take().unwrap()).read_line(&mut first).unwrap();
    let addr = first
        .trim()
        .strip_prefix("listening on http://")
        .and_then(|a| a.strip_suffix('/'))
        .unwrap_or_else(|| panic!("first line: {first:?}"))
        .parse()
        .unwrap();
    Server { child, addr }
}

/// One HTTP/1.1 response read from a keep-alive connection: status and body.
pub(crate) fn read_response(r: &mut BufReader<TcpStream>) -> std::io::Result<(u16, String)> {
    let mut line = String::new();
    if r.read_line(&mut line)? == 0 {
        return Err(std::io::ErrorKind::UnexpectedEof.into());
    }
    let status: u16 = line.split(' ').nth(1).and_then(|s| s.parse().ok()).expect("a status line");
    let mut len = 0;
    loop {
        line.clear();
        r.read_line(&mut line)?;
        if line.trim().is_empty() {
            break;
        }
        if let Some((k, v)) = line.split_once(':')
            && k.eq_ignore_ascii_case("content-length")
        {
            len = v.trim().parse().unwrap();
        }
    }
    let mut body = vec![0; len];
    r.read_exact(&mut body)?;
    Ok((status, String::from_utf8(body).unwrap()))
}

pub(crate) fn connect(addr: SocketAddr) -> (TcpStream, BufReader<TcpStream>) {
    let s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    s.set_nodelay(true).unwrap();
    let r = BufReader::new(s.try_clone().unwrap());
    (s, r)
}

pub(crate) fn request(s: &mut TcpStream, r: &mut BufReader<TcpStream>, path: &str) -> (u16, String) {
    // One write per request: a request written in pieces meets Nagle's algorithm and a
    // delayed ACK (40 ms a request).
    s.write_all(format!("GET {path} HTTP/1.1\r\nHost: localhost\r\n\r\n").as_bytes()).unwrap();
    read_response(r).unwrap()
}

/// Whether the server closed the connection within the read timeout (whatever it sent
/// first, the reading ends with end of file or a reset, not a timeout).
fn closed(r: &mut BufReader<TcpStream>) -> bool {
    let mut rest = Vec::new();
    match r.read_to_end(&mut rest) {
        Ok(_) => true,
        Err(e) => !matches!(e.kind(), std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut),
    }
}

#[test]
fn the_server_answers_every_position_as_query_does_over_one_connection() {
    let dir = database(6);
    let all = boards(dir);
    let mut query = Command::new(env!("CARGO_BIN_EXE_ostledb"))
        .args(["query", "-", "--quiet", "--db"])
        .arg(dir)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut input = query.stdin.take().unwrap();
    let text = all.join("\n");
    let feeder = std::thread::spawn(move || input.write_all(text.as_bytes()));
    let out = query.wait_with_output().unwrap();
    feeder.join().unwrap().unwrap();
    assert!(out.status.success());
    let lines: Vec<Value> = out
        .stdout
        .split(|&b| b == b'\n')
        .filter(|l| !l.is_empty())
        .map(|l| serde_json::from_slice(l).unwrap())
        .collect();
    assert_eq!(lines.len(), all.len());

    let server = start(dir, &[]);
    let (mut s, mut r) = connect(server.addr);
    for (b, mut want) in all.iter().zip(lines) {
        let (status, body) = request(&mut s, &mut r, &format!("/api/v1/position?board={b}"));
        assert_eq!(status, 200, "{b}: {body}");
        want.as_object_mut().unwrap().remove("input");
        assert_eq!(serde_json::from_str::<Value>(&body).unwrap(), want, "{b}");
    }
}

#[test]
fn slow_idle_and_oversized_clients_are_cut_off_and_others_still_answered() {
    let server = start(database(6), &["--header-timeout", "1"]);
    let b = &boards(database(6))[0];
    let path = format!("/api/v1/position?board={b}");
    // Half a request head, then nothing: closed after the header timeout.
    let (mut slow, mut slow_r) = connect(server.addr);
    write!(slow, "GET {path} HTTP/1.1\r\nHost: loc").unwrap();
    let t = Instant::now();
    assert!(closed(&mut slow_r), "a client that never finishes its head is cut off");
    assert!(t.elapsed() < Duration::from_secs(10), "{:?}", t.elapsed());
    // An idle keep-alive connection is closed after as long.
    let (mut idle, mut idle_r) = connect(server.addr);
    assert_eq!(request(&mut idle, &mut idle_r, &path).0, 200);
    let t = Instant::now();
    assert!(closed(&mut idle_r));
    assert!(t.elapsed() < Duration::from_secs(10), "{:?}", t.elapsed());
    // A 20 KB header: 431 and the connection closed.
    let (mut big, mut big_r) = connect(server.addr);
    let wrote = write!(big, "GET {path} HTTP/1.1\r\nHost: localhost\r\nX-Pad: {}\r\n\r\n", "a".repeat(20_000));
    let mut line = String::new();
    match big_r.read_line(&mut line) {
        Ok(_) => assert!(line.starts_with("HTTP/1.1 431"), "{line}"),
        // The server answers and closes as soon as the head passes its limit; when that
        // is before the client has sent the rest, the client's write sees a broken pipe
        // or its read a reset (unread bytes make the close a reset) instead of the 431.
        Err(e) => assert!(wrote.is_err() || e.kind() == std::io::ErrorKind::ConnectionReset, "{e} (write: {wrote:?})"),
    }
    assert!(closed(&mut big_r), "an oversized head closes the connection");
    // A client that shuts its write side after its request still gets the answer.
    let (mut half, mut half_r) = connect(server.addr);
    half.write_all(format!("GET {path} HTTP/1.1\r\nHost: localhost\r\n\r\n").as_bytes()).unwrap();
    half.shutdown(std::net::Shutdown::Write).unwrap();
    assert_eq!(read_response(&mut half_r).unwrap().0, 200);
    // Meanwhile a well-behaved client is answered.
    let (mut ok, mut ok_r) = connect(server.addr);
    assert_eq!(request(&mut ok, &mut ok_r, &path).0, 200);
}

#[test]
fn hundreds_of_connections_at_once_are_all_answered_and_sigterm_stops_cleanly() {
    let mut server = start(database(6), &["--max-connections", "64"]);
    let all = boards(database(6));
    let addr = server.addr;
    let clients: Vec<_> = (0..300)
        .map(|i| {
            let b = all[i * 7 % all.len()].clone();
            std::thread::spawn(move || {
                let (mut s, mut r) = connect(addr);
                (0..5).map(|_| request(&mut s, &mut r, &format!("/api/v1/position?board={b}")).0).collect::<Vec<u16>>()
            })
        })
        .collect();
    for c in clients {
        assert_eq!(c.join().unwrap(), vec![200; 5]);
    }
    let pid = server.child.id().to_string();
    assert!(Command::new("kill").args(["-TERM", &pid]).status().unwrap().success());
    let t = Instant::now();
    loop {
        if let Some(status) = server.child.try_wait().unwrap() {
            assert!(status.success(), "{status:?}");
            break;
        }
        assert!(t.elapsed() < Duration::from_secs(10), "SIGTERM stops the server");
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn warming_decodes_every_block_that_fits_and_no_more() {
    use ostledb::store::OpenOptions;
    use std::sync::atomic::AtomicBool;
    let dir = database(6);
    let open = |cache_bytes| {
        Database::open_opts(dir, &OpenOptions { backend: None, cache_bytes, ..OpenOptions::default() }).unwrap()
    };
    let db = open(512 << 20);
    let total: u64 = db.meta().phases.iter().map(|p| db.store().values(p.phase()).unwrap().blocks() as u64).sum();
    assert_eq!(db.warm(&AtomicBool::new(false)).unwrap(), total);
    assert_eq!(db.store().cache().blocks() as u64, total);
    // A cache of a few blocks: warming stops before it would evict.
    let per_block = db.store().cache().bytes() / total as usize;
    let small = open(per_block * 5);
    let n = small.warm(&AtomicBool::new(false)).unwrap();
    assert!(n > 0 && n < total, "{n} of {total}");
    assert!(
        small.store().cache().bytes() <= small.store().cache().budget(),
        "{} > {}",
        small.store().cache().bytes(),
        small.store().cache().budget()
    );
    assert_eq!(open(512 << 20).warm(&AtomicBool::new(true)).unwrap(), 0, "a stop is heeded");
}

/// A connection to `addr` whose receive buffer is set small before it connects (4 KiB
/// asked), so that a client that never reads stops taking the server's bytes after a
/// few KiB, as a client on a slow link or a hostile one does.
fn small_window_connection(addr: SocketAddr) -> TcpStream {
    let rt = tokio::runtime::Builder::new_current_thread().enable_io().build().unwrap();
    let s = rt.block_on(async {
        let socket = tokio::net::TcpSocket::new_v4().unwrap();
        socket.set_recv_buffer_size(4096).unwrap();
        socket.connect(addr).await.unwrap()
    });
    let s = s.into_std().unwrap();
    s.set_nonblocking(false).unwrap();
    s.set_write_timeout(Some(Duration::from_secs(10))).unwrap();
    s
}

/// Raise this process's soft limit of open files towards `want` (as far as the hard
/// limit lets it; the servers the tests start inherit it) and return the limit in force.
#[cfg(target_os = "linux")]
fn raise_open_files(want: u64) -> u64 {
    let mut r = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
    // SAFETY: `r` is a valid rlimit for getrlimit to fill and setrlimit to read.
    unsafe {
        assert_eq!(libc::getrlimit(libc::RLIMIT_NOFILE, &mut r), 0);
        if r.rlim_cur < want {
            r.rlim_cur = want.min(r.rlim_max);
            assert_eq!(libc::setrlimit(libc::RLIMIT_NOFILE, &r), 0);
        }
    }
    r.rlim_cur
}

/// Whether the server has closed `s` (an end of file or a reset is waiting), seen
/// without reading what it sent.
#[cfg(target_os = "linux")]
fn seen_closed(s: &TcpStream) -> bool {
    use std::os::fd::AsRawFd;
    let mut p = libc::pollfd { fd: s.as_raw_fd(), events: libc::POLLRDHUP, revents: 0 };
    // SAFETY: one valid pollfd, a zero timeout.
    let n = unsafe { libc::poll(&mut p, 1, 0) };
    n == 1 && p.revents & (libc::POLLRDHUP | libc::POLLHUP | libc::POLLERR) != 0
}

/// A board of the database whose principal variation is the longest: a draw when the
/// database has one (its line runs to `max_plies`), else the slowest win.
fn longest_line_board(dir: &Path) -> String {
    let db = Database::open(dir).unwrap();
    let mut best = (0, String::new());
    for b in boards(dir).into_iter().step_by(5) {
        let a = db.answer(&b, None, "prev", &[], None).unwrap().analysis;
        let len = match a.outcome {
            ostledb::record::outcome::Outcome::Draw => return b,
            ostledb::record::outcome::Outcome::Win(n) | ostledb::record::outcome::Outcome::Loss(n) => n,
        };
        if len > best.0 {
            best = (len, b);
        }
    }
    best.1
}

/// `n` clients that each pipeline `requests` requests for the longest line of the
/// database (`/api/v1/line?max_plies=1000`) over a connection with a small window and
/// never read: each with the moment it had sent them.
fn stalled_clients(addr: SocketAddr, board: &str, n: usize, requests: usize) -> Vec<(TcpStream, Instant)> {
    let pipelined =
        format!("GET /api/v1/line?max_plies=1000&board={board} HTTP/1.1\r\nHost: localhost\r\n\r\n").repeat(requests);
    (0..n)
        .map(|_| {
            let mut s = small_window_connection(addr);
            s.write_all(pipelined.as_bytes()).unwrap();
            (s, Instant::now())
        })
        .collect()
}

/// The time `/api/v1/health` takes on a new connection, or `None` when no answer
/// comes within `within`.
fn health_time(addr: SocketAddr, within: Duration) -> Option<Duration> {
    let t = Instant::now();
    let s = TcpStream::connect_timeout(&addr, within).ok()?;
    s.set_read_timeout(Some(within)).unwrap();
    let mut w = s.try_clone().unwrap();
    let mut r = BufReader::new(s);
    w.write_all(b"GET /api/v1/health HTTP/1.1\r\nHost: localhost\r\n\r\n").ok()?;
    let (status, _) = read_response(&mut r).ok()?;
    (status == 200).then(|| t.elapsed())
}

#[cfg(target_os = "linux")]
#[test]
fn a_thousand_clients_that_never_read_are_closed_while_health_answers_at_once() {
    // Each client holds one socket here and one in the server: with the servers of the
    // other tests, 1,030 of them need a limit of about 2,600 open files.
    let limit = raise_open_files(4096);
    let clients = 1030.min(limit.saturating_sub(600) as usize);
    if clients < 1030 {
        eprintln!("open files are limited to {limit} (hard limit): {clients} clients instead of 1,030");
    }
    assert!(clients >= 100, "open files are limited to {limit}");
    // 1,030 clients, over the 1,024 connections served at once (the issue's figure):
    // the newcomers beyond them take the places of the quietest.
    let timeout = Duration::from_secs(2);
    let server = start(database(6), &["--write-timeout", "2", "--header-timeout", "2"]);
    let board = longest_line_board(database(6));
    let mut stalled: Vec<(TcpStream, Instant, Option<Instant>)> =
        stalled_clients(server.addr, &board, clients, 5).into_iter().map(|(s, t)| (s, t, None)).collect();
    let all_sent = Instant::now();
    // Meanwhile another client is answered, again and again. The intent is "within a
    // second"; what is asserted is that every answer comes within five (before the fix
    // none came while the clients stayed) and that most come within one, so that a
    // slow moment of a loaded machine does not fail the test.
    let times: Vec<Duration> = (0..5)
        .map(|i| {
            let t = health_time(server.addr, Duration::from_secs(5));
            std::thread::sleep(Duration::from_millis(200));
            t.unwrap_or_else(|| panic!("/health #{i} got no answer within 5 s beside {clients} stalled clients"))
        })
        .collect();
    let mut sorted = times.clone();
    sorted.sort();
    eprintln!("/health beside {clients} clients that never read: {times:?}");
    assert!(sorted[2] < Duration::from_secs(1), "/health took {times:?} beside {clients} stalled clients");
    // Every stalled client is closed by the server: once an answer has waited the write
    // timeout in its full socket, or once its requests are answered (long lines not
    // made for want of room get 503) and it stays idle the header timeout; or, for a
    // few, to make room for a newcomer.
    loop {
        let now = Instant::now();
        for (s, _, closed) in &mut stalled {
            if closed.is_none() && seen_closed(s) {
                *closed = Some(now);
            }
        }
        let open = stalled.iter().filter(|c| c.2.is_none()).count();
        if open == 0 {
            break;
        }
        assert!(
            all_sent.elapsed() < Duration::from_secs(60),
            "{open} of {clients} clients that never read still open {:?} after the last one sent its requests",
            all_sent.elapsed()
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    let early = stalled.iter().filter(|(_, sent, closed)| closed.unwrap() - *sent < timeout).count();
    let newcomers = clients.saturating_sub(1024) + times.len() + 1;
    assert!(early <= newcomers, "{early} clients closed before the timeouts, more than the {newcomers} newcomers");
    eprintln!("{clients} stalled clients all closed {:?} after the last one sent ({early} early)", all_sent.elapsed());
    // And the server goes on answering.
    let (mut s, mut r) = connect(server.addr);
    assert_eq!(request(&mut s, &mut r, "/api/v1/health").0, 200);
}

#[cfg(target_os = "linux")]
#[test]
fn when_every_connection_is_taken_by_clients_that_never_read_a_newcomer_takes_the_place_of_one() {
    // 20 connections at most, all taken by clients that do not read, with a write
    // timeout of a minute: only a connection closed for the newcomer lets it in.
    let server = start(database(6), &["--max-connections", "20", "--write-timeout", "60", "--header-timeout", "60"]);
    let board = longest_line_board(database(6));
    let stalled = stalled_clients(server.addr, &board, 20, 3);
    std::thread::sleep(Duration::from_millis(500));
    for i in 0..3 {
        let t = health_time(server.addr, Duration::from_secs(20))
            .unwrap_or_else(|| panic!("newcomer {i} got no answer in 20 s: every place stayed taken"));
        eprintln!("newcomer {i} beside 20 connections that never read: {t:?}");
        assert!(t < Duration::from_secs(10), "newcomer {i} waited {t:?}");
    }
    // The ones closed for them, and no more (an answer between them is quick).
    std::thread::sleep(Duration::from_millis(300));
    let closed = stalled.iter().filter(|(s, _)| seen_closed(s)).count();
    assert!((1..=3).contains(&closed), "{closed} of 20 closed for 3 newcomers");
}

/// The `requests` counter of `/api/v1/health`: requests answered before this one.
fn answered(addr: SocketAddr) -> u64 {
    let (mut s, mut r) = connect(addr);
    let (status, body) = request(&mut s, &mut r, "/api/v1/health");
    assert_eq!(status, 200, "{body}");
    serde_json::from_str::<Value>(&body).unwrap()["requests"].as_u64().unwrap()
}

#[test]
fn a_client_that_pipelines_and_never_reads_has_a_bounded_number_of_answers_made() {
    let server = start(database(6), &[]);
    let b = &boards(database(6))[0];
    let path = format!("/api/v1/position?board={b}");
    let (mut s, mut r) = connect(server.addr);
    let (status, one) = request(&mut s, &mut r, &path);
    assert_eq!(status, 200);
    let start = answered(server.addr);
    // 4,000 requests, about 6 MB of answers: more than the kernel's buffers hold.
    let mut client = small_window_connection(server.addr);
    client.set_write_timeout(Some(Duration::from_secs(1))).unwrap();
    let _ = client.write_all(format!("GET {path} HTTP/1.1\r\nHost: localhost\r\n\r\n").repeat(4000).as_bytes());
    // Wait until the count stops growing (the server's writes to the client stalled).
    let mut asked = 1;
    let mut last = answered(server.addr);
    let t = Instant::now();
    loop {
        std::thread::sleep(Duration::from_millis(500));
        let now = answered(server.addr);
        asked += 1;
        if now == last + 1 || t.elapsed() > Duration::from_secs(8) {
            last = now;
            break;
        }
        last = now;
    }
    let made = last - start - asked;
    // What the server may hold for a client that does not read: the answer being
    // written, the next one, and what the socket takes: at most 64 KiB not yet sent (and
    // one segment of up to 64 KiB beyond it) plus the client's window (8 KiB, the 4 KiB
    // asked doubled by the kernel).
    let bound = (64 + 64 + 8) * 1024 / one.len() as u64 + 2;
    eprintln!("answers made for a client that never reads: {made} (bound {bound}, one answer {} bytes)", one.len());
    assert!(made > 0, "the client's requests were answered until its window filled");
    assert!(made <= bound, "{made} answers made for a client that never reads, over {bound}");
}

#[tokio::test]
async fn a_request_with_a_body_gets_413_and_other_methods_still_405() {
    let (app, db) = app(5);
    let b = &boards(db.path())[0];
    let send = |method: &str, headers: &[(&str, &str)], body: &'static str| {
        let mut req = Request::builder().method(method).uri(format!("/api/v1/position?board={b}"));
        for (k, v) in headers {
            req = req.header(*k, *v);
        }
        app.clone().oneshot(req.body(Body::from(body)).unwrap())
    };
    for (headers, says) in [
        (&[("content-length", "5")][..], "GET /api/v1/position came with a body of 5 bytes"),
        (&[("content-length", "99999999999")][..], "a body of 99999999999 bytes"),
        (&[("transfer-encoding", "chunked")][..], "came with a body:"),
    ] {
        let r = send("GET", headers, "hello").await.unwrap();
        let (parts, body) = r.into_parts();
        let body = axum::body::to_bytes(body, usize::MAX).await.unwrap().to_vec();
        let a = Answer { status: parts.status, headers: parts.headers, body };
        let e = a.error(StatusCode::PAYLOAD_TOO_LARGE);
        assert!(e.contains(says) && e.contains("reads no request body"), "{headers:?}: {e}");
    }
    // No body, or an empty one: answered.
    assert_eq!(send("GET", &[("content-length", "0")], "").await.unwrap().status(), StatusCode::OK);
    assert_eq!(send("GET", &[], "").await.unwrap().status(), StatusCode::OK);
    assert_eq!(
        send("POST", &[("content-length", "5")], "hello").await.unwrap().status(),
        StatusCode::METHOD_NOT_ALLOWED
    );
}

#[test]
fn a_huge_body_gets_413_and_101_headers_get_431_over_loopback() {
    let server = start(database(6), &[]);
    let b = &boards(database(6))[0];
    // A body announced as 10 GB: 413 at once, its bytes never read, the connection closed.
    let (mut s, mut r) = connect(server.addr);
    let head =
        format!("GET /api/v1/position?board={b} HTTP/1.1\r\nHost: localhost\r\nContent-Length: 10000000000\r\n\r\n");
    s.write_all(head.as_bytes()).unwrap();
    let _ = s.write_all(&[b'x'; 64 * 1024]);
    let (status, body) = read_response(&mut r).unwrap();
    assert_eq!(status, 413, "{body}");
    let v: Value = serde_json::from_str(&body).unwrap();
    assert!(v["error"].as_str().unwrap().contains("a body of 10000000000 bytes"), "{v}");
    assert!(closed(&mut r), "the connection is closed, the body unread");
    // 101 headers (hyper reads 100 at most): 431, though the head is 2 KB.
    let (mut s, mut r) = connect(server.addr);
    let headers: String = (0..101).map(|i| format!("X-H{i}: {i}\r\n")).collect();
    s.write_all(format!("GET /api/v1/health HTTP/1.1\r\nHost: localhost\r\n{headers}\r\n").as_bytes()).unwrap();
    let mut line = String::new();
    r.read_line(&mut line).unwrap();
    assert!(line.starts_with("HTTP/1.1 431"), "{line}");
    // The server goes on.
    let (mut s, mut r) = connect(server.addr);
    assert_eq!(request(&mut s, &mut r, "/api/v1/health").0, 200);
}

#[tokio::test]
async fn long_answers_held_at_once_are_bounded_and_their_room_comes_back_once_taken() {
    let db = Arc::new(Database::open(database(6)).unwrap());
    let board = longest_line_board(database(6));
    let squares = db.geometry().squares();
    let one = ostledb::serve::api::line_bytes_at_most(squares, 1000);
    let uri = format!("/api/v1/line?max_plies=1000&board={board}");
    // The line's answer is L bytes (a drawn line stops where it repeats, so L is well
    // under `one`, what is reserved before it is made). Room for one line made beside
    // one held: two held lines leave less than `one` for a third.
    let roomy = router(db.clone(), &Limits::default());
    let l = get(&roomy, &uri).await.body.len();
    assert!(l > 0 && l < one, "{l} bytes, at most {one}");
    let limits = Limits { max_held_answer_bytes: one + l, ..Limits::default() };
    let app = router(db.clone(), &limits);
    let ask = || app.clone().oneshot(Request::builder().uri(uri.as_str()).body(Body::empty()).unwrap());
    // Answers made and not taken: their bodies are held, as for a client that does not read.
    let first = ask().await.unwrap();
    let second = ask().await.unwrap();
    assert_eq!((first.status(), second.status()), (StatusCode::OK, StatusCode::OK));
    let r = ask().await.unwrap();
    let (parts, body) = r.into_parts();
    let body = axum::body::to_bytes(body, usize::MAX).await.unwrap().to_vec();
    let e = Answer { status: parts.status, headers: parts.headers, body }.error(StatusCode::SERVICE_UNAVAILABLE);
    assert!(e.contains("long answers"), "{e}");
    // A short answer is not counted: answered.
    assert_eq!(get(&app, "/api/v1/health").await.status, StatusCode::OK);
    // One taken (its body read and dropped): room for one more.
    let len = axum::body::to_bytes(first.into_body(), usize::MAX).await.unwrap().len();
    assert_eq!(len, l);
    let third = ask().await.unwrap();
    assert_eq!(third.status(), StatusCode::OK);
    drop((second, third));
    // A line that could take more than the whole budget is refused as such.
    let small = router(db, &Limits { max_held_answer_bytes: one / 2, ..Limits::default() });
    let e = get(&small, &uri).await.error(StatusCode::SERVICE_UNAVAILABLE);
    assert!(e.contains("ask for fewer plies"), "{e}");
    assert_eq!(get(&small, &format!("/api/v1/line?max_plies=10&board={board}")).await.status, StatusCode::OK);
}

/// `ostledb serve` on `db` under an address-space limit of `kb` KiB (`ulimit -v`), with
/// `args`; stdout and stderr piped.
#[cfg(target_os = "linux")]
fn serve_under_limit(db: &Path, kb: u64, args: &[&str]) -> Child {
    let mut cmd = format!("ulimit -v {kb} && exec \"$0\" serve --db \"$1\" --bind 127.0.0.1:0");
    for a in args {
        cmd.push(' ');
        cmd.push_str(a);
    }
    Command::new("sh")
        .args(["-c", &cmd, env!("CARGO_BIN_EXE_ostledb")])
        .arg(db)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

#[cfg(target_os = "linux")]
#[test]
fn under_a_memory_limit_the_server_fits_in_it_or_says_to_lower_cache_mb_and_never_aborts() {
    let limit = raise_open_files(2048);
    let board = longest_line_board(database(6));
    for kb in [200_000, 400_000] {
        let mut child = serve_under_limit(database(6), kb, &[]);
        let mut out = BufReader::new(child.stdout.take().unwrap());
        let mut first = String::new();
        out.read_line(&mut first).unwrap();
        let Some(addr) = first.trim().strip_prefix("listening on http://").and_then(|a| a.strip_suffix('/')) else {
            // It did not start: that must be exit code 2 and a sentence naming --cache-mb.
            let status = child.wait().unwrap();
            let mut err = String::new();
            child.stderr.take().unwrap().read_to_string(&mut err).unwrap();
            assert_eq!(status.code(), Some(2), "ulimit -v {kb}: {status:?}: {err}");
            assert!(err.contains("--cache-mb") && err.trim().lines().count() == 1, "{err}");
            continue;
        };
        let addr: SocketAddr = addr.parse().unwrap();
        // Serving: long lines asked by clients that never read (each answer about a
        // quarter of a megabyte), while others are answered.
        let clients = 300.min(limit.saturating_sub(600) as usize);
        let stalled = stalled_clients(addr, &board, clients, 5);
        for _ in 0..5 {
            assert!(health_time(addr, Duration::from_secs(10)).is_some(), "ulimit -v {kb}: /health unanswered");
            let (mut s, mut r) = connect(addr);
            let (status, body) = request(&mut s, &mut r, &format!("/api/v1/line?max_plies=1000&board={board}"));
            assert!(status == 200 || status == 503, "ulimit -v {kb}: {status} {body}");
        }
        drop(stalled);
        std::thread::sleep(Duration::from_millis(500));
        assert!(child.try_wait().unwrap().is_none(), "ulimit -v {kb}: the server ended under load");
        assert!(Command::new("kill").args(["-TERM", &child.id().to_string()]).status().unwrap().success());
        let status = child.wait().unwrap();
        let mut err = String::new();
        child.stderr.take().unwrap().read_to_string(&mut err).unwrap();
        assert!(status.success(), "ulimit -v {kb}: {status:?}: {err}");
        assert!(err.contains("under the memory limit"), "ulimit -v {kb}: {err}");
    }
    // A cache, or connections, that do not fit: exit code 2 and one sentence naming
    // --cache-mb. (90 MB may be refused as the database opens, at over half of what
    // the limit leaves, or once serving's share is known.)
    for (args, says) in [
        (&["--cache-mb", "90"][..], "--cache-mb 90: "),
        (&["--max-connections", "65536"][..], "serving 65536 connections takes up to"),
    ] {
        let mut child = serve_under_limit(database(6), 200_000, &[&["--quiet"][..], args].concat());
        let status = child.wait().unwrap();
        let mut err = String::new();
        child.stderr.take().unwrap().read_to_string(&mut err).unwrap();
        assert_eq!(status.code(), Some(2), "{args:?}: {err}");
        assert!(err.starts_with("ostledb: error: ") && err.contains(says) && err.contains("--cache-mb"), "{err}");
        assert_eq!(err.trim().lines().count(), 1, "{err}");
    }
}

#[cfg(target_os = "linux")]
#[test]
fn a_client_that_pipelines_short_requests_and_never_reads_is_reset_once_idle() {
    // 50 answers of /health (15 KB) are more than the client's window but fit in the
    // server's socket, so no write waits and the write timeout (a minute) never starts:
    // the connection ends as an idle one, after the header timeout. It is reset, so the
    // client sees the end: a plain close would queue a FIN behind answers it never takes.
    let server = start(database(6), &["--header-timeout", "1", "--write-timeout", "60"]);
    let mut client = small_window_connection(server.addr);
    client.write_all(b"GET /api/v1/health HTTP/1.1\r\nHost: localhost\r\n\r\n".repeat(50).as_slice()).unwrap();
    let t = Instant::now();
    while !seen_closed(&client) {
        assert!(t.elapsed() < Duration::from_secs(10), "a client that never reads still open after {:?}", t.elapsed());
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(t.elapsed() >= Duration::from_millis(900), "closed after {:?}, before the header timeout", t.elapsed());
    let mut rest = Vec::new();
    let e = client.read_to_end(&mut rest).unwrap_err();
    assert_eq!(e.kind(), std::io::ErrorKind::ConnectionReset, "{e}");
    // A client that reads gets every answer and a plain end of file.
    let (mut s, mut r) = connect(server.addr);
    s.write_all(b"GET /api/v1/health HTTP/1.1\r\nHost: localhost\r\n\r\n".repeat(50).as_slice()).unwrap();
    for _ in 0..50 {
        assert_eq!(read_response(&mut r).unwrap().0, 200);
    }
    let mut rest = Vec::new();
    assert_eq!(r.read_to_end(&mut rest).unwrap(), 0, "an end of file after the header timeout");
}

/// `moves=` on `/position`, `/line` and `/play` (issue 63): the answer is `query
/// --play`'s for the same moves, a bad move gets `query`'s error as a 400, and the game's
/// last move decides the forbidden one as `prev` does. A board may use `_` for `-`.
#[tokio::test]
async fn moves_are_played_from_the_board_as_query_plays_them() {
    let (app, db) = app(6);
    let mut checked = 0;
    for b in boards(db.path()).iter().step_by(23) {
        let a = db.answer(b, None, "prev", &[], None).unwrap().analysis;
        let Some(m) = a.moves.iter().find(|m| m.plies != Some(1)) else { continue };
        let a2 = db.answer(b, None, "prev", std::slice::from_ref(&m.notation), None).unwrap().analysis;
        let mut list = vec![m.notation.clone()];
        if let Some(m2) = a2.moves.iter().find(|x| x.plies != Some(1) && !x.forbidden) {
            list.push(m2.notation.clone());
        }
        let joined = list.join(",");
        let want = serde_json::to_value(db.answer(b, None, "prev", &list, None).unwrap()).unwrap();
        let underscored = b.replace('-', "_");
        assert_eq!(get(&app, &format!("/api/v1/position?board={underscored}&moves={joined}")).await.json(), want);
        let line = get(&app, &format!("/api/v1/line?board={b}&moves={joined}&max_plies=5")).await.json();
        let want_line = serde_json::to_value(db.answer(b, None, "prev", &list, Some(5)).unwrap()).unwrap();
        assert_eq!(line, want_line, "{b} {joined}");
        let played = get(&app, &format!("/api/v1/play?board={b}&moves={joined}&seed=3")).await.json();
        assert_eq!(played["move"]["forbidden"], false);
        // One move played: the same node as the child with the board as prev.
        let one = get(&app, &format!("/api/v1/position?board={b}&moves={}", m.notation)).await.json();
        let by_prev = get(&app, &format!("/api/v1/position?board={}&prev={b}", m.child)).await.json();
        assert_eq!(one["node_index"], by_prev["node_index"]);
        assert_eq!(one["moves"], by_prev["moves"]);
        checked += 1;
    }
    assert!(checked > 50, "{checked}");
    let b = &boards(db.path())[0];
    let illegal = db.answer(b, None, "prev", &["a1-sideways".to_string()], None).unwrap_err().to_string();
    let e = get(&app, &format!("/api/v1/position?board={b}&moves=a1-sideways")).await.error(StatusCode::BAD_REQUEST);
    assert_eq!(e, illegal, "the error `query --play` gives");
    let many = vec!["a1-up"; 1001].join(",");
    let e = get(&app, &format!("/api/v1/line?board={b}&moves={many}")).await.error(StatusCode::BAD_REQUEST);
    assert!(e.contains("must be from 0 to 1000"), "{e}");
}

/// `/api/v1/review` answers what the library's review answers, as `ostledb review
/// --json` prints it, and refuses what the library refuses.
#[tokio::test]
async fn review_answers_what_the_library_reviews() {
    let (app, db) = app(6);
    let mut blunders = 0;
    for b in boards(db.path()).iter().step_by(41) {
        let mut list: Vec<String> = Vec::new();
        for k in 0..8 {
            let a = db.answer(b, None, "prev", &list, None).unwrap().analysis;
            let allowed: Vec<_> = a.moves.iter().filter(|m| !m.forbidden && m.plies != Some(1)).collect();
            let Some(m) = (if k % 3 == 1 { allowed.last() } else { allowed.first() }) else { break };
            list.push(m.notation.clone());
        }
        if list.is_empty() {
            continue;
        }
        let r = get(&app, &format!("/api/v1/review?board={b}&moves={}", list.join(","))).await;
        assert_eq!(r.status, StatusCode::OK);
        assert!(r.headers.contains_key(header::ETAG));
        let want = db.review_text(b, None, "prev", &list).unwrap();
        blunders += want.blunders;
        assert_eq!(r.json(), serde_json::to_value(&want).unwrap(), "{b} {list:?}");
    }
    assert!(blunders > 0);
    let b = &boards(db.path())[0];
    let e =
        get(&app, &format!("/api/v1/review?board={b}&moves=a1-up,a1-up,a1-up")).await.error(StatusCode::BAD_REQUEST);
    assert!(e.contains("move "), "{e}");
}

/// gzip (issue 63): a request that accepts gzip gets a gzipped body that decodes to the
/// same JSON; one that does not gets the JSON as it is.
#[tokio::test]
async fn answers_are_gzipped_only_for_a_client_that_asks() {
    use std::io::Read as _;
    let (app, db) = app(6);
    let b = &boards(db.path())[7];
    for uri in [format!("/api/v1/position?board={b}"), format!("/api/v1/line?board={b}"), "/api/v1/stats".into()] {
        let plain = get(&app, &uri).await;
        assert_eq!(plain.status, StatusCode::OK);
        assert!(!plain.headers.contains_key(header::CONTENT_ENCODING), "{uri}");
        let zipped = call_with(&app, "GET", &uri, &[(header::ACCEPT_ENCODING, "gzip")]).await;
        assert_eq!(zipped.status, StatusCode::OK);
        assert_eq!(zipped.headers[header::CONTENT_ENCODING], "gzip", "{uri}");
        assert!(zipped.body.len() < plain.body.len(), "{uri}: {} >= {}", zipped.body.len(), plain.body.len());
        let mut text = Vec::new();
        flate2::read::GzDecoder::new(&zipped.body[..]).read_to_end(&mut text).unwrap();
        assert_eq!(text, plain.body, "{uri}");
        // Other encodings only: the answer as it is.
        let other = call_with(&app, "GET", &uri, &[(header::ACCEPT_ENCODING, "br")]).await;
        assert!(!other.headers.contains_key(header::CONTENT_ENCODING), "{uri}");
        assert_eq!(other.body, plain.body);
    }
}

/// CORS (issue 63): off by default (no header, OPTIONS is 405); with an origin, its
/// requests get `Access-Control-Allow-Origin` and a preflight is answered; another
/// origin gets no allowance.
#[tokio::test]
async fn cors_headers_only_with_an_origin_allowed() {
    let (plain, db) = app(6);
    let b = &boards(db.path())[3];
    let uri = format!("/api/v1/position?board={b}");
    let origin = [(header::ORIGIN, "https://example.org")];
    let r = call_with(&plain, "GET", &uri, &origin).await;
    assert_eq!(r.status, StatusCode::OK);
    assert!(!r.headers.contains_key(header::ACCESS_CONTROL_ALLOW_ORIGIN));
    let preflight = [(header::ORIGIN, "https://example.org"), (header::ACCESS_CONTROL_REQUEST_METHOD, "GET")];
    let r = call_with(&plain, "OPTIONS", &uri, &preflight).await;
    assert_eq!(r.status, StatusCode::METHOD_NOT_ALLOWED);
    assert!(!r.headers.contains_key(header::ACCESS_CONTROL_ALLOW_ORIGIN));

    let allowed = ostledb::serve::api::allow_origin(plain.clone(), "https://example.org").unwrap();
    let r = call_with(&allowed, "GET", &uri, &origin).await;
    assert_eq!(r.status, StatusCode::OK);
    assert_eq!(r.headers[header::ACCESS_CONTROL_ALLOW_ORIGIN], "https://example.org");
    assert!(r.headers[header::ACCESS_CONTROL_EXPOSE_HEADERS].to_str().unwrap().contains("etag"));
    let r = call_with(&allowed, "OPTIONS", &uri, &preflight).await;
    assert!(r.status.is_success(), "{}", r.status);
    assert_eq!(r.headers[header::ACCESS_CONTROL_ALLOW_ORIGIN], "https://example.org");
    assert!(r.headers[header::ACCESS_CONTROL_ALLOW_METHODS].to_str().unwrap().contains("GET"));
    // Another origin is not allowed: the header names the allowed one, which a browser
    // compares with its own.
    let r = call_with(&allowed, "GET", &uri, &[(header::ORIGIN, "https://evil.example")]).await;
    assert_ne!(
        r.headers.get(header::ACCESS_CONTROL_ALLOW_ORIGIN).map(|v| v.as_bytes()),
        Some(&b"https://evil.example"[..])
    );
    let any = ostledb::serve::api::allow_origin(plain.clone(), "*").unwrap();
    assert_eq!(call_with(&any, "GET", &uri, &origin).await.headers[header::ACCESS_CONTROL_ALLOW_ORIGIN], "*");
    assert!(ostledb::serve::api::allow_origin(plain, "example.org/").is_err());
}
