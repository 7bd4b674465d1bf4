"""Talking to GitLab's REST API (v4) through httpx, with typed models of the answers Recheck reads
(a commit status, a merge request note), and what GitLab's answers mean for trying again.

Who Recheck is there: a token from the environment (RECHECK_GITLAB_TOKEN: a project, group or
personal access token with the `api` scope), sent as PRIVATE-TOKEN. Where: the repository's own
server (`Repository.forge_url`, self-managed GitLab), else RECHECK_GITLAB_URL (gitlab.com). A
project is addressed by its numeric id once a webhook told it (a moved or renamed project keeps
it), else by its URL-encoded path. No retries here: every call is a row of the outbox, which
retries it with backoff (`forge.outbox.failures.Failure` carries GitLab's answer as it carries GitHub's)."""
from __future__ import annotations

from datetime import datetime, timezone
from urllib.parse import quote

import httpx
from django.conf import settings
from pydantic import BaseModel, ConfigDict, ValidationError

from forge.outbox.failures import Failure
from reviews.models import Repository


class GitLabModel(BaseModel):
    # GitLab adds fields over time: what Recheck does not read is kept, never refused.
    model_config = ConfigDict(extra="allow")


class CommitStatus(GitLabModel):
    """`POST /projects/:id/statuses/:sha`'s answer."""

    id: int
    sha: str
    status: str
    name: str | None = None
    target_url: str | None = None
    description: str | None = None


class Note(GitLabModel):
    """A merge request note (`/projects/:id/merge_requests/:iid/notes`)."""

    id: int
    body: str
    system: bool = False


class TestCase(GitLabModel):
    """One test case of a pipeline's test report: GitLab's status is success, failed, skipped or error."""

    status: str
    name: str
    classname: str = ""
    file: str | None = None


class TestSuite(GitLabModel):
    """A test suite of a pipeline's test report: the JUnit reports of the jobs of one name."""

    name: str
    test_cases: list[TestCase] = []


class TestReport(GitLabModel):
    """`GET /projects/:id/pipelines/:pipeline_id/test_report`'s answer."""

    total_count: int = 0
    test_suites: list[TestSuite] = []


def pipeline_test_report(repository: Repository, pipeline_id: int) -> TestReport:
    """The test report GitLab parsed from a pipeline's JUnit artifacts; a Failure for anything
    GitLab did not answer with one."""
    return parsed(TestReport, gitlab_request(repository, "GET", f"/pipelines/{int(pipeline_id)}/test_report"))


def gitlab_base_url(repository: Repository) -> str:
    return (repository.forge_url or settings.RECHECK_GITLAB_URL).rstrip("/")


def project_ref(repository: Repository) -> str:
    """How the API names the project: its id when known, else its full path, encoded."""
    if repository.forge_project_id:
        return str(repository.forge_project_id)
    return quote(repository.slug, safe="")


def gitlab_request(repository: Repository, method: str, path: str, *, json: dict | None = None,
                   params: dict | None = None) -> httpx.Response:
    """One request to the project's API; a Failure for anything GitLab did not accept."""
    token = settings.RECHECK_GITLAB_TOKEN
    if not token:
        raise Failure(None, "No GitLab token is configured (RECHECK_GITLAB_TOKEN).", retryable=False)
    url = f"{gitlab_base_url(repository)}/api/v4/projects/{project_ref(repository)}{path}"
    try:
        response = httpx.request(
            method, url, json=json, params=params, timeout=float(settings.RECHECK_GITLAB_TIMEOUT),
            headers={"PRIVATE-TOKEN": token, "User-Agent": "Recheck"},
        )
    except httpx.TimeoutException:
        raise Failure(None, f"GitLab did not answer within {settings.RECHECK_GITLAB_TIMEOUT}s.", retryable=True) from None
    except httpx.HTTPError as error:
        raise Failure(None, f"GitLab could not be reached: {error}", retryable=True) from None
    if response.status_code >= 400:
        raise _failure(response)
    return response


def parsed(model: type[GitLabModel], response: httpx.Response):
    try:
        return model.model_validate(response.json())
    except (ValueError, ValidationError) as error:
        raise Failure(response.status_code, f"GitLab's answer is not a {model.__name__}: {error}"[:2000],
                      retryable=True) from None


def parsed_list(model: type[GitLabModel], response: httpx.Response) -> list:
    try:
        rows = response.json()
        return [model.model_validate(row) for row in rows]
    except (ValueError, TypeError, ValidationError) as error:
        raise Failure(response.status_code, f"GitLab's answer is not a list of {model.__name__}: {error}"[:2000],
                      retryable=True) from None


def gitlab_message(response: httpx.Response) -> str:
    """GitLab's own words: `message` (a text, a list, or a mapping of field to messages), or an
    OAuth `error` with its description (a token without the scope)."""
    try:
        body = response.json()
    except ValueError:
        return response.text[:500] or f"HTTP {response.status_code}"
    if not isinstance(body, dict):
        return str(body)[:500]
    message = body.get("message")
    if isinstance(message, dict):
        message = "; ".join(f"{field} {' '.join(map(str, texts)) if isinstance(texts, list) else texts}"
                            for field, texts in message.items())
    elif isinstance(message, list):
        message = "; ".join(map(str, message))
    if not message and body.get("error"):
        message = f"{body['error']}: {body.get('error_description', '')}".strip(": ")
    return str(message or f"HTTP {response.status_code}")[:2000]


def _failure(response: httpx.Response) -> Failure:
    status = response.status_code
    message = gitlab_message(response)
    retry_after = _retry_after(response)
    if status == 429:
        # GitLab's rate limit: Retry-After in seconds, or the time the window resets.
        return Failure(status, message, retryable=True, retry_after=retry_after if retry_after is not None else 60,
                       rate_limited=True)
    return Failure(status, message, retryable=status >= 500, retry_after=retry_after)


def _retry_after(response: httpx.Response) -> float | None:
    try:
        return float(response.headers.get("retry-after", ""))
    except ValueError:
        pass
    try:
        reset = float(response.headers.get("ratelimit-reset", ""))
    except ValueError:
        return None
    return max(0.0, reset - datetime.now(timezone.utc).timestamp())


def is_scope_failure(failure: Failure) -> bool:
    return failure.status == 403 and "scope" in failure.message.lower()
