"""The editor's check of one evidence item: checked at a commit with the engine and the mirror
exactly as a verification run checks it, and nothing stored."""
from dataclasses import dataclass, field

from core.errors import RecheckError
from engine.git import GitReader
from engine.verification import CheckResult, EvidenceChecks, EvidenceSpec, verdict_for
from findings.models import Evidence
from findings.services.submodules import SubmoduleMirrors
from findings.services.verification.checking import _check, _Context
from findings.services.verification.rows import EvidenceRow
from reviews.mirrors import repository_reader
from reviews.models import PullRequest


@dataclass(frozen=True)
class EvidenceCheck:
    """What checking one evidence item at one commit found, before it is saved: the state and the
    verdict the verifier would store, with its detail; the snippet text read at the recorded
    commit; a pattern's matches (Try it); a submodule's pin in the tree. `ran` is False when the
    check could not run at all (no mirror, an unknown commit): `detail` says why."""

    state: str
    verdict: str
    detail: str
    ran: bool = True
    target: str = ""
    recorded_at: str = ""
    location: str = ""
    text: str = ""
    matches: list = field(default_factory=list)
    more_matches: bool = False
    pin: str = ""


def evidence_check(*, pull_request: PullRequest, item: dict, at: str) -> EvidenceCheck:
    """Check one evidence item (validated, in the bundle's shape) at the commit `at` names, with
    the engine and the mirror exactly as a verification run does (`_check`), without storing
    anything. The item is taken as recorded at its own `commit`, else at `at`. The mirror is read
    as it is: a check while typing does not wait for a fetch."""
    try:
        with repository_reader(pull_request.repository) as reader:
            target = reader.resolve(at)
            recorded_at = reader.resolve(item["commit"]) if item.get("commit") else target
            return _evidence_check(reader, pull_request, item, target, recorded_at)
    except RecheckError as error:
        return EvidenceCheck(state="error", verdict="error", detail=_sentence(str(error)), ran=False)


def _evidence_check(reader: GitReader, pull_request, item: dict, target: str, recorded_at: str) -> EvidenceCheck:
    from engine.verification.patterns import pattern_matches

    row = EvidenceRow(
        pk=0, finding_id=0, kind=item["kind"], commit_sha=recorded_at, path=item.get("path", ""),
        start_line=item.get("start_line"), end_line=item.get("end_line"), text=item.get("text", ""),
        regex=item.get("regex", ""), expect=item.get("expect", ""), sha=item.get("sha", ""),
        submodule_repository_id=None, reference_branch=item.get("branch", ""),
        check_name=item.get("check", ""), check_app=item.get("app", ""), check_tests=list(item.get("tests", [])),
        check_results=[dict(result) for result in item.get("results", [])],
    )
    # A live check reads submodules' mirrors as they are, like the repository's own.
    checks = EvidenceChecks(reader, target)
    context = _Context(reader, target, pull_request, SubmoduleMirrors(fetch=False), checks)
    number = _check(context, row)
    result = checks.results()[number]
    extra: dict = {}
    if context.texts_read:
        extra["text"] = context.texts_read[0][1]
    if item["kind"] == Evidence.Kind.PATTERN and result.state != "error":
        extra["matches"], extra["more_matches"] = pattern_matches(
            reader, EvidenceSpec(kind="pattern", commit=recorded_at, path=row.path, regex=row.regex), target
        )
    if item["kind"] == Evidence.Kind.GITLINK:
        entry = reader.tree_entry(target, row.path) if row.path else None
        extra["pin"] = entry.sha if entry is not None and entry.type == "commit" else ""
    return EvidenceCheck(
        state=result.state, verdict=verdict_for([result]), detail=_sentence(result.detail), target=target,
        recorded_at=recorded_at, location=_location(result), **extra,
    )


def _location(result: CheckResult) -> str:
    from core.vocabulary import location

    return location(result.path or "", result.start_line, result.end_line) if result.path else ""


def _sentence(message: str) -> str:
    message = message.strip()
    if not message:
        return ""
    message = message[:1].upper() + message[1:]
    return message if message.endswith(".") else message + "."
