"""The texts a figure draws and the CSS px each is shown at, for the figure tests.

A figure wider than :data:`~lesson_lib.figures._style.COLUMN_PX` is scaled down to the column, so
a text of ``points`` is shown at ``points x BOOK_DPI / 72 x min(1, column / natural width)`` px.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from matplotlib.figure import Figure
from matplotlib.text import Text

from lesson_lib.figures._style import BOOK_DPI, COLUMN_PX


@dataclass(frozen=True)
class ShownText:
    """One text of a figure and the size it is shown at."""

    text: str
    points: float
    px: float


@contextmanager
def recording_texts() -> Iterator[list[Text]]:
    """Record every :class:`~matplotlib.text.Text` that draws itself meanwhile."""
    drawn: list[Text] = []
    original = Text.draw

    def draw(self: Text, renderer: object) -> None:
        if self.get_visible() and self.get_text().strip():
            drawn.append(self)
        original(self, renderer)

    Text.draw = draw  # type: ignore[method-assign]
    try:
        yield drawn
    finally:
        Text.draw = original  # type: ignore[method-assign]


def shown_texts(fig: Figure, column_px: float = COLUMN_PX) -> tuple[float, list[ShownText]]:
    """Every visible, non-empty text of ``fig`` with the size it is shown at, smallest first."""
    if not column_px > 0:
        raise ValueError(f"column_px must be > 0, got {column_px!r}")
    with recording_texts() as drawn:
        fig.draw_without_rendering()
    natural = float(fig.get_size_inches()[0] * BOOK_DPI)
    scale = min(1.0, column_px / natural)
    texts = [
        ShownText(t.get_text(), t.get_fontsize(), t.get_fontsize() * BOOK_DPI / 72 * scale)
        for t in dict.fromkeys(drawn)
    ]
    return natural, sorted(texts, key=lambda t: t.px)
