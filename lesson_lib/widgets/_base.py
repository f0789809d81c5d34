"""What every lesson widget shares: controls, a message line, a picture.

The picture is an ``ipywidgets.Image`` holding a PNG rendered from a
figure builder, so the saved widget state of the static site shows the
figure, and tests can read both the message and the picture's bytes.
"""

from __future__ import annotations

import html
import io
from collections.abc import Callable, Sequence

import ipywidgets as widgets
import matplotlib
import traitlets
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from PIL import Image


def figure_png(fig: Figure, dpi: int = 80) -> bytes:
    """Render ``fig`` to PNG bytes.

    The figure keeps an Agg canvas of its own, so a widget that redraws one
    figure in place reuses the renderer and its cache of text sizes. Text
    is drawn without font hinting, which is a fifth faster at this size,
    and the PNG is RGB with light compression: smaller and quicker to write
    than the RGBA of ``savefig``.

    Parameters
    ----------
    fig : matplotlib.figure.Figure
        The figure (with an opaque background); it is not shown anywhere.
    dpi : int, default 80
        Resolution; low enough to keep widget updates quick. The figure's
        own ``dpi`` is restored afterwards.

    Returns
    -------
    bytes
        The PNG file.
    """
    canvas = fig.canvas if isinstance(fig.canvas, FigureCanvasAgg) else FigureCanvasAgg(fig)
    original_dpi = fig.dpi
    buf = io.BytesIO()
    try:
        fig.dpi = dpi
        with matplotlib.rc_context({"text.hinting": "no_hinting"}):
            canvas.draw()
        width, height = canvas.get_width_height(physical=True)
        picture = Image.frombuffer(
            "RGBA", (width, height), canvas.buffer_rgba(), "raw", "RGBA", 0, 1
        )
        picture.convert("RGB").save(buf, format="png", compress_level=3)
    finally:
        fig.dpi = original_dpi
    return buf.getvalue()


class AltImage(widgets.Image):
    """An ``ipywidgets.Image`` whose text alternative is part of the widget state.

    ``alt`` is a synced trait, so it is saved with the notebook's widget
    state; the static site's widget script (``tools/site/widgets-setup.js``)
    copies it onto the rendered ``<img>``. (``tooltip`` cannot serve: the
    widget renderer fails on it for pictures, which have no description.)

    Parameters
    ----------
    alt : str
        Text alternative of the picture, for screen readers.
    **kwargs
        Passed to ``ipywidgets.Image``.
    """

    alt = traitlets.Unicode("", help="Text alternative of the picture.").tag(sync=True)

    @property
    def description(self) -> str:
        """The text alternative (alias of ``alt``)."""
        return self.alt

    @description.setter
    def description(self, value: str) -> None:
        self.alt = value


class LessonWidget(widgets.VBox):
    """Controls on top, then a message (HTML) and a picture (PNG).

    Subclasses or callers pass ``render``, a function of the controls' values
    that returns ``(message_html, figure_or_None)``. A ``ValueError`` or
    ``TypeError`` from it becomes a short message in the widget instead of a
    traceback, and the last good picture is kept.

    Parameters
    ----------
    controls : sequence of ipywidgets.ValueWidget
        The inputs, each with a ``description``.
    render : callable
        ``render(**values) -> (str, Figure | None)`` where ``values`` maps
        each control's ``name`` (its key in ``names``) to its value.
    names : sequence of str
        Keyword under which each control's value is passed to ``render``.
    alt : str
        Text alternative of the picture, for screen readers.
    """

    def __init__(
        self,
        controls: Sequence[widgets.ValueWidget],
        render: Callable[..., tuple[str, Figure | None]],
        names: Sequence[str],
        alt: str,
    ) -> None:
        if len(controls) != len(names):
            raise ValueError("controls and names must have the same length")
        self.controls = dict(zip(names, controls, strict=True))
        self._render = render
        self.message = widgets.HTML()
        self.image = AltImage(alt=alt, format="png", layout=widgets.Layout(max_width="100%"))
        self.error: str | None = None
        box = widgets.HBox(list(controls), layout=widgets.Layout(flex_flow="row wrap"))
        super().__init__([box, self.message, self.image])
        for control in controls:
            control.observe(lambda _change: self.update(), names="value")
        self.update()

    @property
    def values(self) -> dict[str, object]:
        """Current value of each control, by name."""
        return {name: c.value for name, c in self.controls.items()}

    def update(self) -> None:
        """Recompute the message and picture from the controls' values."""
        try:
            text, fig = self._render(**self.values)
        except (ValueError, TypeError) as exc:
            self.error = str(exc)
            self.message.value = (
                '<p role="alert" style="color:#D55E00"><b>Cannot show this choice:</b> '
                f"{html.escape(str(exc))}</p>"
            )
            return
        self.error = None
        self.message.value = text
        if fig is not None:
            self.image.value = figure_png(fig)
