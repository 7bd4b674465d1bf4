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
from django.core.exceptions import EmptyResultSet
from django.db import DEFAULT_DB_ALIAS, connection, connections
from django.utils import timezone
from django.db.models import Q

from findings.models import PullRequestGate, VerificationRun
from findings.state.derivation import current_verdicts, gate_at
from findings.state.stored import pull_request_facts, pull_request_state
from reviews.models import Commit, PullRequest, Repository, is_sha
from reviews.selectors import preparable_cursor

# The read scope of an anonymous caller with no token: the public repositories, with no membership
# to look up (`api.permissions.read_scope`).
PUBLIC_ONLY = object()

# A bound on how long an answer nobody asks for again stays in the cache; staleness is ruled out by
# the generation in the key, not by this.
GATE_CACHE_SECONDS = 3600


def gate_cache_key(*, pull_request_id: int, generation: int, sha: str, origin: str) -> str:
    """The cache key of a gate answer the stored state does not hold (a commit that is not pinned,
    an abbreviation to look up): the PR at its generation, the commit as asked for (normalised;
    empty for the latest pinned head) and the site the URLs point at.

    The SHA as asked rather than the commit it names is enough: which commit an abbreviation names,
    and which pin is the latest head, change only with a commit or a pin of the PR's repository,
    and every such write moves the generation (`findings.receivers`, `CommitQuerySet.update`,
    `PinnedCommitQuerySet.update`). So a cached answer is found by the one query of the gate read
    (`pull_request_gate_read`), which gives the generation."""
    # The SHA and the origin are the caller's text: hashed, so a key is always a valid key for any
    # cache backend (no control characters, spaces or unbounded length).
    asked = hashlib.sha256(f"{sha}\0{origin}".encode("utf-8", "surrogatepass")).hexdigest()
    return f"gate:4:{pull_request_id}:{generation}:{asked}"


@dataclass(frozen=True)
class GateEntry:
    pk: int
    number: int
    title: str
    verdict: str | None
    url: str  # the finding's page, a path on the site
    verdict_reason: str = ""  # why an error is one: waiting for CI, not run, flaky (vocabulary.verdict_reason)


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
    # When the answer changes with time alone (the state's `valid_until`): not cached past it.
    valid_until: str | None = None

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
        return [GateEntry(pk, number, title, verdict, f"{base}findings/{number}/", *reason)
                for pk, number, title, verdict, *reason in rows]

    @property
    def open_blockers(self) -> list[GateEntry]:
        return self._entries(self.answer["open_blockers"])

    @property
    def possibly_regressed(self) -> list[GateEntry]:
        return self._entries(self.answer["possibly_regressed"])

    @property
    def overridden(self) -> dict | None:
        """Who overrode the gate at this commit, why and when (`by`, `reason`, `note`, `commit`,
        `at`), or None."""
        return self.answer.get("overridden")

    @property
    def overdue_cleanups(self) -> list:
        """[finding reference, title, due date] of each cleanup follow-up that blocks as overdue."""
        return self.answer.get("overdue_cleanups", [])


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


@dataclass(frozen=True)
class GateRead:
    """What the one query of a gate read found: the pull request (its id and generation) and, when
    the state of that generation holds an answer for the commit asked about, the answer."""

    pull_request_id: int
    generation: int
    stored: StoredGate | None


def pull_request_gate_read(*, slug: str, number: int, sha: str, repositories=None) -> GateRead | None:
    """The gate of `slug#number` at the pinned commit `sha` names (the latest pinned head for an
    empty `sha`), read from the stored state of the PR's current generation in one indexed query,
    with the newest live run covering the commit: None when there is no such pull request the caller
    may see, and `stored` None when the current generation's state is not stored yet or `sha` is not
    a pinned commit it can name without a lookup (unknown, or too short to tell from another
    commit). The caller then looks everything up in full, for the answer or the error.

    `repositories` is what the caller may read (`permissions.read_scope`): None for everything,
    `PUBLIC_ONLY` for an anonymous caller with no token, or a queryset of repositories. A stored
    answer is found through here alone, so it must never find a pull request its caller could not
    read."""
    if not 1 <= number < 2**63:  # no such pull request; the ORM's lookup says so in full
        return None
    if sha and not is_sha(sha):  # not a SHA (a NUL, a space): the lookup in full says what is
        return None
    db = connections[DEFAULT_DB_ALIAS]  # the thread's connection, looked up once rather than per use
    stale = timezone.now() - timedelta(seconds=settings.RECHECK_RUN_STALE_SECONDS)
    # Hexadecimal digits sort below "z": the range holds every SHA that starts with `sha`.
    shas = [sha, sha + "z"] if sha else ["", ""]
    now = db.ops.adapt_datetimefield_value(timezone.now())
    params = [db.ops.adapt_datetimefield_value(stale), *shas, now, slug, number]
    if repositories is not None and repositories is not PUBLIC_ONLY:
        try:
            subquery, scope_params = repositories.order_by().values("pk").query.sql_with_params()
        except EmptyResultSet:  # a scope that can match nothing (a token's repositories all deleted)
            return None
        sql = f'{_gate_read_sql(public_only=False)} AND r."id" IN ({subquery}){_GATE_READ_ORDER}'
        params.extend(scope_params)
    else:
        sql = _gate_read_sql_ordered(public_only=repositories is PUBLIC_ONLY)
    with preparable_cursor(db) as cursor:
        cursor.execute(sql, params)
        rows = cursor.fetchall()
    if not rows:
        return None
    pull_request_id, generation = rows[0][5], rows[0][6]
    if len(rows) != 1 or rows[0][3] is None:
        return GateRead(pull_request_id, generation, None)
    full, unique_from, verified, body, run = rows[0][:5]
    if sha and sha != full and len(sha) < unique_from:
        return GateRead(pull_request_id, generation, None)
    active_run = None
    if run:
        run_id, status = run.split(":", 1)
        active_run = GateRun(int(run_id), status)
    return GateRead(pull_request_id, generation, StoredGate(sha=full, verified=bool(verified), body=body,
                                                            active_run=active_run))


# The answer at the commit sorts first; a second row means an abbreviation that names two commits.
_GATE_READ_ORDER = ' ORDER BY g."sha" LIMIT 2'


@functools.cache
def _gate_read_sql_ordered(*, public_only: bool) -> str:
    return _gate_read_sql(public_only=public_only) + _GATE_READ_ORDER


@functools.cache
def _gate_read_sql(*, public_only: bool) -> str:
    """Written out: building it with the ORM cost more than running it. The pull request by its
    repository's slug and number, joined to the answer of its current generation at the commit (a
    left join: the PR is found without one). The live run is the newest queued or running one with
    a recent sign of life (`VerificationRunQuerySet.live`), at the commit answered about or at every
    pin, as `id:status`. The head's row (empty SHA) is joined to the row of its commit, for the SHA
    the answer names."""
    quote = connection.ops.quote_name
    gate, run = quote(PullRequestGate._meta.db_table), quote(VerificationRun._meta.db_table)
    pull_request, repository = quote(PullRequest._meta.db_table), quote(Repository._meta.db_table)
    live_run = (
        f"(SELECT CAST(lr.\"id\" AS TEXT) || ':' || lr.\"status\" FROM {run} lr "
        f'WHERE lr."pull_request_id" = g."pull_request_id" AND lr."status" IN (\'queued\', \'running\') '
        f'AND lr."heartbeat_at" >= %s AND (lr."commit_id" IS NULL OR lr."commit_id" = g."commit_id") '
        f'ORDER BY lr."created_at" DESC, lr."id" DESC LIMIT 1)'
    )
    full_sha = (
        f'(SELECT h."sha" FROM {gate} h WHERE h."pull_request_id" = g."pull_request_id" '
        f'AND h."generation" = g."generation" AND h."commit_id" = g."commit_id" AND h."sha" <> \'\' LIMIT 1)'
    )
    visible = f' AND r."visibility" = \'{Repository.Visibility.PUBLIC.value}\'' if public_only else ""
    return (
        f'SELECT {full_sha}, g."unique_from", g."verified", g."body", {live_run}, p."id", p."generation" '
        f'FROM {pull_request} p INNER JOIN {repository} r ON p."repository_id" = r."id" '
        f'LEFT OUTER JOIN {gate} g ON g."pull_request_id" = p."id" AND g."generation" = p."generation" '
        f'AND g."sha" >= %s AND g."sha" <= %s AND (g."valid_until" IS NULL OR g."valid_until" > %s) '
        f'WHERE r."slug" = %s AND p."number" = %s{visible}'
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
                     active_run=run, valid_until=state.get("valid_until"))
