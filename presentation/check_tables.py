"""What a check item's reports said at each pinned commit, as the finding page's small table shows
it: a row per named test or result (or one for the whole check), a column per verified pin, each
cell the outcome in the vocabulary's words, with the links to the runs."""
from __future__ import annotations

from dataclasses import dataclass, field

from core import vocabulary
from findings.models import Evidence, EvidenceResult


@dataclass
class CheckColumn:
    sha: str
    outcome: str
    label: str
    runs: list[str] = field(default_factory=list)


@dataclass
class CheckRow:
    name: str
    # (outcome, label, where a result is reported there) per column; ("", "—", "") where nothing was said.
    cells: list[tuple[str, str, str]]


@dataclass
class CheckTable:
    columns: list[CheckColumn]
    rows: list[CheckRow]


def check_table(evidence: Evidence) -> CheckTable | None:
    """The item's outcomes at each pinned commit it was verified at, in the order they were pinned
    (two queries); None when it has not been verified anywhere yet."""
    pins = list(evidence.finding.pull_request.pins.order_by("pinned_at", "pk").values_list("commit_id", flat=True))
    order = {commit_id: index for index, commit_id in enumerate(dict.fromkeys(pins))}
    results = sorted(
        (result for result in EvidenceResult.objects.filter(evidence=evidence).select_related("verification__commit")
         if result.verification.commit_id in order),
        key=lambda result: order[result.verification.commit_id],
    )
    if not results:
        return None
    columns = []
    by_column: list[dict] = []
    for result in results:
        facts = result.facts or {}
        outcome = facts.get("outcome", "")
        columns.append(CheckColumn(
            sha=result.verification.commit.short_sha, outcome=outcome, label=vocabulary.check_outcome_label(outcome),
            runs=[report["url"] for report in facts.get("reports", []) if report.get("url")],
        ))
        by_column.append(facts)
    rows = []
    if evidence.check_tests:
        for test in evidence.check_tests:
            cells = []
            for facts in by_column:
                outcome = next((item["outcome"] for item in facts.get("tests", []) if item["id"] == test), "")
                cells.append((outcome, vocabulary.named_outcome_label(outcome) if outcome else "—", ""))
            rows.append(CheckRow(name=test, cells=cells))
    elif evidence.check_results:
        for named in evidence.check_results:
            cells = []
            for facts in by_column:
                found = next((item for item in facts.get("results", []) if (item["rule"], item["path"],
                              item.get("start_line")) == (named["rule"], named["path"], named.get("start_line"))), None)
                outcome = found["outcome"] if found else ""
                place = vocabulary.location(found["now_path"], found.get("now_line")) if found and found.get(
                    "now_path") else ""
                cells.append((outcome, vocabulary.named_outcome_label(outcome) if outcome else "—", place))
            rows.append(CheckRow(
                name=f"{named['rule']} at {vocabulary.location(named['path'], named.get('start_line'))}", cells=cells,
            ))
    return CheckTable(columns=columns, rows=rows)
