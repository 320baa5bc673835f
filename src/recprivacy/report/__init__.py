"""Reports rendered from a results document.

The input is the plain JSON mapping a run stores in ``results.json`` (produced by
``recprivacy.experiments.results.Results.to_document``): keys ``name``, ``study``, ``created``,
``config``, ``dataset``, ``seeds``, ``metrics``, ``tables`` (name -> ``{columns, rows,
caption}``), ``figures`` (name -> ``{path, caption}``, paths relative to the run folder),
``sections`` (ordered ``{title, text, tables, figures}``), ``timings`` and ``versions``.
Working from the document rather than the ``Results`` class keeps this package free of imports
from above it, and lets ``recprivacy report RUN_DIR`` re-render any saved run.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from recprivacy.io import write_text_atomic
from recprivacy.report.html import render_html
from recprivacy.report.markdown import render_markdown
from recprivacy.report.tables import csv_table

__all__ = ["render_html", "render_markdown", "write_report"]


def write_report(doc: Mapping[str, Any], run_dir: str | Path) -> dict[str, Path]:
    """Write ``report.md``, ``report.html`` and ``tables/<name>.csv`` into ``run_dir``.

    Both reports are rendered before either file is replaced, so a rendering error leaves the
    previous report untouched.
    """
    run_dir = Path(run_dir)
    markdown = render_markdown(doc)
    html = render_html(doc, run_dir)
    (run_dir / "tables").mkdir(exist_ok=True)
    for name, table in doc.get("tables", {}).items():
        write_text_atomic(run_dir / "tables" / f"{name}.csv", csv_table(table))
    paths = {"markdown": run_dir / "report.md", "html": run_dir / "report.html"}
    write_text_atomic(paths["markdown"], markdown)
    write_text_atomic(paths["html"], html)
    return paths
