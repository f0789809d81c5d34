"""The self-check on the static site: :func:`~lesson_lib.coursework.check.page_contract` as JSON.

On the built site's Problem set page each problem has a box where a reader types an answer and
presses Check. ``tools/site/selfcheck.js`` reads a plain number with one of the problem's units (or
a letter), finds the verdict in the contract written for the book's version and shows its message;
anything else, and per-student variants, need ``check(qid, answer, STUDENT)`` in a notebook. The
Sphinx extension (``tools/lesson_site/``) writes :func:`selfcheck_json` into the page.
"""

from __future__ import annotations

import json

from lesson_lib.coursework.check import page_contract

__all__ = ["selfcheck_json"]


def selfcheck_json() -> str:
    """:func:`~lesson_lib.coursework.check.page_contract` as JSON safe inside a ``<script>``.

    Returns
    -------
    str
        ASCII JSON, ``<``, ``>``, ``&`` as ``\\u`` escapes: no ``</script>`` or ``<!--`` in it.
    """
    text = json.dumps(page_contract(), ensure_ascii=True, allow_nan=False, sort_keys=True)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
