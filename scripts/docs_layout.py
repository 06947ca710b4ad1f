"""Render built documentation pages in headless Chromium and report horizontal overflow.

    python scripts/docs_layout.py docs/_build/html              # widths 1280 and 1400
    python scripts/docs_layout.py docs/_build/html --screenshots shots/

A page fails when the document is wider than the window (``scrollWidth > innerWidth``), when a
rendered element ends right of the window, when an element clips or scrolls its content
sideways (a title cut by an ellipsis, a table column hidden in a scroll box), or when a word in a
table cell (a number such as "0.962", an identifier) is split across lines; a line may break after
a hyphen, a dash or a slash.  Code blocks may
scroll.  Exit status 0: every page fits; 1: overflow (listed); 2: no Chromium.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

#: The pages checked: the landing page, the privacy page (the widest table), the model-selection
#: page and a notebook (tables of numbers and names), the samplers page, and the API page with the
#: longest title.
PAGES = (
    "index.html",
    "privacy.html",
    "model-selection.html",
    "samplers.html",
    "examples/survival.html",
    "api/generated/pm_private.logistic.DPElasticNetLogisticRegression.html",
)
WIDTHS = (1280, 1400)
BROWSERS = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")

_PROBE = """
<script>
window.addEventListener("load", async () => {
  // Measure the typeset page: MathJax's output and the web fonts change the widths.
  if (window.MathJax && MathJax.startup && MathJax.startup.promise) await MathJax.startup.promise;
  await document.fonts.ready;
  setTimeout(measure, 300);
});
function measure() {
  const width = window.innerWidth, found = [];
  const root = document.documentElement;
  if (root.scrollWidth > width) found.push(`the page is ${root.scrollWidth} px wide in a ${width} px window`);
  const allowed = "pre, div.highlight, mjx-assistive-mml, .visually-hidden, .skip-link, script, style";
  for (const el of document.body.querySelectorAll("*")) {
    if (el.closest(allowed)) continue;
    const style = getComputedStyle(el);
    if (style.display === "none" || style.visibility === "hidden") continue;
    const box = el.getBoundingClientRect();
    if (box.width === 0 || box.height === 0 || (!el.offsetParent && style.position !== "fixed")) continue;
    const cls = typeof el.className === "string" && el.className.trim() ? "." + el.className.trim().split(/\\s+/).join(".") : "";
    const what = `${el.tagName.toLowerCase()}${cls} "${(el.textContent || "").trim().slice(0, 50)}"`;
    const clips = ["hidden", "clip", "auto", "scroll"].includes(style.overflowX) || style.textOverflow === "ellipsis";
    if (box.right > width + 1) found.push(`${what} ends at ${Math.round(box.right)} px`);
    else if (clips) {
      // Hidden content: a rendered descendant past the right edge, or (text only) a wider scroll box.
      let right = box.right;
      for (const inner of el.querySelectorAll("*")) {
        if (inner.closest(allowed)) continue;
        const r = inner.getBoundingClientRect();
        if (r.width > 0 && r.height > 0) right = Math.max(right, r.right);
      }
      const text = el.children.length === 0 ? el.scrollWidth - el.clientWidth : 0;
      const hidden = Math.max(right - box.right, text);
      if (hidden > 1) found.push(`${what} clips ${Math.round(hidden)} px of its content`);
    }
  }
  // A word of a table cell on more than one line: split mid-word.
  for (const cell of document.body.querySelectorAll(".bd-article td, .bd-article th")) {
    const walker = document.createTreeWalker(cell, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      if (node.parentElement.closest("mjx-container, .MathJax")) continue;
      // Lines may break after a hyphen, a dash or a slash ("zero-|concentrated", "0.84–|0.94"),
      // not inside a number or a name.
      for (const match of node.textContent.matchAll(/[^\\s\\-\\u2010-\\u2014\\/]+/g)) {
        const range = document.createRange();
        range.setStart(node, match.index);
        range.setEnd(node, match.index + match[0].length);
        const tops = new Set([...range.getClientRects()].filter((r) => r.width > 0).map((r) => Math.round(r.top)));
        if (tops.size > 1) found.push(`"${match[0].slice(0, 40)}" in a table cell is split over ${tops.size} lines`);
      }
    }
  }
  document.body.setAttribute("data-overflow", JSON.stringify(found));
}
</script>
"""


def find_browser() -> str | None:
    """The first headless-capable Chromium on the PATH, or None."""
    return next((path for name in BROWSERS if (path := shutil.which(name))), None)


def _run(browser: str, width: int, *args: str) -> subprocess.CompletedProcess:
    with tempfile.TemporaryDirectory() as profile:
        return subprocess.run(
            [
                browser,
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--hide-scrollbars",
                f"--user-data-dir={profile}",
                f"--window-size={width},1000",
                "--virtual-time-budget=15000",
                *args,
            ],
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )


def overflow(browser: str, page: Path, width: int) -> list[str]:
    """What overflows ``page`` in a window ``width`` px wide (empty: it fits)."""
    probe = page.with_name(f".layout-probe-{page.name}")
    text = page.read_text(encoding="utf-8")
    probe.write_text(text.replace("</body>", _PROBE + "</body>"), encoding="utf-8")
    try:
        result = _run(browser, width, "--dump-dom", probe.as_uri())
    finally:
        probe.unlink()
    marker = 'data-overflow="'
    start = result.stdout.find(marker)
    if start < 0:
        return [f"the page did not finish rendering (exit {result.returncode}): {result.stderr[-300:]}"]
    end = result.stdout.find('"', start + len(marker))
    import html

    return json.loads(html.unescape(result.stdout[start + len(marker) : end]))


def check(html_dir: Path, browser: str, pages=PAGES, widths=WIDTHS, screenshots: Path | None = None) -> list[str]:
    """Every overflow of ``pages`` (relative to ``html_dir``) at every width, as lines."""
    problems = []
    for name in pages:
        page = (html_dir / name).resolve()
        if not page.is_file():
            problems.append(f"{name}: not built")
            continue
        for width in widths:
            problems += [f"{name} at {width} px: {line}" for line in overflow(browser, page, width)]
            if screenshots is not None:
                screenshots.mkdir(parents=True, exist_ok=True)
                shot = screenshots / f"{name.replace('/', '_').removesuffix('.html')}-{width}.png"
                _run(browser, width, f"--screenshot={shot.resolve()}", page.as_uri())
    return problems


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("html", type=Path, help="the built HTML folder (docs/_build/html)")
    parser.add_argument("--screenshots", type=Path, help="also save a PNG of every page at every width here")
    args = parser.parse_args(argv)
    browser = find_browser()
    if browser is None:
        print("no Chromium found (apt-get install chromium): layout not checked", file=sys.stderr)
        return 2
    problems = check(args.html, browser, screenshots=args.screenshots)
    for line in problems:
        print(line)
    print(f"{len(PAGES)} pages at {', '.join(map(str, WIDTHS))} px: {len(problems) or 'no'} overflow(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
