"""The book's MyST pages for students: which there are, solutions out, MyST markup made plain.

Fences (backtick and colon, directives among them) are found by markdown-it-py, jupytext's MyST
parser, and its MyST plugins; every line not part of a solution is kept verbatim.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path

import yaml
from markdown_it import MarkdownIt
from markdown_it.token import Token
from mdit_py_plugins.colon_fence import colon_fence_plugin
from mdit_py_plugins.front_matter import front_matter_plugin
from mdit_py_plugins.myst_blocks import myst_block_plugin

#: Pages never handed to students, nor put in the site without solutions.
INSTRUCTOR_ONLY = ("instructor",)

#: Metadata key marking coursework cells (values "student-id", "answer", "solution").
META_KEY = "coursework"

_PARSER = (
    MarkdownIt("commonmark")
    .use(front_matter_plugin)
    .use(colon_fence_plugin)
    .use(myst_block_plugin)
    .disable("inline", True)
)
_DIRECTIVE = re.compile(r"^\{(?P<name>[\w:-]+)\}\s*(?P<arg>.*)$")
#: A self-check box of the static site (its data would reveal the answers).
_SELFCHECK_BOX = re.compile(r'^\s*<div class="lesson-selfcheck"[^>]*>\s*</div>\s*$')
_SOLUTION_TITLES = re.compile(r"^(solution|answer)s?\b", re.IGNORECASE)
_LABEL_LINE = re.compile(r"^\(([\w.:-]+)\)=\s*$")
_SOLUTION_OPTION = re.compile(rf"^:?{META_KEY}:?\s*:?\s*solution\s*$")


class _Fence:
    """One fence of a page: its directive (if any) and where it starts, closes and ends."""

    def __init__(self, token: Token, lines: Sequence[str], offset: int, stop: int) -> None:
        assert token.map is not None
        self.start = token.map[0] + offset
        end = token.map[1] + offset
        char, size = token.markup[0], len(token.markup)
        closing = re.compile(rf"^ {{0,3}}{re.escape(char)}{{{size},}}\s*$")
        closed = end - 1 > self.start and bool(closing.match(lines[end - 1]))
        # an unclosed fence runs to the end of what holds it, as in Markdown
        self.body_end = end - 1 if closed else stop
        self.end = end if closed else stop
        directive = _DIRECTIVE.match(token.info)
        self.name, self.arg = (directive["name"], directive["arg"]) if directive else ("", "")

    def body(self, lines: Sequence[str]) -> list[str]:
        """The lines between the opening and the closing fence."""
        return list(lines[self.start + 1 : self.body_end])


def _fences(lines: Sequence[str], start: int = 0, stop: int | None = None) -> Iterator[_Fence]:
    """The fences of ``lines[start:stop]`` (not those nested in another fence), in order."""
    stop = len(lines) if stop is None else stop
    for token in _PARSER.parse("\n".join(lines[start:stop])):
        if token.type in ("fence", "colon_fence") and token.map is not None:
            yield _Fence(token, lines, start, stop)


def _is_solution(fence: _Fence, lines: Sequence[str]) -> bool:
    """Whether a fence is a solution directive or a code cell marked ``coursework: solution``."""
    if fence.name == "code-cell":
        return any(_SOLUTION_OPTION.match(line.strip()) for line in _options(fence.body(lines)))
    return fence.name == "solution" or (
        fence.name in ("admonition", "dropdown") and bool(_SOLUTION_TITLES.match(fence.arg))
    )


def _options(body: Sequence[str]) -> list[str]:
    """A code cell's option lines: a ``---`` YAML block, or ``:key: value`` lines."""
    if body and body[0].strip() == "---":
        end = next((j for j in range(1, len(body)) if body[j].strip() == "---"), None)
        return list(body[1:end]) if end is not None else []
    return [line for line in body if line.startswith(":")]


def strip_solutions(text: str) -> str:
    """A MyST Markdown page without its solutions, the rest verbatim.

    Gone: gated solutions (``solution-start`` through ``solution-end``), ``{solution}`` directives,
    admonitions or dropdowns titled "Solution"/"Answer", code cells marked ``coursework: solution``
    and the static site's self-check boxes (data holding the answers), nested ones too.

    Parameters
    ----------
    text : str

    Returns
    -------
    str

    Raises
    ------
    ValueError
        If a ``solution-start`` has no ``solution-end`` after it.
    """
    lines = [line for line in text.split("\n") if not _SELFCHECK_BOX.match(line)]
    dropped: set[int] = set()
    _mark_solutions(lines, 0, len(lines), dropped)
    return "\n".join(line for i, line in enumerate(lines) if i not in dropped)


def _mark_solutions(lines: Sequence[str], start: int, stop: int, dropped: set[int]) -> None:
    """Add to ``dropped`` the indices of the solution lines of ``lines[start:stop]``."""
    fences = list(_fences(lines, start, stop))
    index = 0
    while index < len(fences):
        fence = fences[index]
        index += 1
        if fence.name == "solution-start":
            end = next((f for f in fences[index:] if f.name == "solution-end"), None)
            if end is None:
                raise ValueError(
                    f"solution-start at line {fence.start + 1} has no solution-end after it"
                )
            dropped.update(range(fence.start, end.end))
            index = fences.index(end) + 1
        elif _is_solution(fence, lines):
            dropped.update(range(fence.start, fence.end))
        elif fence.name and fence.name != "code-cell":
            _mark_solutions(lines, fence.start + 1, fence.body_end, dropped)


def plain_markdown(text: str) -> str:
    """A Markdown cell made plain for Jupyter: no target labels (``(name)=``), exercises as a bold
    "Exercise (title)." line, ``{ref}``/``{numref}``/``{doc}`` roles in italics, ``{term}`` as text.

    Parameters
    ----------
    text : str

    Returns
    -------
    str
    """
    lines = text.split("\n")
    replaced: dict[int, list[str]] = {}
    skipped: set[int] = set()
    for fence in _fences(lines):
        if fence.name not in ("exercise", "exercise-start", "exercise-end"):
            continue
        skipped.update(range(fence.start, fence.end))
        if fence.name == "exercise-end":
            continue
        title = fence.arg.strip()
        body = [b for b in fence.body(lines) if not re.match(r"^:[\w-]+:", b)]
        replaced[fence.start] = [f"**Exercise{f' ({title})' if title else ''}.**"]
        if fence.name == "exercise":
            replaced[fence.start] += body
    out: list[str] = []
    for i, line in enumerate(lines):
        if i in replaced:
            out += replaced[i]
        elif i not in skipped and not _LABEL_LINE.match(line):
            out.append(line)
    text = "\n".join(out)
    text = re.sub(r"\{(?:ref|numref|doc)\}`([^`<]*?)\s*(?:<[^`]*>)?`", r"*\1*", text)
    return re.sub(r"\{term\}`([^`<]*?)\s*(?:<[^`]*>)?`", r"\1", text)


def toc_pages(root: Path) -> list[Path]:
    """Every page of ``_toc.yml`` in ``root``, in order (root page first), as their ``.md`` sources.

    Parameters
    ----------
    root : Path

    Returns
    -------
    list of Path
    """
    toc = yaml.safe_load((root / "_toc.yml").read_text())
    files = [toc["root"]]

    def walk(node: object) -> None:
        if isinstance(node, dict):
            if "file" in node:
                files.append(node["file"])
            for key in ("parts", "chapters", "sections"):
                for child in node.get(key, []) or []:
                    walk(child)

    walk(toc)
    return [root / f"{f}.md" for f in files]


def _is_notebook_page(path: Path) -> bool:
    """Whether a MyST page has a jupytext header with a kernel (it runs code)."""
    head = path.read_text().split("\n", 40)[:40]
    return bool(head) and head[0].strip() == "---" and any("kernelspec:" in h for h in head)


def student_pages(root: Path, only: Iterable[str] | None = None) -> list[Path]:
    """The notebook pages of the table of contents but the instructor's, or those of ``only``.

    Parameters
    ----------
    root : Path
        Book root (holding ``_toc.yml``).
    only : iterable of str, optional
        Page names (file stems such as ``"problems"``) to keep; default all.

    Returns
    -------
    list of Path

    Raises
    ------
    ValueError
        If a name in ``only`` is not a notebook page of the book.
    """
    pages = [p for p in toc_pages(root) if p.stem not in INSTRUCTOR_ONLY and _is_notebook_page(p)]
    if only is None:
        return pages
    wanted = list(only)
    known = {p.stem: p for p in pages}
    unknown = [w for w in wanted if w not in known]
    if unknown:
        raise ValueError(
            f"pages {unknown} are not notebook pages of the book; known: {list(known)}"
        )
    return [known[w] for w in wanted]
