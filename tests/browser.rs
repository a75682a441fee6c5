//! The web explorer in a real browser: Debian's Chromium, driven through chromedriver by
//! a small W3C WebDriver client written here (JSON over HTTP on loopback). The page is
//! served by the `ostledb` binary from a copy of the committed 3x3 database. The test
//! loads it, plays a move by clicking it in the move list, then one by clicking a piece
//! and a direction, checks each time that the URL and the move list become those of the
//! position the API names, undoes a move, plays the best move with the space key and
//! takes it back with the left arrow, checks the forbidden move is listed greyed, shows
//! the winning line and follows it to the game's end, edits a board (an impossible one
//! refused), lets the computer move, and saves a screenshot (`target/explorer.png`).
//! Chromium and chromedriver missing is a failure that names the packages, not a skip.
//! Every wait is bounded; the server, chromedriver and the browser are stopped however
//! the test ends.

use std::io::Write;
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::serve::{Server, connect, read_response, request, start};

const CHROMIUM: &str = "/usr/bin/chromium";
const WAIT: Duration = Duration::from_secs(20);

/// One HTTP/1.1 exchange with `Connection: close`: the status and the JSON body.
fn http(addr: SocketAddr, method: &str, path: &str, body: Option<&Value>) -> std::io::Result<(u16, Value)> {
    let mut s = TcpStream::connect(addr)?;
    s.set_read_timeout(Some(Duration::from_secs(60)))?;
    let body = body.map(|b| b.to_string()).unwrap_or_default();
    let head = format!(
        "{method} {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n",
        body.len()
    );
    s.write_all(head.as_bytes())?;
    s.write_all(body.as_bytes())?;
    // chromedriver keeps the connection open whatever the request says: read the
    // response by its Content-Length, as the server's tests do.
    let (status, body) = read_response(&mut std::io::BufReader::new(s))?;
    let v = serde_json::from_str(&body).unwrap_or(Value::Null);
    Ok((status, v))
}

/// A running chromedriver in a process group of its own, killed with the browsers it
/// started when dropped.
struct Driver {
    child: Child,
    addr: SocketAddr,
}

impl Drop for Driver {
    fn drop(&mut self) {
        // SAFETY: kill(2) on our own child's process group, which nothing else uses.
        unsafe { libc::kill(-(self.child.id() as i32), libc::SIGKILL) };
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A temporary directory, removed when dropped.
struct TempDir(PathBuf);

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

fn find(program: &str) -> Option<PathBuf> {
    std::env::var_os("PATH")?.to_str()?.split(':').map(|d| Path::new(d).join(program)).find(|p| p.is_file())
}

fn start_driver() -> Driver {
    let missing: Vec<&str> =
        [("chromium", Path::new(CHROMIUM).is_file()), ("chromium-driver", find("chromedriver").is_some())]
            .into_iter()
            .filter(|(_, there)| !there)
            .map(|(p, _)| p)
            .collect();
    assert!(
        missing.is_empty(),
        "the browser test needs Debian's {}: `apt-get install chromium chromium-driver` (tools/test.sh and .ci/run install them)",
        missing.join(" and ")
    );
    let port = free_port();
    let child = Command::new(find("chromedriver").unwrap())
        .arg(format!("--port={port}"))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .process_group(0)
        .spawn()
        .expect("chromedriver starts");
    let addr: SocketAddr = format!("127.0.0.1:{port}").parse().unwrap();
    let driver = Driver { child, addr };
    let t = Instant::now();
    while !matches!(http(addr, "GET", "/status", None), Ok((200, ref v)) if v["value"]["ready"] == true) {
        assert!(t.elapsed() < WAIT, "chromedriver did not get ready in {WAIT:?}");
        std::thread::sleep(Duration::from_millis(100));
    }
    driver
}

/// A browser session; deleted (the browser closed) when dropped.
struct Session {
    driver: SocketAddr,
    id: String,
}

const ELEMENT: &str = "element-6066-11e4-a52e-4f735466cecf";

impl Session {
    fn new(driver: &Driver, profile: &Path) -> Session {
        let caps = json!({"capabilities": {"alwaysMatch": {"browserName": "chrome", "goog:chromeOptions": {
            "binary": CHROMIUM,
            "args": ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                     "--disable-background-networking", "--disable-component-update", "--disable-sync",
                     "--disable-dev-shm-usage", format!("--user-data-dir={}", profile.display()),
                     "--window-size=1200,900"]}}}});
        let (status, v) = http(driver.addr, "POST", "/session", Some(&caps)).unwrap();
        assert_eq!(status, 200, "a session: {v}");
        Session { driver: driver.addr, id: v["value"]["sessionId"].as_str().unwrap().to_string() }
    }

    fn cmd(&self, method: &str, path: &str, body: Option<Value>) -> Value {
        let path = format!("/session/{}{path}", self.id);
        let (status, v) = http(self.driver, method, &path, body.as_ref()).unwrap();
        assert_eq!(status, 200, "{method} {path}: {v}");
        v["value"].clone()
    }

    fn go(&self, url: &str) {
        self.cmd("POST", "/url", Some(json!({ "url": url })));
    }

    fn script(&self, js: &str) -> Value {
        self.cmd("POST", "/execute/sync", Some(json!({ "script": js, "args": [] })))
    }

    fn click(&self, css: &str) {
        let e = self.cmd("POST", "/element", Some(json!({"using": "css selector", "value": css})));
        let id = e[ELEMENT].as_str().unwrap_or_else(|| panic!("no element {css}: {e}")).to_string();
        self.cmd("POST", &format!("/element/{id}/click"), Some(json!({})));
    }

    /// Wait until `js` returns something other than null or false, and return it.
    fn wait_for(&self, what: &str, js: &str) -> Value {
        let t = Instant::now();
        loop {
            let v = self.script(js);
            if !v.is_null() && v != false {
                return v;
            }
            assert!(
                t.elapsed() < WAIT,
                "waited {WAIT:?} for {what}; the page says: {}",
                self.script("return document.body.innerText")
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// Press and release `key` (a character, or a WebDriver key code such as `\u{E012}`)
    /// where the page has its focus.
    fn key(&self, key: &str) {
        let actions = json!({"actions": [{"type": "key", "id": "keyboard", "actions": [
            {"type": "keyDown", "value": key}, {"type": "keyUp", "value": key}]}]});
        self.cmd("POST", "/actions", Some(actions));
    }

    fn screenshot(&self, to: &Path) {
        let b64 = self.cmd("GET", "/screenshot", None);
        std::fs::write(to, base64_decode(b64.as_str().unwrap())).unwrap();
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        let _ = http(self.driver, "DELETE", &format!("/session/{}", self.id), None);
    }
}

fn base64_decode(s: &str) -> Vec<u8> {
    let value = |c: u8| match c {
        b'A'..=b'Z' => c - b'A',
        b'a'..=b'z' => c - b'a' + 26,
        b'0'..=b'9' => c - b'0' + 52,
        b'+' => 62,
        b'/' => 63,
        _ => panic!("not base64: {c}"),
    };
    let clean: Vec<u8> = s.bytes().filter(|c| !c.is_ascii_whitespace() && *c != b'=').collect();
    let mut out = Vec::with_capacity(clean.len() * 3 / 4);
    for chunk in clean.chunks(4) {
        let mut n = 0u32;
        for (i, &c) in chunk.iter().enumerate() {
            n |= (value(c) as u32) << (18 - 6 * i);
        }
        out.extend_from_slice(&n.to_be_bytes()[1..chunk.len()]);
    }
    out
}

/// The position object of `board` (which may go on with `&prev=...`) from the server.
fn position(server: &Server, board: &str) -> Value {
    let (mut s, mut r) = connect(server.addr);
    let (status, body) = request(&mut s, &mut r, &format!("/api/v1/position?board={board}"));
    assert_eq!(status, 200, "{body}");
    serde_json::from_str(&body).unwrap()
}

/// The moves the page lists, in order.
const LISTED: &str =
    "const m = [...document.querySelectorAll('#movelist .mv')].map(b => b.dataset.move); return m.length ? m : null";

fn names(a: &Value) -> Vec<Value> {
    let mut v: Vec<Value> = a["moves"].as_array().unwrap().iter().map(|m| m["move"].clone()).collect();
    v.sort_by_key(|m| m.as_str().unwrap().to_string());
    v
}

fn sorted(v: Value) -> Vec<Value> {
    let mut v = v.as_array().unwrap().clone();
    v.sort_by_key(|m| m.as_str().unwrap().to_string());
    v
}

fn url_board(session: &Session) -> String {
    session.script("return new URLSearchParams(location.search).get('board')").as_str().unwrap().to_string()
}

/// Wait until the URL's `board` is `board`.
fn wait_board(session: &Session, what: &str, board: &str) {
    session.wait_for(what, &format!("return new URLSearchParams(location.search).get('board') === '{board}'"));
}

/// Wait until the page lists exactly the moves of the position object `a`.
fn wait_moves(session: &Session, what: &str, a: &Value) {
    let want = serde_json::to_string(&names(a)).unwrap();
    session.wait_for(
        what,
        &format!(
            "{LISTED_FN} const m = listed(); return m.length > 0 && JSON.stringify(m.sort()) === JSON.stringify({want})"
        ),
    );
}

const SPACE: &str = " ";
const LEFT: &str = "\u{E012}";

#[test]
fn the_explorer_plays_moves_by_clicks_and_keys_and_follows_them_in_the_url() {
    let t0 = Instant::now();
    let dir = TempDir(std::env::temp_dir().join(format!("ostledb-browser-{}", std::process::id())));
    let _ = std::fs::remove_dir_all(&dir.0);
    std::fs::create_dir_all(dir.0.join("db")).unwrap();
    for f in std::fs::read_dir("tests/data/golden-v2").unwrap() {
        let f = f.unwrap();
        if f.file_name() != "ostledb.readers" {
            std::fs::copy(f.path(), dir.0.join("db").join(f.file_name())).unwrap();
        }
    }
    let server = start(&dir.0.join("db"), &[]);
    let driver = start_driver();
    let session = Session::new(&driver, &dir.0.join("profile"));
    session.go(&format!("http://{}/", server.addr));

    // The start position and its moves, as the API gives them.
    let listed = session.wait_for("the move list", LISTED);
    let start_board = url_board(&session);
    let a = position(&server, &start_board);
    assert_eq!(sorted(listed), names(&a), "the page lists the position's moves");
    let status = session.script("return document.getElementById('status').textContent");
    assert!(status.as_str().unwrap().contains("to move"), "{status}");

    // 1. Click the first listed move that does not end the game.
    let first = a["moves"].as_array().unwrap().iter().find(|m| m["forbidden"] == false && m["plies"] != 1).unwrap();
    session.click(&format!("#movelist .mv[data-move='{}']", first["move"].as_str().unwrap()));
    let child = first["child"].as_str().unwrap().to_string();
    wait_board(&session, "the URL of the child", &child);
    let b = position(&server, &format!("{child}&prev={start_board}"));
    wait_moves(&session, "the child's move list", &b);
    let prev = session.script("return new URLSearchParams(location.search).get('prev')");
    assert_eq!(prev, start_board.as_str(), "the previous board is in the URL");
    // The move that would undo the first one is listed, greyed, and cannot be played.
    let forbidden = session
        .script("return [...document.querySelectorAll('#movelist .mv.forbidden')].map(b => [b.dataset.move, b.title])");
    let want: Vec<&str> = b["moves"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["forbidden"] == true)
        .map(|m| m["move"].as_str().unwrap())
        .collect();
    let got: Vec<&str> = forbidden.as_array().unwrap().iter().map(|f| f[0].as_str().unwrap()).collect();
    assert_eq!(got, want, "the forbidden move, greyed");
    for f in forbidden.as_array().unwrap() {
        assert!(f[1].as_str().unwrap().contains("undo the opponent's last move"), "{f}");
        session.click(&format!("#movelist .mv[data-move='{}']", f[0].as_str().unwrap()));
        assert_eq!(url_board(&session), child, "a click on the forbidden move plays nothing");
    }

    // 2. Click a piece, then a direction.
    let side = 3;
    let piece_move = b["moves"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["forbidden"] == false && m["plies"] != 1 && !m["move"].as_str().unwrap().starts_with("hole"))
        .expect("a piece move")
        .clone();
    let name = piece_move["move"].as_str().unwrap();
    let (square, dir) = name.split_once('-').unwrap();
    let col = (square.as_bytes()[0] - b'a') as usize;
    let row = side - square[1..].parse::<usize>().unwrap();
    session.click(&format!("#board .sq[data-sq='{}']", row * side + col));
    session.wait_for("the direction pad", "return !document.getElementById('pad').hidden");
    session.click(&format!("#pad button[data-dir='{dir}']"));
    let grandchild = piece_move["child"].as_str().unwrap().to_string();
    wait_board(&session, "the URL after a piece and a direction", &grandchild);
    session.wait_for("the move list", LISTED);

    // 3. Undo: back to the position after the first move.
    session.click("#undo");
    wait_board(&session, "the URL after undo", &child);
    wait_moves(&session, "the move list after undo", &b);

    // 4. Space plays the best move (with the undo button still focused, which must not
    // take it back); the left arrow undoes it.
    let best = b["moves"].as_array().unwrap().iter().find(|m| m["best"] == true && m["forbidden"] == false).unwrap();
    session.key(SPACE);
    wait_board(&session, "the best move played with space", best["child"].as_str().unwrap());
    session.wait_for("the move list after space", LISTED);
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(url_board(&session), best["child"].as_str().unwrap(), "space played one move and nothing else");
    session.key(LEFT);
    wait_board(&session, "the URL after the left arrow", &child);
    wait_moves(&session, "the move list after the left arrow", &b);

    // 5. The winning line: one entry per ply of a decided position, or up to 200 of a
    // draw; the last ply of a decided line ends the game, and the page says so.
    session.click("#showline");
    let n = session.wait_for(
        "the principal variation",
        "return document.getElementById('linebox').hidden ? null : document.querySelectorAll('#line li button').length",
    );
    match b["plies"].as_u64() {
        Some(p) => {
            assert_eq!(n.as_u64(), Some(p), "one button per ply of {child}");
            session.click(&format!("#line button[data-ply='{p}']"));
            session.wait_for("the end of the game", "return new URLSearchParams(location.search).get('over')");
            let status = session.wait_for(
                "the result",
                "const s = document.getElementById('status').textContent; return s.startsWith('Game over') && s",
            );
            let over = session.script("return document.getElementById('movelist').textContent");
            assert!(over.as_str().unwrap().contains("wins"), "{status}: {over}");
        }
        None => assert_eq!(n.as_u64(), Some(200)),
    }

    // 6. The editor: an impossible board gets a message and changes nothing; a good one
    // is analysed.
    session.click("#edit");
    session.script("document.getElementById('boardtext').value = '333-111-222'");
    session.click("#applytext");
    let msg = session.wait_for("the editor's message", "return document.getElementById('editmsg').textContent || null");
    assert!(msg.as_str().unwrap().contains("exactly one hole"), "{msg}");
    session.script("document.getElementById('boardtext').value = '111-030-222'");
    session.click("#applytext");
    session.click("#editdone");
    wait_board(&session, "the edited board", "111-030-222");
    wait_moves(&session, "the edited board's moves", &position(&server, "111-030-222"));

    // 7. The computer, set to play the side to move, moves by itself.
    session.script("const s = document.getElementById('cpuside'); s.value = new URLSearchParams(location.search).get('turn') || 'a'; s.dispatchEvent(new Event('change'))");
    session
        .wait_for("the computer's move", "return new URLSearchParams(location.search).get('board') !== '111-030-222'");
    session.script("const s = document.getElementById('cpuside'); s.value = ''; s.dispatchEvent(new Event('change'))");
    session.wait_for("the move list", LISTED);

    let shot = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/explorer.png");
    session.screenshot(&shot);
    let png = std::fs::read(&shot).unwrap();
    assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n", "a PNG screenshot");
    eprintln!("browser test: {:.1} s, screenshot {} ({} bytes)", t0.elapsed().as_secs_f64(), shot.display(), png.len());
    drop(session);
    drop(driver);
    drop(server);
}

const LISTED_FN: &str =
    "const listed = () => [...document.querySelectorAll('#movelist .mv')].map(b => b.dataset.move);";
