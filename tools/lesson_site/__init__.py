"""The lesson site's Sphinx extension (``_config.yml``: ``local_extensions``).

One module per concern:

* :mod:`lesson_site.assets`: stop the build when the offline assets
  (``_vendor/``) are missing, add the explorers', self-check's and tables'
  scripts only to pages that use them, and inline the self-check's data.
* :mod:`lesson_site.html_fixes`: drop a repeated inline script (Sphinx 7.4
  with sphinx-thebe) and the label MyST-NB puts on hidden-cell summaries.
* :mod:`lesson_site.api_pages`: autodoc skips what a module only imports
  and leaves out constant values too long to read.
* :mod:`lesson_site.kernels`: each page's kernel is stopped at once when its
  cells have run.
* :mod:`lesson_site.static_math`: the math rendered to SVG at build time, so
  no page loads MathJax.
* :mod:`lesson_site.weight`: a page's first load leaves out what it does not
  use (MathJax without math, the theme's Font Awesome script and search index),
  and the explorers' data waits beside the page until an explorer is near.

Its ``env_version`` follows its source (:func:`source_env_version`), so a
change here makes Sphinx read every page again (from the execution cache).
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

from sphinx.application import Sphinx

from lesson_site.api_pages import ShortValueDataDocumenter, skip_imported_members
from lesson_site.assets import add_page_assets, add_selfcheck_data, check_vendor
from lesson_site.html_fixes import dedupe_scripts, name_summaries
from lesson_site.kernels import stop_page_kernels_at_once
from lesson_site.static_math import render_math
from lesson_site.weight import (
    ICON_CSS,
    lazy_images,
    move_explorer_data,
    strip_theme_tags,
    subset_icon_fonts,
)

#: This package's folder.
PACKAGE_DIR = Path(__file__).resolve().parent


def source_env_version(folder: Path = PACKAGE_DIR) -> int:
    """A number that changes whenever this extension's source does.

    Sphinx keeps the environment of the last build (every page as it was
    read) while each extension's ``env_version`` stays the same, so a change
    here would otherwise reach only the pages changed since. A new number
    makes Sphinx start a fresh environment and read every page again.

    Parameters
    ----------
    folder : pathlib.Path, default this package's folder
        The source to fingerprint: every ``.py`` file in it.

    Returns
    -------
    int
        The first 48 bits of the SHA-256 of the files' names and contents.
    """
    digest = hashlib.sha256()
    for path in sorted(folder.glob("*.py")):
        digest.update(path.name.encode())
        digest.update(path.read_bytes())
    return int(digest.hexdigest()[:12], 16)


def setup(app: Sphinx) -> dict[str, Any]:
    """Register the extension's event handlers.

    Parameters
    ----------
    app : sphinx.application.Sphinx
        The application.

    Returns
    -------
    dict
        Extension metadata.
    """
    stop_page_kernels_at_once()
    app.add_config_value("lesson_vendor_pins", "", "html")
    app.connect("config-inited", check_vendor)
    app.connect("html-page-context", add_page_assets)
    app.connect("html-page-context", add_selfcheck_data)
    app.connect("html-page-context", dedupe_scripts, priority=900)
    app.connect("html-page-context", name_summaries, priority=900)
    app.connect("html-page-context", move_explorer_data)
    app.connect("html-page-context", lazy_images)
    app.connect("build-finished", render_math, priority=400)
    app.connect("build-finished", strip_theme_tags)
    app.connect("build-finished", subset_icon_fonts)
    app.add_css_file(ICON_CSS, priority=900)  # after the theme's own
    app.setup_extension("sphinx.ext.autodoc")  # its event must exist to be connected
    app.add_autodocumenter(ShortValueDataDocumenter, override=True)
    app.connect("autodoc-skip-member", skip_imported_members)
    return {
        "parallel_read_safe": True,
        "parallel_write_safe": True,
        "env_version": source_env_version(),
    }
