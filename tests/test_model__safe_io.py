"""Shared guards: printable text, output paths that are regular files, earlier files kept."""

from __future__ import annotations

import os
import socket
import stat

import pytest

from lesson_lib.model._safe_io import (
    keep_previous,
    printable,
    read_csv_rows,
    read_file,
    read_text,
    require_output_file,
)


@pytest.mark.parametrize(
    ("raw", "shown"),
    [
        ("alice: 16 / 16 (ran, 2.1 s)\nx", "alice: 16 / 16 (ran, 2.1 s)\\nx"),
        ("a\rb\tc", "a\\rb\\tc"),
        ("\x1b]52;c;cHduZWQ=\x07", "\\x1b]52;c;cHduZWQ=\\x07"),  # a clipboard write
        ("\x1b[2J\x1b]0;title\x07", "\\x1b[2J\\x1b]0;title\\x07"),  # clear screen, title
        ("a001\u200b", "a001\\u200b"),  # zero-width space
        ("\u202eevil", "\\u202eevil"),  # right-to-left override
        ("line\u2028sep", "line\\u2028sep"),
        ("\U000e0041tag", "\\U000e0041tag"),
        ("plain s001 \u00e9", "plain s001 \u00e9"),
    ],
)
def test_control_characters_are_escaped(raw, shown):
    """Each character a terminal could act on becomes a visible escape; letters stay."""
    assert printable(raw) == shown


def test_printable_is_capped_and_never_calls_an_objects_str():
    """At most ``limit`` characters plus '...'; objects are named by type only."""
    assert printable("x" * 300, limit=10) == "x" * 10 + "..."
    assert printable("\n" * 300, limit=10) == "\\n" * 5 + "..."
    assert printable("short", limit=10) == "short"

    class Loud(str):
        def __str__(self):
            raise AssertionError("called")

        def __getitem__(self, key):
            raise AssertionError("called")

    assert printable(Loud("fine")) == "fine"
    assert printable(object()) == "<object>"
    assert printable(10**5000) == "<int>" and printable(3) == "3" and printable(1.5) == "1.5"


def test_new_paths_and_regular_files_are_accepted(tmp_path):
    """A new name, or an existing regular file, may be written."""
    assert require_output_file(tmp_path / "new.csv") == tmp_path / "new.csv"
    (tmp_path / "old.csv").write_text("x")
    assert require_output_file(tmp_path / "old.csv") == tmp_path / "old.csv"


def test_special_files_and_links_are_refused(tmp_path):
    """A folder, a FIFO, a socket, a device node, /dev/stdout, a symbolic link: refused."""
    os.mkfifo(tmp_path / "fifo")
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(tmp_path / "sock"))
    (tmp_path / "link").symlink_to(tmp_path / "target.csv")
    cases = {
        tmp_path: "a folder",
        tmp_path / "fifo": "a FIFO",
        tmp_path / "sock": "a socket",
        tmp_path / "link": "a symbolic link",
        "/dev/stdout": "a symbolic link",
        "/dev/null": "a character device",
    }
    if os.geteuid() == 0:
        os.mknod(tmp_path / "dev", stat.S_IFCHR | 0o600, os.makedev(1, 3))  # a copy of /dev/null
        cases[tmp_path / "dev"] = "a character device"
    try:
        for path, kind in cases.items():
            with pytest.raises(ValueError, match=f"--details .* is {kind}"):
                require_output_file(path, "--details")
    finally:
        server.close()
    assert not (tmp_path / "target.csv").exists()


def test_the_previous_file_is_kept_with_the_time(tmp_path):
    """grades.csv is kept as grades.<UTC time>.csv, twice in one second as ...-1.csv."""
    grades = tmp_path / "grades.csv"
    assert keep_previous(grades) is None
    grades.write_text("")
    assert keep_previous(grades) is None  # nothing to lose
    grades.write_text("43 rows")
    first = keep_previous(grades)
    second = keep_previous(grades)
    assert first.read_text() == second.read_text() == "43 rows"
    assert first.name.startswith("grades.2") and first.suffix == ".csv"
    assert first != second
    assert len(first.stem) == len("grades.20260101-120000")
    grades.write_text("3 rows")  # a copy: rewriting the file in place leaves it as it was
    assert first.read_text() == "43 rows"


def test_sigterm_stops_a_block_as_ctrl_c_does_and_a_second_signal_waits():
    """Inside stop_on_signals SIGTERM raises Stopped (a KeyboardInterrupt) with its number;
    a second signal during the clean-up is ignored; the old handlers come back after."""
    import signal

    from lesson_lib.model._safe_io import Stopped, stop_on_signals

    before = signal.getsignal(signal.SIGTERM)
    cleaned = []
    with pytest.raises(Stopped) as info, stop_on_signals():
        try:
            os.kill(os.getpid(), signal.SIGTERM)
            for _ in range(10**6):  # the handler runs at the next instruction
                pass
        finally:
            os.kill(os.getpid(), signal.SIGINT)  # a second Ctrl-C, ignored
            for _ in range(10**5):
                pass
            cleaned.append(True)
    assert info.value.signum == signal.SIGTERM and isinstance(info.value, KeyboardInterrupt)
    assert cleaned == [True]
    assert signal.getsignal(signal.SIGTERM) is before


def test_the_reader_refuses_a_fifo_and_a_link_to_dev_zero(tmp_path):
    os.mkfifo(tmp_path / "pipe.csv")
    with pytest.raises(ValueError, match=r"pipe\.csv' is a FIFO \(named pipe\), not a regular"):
        read_file(tmp_path / "pipe.csv", "roster", ValueError, 100)
    (tmp_path / "zero.csv").symlink_to("/dev/zero")
    with pytest.raises(ValueError, match=r"zero\.csv' is a character device"):
        read_csv_rows(tmp_path / "zero.csv", "roster", ValueError, 100)
    (tmp_path / "real.csv").write_text("a\n")
    (tmp_path / "link.csv").symlink_to(tmp_path / "real.csv")
    assert read_file(tmp_path / "link.csv", "roster", ValueError, 100) == b"a\n"
    with pytest.raises(ValueError, match="is a symbolic link, not a regular file"):
        read_file(tmp_path / "link.csv", "notebook", ValueError, 100, follow=False)


def test_csv_rows_name_the_file_the_line_and_the_encoding(tmp_path):
    path = tmp_path / "t.csv"
    path.write_bytes(b"\xef\xbb\xbfa,b\n1,2\n")  # a spreadsheet's UTF-8 with a byte-order mark
    assert read_csv_rows(path, "TA's file", KeyError, 100) == [["a", "b"], ["1", "2"]]
    path.write_text("a,b\n1,2\n" + "x" * 131_073 + "\n")
    with pytest.raises(ValueError, match=r"^roster '.*t\.csv', line 3: field larger than"):
        read_csv_rows(path, "roster", ValueError, 2**20)
    path.write_text("name\nRené\n", encoding="latin-1")
    with pytest.raises(ValueError, match=r"roster '.*t\.csv' is not UTF-8 text \(byte 8\)"):
        read_csv_rows(path, "roster", ValueError, 100)


@pytest.mark.parametrize("encoding", ["utf-16", "utf-16-le", "utf-16-be"])
def test_utf_16_text_with_its_byte_order_mark_is_read(tmp_path, encoding):
    """A spreadsheet's 'Unicode text' is UTF-16 with a byte-order mark: read as such; without the
    mark, or cut in the middle of a character, it is refused naming the file and the encoding."""
    path = tmp_path / "t.csv"
    mark = "" if encoding == "utf-16" else "\ufeff"  # Python's utf-16 writes one itself
    path.write_text(mark + "a,b\n1,René\n", encoding=encoding)
    assert read_csv_rows(path, "TA's file", KeyError, 100) == [["a", "b"], ["1", "René"]]
    path.write_bytes(path.read_bytes()[:-1])
    with pytest.raises(ValueError, match=r"^details CSV '.*t\.csv' is not UTF-16 text \(byte"):
        read_csv_rows(path, "details CSV", ValueError, 100)
    path.write_bytes("a,b\n".encode("utf-16-le"))
    with pytest.raises(
        ValueError, match=r"^roster '.*t\.csv' holds NUL characters, so it is not UT"
    ):
        read_text(path, "roster", ValueError, 100)


def test_a_header_name_given_twice_is_refused_naming_it(tmp_path):
    """Case and outer spaces ignored, as every reader looks columns up; blank names may repeat."""
    path = tmp_path / "t.csv"
    path.write_text("Student,,points,,student \n1,2,3,4,5\n")
    with pytest.raises(KeyError, match=r"TA's file '.*t\.csv', header: the column 'student ' is"):
        read_csv_rows(path, "TA's file", KeyError, 100)
    path.write_text("student,,points,\n1,2,3,4\n")
    assert len(read_csv_rows(path, "TA's file", KeyError, 100)) == 2
