"""What a reader sees of the results site, measured in a real browser (headless Chromium) and saved.

``snakemake --cores 1 report_screenshots`` (after a run) writes ``results/report-screenshots/``:
``index_<W>x<H>.png`` at 1280x800 and 1920x1080, ``<slug>_<W>x<H>.png`` for one paper's page, and
``geometry.json`` with what was measured, per viewport: for every paper's row, whether the element at the
centre of its name cell (``document.elementFromPoint``) is that cell (nothing drawn over it) and whether the
cell lies inside the first viewport; the same for the title and the total row; for the paper's page,
where its first figure starts (visible after one scroll: its top above twice the viewport height) and
whether its image loaded. tests/test_report_browser.py asserts on that file, so the test checks geometry,
not text.

Why a probe copy: Chromium's command line can dump the DOM after scripts ran but cannot run a script of
ours, so a copy of the page with a measuring script appended (same folder, so links and images resolve)
writes its measurements into the DOM, which ``--dump-dom`` returns.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Any

from repro.workflow.io import InputError, atomic_path, write_json

VIEWPORTS = ((1280, 800), (1920, 1080))
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--hide-scrollbars",
]
MEASURE_INDEX = """
<script>
window.addEventListener('load', () => {
  const inView = (r) => r.top >= 0 && r.left >= 0 && r.bottom <= innerHeight && r.right <= innerWidth;
  const probe = (el) => {
    const r = el.getBoundingClientRect();
    const hit = document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2);
    return {inside: inView(r), unobstructed: !!hit && el.contains(hit), top: r.top, bottom: r.bottom};
  };
  const rows = {};
  for (const row of document.querySelectorAll('tr[id^="row-"]')) rows[row.id.slice(4)] = probe(row.querySelector('td.name'));
  const out = {width: innerWidth, height: innerHeight, title: probe(document.querySelector('h1')),
               total: probe(document.querySelector('tr.total td')), rows};
  const pre = document.createElement('pre'); pre.id = 'geometry'; pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
});
</script>
"""
MEASURE_PAPER = """
<script>
window.addEventListener('load', () => {
  const img = document.querySelector('figure img');
  const out = {width: innerWidth, height: innerHeight, figure: null};
  if (img) {
    const r = img.getBoundingClientRect();
    out.figure = {top: r.top + scrollY, height: r.height, loaded: img.complete && img.naturalWidth > 0,
                  after_one_scroll: r.top + scrollY < 2 * innerHeight};
  }
  const pre = document.createElement('pre'); pre.id = 'geometry'; pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
});
</script>
"""


def chromium() -> str:
    """The Chromium binary, or an error saying how to install it."""
    for name in ("chromium", "chromium-browser", "google-chrome"):
        found = shutil.which(name)
        if found:
            return found
    raise InputError("chromium", "no Chromium on PATH: install Debian's `chromium` package to take screenshots")


def _run(args: list[str], profile: Path) -> str:
    cmd = [chromium(), *FLAGS, f"--user-data-dir={profile}", *args]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    if proc.returncode != 0:
        raise InputError(args[-1], f"chromium failed ({proc.returncode}): {proc.stderr[-500:]}")
    return proc.stdout


def measure(page: Path, script: str, size: tuple[int, int], profile: Path) -> dict[str, Any]:
    """Geometry of ``page`` at ``size`` measured by ``script`` in a probe copy beside it."""
    probe = page.with_name(f".probe-{page.name}")
    probe.write_text(page.read_text().replace("</body>", script + "</body>"))
    try:
        dom = _run(
            [f"--window-size={size[0]},{size[1]}", "--virtual-time-budget=3000", "--dump-dom", probe.as_uri()], profile
        )
    finally:
        probe.unlink()
    found = re.search(r'<pre id="geometry">(.*?)</pre>', dom, re.S)
    if not found:
        raise InputError(page, "the measuring script wrote nothing (the page did not load?)")
    return json.loads(found.group(1).replace("&quot;", '"').replace("&amp;", "&"))


def screenshot(page: Path, size: tuple[int, int], out: Path, profile: Path) -> None:
    _run([f"--window-size={size[0]},{size[1]}", f"--screenshot={out}", page.as_uri()], profile)


def main(job) -> None:
    index = Path(job.input.index).resolve()
    paper = Path(job.input.page).resolve()
    geometry: dict[str, Any] = {"index": {}, "paper": {"slug": paper.stem}}
    with atomic_path(job.output.folder) as tmp, tempfile.TemporaryDirectory() as profile:
        tmp.mkdir()
        for width, height in VIEWPORTS:
            key = f"{width}x{height}"
            geometry["index"][key] = measure(index, MEASURE_INDEX, (width, height), Path(profile))
            screenshot(index, (width, height), tmp / f"index_{key}.png", Path(profile))
        geometry["paper"]["1280x800"] = measure(paper, MEASURE_PAPER, VIEWPORTS[0], Path(profile))
        screenshot(paper, VIEWPORTS[0], tmp / f"{paper.stem}_1280x800.png", Path(profile))
        write_json(tmp / "geometry.json", geometry)
