"""What an evidence item claims, as plain data (the Django model maps onto this)."""

from __future__ import annotations

from dataclasses import dataclass

SNIPPET = "snippet"
PATTERN = "pattern"
PATH = "path"
GITLINK = "gitlink"
NOTE = "note"
KINDS = (SNIPPET, PATTERN, PATH, GITLINK, NOTE)

PRESENT, ABSENT = "present", "absent"  # pattern expectations
EXISTS, MISSING = "exists", "missing"  # path expectations

@dataclass(frozen=True)
class EvidenceSpec:
    """One evidence item.

    - snippet: ``path``, ``start_line``..``end_line`` and ``text`` as recorded
      at ``commit`` (``text`` may be empty: it is then read at ``commit``).
    - pattern: ``path`` is a file path or a glob (``src/**/*.py``), ``regex``
      a Python regular expression (MULTILINE), ``expect`` present|absent.
    - path: ``path`` and ``expect`` exists|missing.
    - gitlink: submodule ``path`` pinned at ``sha`` (7 or more hex digits).
    - note: free text, not checkable by machine.

    ``commit`` (full SHA, or None) is where the evidence was recorded; it lets
    checks follow renames and moves between that commit and the target.
    """

    kind: str
    commit: str | None = None
    path: str | None = None
    start_line: int | None = None
    end_line: int | None = None
    text: str = ""
    regex: str = ""
    expect: str | None = None
    sha: str | None = None
