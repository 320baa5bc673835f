"""The house plan's layering (DESIGN.md: imports flow downward only), checked on the source:
no defence imports the report, the studies or the federated protocol; no model imports
``privacy/``, the defences or the studies; the DIPSGNN benchmarks call the study's public entry.
"""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "src" / "recprivacy"


def imported_modules(path: Path) -> set[str]:
    """Every module a file imports (``from x import y`` gives ``x`` and ``x.y``)."""
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            out.add(node.module)
            out.update(f"{node.module}.{a.name}" for a in node.names)
    return out


def reaches(path: Path, floors: tuple[str, ...]) -> list[str]:
    return sorted(m for m in imported_modules(path) if any(m == f or m.startswith(f + ".") for f in floors))


@pytest.mark.parametrize("room, above", [
    ("defenses", ("recprivacy.report", "recprivacy.experiments", "recprivacy.federated")),
    ("models", ("recprivacy.privacy", "recprivacy.defenses", "recprivacy.experiments", "recprivacy.report")),
])
def test_no_module_reaches_up(room: str, above: tuple[str, ...]) -> None:
    offenders = {str(p.relative_to(PACKAGE)): reaches(p, above) for p in (PACKAGE / room).rglob("*.py")}
    assert {p: m for p, m in offenders.items() if m} == {}


def test_the_checker_sees_an_upward_import(tmp_path: Path) -> None:
    bad = tmp_path / "bad.py"
    bad.write_text("from recprivacy.federated.protocol import client_noise\nimport recprivacy.report.markdown\n")
    assert reaches(bad, ("recprivacy.federated", "recprivacy.report")) == [
        "recprivacy.federated.protocol", "recprivacy.federated.protocol.client_noise", "recprivacy.report.markdown"]


def test_dipsgnn_benchmarks_use_the_public_study_entry() -> None:
    internals = ("build_method", "evaluate_samples", "prepare_sequences", "run_method", "sweep_point", "backbone_params")
    used = {p.name: sorted(m.rsplit(".", 1)[1] for m in imported_modules(p) if m.startswith("recprivacy.experiments.dipsgnn.")
                           and m.rsplit(".", 1)[1] in internals) for p in (ROOT / "benchmarks").glob("dipsgnn*.py")}
    assert len(used) == 3 and all(not names for names in used.values()), used


def test_paper_numbers_are_read_only_through_the_kit_comparator() -> None:
    """``experiments.reference`` reads the files; only ``kit.compare`` looks numbers up in them
    (``paper_file`` finds a paper's ``checks.yaml`` too, so it stays open to the studies)."""
    readers = ("recprivacy.experiments.reference.reference", "recprivacy.experiments.reference.PaperReference",
               "recprivacy.experiments.reference.load_reference")
    files = [*PACKAGE.rglob("*.py"), *(ROOT / "benchmarks").glob("*.py")]
    used = {str(p.relative_to(ROOT)): sorted(set(readers) & imported_modules(p)) for p in files}
    assert {p: m for p, m in used.items() if m} == {"src/recprivacy/experiments/kit/compare.py": sorted(readers[:2])}


@pytest.mark.parametrize("script, study", [("exposure", "exposure"), ("upcsdg_diagnostics", "upcsdg")])
def test_study_benchmarks_import_only_the_study_package(script: str, study: str) -> None:
    """The benchmark is a command line over the names the study package exports (its
    ``__init__``), never over one of its modules."""
    package = f"recprivacy.experiments.{study}"
    inside = sorted(m for m in imported_modules(ROOT / "benchmarks" / f"{script}.py") if m.startswith(package + "."))
    exported = set(importlib.import_module(package).__all__)
    assert [m for m in inside if m.removeprefix(package + ".") not in exported] == []
