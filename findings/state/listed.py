"""What a list shows of each finding from its pull request's stored state, read for the page alone.

A stored state holds every finding of its pull request in one JSON value, which a reader parses
whole: for a pull request of 25,000 findings that is megabytes for every page of 50. So the part a
list shows (verdict, resolution, possibly_regressed) is also written as a row a finding
(`FindingListState`), in the state's transaction, and a page reads the rows of its own findings
by the state of their pull request's current generation. A finding without a row there (its pull
request's state not stored yet, or stored in an older shape) is read from the state as every
other reader reads it (`stored.pull_request_states`), which derives and stores it if need be."""
import functools

from django.db import connection

from findings.models import FindingListState, PullRequestState
from findings.state.derivation import SHAPE
from reviews.models import PullRequest


def listed_rows(state_id: int, findings: dict) -> list[FindingListState]:
    """The rows of a state's `findings` (finding id -> its state, as derived)."""
    return [
        FindingListState(
            state_id=state_id, finding_id=int(pk), shape=SHAPE, verdict=finding.get("verdict") or "",
            resolution=finding.get("resolution") or finding.get("status", ""),
            possibly_regressed=bool(finding.get("possibly_regressed")),
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


def listed_state(verdict: str, resolution: str, possibly_regressed) -> dict:
    """A row's values as the state a serializer reads (`stored.finding_state`'s keys)."""
    return {"verdict": verdict or None, "resolution": resolution, "possibly_regressed": bool(possibly_regressed)}


def states_from_stored(pairs) -> dict[int, dict]:
    """Finding id -> its state, for (finding id, pull request id) pairs whose rows were missing:
    read from their pull requests' states as every reader reads them."""
    from findings.state.stored import pull_request_states

    states = pull_request_states({pull_request_id for _, pull_request_id in pairs})
    return {
        pk: states.get(pull_request_id, {}).get("findings", {}).get(str(pk), {})
        for pk, pull_request_id in pairs
    }


def listed_states(findings) -> dict[int, dict]:
    """Finding id -> what a list shows of its state, for findings already loaded (model instances
    with `pk` and `pull_request_id`): one query of their rows, whatever the size of their pull
    requests, and a read of the stored state for those without one."""
    findings = list(findings)
    if not findings:
        return {}
    ids = [finding.pk for finding in findings]
    pull_request_ids = sorted({finding.pull_request_id for finding in findings})
    with connection.cursor() as cursor:
        cursor.execute(_listed_sql(len(pull_request_ids), len(ids)), [SHAPE, *pull_request_ids, *ids])
        found = {pk: listed_state(verdict, resolution, regressed) for pk, verdict, resolution, regressed in cursor}
    missing = [(finding.pk, finding.pull_request_id) for finding in findings if finding.pk not in found]
    if missing:
        found.update(states_from_stored(missing))
    return found


def listed_attach(findings) -> list:
    """Give each of `findings` what a list shows of its state, as `finding.state`; returns them."""
    findings = list(findings)
    states = listed_states(findings)
    for finding in findings:
        finding.state = states[finding.pk]
    return findings


def _listed_sql(pull_requests: int, findings: int) -> str:
    quote = connection.ops.quote_name
    listed, state, pull_request = (
        quote(FindingListState._meta.db_table), quote(PullRequestState._meta.db_table),
        quote(PullRequest._meta.db_table),
    )
    return (
        f'SELECT l."finding_id", l."verdict", l."resolution", l."possibly_regressed" FROM {state} s '
        f'INNER JOIN {pull_request} pr ON pr."id" = s."pull_request_id" AND pr."generation" = s."generation" '
        f'INNER JOIN {listed} l ON l."state_id" = s."id" AND l."shape" = %s '
        f'WHERE s."pull_request_id" IN ({", ".join(["%s"] * pull_requests)}) '
        f'AND l."finding_id" IN ({", ".join(["%s"] * findings)})'
    )


@functools.cache
def _insert_sql() -> str | None:
    """The INSERT of a stored state's list rows from its `findings` (each entry's verdict,
    resolution, or its status where it has none, and whether it is possibly regressed, as
    `listed_rows` makes them), for the databases whose JSON functions it is written with."""
    quote = connection.ops.quote_name
    listed, state = quote(FindingListState._meta.db_table), quote(PullRequestState._meta.db_table)
    into = (f'INSERT INTO {listed} ("state_id", "finding_id", "shape", "verdict", "resolution", '
            f'"possibly_regressed") ')
    if connection.vendor == "sqlite":
        return into + (
            """SELECT s."id", CAST(j."key" AS INTEGER), %s, COALESCE(json_extract(j."value", '$.verdict'), ''), """
            """COALESCE(json_extract(j."value", '$.resolution'), json_extract(j."value", '$.status'), ''), """
            """json_type(j."value", '$.possibly_regressed') = 'true' """
            f'FROM {state} s, json_each(s."findings") j WHERE s."id" = %s'
        )
    if connection.vendor == "postgresql":
        return into + (
            """SELECT s."id", CAST(j."key" AS BIGINT), %s, COALESCE(j."value" ->> 'verdict', ''), """
            """COALESCE(j."value" ->> 'resolution', j."value" ->> 'status', ''), """
            """COALESCE(j."value" -> 'possibly_regressed' = 'true'::jsonb, false) """
            f'FROM {state} s CROSS JOIN LATERAL jsonb_each(s."findings") j WHERE s."id" = %s'
        )
    return None
