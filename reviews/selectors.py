"""Reads about reviewed code that the commands and the API share."""
from datetime import timedelta

from django.db import DEFAULT_DB_ALIAS, connection, connections
from django.db.backends.utils import CursorDebugWrapper
from django.utils import timezone

from access.permissions import Action, holds_everywhere, membership_actions
from core.errors import RecheckError
from reviews.models import Commit, PinnedCommit, PullRequest, Repository, WorkerHost


class PullRequestNotFound(RecheckError):
    pass


def pull_request_get(*, slug: str, number: int, repository_ids: set[int] | None = None) -> PullRequest:
    """The pull request `slug#number`; PullRequestNotFound says which ones are known instead.

    With `repository_ids`, the others do not exist for this caller: not found, with the same
    message as a repository that was never recorded."""
    pull_requests = PullRequest.objects.all()
    if repository_ids is not None:
        pull_requests = pull_requests.filter(repository_id__in=repository_ids)
    pull_request = pull_requests.by_reference(slug, number).select_related("repository").first()
    if pull_request is not None:
        return pull_request
    known = ", ".join(
        f"#{pr_number}"
        for pr_number in pull_requests.filter(repository__slug=slug).values_list("number", flat=True)[:10]
    )
    hint = f"Known pull requests of {slug}: {known}." if known else f"No repository {slug} is recorded."
    raise PullRequestNotFound(
        f"No pull request {slug}#{number} is tracked here: import its review first (import_review), "
        f"or check the owner/name and the number. {hint}"
    )


def pull_request_latest_head(pull_request: PullRequest) -> Commit | None:
    """The most recently pinned head of the pull request."""
    pin = PinnedCommit.objects.filter(pull_request=pull_request).heads().select_related("commit").in_order().last()
    return pin.commit if pin else None


def reviewed_pin(pins) -> PinnedCommit | None:
    """The pin evidence is recorded at when its item names no commit, in a bundle or in the
    editor: the first reviewed pin, over pins already loaded (a pull request has a few)."""
    reviewed = [pin for pin in pins if pin.role == PinnedCommit.Role.REVIEWED]
    return min(reviewed, key=lambda pin: (pin.pinned_at, pin.pk)) if reviewed else None


def preparable_cursor(db=None):
    """A cursor for a query written out that runs on every request (the gate's, a kept page's key):
    on PostgreSQL with `prepare_threshold` set (`DATABASE_PREPARED_STATEMENTS`), one that binds its
    parameters on the server, so psycopg prepares the statement once it has run a few times on the
    connection: planning it is most of what it costs there. Wrapped as Django wraps its own, so it
    is counted and logged alike. The ORM's cursors bind on the client and are never prepared."""
    # The connection itself, not `django.db.connection`: each attribute read through that proxy
    # looks the connection up again, six of them a call.
    db = connections[DEFAULT_DB_ALIAS] if db is None else db
    if db.vendor != "postgresql" or db.settings_dict["OPTIONS"].get("prepare_threshold") is None:
        return db.cursor()
    import psycopg  # only on PostgreSQL

    db.ensure_connection()
    raw = psycopg.Cursor(db.connection)
    return _StatementLogged(raw, db) if db.queries_logged else db.make_cursor(raw)


class _StatementLogged(CursorDebugWrapper):
    """Logged (DEBUG, a test's captured queries) with its statement as written: Django reads back
    the query a client-bound cursor sent, which a server-bound one does not keep, and would log
    None."""

    def debug_sql(self, sql=None, params=None, use_last_executed_query=False, many=False):
        return super().debug_sql(sql, params, use_last_executed_query=False, many=many)


def pull_requests_version() -> tuple:
    """A value that changes whenever anything a pull request's pages show changes, in any pull
    request: the generations only move forward, a new pull request has a new id, and a deleted one
    lowers the count. One aggregate over the pull requests (a few rows a review), not over their
    findings: what a list's count can be cached by. Written out: it is read on every list request,
    and building it with the ORM cost more than running it."""
    table = connection.ops.quote_name(PullRequest._meta.db_table)
    with preparable_cursor() as cursor:
        cursor.execute(f'SELECT COUNT(*), SUM("generation"), MAX("id") FROM {table}')
        return tuple(cursor.fetchone())


def site_version() -> tuple:
    """`pull_requests_version()` with every repository's id, slug, visibility and forge URL, in one
    query: what a page across repositories shows of them (the home page) moves with either. Read on
    every request of such a page, so written out and prepared (`preparable_cursor`)."""
    pull_requests = connection.ops.quote_name(PullRequest._meta.db_table)
    repositories = connection.ops.quote_name(Repository._meta.db_table)
    with preparable_cursor() as cursor:
        cursor.execute(
            f'SELECT 0, COUNT(*), SUM("generation"), MAX("id"), NULL, NULL, NULL FROM {pull_requests} '
            f'UNION ALL SELECT 1, "id", NULL, NULL, "slug", "visibility", "web_url" FROM {repositories}'
        )
        rows = cursor.fetchall()
    [(_, count, total, highest, *_)] = [row for row in rows if row[0] == 0]
    return (count, total, highest), tuple(sorted(tuple(row[1:2] + row[4:]) for row in rows if row[0] == 1))


def pull_request_generation_is(pull_request_id: int, generation: int) -> bool:
    """Whether the PR is still at `generation`: asked after something was built from what it read
    at that generation, before keeping it under that generation's key."""
    return PullRequest.objects.filter(pk=pull_request_id, generation=generation).exists()


def readable_repositories(user):
    """The repositories `user` may read, as a queryset to filter reads by (one query, usable as a
    subquery). A repository outside it is answered as if it did not exist (a 404, never a 403)."""
    return Repository.objects.readable_by(user)


def repositories_where(user, action: Action):
    """The repositories on which `user` may do `action`, as a queryset (the admin narrows its
    lists and actions by it)."""
    action = Action(action)
    if action is Action.READ:
        return readable_repositories(user)
    if holds_everywhere(user, action):
        return Repository.objects.all()
    ids = [repository_id for repository_id, actions in membership_actions(user).items() if action in actions]
    return Repository.objects.filter(pk__in=ids)


def queues_served(*, within_seconds: float) -> frozenset[str]:
    """The queues some worker consumes that said it was alive in the last `within_seconds`."""
    since = timezone.now() - timedelta(seconds=within_seconds)
    rows = WorkerHost.objects.filter(seen_at__gte=since).values_list("queues", flat=True)
    return frozenset(queue for queues in rows for queue in queues)


def worker_hosts(*, within_seconds: float, now=None) -> list[WorkerHost]:
    """The workers that said they were alive in the `within_seconds` before `now`, by name."""
    since = (now or timezone.now()) - timedelta(seconds=within_seconds)
    return list(WorkerHost.objects.filter(seen_at__gte=since).order_by("hostname"))
