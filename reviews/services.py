"""Writes about reviewed code: repositories, commits and pins."""
import re
import threading
from contextlib import contextmanager

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from django.db.models import F
from django.utils import timezone

from access.audit import audit_changes, audit_record, writes
from core.errors import RecheckError, RepositoryError
from reviews.models import Commit, PinnedCommit, PullRequest, Repository, WorkerHost, is_full_sha, sha_validator
from reviews.stack import stack_above_branch, stack_connected


_REMOTE_HELPER = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*::")


def repository_clone_url_check(url: str) -> str:
    """`url` as it may be recorded as a repository's clone URL, or a RepositoryError saying why
    not. Remote URLs must name an allowed, public host (checked again before every fetch); a local
    path is recorded only where local repositories are allowed, and is checked for existence when
    it is fetched, not when it is recorded (a bundle may arrive before its repository)."""
    # The engine's git package is loaded by the writes that check a URL or a slug, not by every
    # process that imports this module for `pull_request_changed` (the apps' receivers).
    from engine.git import validate_clone_url
    from engine.git.safety import remote_host

    url = url.strip()
    try:
        return validate_clone_url(
            url,
            allow_local=False,
            allowed_hosts=settings.RECHECK_ALLOWED_GIT_HOSTS,
            internal_hosts=settings.RECHECK_INTERNAL_GIT_HOSTS,
        )
    except RepositoryError:
        # A refused remote URL stays refused, whatever local sources may do.
        if settings.RECHECK_ALLOW_LOCAL_REPOSITORIES and remote_host(url) is None and _looks_local(url):
            return url
        raise


def _looks_local(value: str) -> bool:
    return (
        not value.startswith("-")
        and not _REMOTE_HELPER.match(value)
        and ("://" not in value or value.startswith("file://"))
        and not any(ord(char) < 32 for char in value)
    )


def repository_slug_check(slug: str) -> str:
    """`slug` as forges name repositories: `owner/name`, a `.git` suffix dropped once, no `.` or
    `..` part. Two spellings of one repository give one slug, and so one mirror."""
    from engine.git import validate_slug

    owner, name = validate_slug(slug.strip() if isinstance(slug, str) else slug)
    return f"{owner}/{name}"


_batched = threading.local()


def pull_request_changed(*, pull_request_id: int) -> None:
    """Record that something the PR's pages or merge gate show has changed. Answers cached under
    the previous generation are never served again. Called by signals on every model save and
    delete those answers read (`findings.receivers`), and by the writes that bypass them (raw SQL,
    `QuerySet.update`)."""
    pull_requests_changed(pull_request_ids=[pull_request_id])


def pull_requests_changed(*, pull_request_ids) -> None:
    """`pull_request_changed` for several PRs in one statement (a bulk write's rows, which send no
    signals). A PR whose changes are batched moves when its batch ends."""
    ids = set(pull_request_ids) - getattr(_batched, "ids", set())
    if ids:
        # The PRs stacked on these read their gates (`findings.state`), and the pages of those
        # below list the ones above with their gates: the whole stack moves with them. One more
        # query when they are in no stack.
        ids |= set(stack_connected(ids))
        PullRequest.objects.filter(pk__in=ids).update(generation=F("generation") + 1)


@contextmanager
def pull_request_changes_batched(*, pull_request_id: int):
    """Many writes to one PR inside one transaction (an import of thousands of rows) move its
    generation once, when they are done, rather than once a row. Nobody sees the writes before the
    transaction commits, so one move before the commit is as good as many."""
    if not transaction.get_connection().in_atomic_block:
        raise RuntimeError("batching the changes of a pull request needs a transaction around them")
    ids = _batched.__dict__.setdefault("ids", set())
    if pull_request_id in ids:  # already batched further out
        yield
        return
    ids.add(pull_request_id)
    try:
        yield
    finally:
        ids.discard(pull_request_id)
    pull_request_changed(pull_request_id=pull_request_id)


def commit_lookup(*, repository: Repository, sha: str) -> Commit | None:
    """The recorded commit that `sha` names: exactly, or as an abbreviation of a recorded full SHA
    (or a recorded abbreviation of it). Several candidates are an error, never a guess."""
    sha = sha.strip().lower()
    exact = Commit.objects.filter(repository=repository, sha=sha).first()
    if exact is not None:
        return exact
    candidates = [
        commit
        for commit in Commit.objects.filter(repository=repository, sha__startswith=sha[:7])
        if commit.sha.startswith(sha) or sha.startswith(commit.sha)
    ]
    if len(candidates) > 1:
        names = ", ".join(sorted(commit.sha for commit in candidates))
        raise RecheckError(f"Commit {sha} of {repository.slug} is ambiguous: it could be {names}. Give more digits.")
    return candidates[0] if candidates else None


def commit_sha_checked(sha: str) -> str:
    """`sha` normalised (trimmed, lower case), or a RecheckError saying what a SHA looks like."""
    sha = sha.strip().lower()
    try:
        sha_validator(sha)
    except ValidationError:
        raise RecheckError(f"{sha!r} is not a commit SHA: give 7 to 40 hexadecimal digits.") from None
    return sha


@transaction.atomic
def commit_get_or_create(*, repository: Repository, sha: str) -> Commit:
    """The commit `sha` names, recorded as given (abbreviated SHAs stay unresolved until a fetch
    resolves them)."""
    sha = commit_sha_checked(sha)
    commit = commit_lookup(repository=repository, sha=sha)
    if commit is not None:
        return commit
    return Commit.objects.create(repository=repository, sha=sha, resolved=is_full_sha(sha))


@transaction.atomic
def pull_request_pin_commit(
    *, pull_request: PullRequest, commit: Commit, role: str, note: str = ""
) -> tuple[PinnedCommit, bool]:
    """Pin `commit` to `pull_request` with `role`. A commit already pinned keeps its role; the note
    is updated when one is given. Returns the pin and whether it was created."""
    if role not in PinnedCommit.Role.values:
        raise RecheckError(f"Unknown role {role!r}: use one of {', '.join(PinnedCommit.Role.values)}.")
    pin, created = PinnedCommit.objects.get_or_create(
        pull_request=pull_request, commit=commit, defaults={"role": role, "note": note}
    )
    if not created and note and pin.note != note:
        pin.note = note
        pin.save(update_fields=["note"])
    return pin, created


def pull_request_state_record(*, pull_request: PullRequest, state: str) -> bool:
    """Record the PR's state on its forge (open, merged, closed); returns whether it changed."""
    if state not in PullRequest.State.values:
        raise RecheckError(f"Unknown state {state!r}: use one of {', '.join(PullRequest.State.values)}.")
    changed = PullRequest.objects.filter(pk=pull_request.pk).exclude(state=state).update(state=state)
    pull_request.state = state
    if changed:
        # Only an open PR holds others up: those stacked on it read their gates again.
        pull_request_changed(pull_request_id=pull_request.pk)
    return bool(changed)


def pull_request_branches_record(*, pull_request: PullRequest, base_branch: str, head_branch: str) -> bool:
    """Record the branches the forge names for the PR (a retarget changes its base); returns
    whether a known base branch changed. The PRs stacked on it, by its head branch before and after,
    read their gates again."""
    base_branch, head_branch = base_branch[:255], head_branch[:255]
    before = PullRequest.objects.filter(pk=pull_request.pk).values_list("base_branch", "head_branch").first()
    pull_request.base_branch, pull_request.head_branch = base_branch, head_branch
    if before is None or before == (base_branch, head_branch):
        return False
    PullRequest.objects.filter(pk=pull_request.pk).update(base_branch=base_branch, head_branch=head_branch)
    pull_requests_changed(pull_request_ids=[pull_request.pk, *stack_above_branch(
        repository_id=pull_request.repository_id, head_branch=before[1])])
    # A base recorded for the first time (a PR imported before its forge named its branches) is
    # no retarget.
    return bool(before[0]) and before[0] != base_branch


def repository_publishing_update(
    *, repository: Repository, publish_checks: bool | None = None, publish_comment: bool | None = None
) -> Repository:
    """Turn reporting to GitHub on or off for `repository` (None leaves a setting as it is). The
    audit log records what changed, before and after."""
    changes = {
        name: value
        for name, value in (("publish_checks", publish_checks), ("publish_comment", publish_comment))
        if value is not None
    }
    if changes:
        with transaction.atomic():
            before = Repository.objects.select_for_update().filter(pk=repository.pk).values(*changes).get()
            Repository.objects.filter(pk=repository.pk).update(**changes)
            for name, value in changes.items():
                setattr(repository, name, value)
            audit_record(action="repository.settings", target=repository.slug, repository=repository,
                         changes=audit_changes(before, changes))
    return repository


@transaction.atomic
def repository_get_or_register(
    *, clone_url: str, default_branch: str = "", visibility: str = Repository.Visibility.PUBLIC
) -> Repository:
    """The repository `clone_url` names: a known one whose clone URL is the same repository
    (`git@host:o/n.git` and `https://host/o/n` are), else a new one registered under the same URL
    rules as any clone URL, as owner/name from its path, with `visibility`. A RecheckError says
    why it cannot be."""
    from engine.git import validate_clone_url
    from engine.git.submodules import slug_for_url, url_key

    key = url_key(clone_url)
    for known in Repository.objects.all():
        if url_key(known.clone_url) == key:
            return known
    # The same rules as any clone URL, internal addresses included; a local path (where allowed)
    # must exist, since it is fetched right away.
    url = validate_clone_url(
        clone_url,
        allow_local=settings.RECHECK_ALLOW_LOCAL_REPOSITORIES,
        allowed_hosts=settings.RECHECK_ALLOWED_GIT_HOSTS,
        internal_hosts=settings.RECHECK_INTERNAL_GIT_HOSTS,
    )
    try:
        slug = repository_slug_check(slug_for_url(url))
    except RecheckError:
        raise RecheckError(
            f"{clone_url} gives no usable owner/name ({slug_for_url(url)!r}); register the repository by hand"
        ) from None
    if Repository.objects.filter(slug=slug).exists():
        raise RecheckError(
            f"{clone_url} would be registered as {slug}, but {slug} is already registered with another clone "
            "URL; name the submodule's repository in the evidence"
        )
    web_url = url.removesuffix(".git") if url.startswith("https://") else ""
    try:
        with transaction.atomic():
            return Repository.objects.create(
                slug=slug, clone_url=url, web_url=web_url, default_branch=default_branch or "main",
                visibility=visibility,
            )
    except IntegrityError:
        # Another worker registered it first, verifying the same submodule at the same time.
        registered = Repository.objects.get(slug=slug)
        if url_key(registered.clone_url) != key:
            raise RecheckError(f"{slug} was just registered with another clone URL; name the submodule's "
                               "repository in the evidence") from None
        return registered


def repository_default_branch_record(*, repository: Repository, branch: str) -> bool:
    """Record the default branch the forge reports for `repository` (a rename on the forge);
    returns whether it changed. The audit log keeps the name before and after."""
    branch = branch.strip()
    if not branch or branch == repository.default_branch or len(branch) > 200:
        return False
    before = repository.default_branch
    changed = Repository.objects.filter(pk=repository.pk, default_branch=before).update(default_branch=branch)
    if changed:
        repository.default_branch = branch
        audit_record(action="repository.default_branch", target=repository.slug, repository=repository,
                     changes={"default_branch": [before, branch]}, message="Reported by the forge.")
    return bool(changed)


# A worker's own bookkeeping, not a person's write: nothing to check or audit, as with a run's
# progress.
WORKER_HEARTBEAT = "a worker saying it is alive and which queues it consumes"


@writes("worker.heartbeat", system=WORKER_HEARTBEAT)
def worker_host_heartbeat(*, hostname: str, queues: list[str], mirror_bytes: int | None = None) -> None:
    """Record that the worker `hostname` is alive now and consumes `queues`."""
    WorkerHost.objects.update_or_create(
        hostname=hostname,
        defaults={"queues": sorted(queues), "mirror_bytes": mirror_bytes, "seen_at": timezone.now()},
    )


@writes("worker.heartbeat", system=WORKER_HEARTBEAT)
def worker_host_leave(*, hostname: str) -> None:
    """Forget the worker `hostname` as it shuts down, so nothing is routed to its shard meanwhile."""
    WorkerHost.objects.filter(hostname=hostname).delete()
