"""Every answer of the package equals the ``ostledb`` binary's (``query - --json``) on
random boards, with and without a previous board, and with a line."""

import json
import subprocess

import ostledb
from conftest import cli_answers, random_boards

PHASES44 = [(3, 3), (4, 3), (3, 4), (4, 4)]


def test_probe_moves_and_probe_many_equal_the_cli(cli, db44_path):
    boards = random_boards(2000, 4, PHASES44, seed=11)
    want = cli_answers(cli, db44_path, boards)
    with ostledb.open(db44_path) as db:
        scores = db.probe_many(boards)
        for b, w, s in zip(boards, want, scores):
            moves = w.pop("moves")
            assert db.probe(b).to_dict() == w
            assert [m.to_dict() for m in db.moves(b)] == moves
            assert s == (0 if w["plies"] is None else w["plies"] * (-1 if w["verdict"] == "loss" else 1))


def test_query_with_prev_and_line_equals_the_cli(cli, db44_path):
    boards = random_boards(300, 4, PHASES44, seed=12)
    lines = []
    with ostledb.open(db44_path) as db:
        for b in boards:
            p = db.position(b)
            child = next((p.play(m) for m in p.moves() if not p.play(m).is_game_over), None)
            if child is not None:
                lines.append((child.board, b))
        want = cli_answers(cli, db44_path, [f"{c},{b}" for c, b in lines], "--line", "--max-plies", "30")
        for (c, b), w in zip(lines, want):
            assert db.query(c, prev=b, line=30) == w
            line = db.line(c, prev=b, max_plies=30)
            assert [s.to_dict() for s in line] == w["line"]
            assert line.to_dict() == {"line": w["line"], "line_end": w["line_end"]}
    assert any(w["node_index"] > 0 for w in want)


def test_whole_phases_read_in_order_equal_ostledb_stats(cli, db44_path):
    """Every position of every phase, read with positions() and valued with probe_many,
    gives the counts of ``ostledb stats --json``: wins and losses by distance, draws."""
    import numpy as np

    out = subprocess.run(
        [str(cli), "stats", "--json", "--quiet", "--db", str(db44_path)], capture_output=True, text=True, check=True
    ).stdout
    stats = json.loads(out)
    with ostledb.open(db44_path) as db:
        assert [tuple(p["phase"]) for p in stats["phases"]] == db.phases
        for p in stats["phases"]:
            phase = tuple(p["phase"])
            n = db.count(phase)
            assert n == p["counts"]["positions"]
            codes = db.positions(phase)
            assert codes.shape == (n,) and bool((codes[1:] > codes[:-1]).all())
            assert db.positions(phase, 1000, 1010).tolist() == codes[1000:1010].tolist()
            assert db.positions(phase, n - 3).tolist() == codes[n - 3 :].tolist()
            assert db.positions(phase, n + 5).tolist() == []
            scores = db.probe_many(codes)
            want = p["positions"]
            assert int((scores == 0).sum()) == want["draw"]
            for name, sign in (("win_by_distance", 1), ("loss_by_distance", -1)):
                got = np.bincount(sign * scores[sign * scores > 0], minlength=len(want[name])).tolist()
                assert got == want[name], (phase, name)
