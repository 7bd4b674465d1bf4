"""The one domain error type of Recheck and its few specialisations.

Every message says what is wrong and what to do about it, because these
messages end up in front of users (forms, verification details, logs).
"""

from __future__ import annotations

from collections.abc import Iterable


class RecheckError(Exception):
    """Something Recheck cannot do with the input it was given."""


class RepositoryError(RecheckError):
    """A repository or clone URL is unreachable, unsafe or unusable."""


class CommitNotFound(RecheckError):
    """A revision does not name a commit in the repository."""


class AmbiguousCommit(RecheckError):
    """An abbreviated SHA matches more than one commit."""

    def __init__(self, prefix: str, candidates: Iterable[str]) -> None:
        self.prefix = prefix
        self.candidates = tuple(sorted(candidates))
        super().__init__(
            f"abbreviated SHA {prefix!r} is ambiguous: it matches "
            f"{', '.join(self.candidates)}; give more characters of the SHA"
        )


class UnsafePath(RecheckError):
    """A repository path is absolute, escapes the tree or is malformed."""


class InvalidPattern(RecheckError):
    """A regular expression or glob cannot be compiled."""


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
