"""Run the Gradescope autograder zip as Gradescope would, in a clean Debian root (``make try-gradescope``).

Gradescope builds an image from its base image (Ubuntu 22.04 by default),
unpacks the zip into ``/autograder/source``, copies ``run_autograder`` to
``/autograder/run_autograder`` and runs ``setup.sh`` as root; for each
submission it puts the files in ``/autograder/submission``, the metadata in
``/autograder/submission_metadata.json``, runs ``/autograder/run_autograder``
from ``/autograder`` and reads ``/autograder/results/results.json``. This tool
does the same in a fresh Debian root made by ``mmdebstrap`` (Debian's
mirrors are what this machine reaches; Ubuntu's are not), entered with
bubblewrap as root with ``/proc``, ``/dev`` and the network:

1. build the zip (:func:`lesson_lib.coursework.gradescope.build_zip`) with a
   course salt of the tool's own (``salt`` in the work folder), as a class's
   edition made with ``make student`` has one, and a two-student roster;
2. make the root (``minbase`` with ``ca-certificates``), or unpack the one a
   previous run kept as a tarball in the work folder (``--fresh-root``
   makes it again);
3. lay out ``/autograder`` and run ``setup.sh`` (output in ``setup.log``);
4. grade submissions made from the student edition for one ID, drawn with
   that salt, its answers the reference ones (:data:`CASES`): one whose file
   name and notebook ID agree (every problem right, status ``ran``, graded in
   the sandbox); one whose notebook says another ID (nothing scored, status
   ``ID mismatch``); the first again with only the capabilities Docker's
   default profile keeps (:data:`DOCKER_CAPS`: no ``CAP_SYS_ADMIN``, so the
   grader's sandbox cannot start, but ``CAP_SETUID``, ``CAP_SETGID`` and
   ``CAP_CHOWN``), graded without the sandbox as a spare unprivileged user
   and saying so; the first with every capability dropped, where the
   notebook would run as the autograder's own user and so is not run
   ("Not graded", naming what is missing); and a hostile notebook, the first
   plus :data:`HOSTILE_CELL`, which raises ``RuntimeError`` if it can open
   the course salt, the roster, a salt variable in its environment, or the
   environment or memory of the grader or any other process above it run by
   another user, graded in the sandbox and as a spare user: neither run may
   report that error, and the salt appears in no ``results.json`` (run first
   as the autograder's own user, as a control, the cell must raise). Each
   is checked and kept as ``results-<case>.json``;
5. delete the root (``--keep`` leaves it for a look inside).

Where this machine differs from Gradescope's, the tool bridges it and says
so when it runs:

* a TLS proxy: the host's own CA certificates
  (``/usr/local/share/ca-certificates``) are added to the root and uv is
  told to use the system's store (``UV_SYSTEM_CERTS=1``);
* no route to GitHub, where uv downloads Python builds from: the
  interpreter running this tool (3.11, at least the patch release
  ``setup.sh`` asks for) is shown read-only in the root at its own path and
  its ``python3.11`` put first on ``PATH`` (``python3`` stays Debian's),
  standing in for uv's download (``--uv-download``
  lets uv download instead, as on Gradescope); the root's folders above it
  (``/root`` is 0700) are given ``o+x``, so that any user may run it as they
  may run uv's download in ``/autograder/python``.

Needs root, Linux, bubblewrap and mmdebstrap (installed with apt-get when
missing), the network, about 1.5 GB of disk and a few minutes.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
import zipfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from apt_install import apt_install, can_apt

REPO = Path(__file__).resolve().parents[1]
#: Debian suite of the root, and the mirror it comes from.
DEFAULT_SUITE = "bookworm"
DEFAULT_MIRROR = "http://deb.debian.org/debian"
#: PATH inside the root (Debian's default for root).
ROOT_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
#: Gradescope's default memory limit for one container, bytes ("768MB" on its
#: troubleshooting page; taken here as MiB, the stricter reading).
GRADESCOPE_MEMORY_BYTES = 768 * 2**20
#: The folder on the root's PATH holding ``python3.11``, the stand-in for uv's download.
STAND_IN_BIN = Path("/opt/try-gradescope-python/bin")
#: Where the host keeps extra CA certificates (a TLS proxy's).
HOST_CA_DIR = Path("/usr/local/share/ca-certificates")
#: Gradescope's metadata for the sample submissions (its documented fields).
METADATA = {
    "id": 123456,
    "created_at": "2026-03-01T14:22:32.365935-07:00",
    "assignment": {"due_date": "2026-03-02T23:00:00.000000-07:00", "title": "Problem set"},
    "submission_method": "upload",
    "users": [{"email": "jane.smith@example.edu", "id": 1234, "name": "Jane Smith"}],
}
#: The class roster shipped in the zip: the sample submitter (Gradescope user 1234) is s001.
ROSTER = (
    "lms_user_id,name,section,student_id,email\n"
    "1234,Jane Smith,A,s001,jane.smith@example.edu\n"
    "1235,John Doe,A,s002,john.doe@example.edu\n"
)
#: The capabilities of a process in a Docker container under Docker's default profile (the 14 of
#: moby's ``oci/caps/defaults.go``, listed in Docker's "Runtime privilege and Linux capabilities"):
#: no CAP_SYS_ADMIN, so bubblewrap run as root cannot make its namespaces, while CAP_SETUID,
#: CAP_SETGID and CAP_CHOWN let the grader run a notebook as a spare unprivileged user.
DOCKER_CAPS = tuple(
    f"CAP_{name}"
    for name in (
        "AUDIT_WRITE CHOWN DAC_OVERRIDE FOWNER FSETID KILL MKNOD NET_BIND_SERVICE NET_RAW "
        "SETFCAP SETGID SETPCAP SETUID SYS_CHROOT"
    ).split()
)
#: A code cell a hostile student adds: it tries to read the course salt and the roster, the
#: environment, and the environment and memory of pid 1 and of every process above it run by
#: another user (the grader), and raises when any of them opened.
HOSTILE_CELL = """\
import os

def opens(path):
    try:
        with open(path, "rb"):
            return True
    except OSError:
        return False

def owner_and_parent(pid):
    try:
        with open(f"/proc/{pid}/status") as fh:
            fields = dict(line.split(":", 1) for line in fh if ":" in line)
    except OSError:
        return None, 0
    return int(fields["Uid"].split()[0]), int(fields["PPid"])

read = [p for p in ("/autograder/source/salt", "/autograder/source/roster.csv") if opens(p)]
read += [f"${name}" for name in os.environ if "SALT" in name.upper()]
above, pid = {1}, os.getppid()
while pid > 0:  # the runner, the grader and everything above it
    above.add(pid)
    pid = owner_and_parent(pid)[1]
for pid in sorted(above):
    if owner_and_parent(pid)[0] not in (None, os.getuid()):
        read += [f"/proc/{pid}/{f}" for f in ("environ", "mem") if opens(f"/proc/{pid}/{f}")]
if read:
    raise RuntimeError(f"read the salt: {read}")
"""


@dataclass(frozen=True)
class Case:
    """One sample submission and what its ``results.json`` must say."""

    #: The ID in the notebook's metadata (None: the file name's).
    metadata_id: str | None = None
    #: The capabilities run_autograder keeps (None: every one, as root on this machine).
    caps: tuple[str, ...] | None = None
    #: True: :data:`HOSTILE_CELL` is added to the notebook.
    hostile: bool = False
    #: The status in ``extra_data`` (None: there is none, nothing was graded).
    status: str | None = "ran"
    full_marks: bool = True
    #: "sandbox", "spare user" (graded without the sandbox) or "not graded".
    graded: str = "sandbox"


#: The cases, in the order they run.
CASES = {
    "right": Case(),
    "mismatch": Case(metadata_id="s002", status="ID mismatch", full_marks=False),
    "no-sandbox": Case(caps=DOCKER_CAPS, graded="spare user"),
    "no-capabilities": Case(caps=(), status=None, full_marks=False, graded="not graded"),
    "hostile": Case(hostile=True),
    "hostile-no-sandbox": Case(caps=DOCKER_CAPS, hostile=True, graded="spare user"),
}
#: What results.json's output says when the grader's sandbox could not start.
NO_SANDBOX_NOTE = "Graded without the grader's sandbox"


class Clock:
    """Prints each step with the seconds since the run started."""

    def __init__(self) -> None:
        self.start = time.monotonic()
        self.marks: dict[str, float] = {}

    def step(self, message: str) -> None:
        """Print ``message`` with the elapsed time.

        Parameters
        ----------
        message : str
        """
        print(f"[{time.monotonic() - self.start:7.1f} s] {message}", flush=True)

    def timed(self, name: str, seconds: float) -> None:
        """Record how long a step took.

        Parameters
        ----------
        name : str
        seconds : float
        """
        self.marks[name] = seconds


def bwrap_argv(
    root: Path,
    cwd: str,
    env: dict[str, str],
    binds: Sequence[Path] = (),
    *,
    caps: Sequence[str] | None = None,
) -> list[str]:
    """bubblewrap's command line that enters ``root`` as root, like a container's shell.

    Parameters
    ----------
    root : Path
        The Debian root, bound read-write as ``/``.
    cwd : str
        Working folder inside the root.
    env : dict
        The whole environment of the command (nothing of the host's is passed on).
    binds : sequence of Path
        Host folders shown read-only at their own paths.
    caps : sequence of str, optional
        The only capabilities the command keeps (default: every one).
        Without ``CAP_SYS_ADMIN`` bubblewrap inside it cannot make the
        grader's sandbox, as in a Docker container (:data:`DOCKER_CAPS`).

    Returns
    -------
    list of str
        Options up to and including ``env -i ...``; append the command.
    """
    argv = ["bwrap", "--bind", str(root), "/", "--proc", "/proc", "--dev", "/dev"]
    argv += ["--ro-bind", "/etc/resolv.conf", "/etc/resolv.conf"]
    for folder in binds:
        argv += ["--ro-bind", str(folder), str(folder)]
    if caps is not None:
        argv += ["--cap-drop", "ALL"]
        for cap in caps:
            argv += ["--cap-add", cap]
    argv += ["--unshare-pid", "--die-with-parent", "--chdir", cwd, "env", "-i"]
    return argv + [f"{key}={value}" for key, value in env.items()]


def root_environment(extra_path: Sequence[str] = (), extra: dict[str, str] | None = None) -> dict:
    """The environment a command in the root gets: a login shell's, nothing of the host's.

    Parameters
    ----------
    extra_path : sequence of str
        Folders put before Debian's ``PATH``.
    extra : dict, optional
        More variables (this machine's bridges).

    Returns
    -------
    dict
    """
    env = {
        "PATH": ":".join([*extra_path, ROOT_PATH]),
        "HOME": "/root",
        "LANG": "C.UTF-8",
        "DEBIAN_FRONTEND": "noninteractive",
    }
    return {**env, **(extra or {})}


def unpack_autograder(zip_path: Path, autograder: Path) -> None:
    """Lay out ``/autograder`` as Gradescope's image build does.

    ``source/`` holds the zip's contents (executable bits kept) and
    ``run_autograder`` is copied to the top, where Gradescope runs it.

    Parameters
    ----------
    zip_path : Path
        The autograder zip.
    autograder : Path
        ``<root>/autograder`` (created).
    """
    source = autograder / "source"
    source.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(zip_path) as zf:
        for info in zf.infolist():
            target = Path(zf.extract(info, source))
            mode = info.external_attr >> 16
            if mode and target.is_file():
                target.chmod(mode & 0o777)
    shutil.copy2(source / "run_autograder", autograder / "run_autograder")


def write_submission(
    autograder: Path,
    student: str,
    metadata_id: str | None,
    salt: str | None = None,
    *,
    hostile: bool = False,
) -> Path:
    """A student's problem set with every answer right, and Gradescope's metadata.

    The student edition is written for ``student`` (with ``salt``, as
    ``make student`` does); each answer cell gets the reference answer of
    that student's variant.

    Parameters
    ----------
    autograder : Path
        ``<root>/autograder``; ``submission/`` is emptied first.
    student : str
        The ID in the file name (``<student>_problems.ipynb``).
    metadata_id : str, optional
        The ID written in the notebook's metadata (default ``student``).
    salt : str, optional
        The course salt of the edition (None: the public variants).
    hostile : bool, default False
        True: :data:`HOSTILE_CELL` is added as the last cell.

    Returns
    -------
    Path
        The notebook written.
    """
    import tempfile

    import nbformat

    from lesson_lib.coursework.problems import reference
    from lesson_lib.coursework.student_edition import write_edition
    from lesson_lib.coursework.variants import salted

    submission = autograder / "submission"
    shutil.rmtree(submission, ignore_errors=True)
    submission.mkdir(parents=True)
    with tempfile.TemporaryDirectory(prefix="try-gradescope-edition-") as edition:
        write_edition(Path(edition), REPO, [student], ["problems"], salt=salt)
        notebook = Path(edition) / student / f"{student}_problems.ipynb"
        nb = nbformat.read(notebook, as_version=4)
    with salted(salt):
        for cell in nb.cells:
            if cell.metadata.get("coursework") == "answer":
                qid = cell.source.split("=")[0].strip()[len("answer_") :]
                cell.source = f"answer_{qid} = {reference(qid, student)!r}"
    if hostile:
        nb.cells.append(nbformat.v4.new_code_cell(HOSTILE_CELL))
    nb.metadata["lesson"]["student_id"] = metadata_id or student
    target = submission / f"{student}_problems.ipynb"
    nbformat.write(nb, target)
    (autograder / "submission_metadata.json").write_text(json.dumps(METADATA, indent=2))
    return target


def check_results(results: dict, case: str, problems: int, salt: str | None = None) -> list[str]:
    """What is wrong with one case's ``results.json`` (empty: as expected).

    Parameters
    ----------
    results : dict
        The parsed ``results.json``.
    case : str
        A key of :data:`CASES`.
    problems : int
        How many problems the problem set has (one test each).
    salt : str, optional
        The course salt, which must appear nowhere in ``results``.

    Returns
    -------
    list of str
    """
    want = CASES[case]
    wrong = []
    tests = results.get("tests", [])
    if len(tests) != problems:
        wrong.append(f"{len(tests)} tests, expected {problems}")
    status = results.get("extra_data", {}).get("status")
    if status != want.status:
        wrong.append(f"status {status!r}, expected {want.status!r}")
    full = sum(t.get("max_score", 0) for t in tests)
    score = results.get("score")
    expected = full if want.full_marks else 0
    if not isinstance(score, int | float) or abs(score - expected) > 1e-6:
        wrong.append(f"score {score!r}, expected {expected!r}")
    output = results.get("output", "")
    if output.startswith("Not graded"):
        graded = "not graded"
    else:
        graded = "spare user" if NO_SANDBOX_NOTE in output else "sandbox"
    if graded != want.graded:
        wrong.append(f"{graded}, expected {want.graded}")
    if graded == "not graded" and "CAP_SETUID" not in output:
        wrong.append("the output does not say what is missing")
    if "RuntimeError" in output or "read the salt" in output:
        wrong.append("the notebook read something private (a cell raised RuntimeError)")
    if salt and salt in json.dumps(results):
        wrong.append("the course salt is in results.json")
    return wrong


def hostile_control(entry: Sequence[str], python: str = "/autograder/venv/bin/python") -> str:
    """What :data:`HOSTILE_CELL` raises run as the autograder's own user: it must read the salt.

    The control for the hostile cases: the cell finds what a notebook run as root could read.

    Parameters
    ----------
    entry : sequence of str
        The command that enters the root as root (:func:`bwrap_argv`).
    python : str
        The Python to run the cell with, inside the root.

    Returns
    -------
    str
        The last line it wrote to stderr ("" if none).
    """
    argv = [*entry, python, "-c", HOSTILE_CELL]
    proc = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, text=True)
    return (proc.stderr.strip().splitlines() or [""])[-1]


def tree_rss_bytes(pid: int) -> int:
    """Resident memory of ``pid`` and every process below it, bytes (Linux ``/proc``).

    Parameters
    ----------
    pid : int
        The top process.

    Returns
    -------
    int
        The sum of their ``VmRSS``; 0 once they have all ended.
    """
    children: dict[int, list[int]] = {}
    rss: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            status = Path("/proc", entry, "status").read_text()
        except OSError:
            continue
        fields = dict(line.split(":", 1) for line in status.splitlines() if ":" in line)
        children.setdefault(int(fields.get("PPid", "0").strip()), []).append(int(entry))
        kib = fields.get("VmRSS", "0 kB").split()[0]
        rss[int(entry)] = int(kib) * 1024
    total, todo = 0, [pid]
    while todo:
        current = todo.pop()
        total += rss.get(current, 0)
        todo += children.get(current, [])
    return total


def run_measured(argv: list[str], interval_s: float = 0.1) -> tuple[int, int]:
    """Run ``argv``; its exit status and the peak resident memory of its process tree.

    Parameters
    ----------
    argv : list of str
        The command.
    interval_s : float, default 0.1
        Seconds between samples (a shorter peak can be missed).

    Returns
    -------
    (int, int)
        Exit status, and peak memory in bytes.
    """
    proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL)
    peak = 0
    while proc.poll() is None:
        peak = max(peak, tree_rss_bytes(proc.pid))
        time.sleep(interval_s)
    return proc.returncode, peak


def _run(argv: list[str], log: Path | None = None) -> int:
    if log is None:
        return subprocess.run(argv, stdin=subprocess.DEVNULL, check=False).returncode
    with log.open("w") as fh:
        return subprocess.run(
            argv, stdin=subprocess.DEVNULL, stdout=fh, stderr=subprocess.STDOUT, check=False
        ).returncode


def _tail(path: Path, lines: int = 25) -> str:
    return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])


def make_base_root(tarball: Path, suite: str, mirror: str, clock: Clock) -> None:
    """Write a Debian ``minbase`` root with ``ca-certificates`` as a tarball (mmdebstrap).

    Parameters
    ----------
    tarball : Path
        Where to write it (replaced when done).
    suite : str
        Debian suite (``bookworm``...).
    mirror : str
        Debian mirror URL.
    clock : Clock
    """
    partial = tarball.with_suffix(".partial.tar")
    clock.step(f"mmdebstrap: a minbase Debian {suite} root from {mirror} (a few minutes)")
    started = time.monotonic()
    argv = ["mmdebstrap", "--variant=minbase", "--include=ca-certificates", suite, str(partial)]
    code = _run([*argv, mirror], tarball.parent / "mmdebstrap.log")
    if code != 0:
        raise RuntimeError(f"mmdebstrap failed ({code}); see {tarball.parent / 'mmdebstrap.log'}")
    partial.replace(tarball)
    clock.timed("debian root", time.monotonic() - started)


def host_python_folder() -> Path | None:
    """The installation of the Python running this tool, if it can stand in for uv's download.

    Returns
    -------
    Path or None
        ``sys.base_prefix`` when it is CPython 3.11 inside the range
        ``setup.sh`` asks for and not under ``/usr`` (which the root has
        its own of); else None.
    """
    from packaging.specifiers import SpecifierSet

    from lesson_lib.coursework.gradescope import PYTHON_REQUEST

    version = ".".join(str(n) for n in sys.version_info[:3])
    base = Path(sys.base_prefix).resolve()
    if version not in SpecifierSet(PYTHON_REQUEST) or base == Path("/usr"):
        return None
    if Path("/usr") in base.parents:
        return None
    return base


def try_zip(args: argparse.Namespace) -> int:
    """Run every step; 0 when every case gave the expected results.

    Parameters
    ----------
    args : argparse.Namespace
        The parsed command line (see :func:`main`).

    Returns
    -------
    int
    """
    from lesson_lib.coursework.gradescope import build_zip
    from lesson_lib.coursework.problems import PROBLEMS
    from lesson_lib.coursework.variants import create_salt_file

    clock = Clock()
    work = args.work.resolve()
    work.mkdir(parents=True, exist_ok=True)
    salt = create_salt_file(work / "salt")  # a course salt of its own, as make student makes
    (work / "roster.csv").write_text(ROSTER)
    zip_path = build_zip(
        work / "autograder.zip", REPO, salt_file=work / "salt", roster=work / "roster.csv"
    )
    clock.step(
        f"built {zip_path.relative_to(work.parent)} with the course salt in salt and roster.csv"
    )
    tarball = work / f"debian-{args.suite}.tar"
    if args.fresh_root or not tarball.is_file():
        make_base_root(tarball, args.suite, args.mirror, clock)
    else:
        clock.step(f"reusing {tarball.name} (--fresh-root makes it again)")
    root = work / "root"
    shutil.rmtree(root, ignore_errors=True)
    root.mkdir()
    try:
        return _in_root(args, clock, zip_path, tarball, root, len(PROBLEMS), salt)
    finally:
        if args.keep:
            clock.step(f"kept the root in {root}")
        else:
            shutil.rmtree(root, ignore_errors=True)
            clock.step("removed the root")


def _in_root(
    args: argparse.Namespace,
    clock: Clock,
    zip_path: Path,
    tarball: Path,
    root: Path,
    n: int,
    salt: str,
) -> int:
    subprocess.run(["tar", "-xf", str(tarball), "-C", str(root)], check=True)
    autograder = root / "autograder"
    unpack_autograder(zip_path, autograder)
    clock.step("unpacked the zip into /autograder/source, run_autograder copied to /autograder")
    bridges: dict[str, str] = {}
    cas = sorted(HOST_CA_DIR.glob("*.crt")) if HOST_CA_DIR.is_dir() else []
    if cas:
        for ca in cas:
            shutil.copy2(ca, root / "usr/local/share/ca-certificates" / ca.name)
        _run(
            [*bwrap_argv(root, "/", root_environment()), "update-ca-certificates"], root / "ca.log"
        )
        bridges["UV_SYSTEM_CERTS"] = "1"
        names = ", ".join(c.name for c in cas)
        clock.step(f"this machine's TLS proxy: added {names} to the root, UV_SYSTEM_CERTS=1")
    binds: list[Path] = []
    extra_path: list[str] = []
    python = None if args.uv_download else host_python_folder()
    if python is not None:
        (root / python.relative_to("/")).mkdir(parents=True, exist_ok=True)
        # any user may reach it, as uv's download in /autograder/python (the grader runs a
        # notebook as a spare user only with a Python that user can run); /root is 0700
        for folder in python.parents:
            inside = root / folder.relative_to("/")
            inside.chmod(inside.stat().st_mode | 0o001)
        binds.append(python)
        # Only the name uv looks for goes on PATH: setup.sh's python3 stays Debian's.
        stand_in = root / STAND_IN_BIN.relative_to("/")
        stand_in.mkdir(parents=True, exist_ok=True)
        (stand_in / "python3.11").symlink_to(python / "bin" / "python3.11")
        extra_path.append(str(STAND_IN_BIN))
        clock.step(
            f"no route to uv's Python downloads here: {python} (Python "
            f"{sys.version.split()[0]}) shown read-only in the root, its folders there o+x, "
            f"as {STAND_IN_BIN}/python3.11 first on PATH"
        )
    env = root_environment(extra_path, bridges)
    clock.step("setup.sh: apt-get, uv, the pinned packages into /autograder/venv")
    started = time.monotonic()
    log = args.work.resolve() / "setup.log"
    code = _run([*bwrap_argv(root, "/autograder/source", env, binds), "bash", "./setup.sh"], log)
    clock.timed("setup.sh", time.monotonic() - started)
    if code != 0:
        print(_tail(log))
        clock.step(f"setup.sh failed with exit status {code}; its output is in {log}")
        return 1
    clock.step(f"setup.sh done in {clock.marks['setup.sh']:.0f} s (output in {log.name})")
    raised = hostile_control(bwrap_argv(root, "/autograder", env, binds))
    clock.step(f"control: the hostile cell run as the autograder's own user: {raised}")
    failures = 0 if "RuntimeError: read the salt" in raised else 1
    if failures:
        clock.step("control: UNEXPECTED the hostile cell read nothing as the autograder's user")
    for case, want in CASES.items():
        write_submission(autograder, args.student, want.metadata_id, salt, hostile=want.hostile)
        results_dir = autograder / "results"
        shutil.rmtree(results_dir, ignore_errors=True)
        results_dir.mkdir()
        started = time.monotonic()
        run = "/autograder/run_autograder > /autograder/results/stdout 2>&1"
        entry = bwrap_argv(root, "/autograder", env, binds, caps=want.caps)
        code, peak = run_measured([*entry, "bash", "-c", run])
        clock.timed(f"run_autograder ({case})", time.monotonic() - started)
        results_file = results_dir / "results.json"
        if not results_file.is_file():
            print(_tail(results_dir / "stdout"))
            clock.step(f"{case}: no results.json (run_autograder exit status {code})")
            failures += 1
            continue
        results = json.loads(results_file.read_text())
        shutil.copy2(results_file, args.work.resolve() / f"results-{case}.json")
        wrong = check_results(results, case, n, salt)
        first = results.get("output", "").splitlines()
        points = sum(t.get("max_score", 0) for t in results.get("tests", []))
        clock.step(
            f"{case}: score {results.get('score')} of {points:g} points ({n} problems), status "
            f"{results.get('extra_data', {}).get('status')!r}, in "
            f"{clock.marks[f'run_autograder ({case})']:.1f} s, peak memory "
            f"{peak / 2**20:.0f} MiB; output: " + " | ".join(first[:4])
        )
        if peak > GRADESCOPE_MEMORY_BYTES:
            wrong.append(f"peak memory {peak / 2**20:.0f} MiB is over Gradescope's default 768")
        for line in wrong:
            clock.step(f"{case}: UNEXPECTED {line}")
        failures += bool(wrong)
    for name, seconds in clock.marks.items():
        print(f"  {name}: {seconds:.1f} s")
    print("every case as expected" if not failures else f"{failures} case(s) not as expected")
    return 1 if failures else 0


def main(argv: Sequence[str] | None = None) -> int:
    """Command-line entry point; see the module docstring.

    Parameters
    ----------
    argv : sequence of str, optional
        Arguments (default ``sys.argv[1:]``).

    Returns
    -------
    int
        0 when every case gave the expected results; 1 when not; 2 when this
        machine cannot run the check.
    """
    parser = argparse.ArgumentParser(prog="tools/try_gradescope_zip.py", description=__doc__)
    parser.add_argument("--work", type=Path, default=REPO / "_build" / "gradescope-try")
    parser.add_argument("--suite", default=DEFAULT_SUITE, help="Debian suite of the root")
    parser.add_argument("--mirror", default=DEFAULT_MIRROR)
    parser.add_argument("--student", default="s001", help="the ID of the sample submissions")
    parser.add_argument("--fresh-root", action="store_true", help="make the Debian root again")
    parser.add_argument("--keep", action="store_true", help="leave the root for a look inside")
    parser.add_argument(
        "--uv-download", action="store_true", help="let uv download Python (needs GitHub)"
    )
    args = parser.parse_args(argv)
    if not sys.platform.startswith("linux") or os.geteuid() != 0:
        print("try_gradescope_zip: needs Linux and root (it builds and enters a Debian root)")
        return 2
    if shutil.which("mmdebstrap") is None and can_apt():
        apt_install("try_gradescope_zip", ["mmdebstrap"], "install mmdebstrap")
    for tool, package in (("mmdebstrap", "mmdebstrap"), ("bwrap", "bubblewrap"), ("tar", "tar")):
        if shutil.which(tool) is None:
            print(f"try_gradescope_zip: {tool} is missing (Debian: apt-get install {package})")
            return 2
    try:
        return try_zip(args)
    except (RuntimeError, subprocess.CalledProcessError) as err:
        print(f"try_gradescope_zip: {err}")
        return 1


if __name__ == "__main__":
    sys.exit(main())
