"""Explorer responsiveness in Chromium: run ``.venv/bin/python benchmarks/explorers.py``.

For each live explorer of the built site (``make book`` first), the page is
served from ``_build/html`` on 127.0.0.1 and opened in Debian's Chromium
(network off). The page's own JavaScript then makes 50 changes, cycling
through the controls and their values; for each it takes the time from the
control's input event to the chart's repaint (the first animation frame after
the chart's SVG changed), with ``performance.now()``. Prints the median and
p95 per explorer against the goals (median at most 50 ms, p95 at most
100 ms on a 2-core machine), the load average, and each explorer page's
weight (HTML with the explorers' data beside it; the shared Vega scripts are
counted once, separately). A benchmark, not a test: numbers vary with load.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "browser"))

from conftest import CHROMIUM_ARGS, serve_folder  # noqa: E402

from lesson_lib.explorers.catalog import EXPLORERS  # noqa: E402

MEDIAN_GOAL_MS = 50.0
P95_GOAL_MS = 100.0
PAGE_GOAL_BYTES = 1.5e6
CHANGES = 50

#: In the page: make ``changes`` control changes, time each to the repaint.
TIME_CHANGES = """async ([title, controls, changes]) => {
  const box = document.querySelector(`div.lesson-explorer[aria-label="${title}"]`);
  const chart = box.querySelector('.lesson-explorer-chart');
  const state = {};
  controls.forEach(c => { state[c.name] = c.values.indexOf(c.default); });
  const times = [];
  for (let i = 0; i < changes; i++) {
    const c = controls[i % controls.length];
    if (c.values.length < 2) { continue; }
    state[c.name] = (state[c.name] + 1) % c.values.length;
    const value = String(c.values[state[c.name]]);
    let el;
    if (c.input === 'radio') {
      el = box.querySelector(`input[type="radio"][name="${c.name}"][value="${value}"]`);
    } else {
      el = box.querySelector(`${c.input === 'select' ? 'select' : 'input'}[name="${c.name}"]`);
    }
    const t0 = performance.now();
    const repainted = await new Promise(resolve => {
      const obs = new MutationObserver(() => {
        obs.disconnect();
        requestAnimationFrame(() => resolve(true));
      });
      setTimeout(() => { obs.disconnect(); resolve(false); }, 5000);
      obs.observe(chart, {subtree: true, childList: true, characterData: true, attributes: true});
      if (c.input === 'radio') { el.checked = true; } else { el.value = value; }
      el.dispatchEvent(new Event('input', {bubbles: true}));
      el.dispatchEvent(new Event('change', {bubbles: true}));
    });
    if (!repainted) { return {error: `${c.name}=${value} did not change the chart`}; }
    times.push(performance.now() - t0);
  }
  return times;
}"""


def percentile(values: list[float], q: float) -> float:
    """The ``q`` quantile (0..1) by linear interpolation."""
    ordered = sorted(values)
    pos = (len(ordered) - 1) * q
    low = int(pos)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (pos - low)


def main() -> int:
    """Measure and print; return 0 (a benchmark reports, it does not fail)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--changes", type=int, default=CHANGES, help="changes per explorer")
    parser.add_argument(
        "--chromium", default=os.environ.get("LESSON_CHROMIUM", "/usr/bin/chromium")
    )
    args = parser.parse_args()
    html_dir = ROOT / "_build" / "html"
    if not (html_dir / "index.html").is_file():
        print("benchmarks/explorers.py: no built site; run `make book` first", file=sys.stderr)
        return 1
    from playwright.sync_api import sync_playwright

    server = serve_folder(html_dir)
    base = f"http://127.0.0.1:{server.server_address[1]}/"
    load = os.getloadavg()
    print(f"load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f} on {os.cpu_count()} CPUs")
    shared = sum(p.stat().st_size for p in (html_dir / "_static" / "vega").glob("*.js"))
    print(f"shared Vega scripts: {shared / 1e6:.2f} MB (loaded once, cached by the browser)")
    print(f"{'explorer':<22}{'page':>10}{'median ms':>11}{'p95 ms':>9}  verdict")
    try:
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=args.chromium, args=CHROMIUM_ARGS)
            for entry in EXPLORERS:
                explorer = entry.build()
                page = browser.new_page(viewport={"width": 1280, "height": 900})
                page.goto(f"{base}{entry.doc}.html", wait_until="load")
                # an explorer loads its data and Vega when it nears the viewport
                page.locator(
                    f'div.lesson-explorer[aria-label="{explorer.title}"]'
                ).scroll_into_view_if_needed()
                page.locator(
                    f'div.lesson-explorer[aria-label="{explorer.title}"].lesson-explorer-ready'
                ).wait_for(timeout=120_000)
                controls = [
                    {
                        "name": c.name,
                        "input": c.input,
                        "values": list(c.values),
                        "default": c.default,
                    }
                    for c in explorer.controls
                ]
                warm_up = 5  # the first changes compile Vega's expressions; not counted
                times = page.evaluate(
                    TIME_CHANGES, [explorer.title, controls, args.changes + warm_up]
                )
                page.close()
                if isinstance(times, dict):
                    print(f"{entry.builder}: {times['error']}")
                    continue
                times = times[warm_up:]
                median, p95 = statistics.median(times), percentile(times, 0.95)
                weight = (html_dir / f"{entry.doc}.html").stat().st_size + sum(
                    p.stat().st_size for p in html_dir.glob(f"{entry.doc}.explorer-*.js")
                )
                ok = median <= MEDIAN_GOAL_MS and p95 <= P95_GOAL_MS and weight <= PAGE_GOAL_BYTES
                name = entry.builder.rpartition(":")[2]
                print(
                    f"{name:<22}{weight / 1e6:>8.2f}MB{median:>11.1f}{p95:>9.1f}  "
                    f"{'ok' if ok else 'MISSED'} (goals: {MEDIAN_GOAL_MS:g}/{P95_GOAL_MS:g} ms, "
                    f"page {PAGE_GOAL_BYTES / 1e6:g} MB)"
                )
            browser.close()
    finally:
        server.shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main())
