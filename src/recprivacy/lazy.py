"""A package's public names imported on first use (PEP 562 module ``__getattr__``).

``recprivacy.metrics`` and ``recprivacy.privacy`` list each name with the module that defines
it, so code that needs one light submodule (a model's ranking metrics, a federated device's
noise source: Flower starts that device's process once per message) does not pay for the
heavy ones (SciPy's statistics, scikit-learn, pandas) at import."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from importlib import import_module
from typing import Any


def lazy_getattr(package: str, home: Mapping[str, str]) -> Callable[[str], Any]:
    """The module ``__getattr__`` of ``package``: ``name`` from the module ``home[name]``;
    AttributeError naming the package for any other name."""

    def __getattr__(name: str) -> Any:
        if name in home:
            return getattr(import_module(home[name]), name)
        raise AttributeError(f"module {package!r} has no attribute {name!r}")

    return __getattr__
