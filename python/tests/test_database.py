"""A database from Python: probe, get, moves, line, query, probe_many, errors, threads."""

import concurrent.futures

import numpy as np
import pytest

import ostledb
from conftest import random_boards

PHASES44 = [(3, 3), (4, 3), (3, 4), (4, 4)]


@pytest.fixture(scope="module")
def boards44():
    return random_boards(3000, 4, PHASES44, seed=5)


def test_open_describes_the_database(db44, db44_path):
    assert db44.side == 4 and db44.pieces == 4
    assert db44.phases == PHASES44
    assert db44.path == str(db44_path)
    assert not db44.closed
    assert "4x4" in repr(db44)


def test_a_missing_database_is_file_not_found(tmp_path):
    with pytest.raises(ostledb.DatabaseNotFoundError) as e:
        ostledb.open(tmp_path / "nothing-here")
    assert isinstance(e.value, FileNotFoundError)
    assert "ostledb solve" in str(e.value)


def test_unknown_backend_is_a_backend_error(db44_path):
    with pytest.raises(ostledb.BackendError, match="unknown lookup backend"):
        ostledb.open(db44_path, backend="btree")
    with pytest.raises(ostledb.BackendError, match="no `hash` key index"):
        ostledb.open(db44_path, backend="hash")


def test_probe_agrees_with_the_best_move(db44, boards44):
    """The node's value is the best of its moves' values, one ply on: the value comes
    from one record, the moves from their children's records."""
    for b in boards44[:600]:
        v = db44.probe(b)
        moves = db44.moves(b)
        best = [m for m in moves if m.best]
        assert best, b
        assert all(m.best == (m.outcome == best[0].outcome) for m in moves)
        assert moves[0].best
        if v.verdict in ("win", "immediate-win"):
            assert best[0].verdict == "win" and best[0].plies == v.plies
        elif v.verdict == "loss":
            assert all(m.verdict == "loss" for m in moves) and best[0].plies == v.plies
        else:
            assert v.verdict == "draw" and best[0].verdict == "draw" and v.plies is None
        assert v.checkmate == (v.verdict == "immediate-win") == ostledb.Position(b, 4).is_immediate_win
        assert v.wdl == {"win": 1, "immediate-win": 1, "draw": 0, "loss": -1}[v.verdict]
        assert v.score == (v.wdl * v.plies if v.plies else 0)


def test_probe_takes_positions_and_text_alike(db44, boards44):
    for b in boards44[:50]:
        p = db44.position(b)
        assert db44.probe(p).to_dict() == db44.probe(b).to_dict()
        # Every symmetric image has the same value and canonical form.
        q = db44.position("-".join(r[::-1] for r in b.split("-")))
        assert (db44.probe(q).outcome, db44.probe(q).canonical) == (db44.probe(b).outcome, db44.probe(b).canonical)


def test_prev_forbids_the_undo(db44, boards44):
    """With the previous board, the move back to it is marked forbidden and is never
    best; a board that does not lead here is refused."""
    checked = 0
    for b in boards44[:300]:
        pos = db44.position(b)
        for m in pos.moves():
            child = pos.play(m)
            if child.is_game_over:
                continue
            undo = child.forbidden_move(pos)
            if undo is None:
                continue
            listed = db44.moves(child, prev=pos)
            forbidden = [x for x in listed if x.forbidden]
            assert [x.move for x in forbidden] == [undo]
            assert not forbidden[0].best
            assert db44.probe(child, prev=b).node_index > 0
            checked += 1
            break
    assert checked > 100
    with pytest.raises(ostledb.BadBoardError, match="previous board"):
        db44.probe(boards44[0], prev=boards44[1])


def test_line_follows_best_moves_to_the_end(db44, boards44):
    ended = 0
    for b in boards44[:200]:
        v = db44.probe(b)
        line = db44.line(b, max_plies=50)
        assert len(line) <= 50
        assert (line.end == "max-plies") == (len(line) == 50 and v.verdict == "draw")
        if not line:
            continue
        assert line[0].board == v.board and line[0].move.best
        assert line[0].move.move == db44.moves(b)[0].move
        if v.verdict != "draw":
            assert len(line) == v.plies
            assert [s.plies for s in line] == list(range(v.plies, 0, -1))
            assert line.end == "game-over" and line.repeats_from is None
            ended += 1
    assert ended > 50


def test_get_returns_the_default_for_a_missing_phase(db3_small_path):
    with ostledb.open(db3_small_path) as db:
        assert db.phases == [(2, 2)]
        assert db.get("220-030-110") is not None
        with pytest.raises(ostledb.MissingPhaseError) as e:
            db.probe("222-030-111")
        assert isinstance(e.value, LookupError)
        assert db.get("222-030-111") is None
        assert db.get("222-030-111", default="absent") == "absent"
        with pytest.raises(ostledb.BadBoardError):
            db.get("222-030-11")


@pytest.mark.parametrize("bad", [123, None, 4.5, "22-00", "2222-0003-0000-1111-0"])
def test_bad_board_arguments_raise_bad_board(db44, bad):
    with pytest.raises(ostledb.BadBoardError):
        db44.probe(bad)


def test_a_board_of_another_game_is_refused(db44):
    with pytest.raises(ostledb.BadBoardError, match="4x4 game"):
        db44.probe(ostledb.Position.initial())
    with pytest.raises(ostledb.BadBoardError):
        db44.probe(ostledb.Position.initial(side=4, pieces=3))


def test_a_damaged_file_raises_corrupt_database(damaged_copy):
    boards = random_boards(3000, 4, [(4, 4)], seed=9)
    raised = 0
    try:
        db = ostledb.open(damaged_copy)
    except ostledb.CorruptDatabaseError:
        return
    with db:
        for b in boards:
            try:
                db.probe(b)
            except ostledb.CorruptDatabaseError as e:
                assert "damaged" in str(e)
                raised += 1
        # The rest of the file still answers.
        assert raised < len(boards)
    assert raised > 0


def test_closed_database_refuses_and_context_manager_closes(db44_path):
    with ostledb.open(db44_path) as db:
        db.probe("2222-0003-0000-1111")
    assert db.closed and "closed" in repr(db)
    with pytest.raises(ostledb.DatabaseClosedError):
        db.probe("2222-0003-0000-1111")
    db.close()  # twice is fine


def test_probe_many_matches_probe_for_every_input_kind(db44, boards44):
    want = [db44.probe(b).score for b in boards44]
    positions = [db44.position(b) for b in boards44]
    codes = [p.code for p in positions]
    assert db44.probe_many(boards44) == want
    assert db44.probe_many(positions) == want
    assert db44.probe_many(codes) == want
    for dtype in (np.uint64, np.int64):
        got = db44.probe_many(np.array(codes, dtype=dtype))
        assert isinstance(got, np.ndarray) and got.dtype == np.int32
        assert got.tolist() == want
    assert db44.probe_many([]) == []
    assert db44.probe_many(np.array([], dtype=np.uint64)).shape == (0,)


def test_probe_many_names_the_bad_board(db44, boards44):
    with pytest.raises(ostledb.BadBoardError, match="board 2:"):
        db44.probe_many(boards44[:2] + ["2222"] + boards44[2:5])
    with pytest.raises(ostledb.BadBoardError, match="board 1:"):
        db44.probe_many(np.array([db44.position(boards44[0]).code, 7], dtype=np.uint64))
    with pytest.raises(TypeError, match="must hold integers"):
        db44.probe_many(np.array([1.5, 2.5]))
    with pytest.raises(ostledb.BadBoardError, match="negative"):
        db44.probe_many(np.array([-1], dtype=np.int64))


def test_reads_from_threads_agree(db44, boards44):
    want = [db44.probe(b).to_dict() for b in boards44]
    with concurrent.futures.ThreadPoolExecutor(4) as pool:
        got = list(pool.map(lambda b: db44.probe(b).to_dict(), boards44))
        many = list(pool.map(db44.probe_many, [boards44] * 4))
    assert got == want
    assert all(m == [w["plies"] and (w["plies"] if w["verdict"] != "loss" else -w["plies"]) or 0 for w in want] for m in many)


def test_sample_draws_canonical_positions_of_the_phase(db44):
    codes = db44.sample((4, 3), 2000, seed=4)
    assert codes.dtype == np.uint64 and codes.shape == (2000,)
    assert (codes == db44.sample((4, 3), 2000, seed=4)).all()
    assert not (codes == db44.sample((4, 3), 2000, seed=5)).all()
    positions = [ostledb.Position.from_code(int(c), side=4) for c in codes[:300]]
    assert all(p.phase == (4, 3) and p.canonical == p for p in positions)
    assert len(set(codes.tolist())) > 1500
    assert db44.probe_many(codes).tolist() == [db44.probe(p).score for p in positions] + db44.probe_many(codes[300:]).tolist()
    with pytest.raises(ostledb.MissingPhaseError, match="holds"):
        db44.sample((5, 4), 10)
