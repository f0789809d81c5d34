"""The MyST-NB renderer writes an explorer's spec into the page, safely."""

from __future__ import annotations

import json
import re
from types import SimpleNamespace

from lesson_lib.explorers._base import MIME_TYPE
from lesson_lib.explorers.myst import VegaLiteRenderer, _explorer_html


def test_html_carries_the_spec_and_a_live_region():
    spec = {"title": {"text": "T <b>"}, "description": "</script><script>alert(1)</script>"}
    html = _explorer_html(spec)
    assert html.startswith('<div class="lesson-explorer" role="group" aria-label="T &lt;b&gt;">')
    assert html.count("</script>") == 1  # the spec's own "</script>" is escaped
    body = re.search(r'class="lesson-explorer-spec">(.*?)</script>', html).group(1)
    assert json.loads(body) == spec
    assert 'aria-live="polite"' in html


def test_renderer_handles_only_block_explorer_outputs():
    spec = {"title": "plain"}
    ours = SimpleNamespace(mime_type=MIME_TYPE, content=spec)
    nodes = VegaLiteRenderer.handle_mime(None, ours, False)
    assert len(nodes) == 1 and nodes[0]["format"] == "html"
    assert 'aria-label="plain"' in nodes[0].astext()
    as_text = SimpleNamespace(mime_type=MIME_TYPE, content=json.dumps(spec))
    assert VegaLiteRenderer.handle_mime(None, as_text, False)[0].astext() == nodes[0].astext()
    assert VegaLiteRenderer.handle_mime(None, ours, True) is None
    other = SimpleNamespace(mime_type="text/plain", content="x")
    assert VegaLiteRenderer.handle_mime(None, other, False) is None
    assert ("html", MIME_TYPE, 1) in VegaLiteRenderer.mime_priority_overrides
