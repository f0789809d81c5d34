"""Jupyter Book's build with Sphinx's parallel jobs, on a real two-page book."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from lesson_lib.jupyter_book_jobs import default_jobs, main
from lesson_lib.site import ROOT, build_book, pages_with_the_same_code

PAGE = """\
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
# Page {n}

```{{code-cell}} ipython3
import os

print("pid", os.getpid(), "page", {n})
```
"""


#: Sphinx reads in parallel only when more than five pages are to be read.
NAMES = ("index", "second", "third", "fourth", "fifth", "sixth")


def small_book(dest: Path, identical: bool = False) -> Path:
    """A book of six executed pages with the lesson's configuration and extension.

    With ``identical`` every page has the same code (that of page 0).
    """
    dest.mkdir()
    shutil.copy2(ROOT / "_config.yml", dest / "_config.yml")
    shutil.copytree(ROOT / "tools", dest / "tools", ignore=shutil.ignore_patterns("__pycache__"))
    (dest / "_vendor").symlink_to(ROOT / "_vendor", target_is_directory=True)
    (dest / "book").mkdir()
    for n, name in enumerate(NAMES):
        (dest / "book" / f"{name}.md").write_text(PAGE.format(n=0 if identical else n))
    chapters = "".join(f"  - file: book/{name}\n" for name in NAMES[1:])
    (dest / "_toc.yml").write_text(f"format: jb-book\nroot: book/index\nchapters:\n{chapters}")
    return dest


def build(root: Path, jobs: int) -> subprocess.CompletedProcess:
    """Run the module as ``lesson_lib.site.build_book`` does."""
    cmd = [sys.executable, "-m", "lesson_lib.jupyter_book_jobs", "--jobs", str(jobs)]
    cmd += ["build", ".", "-W", "-n", "--keep-going"]
    return subprocess.run(cmd, cwd=root, capture_output=True, text=True, timeout=600)


@pytest.mark.slow
def test_two_jobs_read_and_execute_in_parallel_without_warnings(tmp_path):
    """With two jobs Sphinx reads in worker processes, executes every page, and -W holds.

    On its parallel path Sphinx reports reading progress once per chunk of
    pages (two lines here); read serially, once per page (six). A
    serial fallback (an extension not declared parallel-safe) is a warning,
    which -W turns into a failed build.
    """
    root = small_book(tmp_path / "book")
    result = build(root, jobs=2)
    output = result.stdout + result.stderr
    assert result.returncode == 0, output[-3000:]
    assert "doing serial read" not in output
    progress = [line for line in output.splitlines() if "reading sources..." in line]
    assert 1 <= len(progress) < len(NAMES), output[-3000:]
    for n, name in enumerate(NAMES):
        html = (root / "_build" / "html" / "book" / f"{name}.html").read_text()
        assert f"page {n}" in html  # the cell ran and its output is on the page


@pytest.mark.slow
def test_a_failing_page_fails_the_parallel_build(tmp_path):
    """An error in a page's code still stops the build when pages run in workers."""
    root = small_book(tmp_path / "book")
    page = root / "book" / "second.md"
    page.write_text(
        page.read_text().replace('print("pid"', 'raise RuntimeError("boom"); print("pid"')
    )
    result = build(root, jobs=2)
    assert result.returncode != 0
    assert "RuntimeError" in result.stdout + result.stderr


@pytest.mark.parametrize("value", ["0", "-1", "two", ""])
def test_jobs_must_be_a_whole_number_of_at_least_one(value):
    """A bad --jobs names the option and the value instead of building anything."""
    argv = ["--jobs", value] if value else ["--jobs"]
    with pytest.raises(ValueError, match="--jobs must be a whole number of at least 1"):
        main(argv)


def test_default_jobs_follows_the_cpus_a_process_may_use():
    """A process pinned to one CPU builds with one job; unpinned, with no more than the CPUs."""
    pinned = subprocess.run(
        [
            sys.executable,
            "-c",
            "import os; os.sched_setaffinity(0, {min(os.sched_getaffinity(0))}); "
            "from lesson_lib.jupyter_book_jobs import default_jobs; print(default_jobs())",
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    assert pinned.stdout.strip() == "1"
    assert 1 <= default_jobs() <= (os.cpu_count() or 1)


def test_pages_with_the_same_code_are_found(tmp_path):
    """Identical pages form one group; the lesson's own pages are all distinct."""
    assert pages_with_the_same_code(small_book(tmp_path / "distinct")) == []
    twins = pages_with_the_same_code(small_book(tmp_path / "twins", identical=True))
    assert twins == [[f"book/{name}" for name in NAMES]]
    assert pages_with_the_same_code() == []


@pytest.mark.slow
def test_a_book_with_identical_pages_is_built_with_one_job(tmp_path):
    """Two jobs would race for the one cache entry; the build says so and uses one."""
    root = small_book(tmp_path / "book", identical=True)
    result = build_book(root, jobs=2)
    assert result.returncode == 0, result.output[-3000:]
    assert "building with one job" in result.output
    progress = [line for line in result.output.splitlines() if "reading sources..." in line]
    assert len(progress) == len(NAMES)  # serial: one progress line per page
