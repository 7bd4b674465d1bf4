"""Reads that connect a finding to others across pull requests: its links, read from both ends,
and related findings (same file under any of its names, shared tags, similar titles)."""
from dataclasses import dataclass, field

from django.contrib.postgres.search import TrigramSimilarity
from django.db import connection
from django.db.models import BooleanField, Q
from django.db.models.expressions import RawSQL
from rapidfuzz import fuzz, process, utils

from findings.models import Evidence, EvidenceResult, Finding, FindingLink


@dataclass(frozen=True)
class LinkView:
    link: FindingLink
    label: str  # how it reads from the finding whose page shows it ("Duplicated by")
    finding: Finding  # the other end
    note: str


def finding_links(finding: Finding, *, reader) -> list[LinkView]:
    """Every link made from or to `finding` whose other end `reader` may read, oldest first, each
    worded from `finding`'s end. A link to a finding of a repository hidden from `reader` is not
    shown, nor counted."""
    readable = Finding.objects.readable_by(reader)
    links = (
        FindingLink.objects.filter(
            (Q(source=finding) & Q(target__in=readable)) | (Q(target=finding) & Q(source__in=readable))
        )
        .select_related("source__pull_request__repository", "target__pull_request__repository")
        .order_by("created_at", "id")
    )
    return [
        LinkView(link=link, label=link.label_from(finding), finding=link.other_end(finding), note=link.note)
        for link in links
    ]


# --- Related findings ------------------------------------------------------------------------

RELATED_LIMIT = 5
# Only evidence that names one file follows it through renames; a pattern's glob names many.
FILE_EVIDENCE = (Evidence.Kind.SNIPPET, Evidence.Kind.PATH)
SIMILAR_TITLE_THRESHOLD = 0.3  # pg_trgm's own default for `%`
SIMILAR_CANDIDATES = 5000  # on SQLite, the most recent findings compared in Python


@dataclass
class RelatedFinding:
    finding: Finding
    reasons: list[str] = field(default_factory=list)
    score: float = 0.0
    link: LinkView | None = None


def file_names(paths: set[str], *, repository=None) -> set[str]:
    """`paths` and every other name verification has recorded for the same files (in
    `repository`, or any): evidence recorded at one name and found at another (a rename),
    followed a few steps either way."""
    names = {path for path in paths if path}
    frontier = set(names)
    results = EvidenceResult.objects.filter(evidence__kind__in=FILE_EVIDENCE)
    if repository is not None:
        results = results.filter(evidence__finding__pull_request__repository=repository)
    for _ in range(4):
        if not frontier:
            break
        pairs = (
            results
            .filter(Q(path__in=frontier) | Q(evidence__path__in=frontier))
            .exclude(path="")
            .values_list("evidence__path", "path")
            .distinct()
        )
        found = {name for pair in pairs for name in pair}
        frontier = found - names
        names |= found
    return names


def findings_on_files(names: set[str]):
    """Findings recorded on any of `names`: as their location, in file evidence, or where
    verification found their evidence."""
    return Finding.objects.filter(
        Q(path__in=names)
        | Q(pk__in=Evidence.objects.filter(kind__in=FILE_EVIDENCE, path__in=names).values("finding_id"))
        | Q(pk__in=EvidenceResult.objects.filter(path__in=names).values("evidence__finding_id"))
    )


def _own_paths(finding: Finding) -> set[str]:
    paths = {finding.path} if finding.path else set()
    paths |= set(
        Evidence.objects.filter(finding=finding, kind__in=FILE_EVIDENCE).exclude(path="").values_list("path", flat=True)
    )
    return paths


def _similar_titles(finding: Finding, others) -> dict[int, float]:
    """Finding id -> how alike its title is to `finding`'s, 0 to 1."""
    if not finding.title.strip():
        return {}
    if connection.vendor == "postgresql":
        rows = (
            others.filter(RawSQL('"findings_finding"."title" %% %s', [finding.title], output_field=BooleanField()))
            .annotate(similarity=TrigramSimilarity("title", finding.title))
            .filter(similarity__gte=SIMILAR_TITLE_THRESHOLD)
            .order_by("-similarity", "-pk")
            .values_list("pk", "similarity")[:20]
        )
        return dict(rows)
    candidates = dict(others.order_by("-pk").values_list("pk", "title")[:SIMILAR_CANDIDATES])
    matches = process.extract(
        finding.title, candidates, scorer=fuzz.token_set_ratio, processor=utils.default_process,
        score_cutoff=100 * SIMILAR_TITLE_THRESHOLD * 2, limit=20,
    )
    return {pk: score / 100 for _title, score, pk in matches}


def finding_related(finding: Finding, *, reader, limit: int = RELATED_LIMIT) -> list[RelatedFinding]:
    """The findings related to `finding` that `reader` may read, each saying why: every finding
    it is linked to (from either end) first, then, up to `limit` in all, findings of other pull
    requests on the same file (under any of its names), with tags in common, or with a similar
    title, most reasons first. `finding` should come with its pull request's repository selected."""
    related = [
        RelatedFinding(finding=view.finding, reasons=[f"Linked: {view.label.lower()} it"], link=view)
        for view in finding_links(finding, reader=reader)
    ]
    if len(related) >= limit:
        return related  # every link shows, however many
    # Linked findings are listed once, as links; a repository hidden from the reader gives none.
    others = Finding.objects.readable_by(reader).exclude(pull_request_id=finding.pull_request_id).exclude(
        pk__in=[item.finding.pk for item in related]
    )
    candidates: dict[int, RelatedFinding] = {}

    def candidate(pk: int) -> RelatedFinding:
        return candidates.setdefault(pk, RelatedFinding(finding=None))

    own = _own_paths(finding)
    # A path names the same file only within one repository.
    repository = finding.pull_request.repository
    names = file_names(own, repository=repository)
    if names:
        on_files = findings_on_files(names).filter(pull_request__repository=repository, pk__in=others.values("pk"))
        for pk, path in on_files.values_list("pk", "path"):
            item = candidate(pk)
            if path in own:
                item.reasons.append(f"Same file: {path}")
            elif path in names:
                item.reasons.append(f"Same file, under another name: {path}")
            else:
                item.reasons.append(f"Evidence on the same file ({', '.join(sorted(own or names))})")
            item.score += 3
    tags = {tag.pk: tag.slug for tag in finding.tags.all()}
    if tags:
        shared: dict[int, list[str]] = {}
        rows = Finding.tags.through.objects.filter(tag_id__in=tags, finding__in=others).values_list(
            "finding_id", "tag_id"
        )
        for pk, tag_id in rows:
            shared.setdefault(pk, []).append(tags[tag_id])
        for pk, slugs in shared.items():
            item = candidate(pk)
            item.reasons.append(f"Shared tag{'s' if len(slugs) > 1 else ''}: {', '.join(sorted(slugs))}")
            item.score += 2 * len(slugs)
    for pk, similarity in _similar_titles(finding, others).items():
        item = candidate(pk)
        item.reasons.append(f"Similar title ({round(similarity * 100)}% alike)")
        item.score += 3 * similarity
    best = sorted(candidates.items(), key=lambda entry: (-entry[1].score, -entry[0]))[: limit - len(related)]
    loaded = Finding.objects.select_related("pull_request__repository").in_bulk([pk for pk, _ in best])
    for pk, item in best:
        item.finding = loaded[pk]
        related.append(item)
    return related
