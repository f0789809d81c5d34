"""The runner's handling of a cell that times out after starting processes of its own."""

import os
import select
import signal
import subprocess
import sys
import time
from pathlib import Path

import nbformat
import pytest
from sandbox_support import need_sandbox

from lesson_lib.coursework.grade import grade_notebook
from lesson_lib.coursework.kernel_stop import (
    _clear_kernel_group,
    _group_members,
    _interrupt_main_thread,
)
from lesson_lib.coursework.problems import reference

#: A session leader (standing in for the kernel) with three children that never end.
LEADER = """
import os, sys, time
children = []
for _ in range(3):
    pid = os.fork()
    if pid == 0:
        while True:
            time.sleep(0.01)
    children.append(pid)
print(" ".join(map(str, children)), flush=True)
while True:
    time.sleep(0.01)
"""


def _state(pid: int) -> str:
    """The process's state letter, or "" once it is gone."""
    try:
        return Path("/proc", str(pid), "stat").read_text().rpartition(")")[2].split()[0]
    except OSError:
        return ""


@pytest.fixture
def leader():
    """A running session leader and its three children's process ids."""
    proc = subprocess.Popen(
        [sys.executable, "-c", LEADER], stdout=subprocess.PIPE, text=True, start_new_session=True
    )
    children = [int(pid) for pid in proc.stdout.readline().split()]
    yield proc, children
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    proc.stdout.close()


def test_group_members_lists_the_leader_and_its_children(leader):
    """/proc is read for the group: the leader and the three children, nothing else."""
    proc, children = leader
    assert sorted(_group_members(proc.pid)) == sorted([proc.pid, *children])


def test_clearing_kills_the_children_and_leaves_the_kernel_stopped(leader):
    """Every member but the kernel is killed; the kernel is stopped, not killed."""
    proc, children = leader
    killed = _clear_kernel_group(proc.pid, proc.pid)
    assert killed == set(children)
    deadline = time.monotonic() + 60
    while any(_state(pid) not in ("", "Z", "X") for pid in children):
        assert time.monotonic() < deadline, [_state(pid) for pid in children]
        time.sleep(0.05)
    # stopped, for the caller to continue: a SIGSTOP takes effect when the process next runs,
    # which on a loaded machine can be after its children are gone
    while _state(proc.pid) != "T":
        assert time.monotonic() < deadline, _state(proc.pid)
        time.sleep(0.05)
    assert _group_members(proc.pid) == [proc.pid]  # the dead children are not listed
    os.kill(proc.pid, signal.SIGCONT)
    assert proc.poll() is None


#: A process like a kernel: threads waiting in system calls, the main thread asleep in one
#: long ``time.sleep`` with Python's SIGINT handler (KeyboardInterrupt) installed.
SLEEPER = """
import os, signal, threading, time
signal.signal(signal.SIGINT, signal.default_int_handler)  # as a kernel does, even if started ignored
r, w = os.pipe()
for _ in range(12):
    threading.Thread(target=os.read, args=(r, 1), daemon=True).start()
try:
    print("ready", flush=True)
    time.sleep(1000)
except KeyboardInterrupt:
    print("interrupted", flush=True)
"""


def _wait_until_asleep(pid: int) -> None:
    """Wait (up to 60 s, a loaded shared machine) until the main thread of ``pid`` sleeps in
    ``time.sleep``, so the race is the one meant: state S alone is also a wait for the GIL just
    before the sleep, where a signal caught in between leaves the sleep unbroken whoever sent it."""
    task = Path(f"/proc/{pid}/task/{pid}")
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        asleep = (task / "stat").read_text().rsplit(")", 1)[1].split()[0] == "S"
        wchan = (task / "wchan").read_text().strip()  # "0" where the kernel hides it
        if asleep and (wchan == "0" or "nanosleep" in wchan):
            return
        time.sleep(0.01)
    pytest.fail("the sleeper's main thread never reached its sleep")


def _signal_state(pid: int) -> str:
    """The main thread's state and signal masks, to say why a sleep was not broken."""
    lines = Path(f"/proc/{pid}/task/{pid}/status").read_text().splitlines()
    keep = ("State", "SigPnd", "ShdPnd", "SigBlk", "SigIgn", "SigCgt")
    wchan = Path(f"/proc/{pid}/task/{pid}/wchan").read_text()
    return "; ".join(x for x in lines if x.startswith(keep)) + f"; wchan {wchan}"


def test_an_interrupt_sent_to_a_stopped_process_reaches_its_sleeping_main_thread():
    """SIGINT sent while the process is stopped ends the main thread's sleep once continued.

    This is the kernel's state when the runner interrupts it again after
    clearing its group (stopped, then continued). A SIGINT sent to the
    process then goes to whichever of its 13 threads takes it first; taken by
    another thread, it only sets Python's flag, and the main thread sleeps on
    (with ``os.kill`` instead of :func:`_interrupt_main_thread`, 15 of 20 such
    processes slept on, and this test fails). Sent to the main thread, it
    always ends the sleep: five processes in a row are all interrupted.
    """
    for _ in range(5):
        proc = subprocess.Popen([sys.executable, "-c", SLEEPER], stdout=subprocess.PIPE, text=True)
        try:
            assert proc.stdout.readline().strip() == "ready"
            _wait_until_asleep(proc.pid)
            os.kill(proc.pid, signal.SIGSTOP)
            _interrupt_main_thread(proc.pid)
            os.kill(proc.pid, signal.SIGCONT)
            # its next line, not its exit: a loaded machine may be slow to end 13 threads
            said = select.select([proc.stdout], [], [], 30)[0]
            out = (
                proc.stdout.readline() if said else f"asleep after 30 s: {_signal_state(proc.pid)}"
            )
        finally:
            proc.kill()
            proc.wait()
            proc.stdout.close()
        assert out.strip() == "interrupted"


@pytest.mark.slow
def test_a_cell_that_starts_processes_and_waits_keeps_the_answers_computed_before_it(tmp_path):
    """The stopped cell's looping children are killed, its wait is interrupted, answers count.

    The answer is computed in the kernel (``float(...)``), which the source
    fallback cannot read: a score of 1 shows the extraction cell ran after the
    timeout. The cell's own thread waits in a system call (``time.sleep``),
    which only an interrupt delivered while the kernel runs ends, so that
    score also shows the interrupt arrived. The timed-out cell is not also
    counted as "raised an error": the runner stops reading its output at the
    time-out (see the next test for why). The limit is short because the
    cell always reaches it; the two cells before it take a fraction of a
    second.
    """
    need_sandbox()
    expected = float(reference("q1", "s301"))
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_code_cell('STUDENT = "s301"'),
        nbformat.v4.new_code_cell(f"answer_q1 = float({str(expected)!r})"),
        nbformat.v4.new_code_cell(
            "import os, time\nfor _ in range(3):\n    if os.fork() == 0:\n        while True:\n"
            "            pass\ntime.sleep(1000)"
        ),
    ]
    path = tmp_path / "s301.ipynb"
    nbformat.write(nb, path)
    sub = grade_notebook("s301", path, timeout=10)
    notes = " ".join(sub.notes)
    assert sub.status == "timed out", notes
    assert sub.results["q1"].score == 1.0, (notes, sub.results["q1"].message)
    assert "source" not in notes  # read from the kernel, not from the cell's text
    assert "3 process(es) the stopped cell had started were killed" in notes
    assert "raised an error" not in notes
    assert "leftover" not in notes


@pytest.mark.slow
def test_the_cells_time_limit_starts_once_the_kernel_is_ready(tmp_path, monkeypatch):
    """A kernel that takes longer to start than the whole limit still runs the cells.

    An IPython start-up file makes the kernel sleep 4 s before it is ready;
    the limit is 3 s, and the one cell takes no time. Counted from the
    kernel's start, nothing would run ("timed out", no payload); counted from
    the moment it is ready, the cell runs and the extraction cell reports it.
    """
    from lesson_lib.coursework.runner import execute

    startup = tmp_path / "ipython" / "profile_default" / "startup"
    startup.mkdir(parents=True)
    (startup / "00-slow.py").write_text("import time\ntime.sleep(4)\n")
    monkeypatch.setenv("IPYTHONDIR", str(tmp_path / "ipython"))
    record = execute(['STUDENT = "s301"', "answer_q1 = 12.5"], tmp_path, timeout=3)
    assert record["status"] == "ran"
    assert record["payload"] is not None
    assert record["raised"] == 0


#: The answer printed by the extraction cell when ``answer_q1 = float('54.0')`` ran.
ANSWER_54 = {
    "answers": {
        "answer_q1": {
            "kind": "number",
            "value": 54.0,
            "shown": "54.0",
            "why": "",
            "type_name": "",
            "count": -1,
        }
    },
    "student": "s301",
}


@pytest.mark.slow
def test_a_timed_out_cells_output_reader_cannot_take_the_answers(tmp_path, monkeypatch):
    """The answers printed after a time-out reach the runner, however fast it moves on.

    nbclient leaves a timed-out cell's IOPub reader running, and it drops
    every message that is not its cell's; the runner cancels it
    (``stop_reading_output``). Without that, the extraction cell's printed
    answers are lost whenever the timed-out cell's reader gets them first:
    now and then on a busy machine, and almost every time when the runner
    kills the cell's processes at once (a grace of 0.02 s instead of 0.5 s,
    as here). The answers also need the interrupt to end the cell: the
    next two tests force the ways it could not.
    Run in this process, without the sandbox, to reach the runner's timing.
    """
    import lesson_lib.coursework.kernel_stop as kernel_stop
    import lesson_lib.coursework.runner as runner

    monkeypatch.setattr(kernel_stop, "_GRACE_S", 0.02)
    sources = [
        'STUDENT = "s301"',
        "answer_q1 = float('54.0')",
        "import os, time\nfor _ in range(3):\n    if os.fork() == 0:\n        while True:\n"
        "            pass\ntime.sleep(1000)",
    ]
    for _ in range(2):
        record = runner.execute(sources, tmp_path, timeout=5)
        assert record["status"] == "timed out"
        assert record["cleared"] == 3
        assert record["payload"] == ANSWER_54


#: A cell whose kernel is stopped when its time limit (2 s here) comes: 40 threads wait in
#: ``os.read`` beside the main thread's sleep, and a child it forks stops the kernel after
#: 1 s (the child is killed when the runner clears the group).
STOPPED_AT_THE_LIMIT = """
import os, signal, threading, time
r, w = os.pipe()
for _ in range(40):
    threading.Thread(target=os.read, args=(r, 1), daemon=True).start()
kernel = os.getpid()
if os.fork() == 0:
    time.sleep(1)
    os.kill(kernel, signal.SIGSTOP)
    while True:
        time.sleep(1)
time.sleep(1000)
"""


@pytest.mark.slow
def test_the_answers_are_read_when_the_interrupt_reaches_a_stopped_kernel(tmp_path, monkeypatch):
    """A kernel that does not run between the interrupt and the clearing still gives its answers.

    On a busy machine the kernel may not get the CPU between the runner's
    interrupt and the stop of its group; here the cell forces that, its
    kernel stopped from 1 s before the limit. The group's SIGINT is then taken
    by any of the kernel's threads once it is continued, and only one of 42
    is the main thread, whose sleep it must end. With the group's SIGINT sent
    twice and no wait for the cell's end (before :func:`_interrupt_main_thread`
    and the wait), 5 of 8 such runs lost the answers (payload None, the
    extraction cell timed out behind the sleeping cell); the three runs here
    all pass only if every one is read.
    """
    import lesson_lib.coursework.kernel_stop as kernel_stop
    import lesson_lib.coursework.runner as runner

    monkeypatch.setattr(kernel_stop, "_GRACE_S", 0.02)
    sources = ['STUDENT = "s301"', "answer_q1 = float('54.0')", STOPPED_AT_THE_LIMIT]
    for _ in range(3):
        record = runner.execute(sources, tmp_path, timeout=3)
        assert record["status"] == "timed out"
        assert record["stopped_at"] == 2
        assert record["payload"] == ANSWER_54


@pytest.mark.slow
def test_a_cell_that_catches_two_interrupts_is_interrupted_until_it_ends(tmp_path, monkeypatch):
    """The runner interrupts again each round until the kernel reports the cell over.

    The cell catches the first two KeyboardInterrupts and sleeps on; the
    third ends it. The group's interrupt is the first, the main thread's
    interrupts after a round of :data:`~lesson_lib.coursework.kernel_stop._ROUND_S`
    without the cell's end are the second and the third, so the answers are
    read (with two interrupts in all, as before the wait, they were not).
    """
    import lesson_lib.coursework.kernel_stop as kernel_stop
    import lesson_lib.coursework.runner as runner

    monkeypatch.setattr(kernel_stop, "_GRACE_S", 0.02)
    stubborn = (
        "import time\ntry:\n    time.sleep(1000)\nexcept KeyboardInterrupt:\n"
        "    try:\n        time.sleep(1000)\n    except KeyboardInterrupt:\n"
        "        time.sleep(1000)"
    )
    sources = ['STUDENT = "s301"', "answer_q1 = float('54.0')", stubborn]
    record = runner.execute(sources, tmp_path, timeout=3)
    assert record["status"] == "timed out"
    assert record["payload"] == ANSWER_54


REACH_PARENT = r'''
import ctypes, json, os, subprocess, sys
from lesson_lib.coursework.runner import _keep_to_myself
fd = int(sys.argv[1])
if sys.argv[2] == "protect":
    _keep_to_myself(fd)
else:
    os.set_inheritable(fd, False)
probe = """
import ctypes, json, os
libc = ctypes.CDLL(None, use_errno=True)
parent = os.getppid()
found = {"attach": libc.ptrace(16, parent, 0, 0) == 0}
if found["attach"]:  # wait for the stop, then let it go
    os.waitpid(parent, 0x40000000)
    libc.ptrace(17, parent, 0, 0)
for name in ("mem", "environ", "fd"):
    try:
        os.listdir(f"/proc/{parent}/fd") if name == "fd" else open(f"/proc/{parent}/{name}", "rb").read(1)
        found[name] = True
    except OSError:
        found[name] = False
print(json.dumps(found))
"""
print(subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True).stdout)
'''


@pytest.mark.slow
def test_the_kernel_cannot_reach_into_the_runner(tmp_path):
    """Inside the sandbox a process of the same user (the kernel) can neither trace the
    runner nor read its memory, environment or descriptors once _keep_to_myself has run; the
    same probe against an unprotected parent shows what it guards against."""
    import json
    import tempfile

    from lesson_lib.coursework.sandbox import SANDBOX_HOME, run_isolated

    need_sandbox()
    (tmp_path / "probe.py").write_text(REACH_PARENT)
    seen = {}
    for mode in ("protect", "open"):
        fd, path = tempfile.mkstemp(dir=tmp_path.parent)
        try:
            run = run_isolated(
                [sys.executable, f"{SANDBOX_HOME}/probe.py", str(fd), mode],
                tmp_path,
                timeout=60,
                pass_fds=(fd,),
            )
        finally:
            os.close(fd)
            os.unlink(path)
        seen[mode] = json.loads(run.output.strip().splitlines()[-1])
    assert seen["protect"] == {"attach": False, "mem": False, "environ": False, "fd": False}
    assert seen["open"]["fd"] is True  # the same user may look into an unprotected parent


@pytest.mark.slow
def test_the_executed_notebook_keeps_the_first_output_and_every_short_traceback(tmp_path):
    """256 KiB of output are kept: the first cell's line is, the 300,000 characters after it are
    not, nor what follows, but the last cell's ZeroDivisionError is; the grader's cell is not."""
    from lesson_lib.coursework.runner import MAX_KEPT_OUTPUT, execute

    assert MAX_KEPT_OUTPUT == 262_144 < 300_000
    sources = ["print('hello')", "print('x' * 300_000)", "print('after')", "1 / 0"]
    record = execute(sources, tmp_path, timeout=60)
    cells = record["executed"]["cells"]
    assert [c["source"] for c in cells] == sources
    assert [o["text"] for o in cells[0]["outputs"]] == ["hello\n"]
    assert cells[1]["outputs"] == cells[2]["outputs"] == []
    (error,) = cells[3]["outputs"]
    assert (error["output_type"], error["ename"]) == ("error", "ZeroDivisionError")


def test_the_grader_keeps_a_valid_executed_notebook_with_text_and_png_only(tmp_path):
    """Whatever comes back by the descriptor: HTML and JavaScript output data are dropped, a
    file that is not a valid notebook (or a link) is not kept."""
    from lesson_lib.coursework.sandbox_run import _executed

    nb = nbformat.v4.new_notebook()
    cell = nbformat.v4.new_code_cell("show()")
    data = {"text/plain": "x", "text/html": "<script>alert(1)</script>", "image/png": "iVBORw0K"}
    cell.outputs = [nbformat.v4.new_output("display_data", data=data)]
    nb.cells = [cell]
    path = tmp_path / "executed.ipynb"
    nbformat.write(nb, path)
    kept = nbformat.reads(_executed(str(path)), as_version=4)
    assert kept.cells[0].outputs[0].data == {"text/plain": "x", "image/png": "iVBORw0K"}
    (tmp_path / "link.ipynb").symlink_to(path)
    (tmp_path / "bad.ipynb").write_text('{"status": "ran", "error": "result too large"}')
    assert _executed(str(tmp_path / "link.ipynb")) is None
    assert _executed(str(tmp_path / "bad.ipynb")) is None
