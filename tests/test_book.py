"""The chapter glue helper."""

import pytest

from lesson_lib import book
from lesson_lib.worked_example import numbers


def test_glue_numbers_glues_every_key(monkeypatch):
    """Every worked-example number is glued as a plain string."""
    seen = {}
    monkeypatch.setattr("myst_nb.glue", lambda name, value, display: seen.update({name: value}))
    glued = book.glue_numbers()
    assert glued == list(numbers())
    assert seen["line_2_fast"] == "9.34 ms"
    assert all(isinstance(v, str) for v in seen.values())


def test_unknown_name_fails_loudly(monkeypatch):
    """A typo in a glue name is an error, not a blank in the text."""
    monkeypatch.setattr("myst_nb.glue", lambda *a, **k: None)
    with pytest.raises(KeyError, match="unknown glue names"):
        book.glue_numbers(names=["line_2_fastt"])
    assert book.glue_numbers({"a": "1 ms"}) == ["a"]
