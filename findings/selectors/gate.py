"""The merge gate: may this pull request merge at this commit?

Humans decide a finding's status; verification only advises. The answer is the one the PR's stored
state holds for the commit (`findings.state`: derived once, with the rules written down there and
in docs/using/verify.md), so the API, `recheck-gate` and GitHub say what the pages say:
- `open_blockers` are the blockers whose status is open. One whose verdict at the commit is
  `likely_fixed` is listed with that verdict and still blocks until someone marks it fixed.
- `verified` says the commit is known to the mirror, its latest finished verification did not
  fail, and every open blocker has a verdict there of its current evidence that is not an error.
- `mergeable` is `verified` and no open blocker.
- `possibly_regressed` lists blockers marked fixed whose evidence holds again at the commit, when
  the commit was pinned after they were marked fixed. They are reported, not counted."""
import functools
import hashlib
from datetime import timedelta
from dataclasses import dataclass

from django.conf import settings
from django.db import connection
from django.utils import timezone
from django.db.models import Q

from findings.models import PullRequestGate, VerificationRun
from findings.state.derivation import current_verdicts, gate_at
from findings.state.stored import pull_request_facts, pull_request_state
from reviews.models import Commit, PullRequest, Repository

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
    pk: int
    number: int
    title: str
    verdict: str | None
    url: str  # the finding's page, a path on the site


@dataclass(frozen=True)
class GateCommit:
    sha: str

    @property
    def short_sha(self) -> str:
        return self.sha[:8]


@dataclass(frozen=True)
class GateRun:
    pk: int
    status: str


@dataclass(frozen=True)
class MergeGate:
    """The stored answer at one commit, with the run under way there (read live: a run's progress
    is not part of the state)."""

    pull_request_reference: str
    commit: GateCommit
    answer: dict
    pull_request_url: str
    active_run: GateRun | None = None

    @property
    def verified(self) -> bool:
        return self.answer["verified"]

    @property
    def mergeable(self) -> bool:
        return self.answer["mergeable"]

    @property
    def reason(self) -> str:
        return self.answer["reason"]

    def _entries(self, rows) -> list[GateEntry]:
        base = self.pull_request_url
        return [GateEntry(pk, number, title, verdict, f"{base}findings/{number}/") for pk, number, title, verdict in rows]

    @property
    def open_blockers(self) -> list[GateEntry]:
        return self._entries(self.answer["open_blockers"])

    @property
    def possibly_regressed(self) -> list[GateEntry]:
        return self._entries(self.answer["possibly_regressed"])


def _live_run(pull_request_id: int, commit_condition: Q) -> GateRun | None:
    row = (
        VerificationRun.objects.filter(pull_request_id=pull_request_id).live().filter(commit_condition)
        .latest_first().values_list("pk", "status").first()
    )
    return GateRun(*row) if row else None


@dataclass(frozen=True)
class StoredGate:
    """The gate's answer as stored with the PR's state: the JSON of its verdict (`body`, the
    findings' URLs as paths), and the live run read beside it."""

    sha: str
    verified: bool
    body: str
    active_run: GateRun | None


def pull_request_gate_stored(*, pull_request_id: int, generation: int, sha: str) -> StoredGate | None:
    """The gate read from the stored state alone, in one indexed query (the answer at the pinned
    commit `sha` names, or at the latest pinned head for an empty `sha`, with the newest live run
    covering it): None when the state of `generation` is not stored or `sha` is not a pinned
    commit it can name without a lookup (unknown, or too short to tell from another commit)."""
    stale = timezone.now() - timedelta(seconds=settings.RECHECK_RUN_STALE_SECONDS)
    # Hexadecimal digits sort below "z": the range holds every SHA that starts with `sha`.
    shas = [sha, sha + "z"] if sha else ["", ""]
    with connection.cursor() as cursor:
        cursor.execute(_STORED_GATE_SQL(), [connection.ops.adapt_datetimefield_value(stale), pull_request_id,
                                           generation, *shas])
        rows = cursor.fetchall()
    if len(rows) != 1:
        return None
    full, unique_from, verified, body, run = rows[0]
    if sha and sha != full and len(sha) < unique_from:
        return None
    active_run = None
    if run:
        run_id, status = run.split(":", 1)
        active_run = GateRun(int(run_id), status)
    return StoredGate(sha=full, verified=bool(verified), body=body, active_run=active_run)


@functools.cache
def _STORED_GATE_SQL() -> str:
    """Written out: building it with the ORM cost more than running it. The live run is the newest
    queued or running one with a recent sign of life (`VerificationRunQuerySet.live`), at the
    commit answered about or at every pin, as `id:status`. The head's row (empty SHA) is joined to
    the row of its commit, for the SHA the answer names."""
    quote = connection.ops.quote_name
    gate, run = quote(PullRequestGate._meta.db_table), quote(VerificationRun._meta.db_table)
    live_run = (
        f"(SELECT CAST(r.\"id\" AS TEXT) || ':' || r.\"status\" FROM {run} r "
        f'WHERE r."pull_request_id" = g."pull_request_id" AND r."status" IN (\'queued\', \'running\') '
        f'AND r."heartbeat_at" >= %s AND (r."commit_id" IS NULL OR r."commit_id" = g."commit_id") '
        f'ORDER BY r."created_at" DESC, r."id" DESC LIMIT 1)'
    )
    full_sha = (
        f'(SELECT h."sha" FROM {gate} h WHERE h."pull_request_id" = g."pull_request_id" '
        f'AND h."generation" = g."generation" AND h."commit_id" = g."commit_id" AND h."sha" <> \'\' LIMIT 1)'
    )
    return (
        f'SELECT {full_sha}, g."unique_from", g."verified", g."body", {live_run} FROM {gate} g '
        f'WHERE g."pull_request_id" = %s AND g."generation" = %s AND g."sha" >= %s AND g."sha" <= %s '
        f'ORDER BY g."sha" LIMIT 2'
    )


def pull_request_gate(*, pull_request: PullRequest, commit: Commit) -> MergeGate:
    """The gate at `commit`: the stored answer for a pinned commit, else the same rule applied to
    the facts at this one (nothing pinned there is verified by a run, which pins what it checks)."""
    state = pull_request_state(pull_request_id=pull_request.pk)
    answer = state["gates"].get(commit.sha)
    if answer is None:
        facts = pull_request_facts(pull_request.pk)
        answer = gate_at(facts, current_verdicts(facts), commit_id=commit.pk, sha=commit.sha,
                         resolved=commit.resolved, pin=None)
    run = _live_run(pull_request.pk, Q(commit__isnull=True) | Q(commit_id=commit.pk))
    return MergeGate(pull_request.reference, GateCommit(commit.sha), answer, pull_request.get_absolute_url(),
                     active_run=run)
