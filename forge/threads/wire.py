"""A review thread as a forge has it, in plain values: what every forge's wire module answers
(`forge.github.threads`, `forge.gitlab.threads`) and the inbox (`forge.threads.sync`) reads, so the
inbox depends on no forge's shapes."""
from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime


@dataclass(frozen=True)
class WireComment:
    """One review comment as the forge has it."""

    id: int
    in_reply_to_id: int | None
    path: str
    side: str
    subject_type: str
    commit_id: str
    original_commit_id: str
    line: int | None
    start_line: int | None
    original_line: int | None
    original_start_line: int | None
    diff_hunk: str
    body: str
    author_login: str
    author_id: int | None
    html_url: str
    created_at: datetime | None
    updated_at: datetime | None

    @property
    def root_id(self) -> int:
        """The thread's key: every reply names the thread's first comment (GitHub says so itself;
        a GitLab note is given the first note of its discussion)."""
        return self.in_reply_to_id or self.id


@dataclass(frozen=True)
class WireThread:
    """A thread's own state: its id on the forge (GitHub's GraphQL id, GitLab's discussion id)."""

    node_id: str
    resolved: bool
    outdated: bool
