"""What a list shows of each finding from its pull request's stored state, read for the page alone.

A stored state holds every finding of its pull request in one JSON value, which a reader parses
whole: for a pull request of 25,000 findings that is megabytes for every page of 50. So the part a
list shows (verdict, resolution, possibly_regressed) is also written as a row a finding
(`FindingListState`), in the state's transaction, and a page reads the rows of its own findings
by the state of their pull request's current generation. A finding without a row there (its pull
request's state not stored yet, or stored in an older shape) is read from the state as every
other reader reads it (`stored.pull_request_states`), which derives and stores it if need be.
Here the rows are written; `listed_reads` reads them."""
import functools

from django.db import connection

from findings.models import FindingListState, PullRequestState
from findings.state.derivation import SHAPE


def listed_rows(state_id: int, findings: dict) -> list[FindingListState]:
    """The rows of a state's `findings` (finding id -> its state, as derived)."""
    return [
        FindingListState(
            state_id=state_id, finding_id=int(pk), shape=SHAPE, verdict=finding.get("verdict") or "",
            resolution=finding.get("resolution") or finding.get("status", ""),
            possibly_regressed=bool(finding.get("possibly_regressed")),
            verdict_reason=finding.get("verdict_reason") or "",
        )
        for pk, finding in findings.items()
    ]


def listed_store(state_id: int, findings: dict) -> None:
    """Write the list rows of the state just stored as row `state_id` (whose `findings` are
    `findings`): on SQLite and PostgreSQL one INSERT that reads them from the stored row, however
    many findings, with no object made of each."""
    sql = _insert_sql()
    if sql is None:
        FindingListState.objects.bulk_create(listed_rows(state_id, findings))
        return
    with connection.cursor() as cursor:
        cursor.execute(sql, [SHAPE, state_id])


def listed_delete_older(pull_request_id: int, generation: int) -> None:
    """Delete the PR's states older than `generation`, with their list rows: two DELETEs (the
    ORM's would load each state, and its JSON, to find what cascades)."""
    quote = connection.ops.quote_name
    listed, state = quote(FindingListState._meta.db_table), quote(PullRequestState._meta.db_table)
    older = f'SELECT "id" FROM {state} WHERE "pull_request_id" = %s AND "generation" < %s'
    with connection.cursor() as cursor:
        cursor.execute(f'DELETE FROM {listed} WHERE "state_id" IN ({older})', [pull_request_id, generation])
        cursor.execute(f'DELETE FROM {state} WHERE "pull_request_id" = %s AND "generation" < %s',
                       [pull_request_id, generation])


@functools.cache
def _insert_sql() -> str | None:
    """The INSERT of a stored state's list rows from its `findings` (each entry's verdict,
    resolution, or its status where it has none, and whether it is possibly regressed, as
    `listed_rows` makes them, and why an error verdict is one), for the databases whose JSON functions it is written with."""
    quote = connection.ops.quote_name
    listed, state = quote(FindingListState._meta.db_table), quote(PullRequestState._meta.db_table)
    into = (f'INSERT INTO {listed} ("state_id", "finding_id", "shape", "verdict", "resolution", '
            f'"possibly_regressed", "verdict_reason") ')
    if connection.vendor == "sqlite":
        return into + (
            """SELECT s."id", CAST(j."key" AS INTEGER), %s, COALESCE(json_extract(j."value", '$.verdict'), ''), """
            """COALESCE(json_extract(j."value", '$.resolution'), json_extract(j."value", '$.status'), ''), """
            """json_type(j."value", '$.possibly_regressed') = 'true', """
            """COALESCE(json_extract(j."value", '$.verdict_reason'), '') """
            f'FROM {state} s, json_each(s."findings") j WHERE s."id" = %s'
        )
    if connection.vendor == "postgresql":
        return into + (
            """SELECT s."id", CAST(j."key" AS BIGINT), %s, COALESCE(j."value" ->> 'verdict', ''), """
            """COALESCE(j."value" ->> 'resolution', j."value" ->> 'status', ''), """
            """COALESCE(j."value" -> 'possibly_regressed' = 'true'::jsonb, false), """
            """COALESCE(j."value" ->> 'verdict_reason', '') """
            f'FROM {state} s CROSS JOIN LATERAL jsonb_each(s."findings") j WHERE s."id" = %s'
        )
    return None
