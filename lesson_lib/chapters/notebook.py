"""The chapters as notebooks that read like the site, for JupyterLab and Binder.

jupyterlab-myst renders one notebook with no book around it, so this writes a copy of the book with
``{glue:text}`` filled from the glue tables, ``{ref}``, ``{numref}``, ``{doc}`` and ``{term}`` as
Markdown links, ``{literalinclude}`` and ``{tableofcontents}`` expanded, hidden cells collapsed and
the site's ``glue_chapter`` call dropped. ``make lab`` writes it to ``_build/lab``; Binder's
``postBuild`` rewrites ``book/`` in place (``python -m lesson_lib.chapters.notebook --out DIR`` or
``--in-place``).
"""

from __future__ import annotations

import argparse
import ast
import compileall
import posixpath
import re
import shutil
import sys
import textwrap
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from lesson_lib.chapters.glue import CHAPTERS, chapter_numbers

#: The book's sources, beside the package in a checkout.
BOOK = Path(__file__).resolve().parents[2] / "book"

_LABEL = re.compile(r"^\((?P<label>[\w.:-]+)\)=\s*$")
_HEADING = re.compile(r"^#{1,6}\s+(?P<title>.+?)\s*$")
_NAME = re.compile(r"^\s*(?:name|:name:|:label:)\s*:?\s*(?P<label>[\w.:-]+)\s*$")
_GLUE = re.compile(r"\{glue(?::text|:md|:any)?\}`(?P<key>[^`]+)`")
_ROLE = re.compile(r"\{(?P<role>ref|numref|term|doc)\}`(?P<body>[^`]+)`")
_EXPLICIT = re.compile(r"^(?P<text>.*?)\s*<(?P<target>[^<>]+)>$", re.DOTALL)
_INCLUDE = re.compile(r"^(?P<fence>`{3,})\{literalinclude\}\s+(?P<path>\S+)\s*$")
#: A code cell gluing a dict its page measured as it ran (``glue_numbers(numbers)``).
_LIVE = re.compile(r"^glue_numbers\((?P<name>[A-Za-z_]\w*)\);?\s*$", re.MULTILINE)
_TOC = re.compile(r"^(?P<fence>`{3,})\{tableofcontents\}\s*$")


@dataclass(frozen=True)
class Target:
    """Where a label points: its page (file stem), its title and what kind of thing it is."""

    page: str
    title: str
    kind: str  # "section", "figure" or "exercise"


def page_numbers(page: str) -> dict[str, str]:
    """Every value a page glues (:func:`~lesson_lib.chapters.glue.chapter_numbers`), or none.

    Parameters
    ----------
    page : str
        The page's name relative to ``book/`` (``"latency"``).

    Returns
    -------
    dict of str to str
    """
    return chapter_numbers(page) if page in CHAPTERS else {}


def _book_targets(book: Path) -> dict[str, Target]:
    """Every label of the book's pages: section labels, figure names and exercise labels."""
    targets: dict[str, Target] = {}
    for path in sorted(book.rglob("*.md")):
        page = path.relative_to(book).with_suffix("").as_posix()
        lines = path.read_text(encoding="utf-8").splitlines()
        for i, line in enumerate(lines):
            label = _LABEL.match(line)
            if label:
                title = next(
                    (m["title"] for m in map(_HEADING.match, lines[i + 1 : i + 4]) if m), ""
                )
                targets[label["label"]] = Target(page, title or label["label"], "section")
                continue
            name = _NAME.match(line)
            if name and (name["label"].startswith(("fig-", "ex-")) or ":label:" in line):
                kind = "figure" if name["label"].startswith("fig-") else "exercise"
                targets.setdefault(name["label"], Target(page, "", kind))
    return targets


def _link(page: str, here: str, anchor: str = "") -> str:
    """A relative link from page ``here`` to ``page`` (and ``anchor``), both relative to book/."""
    hash_ = f"#{anchor}" if anchor else ""
    if page == here:
        return hash_ or "#"
    return f"{posixpath.relpath(page, posixpath.dirname(here) or '.')}.md{hash_}"


def _sentence_start(text: str, start: int) -> bool:
    """Whether position ``start`` of ``text`` begins a sentence."""
    before = text[:start].rstrip(" (")
    return (
        not before or before.endswith((".", "!", "?", ":", "\n")) or text[start - 1 : start] == "("
    )


def _resolve_roles(text: str, page: str, targets: Mapping[str, Target]) -> str:
    """Cross-page roles of one cell as Markdown links; KeyError for an unknown label."""

    def sub(match: re.Match[str]) -> str:
        role, body = match["role"], match["body"].strip()
        explicit = _EXPLICIT.match(body)
        shown, target = (explicit["text"], explicit["target"]) if explicit else ("", body)
        if role == "term":
            anchor = "term-" + re.sub(r"[^\w]+", "-", target.strip()).strip("-")
            return f"[{shown or target}]({_link('glossary', page, anchor)})"
        if role == "doc":
            stem = Path(target).stem
            return f"[{shown or stem}]({_link(stem, page)})"
        if target not in targets:
            raise KeyError(f"{page}.md: {{{role}}}`{body}` names no label of the book")
        where = targets[target]
        if not shown and role == "numref" and where.kind != "section":  # "the figure"
            shown = ("This " if _sentence_start(text, match.start()) else "the ") + where.kind
        return f"[{shown or where.title}]({_link(where.page, page, target)})"

    return _ROLE.sub(sub, text)


def live_values_name(text: str) -> str | None:
    """The dict a page glues its measured values from (``glue_numbers(numbers)``), if any.

    Parameters
    ----------
    text : str
        The page's MyST source.

    Returns
    -------
    str or None
        The dict's name (``"numbers"`` on the lab page).
    """
    live = _LIVE.search(text)
    return live["name"] if live else None


def fill_glue(text: str, numbers: Mapping[str, str], page: str, live: str | None = None) -> str:
    """Every ``{glue:text}`name``` of ``text`` replaced by the page's value.

    A value the page measures as it runs (the lab's MPI sweep) becomes an
    ``{eval}`live["name"]``` role, which jupyterlab-myst fills once the cells have run.

    Parameters
    ----------
    text : str
    numbers : mapping of str to str
        The page's glue table (:func:`page_numbers`).
    page : str
        The page's name, for the message.
    live : str, optional
        The dict the page glues measured values from (:func:`live_values_name`).

    Returns
    -------
    str

    Raises
    ------
    KeyError
        When a placeholder names a value the page's table does not have.
    """

    def sub(match: re.Match[str]) -> str:
        key = match["key"].split(":")[0].strip()
        if key not in numbers and live is not None:
            return f'{{eval}}`{live}["{key}"]`'
        if key not in numbers:
            raise KeyError(f"{page}.md glues {key!r}, which its glue table does not give")
        return str(numbers[key])

    return _GLUE.sub(sub, text)


def _included(path: Path, options: Mapping[str, str]) -> tuple[str, str]:
    """The code a ``{literalinclude}`` shows, and its language."""
    source = path.read_text(encoding="utf-8")
    lines = source.splitlines()
    if "pyobject" in options:
        scope: list[ast.stmt] = ast.parse(source).body
        for name in options["pyobject"].split("."):  # "ModelSpec.kv_bytes_per_token"
            node = next(n for n in scope if getattr(n, "name", None) == name)
            scope = node.body
        first = min([node.lineno] + [d.lineno for d in node.decorator_list])
        lines = lines[first - 1 : node.end_lineno]
    if "start-at" in options:
        lines = lines[next(i for i, x in enumerate(lines) if options["start-at"] in x) :]
    if "end-at" in options:
        lines = lines[: next(i for i, x in enumerate(lines) if options["end-at"] in x) + 1]
    code = "\n".join(lines)
    if "dedent" in options:
        code = "\n".join(x[int(options["dedent"]) :] for x in lines)
    return textwrap.dedent(code).rstrip("\n"), options.get("language", "python")


def expand_directives(text: str, source: Path, toc: Sequence[tuple[str, str]] = ()) -> str:
    """``{literalinclude}`` as the code it includes, ``{tableofcontents}`` as a list.

    Parameters
    ----------
    text : str
        A page or one Markdown cell of it.
    source : Path
        The page's file; an include's path is relative to it.
    toc : sequence of (str, str), optional
        ``(file stem, title)`` per chapter (:func:`toc_chapters`); an empty stem lists the title
        without a link.

    Returns
    -------
    str
    """
    lines = text.split("\n")
    out: list[str] = []
    i = 0
    while i < len(lines):
        include, contents = _INCLUDE.match(lines[i]), _TOC.match(lines[i])
        if not (include or contents):
            out.append(lines[i])
            i += 1
            continue
        fence = (include or contents)["fence"]
        close = next(j for j in range(i + 1, len(lines)) if lines[j].strip() == fence)
        if include:
            options = dict(
                m.groups()
                for m in (re.match(r"^:([\w-]+):\s*(.*)$", x) for x in lines[i + 1 : close])
                if m
            )
            code, language = _included((source.parent / include["path"]).resolve(), options)
            out += [f"```{language}", code, "```"]
        else:
            out += [f"1. [{title}]({stem}.md)" if stem else f"1. {title}" for stem, title in toc]
        i = close + 1
    return "\n".join(out)


#: The site's glue call and its import, which nothing in a notebook reads.
_GLUE_LINES = re.compile(
    r"^(from lesson_lib\.chapters\.glue import glue_chapter|glue_chapter\(\"[\w/]+\"\))\s*$\n?",
    re.MULTILINE,
)


def without_glue_call(source: str) -> str:
    """A code cell without the page's glue call, for a route whose text has the numbers.

    Parameters
    ----------
    source : str

    Returns
    -------
    str
    """
    return _GLUE_LINES.sub("", source).strip("\n")


def _page_as_notebook_text(
    path: Path, targets: Mapping[str, Target], toc: Sequence[tuple[str, str]], book: Path
) -> str:
    """One page rewritten for JupyterLab: numbers filled, roles linked, directives expanded."""
    import jupytext

    text = path.read_text(encoding="utf-8")
    page = path.relative_to(book).with_suffix("").as_posix()
    if "{code-cell}" not in text:  # a plain page: roles only
        return expand_directives(_resolve_roles(text, page, targets), path, toc)
    nb = jupytext.reads(text, fmt="md:myst")
    values = page_numbers(page) if "{glue" in text else {}
    live = live_values_name(text)
    cells = []
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            source = fill_glue(cell.source, values, page, live)
            cell.source = expand_directives(_resolve_roles(source, page, targets), path, toc)
        elif cell.cell_type == "code":
            cell.source = without_glue_call(cell.source)
            if not cell.source.strip():
                continue
            tags = set(cell.metadata.get("tags", []))
            if tags & {"hide-input", "remove-input", "remove-cell"}:
                cell.metadata.setdefault("jupyter", {})["source_hidden"] = True
        cells.append(cell)
    nb.cells = cells
    return jupytext.writes(nb, fmt="md:myst")


def toc_chapters(root: Path) -> list[tuple[str, str]]:
    """Each page of ``book/`` in ``_toc.yml``'s order, root aside.

    Parameters
    ----------
    root : Path
        The checkout with ``book/`` and ``_toc.yml``.

    Returns
    -------
    list of (str, str)
        ``(file stem, first heading)`` per page.
    """
    from lesson_lib.coursework.myst_pages import toc_pages

    chapters = []
    for path in toc_pages(root)[1:]:
        if path.exists() and path.parent.name == "book":
            headings = map(_HEADING.match, path.read_text(encoding="utf-8").splitlines())
            chapters.append((path.stem, next((m["title"] for m in headings if m), path.stem)))
    return chapters


def write_notebook_book(dest: Path, root: Path = BOOK.parent) -> list[Path]:
    """Write the book's pages, rewritten for JupyterLab, into ``dest/book``.

    Parameters
    ----------
    dest : pathlib.Path
        Folder to write into; the checkout itself rewrites ``book/`` in place.
    root : pathlib.Path, optional
        The checkout with ``book/`` and ``_toc.yml``.

    Returns
    -------
    list of pathlib.Path
    """
    # Compiled now, as the Makefile compiles the dependencies: a kernel that may not write bytecode
    # (PYTHONDONTWRITEBYTECODE, a read-only checkout) would otherwise compile it on every Run All.
    compileall.compile_dir(Path(__file__).resolve().parents[1], quiet=2)
    book, out = root / "book", dest / "book"
    targets, toc = _book_targets(book), toc_chapters(root)
    pages = sorted(book.rglob("*.md"))
    texts = {path: _page_as_notebook_text(path, targets, toc, book) for path in pages}
    if out.resolve() != book.resolve():
        shutil.copytree(book, out, dirs_exist_ok=True)
    written = []
    for path, text in texts.items():
        target = out / path.relative_to(book)
        target.write_text(text, encoding="utf-8")
        written.append(target)
    return written


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m lesson_lib.chapters.notebook --out DIR`` (or ``--in-place``).

    Parameters
    ----------
    argv : sequence of str, optional
        The command line after the module name (default ``sys.argv[1:]``).

    Returns
    -------
    int
        0, or 2 when a page names a value or label the book does not have.
    """
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    where = parser.add_mutually_exclusive_group(required=True)
    where.add_argument("--out", type=Path, help="folder to write book/ into")
    where.add_argument("--in-place", action="store_true", help="rewrite book/ itself (Binder)")
    args = parser.parse_args(argv)
    dest = BOOK.parent if args.in_place else args.out
    try:
        pages = write_notebook_book(dest)
    except (KeyError, OSError, StopIteration) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(f"{len(pages)} pages written to {dest / 'book'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
