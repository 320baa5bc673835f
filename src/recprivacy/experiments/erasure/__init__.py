"""Erasure verification (issue 51): were deleted users really forgotten? :mod:`.verify` attacks
forgotten users, retained members and never-members on the model after the deletion; :mod:`.run`
is ``Erasure`` (``Audit.erasure``) and its report."""

from recprivacy.experiments.erasure.run import Erasure

__all__ = ["Erasure"]
