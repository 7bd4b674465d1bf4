"""What Recheck says on GitHub about one commit of a pull request: the check run's conclusion,
output and annotations, the commit status, and the pull request comment. Read from the merge gate
and from the same finding views the pages show, so GitHub and the site say the same thing."""
from dataclasses import dataclass, field

from django.conf import settings

from findings.selectors.gate import MergeGate, pull_request_gate
from findings.models import Evidence, EvidenceResult, Finding, Verdict
from findings.selectors.findings import findings_of
from presentation.finding_views import FindingView, finding_views
from presentation.links import Links
from presentation.pages import PullRequestPage
from presentation.paging import list_page_numbers
from presentation.wording import counted
from core.vocabulary import REGRESSED_VERDICTS, finding_verdict_phrase, override_reason_label
from reviews.models import Commit, PullRequest

CHECK_NAME = "Recheck"
STATUS_CONTEXT = "recheck"
COMMENT_MARKER = "<!-- recheck:pull-request-comment -->"
# GitHub's documented limits: annotations per request, a status's description (characters), a
# check run's summary and text (characters), an annotation's title (characters) and message and
# raw details (64 KB each), a comment's body (characters).
ANNOTATIONS_PER_REQUEST = 50
STATUS_DESCRIPTION_LIMIT = 140
SUMMARY_LIMIT = 65535
TITLE_LIMIT = 255
ANNOTATION_MESSAGE_BYTES = 64 * 1024
COMMENT_LIMIT = 65536
# Room kept for the line that says how many more are on Recheck's page.
MORE_LINE_ROOM = 400
# No one line of a list takes more than this (a finding's title can be long).
LINE_LIMIT = 2000

# Some of the finding's evidence still holds at the commit: the verdicts that make a fixed finding
# look regressed make an open one fail the check.
HOLDING = frozenset(REGRESSED_VERDICTS)

# Conclusions Recheck posts. `neutral` and `skipped` are never among them: GitHub counts both as
# passing for a required check, and "the gate cannot say" must not let a PR merge. `cancelled`
# ends the check of a head a newer push superseded before it was verified: not verified, so not
# passing, should that commit ever be merged as it is.
SUCCESS, FAILURE, ACTION_REQUIRED, CANCELLED = "success", "failure", "action_required", "cancelled"
STATUS_STATES = {SUCCESS: "success", FAILURE: "failure", ACTION_REQUIRED: "pending", CANCELLED: "error"}


def site_url(path: str) -> str:
    """An absolute link to a page of this server, or '' when RECHECK_SITE_URL is not set."""
    return f"{settings.RECHECK_SITE_URL}{path}" if settings.RECHECK_SITE_URL else ""


def gate_conclusion(gate: MergeGate, *, run_failed: bool = False) -> str:
    """The check's conclusion from the merge gate at the verified commit:

    - failure: an open blocker whose evidence still holds there;
    - action_required: no open blocker holds, but some are open (they look fixed, and a person
      marks them fixed), or a check could not run (an error, an unverifiable or a missing
      verdict, or a run that failed: the gate's `verified` is false), so the gate cannot say;
    - success: no open blocker, and the gate says the commit is verified; or a person overrode
      the gate at the commit (its title and summary say who and why);
    - failure too: no open blocker, but the repository's policy blocks the merge (a possibly
      regressed blocker, an overdue cleanup) and the gate says no."""
    if gate.overridden:
        return SUCCESS
    if any(entry.verdict in HOLDING for entry in gate.open_blockers):
        return FAILURE
    if gate.open_blockers or run_failed or not gate.verified:
        return ACTION_REQUIRED
    return SUCCESS if gate.mergeable else FAILURE


@dataclass
class Annotation:
    """An open finding where it is at the verified commit."""

    number: int
    kind: str
    verdict: str
    url: str
    path: str
    start_line: int
    end_line: int
    level: str
    title: str
    message: str

    def as_github(self) -> dict:
        return {
            "path": self.path,
            "start_line": self.start_line,
            "end_line": self.end_line,
            "annotation_level": self.level,
            "title": _clip(self.title, TITLE_LIMIT),
            "message": _clip_bytes(self.message, ANNOTATION_MESSAGE_BYTES),
        }


@dataclass
class CommitReport:
    """Everything posted about `commit` once its verification ended."""

    pull_request: PullRequest
    commit: Commit
    conclusion: str
    title: str
    summary: str
    annotations: list[Annotation] = field(default_factory=list)
    comment: str = ""

    @property
    def status_state(self) -> str:
        return STATUS_STATES[self.conclusion]

    @property
    def status_description(self) -> str:
        return _clip(self.title, STATUS_DESCRIPTION_LIMIT)

    @property
    def details_url(self) -> str:
        return site_url(Links(pull_request=self.pull_request).blockers)


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _clip_bytes(text: str, limit: int) -> str:
    """`text` within `limit` bytes of UTF-8 (GitHub counts an annotation's message in bytes)."""
    if len(text.encode("utf-8")) <= limit:
        return text
    return text.encode("utf-8")[: limit - len("…".encode())].decode("utf-8", "ignore") + "…"


def _within(lines: list[str], footer: list[str], *, limit: int, more_url: str) -> str:
    """`lines` then `footer` as one text of at most `limit` characters. When they do not fit,
    the list items ("- " lines) that do not fit are left out, for a line saying how many more
    there are and where: GitHub refuses a longer body, and then nothing would be shown."""
    lines = [_clip(line, LINE_LIMIT) for line in lines]
    text = "\n".join(lines + footer) + "\n"
    if len(text) <= limit:
        return text
    budget = limit - len("\n".join(footer)) - MORE_LINE_ROOM
    kept, size = [], 0
    for line in lines:
        if size + len(line) + 1 > budget:
            break
        kept.append(line)
        size += len(line) + 1
    left_out = sum(1 for line in lines if line.startswith("- ")) - sum(1 for line in kept if line.startswith("- "))
    where = f": {more_url}" if more_url else " (its pages list them all)"
    kept += ["", f"… and {counted(left_out, 'more blocker')} on Recheck{where}"]
    return "\n".join(kept + footer) + "\n"


def commit_report(*, pull_request: PullRequest, commit: Commit, run_failed: bool = False,
                  run_message: str = "") -> CommitReport:
    gate = pull_request_gate(pull_request=pull_request, commit=commit)
    conclusion = gate_conclusion(gate, run_failed=run_failed)
    links = Links(pull_request=pull_request)
    findings = list(findings_of(pull_request))
    views = finding_views(findings, latest_commit=commit, links=links, page_numbers=list_page_numbers(findings))
    # Every finding in full: the report lists them all, grouped as the blockers page groups them.
    page = PullRequestPage(
        pull_request=pull_request, pins=[], latest_pin=None, findings=views, links=links, cards=views
    )
    title = _title(gate, conclusion, run_failed)
    return CommitReport(
        pull_request=pull_request,
        commit=commit,
        conclusion=conclusion,
        title=title,
        summary=_summary(page, gate, commit, run_message),
        annotations=_annotations(views),
        comment=_comment(page, gate, commit, title),
    )


def _title(gate: MergeGate, conclusion: str, run_failed: bool) -> str:
    at = gate.commit.short_sha
    if gate.overridden:
        reason = override_reason_label(gate.overridden["reason"]).lower()
        return f"Gate overridden at {at} by {gate.overridden['by'] or 'an operator'} ({reason})"
    if conclusion == SUCCESS:
        return f"No open blocker at {at}"
    if conclusion == FAILURE and not gate.open_blockers:
        return f"No open blocker at {at}, but the repository's merge policy blocks it"
    holding = sum(1 for entry in gate.open_blockers if entry.verdict in HOLDING)
    if conclusion == FAILURE:
        return f"{counted(holding, 'open blocker').capitalize()} still present at {at}"
    if run_failed and not gate.open_blockers:
        return f"The verification at {at} could not run: the gate cannot say"
    if not gate.open_blockers:
        return f"{at} is not verified: the gate cannot say"
    looks_fixed = sum(1 for entry in gate.open_blockers if entry.verdict == Verdict.LIKELY_FIXED)
    unchecked = len(gate.open_blockers) - looks_fixed
    parts = []
    if looks_fixed:
        parts.append(f"{counted(looks_fixed, 'open blocker')} look fixed at {at}: a maintainer decides")
    if unchecked:
        parts.append(f"{counted(unchecked, 'open blocker')} could not be checked at {at}")
    return "; ".join(parts).capitalize()


def _link(text: str, url: str) -> str:
    text = text.replace("[", "\\[").replace("]", "\\]")
    return f"[{text}]({url})" if url else text


def _summary(page: PullRequestPage, gate: MergeGate, commit: Commit, run_message: str) -> str:
    lines = [gate.reason, ""]
    if run_message:
        lines += [f"Verification: {run_message}", ""]
    for group in page.blocker_groups:
        lines.append(f"### {group['title']} ({group['subtitle']})")
        for view in group["findings"]:
            lines.append(f"- {_blocker_line(view)}")
        lines.append("")
    footer = []
    cleanups = [view for view in page.cleanups if view.finding.status == Finding.Status.OPEN]
    if cleanups:
        footer.append(f"{counted(len(cleanups), 'open cleanup').capitalize()}, shown as notices on the files.")
    pages = site_url(page.links.overview)
    if pages:
        footer += ["", f"All findings, their evidence and its history: {pages}"]
    return _within(lines, footer, limit=SUMMARY_LIMIT, more_url=site_url(page.links.blockers))


def _blocker_line(view: FindingView) -> str:
    finding = view.finding
    name = f"B{finding.number} {finding.title}"
    if finding.status == Finding.Status.OPEN:
        replaced = "".join(f"; {item.successor.sentence}" for item in view.evidence if item.successor)
        return f"{_link(name, site_url(view.anchor_url))}: {finding_verdict_phrase(view.verdict, view.verdict_reason)}{replaced}"
    return f"~~{_link(name, site_url(view.anchor_url))}~~ {finding.get_status_display().lower()}"


def open_finding_annotations(*, pull_request: PullRequest, commit: Commit) -> list[Annotation]:
    """The open findings of `pull_request` where they are at `commit`, as the check run shows them."""
    links = Links(pull_request=pull_request)
    return _annotations(finding_views(findings_of(pull_request), latest_commit=commit, links=links))


def _annotations(views: list[FindingView]) -> list[Annotation]:
    return [annotation for view in views if (annotation := _annotation(view)) is not None]


def _annotation(view: FindingView) -> Annotation | None:
    """An open finding where it is now: the first of its evidence that still holds at the commit,
    else where the evidence was recorded, else the finding's own location."""
    finding = view.finding
    if finding.status != Finding.Status.OPEN:
        return None
    location = None
    for item in view.evidence:
        result = item.result
        if result is not None and result.state == EvidenceResult.State.HOLDS and result.path \
                and item.kind != Evidence.Kind.GITLINK:
            # A path that exists holds on the whole file: its first line carries the annotation.
            start = result.start_line or 1
            location = (result.path, start, result.end_line or start)
            break
    if location is None:
        # Gone evidence: where the code that replaced it is, when it has lines.
        for item in view.evidence:
            if item.successor is not None and item.successor.shows_lines:
                successor = item.successor.successor
                location = (successor.path, successor.start_line, successor.end_line)
                break
    if location is None:
        for item in view.evidence:
            evidence = item.evidence
            if evidence.path and evidence.start_line and "*" not in evidence.path:
                location = (evidence.path, evidence.start_line, evidence.end_line or evidence.start_line)
                break
    if location is None and finding.path and "*" not in finding.path:
        location = (finding.path, finding.line or 1, finding.line or 1)
    if location is None:
        return None
    blocker = finding.kind == Finding.Kind.BLOCKER
    message = finding.summary or finding.title
    if view.verdict:
        message += f"\n\nRecheck: {finding_verdict_phrase(view.verdict, view.verdict_reason)} at {view.verification.commit.short_sha}."
        message += "".join(f"\n{item.successor.sentence}." for item in view.evidence if item.successor)
    detail = site_url(view.detail_url)
    if detail:
        message += f"\n{detail}"
    return Annotation(
        number=finding.number,
        kind=finding.kind,
        verdict=view.verdict,
        url=detail,
        path=location[0],
        start_line=location[1],
        end_line=max(location[1], location[2]),
        level="failure" if blocker else "notice",
        title=f"{'Blocker' if blocker else 'Cleanup'} {finding.number}: {finding.title}",
        message=message,
    )


def _comment(page: PullRequestPage, gate: MergeGate, commit: Commit, title: str) -> str:
    lines = [COMMENT_MARKER, f"### Recheck: {title}", "", f"Verified at {commit.sha}.", ""]
    if page.blockers:
        for view in page.blockers:
            lines.append(f"- {_blocker_line(view)}")
    else:
        lines.append("No blockers were recorded for this pull request.")
    footer = []
    pages = site_url(page.links.overview)
    if pages:
        footer += ["", f"[Findings, evidence and history on Recheck]({pages})"]
    footer += ["", "<sub>Updated by Recheck after each verification; edits to this comment are replaced.</sub>"]
    return _within(lines, footer, limit=COMMENT_LIMIT, more_url=site_url(page.links.blockers))


def superseded_report(*, pull_request: PullRequest, commit: Commit, by: Commit | None) -> CommitReport:
    """What ends the report of a head whose queued run a newer push superseded: it was not
    verified, and the newer head is (its own check says how that went)."""
    newer = by.short_sha if by else "a newer head"
    title = f"Superseded by {newer}: not verified"
    text = (f"Recheck did not verify {commit.sha}: {pull_request.reference} was pushed again "
            f"({by.sha if by else 'a newer head'}) before a worker took it, and the newer head is verified instead.")
    pages = site_url(Links(pull_request=pull_request).blockers)
    summary = f"{text}\n\nProgress and blockers: {pages}\n" if pages else text + "\n"
    return CommitReport(pull_request=pull_request, commit=commit, conclusion=CANCELLED, title=title, summary=summary)


def in_progress_title(commit: Commit) -> str:
    return f"Verifying {commit.short_sha}"


def in_progress_summary(pull_request: PullRequest, commit: Commit) -> str:
    count = Finding.objects.for_pull_request(pull_request).count()
    text = f"Recheck is verifying {counted(count, 'finding')} of {pull_request.reference} at {commit.sha}."
    pages = site_url(Links(pull_request=pull_request).blockers)
    return f"{text}\n\nProgress and blockers: {pages}\n" if pages else text + "\n"
