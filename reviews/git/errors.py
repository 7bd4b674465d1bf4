"""The error types of the git layer, and the one domain error type of Recheck they specialise.

`RecheckError` is defined here, in the lowest layer, so that every layer can raise it without
importing Django or Celery; `recheck.errors` re-exports it for the layers above. Every message says
what is wrong and what to do about it, because these messages end up in front of users (forms,
verification details, logs).
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
