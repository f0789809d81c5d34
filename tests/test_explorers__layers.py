"""The shared Vega-Lite layers: marks, lookups, scales, and the stacked time bars."""

from lesson_lib.explorers._layers import (
    bottom_legend,
    fold_terms,
    labels_above,
    layer,
    lookup,
    nominal_scale,
    time_bars,
)
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


def test_a_layer_leaves_out_what_it_does_not_have():
    """The mark's type and properties; encoding and transforms only when given."""
    assert layer("rule", strokeWidth=2) == {"mark": {"type": "rule", "strokeWidth": 2}}
    assert layer("text", {"text": {"field": "t"}}, [{"filter": "true"}], fontSize=11) == {
        "mark": {"type": "text", "fontSize": 11},
        "encoding": {"text": {"field": "t"}},
        "transform": [{"filter": "true"}],
    }


def test_lookup_writes_a_literal_object_indexed_by_the_key():
    """Keys quoted as text, values as Python writes them unless told otherwise."""
    assert lookup({"a": "x", 2: "y"}, "datum.k") == "{'a': 'x', '2': 'y'}[datum.k]"
    assert lookup({"p": 2.0}, "prompt", value=lambda v: f"{v:g}") == "{'p': 2}[prompt]"


def test_nominal_scale_and_legends():
    """A titleless nominal channel with its domain and range; legends under the chart."""
    assert nominal_scale("f", ("a", "b"), ("red", "blue"), None) == {
        "field": "f",
        "type": "nominal",
        "title": None,
        "scale": {"domain": ["a", "b"], "range": ["red", "blue"]},
        "legend": None,
    }
    assert bottom_legend(labelLimit=260) == {
        "orient": "bottom",
        "direction": "horizontal",
        "labelLimit": 260,
    }
    axis = labels_above(14)
    assert axis["labelOffset"] == -14 and axis["labelAlign"] == "left" and not axis["ticks"]
