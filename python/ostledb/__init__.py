"""The solved game of Ostle, from Python.

Open a database made by ``ostledb solve`` (or by :func:`solve`) and ask it about
positions: the value of a board, every move with its value, the winning line, or the
values of millions of boards at once::

    import ostledb

    with ostledb.open("ostle.db") as db:
        v = db.probe("22220-00000-00300-00000-11110")
        print(v.verdict, v.plies, v.text)
        for m in db.moves("22220-00000-00300-00000-11110")[:3]:
            print(m.move, m.verdict, m.plies)

Boards are written as in ``ostledb query``: 25 digits row by row, ``1`` the side to
move, ``2`` the opponent, ``3`` the hole, ``0`` empty, ``-`` or ``_`` ignored; wherever a
board is taken, its integer code (as ``sample`` and ``positions`` give) or a
:class:`Position` will do. A :class:`Position` made by ``play`` carries the moves that
led to it (``move_stack``, ``pop()``), and every call given it honours its last move's
forbidden move. Values are for the side to move, with distances in plies under best
play (the winner hurries, the loser delays). Errors are :class:`OstleError` subclasses
(see ``ostledb._errors``).

Attributes and methods follow one rule: what an object is or holds, cheap to get and
taking no argument, is a property (``p.board``, ``p.canonical``, ``p.is_game_over``,
``p.move_stack``, ``v.plies``, ``db.phases``); anything that takes an argument, reads
the database, generates moves or converts is a method (``p.moves()``, ``p.play(m)``,
``p.pop()``, ``db.probe(b)``, ``v.to_dict()``).
"""

from ostledb._errors import (
    BackendError,
    BadBoardError,
    BadMoveError,
    CorruptDatabaseError,
    DatabaseClosedError,
    DatabaseError,
    DatabaseNotFoundError,
    MissingPhaseError,
    OstleError,
    OutOfMemoryError,
    OutOfRangeError,
)
from ostledb._ostledb import (
    DEFAULT_LINE_PLIES,
    LIBRARY_VERSION,
    MAX_LINE_PLIES,
    Database,
    Line,
    MoveValue,
    Position,
    Review,
    ReviewPly,
    Step,
    Value,
    open,
    solve,
)

__version__ = LIBRARY_VERSION

__all__ = [
    "BackendError",
    "BadBoardError",
    "BadMoveError",
    "CorruptDatabaseError",
    "Database",
    "DatabaseClosedError",
    "DatabaseError",
    "DatabaseNotFoundError",
    "DEFAULT_LINE_PLIES",
    "Line",
    "MAX_LINE_PLIES",
    "MissingPhaseError",
    "MoveValue",
    "OstleError",
    "OutOfMemoryError",
    "OutOfRangeError",
    "Position",
    "Review",
    "ReviewPly",
    "Step",
    "Value",
    "open",
    "solve",
]
