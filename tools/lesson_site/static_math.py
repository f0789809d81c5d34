"""The pages' math rendered once, at build time, so no page loads MathJax.

MathJax in the browser costs a page with math 230 KB compressed (its loader,
core, TeX input, output and fonts) before the first formula shows. The
vendored MathJax (``node_modules/mathjax``, installed by
``tools/fetch_assets.py``) renders every formula of the site to SVG in one
Node.js run (``static_math.js``), with hidden MathML for screen readers; the
pages keep the SVG and lose the MathJax script. Without Node.js or that
folder the pages are left as Sphinx wrote them, and MathJax renders them in
the browser.
"""

from __future__ import annotations

import html
import json
import re
import shutil
import subprocess
from pathlib import Path

from sphinx.application import Sphinx
from sphinx.util import logging

from lesson_site.weight import MATHJAX_TAGS, site_pages

logger = logging.getLogger(__name__)

#: The Node.js entry point of the npm package ``mathjax`` (version 3).
MATHJAX_NODE = (
    Path(__file__).resolve().parents[2] / "node_modules" / "mathjax" / "es5" / "node-main.js"
)
#: The stylesheet of the rendered formulas, linked from every page.
MATH_CSS = "lesson/math.css"

#: A math element as Sphinx's MathJax writer makes it, and the TeX in it.
MATH_ELEMENT = re.compile(
    r'(<(span|div) class="math notranslate nohighlight[^"]*"[^>]*>)(.*?)(</\2>)', re.S
)
TEX = re.compile(r"\\\((.*?)\\\)|\\\[(.*?)\\\]", re.S)
#: What MathJax draws for a TeX error or an unknown macro.
TEX_ERROR = ('data-mml-node="merror"', 'mathcolor="red"')


def pages_with_math(outdir: Path) -> dict[Path, str]:
    """The site's pages that hold a math element, with their HTML."""
    found = {}
    for path in site_pages(outdir):
        text = path.read_text(encoding="utf-8")
        if MATH_ELEMENT.search(text):
            found[path] = text
    return found


def formulas(text: str) -> list[tuple[str, bool]]:
    """Every formula of a page: its TeX and whether it is displayed."""
    out = []
    for element in MATH_ELEMENT.finditer(text):
        for inline, display in TEX.findall(element.group(3)):
            out.append((html.unescape(display or inline), not inline))
    return out


def render(items: list[tuple[str, bool]]) -> tuple[dict[tuple[str, bool], str], str] | None:
    """SVG of each formula and their stylesheet, or None when Node.js or MathJax is missing."""
    node = shutil.which("node")
    if node is None or not MATHJAX_NODE.is_file():
        return None
    request = json.dumps([{"tex": tex, "display": display} for tex, display in items])
    done = subprocess.run(
        [node, str(Path(__file__).with_name("static_math.js")), str(MATHJAX_NODE)],
        input=request,
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
    )
    if done.returncode != 0:
        logger.warning("static math: MathJax failed in Node.js: %s", done.stderr[-2000:])
        return None
    answer = json.loads(done.stdout)
    return dict(zip(items, answer["html"], strict=True)), answer["css"]


def render_math(app: Sphinx, exception: Exception | None) -> None:
    """Replace each page's TeX by its SVG and take MathJax off the page.

    Parameters
    ----------
    app : sphinx.application.Sphinx
        The application.
    exception : Exception or None
        The build's exception, if it failed (then nothing is done).
    """
    if exception is not None or app.builder.format != "html":
        return
    outdir = Path(app.outdir)
    pages = pages_with_math(outdir)
    items = sorted({item for text in pages.values() for item in formulas(text)})
    if not items:  # nothing new to render (an incremental build)
        return
    css_path = outdir / "_static" / MATH_CSS
    rendered = render(items)
    if rendered is None:
        logger.info(
            "static math: no Node.js or node_modules/mathjax; MathJax renders in the browser"
        )
        if not css_path.exists():  # the pages with math link it
            css_path.write_text("", encoding="utf-8")
        return
    svg, css = rendered
    css_path.write_text(css, encoding="utf-8")
    for (tex, _), out in svg.items():
        if any(mark in out for mark in TEX_ERROR):
            logger.warning("static math: MathJax could not read %r", tex[:200])

    def element(match: re.Match[str]) -> str:
        def one(formula: re.Match[str]) -> str:
            inline, display = formula.groups()
            out = svg[(html.unescape(display or inline), not inline)]
            # a display formula wider than a phone scrolls in its box: keyboard-focusable,
            # as MathJax's menu makes it in the browser
            return (
                out.replace("<mjx-container ", '<mjx-container tabindex="0" ', 1)
                if display
                else out
            )

        return match.group(1) + TEX.sub(one, match.group(3)) + match.group(4)

    for path, text in pages.items():
        if not formulas(text):
            continue
        new = MATH_ELEMENT.sub(element, text)
        for tag in MATHJAX_TAGS:
            new = tag.sub("", new)
        path.write_text(new, encoding="utf-8")
