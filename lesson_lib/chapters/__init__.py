"""One module per chapter page, the top layer: what each page glues.

``book/latency.md`` glues :mod:`lesson_lib.chapters.latency`'s ``GLUE`` table,
read by :func:`lesson_lib.chapters.glue.chapter_numbers`; the model's
arithmetic lives in :mod:`lesson_lib.model`.
"""
