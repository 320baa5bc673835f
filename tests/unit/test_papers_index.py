"""``docs/papers.md`` maps each paper's equations and algorithms to the code: every
``module:name`` it cites must import, so the index cannot point at code that has moved."""

from __future__ import annotations

import importlib
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
INDEX = ROOT / "docs" / "papers.md"
REFERENCE = re.compile(r"`(recprivacy(?:\.\w+)*):([A-Za-z_]\w*(?:\.\w+)*)`")


def cited(text: str) -> list[tuple[str, str]]:
    """Every ``module:name`` (``name`` may be ``Class.method``) cited in backticks, in order."""
    return REFERENCE.findall(text)


def resolve(module: str, name: str) -> object:
    obj: object = importlib.import_module(module)
    for part in name.split("."):
        obj = getattr(obj, part)
    return obj


def test_the_index_cites_every_paper() -> None:
    text = INDEX.read_text()
    for paper in ("000", "001", "002", "003", "004"):
        assert re.search(rf"^## {paper}: ", text, re.M), paper
    assert len(cited(text)) >= 80


@pytest.mark.parametrize("module, name", sorted(set(cited(INDEX.read_text()))))
def test_every_cited_name_imports(module: str, name: str) -> None:
    assert callable(resolve(module, name)), f"{module}:{name}"


def test_the_parser_sees_a_missing_name() -> None:
    text = "| Eq. 1 | x | `recprivacy.privacy.mechanisms:NoSuchMechanism` |"
    ((module, name),) = cited(text)
    with pytest.raises(AttributeError):
        resolve(module, name)
