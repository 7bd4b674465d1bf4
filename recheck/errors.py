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
    "EvidenceStillHolds",
    "FindingError",
    "InvalidPattern",
    "RecheckError",
    "RepositoryError",
    "ResolutionCommitError",
    "ResolutionError",
    "UnsafePath",
]

class ResolutionError(RecheckError):
    """A status change of a finding that cannot be made. ``field`` names the input at fault when it
    is not the status itself (``"commit"`` for a SHA that names no usable commit)."""

    def __init__(self, message: str, *, field: str = "status") -> None:
        self.field = field
        super().__init__(message)


class ResolutionCommitError(ResolutionError):
    """A typed SHA the repository's mirror cannot vouch for: unknown there, ambiguous (then
    ``candidates`` names the commits it could mean), or not checkable because the repository has
    not been fetched. Never taken for "fixed": a check that could not run refuses."""

    def __init__(self, message: str, *, candidates: tuple[str, ...] = ()) -> None:
        self.candidates = tuple(candidates)
        super().__init__(message, field="commit")


class EvidenceStillHolds(ResolutionError):
    """Marking a finding fixed at a commit where its latest verification says the evidence still
    holds. A form asks "mark fixed anyway?" with the verdict; the caller may go ahead only by
    confirming explicitly and saying why in a note."""

    def __init__(self, *, sha: str, verdict: str, verdict_phrase: str) -> None:
        self.sha = sha
        self.verdict = verdict
        self.verdict_phrase = verdict_phrase
        super().__init__(
            f"The evidence still holds at {sha[:12]}: its latest verification there says {verdict_phrase}. "
            "Pick the commit that fixed it, or confirm that you mark it fixed anyway and say why in a note.",
            field="still_holds",
        )


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
