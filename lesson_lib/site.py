"""Build the book the way ``make book`` does, for tests and benchmarks.

One function so the test suite, the browser tests and the speed benchmark
all build with the same command and the same strictness (``-W -n``).
"""

from __future__ import annotations

import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

#: The repository root: the folder holding ``_config.yml``.
ROOT = Path(__file__).resolve().parent.parent


@dataclass(frozen=True)
class BuildResult:
    """Outcome of one ``jupyter-book build``.

    Attributes
    ----------
    returncode : int
        The command's exit status (0 on success).
    output : str
        Combined stdout and stderr.
    html_dir : pathlib.Path
        Where the HTML landed.
    """

    returncode: int
    output: str
    html_dir: Path

    @property
    def warnings(self) -> list[str]:
        """Lines of the output that Sphinx reports as warnings or errors."""
        return [
            line
            for line in self.output.splitlines()
            if ("WARNING:" in line and "[IPKernelApp]" not in line) or "ERROR:" in line
        ]


def build_book(root: Path = ROOT, timeout: float = 1200.0) -> BuildResult:
    """Run ``jupyter-book build . -W -n --keep-going`` in ``root``.

    Parameters
    ----------
    root : pathlib.Path, optional
        Repository root; defaults to this checkout.
    timeout : float, default 1200.0
        Seconds before the build is stopped.

    Returns
    -------
    BuildResult
        Exit status, output and the HTML folder (``root / "_build" / "html"``).
    """
    exe = Path(sys.executable).with_name("jupyter-book")
    cmd = [str(exe), "build", ".", "-W", "-n", "--keep-going"]
    proc = subprocess.run(cmd, cwd=root, capture_output=True, text=True, timeout=timeout)
    return BuildResult(proc.returncode, proc.stdout + proc.stderr, root / "_build" / "html")


def toc_files(root: Path = ROOT) -> list[str]:
    """Every page listed in ``_toc.yml``, as paths without suffix (``book/sizing``).

    Parameters
    ----------
    root : pathlib.Path, optional
        Repository root.

    Returns
    -------
    list of str
        The root page first, then the chapters in order.
    """
    import yaml  # a dependency of Jupyter Book

    toc = yaml.safe_load((root / "_toc.yml").read_text())
    files = [toc["root"]]

    def walk(entries: list[dict]) -> None:
        for entry in entries:
            if "file" in entry:
                files.append(entry["file"])
            for key in ("chapters", "sections", "parts"):
                walk(entry.get(key, []))

    walk(toc.get("parts", []) + toc.get("chapters", []))
    return files
