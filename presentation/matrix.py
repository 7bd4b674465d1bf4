"""A finding's verification matrix: one row per evidence item, one column per pinned commit (in
pin order, then any verified commit that is not pinned), a verdict per column."""
from dataclasses import dataclass

from findings.models import Evidence, EvidenceResult, Finding, Verification
from core import vocabulary
from presentation.rendering.pictures import GridCell, GridRow, grid_pictures
from presentation.finding_views import result_marks
from reviews.models import Commit, PinnedCommit

CELL_LABELS = vocabulary.STATE_LABELS


@dataclass
class Column:
    commit: Commit
    pin: PinnedCommit | None
    verification: Verification | None
    commit_link: str

    @property
    def verdict(self) -> str:
        return self.verification.verdict if self.verification else ""

    @property
    def verdict_reason(self) -> str:
        """Why the verdict at this commit is an error (waiting for CI, not run, flaky), as stored
        with the verification there: each column its own, not the latest pin's."""
        return self.verification.verdict_reason if self.verification else ""


@dataclass
class Cell:
    state: str  # holds, moved, gone, error, unchecked, or '' when not verified at that commit
    location: str = ""  # where it moved to: path:start–end
    link: str = ""
    detail: str = ""
    marks: tuple[str, ...] = ()
    # A check item's outcome there (fails, partly, passes, waiting, not_run, flaky, uncheckable):
    # its cell says that, in the vocabulary's words, rather than the bare state.
    outcome: str = ""

    @property
    def label(self) -> str:
        if self.outcome in vocabulary.CHECK_OUTCOME_PHRASES:
            return vocabulary.check_outcome_phrase(self.outcome)
        return CELL_LABELS[self.state]


@dataclass
class Row:
    evidence: Evidence
    cells: list[Cell]


@dataclass
class Matrix:
    columns: list[Column]
    rows: list[Row]

    def picture(self, *, title: str) -> str:
        """The matrix drawn: each evidence item by each commit, and where its code moved to."""
        return grid_pictures(
            rows=[
                GridRow(
                    label=f"{row.evidence.position + 1}. {row.evidence.describe()}",
                    cells=[
                        GridCell(state=cell.state, label=cell.label, marks=cell.marks,
                                 note=f"to {cell.location}" if cell.state == "moved" else "")
                        for cell in row.cells
                    ],
                )
                for row in self.rows
            ],
            columns=[
                f"{column.commit.short_sha} {column.pin.get_role_display().lower() if column.pin else 'not pinned'}"
                for column in self.columns
            ],
            title=title, id_prefix="finding-matrix", cell_width=190, label_width=330,
        )


def _cell(result: EvidenceResult | None, column: Column, repository, evidence: Evidence) -> Cell:
    if not evidence.is_checkable:
        # A note reads the same at every commit, verified or not, whatever a run stored for it.
        return Cell(state=vocabulary.evidence_state(checkable=False, state=""),
                    detail=result.detail if result else "")
    if result is None:
        return Cell(state="")
    if result.moved:
        return Cell(
            state=vocabulary.MOVED,
            location=result.location,
            link=repository.permalink(column.commit.sha, result.path, result.start_line, result.end_line),
            detail=result.detail,
            marks=result_marks(result),
        )
    if result.state == EvidenceResult.State.HOLDS and result.evidence.kind == Evidence.Kind.PATTERN:
        return Cell(state=result.state, location=result.location, detail=result.detail)
    if evidence.kind == Evidence.Kind.CHECK:
        outcome = (result.facts or {}).get("outcome", "")
        return Cell(state=result.state, detail=result.detail, outcome=outcome if isinstance(outcome, str) else "")
    return Cell(state=result.state, detail=result.detail, marks=result_marks(result))


def verification_matrix(
    finding: Finding, *, pins: list[PinnedCommit], verifications: list[Verification]
) -> Matrix:
    repository = finding.pull_request.repository
    by_commit = {verification.commit_id: verification for verification in verifications}
    pinned_ids = {pin.commit_id for pin in pins}
    columns = [
        Column(commit=pin.commit, pin=pin, verification=by_commit.get(pin.commit_id),
               commit_link=repository.commit_link(pin.commit.sha))
        for pin in pins
    ] + [
        Column(commit=verification.commit, pin=None, verification=verification,
               commit_link=repository.commit_link(verification.commit.sha))
        for verification in verifications
        if verification.commit_id not in pinned_ids
    ]
    results = {
        (column.commit.pk, result.evidence_id): result
        for column in columns
        if column.verification
        for result in column.verification.results.all()
    }
    rows = [
        Row(
            evidence=evidence,
            cells=[_cell(results.get((column.commit.pk, evidence.pk)), column, repository, evidence)
                   for column in columns],
        )
        for evidence in finding.evidence.all()
    ]
    return Matrix(columns=columns, rows=rows)
