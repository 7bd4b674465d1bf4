"""What replaced evidence that is gone, as every interface shows it. The engine finds it while it
verifies and the result stores it (`EvidenceResult.successor`); `successor_read` is the one
reading of that row, so the finding page, the decide form, the needs-a-decision queue, the API,
`verify --json`, SARIF, the check run's annotations, the review-thread replies and the forges'
notes cannot say different things about it."""
from dataclasses import dataclass

from core import vocabulary as v
from engine.verification.successors import Successor


@dataclass(frozen=True)
class SuccessorView:
    """A gone item's successor at the commit it was verified at (``sha``)."""

    successor: Successor
    sha: str

    @property
    def kind(self) -> str:
        return self.successor.kind

    @property
    def label(self) -> str:
        return v.successor_label(self.kind)

    @property
    def location(self) -> str:
        """Where the successor is (`path:40–44`; the path alone for a deleted file)."""
        successor = self.successor
        return v.location(successor.path, successor.start_line, successor.end_line)

    @property
    def recorded_location(self) -> str:
        """Where the lines it replaced were, at the commit the evidence was recorded at."""
        successor = self.successor
        return v.location(successor.recorded_path, successor.recorded_start, successor.recorded_end)

    @property
    def sentence(self) -> str:
        """"Rewritten at abc12345: now src/x.py:40–44", as every interface says it."""
        successor = self.successor
        return v.successor_sentence(
            kind=successor.kind, short_sha=self.sha[:8], where=self.location, larger=successor.larger,
            similarity=successor.similarity,
        )

    @property
    def shows_lines(self) -> bool:
        """Whether it has lines to show beside those it replaced (a removal or a deleted file has none)."""
        return self.successor.start_line is not None and self.successor.end_line is not None

    def as_data(self) -> dict:
        """The successor as the API and `verify --json` give it."""
        successor = self.successor
        data = {
            "kind": successor.kind,
            "path": successor.path,
            "start_line": successor.start_line,
            "end_line": successor.end_line,
            "larger": successor.larger,
            "recorded": {
                "path": successor.recorded_path,
                "start_line": successor.recorded_start,
                "end_line": successor.recorded_end,
            },
            "summary": self.sentence,
        }
        if successor.similarity is not None:
            data["similarity"] = successor.similarity
        return data


def successor_read(data: dict | None, *, sha: str) -> SuccessorView | None:
    """The stored successor of a result verified at commit ``sha`` (full SHA), or None."""
    if not data:
        return None
    return SuccessorView(Successor.from_data(data), sha)
