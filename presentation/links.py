"""Where the companion pages of a pull request link to: the site's URLs live, sibling files in the
static render, and the names of the three pages."""
from dataclasses import dataclass, field

from urllib.parse import urlencode

from django.urls import reverse

from findings.models import Finding
from reviews.models import PullRequest

PAGES = ("overview", "blockers", "cleanups")
STATIC_FILES = {"overview": "index.html", "blockers": "blockers.html", "cleanups": "cleanups.html"}


@dataclass(frozen=True)
class Links:
    """Where the pages of one PR link to: site URLs live, sibling files in the static render."""

    pull_request: PullRequest
    static: bool = False
    # URLs reversed once: a page of thousands of findings links each, and reversing is most of it.
    _reversed: dict = field(default_factory=dict, compare=False, repr=False)

    def page(self, name: str) -> str:
        if self.static:
            return STATIC_FILES[name]
        url = self._reversed.get(name)
        if url is None:
            route = {"overview": "findings:pull_request", "blockers": "findings:blockers",
                     "cleanups": "findings:cleanups"}
            url = self._reversed[name] = reverse(route[name], kwargs=self.kwargs)
        return url

    @property
    def kwargs(self) -> dict:
        repository = self.pull_request.repository
        return {"owner": repository.owner, "name": repository.name, "number": self.pull_request.number}

    @property
    def overview(self) -> str:
        return self.page("overview")

    @property
    def blockers(self) -> str:
        return self.page("blockers")

    @property
    def cleanups(self) -> str:
        return self.page("cleanups")

    # Actions of the live site; the static render shows none of them.
    @property
    def verify(self) -> str:
        return "" if self.static else reverse("findings:verify", kwargs=self.kwargs)

    @property
    def companion_zip(self) -> str:
        return "" if self.static else reverse("findings:companion_zip", kwargs=self.kwargs)

    @property
    def latest_run(self) -> str:
        return "" if self.static else reverse("findings:latest_run", kwargs=self.kwargs)

    def record_failure(self, failure, sha: str) -> str:
        """The editor of a new finding, prefilled with the check item that names ``failure`` (a
        `findings.selectors.new_failures.NewFailure`) at ``sha``; the static render has no editor."""
        if self.static:
            return ""
        item = failure.evidence(sha)
        query = {"kind": "check", "commit": sha, "check": item["check"]}
        if item.get("app"):
            query["app"] = item["app"]
        if item.get("tests"):
            query["tests"] = item["tests"][0]
        if item.get("results"):
            query["results"] = failure.label
        return f"{reverse('findings:finding_new', kwargs=self.kwargs)}?{urlencode(query)}"

    def code_tree(self, sha: str) -> str:
        """The code browser's files at a pinned commit; the static render has no code browser."""
        return "" if self.static else reverse("findings:code_tree", kwargs={**self.kwargs, "sha": sha})

    def finding_anchor(self, finding: Finding, *, page_number: int = 1) -> str:
        """Where the finding's section is: its kind's page, and on the live site the page of the
        list it falls on (the static render has every finding on one page)."""
        page = "blockers" if finding.kind == Finding.Kind.BLOCKER else "cleanups"
        query = f"?page={page_number}" if page_number > 1 and not self.static else ""
        return f"{self.page(page)}{query}#{finding.anchor}"

    def finding_detail(self, finding: Finding) -> str:
        """The finding's own page; the static render has none, so it gets nothing."""
        if self.static:
            return ""
        prefix = self._reversed.get("finding")
        if prefix is None:
            first = reverse("findings:finding", kwargs={**self.kwargs, "finding_number": 1})
            # Every finding's URL is the first one's with its own number in the last segment.
            prefix = self._reversed["finding"] = first[: -len("1/")] if first.endswith("/1/") else ""
        if not prefix:
            return reverse("findings:finding", kwargs={**self.kwargs, "finding_number": finding.number})
        return f"{prefix}{finding.number}/"
