"""Where a pull request's findings sit in its files at one pinned commit, for the code browser's
gutter and its diff view: the lines the latest verification there found each evidence item at
(after it moved), or, for a finding not verified there yet, the lines its evidence was recorded
at when that was this commit."""
from collections import defaultdict
from dataclasses import dataclass

from django.db.models import F

from findings.models import Evidence, EvidenceResult, Finding, Verification
from reviews.models import PullRequest


@dataclass(frozen=True)
class LineMark:
    """A finding on lines `start`–`end` of a file at a commit."""

    number: int
    kind: str
    kind_label: str
    title: str
    url: str
    start: int
    end: int

    @property
    def lines(self) -> range:
        return range(self.start, self.end + 1)


def finding_line_marks(pull_request: PullRequest, *, sha: str, paths) -> dict[str, list[LineMark]]:
    """The findings of `pull_request` on lines of each of `paths` at the commit `sha` (full), by
    path, each finding once per range, in the findings' order. Two queries however many paths."""
    paths = list(paths)
    if not paths:
        return {}
    marks: dict[str, set[tuple]] = defaultdict(set)
    findings: dict[int, Finding] = {}
    # Only a verification of the finding's evidence as it is now: an older one's lines are of
    # evidence that has since changed.
    current = Verification.objects.filter(
        finding__pull_request=pull_request, commit__sha=sha, evidence_version=F("finding__evidence_version")
    )
    results = EvidenceResult.objects.filter(
        verification__in=current, path__in=paths, start_line__isnull=False
    ).select_related("verification__finding")
    for result in results:
        finding = result.verification.finding
        findings[finding.pk] = finding
        marks[result.path].add((finding.pk, result.start_line, result.end_line or result.start_line))
    recorded = (
        Evidence.objects.filter(finding__pull_request=pull_request, commit__sha=sha, path__in=paths,
                                start_line__isnull=False)
        .exclude(finding__in=current.values("finding"))
        .select_related("finding")
    )
    for item in recorded:
        findings[item.finding.pk] = item.finding
        marks[item.path].add((item.finding.pk, item.start_line, item.end_line or item.start_line))
    by_path = {}
    for path, ranges in marks.items():
        by_path[path] = sorted(
            (
                LineMark(number=findings[pk].number, kind=findings[pk].kind, kind_label=findings[pk].get_kind_display(),
                         title=findings[pk].title,
                         url=_finding_url(pull_request, findings[pk]), start=start, end=max(end, start))
                for pk, start, end in ranges
            ),
            key=lambda mark: (mark.start, mark.number),
        )
    return by_path


def _finding_url(pull_request: PullRequest, finding: Finding) -> str:
    # The finding's pull request is the one given: its own URL without another query for it.
    finding.pull_request = pull_request
    return finding.get_absolute_url()
