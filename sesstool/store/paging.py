"""Reading rows of a spill file's table back a page at a time (issue 11 item 1): ``paged`` walks
pages past the last key, ``sized_page`` answers a page bounded by bytes as well as by rows. Shared
by ``store.spilling_list`` (a spilled list's walk), ``store.spill.OrderedRows`` (a spilled dict's
read-back), ``store.run_spill.NumberedRowsTable`` (the upgrade chain's held events) and derive's
index of lines; ``text_key``/``key_text``, a text as a table's key and back (here, not in
``store.spill``: a walk's paths need them before any spill file, and sqlite3, is loaded).
Nothing here opens or names a file."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Any, Protocol, TypeVar

R = TypeVar("R", bound=Sequence[Any])


def text_key(text: str) -> bytes:
    """A text as a table's key, exactly: its UTF-8 bytes, a lone surrogate (valid in a log
    written by Node, an undecodable byte of a file name) passed through. Its ``memcmp`` order is
    the code points' (Python's ``str`` order)."""
    return text.encode("utf-8", "surrogatepass")


def key_text(key: bytes | memoryview) -> str:
    """The text of a ``text_key`` read back."""
    return bytes(key).decode("utf-8", "surrogatepass")


class Executes(Protocol):
    """What runs a statement (``store.spill.SpillFile``)."""

    def execute(self, sql: str, args: Sequence[Any] = ..., /) -> Any: ...


def paged(read: Callable[[int], Sequence[R]], last: int, key: int | None = 0, full: int = 0) -> Iterator[R]:
    """The rows ``read(last)`` answers, a page at a time: ``read`` runs one statement that answers
    the rows whose integer key is past ``last``, in its order; the next page starts past the key
    of the last row of the one before (``row[key]``; ``key`` None: the rows are numbered one after
    the other, so past ``last`` plus the rows read). No cursor stays open while the caller runs
    other statements on the same file, and one page is held at a time. Ends at an empty page, or
    at one shorter than ``full`` rows (``full`` 0: a page of any length may be followed by more)."""
    while True:
        rows = read(last)
        if not rows:
            return
        last = last + len(rows) if key is None else int(rows[-1][key])
        short = len(rows) < full
        yield from rows
        del rows
        if short:
            return


def sized_page(
    file: Executes, table: str, columns: str, size: str, last: int, rows: int, most: int
) -> list[Any]:
    """``columns`` of the rows of ``table`` numbered (its column ``n``) past ``last``, in order: the
    sizes (the SQL expression ``size``) of the next ``rows`` first, then the rows of as many as fit
    ``most`` bytes (one at least, however long). A page for ``paged``: what a statement reads back
    is bounded by bytes, not by a count of rows of any length (a ``SpillingList``'s items, an
    ``OrderedRows``' keys and values: each as long as a log chose it)."""
    sizes = file.execute(
        f"SELECT n, {size} FROM {table} WHERE n > ? ORDER BY n LIMIT ?", (last, rows)
    ).fetchall()
    if not sizes:
        return []
    through, total = sizes[0][0], 0
    for n, length in sizes:
        total += length
        if total > most and n != sizes[0][0]:
            break
        through = n
    found = file.execute(f"SELECT {columns} FROM {table} WHERE n > ? AND n <= ? ORDER BY n", (last, through))
    return list(found.fetchall())
