"""A page's first load kept light: what a page does not use is not loaded with it.

* The explorers' data in a file beside the page, loaded by ``explorers.js``
  with the Vega scripts when the explorer nears the viewport; its CSV tables
  stored column by column, which gzip shrinks to a third (a column repeats
  its values, a row does not), and put back in rows by ``explorers.js``.
* Images below the first one load lazily.
* The theme's Font Awesome script and its search index on every page, both
  written by its template, and MathJax on pages without math, are taken out
  of each page as written: the icons are drawn by the webfont the theme's
  CSS loads anyway (cut to the icons used), and the search page loads its
  index itself.

``benchmarks/README.md`` ("Workarounds") says when each can go.
"""

from __future__ import annotations

import csv
import io
import json
import re
from pathlib import Path
from typing import Any

from sphinx.application import Sphinx

from lesson_site.assets import has_class

#: An explorer's spec, as ``lesson_lib.explorers.myst`` writes it into the page.
EXPLORER_SPEC = re.compile(
    r'<script type="application/json" class="lesson-explorer-spec">(.*?)</script>', re.S
)
#: The global that each explorer's data file fills, keyed by the file's name.
SPECS_GLOBAL = "lessonExplorerSpecs"

#: Tags the themes' templates write into every page that no page here needs:
#: Font Awesome's 1.5 MB script (pydata-sphinx-theme's ``head_js_preload``),
#: which redraws the webfont's icons as SVG, and Sphinx's search scripts and
#: index (pydata-sphinx-theme's ``extrahead``), used only by search-as-you-type,
#: which is off. ``search.html`` keeps its own.
THEME_TAGS = (
    re.compile(r"\s*<!-- So that users can add custom icons -->"),
    re.compile(r'\s*<script defer src="[^"]*_static/scripts/fontawesome\.js[^"]*"></script>'),
)
#: MathJax and its inline configuration, which Sphinx also puts on a page
#: whose toctree includes a page with math (the index, the API overview).
MATHJAX_TAGS = (
    re.compile(r"\s*<script>window\.MathJax = .*?</script>"),
    re.compile(r'\s*<script [^>]*src="[^"]*_static/mathjax/[^"]*"></script>'),
)
SEARCH_TAGS = (
    re.compile(r'\s*<script src="[^"]*_static/searchtools\.js[^"]*"></script>'),
    re.compile(r'\s*<script src="[^"]*_static/language_data\.js[^"]*"></script>'),
    re.compile(r'\s*<script src="[^"]*searchindex\.js[^"]*"></script>'),
)


def _column(fields: tuple[str, ...]) -> str | list[str]:
    """A column as one text, its fields split by commas, or as a list when a field holds one."""
    return list(fields) if any("," in f for f in fields) else ",".join(fields)


def by_columns(spec: Any) -> Any:
    """``spec`` with each inline CSV table as ``lessonColumns``: its header and its columns.

    Parameters
    ----------
    spec : object
        A Vega-Lite spec, or any part of one (walked through dicts and lists).

    Returns
    -------
    object
        The same structure; a data object ``{"values": csv, "format": {"type": "csv"}}``
        holds ``"lessonColumns": [header, [column, ...]]`` instead of ``values``, a column
        being its fields joined by commas (or a list, when a field holds a comma).
    """
    if isinstance(spec, list):
        return [by_columns(item) for item in spec]
    if not isinstance(spec, dict):
        return spec
    spec = {key: by_columns(value) for key, value in spec.items()}
    if isinstance(spec.get("values"), str) and spec.get("format", {}).get("type") == "csv":
        header, *rows = csv.reader(io.StringIO(spec.pop("values")))
        spec["lessonColumns"] = [header, [_column(c) for c in zip(*rows, strict=True)]]
    return spec


def move_explorer_data(
    app: Sphinx, pagename: str, templatename: str, context: dict[str, Any], doctree: Any
) -> None:
    """Write each explorer's spec to a script beside the page; leave its name in the page.

    The file sets ``window.lessonExplorerSpecs[name]``; ``explorers.js`` inserts
    it as a ``<script src>`` when the explorer nears the viewport, which works
    from a server and from ``file://`` alike.

    Parameters
    ----------
    app, pagename, templatename, context, doctree
        The arguments of Sphinx's ``html-page-context`` event.
    """
    body = context.get("body")
    if not isinstance(body, str) or "lesson-explorer-spec" not in body:
        return
    stem = pagename.rpartition("/")[2]
    folder = Path(app.outdir, pagename).parent
    folder.mkdir(parents=True, exist_ok=True)
    count = 0

    def write(match: re.Match[str]) -> str:
        nonlocal count
        count += 1
        name = f"{stem}.explorer-{count}.js"
        spec = by_columns(json.loads(match.group(1)))
        text = json.dumps(spec, ensure_ascii=False, separators=(",", ":"))
        (folder / name).write_text(
            f"window.{SPECS_GLOBAL} = window.{SPECS_GLOBAL} || {{}};\n"
            f'window.{SPECS_GLOBAL}["{name}"] = {text};\n',
            encoding="utf-8",
        )
        return (
            '<script type="application/json" class="lesson-explorer-spec" '
            f'data-src="{name}"></script>'
        )

    context["body"] = EXPLORER_SPEC.sub(write, body)


def lazy_images(
    app: Sphinx, pagename: str, templatename: str, context: dict[str, Any], doctree: Any
) -> None:
    """Give every image of the page's body but the first ``loading="lazy"``.

    Parameters
    ----------
    app, pagename, templatename, context, doctree
        The arguments of Sphinx's ``html-page-context`` event.
    """
    body = context.get("body")
    if not isinstance(body, str) or "<img" not in body:
        return
    seen = 0

    def mark(match: re.Match[str]) -> str:
        nonlocal seen
        seen += 1
        tag = match.group(0)
        return (
            tag if seen == 1 or "loading=" in tag else tag.replace("<img", '<img loading="lazy"', 1)
        )

    context["body"] = re.sub(r"<img\b[^>]*>", mark, body)


def site_pages(outdir: Path) -> list[Path]:
    """The built site's HTML pages, not the copies of its sources and assets."""
    return [
        path
        for path in outdir.rglob("*.html")
        if path.relative_to(outdir).parts[0] not in ("_static", "_sources", "_images")
    ]


def strip_theme_tags(app: Sphinx, exception: Exception | None) -> None:
    """Take :data:`THEME_TAGS`, :data:`SEARCH_TAGS` (but on the search page) and
    :data:`MATHJAX_TAGS` (on pages without math) out of each page.

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
    for path in site_pages(outdir):
        text = path.read_text(encoding="utf-8")
        new = text
        tags = THEME_TAGS if path == outdir / "search.html" else THEME_TAGS + SEARCH_TAGS
        if not has_class(text, "math"):
            tags += MATHJAX_TAGS
        for tag in tags:
            new = tag.sub("", new)
        if new != text:
            path.write_text(new, encoding="utf-8")


#: The theme's icon fonts (TrueType beside each woff2), and the stylesheet that
#: points their families at subsets holding only the icons the site draws.
ICON_FONTS = {
    "fa-solid-900": ("Font Awesome 6 Free", 900),
    "fa-regular-400": ("Font Awesome 6 Free", 400),
    "fa-brands-400": ("Font Awesome 6 Brands", 400),
}
ICON_CSS = "lesson/icons.css"
#: ``.fa-name:before{content:"\\f002"}`` rules of Font Awesome's CSS (one or more selectors).
ICON_RULE = re.compile(r'((?:\.fa-[\w-]+:(?:before|after),?)+)\{content:"(\\[0-9a-f]+|.)"\}')
#: Private-use code points written straight into the theme's CSS (its admonition icons).
PRIVATE_USE = re.compile(r"[\ue000-\uf8ff]|\\(?:f|e)[0-9a-f]{3}")


def _code_point(text: str) -> int:
    return int(text[1:], 16) if text.startswith("\\") else ord(text)


def used_icons(outdir: Path, theme_css: str) -> set[int]:
    """Code points of every icon a page or script of the site names, or the theme's CSS draws."""
    rules: dict[str, int] = {}
    for selectors, content in ICON_RULE.findall(theme_css):
        for name in re.findall(r"\.(fa-[\w-]+):", selectors):
            rules[name] = _code_point(content)
    others = ICON_RULE.sub("", theme_css)
    codes = {_code_point(m) for m in PRIVATE_USE.findall(others)}
    skip = ("fontawesome.js", "vega", "mathjax")
    sources = [p for p in outdir.rglob("*.html") if p.parts[-2] != "_sources"]
    sources += [p for p in (outdir / "_static").rglob("*.js") if not any(s in str(p) for s in skip)]
    for path in sources:
        names = set(re.findall(r"\bfa-[\w-]+", path.read_text(encoding="utf-8", errors="replace")))
        codes.update(rules[name] for name in names if name in rules)
    return codes


def subset_icon_fonts(app: Sphinx, exception: Exception | None) -> None:
    """Serve the icon webfonts cut to the icons used, in place of the theme's whole fonts.

    The three fonts are 430 KB and a page fetches the solid one (156 KB) for
    its header's icons. ``lesson/icons.css``, linked after the theme's CSS,
    declares the same families with the subsets (WOFF), and the browser uses
    the last declaration.

    Parameters
    ----------
    app : sphinx.application.Sphinx
        The application.
    exception : Exception or None
        The build's exception, if it failed (then nothing is done).
    """
    if exception is not None or app.builder.format != "html":
        return
    from fontTools import subset

    static = Path(app.outdir, "_static")
    webfonts = static / "vendor" / "fontawesome" / "webfonts"
    theme_css = static / "styles" / "pydata-sphinx-theme.css"
    if not webfonts.is_dir() or not theme_css.is_file():
        return
    codes = used_icons(Path(app.outdir), theme_css.read_text(encoding="utf-8"))
    rules = []
    for stem, (family, weight) in ICON_FONTS.items():
        options = subset.Options()
        options.flavor = "woff"
        font = subset.load_font(str(webfonts / f"{stem}.ttf"), options)
        subsetter = subset.Subsetter(options)
        subsetter.populate(unicodes=codes)
        subsetter.subset(font)
        subset.save_font(font, str(static / "lesson" / f"{stem}.woff"), options)
        rules.append(
            f'@font-face{{font-display:block;font-family:"{family}";font-style:normal;'
            f'font-weight:{weight};src:url({stem}.woff) format("woff")}}\n'
        )
    (static / ICON_CSS).write_text("".join(rules), encoding="utf-8")
