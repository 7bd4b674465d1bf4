"""The one domain error type of Recheck and its specialisations, for every layer above the plain
ones: the git layer's and the engine's errors are defined with those layers (so they import without
Django or Celery) and re-exported here, with the errors of the services.

Every message says what is wrong and what to do about it, because these messages end up in front
of users (forms, verification details, logs).
"""

from __future__ import annotations

from findings.verification.errors import InvalidPattern
from reviews.git.errors import AmbiguousCommit, CommitNotFound, RecheckError, RepositoryError, UnsafePath

__all__ = [
    "AmbiguousCommit",
    "BundleError",
    "CommitNotFound",
    "FindingError",
    "InvalidPattern",
    "RecheckError",
    "RepositoryError",
    "ResolutionError",
    "UnsafePath",
]

class ResolutionError(RecheckError):
    """A status change of a finding that cannot be made. ``field`` names the input at fault when it
    is not the status itself (``"commit"`` for a SHA that names no usable commit)."""

    def __init__(self, message: str, *, field: str = "status") -> None:
        self.field = field
        super().__init__(message)


class BundleError(RecheckError):
    """A review bundle that cannot be imported. ``field`` names the offending field."""

    def __init__(self, field: str, message: str) -> None:
        self.field = field
        self.message = message
        super().__init__(f"{field}: {message}" if field else message)


class FindingError(RecheckError):
    """A finding or its evidence that cannot be saved as given. ``field`` names the input at fault
    the way a bundle does (``number``, ``evidence[2].commit``)."""

    def __init__(self, field: str, message: str) -> None:
        self.field = field
        self.message = message
        super().__init__(f"{field}: {message}" if field else message)
