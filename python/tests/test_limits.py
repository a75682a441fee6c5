"""Counts and sizes a caller gives are checked before anything is allocated (issue 61):
an array of codes is read in its own byte order and item size, a line is bounded by
``MAX_LINE_PLIES`` and stops where a draw starts to repeat, and a sample, a slice of
positions, a batch of boards or a cache larger than the phase or the memory there is
raises an ``OutOfRangeError`` or an ``OutOfMemoryError`` instead of aborting."""

import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import ostledb

PHASES44 = [(3, 3), (4, 3), (3, 4), (4, 4)]


@pytest.fixture(scope="module")
def codes44(db44_path):
    with ostledb.open(db44_path) as db:
        codes = np.concatenate([db.sample(p, 32, seed=9) for p in PHASES44])
        return codes, db.probe_many(codes).tolist()


@pytest.mark.parametrize("dtype", ["<u8", ">u8", "<i8", ">i8", "=u8", "=i8"])
def test_probe_many_reads_codes_in_the_arrays_byte_order(db44, codes44, dtype):
    codes, want = codes44
    assert db44.probe_many(codes.astype(dtype)).tolist() == want


def test_probe_many_reads_any_integer_width_shape_and_stride(db44, codes44, db33_path):
    codes, want = codes44
    with ostledb.open(db33_path) as db33:
        small = np.concatenate([db33.positions(p) for p in db33.phases])
        small = small[small < 2**32]
        assert len(small) > 100, "some 3x3 codes fit in 32 bits"
        small_want = db33.probe_many(small).tolist()
        for dtype in ("<u4", ">u4", "=u4"):
            assert db33.probe_many(small.astype(dtype)).tolist() == small_want
    # Signed items of every width, either byte order: read with their sign.
    for dtype in ("i1", "<i2", ">i2", "<i4", ">i4", ">i8"):
        with pytest.raises(ostledb.BadBoardError, match="board 1: code -100 is negative"):
            db44.probe_many(np.array([1, -100], dtype=dtype))
    big = codes.astype(">u8")
    assert db44.probe_many(big[::-3]).tolist() == want[::-3]
    # An array of several dimensions is answered in its shape (issue 63), in its
    # logical order whatever its memory layout.
    assert db44.probe_many(big.reshape(8, 16)).shape == (8, 16)
    assert db44.probe_many(big.reshape(8, 16)).ravel().tolist() == want
    assert db44.probe_many(np.asfortranarray(big.reshape(8, 16))).ravel().tolist() == want
    assert db44.probe_many(np.broadcast_to(big[:1], (5,))).tolist() == want[:1] * 5


def test_probe_many_refuses_arrays_that_are_not_codes(db44, codes44):
    codes, _ = codes44
    for bad in (codes.astype(np.float64), codes.astype(bool), codes.astype("complex128")):
        with pytest.raises(TypeError, match="must hold integers"):
            db44.probe_many(bad)
    with pytest.raises(ostledb.BadBoardError, match="board 1: .*more than 55 bits"):
        db44.probe_many(np.array([codes[0], 1 << 60], dtype=np.uint64))
    with pytest.raises(ostledb.BadBoardError, match="board 0: .*more than 55 bits"):
        db44.probe_many([10**30])
    with pytest.raises(ostledb.BadBoardError, match="negative"):
        db44.probe_many(np.array([-1], dtype=">i8"))


def test_line_lengths_are_bounded_by_one_constant(db44):
    assert ostledb.MAX_LINE_PLIES == 1000
    b = "2222-0003-0000-1111"
    for bad in (0, -1, ostledb.MAX_LINE_PLIES + 1, 2**31, 2**32 - 1, 2**100):
        with pytest.raises(ostledb.OutOfRangeError, match=f"max_plies must be from 1 to 1000, not {bad}"):
            db44.line(b, max_plies=bad)
        with pytest.raises(ValueError, match="line must be from 1 to 1000"):
            db44.query(b, line=bad)
    with pytest.raises(TypeError):
        db44.line(b, max_plies=1.5)
    assert len(db44.line(b, max_plies=ostledb.MAX_LINE_PLIES)) == 23
    assert len(db44.line(b, max_plies=np.int64(3))) == 3


def test_a_drawn_line_stops_where_it_starts_to_repeat(db44):
    codes = np.concatenate([db44.sample(p, 3000, seed=17) for p in PHASES44])
    drawn = [ostledb.Position.from_code(int(c), side=4).board for c in codes[db44.probe_many(codes) == 0]][:100]
    assert len(drawn) > 20
    for b in drawn:
        line = db44.line(b, max_plies=ostledb.MAX_LINE_PLIES)
        assert line.end == "repeats", (b, line)
        k = line.repeats_from
        assert 1 <= k <= len(line) < ostledb.MAX_LINE_PLIES
        # The board after the last move is the one ply k was played from, and the
        # plies before k never came back (each node is passed once).
        assert line[-1].move.child == line[k - 1].board
        assert all(s.verdict == "draw" for s in line)
        assert repr(line) == f"Line({len(line)} plies, repeats from ply {k})"
        d = db44.query(b, line=ostledb.MAX_LINE_PLIES)
        assert d["line_end"] == {"reason": "repeats", "from": k}
        assert d["line"] == [s.to_dict() for s in line]
        short = db44.line(b, max_plies=1)
        assert len(short) == 1 and short.end == "max-plies" and short.repeats_from is None
    line = db44.line(drawn[0], max_plies=ostledb.MAX_LINE_PLIES)
    assert [s.board for s in line[1:3]] == [s.board for s in line.steps[1:3]] == [line[1].board, line[2].board]
    with pytest.raises(IndexError):
        line[len(line)]


def test_sample_is_bounded_by_the_phase(db44):
    n33 = db44.count((3, 3))
    assert len(db44.sample((3, 3), n33)) == n33
    assert len(db44.sample((3, 3), 0)) == 0
    for bad in (-1, n33 + 1, 10**11, 2**61, 2**64, 10**40):
        with pytest.raises(ostledb.OutOfRangeError, match=f"n must be from 0 to {n33}, not {bad}"):
            db44.sample((3, 3), bad)
    with pytest.raises(ValueError, match=f"n must be from 0 to {db44.count((4, 4))}, not 100000000000"):
        db44.sample((4, 4), 10**11)


def test_positions_take_indices_from_zero(db44):
    n = db44.count((3, 3))
    assert len(db44.positions((3, 3), n - 2, n + 5)) == 2
    assert len(db44.positions((3, 3), 10**18)) == 0
    for kw in ({"start": -1}, {"stop": -1}, {"start": 2**64}, {"stop": 2**70}):
        with pytest.raises(ostledb.OutOfRangeError):
            db44.positions((3, 3), **kw)


def test_open_refuses_a_cache_larger_than_memory(db44_path):
    for bad in (-1, 2**64, 10**30):
        with pytest.raises(ostledb.OutOfRangeError, match="cache_mb must be from 0"):
            ostledb.open(db44_path, cache_mb=bad)
    with pytest.raises(ostledb.OutOfMemoryError, match="cache_mb 1000000000"):
        ostledb.open(db44_path, cache_mb=10**9)
    with ostledb.open(db44_path, cache_mb=0) as db:
        assert db.probe("2222-0003-0000-1111").plies == 23


def test_solve_refuses_arguments_out_of_range(tmp_path):
    for kw, what in (
        ({"max_pieces": 3}, "max_pieces must be from 4 to 6, not 3"),
        ({"max_pieces": 7}, "max_pieces must be from 4 to 6, not 7"),
        ({"max_pieces": 2**70}, "max_pieces must be from 4 to 6"),
        ({"level": 0}, "level must be from 1 to 22, not 0"),
        ({"level": 23}, "level must be from 1 to 22, not 23"),
    ):
        with pytest.raises(ostledb.OutOfRangeError, match=what):
            ostledb.solve(tmp_path / "x.db", side=3, pieces=3, **kw)


def test_requests_beyond_the_memory_limit_raise_out_of_memory(db44_path):
    """With an address-space limit (``ulimit -v``) 12 MB above what the process maps: a
    sample or a slice of the whole of phase (4,4) (14.4 MB of codes) and probe_many of
    10^9 boards (a broadcast array of one code: 8 bytes of input, 20 GB of working
    memory) raise ``OutOfMemoryError`` instead of aborting; small calls still work."""
    script = textwrap.dedent(
        f"""
        import resource
        import numpy as np
        import ostledb
        db = ostledb.open({str(db44_path)!r}, cache_mb=4)
        n = db.count((4, 4))
        one = db.sample((4, 4), 1)
        db.probe_many(db.sample((4, 4), 1000))  # the threads are started
        size = next(int(l.split()[1]) for l in open("/proc/self/status") if l.startswith("VmSize:"))
        limit = size * 1024 + (12 << 20)
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
        for call in (lambda: db.sample((4, 4), n), lambda: db.positions((4, 4)),
                     lambda: db.probe_many(np.broadcast_to(one, (10**9,)))):
            try:
                call()
                print("no error")
            except ostledb.OutOfMemoryError as e:
                assert isinstance(e, MemoryError)
                print("OutOfMemoryError:", e)
        print(db.probe_many(db.sample((4, 4), 1000)).shape)
        """
    )
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1")
    r = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env)
    assert r.returncode == 0, r.stdout + r.stderr
    lines = r.stdout.splitlines()
    assert len(lines) == 4, r.stdout
    assert "not enough memory for a sample of 901350 positions of phase (4,4)" in lines[0]
    assert "not enough memory for positions 0 to 901350 of phase (4,4)" in lines[1]
    assert "not enough memory for the boards (20000 MB)" in lines[2]
    assert lines[3] == "(1000,)"
