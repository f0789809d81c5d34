"""Build the site the way ``make book`` does: Jupyter Book's own command, cache checked first.

``make book``, the test suite and the speed benchmark all build with
:func:`build_site`, so they share one command and one strictness::

    jupyter-book build . -W -n --keep-going

The one addition is :func:`invalidate_stale_cache`. Jupyter Book's execution
cache (jupyter-cache) matches a page by its own code cells only, so a chapter
whose text did not change would keep outputs computed by an older
``lesson_lib``: a stale number on the site. When the package's files (or the
pinned requirements) change, the cache is cleared and every page is read
again with ``--all``. It can go if Jupyter Book learns to key executions on
imported code, which jupyter-cache does not plan (it hashes the notebook's
cells and kernel spec, by design).

Run it as ``python tools/build_site.py [BOOK] [extra jupyter-book options]``.
"""

from __future__ import annotations

import hashlib
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

#: The repository root; the folder holding ``_config.yml``.
ROOT = Path(__file__).resolve().parent.parent

#: Where ``_config.yml`` keeps the execution cache, when it names none.
CACHE_DIR = Path("_build") / ".jupyter_cache"

#: The file, in the cache's folder, holding the fingerprint the cache was filled with.
STAMP = "lesson_lib.sha256"

#: ``jupyter-book build``'s options: warnings are errors, nitpicky, every error listed.
BUILD_OPTIONS = ("-W", "-n", "--keep-going")


def jupyter_book_command() -> str:
    """The ``jupyter-book`` script of the environment this Python runs in.

    Returns
    -------
    str
        Its path, beside ``sys.executable`` (``.venv/bin/jupyter-book``).
    """
    return str(Path(sys.executable).with_name("jupyter-book"))


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
        runs. :data:`CACHE_DIR` when the setting (or the file) is missing.
    """
    import yaml  # a dependency of Jupyter Book

    path = root / "_config.yml"
    config = (yaml.safe_load(path.read_text()) if path.is_file() else None) or {}
    named = (config.get("execute") or {}).get("cache") or str(CACHE_DIR)
    return root / named


def invalidate_stale_cache(root: Path = ROOT, package_root: Path | None = None) -> bool:
    """Drop the execution cache if ``lesson_lib`` changed since it was filled.

    Parameters
    ----------
    root : pathlib.Path, optional
        The book's root, whose ``_config.yml`` names the cache.
    package_root : pathlib.Path, optional
        The checkout whose ``lesson_lib`` the pages import; defaults to ``root``.

    Returns
    -------
    bool
        True if a stale cache was removed (the next build must read every page).
    """
    cache = execution_cache(root)
    stamp = cache / STAMP
    current = package_fingerprint(root if package_root is None else package_root)
    stale = cache.exists() and (not stamp.exists() or stamp.read_text().strip() != current)
    if stale:
        shutil.rmtree(cache)
    cache.mkdir(parents=True, exist_ok=True)
    stamp.write_text(current + "\n")
    return stale


def build_site(
    root: Path = ROOT,
    timeout: float = 1200.0,
    echo: bool = False,
    extra_args: tuple[str, ...] = (),
    fingerprint_root: Path | None = None,
) -> BuildResult:
    """Run ``jupyter-book build -W -n --keep-going`` on the book in ``root``.

    Parameters
    ----------
    root : pathlib.Path, optional
        The book's root (``_config.yml``, ``_toc.yml``); defaults to this checkout.
    timeout : float, default 1200.0
        Seconds before the build is stopped.
    echo : bool, default False
        Also print the build's output as it runs (for ``make book``).
    extra_args : tuple of str, optional
        More ``jupyter-book build`` options, e.g. ``("--path-output", "out")``.
    fingerprint_root : pathlib.Path, optional
        The checkout whose ``lesson_lib`` the pages import; defaults to
        ``root``. A book without its own ``lesson_lib`` (the site without
        solutions, a benchmark's scratch book) names the repository here.

    Returns
    -------
    BuildResult
        Exit status, output and the HTML folder.
    """
    cmd = [jupyter_book_command(), "build", str(root), *BUILD_OPTIONS, *extra_args]
    if invalidate_stale_cache(root, fingerprint_root):
        # Sphinx re-reads only pages whose text changed: --all makes it
        # re-read (and so re-execute) every page against the new code.
        cmd.append("--all")
        if echo:
            print("lesson_lib changed since the last build: re-executing every page", flush=True)
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
    html = _output_folder(root, extra_args) / "_build" / "html"
    return BuildResult(proc.returncode, "".join(lines), html)


def _output_folder(root: Path, extra_args: tuple[str, ...]) -> Path:
    """Where ``jupyter-book build`` writes ``_build``: ``--path-output`` or the book."""
    args = list(extra_args)
    if "--path-output" in args:
        index = args.index("--path-output")
        if index + 1 < len(args):
            out = Path(args[index + 1])
            return out if out.is_absolute() else root / out
    return root


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
    needs besides the pages and ``_toc.yml`` (the benchmark builds small books
    with the lesson's exact settings).

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


def main(argv: list[str] | None = None) -> int:
    """Build a book as ``make book`` does; exit status 0 on success.

    Parameters
    ----------
    argv : list of str, optional
        ``[BOOK, *jupyter-book options]``; defaults to ``sys.argv[1:]``, and
        BOOK to this checkout. A book other than this checkout is
        fingerprinted against this checkout's ``lesson_lib``.

    Returns
    -------
    int
        The build's exit status.
    """
    args = list(sys.argv[1:] if argv is None else argv)
    book = ROOT
    if args and not args[0].startswith("-"):
        book = Path(args.pop(0)).resolve()
    fingerprint_root = None if book == ROOT else ROOT
    if "--path-output" in args[:-1]:  # from the caller's folder, not the book's
        index = args.index("--path-output") + 1
        args[index] = str(Path(args[index]).resolve())
    result = build_site(book, echo=True, extra_args=tuple(args), fingerprint_root=fingerprint_root)
    if result.returncode == 0:
        print(f"The site is in {result.html_dir / 'index.html'}")
    return result.returncode


if __name__ == "__main__":
    sys.exit(main())
