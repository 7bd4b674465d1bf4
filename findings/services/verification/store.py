"""Storing what verification found: one Verification per finding per commit and its evidence
results, written with upserts, and snippet texts read from the repository. Whether a finding
marked fixed looks regressed is derived from these rows with the rest of the PR's state
(`findings.state`), not stored here."""
import json
import logging

from django.db import connection, transaction
from django.utils import timezone

from findings.models import Evidence, EvidenceResult, Finding, Verification
from findings.services.verification.rows import Outcome
from reviews.models import Commit, PullRequest
from reviews.services import pull_request_changed

logger = logging.getLogger(__name__)


def _store_snippet_texts(texts: list[tuple[int, str]]) -> None:
    """Keep the snippet texts read from the repository, so the pages show them and later runs need
    not read them again: one UPDATE ... FROM (VALUES ...) per batch, not one per item. Only where
    the text is still empty, so a text a person stored meanwhile is never overwritten."""
    if not texts:
        return
    quote = connection.ops.quote_name
    table = quote(Evidence._meta.db_table)
    per_statement = min(1000, (connection.features.max_query_params or 65535) // 2)
    with transaction.atomic(), connection.cursor() as cursor:
        for start in range(0, len(texts), per_statement):
            batch = texts[start : start + per_statement]
            # Both databases name the columns of a VALUES list column1, column2, ...
            cursor.execute(
                f"UPDATE {table} SET {quote('text')} = batch.column2 "
                f"FROM (VALUES {', '.join(['(%s, %s)'] * len(batch))}) AS batch "
                f"WHERE {table}.{quote('id')} = batch.column1 AND {table}.{quote('text')} = ''",
                [value for row in batch for value in row],
            )


@transaction.atomic
def _store(pull_request: PullRequest, commit: Commit, outcomes: list[Outcome]) -> list[Verification]:
    """Replace the verifications of these findings at `commit`, and their results, with upserts:
    a re-run or a duplicated task updates the rows in place, and a concurrent run waits on them.

    Plain INSERT ... ON CONFLICT statements: building ten thousand model instances and their SQL
    would cost more than checking the evidence did."""
    outcomes = _still_current(outcomes)
    now = connection.ops.adapt_datetimefield_value(timezone.now())
    _upsert(
        Verification,
        ("finding_id", "commit_id", "verdict", "checked_at", "first_checked_at", "detail", "evidence_version",
         "verdict_reason"),
        conflict=("finding_id", "commit_id"),
        update=("verdict", "checked_at", "detail", "evidence_version", "verdict_reason"),
        rows=[(o.finding.pk, commit.pk, o.verdict, now, now, o.detail, o.finding.evidence_version, o.reason)
              for o in outcomes],
    )
    verifications = {
        verification.finding_id: verification
        for verification in Verification.objects.filter(
            commit=commit, finding__in=[o.finding.pk for o in outcomes]
        ).select_related("commit")
    }
    _replace_results(
        [verification.pk for verification in verifications.values()],
        [
            (
                verifications[o.finding.pk].pk,
                evidence.pk,
                result.state,
                result.path or "",
                result.start_line,
                result.end_line,
                result.detail,
                json.dumps(result.facts) if result.facts else "{}",
                json.dumps(result.successor.as_data()) if result.successor is not None else None,
            )
            for o in outcomes
            for evidence, result in o.results
        ],
    )
    # Raw SQL sends no signals: the new verdicts change what the pages and the gate answer.
    pull_request_changed(pull_request_id=pull_request.pk)
    return [verifications[o.finding.pk] for o in outcomes]


def _still_current(outcomes: list[Outcome]) -> list[Outcome]:
    """The outcomes whose finding still has the evidence they were checked against. The findings'
    rows are locked first: a re-import changes evidence only with its finding's row locked and its
    version bumped, so from here to the commit nothing checked can change or go away under us."""
    versions = dict(
        Finding.objects.select_for_update()
        .filter(pk__in=[o.finding.pk for o in outcomes])
        .order_by("pk")
        .values_list("pk", "evidence_version")
    )
    current = [o for o in outcomes if versions.get(o.finding.pk) == o.finding.evidence_version]
    if len(current) != len(outcomes):
        logger.info("%d findings' evidence changed while they were verified; not stored", len(outcomes) - len(current))
    return current


_RESULT_COLUMNS = (
    "verification_id", "evidence_id", "state", "path", "start_line", "end_line", "detail", "facts", "successor",
)


def _replace_results(verification_ids: list[int], rows: list[tuple]) -> None:
    """Store the results of these verifications. The verification rows are already locked by
    their upsert, so a concurrent run of the same commit waits here rather than interleaving."""
    if connection.vendor == "postgresql":
        # COPY is five times faster than multi-row INSERTs for ten thousand rows.
        EvidenceResult.objects.filter(verification_id__in=verification_ids).delete()
        with connection.cursor() as cursor:
            table = connection.ops.quote_name(EvidenceResult._meta.db_table)
            columns = ", ".join(map(connection.ops.quote_name, _RESULT_COLUMNS))
            with cursor.cursor.copy(f"COPY {table} ({columns}) FROM STDIN") as copy:
                for row in rows:
                    copy.write_row(row)
        return
    # Results of evidence since removed went with it (on delete cascade): the upsert covers the rest.
    _upsert(
        EvidenceResult,
        _RESULT_COLUMNS,
        conflict=("verification_id", "evidence_id"),
        update=("state", "path", "start_line", "end_line", "detail", "facts", "successor"),
        rows=rows,
    )


def _upsert(model, columns: tuple[str, ...], *, conflict: tuple[str, ...], update: tuple[str, ...], rows) -> None:
    """INSERT ... ON CONFLICT DO UPDATE (PostgreSQL and SQLite both speak it), many rows per
    statement: one round trip per row would cost PostgreSQL more than the checks themselves."""
    if not rows:
        return
    quote = connection.ops.quote_name
    row_sql = f"({', '.join(['%s'] * len(columns))})"
    head = f"INSERT INTO {quote(model._meta.db_table)} ({', '.join(map(quote, columns))}) VALUES "
    tail = (
        f" ON CONFLICT ({', '.join(map(quote, conflict))}) DO UPDATE SET "
        + ", ".join(f"{quote(name)} = excluded.{quote(name)}" for name in update)
    )
    per_statement = min(1000, (connection.features.max_query_params or 65535) // len(columns))
    with connection.cursor() as cursor:
        for start in range(0, len(rows), per_statement):
            batch = rows[start : start + per_statement]
            cursor.execute(head + ", ".join([row_sql] * len(batch)) + tail, [value for row in batch for value in row])
