"""Vega-Lite pieces of a horizontal stacked bar of one token's time, term by term.

The latency and experts explorers draw the same kind of chart: a few bars,
each one decoded token's time split into compute, latency and bytes. Each
state row carries one column per term (milliseconds); these pieces fold the
columns into stacked segments, colour them by role and put each bar's label
above it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from lesson_lib.figures._style import ROLE_COLORS

#: A term of the bar: (state column in ms, legend label, role in ROLE_COLORS).
Term = tuple[str, str, str]


def fold_terms(terms: Sequence[Term]) -> list[dict[str, Any]]:
    """Transforms that turn the terms' columns into one segment each.

    Parameters
    ----------
    terms : sequence of Term
        The bar's terms, in stacking order.

    Returns
    -------
    list of dict
        A ``fold`` into ``_term`` / ``_ms``, then the legend label as ``term``
        and the stacking position as ``_stack``.
    """
    return [
        {"fold": [t for t, _, _ in terms], "as": ["_term", "_ms"]},
        {
            "calculate": "{"
            + ", ".join(f"{t!r}: {label!r}" for t, label, _ in terms)
            + "}[datum._term]",
            "as": "term",
        },
        {
            "calculate": "indexof(" + repr([t for t, _, _ in terms]) + ", datum._term)",
            "as": "_stack",
        },
    ]


def time_bars(terms: Sequence[Term], y_sort: Any, bar_title: str) -> dict[str, Any]:
    """The mark and encoding of the bars: one per ``_bar``, labels above, segments stacked.

    Parameters
    ----------
    terms : sequence of Term
        The bar's terms, as given to :func:`fold_terms`.
    y_sort : object
        Vega-Lite ``sort`` of the bars.
    bar_title : str
        The tooltip's title for the bar's name.

    Returns
    -------
    dict
        ``{"mark": ..., "encoding": ...}`` to merge into a layer.
    """
    return {
        "mark": {"type": "bar", "stroke": "white", "strokeWidth": 1},
        "encoding": {
            "y": {
                "field": "_bar",
                "type": "nominal",
                "title": None,
                "sort": y_sort,
                "scale": {"paddingInner": 0.5},
                # Labels sit above their bars, inside the plot: the message
                # above the chart then starts at the card's left edge.
                "axis": {
                    "labelAlign": "left",
                    "labelBaseline": "bottom",
                    "labelPadding": -2,
                    "labelOffset": -17,
                    "labelFontSize": 12,
                    "labelLimit": 400,
                    "ticks": False,
                    "domain": False,
                },
            },
            "x": {
                "field": "_ms",
                "type": "quantitative",
                "stack": "zero",
                "title": "time per decoded token (ms)",
            },
            "color": {
                "field": "term",
                "type": "nominal",
                "title": None,
                "scale": {
                    "domain": [label for _, label, _ in terms],
                    "range": [ROLE_COLORS[role] for _, _, role in terms],
                },
                "legend": {"orient": "bottom", "direction": "horizontal", "labelLimit": 260},
            },
            "order": {"field": "_stack", "type": "quantitative"},
            "tooltip": [
                {"field": "_bar", "title": bar_title},
                {"field": "term"},
                {"field": "_ms", "title": "ms", "format": ".3f"},
            ],
        },
    }
