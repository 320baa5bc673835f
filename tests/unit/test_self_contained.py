"""The repository explains itself: no file points a reader at a document the repository does
not contain (the papers' implementation notes and their numbered decisions, the house plan), and
every pointer into ``docs/decisions.md`` names a section or an entry that is there."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCANNED = ("src", "tests", "benchmarks", "docs", "configs", "README.md", "BENCHMARKS.md")
SUFFIXES = {".py", ".md", ".yaml", ".yml", ".txt", ".toml", ".cfg", ".json", ".html", ".j2"}
SKIPPED = {"__pycache__", "out", ".egg-info"}
#: hashlib's names and the exposure benchmark's record field: a "digest" that is a hash
HASH_NAMES = re.compile(r"hexdigest|file_digest|pairs_digest")
#: documents outside the repository: the papers' notes (a "digest" of each paper), the papers'
#: texts, the house plan. Data paths (``../shared/datasets``) are where data live, not documents.
OUTSIDE = re.compile(r"digest|shared/papers|DESIGN\.md|\.notes\.md", re.I)
POINTER = re.compile(r"decisions\.md[,:;]?\s*\(?\s*\"([^\"]+)\"")
THIS = Path(__file__).resolve()


def scanned_files() -> list[Path]:
    files = []
    for name in SCANNED:
        path = ROOT / name
        found = [path] if path.is_file() else path.rglob("*")
        files += [p for p in found if p.is_file() and p.suffix in SUFFIXES and p.resolve() != THIS
                  and not any(part in SKIPPED or part.endswith(".egg-info") for part in p.relative_to(ROOT).parts)]
    return sorted(files)


def outside_references(text: str) -> list[str]:
    """Each line that cites a document outside the repository."""
    return [line.strip() for line in text.splitlines() if OUTSIDE.search(HASH_NAMES.sub("", line))]


def pointers(text: str) -> list[str]:
    """The names quoted after ``decisions.md``, line breaks and comment marks folded away."""
    return [" ".join(name.replace("#", " ").split()) for name in POINTER.findall(text)]


def decision_entries() -> set[str]:
    """Headings and the lead of each entry of ``docs/decisions.md`` (``- **lead**`` or ``- lead:``)."""
    text = (ROOT / "docs" / "decisions.md").read_text()
    heads = re.findall(r"^#+ (.+?)\s*$", text, re.M)
    leads = re.findall(r"^\s*- \*\*(.+?)\*\*", text, re.M) + re.findall(r"^\s*- ([^*:\n]+):", text, re.M)
    return {" ".join(h.split()) for h in heads + leads}


def test_the_scan_reaches_the_source_the_tests_and_the_docs() -> None:
    names = {str(p.relative_to(ROOT)) for p in scanned_files()}
    assert {"src/recprivacy/cli.py", "docs/decisions.md", "README.md", "tests/unit/test_layering.py"} <= names


def test_no_file_refers_to_a_document_outside_the_repository() -> None:
    found = {str(p.relative_to(ROOT)): lines for p in scanned_files() if (lines := outside_references(p.read_text(errors="replace")))}
    assert found == {}


@pytest.mark.parametrize("line, cited", [
    ("Defaults follow the digest: d = 100.", True),
    ("(digest 002, decision 8)", True),
    ("see /work/shared/papers/002.notes.md", True),
    ("(the digest's default)", True),
    ("The house plan (DESIGN.md) says so.", True),
    ('return h.hexdigest()[:16]; record["pairs_digest"]; hashlib.file_digest(fh, "sha256")', False),
    ("data_dir: ../shared/datasets; --data-dir /work/shared/datasets", False),
])
def test_the_checker_tells_an_outside_reference_from_a_hash(line: str, cited: bool) -> None:
    assert bool(outside_references(line)) is cited


def test_every_pointer_into_decisions_md_names_an_entry_there() -> None:
    entries = decision_entries()
    missing = {}
    for path in scanned_files():
        for name in pointers(path.read_text(errors="replace")):
            if not any(entry.startswith(name) for entry in entries):
                missing.setdefault(str(path.relative_to(ROOT)), []).append(name)
    assert missing == {}


def test_a_pointer_split_over_lines_is_read_whole() -> None:
    text = 'choices (docs/decisions.md, "Federated attribute inference and APM\n# (paper 004)") are'
    assert pointers(text) == ["Federated attribute inference and APM (paper 004)"]
    assert "Federated attribute inference and APM (paper 004)" in decision_entries()
