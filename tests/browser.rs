//! The web explorer in a real browser: Debian's Chromium, driven through chromedriver by
//! a small W3C WebDriver client written here (JSON over HTTP on loopback). The page is
//! served by the `ostledb` binary from a copy of the committed 3x3 database, and once from
//! a 5x5 database of phase (4,4) (solved once into `target/test-data/db44`, or the one
//! `OSTLEDB_TEST_DB44` names). The tests play moves by clicks, by a piece and a
//! direction, by keys and by touch; check the game kept in the URL through reloads, back
//! and forward, undo and redo; the editor, the computer, the best line, the moves played,
//! the touch targets of a phone, and the page read without JavaScript.
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
        Session::with(driver, profile, None)
    }

    /// A session; with `phone`, a touch screen of that many CSS px (width, height).
    fn with(driver: &Driver, profile: &Path, phone: Option<(u32, u32)>) -> Session {
        let mut opts = json!({
            "binary": CHROMIUM,
            "args": ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                     "--disable-background-networking", "--disable-component-update", "--disable-sync",
                     "--disable-dev-shm-usage", format!("--user-data-dir={}", profile.display()),
                     "--window-size=1200,900"]});
        if let Some((w, h)) = phone {
            opts["mobileEmulation"] =
                json!({"deviceMetrics": {"width": w, "height": h, "pixelRatio": 1.0, "touch": true}});
        }
        let caps = json!({"capabilities": {"alwaysMatch": {"browserName": "chrome", "goog:chromeOptions": opts}}});
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

    fn element(&self, css: &str) -> String {
        let e = self.cmd("POST", "/element", Some(json!({"using": "css selector", "value": css})));
        e[ELEMENT].as_str().unwrap_or_else(|| panic!("no element {css}: {e}")).to_string()
    }

    fn click(&self, css: &str) {
        let id = self.element(css);
        self.cmd("POST", &format!("/element/{id}/click"), Some(json!({})));
    }

    /// A tap of a finger on the middle of the element `css`.
    fn tap(&self, css: &str) {
        let id = self.element(css);
        let actions = json!({"actions": [{"type": "pointer", "id": "finger", "parameters": {"pointerType": "touch"},
            "actions": [{"type": "pointerMove", "duration": 0, "origin": {ELEMENT: id}, "x": 0, "y": 0},
                        {"type": "pointerDown", "button": 0}, {"type": "pointerUp", "button": 0}]}]});
        self.cmd("POST", "/actions", Some(actions));
        self.cmd("DELETE", "/actions", None);
    }

    /// The mouse moved onto the element `css` (off any move it previewed).
    fn hover(&self, css: &str) {
        let id = self.element(css);
        let actions = json!({"actions": [{"type": "pointer", "id": "mouse", "parameters": {"pointerType": "mouse"},
            "actions": [{"type": "pointerMove", "duration": 0, "origin": {ELEMENT: id}, "x": 0, "y": 0}]}]});
        self.cmd("POST", "/actions", Some(actions));
    }

    /// A string the page's script returns.
    fn text(&self, js: &str) -> String {
        let v = self.script(js);
        v.as_str().unwrap_or_else(|| panic!("{js}: {v}")).to_string()
    }

    /// The URL's parameter `name` (empty when absent).
    fn param(&self, name: &str) -> String {
        self.text(&format!("return new URLSearchParams(location.search).get('{name}') || ''"))
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

/// The board of the position the page shows (the URL holds the game's start and its moves).
fn url_board(session: &Session) -> String {
    session.text("return pretty(cur().board)")
}

/// Wait until the page shows `board`.
fn wait_board(session: &Session, what: &str, board: &str) {
    session.wait_for(what, &format!("return S.game !== null && pretty(cur().board) === '{board}'"));
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
const TAB: &str = "\u{E004}";
const ENTER: &str = "\u{E007}";

/// The server, chromedriver and a browser session on a database; dropped in that order
/// reversed (the session first, the directory last).
struct Page {
    session: Session,
    _driver: Driver,
    server: Server,
    _dir: TempDir,
}

impl Page {
    fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.server.addr)
    }
}

/// A copy of the committed 3x3 database in a directory of its own, removed when dropped.
fn golden_copy(name: &str) -> TempDir {
    let dir = TempDir(std::env::temp_dir().join(format!("ostledb-browser-{name}-{}", std::process::id())));
    let _ = std::fs::remove_dir_all(&dir.0);
    std::fs::create_dir_all(dir.0.join("db")).unwrap();
    for f in std::fs::read_dir("tests/data/golden-v2").unwrap() {
        let f = f.unwrap();
        if f.file_name() != "ostledb.readers" {
            std::fs::copy(f.path(), dir.0.join("db").join(f.file_name())).unwrap();
        }
    }
    dir
}

/// The explorer on a copy of the 3x3 database, in a desktop window or a phone's screen.
fn open_golden(name: &str, phone: Option<(u32, u32)>) -> Page {
    let dir = golden_copy(name);
    let server = start(&dir.0.join("db"), &[]);
    let driver = start_driver();
    let session = Session::with(&driver, &dir.0.join("profile"), phone);
    Page { session, _driver: driver, server, _dir: dir }
}

/// The square a move (`b1-up`, `hole-left`) starts from and the one it goes to, on a
/// board of side `n` (`board` in the notation, for the hole).
fn move_squares(n: usize, board: &str, name: &str) -> (usize, usize) {
    let (what, dir) = name.split_once('-').unwrap();
    let from = if what == "hole" {
        board.replace('-', "").find('3').unwrap()
    } else {
        let col = (what.as_bytes()[0] - b'a') as usize;
        let row = n - what[1..].parse::<usize>().unwrap();
        row * n + col
    };
    let (r, c) = ((from / n) as i64, (from % n) as i64);
    let (r, c) = match dir {
        "up" => (r - 1, c),
        "down" => (r + 1, c),
        "left" => (r, c - 1),
        _ => (r, c + 1),
    };
    (from, (r * n as i64 + c) as usize)
}

/// The plies of the game in the URL (its `moves`).
fn url_moves(session: &Session) -> Vec<String> {
    session.param("moves").split(',').filter(|m| !m.is_empty()).map(str::to_string).collect()
}

fn set_select(session: &Session, id: &str, value: &str) {
    session.script(&format!(
        "const s = document.getElementById('{id}'); s.value = '{value}'; s.dispatchEvent(new Event('change'))"
    ));
}

#[test]
fn the_explorer_plays_moves_by_clicks_and_keys_and_keeps_the_whole_game_in_the_url() {
    let t0 = Instant::now();
    let page = open_golden("clicks", None);
    let (session, server) = (&page.session, &page.server);
    session.go(&page.url("/"));

    // The start position and its moves, as the API gives them.
    let listed = session.wait_for("the move list", LISTED);
    let start_board = url_board(session);
    let a = position(server, &start_board);
    assert_eq!(sorted(listed), names(&a), "the page lists the position's moves");
    let status = session.text("return document.getElementById('status').textContent");
    assert!(status.contains("to move"), "{status}");
    // The line is labelled by what it shows, whatever the value.
    assert_eq!(session.text("return document.getElementById('showline').textContent"), "Show the best line");

    // 1. Click the first listed move that does not end the game: the URL holds the game
    // (its start and the move), and the board marks the move's squares.
    let first = a["moves"].as_array().unwrap().iter().find(|m| m["forbidden"] == false && m["plies"] != 1).unwrap();
    let first_name = first["move"].as_str().unwrap();
    session.click(&format!("#movelist .mv[data-move='{first_name}']"));
    let child = first["child"].as_str().unwrap().to_string();
    wait_board(session, "the child", &child);
    let b = position(server, &format!("{child}&prev={start_board}"));
    wait_moves(session, "the child's move list", &b);
    assert_eq!(session.param("board"), start_board, "the game's start is in the URL");
    assert_eq!(url_moves(session), [first_name], "the move played is in the URL");
    let (from, to) = move_squares(3, &start_board, first_name);
    session.hover("#status");
    let marked = session.script(
        "return [...document.querySelectorAll('#board .sq')].map(s => (s.classList.contains('last-from') ? 'f' : '') + (s.classList.contains('last-to') ? 't' : ''))",
    );
    let mut want = vec![""; 9];
    want[from] = "f";
    want[to] = "t";
    assert_eq!(marked, json!(want), "the last move's squares are marked");
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
        assert_eq!(url_board(session), child, "a click on the forbidden move plays nothing");
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
    wait_board(session, "the board after a piece and a direction", &grandchild);
    session.wait_for("the move list", LISTED);
    assert_eq!(url_moves(session), [first_name, name]);

    // 3. Undo: back to the position after the first move, the second kept as redo.
    session.click("#undo");
    wait_board(session, "the board after undo", &child);
    wait_moves(session, "the move list after undo", &b);
    assert_eq!((url_moves(session).len(), session.param("at")), (2, "1".to_string()), "undo keeps the move to redo");

    // 4. A reload keeps undo and redo; redo plays the move undone.
    session.script("location.reload()");
    wait_moves(session, "the move list after a reload", &b);
    wait_board(session, "the board after a reload", &child);
    let links = session.script("return ['undo', 'redo'].map(id => document.getElementById(id).hasAttribute('href'))");
    assert_eq!(links, json!([true, true]), "undo and redo after a reload");
    session.click("#redo");
    wait_board(session, "the board after redo", &grandchild);
    // Back and forward walk the same states: back to before the redo, forward again.
    session.script("history.back()");
    wait_board(session, "the board after back", &child);
    session.script("history.forward()");
    wait_board(session, "the board after forward", &grandchild);
    session.click("#undo");
    wait_board(session, "the board after undo", &child);
    wait_moves(session, "the move list after undo", &b);

    // 5. Space plays the best move (with the undo button still focused, which must not
    // take it back); the left arrow undoes it.
    let best = b["moves"].as_array().unwrap().iter().find(|m| m["best"] == true && m["forbidden"] == false).unwrap();
    session.key(SPACE);
    wait_board(session, "the best move played with space", best["child"].as_str().unwrap());
    session.wait_for("the move list after space", LISTED);
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(url_board(session), best["child"].as_str().unwrap(), "space played one move and nothing else");
    session.key(LEFT);
    wait_board(session, "the board after the left arrow", &child);
    wait_moves(session, "the move list after the left arrow", &b);

    // 6. The best line: one entry per ply of a decided position, or up to 200 of a draw.
    // A jump plays the line's moves into the game: the game-ending last ply is derived
    // (no `over` in the URL), and undo takes back one ply, not the whole jump.
    session.click("#showline");
    let n = session.wait_for(
        "the principal variation",
        "return document.getElementById('linebox').hidden ? null : document.querySelectorAll('#line li button').length",
    );
    match b["plies"].as_u64() {
        Some(p) => {
            assert_eq!(n.as_u64(), Some(p), "one button per ply of {child}");
            session.click(&format!("#line button[data-ply='{p}']"));
            let status = session.wait_for(
                "the result",
                "const s = document.getElementById('status').textContent; return s.startsWith('Game over') && s",
            );
            let over = session.text("return document.getElementById('movelist').textContent");
            assert!(over.contains("wins"), "{status}: {over}");
            assert_eq!(session.param("over"), "", "the result is not taken from the URL");
            assert_eq!(url_moves(session).len() as u64, 1 + p);
            session.key(LEFT);
            session.wait_for(
                "one ply back",
                "return !document.getElementById('status').textContent.startsWith('Game over')",
            );
            assert_eq!(session.param("at"), p.to_string(), "undo after a jump takes back one ply");
        }
        None => assert_eq!(n.as_u64(), Some(200)),
    }

    // 7. The editor. An impossible board, typed and Done pressed: a message next to the
    // field, in view; the left arrow keeps the editor and its edits; a board typed and
    // not applied is used by Done.
    session.click("#edit");
    session.script("document.getElementById('boardtext').value = '333-111-222'");
    session.click("#editdone");
    let msg = session.wait_for("the editor's message", "return document.getElementById('editmsg').textContent || null");
    assert!(msg.as_str().unwrap().contains("exactly one hole"), "{msg}");
    let seen = "const r = document.getElementById('editmsg').getBoundingClientRect(); return r.height > 0 && r.top >= -1 && r.bottom <= innerHeight + 1";
    assert_eq!(session.script(seen), true, "the message is in view");
    session.script("document.getElementById('boardtext').value = '100-030-222'");
    session.click("#editdone");
    let msg = session.wait_for(
        "the server's reason",
        "const t = document.getElementById('editmsg').textContent; return t.includes('pieces') && t",
    );
    assert!(msg.as_str().unwrap().contains("live position"), "{msg}");
    assert_eq!(
        session.script(seen),
        true,
        "the server's message is in view: {}",
        session.script("const r = document.getElementById('editmsg').getBoundingClientRect(); return [r.top, r.bottom, innerHeight, scrollY]")
    );
    assert_eq!(session.script("return !document.getElementById('editor').hidden"), true, "still editing");
    session.click(".palette button[data-put='empty']");
    session.script("document.getElementById('boardtext').value = '111-030-222'");
    session.click("#applytext");
    session.click("#board .sq[data-sq='0']");
    session.key(LEFT);
    std::thread::sleep(Duration::from_millis(200));
    assert_eq!(
        session.script("return !document.getElementById('editor').hidden"),
        true,
        "the left arrow stays in the editor"
    );
    assert_eq!(session.text("return document.getElementById('boardtext').value"), "011-030-222", "and keeps the edits");
    session.script("document.getElementById('boardtext').value = '111-030-222'");
    session.click("#editdone");
    wait_board(session, "the edited board", "111-030-222");
    wait_moves(session, "the edited board's moves", &position(server, "111-030-222"));
    assert_eq!((session.param("board"), session.param("moves")), ("111-030-222".into(), String::new()));

    // 8. The computer, set to play the side to move, moves by itself; its side and level
    // are in the URL. Undo and redo step over its moves alike (two plies each way).
    set_select(session, "cpulevel", "strong");
    let turn = session.text("return cur().turn");
    set_select(session, "cpuside", &turn);
    session.wait_for("the computer's move", "return S.game.at === 1 && S.analysis !== null");
    assert_eq!((session.param("cpu"), session.param("level")), (turn.clone(), "strong".to_string()));
    let reply = session.text("return S.analysis.moves.find(m => !m.forbidden && m.plies !== 1 || !m.forbidden).move");
    session.click(&format!("#movelist .mv[data-move='{reply}']"));
    let three = session.wait_for(
        "the computer's answer",
        "return S.analysis !== null && (S.game.at === 3 || (S.game.at === 2 && cur().over)) && S.game.at",
    );
    if three == 3 {
        session.key(LEFT);
        session.wait_for("two plies back", "return S.game.at === 1 && S.analysis !== null");
        assert_eq!(session.param("at"), "1");
        session.key("\u{E014}");
        session.wait_for("two plies forward", "return S.game.at === 3");
        // A reload keeps the computer's side and level.
        session.script("location.reload()");
        session.wait_for("the reloaded game", "return S.game !== null && S.game.at === 3 && S.analysis !== null");
        let sel = session
            .script("return [document.getElementById('cpuside').value, document.getElementById('cpulevel').value]");
        assert_eq!(sel, json!([turn, "strong"]));
    }

    // 9. The moves played: one entry a ply, each with a place for a mark; copied and
    // downloaded as text.
    let plies = url_moves(session);
    let entries = session.script("return [...document.querySelectorAll('#played li[data-ply]')].map(li => [li.textContent, li.querySelectorAll('.mark').length])");
    assert_eq!(entries.as_array().unwrap().len(), plies.len(), "{entries}");
    for (e, m) in entries.as_array().unwrap().iter().zip(&plies) {
        assert!(e[0].as_str().unwrap().contains(m.as_str()) && e[1] == 1, "{e}");
    }
    session.script("window.__saved = null; const f = URL.createObjectURL; URL.createObjectURL = (b) => { b.text().then(t => { window.__saved = t; }); return f.call(URL, b); }");
    session.click("#savegame");
    let text = session.wait_for("the downloaded game", "return window.__saved");
    let text = text.as_str().unwrap();
    assert!(text.contains("start 111-030-222") && plies.iter().all(|m| text.contains(m.as_str())), "{text}");
    session.click("#copygame");
    session.wait_for("the copy", "return document.getElementById('message').textContent.includes('copied')");

    // 10. New game: the database's start board, nothing played, the computer kept.
    set_select(session, "cpuside", "");
    session.click("#newgame");
    wait_board(session, "the new game", &start_board);
    assert_eq!((session.param("board"), url_moves(session).len()), (start_board.clone(), 0));

    // 11. A hand-made `over` on a live board is not believed.
    session.go(&page.url(&format!("/?board={start_board}&over=win")));
    wait_moves(session, "the live board's moves", &a);
    let status = session.text("return document.getElementById('status').textContent");
    assert!(!status.contains("Game over") && status.contains("to move"), "{status}");

    let shot = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/explorer.png");
    session.screenshot(&shot);
    let png = std::fs::read(&shot).unwrap();
    assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n", "a PNG screenshot");
    eprintln!("browser test: {:.1} s, screenshot {} ({} bytes)", t0.elapsed().as_secs_f64(), shot.display(), png.len());
}

/// Every move is reached by Tab, shows where the focus is, and is played by Enter or
/// Space (the next list's first move then has the focus).
#[test]
fn every_move_is_reached_by_tab_and_played_by_enter_or_space() {
    let t0 = Instant::now();
    let page = open_golden("keys", None);
    let (session, server) = (&page.session, &page.server);
    session.go(&page.url("/"));
    session.wait_for("the move list", LISTED);
    let a = position(server, &url_board(session));
    let allowed: Vec<String> = a["moves"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["forbidden"] == false)
        .map(|m| m["move"].as_str().unwrap().to_string())
        .collect();
    let mut reached = Vec::new();
    for _ in 0..60 {
        session.key(TAB);
        let f = session.script(
            "const e = document.activeElement; return e && e.matches('#movelist a.mv') ? e.dataset.move : null",
        );
        if let Some(m) = f.as_str() {
            if !reached.contains(&m.to_string()) {
                reached.push(m.to_string());
            }
            let outline = session.script(
                "const s = getComputedStyle(document.activeElement); return s.outlineStyle !== 'none' && parseFloat(s.outlineWidth) >= 2",
            );
            assert_eq!(outline, true, "{m} shows its focus");
        }
        if reached.len() == allowed.len() {
            break;
        }
    }
    let mut sorted_allowed = allowed.clone();
    sorted_allowed.sort();
    reached.sort();
    assert_eq!(reached, sorted_allowed, "Tab reaches every allowed move");

    // Enter plays the move focused.
    let m = session.text("const e = document.activeElement; return e.dataset.move");
    let child = a["moves"].as_array().unwrap().iter().find(|x| x["move"] == m.as_str()).unwrap()["child"].clone();
    session.key(ENTER);
    wait_board(session, "the move played by Enter", child.as_str().unwrap());
    // The new list's first move has the focus; Space plays it (not the best move).
    let focused = session.wait_for(
        "the focus on the new list",
        "const e = document.activeElement; return e && e.matches('#movelist a.mv') && S.analysis && e.dataset.move",
    );
    let b = position(server, &format!("{}&prev={}", child.as_str().unwrap(), a["board"].as_str().unwrap()));
    let next = b["moves"].as_array().unwrap().iter().find(|x| x["move"] == focused).unwrap();
    session.key(SPACE);
    wait_board(session, "the move played by Space", next["child"].as_str().unwrap());
    assert_eq!(url_moves(session), [m.as_str(), focused.as_str().unwrap()]);
    eprintln!("browser keyboard test: {:.1} s", t0.elapsed().as_secs_f64());
}

/// What a finger can touch on a phone's screen is at least 44x44 CSS px (the page, the
/// best line, the editor); a first tap on a move previews it and a second plays it.
#[test]
fn on_a_phone_every_touch_target_is_44_px_and_a_first_tap_previews() {
    let t0 = Instant::now();
    let page = open_golden("phone", Some((390, 844)));
    let (session, server) = (&page.session, &page.server);
    session.go(&page.url("/"));
    session.wait_for("the move list", LISTED);
    assert_eq!(session.script("return innerWidth"), 390);
    let start_board = url_board(session);
    let a = position(server, &start_board);
    let first = a["moves"].as_array().unwrap().iter().find(|m| m["forbidden"] == false && m["plies"] != 1).unwrap();
    let name = first["move"].as_str().unwrap();
    // A first tap previews: nothing is played, the move and the board after it are shown.
    session.tap(&format!("#movelist .mv[data-move='{name}']"));
    session.wait_for("the preview", "return document.querySelector('#movelist .mv.armed') !== null");
    assert_eq!(session.script("return document.getElementById('board').classList.contains('preview')"), true);
    assert_eq!(url_board(session), start_board, "a first tap plays nothing");
    session.tap(&format!("#movelist .mv[data-move='{name}']"));
    let child = first["child"].as_str().unwrap();
    wait_board(session, "the move played by a second tap", child);
    session.wait_for("the move list", LISTED);
    session.click("#showline");
    session.wait_for("the best line", "return !document.getElementById('linebox').hidden");
    const SMALL: &str = "return [...document.querySelectorAll('a[href], button, select, input, .mv, [tabindex]')]
        .filter(e => e.getClientRects().length > 0 && getComputedStyle(e).visibility !== 'hidden')
        .map(e => { const r = e.getBoundingClientRect(); return [e.id || e.dataset.move || e.dataset.ply || e.dataset.put || e.className || e.tagName, Math.round(r.width), Math.round(r.height)]; })
        .filter(([, w, h]) => w < 44 || h < 44)";
    let measured = "return document.querySelectorAll('a[href], button, select, input, .mv').length";
    assert!(session.script(measured).as_u64().unwrap() > 20);
    assert_eq!(session.script(SMALL), json!([]), "touch targets under 44x44 px");
    session.click("#edit");
    assert_eq!(session.script(SMALL), json!([]), "touch targets of the editor under 44x44 px");
    let shot = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/explorer-phone.png");
    session.click("#editcancel");
    session.screenshot(&shot);
    eprintln!("browser phone test: {:.1} s", t0.elapsed().as_secs_f64());
}

/// Without JavaScript: the page of a URL, fetched by a plain GET, holds the value and
/// every allowed move as a link to the game after it; the result of a game is derived
/// from its moves, never taken from `over`.
#[test]
fn the_page_reads_and_links_without_javascript() {
    let dir = golden_copy("nojs");
    let server = start(&dir.0.join("db"), &[]);
    let get = |path: &str| {
        let (mut s, mut r) = connect(server.addr);
        request(&mut s, &mut r, path)
    };
    let (status, html) = get("/");
    assert_eq!(status, 200);
    assert!(html.contains("aria-label=\"a3 Orange\""), "the board");
    let start_board = {
        let (_, stats) = get("/api/v1/stats");
        assert!(stats.contains("\"side\":3"), "{stats}");
        "222-030-111".to_string()
    };
    let a = position(&server, &start_board);
    let text = crate_text(&a);
    assert!(html.contains(&format!(">{text}</div>")), "the value: {text}");
    for m in a["moves"].as_array().unwrap() {
        let name = m["move"].as_str().unwrap();
        if m["forbidden"] == true {
            continue;
        }
        let href = format!("href=\"/?board={start_board}&amp;moves={name}\" data-move=\"{name}\"");
        assert!(html.contains(&href), "a link for {name}: {href}");
    }
    // Following a link: the page of the game after the move, with its value and moves.
    let first = a["moves"].as_array().unwrap().iter().find(|m| m["forbidden"] == false && m["plies"] != 1).unwrap();
    let name = first["move"].as_str().unwrap();
    let (status, html) = get(&format!("/?board={start_board}&moves={name}"));
    assert_eq!(status, 200);
    let b = position(&server, &format!("{}&prev={start_board}", first["child"].as_str().unwrap()));
    assert!(html.contains(&format!(">{}</div>", crate_text_turn(&b, "Orange"))), "the child's value");
    assert!(html.contains("class=\"mv forbidden\""), "its forbidden move, not a link");
    assert!(html.contains("class=\"sq last-from\"") && html.contains("class=\"sq last-to\""), "the last move marked");
    assert!(html.contains(&format!("moves={name},")), "the next moves extend the game");
    // `over` on a live board is ignored; a game whose last move ends it is over.
    let (_, html) = get(&format!("/?board={start_board}&over=win"));
    assert!(!html.contains("Game over") && html.contains("class=\"mv\""));
    let mut found = false;
    let mut queue = vec![(start_board.clone(), None::<String>)];
    let mut seen = std::collections::HashSet::new();
    while let Some((board, prev)) = queue.pop() {
        if !seen.insert((board.clone(), prev.clone())) || seen.len() > 400 {
            continue;
        }
        let q = match &prev {
            Some(p) => format!("{board}&prev={p}"),
            None => board.clone(),
        };
        let p = position(&server, &q);
        if let Some(end) = p["moves"].as_array().unwrap().iter().find(|m| m["forbidden"] == false && m["plies"] == 1) {
            let prev_part = prev.as_ref().map(|p| format!("&prev={p}")).unwrap_or_default();
            let (status, html) = get(&format!("/?board={board}{prev_part}&moves={}", end["move"].as_str().unwrap()));
            assert_eq!(status, 200);
            assert!(html.contains("Game over"), "{html}");
            assert!(!html.contains("class=\"mv\""), "no moves after the end");
            found = true;
            break;
        }
        for m in p["moves"].as_array().unwrap().iter().filter(|m| m["forbidden"] == false) {
            queue.push((m["child"].as_str().unwrap().to_string(), Some(board.clone())));
        }
    }
    assert!(found, "a move that ends the game");
    // A move that cannot be played: the game stops before it, and the page says why.
    let (status, html) = get(&format!("/?board={start_board}&moves={name},x9-up"));
    assert_eq!(status, 200);
    assert!(html.contains("move 2 `x9-up` cannot be played"), "{html}");
    let (status, html) = get("/?board=333-111-222");
    assert_eq!(status, 400);
    assert!(html.contains("two holes"), "{html}");
}

/// The status line the page shows for a position object whose side to move is blue.
fn crate_text(a: &Value) -> String {
    crate_text_turn(a, "Blue")
}

fn crate_text_turn(a: &Value, who: &str) -> String {
    let n = a["plies"].as_u64().unwrap_or(0);
    let plies = format!("{n} {}", if n == 1 { "ply" } else { "plies" });
    match a["verdict"].as_str().unwrap() {
        "immediate-win" => format!("{who} to move wins at once (a capture ends the game)"),
        "win" => format!("{who} to move wins in {plies}"),
        "loss" => format!("{who} to move loses in {plies}"),
        _ => "Draw: neither side can force a win".to_string(),
    }
}

/// A 5x5 database of phase (4,4): the one `OSTLEDB_TEST_DB44` names, else one solved
/// once into `target/test-data/db44` (about 80 s on 2 cores; kept for later runs).
fn db44() -> PathBuf {
    if let Some(p) = std::env::var_os("OSTLEDB_TEST_DB44") {
        return PathBuf::from(p);
    }
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/test-data/db44");
    if !dir.join("ostledb.meta").exists() {
        let t = Instant::now();
        std::fs::create_dir_all(&dir).unwrap();
        let out = Command::new(env!("CARGO_BIN_EXE_ostledb"))
            // zstd level 3 instead of 19: packing in seconds instead of about a minute.
            .args(["solve", "--quiet", "--level", "3", "--db"])
            .arg(&dir)
            .stdin(Stdio::null())
            .output()
            .expect("ostledb solve runs");
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        eprintln!("solved (4,4) into {} in {:.1} s", dir.display(), t.elapsed().as_secs_f64());
    }
    dir
}

/// The explorer on the real 5x5 board, phase (4,4): its start position and moves, the
/// best move by space, the last move marked, the computer at a level kept in the URL
/// through a reload, a jump into the best line undone one ply at a time.
#[test]
#[cfg_attr(debug_assertions, ignore = "solves phase (4,4) when no database is given; cargo test --release runs it")]
fn the_explorer_plays_on_a_5x5_board_of_phase_4_4() {
    let db = db44();
    let t0 = Instant::now();
    let dir = TempDir(std::env::temp_dir().join(format!("ostledb-browser-44-{}", std::process::id())));
    let _ = std::fs::remove_dir_all(&dir.0);
    std::fs::create_dir_all(&dir.0).unwrap();
    let server = start(&db, &["--no-warm"]);
    let driver = start_driver();
    let session = Session::new(&driver, &dir.0.join("profile"));
    let page = Page { session, _driver: driver, server, _dir: dir };
    let (session, server) = (&page.session, &page.server);
    session.go(&page.url("/"));
    let listed = session.wait_for("the move list", LISTED);
    let start_board = url_board(session);
    assert_eq!(start_board, "22220-00000-00300-00000-11110");
    assert_eq!(session.script("return document.querySelectorAll('#board .sq').length"), 25);
    let a = position(server, &start_board);
    assert_eq!(sorted(listed), names(&a));
    assert_eq!(session.text("return document.getElementById('status').textContent"), crate_text(&a));
    // Space: the best move, marked on the board.
    let best = a["moves"].as_array().unwrap().iter().find(|m| m["best"] == true).unwrap();
    session.key(SPACE);
    wait_board(session, "the best move", best["child"].as_str().unwrap());
    let (from, to) = move_squares(5, &start_board, best["move"].as_str().unwrap());
    session.hover("#status");
    let marked = session.script(
        "return [document.querySelector('.sq.last-from').dataset.sq, document.querySelector('.sq.last-to').dataset.sq]",
    );
    assert_eq!(marked, json!([from.to_string(), to.to_string()]));
    // The computer plays orange at level strong; both are in the URL and kept by a reload.
    set_select(session, "cpulevel", "strong");
    set_select(session, "cpuside", "b");
    session.wait_for("the computer's move", "return S.game.at === 2 && S.analysis !== null");
    assert_eq!((session.param("cpu"), session.param("level")), ("b".to_string(), "strong".to_string()));
    session.script("location.reload()");
    session.wait_for("the reloaded game", "return S.game !== null && S.game.at === 2 && S.analysis !== null");
    assert_eq!(session.script("return [cpuside.value, cpulevel.value]"), json!(["b", "strong"]));
    set_select(session, "cpuside", "");
    // The best line: a jump to its third ply, then undo one ply.
    session.click("#showline");
    session.wait_for("the best line", "return document.querySelectorAll('#line li button').length >= 3");
    session.click("#line button[data-ply='3']");
    session.wait_for("the jump", "return S.game.at === 5 && S.analysis !== null");
    session.key(LEFT);
    session.wait_for("one ply back", "return S.game.at === 4 && S.analysis !== null");
    let shot = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/explorer-44.png");
    session.screenshot(&shot);
    eprintln!("browser (4,4) test: {:.1} s", t0.elapsed().as_secs_f64());
}

const LISTED_FN: &str =
    "const listed = () => [...document.querySelectorAll('#movelist .mv')].map(b => b.dataset.move);";

/// The moves played are reviewed: a game whose last move gives a won position away
/// (found through the API on the 3x3 database) shows that ply's blunder mark, with the
/// values before and after and the best move in its tooltip, every other ply's mark, and
/// the summary above the list; the summary's link and the ply's entry go to that ply.
/// The page read without JavaScript has the same marks and summary.
#[test]
fn the_moves_played_are_reviewed_and_a_blunder_is_marked() {
    let page = open_golden("review", None);
    let (session, server) = (&page.session, &page.server);
    session.go(&page.url("/"));
    session.wait_for("the move list", LISTED);
    let start_board = url_board(session);
    // Breadth first from the start: the first won position, a move or more in, with an
    // allowed move that does not win (and does not end the game).
    let mut queue = std::collections::VecDeque::from([(start_board.clone(), None::<String>, Vec::<String>::new())]);
    let mut seen = std::collections::HashSet::new();
    let mut found = None;
    while let Some((board, prev, path)) = queue.pop_front() {
        if !seen.insert((board.clone(), prev.clone())) {
            continue;
        }
        assert!(seen.len() < 3000, "no won position with a move that gives the win away");
        let q = match &prev {
            Some(p) => format!("{board}&prev={p}"),
            None => board.clone(),
        };
        let a = position(server, &q);
        let allowed: Vec<&Value> =
            a["moves"].as_array().unwrap().iter().filter(|m| m["forbidden"] == false && m["plies"] != 1).collect();
        if path.len() >= 2
            && matches!(a["verdict"].as_str(), Some("win" | "immediate-win"))
            && let Some(m) = allowed.iter().find(|m| m["verdict"] != "win")
        {
            found = Some((path, m["move"].as_str().unwrap().to_string()));
            break;
        }
        for m in allowed {
            let mut p = path.clone();
            p.push(m["move"].as_str().unwrap().to_string());
            queue.push_back((m["child"].as_str().unwrap().to_string(), Some(board.clone()), p));
        }
    }
    let (path, blunder) = found.expect("a blunder");
    let game: Vec<String> = path.iter().cloned().chain([blunder.clone()]).collect();
    let n = game.len();
    let (mut s, mut r) = connect(server.addr);
    let (status, body) =
        request(&mut s, &mut r, &format!("/api/v1/review?board={start_board}&moves={}", game.join(",")));
    assert_eq!(status, 200, "{body}");
    let review: Value = serde_json::from_str(&body).unwrap();
    let plies = review["plies"].as_array().unwrap();
    assert_eq!(plies[n - 1]["blunder"], true, "{review}");
    let words = |p: &Value| match p["judgement"].as_str().unwrap() {
        "win-to-loss" => "win→loss",
        "win-to-draw" => "win→draw",
        "draw-to-loss" => "draw→loss",
        _ => "kept",
    };
    let mark_of = |p: &Value| match (p["judgement"].as_str().unwrap(), p["best_played"] == true) {
        ("win-to-loss", _) => "?? win→loss".to_string(),
        ("kept", true) => "✓".to_string(),
        ("kept", false) => "kept".to_string(),
        _ => format!("? {}", words(p)),
    };
    let want_marks: Vec<String> = plies.iter().map(mark_of).collect();
    let blunders: Vec<&Value> = plies.iter().filter(|p| p["blunder"] == true).collect();
    let summary = format!(
        "{} {}: {}",
        blunders.len(),
        if blunders.len() == 1 { "blunder" } else { "blunders" },
        blunders.iter().map(|p| format!("ply {} ({})", p["ply"], words(p))).collect::<Vec<_>>().join(", ")
    );
    let best = plies[n - 1]["best"]["move"].as_str().unwrap();

    // The game up to the blunder, then the blunder played by a click: the script fetches
    // the review of the longer game and marks its last ply.
    session.go(&page.url(&format!("/?board={start_board}&moves={}", path.join(","))));
    session.wait_for("the move list", LISTED);
    session.click(&format!("#movelist .mv[data-move='{blunder}']"));
    let mark_js =
        format!("const m = document.querySelector(\"#played li[data-ply='{n}'] .mark\"); return m && m.textContent");
    session.wait_for("the blunder's mark", &format!("{mark_js} === '{}' ? true : null", want_marks[n - 1]));
    let marks =
        session.script("return [...document.querySelectorAll('#played li[data-ply] .mark')].map(m => m.textContent)");
    assert_eq!(marks, json!(want_marks));
    let (class, title) = (
        session.text(&format!("return document.querySelector(\"#played li[data-ply='{n}'] .mark\").className")),
        session.text(&format!("return document.querySelector(\"#played li[data-ply='{n}'] .mark\").title")),
    );
    assert!(class.contains("blunder"), "{class}");
    assert!(title.contains(" → ") && title.contains(&format!("best {best} (")), "{title}");
    assert_eq!(session.text("return document.getElementById('review').textContent"), summary);
    // The summary's link and the ply's entry both go to the blunder. (The mouse leaves
    // the move list first: its preview of the move under it goes, and the page's height
    // with it.)
    session.hover("#status");
    session.click("#played li.start a");
    session.wait_for("the start", "return S.game.at === 0 && S.analysis !== null");
    session.click(&format!("#review a[data-ply='{n}']"));
    session.wait_for("the blunder from the summary", &format!("return S.game.at === {n} && S.analysis !== null"));
    assert_eq!(url_moves(session), game);
    session.click("#played li.start a");
    session.wait_for("the start", "return S.game.at === 0 && S.analysis !== null");
    session.click(&format!("#played li[data-ply='{n}'] a"));
    session.wait_for("the blunder from its entry", &format!("return S.game.at === {n} && S.analysis !== null"));
    assert_eq!(session.param("at"), "", "the last ply is shown");

    // Without JavaScript: the same marks and summary in the page's HTML.
    let (mut s, mut r) = connect(server.addr);
    let (status, html) = request(&mut s, &mut r, &format!("/?board={start_board}&moves={}&at=0", game.join(",")));
    assert_eq!(status, 200);
    assert!(html.contains(&format!(r#"<span class="{class}" title="#)), "{html}");
    for (k, m) in want_marks.iter().enumerate() {
        assert!(html.contains(&format!("\">{m}</span></li>")), "ply {}: {m}", k + 1);
    }
    assert!(html.contains(&format!(r#"data-ply="{n}">ply {n}</a> ({})"#, words(&plies[n - 1]))), "{html}");
}
