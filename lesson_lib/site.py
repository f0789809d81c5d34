"""Build the book the way ``make book`` does, for tests and benchmarks.

One function so the test suite, the browser tests and the speed benchmark
all build with the same command and the same strictness (``-W -n``).
"""

from __future__ import annotations

import hashlib
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lesson_lib.jupyter_book_jobs import default_jobs

#: The repository root; the folder holding ``_config.yml``.
#:
#: :meta hide-value:
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


#: Where ``_config.yml`` keeps the execution cache.
CACHE_DIR = Path("_build") / ".jupyter_cache"
_STAMP = "lesson_lib.sha256"


def package_fingerprint(root: Path = ROOT) -> str:
    """Hash of every file in ``lesson_lib`` (code and data) and the pinned requirements.

    Parameters
    ----------
    root : pathlib.Path, optional
        Repository root.

    Returns
    -------
    str
        Hex SHA-256 digest; it changes whenever code the chapters call changes.
    """
    digest = hashlib.sha256()
    package = root / "lesson_lib"
    files = [
        *sorted(p for p in package.rglob("*") if p.is_file() and "__pycache__" not in p.parts),
        root / "requirements.txt",
    ]
    for path in files:
        if path.exists():
            digest.update(path.relative_to(root).as_posix().encode())
            digest.update(path.read_bytes())
    return digest.hexdigest()


def invalidate_stale_cache(root: Path = ROOT) -> bool:
    """Drop the execution cache if ``lesson_lib`` changed since it was filled.

    Jupyter Book's cache is keyed on each notebook's own code, so a chapter
    whose text did not change would keep outputs computed by an older
    ``lesson_lib``: a stale number in the book. This clears it instead.

    Parameters
    ----------
    root : pathlib.Path, optional
        Repository root.

    Returns
    -------
    bool
        True if a stale cache was removed.
    """
    cache = execution_cache(root)
    stamp = cache / _STAMP
    current = package_fingerprint(root)
    stale = cache.exists() and (not stamp.exists() or stamp.read_text().strip() != current)
    if stale:
        shutil.rmtree(cache)
    cache.mkdir(parents=True, exist_ok=True)
    stamp.write_text(current + "\n")
    return stale


def execution_cache(root: Path) -> Path:
    """The execution cache folder ``root``'s ``_config.yml`` names (``execute: cache:``).

    Parameters
    ----------
    root : pathlib.Path
        A book's root, holding ``_config.yml``.

    Returns
    -------
    pathlib.Path
        The folder; a relative path is taken from ``root``, where the build
        runs. This lesson's ``_config.yml`` names ``_build/.jupyter_cache``,
        which is also the value used when the setting (or the file) is missing.
    """
    import yaml  # a dependency of Jupyter Book

    path = root / "_config.yml"
    config = (yaml.safe_load(path.read_text()) if path.is_file() else None) or {}
    named = (config.get("execute") or {}).get("cache") or str(CACHE_DIR)
    return root / named


def prepare_parallel_build(root: Path, jobs: int) -> tuple[int, str]:
    """Make the book in ``root`` safe to build with ``jobs`` Sphinx processes; say how many.

    Two things go wrong when MyST-NB executes pages in several processes:

    * jupyter-cache creates its database the first time a page is executed;
      two processes do it at once and the second fails ("table settings
      already exists"). The database is created here, before the build.
    * pages whose code is identical share one cache entry, and two processes
      executing them at once race for it (jupyter-cache replaces the entry
      while the other reads it). Such a book is built with one job (see
      :func:`pages_with_the_same_code`); the lesson has no such pages.

    Parameters
    ----------
    root : pathlib.Path
        The book's root (``_config.yml``, ``_toc.yml``).
    jobs : int
        The processes asked for.

    Returns
    -------
    tuple of (int, str)
        The processes to use, and why fewer than asked (empty if not fewer).
    """
    if jobs <= 1 or not (root / "_config.yml").is_file() or not (root / "_toc.yml").is_file():
        return jobs, ""
    from jupyter_cache.cache.db import create_db

    cache = execution_cache(root)
    cache.mkdir(parents=True, exist_ok=True)
    create_db(cache).dispose()
    twins = pages_with_the_same_code(root)
    if twins:
        return 1, f"pages with identical code ({twins}): building with one job"
    return jobs, ""


def build_book(
    root: Path = ROOT, timeout: float = 1200.0, echo: bool = False, jobs: int | None = None
) -> BuildResult:
    """Run ``jupyter-book build . -W -n --keep-going`` in ``root``, one job per CPU.

    The command is Jupyter Book's own, run through
    :mod:`lesson_lib.jupyter_book_jobs` so that Sphinx reads (and MyST-NB
    executes) as many pages at once as there are CPUs (see
    :func:`prepare_parallel_build` for when it uses fewer). If ``lesson_lib``
    changed since the last build, the execution cache is
    cleared (see :func:`invalidate_stale_cache`) and every page is rebuilt
    with ``--all``; otherwise the build is incremental and cached.

    Parameters
    ----------
    root : pathlib.Path, optional
        Repository root; defaults to this checkout.
    timeout : float, default 1200.0
        Seconds before the build is stopped.
    echo : bool, default False
        Also print the build's output as it runs (for ``make book``).
    jobs : int, optional
        Sphinx processes; default one per CPU (:func:`lesson_lib.jupyter_book_jobs.default_jobs`).

    Returns
    -------
    BuildResult
        Exit status, output and the HTML folder (``root / "_build" / "html"``).
    """
    jobs = default_jobs() if jobs is None else jobs
    cmd = [sys.executable, "-m", "lesson_lib.jupyter_book_jobs", "--jobs", str(jobs)]
    cmd += ["build", ".", "-W", "-n", "--keep-going"]
    if invalidate_stale_cache(root):
        # Sphinx re-reads only pages whose text changed: --all makes it
        # re-read (and so re-execute) every chapter against the new code.
        cmd.append("--all")
        if echo:
            print("lesson_lib changed since the last build: re-executing every chapter", flush=True)
    proc = subprocess.Popen(
        cmd, cwd=root, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )
    lines = []
    try:
        assert proc.stdout is not None
        for line in proc.stdout:
            lines.append(line)
            if echo:
                print(line, end="", flush=True)
        proc.wait(timeout=timeout)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        proc.stdout.close()  # else a ResourceWarning (an error under filterwarnings=error)
    return BuildResult(proc.returncode, "".join(lines), root / "_build" / "html")


def page_notebook(root: Path, doc: str) -> Any:
    """The notebook MyST-NB makes of page ``doc``, or None if the page is not one.

    A Markdown page is a notebook when its front matter says so (jupytext
    MyST format with a kernel spec); it is read with the MyST extensions
    ``_config.yml`` enables, as the build reads it.

    Parameters
    ----------
    root : pathlib.Path
        The book's root.
    doc : str
        Docname from ``_toc.yml``, e.g. ``book/sizing``.

    Returns
    -------
    nbformat.NotebookNode or None
        The notebook (code cells not executed), or None for a plain page.
    """
    import nbformat
    import yaml
    from myst_nb.core.read import is_myst_markdown_notebook, read_myst_markdown_notebook
    from myst_parser.config.main import MdParserConfig

    markdown, notebook = root / f"{doc}.md", root / f"{doc}.ipynb"
    if not markdown.is_file():
        return nbformat.read(notebook, as_version=4) if notebook.is_file() else None
    text = markdown.read_text()
    if not is_myst_markdown_notebook(text):
        return None
    config = yaml.safe_load((root / "_config.yml").read_text()) or {}
    extensions = (config.get("parse") or {}).get("myst_enable_extensions") or []
    return read_myst_markdown_notebook(text, MdParserConfig(enable_extensions=set(extensions)))


def pages_with_the_same_code(root: Path = ROOT) -> list[list[str]]:
    """Groups of notebook pages whose code (and kernel) jupyter-cache cannot tell apart.

    Each page is read as MyST-NB reads it and hashed as jupyter-cache hashes
    it to match executions (code cells and kernel spec only).

    Parameters
    ----------
    root : pathlib.Path, optional
        Repository root.

    Returns
    -------
    list of list of str
        Each group of two or more docnames with the same hash; empty when
        every page's code is its own.
    """
    from jupyter_cache import get_cache

    cache = get_cache(str(execution_cache(root)))
    by_hash: dict[str, list[str]] = {}
    for doc in toc_files(root):
        nb = page_notebook(root, doc)
        if nb is None:
            continue
        _, key = cache.create_hashed_notebook(nb)
        by_hash.setdefault(key, []).append(doc)
    return [docs for docs in by_hash.values() if len(docs) > 1]


#: Front matter that makes a Markdown page a MyST notebook, executed by MyST-NB.
MYST_NOTEBOOK_FRONT_MATTER = """\
---
jupytext:
  text_representation:
    extension: .md
    format_name: myst
kernelspec:
  display_name: Python 3
  language: python
  name: python3
---
"""


def copy_site_config(dest: Path, root: Path = ROOT) -> None:
    """Give ``dest`` the site's configuration, extension and assets, for a scratch book.

    Copies ``_config.yml`` and ``tools/`` and links ``_vendor/``: what a build
    needs besides the pages and ``_toc.yml`` (benchmarks and tests build small
    books with the lesson's exact settings).

    Parameters
    ----------
    dest : pathlib.Path
        The scratch book's root; created if missing.
    root : pathlib.Path, optional
        Repository root to copy from.
    """
    dest.mkdir(parents=True, exist_ok=True)
    shutil.copy2(root / "_config.yml", dest / "_config.yml")
    shutil.copytree(root / "tools", dest / "tools", ignore=shutil.ignore_patterns("__pycache__"))
    (dest / "_vendor").symlink_to(root / "_vendor", target_is_directory=True)


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


def main() -> int:
    """Build the book as ``make book`` does; exit status 0 on success.

    Returns
    -------
    int
        The build's exit status.
    """
    result = build_book(echo=True)
    if result.returncode == 0:
        print(f"The site is in {result.html_dir / 'index.html'}")
    return result.returncode


if __name__ == "__main__":
    sys.exit(main())
