"""The one domain error type of Recheck and its specialisations, for every layer.

Plain Python, like the rest of `core`: the engine raises these without importing Django or Celery,
and the services, the API, the admin and the commands turn them into clear messages. Every
message says what is wrong and what to do about it, because these messages end up in front of
users (forms, verification details, logs).
"""

from __future__ import annotations

from collections.abc import Iterable

# What a request gets while the database is down or restarting: a 503 with Retry-After, since
# nothing is wrong with the request and asking again shortly works.
DATABASE_UNAVAILABLE = "The database is not answering; nothing was changed. Retry in a moment."
DATABASE_RETRY_AFTER_SECONDS = 30


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


class RelationError(RecheckError):
    """A tag or a link between findings that cannot be recorded."""


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


class ReportError(RecheckError):
    """A CI report that cannot be recorded: malformed, too large, invalid against its format, for
    a commit the repository does not have. ``field`` names the part at fault (``file``, ``commit``,
    ``conclusion``, ``runs[0].results[3].locations[0]``); ``status`` is the HTTP status the API
    answers with."""

    def __init__(self, field: str, message: str, *, status: int = 400) -> None:
        self.field = field
        self.message = message
        self.status = status
        super().__init__(f"{field}: {message}" if field else message)


class FindingError(RecheckError):
    """A finding or its evidence that cannot be saved as given. ``field`` names the input at fault
    the way a bundle does (``number``, ``evidence[2].commit``)."""

    def __init__(self, field: str, message: str) -> None:
        self.field = field
        self.message = message
        super().__init__(f"{field}: {message}" if field else message)


class PolicyError(RecheckError):
    """A merge policy, or an override of the gate, that cannot be made as given. ``field`` names
    the input at fault (``cleanup_due_days``, ``commit``, ``note``)."""

    def __init__(self, field: str, message: str) -> None:
        self.field = field
        self.message = message
        super().__init__(message)
