"""Two fixes of the HTML other packages write: a repeated script, a misleading label."""

from __future__ import annotations

from typing import Any

from sphinx.application import Sphinx

#: The summary MyST-NB writes for a hide-input cell, and what replaces it.
HIDDEN_CELL_SUMMARY = ('<summary aria-label="Toggle hidden content">', "<summary>")


def dedupe_scripts(
    app: Sphinx, pagename: str, templatename: str, context: dict[str, Any], doctree: Any
) -> None:
    """Remove repeated inline scripts from a page's ``script_files``.

    Sphinx 7.4 re-adds every registered body-only script in
    ``prepare_writing`` with filename ``''`` instead of ``None``, so its
    de-duplication misses them; sphinx-thebe's ``const THEBE_JS_URL = ...``
    then appears twice and the browser reports "Identifier 'THEBE_JS_URL'
    has already been declared" on every page. It can go when a build without
    it shows each inline script once (the browser tests fail on the console
    error).

    Parameters
    ----------
    app, pagename, templatename, context, doctree
        The arguments of Sphinx's ``html-page-context`` event.
    """
    scripts = context.get("script_files")
    if not scripts:
        return
    seen: set[tuple[str, tuple[tuple[str, str], ...]]] = set()
    kept = []
    for script in scripts:
        filename = getattr(script, "filename", script)
        attrs = dict(getattr(script, "attributes", {}) or {})
        if not filename and "body" in attrs:
            key = (str(attrs["body"]), tuple(sorted((k, str(v)) for k, v in attrs.items())))
            if key in seen:
                continue
            seen.add(key)
        kept.append(script)
    scripts[:] = kept


def name_summaries(
    app: Sphinx, pagename: str, templatename: str, context: dict[str, Any], doctree: Any
) -> None:
    """Let hidden-cell summaries be named by their visible text.

    MyST-NB puts ``aria-label="Toggle hidden content"`` on the ``<summary>``
    of a hidden code cell, which hides the visible words ("Show code cell
    source") from screen readers: axe-core reports a serious
    ``label-content-name-mismatch``. Without it the visible words are the
    name. It can go when MyST-NB drops the label.

    Parameters
    ----------
    app, pagename, templatename, context, doctree
        The arguments of Sphinx's ``html-page-context`` event.
    """
    body = context.get("body")
    if isinstance(body, str) and HIDDEN_CELL_SUMMARY[0] in body:
        context["body"] = body.replace(*HIDDEN_CELL_SUMMARY)
