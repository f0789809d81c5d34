"""One notebook for the class, and the self-check on one's own variant from salted digests."""

import json
import math
import secrets
from pathlib import Path

import nbformat
import pytest

from lesson_lib.coursework import own_check
from lesson_lib.coursework.check import check
from lesson_lib.coursework.lookups import find_lookups
from lesson_lib.coursework.own_digests import match, student_key, variant_digests
from lesson_lib.coursework.problems import PROBLEMS, get_problem, mistakes, params, reference
from lesson_lib.coursework.student_edition import main, write_edition
from lesson_lib.coursework.variants import salted, set_course_salt

ROOT = Path(__file__).resolve().parents[1]
IDS = [f"kx{i:03d}" for i in range(20)]  # no hex digits: none is found in a digest by chance
NUMERIC = [q for q, p in PROBLEMS.items() if p.kind != "choice"]


def _stated(qid: str, value: float) -> float:
    """``value`` written at the precision problem ``qid`` states: its decimals or significant
    figures; for a percentage, the figures whose half unit is at most half of it (1 %: 3)."""
    problem = get_problem(qid)
    if problem.kind == "count":
        return value
    if problem.decimals is not None:
        return round(value, problem.decimals)
    figures = problem.sig_figs
    if figures is None:  # 0.5 x 10^(1 - k) <= rtol / 2
        figures = next(k for k in range(1, 12) if 0.5 * 10 ** (1 - k) <= problem.rtol / 2)
    return float(f"{value:.{figures}g}")


def _numbers(qid: str, sid: str) -> tuple[tuple[str, object], ...]:
    """The parameters of ``sid``'s variant of ``qid``, as a key (the salt in use)."""
    return tuple(sorted((name, repr(value)) for name, value in params(qid, sid).items()))


def _distinct_variants(ids: list[str]) -> list[tuple[str, str]]:
    """``(sid, qid)`` for the first ID of ``ids`` drawing each distinct variant of each numeric
    problem. A problem's reference, mistakes and grading rules are functions of its parameters
    alone (``problems.params``; ``check_rules._problem_contract``), so a second ID drawing the same
    numbers repeats the same check: of 500 IDs' 9,500 variants about 1,000 differ."""
    first: dict[tuple[str, tuple], str] = {}
    for sid in ids:
        for qid in NUMERIC:
            first.setdefault((qid, _numbers(qid, sid)), sid)
    return [(sid, qid) for (qid, _), sid in first.items()]


def _branches(qid: str, sid: str) -> set[tuple[str, object]]:
    """What decides how ``sid``'s variant of ``qid`` is digested and graded: each parameter's
    value, the decade of the reference (the grid's decimal places follow it) and how many of the
    problem's mistakes lie outside its right band (each one is a rule of its own)."""
    ref = float(reference(qid, sid))
    decade = math.floor(math.log10(abs(ref))) if ref else None
    return {*_numbers(qid, sid), ("decade", decade), ("mistakes", len(mistakes(qid, sid)))}


def _covering_variants(ids: list[str]) -> list[tuple[str, str]]:
    """``(sid, qid)``: for each numeric problem, the fewest of ``ids`` (chosen greedily) whose
    variants together take every branch (:func:`_branches`) seen among all of ``ids``.

    Every card, fabric, model shape, GPU count, decade of the answer and number of mistakes a
    problem draws is then checked at least once, three to ten IDs a problem, where the same 40
    IDs for every problem checked each one 40 times and could still miss a value drawn 1 time in
    9. A parameter drawn from more than :data:`CHOICES` values is a range, not a branch (the
    weights problem's 70 to 800 billion parameters): the decade of its answer stands for it.
    120 IDs draw every value of a parameter of up to 9 choices but with odds below 1e-4.
    """
    drawn = {qid: {sid: _branches(qid, sid) for sid in ids} for qid in NUMERIC}
    pairs = []
    for qid, by_id in drawn.items():
        values: dict[str, set] = {}
        for name, value in set().union(*by_id.values()):
            values.setdefault(name, set()).add(value)
        ranges = {name for name, seen in values.items() if len(seen) > CHOICES}
        kept = {sid: {b for b in found if b[0] not in ranges} for sid, found in by_id.items()}
        missing = set().union(*kept.values())
        while missing:
            sid = max(ids, key=lambda s: len(kept[s] & missing))  # the first of the best
            missing -= kept[sid]
            pairs.append((sid, qid))
    return pairs


#: Most values a parameter is drawn from and still counted as branches (see _covering_variants).
CHOICES = 12

#: Answers near a right answer or a mistake the digests must match, at least: the covering
#: variants (about 100) times about four centres give well over this many of each.
COUNTED_FLOOR = 200


@pytest.fixture(scope="module")
def edition(tmp_path_factory):
    """A class notebook for 20 IDs with a fresh salt: (notebook path, salt)."""
    out = tmp_path_factory.mktemp("class")
    salt = secrets.token_hex(32)
    (path,) = write_edition(out, ROOT, IDS, ["problems"], salt=salt, class_notebook=True)
    return path, salt


@pytest.fixture
def loaded(edition):
    """The edition's data cells run in this process, as the kernel runs them; cleared after."""
    nb = nbformat.read(edition[0], as_version=4)
    for cell in nb.cells:
        if cell.metadata.get("coursework") == "edition-data":
            exec(cell.source, {})
    yield nb
    own_check._EDITION.update(pepper="", students={})


def _answers(sid: str, salt: str) -> dict[str, object]:
    """Every answer right at the stated precision for ``sid``."""
    with salted(salt):
        return {
            q: _stated(q, reference(q, sid)) if q in NUMERIC else reference(q, sid)
            for q in PROBLEMS
        }


def test_the_notebook_holds_no_salt_no_answer_and_no_lookup(edition, loaded):
    path, salt = edition
    text = path.read_text()
    assert salt not in text
    assert not find_lookups(loaded)  # the data cells are not taken for answer lookups
    setup = next(c for c in loaded.cells if c.metadata.get("coursework") == "student-id")
    assert 'STUDENT = ""' in setup.source
    assert loaded.metadata["lesson"] == {"class_edition": True}
    data = json.dumps(own_check._EDITION)  # what the cells hold, decompressed
    assert not any(sid in data for sid in IDS)  # keyed by a salted hash of the ID
    with salted(salt):
        for sid in IDS[:5]:
            for qid in NUMERIC:
                ref = float(reference(qid, sid))
                # a short or whole number (20 GiB) is in any text: only those that say much
                shown = {repr(ref), *(f"{ref:.{k}g}" for k in (4, 5, 6))}
                for written in (w for w in shown if "." in w and len(w) >= 5):
                    assert written not in data and written not in text, (sid, qid, written)


def test_statements_show_the_typed_ids_numbers_and_an_unknown_id_says_what_to_type(edition, loaded):
    _, salt = edition
    with salted(salt):
        from lesson_lib.coursework.problems import show

        expected = str(show("q3", IDS[4]))
    assert str(own_check.show("q3", IDS[4])) == expected
    assert str(own_check.show("q3", IDS[4].upper())) == expected  # IDs ignore case
    unknown = str(own_check.show("q3", "kx999"))
    assert "STUDENT = 'kx999' is not an ID this notebook was made for" in unknown
    assert "STUDENT is empty" in str(own_check.show("q3", ""))
    assert "STUDENT:" in str(own_check.show("q3", "no spaces allowed"))
    result = own_check.check("q3", 1.5, "kx999")
    assert result.status == "unreadable" and "STUDENT = 'kx999'" in result.message


def test_the_self_check_agrees_with_the_grader(edition, loaded):
    """Right at the stated precision, a named mistake and a wrong number, for two students."""
    _, salt = edition
    for sid in IDS[:2]:
        answers = _answers(sid, salt)
        for qid in NUMERIC:
            assert own_check.check(qid, answers[qid], sid).status == "right", (sid, qid)
        with salted(salt):
            named = [(q, m) for q in NUMERIC for m in mistakes(q, sid)]
            graded = {(q, m.slug): check(q, m.value, sid) for q, m in named}
        for qid, slip in named:  # a mistake the self-check names, the grader names too
            own = own_check.check(qid, slip.value, sid)
            if own.status == "wrong":
                assert own.mistake == graded[(qid, slip.slug)].mistake, (sid, qid)
        qid, slip = next((q, m) for q, m in named if graded[(q, m.slug)].mistake)
        own = own_check.check(qid, slip.value, sid)
        assert own.status == "wrong" and slip.slug in own.mistake and own.message == slip.hint
        with salted(salt):
            off = reference("q5", sid) * 1.37
            assert check("q5", off, sid).status == "wrong"
        assert own_check.check("q5", off, sid).status == own_check.NOT_MATCHED
    assert own_check.check("q4", "b", IDS[0]).status == own_check.READABLE  # letters: no digests


def test_for_500_ids_every_answer_at_the_stated_precision_is_right_by_its_digests():
    """No kernel: the digests of 500 students' variants, and each right answer rounded at the
    precision its statement asks (also written in another unit) finds "right"."""
    salt, pepper = secrets.token_hex(32), secrets.token_hex(16)
    missed = []
    with salted(salt):
        for sid, qid in _distinct_variants([f"t{number:04d}" for number in range(500)]):
            key = student_key(pepper, sid)
            stored = variant_digests(qid, sid, pepper)
            value = _stated(qid, reference(qid, sid))
            if match(stored, qid, value, pepper, key) != "right":
                missed.append((sid, qid, value))
    assert not missed


def test_a_digest_match_is_always_the_graders_verdict():
    """Answers spread around each right answer and mistake: "right" only where the grader says
    right, a mistake only where it names that mistake; near-misses say not matched."""
    salt, pepper = secrets.token_hex(32), secrets.token_hex(16)
    spread = [0.9, 0.97, 0.99, 0.995, 0.999, 1.0, 1.001, 1.005, 1.01, 1.02, 1.1]
    counted = {"right": 0, "mistake": 0}
    with salted(salt):
        for sid, qid in _covering_variants([f"u{number:03d}" for number in range(120)]):
            key = student_key(pepper, sid)
            stored = variant_digests(qid, sid, pepper)
            centres = [reference(qid, sid)] + [m.value for m in mistakes(qid, sid)]
            for centre in centres:
                for factor in spread:
                    value = centre * factor
                    if get_problem(qid).kind == "count":
                        value = float(round(value))
                    found = match(stored, qid, value, pepper, key)
                    verdict = check(qid, value, sid)
                    if found == "right":
                        counted["right"] += 1
                        assert verdict.status == "right", (sid, qid, value)
                    elif found is not None:
                        counted["mistake"] += 1
                        assert verdict.mistake == stored["mistakes"][int(found)][0]
    assert counted["right"] > COUNTED_FLOOR and counted["mistake"] > COUNTED_FLOOR


def test_the_command_writes_one_notebook_and_can_turn_the_self_check_off(tmp_path, capsys):
    salt_file = tmp_path / "instructor" / "salt"
    args = ["--root", str(ROOT), "--pages", "problems", "--salt-file", str(salt_file)]
    out = tmp_path / "class"
    assert main([*args, "--out", str(out), "--ids", "a1", "a2", "--class-notebook"]) == 0
    assert sorted(p.name for p in out.glob("*.ipynb")) == ["problems.ipynb"]
    off = tmp_path / "off"
    flags = ["--ids", "a1", "--class-notebook", "--no-self-check"]
    assert main([*args, "--out", str(off), *flags]) == 0
    nb = nbformat.read(off / "problems.ipynb", as_version=4)
    for cell in nb.cells:
        if cell.metadata.get("coursework") == "edition-data":
            exec(cell.source, {})
    try:
        assert own_check.check("q5", 7.0, "a1").status == own_check.READABLE
        assert "Problem set for the class" in nb.cells[0].source
    finally:
        own_check._EDITION.update(pepper="", students={})
    nosalt = ["--no-salt", "--out", str(tmp_path / "x"), "--ids", "a1", "--class-notebook"]
    assert main(["--root", str(ROOT), "--pages", "problems", *nosalt]) == 2
    assert "class_notebook needs student IDs and a course salt" in capsys.readouterr().err


def _fill(nb: nbformat.NotebookNode, sid: str, answers: dict[str, object]) -> None:
    """Type the ID and the answers into the class notebook, as a student would."""
    for cell in nb.cells:
        if cell.metadata.get("coursework") == "student-id":
            cell.source = cell.source.replace('STUDENT = ""', f"STUDENT = {sid!r}")
        if cell.metadata.get("coursework") == "answer":
            qid = cell.source.split("=")[0].strip()[len("answer_") :]
            if qid in answers:
                cell.source = f"answer_{qid} = {answers[qid]!r}"


@pytest.mark.slow
def test_in_a_kernel_the_class_notebook_checks_and_the_grader_agrees(edition, tmp_path):
    """Two students type their IDs: right answers at the stated precision say right, q5 holds a
    named mistake, q11 a wrong number; the grader, given the salt, grades alike."""
    from nbclient import NotebookClient

    from lesson_lib.coursework.grading import grade_folder

    path, salt = edition
    subs = {}
    for sid in IDS[:2]:
        answers = _answers(sid, salt)
        with salted(salt):
            slip = next(m for m in mistakes("q5", sid) if check("q5", m.value, sid).mistake)
            answers["q5"] = slip.value
            answers["q11"] = _stated("q11", reference("q11", sid) * 1.6)
        nb = nbformat.read(path, as_version=4)
        _fill(nb, sid, answers)
        folder = tmp_path / sid
        folder.mkdir()
        nbformat.write(nb, folder / "Problems FINAL.ipynb")  # renamed: the typed ID counts
        NotebookClient(
            nb,
            timeout=300,
            kernel_name="python3",
            resources={"metadata": {"path": str(tmp_path)}},
            shutdown_kernel="immediate",
        ).execute()
        said = {}
        for cell in nb.cells:
            if cell.cell_type == "code" and cell.source.startswith("check("):
                said[cell.source.split('"')[1]] = cell.outputs[0]["data"]["text/plain"]
        for qid in NUMERIC:
            if qid not in ("q5", "q11"):
                assert said[qid].startswith(f"{qid}: right"), said[qid]
        assert said["q5"].startswith("q5: wrong") and slip.hint[:40] in said["q5"]
        assert said["q11"].startswith("q11: not matched")
        set_course_salt(salt)
        try:
            (sub,) = grade_folder(folder, timeout=600)
        finally:
            set_course_salt(None)
        subs[sid] = sub
        assert sub.student == sid, sub.notes
        for qid in PROBLEMS:
            if qid not in ("q5", "q11") and get_problem(qid).kind != "choice":
                assert sub.results[qid].status == "right", (qid, sub.results[qid])
        assert sub.results["q5"].mistake.endswith(slip.slug)
        assert sub.results["q11"].status == "wrong" and not sub.results["q11"].mistake
    assert not math.isclose(subs[IDS[0]].total, 0.0)
