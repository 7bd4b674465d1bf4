"""Checking one evidence row at a commit with the engine: what the checks of one finding share,
and how a row becomes the engine's spec (or a result when it cannot be checked)."""
from dataclasses import dataclass, field, replace
from functools import cached_property

from core.errors import RecheckError
from engine.git import GitReader
from engine.git.history import merge_base
from engine.verification import CheckResult, EvidenceChecks, EvidenceSpec, Prepared, snippet_text_at
from findings.models import Evidence
from engine.verification.specs import CheckResultRef
from findings.services.submodules import SubmoduleMirrors
from findings.services.verification.check_reports import CheckReadings
from findings.services.verification.rows import EvidenceRow
from reviews.models import PinnedCommit, PullRequest


@dataclass
class _Context:
    """What every check of one finding at one commit shares."""

    reader: GitReader
    target: str
    pull_request: PullRequest
    submodules: SubmoduleMirrors
    checks: EvidenceChecks
    # Why the mirror could not be updated before this check, '' when it was.
    fetch_problem: str = ""
    # Snippet texts read from the repository, (evidence id, text), stored together afterwards.
    texts_read: list[tuple[int, str]] = field(default_factory=list)

    @cached_property
    def check_readings(self) -> CheckReadings:
        # Only check items read reports: loaded the first time one asks.
        return CheckReadings(self.pull_request, self.reader, self.target)

    @cached_property
    def base_commit(self) -> str | None:
        # Only gitlink evidence needs it: worked out the first time one asks.
        return _base_commit(self.pull_request, self.reader, self.target)


def _base_commit(pull_request: PullRequest, reader: GitReader, target: str) -> str | None:
    """The PR's base at `target` (where a submodule move starts from): the commit pinned as its
    base, else where `target` forks from the repository's default branch, as a forge computes a
    PR's base. None when neither is known."""
    pin = pull_request.pins.filter(role=PinnedCommit.Role.BASE).select_related("commit").order_by("pinned_at").first()
    try:
        if pin is not None:
            return reader.resolve(pin.commit.sha)
        branch = reader.resolve(f"refs/heads/{pull_request.repository.default_branch}")
        return merge_base(reader, target, branch)
    except RecheckError:
        return None


def _prepare(context: _Context, evidence: EvidenceRow) -> Prepared:
    """What checking one item needs from no file at the target: its commit resolved, its
    snippet's text read where the reviewer pinned it when the bundle left it out, the engine's
    search set up. Done while git reads the target's files (``files_prefetched``); the checks
    take the answer (``EvidenceChecks.add``)."""
    reader, checks = context.reader, context.checks
    if evidence.kind == Evidence.Kind.NOTE:
        return checks.prepare(EvidenceSpec(kind="note", text=evidence.text))
    try:
        recorded_at = reader.resolve(evidence.commit_sha)
    except RecheckError as error:
        if context.fetch_problem:
            # Not the SHA's fault: the mirror could not be brought up to date.
            return _unusable(evidence, f"Repository unreachable: {context.fetch_problem}")
        return _unusable(evidence, f"The commit this evidence was recorded at is unusable: {error}")
    if evidence.kind == Evidence.Kind.CHECK:
        spec = EvidenceSpec(
            kind=evidence.kind, commit=recorded_at, check=evidence.check_name, app=evidence.check_app,
            tests=tuple(evidence.check_tests),
            results=tuple(CheckResultRef(result["rule"], result["path"], result.get("start_line"))
                          for result in evidence.check_results),
        )
        try:
            return Prepared(spec, failed=context.check_readings.result(spec))
        except RecheckError as error:
            return _unusable(evidence, f"The check's reports could not be read: {error}")
    text = evidence.text
    if evidence.kind == Evidence.Kind.SNIPPET and not text:
        # Bundles may leave the snippet's text out: read it where the reviewer pinned it.
        try:
            text = snippet_text_at(reader, recorded_at, evidence.path, evidence.start_line, evidence.end_line)
        except RecheckError as error:
            return _unusable(evidence, f"Could not read the snippet at {evidence.commit_sha[:8]}: {error}")
        context.texts_read.append((evidence.pk, text))
    spec = EvidenceSpec(
        kind=evidence.kind,
        commit=recorded_at,
        path=evidence.path,
        start_line=evidence.start_line,
        end_line=evidence.end_line,
        text=text,
        regex=evidence.regex,
        expect=evidence.expect or None,
        sha=evidence.sha or None,
    )
    if evidence.kind == Evidence.Kind.GITLINK:
        spec = replace(
            spec,
            base_commit=context.base_commit,
            submodule=context.submodules.source(
                reader=reader, superproject=context.pull_request.repository, target=context.target,
                path=evidence.path, repository_id=evidence.submodule_repository_id, branch=evidence.reference_branch,
            ),
        )
    return checks.prepare(spec)


def _unusable(evidence: EvidenceRow, detail: str) -> Prepared:
    return Prepared(EvidenceSpec(kind=evidence.kind), failed=CheckResult("error", detail=detail))


def _check(context: _Context, evidence: EvidenceRow) -> int:
    """Check one item, prepared now; the number of its result among ``context.checks.results()``."""
    checks = context.checks
    return checks.add(_prepare(context, evidence))
