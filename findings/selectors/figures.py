"""Reads across a repository's pull requests: how old its open blockers are, how long fixes take,
how findings ended, which files keep getting findings and which tags recur; and every finding ever
recorded on a file, under any of its names. Each is a fixed handful of queries."""
import statistics
from dataclasses import dataclass, field
from datetime import timedelta

from django.core.paginator import Page, Paginator
from django.db.models import Count, Exists, OuterRef, Q
from django.utils import timezone

from findings.models import Evidence, Finding, Tag, Verdict, Verification
from findings.selectors.related import FILE_EVIDENCE, file_names, findings_on_files
from findings.state.stored import pull_request_states
from reviews.models import Repository

AGE_BUCKETS = [
    ("under a week", timedelta(days=7)),
    ("1–4 weeks", timedelta(days=28)),
    ("1–3 months", timedelta(days=91)),
    ("over 3 months", None),
]
TOP_FILES = 10


@dataclass
class Bar:
    label: str
    value: int
    url: str = ""


@dataclass
class RepositoryFigures:
    repository: Repository
    findings_total: int
    open_blockers: list[Finding]  # oldest first, each with `age` (the first `blockers_shown` when bounded)
    open_blockers_by_age: list[Bar]
    fix_times: list[Bar]
    median_days_to_fix: float | None
    endings: list[Bar]
    top_files: list[Bar]
    recurring_tags: list[Bar]
    notes: list[str] = field(default_factory=list)
    open_blockers_count: int = 0


def _bucket(age: timedelta) -> str:
    for label, limit in AGE_BUCKETS:
        if limit is None or age < limit:
            return label
    raise AssertionError("the last bucket has no limit")


def _bars(counts: dict[str, int]) -> list[Bar]:
    return [Bar(label, counts.get(label, 0)) for label, _ in AGE_BUCKETS]


def _age_counts(findings, now) -> dict[str, int]:
    """How many of `findings` are in each age bucket, counted by the database (one query)."""
    counts, newer_than = {}, None
    for index, (_, limit) in enumerate(AGE_BUCKETS):
        older = Q() if newer_than is None else Q(created_at__lte=now - newer_than)
        counts[f"bucket_{index}"] = Count("pk", filter=older & (Q() if limit is None else Q(created_at__gt=now - limit)))
        newer_than = limit
    counted = findings.aggregate(**counts)
    return {label: counted[f"bucket_{index}"] for index, (label, _) in enumerate(AGE_BUCKETS)}


def repository_figures(repository: Repository, *, now=None, blockers_shown: int | None = None) -> RepositoryFigures:
    """What the repository's page and its API figures show. `blockers_shown` bounds the open
    blockers listed (the page's oldest first); their count and ages are of them all."""
    now = now or timezone.now()
    findings = Finding.objects.filter(pull_request__repository=repository)
    blockers = findings.open().blockers()
    ages = _age_counts(blockers, now)
    listed = blockers.select_related("pull_request__repository").order_by("created_at", "id")
    open_blockers = list(listed if blockers_shown is None else listed[:blockers_shown])
    for finding in open_blockers:
        finding.age = now - finding.created_at

    # "Fixed after a verification said likely fixed": a verdict of likely_fixed was recorded
    # before the person marked it fixed; otherwise it was fixed by hand.
    suggested = Verification.objects.filter(
        finding=OuterRef("pk"), verdict=Verdict.LIKELY_FIXED, checked_at__lte=OuterRef("resolved_at")
    )
    fixed = list(
        findings.filter(status=Finding.Status.FIXED)
        .annotate(after_verification=Exists(suggested))
        .values_list("created_at", "resolved_at", "after_verification")
    )
    fix_days = [(resolved - created).total_seconds() / 86400 for created, resolved, _ in fixed]
    fix_buckets: dict[str, int] = {}
    for created, resolved, _ in fixed:
        label = _bucket(resolved - created)
        fix_buckets[label] = fix_buckets.get(label, 0) + 1
    # How many ended each way, from the states of the repository's pull requests (as their pages count).
    statuses: dict[str, int] = {}
    for state in pull_request_states(repository.pull_requests.values_list("pk", flat=True)).values():
        for tally in state["counts"].values():
            for status in Finding.Status.values:
                statuses[status] = statuses.get(status, 0) + tally.get(status, 0)
    after = sum(1 for *_, by_verification in fixed if by_verification)
    endings = [
        Bar("fixed after a verification said likely fixed", after),
        Bar("fixed by hand", len(fixed) - after),
        Bar("dismissed", statuses.get(Finding.Status.DISMISSED, 0)),
        Bar("still open", statuses.get(Finding.Status.OPEN, 0)),
    ]
    files = (
        findings.exclude(path="").values("path").annotate(count=Count("id")).order_by("-count", "path")[:TOP_FILES]
    )
    top_files = [
        Bar(row["path"], row["count"], url=_file_url(repository, row["path"])) for row in files
    ]
    tags = (
        Tag.objects.annotate(count=Count("findings", filter=Q(findings__pull_request__repository=repository)))
        .filter(count__gte=2)
        .order_by("-count", "slug")
    )
    return RepositoryFigures(
        repository=repository,
        findings_total=sum(statuses.values()),
        open_blockers=open_blockers,
        open_blockers_count=sum(ages.values()),
        open_blockers_by_age=_bars(ages),
        fix_times=_bars(fix_buckets),
        median_days_to_fix=round(statistics.median(fix_days), 1) if fix_days else None,
        endings=endings,
        top_files=top_files,
        recurring_tags=[Bar(tag.slug, tag.count, url=tag.get_absolute_url()) for tag in tags],
    )


def _file_url(repository: Repository, path: str) -> str:
    from django.urls import reverse

    return reverse("findings:file", kwargs={"owner": repository.owner, "name": repository.name, "path": path})


@dataclass
class FileFindings:
    path: str
    names: list[str]  # the path first, then its other names
    findings: list[Finding]  # newest first, each with `recorded_as`: the names it was recorded under


def _on_file(repository: Repository, names: set[str]):
    return (findings_on_files(names).filter(pull_request__repository=repository)
            .select_related("pull_request__repository").order_by("-created_at", "-id"))


def _recorded_as(findings: list[Finding], path: str, names: set[str]) -> None:
    recorded: dict[int, set[str]] = {finding.pk: ({finding.path} & names) for finding in findings}
    rows = Evidence.objects.filter(finding__in=findings, kind__in=FILE_EVIDENCE, path__in=names).values_list(
        "finding_id", "path"
    )
    for finding_id, evidence_path in rows:
        recorded[finding_id].add(evidence_path)
    for finding in findings:
        finding.recorded_as = sorted(recorded[finding.pk]) or [path]


def file_findings(repository: Repository, path: str) -> FileFindings:
    """Every finding recorded on `path` in `repository`'s pull requests, including under the names
    verification saw the file have before or after a rename."""
    names = file_names({path}, repository=repository)
    findings = list(_on_file(repository, names))
    _recorded_as(findings, path, names)
    return FileFindings(path=path, names=[path, *sorted(names - {path})], findings=findings)


def file_findings_page(repository: Repository, path: str, *, page_number, per_page: int) -> tuple[FileFindings, Page]:
    """`file_findings` a page at a time (the file page's): the page's findings, and the page with
    the count of them all. A fixed number of queries, however many findings the file has."""
    names = file_names({path}, repository=repository)
    page = Paginator(_on_file(repository, names), per_page).get_page(page_number)
    findings = list(page.object_list)
    _recorded_as(findings, path, names)
    page.object_list = findings
    return FileFindings(path=path, names=[path, *sorted(names - {path})], findings=findings), page
