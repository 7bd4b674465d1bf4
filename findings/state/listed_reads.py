"""What a list shows of each finding from its pull request's stored state, read for the page
alone: the list rows `listed` writes with the state, and, for a finding without one, the state as
every reader reads it."""
from django.db import connection

from findings.models import FindingListState, PullRequestState
from findings.state.derivation import SHAPE
from findings.state.stored import pull_request_states
from reviews.models import PullRequest


def listed_state(verdict: str, resolution: str, possibly_regressed) -> dict:
    """A row's values as the state a serializer reads (`stored.finding_state`'s keys)."""
    return {"verdict": verdict or None, "resolution": resolution, "possibly_regressed": bool(possibly_regressed)}


def states_from_stored(pairs) -> dict[int, dict]:
    """Finding id -> its state, for (finding id, pull request id) pairs whose rows were missing:
    read from their pull requests' states as every reader reads them."""
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
