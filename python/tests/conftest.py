"""Databases for the tests, solved once per session with ``ostledb.solve``, and the
``ostledb`` command-line binary the differential tests compare against."""

import json
import os
import pathlib
import random
import shutil
import subprocess

import pytest

import ostledb

ROOT = pathlib.Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def db44_path(tmp_path_factory):
    """The whole 4x4 game with four pieces a side (phases (3,3) to (4,4)): 1.6 s."""
    path = tmp_path_factory.mktemp("db") / "four.db"
    ostledb.solve(path, side=4, pieces=4)
    return path


@pytest.fixture(scope="session")
def db33_path(tmp_path_factory):
    """The whole 3x3 game with three pieces a side."""
    path = tmp_path_factory.mktemp("db") / "three.db"
    ostledb.solve(path, side=3, pieces=3)
    return path


@pytest.fixture(scope="session")
def db3_small_path(tmp_path_factory):
    """The 3x3 game up to two pieces a side only: phase (2,2), nothing else."""
    path = tmp_path_factory.mktemp("db") / "three-small.db"
    ostledb.solve(path, side=3, pieces=3, max_pieces=4)
    return path


@pytest.fixture
def db44(db44_path):
    with ostledb.open(db44_path) as db:
        yield db


@pytest.fixture
def damaged_copy(db44_path, tmp_path):
    """A copy of the 4x4 database whose largest value file has bytes flipped in the
    middle of its blocks."""
    copy = tmp_path / "damaged.db"
    shutil.copytree(db44_path, copy)
    files = sorted(copy.rglob("values-*"), key=lambda p: p.stat().st_size)
    target = files[-1]
    data = bytearray(target.read_bytes())
    mid = len(data) // 2
    for i in range(mid, mid + 64):
        data[i] ^= 0xFF
    target.write_bytes(bytes(data))
    return copy


@pytest.fixture(scope="session")
def cli():
    """The ``ostledb`` binary: $OSTLEDB_BIN, else the release build of this repository
    (``cargo build --release`` makes it; tools/test.sh does before running pytest)."""
    path = pathlib.Path(os.environ.get("OSTLEDB_BIN", ROOT / "target" / "release" / "ostledb"))
    if not path.is_file():
        pytest.fail(f"no ostledb binary at {path}: run `cargo build --release` or set OSTLEDB_BIN")
    return path


def random_boards(n, side, phases, seed):
    """``n`` random live boards of a ``side`` x ``side`` board: a hole and the pieces of a
    phase drawn from ``phases`` on distinct random squares (as tools/random-boards.py)."""
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        a, b = rng.choice(phases)
        squares = rng.sample(range(side * side), a + b + 1)
        cells = ["0"] * (side * side)
        cells[squares[0]] = "3"
        for s in squares[1 : 1 + a]:
            cells[s] = "1"
        for s in squares[1 + a :]:
            cells[s] = "2"
        out.append("-".join("".join(cells[r * side : (r + 1) * side]) for r in range(side)))
    return out


def cli_answers(cli, db_path, lines, *extra):
    """The binary's answers to `lines` through ``ostledb query - --json`` (with `extra`
    arguments), one dict each, without the echoed ``input``."""
    out = subprocess.run(
        [str(cli), "query", "-", "--json", "--quiet", "--db", str(db_path), *extra],
        input="\n".join(lines) + "\n",
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    answers = [json.loads(x) for x in out.splitlines()]
    assert len(answers) == len(lines)
    for a in answers:
        a.pop("input")
    return answers
