"""What an evidence item claims, as plain data (the Django model maps onto this)."""

from __future__ import annotations

from dataclasses import dataclass, field

SNIPPET = "snippet"
PATTERN = "pattern"
PATH = "path"
GITLINK = "gitlink"
NOTE = "note"
CHECK = "check"
KINDS = (SNIPPET, PATTERN, PATH, GITLINK, NOTE, CHECK)

PRESENT, ABSENT = "present", "absent"  # pattern expectations
EXISTS, MISSING = "exists", "missing"  # path expectations
# Gitlink expectations, each holding while the problem it names is still there: the submodule is
# pinned at the recorded SHA; the pin is not on the reference branch; moving the pin from the one
# at the PR's base drops commits.
PINNED_AT, OFF_BRANCH, NOT_FAST_FORWARD = "pinned_at", "off_branch", "not_fast_forward"
GITLINK_EXPECTATIONS = (PINNED_AT, OFF_BRANCH, NOT_FAST_FORWARD)
# A check's expectation: it holds while the check (or the tests and results it names) fails.
FAILED = "failed"
CHECK_EXPECTATIONS = (FAILED,)


@dataclass(frozen=True)
class SubmoduleSource:
    """Where a submodule's history can be read: its mirror, named ``label`` (owner/name) in
    messages, and the branch pins are measured against. ``problem`` says why there is no mirror
    to read (it could not be fetched, or no repository is known for the submodule); ``as_of``
    when the mirror was last fetched, if it is read as it is."""

    label: str
    branch: str
    mirror_dir: str | None = None
    problem: str = ""
    # When the mirror was read without fetching it first: when it was last fetched (ISO 8601), so
    # the result says how old its copy of the branch head is. Empty when fetched for this check.
    as_of: str = ""
    # Histories already worked out through this source, by (pin, base pin): several items about
    # one pin, checked at several commits, ask git the same questions.
    memo: dict = field(default_factory=dict, compare=False, hash=False, repr=False)

@dataclass(frozen=True)
class EvidenceSpec:
    """One evidence item.

    - snippet: ``path``, ``start_line``..``end_line`` and ``text`` as recorded
      at ``commit`` (``text`` may be empty: it is then read at ``commit``).
    - pattern: ``path`` is a file path or a glob (``src/**/*.py``), ``regex``
      a Python regular expression (MULTILINE), ``expect`` present|absent.
    - path: ``path`` and ``expect`` exists|missing.
    - gitlink: submodule ``path`` pinned at ``sha`` (7 or more hex digits); ``expect`` one of
      pinned_at (the default), off_branch, not_fast_forward. ``submodule`` is where its history
      is read, ``base_commit`` the PR's base commit (its pin is the one a move starts from).
    - note: free text, not checkable by machine.
    - check: a CI check by ``check`` (the name its CI gives it), failing at ``commit``; ``tests``
      names test cases inside it and ``results`` scanner results (``CheckResultRef``), else the
      whole check's conclusion is meant; ``app`` the app its reports must come from, any if empty.

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
    submodule: SubmoduleSource | None = None
    base_commit: str | None = None
    check: str = ""
    tests: tuple[str, ...] = ()
    results: tuple[CheckResultRef, ...] = ()
    app: str = ""


@dataclass(frozen=True)
class CheckResultRef:
    """A scanner's result a check item names: its rule, and where it was reported at the item's
    commit (``start_line`` None for a result about a whole file)."""

    rule: str
    path: str
    start_line: int | None = None
