"""The book's site without solutions: its sources copied for ``jupyter-book build`` with every
solution, the instructor pages and the problem bank's functions that give answers left out."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import yaml

from lesson_lib.coursework.myst_pages import INSTRUCTOR_ONLY, strip_solutions, toc_pages
from lesson_lib.coursework.output_folder import check_folder, digest, files_in, write_manifest


def write_site_sources(dest: Path, root: Path, *, force: bool = False) -> list[Path]:
    """Copy the book's sources to ``dest`` with every solution removed, for ``jupyter-book build
    <dest>`` (the copied ``_config.yml`` also sets sphinx-exercise's ``hide_solutions``).

    Parameters
    ----------
    dest : Path
        Target folder, replaced only if the edition made it and only a build changed it since.
    root : Path
        Book root (holding ``_config.yml`` and ``_toc.yml``).
    force : bool, default False
        Replace ``dest`` even if the edition did not make it or it changed (never the book's folder,
        one holding it or inside it, a checkout or the home folder).

    Returns
    -------
    list of Path

    Raises
    ------
    FolderRefused
        If ``dest`` may not be replaced (a ``ValueError``).
    """
    dest = Path(dest)
    check_folder(dest, root, writes=None, force=force)
    if dest.exists():
        shutil.rmtree(dest)
    ignored = shutil.ignore_patterns(".*", "_build", "node_modules", "__pycache__", "*.egg-info")
    shutil.copytree(root, dest, ignore=ignored)
    config_path = dest / "_config.yml"
    config = yaml.safe_load(config_path.read_text())
    config["title"] = f"{config.get('title', '')} (without solutions)".strip()
    config.setdefault("sphinx", {}).setdefault("config", {})["hide_solutions"] = True
    # Its own execution cache: a relative path would share the main book's.
    config.setdefault("execute", {})["cache"] = str((dest / "_build" / ".jupyter_cache").resolve())
    # docstrings elsewhere still name the answer functions; unresolved there, plain text on this site
    names = "|".join(ANSWER_FUNCTIONS)
    config["sphinx"]["config"].setdefault("nitpick_ignore_regex", []).append(
        ["py:func", rf"(~?lesson_lib\.coursework\.problems\.)?({names})"]
    )
    config_path.write_text(yaml.safe_dump(config, sort_keys=False))
    _drop_instructor_pages(dest)
    rewritten = toc_pages(dest)
    for page in rewritten:
        page.write_text(strip_solutions(page.read_text()))
    _hide_answer_functions(dest / "book" / "api" / "coursework.md")
    write_manifest(dest, {rel: digest(dest / rel) for rel in files_in(dest)})
    return rewritten


#: The problem bank's functions that give answers, left out of the solution-free site's API page.
ANSWER_FUNCTIONS = ("reference", "solution", "solution_text", "get_problem")


def _drop_instructor_pages(dest: Path) -> None:
    """Take the instructor pages out of a copy of the book: their files, toc entries and links (a
    link becomes the page's title in italics: nothing left to resolve, still readable)."""
    toc_path = dest / "_toc.yml"
    toc = yaml.safe_load(toc_path.read_text())
    dropped = {f"book/{stem}" for stem in INSTRUCTOR_ONLY}

    def prune(node: object) -> None:
        if isinstance(node, dict):
            for key in ("parts", "chapters", "sections"):
                children = node.get(key)
                if isinstance(children, list):
                    node[key] = [c for c in children if not _is_dropped(c, dropped)]
                    for child in node[key]:
                        prune(child)

    prune(toc)
    toc_path.write_text(yaml.safe_dump(toc, sort_keys=False))
    titles: dict[str, str] = {}
    for stem in INSTRUCTOR_ONLY:
        page = dest / "book" / f"{stem}.md"
        if not page.exists():
            continue
        text = page.read_text()
        heading = re.search(r"^# (.+)$", text, re.MULTILINE)
        title = heading[1].strip() if heading else stem
        for label in re.findall(r"^\(([\w.:-]+)\)=\s*$", text, re.MULTILINE):
            titles[label] = title
        page.unlink()
    if not titles:
        return
    labels = "|".join(re.escape(label) for label in titles)
    link = re.compile(rf"\{{(?:ref|doc)\}}`(?:(?P<text>[^`<]*?)\s*<)?(?P<label>{labels})>?`")

    def title_of(m: re.Match[str]) -> str:
        return f"*{(m['text'] or titles[m['label']]).strip()}* (not on this site)"

    for page in toc_pages(dest):
        page.write_text(link.sub(title_of, page.read_text()))


def _is_dropped(node: object, dropped: set[str]) -> bool:
    return isinstance(node, dict) and str(node.get("file", "")).removesuffix(".md") in dropped


def _hide_answer_functions(api_page: Path) -> None:
    """Leave :data:`ANSWER_FUNCTIONS` out of the problem bank's entry on the API page."""
    if not api_page.exists():
        return
    directive = ".. automodule:: lesson_lib.coursework.problems\n"
    text = api_page.read_text()
    excluded = f"{directive}   :exclude-members: {', '.join(ANSWER_FUNCTIONS)}\n"
    api_page.write_text(text.replace(directive, excluded, 1))
