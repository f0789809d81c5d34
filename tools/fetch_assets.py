"""Fetch the site's browser assets from npm into ``_vendor/`` (git-ignored).

The built site must work with no internet, so the scripts a page needs are
served from the site itself instead of a CDN:

* MathJax 3 (``mathjax_path`` in ``_config.yml``),
* Vega, Vega-Lite and vega-embed, which draw the live explorers, and the
  lesson's own page scripts (``tools/site/*.js``, into ``_vendor/lesson/``);
  ``tools/lesson_site.py`` adds them only to the pages that need them.

Versions are pinned in ``package.json`` / ``package-lock.json`` (``npm ci``).
``vega``, ``vega-lite`` and ``vega-embed`` each ship a prebuilt bundle whose npm dependency tree the site
does not need, so their tarballs alone are fetched with ``npm pack`` and
checked against the sha512 pinned under ``vendorTarballs`` in
``package.json``. axe-core, used only by
the browser tests, stays in ``node_modules/``. Each package's licence is
copied to ``_vendor/LICENSES/``.

The folder is deliberately not called ``_static``: Jupyter Book 1 injects
every script under a root ``_static`` into every page. ``_vendor`` is listed
in ``html_static_path`` instead, so its content lands in ``_build/html/_static``.

Run ``python tools/fetch_assets.py`` (``make book`` does). It does nothing
when ``_vendor/`` already matches the pins. If ``npm`` is missing it is
installed with apt-get when running as root on a Debian-like machine;
otherwise the script stops with a message saying what to install.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
VENDOR = ROOT / "_vendor"
NODE_MODULES = ROOT / "node_modules"
STAMP_NAME = "PINS.json"

#: What of MathJax's es5 folder the site serves: the component Sphinx loads
#: (tex-mml-chtml.js) and what it loads on demand (extensions, CHTML fonts,
#: the accessibility menu and speech rules). The SVG output is left out.
MATHJAX_PARTS = (
    "tex-mml-chtml.js",
    "tex-chtml.js",
    "input",
    "output/chtml",
    "output/chtml.js",
    "a11y",
    "ui",
    "adaptors",
    "sre",
)

#: Committed files the site serves next to the fetched ones.
SITE_FILES = ROOT / "tools" / "site"


def _say(msg: str) -> None:
    print(f"fetch_assets: {msg}", flush=True)


def pins_digest() -> str:
    """Return a digest of everything that decides ``_vendor/``'s content.

    Returns
    -------
    str
        Hex sha256 over package.json, package-lock.json, this script and
        the committed files of ``tools/site/``.
    """
    h = hashlib.sha256()
    paths = [ROOT / "package.json", ROOT / "package-lock.json", Path(__file__)]
    for path in [*paths, *sorted(SITE_FILES.iterdir())]:
        h.update(path.name.encode())
        h.update(path.read_bytes())
    return h.hexdigest()


def ensure_npm() -> str:
    """Return the path of ``npm``, installing it with apt-get if allowed.

    Returns
    -------
    str
        Path of the npm executable.

    Raises
    ------
    SystemExit
        When npm is missing and cannot be installed here.
    """
    npm = shutil.which("npm")
    if npm:
        return npm
    if hasattr(os, "geteuid") and os.geteuid() == 0 and shutil.which("apt-get"):
        _say("npm not found; installing Debian's npm with apt-get")
        env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
        subprocess.run(["apt-get", "update", "-qq"], check=True, env=env)
        subprocess.run(["apt-get", "install", "-y", "-qq", "npm"], check=True, env=env)
        npm = shutil.which("npm")
        if npm:
            return npm
    raise SystemExit(
        "fetch_assets: npm (Node.js) is needed to fetch the site's MathJax and Vega "
        "scripts; install Node.js >= 18 with npm (e.g. 'sudo apt-get install npm') "
        "and run 'make book' again."
    )


def npm_ci(npm: str) -> None:
    """Install the exact versions of ``package-lock.json`` into node_modules."""
    stamp = NODE_MODULES / ".lesson-pins"
    want = hashlib.sha256((ROOT / "package-lock.json").read_bytes()).hexdigest()
    if stamp.is_file() and stamp.read_text().strip() == want:
        return
    _say("npm ci (mathjax, axe-core)")
    subprocess.run(
        [npm, "ci", "--ignore-scripts", "--no-audit", "--no-fund", "--loglevel=error"],
        cwd=ROOT,
        check=True,
    )
    stamp.write_text(want + "\n")


def fetch_tarball(npm: str, spec: str, integrity: str, dest: Path) -> Path:
    """Fetch one package tarball with ``npm pack`` and check its sha512.

    Parameters
    ----------
    npm : str
        The npm executable.
    spec : str
        ``name@version``.
    integrity : str
        Expected Subresource-Integrity string, ``sha512-<base64>``.
    dest : pathlib.Path
        Folder for the tarball (kept as a cache).

    Returns
    -------
    pathlib.Path
        The verified tarball.
    """
    dest.mkdir(parents=True, exist_ok=True)
    algo, _, want = integrity.partition("-")
    if algo != "sha512" or not want:
        raise SystemExit(f"fetch_assets: integrity for {spec} must be 'sha512-...'")

    def ok(path: Path) -> bool:
        digest = base64.b64encode(hashlib.sha512(path.read_bytes()).digest()).decode()
        return digest == want

    cached = [p for p in dest.glob("*.tgz") if ok(p)]
    if cached:
        return cached[0]
    _say(f"npm pack {spec}")
    out = subprocess.run(
        [npm, "pack", spec, "--json", "--pack-destination", str(dest), "--loglevel=error"],
        cwd=dest,
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    path = dest / json.loads(out)[0]["filename"]
    if not ok(path):
        path.unlink()
        raise SystemExit(f"fetch_assets: {spec} does not match the sha512 pinned in package.json")
    return path


def _copy(src: Path, dst: Path) -> None:
    dst.parent.mkdir(parents=True, exist_ok=True)
    if src.is_dir():
        shutil.copytree(src, dst)
    else:
        shutil.copy2(src, dst)


#: The Vega bundles the site serves, by package (versions match JupyterLab's
#: own Vega-Lite renderer, so an explorer behaves the same in both).
VEGA_BUNDLES = {
    "vega@5.33.0": "vega.min.js",
    "vega-lite@5.6.1": "vega-lite.min.js",
    "vega-embed@6.29.0": "vega-embed.min.js",
}


def _unpack(tgz: Path, into: Path) -> Path:
    with tarfile.open(tgz) as tar:
        tar.extractall(into, filter="data")
    return into / "package"


def assemble(out: Path, tarballs: dict[str, Path]) -> None:
    """Copy what the site serves, and the licences, into ``out``.

    Parameters
    ----------
    out : pathlib.Path
        The folder to fill (it must not exist yet).
    tarballs : dict of str to pathlib.Path
        The verified tarball of each ``vendorTarballs`` entry.
    """
    mathjax = NODE_MODULES / "mathjax"
    for part in MATHJAX_PARTS:
        _copy(mathjax / "es5" / part, out / "mathjax" / part)
    lic = out / "LICENSES"
    lic.mkdir(parents=True)
    shutil.copy2(mathjax / "LICENSE", lic / "mathjax-3.2.2-Apache-2.0.txt")

    for spec, bundle in VEGA_BUNDLES.items():
        with tempfile.TemporaryDirectory() as tmp:
            pkg = _unpack(tarballs[spec], Path(tmp))
            _copy(pkg / "build" / bundle, out / "vega" / bundle)
            name = spec.replace("@", "-")
            shutil.copy2(pkg / "LICENSE", lic / f"{name}-BSD-3-Clause.txt")
    # The lesson's own page scripts and styles (explorers, tables, self-check).
    for f in sorted(SITE_FILES.iterdir()):
        if f.suffix in {".js", ".css"}:
            _copy(f, out / "lesson" / f.name)
    (out / "README.txt").write_text(
        "Fetched by tools/fetch_assets.py from npm at the versions pinned in\n"
        "package.json / package-lock.json; not committed. Licences in LICENSES/.\n"
    )


def main() -> int:
    """Bring ``_vendor/`` in line with the pins; return the exit code."""
    digest = pins_digest()
    stamp = VENDOR / STAMP_NAME
    if stamp.is_file() and json.loads(stamp.read_text()).get("digest") == digest:
        if (NODE_MODULES / "axe-core" / "axe.min.js").is_file():
            return 0
    npm = ensure_npm()
    npm_ci(npm)
    pins = json.loads((ROOT / "package.json").read_text())["vendorTarballs"]
    tarballs = {
        spec: fetch_tarball(npm, spec, integrity, NODE_MODULES / ".vendor-tarballs")
        for spec, integrity in pins.items()
    }
    tmp = ROOT / "_vendor.tmp"
    shutil.rmtree(tmp, ignore_errors=True)
    assemble(tmp, tarballs)
    (tmp / STAMP_NAME).write_text(json.dumps({"digest": digest}) + "\n")
    shutil.rmtree(VENDOR, ignore_errors=True)
    tmp.rename(VENDOR)
    _say(f"assets ready in {VENDOR.relative_to(ROOT)}/")
    return 0


if __name__ == "__main__":
    sys.exit(main())
