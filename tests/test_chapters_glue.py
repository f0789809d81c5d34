"""The chapter glue helper: every value glued with MyST-NB's glue, hidden, under its name."""

import re
from pathlib import Path

import pytest
from IPython.core.interactiveshell import InteractiveShell
from IPython.utils.capture import capture_output

from lesson_lib.chapters import glue as book
from lesson_lib.chapters.glue import chapter_numbers

BOOK = Path(__file__).resolve().parents[1] / "book"

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
    names, values = _glued(chapter_numbers("overview"))
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
        book.glue_numbers(chapter_numbers("overview"), names=["line_2_fastt"])
    assert _glued({"a": "1 ms", "b": "2 ms"}, names=["b"]) == (["b"], {"b": "'2 ms'"})


def test_an_unknown_chapter_fails_naming_the_known_ones():
    """A typo in a page's first cell fails the build with the list of pages."""
    with pytest.raises(KeyError, match=r"unknown chapter 'payload'.*'payloads'"):
        book.chapter_numbers("payload")


def test_a_page_reads_its_table_once_and_gets_its_own_copy():
    """The reading is cached (the formatter runs once) and a caller cannot edit the cache."""
    calls = []

    def own() -> dict[str, str]:
        calls.append(1)
        return {"x": "1 ms"}

    table = book.GlueTable(own, book.Quote(own, ("x",)))
    assert book._read(table) == {"x": "1 ms"} and book._read(table) == {"x": "1 ms"}
    assert calls == [1]
    first = book.chapter_numbers("lab")
    first["weights_gb"] = "edited"
    assert book.chapter_numbers("lab")["weights_gb"] == "54 GB"


def test_a_table_takes_whole_tables_and_quotes_in_order():
    """Parts merge in order; a quote takes only its names; one name with two texts is refused."""
    table = book.GlueTable(
        book.GlueTable(lambda: {"a": "1", "b": "2"}),
        book.Quote(lambda: {"c": "3", "d": "4"}, ("c",)),
        lambda: {"a": "1"},
    )
    assert book._read(table) == {"a": "1", "b": "2", "c": "3"}
    clash = book.GlueTable(lambda: {"a": "1"}, lambda: {"a": "2"})
    with pytest.raises(ValueError, match="glue name 'a' is '1' and '2'"):
        book._read(clash)


def test_every_chapter_reads_and_glues(monkeypatch):
    """``glue_chapter`` glues exactly ``chapter_numbers``; the index quotes the latency chapter."""
    for name in book.CHAPTERS:
        assert book.chapter_numbers(name)
    glued = []
    monkeypatch.setattr(book, "glue_numbers", lambda values: glued.append(values) or list(values))
    assert book.glue_chapter("index") == list(book.chapter_numbers("index"))
    assert glued == [book.chapter_numbers("index")]
    assert book.chapter_numbers("index")["slow_4_vs_fast_2"] == "1.12x"


def test_a_cell_ending_in_glue_numbers_shows_no_list_of_names():
    """``glue_numbers`` returns the names it glued; a cell ending in it ends with ``;``.

    Otherwise the list is the cell's output: on the site under a shown cell (the
    lab's sweep), and in the notebook edition, which keeps the cell, on every route.
    """
    cells = re.findall(r"^```\{code-cell\}[^\n]*\n(.*?)^```", "\n".join(
        p.read_text(encoding="utf-8") for p in sorted(BOOK.glob("*.md"))
    ), flags=re.S | re.M)  # fmt: skip
    last_lines = [cell.strip().splitlines()[-1] for cell in cells if cell.strip()]
    ending = [line for line in last_lines if line.startswith("glue_numbers(")]
    assert ending, "no cell ends by gluing measured numbers"
    assert all(line.endswith(";") for line in ending), ending
