"""Boards and moves: notation, moves, play, symmetry, comparison, errors."""

import pickle

import pytest

import ostledb
from ostledb import BadBoardError, BadMoveError, Position

START = "22222-00000-00300-00000-11111"


def mirror(board, side=5):
    """The board flipped left to right (a symmetry of the game)."""
    rows = board.split("-")
    return "-".join(r[::-1] for r in rows)


def test_notation_round_trips_and_dashes_are_optional():
    p = Position(START)
    assert p.board == START == str(p)
    assert Position(START.replace("-", "")) == p
    assert repr(p) == f"Position('{START}')"
    assert p == Position.initial()
    assert Position.from_code(p.code) == p
    assert p.side == 5 and p.pieces == 5 and p.phase == (5, 5)


def test_small_boards_take_their_size_from_the_text():
    p = Position("222-030-111")
    assert (p.side, p.pieces) == (3, 3)
    q = Position("0220-0003-0000-1110", pieces=3)
    assert (q.side, q.pieces, q.phase) == (4, 3, (3, 2))
    assert repr(q) == "Position('0220-0003-0000-1110', pieces=3)"
    assert Position.initial(side=4, pieces=3) != Position.initial(side=4)


@pytest.mark.parametrize(
    "text, words",
    [
        ("2222-00000-00300-00000-11111", "24 squares"),
        ("22222-00000-00000-00000-11111", "hole"),
        ("22222-00000-00300-00000-11113", "hole"),
        ("22222-00000-00300-00000-1111x", "x"),
        ("22000-00000-00300-00000-11111", "pieces"),
        ("", "squares"),
    ],
)
def test_bad_boards_raise_a_value_error_that_says_why(text, words):
    with pytest.raises(BadBoardError) as e:
        Position(text)
    assert isinstance(e.value, ValueError) and isinstance(e.value, ostledb.OstleError)
    assert words in str(e.value)


def test_moves_and_play_follow_the_cli_notation():
    p = Position.initial()
    moves = p.moves()
    assert len(moves) == 24 and len(set(moves)) == 24
    assert "c1-up" in moves and "hole-up" in moves
    child = p.play("c1-up")
    # Seen from the side to move next: its pieces are now the 1s.
    assert child.phase == (5, 5)
    assert child.board.count("1") == 5 and child.board.count("2") == 5
    assert child != p
    # Every move gives a live child whose own moves exist.
    for m in moves:
        assert p.play(m).moves()


def test_illegal_and_malformed_moves_raise_bad_move():
    p = Position.initial()
    with pytest.raises(BadMoveError, match="not a move"):
        p.play("c3-up")  # the hole's square holds no piece
    with pytest.raises(BadMoveError):
        p.play("sideways")
    with pytest.raises(ValueError):
        p.play("z9-up")


def test_a_capture_that_ends_the_game_gives_a_finished_board():
    # Search the 3x3 game breadth first for a move that removes a side's second piece.
    start = Position.initial(side=3)
    finished = []
    frontier = [start]
    seen = set()
    while frontier and not finished:
        nxt = []
        for q in frontier:
            for m in q.moves():
                c = q.play(m)
                if c.is_game_over:
                    finished.append(c)
                elif c.canonical not in seen:
                    seen.add(c.canonical)
                    nxt.append(c)
        frontier = nxt
    assert finished
    c = finished[0]
    with pytest.raises(BadBoardError, match="over"):
        c.moves()
    assert not c.is_immediate_win
    # A finished board pickles too (the notation parser would refuse its text).
    back = pickle.loads(pickle.dumps(c))
    assert back == c and back.is_game_over and back.board == c.board
    with pytest.raises(BadBoardError):
        Position._from_parts(0b11, 0b11, 4, 3, 3)


def test_symmetric_boards_share_a_canonical_form():
    b = "21000-00200-10300-00010-22011"
    p, q = Position(b), Position(mirror(b))
    assert p != q
    assert p.canonical == q.canonical
    assert p.canonical_code == q.canonical_code == p.canonical.code
    assert p.canonical.canonical == p.canonical
    assert len(p.base64) > 0


def test_positions_hash_compare_sort_and_pickle():
    a, b = Position.initial(), Position.initial().play("hole-up")
    assert len({a, Position(START), b}) == 2
    assert sorted([b, a]) == sorted([a, b])
    assert (a < b) != (b < a)
    assert a <= Position(START) and a >= Position(START)
    assert a != "not a position"
    q = Position("0220-0003-0000-1110", pieces=3)
    assert pickle.loads(pickle.dumps(q)) == q
    assert pickle.loads(pickle.dumps(a)) == a


def test_forbidden_move_names_the_undo():
    # OSTLE.md's example: the previous board forbids the piece on square 2 moving down.
    cur, prev = "00100-11200-00001-31022-20020", "00000-22200-00102-32011-10010"
    assert Position(cur).forbidden_move(prev) == "c5-down"
    with pytest.raises(BadBoardError):
        Position(cur).forbidden_move(START)
