"""A page of a findings list, read as values: the columns a list row shows, the names of what it
points at, and its state (`findings.state.listed`), in one query by the page's ids.

Written out, and its text kept once per number of ids: building it with the ORM, and making a
model object of each row, cost more than running it. Dates come as the database gives them: on
SQLite the stored text (UTC), on PostgreSQL aware datetimes."""
import functools

from django.contrib.auth import get_user_model
from django.db import connection

from findings.models import Finding, FindingListState, PullRequestState
from findings.state.derivation import SHAPE
from findings.state.listed_reads import states_from_stored
from reviews.models import Commit, PullRequest, Repository


# A row of `list_rows`, by position: id, pull_request_id, number, kind, caught_by, title, summary,
# path, line, status, resolved_at, created_at, updated_at, the repository's slug, the pull
# request's number, resolved_by's username, resolved_commit's SHA, then its state: verdict (None
# while it has none), resolution, possibly_regressed, verdict_reason ('' unless an error verdict's
# items say why); last, a value that is not None.
LIST_ROW_FIELDS = (
    "id", "pull_request_id", "number", "kind", "caught_by", "title", "summary", "path", "line", "status",
    "resolved_at", "created_at", "updated_at", "repository", "pull_request_number", "resolved_by",
    "resolved_commit", "verdict", "resolution", "possibly_regressed", "verdict_reason",
)


class ListIds:
    """The ids of the findings of a list in its order (pull request, number), read with SQL
    written out (the list's index, read in order): every finding, or, `public_only`, every
    finding of a public repository, narrowed by `filters`: equalities, {lookup path: value}, each
    path a column of the finding, of its pull request (`pull_request__number`) or of its
    repository (`pull_request__repository__slug`), as a filter's `field_name` names it, and each
    value one the column's model field takes (converted as the ORM would). What
    `api.pagination.BoundedCountPaginator` reads instead of a queryset: a page's ids and how many
    rows there are from its first up to a bound, counted in the database rather than read, with
    the page's rows, in one query."""

    def __init__(self, *, public_only: bool, filters: dict | None = None):
        self.public_only = public_only
        # The pull request's and the repository's columns first (a subquery), then the finding's.
        equalities = sorted(((_column(path), path) for path in filters or {}),
                            key=lambda item: (item[0][0] == "f", item[0]))
        self.shape = (public_only, tuple(column for column, _ in equalities))
        self.params = [_model_field(path).get_db_prep_value(filters[path], connection) for _, path in equalities]
        self.rows: list[tuple] = []

    def page_and_count(self, bottom: int, size: int, bound: int) -> tuple[list[int], int]:
        """The ids of the `size` rows from row `bottom`, and how many rows there are from there up
        to row `bound` (0 with no ids: past the end, or nothing). The page's rows are read in the
        same query, for `list_rows` (`rows`)."""
        self.rows = []
        if bound <= bottom or bound > 2**63 - 1:  # nothing there (a page past any the database can hold)
            return [], 0
        with connection.cursor() as cursor:
            cursor.execute(_page_sql(self.shape),
                           [*self.params, bound - bottom, bottom, SHAPE, *self.params, size, bottom])
            fetched = cursor.fetchall()
        self.rows = [row[:-1] for row in fetched]
        return [row[0] for row in fetched], fetched[0][-1] if fetched else 0

    def ids_between(self, bottom: int, top: int) -> list[int]:
        if top <= bottom or top > 2**63 - 1:
            return []
        with connection.cursor() as cursor:
            cursor.execute(f"{_ids_sql(self.shape)} LIMIT %s OFFSET %s", [*self.params, top - bottom, bottom])
            return [pk for (pk,) in cursor.fetchall()]

    def count_up_to(self, bound: int) -> int:
        with connection.cursor() as cursor:
            cursor.execute(f"SELECT COUNT(*) FROM ({_ids_sql(self.shape)} LIMIT %s) listed", [*self.params, bound])
            return cursor.fetchone()[0]


# The tables an equality may be on, from a finding: its own, its pull request's, its repository's.
_ALIASES = {(): "f", ("pull_request",): "pr", ("pull_request", "repository"): "r"}


@functools.cache
def _model_field(path: str):
    """The model field at the end of lookup path `path` from a finding."""
    *relations, name = path.split("__")
    model = Finding
    for relation in relations:
        model = model._meta.get_field(relation).related_model
    return model._meta.get_field(name)


@functools.cache
def _column(path: str) -> tuple[str, str]:
    """Where an equality on `path` is read: (the table's alias, the column)."""
    *relations, _ = path.split("__")
    alias = _ALIASES.get(tuple(relations))
    if alias is None:
        raise ValueError(f"A list's ids are not filtered by {path}: only the finding's, its pull request's "
                         "and its repository's columns are.")
    return alias, _model_field(path).column


@functools.cache
def _where(shape: tuple, alias: str) -> str:
    """The conditions of a ListIds of `shape` on the findings as `alias`; their parameters are
    ListIds.params."""
    public_only, columns = shape
    quote = connection.ops.quote_name
    pull_request, repository = quote(PullRequest._meta.db_table), quote(Repository._meta.db_table)
    conditions = []
    of_pull_request = [f"{table}.{quote(column)} = %s" for table, column in columns if table != "f"]
    if public_only:
        of_pull_request.append(f"r.\"visibility\" = '{Repository.Visibility.PUBLIC.value}'")
    if of_pull_request:
        conditions.append(
            f'{alias}."pull_request_id" IN (SELECT pr."id" FROM {pull_request} pr INNER JOIN {repository} r '
            f'ON r."id" = pr."repository_id" WHERE {" AND ".join(of_pull_request)})'
        )
    for table, column in columns:
        if table == "f":
            conditions.append(f"{alias}.{quote(column)} = %s")
    return f'WHERE {" AND ".join(conditions)} ' if conditions else ""


@functools.cache
def _ids_sql(shape: tuple) -> str:
    finding = connection.ops.quote_name(Finding._meta.db_table)
    return f'SELECT f."id" FROM {finding} f {_where(shape, "f")}ORDER BY f."pull_request_id", f."number"'


@functools.cache
def _page_sql(shape: tuple) -> str:
    """The page's rows (as `list_rows` reads them) in the list's order, each with the count of
    the rows from the page's first up to the bound (an uncorrelated subquery: run once)."""
    finding = connection.ops.quote_name(Finding._meta.db_table)
    counted = f'(SELECT COUNT(*) FROM (SELECT 1 FROM {finding} c {_where(shape, "c")}LIMIT %s OFFSET %s) counted)'
    return _rows_query(
        f'WHERE f."id" IN (SELECT p."id" FROM {finding} p {_where(shape, "p")}'
        f'ORDER BY p."pull_request_id", p."number" LIMIT %s OFFSET %s) ORDER BY f."pull_request_id", f."number"',
        counted=counted,
    )


def list_rows(ids: list[int], *, read: list | None = None) -> list[tuple]:
    """The rows of findings `ids` (see LIST_ROW_FIELDS), in that order (an id with no finding,
    deleted since it was listed, is left out), or, as `read`, the rows already read with the ids
    (`ListIds.rows`). A row's state is its list row in the current state of its pull request, or,
    where that is not stored, the state as every reader reads it (derived if need be)."""
    if not ids:
        return []
    if read is None:
        with connection.cursor() as cursor:
            cursor.execute(_rows_sql(len(ids)), [SHAPE, *ids])
            read = cursor.fetchall()
    rows = {row[0]: row for row in read}
    missing = [(pk, row[1]) for pk, row in rows.items() if row[-1] is None]
    if missing:
        states = states_from_stored(missing)
        for pk, _ in missing:
            state, row = states[pk], rows[pk]
            rows[pk] = (*row[:17], state.get("verdict"), state.get("resolution", str(row[9])),
                        bool(state.get("possibly_regressed")), state.get("verdict_reason") or "", True)
    return [rows[pk] for pk in ids if pk in rows]


@functools.cache
def _rows_sql(count: int) -> str:
    return _rows_query(f'WHERE f."id" IN ({", ".join(["%s"] * count)})')


def _rows_query(where: str, *, counted: str = "") -> str:
    """The rows' SELECT (with `counted` as a last column), its one parameter the state's shape,
    after those of `counted`, before those of `where`."""
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
        f'r."slug", pr."number", u.{username}, c."sha", NULLIF(l."verdict", \'\'), l."resolution", '
        f'l."possibly_regressed", l."verdict_reason", l."id"{", " + counted if counted else ""} '
        f'FROM {table[Finding]} f '
        f'INNER JOIN {table[PullRequest]} pr ON pr."id" = f."pull_request_id" '
        f'INNER JOIN {table[Repository]} r ON r."id" = pr."repository_id" '
        f'LEFT OUTER JOIN {table[user_model]} u ON u.{user_id} = f."resolved_by_id" '
        f'LEFT OUTER JOIN {table[Commit]} c ON c."id" = f."resolved_commit_id" '
        f'LEFT OUTER JOIN {table[PullRequestState]} s '
        f'ON s."pull_request_id" = f."pull_request_id" AND s."generation" = pr."generation" '
        f'LEFT OUTER JOIN {table[FindingListState]} l '
        f'ON l."state_id" = s."id" AND l."finding_id" = f."id" AND l."shape" = %s '
        f'{where}'
    )
