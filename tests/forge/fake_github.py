"""A fake GitHub REST API on 127.0.0.1 (pytest-httpserver) for the calls Recheck makes.

Every request body is validated with githubkit's models of GitHub's request schemas, strictly: a
field the schema does not have is an error too (the models themselves allow extras). Every
response is built as GitHub documents it and validated with githubkit's response model before it
is sent. A request that fails validation is answered 422 and kept in `invalid`, which the fixture
checks is empty when the test ends."""
import itertools
import json
import re
import threading
import time
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from typing import Any, Union

import jwt
from githubkit.compat import type_validate_python
from githubkit_schemas.latest import models as gh
from pydantic import BaseModel, ValidationError
from werkzeug import Request, Response

from tests.forge.fake_github_threads import THREAD_ROUTES, ThreadsMixin

API = "https://api.github.com"
NOW = "2026-01-01T00:00:00Z"
# GitHub's documented limits, which it answers 422 beyond.
COMMENT_LIMIT = 65536
OUTPUT_TEXT_LIMIT = 65535
ANNOTATION_TITLE_LIMIT = 255
ANNOTATION_TEXT_BYTES = 64 * 1024


def strictly(model_type, data: Any):
    """`data` validated as `model_type`, refusing fields the schema does not name."""
    value = type_validate_python(model_type, data)
    _no_extra(value, "body")
    return value


def _no_extra(value, where: str) -> None:
    if isinstance(value, BaseModel):
        if value.model_extra:
            raise ValueError(f"{where}: fields GitHub's schema does not have: {sorted(value.model_extra)}")
        for name in type(value).model_fields:
            _no_extra(getattr(value, name), f"{where}.{name}")
    elif isinstance(value, list):
        for index, item in enumerate(value):
            _no_extra(item, f"{where}[{index}]")


def _user(login: str = "recheck[bot]", user_id: int = 9) -> dict:
    base = f"{API}/users/{login}"
    return {
        "login": login, "id": user_id, "node_id": "MDQ6VXNlcjk=", "avatar_url": "https://avatars.example/u/9",
        "gravatar_id": "", "url": base, "html_url": f"https://github.com/{login}", "followers_url": f"{base}/followers",
        "following_url": f"{base}/following{{/other_user}}", "gists_url": f"{base}/gists{{/gist_id}}",
        "starred_url": f"{base}/starred{{/owner}}{{/repo}}", "subscriptions_url": f"{base}/subscriptions",
        "organizations_url": f"{base}/orgs", "repos_url": f"{base}/repos", "events_url": f"{base}/events{{/privacy}}",
        "received_events_url": f"{base}/received_events", "type": "Bot", "site_admin": False,
    }


def _app(slug: str) -> dict:
    """Another GitHub App, as a check run names the app that made it."""
    return {"id": 15368, "slug": slug, "node_id": "MDExOkludGVncmF0aW9uMTUzNjg=", "owner": _user("github", 9919),
            "name": slug, "description": "", "external_url": f"https://github.com/apps/{slug}",
            "html_url": f"https://github.com/apps/{slug}", "created_at": NOW, "updated_at": NOW,
            "permissions": {"checks": "write", "metadata": "read"}, "events": ["check_run"]}


def _minimal_repository(owner: str, repo: str) -> dict:
    base = f"{API}/repos/{owner}/{repo}"
    return {
        "id": 1296269, "node_id": "MDEwOlJlcG9zaXRvcnkxMjk2MjY5", "name": repo, "full_name": f"{owner}/{repo}",
        "owner": _user(owner, 1), "private": False, "html_url": f"https://github.com/{owner}/{repo}",
        "description": None, "fork": False, "url": base, **{
            f"{key}_url": f"{base}/{key}" for key in (
                "archive", "assignees", "blobs", "branches", "collaborators", "comments", "commits", "compare",
                "contents", "contributors", "deployments", "downloads", "events", "forks", "git_commits", "git_refs",
                "git_tags", "issue_comment", "issue_events", "issues", "keys", "labels", "languages", "merges",
                "milestones", "notifications", "pulls", "releases", "stargazers", "statuses", "subscribers",
                "subscription", "tags", "teams", "trees", "hooks")
        },
    }


@dataclass
class Failure:
    method: str
    path: re.Pattern
    status: int
    body: dict
    headers: dict
    times: int


@dataclass
class FakeGitHub(ThreadsMixin):
    """The state GitHub would keep, and what Recheck sent."""

    app_id: str
    public_key: str
    personal_token: str = "github_pat_fake"
    token_lifetime: timedelta = timedelta(hours=1)
    installations: dict[str, int] = field(default_factory=dict)
    check_runs: dict[int, dict] = field(default_factory=dict)
    statuses: list[dict] = field(default_factory=list)
    comments: dict[int, dict] = field(default_factory=dict)
    requests: list[tuple[str, str, dict | None]] = field(default_factory=list)
    invalid: list[str] = field(default_factory=list)
    tokens: dict[str, datetime] = field(default_factory=dict)
    revoked: set[str] = field(default_factory=set)
    failures: list[Failure] = field(default_factory=list)
    # (wall-clock time, method, path, status) of every answer, in order.
    answered: list[tuple[float, str, str, int]] = field(default_factory=list)
    # Seconds to wait before answering requests matching (method, path pattern), after acting on
    # them: GitHub that answers after the client's timeout has done the work all the same.
    slow: list[list] = field(default_factory=list)
    limit_headers: list[list] = field(default_factory=list)

    def __post_init__(self):
        self._ids = itertools.count(1001)
        self._lock = threading.Lock()
        self._threads_init()

    # --- what a test arranges ----------------------------------------------------------------
    def install(self, slug: str, installation_id: int = 77) -> None:
        self.installations[slug.lower()] = installation_id

    def fail(self, method: str, path: str, status: int, message: str, *, headers: dict | None = None,
             times: int = 1, errors: list | None = None) -> None:
        """Answer the next `times` matching requests with GitHub's error body for `status`."""
        body = {"message": message, "documentation_url": "https://docs.github.com/rest"}
        if errors is not None:
            body["errors"] = errors
        self.failures.append(Failure(method, re.compile(path), status, body, headers or {}, times))

    def answer_slowly(self, method: str, path: str, seconds: float, *, times: int = 1) -> None:
        """Act on the next `times` requests matching `method` and `path` (patterns) at once, but
        answer them `seconds` later."""
        self.slow.append([method, re.compile(path), seconds, times])

    def use_up_rate_limit(self, method: str, path: str, *, reset_in: int) -> None:
        """Answer the next matching request with the headers of the window's last request."""
        self.limit_headers.append([method, re.compile(path), reset_in])

    def calls(self, method: str, pattern: str) -> list[dict | None]:
        return [body for m, path, body in self.requests if m == method and re.search(pattern, path)]

    def answers(self, method: str, pattern: str) -> list[tuple[float, int]]:
        return [(at, status) for at, m, path, status in self.answered if m == method and re.search(pattern, path)]

    def other_run(self, slug: str, sha: str, name: str, conclusion: str | None, *, app: str) -> dict:
        """A check run another app (`app`, its slug) made on `sha`; completed unless `conclusion` is None."""
        run = {"id": next(self._ids), "repo": slug, "name": name, "head_sha": sha,
               "status": "completed" if conclusion else "in_progress", "conclusion": conclusion, "external_id": "",
               "details_url": None, "output": {}, "annotations": [], "app": app}
        self.check_runs[run["id"]] = run
        return run

    def other_status(self, sha: str, context: str, state: str, *, target_url: str | None = None) -> dict:
        """A commit status someone else set on `sha`."""
        status = {"id": next(self._ids), "sha": sha, "context": context, "state": state, "target_url": target_url,
                  "description": None}
        self.statuses.append(status)
        return status

    def runs_of(self, sha: str, name: str = "Recheck") -> list[dict]:
        return [run for run in self.check_runs.values() if run["head_sha"] == sha and run["name"] == name]

    def latest_run(self, sha: str, name: str = "Recheck") -> dict:
        """The run GitHub shows on the pull request for `name`: the newest one on the head."""
        return max(self.runs_of(sha, name), key=lambda run: run["id"])

    # --- the server ---------------------------------------------------------------------------
    ROUTES = [
        ("POST", r"^/app/installations/(?P<installation>\d+)/access_tokens$", "access_token"),
        ("GET", r"^/repos/(?P<owner>[^/]+)/(?P<repo>[^/]+)/installation$", "repo_installation"),
        ("POST", r"^/repos/(?P<owner>[^/]+)/(?P<repo>[^/]+)/check-runs$", "create_check_run"),
        ("PATCH", r"^/repos/(?P<owner>[^/]+)/(?P<repo>[^/]+)/check-runs/(?P<id>\d+)$", "update_check_run"),
        ("GET", r"^/repos/(?P<owner>[^/]+)/(?P<repo>[^/]+)/check-runs/(?P<id>\d+)/annotations$", "list_annotations"),
        ("GET", r"^/repos/(?P<owner>[^/]+)/(?P<repo>[^/]+)/commits/(?P<ref>[^/]+)/check-runs$", "list_for_ref"),
        ("POST", r"^/repos/(?P<owner>[^/]+)/(?P<repo>[^/]+)/statuses/(?P<sha>[0-9a-f]{40})$", "create_status"),
        ("GET", r"^/repos/(?P<owner>[^/]+)/(?P<repo>[^/]+)/commits/(?P<ref>[^/]+)/status$", "combined_status"),
        ("GET", r"^/repos/(?P<owner>[^/]+)/(?P<repo>[^/]+)/issues/(?P<number>\d+)/comments$", "list_comments"),
        ("POST", r"^/repos/(?P<owner>[^/]+)/(?P<repo>[^/]+)/issues/(?P<number>\d+)/comments$", "create_comment"),
        ("PATCH", r"^/repos/(?P<owner>[^/]+)/(?P<repo>[^/]+)/issues/comments/(?P<id>\d+)$", "update_comment"),
        *THREAD_ROUTES,
    ]

    def handle(self, request: Request) -> Response:
        with self._lock:
            response = self._handle(request)
            for limit in list(self.limit_headers):
                if limit[0] == request.method and limit[1].search(request.path):
                    self.limit_headers.remove(limit)
                    response.headers["x-ratelimit-remaining"] = "0"
                    response.headers["x-ratelimit-reset"] = str(int(time.time()) + limit[2])
                    break
            delay = 0.0
            for slow in self.slow:
                if slow[3] and re.fullmatch(slow[0], request.method) and slow[1].search(request.path):
                    slow[3] -= 1
                    delay = slow[2]
                    break
        if delay:
            time.sleep(delay)
        with self._lock:
            self.answered.append((time.time(), request.method, request.path, response.status_code))
        return response

    def _handle(self, request: Request) -> Response:
        body = json.loads(request.get_data() or b"null")
        self.requests.append((request.method, request.path, body))
        for failure in self.failures:
            if failure.times and failure.method == request.method and failure.path.search(request.path):
                failure.times -= 1
                return self._json(failure.status, failure.body, failure.headers)
        routed = [(re.match(pattern, request.path), endpoint) for method, pattern, endpoint in self.ROUTES
                  if method == request.method]
        routed = [(match, endpoint) for match, endpoint in routed if match]
        if not routed:
            return self._json(404, {"message": "Not Found", "documentation_url": "https://docs.github.com/rest"})
        match, name = routed[0]
        auth = request.headers.get("Authorization", "")
        if name in ("access_token", "repo_installation"):
            denied = self._check_jwt(auth)
        else:
            denied = self._check_token(auth)
        if denied:
            return self._json(401, {"message": denied, "documentation_url": "https://docs.github.com/rest"})
        try:
            if request.method == "GET":
                return getattr(self, name)(request.args, **match.groupdict())
            return getattr(self, name)(body, **match.groupdict())
        except (ValidationError, ValueError) as error:
            self.invalid.append(f"{request.method} {request.path}: {error}")
            return self._json(422, {"message": "Validation Failed", "errors": [str(error)[:300]]})

    def _check_jwt(self, auth: str) -> str:
        scheme, _, token = auth.partition(" ")
        if scheme != "Bearer":
            return "A JSON web token could not be decoded"
        try:
            claims = jwt.decode(token, self.public_key, algorithms=["RS256"])
        except jwt.PyJWTError as error:
            return f"A JSON web token could not be decoded: {error}"
        return "" if str(claims.get("iss")) == self.app_id else "Integration not found"

    def _check_token(self, auth: str) -> str:
        scheme, _, token = auth.partition(" ")
        if scheme.lower() not in ("token", "bearer"):
            return "Requires authentication"
        if token == self.personal_token:
            return ""
        expires = self.tokens.get(token)
        if expires is None or token in self.revoked or expires <= datetime.now(timezone.utc):
            return "Bad credentials"
        return ""

    @staticmethod
    def _json(status: int, data, headers: dict | None = None) -> Response:
        return Response(json.dumps(data), status=status, headers=headers or {}, content_type="application/json")

    # --- endpoints ----------------------------------------------------------------------------
    def access_token(self, body, installation):
        strictly(gh.AppInstallationsInstallationIdAccessTokensPostBody, body or {})
        if int(installation) not in self.installations.values():
            return self._json(404, {"message": "Not Found", "documentation_url": "https://docs.github.com/rest"})
        token = f"ghs_{next(self._ids)}"
        expires = datetime.now(timezone.utc) + self.token_lifetime
        self.tokens[token] = expires
        answer = {"token": token, "expires_at": expires.strftime("%Y-%m-%dT%H:%M:%SZ")}
        strictly(gh.InstallationToken, answer)
        return self._json(201, answer)

    def repo_installation(self, body, owner, repo):
        installation_id = self.installations.get(f"{owner}/{repo}".lower())
        if installation_id is None:
            return self._json(404, {"message": "Not Found", "documentation_url": "https://docs.github.com/rest"})
        answer = {
            "id": installation_id, "account": _user(owner, 1), "repository_selection": "selected",
            "access_tokens_url": f"{API}/app/installations/{installation_id}/access_tokens",
            "repositories_url": f"{API}/installation/repositories",
            "html_url": f"https://github.com/settings/installations/{installation_id}",
            "app_id": int(self.app_id), "target_id": 1, "target_type": "Organization",
            "permissions": {"checks": "write", "contents": "read", "metadata": "read", "pull_requests": "write"},
            "events": ["check_run", "check_suite", "merge_group", "pull_request"],
            "created_at": NOW, "updated_at": NOW, "single_file_name": None, "app_slug": "recheck",
            "suspended_by": None, "suspended_at": None,
        }
        type_validate_python(gh.Installation, answer)
        return self._json(200, answer)

    def create_check_run(self, body, owner, repo):
        data = strictly(Union[gh.ReposOwnerRepoCheckRunsPostBodyOneof0, gh.ReposOwnerRepoCheckRunsPostBodyOneof1], body)
        self._annotations_fit(body)
        run = {"id": next(self._ids), "repo": f"{owner}/{repo}", "name": data.name, "head_sha": data.head_sha,
               "status": body.get("status", "queued"), "conclusion": body.get("conclusion"),
               "external_id": body.get("external_id", ""),
               "details_url": body.get("details_url"), "output": dict(body.get("output") or {}), "annotations": []}
        run["annotations"] += (body.get("output") or {}).get("annotations", [])
        self.check_runs[run["id"]] = run
        return self._json(201, self._check_run(run))

    def update_check_run(self, body, owner, repo, id):
        strictly(Union[gh.ReposOwnerRepoCheckRunsCheckRunIdPatchBodyAnyof0,
                       gh.ReposOwnerRepoCheckRunsCheckRunIdPatchBodyAnyof1], body)
        self._annotations_fit(body)
        run = self.check_runs.get(int(id))
        if run is None:
            return self._json(404, {"message": "Not Found", "documentation_url": "https://docs.github.com/rest"})
        for key in ("name", "status", "conclusion", "details_url", "external_id"):
            if key in body:
                run[key] = body[key]
        if "output" in body:
            run["annotations"] += body["output"].get("annotations", [])
            run["output"] = {key: value for key, value in body["output"].items() if key != "annotations"}
        return self._json(200, self._check_run(run))

    @staticmethod
    def _annotations_fit(body):
        output = (body or {}).get("output") or {}
        for key in ("summary", "text"):
            if len(output.get(key) or "") > OUTPUT_TEXT_LIMIT:
                raise ValueError(f"output.{key} is longer than GitHub's {OUTPUT_TEXT_LIMIT} characters")
        annotations = output.get("annotations", [])
        if len(annotations) > 50:
            raise ValueError(f"{len(annotations)} annotations in one request; GitHub takes at most 50")
        for annotation in annotations:
            if len(annotation.get("title") or "") > ANNOTATION_TITLE_LIMIT:
                raise ValueError(f"an annotation's title is longer than {ANNOTATION_TITLE_LIMIT} characters")
            for key in ("message", "raw_details"):
                if len((annotation.get(key) or "").encode()) > ANNOTATION_TEXT_BYTES:
                    raise ValueError(f"an annotation's {key} is larger than 64 KB")

    def list_annotations(self, query, owner, repo, id):
        run = self.check_runs.get(int(id))
        if run is None:
            return self._json(404, {"message": "Not Found", "documentation_url": "https://docs.github.com/rest"})
        per_page, page = int(query.get("per_page", 30)), int(query.get("page", 1))
        blob = f"https://github.com/{run['repo']}/blob/{run['head_sha']}"
        answer = [
            {"path": a["path"], "start_line": a["start_line"], "end_line": a["end_line"],
             "start_column": a.get("start_column"), "end_column": a.get("end_column"),
             "annotation_level": a["annotation_level"], "title": a.get("title"), "message": a["message"],
             "raw_details": a.get("raw_details"), "blob_href": f"{blob}/{a['path']}"}
            for a in run["annotations"][(page - 1) * per_page : page * per_page]
        ]
        type_validate_python(list[gh.CheckAnnotation], answer)
        return self._json(200, answer)

    def list_for_ref(self, query, owner, repo, ref):
        runs = [run for run in self.check_runs.values() if run["repo"] == f"{owner}/{repo}" and run["head_sha"] == ref
                and run["name"] == query.get("check_name", run["name"])
                and run["status"] == query.get("status", run["status"])]
        if query.get("filter", "latest") == "latest":
            latest = {}
            for run in runs:
                latest[run["name"]] = max(latest.get(run["name"], run), run, key=lambda r: r["id"])
            runs = list(latest.values())
        per_page, page = int(query.get("per_page", 30)), int(query.get("page", 1))
        answer = {"total_count": len(runs),
                  "check_runs": [self._check_run(run) for run in sorted(runs, key=lambda r: -r["id"])]
                  [(page - 1) * per_page : page * per_page]}
        type_validate_python(gh.ReposOwnerRepoCommitsRefCheckRunsGetResponse200, answer)
        return self._json(200, answer)

    def _check_run(self, run: dict) -> dict:
        url = f"{API}/repos/{run['repo']}/check-runs/{run['id']}"
        answer = {
            "id": run["id"], "head_sha": run["head_sha"], "node_id": "CR_kwDO", "external_id": run["external_id"],
            "url": url,
            "html_url": f"https://github.com/{run['repo']}/runs/{run['id']}", "details_url": run["details_url"],
            "status": run["status"], "conclusion": run["conclusion"], "started_at": NOW,
            "completed_at": NOW if run["status"] == "completed" else None,
            "output": {"title": run["output"].get("title"), "summary": run["output"].get("summary"),
                       "text": None, "annotations_count": len(run["annotations"]),
                       "annotations_url": f"{url}/annotations"},
            "name": run["name"], "check_suite": {"id": 5}, "app": _app(run["app"]) if run.get("app") else None,
            "pull_requests": [],
        }
        type_validate_python(gh.CheckRun, answer)
        return answer

    def create_status(self, body, owner, repo, sha):
        strictly(gh.ReposOwnerRepoStatusesShaPostBody, body)
        if len(body.get("description") or "") > 140:
            raise ValueError("description is longer than GitHub's 140 characters")
        status = {"id": next(self._ids), "sha": sha, **body}
        self.statuses.append(status)
        answer = {
            "url": f"{API}/repos/{owner}/{repo}/statuses/{sha}", "avatar_url": None, "id": status["id"],
            "node_id": "SC_kwDO", "state": body["state"], "description": body.get("description"),
            "target_url": body.get("target_url"), "context": body.get("context", "default"),
            "created_at": NOW, "updated_at": NOW, "creator": _user(),
        }
        type_validate_python(gh.Status, answer)
        return self._json(201, answer)

    def combined_status(self, query, owner, repo, ref):
        """The latest status of each context on `ref`, as GitHub combines them (newest first)."""
        latest = {}
        for status in self.statuses:
            if status["sha"] == ref:
                latest[status.get("context", "default")] = status
        statuses = [
            {"url": f"{API}/repos/{owner}/{repo}/statuses/{ref}", "avatar_url": None, "id": status["id"],
             "node_id": "SC_kwDO", "state": status["state"], "description": status.get("description"),
             "target_url": status.get("target_url"), "context": context, "created_at": NOW, "updated_at": NOW}
            for context, status in sorted(latest.items(), key=lambda item: -item[1]["id"])
        ]
        states = {status["state"] for status in statuses}
        state = ("failure" if states & {"failure", "error"} else "pending" if "pending" in states or not states
                 else "success")
        answer = {"state": state, "statuses": statuses, "sha": ref, "total_count": len(statuses),
                  "repository": _minimal_repository(owner, repo),
                  "commit_url": f"{API}/repos/{owner}/{repo}/commits/{ref}",
                  "url": f"{API}/repos/{owner}/{repo}/commits/{ref}/status"}
        type_validate_python(gh.CombinedCommitStatus, answer)
        return self._json(200, answer)

    def _comment(self, comment: dict) -> dict:
        repo, number = comment["repo"], comment["number"]
        answer = {
            "id": comment["id"], "node_id": "IC_kwDO", "url": f"{API}/repos/{repo}/issues/comments/{comment['id']}",
            "body": comment["body"], "html_url": f"https://github.com/{repo}/pull/{number}#issuecomment-{comment['id']}",
            "user": _user(), "created_at": NOW, "updated_at": NOW,
            "issue_url": f"{API}/repos/{repo}/issues/{number}", "author_association": "NONE",
        }
        type_validate_python(gh.IssueComment, answer)
        return answer

    def list_comments(self, query, owner, repo, number):
        comments = [c for c in self.comments.values() if c["repo"] == f"{owner}/{repo}" and c["number"] == int(number)]
        per_page, page = int(query.get("per_page", 30)), int(query.get("page", 1))
        comments = sorted(comments, key=lambda c: c["id"])[(page - 1) * per_page : page * per_page]
        return self._json(200, [self._comment(comment) for comment in comments])

    @staticmethod
    def _body_fits(body):
        if len(body.get("body") or "") > COMMENT_LIMIT:
            raise ValueError(f"body is too long (maximum is {COMMENT_LIMIT} characters)")

    def create_comment(self, body, owner, repo, number):
        strictly(gh.ReposOwnerRepoIssuesIssueNumberCommentsPostBody, body)
        self._body_fits(body)
        comment = {"id": next(self._ids), "repo": f"{owner}/{repo}", "number": int(number), "body": body["body"]}
        self.comments[comment["id"]] = comment
        return self._json(201, self._comment(comment))

    def update_comment(self, body, owner, repo, id):
        strictly(gh.ReposOwnerRepoIssuesCommentsCommentIdPatchBody, body)
        self._body_fits(body)
        comment = self.comments.get(int(id))
        if comment is None:
            return self._json(404, {"message": "Not Found", "documentation_url": "https://docs.github.com/rest"})
        comment["body"] = body["body"]
        return self._json(200, self._comment(comment))



# The issues endpoints (a follow-up's issue) live in their own module, which adds them to FakeGitHub.
from tests.forge import fake_github_issues  # noqa: E402, F401
