"""The chapter glue helper: every value glued with MyST-NB's glue, hidden, under its name."""

import pytest
from IPython.core.interactiveshell import InteractiveShell
from IPython.utils.capture import capture_output

from lesson_lib.chapters import glue as book
from lesson_lib.chapters import overview

#: MyST-NB's prefix for a glued value kept out of the cell's visible output.
HIDDEN_PREFIX = "application/papermill.record/"


def _glued(*args, **kwargs):
    """Name -> text/plain of every value one call of ``glue_numbers`` glues."""
    InteractiveShell.instance()
    with capture_output() as captured:
        names = book.glue_numbers(*args, **kwargs)
    values = {}
    for out in captured.outputs:
        scrapbook = out.metadata["scrapbook"]
        assert scrapbook["mime_prefix"] == HIDDEN_PREFIX
        values[scrapbook["name"]] = out.data[HIDDEN_PREFIX + "text/plain"]
    return names, values


def test_glue_numbers_glues_every_key_hidden():
    """Every worked-example number is glued as a plain string; the Overview's is 54 GB."""
    names, values = _glued(overview.numbers())
    assert names == list(values)
    assert values["weights_gb"] == "'54 GB'"  # 27e9 bf16 parameters x 2 bytes, by hand


def test_glued_value_is_readable_by_myst_nb():
    """MyST-NB's reader recovers the text under its name and leaves no visible output."""
    from myst_nb.ext.glue import extract_glue_data_cell
    from nbformat import from_dict

    InteractiveShell.instance()
    with capture_output() as captured:
        book.glue_numbers({"line": "9.34 ms"})
    (out,) = captured.outputs
    cell = from_dict(
        {
            "cell_type": "code",
            "outputs": [
                {"output_type": "display_data", "data": out.data, "metadata": out.metadata}
            ],
        }
    )
    ((name, output),) = extract_glue_data_cell(cell)
    assert name == "line" and output["data"] == {"text/plain": "'9.34 ms'"}
    assert cell.outputs == []


def test_unknown_name_fails_loudly():
    """A typo in a glue name is an error, not a blank in the text."""
    with pytest.raises(KeyError, match="unknown glue names"):
        book.glue_numbers(overview.numbers(), names=["line_2_fastt"])
    assert _glued({"a": "1 ms", "b": "2 ms"}, names=["b"]) == (["b"], {"b": "'2 ms'"})
