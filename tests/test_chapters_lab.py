"""The lab page's glued numbers before its run: exactly the worked example's."""

from lesson_lib.chapters.glue import chapter_numbers
from lesson_lib.chapters.overview import worked_example_numbers


def test_the_lab_page_glues_the_worked_example_before_its_own_run():
    """The measured values come from the page's run (lab.report), not from here."""
    assert chapter_numbers("lab") == worked_example_numbers()
    assert chapter_numbers("lab")["weights_gb"] == "54 GB"  # 27e9 bf16 parameters x 2 bytes
