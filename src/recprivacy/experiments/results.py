"""What a study returns and how a run folder is written.

``Results`` is JSON-serialisable: the config, the dataset fingerprint, seeds, where the privacy
mechanisms' noise came from (``noise``: secure, or a seeded simulation), metrics, tables,
``verdicts`` (every judged row with the numbers it was judged on, its
sample and each seed's value: ``metrics.verdict``), figures (PNG files under ``figures/``), an ordered list of report sections, timings, the thread
budget the study ran with (``threads``) and library versions. Its JSON form — the *results document* written to ``results.json`` — is all that
``recprivacy.report`` needs, so the report package imports nothing from here and any saved run
can be rendered again.

``write_run`` builds ``<out>/<YYYYmmdd-HHMMSS>-<name>/`` (``config.yaml``, ``results.json``,
``report.md``, ``report.html``, ``figures/``, ``tables/``) inside a hidden staging folder next
to the target (``recprivacy.io.staging_folder``) and renames it into place only when every file
is written, so a failure never leaves a half run behind. Staging folders left by a killed
writer are removed by the next ``write_run`` into the same folder, and ``load_results`` refuses
a staging folder.
"""

from __future__ import annotations

import os
import platform
import re
import shutil
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from datetime import datetime
from importlib import metadata
from pathlib import Path
from typing import Any

import numpy as np
import yaml
from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, ValidationError

from recprivacy.errors import DataError
from recprivacy.io import is_staging, remove_stale_staging, staging_folder
from recprivacy.progress import stage
from recprivacy.report import write_report
from recprivacy.timing import timed

SLUG = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
#: the parts of a results file the report is drawn from (always written)
REPORT_PARTS = ("metrics", "tables", "sections")
LIBRARIES = ("recprivacy", "numpy", "scipy", "pandas", "torch", "scikit-learn", "pydantic", "matplotlib")


class Table(BaseModel):
    """A table: column names, rows of JSON scalars, and a caption."""

    columns: list[str]
    rows: list[list[Any]]
    caption: str = ""


class Figure(BaseModel):
    """A figure stored as a PNG file at ``path`` (relative to the run folder)."""

    path: str
    caption: str = ""


class Section(BaseModel):
    """One report section: a title, Markdown text, then its tables and figures by name."""

    title: str
    text: str = ""
    tables: list[str] = Field(default_factory=list)
    figures: list[str] = Field(default_factory=list)


def library_versions() -> dict[str, str]:
    """Versions of Python, the platform and the libraries that shape the numbers."""
    out = {"python": platform.python_version(), "platform": platform.platform()}
    for name in LIBRARIES:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = "not installed"
    return out


def _now() -> str:
    return datetime.now().astimezone().isoformat(timespec="seconds")


def plain(value: Any) -> Any:
    """A JSON scalar for a table cell (numpy scalars become Python numbers)."""
    if isinstance(value, np.generic):
        return value.item()
    return value


class Results(BaseModel):
    """The outcome of one study run (see module docstring)."""

    model_config = ConfigDict(extra="forbid", ser_json_inf_nan="constants")

    name: str
    study: str
    config: dict[str, Any]
    dataset: dict[str, Any] = Field(default_factory=dict)
    seeds: dict[str, int] = Field(default_factory=dict)
    noise: str = ""
    metrics: dict[str, float] = Field(default_factory=dict)
    tables: dict[str, Table] = Field(default_factory=dict)
    verdicts: list[dict[str, Any]] = Field(default_factory=list)
    figures: dict[str, Figure] = Field(default_factory=dict)
    sections: list[Section] = Field(default_factory=list)
    timings: dict[str, float] = Field(default_factory=dict)
    threads: int | None = None
    versions: dict[str, str] = Field(default_factory=library_versions)
    created: str = Field(default_factory=_now)
    _pngs: dict[str, bytes] = PrivateAttr(default_factory=dict)

    # ------------------------------------------------------------------ building
    def add_table(self, name: str, columns: Sequence[str], rows: Sequence[Sequence[Any]], caption: str = "") -> str:
        """Store a table under ``name`` (a file-name-safe slug); returns the name."""
        _check_slug(name, "table")
        self.tables[name] = Table(
            columns=[str(c) for c in columns], rows=[[plain(v) for v in row] for row in rows], caption=caption
        )
        return name

    def add_figure(self, name: str, png: bytes, caption: str = "") -> str:
        """Keep a PNG to be written as ``figures/<name>.png``; returns the name."""
        _check_slug(name, "figure")
        self.figures[name] = Figure(path=f"figures/{name}.png", caption=caption)
        self._pngs[name] = png
        return name

    def add_section(self, title: str, text: str = "", tables: Sequence[str] = (), figures: Sequence[str] = ()) -> Section:
        """Append a report section referring to tables and figures already added."""
        missing = [t for t in tables if t not in self.tables] + [f for f in figures if f not in self.figures]
        if missing:
            raise KeyError(f"section {title!r} refers to unknown tables/figures: {missing}")
        section = Section(title=title, text=text, tables=list(tables), figures=list(figures))
        self.sections.append(section)
        return section

    @contextmanager
    def timed(self, name: str, detail: str = "", words: str = "") -> Iterator[None]:
        """Add the wall-clock seconds of the block to ``timings[name]`` (``recprivacy.timing.timed``);
        the block is the stage ``name`` of the run (``recprivacy.progress.stage``), announced in
        ``words`` (default: the name's, ``matrix:fit DPMF`` as ``fit DPMF``, ``load_data`` as
        ``load data``) followed by ``: detail``."""
        words = words or name.split(":", 1)[-1].replace("_", " ")
        stage(f"{words}: {detail}" if detail else words, key=name)
        with timed(self.timings, name):
            yield

    def write(self, out_root: str | Path) -> Path:
        """Write the run folder (``config.yaml``, ``results.json``, ``report.md``,
        ``report.html``, figures, tables) under ``out_root``, as the CLI does.

        Parameters
        ----------
        out_root:
            Folder of run folders (created if missing).

        Returns
        -------
        Path
            The new run folder (see :func:`write_run`).
        """
        return write_run(self, out_root)

    def figure_png(self, name: str) -> bytes | None:
        """PNG bytes of a figure added in this process (None after loading from disk)."""
        return self._pngs.get(name)

    # ------------------------------------------------------------------ serialising
    def to_document(self) -> dict[str, Any]:
        """The results document: plain JSON-compatible dict (what ``results.json`` holds)."""
        return self.model_dump(mode="json")

    def to_json(self) -> str:
        return self.model_dump_json(indent=2)

    @classmethod
    def from_json(cls, text: str, source: str | Path = "results.json") -> "Results":
        try:
            results = cls.model_validate_json(text)
        except ValidationError as err:
            first = err.errors(include_url=False)[0]
            key = ".".join(str(p) for p in first["loc"])
            problem = f"{key}: {first['msg']}" if key else first["msg"]
            raise DataError(f"not a recprivacy results file: {problem}", source) from None
        problem = results.report_problem()
        if problem:
            raise DataError(f"not a recprivacy results file: {problem}", source)
        return results

    def report_problem(self) -> str | None:
        """What keeps this (read) results file from being a whole report: a part every run
        writes that is missing, or a table row without one cell per column (None: nothing)."""
        missing = [key for key in REPORT_PARTS if key not in self.model_fields_set]
        if missing:
            return f"{missing[0]}: missing; expected the {', '.join(REPORT_PARTS)} every run writes"
        for name, table in self.tables.items():
            for i, row in enumerate(table.rows):
                if len(row) != len(table.columns):
                    return f"tables.{name}.rows.{i}: {len(row)} cells; expected {len(table.columns)}, one per column"
        return None


def _check_slug(name: str, kind: str) -> None:
    if not SLUG.match(name):
        raise ValueError(f"{kind} name {name!r} must be a slug of letters, digits, '.', '_' or '-'")


# ---------------------------------------------------------------------------- run folders


def run_folder_name(results: Results) -> str:
    """``<YYYYmmdd-HHMMSS>-<name>`` from the creation time of the results."""
    stamp = datetime.fromisoformat(results.created).strftime("%Y%m%d-%H%M%S")
    return f"{stamp}-{results.name}"


def write_run(results: Results, out_root: str | Path) -> Path:
    """Write a complete run folder under ``out_root`` atomically and return its path.

    If ``<time>-<name>`` already exists, ``-2``, ``-3``, ... is appended. Staging folders of
    writers that died before finishing are removed first.
    """
    out_root = Path(out_root)
    created_root = not out_root.exists()
    out_root.mkdir(parents=True, exist_ok=True)
    remove_stale_staging(out_root)
    final = run_folder_name(results)
    staging = staging_folder(out_root, final)
    try:
        staging.mkdir()
        write_contents(results, staging)
        return _publish(staging, out_root, final)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        if created_root and not any(out_root.iterdir()):
            out_root.rmdir()
        raise


def write_contents(results: Results, folder: Path) -> None:
    """Every file of a finished run folder (figures, ``config.yaml``, ``results.json``, the report) into ``folder``."""
    (folder / "figures").mkdir()
    for name, figure in results.figures.items():
        png = results.figure_png(name)
        if png is None:
            raise ValueError(f"figure {name!r} has no image data in this process")
        (folder / figure.path).write_bytes(png)
    (folder / "config.yaml").write_text(yaml.safe_dump(results.config, sort_keys=False), encoding="utf-8")
    (folder / "results.json").write_text(results.to_json(), encoding="utf-8")
    write_report(results.to_document(), folder)


def _publish(staging: Path, out_root: Path, final: str) -> Path:
    for n in range(1, 1000):
        target = out_root / (final if n == 1 else f"{final}-{n}")
        if target.exists():
            continue
        try:
            os.rename(staging, target)
        except OSError:
            if target.exists():
                continue
            raise
        return target
    raise FileExistsError(f"{out_root / final}: too many runs with this name and time")


def load_results(run_dir: str | Path) -> Results:
    """Read ``results.json`` of a run folder (one-line ``DataError`` if absent or invalid)."""
    path = Path(run_dir) / "results.json"
    if Path(run_dir).is_file():
        raise DataError("is a file; expected a run folder (the folder holding results.json)", run_dir)
    if not Path(run_dir).is_dir():
        raise DataError("run folder not found", run_dir)
    if is_staging(run_dir):
        raise DataError("is the staging folder of a run still being written or of a killed writer; "
                        "expected a finished run folder (without '.partial-')", run_dir)  # fmt: skip
    if not path.is_file() and (Path(run_dir) / "config.yaml").is_file():
        raise DataError("an unfinished run (no results.json yet); continue it with: recprivacy run --resume "
                        f"{run_dir}", run_dir)  # fmt: skip
    if not path.is_file():
        raise DataError("results.json not found; expected a run folder written by recprivacy", run_dir)
    return Results.from_json(path.read_text(encoding="utf-8"), path)
