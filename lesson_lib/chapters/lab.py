"""The lab page: the worked example's numbers; the measured ones come from the page's own run (:func:`lesson_lib.lab.report.lab_numbers`)."""

from __future__ import annotations

from lesson_lib.chapters import overview
from lesson_lib.chapters.glue import GlueTable

#: What ``book/lab.md`` glues (:func:`lesson_lib.chapters.glue.chapter_numbers`).
GLUE = GlueTable(overview.WORKED)
