"""MyST-NB renderer for the explorers' Vega-Lite output on the static site.

Registered under the ``myst_nb.mime_renderers`` entry point in ``pyproject.toml``, it writes the
spec into a ``<div class="lesson-explorer">`` (with a live region for screen readers and a no-script
note), which ``tools/lesson_site.py`` equips with the vendored Vega scripts and ``explorers.js``:
the chart responds with no kernel and no network.
"""

from __future__ import annotations

import html
import json
from typing import Any, ClassVar

from lesson_lib.explorers._base import MIME_TYPE


def _explorer_html(spec: dict[str, Any]) -> str:
    """The HTML of one explorer: its spec, a chart slot and a live region."""
    text = json.dumps(spec, separators=(",", ":")).replace("</", "<\\/")
    title = spec.get("title", {})
    name = title.get("text", "Explorer") if isinstance(title, dict) else str(title)
    return (
        f'<div class="lesson-explorer" role="group" aria-label="{html.escape(name)}">'
        f'<script type="application/json" class="lesson-explorer-spec">{text}</script>'
        '<div class="lesson-explorer-chart"></div>'
        '<p class="lesson-explorer-status" aria-live="polite"></p>'
        "<noscript><p>This explorer needs JavaScript; the static figures and tables "
        "of this page show the lesson's defaults.</p></noscript>"
        "</div>"
    )


class VegaLiteRenderer:
    """MyST-NB plugin: renders the explorers' MIME type as live HTML."""

    #: Before text/plain for the HTML builder.
    mime_priority_overrides: ClassVar[list[tuple[str, str, int]]] = [
        ("html", MIME_TYPE, 1),
        ("readthedocs", MIME_TYPE, 1),
    ]

    @staticmethod
    def handle_mime(renderer: Any, data: Any, inline: bool) -> list[Any] | None:
        """Return raw HTML nodes for an explorer's output, None for anything else.

        Parameters
        ----------
        renderer : myst_nb.core.render.NbElementRenderer
            MyST-NB's renderer (unused).
        data : myst_nb.core.render.MimeData
        inline : bool
            True for inline outputs (``{glue}`` roles), which are not drawn.

        Returns
        -------
        list of docutils.nodes.Element or None
        """
        if inline or data.mime_type != MIME_TYPE:
            return None
        from docutils import nodes

        spec = data.content if isinstance(data.content, dict) else json.loads(data.content)
        return [nodes.raw("", _explorer_html(spec), format="html")]
