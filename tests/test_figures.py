"""The book's figure format: ``lesson_lib.figures.book_svg`` and its registration in IPython."""

from __future__ import annotations

import re

from IPython.core.interactiveshell import InteractiveShell
from matplotlib.figure import Figure

from lesson_lib.figures import _register_svg_formatter, book_svg


def _figure() -> Figure:
    fig = Figure(figsize=(5.1, 4.4), layout="constrained")
    fig.add_subplot().plot([0, 1], [0, 1], label="a line")
    return fig


def test_the_svg_is_sized_in_css_px_as_a_100_dpi_png() -> None:
    """5.1 x 4.4 in at 100 px an inch: 510 x 440 px; the drawing keeps its 72-pt viewBox."""
    head = book_svg(_figure())[:600]
    assert 'width="510px" height="440px"' in head
    assert 'viewBox="0 0 367.2 316.8"' in head  # 5.1 x 72 and 4.4 x 72 points
    assert not re.search(r'(width|height)="[\d.]+pt"', head)


def test_the_svg_is_the_same_on_every_run() -> None:
    """No date and fixed ids, so an unchanged figure makes an unchanged file."""
    first, second = book_svg(_figure()), book_svg(_figure())
    assert first == second
    assert "<dc:date>" not in first


def test_a_bare_figure_displays_as_svg_only_in_ipython() -> None:
    """Inside IPython a Figure's last-expression display is the SVG, and no PNG beside it."""
    shell = InteractiveShell.instance()
    try:
        _register_svg_formatter()
        data, _ = shell.display_formatter.format(_figure())
    finally:
        InteractiveShell.clear_instance()
    assert set(data) == {"text/plain", "image/svg+xml"}
    assert 'width="510px"' in data["image/svg+xml"][:600]
