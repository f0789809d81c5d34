"""The sandbox one submission runs in: what it can see, reach and use, and what is left after."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from sandbox_support import need_sandbox, sandbox_processes

from lesson_lib.coursework import sandbox
from lesson_lib.coursework.sandbox import (
    BASE_UID,
    SANDBOX_HOME,
    Limits,
    SandboxUnavailable,
    processes_of,
    require_sandbox,
    run_isolated,
)

PROBE = r"""
import json, os, socket, sys
report = {"uid": os.getuid(), "cwd": os.getcwd(), "env": dict(os.environ)}
try:
    socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=2).close()
    report["loopback"] = "connected"
except OSError as err:
    report["loopback"] = type(err).__name__
def can_write(path):
    try:
        with open(path, "a"):
            pass
        return True
    except OSError:
        return False
report["write_package"] = can_write(sys.argv[2])
report["see_outside"] = os.path.exists(sys.argv[3])
report["write_home"] = can_write("mine.txt")
report["pids"] = sorted(int(p) for p in os.listdir("/proc") if p.isdigit())
print(json.dumps(report))
"""


def _sandbox_run(tmp_path: Path, code: str, *args: str, **kw: object):
    scratch = tmp_path / "scratch"
    scratch.mkdir(exist_ok=True)
    (scratch / "probe.py").write_text(code)
    return run_isolated(
        [sys.executable, f"{SANDBOX_HOME}/probe.py", *args], scratch, timeout=120, **kw
    )


def test_unavailable_sandbox_names_bubblewrap_and_the_flag(monkeypatch):
    """Without bwrap the error says what to install and names --no-sandbox."""
    monkeypatch.setenv("LESSON_BWRAP", "/no/such/bwrap")
    with pytest.raises(SandboxUnavailable, match="bubblewrap") as info:
        require_sandbox()
    assert "--no-sandbox" in str(info.value) and "apt-get install bubblewrap" in str(info.value)


def test_timeout_must_be_finite_and_positive(tmp_path):
    """A zero, negative or infinite timeout is refused before anything runs."""
    for bad in (0, -1, float("inf"), float("nan")):
        with pytest.raises(ValueError, match="timeout"):
            run_isolated(["true"], tmp_path, timeout=bad, sandbox=False)


@pytest.mark.slow
def test_sandbox_hides_network_environment_and_files(tmp_path, monkeypatch):
    """No loopback to the host, no grader variable, package read-only, other folders unseen."""
    need_sandbox()
    monkeypatch.setenv("LESSON_PLANTED_SECRET", "planted-7f3a")
    outside = tmp_path / "other-student.ipynb"
    outside.write_text("{}")
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    listener.settimeout(0.5)
    import json

    import lesson_lib

    package_file = Path(lesson_lib.__file__).resolve()
    result = _sandbox_run(
        tmp_path, PROBE, str(listener.getsockname()[1]), str(package_file), str(outside)
    )
    with pytest.raises(TimeoutError):
        listener.accept()
    listener.close()
    report = json.loads(result.output.strip().splitlines()[-1])
    assert report["loopback"] != "connected"
    assert "planted-7f3a" not in result.output
    assert "LESSON_PLANTED_SECRET" not in report["env"]
    assert report["write_package"] is False and report["see_outside"] is False
    assert report["write_home"] is True and report["cwd"] == SANDBOX_HOME
    assert report["uid"] >= BASE_UID and report["uid"] != os.getuid()
    assert len(report["pids"]) <= 3, "the sandbox sees processes outside itself"


@pytest.mark.slow
@pytest.mark.skipif(os.geteuid() != 0, reason="only root has another user to run as")
def test_without_the_sandbox_a_root_grader_runs_the_notebook_as_another_user():
    """--no-sandbox (or a container without namespaces) as root: the child is a spare unprivileged
    user, so a file only root may read (the course salt) is refused it; its folder is its own."""
    with tempfile.TemporaryDirectory(prefix="lesson-grade-") as work:  # in /tmp, as the grader's
        secret = Path(work) / "salt"
        secret.write_text("course salt")
        secret.chmod(0o600)
        scratch = Path(work) / "submission"
        scratch.mkdir(mode=0o700)
        code = (
            f"import os; open('mine', 'w'); print(os.getuid(), flush=True); open({str(secret)!r})"
        )
        python = "/usr/bin/python3"  # Debian's, which every user may run (not a Python in /root)
        run = run_isolated([python, "-c", code], scratch, timeout=60, sandbox=False)
        child_uid = int(run.output.split()[0])
        assert child_uid >= BASE_UID and run.uid == child_uid
        assert run.returncode != 0 and "PermissionError" in run.output
        assert (scratch / "mine").stat().st_uid == child_uid
        assert processes_of(child_uid) == []


@pytest.mark.skipif(os.geteuid() != 0, reason="only root has another user to run as")
def test_a_root_that_may_not_change_user_keeps_running_as_itself():
    """In a container that took root's CAP_SETUID away the switch is not tried (it would fail every
    notebook); util-linux's setpriv drops every capability for the probe."""
    probe = "from lesson_lib.coursework.sandbox import _can_change_user as f; print(f())"
    argv = ["setpriv", "--bounding-set=-all", sys.executable, "-c", probe]
    stripped = subprocess.run(argv, capture_output=True, text=True, check=True).stdout
    full = subprocess.run(argv[2:], capture_output=True, text=True, check=True).stdout
    assert (stripped.strip(), full.strip()) == ("False", "True")
    probe = (
        "from lesson_lib.coursework.sandbox import spare_user_missing as f; print(f(sys.argv[1]))"
    )
    argv = ["setpriv", "--bounding-set=-all", sys.executable, "-c", f"import sys; {probe}"]
    python = "/usr/bin/python3"  # Debian's, which every user may run
    stripped = subprocess.run([*argv, python], capture_output=True, text=True, check=True).stdout
    full = subprocess.run([*argv[2:], python], capture_output=True, text=True, check=True).stdout
    assert "CAP_SETUID, CAP_SETGID and CAP_CHOWN" in stripped and "any user" not in stripped
    assert full.strip() == "None"


def test_a_python_in_a_private_folder_is_named_as_missing(tmp_path):
    """A Python under a folder without o+x (as /root is) cannot run as a spare user."""
    public = Path(tempfile.mkdtemp(prefix="lesson-python-", dir="/tmp"))
    try:
        public.chmod(0o755)
        for folder, mode in ((public / "open", 0o755), (public / "private", 0o700)):
            folder.mkdir(mode=mode)
            (folder / "python3").write_text("")
            (folder / "python3").chmod(0o755)
        assert sandbox._runs_for_anyone(str(public / "open" / "python3"))
        missing = sandbox.spare_user_missing(str(public / "private" / "python3"))
        assert missing is not None and "a Python any user can run" in missing
        assert str(public / "private" / "python3") in missing
    finally:
        shutil.rmtree(public)


def test_process_and_memory_limits_and_nothing_left_behind(tmp_path):
    """Forks stop at the process limit, 4 GB cannot be allocated, sleeping children die."""
    need_sandbox()
    code = (
        "import os, time\nn = 0\ntry:\n    while True:\n        if os.fork() == 0:\n"
        "            time.sleep(600)\n            os._exit(0)\n        n += 1\n"
        "except OSError:\n    print('forks', n)\n"
        "try:\n    b = bytearray(4 * 10**9)\n    print('allocated')\nexcept MemoryError:\n"
        "    print('MemoryError')\n"
    )
    result = _sandbox_run(tmp_path, code, limits=Limits(processes=40))
    forks = int(result.output.split("forks", 1)[1].split()[0])
    assert 1 <= forks < 40
    assert "MemoryError" in result.output and "allocated" not in result.output
    assert not result.timed_out
    assert result.uid is not None and processes_of(result.uid) == []


@pytest.mark.slow
def test_wall_clock_limit_kills_everything(tmp_path):
    """A command that outlives its timeout is killed, with a daemon it started."""
    need_sandbox()
    code = (
        "import os, time\nif os.fork() == 0:\n    os.setsid()\n    time.sleep(600)\n"
        "time.sleep(600)\n"
    )
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    (scratch / "probe.py").write_text(code)
    result = run_isolated([sys.executable, f"{SANDBOX_HOME}/probe.py"], scratch, timeout=5)
    assert result.timed_out
    assert result.uid is not None and processes_of(result.uid) == []


@pytest.mark.slow
def test_a_cancelled_run_is_killed_at_once_with_everything_it_started(tmp_path):
    """Another thread sets ``cancel`` 1 s into a 600 s sleep with a daemon: Cancelled is
    raised within a few seconds, and no process of the sandbox's user id is left."""
    import threading
    import time

    need_sandbox()
    code = (
        "import os, time\nif os.fork() == 0:\n    os.setsid()\n    time.sleep(600)\n"
        "time.sleep(600)\n"
    )
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    (scratch / "probe.py").write_text(code)
    cancel = threading.Event()
    threading.Timer(1.0, cancel.set).start()
    started = time.monotonic()
    with pytest.raises(sandbox.Cancelled):
        run_isolated(
            [sys.executable, f"{SANDBOX_HOME}/probe.py"], scratch, timeout=600, cancel=cancel
        )
    assert time.monotonic() - started < 60
    time.sleep(0.5)
    assert sandbox_processes(tmp_path.name) == []


@pytest.mark.slow
def test_printed_output_is_kept_only_up_to_keep_output(tmp_path):
    """64 MiB printed: the first keep_output bytes are kept, the rest is read and dropped
    (the command is not stopped by a full pipe and nothing is written to a file)."""
    need_sandbox()
    code = "import sys\nfor _ in range(64):\n    sys.stdout.write('x' * 2**20)\nprint('end')\n"
    result = _sandbox_run(tmp_path, code, keep_output=2**20)
    assert len(result.output) == 2**20 and set(result.output) == {"x"}
    assert result.returncode == 0 and not result.timed_out


def test_mounts_cover_python_and_the_package_and_not_the_repository():
    """The sandbox sees the interpreter, the environment and lesson_lib, nothing of /work else."""
    import lesson_lib
    from lesson_lib.coursework.sandbox_mounts import python_mounts

    shown = [m.dest for m in python_mounts() if not m.hide]
    package = Path(lesson_lib.__file__).resolve().parent
    assert any(p == package or p in package.parents for p in shown)
    assert any(
        Path(sys.prefix).resolve() == p or p in Path(sys.prefix).resolve().parents for p in shown
    )
    repo = Path(__file__).resolve().parents[1]
    assert repo not in shown, "the whole repository (tests, _build) would be visible"


def test_a_reserved_user_id_is_not_handed_out_twice():
    """Two reservations at once get two ids; a released id is found again."""
    with sandbox._reserved_uid() as first:
        assert first >= sandbox.BASE_UID
        with sandbox._reserved_uid() as second:
            assert second != first
    with sandbox._reserved_uid() as again:
        assert again == first


def test_an_id_another_process_has_claimed_is_skipped():
    """The race between two graders: an id claimed elsewhere, with no process yet, is not used.

    A second process claims the id this process would choose, as a grader
    does between choosing an id and starting its sandbox (no process of that
    id exists yet, so ``/proc`` cannot tell). This process must choose
    another, and may choose it again once the claim is gone.
    """
    import subprocess

    with sandbox._reserved_uid() as wanted:
        pass
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import socket, sys\n"
            "s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)\n"
            f"s.bind('\\0lesson-sandbox-uid-{wanted}')\n"
            "print('held', flush=True)\n"
            "sys.stdin.read()\n",
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout.readline().strip() == "held"
        with sandbox._reserved_uid() as chosen:
            assert chosen != wanted
    finally:
        holder.stdin.close()
        holder.wait(timeout=30)
        holder.stdout.close()
    with sandbox._reserved_uid() as again:
        assert again == wanted


FILL = r"""
import errno, json, os, sys
MiB = 2**20
def fill(folder, prefix):
    written, n, too_big = 0, 0, False
    while n < 64:
        n += 1
        try:
            with open(os.path.join(folder, f"{prefix}{n}"), "wb") as fh:
                for _ in range(16):  # 16 MiB per file, more than the file-size limit
                    fh.write(b"x" * MiB)
                    written += MiB
        except OSError as err:
            if err.errno == errno.EFBIG:
                too_big = True
                written = written - MiB + (os.path.getsize(fh.name) % MiB)
                continue
            break
    return {"bytes": sum(os.path.getsize(os.path.join(folder, f)) for f in os.listdir(folder)
                         if f.startswith(prefix)), "too_big": too_big,
            "largest": max(os.path.getsize(os.path.join(folder, f)) for f in os.listdir(folder)
                           if f.startswith(prefix))}
report = {"tmp": fill("/tmp", "t"), "home": fill(os.getcwd(), "h")}
for folder in ("/dev/shm", "/dev", "/", "/home"):
    try:
        open(os.path.join(folder, "x"), "wb").close()
        report[folder] = "writable"
    except OSError:
        report[folder] = "not writable"
print(json.dumps(report))
"""


@pytest.mark.slow
def test_writable_space_is_bounded_and_off_the_hosts_disk(tmp_path):
    """/tmp and the home folder each hold at most their tmpfs size (8 MiB here), a file at
    most the file-size limit (4 MiB), nothing else is writable, and the host's folder gets
    nothing: the files written live in the sandbox's memory and end with it."""
    import json

    need_sandbox()
    limits = Limits(tmp_bytes=8 * 2**20, home_bytes=8 * 2**20, file_bytes=4 * 2**20)
    result = _sandbox_run(tmp_path, FILL, limits=limits)
    report = json.loads(result.output.strip().splitlines()[-1])
    for where in ("tmp", "home"):
        assert 6 * 2**20 <= report[where]["bytes"] <= 8 * 2**20, report
        assert report[where]["largest"] <= 4 * 2**20 and report[where]["too_big"], report
    assert {report[f] for f in ("/dev/shm", "/dev", "/", "/home")} == {"not writable"}
    assert sorted(p.name for p in (tmp_path / "scratch").iterdir()) == ["probe.py"]


SEE_HOME = r"""
import json, os, sys
found = []
for top, dirs, files in os.walk(sys.argv[1]):
    found += [os.path.join(top, name) for name in files]
site = sys.argv[2]
print(json.dumps({"files": found, "site": os.listdir(site) if os.path.isdir(site) else None,
                  "include": os.path.exists(sys.argv[3])}))
"""


@pytest.mark.slow
def test_nothing_of_the_graders_home_but_what_python_needs(tmp_path):
    """Wherever Python lives (here pyenv, under the grader's home), the sandbox sees of that
    home only the interpreter, its standard library, its shared libraries, the virtual
    environment and lesson_lib: the installation's own site-packages is empty, its headers
    and every other file of the home are absent."""
    import json
    import sysconfig

    import lesson_lib

    need_sandbox()
    home = Path(os.path.expanduser("~")).resolve()
    base = {"base": sys.base_prefix, "platbase": sys.base_exec_prefix}
    stdlib = Path(sysconfig.get_path("stdlib", vars=base)).resolve()
    base_site = Path(sysconfig.get_path("purelib", vars=base)).resolve()
    include = Path(sysconfig.get_path("include", vars=base)).resolve()
    result = _sandbox_run(
        tmp_path, SEE_HOME, str(home), str(base_site), str(include), keep_output=2**28
    )
    report = json.loads(result.output.strip().splitlines()[-1])
    allowed = [
        Path(os.path.realpath(sys.executable)),
        stdlib,
        Path(sys.prefix).resolve(),
        Path(lesson_lib.__file__).resolve().parent,
        *Path(sys.base_prefix, "lib").resolve().glob("lib*.so*"),
    ]
    strays = [
        f for f in report["files"] if not any(a == Path(f) or a in Path(f).parents for a in allowed)
    ]
    assert strays == []
    if base_site.is_relative_to(stdlib) and sys.prefix != sys.base_prefix:
        assert report["site"] == []
    if include.exists() and include.is_relative_to(home):
        assert report["include"] is False
