"""Issue 63: a position made by ``play`` carries its last move, and every front end
answers it alike; ``moves[0]`` is always a move that can be played; the package's rough
edges (codes as boards, ``KeyError``, the line's default, ``probe_many``'s shape)."""

import http.client
import json
import pickle
import random
import subprocess
import time
from collections import defaultdict

import numpy as np
import pytest

import ostledb
from conftest import cli_answers, random_boards

PHASES44 = [(3, 3), (4, 3), (3, 4), (4, 4)]


@pytest.fixture(scope="module")
def server(cli, db44_path):
    """``ostledb serve`` on the 4x4 database, on a free loopback port: its address."""
    proc = subprocess.Popen(
        [str(cli), "serve", "--db", str(db44_path), "--bind", "127.0.0.1:0", "--quiet"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    line = proc.stdout.readline()
    assert line.startswith("listening on http://"), line + proc.stderr.read()
    host, port = line.split("//")[1].strip().rstrip("/").split(":")
    yield host, int(port)
    proc.terminate()
    proc.wait(timeout=10)


class Api:
    """One keep-alive connection to the server."""

    def __init__(self, address):
        self.conn = http.client.HTTPConnection(*address, timeout=30)

    def get(self, path):
        self.conn.request("GET", path)
        r = self.conn.getresponse()
        body = r.read()
        assert r.status == 200, (path, r.status, body)
        return json.loads(body)


def games_of_one_move(db, n, seed):
    """``n`` random boards, each with a random move that does not end the game."""
    rng = random.Random(seed)
    out = []
    for b in random_boards(3 * n, 4, PHASES44, seed):
        p = db.position(b)
        ms = [m for m in p.moves() if not p.play(m).is_game_over]
        if ms:
            out.append((b, rng.choice(ms)))
        if len(out) == n:
            return out
    raise AssertionError("too few boards with a move")


def test_a_played_position_is_answered_as_query_play_and_the_api_moves(cli, db44_path, server):
    """2,000 random boards, each with a random move played: Python's
    ``probe(Position(B).play(m))`` and ``query(...)``, the API's ``moves=m`` and ``ostledb
    query B --play m`` agree exactly (and differ from the board alone wherever the move
    forbids the best one: the bug of issue 63)."""
    t = time.time()
    api = Api(server)
    with ostledb.open(db44_path) as db:
        games = games_of_one_move(db, 2000, seed=63)
        # `query - --play m` for all the boards of one move at a time.
        by_move = defaultdict(list)
        for i, (b, m) in enumerate(games):
            by_move[m].append(i)
        want = [None] * len(games)
        for m, idx in by_move.items():
            for i, a in zip(idx, cli_answers(cli, db44_path, [games[i][0] for i in idx], "--play", m)):
                want[i] = a
        changed = 0
        for (b, m), w in zip(games, want):
            p = ostledb.Position(b, 4).play(m)
            assert db.query(p) == w, (b, m)
            assert api.get(f"/api/v1/position?board={b}&moves={m}") == w, (b, m)
            moves = w.pop("moves")
            assert db.probe(p).to_dict() == w, (b, m)
            assert [x.to_dict() for x in db.moves(p)] == moves
            changed += db.probe(p.board).to_dict() != w
    print(f"\n{len(games)} played boards, three front ends, in {time.time() - t:.1f} s; {changed} valued otherwise without the move")
    assert changed > 50, "the last move matters on some boards"


def rank(move):
    """A move's value as a number, better greater: fast wins, then draws, slow losses."""
    n = move["plies"]
    return {"win": 1000 - (n or 0), "draw": 0, "loss": -1000 + (n or 0)}[move["verdict"]]


def test_moves_0_is_playable_on_10000_boards_with_a_prev(cli, db44_path, server):
    """``moves[0]`` is never the forbidden move (unless it is the only move): Python's
    ``db.moves(board, prev)``, the API's ``/position?board=..&prev=..`` and ``query -``
    with ``BOARD,PREV`` lines, on 10,000 random boards reached by a random move."""
    t = time.time()
    api = Api(server)
    with ostledb.open(db44_path) as db:
        games = games_of_one_move(db, 10_000, seed=630)
        nodes = [(db.position(b).play(m).board, b) for b, m in games]
        cli = cli_answers(cli, db44_path, [f"{c},{b}" for c, b in nodes])
        forbidden_best = 0
        for (c, b), w in zip(nodes, cli):
            for moves in (
                [x.to_dict() for x in db.moves(c, prev=b)],
                api.get(f"/api/v1/position?board={c}&prev={b}")["moves"],
                w["moves"],
            ):
                assert moves == w["moves"]
                if len(moves) > 1:
                    assert not moves[0]["forbidden"] and moves[0]["best"], (c, b)
                assert [m["forbidden"] for m in moves] == sorted(m["forbidden"] for m in moves), "forbidden last"
            f = [m for m in w["moves"] if m["forbidden"]]
            # A forbidden move worth more than the best playable one: the old order
            # (best first, the forbidden one in its place) listed it first.
            forbidden_best += bool(f) and rank(f[0]) > rank(w["moves"][0])
    print(f"\n10,000 boards with a prev, three front ends, in {time.time() - t:.1f} s; {forbidden_best} whose forbidden move would have been first")
    assert forbidden_best > 10


def test_a_position_remembers_its_moves():
    start = ostledb.Position.initial()
    p = start.play("hole-up").play("c5-down")
    assert p.move_stack == ["hole-up", "c5-down"]
    assert p.root == start and p.root.move_stack == []
    assert p.pop() == start.play("hole-up") and p.pop().move_stack == ["hole-up"]
    assert p.pop().pop() == start
    with pytest.raises(IndexError):
        start.pop()
    # The last move forbids its undo: not listed, not playable.
    q = start.play("hole-up")
    assert q.forbidden_move() == "hole-down" and "hole-down" not in q.moves()
    with pytest.raises(ostledb.BadMoveError, match="forbidden"):
        q.play("hole-down")
    assert "hole-down" in ostledb.Position(q.board).moves()
    # Pickled with its moves.
    back = pickle.loads(pickle.dumps(p))
    assert back == p and back.move_stack == p.move_stack and back.root == start


def test_prev_and_a_carried_move_must_agree(db44):
    p = db44.position("2222-0003-0000-1111")
    m = next(m for m in p.moves() if not p.play(m).is_game_over)
    c = p.play(m)
    assert db44.probe(c, prev=p.board).to_dict() == db44.probe(c).to_dict()
    other = next(x for x in p.moves() if x != m and not p.play(x).is_game_over)
    with pytest.raises(ostledb.BadBoardError, match="give one or the other"):
        db44.probe(c, prev=p.play(other).pop().play(other).board)


def test_boards_are_taken_as_codes_everywhere(db44):
    codes = db44.sample((4, 4), 20, seed=5)
    for c in codes:
        b = ostledb.Position.from_code(int(c), side=4).board
        assert db44.probe(int(c)).to_dict() == db44.probe(b).to_dict()
        assert db44.probe(c).to_dict() == db44.probe(b).to_dict()  # a numpy integer
        assert [m.to_dict() for m in db44.moves(int(c))] == [m.to_dict() for m in db44.moves(b)]
        assert db44.position(int(c)).board == b
        assert db44.query(int(c)) == db44.query(b)
    with pytest.raises(ostledb.BadBoardError):
        db44.probe(0)
    with pytest.raises(ostledb.BadBoardError):
        db44.probe(1 << 60)
    assert db44.probe("2222_0003_0000_1111").to_dict() == db44.probe("2222-0003-0000-1111").to_dict()
    assert ostledb.Position("2222_0003_0000_1111", 4) == ostledb.Position("2222-0003-0000-1111", 4)


def test_a_missing_phase_is_a_key_error(db3_small_path):
    with ostledb.open(db3_small_path) as db:
        with pytest.raises(KeyError) as e:
            db.probe("222-030-111")
        assert isinstance(e.value, ostledb.MissingPhaseError) and isinstance(e.value, LookupError)
        # Its message as the other errors', not quoted as a KeyError's key would be.
        assert str(e.value).startswith("no solved database") and "phase (3,3)" in str(e.value), str(e.value)


def test_the_line_defaults_to_the_shared_constant(db44):
    """``line()`` without ``max_plies`` plays ``DEFAULT_LINE_PLIES`` (40) plies at most, as
    ``query --line`` and the API's ``/line`` do (it was 200)."""
    import inspect

    assert ostledb.DEFAULT_LINE_PLIES == 40
    assert inspect.signature(db44.line).parameters["max_plies"].default == ostledb.DEFAULT_LINE_PLIES
    # Positions decided in more than 40 plies (the longest of each phase is 59 to 68).
    longer = 0
    for phase in db44.phases:
        codes = db44.positions(phase)
        scores = db44.probe_many(codes)
        for c in codes[np.abs(scores) > 40][:3]:
            line = db44.line(int(c))
            assert len(line) == 40 and line.end == "max-plies"
            assert len(db44.line(int(c), max_plies=ostledb.MAX_LINE_PLIES)) > 40
            longer += 1
    assert longer > 0


def test_probe_many_keeps_the_shape_of_its_input(db44):
    codes = db44.sample((4, 4), 1000, seed=9)
    flat = db44.probe_many(codes)
    grid = db44.probe_many(codes.reshape(10, 100))
    assert grid.shape == (10, 100) and grid.dtype == np.int32
    assert (grid.ravel() == flat).all()
    cube = db44.probe_many(codes[:24].reshape(2, 3, 4))
    assert cube.shape == (2, 3, 4) and (cube.ravel() == flat[:24]).all()
    # Transposed (not C-contiguous): answered in its own shape and order.
    assert (db44.probe_many(codes.reshape(10, 100).T) == grid.T).all()
    with pytest.raises(ostledb.BadBoardError, match="carries its last move"):
        db44.probe_many([ostledb.Position("2222-0003-0000-1111", 4).play("b1-up")])


def test_review_marks_a_thrown_win(db44):
    start = db44.position("2222-0003-0000-1111")
    best = db44.moves(start)[0]
    throw = next(m for m in db44.moves(start) if m.verdict != "win" and m.plies != 1)
    r = db44.review(start.play(throw.move))
    assert len(r) == 1 and r[0].judgement == "win-to-" + throw.verdict and r[0].blunder
    assert r[0].best.move == best.move and r[0].before["outcome"] == {"Win": best.plies}
    assert r.blunders == 1 and not r.game_over
    assert r.to_dict() == db44.review(start, [throw.move]).to_dict()
    r = db44.review(start, [best.move])
    assert r[0].judgement == "kept" and r[0].best_played and r.blunders == 0
    with pytest.raises(ostledb.BadMoveError, match="in move 2"):
        db44.review(start, [best.move, "z9-up"])
    with pytest.raises(ostledb.OutOfRangeError):
        db44.review(start, ["b1-up"] * 1001)
