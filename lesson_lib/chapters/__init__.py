"""One module per chapter page, the top layer: ``book/latency.md`` glues :mod:`lesson_lib.chapters.latency`'s ``GLUE``."""
