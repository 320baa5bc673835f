"""The report as one self-contained HTML file.

Rendered with the Jinja2 template ``templates/report.html.j2`` (autoescaped): CSS inline, every
figure embedded as a base64 PNG data URI, tables as HTML tables laid out to fit a 1200 px
window (``report.layout``: wide tables split, long ones collapsed, rows without numbers as one
note), section text converted from Markdown by markdown-it (CommonMark with tables; raw HTML in
the text is escaped, not passed through). The file opens offline and can be mailed to a reviewer as it is.
"""

from __future__ import annotations

import base64
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import jinja2
from markdown_it import MarkdownIt
from markupsafe import Markup

from recprivacy.errors import DataError
from recprivacy.report.layout import table_view
from recprivacy.report.markdown import outline, subtitle_of, title_of

_MARKDOWN = MarkdownIt("commonmark", {"html": False}).enable("table")
_ENV = jinja2.Environment(
    loader=jinja2.PackageLoader("recprivacy.report", "templates"),
    autoescape=True,
    undefined=jinja2.StrictUndefined,
    trim_blocks=True,
    lstrip_blocks=True,
)


def markdown_to_html(text: str) -> Markup:
    """Safe HTML for a section's Markdown text."""
    return Markup(_MARKDOWN.render(text))


def figure_data_uri(run_dir: Path, relative: str) -> str:
    """``data:image/png;base64,...`` for a figure file of the run folder."""
    path = run_dir / relative
    if not path.is_file():
        raise DataError("figure file referenced by results.json is missing", path)
    return "data:image/png;base64," + base64.b64encode(path.read_bytes()).decode("ascii")


def render_html(doc: Mapping[str, Any], run_dir: str | Path) -> str:
    """The report of ``doc``; figure files are read from ``run_dir``."""
    run_dir = Path(run_dir)
    sections = [
        {
            "title": s["title"],
            "anchor": f"s{i}",
            "html": markdown_to_html(s["text"]) if s["text"] else "",
            "tables": [table_view(t) for t in s["tables"]],
            "figures": [
                {"src": figure_data_uri(run_dir, f["path"]), "caption": f.get("caption", "")} for f in s["figures"]
            ],
        }
        for i, s in enumerate(outline(doc), 1)
    ]
    template = _ENV.get_template("report.html.j2")
    return template.render(title=title_of(doc), subtitle=subtitle_of(doc), sections=sections)
