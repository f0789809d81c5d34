"""The shared stacked-time bar pieces: each term folded, labelled and coloured by its role."""

from lesson_lib.explorers._layers import fold_terms, time_bars
from lesson_lib.figures._style import ROLE_COLORS

TERMS = (("a_ms", "first", "compute"), ("b_ms", "second", "latency"))


def test_terms_fold_into_labelled_stacked_segments():
    """The fold takes the term columns; the labels and stack order follow the terms' order."""
    fold, label, stack = fold_terms(TERMS)
    assert fold == {"fold": ["a_ms", "b_ms"], "as": ["_term", "_ms"]}
    assert label["calculate"] == "{'a_ms': 'first', 'b_ms': 'second'}[datum._term]"
    assert stack["calculate"] == "indexof(['a_ms', 'b_ms'], datum._term)"


def test_bars_colour_each_term_by_its_role():
    """The colour scale lists the labels with their roles' colours; sort and title pass through."""
    layer = time_bars(TERMS, ["x", "y"], "layout")
    scale = layer["encoding"]["color"]["scale"]
    assert scale == {
        "domain": ["first", "second"],
        "range": [ROLE_COLORS["compute"], ROLE_COLORS["latency"]],
    }
    assert layer["encoding"]["y"]["sort"] == ["x", "y"]
    assert layer["encoding"]["tooltip"][0] == {"field": "_bar", "title": "layout"}
