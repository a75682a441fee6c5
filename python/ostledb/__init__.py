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
move, ``2`` the opponent, ``3`` the hole, ``0`` empty, ``-`` ignored. Values are for the
side to move, with distances in plies under best play (the winner hurries, the loser
delays). Errors are :class:`OstleError` subclasses (see ``ostledb._errors``).
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
    LIBRARY_VERSION,
    MAX_LINE_PLIES,
    Database,
    Line,
    MoveValue,
    Position,
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
    "Line",
    "MAX_LINE_PLIES",
    "MissingPhaseError",
    "MoveValue",
    "OstleError",
    "OutOfMemoryError",
    "OutOfRangeError",
    "Position",
    "Step",
    "Value",
    "open",
    "solve",
]
