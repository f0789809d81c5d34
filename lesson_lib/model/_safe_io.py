"""What the lesson's commands read, print and write, made safe.

Inputs are regular files read up to a cap, text a terminal or spreadsheet could act on is escaped,
outputs are new paths or regular files (the previous one kept), SIGTERM and SIGHUP stop as Ctrl-C.
"""

from __future__ import annotations

import codecs
import contextlib
import csv
import io
import os
import shutil
import signal
import stat
import threading
import time
from collections.abc import Iterator
from pathlib import Path

_ESCAPES = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}

_KINDS = (
    (stat.S_ISDIR, "a folder"),
    (stat.S_ISFIFO, "a FIFO (named pipe)"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISLNK, "a symbolic link"),
)


def printable(value: object, limit: int = 200) -> str:
    """``value`` as one line of plain text: control characters escaped, at most ``limit`` long.

    Every character Python does not count as printable (``str.isprintable``: control characters,
    line and paragraph separators, format characters such as zero-width spaces and bidirectional
    overrides, spaces other than U+0020) is written as an escape (``\\n``, ``\\x1b``, ``\\u202e``).

    Parameters
    ----------
    value : object
        A string; anything else is described by its type, never converted with its own ``__str__``.
    limit : int, default 200
        Characters kept at most; a longer text is cut there and ``...`` added.

    Returns
    -------
    str
    """
    if not isinstance(value, str):
        if type(value) in (bool, float) or (type(value) is int and value.bit_length() < 1000):
            value = repr(value)
        else:
            return f"<{type(value).__name__[:40]}>"
    out, size = [], 0
    # one character more than fits: each takes at least one, so a longer text always stops here
    for ch in str.__getitem__(value, slice(0, limit + 1)):
        piece = ch if ch.isprintable() else _ESCAPES.get(ch) or _escape(ch)
        size += len(piece)
        if size > limit:
            return "".join(out) + "..."
        out.append(piece)
    return "".join(out)


def _escape(ch: str) -> str:
    code = ord(ch)
    if code < 0x100:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


def require_output_file(path: str | os.PathLike, option: str = "--out") -> Path:
    """Refuse an output path that is anything but a new path or an existing regular file.

    Parameters
    ----------
    path : str or path-like
        Where a command is about to write.
    option : str, default "--out"
        The option that named it, for the message.

    Returns
    -------
    pathlib.Path
        The path; a symbolic link, a folder, a FIFO, a device or a socket is a ValueError.
    """
    p = Path(path)
    try:
        mode = os.lstat(p).st_mode
    except FileNotFoundError:
        return p
    if stat.S_ISLNK(mode):
        raise ValueError(
            f"{option} {str(p)!r} is a symbolic link; give the path of a regular file "
            "(a new one, or one to replace)"
        )
    if not stat.S_ISREG(mode):
        raise ValueError(
            f"{option} {str(p)!r} is {special_kind(mode)}, not a regular file; give a file's name "
            "(a new one, or one to replace)"
        )
    return p


def special_kind(mode: int) -> str:
    """What a file of this ``st_mode`` is in words, ``"a folder"`` ... ``"a special file"``.

    Parameters
    ----------
    mode : int

    Returns
    -------
    str
    """
    return next((kind for test, kind in _KINDS if test(mode)), "a special file")


def read_file(
    path: str | os.PathLike, what: str, error: type[Exception], limit: int, follow: bool = True
) -> bytes:
    """At most ``limit`` bytes of a regular file: every input file a command takes is read here.

    Parameters
    ----------
    path, what, limit : str or path-like, str, int
        The file, how messages name it ("results file", "roster") and the most bytes read.
    error : type of Exception
        Raised with a one-line message when the path is missing, not a regular file (a folder, a
        FIFO, a link to ``/dev/zero``), unreadable or more than ``limit`` bytes.
    follow : bool, default True
        False refuses a symbolic link too (a file a student's code could have replaced).

    Returns
    -------
    bytes
    """
    p = Path(path)
    try:
        # a FIFO or a device would block or never end: refused before it is opened, and what
        # was opened (without waiting for a writer) is checked again, in case it was swapped
        _require_regular(p, what, error, (os.stat if follow else os.lstat)(p).st_mode)
        flags = os.O_RDONLY | os.O_NONBLOCK | (0 if follow else os.O_NOFOLLOW)
        with os.fdopen(os.open(p, flags), "rb") as fh:
            _require_regular(p, what, error, os.fstat(fh.fileno()).st_mode)
            data = fh.read(limit + 1)  # never more, whatever the size says
    except FileNotFoundError:
        raise error(f"{what} {str(p)!r} does not exist: check the name") from None
    except OSError as exc:
        raise error(f"cannot read {what} {str(p)!r}: {exc.strerror or exc}") from None
    if len(data) > limit:
        raise error(f"{what} {str(p)!r} is larger than {limit:,} bytes: is it the right file?")
    return data


def read_text(path: str | os.PathLike, what: str, error: type[Exception], limit: int) -> str:
    """The text of a file read by :func:`read_file`: UTF-8 (a byte-order mark allowed), or UTF-16
    when it starts with UTF-16's byte-order mark (a spreadsheet's 'Unicode text').

    Parameters
    ----------
    path, what, error, limit
        As for :func:`read_file`; ``error`` also names the file and the encoding it failed.

    Returns
    -------
    str
    """
    data = read_file(path, what, error, limit)
    encoding = "UTF-16" if data[:2] in (codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE) else "UTF-8"
    try:
        text = data.decode("utf-16" if encoding == "UTF-16" else "utf-8-sig")
    except UnicodeDecodeError as exc:
        text, why = "", f"is not {encoding} text (byte {exc.start:,})"
    else:  # UTF-16 without its mark reads as UTF-8 with a NUL in every other place
        why = f"holds NUL characters, so it is not {encoding} text" if "\0" in text else ""
    if why:
        raise error(f"{what} {str(path)!r} {why}: save it as UTF-8 (a spreadsheet's 'CSV UTF-8')")
    return text


def read_csv_rows(
    path: str | os.PathLike, what: str, error: type[Exception], limit: int
) -> list[list[str]]:
    """The rows of a CSV file read by :func:`read_text`, the first a header with distinct names.

    Parameters
    ----------
    path, what, error, limit
        As for :func:`read_file`; ``error`` names the file, and the encoding, the line of a
        malformed row or of a cell over ``csv.field_size_limit()`` (131,072 characters), or a
        header name given twice (case and outer spaces ignored), which would hide one column.

    Returns
    -------
    list of list of str
    """
    reader = csv.reader(io.StringIO(read_text(path, what, error, limit), newline=""))
    try:
        rows = list(reader)
    except csv.Error as exc:
        raise error(f"{what} {str(path)!r}, line {reader.line_num}: {exc}") from None
    names = [name.strip().casefold() for name in rows[0]] if rows else []
    for i, name in enumerate(names):
        if name and name in names[:i]:
            raise error(
                f"{what} {str(path)!r}, header: the column {printable(rows[0][i], 60)!r} is "
                f"given twice (columns {names.index(name) + 1} and {i + 1}); keep one"
            )
    return rows


def _require_regular(path: Path, what: str, error: type[Exception], mode: int) -> None:
    """``error`` unless ``mode`` is a regular file's."""
    if not stat.S_ISREG(mode):
        raise error(f"{what} {str(path)!r} is {special_kind(mode)}, not a regular file")


def keep_previous(path: str | os.PathLike) -> Path | None:
    """Keep the regular file at ``path`` under a name with the time, before it is replaced.

    ``grades.csv`` is copied to ``grades.20260101-120000.csv`` (UTC; ``-1``, ``-2`` ... added if
    that name is taken; no existing file is overwritten). A missing or empty file is left alone.

    Parameters
    ----------
    path : str or path-like
        The file about to be replaced.

    Returns
    -------
    pathlib.Path or None
        Where the previous file is kept, or None.
    """
    p = Path(path)
    try:
        info = os.lstat(p)
    except FileNotFoundError:
        return None
    if not stat.S_ISREG(info.st_mode) or info.st_size == 0:
        return None
    stamp = time.strftime("%Y%m%d-%H%M%S", time.gmtime())
    for n in range(1000):
        kept = p.with_name(f"{p.stem}.{stamp}{f'-{n}' if n else ''}{p.suffix}")
        try:
            target = kept.open("xb")  # never over an existing file
        except FileExistsError:
            continue
        with target, p.open("rb") as source:
            shutil.copyfileobj(source, target)
        shutil.copystat(p, kept)
        return kept
    raise FileExistsError(f"no free name to keep the previous {p.name} under")


class Stopped(KeyboardInterrupt):
    """A command stopped by a signal; ``signum`` says which (the exit status is 128 + it)."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


@contextlib.contextmanager
def stop_on_signals(
    signals: tuple[int, ...] = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP),
) -> Iterator[None]:
    """Raise :class:`Stopped` (a ``KeyboardInterrupt``) on the first of ``signals``.

    Later signals are ignored until the block ends, so a second Ctrl-C cannot cut short the first
    one's clean-up (killing a sandbox, removing temp folders). Off the main thread nothing changes.

    Parameters
    ----------
    signals : tuple of int, default SIGINT, SIGTERM, SIGHUP
        The signals that stop the command.

    Returns
    -------
    contextlib.AbstractContextManager
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    fired: list[int] = []

    def stop(signum: int, frame: object) -> None:
        if not fired:
            fired.append(signum)
            raise Stopped(signum)

    previous = {s: signal.signal(s, stop) for s in signals}
    try:
        yield
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)
