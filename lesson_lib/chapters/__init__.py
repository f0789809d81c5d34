"""One module per chapter, named as the chapter's page: its quantities and its glue.

``book/latency.md`` takes its numbers from :mod:`lesson_lib.chapters.latency`,
and so on. Every chapter module has the same entry point: ``numbers()``, the
formatted values its page pastes (``{glue:text}`name```), and ``glue()``,
which glues them into the page being executed
(:func:`lesson_lib.chapters.glue.glue_numbers`).
"""
