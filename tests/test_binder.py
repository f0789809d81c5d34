"""Binder, launch buttons and the offline-asset pins agree with the build environment.

Binder (repo2docker) reads the root-level ``runtime.txt``, ``requirements.txt``
and ``postBuild``; the book is built from the same ``requirements.txt``. These
tests check that nothing there can drift from what the build uses.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

import pytest
import yaml
from build_site import ROOT
from ci import cannot_run

#: What JupyterLab must open .md chapters with.
JUPYTEXT_VIEWER = "Jupytext Notebook"


def pins() -> dict[str, str]:
    """``name -> version`` of every ``name==version`` line of requirements.txt."""
    out = {}
    for line in (ROOT / "requirements.txt").read_text().splitlines():
        line = line.split("#")[0].strip()
        if "==" in line:
            name, ver = line.split("==", 1)
            out[name.strip().lower().replace("_", "-")] = ver.strip()
    return out


def test_runtime_matches_the_build_python():
    """runtime.txt names the Python minor version the build and CI run on."""
    runtime = (ROOT / "runtime.txt").read_text().strip()
    assert re.fullmatch(r"python-3\.\d+", runtime)
    assert runtime == f"python-{sys.version_info.major}.{sys.version_info.minor}"
    requires = re.search(
        r'requires-python\s*=\s*">=\s*([\d.]+)"', (ROOT / "pyproject.toml").read_text()
    )
    # runtime.txt names a minor version (Binder takes its newest patch release)
    assert requires and tuple(map(int, runtime[7:].split("."))) >= tuple(
        map(int, requires.group(1).split(".")[:2])
    )


def test_binder_uses_the_build_requirements():
    """Binder reads the root requirements.txt: fully pinned, with lesson_lib and JupyterLab."""
    for shadow in ("binder", ".binder"):
        # a binder/ folder would make repo2docker ignore the root-level files
        assert not (ROOT / shadow).exists(), f"{shadow}/ would hide the root Binder files"
    for other in ("environment.yml", "Pipfile", "Pipfile.lock"):
        # repo2docker prefers these over requirements.txt
        assert not (ROOT / other).exists(), f"{other} would replace requirements.txt on Binder"
    lines = [
        line.strip()
        for line in (ROOT / "requirements.txt").read_text().splitlines()
        if line.strip() and not line.startswith("#")
    ]
    assert "-e ." in lines
    unpinned = [line for line in lines if line != "-e ." and "==" not in line]
    assert unpinned == []
    for needed in ("jupyter-book", "jupyterlab", "jupytext"):
        assert needed in pins(), f"{needed} is not pinned in requirements.txt"


def test_build_environment_has_the_pinned_versions():
    """The environment that builds and tests is exactly requirements.txt (same pins as Binder)."""
    wrong = []
    for name, pinned in pins().items():
        try:
            installed = version(name)
        except PackageNotFoundError:
            wrong.append(f"{name}: not installed")
            continue
        if installed != pinned:
            wrong.append(f"{name}: {installed} installed, {pinned} pinned")
    assert wrong == []


def test_post_build_sets_the_jupytext_viewer(tmp_path):
    """Running postBuild makes JupyterLab open MyST .md files as notebooks, and writes the
    chapters with their numbers filled in (here into a scratch folder, not over book/)."""
    script = ROOT / "postBuild"
    assert os.access(script, os.X_OK), "postBuild must be executable"
    env = {
        **os.environ,
        "HOME": str(tmp_path),
        "JUPYTER_CONFIG_DIR": str(tmp_path / "jupyter"),
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
        "LESSON_NOTEBOOKS_OUT": str(tmp_path / "notebooks"),
    }
    subprocess.run(["bash", str(script)], check=True, cwd=ROOT, env=env, capture_output=True)
    latency = (tmp_path / "notebooks" / "book" / "latency.md").read_text()
    assert "{glue" not in latency and "{ref}" not in latency and "{term}" not in latency
    assert "\n128 [all-reduces](glossary.md#term-all-reduce) in a row" in latency
    overrides = json.loads(
        (tmp_path / "jupyter" / "labconfig" / "default_setting_overrides.json").read_text()
    )
    viewers = overrides["@jupyterlab/docmanager-extension:plugin"]["defaultViewers"]
    assert viewers["markdown"] == JUPYTEXT_VIEWER
    assert viewers["myst"] == JUPYTEXT_VIEWER


def test_launch_buttons_configured_from_one_place():
    """_config.yml sets the repository (the one setting a fork changes) and Binder."""
    config = yaml.safe_load((ROOT / "_config.yml").read_text())
    url = config["repository"]["url"]
    assert re.fullmatch(r"https://github\.com/[\w.-]+/[\w.-]+", url)
    assert config["repository"]["branch"] == "main"
    launch = config["launch_buttons"]
    assert launch["binderhub_url"] == "https://mybinder.org"
    assert launch["notebook_interface"] == "jupyterlab"
    assert "jupyterhub_url" in launch
    readme = (ROOT / "README.md").read_text()
    assert "repository" in readme and "_config.yml" in readme


def test_offline_assets_are_pinned_and_served_locally():
    """npm pins are exact and the site loads MathJax and the Vega scripts from _static."""
    package = json.loads((ROOT / "package.json").read_text())
    lock = json.loads((ROOT / "package-lock.json").read_text())
    for name, ver in package["dependencies"].items():
        assert re.fullmatch(r"\d+\.\d+\.\d+", ver), f"{name} must be pinned exactly"
        assert lock["packages"][f"node_modules/{name}"]["version"] == ver
        assert lock["packages"][f"node_modules/{name}"]["integrity"].startswith("sha512-")
    for spec, integrity in package["vendorTarballs"].items():
        assert re.fullmatch(r"@?[\w/.-]+@\d+\.\d+\.\d+", spec)
        assert integrity.startswith("sha512-")
    sphinx = yaml.safe_load((ROOT / "_config.yml").read_text())["sphinx"]["config"]
    assert sphinx["html_static_path"] == ["_vendor"]
    assert "://" not in sphinx["mathjax_path"]
    assert sphinx["nb_ipywidgets_js"] == {}, "no widget renderer (it would come from a CDN)"
    assert "_vendor/" in (ROOT / ".gitignore").read_text().split()
    assert not (ROOT / "_static").exists(), "a root _static is injected into every page"


def test_fetched_assets_have_files_and_licences():
    """_vendor holds every file the config points at, and a licence per package.

    Without fetched assets this skips on a reader's machine and fails under CI.
    """
    if not (ROOT / "_vendor" / "PINS.json").is_file():
        cannot_run("assets not fetched (make assets)")
    sphinx = yaml.safe_load((ROOT / "_config.yml").read_text())["sphinx"]["config"]
    vendor = ROOT / "_vendor"
    assert (vendor / sphinx["mathjax_path"]).is_file()
    for script in ("vega/vega.min.js", "vega/vega-lite.min.js", "vega/vega-embed.min.js"):
        assert (vendor / script).is_file(), script
    assert (vendor / "lesson" / "explorers.js").is_file()
    licences = sorted(p.name for p in (vendor / "LICENSES").iterdir())
    for package in ("mathjax", "vega-5", "vega-lite", "vega-embed"):
        assert any(package in name for name in licences), f"no licence for {package}"


def _lab_tool():
    import importlib.util

    spec = importlib.util.spec_from_file_location("lesson_lab_tool", ROOT / "tools" / "lab.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_make_lab_keeps_its_settings_in_the_project(tmp_path):
    """`make lab` opens .md as notebooks with the setting Binder's postBuild writes, and
    points every folder JupyterLab writes to inside its state folder, not the home."""
    tool = _lab_tool()
    home = tmp_path / "home"
    env = tool.lab_env(tmp_path / "state", {"PATH": "/usr/bin", "HOME": str(home)})
    for key in (
        "JUPYTER_CONFIG_DIR",
        "JUPYTER_DATA_DIR",
        "JUPYTER_RUNTIME_DIR",
        "JUPYTERLAB_SETTINGS_DIR",
        "JUPYTERLAB_WORKSPACES_DIR",
        "IPYTHONDIR",
        "MPLCONFIGDIR",
    ):
        assert Path(env[key]).is_relative_to(tmp_path / "state"), key
    overrides = json.loads(
        (tmp_path / "state" / "config" / "labconfig" / "default_setting_overrides.json").read_text()
    )
    viewers = overrides["@jupyterlab/docmanager-extension:plugin"]["defaultViewers"]
    assert viewers == {"markdown": "Jupytext Notebook", "myst": "Jupytext Notebook"}
    assert not home.exists()
    cmd = tool.command(["--no-browser"])
    assert cmd[1] == "lab" and f"--ServerApp.root_dir={tool.LAB_ROOT}" in cmd
    assert cmd[-1] == "--no-browser" and tool.LAB_ROOT == ROOT / "_build" / "lab"
    assert (
        "lab:" in (ROOT / "Makefile").read_text()
        and "tools/lab.py" in (ROOT / "Makefile").read_text()
    )


@pytest.mark.parametrize("argv", [["--state"], ["--state", "--no-browser"], ["--state="]])
def test_make_lab_turns_a_bad_state_option_into_a_usage_message(argv, capsys):
    """`make lab LAB_ARGS=--state` (no folder): a usage line and exit 2, not a traceback."""
    tool = _lab_tool()
    assert tool.main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("usage: python tools/lab.py") and "--state" in err
    assert tool.split_state(["--state=x", "--port=1"]) == (Path("x"), ["--port=1"])
    assert tool.split_state(["--port=1"]) == (tool.DEFAULT_STATE, ["--port=1"])


@pytest.mark.slow
def test_make_lab_writes_nothing_into_the_home_folder(tmp_path):
    """JupyterLab started by tools/lab.py as `make lab` does, with an empty HOME, until its
    language-server probe has run (jupyter-lsp calls `npm prefix`, which writes a debug log):
    HOME is still empty afterwards, npm's log is in the state folder, and the state folder, its
    runtime and data folders and the runtime's jpserver-*-open.html (it holds the login token)
    are readable by the user alone."""
    import signal
    import socket
    import stat
    import time
    import urllib.request

    home = tmp_path / "home"
    home.mkdir()
    state = tmp_path / "state"
    (state / "runtime").mkdir(parents=True, mode=0o755)  # as an older start may have left it
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    log_path = tmp_path / "lab.log"
    (tmp_path / "root").mkdir()
    options = ["--no-browser", "--ip=127.0.0.1", f"--port={port}", "--ServerApp.token=t"]
    cmd = [sys.executable, str(ROOT / "tools" / "lab.py"), "--state", str(state), *options]
    cmd.append(f"--ServerApp.root_dir={tmp_path / 'root'}")  # so no chapters are written
    with log_path.open("w") as log:
        proc = subprocess.Popen(
            cmd,
            env={**os.environ, "HOME": str(home)},
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    try:
        deadline = time.monotonic() + 180
        while "non-installed server" not in log_path.read_text():
            assert proc.poll() is None and time.monotonic() < deadline, log_path.read_text()
            time.sleep(0.3)
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/status?token=t", timeout=30):
            pass
        opened = list((state / "runtime").glob("jpserver-*-open.html"))
        private = [state, state / "runtime", state / "data", *opened]
        modes = {p.name: oct(stat.S_IMODE(p.stat().st_mode)) for p in private}
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=60)
    assert sorted(p.relative_to(home) for p in home.rglob("*")) == []
    assert list((state / "npm").rglob("*debug*.log"))
    assert len(opened) == 1
    folders = dict.fromkeys(["state", "runtime", "data"], "0o700")
    assert modes == {**folders, opened[0].name: "0o600"}
