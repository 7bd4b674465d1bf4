"""The error types of the verification engine (plain Python, like the engine)."""

from reviews.git.errors import RecheckError


class InvalidPattern(RecheckError):
    """A regular expression or glob cannot be compiled."""
