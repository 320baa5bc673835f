"""The layering of docs/architecture.md (imports flow downward only), checked on the source:
no defence imports the report, the studies or the federated protocol; no model imports
``privacy/``, the defences or the studies; every benchmark script reaches the studies only
through their package faces (docs/architecture.md, "What a benchmark may import").
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


def test_paper_numbers_are_read_only_through_the_kit_comparator() -> None:
    """``experiments.reference`` reads the files; only ``kit.compare`` looks numbers up in them
    (``paper_file`` finds a paper's ``checks.yaml`` too, so it stays open to the studies)."""
    readers = ("recprivacy.experiments.reference.reference", "recprivacy.experiments.reference.PaperReference",
               "recprivacy.experiments.reference.load_reference")
    files = [*PACKAGE.rglob("*.py"), *(ROOT / "benchmarks").glob("*.py")]
    used = {str(p.relative_to(ROOT)): sorted(set(readers) & imported_modules(p)) for p in files}
    assert {p: m for p, m in used.items() if m} == {"src/recprivacy/experiments/kit/compare.py": sorted(readers[:2])}


EXPERIMENTS = "recprivacy.experiments"
BENCHMARKS = ROOT / "benchmarks"
#: deliberate internal measurements: the script, why it reaches inside, and the only internal
#: modules it may import (anything further still fails)
INTERNAL_MEASUREMENTS = {
    "dpsgd_chunks.py": ("calibrates the cost model of DP-SGD's chunking (one function) on the DIPSGNN study's "
                        "own prepared data and method builder",
                        {"recprivacy.experiments.dipsgnn.evaluate", "recprivacy.experiments.dipsgnn.methods",
                         "recprivacy.experiments.dipsgnn.sequences", "recprivacy.experiments.runner"}),
    "endpoint_audit.py": ("times the endpoint audit over HTTP against the same audit in process, so it drives the "
                          "served model and the audit over it separately",
                          {"recprivacy.experiments.endpoint.audit", "recprivacy.experiments.endpoint.service",
                           "recprivacy.experiments.runner", "recprivacy.experiments.target"}),
    "scale.py": ("times each stage of the audit from the inside by wrapping the audit study's stages and sections",
                 {"recprivacy.experiments.audit.registry", "recprivacy.experiments.audit.study"}),
}


def is_face(module: str) -> bool:
    """``recprivacy``, ``recprivacy.experiments`` or a package directly below it (its ``__init__``)."""
    parts = module.split(".")
    return module in ("recprivacy", EXPERIMENTS) or (
        module.startswith(EXPERIMENTS + ".") and len(parts) == 3 and (PACKAGE / parts[1] / parts[2] / "__init__.py").is_file())


def reaches_inside(path: Path) -> list[str]:
    """What a script imports from the studies other than the names a package face exports (its
    ``__all__``): ``module`` for a module inside a study, ``module.name`` for a name not exported,
    and any private (``_``) name imported from the package."""
    out: list[str] = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == "recprivacy":
            names = [a.name for a in node.names]
            out += [f"{node.module}.{n}" for n in names if n.startswith("_")]
            if is_face(node.module):
                exported = set(importlib.import_module(node.module).__all__)
                out += [f"{node.module}.{n}" for n in names if n not in exported and not n.startswith("_")]
            elif node.module.startswith(EXPERIMENTS + "."):
                out.append(node.module)
        elif isinstance(node, ast.Import):
            out += [a.name for a in node.names if a.name.startswith(EXPERIMENTS + ".") and not is_face(a.name)]
    return sorted(set(out))


def test_every_benchmark_uses_the_package_faces() -> None:
    """Every script in ``benchmarks/``: a study is reached through its package's exports, never
    through one of its modules, except the internal measurements listed with their reasons."""
    scripts = sorted(BENCHMARKS.glob("*.py"))
    assert len(scripts) >= 27 and set(INTERNAL_MEASUREMENTS) <= {p.name for p in scripts}
    beyond = {}
    for path in scripts:
        allowed = INTERNAL_MEASUREMENTS.get(path.name, ("", set()))[1]
        if names := [m for m in reaches_inside(path) if m not in allowed]:
            beyond[path.name] = names
    assert beyond == {}


def test_each_listed_exception_still_needs_its_exception() -> None:
    """An internal measurement that no longer reaches a listed module must lose it from the list."""
    stale = {name: sorted(allowed - set(reaches_inside(BENCHMARKS / name)))
             for name, (_, allowed) in INTERNAL_MEASUREMENTS.items()}
    assert {name: mods for name, mods in stale.items() if mods} == {}


def test_the_face_checker_sees_a_study_module_and_an_unexported_name(tmp_path: Path) -> None:
    bad = tmp_path / "bad.py"
    bad.write_text("from recprivacy.experiments.membership.lab import LabOptions\n"
                   "from recprivacy.experiments.federated import run_federated, no_such_export\n"
                   "from recprivacy.models import make_model\n"
                   "def main():\n    import recprivacy.experiments.upcsdg.options\n")
    assert reaches_inside(bad) == ["recprivacy.experiments.federated.no_such_export",
                                   "recprivacy.experiments.membership.lab", "recprivacy.experiments.upcsdg.options"]
