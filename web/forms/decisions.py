"""A maintainer's decisions on the site: what the resolve form (`findings.forms.ResolveForm`, the
admin's too) shows around it, and the "Needs a decision" lists. Whether a change may be made
is `findings.services.resolution.finding_resolve`'s rule; the form only carries what a person typed, and
shows the service's refusal next to the field it names."""
from dataclasses import dataclass
from functools import reduce
from operator import or_

from django.core.paginator import Page, Paginator
from django.db.models import Prefetch, Q
from django.urls import reverse
from django.utils.http import url_has_allowed_host_and_scheme

from core import vocabulary
from findings.forms import DECISION_LABELS, ResolveForm
from findings.models import EvidenceResult, Finding, Verification
from findings.selectors.findings import findings_needing_decision
from presentation.finding_views import EvidenceView, FindingView
from presentation.links import Links
from presentation.paging import finding_list_page
from core.errors import EvidenceStillHolds, ResolutionCommitError, ResolutionError
from reviews.models import Commit

DECISIONS_PER_PAGE = 20


def finding_decide_url(finding: Finding) -> str:
    pull_request = finding.pull_request
    repository = pull_request.repository
    return reverse(
        "findings:finding_decide",
        kwargs={"owner": repository.owner, "name": repository.name, "number": pull_request.number,
                "finding_number": finding.number},
    )


def safe_next(request, url: str) -> str:
    """`url` when it points back into this site, else ''."""
    if url and url_has_allowed_host_and_scheme(url, allowed_hosts={request.get_host()},
                                               require_https=request.is_secure()):
        return url
    return ""


@dataclass
class Refusal:
    """finding_resolve's refusal, placed where the form shows it."""

    message: str
    field: str
    candidates: tuple[str, ...] = ()
    # Set when the evidence still holds at the commit: the form asks "mark fixed anyway?".
    still_holds: EvidenceStillHolds | None = None

    @classmethod
    def of(cls, error: ResolutionError) -> "Refusal":
        return cls(
            message=str(error),
            field=error.field,
            candidates=error.candidates if isinstance(error, ResolutionCommitError) else (),
            still_holds=error if isinstance(error, EvidenceStillHolds) else None,
        )

    @property
    def still_holds_label(self) -> str:
        return vocabulary.verdict_label(self.still_holds.verdict) if self.still_holds else ""


@dataclass
class Decision:
    """Everything the decide page shows: the finding, its evidence at the latest verified pin,
    the commit Mark fixed is prefilled with, and the form with any refusal."""

    finding: Finding
    view: FindingView
    latest_commit: Commit | None
    form: ResolveForm
    refusal: Refusal | None = None
    # The decision the person was making (the form shown open), when one was posted.
    chosen: str = ""

    @property
    def offered(self) -> list[tuple[str, str]]:
        """The decisions that would change something, as (status, label)."""
        return [(status, label) for status, label in DECISION_LABELS.items() if status != self.finding.status]

    @property
    def ask_anyway(self) -> bool:
        return bool(self.refusal and self.refusal.still_holds) or bool(self.form.data.get("anyway"))

    @property
    def commit_value(self) -> str:
        """What the commit field shows: what was typed into it, else the latest verified pin."""
        if self.form.is_bound and self.chosen == Finding.Status.FIXED:
            return self.form.data.get("commit", "")
        return self.latest_commit.sha if self.latest_commit else ""


def finding_decision(finding: Finding, *, latest_commit: Commit | None, form: ResolveForm,
                     refusal: Refusal | None = None, chosen: str = "") -> Decision:
    """The decide page of `finding` (its evidence prefetched), at its PR's latest verified pin."""
    links = Links(pull_request=finding.pull_request)
    [view] = decision_views([finding], links_for=lambda _: links, commits={finding.pk: latest_commit},
                            page_numbers={finding.pk: finding_list_page(finding)})
    return Decision(finding=finding, view=view, latest_commit=latest_commit, form=form, refusal=refusal,
                    chosen=chosen)


def decision_views(findings, *, links_for, commits: dict[int, Commit | None],
                   page_numbers: dict[int, int] | None = None) -> list[FindingView]:
    """The findings (evidence prefetched), each with its verification at its own commit
    (`commits`: finding id -> commit): findings of several PRs, each at its PR's latest verified
    pin, in two queries however many."""
    findings = list(findings)
    pairs = [Q(finding_id=finding.pk, commit_id=commits[finding.pk].pk) for finding in findings
             if commits.get(finding.pk) is not None]
    verifications = {}
    if pairs:
        verifications = {
            verification.finding_id: verification
            for verification in Verification.objects.filter(reduce(or_, pairs))
            .select_related("commit")
            .prefetch_related(Prefetch("results", queryset=EvidenceResult.objects.select_related("evidence")))
        }
    page_numbers = page_numbers or {}
    views = []
    for finding in findings:
        verification = verifications.get(finding.pk)
        results = {result.evidence_id: result for result in verification.results.all()} if verification else {}
        commit = commits.get(finding.pk)
        links = links_for(finding)
        views.append(
            FindingView(
                finding=finding,
                verification=verification,
                evidence=[EvidenceView(evidence=evidence, result=results.get(evidence.pk), latest_commit=commit)
                          for evidence in finding.evidence.all()],
                anchor_url=links.finding_anchor(finding, page_number=page_numbers.get(finding.pk, 1)),
                detail_url=links.finding_detail(finding),
            )
        )
    return views


@dataclass
class NeedsDecision:
    """One finding of the "Needs a decision" page: why it is there, and its evidence."""

    view: FindingView
    latest_commit: Commit | None

    @property
    def finding(self) -> Finding:
        return self.view.finding

    @property
    def reason(self) -> str:
        if self.finding.status == Finding.Status.FIXED:
            return "Marked fixed, but its evidence holds again at a later commit: reopen it, or keep it fixed."
        return (f"Still open, but {vocabulary.verdict_phrase(self.view.verdict)} at the latest verified commit: "
                "mark it fixed, or dismiss it.")


def decisions_page(repositories, *, page_number) -> Page:
    """A page of the findings waiting for a maintainer in `repositories`, each with its evidence
    at its PR's latest verified pin: a fixed number of queries, however many findings."""
    findings = findings_needing_decision(repositories)
    page = Paginator(findings, DECISIONS_PER_PAGE).get_page(page_number)
    shown = list(page.object_list)
    commits = {commit.pk: commit for commit in
               Commit.objects.filter(pk__in={finding.latest_commit_id for finding in shown})}
    links = {}

    def links_for(finding):
        return links.setdefault(finding.pull_request_id, Links(pull_request=finding.pull_request))

    views = decision_views(shown, links_for=links_for,
                           commits={finding.pk: commits.get(finding.latest_commit_id) for finding in shown})
    page.object_list = [NeedsDecision(view=view, latest_commit=commits.get(view.finding.latest_commit_id))
                        for view in views]
    return page
