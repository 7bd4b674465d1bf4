"""Talking to GitHub through githubkit: who Recheck is there (a GitHub App's installation, or a
token), and what GitHub's answers mean for whether to try again.

githubkit's own retries and HTTP cache are off: every call is a row that its task retries with
backoff, so a retry is visible to a person and survives a worker restart.

githubkit is imported when a call is made, not with this module: it takes longer to import than the
rest of Django's start-up, and every web process and command loads the forge app."""
from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import datetime, timezone
from typing import TYPE_CHECKING, TypeVar
from urllib.parse import urlsplit

from django.conf import settings
from django.core.cache import cache
from forge.outbox.failures import Failure
from reviews.models import Repository

if TYPE_CHECKING:
    from githubkit import GitHub
    from githubkit.exception import RequestFailed

logger = logging.getLogger(__name__)

T = TypeVar("T")

# An installation token lives an hour; one that has less than this left is not handed out, so a
# call never starts with a token that expires on the way.
TOKEN_MARGIN_SECONDS = 300


def credentials_kind() -> str:
    """'app', 'token' or '' (nothing configured)."""
    if settings.RECHECK_GITHUB_APP_ID and settings.RECHECK_GITHUB_APP_PRIVATE_KEY:
        return "app"
    return "token" if settings.RECHECK_GITHUB_TOKEN else ""


def _client(auth) -> GitHub:
    from githubkit import GitHub

    return GitHub(
        auth,
        base_url=settings.RECHECK_GITHUB_API_URL,
        user_agent="Recheck",
        timeout=float(settings.RECHECK_GITHUB_TIMEOUT),
        auto_retry=False,
        http_cache=False,
    )


def _app_client() -> GitHub:
    from githubkit import AppAuthStrategy

    return _client(AppAuthStrategy(settings.RECHECK_GITHUB_APP_ID, settings.RECHECK_GITHUB_APP_PRIVATE_KEY))


def _token_cache_key(installation_id: int) -> str:
    return f"recheck:github:installation-token:{settings.RECHECK_GITHUB_APP_ID}:{installation_id}"


def repository_installation_id(repository: Repository, *, refresh: bool = False) -> int:
    """The App's installation on `repository`, looked up once and remembered on the repository."""
    if repository.github_installation_id and not refresh:
        return repository.github_installation_id
    app = _app_client()
    installation = _call(lambda: app.rest.apps.get_repo_installation(repository.owner, repository.name))
    installation_id = installation.parsed_data.id
    Repository.objects.filter(pk=repository.pk).update(github_installation_id=installation_id)
    repository.github_installation_id = installation_id
    return installation_id


def budget_key(repository: Repository) -> str:
    """The forge budget `repository`'s calls are counted in (`forge.outbox.budget`). GitHub counts an
    App's requests per installation (its secondary limit, about 80 content-creating requests a
    minute, too), a token's per token: the installation is looked up before the repository's first
    call, so its calls are never counted in two budgets."""
    server = urlsplit(settings.RECHECK_GITHUB_API_URL).netloc
    if credentials_kind() == "app":
        return f"github:{server}:installation:{repository_installation_id(repository)}"
    return f"github:{server}:token"


def installation_token(repository: Repository, *, refresh: bool = False) -> str:
    """A token of the App's installation on `repository`, from the cache until shortly before it
    expires (`refresh` drops the cached one: GitHub refused it)."""
    installation_id = repository_installation_id(repository)
    key = _token_cache_key(installation_id)
    if refresh:
        cache.delete(key)
    elif token := cache.get(key):
        return token
    app = _app_client()
    try:
        answer = _call(lambda: app.rest.apps.create_installation_access_token(installation_id))
    except Failure as failure:
        if failure.status != 404:
            raise
        # The App was uninstalled and installed again: the remembered installation is gone.
        installation_id = repository_installation_id(repository, refresh=True)
        key = _token_cache_key(installation_id)
        answer = _call(lambda: app.rest.apps.create_installation_access_token(installation_id))
    token = answer.parsed_data
    expires_at = datetime.fromisoformat(token.expires_at.replace("Z", "+00:00"))
    lifetime = (expires_at - datetime.now(timezone.utc)).total_seconds() - TOKEN_MARGIN_SECONDS
    if lifetime > 0:
        cache.set(key, token.token, timeout=int(lifetime))
    return token.token


def github_call(repository: Repository, operation: Callable[[GitHub], T]) -> T:
    """Run `operation` with a client authenticated for `repository`: as the App's installation
    when an App is configured (a token GitHub refuses is replaced once), else with the token."""
    from githubkit import TokenAuthStrategy

    kind = credentials_kind()
    if kind == "token":
        return _call(lambda: operation(_client(TokenAuthStrategy(settings.RECHECK_GITHUB_TOKEN))))
    if kind != "app":
        raise Failure(None, "No GitHub credentials are configured.", retryable=False)
    client = _client(TokenAuthStrategy(installation_token(repository)))
    try:
        return _call(lambda: operation(client))
    except Failure as failure:
        if failure.status != 401:
            raise
    # Revoked or expired before its time: a fresh token, once.
    client = _client(TokenAuthStrategy(installation_token(repository, refresh=True)))
    return _call(lambda: operation(client))


def _call(operation: Callable[[], T]) -> T:
    from githubkit.exception import RateLimitExceeded, RequestError, RequestFailed, RequestTimeout

    try:
        return operation()
    except RateLimitExceeded as error:
        raise Failure(
            error.response.status_code, _message(error), retryable=True,
            retry_after=error.retry_after.total_seconds(), rate_limited=True,
        ) from None
    except RequestFailed as error:
        status = error.response.status_code
        message = _message(error)
        if status in (403, 429) and "rate limit" in message.lower():
            # A secondary rate limit without Retry-After: GitHub asks for at least a minute.
            raise Failure(status, message, retryable=True, retry_after=60, rate_limited=True) from None
        # A 5xx may say when to come back too (503 with Retry-After, in seconds).
        raise Failure(status, message, retryable=status >= 500, retry_after=_retry_after(error)) from None
    except RequestTimeout:
        raise Failure(None, f"GitHub did not answer within {settings.RECHECK_GITHUB_TIMEOUT}s.", retryable=True) from None
    except RequestError as error:
        raise Failure(None, f"GitHub could not be reached: {error.exc}", retryable=True) from None


def _retry_after(error: RequestFailed) -> float | None:
    try:
        return float(error.response.headers.get("retry-after", ""))
    except (TypeError, ValueError):
        return None


def _message(error: RequestFailed) -> str:
    """GitHub's own words: its `message`, with the details of a 422's `errors`."""
    try:
        body = error.response.json()
    except ValueError:
        return error.response.text[:500] or f"HTTP {error.response.status_code}"
    if not isinstance(body, dict):
        return str(body)[:500]
    message = str(body.get("message") or f"HTTP {error.response.status_code}")
    details = []
    for item in body.get("errors") or []:
        if isinstance(item, dict):
            details.append(item.get("message") or " ".join(str(item.get(k, "")) for k in ("resource", "field", "code")))
        else:
            details.append(str(item))
    return f"{message} ({'; '.join(detail.strip() for detail in details)})" if details else message


def rate_limit_wait(answer) -> float | None:
    """Seconds until GitHub's rate limit resets, when an accepted call used up the last request
    of the window (`x-ratelimit-remaining: 0`); None while requests are left."""
    headers = getattr(answer, "headers", None) or {}
    if headers.get("x-ratelimit-remaining") != "0":
        return None
    try:
        reset = float(headers.get("x-ratelimit-reset", ""))
    except ValueError:
        return 60.0
    return max(0.0, reset - datetime.now(timezone.utc).timestamp())
