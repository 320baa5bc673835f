"""recprivacy: measure and reduce privacy leakage in recommender systems.

The public API is imported lazily, so ``import recprivacy`` stays cheap::

    from recprivacy import Audit, Matrix, Target

    results = Audit(Target.from_model(my_model), interactions, members, non_members).run()
    results.write("runs")
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

__version__ = "0.1.0"

#: public name -> module that defines it
_EXPORTS = {
    "Audit": "recprivacy.experiments.audit.own",
    "Target": "recprivacy.experiments.target",
    "Matrix": "recprivacy.experiments.matrix",
    "Results": "recprivacy.experiments.results",
    "Interactions": "recprivacy.data.interactions",
    "make_private": "recprivacy.defenses.dp_engine",
}

__all__ = ["__version__", *_EXPORTS]


def __getattr__(name: str) -> Any:
    """Import a public name on first use (PEP 562)."""
    if name not in _EXPORTS:
        raise AttributeError(f"module 'recprivacy' has no attribute {name!r}")
    module = import_module(_EXPORTS[name])
    if name in ("Audit", "Target", "Matrix"):
        import_module("recprivacy.experiments")  # registers the audit sections
    return getattr(module, name)


def __dir__() -> list[str]:
    return sorted(__all__)
