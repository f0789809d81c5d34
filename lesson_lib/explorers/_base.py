"""What every live explorer shares: discrete controls, a table of states, a message.

Every number an explorer's Vega-Lite chart shows is computed here for every combination of the
controls' values and shipped as a CSV table: the browser only picks and draws a row (no model in
JavaScript). The message is a :class:`Template` rendered by Python and written as a Vega expression,
so the two cannot drift apart.
"""

from __future__ import annotations

import csv
import io
import json
import math
import re
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import pairwise, product
from operator import itemgetter
from typing import Any

from lesson_lib.explorers._layers import layer
from lesson_lib.model._validate import require_instance

#: The MIME type of the explorers' output (JupyterLab 4 renders it natively).
MIME_TYPE = "application/vnd.vegalite.v5+json"
#: The Vega-Lite version the spec is written for, the one JupyterLab 4.6 bundles and
#: the site vendors (tools/fetch_assets.py); an identifier, never fetched.
SCHEMA = "https://vega.github.io/schema/vega-lite/v5.6.1.json"
#: Name of the text mark that carries the message; the site's script reads it.
MESSAGE_NAME = "message"
#: Largest number of states an explorer may ship (keeps each page light).
MAX_STATES = 20_000

Value = int | float | str


@dataclass(frozen=True)
class Control:
    """One input of an explorer: a slider, radio buttons or a drop-down over fixed values."""

    #: The parameter's name and the states table's column of its value (an identifier).
    name: str
    #: What the reader sees beside the input.
    label: str
    #: The values offered, in order.
    values: tuple[Value, ...]
    #: The starting value, one of ``values``.
    default: Value
    #: How each value reads (default the value itself).
    labels: tuple[str, ...] | None = None
    #: ``"select"`` (a drop-down), ``"radio"``, or ``"range"``, a slider over evenly spaced numbers.
    input: str = "select"

    def __post_init__(self) -> None:
        if not self.name.isidentifier():
            raise ValueError(f"Control name must be an identifier, got {self.name!r}")
        object.__setattr__(self, "values", tuple(self.values))
        if not self.values:
            raise ValueError(f"Control {self.name!r} needs at least one value")
        if self.default not in self.values:
            raise ValueError(
                f"Control {self.name!r}: default {self.default!r} is not one of {list(self.values)}"
            )
        if self.labels is not None:
            object.__setattr__(self, "labels", tuple(self.labels))
            if len(self.labels) != len(self.values):
                raise ValueError(f"Control {self.name!r}: one label per value is needed")
        if self.input not in ("select", "range", "radio"):
            raise ValueError(f"Control {self.name!r}: input must be select, range or radio")
        if self.input == "range":
            numbers = all(isinstance(v, int | float) for v in self.values)
            steps = {round(b - a, 12) for a, b in pairwise(self.values)} if numbers else set()
            if not numbers or len(steps) > 1:
                raise ValueError(f"Control {self.name!r}: a slider needs evenly spaced numbers")

    def label_of(self, value: Value) -> str:
        """How ``value`` reads in this control."""
        return str(value) if self.labels is None else self.labels[self.values.index(value)]

    def param(self) -> dict[str, Any]:
        """The Vega-Lite parameter bound to this control."""
        bind: dict[str, Any] = {"input": self.input, "name": f"{self.label} "}
        if self.input == "range":
            step = self.values[1] - self.values[0] if len(self.values) > 1 else 1
            bind.update(min=self.values[0], max=self.values[-1], step=step)
        else:
            bind["options"] = list(self.values)
            if self.labels is not None:
                bind["labels"] = list(self.labels)
        return {"name": self.name, "value": self.default, "bind": bind}


@dataclass(frozen=True)
class Template:
    """A message: literal text and fields of the state's row, in order."""

    #: Text in braces, ``"{field}"``, is the row's value of that column, anything else is literal
    #: (a part is wholly a field or wholly text; one str is split at its fields). A newline in a
    #: literal starts a new message line.
    parts: tuple[str, ...]
    #: The message of the rows whose column ``when`` is true (say, a state that cannot be priced).
    otherwise: Template | None = None
    #: The boolean column that picks ``otherwise``; needed with it.
    when: str = ""

    def __post_init__(self) -> None:
        if isinstance(self.parts, str):  # "n = {n}" is ("n = ", "{n}")
            object.__setattr__(self, "parts", [p for p in re.split(r"(\{\w+\})", self.parts) if p])
        object.__setattr__(self, "parts", tuple(self.parts))
        for part in self.parts:
            if ("{" in part or "}" in part) and self._field(part) is None:
                raise ValueError(
                    f"Template part {part!r} mixes a field with text; give the field its own part"
                )
        if (self.otherwise is None) != (not self.when):
            raise ValueError("Template: otherwise and when go together")
        if self.when and not self.when.isidentifier():
            raise ValueError(f"Template: when must be a column name, got {self.when!r}")

    @staticmethod
    def _field(part: str) -> str | None:
        if part.startswith("{") and part.endswith("}") and part[1:-1].isidentifier():
            return part[1:-1]
        return None

    @property
    def fields(self) -> tuple[str, ...]:
        """The columns the message reads."""
        own = [f for p in self.parts if (f := self._field(p)) is not None]
        if self.otherwise is not None:
            own += [self.when, *self.otherwise.fields]
        return tuple(dict.fromkeys(own))

    def render(self, row: Mapping[str, Any]) -> str:
        """The message for one row, as the browser shows it."""
        if self.otherwise is not None and _csv_text(row[self.when]) == "true":
            return self.otherwise.render(row)
        fields = [(part, self._field(part)) for part in self.parts]
        return "".join(part if name is None else _csv_text(row[name]) for part, name in fields)

    def expression(self) -> str:
        """The same message as a Vega expression over ``datum``."""
        pieces = []
        for part in self.parts:
            name = self._field(part)
            pieces.append(json.dumps(part) if name is None else f"datum[{json.dumps(name)}]")
        own = " + ".join(pieces) if pieces else "''"
        if self.otherwise is None:
            return own
        test = f"datum[{json.dumps(self.when)}] == 'true'"
        return f"({test}) ? ({self.otherwise.expression()}) : ({own})"


def _state_of(names: Sequence[str]) -> Callable[[Mapping[str, Any]], tuple[Value, ...]]:
    """A row's state: its values of the controls ``names``, as a tuple."""
    values = itemgetter(*names)
    return values if len(names) > 1 else lambda row: (values(row),)


def _csv_text(value: Any) -> str:
    """How a value reads once it has gone through the CSV table."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError(f"states must be finite numbers, got {value!r}")
        return repr(value) if value != int(value) else str(int(value))
    return str(value)


def _texts(values: Sequence[Any]) -> Sequence[str]:
    """A column's values as :func:`_csv_text` writes them; columns of one type take a short cut."""
    kinds = set(map(type, values))
    if kinds == {str}:
        return values
    if kinds == {int}:
        return list(map(str, values))
    if kinds == {float} and all(map(math.isfinite, values)):
        return [str(int(v)) if v.is_integer() else repr(v) for v in values]
    return list(map(_csv_text, values))


def _columns(rows: Sequence[Mapping[str, Any]]) -> dict[str, Sequence[str]]:
    """Each column of ``rows`` (dicts with the same keys), as CSV text."""
    return {name: _texts([row[name] for row in rows]) for name in rows[0]}


def _write(columns: Mapping[str, Sequence[str]]) -> str:
    """CSV text of columns of text, a header first."""
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(columns)
    writer.writerows(zip(*columns.values(), strict=True))
    return buf.getvalue()


def csv_data(rows: Sequence[Mapping[str, Any]], numeric: Iterable[str] = ()) -> dict[str, Any]:
    """Inline CSV data for a Vega-Lite view of ``rows``, ``numeric`` columns parsed as numbers.

    Parameters
    ----------
    rows, numeric
        The table (dicts with the same keys), and the columns read as numbers;
        the others are read as text (Vega would otherwise guess each column's type).

    Returns
    -------
    dict
        A Vega-Lite ``data`` object with the CSV text and its ``format``.
    """
    return _data(_columns(rows), set(numeric))


def _data(columns: Mapping[str, Sequence[str]], numeric: set[str]) -> dict[str, Any]:
    parse = {c: ("number" if c in numeric else "string") for c in columns}
    return {"values": _write(columns), "format": {"type": "csv", "parse": parse}}


@dataclass
class Explorer:
    """A live explorer: controls, one row of numbers per state, a message, a chart."""

    #: A short name, also the accessible title.
    title: str
    #: What the chart shows, in words.
    description: str
    #: The inputs, in the order shown.
    controls: tuple[Control, ...]
    #: One row per combination of the controls' values, each control's value under its name
    #: and every number or label the message and chart show.
    rows: list[dict[str, Any]]
    #: The message shown for the current state.
    message: Template
    #: A Vega-Lite spec drawing the state (see :meth:`state_filter`) from the states table.
    chart: dict[str, Any]
    #: Columns of ``rows`` the chart reads as numbers.
    numeric: tuple[str, ...] = ()
    #: Lines of the message, for its height.
    message_lines: int = 3
    #: Several rows per state (at least one each) for a chart of many marks, keyed by the
    #: controls' values like ``rows``; the chart reads it instead.
    details: list[dict[str, Any]] | None = None
    #: Columns of ``details`` the chart reads as numbers.
    detail_numeric: tuple[str, ...] = ()
    #: Ship each text column as indices into a list of its distinct values, decoded by the spec's
    #: first transform (a fraction of the weight for thousands of states repeating a few words).
    compact_text: bool = False
    #: Unbound Vega-Lite parameters the chart reads (``{"name": "phone", "value": False}``).
    params: tuple[dict[str, Any], ...] = ()
    #: How ``tools/site/explorers.js`` draws a chart of fixed pixels on a phone (else its views are
    #: narrowed): ``params``, those ``params``' values there; ``views``, named views' ``width``
    #: and ``height`` there; ``asText``, views shown as text above the controls instead
    #: (``{"view": name, "text": field, "join": field}``, one paragraph per ``join`` value).
    narrow: dict[str, Any] | None = None
    _index: dict[tuple[Value, ...], dict[str, Any]] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self.controls = tuple(self.controls)
        for control in self.controls:
            require_instance(f"{self.title} control", control, Control)
        names = [c.name for c in self.controls]
        if len(set(names)) != len(names):
            raise ValueError(f"{self.title}: control names repeat: {names}")
        if len(self.rows) > MAX_STATES:
            raise ValueError(f"{self.title}: {len(self.rows)} states; at most {MAX_STATES}")
        state_of = _state_of(names)
        self._index = dict(zip(map(state_of, self.rows), self.rows, strict=True))
        if len(self._index) < len(self.rows):
            twice = next(k for k, count in Counter(map(state_of, self.rows)).items() if count > 1)
            raise ValueError(f"{self.title}: two rows for the state {twice}")
        missing = set(product(*(c.values for c in self.controls))) - self._index.keys()
        if missing:
            key = next(k for k in product(*(c.values for c in self.controls)) if k in missing)
            state = dict(zip(names, key, strict=True))
            raise ValueError(f"{self.title}: no row for the state {state}")
        if self.details is not None:
            if len(self.details) > 4 * MAX_STATES:
                raise ValueError(
                    f"{self.title}: {len(self.details)} detail rows; at most {4 * MAX_STATES}"
                )
            if set(map(state_of, self.details)) != self._index.keys():
                raise ValueError(f"{self.title}: details must cover exactly the explorer's states")
        fields = self.message.fields  # a property that parses the template: read it once
        missing_fields = set(fields) - set(self.rows[0])
        if missing_fields:
            raise ValueError(
                f"{self.title}: the message reads missing columns {sorted(missing_fields)}"
            )
        for table in (self.rows, self.details or []):
            if table and any(row.keys() != table[0].keys() for row in table):
                raise ValueError(f"{self.title}: every row of a table needs the same columns")
        # The browser reads an empty CSV text field as null and would show "null".
        empty = [f for f in fields if "" in map(itemgetter(f), self.rows)]
        if empty:
            raise ValueError(
                f"{self.title}: message fields {sorted(empty)} are empty in some state"
            )

    # The model's side, for tests and notebooks.
    @property
    def defaults(self) -> dict[str, Value]:
        """Each control's starting value."""
        return {c.name: c.default for c in self.controls}

    def row(self, **values: Value) -> dict[str, Any]:
        """The state's row (defaults where unset); an unknown control or value is a ValueError."""
        choice = self.defaults
        for name, value in values.items():
            control = next((c for c in self.controls if c.name == name), None)
            if control is None:
                raise ValueError(f"{name!r} is not a control of {self.title}; try {list(choice)}")
            if value not in control.values:
                raise ValueError(f"{name} must be one of {list(control.values)}, got {value!r}")
            choice[name] = value
        return self._index[tuple(choice[c.name] for c in self.controls)]

    def message_for(self, **values: Value) -> str:
        """The message the explorer shows for that state."""
        return self.message.render(self.row(**values))

    # The browser's side.
    def state_filter(self, *, free: Iterable[str] = ()) -> str:
        """A Vega expression true for rows matching the controls, except ``free``."""
        return state_filter(self.controls, free=free)

    def table(self, rows: Sequence[Mapping[str, Any]] | None = None) -> str:
        """The states (or other ``rows``) as CSV text, numbers as Python writes them."""
        return _write(_columns(self.rows if rows is None else rows))

    def _numbers(self, numeric: Iterable[str]) -> set[str]:
        """``numeric`` and the controls whose values are all numbers."""
        controls = {c.name for c in self.controls if not any(isinstance(v, str) for v in c.values)}
        return controls | set(numeric)

    def _states_data(self) -> tuple[dict[str, Any], list[dict[str, Any]]]:
        """The states' data and, with ``compact_text``, the transforms that decode its text."""
        numbers, columns = self._numbers(self.numeric), _columns(self.rows)
        decode = []
        for name, texts in columns.items():
            if self.compact_text and name not in numbers:
                distinct = list(dict.fromkeys(texts))
                codes = {text: str(i) for i, text in enumerate(distinct)}
                columns[name] = [codes[t] for t in texts]
                expression = f"{json.dumps(distinct)}[datum[{json.dumps(name)}]]"
                decode.append({"calculate": expression, "as": name})
        numbers |= {d["as"] for d in decode}
        return _data(columns, numbers), decode

    def spec(self) -> dict[str, Any]:
        """The Vega-Lite spec (version 5.6)."""
        data, decode = self._states_data()
        chart = self.chart
        if self.details is not None:
            chart = {"data": csv_data(self.details, self._numbers(self.detail_numeric)), **chart}
        text = {
            "text": {"field": "_message", "type": "nominal"},
            "x": {"value": 0},
            "y": {"value": 0},
        }
        pick = [
            {"filter": self.state_filter()},
            {"calculate": self.message.expression(), "as": "_message"},
        ]
        message = {
            "name": MESSAGE_NAME,
            "height": 17 * self.message_lines,
            "width": 600,
            **layer("text", text, pick, align="left", baseline="top", lineBreak="\n", fontSize=13,
                    lineHeight=17, color="#1a1a1a"),
        }  # fmt: skip
        spec: dict[str, Any] = {
            "$schema": SCHEMA,
            "title": {"text": self.title, "anchor": "start", "fontSize": 14},
            "description": self.description,
            "params": [c.param() for c in self.controls] + list(self.params),
            "data": data,
            "vconcat": [message, chart],
            "spacing": 8,
            "background": "white",
            "padding": 8,
            "autosize": {"type": "pad", "resize": True},  # a view's height may follow the state
            "config": {"view": {"stroke": None}, "font": "sans-serif"},
            # vega-embed reads these wherever it runs (JupyterLab, the site): SVG
            # keeps the message readable as text; no export menu.
            "usermeta": {"embedOptions": {"renderer": "svg", "actions": False}},
        }
        if self.narrow is not None:
            spec["usermeta"]["narrow"] = self.narrow
        if decode:
            spec["transform"] = decode
        return spec

    def _repr_mimebundle_(
        self, include: Sequence[str] | None = None, exclude: Sequence[str] | None = None
    ) -> dict[str, Any]:
        plain = f"{self.title}: {self.description}\n{self.message_for()}"
        return {MIME_TYPE: self.spec(), "text/plain": plain}


def states(
    controls: Sequence[Control], compute: Callable[..., Mapping[str, Any]]
) -> list[dict[str, Any]]:
    """One row per combination of the controls' values: those values, then ``compute``'s columns.

    Parameters
    ----------
    controls, compute
        The inputs, and ``compute(**values)``: a combination's other columns, from ``lesson_lib``.

    Returns
    -------
    list of dict
    """
    names = [c.name for c in controls]
    combinations = (
        dict(zip(names, key, strict=True)) for key in product(*(c.values for c in controls))
    )
    return [{**values, **compute(**values)} for values in combinations]


def state_filter(controls: Sequence[Control], *, free: Iterable[str] = ()) -> str:
    """A Vega expression true for the rows matching the controls' values, except ``free``'s.

    Parameters
    ----------
    controls, free
        The explorer's inputs, and the names of those any row may differ in.

    Returns
    -------
    str
        ``datum.n == n && ...``, or ``true``.
    """
    free = set(free)
    tests = [f"datum.{c.name} == {c.name}" for c in controls if c.name not in free]
    return " && ".join(tests) or "true"
