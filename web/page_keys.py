"""What a PR page's key needs, read in one query written out: the pull request's id and
generation, its repository's id and visibility, whether a verification run is under way, and
whether any call to the forge failed.

It is read on every request for a kept page and on every revalidation, where it is most of the
work: through the ORM the same reads were four queries whose building cost more than running them
(the gate's read is written out for the same reason). Readability is decided on what it returns by
`user_may`, the one answer; the failed calls themselves (rare) are read only when there are some."""
import functools
from dataclasses import dataclass
from functools import cached_property
from datetime import timedelta

from django.conf import settings
from django.db import connection
from django.utils import timezone

from findings.models import VerificationRun
from forge.models import ForgeCall
from reviews.models import PullRequest, Repository
from reviews.selectors import preparable_cursor


@dataclass(frozen=True)
class PullRequestKeyRead:
    pull_request_id: int
    generation: int
    repository_id: int
    slug: str
    visibility: str
    run_live: bool
    calls_failed: bool

    @cached_property
    def repository(self) -> Repository:
        """Its id, slug and visibility only: what `user_may` asks of it (made when it is asked:
        an anonymous reader's visibility is most often known already)."""
        return Repository(pk=self.repository_id, slug=self.slug, visibility=self.visibility)


def _table(model) -> str:
    return connection.ops.quote_name(model._meta.db_table)


@functools.cache  # written once a process: building it cost as much as running it
def _pull_request_key_sql() -> str:
    return (
        f'SELECT pr."id", pr."generation", r."id", r."visibility", '
        f'EXISTS (SELECT 1 FROM {_table(VerificationRun)} v WHERE v."pull_request_id" = pr."id" '
        f'AND v."status" IN (%s, %s) AND v."heartbeat_at" >= %s), '
        f'EXISTS (SELECT 1 FROM {_table(ForgeCall)} c WHERE c."pull_request_id" = pr."id" AND c."status" = %s) '
        f'FROM {_table(PullRequest)} pr JOIN {_table(Repository)} r ON r."id" = pr."repository_id" '
        f'WHERE r."slug" = %s AND pr."number" = %s'
    )


_ACTIVE_RUN = (VerificationRun.Status.QUEUED.value, VerificationRun.Status.RUNNING.value)


def pull_request_key_read(*, slug: str, number: int) -> PullRequestKeyRead | None:
    """The key's facts of the PR `slug`#`number`, or None when there is no such PR."""
    live_since = timezone.now() - timedelta(seconds=settings.RECHECK_RUN_STALE_SECONDS)
    with preparable_cursor() as cursor:
        cursor.execute(_pull_request_key_sql(), [*_ACTIVE_RUN, live_since, ForgeCall.Status.FAILED.value, slug, number])
        row = cursor.fetchone()
    if row is None:
        return None
    pull_request_id, generation, repository_id, visibility, run_live, calls_failed = row
    return PullRequestKeyRead(
        pull_request_id=pull_request_id, generation=generation, repository_id=repository_id, slug=slug,
        visibility=visibility, run_live=bool(run_live), calls_failed=bool(calls_failed),
    )


@dataclass(frozen=True)
class RepositoryKeyRead:
    repository: Repository  # what its pages show of its own row, and what `user_may` asks of it
    # Its pull requests' count, sum of generations and highest id: moves whenever anything one of
    # them shows moves (each generation only moves forward), a PR is added or one is deleted.
    version: tuple
    calls_failed: bool

    @property
    def repository_id(self) -> int:
        return self.repository.pk

    @property
    def visibility(self) -> str:
        return self.repository.visibility


def repository_key_read(*, slug: str) -> RepositoryKeyRead | None:
    """The key's facts of the repository `slug` for its pages across pull requests (the
    repository's page, a file's, its follow-ups), or None when there is no such repository. The
    repository's own fields its pages show are read here too: an edit of a repository without pull
    requests moves no generation."""
    with preparable_cursor() as cursor:
        cursor.execute(
            f'SELECT r."id", r."visibility", r."forge", r."forge_url", r."web_url", r."default_branch", '
            f'(SELECT COUNT(*) FROM {_table(PullRequest)} pr WHERE pr."repository_id" = r."id"), '
            f'(SELECT SUM(pr."generation") FROM {_table(PullRequest)} pr WHERE pr."repository_id" = r."id"), '
            f'(SELECT MAX(pr."id") FROM {_table(PullRequest)} pr WHERE pr."repository_id" = r."id"), '
            f'EXISTS (SELECT 1 FROM {_table(ForgeCall)} c WHERE c."repository_id" = r."id" AND c."status" = %s) '
            f'FROM {_table(Repository)} r WHERE r."slug" = %s',
            [ForgeCall.Status.FAILED.value, slug],
        )
        row = cursor.fetchone()
    if row is None:
        return None
    repository_id, visibility, forge, forge_url, web_url, default_branch, count, total, highest, calls_failed = row
    return RepositoryKeyRead(
        repository=Repository(pk=repository_id, slug=slug, visibility=visibility, forge=forge, forge_url=forge_url,
                              web_url=web_url, default_branch=default_branch),
        version=(count, int(total or 0), highest, forge, forge_url, web_url, default_branch),
        calls_failed=bool(calls_failed),
    )
