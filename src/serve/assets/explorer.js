// The explorer of `ostledb serve`. It knows no rules: every legal move, its value and
// the board it leads to come from the JSON API (schema/API.md). The page only draws,
// reads the move notation (`c1-up`, `hole-left`) to know which square a move starts
// from, and keeps the position in the URL (board, prev, turn), so every position is a
// link and the browser's back and forward buttons walk the game.
"use strict";

const $ = (id) => document.getElementById(id);
const DIRS = { up: [-1, 0], down: [1, 0], left: [0, -1], right: [0, 1] };
const ARROWS = { up: "↑", down: "↓", left: "←", right: "→" };
const NAMES = { a: "Blue", b: "Orange" };

const S = {
  side: 5,
  stats: null,
  board: "",        // digits only: 1 = side to move
  prev: null,       // digits only, or null
  turn: "a",        // whose colour the side to move has
  over: null,       // after a move that ended the game: "win" or "loss" (for the mover)
  analysis: null,   // the API's answer for the position
  selected: null,   // a selected square index
  depth: 0,         // this entry's depth in the page's own history
  forward: 0,       // entries ahead of it (redo)
  editing: false,
  put: "a",
  fetcher: null,    // the AbortController of the request in flight
  cpuTimer: null,
  line: null,       // the positions of the winning line shown, or null
  cpuPaused: false, // after back/undo the computer waits until asked or until a move is played
  trail: [],        // the colour to move at each depth of the page's history (for undo against the computer)
};

const digits = (b) => b.replace(/-/g, "");
const pretty = (b) => digits(b).match(new RegExp(`.{1,${S.side}}`, "g")).join("-");
const other = (t) => (t === "a" ? "b" : "a");
const swapDigits = (b) => b.replace(/[12]/g, (c) => (c === "1" ? "2" : "1"));

// ---- the API ----

async function api(path) {
  if (S.fetcher) S.fetcher.abort();
  const ctl = new AbortController();
  S.fetcher = ctl;
  $("status").classList.add("loading");
  try {
    const r = await fetch(path, { signal: ctl.signal });
    let body;
    try { body = await r.json(); } catch { body = { error: `the server answered ${r.status} without JSON` }; }
    if (!r.ok) throw new Error(body.error || `HTTP ${r.status}`);
    return body;
  } catch (e) {
    if (e.name === "AbortError") throw e;
    if (e instanceof TypeError) throw new Error(`network error: ${e.message}`);
    throw e;
  } finally {
    if (S.fetcher === ctl) { S.fetcher = null; $("status").classList.remove("loading"); }
  }
}

function query(extra) {
  let q = `board=${pretty(S.board)}`;
  if (S.prev) q += `&prev=${pretty(S.prev)}`;
  return q + (extra || "");
}

// ---- notation ----

// The square a move starts from (row 0 = the first row written) and its direction;
// `hole` moves start from the hole.
function parseMove(name, board) {
  const m = /^(?:([a-z])(\d+)|hole)-(up|down|left|right)$/.exec(name);
  if (!m) return null;
  let sq;
  if (m[1]) {
    const col = m[1].charCodeAt(0) - 97;
    const row = S.side - parseInt(m[2], 10);
    sq = row * S.side + col;
  } else {
    sq = board.indexOf("3");
  }
  const [dr, dc] = DIRS[m[3]];
  const r = Math.floor(sq / S.side) + dr, c = (sq % S.side) + dc;
  const to = r >= 0 && r < S.side && c >= 0 && c < S.side ? r * S.side + c : null;
  return { from: sq, dir: m[3], to };
}

function squareName(i) {
  return String.fromCharCode(97 + (i % S.side)) + (S.side - Math.floor(i / S.side));
}

// ---- drawing ----

function colourOf(d, turn) {
  if (d === "1") return turn;
  if (d === "2") return other(turn);
  return null;
}

function drawBoard(board, turn, opts = {}) {
  const el = $("board");
  el.style.gridTemplateColumns = `repeat(${S.side}, 1fr)`;
  el.innerHTML = "";
  el.classList.toggle("preview", !!opts.preview);
  const moves = S.analysis && !S.over && !opts.preview ? S.analysis.moves : [];
  const starts = new Set(moves.map((m) => parseMove(m.move, board)).filter(Boolean).map((p) => p.from));
  for (let i = 0; i < S.side * S.side; i++) {
    const d = board[i];
    const sq = document.createElement("button");
    sq.className = "sq";
    sq.dataset.sq = i;
    sq.setAttribute("aria-label", squareName(i) + (d === "3" ? " hole" : d === "0" ? " empty" : ` ${NAMES[colourOf(d, turn)]}`));
    // Coordinates as on a chess board: the row numbers down the left edge, the column
    // letters along the bottom.
    if (i % S.side === 0) {
      const c = document.createElement("span");
      c.className = "coord rank";
      c.textContent = S.side - Math.floor(i / S.side);
      sq.appendChild(c);
    }
    if (Math.floor(i / S.side) === S.side - 1) {
      const c = document.createElement("span");
      c.className = "coord file";
      c.textContent = String.fromCharCode(97 + (i % S.side));
      sq.appendChild(c);
    }
    if (d === "3") {
      const h = document.createElement("div");
      h.className = "holemark";
      sq.appendChild(h);
    } else if (d === "1" || d === "2") {
      const p = document.createElement("div");
      p.className = `piece ${colourOf(d, turn)}`;
      sq.appendChild(p);
    }
    if (S.editing || starts.has(i)) sq.classList.add("movable");
    if (opts.from === i) {
      sq.classList.add("from");
      const a = document.createElement("span");
      a.className = `arrow ${opts.dir}`;
      a.textContent = ARROWS[opts.dir];
      sq.appendChild(a);
    }
    if (opts.to === i) sq.classList.add("to");
    if (S.selected === i && !opts.preview) sq.classList.add("selected");
    el.appendChild(sq);
  }
  if (S.selected !== null && !opts.preview) {
    for (const m of movesFrom(S.selected)) {
      const p = parseMove(m.move, S.board);
      if (p.to !== null) el.children[p.to].classList.add("target", `t-${m.verdict === "win" ? "win" : m.verdict}`);
    }
  }
}

function movesFrom(sq) {
  if (!S.analysis) return [];
  return S.analysis.moves.filter((m) => { const p = parseMove(m.move, S.board); return p && p.from === sq && !m.forbidden; });
}

function plyText(n) { return `${n} ${n === 1 ? "ply" : "plies"}`; }

function statusOf(a) {
  const who = NAMES[S.turn];
  switch (a.verdict) {
    case "immediate-win": return [`${who} to move wins at once (a capture ends the game)`, "win"];
    case "win": return [`${who} to move wins in ${plyText(a.plies)}`, "win"];
    case "loss": return [`${who} to move loses in ${plyText(a.plies)}`, "loss"];
    default: return [`Draw: neither side can force a win`, "draw"];
  }
}

function setStatus(text, cls) {
  const el = $("status");
  document.title = `${text} · Ostle explorer`;
  el.textContent = text;
  el.className = `status ${cls || ""}`;
}

function moveValue(m) {
  if (m.plies === 1) return m.verdict === "win" ? "wins at once" : "loses at once";
  if (m.verdict === "draw") return "draw";
  return `${m.verdict === "win" ? "wins" : "loses"} in ${m.plies}`;
}

// What a move means for the side `who` that plays it.
function moveSentence(m, who = S.turn) {
  if (m.verdict === "draw") return "a draw";
  if (m.plies === 1) return `${NAMES[who]} ${m.verdict === "win" ? "wins" : "loses"} at once: the game ends`;
  return `${NAMES[who]} ${m.verdict === "win" ? "wins" : "loses"} in ${plyText(m.plies)}`;
}

// The result of a finished game, from the URL's `over` (the last mover won or lost).
function overText() {
  const mover = NAMES[other(S.turn)];
  return S.over === "win"
    ? [`Game over: ${mover} wins`, `${mover}'s last move took a piece of ${NAMES[S.turn]}, who has too few left.`]
    : [`Game over: ${NAMES[S.turn]} wins`, `${mover}'s last move pushed off one of ${mover}'s own pieces, and ${mover} has too few left.`];
}

function drawMoves() {
  const box = $("movelist");
  box.innerHTML = "";
  if (S.over) {
    const [title, why] = overText();
    box.innerHTML = `<div class="over"><strong>${title}</strong><p>${why}</p><p class="muted">No moves: undo (←) to go back.</p></div>`;
    return;
  }
  if (!S.analysis) return;
  const groups = [["win", "Winning"], ["draw", "Drawing"], ["loss", "Losing"], ["forbidden", "Forbidden"]];
  for (const [kind, title] of groups) {
    const list = S.analysis.moves.filter((m) => kind === "forbidden" ? m.forbidden : !m.forbidden && m.verdict === kind);
    if (!list.length) continue;
    const g = document.createElement("div");
    g.className = `group ${kind}`;
    g.innerHTML = `<h3>${title} (${list.length})</h3>` +
      (kind === "forbidden" ? `<p class="why muted">It would undo the opponent's last move, which the rules do not allow.</p>` : "");
    for (const m of list) {
      const b = document.createElement("button");
      b.className = "mv" + (m.forbidden ? " forbidden" : "");
      b.dataset.move = m.move;
      const badges = m.forbidden ? "" : (m.best ? `<span class="badge best">best</span>` : "") +
        (m.plies === 1 ? `<span class="badge end">ends the game</span>` : "") +
        (m.removes !== "nothing" && m.plies !== 1 ? `<span class="badge end">${m.removes === "own" ? "drops own piece" : "captures"}</span>` : "");
      b.innerHTML = `<span><span class="name">${m.move}</span>${badges}</span><span class="val">${m.forbidden ? "cannot be played" : moveValue(m)}</span>`;
      if (m.forbidden) {
        b.title = "Forbidden: it would undo the opponent's last move";
        b.setAttribute("aria-disabled", "true");
      } else {
        b.title = m.text;
      }
      b.addEventListener("click", () => m.forbidden ? note("That move is forbidden: it would undo the opponent's last move.") : play(m));
      b.addEventListener("mouseenter", () => preview(m));
      b.addEventListener("mouseleave", () => render());
      b.addEventListener("focus", () => preview(m));
      b.addEventListener("blur", () => render());
      g.appendChild(b);
    }
    box.appendChild(g);
  }
}

function preview(m) {
  if (S.editing) return;
  const p = parseMove(m.move, S.board);
  drawBoard(digits(m.child), other(S.turn), { preview: true, from: p && p.from, to: p && p.to, dir: p && p.dir });
  $("turn").innerHTML = `<span class="who">After <b class="mono">${m.move}</b>:</span> <span class="muted">` +
    (m.forbidden ? "forbidden, it would undo the opponent's last move" : moveSentence(m)) + "</span>";
}

function render() {
  $("showline").disabled = S.editing || !!S.over || !S.analysis;
  if (S.editing) {
    drawBoard(S.board, S.turn);
    $("turn").innerHTML = `<span class="who"><span class="dot ${S.turn}"></span> ${NAMES[S.turn]} to move</span>`;
    return;
  }
  drawBoard(S.board, S.turn);
  const t = $("turn");
  t.innerHTML = S.over ? "" : `<span class="who"><span class="dot ${S.turn}"></span> ${NAMES[S.turn]} to move</span>` +
    (S.prev ? ` <span class="muted small">(${forbiddenNote()})</span>` : "") +
    fromStart();
  $("undo").disabled = S.depth === 0;
  $("redo").disabled = S.forward === 0;
  $("best").disabled = !!S.over || !bestMove();
  $("jsonlink").href = `/api/v1/position?${query()}`;
  drawMoves();
}

// The breadth-first distance from the initial position, when the database stores it.
function fromStart() {
  const f = S.analysis && S.analysis.from_start;
  if (!f || typeof f !== "object") return "";
  const d = f.depth != null ? `${plyText(f.depth)} from the start`
    : f.complete ? "not reachable from the start" : `not within ${plyText(f.searched_to)} of the start`;
  return ` <span class="muted small">· ${d}</span>`;
}

function forbiddenNote() {
  const f = S.analysis && S.analysis.moves.find((m) => m.forbidden);
  return f ? `${f.move} is forbidden: it would undo the last move` : "no move undoes the last one";
}

function bestMove() {
  return S.analysis && S.analysis.moves.find((m) => m.best && !m.forbidden);
}

function note(text, ok) {
  const el = $("message");
  el.textContent = text || "";
  el.className = "msg" + (ok ? " ok" : "");
}

// ---- positions and history ----

function urlOf() {
  const p = new URLSearchParams();
  p.set("board", pretty(S.board));
  if (S.prev) p.set("prev", pretty(S.prev));
  if (S.turn !== "a") p.set("turn", S.turn);
  if (S.over) p.set("over", S.over);
  return `/?${p.toString()}`;
}

async function load() {
  S.selected = null;
  $("pad").hidden = true;
  S.analysis = null;
  markLine();
  note("");
  if (S.over) {
    setStatus(overText()[0], "over");
    render();
    return;
  }
  setStatus("Loading…", "draw");
  render();
  try {
    S.analysis = await api(`/api/v1/position?${query()}`);
    const [text, cls] = statusOf(S.analysis);
    setStatus(text, cls);
  } catch (e) {
    if (e.name === "AbortError") return;
    setStatus(e.message, "error");
  }
  render();
  scheduleComputer();
}

function go(next, push = true) {
  Object.assign(S, next);
  if (push) {
    S.depth += 1;
    S.forward = 0;
    history.pushState({ depth: S.depth }, "", urlOf());
    S.trail.length = S.depth;
  }
  S.trail[S.depth] = S.turn;
  load();
}

// Undo one ply; against the computer, back to the last position where the player was
// to move (so the computer does not answer the undo at once).
function undo() {
  if (S.depth === 0) return;
  const cpu = $("cpuside").value;
  const n = cpu && S.depth >= 2 && S.trail[S.depth - 1] === cpu ? 2 : 1;
  history.go(-n);
}

function redo() {
  if (S.forward > 0) history.forward();
}

function play(m) {
  if (S.over || !S.analysis) return;
  S.cpuPaused = false;
  go({ prev: S.board, board: digits(m.child), turn: other(S.turn), over: m.plies === 1 ? m.verdict : null });
}

function readUrl() {
  const p = new URLSearchParams(location.search);
  const b = p.get("board");
  S.board = b ? digits(b) : startBoard();
  S.prev = p.get("prev") ? digits(p.get("prev")) : null;
  S.turn = p.get("turn") === "b" ? "b" : "a";
  const over = p.get("over");
  S.over = over === "win" || over === "loss" ? over : null;
}

function startBoard() {
  const st = S.stats;
  const n = S.side;
  const full = st.max_pieces >= 2 * st.start_pieces;
  let pieces = st.start_pieces;
  if (!full) {
    let best = 0;
    for (const ph of st.phases) if (ph.player === ph.opponent && ph.player > best) best = ph.player;
    pieces = best || Math.min(...st.phases.map((ph) => ph.player));
  }
  const cells = Array(n * n).fill("0");
  for (let c = 0; c < pieces; c++) { cells[c] = "2"; cells[(n - 1) * n + c] = "1"; }
  cells[Math.floor(n / 2) * n + Math.floor(n / 2)] = "3";
  return cells.join("");
}

// ---- the computer ----

function scheduleComputer() {
  clearTimeout(S.cpuTimer);
  const side = $("cpuside").value;
  const due = side && side === S.turn && !S.over && S.analysis && !S.editing;
  $("cpugo").hidden = !(due && S.cpuPaused);
  if (!due || S.cpuPaused) return;
  note(`${NAMES[S.turn]} (the computer, ${$("cpulevel").value}) is thinking…`, true);
  S.cpuTimer = setTimeout(async () => {
    try {
      const r = await api(`/api/v1/play?${query(`&level=${$("cpulevel").value}`)}`);
      const m = S.analysis && S.analysis.moves.find((x) => x.move === r.move.move);
      if (m) play(m);
    } catch (e) {
      if (e.name !== "AbortError") note(e.message);
    }
  }, 450);
}

// ---- clicks on the board ----

function clickSquare(i) {
  if (S.editing) return editSquare(i);
  if (S.over || !S.analysis) return;
  if (S.selected !== null) {
    const m = movesFrom(S.selected).find((x) => parseMove(x.move, S.board).to === i);
    if (m) return play(m);
  }
  const from = S.analysis.moves.filter((m) => parseMove(m.move, S.board).from === i);
  if (!from.length) { S.selected = null; render(); return; }
  if (from.every((m) => m.forbidden)) note("Its only move is forbidden: it would undo the opponent's last move.");
  else note("");
  S.selected = S.selected === i ? null : i;
  $("pad").hidden = S.selected === null;
  render();
}

function clickDirection(dir) {
  if (S.selected === null) return;
  const all = S.analysis.moves.filter((m) => { const p = parseMove(m.move, S.board); return p.from === S.selected && p.dir === dir; });
  if (!all.length) return note(`${squareName(S.selected)} cannot move ${dir}.`);
  if (all[0].forbidden) return note("That move is forbidden: it would undo the opponent's last move.");
  play(all[0]);
}

// ---- the editor ----

function setEditing(on) {
  S.editing = on;
  $("editor").hidden = !on;
  $("playctl").hidden = on;
  $("pad").hidden = true;
  S.selected = null;
  if (on) {
    S.beforeEdit = { board: S.board, turn: S.turn };
    S.line = null;
    markLine();
    note("");
    clearTimeout(S.cpuTimer);
    $("boardtext").value = pretty(S.board);
    $("editmsg").textContent = "";
    setStatus("Editing: click squares to place what is selected", "draw");
    $("movelist").innerHTML = `<p class="muted">Editing the board: its moves appear when you press Done.</p>`;
  }
  render();
}

function editSquare(i) {
  const cells = S.board.split("");
  const put = S.put;
  if (put === "hole") {
    const h = cells.indexOf("3");
    if (h >= 0) cells[h] = "0";
    cells[i] = "3";
  } else if (put === "empty") {
    cells[i] = cells[i] === "3" ? "3" : "0";
  } else {
    cells[i] = put === S.turn ? "1" : "2";
  }
  S.board = cells.join("");
  $("boardtext").value = pretty(S.board);
  render();
}

// Checks the page can make without rules: the shape of the text. The server says the rest.
function checkBoardText(text) {
  const d = digits(text.trim());
  if (d.length !== S.side * S.side) return `a board has ${S.side * S.side} digits (with - anywhere); this has ${d.length}`;
  const bad = /[^0-3]/.exec(d);
  if (bad) return `'${bad[0]}' is not 0, 1, 2 or 3`;
  const holes = d.split("3").length - 1;
  if (holes !== 1) return `a board has exactly one hole (3); this has ${holes}`;
  return null;
}

async function finishEditing() {
  const problem = checkBoardText(pretty(S.board));
  if (problem) { $("editmsg").textContent = problem; return; }
  try {
    await api(`/api/v1/position?board=${pretty(S.board)}`);
  } catch (e) {
    if (e.name !== "AbortError") $("editmsg").textContent = e.message;
    return;
  }
  setEditing(false);
  go({ prev: null, over: null });
}

// ---- the principal variation ----

async function showLine() {
  try {
    const r = await api(`/api/v1/line?${query("&max_plies=200")}`);
    const ol = $("line");
    ol.innerHTML = "";
    let turn = S.turn;
    let prev = S.prev;
    const plies = [{ board: S.board, prev: S.prev, turn: S.turn, over: null }];
    r.line.forEach((step, k) => {
      const m = step.move;
      const before = digits(step.board);
      const at = { board: digits(m.child), prev: before, turn: other(turn), over: m.plies === 1 ? m.verdict : null };
      plies.push(at);
      const li = document.createElement("li");
      const b = document.createElement("button");
      b.dataset.ply = k + 1;
      b.innerHTML = `<span class="n">${k + 1}.</span><span class="dot ${turn}"></span><span class="mono">${m.move}</span>`;
      b.title = `${NAMES[turn]} ${moveValue(m)}: go to the position after this move`;
      const mover = turn;
      b.addEventListener("click", () => go({ ...at }));
      b.addEventListener("mouseenter", () => {
        if (S.editing) return;
        const p = parseMove(m.move, before);
        drawBoard(at.board, at.turn, { preview: true, from: p && p.from, to: p && p.to, dir: p && p.dir });
        $("turn").innerHTML = `<span class="who">After ply ${k + 1}, <b class="mono">${m.move}</b>:</span> <span class="muted">${moveSentence(m, mover)}</span>`;
      });
      b.addEventListener("mouseleave", () => render());
      li.appendChild(b);
      ol.appendChild(li);
      prev = before;
      turn = other(turn);
      if (k === r.line.length - 1) {
        const more = document.createElement("li");
        more.className = "muted end";
        more.textContent = m.plies === 1
          ? (m.verdict === "win" ? `${NAMES[mover]} wins` : `${NAMES[other(mover)]} wins`)
          : r.verdict === "draw" ? "… a draw goes on for ever" : "…";
        ol.appendChild(more);
      }
    });
    const [text] = statusOf(r);
    $("linetitle").textContent = r.verdict === "draw" ? "Best play: a draw" : `Best play: ${text.replace(" to move", "")}`;
    S.line = plies;
    $("linebox").hidden = false;
    markLine();
    $("linebox").scrollIntoView({ block: "nearest", behavior: "smooth" });
  } catch (e) {
    if (e.name !== "AbortError") note(e.message);
  }
}

// Keeps the winning line shown while the position is on it, with the current ply marked.
function markLine() {
  if (!S.line) { $("linebox").hidden = true; return; }
  const k = S.line.findIndex((p) => p.board === S.board && p.prev === S.prev && p.turn === S.turn);
  if (k < 0) { S.line = null; $("linebox").hidden = true; return; }
  for (const b of document.querySelectorAll("#line button")) b.classList.toggle("here", +b.dataset.ply === k);
}

// ---- copying ----

async function copy(text, what) {
  try {
    await navigator.clipboard.writeText(text);
  } catch {
    const t = document.createElement("textarea");
    t.value = text;
    document.body.appendChild(t);
    t.select();
    try { document.execCommand("copy"); } catch { /* shown below */ }
    t.remove();
  }
  note(`${what} copied: ${text}`, true);
}

// ---- start ----

function wire() {
  $("board").addEventListener("click", (e) => {
    const sq = e.target.closest(".sq");
    if (sq) clickSquare(parseInt(sq.dataset.sq, 10));
  });
  for (const b of document.querySelectorAll("#pad button")) b.addEventListener("click", () => clickDirection(b.dataset.dir));
  $("undo").addEventListener("click", undo);
  $("redo").addEventListener("click", redo);
  $("best").addEventListener("click", () => { const m = bestMove(); if (m) play(m); });
  $("showline").addEventListener("click", showLine);
  $("hideline").addEventListener("click", () => { S.line = null; markLine(); });
  $("copyboard").addEventListener("click", () => copy(pretty(S.board), "Board"));
  $("copylink").addEventListener("click", () => copy(location.href, "Link"));
  $("edit").addEventListener("click", () => setEditing(true));
  $("editdone").addEventListener("click", finishEditing);
  $("editcancel").addEventListener("click", () => {
    Object.assign(S, S.beforeEdit);
    setEditing(false);
    load();
  });
  $("boardtext").addEventListener("keydown", (e) => { if (e.key === "Enter") $("applytext").click(); });
  $("swapsides").addEventListener("click", () => { S.board = swapDigits(S.board); S.turn = other(S.turn); $("boardtext").value = pretty(S.board); render(); });
  $("clear").addEventListener("click", () => {
    S.board = "0".repeat(S.side * S.side);
    S.board = S.board.slice(0, Math.floor(S.side * S.side / 2)) + "3" + S.board.slice(Math.floor(S.side * S.side / 2) + 1);
    $("boardtext").value = pretty(S.board);
    render();
  });
  $("applytext").addEventListener("click", () => {
    const problem = checkBoardText($("boardtext").value);
    if (problem) { $("editmsg").textContent = problem; return; }
    $("editmsg").textContent = "";
    S.board = digits($("boardtext").value.trim());
    render();
  });
  for (const b of document.querySelectorAll(".palette button")) {
    b.addEventListener("click", () => {
      S.put = b.dataset.put;
      for (const x of document.querySelectorAll(".palette button")) x.classList.toggle("sel", x === b);
    });
  }
  $("cpuside").addEventListener("change", () => { S.cpuPaused = false; scheduleComputer(); });
  $("cpugo").addEventListener("click", () => { S.cpuPaused = false; scheduleComputer(); });
  document.addEventListener("keydown", (e) => {
    if (e.target.closest("input, select, textarea") || e.ctrlKey || e.metaKey || e.altKey) return;
    if (e.key === " " && !S.editing) { e.preventDefault(); $("best").click(); }
    else if (e.key === "ArrowLeft") { e.preventDefault(); $("undo").click(); }
    else if (e.key === "ArrowRight") { e.preventDefault(); $("redo").click(); }
    else if (e.key === "Escape") { S.selected = null; $("pad").hidden = true; render(); }
  });
  // Space on a focused button would also click it when the key comes up (undo, say):
  // the key is the page's.
  document.addEventListener("keyup", (e) => {
    if (e.key === " " && !S.editing && !e.target.closest("input, select, textarea")) e.preventDefault();
  });
  window.addEventListener("popstate", (e) => {
    const depth = (e.state && e.state.depth) || 0;
    S.forward = Math.max(0, S.forward + (S.depth - depth));
    S.depth = depth;
    if (S.editing) setEditing(false);
    readUrl();
    S.trail[S.depth] = S.turn;
    S.cpuPaused = true;
    $("pad").hidden = true;
    load();
  });
}

async function start() {
  wire();
  try {
    S.stats = await api("/api/v1/stats");
  } catch (e) {
    setStatus(`Cannot reach the database: ${e.message}`, "error");
    return;
  }
  S.side = S.stats.side;
  const held = S.stats.phases.map((p) => p.phase).join(", ");
  $("dbinfo").textContent = `${S.side}×${S.side} board · database of ${held} · ostledb ${S.stats.ostledb}`;
  readUrl();
  history.replaceState({ depth: 0 }, "", urlOf());
  S.trail[0] = S.turn;
  load();
}

start();
