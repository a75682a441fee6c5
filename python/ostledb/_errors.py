"""The exceptions ostledb raises. Each is an ``OstleError``, and also the built-in
exception a Python programmer would catch for it (``ValueError`` for a bad board,
``KeyError`` (a ``LookupError``) for a phase the database lacks, ``FileNotFoundError`` for no database,
``MemoryError`` for a request larger than the memory this process can have)."""


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


class MissingPhaseError(DatabaseError, KeyError):
    """The database does not hold the board's phase (a 4-against-5 board in a database
    solved up to four pieces a side, say). ``Database.get`` returns its default instead.
    A ``KeyError``, as a missing key of a mapping is (and so a ``LookupError``); its
    message reads as the other errors' do, not quoted as a ``KeyError``'s key is."""

    def __str__(self) -> str:
        return Exception.__str__(self)


class CorruptDatabaseError(DatabaseError):
    """A damaged database file: a checksum mismatch, a truncated or impossible file."""


class BackendError(DatabaseError):
    """A key lookup backend that is unknown, not compiled in, or missing from the database."""


class DatabaseClosedError(OstleError, ValueError):
    """A call on a database after ``close()``."""


class OutOfRangeError(OstleError, ValueError):
    """A count or size outside the range ostledb takes for it: ``max_plies`` of
    ``Database.line`` above ``MAX_LINE_PLIES``, a ``sample`` larger than its phase, a
    negative index. The message names the argument and its bounds."""


class OutOfMemoryError(OstleError, MemoryError):
    """A request that the memory this process can count on (its ``ulimit -v`` and the
    machine's available memory) does not hold, refused before anything is allocated: a
    ``sample`` or ``positions`` slice of too many codes, too many boards for
    ``probe_many``, a ``cache_mb`` larger than the memory there is."""
