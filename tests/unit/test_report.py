"""Report rendering from a plain results document (no experiments import needed)."""

from __future__ import annotations

import base64
import io

import matplotlib.image
import pytest

from recprivacy.errors import DataError
from recprivacy.report import render_html, render_markdown, write_report
from recprivacy.report.figures import line_plot
from recprivacy.report.markdown import outline
from recprivacy.report.tables import csv_table, format_value, markdown_table

TABLE = {"columns": ["metric", "@10"], "rows": [["recall", 0.123456], ["a|b", float("nan")]], "caption": "Test"}


def make_doc(run_dir, png: bytes) -> dict:
    (run_dir / "figures").mkdir(parents=True, exist_ok=True)
    (run_dir / "figures" / "curve.png").write_bytes(png)
    return {
        "name": "demo",
        "study": "train",
        "created": "2024-01-02T03:04:05+00:00",
        "config": {"name": "demo", "model": {"name": "bpr"}},
        "dataset": {"name": "synthetic", "users": 10, "sha256": "abc123", "provenance": [{"step": "load"}]},
        "seeds": {"seed": 0, "split": 0},
        "metrics": {"recall@10": 0.12},
        "tables": {"metrics": TABLE, "extra": {"columns": ["x"], "rows": [[1]], "caption": ""}},
        "figures": {"curve": {"path": "figures/curve.png", "caption": "A curve"}},
        "sections": [
            {"title": "Second first", "text": "Some **bold** <script>x</script>", "tables": ["metrics"], "figures": ["curve"]},
            {"title": "Then this", "text": "", "tables": [], "figures": []},
        ],
        "timings": {"fit": 1.5},
        "versions": {"python": "3.11", "recprivacy": "0.1.0"},
    }


@pytest.fixture(scope="module")
def png() -> bytes:
    return line_plot({"a": ([1, 2, 3], [0.1, 0.2, 0.4]), "b": ([1, 2, 3], [0.3, 0.2, 0.1])}, "epoch", "loss", "t")


def test_format_value_rules():
    assert format_value(0.123456) == "0.1235"
    assert format_value(1e-5) == "1e-05"
    assert format_value(123456.0) == "1.23e+05"
    assert format_value(0.0) == "0.0000"
    assert format_value(7) == "7"
    assert format_value(True) == "yes"
    assert format_value(None) == "n/a"
    assert format_value(float("nan")) == "n/a"
    assert format_value("text") == "text"


def test_markdown_table_escapes_pipes_and_formats_numbers():
    assert markdown_table(TABLE) == (
        "*Test*\n\n| metric | @10 |\n|---|---|\n| recall | 0.1235 |\n| a\\|b | n/a |"
    )


def test_csv_keeps_full_precision():
    assert csv_table(TABLE) == "metric,@10\nrecall,0.123456\na|b,nan\n"


def test_line_plot_is_a_png_of_about_the_requested_size_with_its_legend_beside_the_axes(png):
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    image = matplotlib.image.imread(io.BytesIO(png), format="png")
    alone = matplotlib.image.imread(io.BytesIO(line_plot({"a": ([1, 2], [0.1, 0.2])}, "epoch", "loss")), format="png")
    # 4 x 6 inches at 110 dpi, cropped to what is drawn; the legend (two lines) adds width, not height
    assert abs(image.shape[0] - 440) < 30 and abs(alone.shape[1] - 660) < 40 and image.shape[1] > alone.shape[1] + 20


def test_outline_keeps_section_order_then_unreferenced_then_appendix(tmp_path, png):
    titles = [s["title"] for s in outline(make_doc(tmp_path, png))]
    assert titles == ["Second first", "Then this", "Other results", "Dataset", "Configuration", "Timings and environment"]


def test_markdown_report_links_figures_and_includes_tables(tmp_path, png):
    text = render_markdown(make_doc(tmp_path, png))
    assert text.startswith("# demo — recprivacy train report\n")
    assert "![A curve](figures/curve.png)" in text
    assert "| recall | 0.1235 |" in text
    assert text.index("## Second first") < text.index("## Then this") < text.index("## Other results")
    assert "sha256 abc123" in text
    assert "seed=0, split=0" in text


def test_html_is_self_contained_with_embedded_figure_and_tables(tmp_path, png):
    html = render_html(make_doc(tmp_path, png), tmp_path)
    assert "data:image/png;base64," + base64.b64encode(png).decode() in html
    assert "<td>recall</td><td>0.1235</td>" in html
    assert "<caption>Test</caption>" in html
    assert "<strong>bold</strong>" in html
    assert "<script>" not in html  # raw HTML in section text is escaped
    assert 'src="figures/' not in html and "<link" not in html


def test_missing_figure_file_is_a_data_error_and_keeps_the_old_report(tmp_path, png):
    doc = make_doc(tmp_path, png)
    paths = write_report(doc, tmp_path)
    before = paths["markdown"].read_text()
    assert (tmp_path / "tables" / "metrics.csv").read_text() == csv_table(TABLE)
    (tmp_path / "figures" / "curve.png").unlink()
    doc["sections"][1]["title"] = "Renamed"
    with pytest.raises(DataError, match="curve.png"):
        write_report(doc, tmp_path)
    assert paths["markdown"].read_text() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["figures", "report.html", "report.md", "tables"]
