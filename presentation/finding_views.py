"""The findings of a pull request as its pages show them: in full with their evidence
(FindingView, EvidenceView) where a page shows them, and summed up with their verdict only
(FindingSummary) for the counts, the status line and the overview's lists."""
from dataclasses import dataclass
from functools import cached_property

from django.utils.safestring import SafeString

from core import vocabulary
from findings.models import Evidence, EvidenceResult, Finding, Verification
from findings.state.stored import states_attach
from findings.selectors.evidence_history import EvidenceHistory
from findings.selectors.findings import verifications_at
from findings.selectors.successors import SuccessorView, successor_read
from presentation.links import Links
from presentation.paging import list_page_numbers
from presentation.rendering.highlight import highlight_replacement, highlight_snippet
from presentation.rendering.markdown import has_diagram
from presentation.rendering.pictures import pin_history_sentence, pin_history_svg
from reviews.models import Commit, PullRequest


@dataclass
class EvidenceView:
    """One evidence item as a reviewer reads it, with where it stands at the latest verified commit."""

    evidence: Evidence
    result: EvidenceResult | None
    latest_commit: Commit | None
    # The first gitlink item of a submodule path draws its history; later items of the same path
    # (other expectations about the same pin) would draw the same picture again.
    draws_history: bool = False

    @property
    def kind(self) -> str:
        return self.evidence.kind

    @cached_property
    def check_table(self):
        """A check item's outcomes at each pin (presentation.check_tables), read when the page shows it."""
        from presentation.check_tables import check_table

        return check_table(self.evidence) if self.evidence.kind == Evidence.Kind.CHECK else None

    @property
    def facts(self) -> dict:
        return self.result.facts if self.result is not None and self.result.facts else {}

    @cached_property
    def pin_history(self) -> SafeString | str:
        """The submodule pin's history at the latest verified commit, as a picture."""
        if not self.draws_history:
            return ""
        return pin_history_svg(self.facts, path=self.evidence.path, id_prefix=f"pin-history-{self.evidence.pk}")

    @property
    def pin_history_text(self) -> str:
        """The picture in words, or why there is none."""
        if not self.draws_history:
            return ""
        return pin_history_sentence(self.facts, path=self.evidence.path)

    @cached_property
    def permalink(self) -> str:
        return self.evidence.permalink()

    @cached_property
    def highlighted(self) -> SafeString | str:
        if self.evidence.kind != Evidence.Kind.SNIPPET:
            return ""
        return highlight_snippet(self.evidence.text, path=self.evidence.path, start_line=self.evidence.start_line)

    @property
    def state(self) -> str:
        """holds / moved / gone / error / unchecked, or '' when it was not verified there."""
        return self.result.shown_state if self.result else ""

    @property
    def now_location(self) -> str:
        return self.result.location if self.result else ""

    @cached_property
    def now_link(self) -> str:
        """The permalink to where the evidence is at the latest verified commit."""
        if self.result is None or self.latest_commit is None or self.result.state != EvidenceResult.State.HOLDS:
            return ""
        if not self.result.path:
            return ""
        repository = self.evidence.finding.pull_request.repository
        return repository.permalink(
            self.latest_commit.sha, self.result.path, self.result.start_line, self.result.end_line
        )


    @cached_property
    def successor(self) -> SuccessorView | None:
        """What replaced the evidence, when it is gone at the latest verified commit."""
        if self.result is None or self.latest_commit is None or not self.result.successor:
            return None
        return successor_read(self.result.successor, sha=self.latest_commit.sha)

    @cached_property
    def successor_diff(self) -> SafeString | str:
        """The lines that are gone beside what replaced them, highlighted."""
        shown = self.successor
        if shown is None:
            return ""
        successor = shown.successor
        return highlight_replacement(
            successor.recorded_text, successor.text, path=successor.recorded_path,
            old_start=successor.recorded_start, new_start=successor.start_line, new_path=successor.path,
        )

    @cached_property
    def successor_links(self) -> tuple[str, str]:
        """Permalinks to the lines that are gone, at the commit they were recorded at, and to what
        replaced them, at the latest verified commit ('' where the forge has no web URL)."""
        shown = self.successor
        if shown is None:
            return "", ""
        successor, repository = shown.successor, self.evidence.finding.pull_request.repository
        recorded_at = self.evidence.commit.sha if self.evidence.commit else ""
        was = repository.permalink(
            recorded_at, successor.recorded_path, successor.recorded_start, successor.recorded_end
        ) if recorded_at else ""
        now = repository.permalink(shown.sha, successor.path, successor.start_line, successor.end_line)
        return was, now


def result_marks(result: EvidenceResult | None) -> tuple[str, ...]:
    """The marks a verification picture puts on this result (see vocabulary.evidence_marks)."""
    if result is None:
        return ()
    evidence = result.evidence
    return vocabulary.evidence_marks(
        kind=evidence.kind, state=result.state, path=result.path, start_line=result.start_line,
        recorded_path=evidence.path, recorded_start_line=evidence.start_line, detail=result.detail,
    )


@dataclass
class FindingView:
    finding: Finding
    verification: Verification | None
    evidence: list[EvidenceView]
    anchor_url: str
    detail_url: str

    @property
    def verdict(self) -> str:
        return self.verification.verdict if self.verification else ""

    @property
    def verdict_reason(self) -> str:
        """Why its verdict is an error (waiting for CI, not run, flaky) at the commit shown, as
        stored with the verification there; '' otherwise."""
        return self.verification.verdict_reason if self.verification else ""

    @cached_property
    def picture(self) -> EvidenceView | None:
        """The finding's illustration: its first note that draws a diagram, shown beside the
        finding rather than in the list of evidence."""
        return next(
            (item for item in self.evidence if item.kind == Evidence.Kind.NOTE and has_diagram(item.evidence.text)),
            None,
        )

    @property
    def listed_evidence(self) -> list[EvidenceView]:
        return [item for item in self.evidence if item is not self.picture]

    @property
    def only_recorded(self) -> bool:
        """Nothing of the evidence has been read from the repository: no verification, and no code
        recorded with it. The page then lists what was recorded, one line an item, instead of a
        box per item waiting for code."""
        listed = self.listed_evidence
        return bool(listed) and all(
            item.result is None and not (item.kind == Evidence.Kind.SNIPPET and item.evidence.text) for item in listed
        )


def finding_views(
    findings, *, latest_commit: Commit | None, links: Links, page_numbers: dict[int, int] | None = None,
    state: dict | None = None,
) -> list[FindingView]:
    """The findings (evidence prefetched) with their verification at `latest_commit`.
    `page_numbers` (finding id -> page of its list) points their anchors at the right page.
    `state`: their PR's stored state when the caller has read it already (findings of one PR)."""
    # Each with its state (`finding.state`: how it got its status, whether it looks regressed).
    if state is None:
        findings = states_attach(findings)
    else:
        findings = list(findings)
        for finding in findings:
            finding.state = {**state["findings"].get(str(finding.pk), {}), "latest_sha": state.get("latest_sha")}
    verifications = verifications_at(findings, latest_commit)
    page_numbers = page_numbers or {}
    views = []
    for finding in findings:
        verification = verifications.get(finding.pk)
        results = {result.evidence_id: result for result in verification.results.all()} if verification else {}
        drawn: set[str] = set()
        evidence_views = []
        for evidence in finding.evidence.all():
            result = results.get(evidence.pk)
            draws = evidence.kind == Evidence.Kind.GITLINK and bool(result and result.facts) and evidence.path not in drawn
            if draws:
                drawn.add(evidence.path)
            evidence_views.append(
                EvidenceView(evidence=evidence, result=result, latest_commit=latest_commit, draws_history=draws)
            )
        views.append(
            FindingView(
                finding=finding,
                verification=verification,
                evidence=evidence_views,
                anchor_url=links.finding_anchor(finding, page_number=page_numbers.get(finding.pk, 1)),
                detail_url=links.finding_detail(finding),
            )
        )
    return views


def finding_has_diagram(view: FindingView) -> bool:
    notes = [item.evidence.text for item in view.evidence if item.kind == Evidence.Kind.NOTE]
    return has_diagram(view.finding.body, view.finding.fix, *notes)


# What the counts, the status line and the overview's lists read of a finding.
SUMMARY_FIELDS = ("id", "pull_request_id", "number", "kind", "caught_by", "title", "status")


@dataclass
class FindingSummary:
    """A finding as the lists and counts of the pages need it: no evidence, its verdict only."""

    finding: Finding
    verdict: str
    anchor_url: str
    detail_url: str = ""
    verdict_reason: str = ""


def finding_summaries(
    pull_request: PullRequest, *, state: dict, links: Links
) -> tuple[list[FindingSummary], dict[int, int]]:
    """Every finding of the PR by number with its verdict from the PR's stored `state` (at its
    latest verified pin), in one query; and finding id -> the page of its kind's list it is shown
    on (lists go in `page_order`)."""
    findings = list(Finding.objects.for_pull_request(pull_request).only(*SUMMARY_FIELDS).order_by("number"))
    latest_sha = state.get("latest_sha")
    for finding in findings:
        finding.pull_request = pull_request
        finding.state = {**state["findings"].get(str(finding.pk), {}), "latest_sha": latest_sha}
    page_numbers = list_page_numbers(findings, static=links.static)
    summaries = [
        FindingSummary(
            finding=finding,
            verdict=finding.state.get("verdict") or "",
            verdict_reason=finding.state.get("verdict_reason") or "",
            anchor_url=links.finding_anchor(finding, page_number=page_numbers[finding.pk]),
            detail_url=links.finding_detail(finding),
        )
        for finding in findings
    ]
    return summaries, page_numbers


@dataclass
class HistoryChangeView:
    """One change between two pins, labelled by where it came from, as a small diff."""

    origin: str
    diff: SafeString


@dataclass
class HistoryStepView:
    """An item at one pin: where it is, its lines with those around them, and what changed since
    the pin before."""

    sha: str
    location: str
    code: SafeString
    changes: list[HistoryChangeView]


@dataclass
class HistoryView:
    evidence: Evidence
    steps: list[HistoryStepView]
    problem: str = ""


def history_views(histories: list[EvidenceHistory]) -> list[HistoryView]:
    """The finding page's evidence from pin to pin (`findings.selectors.evidence_history`),
    highlighted."""
    views = []
    for history in histories:
        steps = []
        for step in history.steps:
            place = step.place
            changes = [
                HistoryChangeView(change.origin, highlight_replacement(
                    "\n".join(change.removed), "\n".join(change.added), path=place.path,
                    old_start=change.old_start, new_start=change.new_start,
                ))
                for change in step.changes
            ]
            steps.append(HistoryStepView(
                sha=place.sha, location=vocabulary.location(place.path, place.start_line, place.end_line),
                code=highlight_snippet("\n".join(step.lines), path=place.path, start_line=step.first_line),
                changes=changes,
            ))
        views.append(HistoryView(history.evidence, steps, history.problem))
    return views
