# The commands a new machine needs (see README): `make book`, `make test` and `make lab`.
# Both create .venv from the pinned requirements.txt the first time.
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: setup assets browser sandbox book test test-fast lint format lock clean lab mutation

# uv (from PyPI, into the venv) installs the pinned requirements in seconds where
# pip takes most of a minute: the same packages and versions (requirements.txt pins all).
# Bytecode is compiled now, as pip does: the grader's sandbox mounts .venv read-only,
# so a kernel there cannot cache what it compiles and would compile on every start.
# uv does not read pip's configuration (index mirrors, certificates): if it fails, pip does it.
UV_VERSION := 0.13.9

$(STAMP): requirements.txt pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check uv==$(UV_VERSION)
	$(BIN)/python -m uv pip install --quiet --compile-bytecode --python $(BIN)/python -r requirements.txt \
	  || $(BIN)/python -m pip install --quiet --disable-pip-version-check -r requirements.txt
	touch $(STAMP)

setup: $(STAMP)

assets: setup  ## fetch the site's pinned MathJax/widget scripts and axe-core from npm into _vendor/
	$(BIN)/python tools/fetch_assets.py

book: setup assets  ## build the site into _build/html (execution cached in _build/.jupyter_cache)
	$(BIN)/python tools/build_site.py  # jupyter-book build . -W -n --keep-going, stale cache cleared first

# pytest-xdist workers: one per CPU plus one, at most 4 (the suite spends much of
# its time waiting on kernels, servers and time limits); see tests/README.md.
TEST_WORKERS ?= $(shell $(PYTHON) -c "import os; n = len(os.sched_getaffinity(0)) if hasattr(os, 'sched_getaffinity') else os.cpu_count() or 1; print(min(n + 1, 4))")
test: setup lint assets browser sandbox  ## everything CI checks: ruff, unit, property, sandbox and browser tests, the book build
	$(BIN)/python -m pytest -n $(TEST_WORKERS) --dist loadfile --no-loadscope-reorder

lab: setup  ## JupyterLab on the lesson, chapters open as notebooks; settings in _build/jupyter, not ~
	$(BIN)/python tools/lab.py $(LAB_ARGS)

mutation: setup  ## mutmut over the model modules (minutes; not part of make test), see tests/MUTATION.md
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -r requirements-mutation.txt
	mkdir -p _build
	bash tools/mutation.sh

test-fast: setup  ## unit tests only, for quick iteration
	$(BIN)/python -m pytest -m "not slow"

browser:  ## Debian's chromium for the browser tests (apt-get, only when missing and allowed)
	@$(PYTHON) tools/ensure_browser.py

sandbox:  ## Debian's bubblewrap for the grader's sandbox (apt-get, only when missing and allowed)
	@$(PYTHON) tools/ensure_sandbox.py

lint: setup
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

format: setup
	$(BIN)/ruff format .
	$(BIN)/ruff check --fix .

lock:  ## recompile requirements.txt from requirements.in in a scratch venv
	rm -rf .lock-venv
	$(PYTHON) -m venv .lock-venv
	.lock-venv/bin/python -m pip install --quiet -r requirements.in
	{ echo "# Fully pinned; regenerate with 'make lock' from requirements.in."; \
	  echo "-e ."; \
	  .lock-venv/bin/python -m pip freeze --exclude-editable | sort -f; } > requirements.txt
	rm -rf .lock-venv

# Coursework (see the "For instructors" page). IDS="s001 s002" makes one folder per student;
# EDITION_FLAGS=--force writes over a folder or notebooks the edition did not make.
.PHONY: student book-nosolutions grade gradescope try-gradescope report

student: setup  ## notebooks without solutions into _build/student (IDS="..." for per-student copies)
	$(BIN)/python -m lesson_lib.coursework.student_edition --out _build/student $(if $(IDS),--ids $(IDS)) $(EDITION_FLAGS)

book-nosolutions: setup assets  ## the site with every solution removed, into _build/nosolutions/_build/html
	$(BIN)/python -m lesson_lib.coursework.student_edition --site _build/nosolutions-src $(EDITION_FLAGS)
	$(BIN)/python tools/build_site.py _build/nosolutions-src --path-output _build/nosolutions

# Where make grade writes and make report reads: GRADES=course/ps1.csv keeps a second assignment apart.
GRADES ?= _build/grades.csv
DETAILS ?= $(basename $(GRADES))-details.csv
REPORT ?= $(dir $(GRADES))report

grade: setup sandbox  ## score submitted notebooks, each in a sandbox: make grade SUBMISSIONS=folder [STUDENTS="s001 s002"] [GRADES=_build/grades.csv]
	$(BIN)/python -m lesson_lib.coursework.grade $(SUBMISSIONS) --out $(GRADES) --details $(DETAILS) $(foreach s,$(STUDENTS),--student $(s)) $(GRADE_FLAGS)

gradescope: setup  ## Gradescope autograder zip (setup.sh, run_autograder, pinned lesson_lib) -> _build/gradescope/autograder.zip
	$(BIN)/python -m lesson_lib.coursework.gradescope build --out _build/gradescope/autograder.zip $(GRADESCOPE_FLAGS)

# Not part of make test: it needs root, the network and several minutes.
try-gradescope: setup  ## run the Gradescope zip's setup.sh and run_autograder in a clean Debian root (TRY_FLAGS="--keep")
	$(BIN)/python tools/try_gradescope_zip.py $(TRY_FLAGS)

report: setup  ## per-problem means, verdicts and common mistakes of make grade's counted rows -> _build/report (REPORT_FLAGS="--close-credit 0.25")
	$(BIN)/python -m lesson_lib.coursework.class_report $(DETAILS) --grades $(GRADES) --out $(REPORT) $(REPORT_FLAGS)

clean:
	rm -rf _build .pytest_cache .hypothesis mutants
