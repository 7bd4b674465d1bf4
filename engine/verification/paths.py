"""Path evidence (a file or directory exists / is missing), and following renames."""

from __future__ import annotations

from core.errors import RecheckError
from engine.git import GitReader, validate_repo_path

from engine.verification.results import CheckResult, gone, holds
from engine.verification.specs import EXISTS, MISSING, EvidenceSpec
from engine.verification.textcaches import cache_for


def current_path(reader: GitReader, commit: str | None, target: str, path: str) -> tuple[str | None, str | None]:
    """Where the file ``path`` (as of ``commit``) is at ``target``.

    Returns (path at target, old path if git sees a rename) or (None, None)
    when there is no such file at the target. Without ``commit`` renames
    cannot be followed.
    """
    cache = cache_for(reader)
    target = reader.resolve(target)
    if cache.file(reader, target, path) is not None:
        return path, None
    if commit:
        new_path = cache.renames(reader, reader.resolve(commit), target).get(path)
        if new_path is not None:
            return new_path, path
    return None, None


def check_path(reader: GitReader, spec: EvidenceSpec, target: str) -> CheckResult:
    if not spec.path:
        raise RecheckError("path evidence needs the path it is about")
    path = validate_repo_path(spec.path)
    expect = spec.expect or EXISTS
    if expect not in (EXISTS, MISSING):
        raise RecheckError(f"path expectation {expect!r} is unknown; use 'exists' or 'missing'")
    entry = reader.tree_entry(target, path)
    if expect == MISSING:
        if entry is None:
            return holds(path, f"{path} is still missing")
        return gone(path, f"{path} now exists")
    if entry is not None:
        return holds(path, f"{path} exists")
    if spec.commit:
        renamed = cache_for(reader).renames(reader, reader.resolve(spec.commit), reader.resolve(target)).get(path)
        if renamed is not None:
            return gone(path, f"{path} was renamed to {renamed}")
    return gone(path, f"{path} no longer exists")
