"""The site's offline assets: present before the build, and on the pages that use them."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from sphinx.application import Sphinx
from sphinx.config import Config
from sphinx.errors import ConfigError

#: File whose presence shows that ``_vendor/`` was assembled (``tools/fetch_assets.py``).
PINS_FILE = "PINS.json"

#: Assets (paths under ``_static/``) a page gets only when its body has an
#: element with the class that keys them; scripts load deferred, in order.
PAGE_ASSETS: dict[str, tuple[str, ...]] = {
    # explorers.js loads _static/vega/ itself when an explorer nears the viewport
    "lesson-explorer": ("lesson/explorers.js", "lesson/explorers.css"),
    "lesson-selfcheck": ("lesson/selfcheck.js", "lesson/selfcheck.css"),
    "exercise": ("lesson/exercises.css",),
    # written when the build ends (lesson_site.static_math)
    "math": ("lesson/math.css",),
}
#: Assets of every page with a table: the cue for tables wider than the page.
TABLE_ASSETS: tuple[str, ...] = ("lesson/tables.js", "lesson/tables.css")
#: Assets of every page: long literals and wide equations on a phone.
EVERY_PAGE_ASSETS: tuple[str, ...] = ("lesson/page.css",)

#: Class of the self-check boxes, and the id of the JSON data ``selfcheck.js`` reads.
SELFCHECK_CLASS = "lesson-selfcheck"
SELFCHECK_DATA_ID = "lesson-selfcheck-data"


def check_vendor(app: Sphinx, config: Config) -> None:
    """Fail early if the vendored assets are missing; record their pins.

    Without ``_vendor/`` the site's math and explorers would silently need a
    CDN. The pins become the config value ``lesson_vendor_pins`` (rebuild
    ``"html"``), so new assets make Sphinx rewrite every page and copy the
    static files again, even when no chapter changed.

    Parameters
    ----------
    app : sphinx.application.Sphinx
        The application.
    config : sphinx.config.Config
        Its configuration; ``html_static_path`` is inspected.
    """
    pins = []
    for entry in config.html_static_path:
        path = Path(app.confdir, entry)
        if path.name != "_vendor":
            continue
        if not (path / PINS_FILE).is_file():
            raise ConfigError(
                f"{path} has no {PINS_FILE}: the site's MathJax and Vega scripts are "
                "missing. Run 'python tools/fetch_assets.py' (or 'make book')."
            )
        pins.append((path / PINS_FILE).read_text().strip())
    config.lesson_vendor_pins = "\n".join(pins)


def has_class(body: str, name: str) -> bool:
    """Say whether an element of ``body`` (HTML) carries the class ``name``.

    Parameters
    ----------
    body : str
        The page's HTML body.
    name : str
        A class name.

    Returns
    -------
    bool
        True if some ``class="..."`` attribute lists ``name``.
    """
    return re.search(rf'class="(?:[^"]*\s)?{re.escape(name)}(?:\s[^"]*)?"', body) is not None


def add_page_assets(
    app: Sphinx, pagename: str, templatename: str, context: dict[str, Any], doctree: Any
) -> None:
    """Add :data:`EVERY_PAGE_ASSETS`, and :data:`PAGE_ASSETS` and :data:`TABLE_ASSETS` where used.

    Parameters
    ----------
    app, pagename, templatename, context, doctree
        The arguments of Sphinx's ``html-page-context`` event.
    """
    body = context.get("body")
    if not isinstance(body, str):
        return
    wanted = [EVERY_PAGE_ASSETS]
    wanted += [assets for marker, assets in PAGE_ASSETS.items() if has_class(body, marker)]
    if "<table" in body:
        wanted.append(TABLE_ASSETS)
    for assets in wanted:
        for asset in assets:
            if asset.endswith(".css"):
                app.add_css_file(asset)
            else:
                app.add_js_file(asset, loading_method="defer")


def add_selfcheck_data(
    app: Sphinx, pagename: str, templatename: str, context: dict[str, Any], doctree: Any
) -> None:
    """Append the self-check's data to pages with a self-check box.

    It is an inline JSON script because a page opened from ``file://``
    cannot fetch a separate file.

    Parameters
    ----------
    app, pagename, templatename, context, doctree
        The arguments of Sphinx's ``html-page-context`` event.
    """
    body = context.get("body")
    if not isinstance(body, str) or not has_class(body, SELFCHECK_CLASS):
        return
    context["body"] = (
        f'{body}<script type="application/json" id="{SELFCHECK_DATA_ID}">'
        f"{selfcheck_json()}</script>\n"
    )


def selfcheck_json() -> str:
    """:func:`~lesson_lib.coursework.check.page_contract` as JSON safe inside a ``<script>``.

    ``tools/site/selfcheck.js`` reads a plain number with one of the problem's units (or a
    letter) and finds its verdict here; per-student variants need ``check()`` in a notebook.

    Returns
    -------
    str
        ASCII JSON, ``<``, ``>``, ``&`` as ``\\u`` escapes: no ``</script>`` or ``<!--`` in it.
    """
    from lesson_lib.coursework.check import page_contract

    text = json.dumps(page_contract(), ensure_ascii=True, allow_nan=False, sort_keys=True)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
