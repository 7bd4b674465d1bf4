"""Gitlink evidence: a submodule is (still) pinned at a given commit."""

from __future__ import annotations

import re

from reviews.git.errors import RecheckError
from reviews.git import GitReader, validate_repo_path

from findings.verification.results import CheckResult, gone, holds
from findings.verification.specs import EvidenceSpec

_PIN = re.compile(r"^[0-9a-f]{7,64}$")
_SHOWN = 8  # SHA characters shown in details


def check_gitlink(reader: GitReader, spec: EvidenceSpec, target: str) -> CheckResult:
    if not spec.path:
        raise RecheckError("gitlink evidence needs the submodule path")
    path = validate_repo_path(spec.path)
    pin = spec.sha.strip().lower() if isinstance(spec.sha, str) else ""
    if not _PIN.fullmatch(pin):
        raise RecheckError(
            f"gitlink evidence needs the pinned commit SHA (7 or more hex characters), not {spec.sha!r}"
        )
    entry = reader.tree_entry(target, path)
    if entry is None:
        return gone(path, f"{path} no longer exists")
    if entry.type != "commit":
        now = "a directory" if entry.type == "tree" else "a file"
        return gone(path, f"{path} is no longer a submodule (it is now {now})")
    if entry.sha.startswith(pin):
        return holds(path, f"still pinned at {entry.sha[:_SHOWN]}")
    return gone(path, f"pin moved from {pin[:_SHOWN]} to {entry.sha[:_SHOWN]}")
