"""The fake GitHub's issues endpoints, for a follow-up's issue: create, list, update (close with a
state_reason, reopen) and comment, with an issue that can be deleted (410) or locked (403 to a
comment) as on GitHub. Request bodies are validated strictly with githubkit's models and answers
with its `Issue` model, like the rest of the fake (tests/forge/fake_github.py), to which these are
added when this module is imported."""
from githubkit.compat import type_validate_python
from githubkit_schemas.latest import models as gh

from tests.forge.fake_github import API, NOW, FakeGitHub, _user, strictly



def _issue(self, issue: dict) -> dict:
    repo, number = issue["repo"], issue["number"]
    base = f"{API}/repos/{repo}/issues/{number}"
    answer = {
        "id": issue["id"], "node_id": "I_kwDO", "url": base, "repository_url": f"{API}/repos/{repo}",
        "labels_url": f"{base}/labels{{/name}}", "comments_url": f"{base}/comments", "events_url": f"{base}/events",
        "html_url": f"https://github.com/{repo}/issues/{number}", "number": number, "state": issue["state"],
        "state_reason": issue.get("state_reason"), "title": issue["title"], "body": issue.get("body"),
        "user": _user(), "labels": [], "assignees": [], "milestone": None, "locked": issue.get("locked", False),
        "comments": sum(1 for c in self.comments.values() if c["repo"] == repo and c["number"] == number),
        "closed_at": NOW if issue["state"] == "closed" else None, "created_at": NOW, "updated_at": NOW,
        "author_association": "NONE",
    }
    type_validate_python(gh.Issue, answer)
    return answer


def issues_of(self, slug: str) -> dict[int, dict]:
    """The issues of `slug` by number (a deleted one is gone from here)."""
    return {issue["number"]: issue for issue in self.__dict__.setdefault("issues", {}).values() if issue["repo"] == slug}


def delete_issue(self, slug: str, number: int) -> None:
    """As a repository admin deletes an issue on GitHub: it answers 410 from then on."""
    self.issues_of(slug)[number]["deleted"] = True


def lock_issue(self, slug: str, number: int) -> None:
    self.issues_of(slug)[number]["locked"] = True


def _gone_or_locked(self, owner, repo, number, *, commenting: bool):
    issue = self.issues_of(f"{owner}/{repo}").get(int(number))
    if issue is None:
        return None, self._json(404, {"message": "Not Found", "documentation_url": "https://docs.github.com/rest"})
    if issue.get("deleted"):
        return None, self._json(410, {"message": "This issue was deleted",
                                      "documentation_url": "https://docs.github.com/rest"})
    if commenting and issue.get("locked"):
        return None, self._json(403, {"message": "Unable to create comment because issue is locked.",
                                      "documentation_url": "https://docs.github.com/rest"})
    return issue, None


def create_issue(self, body, owner, repo):
    strictly(gh.ReposOwnerRepoIssuesPostBody, body)
    self._body_fits(body)
    issues = self.__dict__.setdefault("issues", {})
    number = len(issues) + 100
    issue = {"id": next(self._ids), "repo": f"{owner}/{repo}", "number": number, "state": "open",
             "title": body["title"], "body": body.get("body")}
    issues[issue["id"]] = issue
    return self._json(201, self._issue(issue))


def update_issue(self, body, owner, repo, number):
    strictly(gh.ReposOwnerRepoIssuesIssueNumberPatchBody, body)
    if body.get("state_reason") and body.get("state") != "closed" and body["state_reason"] != "reopened":
        raise ValueError("state_reason other than reopened needs state closed")
    issue, refusal = self._gone_or_locked(owner, repo, number, commenting=False)
    if refusal is not None:
        return refusal
    issue.update({key: body[key] for key in ("state", "state_reason", "title", "body") if key in body})
    if issue["state"] == "open":
        issue["state_reason"] = "reopened" if "state" in body else issue.get("state_reason")
    return self._json(200, self._issue(issue))


def list_issues(self, query, owner, repo):
    issues = [issue for issue in self.issues_of(f"{owner}/{repo}").values() if not issue.get("deleted")]
    if query.get("state", "open") != "all":
        issues = [issue for issue in issues if issue["state"] == query.get("state", "open")]
    return self._json(200, [self._issue(issue) for issue in sorted(issues, key=lambda issue: -issue["number"])])


def create_issue_comment(self, body, owner, repo, number):
    if self.issues_of(f"{owner}/{repo}").get(int(number)) is not None:
        _, refusal = self._gone_or_locked(owner, repo, number, commenting=True)
        if refusal is not None:
            return refusal
    return FakeGitHub.create_comment(self, body, owner, repo, number)


for _function in (_issue, issues_of, delete_issue, lock_issue, _gone_or_locked, create_issue, update_issue,
                  list_issues, create_issue_comment):
    setattr(FakeGitHub, _function.__name__, _function)
FakeGitHub.ROUTES = [
    ("POST", r"^/repos/(?P<owner>[^/]+)/(?P<repo>[^/]+)/issues$", "create_issue"),
    ("GET", r"^/repos/(?P<owner>[^/]+)/(?P<repo>[^/]+)/issues$", "list_issues"),
    ("PATCH", r"^/repos/(?P<owner>[^/]+)/(?P<repo>[^/]+)/issues/(?P<number>\d+)$", "update_issue"),
    # Before the pull request comments' route: a comment on an issue may be refused (deleted, locked).
    ("POST", r"^/repos/(?P<owner>[^/]+)/(?P<repo>[^/]+)/issues/(?P<number>\d+)/comments$", "create_issue_comment"),
    *FakeGitHub.ROUTES,
]
