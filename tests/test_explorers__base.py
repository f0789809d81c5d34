"""The explorer base: controls, the message template, the states table and the spec."""

from __future__ import annotations

import csv
import io
import json

import pytest

from lesson_lib.explorers._base import (
    MESSAGE_NAME,
    MIME_TYPE,
    Control,
    Explorer,
    Template,
    states,
)


def small(**overrides) -> Explorer:
    controls = (
        Control("n", "GPUs", (1, 2, 3), 2, input="range"),
        Control("kind", "kind", ("a", "b"), "a", ("Alpha", "Beta")),
    )
    rows = states(controls, lambda n, kind: {"value": n * 1.5, "word": f"{kind}{n}"})
    args = {
        "title": "Small",
        "description": "A test explorer.",
        "controls": controls,
        "rows": rows,
        "message": Template(("n is ", "{n}", ", value ", "{value}", "\n", "{word}")),
        "chart": {"mark": "bar", "encoding": {"x": {"field": "value", "type": "quantitative"}}},
        "numeric": ("value",),
    }
    args.update(overrides)
    return Explorer(**args)


@pytest.mark.parametrize(
    ("kwargs", "words"),
    [
        ({"name": "not an id"}, "identifier"),
        ({"default": 9}, "default 9 is not one of"),
        ({"values": ()}, "at least one value"),
        ({"labels": ("one",)}, "one label per value"),
        ({"input": "slider"}, "select, range or radio"),
        ({"values": (1, 2, 4), "input": "range", "default": 1}, "evenly spaced"),
        ({"values": ("a", "b"), "input": "range", "default": "a"}, "evenly spaced"),
    ],
)
def test_control_refuses_bad_definitions(kwargs, words):
    base = {"name": "n", "label": "N", "values": (1, 2, 3), "default": 1}
    with pytest.raises(ValueError, match=words):
        Control(**{**base, **kwargs})


def test_control_params_bind_inputs():
    rng = Control("n", "GPUs", (2, 4, 6), 4, input="range").param()
    assert rng == {
        "name": "n",
        "value": 4,
        "bind": {"input": "range", "name": "GPUs ", "min": 2, "max": 6, "step": 2},
    }
    sel = Control("k", "kind", ("a", "b"), "b", ("A", "B")).param()
    assert sel["bind"] == {
        "input": "select",
        "name": "kind ",
        "options": ["a", "b"],
        "labels": ["A", "B"],
    }
    radio = Control("k", "kind", ("a", "b"), "a", input="radio").param()
    assert radio["bind"]["input"] == "radio" and "labels" not in radio["bind"]
    assert Control("k", "kind", ("a", "b"), "b", ("A", "B")).label_of("b") == "B"


def test_template_renders_like_its_expression():
    t = Template(("x = ", "{x}", ' "quoted"\n', "{y}"))
    assert t.fields == ("x", "y")
    assert t.render({"x": 2.5, "y": "z"}) == 'x = 2.5 "quoted"\nz'
    assert t.expression() == '"x = " + datum["x"] + " \\"quoted\\"\\n" + datum["y"]'
    assert t.render({"x": 3.0, "y": True}) == 'x = 3 "quoted"\ntrue'
    with pytest.raises(ValueError, match="finite"):
        t.render({"x": float("nan"), "y": 1})
    with pytest.raises(ValueError, match="mixes a field with text"):
        Template(("{x};",))


def test_template_of_one_string_is_split_at_its_fields():
    assert Template('x = {x} "quoted"\n{y}').parts == ("x = ", "{x}", ' "quoted"\n', "{y}")
    assert Template("{x}").parts == ("{x}",)
    with pytest.raises(ValueError, match="mixes a field with text"):
        Template("n = {1n}")
    with pytest.raises(ValueError, match="mixes a field with text"):
        Template("n = {n")


def test_explorer_rows_messages_and_errors():
    e = small()
    assert e.defaults == {"n": 2, "kind": "a"}
    assert e.row() == {"n": 2, "kind": "a", "value": 3.0, "word": "a2"}
    assert e.message_for(n=3, kind="b") == "n is 3, value 4.5\nb3"
    with pytest.raises(ValueError, match="'m' is not a control"):
        e.row(m=1)
    with pytest.raises(ValueError, match=r"n must be one of \[1, 2, 3\], got 7"):
        e.row(n=7)


def test_explorer_refuses_incomplete_or_ambiguous_tables():
    e = small()
    with pytest.raises(ValueError, match="no row for the state"):
        small(rows=e.rows[:-1])
    with pytest.raises(ValueError, match="two rows"):
        small(rows=[*e.rows, dict(e.rows[0])])
    with pytest.raises(ValueError, match="missing columns"):
        small(message=Template(("{nope}",)))
    with pytest.raises(TypeError):
        small(controls=("n",))
    with pytest.raises(ValueError, match="same columns"):
        small(rows=[*e.rows[:-1], {**e.rows[-1], "extra": 1}])
    with pytest.raises(ValueError, match=r"message fields \['word'\] are empty"):
        small(rows=[*e.rows[:-1], {**e.rows[-1], "word": ""}])


def test_table_round_trips_through_csv():
    e = small()
    rows = list(csv.DictReader(io.StringIO(e.table())))
    assert len(rows) == 6
    assert rows[0] == {"n": "1", "kind": "a", "value": "1.5", "word": "a1"}


def test_spec_binds_every_control_and_reads_the_table():
    e = small()
    spec = e.spec()
    assert [p["name"] for p in spec["params"]] == ["n", "kind"]
    assert spec["data"]["format"] == {
        "type": "csv",
        "parse": {"n": "number", "value": "number", "kind": "string", "word": "string"},
    }
    message = spec["vconcat"][0]
    assert message["name"] == MESSAGE_NAME
    assert message["transform"][0] == {"filter": "datum.n == n && datum.kind == kind"}
    assert message["transform"][1]["calculate"] == e.message.expression()
    assert spec["vconcat"][1] is e.chart
    assert e.state_filter(free=["n"]) == "datum.kind == kind"
    bundle = e._repr_mimebundle_()
    assert json.loads(json.dumps(bundle[MIME_TYPE])) == spec
    assert "n is 2" in bundle["text/plain"]


def test_details_feed_the_chart_and_cover_every_state():
    e = small()
    details = [
        {"n": r["n"], "kind": r["kind"], "cell": i, "x": i * 0.5} for r in e.rows for i in range(2)
    ]
    d = small(details=details, detail_numeric=("x",))
    chart = d.spec()["vconcat"][1]
    assert chart["data"]["format"]["parse"] == {
        "cell": "string",
        "kind": "string",
        "n": "number",
        "x": "number",
    }
    assert chart["data"]["values"].splitlines()[1] == "1,a,0,0"
    assert chart["mark"] == "bar"
    with pytest.raises(ValueError, match="details must cover"):
        small(details=details[:-2])


def test_compact_text_ships_indices_and_decodes_to_the_same_table():
    """With compact_text, "a"/"b" and "a1".."b3" travel as 0, 1, ... and decode back.

    By hand: the states run (1, a), (1, b), (2, a), ... so "a" is 0 and "b" is 1,
    and word's six values are numbered as they first appear: a1 0, b1 1, a2 2 ... b3 5.
    """
    plain, compact = small(), small(compact_text=True)
    assert compact.message_for(n=3, kind="b") == plain.message_for(n=3, kind="b")
    spec = compact.spec()
    assert spec["data"]["format"]["parse"] == {
        "n": "number",
        "kind": "number",
        "value": "number",
        "word": "number",
    }
    lines = spec["data"]["values"].splitlines()
    assert lines[0] == "n,kind,value,word"
    assert lines[1] == "1,0,1.5,0" and lines[-1] == "3,1,4.5,5"
    decode = {t["as"]: json.loads(t["calculate"].partition("[datum")[0]) for t in spec["transform"]}
    assert decode == {"kind": ["a", "b"], "word": ["a1", "b1", "a2", "b2", "a3", "b3"]}
    shipped = list(csv.DictReader(io.StringIO(spec["data"]["values"])))
    decoded = [{k: decode[k][int(v)] if k in decode else v for k, v in r.items()} for r in shipped]
    assert decoded == list(csv.DictReader(io.StringIO(plain.table())))
    assert "transform" not in plain.spec()


def test_template_otherwise_reads_the_rows_it_is_for():
    """Rows whose ``when`` column is true read the other message, in Python and in Vega."""
    other = Template(("cannot: ", "{why}"))
    t = Template(("x = ", "{x}"), otherwise=other, when="bad")
    assert t.fields == ("x", "bad", "why")
    assert t.render({"x": 2, "bad": False, "why": "w"}) == "x = 2"
    assert t.render({"x": 2, "bad": True, "why": "w"}) == "cannot: w"
    assert t.expression() == (
        '(datum["bad"] == \'true\') ? ("cannot: " + datum["why"]) : ("x = " + datum["x"])'
    )
    with pytest.raises(ValueError, match="go together"):
        Template(("x",), otherwise=other)
    with pytest.raises(ValueError, match="go together"):
        Template(("x",), when="bad")


def test_extra_params_and_narrow_layout_go_into_the_spec():
    """Params follow the controls' (unbound); ``narrow`` lands in usermeta beside embedOptions.

    Without them the spec has neither: the other explorers' specs are unchanged.
    """
    plain = small().spec()
    assert "narrow" not in plain["usermeta"]
    assert [p["name"] for p in plain["params"]] == ["n", "kind"]
    narrow = {"params": {"phone": True}, "views": {"chart": {"width": 300}}}
    e = small(params=({"name": "phone", "value": False},), narrow=narrow)
    spec = e.spec()
    assert spec["params"][-1] == {"name": "phone", "value": False}
    assert [p["name"] for p in spec["params"]] == ["n", "kind", "phone"]
    assert spec["usermeta"]["narrow"] == narrow
    assert spec["usermeta"]["embedOptions"] == {"renderer": "svg", "actions": False}
