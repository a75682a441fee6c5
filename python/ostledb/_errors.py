"""The exceptions ostledb raises. Each is an ``OstleError``, and also the built-in
exception a Python programmer would catch for it (``ValueError`` for a bad board,
``LookupError`` for a phase the database lacks, ``FileNotFoundError`` for no database)."""


class OstleError(Exception):
    """Every error of ostledb."""


class BadBoardError(OstleError, ValueError):
    """A board (or previous board) that is malformed or breaks the rules, or a previous
    board that does not lead to the board by one move."""


class BadMoveError(OstleError, ValueError):
    """A move that is not written right or that the board does not have."""


class DatabaseError(OstleError):
    """A database that cannot be read: locked by a writer, of a newer format, an I/O
    error."""


class DatabaseNotFoundError(DatabaseError, FileNotFoundError):
    """No solved database at the path given."""


class MissingPhaseError(DatabaseError, LookupError):
    """The database does not hold the board's phase (a 4-against-5 board in a database
    solved up to four pieces a side, say). ``Database.get`` returns its default instead."""


class CorruptDatabaseError(DatabaseError):
    """A damaged database file: a checksum mismatch, a truncated or impossible file."""


class BackendError(DatabaseError):
    """A key lookup backend that is unknown, not compiled in, or missing from the database."""


class DatabaseClosedError(OstleError, ValueError):
    """A call on a database after ``close()``."""
