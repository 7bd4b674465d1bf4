"""What the three companion pages of a pull request show, built once for the live views and the
static render: the page (PullRequestPage, its pins and findings) and the context its templates get.
Every read happens here and in the finding views it builds, in a fixed number of queries however
many findings."""
from dataclasses import dataclass, field
from functools import cached_property

from django.core.paginator import Paginator
from django.utils.safestring import SafeString

from core import vocabulary
from findings.models import Finding
from presentation.rendering.markdown import has_diagram
from presentation.rendering.pictures import GridCell, GridRow, grid_pictures
from findings.selectors.findings import findings_of, pull_request_pins, pull_request_verifications
from findings.selectors.stack import pull_request_stack
from findings.state.stored import pull_request_state, pull_request_state_at
from presentation import wording
from presentation.change_chart import changes_view
from presentation.finding_views import (
    FindingSummary,
    FindingView,
    finding_has_diagram,
    finding_summaries,
    finding_views,
    result_marks,
)
from presentation.links import PAGES, Links
from presentation.paging import FINDINGS_PER_PAGE, page_order
from core.errors import RecheckError
from reviews.models import Commit, PinnedCommit, PullRequest


# How many findings of each kind the overview lists by name; the rest are on their own pages.
GLANCE_LIMIT = 25


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
    # The PR's stored review state (`findings.state`): its counts are the page's counts.
    state: dict = field(default_factory=dict)
    cards: list[FindingView] = field(default_factory=list)
    # The Paginator page of the list shown in full, live; None in the static render.
    list_page: object = None
    # The pin asked for with ?commit= (the pages as they stood there), None for the latest.
    chosen_pin: PinnedCommit | None = None

    @property
    def at_query(self) -> str:
        """What the links between the three pages carry to stay at the chosen pin."""
        return f"?commit={self.chosen_pin.commit.sha}" if self.chosen_pin else ""

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
    def head_gate(self) -> dict | None:
        """The merge gate at the PR's latest pinned head, as its stored state holds it (with the
        policy it was derived with and any override there); None before a head is pinned."""
        head = self.state.get("head_sha")
        answer = self.state.get("gates", {}).get(head) if head else None
        if answer is None:
            return None
        overridden = answer.get("overridden")
        return {**answer, "short_sha": head[:8],
                "override_sentence": vocabulary.override_sentence(overridden) if overridden else "",
                "override_role": answer.get("policy", {}).get("override_role", "maintainer")}

    @cached_property
    def stack(self) -> dict:
        """The stack the PR is part of (`findings.selectors.stack`): below and above, each with its gate."""
        return pull_request_stack(self.pull_request)

    def count(self, kind: str, key: str = "total") -> int:
        """How many of the PR's findings of `kind` are `key` (total, open, fixed, dismissed,
        fixed_anyway, possibly_regressed, verdict:<verdict>, open:<verdict>), from its state."""
        return self.state.get("counts", {}).get(kind, {}).get(key, 0)

    def _statuses(self, kind: str) -> list[str]:
        return [status for status in ("open", "fixed", "dismissed") for _ in range(self.count(kind, status))]

    @property
    def blocker_count(self) -> int:
        return self.count(Finding.Kind.BLOCKER)

    @property
    def cleanup_count(self) -> int:
        return self.count(Finding.Kind.CLEANUP)

    @property
    def open_blocker_count(self) -> int:
        return self.count(Finding.Kind.BLOCKER, "open")

    @property
    def open_cleanup_count(self) -> int:
        return self.count(Finding.Kind.CLEANUP, "open")

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
            wording.blockers_sentence(self.pull_request.get_state_display(), self._statuses(Finding.Kind.BLOCKER)),
            wording.verification_sentence(
                [view.verdict or None for view in in_question], pin=self.latest_pin_phrase, rechecked=rechecked,
                attested=bool(self.pull_request.attestation),
            ),
            wording.cleanups_sentence(
                self._statuses(Finding.Kind.CLEANUP),
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
        # The findings the overview names: a grid of thousands of rows would outweigh the page, and
        # only their verifications are read.
        named = (self.glance_blockers + self.glance_cleanups)[:GLANCE_LIMIT]
        by_cell = {
            (verification.finding_id, verification.commit_id): verification
            for verification in pull_request_verifications(
                self.pull_request, finding_ids=[view.finding.pk for view in named]
            )
        }
        columns = [f"{pin.pin.commit.short_sha} {pin.pin.get_role_display().lower()}" for pin in self.pins]
        rows = []
        for view in named:
            cells = []
            for pin in self.pins:
                verification = by_cell.get((view.finding.pk, pin.pin.commit_id))
                if verification is None:
                    cells.append(GridCell(state="", label=vocabulary.NOT_VERIFIED_PHRASE))
                    continue
                marks = {mark for result in verification.results.all() for mark in result_marks(result)}
                cells.append(GridCell(state=verification.verdict,
                                      label=vocabulary.finding_verdict_phrase(verification.verdict,
                                                                              verification.verdict_reason),
                                      marks=tuple(mark for mark in vocabulary.MARKS if mark in marks)))
            rows.append(GridRow(label=f"{view.finding.number}. {view.finding.title}", cells=cells,
                                link=view.detail_url or view.anchor_url))
        return grid_pictures(rows=rows, columns=columns, id_prefix="pr-matrix", cell_width=110,
                        title=f"Verification of {self.pull_request.reference}: {len(rows)} findings by "
                              f"{len(columns)} pinned commits")

    @property
    def blockers_intro(self) -> str:
        open_blockers = self.open_blockers
        return wording.blockers_intro(
            findings=self.blocker_count + self.cleanup_count,
            cleanups=self.cleanup_count,
            caught_by_ci=sum(1 for view in open_blockers if view.finding.caught_by == Finding.CaughtBy.CI),
            unchecked=sum(1 for view in open_blockers if view.finding.caught_by != Finding.CaughtBy.CI),
            comments_left=self.pull_request.comments_left,
            cleanups_not_recorded=self.pull_request.cleanups_not_recorded,
            resolved=self.blocker_count - self.open_blocker_count,
        )


# The kind of finding each page shows in full.
PAGE_KINDS = {"overview": None, "blockers": Finding.Kind.BLOCKER, "cleanups": Finding.Kind.CLEANUP}


class PinUnknown(RecheckError):
    """?commit= names no commit pinned to the pull request (or more than one): said with the pins."""

    def __init__(self, message: str, *, pins: list[PinnedCommit]) -> None:
        super().__init__(message)
        self.pins = pins


def pin_chosen(pull_request: PullRequest, pins: list[PinnedCommit], sha: str) -> PinnedCommit:
    """The pin `sha` (full or abbreviated, at least 7 hex digits) names, or PinUnknown."""
    wanted = sha.strip().lower()
    matches = [pin for pin in pins if len(wanted) >= 7 and pin.commit.sha.startswith(wanted)]
    if len(matches) == 1:
        return matches[0]
    if matches:
        raise PinUnknown(f"{wanted} is the start of {len(matches)} commits pinned to {pull_request.reference}; "
                         "give more of the SHA, or choose one:", pins=matches)
    raise PinUnknown(f"{sha[:80]!r} is not a commit pinned to {pull_request.reference}: its pages can be seen at "
                     "each of its pinned commits. Choose one:", pins=pins)


def pull_request_page(
    pull_request: PullRequest, *, static: bool = False, current: str | None = None, page_number=1, at: str = ""
) -> PullRequestPage:
    """Everything the pages of `pull_request` show, at its latest verified commit, or as they stood
    at the pin `at` names (live only). Live, only the `current` page's own findings are built in
    full, a page of its list at a time; the static render (`static=True`) builds every finding for
    its three pages."""
    links = Links(pull_request=pull_request, static=static)
    # The counts, verdicts and flags every page shows come from the PR's stored state.
    state = stored = pull_request_state(pull_request_id=pull_request.pk)
    pins = pull_request_pins(pull_request)
    counts = state["pin_verdicts"]
    chosen = pin_chosen(pull_request, pins, at) if at and not static else None
    if chosen is not None:
        # The pages at an earlier pin: the same rules over the facts up to it (the pins' own
        # verdict counts stay the stored ones: they are per pin already).
        state = pull_request_state_at(pull_request_id=pull_request.pk, commit_id=chosen.commit_id)
    latest = next((pin for pin in pins if pin.commit_id == state["latest_commit_id"]), None)
    latest_commit = latest.commit if latest else None
    summaries, page_numbers = finding_summaries(pull_request, state=state, links=links)
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
            sorted(findings, key=page_order), latest_commit=latest_commit, links=links, page_numbers=page_numbers,
            # The stored state read above (at an earlier pin the cards keep today's, as before).
            state=stored if chosen is None else None,
        )
    return PullRequestPage(
        pull_request=pull_request,
        pins=[
            PinView(
                pin=pin,
                verdict_counts=counts.get(str(pin.commit_id), {}),
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
        state=state,
        chosen_pin=chosen,
    )


PAGE_TEMPLATES = {name: f"findings/pull_request/{name}.html" for name in PAGES}


def page_context(page: PullRequestPage, *, current: str) -> dict:
    """The context every companion page template gets, live or static; the overview also gets
    what git says the PR changes (`changes`)."""
    context = {
        "page": page,
        "pull_request": page.pull_request,
        "links": page.links,
        "current": current,
        "static_render": page.static,
        "has_diagrams": page.has_diagrams(current),
    }
    if current == "overview":
        context["changes"] = changes_view(
            page.pull_request, links=page.links, pins=[view.pin for view in page.pins]
        )
    return context
