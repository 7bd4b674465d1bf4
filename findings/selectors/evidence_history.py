"""A finding's evidence from pin to pin, as its page shows it: for each snippet that holds at two
pins or more, its lines at each and what changed in them between consecutive pins, the rebase's
changes told from the author's (`engine.verification.history`). Read from the mirror when the page
is asked for, over at most the last `HISTORY_PINS` pins."""
from dataclasses import dataclass, field

from core.errors import RecheckError
from engine.git.history import merge_base
from engine.verification.history import Place, Step, evidence_history
from findings.models import Evidence, EvidenceResult, Finding, Verification
from reviews.mirrors import repository_reader_holding
from reviews.models import PinnedCommit

HISTORY_PINS = 12


@dataclass
class EvidenceHistory:
    """One item's steps from pin to pin, or why they could not be read (``problem``)."""

    evidence: Evidence
    steps: list[Step] = field(default_factory=list)
    problem: str = ""


def finding_evidence_histories(
    finding: Finding, *, pins: list[PinnedCommit], verifications: list[Verification]
) -> list[EvidenceHistory]:
    """The history of each of the finding's snippets that holds at two of the pins or more, from
    the verifications already loaded (with their results): no query of its own."""
    current = {
        verification.commit_id: verification for verification in verifications
        if verification.evidence_version == finding.evidence_version
    }
    wanted: list[tuple[Evidence, list[Place]]] = []
    for evidence in finding.evidence.all():
        if evidence.kind != Evidence.Kind.SNIPPET:
            continue
        places: list[Place] = []
        for pin in _distinct_commits(pins)[-HISTORY_PINS:]:
            verification = current.get(pin.commit_id)
            result = next(
                (result for result in verification.results.all() if result.evidence_id == evidence.pk), None
            ) if verification else None
            if result is not None and result.state == EvidenceResult.State.HOLDS and result.path \
                    and result.start_line and result.end_line:
                places.append(Place(pin.commit.sha, result.path, result.start_line, result.end_line))
        if len(places) >= 2:
            wanted.append((evidence, places))
    if not wanted:
        return []
    repository = finding.pull_request.repository
    try:
        commits = sorted({place.sha for _, places in wanted for place in places})
        with repository_reader_holding(repository, commits) as reader:
            return [_history(reader, evidence, places, repository.default_branch) for evidence, places in wanted]
    except RecheckError as error:
        return [EvidenceHistory(evidence, problem=str(error)) for evidence, _ in wanted]


def _history(reader, evidence: Evidence, places: list[Place], branch: str) -> EvidenceHistory:
    try:
        main = reader.resolve(f"refs/heads/{branch}")
    except RecheckError:
        main = None  # no base to tell the rebase's changes by: every change reads as the author's
    try:
        bases = {place.sha: merge_base(reader, place.sha, main) if main else None for place in places}
        based = [Place(place.sha, place.path, place.start_line, place.end_line, bases[place.sha]) for place in places]
        return EvidenceHistory(evidence, evidence_history(reader, based))
    except RecheckError as error:
        return EvidenceHistory(evidence, problem=str(error))


def _distinct_commits(pins: list[PinnedCommit]) -> list[PinnedCommit]:
    """The pins in order, a commit pinned again (in another role) counted once, where first pinned."""
    seen: set[int] = set()
    kept = []
    for pin in pins:
        if pin.commit_id not in seen:
            seen.add(pin.commit_id)
            kept.append(pin)
    return kept
