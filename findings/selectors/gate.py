"""The merge gate: may this pull request merge at this commit?

Humans decide a finding's status; verification only advises. So:
- `open_blockers` are the blockers whose status is open. One whose verdict at the commit is
  `likely_fixed` is listed with that verdict and still blocks until someone marks it fixed.
- `verified` says every open blocker has a verdict at the commit (true when none is open).
- `mergeable` is `verified` and no open blocker; since an unverified commit always has an open
  blocker, this is "no open blocker", and `verified` tells a human why a gate is closed.
- `possibly_regressed` lists blockers marked fixed whose evidence holds again at the commit
  (verdict present or partly fixed). They are reported, not counted: a human reopens them."""
import functools
import hashlib
from dataclasses import dataclass

from django.db import connection
from django.db.models import F

from core import vocabulary
from findings.models import Finding, Verdict, Verification, VerificationRun
from reviews.models import Commit, PullRequest, Repository

REGRESSED_VERDICTS = vocabulary.REGRESSED_VERDICTS

# The read scope of an anonymous caller with no token: the public repositories, with no membership
# to look up (`api.permissions.read_scope`).
PUBLIC_ONLY = object()

# A bound on how long an answer nobody asks for again stays in the cache; staleness is ruled out by
# the generation in the key, not by this.
GATE_CACHE_SECONDS = 3600


def gate_cache_key(*, pull_request_id: int, generation: int, sha: str, origin: str) -> str:
    """The cache key of the gate's answer: the PR at its generation, the commit as asked for
    (normalised; empty for the latest pinned head) and the site the URLs point at.

    The SHA as asked rather than the commit it names is enough: which commit an abbreviation names,
    and which pin is the latest head, change only with a commit or a pin of the PR's repository,
    and every such write moves the generation (`findings.receivers`, `CommitQuerySet.update`,
    `PinnedCommitQuerySet.update`). So a cached answer is found with one query, for the generation."""
    # The SHA and the origin are the caller's text: hashed, so a key is always a valid key for any
    # cache backend (no control characters, spaces or unbounded length).
    asked = hashlib.sha256(f"{sha}\0{origin}".encode("utf-8", "surrogatepass")).hexdigest()
    return f"gate:3:{pull_request_id}:{generation}:{asked}"


def pull_request_generation(*, slug: str, number: int, repositories=None) -> tuple[int, int] | None:
    """(id, generation) of the pull request `slug#number`, or None when there is none the caller
    may see (the caller then looks it up in full, for the error that says what to do).

    `repositories` is what the caller may read (`permissions.read_scope`): None for everything,
    `PUBLIC_ONLY` for an anonymous caller with no token, or a queryset of repositories. A cached
    answer is found through here alone, so it must never find a pull request its caller could not
    read."""
    if not 1 <= number < 2**63:  # no such pull request; the ORM's lookup says so in full
        return None
    if repositories is not None and repositories is not PUBLIC_ONLY:
        pull_requests = PullRequest.objects.by_reference(slug, number).filter(repository__in=repositories)
        return pull_requests.order_by().values_list("pk", "generation").first()
    # The one query of a cached answer, written out: building it with the ORM cost more than the
    # rest of the request.
    with connection.cursor() as cursor:
        cursor.execute(_generation_sql(public_only=repositories is PUBLIC_ONLY), [slug, number])
        row = cursor.fetchone()
    return (row[0], row[1]) if row else None


@functools.cache
def _generation_sql(*, public_only: bool) -> str:
    quote = connection.ops.quote_name
    pull_request, repository = quote(PullRequest._meta.db_table), quote(Repository._meta.db_table)
    visible = f' AND {repository}."visibility" = \'{Repository.Visibility.PUBLIC.value}\'' if public_only else ""
    return (
        f'SELECT {pull_request}."id", {pull_request}."generation" FROM {pull_request} '
        f'INNER JOIN {repository} ON {pull_request}."repository_id" = {repository}."id" '
        f'WHERE {repository}."slug" = %s AND {pull_request}."number" = %s{visible}'
    )


@dataclass(frozen=True)
class GateEntry:
    finding: Finding
    verdict: str | None


@dataclass(frozen=True)
class MergeGate:
    pull_request: PullRequest
    commit: Commit
    open_blockers: list[GateEntry]
    possibly_regressed: list[GateEntry]
    active_run: VerificationRun | None

    @property
    def verified(self) -> bool:
        return all(entry.verdict is not None for entry in self.open_blockers)

    @property
    def mergeable(self) -> bool:
        return self.verified and not self.open_blockers

    @property
    def reason(self) -> str:
        at = self.commit.short_sha
        regressed = (
            f" {len(self.possibly_regressed)} fixed blocker(s) look regressed at {at}: a human should look."
            if self.possibly_regressed
            else ""
        )
        if self.mergeable:
            return f"No open blocker at {at}.{regressed}"
        unverified = sum(1 for entry in self.open_blockers if entry.verdict is None)
        count = len(self.open_blockers)
        if unverified:
            return (
                f"{count} open blocker(s); {unverified} not yet verified at {at}: "
                "request a verification (how_to_verify)."
            )
        likely_fixed = sum(1 for entry in self.open_blockers if entry.verdict == Verdict.LIKELY_FIXED)
        fixed_note = f" ({likely_fixed} look likely fixed: a human marks them fixed)" if likely_fixed else ""
        return f"{count} open blocker(s) at {at}{fixed_note}.{regressed}"


def pull_request_gate(*, pull_request: PullRequest, commit: Commit) -> MergeGate:
    blockers = Finding.objects.for_pull_request(pull_request).blockers()
    # Only what the gate shows; every finding's pull request is the one already loaded, so its URL
    # needs no join.
    fields = ("id", "pull_request_id", "number", "title", "status")
    open_blockers = list(blockers.open().only(*fields).order_by("number"))
    verdicts = dict(
        Verification.objects.filter(finding__in=blockers.open(), commit=commit)
        .order_by()
        .values_list("finding_id", "verdict")
    )
    regressed = list(
        blockers.filter(
            status=Finding.Status.FIXED,
            verifications__commit=commit,
            verifications__verdict__in=REGRESSED_VERDICTS,
        )
        .only(*fields)
        .annotate(verdict_at_commit=F("verifications__verdict"))
        .order_by("number")
    )
    for finding in (*open_blockers, *regressed):
        finding.pull_request = pull_request
    # A run at this commit, or at every pin (commit null), will give this commit its verdicts.
    active_run = (
        VerificationRun.objects.filter(pull_request=pull_request).live().covering(commit).latest_first().first()
    )
    return MergeGate(
        pull_request,
        commit,
        open_blockers=[GateEntry(finding, verdicts.get(finding.pk)) for finding in open_blockers],
        possibly_regressed=[GateEntry(finding, finding.verdict_at_commit) for finding in regressed],
        active_run=active_run,
    )
