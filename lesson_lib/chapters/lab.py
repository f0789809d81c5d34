"""The lab page: the worked example's numbers; the measured ones come from the page's own run (:func:`lesson_lib.lab.report.lab_numbers`)."""

from __future__ import annotations

from lesson_lib.chapters import overview
from lesson_lib.chapters.glue import glue_numbers


def numbers() -> dict[str, str]:
    """Every value the lab page glues: the worked example's numbers (the run's are glued by the page once it has run).

    Returns
    -------
    dict of str to str
        Glue name -> formatted text.
    """
    return overview.numbers()


def glue() -> list[str]:
    """Glue :func:`numbers` into the page being executed (``book/lab.md``).

    Returns
    -------
    list of str
        The names glued.
    """
    return glue_numbers(numbers())
