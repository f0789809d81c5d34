"""What a public lesson repository carries: licences, a citation, the same lint everywhere."""

from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]


def test_code_is_mit_and_content_cc_by():
    """LICENSE is MIT for the code; LICENSE-CONTENT is CC BY 4.0 for text and figures."""
    assert (ROOT / "LICENSE").read_text().startswith("MIT License")
    content = (ROOT / "LICENSE-CONTENT").read_text()
    assert "Attribution 4.0 International" in content and "CC BY 4.0" in content
    readme = (ROOT / "README.md").read_text()
    assert "MIT" in readme and "CC BY 4.0" in readme


def test_site_footer_states_both_licences():
    """Every page's footer names the two licences."""
    footer = yaml.safe_load((ROOT / "_config.yml").read_text())["html"]["extra_footer"]
    assert "CC BY 4.0" in footer and "MIT" in footer


def test_citation_file_is_valid_cff():
    """CITATION.cff has the fields GitHub's "Cite this repository" needs."""
    cff = yaml.safe_load((ROOT / "CITATION.cff").read_text())
    assert cff["cff-version"] == "1.2.0"
    assert cff["title"] and cff["authors"] and cff["message"]
    assert set(cff["license"]) == {"MIT", "CC-BY-4.0"}


def test_pre_commit_runs_the_pinned_ruff_as_make_lint_does():
    """The hook's ruff version is the pinned one, with lint and the format check."""
    config = yaml.safe_load((ROOT / ".pre-commit-config.yaml").read_text())
    (repo,) = config["repos"]
    pinned = next(
        line.split("==")[1].strip()
        for line in (ROOT / "requirements.txt").read_text().splitlines()
        if line.startswith("ruff==")
    )
    assert repo["repo"].endswith("ruff-pre-commit") and repo["rev"] == f"v{pinned}"
    hooks = {h["id"]: h for h in repo["hooks"]}
    assert set(hooks) == {"ruff-check", "ruff-format"}
    assert hooks["ruff-format"]["args"] == ["--check"]
    makefile = (ROOT / "Makefile").read_text()
    assert "ruff check ." in makefile and "ruff format --check ." in makefile
