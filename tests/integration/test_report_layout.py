"""The HTML reports as a reader's browser lays them out (issue 48): a real headless Chromium opens
the demo audit's report and the shared small matrix's report at a 1200 x 900 px window and checks that
nothing is wider than the window (no horizontal scroll), that the answer (audit) or the heat map
(matrix) starts on the first screen, that every image loaded, and that no request leaves the page.

No browser driver: a copy of the report gets a script that measures the page on load and writes
its findings as JSON into the DOM, which ``chromium --dump-dom`` prints. Chromium is Debian's
``chromium`` package (``.ci/run`` installs it); without it the test skips, except in CI
(``CI`` set), where it fails.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from recprivacy.cli import app

WIDTH, FIRST_SCREEN = 1200, 900
TINY_AUDIT = ["dataset.options.n_users=80", "dataset.options.n_items=120", "dataset.options.n_interactions=2400",
              "model.params.n_epochs=3", "model.params.eval_every=1"]  # fmt: skip

# Opens every collapsed block (it must fit too), then measures the laid-out page; FIRST names the heading of the section
# whose first table or figure must start on the first screen. Writes the findings into <pre id="layout-findings">.
PROBE = """
<script>
window.addEventListener("load", () => {
  document.querySelectorAll("details").forEach((d) => { d.open = true; });
  const width = window.innerWidth;
  const root = document.documentElement;
  const describe = (e) => e.tagName.toLowerCase() + (e.id ? "#" + e.id : "")
    + " '" + (e.textContent || e.getAttribute("alt") || "").trim().slice(0, 60) + "'";
  const wide = [...document.body.querySelectorAll("*")]
    .filter((e) => e.getBoundingClientRect().right > width + 0.5 || e.getBoundingClientRect().left < -0.5)
    .map((e) => describe(e) + " right=" + Math.round(e.getBoundingClientRect().right));
  const heading = [...document.querySelectorAll("h2")].find((h) => h.textContent.trim() === FIRST);
  const block = heading ? heading.closest("section").querySelector("table, figure") : null;
  const images = [...document.images];
  const loading = [...document.querySelectorAll("[src], link[href]")]
    .map((e) => e.getAttribute("src") || e.getAttribute("href"));
  const requests = performance.getEntriesByType("resource").map((r) => r.name).concat(loading);
  const findings = {
    width: width,
    scroll_width: root.scrollWidth,
    wide: wide,
    first_block_top: block ? block.getBoundingClientRect().top + window.scrollY : null,
    images: images.length,
    broken_images: images.filter((i) => !(i.complete && i.naturalWidth > 0)).map((i) => i.alt.slice(0, 60)),
    remote: requests.filter((u) => !/^(data|file|about):/.test(new URL(u, document.baseURI).protocol + ":")),
  };
  const out = document.createElement("pre");
  out.id = "layout-findings";
  out.textContent = JSON.stringify(findings);
  document.body.appendChild(out);
});
</script>
"""


def chromium() -> str:
    """The Chromium binary; skips without one, fails in CI (where ``.ci/run`` installs it)."""
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found:
        return found
    if os.environ.get("CI"):
        pytest.fail("chromium is not installed; .ci/run installs Debian's chromium package")
    pytest.skip("chromium is not installed (Debian package chromium)")


def measure(report: Path, first: str, tmp_path: Path) -> dict[str, Any]:
    """The probe's findings for ``report`` laid out in a WIDTH x FIRST_SCREEN window, ``first``
    being the heading of the section that must start on the first screen."""
    probe = PROBE.replace("FIRST", json.dumps(first))
    page = tmp_path / f"probed-{report.parent.name}.html"
    page.write_text(report.read_text().replace("</body>", probe + "</body>"))
    command = [chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
               f"--window-size={WIDTH},{FIRST_SCREEN}", "--host-resolver-rules=MAP * ~NOTFOUND",
               "--virtual-time-budget=10000", "--dump-dom", page.as_uri()]  # fmt: skip
    dom = subprocess.run(command, capture_output=True, text=True, timeout=120, check=True).stdout
    found = re.search(r'<pre id="layout-findings">(.*?)</pre>', dom, flags=re.S)
    assert found, f"the probe wrote no findings into the page; chromium printed:\n{dom[-2000:]}"
    return json.loads(found.group(1).replace("&quot;", '"').replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&"))


def assert_reads_at(findings: dict[str, Any]) -> None:
    """No horizontal scroll, the first section's content on the first screen, every image
    loaded, nothing fetched from outside the file."""
    assert findings["width"] == WIDTH, findings["width"]
    assert findings["scroll_width"] <= WIDTH and not findings["wide"], findings["wide"][:15]
    assert findings["first_block_top"] is not None, "no such section, or it has no table or figure"
    assert findings["first_block_top"] < FIRST_SCREEN, findings["first_block_top"]
    assert findings["images"] > 0 and not findings["broken_images"], findings["broken_images"]
    assert not findings["remote"], findings["remote"]


@pytest.fixture(scope="module")
def audit_report(tmp_path_factory) -> Path:
    """The demo audit (``recprivacy audit`` on the built-in synthetic data), on a smaller sample."""
    out = tmp_path_factory.mktemp("audit") / "runs"
    result = CliRunner().invoke(app, ["audit", "--out", str(out)] + sum((["--set", o] for o in TINY_AUDIT), []))
    assert result.exit_code == 0, result.output
    (run,) = out.iterdir()
    return run / "report.html"


@pytest.fixture(scope="module")
def matrix_report(synthetic_matrix) -> Path:
    """The session's shared reduced matrix on the synthetic data (``synthetic_matrix`` in ``conftest.py``):
    every central defence, every attack, the sequential and upload defences, reduced training."""
    return synthetic_matrix / "report.html"


def test_the_audit_report_fits_the_window_and_answers_on_the_first_screen(audit_report, tmp_path):
    assert_reads_at(measure(audit_report, "Answer", tmp_path))


def test_the_matrix_report_fits_the_window_and_shows_its_heat_map_on_the_first_screen(matrix_report, tmp_path):
    assert_reads_at(measure(matrix_report, "At a glance", tmp_path))
