"""Every control of every explorer changes what the reader sees.

For each explorer of the catalog, each control is moved to each of its other
values, from the defaults and, if that changes nothing, after one other
control was moved first (a choice whose effect shows only in some states of
the others). The message must change for at least one of them: a control
that never changes the message is dead weight on the page.
"""

from __future__ import annotations

import pytest

from lesson_lib.explorers._base import Explorer
from lesson_lib.explorers.catalog import EXPLORERS


def observable(explorer: Explorer, name: str) -> bool:
    """Whether moving control ``name`` changes the message in some reachable state."""
    controls = {c.name: c for c in explorer.controls}
    contexts = [{}] + [
        {other: value}
        for other, control in controls.items()
        if other != name
        for value in control.values
        if value != control.default
    ]
    for context in contexts:
        before = explorer.message_for(**context)
        for value in controls[name].values:
            if (
                value != controls[name].default
                and explorer.message_for(**{**context, name: value}) != before
            ):
                return True
    return False


@pytest.mark.parametrize("entry", EXPLORERS, ids=lambda e: e.builder.rpartition(":")[2])
def test_every_control_changes_the_message(entry):
    explorer = entry.build()
    dead = [c.name for c in explorer.controls if not observable(explorer, c.name)]
    assert dead == [], f"controls that change nothing: {dead}"


def test_a_dead_control_is_caught():
    from lesson_lib.explorers._base import Control, Template, states

    controls = (Control("a", "a", (1, 2), 1), Control("b", "b", (1, 2), 1))
    rows = states(controls, lambda a, b: {"shown": a})
    explorer = Explorer("t", "d", controls, rows, Template(("{shown}",)), {"mark": "bar"})
    assert observable(explorer, "a")
    assert not observable(explorer, "b")
