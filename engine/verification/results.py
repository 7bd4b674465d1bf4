"""The outcome of checking one evidence item at one commit."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from engine.verification.successors import Successor

HOLDS = "holds"
GONE = "gone"
ERROR = "error"
UNCHECKED = "unchecked"
STATES = (HOLDS, GONE, ERROR, UNCHECKED)


@dataclass(frozen=True)
class CheckResult:
    """``path``/``start_line``/``end_line`` say where the evidence is *now*.

    ``detail`` is a short human sentence: what moved, what is gone, or what
    went wrong and what to do.
    """

    state: str
    path: str | None = None
    start_line: int | None = None
    end_line: int | None = None
    detail: str = ""
    # Figures a check measured beside its verdict (a submodule pin's history), as plain JSON data.
    facts: dict = field(default_factory=dict, compare=False, hash=False)
    # For evidence that is gone: the code that replaced it (``successors``), when it can be told.
    successor: Successor | None = field(default=None, compare=False, hash=False)

    def __post_init__(self) -> None:
        if self.state not in STATES:
            raise ValueError(f"unknown check state {self.state!r}; expected one of {STATES}")


def holds(
    path: str | None, detail: str, start_line: int | None = None, end_line: int | None = None, *, facts=None
) -> CheckResult:
    return CheckResult(HOLDS, path, start_line, end_line, detail, facts or {})


def gone(
    path: str | None, detail: str, start_line: int | None = None, end_line: int | None = None, *, facts=None,
    successor: Successor | None = None,
) -> CheckResult:
    return CheckResult(GONE, path, start_line, end_line, detail, facts or {}, successor)


def error(detail: str, *, facts=None) -> CheckResult:
    return CheckResult(ERROR, None, None, None, detail, facts or {})


def unchecked(detail: str) -> CheckResult:
    return CheckResult(UNCHECKED, None, None, None, detail)
