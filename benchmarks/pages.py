"""Page weight in Chromium: run ``.venv/bin/python benchmarks/pages.py``.

Every page of the built site (``make book`` first) is served from
``_build/html`` on 127.0.0.1 and opened in Debian's Chromium (network off,
an empty cache for each page, a 1280 x 900 window). Every response the page
loads before any interaction (no scrolling, until the network is idle) is
recorded: its bytes as served, and its bytes compressed with gzip -6, as a
server that compresses would send it (woff2 fonts and PNG images barely
shrink). Then, in a fresh window for each explorer, the page is loaded
again, that explorer is scrolled into view and everything it loads is
added. Prints per page the requests, bytes and compressed bytes against the
budget (first load at most 400 KB compressed, a page with an explorer in
view at most 600 KB), and the largest assets overall. Exits 1 if a page
misses its budget (a benchmark of a site, not of a machine: the numbers do
not depend on its load).
"""

from __future__ import annotations

import argparse
import functools
import gzip
import os
import sys
from pathlib import Path
from urllib.parse import unquote, urlsplit

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "tests" / "browser"))

from conftest import CHROMIUM_ARGS, serve_folder  # noqa: E402

#: First load of a page, compressed, before any interaction.
FIRST_LOAD_BUDGET = 400_000
#: A page with one of its explorers scrolled into view, compressed.
EXPLORER_BUDGET = 600_000
#: How many of the largest assets to list.
LARGEST = 12
#: Longest wait for the network to go idle, ms.
TIMEOUT_MS = 120_000

#: Scroll one explorer into view and wait until it is drawn (or has failed).
SHOW_EXPLORER = """async (index) => {
  const box = document.querySelectorAll('div.lesson-explorer')[index];
  box.scrollIntoView({block: 'center'});
  const done = () => box.classList.contains('lesson-explorer-ready')
    || box.querySelector('.lesson-explorer-error');
  for (let i = 0; i < 1200 && !done(); i++) { await new Promise(r => setTimeout(r, 50)); }
  return {title: box.getAttribute('aria-label'), ready: box.classList.contains('lesson-explorer-ready')};
}"""


@functools.cache
def weigh(path: Path) -> tuple[int, int]:
    """Bytes of a served file, and its bytes after gzip level 6."""
    data = path.read_bytes()
    return len(data), len(gzip.compress(data, compresslevel=6))


def pages_of(html_dir: Path) -> list[str]:
    """Every HTML page of the site, as paths relative to its root."""
    skip = ("_static", "_sources", "_images", "_downloads")
    return sorted(
        p.relative_to(html_dir).as_posix()
        for p in html_dir.rglob("*.html")
        if p.relative_to(html_dir).parts[0] not in skip
    )


def load(browser, base: str, html_dir: Path, page_path: str, explorer: int | None) -> dict:
    """Open a page in a fresh context; return the files it loaded and what it showed."""
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    files: dict[str, Path] = {}
    outside: list[str] = []

    def on_route(route) -> None:
        url = route.request.url
        if url.startswith(base) or url.startswith(("data:", "blob:")):
            route.continue_()
        else:
            outside.append(url)
            route.abort()

    def on_response(response) -> None:
        url = response.url
        if not url.startswith(base):
            return
        rel = unquote(urlsplit(url).path).lstrip("/")
        path = html_dir / rel
        if path.is_dir():
            path = path / "index.html"
        if path.is_file():
            files[rel or "index.html"] = path

    page.route("**/*", on_route)
    page.on("response", on_response)
    shown = None
    try:
        page.goto(base + page_path, wait_until="networkidle", timeout=TIMEOUT_MS)
        if explorer is not None:
            shown = page.evaluate(SHOW_EXPLORER, explorer)
            page.wait_for_load_state("networkidle", timeout=TIMEOUT_MS)
            page.wait_for_timeout(600)  # networkidle holds for 500 ms of quiet
        count = 0 if explorer is not None else page.locator("div.lesson-explorer").count()
    finally:
        context.close()
    return {"files": files, "outside": outside, "shown": shown, "explorers": count}


def totals(files: dict[str, Path]) -> tuple[int, int, int]:
    """Requests, bytes and compressed bytes of a set of loaded files."""
    weights = [weigh(p) for p in files.values()]
    return len(weights), sum(w[0] for w in weights), sum(w[1] for w in weights)


def main() -> int:
    """Measure every page, print the table; 1 if a page misses its budget."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--chromium", default=os.environ.get("LESSON_CHROMIUM", "/usr/bin/chromium")
    )
    parser.add_argument("--only", nargs="*", help="pages to measure, e.g. book/latency.html")
    parser.add_argument("--files", action="store_true", help="list every file each load got")
    args = parser.parse_args()
    html_dir = ROOT / "_build" / "html"
    if not (html_dir / "index.html").is_file():
        print("benchmarks/pages.py: no built site; run `make book` first", file=sys.stderr)
        return 2
    from playwright.sync_api import sync_playwright

    server = serve_folder(html_dir)
    base = f"http://127.0.0.1:{server.server_address[1]}/"
    pages = args.only or pages_of(html_dir)
    missed: list[str] = []
    seen: dict[str, set[str]] = {}
    header = f"{'page':<34}{'requests':>9}{'KB':>9}{'gzip KB':>9}{'budget':>8}  verdict"
    print(header)
    print("-" * len(header))
    try:
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=args.chromium, args=CHROMIUM_ARGS)
            for page_path in pages:
                first = load(browser, base, html_dir, page_path, None)
                rows = [(page_path, first, FIRST_LOAD_BUDGET)]
                for index in range(first["explorers"]):
                    shown = load(browser, base, html_dir, page_path, index)
                    rows.append((f"  + explorer {index + 1} in view", shown, EXPLORER_BUDGET))
                for label, result, budget in rows:
                    count, raw, packed = totals(result["files"])
                    for rel in result["files"]:
                        seen.setdefault(rel, set()).add(page_path)
                    ok = packed <= budget and not result["outside"]
                    if result["shown"] is not None and not result["shown"]["ready"]:
                        ok = False
                    if not ok:
                        missed.append(page_path + (label[1:] if label.startswith(" ") else ""))
                    note = (
                        f" (left the site: {len(result['outside'])})" if result["outside"] else ""
                    )
                    print(
                        f"{label:<34}{count:>9}{raw / 1e3:>9.0f}{packed / 1e3:>9.0f}"
                        f"{budget / 1e3:>8.0f}  {'ok' if ok else 'MISSED'}{note}"
                    )
                    if args.files:
                        for rel, path in sorted(result["files"].items()):
                            print(f"      {rel:<60}{weigh(path)[1] / 1e3:>8.1f}")
            browser.close()
    finally:
        server.shutdown()
    print(f"\nLargest assets loaded (of {len(seen)} files; pages: how many pages loaded it)")
    print(f"{'asset':<58}{'KB':>9}{'gzip KB':>9}{'pages':>7}")
    ranked = sorted(seen, key=lambda rel: weigh(html_dir / rel)[1], reverse=True)
    for rel in ranked[:LARGEST]:
        raw, packed = weigh(html_dir / rel)
        name = rel if len(rel) <= 56 else "..." + rel[-53:]
        print(f"{name:<58}{raw / 1e3:>9.0f}{packed / 1e3:>9.0f}{len(seen[rel]):>7}")
    if missed:
        print(f"\n{len(missed)} over budget: " + "; ".join(missed))
        return 1
    print(f"\nevery page within budget ({len(pages)} pages)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
