"""Vega-Lite pieces the explorers' charts share: layers, lookups, scales, legends.

Also the stacked time bars of the latency and experts explorers: each state row carries one column
per term (milliseconds), folded into stacked segments coloured by role, each bar's label above it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from lesson_lib.figures._style import ROLE_COLORS

#: A term of the bar: (state column in ms, legend label, role in ROLE_COLORS).
Term = tuple[str, str, str]
Spec = dict[str, Any]


def layer(
    mark: str, encoding: Spec | None = None, transform: Sequence[Spec] = (), **props: Any
) -> Spec:
    """One layer: a mark of type ``mark`` with ``props``, its encoding and transforms.

    Parameters
    ----------
    mark, encoding, transform, **props
        The mark's type (``"bar"`` ...), its encoding and its rows' transforms
        (each left out when None or empty), and the mark's properties.

    Returns
    -------
    dict
    """
    out: Spec = {"mark": {"type": mark, **props}}
    if encoding is not None:
        out["encoding"] = encoding
    if transform:
        out["transform"] = list(transform)
    return out


def lookup(mapping: Mapping[Any, Any], key: str, value: Callable[[Any], str] = repr) -> str:
    """A Vega expression: the literal object ``mapping`` indexed by the expression ``key``.

    Parameters
    ----------
    mapping, key, value
        Keys as quoted text, values by ``value``; ``key`` a Vega expression (``datum.label``).

    Returns
    -------
    str
        ``{'a': 1, ...}[key]``.
    """
    pairs = ", ".join(f"{str(k)!r}: {value(v)}" for k, v in mapping.items())
    return "{" + pairs + "}" + f"[{key}]"


def bottom_legend(**extra: Any) -> Spec:
    """A horizontal legend under the chart.

    Parameters
    ----------
    **extra
        Further properties of the legend.

    Returns
    -------
    dict
    """
    return {"orient": "bottom", "direction": "horizontal", **extra}


def nominal_scale(
    field: str, domain: Sequence[Any], colors: Sequence[Any], legend: Spec | None
) -> Spec:
    """A nominal channel of ``field`` with a fixed domain, its own range and no title.

    Parameters
    ----------
    field, domain, colors, legend
        The column, the scale's domain and range in the same order, and the legend (None: none).

    Returns
    -------
    dict
    """
    return {
        "field": field,
        "type": "nominal",
        "title": None,
        "scale": {"domain": list(domain), "range": list(colors)},
        "legend": legend,
    }


def labels_above(offset: int) -> Spec:
    """A band axis whose labels sit ``offset`` px above their bars' middle, inside the plot.

    The message above the chart then starts at the card's left edge.

    Parameters
    ----------
    offset : int
        Pixels.

    Returns
    -------
    dict
    """
    return {
        "labelAlign": "left",
        "labelBaseline": "bottom",
        "labelPadding": -2,
        "labelOffset": -offset,
        "labelFontSize": 12,
        "labelLimit": 400,
        "ticks": False,
        "domain": False,
    }


def fold_terms(terms: Sequence[Term]) -> list[Spec]:
    """Transforms that turn the terms' columns (in stacking order) into one segment each.

    Parameters
    ----------
    terms : sequence of Term
        The bar's terms.

    Returns
    -------
    list of dict
        A ``fold`` into ``_term`` / ``_ms``, the legend label as ``term``, the stack as ``_stack``.
    """
    columns = [t for t, _, _ in terms]
    return [
        {"fold": columns, "as": ["_term", "_ms"]},
        {"calculate": lookup({t: label for t, label, _ in terms}, "datum._term"), "as": "term"},
        {"calculate": f"indexof({columns!r}, datum._term)", "as": "_stack"},
    ]


def time_bars(terms: Sequence[Term], y_sort: Any, bar_title: str) -> Spec:
    """The mark and encoding of the bars: one per ``_bar``, labels above, segments stacked.

    Parameters
    ----------
    terms, y_sort, bar_title
        The :func:`fold_terms` terms, the bars' Vega-Lite ``sort``, the tooltip's bar title.

    Returns
    -------
    dict
        ``{"mark": ..., "encoding": ...}`` to merge into a layer.
    """
    y = {"field": "_bar", "type": "nominal", "title": None, "sort": y_sort,
         "scale": {"paddingInner": 0.5}, "axis": labels_above(17)}  # fmt: skip
    x = {"field": "_ms", "type": "quantitative", "stack": "zero",
         "title": "time per decoded token (ms)"}  # fmt: skip
    colors = [ROLE_COLORS[role] for _, _, role in terms]
    legend = bottom_legend(labelLimit=260)
    tooltip = [{"field": "_bar", "title": bar_title}, {"field": "term"},
               {"field": "_ms", "title": "ms", "format": ".3f"}]  # fmt: skip
    encoding = {
        "y": y,
        "x": x,
        "color": nominal_scale("term", [label for _, label, _ in terms], colors, legend),
        "order": {"field": "_stack", "type": "quantitative"},
        "tooltip": tooltip,
    }
    return layer("bar", encoding, stroke="white", strokeWidth=1)
