"""The chapter glue helper: MyST-NB's message, without MyST-NB's imports."""

import subprocess
import sys

import pytest
from IPython.core.interactiveshell import InteractiveShell
from IPython.utils.capture import capture_output

from lesson_lib import book


def _messages(glue, *args):
    """Display messages (data, metadata) that one call of ``glue`` publishes."""
    InteractiveShell.instance()
    with capture_output() as captured:
        glue(*args)
    return [(out.data, out.metadata) for out in captured.outputs]


@pytest.mark.parametrize("display", [False, True])
@pytest.mark.parametrize("value", ["9.34 ms", 3, ["a", 1.5]])
def test_glue_writes_what_myst_nb_writes(value, display):
    """Same MIME bundle, prefix and scrapbook metadata as myst_nb.glue, shown or hidden."""
    from myst_nb import glue as myst_glue

    ours = _messages(book.glue, "x", value, display)
    theirs = _messages(myst_glue, "x", value, display)
    assert ours == theirs
    data, metadata = ours[0]
    assert metadata["scrapbook"] == {
        "name": "x",
        "mime_prefix": "" if display else book.GLUE_PREFIX,
    }
    assert all(k.startswith(book.GLUE_PREFIX) != display for k in data)


def test_glued_value_is_hidden_and_readable_by_myst_nb():
    """MyST-NB's reader recovers the text under its name and leaves no visible output."""
    from myst_nb.ext.glue import extract_glue_data_cell
    from nbformat import from_dict

    ((data, metadata),) = _messages(book.glue, "line", "9.34 ms", False)
    cell = from_dict(
        {
            "cell_type": "code",
            "outputs": [{"output_type": "display_data", "data": data, "metadata": metadata}],
        }
    )
    ((name, output),) = extract_glue_data_cell(cell)
    assert name == "line" and output["data"] == {"text/plain": "'9.34 ms'"}
    assert cell.outputs == []


def test_glue_numbers_glues_every_key(monkeypatch):
    """Every worked-example number is glued as a plain string; the Overview's is 54 GB."""
    seen = {}
    monkeypatch.setattr(book, "glue", lambda name, value, display: seen.update({name: value}))
    glued = book.glue_numbers()
    assert glued == list(seen)
    assert seen["weights_gb"] == "54 GB"  # 27e9 bf16 parameters x 2 bytes, by hand
    assert all(isinstance(v, str) for v in seen.values())


def test_unknown_name_fails_loudly(monkeypatch):
    """A typo in a glue name is an error, not a blank in the text."""
    monkeypatch.setattr(book, "glue", lambda *a, **k: None)
    with pytest.raises(KeyError, match="unknown glue names"):
        book.glue_numbers(names=["line_2_fastt"])
    assert book.glue_numbers({"a": "1 ms"}) == ["a"]


def test_gluing_imports_neither_myst_nb_nor_nbformat():
    """A chapter's first cell pays for no notebook-format validator (about a second)."""
    code = (
        "import sys\n"
        "from IPython.core.interactiveshell import InteractiveShell\n"
        "InteractiveShell.instance()\n"
        "from lesson_lib.book import glue_numbers\n"
        "glue_numbers()\n"
        "print(sorted(m for m in ('myst_nb.ext.glue', 'nbformat', 'jsonschema') "
        "if m in sys.modules))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip().splitlines()[-1] == "[]"
