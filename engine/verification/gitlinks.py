"""Gitlink evidence: a submodule pin, checked against the submodule's own history.

At the target commit the pin is read from the tree; with the submodule's mirror at hand it is then
placed on the submodule's reference branch (on it or not, how far ahead of and behind its head)
and compared with the pin at the PR's base commit (a fast-forward or not, the commits the move
adds and drops). The figures travel in the result's ``facts`` whatever the expectation, so pages
can draw the pin's history; the expectation decides what "holds" means:

- ``pinned_at``: the submodule is pinned at the recorded SHA;
- ``off_branch``: the pin is not on the reference branch;
- ``not_fast_forward``: moving from the base pin to this one drops commits.

A history that cannot be read (no repository known, a fetch that failed, a pin the mirror lacks)
makes the two history expectations an error that says why, never "gone".
"""

from __future__ import annotations

import re

from core.errors import RecheckError
from engine.git import GitReader, validate_repo_path
from engine.git.history import divergence, is_ancestor, subjects_between

from engine.verification.results import CheckResult, error, gone, holds
from engine.verification.specs import (
    GITLINK_EXPECTATIONS,
    NOT_FAST_FORWARD,
    OFF_BRANCH,
    PINNED_AT,
    EvidenceSpec,
    SubmoduleSource,
)

_PIN = re.compile(r"^[0-9a-f]{7,64}$")
_SHOWN = 8  # SHA characters shown in details
SUBJECTS = 3  # subjects kept of the commits a move adds or drops


def check_gitlink(reader: GitReader, spec: EvidenceSpec, target: str) -> CheckResult:
    if not spec.path:
        raise RecheckError("gitlink evidence needs the submodule path")
    path = validate_repo_path(spec.path)
    pin = spec.sha.strip().lower() if isinstance(spec.sha, str) else ""
    if not _PIN.fullmatch(pin):
        raise RecheckError(
            f"gitlink evidence needs the pinned commit SHA (7 or more hex characters), not {spec.sha!r}"
        )
    expect = spec.expect or PINNED_AT
    if expect not in GITLINK_EXPECTATIONS:
        raise RecheckError(f"gitlink evidence expects one of {', '.join(GITLINK_EXPECTATIONS)}, not {expect!r}")
    entry = reader.tree_entry(target, path)
    if entry is None:
        return gone(path, f"{path} no longer exists")
    if entry.type != "commit":
        now = "a directory" if entry.type == "tree" else "a file"
        return gone(path, f"{path} is no longer a submodule (it is now {now})")
    base_pin = _base_pin(reader, spec.base_commit, path)
    facts, problem = pin_history(spec.submodule, entry.sha, base_pin)
    if expect == PINNED_AT:
        if entry.sha.startswith(pin):
            return holds(path, f"still pinned at {entry.sha[:_SHOWN]}", facts=facts)
        return gone(path, f"pin moved from {pin[:_SHOWN]} to {entry.sha[:_SHOWN]}", facts=facts)
    if problem:
        return error(f"the history of {path} could not be read: {problem}", facts=facts)
    return _HISTORY_CHECKS[expect](path, facts)


def _base_pin(reader: GitReader, base_commit: str | None, path: str) -> str | None:
    """The submodule's pin at the PR's base commit, None when there is no base or no pin there."""
    if not base_commit:
        return None
    entry = reader.tree_entry(base_commit, path)
    return entry.sha if entry is not None and entry.type == "commit" else None


def pin_history(source: SubmoduleSource | None, pin: str, base_pin: str | None) -> tuple[dict, str]:
    """The figures of ``pin`` in the submodule's history, and why some could not be worked out
    ('' when all could). Whatever is known goes in the facts, so a page can say what it lacks."""
    facts: dict = {"pin": pin, "base_pin": base_pin}
    if source is None:
        problem = "no repository is known for this submodule; name it in the evidence or in .gitmodules"
        return {**facts, "problem": problem}, problem
    facts.update(repository=source.label, branch=source.branch)
    if source.as_of:
        facts["branch_as_of"] = source.as_of
    if source.problem or not source.mirror_dir:
        problem = source.problem or f"{source.label} has not been fetched"
        return {**facts, "problem": problem}, problem
    key = (pin, base_pin)
    if key not in source.memo:
        try:
            with GitReader(source.mirror_dir) as history:
                source.memo[key] = (_measure(history, source, pin, base_pin), "")
        except RecheckError as exc:
            source.memo[key] = ({"problem": str(exc)}, str(exc))
    measured, problem = source.memo[key]
    return {**facts, **measured}, problem


def _measure(history: GitReader, source: SubmoduleSource, pin: str, base_pin: str | None) -> dict:
    try:
        pin = history.resolve(pin)
    except RecheckError:
        raise RecheckError(
            f"{source.label} has no commit {pin[:_SHOWN]}; the pin names a commit its repository does not "
            "publish (fetch it again, or check the submodule's URL)"
        ) from None
    try:
        head = history.resolve(f"refs/heads/{source.branch}")
    except RecheckError:
        raise RecheckError(
            f"{source.label} has no branch {source.branch!r}; give the submodule's reference branch"
        ) from None
    against_head = divergence(history, pin, head)
    measured = {
        "pin_subject": _subject(history, pin),
        "branch_head": head,
        "on_branch": against_head.ahead == 0,
        "ahead": against_head.ahead,
        "behind": against_head.behind,
        "fork": against_head.fork,
    }
    if base_pin is None:
        return {**measured, "fast_forward": None}
    try:
        base = history.resolve(base_pin)
    except RecheckError:
        raise RecheckError(f"{source.label} has no commit {base_pin[:_SHOWN]} (the pin at the PR's base)") from None
    # One count gives both sides of the move: what the new pin adds (right) and drops (left).
    move = divergence(history, base, pin, fork=False)
    base_against_head = divergence(history, base, head, fork=False)
    return {
        **measured,
        "base_pin": base,
        "base_on_branch": base_against_head.ahead == 0,
        "base_behind": base_against_head.behind,
        "fast_forward": is_ancestor(history, base, pin),
        "added": move.behind,
        "dropped": move.ahead,
        "added_subjects": subjects_between(history, base, pin, limit=SUBJECTS) if move.behind else [],
        "dropped_subjects": subjects_between(history, pin, base, limit=SUBJECTS) if move.ahead else [],
    }


def _subject(history: GitReader, sha: str) -> str:
    lines = history.commit_info(sha).message.strip().splitlines()
    return lines[0] if lines else ""


def _off_branch(path: str, facts: dict) -> CheckResult:
    pin, branch = facts["pin"][:_SHOWN], facts["branch"]
    figures = f"{facts['ahead']} ahead of {branch}, {facts['behind']} behind"
    if not facts["on_branch"]:
        return holds(path, f"{pin} is not on {branch}: {figures}", facts=facts)
    return gone(path, f"{pin} is on {branch} ({facts['behind']} behind its head)", facts=facts)


def _not_fast_forward(path: str, facts: dict) -> CheckResult:
    if facts.get("fast_forward") is None:
        return error(
            f"there is no pin of {path} at the PR's base commit to compare with; pin the base commit "
            "(role base) where the submodule is pinned",
            facts=facts,
        )
    pin, base = facts["pin"][:_SHOWN], facts["base_pin"][:_SHOWN]
    if not facts["fast_forward"]:
        return holds(
            path, f"moving from {base} to {pin} is not a fast-forward: it adds {facts['added']} commits "
            f"and drops {facts['dropped']}", facts=facts,
        )
    return gone(path, f"moving from {base} to {pin} is a fast-forward: it adds {facts['added']} commits",
                facts=facts)


_HISTORY_CHECKS = {OFF_BRANCH: _off_branch, NOT_FAST_FORWARD: _not_fast_forward}
