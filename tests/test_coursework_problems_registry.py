"""The problem bank's layout: one module per problem, one registry listing them."""

import importlib
import re
from pathlib import Path

import pytest

import lesson_lib.coursework.problems as problems
from lesson_lib.coursework.problems import registry
from lesson_lib.coursework.problems.bank import Problem

FOLDER = Path(problems.__file__).parent


def test_every_problem_module_is_registered_once_in_order():
    """Each qNN_*.py file is in MODULES exactly once, sorted by its number, from q01."""
    files = sorted(p.stem for p in FOLDER.glob("q[0-9][0-9]_*.py"))
    assert sorted(registry.MODULES) == files
    assert len(set(registry.MODULES)) == len(registry.MODULES)
    numbers = [int(name[1:3]) for name in registry.MODULES]
    assert numbers[0] == 1 and numbers == sorted(set(numbers))


@pytest.mark.parametrize("name", registry.MODULES)
def test_module_defines_its_problem(name):
    """The module's PROBLEM is a Problem whose id matches the file (q05_... -> q5)."""
    module = importlib.import_module(f"lesson_lib.coursework.problems.{name}")
    assert isinstance(module.PROBLEM, Problem)
    assert module.PROBLEM.qid == f"q{int(name[1:3])}"
    assert problems.PROBLEMS[module.PROBLEM.qid] is module.PROBLEM


def test_duplicate_ids_are_refused():
    """Registering the same problem twice is an error naming the id."""
    with pytest.raises(ValueError, match="'q1' defined twice"):
        registry.load(["q01_weights", "q01_weights"])


def test_package_exports_the_set_and_its_functions_only():
    """What check.py, grade.py and the book call is exported; no problem's internals are."""
    for name in problems.__all__:
        assert hasattr(problems, name), name
    needed = "PROBLEMS get_problem mistakes params reference statement show solution units_of"
    assert set(needed.split()) <= set(problems.__all__)
    # Besides the registry's PROBLEMS, every export is defined in the package itself.
    foreign = [
        name
        for name in problems.__all__
        if name != "PROBLEMS"
        and getattr(getattr(problems, name), "__module__", None) != problems.__name__
    ]
    assert foreign == []


def test_instructor_page_adds_the_next_problem_as_one_file_and_one_line():
    """The 'Add a problem' section's module is valid Python defining the next id, and
    the registration line names it after the registry's last module."""
    text = (FOLDER.parents[2] / "book" / "instructor.md").read_text()
    section = text[text.index("## 5. Add a problem") :]
    blocks = re.findall(r"```python\n(.*?)```", section, flags=re.S)
    module_code, registration = blocks[0], blocks[1]
    namespace: dict = {}
    following = int(registry.MODULES[-1][1:3]) + 1  # the number after the last one
    next_id = f"q{following}"
    module_name = f"q{following:02d}_stage_handoff"
    assert f"after `{registry.MODULES[-1]}`, that is `{module_name}.py`" in section
    exec(compile(module_code, f"{module_name}.py", "exec"), namespace)
    new = namespace["PROBLEM"]
    assert new.qid == next_id
    lines = registration.splitlines()
    new_line = lines.index(f'    "{module_name}",  # the new line')
    assert lines[new_line - 1] == f'    "{registry.MODULES[-1]}",'
    assert new.reference(new.defaults) == pytest.approx(10.0)  # 5120 x 2 B = 10 KiB, by hand
    assert "{" not in new.template.format(**new.facts(new.defaults))
