// The explorer of `ostledb serve`. The server renders the page for its URL (board,
// value, every move a link) and puts the game it read there in `<script id="data">`;
// this script takes the page over and plays without reloading. It knows no rules: every
// legal move, its value and the board it leads to come from the JSON API
// (schema/API.md). The page only draws, reads the move notation (`c1-up`, `hole-left`)
// to know which square a move starts from, and keeps the whole game in the URL (the
// start board, the moves played, the ply shown, the computer's side and level), so a
// reload, a shared link, back and forward all give the same game.
"use strict";

const $ = (id) => document.getElementById(id);
const DIRS = { up: [-1, 0], down: [1, 0], left: [0, -1], right: [0, 1] };
const ARROWS = { up: "↑", down: "↓", left: "←", right: "→" };
const NAMES = { a: "Blue", b: "Orange" };

const digits = (b) => (b || "").replace(/-/g, "");
const other = (t) => (t === "a" ? "b" : "a");
const swapDigits = (b) => b.replace(/[12]/g, (c) => (c === "1" ? "2" : "1"));

let DATA = {};
try { DATA = JSON.parse($("data").textContent) || {}; } catch { DATA = {}; }

const S = {
  side: DATA.side || 5,
  start: digits(DATA.start),
  // The game: its start (board, prev, turn: the colour to move), its plies (each the
  // move, the board it was played on, the board after it and, when it ended the game,
  // "win" or "loss" for its mover), the ply shown (`at`; the plies after it are redo),
  // and the computer's side ("" for nobody) and level. Boards are digits only.
  game: null,
  analysis: null,   // the API's answer for the position shown
  selected: null,   // a selected square index
  editing: false,
  edit: null,       // the board being edited and its colour to move
  put: "a",
  fetcher: null,    // the AbortController of the request in flight
  cpuTimer: null,
  token: 0,         // changes with every position shown: answers for an older one are dropped
  line: null,       // the positions of the best line shown, or null
  touch: false,     // the last pointer was a finger: a first tap on a move previews it
  armed: null,      // the move a first tap previewed
  refocus: false,   // a move was played from the keyboard: focus the next list's first move
  review: null,     // the review of a game's moves: { key, data } or { key, error }
  reviewing: null,  // the key of the review being fetched
};

const pretty = (b) => digits(b).match(new RegExp(`.{1,${S.side}}`, "g")).join("-");

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
  const c = cur();
  let q = `board=${pretty(c.board)}`;
  if (c.prev) q += `&prev=${pretty(c.prev)}`;
  return q + (extra || "");
}

// ---- the game ----

const turnAt = (g, k) => (k % 2 === 0 ? g.turn : other(g.turn));

// The position shown: its board, the board before it, the colour to move, the result of
// the last move when it ended the game, and that last ply.
function cur() {
  const g = S.game;
  const turn = turnAt(g, g.at);
  if (g.at === 0) return { board: g.board, prev: g.prev, turn, over: null, last: null };
  const p = g.moves[g.at - 1];
  return { board: p.child, prev: p.board, turn, over: p.ends, last: p };
}

// The URL of a game: `moves` played from its start, ply `at` shown.
function gameUrl(g = S.game, moves = g.moves, at = g.at) {
  let q = `board=${pretty(g.board)}`;
  if (g.prev) q += `&prev=${pretty(g.prev)}`;
  if (g.turn !== "a") q += `&turn=${g.turn}`;
  if (moves.length) q += `&moves=${moves.map((m) => m.move).join(",")}`;
  if (at !== moves.length) q += `&at=${at}`;
  if (g.cpu) q += `&cpu=${g.cpu}&level=${g.level}`;
  return `/?${q}`;
}

// The game after playing move `m` (of the position shown): the plies after it are
// dropped, unless `m` is the next of them (then it is a redo).
function gamePlaying(m) {
  const g = S.game;
  const c = cur();
  const next = g.moves[g.at];
  if (next && next.move === m.move) return { ...g, at: g.at + 1 };
  const ply = { move: m.move, board: c.board, child: digits(m.child), ends: m.plies === 1 ? m.verdict : null };
  return { ...g, moves: g.moves.slice(0, g.at).concat([ply]), at: g.at + 1 };
}

// Show `game` and keep it in the URL: a new history entry, or this one replaced.
function commit(game, push = true) {
  S.game = game;
  const state = { game };
  if (push) history.pushState(state, "", gameUrl());
  else history.replaceState(state, "", gameUrl());
  load();
}

// Undo and redo step one ply; against the computer, to the nearest ply where the other
// side (the player) is to move, back or forward alike.
function undoTarget() {
  const g = S.game;
  if (g.at === 0) return null;
  let k = g.at - 1;
  if (g.cpu) while (k > 0 && turnAt(g, k) === g.cpu) k--;
  return k;
}

function redoTarget() {
  const g = S.game;
  if (g.at >= g.moves.length) return null;
  let k = g.at + 1;
  if (g.cpu) while (k < g.moves.length && turnAt(g, k) === g.cpu) k++;
  return k;
}

function undo() { const k = undoTarget(); if (k !== null) commit({ ...S.game, at: k }); }
function redo() { const k = redoTarget(); if (k !== null) commit({ ...S.game, at: k }); }

function play(m) {
  const c = cur();
  if (c.over || !S.analysis || S.editing || m.forbidden) return;
  commit(gamePlaying(m));
}

function newGame() {
  const g = S.game;
  commit({ board: S.start, prev: null, turn: "a", moves: [], at: 0, cpu: g ? g.cpu : "", level: g ? g.level : "medium" });
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
  const c = S.game && !S.editing ? cur() : null;
  const moves = S.analysis && c && !c.over && !opts.preview ? S.analysis.moves : [];
  const starts = new Set(moves.map((m) => parseMove(m.move, board)).filter(Boolean).map((p) => p.from));
  // The last move played, on the board shown (not on a preview).
  const last = c && c.last && !opts.preview ? parseMove(c.last.move, c.last.board) : null;
  for (let i = 0; i < S.side * S.side; i++) {
    const d = board[i];
    const sq = document.createElement("button");
    sq.className = "sq";
    sq.dataset.sq = i;
    // Squares are a tab stop only in the editor: in play every move is in the list.
    sq.tabIndex = S.editing ? 0 : -1;
    sq.setAttribute("aria-label", squareName(i) + (d === "3" ? " hole" : d === "0" ? " empty" : ` ${NAMES[colourOf(d, turn)]}`));
    // Coordinates as on a chess board: the row numbers down the left edge, the column
    // letters along the bottom.
    if (i % S.side === 0) {
      const s = document.createElement("span");
      s.className = "coord rank";
      s.textContent = S.side - Math.floor(i / S.side);
      sq.appendChild(s);
    }
    if (Math.floor(i / S.side) === S.side - 1) {
      const s = document.createElement("span");
      s.className = "coord file";
      s.textContent = String.fromCharCode(97 + (i % S.side));
      sq.appendChild(s);
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
    if (last && last.from === i) sq.classList.add("last-from");
    if (last && last.to === i) sq.classList.add("last-to");
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
      const p = parseMove(m.move, board);
      if (p.to !== null) el.children[p.to].classList.add("target", `t-${m.verdict === "win" ? "win" : m.verdict}`);
    }
  }
}

function movesFrom(sq) {
  if (!S.analysis) return [];
  const b = cur().board;
  return S.analysis.moves.filter((m) => { const p = parseMove(m.move, b); return p && p.from === sq && !m.forbidden; });
}

function plyText(n) { return `${n} ${n === 1 ? "ply" : "plies"}`; }

function statusOf(a, turn) {
  const who = NAMES[turn];
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
function moveSentence(m, who) {
  if (m.verdict === "draw") return "a draw";
  if (m.plies === 1) return `${NAMES[who]} ${m.verdict === "win" ? "wins" : "loses"} at once: the game ends`;
  return `${NAMES[who]} ${m.verdict === "win" ? "wins" : "loses"} in ${plyText(m.plies)}`;
}

// The result of a finished game, from its last move (replayed, never read from the URL).
function overText(c) {
  const mover = NAMES[other(c.turn)];
  return c.over === "win"
    ? [`Game over: ${mover} wins`, `${mover}'s last move took a piece of ${NAMES[c.turn]}, who has too few left.`]
    : [`Game over: ${NAMES[c.turn]} wins`, `${mover}'s last move pushed off one of ${mover}'s own pieces, and ${mover} has too few left.`];
}

function drawMoves() {
  const box = $("movelist");
  box.innerHTML = "";
  const c = cur();
  if (c.over) {
    const [title, why] = overText(c);
    box.innerHTML = `<div class="over"><strong>${title}</strong><p>${why}</p><p class="muted">No moves: undo (←) to go back, or start a new game.</p></div>`;
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
      // Every allowed move is a link to the game after it: it opens in a new tab, and
      // Tab reaches each one. The forbidden move is not a link.
      const b = document.createElement(m.forbidden ? "span" : "a");
      b.className = "mv" + (m.forbidden ? " forbidden" : "") + (S.armed === m.move ? " armed" : "");
      b.dataset.move = m.move;
      const badges = m.forbidden ? "" : (m.best ? `<span class="badge best">best</span>` : "") +
        (m.plies === 1 ? `<span class="badge end">ends the game</span>` : "") +
        (m.removes !== "nothing" && m.plies !== 1 ? `<span class="badge end">${m.removes === "own" ? "drops own piece" : "captures"}</span>` : "");
      b.innerHTML = `<span><span class="name">${m.move}</span>${badges}</span><span class="val">${m.forbidden ? "cannot be played" : moveValue(m)}</span>`;
      if (m.forbidden) {
        b.title = "Forbidden: it would undo the opponent's last move";
        b.setAttribute("aria-disabled", "true");
        b.addEventListener("click", () => note("That move is forbidden: it would undo the opponent's last move."));
      } else {
        b.href = gameUrl(gamePlaying(m));
        b.title = m.text;
        b.addEventListener("click", (e) => onMoveClick(e, m));
        b.addEventListener("mouseenter", () => preview(m));
        b.addEventListener("mouseleave", () => unpreview());
        b.addEventListener("focus", () => preview(m));
        b.addEventListener("blur", () => unpreview());
      }
      g.appendChild(b);
    }
    box.appendChild(g);
  }
}

// A plain click plays; a click with a modifier (or the middle button) is the browser's:
// the link opens the game after the move in a new tab or window. On a touch screen the
// first tap previews the move and the second plays it.
function onMoveClick(e, m) {
  if (e.button !== 0 || e.ctrlKey || e.metaKey || e.shiftKey || e.altKey) return;
  e.preventDefault();
  if (S.touch && S.armed !== m.move) {
    S.armed = m.move;
    for (const x of document.querySelectorAll("#movelist .mv")) x.classList.toggle("armed", x.dataset.move === m.move);
    preview(m);
    note(`${m.move}: ${moveSentence(m, cur().turn)}. Tap it again to play it.`, true);
    return;
  }
  S.refocus = !S.touch && document.activeElement && document.activeElement.classList.contains("mv");
  play(m);
}

function preview(m) {
  if (S.editing || !S.game) return;
  const c = cur();
  const p = parseMove(m.move, c.board);
  drawBoard(digits(m.child), other(c.turn), { preview: true, from: p && p.from, to: p && p.to, dir: p && p.dir });
  $("turn").innerHTML = `<span class="who">After <b class="mono">${m.move}</b>:</span> <span class="muted">` +
    (m.forbidden ? "forbidden, it would undo the opponent's last move" : moveSentence(m, c.turn)) + "</span>";
}

// Back from a preview to the position (the move list is left as it is, focus included).
function unpreview() {
  if (S.armed) {
    const m = S.analysis && S.analysis.moves.find((x) => x.move === S.armed);
    if (m) return preview(m);
  }
  drawPosition();
}

function drawPosition() {
  if (!S.game) return;
  if (S.editing) {
    drawBoard(S.edit.board, S.edit.turn);
    $("turn").innerHTML = `<span class="who"><span class="dot ${S.edit.turn}"></span> ${NAMES[S.edit.turn]} to move</span>`;
    return;
  }
  const c = cur();
  drawBoard(c.board, c.turn);
  $("turn").innerHTML = c.over ? "" : `<span class="who"><span class="dot ${c.turn}"></span> ${NAMES[c.turn]} to move</span>` +
    (c.prev && S.analysis ? ` <span class="muted small">(${forbiddenNote()})</span>` : "") + fromStart();
}

// A control that is a link: enabled with somewhere to go, else without an address.
function setLink(id, url) {
  const el = $(id);
  if (url) { el.href = url; el.removeAttribute("aria-disabled"); }
  else { el.removeAttribute("href"); el.setAttribute("aria-disabled", "true"); }
}

function render() {
  $("showline").disabled = S.editing || !S.analysis || !!cur().over;
  drawPosition();
  if (S.editing) return;
  const c = cur();
  const u = undoTarget(), r = redoTarget(), best = bestMove();
  setLink("undo", u === null ? null : gameUrl(S.game, S.game.moves, u));
  setLink("redo", r === null ? null : gameUrl(S.game, S.game.moves, r));
  setLink("best", c.over || !best ? null : gameUrl(gamePlaying(best)));
  setLink("newgame", gameUrl({ board: S.start, prev: null, turn: "a", moves: [], at: 0, cpu: S.game.cpu, level: S.game.level }));
  $("jsonlink").href = `/api/v1/position?${query()}`;
  $("cpuside").value = S.game.cpu;
  $("cpulevel").value = S.game.level;
  drawPlayed();
  drawMoves();
  if (S.refocus && S.analysis) {
    S.refocus = false;
    const first = document.querySelector("#movelist a.mv");
    if (first) first.focus({ preventScroll: true });
  }
}

// The moves played, one entry a ply (the ones after the ply shown, greyed, are redo),
// each a link to the game at that ply, with a `.mark`: what the ply did to the result,
// from the game's review (drawReview).
function drawPlayed() {
  const g = S.game;
  const ol = $("played");
  ol.innerHTML = "";
  const entry = (k, html) => {
    const li = document.createElement("li");
    li.className = "ply" + (k === 0 ? " start" : "") + (k > g.at ? " future" : "") + (k === g.at ? " here" : "");
    if (k === g.at) li.setAttribute("aria-current", "step");
    if (k > 0) li.dataset.ply = k;
    const a = document.createElement("a");
    a.href = gameUrl(g, g.moves, k);
    a.innerHTML = html;
    a.addEventListener("click", (e) => {
      if (e.button !== 0 || e.ctrlKey || e.metaKey || e.shiftKey || e.altKey) return;
      e.preventDefault();
      if (k !== S.game.at) commit({ ...S.game, at: k });
    });
    li.appendChild(a);
    if (k > 0) {
      const mark = document.createElement("span");
      mark.className = "mark";
      li.appendChild(mark);
    }
    ol.appendChild(li);
  };
  entry(0, "start");
  g.moves.forEach((p, i) => entry(i + 1, `<span class="n">${i + 1}.</span><span class="dot ${turnAt(g, i)}"></span><span class="mono">${p.move}</span>`));
  const here = ol.querySelector(".here");
  if (here && ol.scrollHeight > ol.clientHeight) ol.scrollTop = here.offsetTop - ol.offsetTop - ol.clientHeight / 2;
  drawReview();
}

// ---- the review of the moves played ----

// The game's start and moves as the review's query (the review is of every move, redo
// ones included, so going back and forth in a game does not fetch it again).
function reviewKey(g) {
  return `board=${pretty(g.board)}${g.prev ? `&prev=${pretty(g.prev)}` : ""}&moves=${g.moves.map((m) => m.move).join(",")}`;
}

// The review of `g` when it is known; else it is fetched (once), and drawn when it comes.
// Its own request: it neither aborts nor is aborted by the position's.
function reviewOf(g) {
  const key = reviewKey(g);
  if (S.review && S.review.key === key) return S.review;
  if (S.reviewing !== key) {
    S.reviewing = key;
    fetch(`/api/v1/review?${key}`)
      .then(async (r) => {
        let body;
        try { body = await r.json(); } catch { body = { error: `the server answered ${r.status} without JSON` }; }
        if (!r.ok) throw new Error(body.error || `HTTP ${r.status}`);
        S.review = { key, data: body };
      })
      .catch((e) => { S.review = { key, error: e.message }; })
      .finally(() => {
        if (S.reviewing === key) S.reviewing = null;
        if (S.game && !S.editing && reviewKey(S.game) === key) drawReview();
      });
  }
  return null;
}

const JUDGED = { "win-to-draw": "win→draw", "win-to-loss": "win→loss", "draw-to-loss": "draw→loss", kept: "kept" };

// A ply's mark and its class (page.rs writes the same without JavaScript).
function markOf(p) {
  if (p.judgement === "win-to-loss") return [`?? ${JUDGED[p.judgement]}`, "blunder severe"];
  if (p.blunder) return [`? ${JUDGED[p.judgement]}`, "blunder"];
  return p.best_played ? ["✓", "best"] : ["kept", "kept"];
}

function valueWords(v) {
  return v.verdict === "immediate-win" ? "wins at once" : moveValue(v);
}

// The tooltip: the value before and after the ply, and the best move with its value.
function markTitle(p) {
  return `${valueWords(p.before)} → ${valueWords(p.after)}; best ${p.best.move} (${valueWords(p.best)})`;
}

// A link to ply `k` of the game, which shows it without reloading.
function plyLink(k, text) {
  const a = document.createElement("a");
  a.href = gameUrl(S.game, S.game.moves, k);
  a.dataset.ply = k;
  a.textContent = text;
  a.addEventListener("click", (e) => {
    if (e.button !== 0 || e.ctrlKey || e.metaKey || e.shiftKey || e.altKey) return;
    e.preventDefault();
    if (k !== S.game.at) commit({ ...S.game, at: k });
  });
  return a;
}

// The marks of the moves played and the line above them: the blunders, each a link.
function drawReview() {
  const g = S.game, box = $("review");
  box.textContent = "";
  if (!g.moves.length) return;
  const r = reviewOf(g);
  if (!r) { box.innerHTML = `<span class="muted">Reviewing the game…</span>`; return; }
  if (r.error) { box.innerHTML = `<span class="muted"></span>`; box.firstChild.textContent = `No review: ${r.error}`; return; }
  for (const p of r.data.plies) {
    const el = document.querySelector(`#played li[data-ply="${p.ply}"] .mark`);
    if (!el) continue;
    const [text, cls] = markOf(p);
    el.textContent = text;
    el.className = `mark ${cls}`;
    el.title = markTitle(p);
  }
  const blunders = r.data.plies.filter((p) => p.blunder);
  if (!blunders.length) { box.textContent = `No blunders in ${plyText(r.data.plies.length)}.`; return; }
  const head = document.createElement("strong");
  head.textContent = `${blunders.length} ${blunders.length === 1 ? "blunder" : "blunders"}`;
  box.append(head, ": ");
  blunders.forEach((p, i) => box.append(i ? ", " : "", plyLink(p.ply, `ply ${p.ply}`), ` (${JUDGED[p.judgement]})`));
}

// The game as text: its start, one ply a line, the result when it is over, its link.
function gameText() {
  const g = S.game;
  const lines = [`Ostle game (ostledb explorer)`, `start ${pretty(g.board)}${g.prev ? ` after ${pretty(g.prev)}` : ""}, ${NAMES[g.turn]} to move`];
  g.moves.forEach((p, i) => lines.push(`${i + 1}. ${NAMES[turnAt(g, i)].padEnd(6)} ${p.move}${p.ends ? (p.ends === "win" ? "  (wins)" : "  (loses)") : ""}`));
  const last = g.moves[g.moves.length - 1];
  if (last && last.ends) {
    const mover = turnAt(g, g.moves.length - 1);
    lines.push(`result: ${NAMES[last.ends === "win" ? mover : other(mover)]} wins`);
  }
  lines.push(`link: ${location.origin}${gameUrl(g, g.moves, g.moves.length)}`);
  return lines.join("\n") + "\n";
}

function saveGame() {
  const blob = new Blob([gameText()], { type: "text/plain" });
  const a = document.createElement("a");
  a.href = URL.createObjectURL(blob);
  a.download = "ostle-game.txt";
  document.body.appendChild(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(a.href), 1000);
  note("The moves played are downloaded as ostle-game.txt.", true);
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

// ---- showing a position ----

async function load(given) {
  const token = ++S.token;
  clearTimeout(S.cpuTimer);
  S.selected = null;
  S.armed = null;
  $("pad").hidden = true;
  S.analysis = null;
  markLine();
  note("");
  const c = cur();
  if (c.over) {
    setStatus(overText(c)[0], "over");
    render();
    return;
  }
  if (given) {
    S.analysis = given;
  } else {
    setStatus("Loading…", "draw");
    render();
    try {
      const a = await api(`/api/v1/position?${query()}`);
      if (token !== S.token) return;
      S.analysis = a;
    } catch (e) {
      if (e.name === "AbortError" || token !== S.token) return;
      setStatus(e.message, "error");
      render();
      return;
    }
  }
  const [text, cls] = statusOf(S.analysis, c.turn);
  setStatus(text, cls);
  render();
  scheduleComputer();
}

// ---- the computer ----

// It moves when it is its turn at the game's last ply; where there are moves to redo it
// waits until asked.
function scheduleComputer() {
  clearTimeout(S.cpuTimer);
  const g = S.game, c = cur();
  const due = g.cpu && g.cpu === c.turn && !c.over && S.analysis && !S.editing;
  const atEnd = g.at === g.moves.length;
  $("cpugo").hidden = !(due && !atEnd);
  if (!due || !atEnd) return;
  computerMove(450);
}

function computerMove(delay) {
  const g = S.game, token = S.token;
  note(`${NAMES[cur().turn]} (the computer, ${g.level}) is thinking…`, true);
  S.cpuTimer = setTimeout(async () => {
    try {
      const r = await api(`/api/v1/play?${query(`&level=${g.level}`)}`);
      if (token !== S.token) return;
      const m = S.analysis && S.analysis.moves.find((x) => x.move === r.move.move);
      if (m) play(m);
    } catch (e) {
      if (e.name !== "AbortError" && token === S.token) note(e.message);
    }
  }, delay);
}

// ---- clicks on the board ----

function clickSquare(i) {
  if (S.editing) return editSquare(i);
  const c = cur();
  if (c.over || !S.analysis) return;
  if (S.selected !== null) {
    const m = movesFrom(S.selected).find((x) => parseMove(x.move, c.board).to === i);
    if (m) return play(m);
  }
  const from = S.analysis.moves.filter((m) => parseMove(m.move, c.board).from === i);
  if (!from.length) { S.selected = null; $("pad").hidden = true; drawPosition(); return; }
  if (from.every((m) => m.forbidden)) note("Its only move is forbidden: it would undo the opponent's last move.");
  else note("");
  S.selected = S.selected === i ? null : i;
  $("pad").hidden = S.selected === null;
  drawPosition();
}

function clickDirection(dir) {
  if (S.selected === null) return;
  const b = cur().board;
  const all = S.analysis.moves.filter((m) => { const p = parseMove(m.move, b); return p.from === S.selected && p.dir === dir; });
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
  clearTimeout(S.cpuTimer);
  if (on) {
    const c = cur();
    S.edit = { board: c.board, turn: c.turn };
    S.line = null;
    markLine();
    note("");
    $("boardtext").value = pretty(S.edit.board);
    editMessage("");
    setStatus("Editing: click squares to place what is selected", "draw");
    $("movelist").innerHTML = `<p class="muted">Editing the board: its moves appear when you press Done.</p>`;
    render();
  } else {
    S.edit = null;
    load(S.analysis || undefined);
  }
}

function editSquare(i) {
  const cells = S.edit.board.split("");
  const put = S.put;
  if (put === "hole") {
    const h = cells.indexOf("3");
    if (h >= 0) cells[h] = "0";
    cells[i] = "3";
  } else if (put === "empty") {
    cells[i] = cells[i] === "3" ? "3" : "0";
  } else {
    cells[i] = put === S.edit.turn ? "1" : "2";
  }
  S.edit.board = cells.join("");
  $("boardtext").value = pretty(S.edit.board);
  editMessage("");
  drawPosition();
  const sq = $("board").children[i];
  if (sq) sq.focus({ preventScroll: true });
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

// The editor's message, beside the board field; an error is brought into view and the
// field focused.
function editMessage(text) {
  const el = $("editmsg");
  el.textContent = text;
  const field = $("boardtext");
  if (text) {
    field.setAttribute("aria-invalid", "true");
    field.focus({ preventScroll: true });
    el.scrollIntoView({ block: "nearest" });
    field.scrollIntoView({ block: "nearest" });
  } else {
    field.removeAttribute("aria-invalid");
  }
}

// Take the board typed in the field (when it differs from the one on the page).
function takeTypedBoard() {
  const text = $("boardtext").value;
  if (digits(text.trim()) === S.edit.board) return true;
  const problem = checkBoardText(text);
  if (problem) { editMessage(`This board cannot be used: ${problem}.`); return false; }
  S.edit.board = digits(text.trim());
  $("boardtext").value = pretty(S.edit.board);
  editMessage("");
  drawPosition();
  return true;
}

async function finishEditing() {
  if (!takeTypedBoard()) return;
  const problem = checkBoardText(pretty(S.edit.board));
  if (problem) { editMessage(`This board cannot be used: ${problem}.`); return; }
  try {
    await api(`/api/v1/position?board=${pretty(S.edit.board)}`);
  } catch (e) {
    if (e.name !== "AbortError") editMessage(`This board cannot be used: ${e.message}`);
    return;
  }
  const { board, turn } = S.edit;
  S.editing = false;
  S.edit = null;
  $("editor").hidden = true;
  $("playctl").hidden = false;
  commit({ board, prev: null, turn, moves: [], at: 0, cpu: S.game.cpu, level: S.game.level });
}

// ---- the best line ----

async function showLine() {
  try {
    const r = await api(`/api/v1/line?${query("&max_plies=200")}`);
    const ol = $("line");
    ol.innerHTML = "";
    const c = cur();
    let turn = c.turn;
    const base = S.game;
    const plies = [];
    const positions = [{ board: c.board, prev: c.prev, turn }];
    r.line.forEach((step, k) => {
      const m = step.move;
      const before = digits(step.board);
      plies.push({ move: m.move, board: before, child: digits(m.child), ends: m.plies === 1 ? m.verdict : null });
      positions.push({ board: digits(m.child), prev: before, turn: other(turn) });
      const li = document.createElement("li");
      const b = document.createElement("button");
      b.dataset.ply = k + 1;
      b.innerHTML = `<span class="n">${k + 1}.</span><span class="dot ${turn}"></span><span class="mono">${m.move}</span>`;
      b.title = `${NAMES[turn]} ${moveValue(m)}: go to the position after this move`;
      const mover = turn;
      // A jump plays the line's moves up to this one; the rest of the line is redo, and
      // undo takes back one ply at a time.
      b.addEventListener("click", () => {
        const moves = base.moves.slice(0, base.at).concat(plies);
        commit({ ...S.game, moves, at: base.at + k + 1 });
      });
      b.addEventListener("mouseenter", () => {
        if (S.editing) return;
        const p = parseMove(m.move, before);
        drawBoard(digits(m.child), other(mover), { preview: true, from: p && p.from, to: p && p.to, dir: p && p.dir });
        $("turn").innerHTML = `<span class="who">After ply ${k + 1}, <b class="mono">${m.move}</b>:</span> <span class="muted">${moveSentence(m, mover)}</span>`;
      });
      b.addEventListener("mouseleave", () => drawPosition());
      li.appendChild(b);
      ol.appendChild(li);
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
    const [text] = statusOf(r, c.turn);
    $("linetitle").textContent = r.verdict === "draw" ? "Best play: a draw" : `Best play: ${text.replace(" to move", "")}`;
    S.line = positions;
    $("linebox").hidden = false;
    markLine();
    $("linebox").scrollIntoView({ block: "nearest", behavior: "smooth" });
  } catch (e) {
    if (e.name !== "AbortError") note(e.message);
  }
}

// Keeps the best line shown while the position is on it, with the current ply marked.
function markLine() {
  if (!S.line || !S.game) { $("linebox").hidden = true; return; }
  const c = cur();
  const k = S.line.findIndex((p) => p.board === c.board && p.prev === c.prev && p.turn === c.turn);
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
  note(`${what} copied${text.includes("\n") ? "." : `: ${text}`}`, true);
}

// ---- start ----

// A link control: a plain click runs `f` instead of following the link.
function onLink(id, f) {
  $(id).addEventListener("click", (e) => {
    if (e.button !== 0 || e.ctrlKey || e.metaKey || e.shiftKey || e.altKey) return;
    e.preventDefault();
    if ($(id).hasAttribute("href")) f();
  });
}

function wire() {
  document.addEventListener("pointerdown", (e) => { S.touch = e.pointerType === "touch"; }, true);
  $("board").addEventListener("click", (e) => {
    const sq = e.target.closest(".sq");
    if (sq) clickSquare(parseInt(sq.dataset.sq, 10));
  });
  for (const b of document.querySelectorAll("#pad button")) b.addEventListener("click", () => clickDirection(b.dataset.dir));
  onLink("undo", undo);
  onLink("redo", redo);
  onLink("best", () => { const m = bestMove(); if (m) play(m); });
  onLink("newgame", newGame);
  $("showline").addEventListener("click", showLine);
  $("hideline").addEventListener("click", () => { S.line = null; markLine(); });
  $("copyboard").addEventListener("click", () => copy(pretty(cur().board), "Board"));
  $("copylink").addEventListener("click", () => copy(location.href, "Link"));
  $("copygame").addEventListener("click", () => copy(gameText(), "The moves played"));
  $("savegame").addEventListener("click", saveGame);
  $("edit").addEventListener("click", () => setEditing(true));
  $("editdone").addEventListener("click", finishEditing);
  $("editcancel").addEventListener("click", () => setEditing(false));
  $("boardtext").addEventListener("keydown", (e) => { if (e.key === "Enter") $("applytext").click(); });
  $("swapsides").addEventListener("click", () => {
    if (!takeTypedBoard()) return;
    S.edit.board = swapDigits(S.edit.board);
    S.edit.turn = other(S.edit.turn);
    $("boardtext").value = pretty(S.edit.board);
    drawPosition();
  });
  $("clear").addEventListener("click", () => {
    const n = S.side * S.side;
    S.edit.board = "0".repeat(Math.floor(n / 2)) + "3" + "0".repeat(n - Math.floor(n / 2) - 1);
    $("boardtext").value = pretty(S.edit.board);
    editMessage("");
    drawPosition();
  });
  $("applytext").addEventListener("click", takeTypedBoard);
  for (const b of document.querySelectorAll(".palette button")) {
    b.addEventListener("click", () => {
      S.put = b.dataset.put;
      for (const x of document.querySelectorAll(".palette button")) {
        x.classList.toggle("sel", x === b);
        x.setAttribute("aria-checked", String(x === b));
      }
    });
  }
  $("cpuside").addEventListener("change", () => commit({ ...S.game, cpu: $("cpuside").value }, false));
  $("cpulevel").addEventListener("change", () => commit({ ...S.game, level: $("cpulevel").value }, false));
  $("cpugo").addEventListener("click", () => computerMove(0));
  document.addEventListener("keydown", (e) => {
    S.touch = false;
    if (e.target.closest("input, select, textarea") || e.ctrlKey || e.metaKey || e.altKey) return;
    // In the editor the keys edit: arrows and space neither leave it nor play.
    if (S.editing) {
      if (e.key === "Escape") setEditing(false);
      return;
    }
    const mv = e.target.closest && e.target.closest("#movelist a.mv");
    if (e.key === " " && mv) {
      // Space plays the move focused, as Enter does.
      e.preventDefault();
      const m = S.analysis && S.analysis.moves.find((x) => x.move === mv.dataset.move);
      if (m) { S.refocus = true; play(m); }
    } else if (e.key === " ") { e.preventDefault(); const m = bestMove(); if (m && !cur().over) play(m); }
    else if (e.key === "ArrowLeft") { e.preventDefault(); undo(); }
    else if (e.key === "ArrowRight") { e.preventDefault(); redo(); }
    else if (e.key === "Escape") { S.selected = null; S.armed = null; $("pad").hidden = true; note(""); drawPosition(); drawMoves(); }
  });
  // Space on a focused button would also click it when the key comes up: the keydown
  // above has handled it.
  document.addEventListener("keyup", (e) => {
    if (e.key === " " && !S.editing && !e.target.closest("input, select, textarea")) e.preventDefault();
  });
  window.addEventListener("popstate", (e) => {
    if (!e.state || !e.state.game) { location.reload(); return; }
    if (S.editing) { S.editing = false; S.edit = null; $("editor").hidden = true; $("playctl").hidden = false; }
    S.game = e.state.game;
    load();
  });
}

function start() {
  if (!DATA.game) return; // the server said why in the status line
  const g = DATA.game;
  S.game = {
    board: digits(g.board), prev: g.prev ? digits(g.prev) : null, turn: g.turn,
    moves: g.moves.map((p) => ({ move: p.move, board: digits(p.board), child: digits(p.child), ends: p.ends })),
    at: g.at, cpu: g.cpu, level: g.level,
  };
  if (DATA.review) S.review = { key: reviewKey(S.game), data: DATA.review };
  wire();
  history.replaceState({ game: S.game }, "", gameUrl());
  load(DATA.position || undefined);
  if (DATA.error) note(DATA.error);
}

start();
