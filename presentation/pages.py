"""What the three companion pages of a pull request show, built once for the live views and the
static render. Every read happens here, in a fixed number of queries however many findings."""
from dataclasses import dataclass, field
from functools import cached_property

from django.core.paginator import Paginator
from django.utils.safestring import SafeString

from core import vocabulary
from findings.models import Evidence, EvidenceResult, Finding, Verification
from presentation.rendering.highlight import highlight_snippet
from presentation.rendering.markdown import has_diagram
from presentation.rendering.pictures import GridCell, GridRow, grid_svg, pin_history_sentence, pin_history_svg
from findings.selectors.findings import (
    findings_of,
    latest_verified_pin,
    pull_request_pins,
    pull_request_verdict_counts,
    pull_request_verifications,
    verifications_at,
)
from presentation import wording
from presentation.links import PAGES, Links
from presentation.paging import FINDINGS_PER_PAGE, list_page_numbers, page_order
from reviews.models import Commit, PinnedCommit, PullRequest


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


def finding_views(
    findings, *, latest_commit: Commit | None, links: Links, page_numbers: dict[int, int] | None = None
) -> list[FindingView]:
    """The findings (evidence prefetched) with their verification at `latest_commit`.
    `page_numbers` (finding id -> page of its list) points their anchors at the right page."""
    findings = list(findings)
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


@dataclass
class FindingSummary:
    """A finding as the lists and counts of the pages need it: no evidence, its verdict only."""

    finding: Finding
    verdict: str
    anchor_url: str
    detail_url: str = ""


def finding_summaries(
    pull_request: PullRequest, *, latest_commit: Commit | None, links: Links
) -> tuple[list[FindingSummary], dict[int, int]]:
    """Every finding of the PR by number with its verdict at `latest_commit`, in two queries; and
    finding id -> the page of its kind's list it is shown on (lists go in `page_order`)."""
    findings = list(Finding.objects.for_pull_request(pull_request).only(*SUMMARY_FIELDS).order_by("number"))
    verdicts = (
        dict(
            Verification.objects.filter(finding__pull_request=pull_request, commit=latest_commit)
            .order_by()
            .values_list("finding_id", "verdict")
        )
        if latest_commit
        else {}
    )
    for finding in findings:
        finding.pull_request = pull_request
    page_numbers = list_page_numbers(findings, static=links.static)
    summaries = [
        FindingSummary(
            finding=finding,
            verdict=verdicts.get(finding.pk, ""),
            anchor_url=links.finding_anchor(finding, page_number=page_numbers[finding.pk]),
            detail_url=links.finding_detail(finding),
        )
        for finding in findings
    ]
    return summaries, page_numbers


# How many findings of each kind the overview lists by name; the rest are on their own pages.
GLANCE_LIMIT = 25

# What the counts, the status line and the overview's lists read of a finding.
SUMMARY_FIELDS = ("id", "pull_request_id", "number", "kind", "caught_by", "title", "status", "possibly_regressed")


@dataclass
class PinView:
    pin: PinnedCommit
    verdict_counts: dict[str, int]
    is_latest_verified: bool
    commit_link: str
    code_url: str = ""

    @property
    def verdict_summary(self) -> str:
        return ", ".join(
            wording.verdict_summary(verdict for verdict, count in self.verdict_counts.items() for _ in range(count))
        )


@dataclass
class PullRequestPage:
    """What the pages of a PR show. `findings` are all of them, light (titles, statuses,
    verdicts: the counts, the status line and the overview's lists); `cards` are the findings
    shown in full with their evidence: one page of the blockers or the cleanups list live, all
    of them in the static render."""

    pull_request: PullRequest
    pins: list[PinView]
    latest_pin: PinnedCommit | None
    findings: list[FindingSummary]
    links: Links
    static: bool = False
    cards: list[FindingView] = field(default_factory=list)
    # The Paginator page of the list shown in full, live; None in the static render.
    list_page: object = None

    @property
    def repository(self):
        return self.pull_request.repository

    @property
    def latest_commit(self) -> Commit | None:
        return self.latest_pin.commit if self.latest_pin else None

    @property
    def latest_commit_link(self) -> str:
        return self.repository.commit_link(self.latest_pin.commit.sha) if self.latest_pin else ""

    @property
    def latest_pin_phrase(self) -> str | None:
        if self.latest_pin is None:
            return None
        return wording.pin_phrase(self.latest_pin.commit.short_sha, self.latest_pin.role)

    @cached_property
    def blockers(self) -> list[FindingSummary]:
        return [view for view in self.findings if view.finding.kind == Finding.Kind.BLOCKER]

    @cached_property
    def cleanups(self) -> list[FindingSummary]:
        return [view for view in self.findings if view.finding.kind == Finding.Kind.CLEANUP]

    @property
    def glance_blockers(self) -> list[FindingSummary]:
        return self.blockers[:GLANCE_LIMIT]

    @property
    def glance_cleanups(self) -> list[FindingSummary]:
        return self.cleanups[:GLANCE_LIMIT]

    @property
    def cleanup_cards(self) -> list[FindingView]:
        return [view for view in self.cards if view.finding.kind == Finding.Kind.CLEANUP]

    @cached_property
    def blocker_groups(self) -> list[dict]:
        """Blockers grouped as the review groups them: what CI catches first, then what nothing checks."""
        shown = [view for view in self.cards if view.finding.kind == Finding.Kind.BLOCKER]
        groups = [
            {
                "key": caught_by,
                "title": title,
                "subtitle": subtitle,
                "findings": [view for view in shown if view.finding.caught_by == caught_by],
            }
            for caught_by, title, subtitle in vocabulary.BLOCKER_GROUPS
        ]
        return [group for group in groups if group["findings"]]

    @property
    def open_blockers(self) -> list[FindingSummary]:
        return [view for view in self.blockers if view.finding.status == Finding.Status.OPEN]

    @property
    def open_cleanups(self) -> list[FindingSummary]:
        return [view for view in self.cleanups if view.finding.status == Finding.Status.OPEN]

    @cached_property
    def status_line(self) -> str:
        """The computed status: the PR's state, its blockers, and what the last verification said."""
        blockers = self.blockers
        in_question = [view for view in blockers if view.finding.status == Finding.Status.OPEN] or blockers
        rechecked = bool(self.pins) and self.latest_pin is not None and self.pins[0].pin.pk != self.latest_pin.pk
        parts = [
            wording.blockers_sentence(
                self.pull_request.get_state_display(), [view.finding.status for view in blockers]
            ),
            wording.verification_sentence(
                [view.verdict or None for view in in_question], pin=self.latest_pin_phrase, rechecked=rechecked,
                attested=bool(self.pull_request.attestation),
            ),
            wording.cleanups_sentence(
                [view.finding.status for view in self.cleanups],
                not_recorded=self.pull_request.cleanups_not_recorded,
            ),
        ]
        return " ".join(part for part in parts if part)

    def has_diagrams(self, current: str) -> bool:
        """Whether the page `current` shows a ```mermaid block (only then does it load Mermaid)."""
        if current == "overview":
            pull_request = self.pull_request
            return has_diagram(pull_request.before, pull_request.change, pull_request.status_note)
        framing = (self.pull_request.opening, self.pull_request.closing) if current == "blockers" else ()
        # The findings the page shows in full: the others' Markdown is not on it.
        kind = Finding.Kind.BLOCKER if current == "blockers" else Finding.Kind.CLEANUP
        views = [view for view in self.cards if view.finding.kind == kind]
        return has_diagram(*framing) or any(finding_has_diagram(view) for view in views)

    @property
    def not_recorded_sentence(self) -> str:
        return wording.not_recorded_sentence(self.pull_request.cleanups_not_recorded)

    @cached_property
    def matrix_picture(self) -> SafeString | str:
        """Every finding by every pinned commit, coloured by its verdict there, marked where its
        code moved, was renamed or re-indented."""
        if self.latest_pin is None or not self.findings:
            return ""  # nothing verified yet: a grid of empty cells would say nothing
        by_cell = {
            (verification.finding_id, verification.commit_id): verification
            for verification in pull_request_verifications(self.pull_request)
        }
        columns = [f"{pin.pin.commit.short_sha} {pin.pin.get_role_display().lower()}" for pin in self.pins]
        rows = []
        # The findings the overview names: a grid of thousands of rows would outweigh the page.
        for view in (self.glance_blockers + self.glance_cleanups)[:GLANCE_LIMIT]:
            cells = []
            for pin in self.pins:
                verification = by_cell.get((view.finding.pk, pin.pin.commit_id))
                if verification is None:
                    cells.append(GridCell(state="", label=vocabulary.NOT_VERIFIED_PHRASE))
                    continue
                marks = {mark for result in verification.results.all() for mark in result_marks(result)}
                cells.append(GridCell(state=verification.verdict, label=vocabulary.verdict_phrase(verification.verdict),
                                      marks=tuple(mark for mark in vocabulary.MARKS if mark in marks)))
            rows.append(GridRow(label=f"{view.finding.number}. {view.finding.title}", cells=cells,
                                link=view.detail_url or view.anchor_url))
        return grid_svg(rows=rows, columns=columns, id_prefix="pr-matrix", cell_width=110,
                        title=f"Verification of {self.pull_request.reference}: {len(rows)} findings by "
                              f"{len(columns)} pinned commits")

    @property
    def blockers_intro(self) -> str:
        return wording.blockers_intro(
            findings=len(self.findings),
            cleanups=len(self.cleanups),
            caught_by_ci=sum(1 for view in self.blockers if view.finding.caught_by == Finding.CaughtBy.CI),
            unchecked=sum(1 for view in self.blockers if view.finding.caught_by != Finding.CaughtBy.CI),
            comments_left=self.pull_request.comments_left,
            cleanups_not_recorded=self.pull_request.cleanups_not_recorded,
        )


# The kind of finding each page shows in full.
PAGE_KINDS = {"overview": None, "blockers": Finding.Kind.BLOCKER, "cleanups": Finding.Kind.CLEANUP}


def finding_has_diagram(view: FindingView) -> bool:
    notes = [item.evidence.text for item in view.evidence if item.kind == Evidence.Kind.NOTE]
    return has_diagram(view.finding.body, view.finding.fix, *notes)


def pull_request_page(
    pull_request: PullRequest, *, static: bool = False, current: str | None = None, page_number=1
) -> PullRequestPage:
    """Everything the pages of `pull_request` show, at its latest verified commit. Live, only the
    `current` page's own findings are built in full, a page of its list at a time; the static
    render (`static=True`) builds every finding for its three pages."""
    links = Links(pull_request=pull_request, static=static)
    pins = pull_request_pins(pull_request)
    latest = latest_verified_pin(pins)
    latest_commit = latest.commit if latest else None
    counts = pull_request_verdict_counts(pull_request)
    summaries, page_numbers = finding_summaries(pull_request, latest_commit=latest_commit, links=links)
    list_page = None
    if static:
        shown_ids = None
    elif PAGE_KINDS.get(current):
        in_order = sorted(
            (view.finding for view in summaries if view.finding.kind == PAGE_KINDS[current]), key=page_order
        )
        list_page = Paginator([finding.pk for finding in in_order], FINDINGS_PER_PAGE).get_page(page_number)
        shown_ids = list(list_page.object_list)
    else:
        shown_ids = []
    cards = []
    if shown_ids is None or shown_ids:
        findings = findings_of(pull_request)
        if shown_ids is not None:
            findings = findings.filter(pk__in=shown_ids)
        cards = finding_views(
            sorted(findings, key=page_order), latest_commit=latest_commit, links=links, page_numbers=page_numbers
        )
    return PullRequestPage(
        pull_request=pull_request,
        pins=[
            PinView(
                pin=pin,
                verdict_counts=counts.get(pin.commit_id, {}),
                is_latest_verified=latest is not None and pin.pk == latest.pk,
                commit_link=pull_request.repository.commit_link(pin.commit.sha),
                code_url=links.code_tree(pin.commit.sha),
            )
            for pin in pins
        ],
        latest_pin=latest,
        findings=summaries,
        links=links,
        static=static,
        cards=cards,
        list_page=list_page,
    )


PAGE_TEMPLATES = {name: f"findings/pull_request/{name}.html" for name in PAGES}


def page_context(page: PullRequestPage, *, current: str) -> dict:
    """The context every companion page template gets, live or static."""
    return {
        "page": page,
        "pull_request": page.pull_request,
        "links": page.links,
        "current": current,
        "static_render": page.static,
        "has_diagrams": page.has_diagrams(current),
    }
