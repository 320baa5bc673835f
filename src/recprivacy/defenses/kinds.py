"""The one protocol every defence follows (docs/architecture.md, "The three kinds of defence").

A defence is one of three kinds, named by its ``kind`` class attribute:

* ``"training"`` -- a training-time engine that wraps any recommender it is given and trains a
  copy under privacy noise (``dp_engine.make_private`` / ``PrivateRecommender``, the SR-GNN
  engines ``DPSGD`` and ``EdgeRand``), or a model defined by its paper that privatises its own
  training (``DPMF``, Hua et al. 2015; ``DIPSGNN``, paper 002). It is a ``Recommender``:
  ``fit(train) -> self``, then ``score`` / ``recommend``;
* ``"transform"`` -- a transform of data, lists or uploads: ``fit(...) -> self`` learns what it
  needs, and one verb applies it (``PopularityRandomization.lists``,
  ``ExposurePerturbation.perturb``, ``UPCSDG.generate``);
* ``"federated"`` -- a federated perturber the protocol calls from its hooks
  (``federated/protocol.py``): the upload noise of ``apm.ClippedNoise``, the feature
  randomiser, objective noise and baselines of ``federated_dp``.

Every defence states its claim with one signature,
``privacy_statement(context: StatementContext | None = None) -> PrivacyStatement``:
``context`` (``privacy.accounting.StatementContext``) carries how it was deployed (rounds,
local epochs, feature width, upload sizes, δ), ``None`` its defaults; several guarantees come
as one statement whose ``parts`` name them.
"""

from __future__ import annotations

from typing import ClassVar, Literal, Protocol, get_args, runtime_checkable

from recprivacy.privacy.accounting import PrivacyStatement, StatementContext

DefenceKind = Literal["training", "transform", "federated"]
#: the three kinds, in the order of the module docstring
KINDS: tuple[str, ...] = get_args(DefenceKind)


@runtime_checkable
class Defence(Protocol):
    """What every defence class has: its kind and its claim (module docstring)."""

    kind: ClassVar[DefenceKind]

    def privacy_statement(self, context: StatementContext | None = None) -> PrivacyStatement:
        """The defence's claim in ``context`` (``None``: ``StatementContext()``)."""
        ...
