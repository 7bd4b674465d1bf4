"""A page of a findings list, read as values: the columns a list row shows, the names of what it
points at, and its state (`findings.state.listed`), in one query by the page's ids.

Written out, and its text kept once per number of ids: building it with the ORM, and making a
model object of each row, cost more than running it. Dates come as the database gives them: on
SQLite the stored text (UTC), on PostgreSQL aware datetimes (`ListRow.resolved_at` and the others
are one or the other)."""
import functools
from typing import NamedTuple

from django.contrib.auth import get_user_model
from django.db import connection

from findings.models import Finding, FindingListState, PullRequestState
from findings.state.derivation import SHAPE
from findings.state.listed import listed_state, states_from_stored
from reviews.models import Commit, PullRequest, Repository


class ListRow(NamedTuple):
    id: int
    pull_request_id: int
    number: int
    kind: str
    caught_by: str
    title: str
    summary: str
    path: str
    line: int | None
    status: str
    resolved_at: object
    created_at: object
    updated_at: object
    repository: str
    pull_request_number: int
    resolved_by: str | None
    resolved_commit: str | None
    state: dict


class ListIds:
    """The ids of every finding (or, `public_only`, of every finding of a public repository) in
    the list's order (pull request, number), for a page of the list unfiltered: the query the ORM
    makes of it (the same plan: the list's index, read in order), written out. What
    `api.pagination.BoundedCountPaginator` reads instead of a queryset."""

    def __init__(self, *, public_only: bool):
        self.public_only = public_only

    def ids_between(self, bottom: int, top: int) -> list[int]:
        if top <= bottom or top > 2**63 - 1:  # nothing there (a page past any the database can hold)
            return []
        with connection.cursor() as cursor:
            cursor.execute(_ids_sql(self.public_only), [top - bottom, bottom])
            return [pk for (pk,) in cursor.fetchall()]

    def count_up_to(self, bound: int) -> int:
        with connection.cursor() as cursor:
            cursor.execute(f"SELECT COUNT(*) FROM ({_ids_sql(self.public_only)}) listed", [bound, 0])
            return cursor.fetchone()[0]


@functools.cache
def _ids_sql(public_only: bool) -> str:
    quote = connection.ops.quote_name
    finding, pull_request, repository = (
        quote(Finding._meta.db_table), quote(PullRequest._meta.db_table), quote(Repository._meta.db_table)
    )
    visible = (
        f'INNER JOIN {pull_request} pr ON f."pull_request_id" = pr."id" WHERE pr."repository_id" IN '
        f"""(SELECT r."id" FROM {repository} r WHERE r."visibility" = '{Repository.Visibility.PUBLIC.value}') """
        if public_only else ""
    )
    return f'SELECT f."id" FROM {finding} f {visible}ORDER BY f."pull_request_id" ASC, f."number" ASC LIMIT %s OFFSET %s'


def list_rows(ids: list[int]) -> list[ListRow]:
    """The rows of findings `ids`, in that order (an id with no finding, deleted since it was
    listed, is left out). A row's state is its list row in the current state of its pull request,
    or, where that is not stored, the state as every reader reads it (derived if need be)."""
    if not ids:
        return []
    with connection.cursor() as cursor:
        cursor.execute(_rows_sql(len(ids)), [SHAPE, *ids])
        fetched = cursor.fetchall()
    rows, missing = {}, []
    for *values, stored, verdict, resolution, regressed in fetched:
        if stored is None:
            missing.append((values[0], values[1]))
            rows[values[0]] = values
        else:
            rows[values[0]] = ListRow(*values, listed_state(verdict, resolution, regressed))
    if missing:
        states = states_from_stored(missing)
        for pk, _ in missing:
            rows[pk] = ListRow(*rows[pk], states[pk])
    return [rows[pk] for pk in ids if pk in rows]


@functools.cache
def _rows_sql(count: int) -> str:
    quote = connection.ops.quote_name
    user_model = get_user_model()
    table = {model: quote(model._meta.db_table) for model in (
        Finding, PullRequest, Repository, Commit, PullRequestState, FindingListState, user_model,
    )}
    username = quote(user_model._meta.get_field("username").column)
    user_id = quote(user_model._meta.pk.column)
    if connection.vendor == "sqlite":
        # The text as stored, not parsed into a datetime (the column's declared type would).
        def moment(column: str) -> str:
            return f'CAST(f."{column}" AS TEXT)'
    else:
        def moment(column: str) -> str:
            return f'f."{column}"'
    columns = ", ".join(f'f."{Finding._meta.get_field(name).column}"' for name in (
        "id", "pull_request", "number", "kind", "caught_by", "title", "summary", "path", "line", "status",
    ))
    return (
        f'SELECT {columns}, {moment("resolved_at")}, {moment("created_at")}, {moment("updated_at")}, '
        f'r."slug", pr."number", u.{username}, c."sha", l."id", l."verdict", l."resolution", '
        f'l."possibly_regressed" '
        f'FROM {table[Finding]} f '
        f'INNER JOIN {table[PullRequest]} pr ON pr."id" = f."pull_request_id" '
        f'INNER JOIN {table[Repository]} r ON r."id" = pr."repository_id" '
        f'LEFT OUTER JOIN {table[user_model]} u ON u.{user_id} = f."resolved_by_id" '
        f'LEFT OUTER JOIN {table[Commit]} c ON c."id" = f."resolved_commit_id" '
        f'LEFT OUTER JOIN {table[PullRequestState]} s '
        f'ON s."pull_request_id" = f."pull_request_id" AND s."generation" = pr."generation" '
        f'LEFT OUTER JOIN {table[FindingListState]} l '
        f'ON l."state_id" = s."id" AND l."finding_id" = f."id" AND l."shape" = %s '
        f'WHERE f."id" IN ({", ".join(["%s"] * count)})'
    )
