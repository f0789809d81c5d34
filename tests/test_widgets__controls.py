"""Every control of every chapter widget changes what the reader sees.

Each widget is built from its chapter's own cell. Each control is moved to
another valid value: the message or the picture must change, and the picture
keeps a text alternative. A control whose effect shows only in some state of
the others (a custom fabric's bandwidth once "custom" is chosen) must change
the output after one other control has been moved first.
"""

from __future__ import annotations

from typing import Any

import ipywidgets as widgets
import pytest

from lesson_lib.site import cell_value, toc_files, widget_cells
from lesson_lib.widgets._base import LessonWidget


def other_value(control: Any) -> Any:
    """A valid value of ``control`` different from its current one."""
    value = control.value
    if isinstance(control, widgets.SelectionSlider | widgets.Dropdown | widgets.ToggleButtons):
        values = [o[1] if isinstance(o, tuple) else o for o in control.options]
        return next(v for v in values if v != value)
    if isinstance(control, widgets.IntSlider | widgets.FloatSlider):
        return value + control.step if value + control.step <= control.max else value - control.step
    if isinstance(control, widgets.IntText):
        return value * 2 if value else 1
    if isinstance(control, widgets.FloatText):
        return value * 2 if value else 1.0
    if isinstance(control, widgets.Checkbox | widgets.ToggleButton):
        return not value
    raise TypeError(f"no move for {type(control).__name__}")


def other_values(control: Any) -> list[Any]:
    """Every other option of a choice control; one other value of anything else."""
    if isinstance(control, widgets.Dropdown | widgets.ToggleButtons):
        values = [o[1] if isinstance(o, tuple) else o for o in control.options]
        return [v for v in values if v != control.value]
    return [other_value(control)]


def shown(widget: LessonWidget) -> tuple[str, bytes]:
    """What the reader sees: the message and the picture."""
    return widget.message.value, bytes(widget.image.value)


def observable(build, name: str) -> bool:
    """Whether moving control ``name`` changes the output, from the defaults or after
    one other control was moved first (to any of its options, for a choice)."""
    start = build()
    contexts = [(None, None)] + [
        (n, v) for n, c in start.controls.items() if n != name for v in other_values(c)
    ]
    for first, value in contexts:
        widget = build()
        if first is not None:
            widget.controls[first].value = value
        before = shown(widget)
        widget.controls[name].value = other_value(widget.controls[name])
        if shown(widget) != before:
            assert widget.image.alt.strip(), f"{name}: picture without alt text"
            return True
    return False


CELLS = [
    pytest.param(source, id=f"{doc.split('/')[-1]}-cell{index}")
    for doc in toc_files()
    for index, source in widget_cells(doc)
]


def test_chapters_have_widgets():
    """The parametrisation is not empty: the five chapter widgets are found."""
    assert len(CELLS) >= 5


@pytest.mark.parametrize("source", CELLS)
def test_every_control_changes_the_output(source):
    """Moving any control of the widget changes its message or picture."""
    widget = cell_value(source)
    if not isinstance(widget, LessonWidget):
        pytest.fail("a widget cell must show a LessonWidget")
    assert widget.image.alt.strip(), "the picture has no text alternative"
    assert widget.error is None and widget.image.value

    def build():
        return cell_value(source)

    dead = [name for name in widget.controls if not observable(build, name)]
    assert dead == [], f"controls that change nothing: {dead}"
