"""Bare mirrors of remote repositories, created and updated with ``git fetch``."""

from __future__ import annotations

import fcntl
import re
import shutil
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from core.errors import RepositoryError
from engine.git.process import run_git, stderr_text
from engine.git.safety import Resolver, clone_url_addresses, slug_directory, validate_clone_url

_BASE_REFSPECS = ("+refs/heads/*:refs/heads/*", "+refs/tags/*:refs/tags/*")
_USERINFO = re.compile(r"(?<=://)[^/@]*@")
_FULL_SHA = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")
# Commits fetched by SHA get a ref, or a later gc would drop them as unreachable.
_KEPT_COMMITS = "refs/recheck/commits/"
_BARE_REPOSITORY_ENTRIES = frozenset({"HEAD", "objects", "refs", "config", "packed-refs", "info", "description",
                                      "hooks", "logs", "FETCH_HEAD", "shallow", "branches", "index"})


@dataclass(frozen=True)
class FetchResult:
    """What a fetch did.

    ``pr_ref_missing`` is True when a PR ref was asked for but the forge does
    not publish it; the branches and tags were fetched all the same.
    ``fetched`` is False when the mirror already held every commit asked for
    (``unless_holding``), so nothing was fetched.
    """

    mirror_dir: Path
    created: bool
    pr_ref: str | None = None
    pr_head: str | None = None
    pr_ref_missing: bool = False
    fetched: bool = True


def mirror_dir_for(root: Path, slug: str) -> Path:
    """Where the mirror of ``owner/name`` lives under ``root``: root/owner/name.git. Different
    slugs always get different directories."""
    owner, directory = slug_directory(slug)
    return Path(root) / owner / directory


def fetch_mirror(
    *,
    url: str,
    mirror_dir: Path,
    allow_local: bool,
    pr_number: int | None = None,
    pr_ref_template: str = "refs/pull/{number}/head",
    timeout: float = 300,
    allowed_hosts: Sequence[str] = (),
    internal_hosts: Sequence[str] = (),
    resolve: Resolver | None = None,
    unless_holding: Sequence[str] = (),
) -> FetchResult:
    """Create the bare mirror if missing and fetch branches, tags and the PR head.

    With ``unless_holding`` (commit SHAs, full or abbreviated), nothing is fetched when the mirror
    already holds each of them, checked again once the mirror's lock is held: a mirror is this
    host's cache, and of the processes that find it lacking at once, one fetches and the others
    find it filled. A full SHA the branches, tags and PR head do not reach (a head force-pushed
    away) is then fetched by itself, kept under refs/recheck/commits/.

    Raises RepositoryError (with git's message) when the source is unsafe,
    unreachable or the fetch fails. The host is resolved again right before
    each fetch and refused when any address is internal; an https fetch then
    connects to exactly the addresses that were checked.
    """
    url = validate_clone_url(
        url, allow_local=allow_local, allowed_hosts=allowed_hosts, internal_hosts=internal_hosts, resolve=resolve
    )
    target = _Target(url, allowed_hosts=tuple(allowed_hosts), internal_hosts=tuple(internal_hosts), resolve=resolve)
    if pr_number is not None and (isinstance(pr_number, bool) or not isinstance(pr_number, int) or pr_number < 1):
        raise RepositoryError(f"{pr_number!r} is not a pull request number; give a positive integer")
    mirror_dir = Path(mirror_dir).absolute()
    with _locked(mirror_dir):
        if unless_holding and mirror_holds(mirror_dir, unless_holding):
            return FetchResult(mirror_dir=mirror_dir, created=False, fetched=False)
        result = _create_and_fetch(target, mirror_dir, allow_local=allow_local, pr_number=pr_number, timeout=timeout,
                                   pr_ref_template=pr_ref_template)
        _fetch_missing_commits(target, mirror_dir, unless_holding, allow_local=allow_local, timeout=timeout)
        return result


def mirror_holds(mirror_dir: Path, revisions: Sequence[str]) -> bool:
    """Whether the mirror at ``mirror_dir`` is there, readable, and has a commit for each of
    ``revisions`` (one ``git cat-file`` for them all). A missing or broken mirror holds nothing."""
    if not revisions or not (Path(mirror_dir) / "HEAD").is_file():
        return False
    names = "".join(f"{revision}^{{commit}}\n" for revision in revisions)
    checked = run_git(["cat-file", "--batch-check=%(objecttype)"], git_dir=Path(mirror_dir), input=names.encode())
    return checked.returncode == 0 and checked.stdout.split() == [b"commit"] * len(revisions)


def _fetch_missing_commits(
    target: _Target, mirror_dir: Path, wanted: Sequence[str], *, allow_local: bool, timeout: float
) -> None:
    """Fetch by SHA the full SHAs in ``wanted`` that the refs did not bring. Best effort: a forge
    that refuses to hand out a commit by SHA leaves it missing, which the reader then reports."""
    missing = [sha for sha in wanted if _FULL_SHA.fullmatch(sha) and not mirror_holds(mirror_dir, [sha])]
    if missing:
        refspecs = [f"+{sha}:{_KEPT_COMMITS}{sha}" for sha in missing]
        if _fetch(target, mirror_dir, refspecs, allow_local=allow_local, timeout=timeout) is not None:
            for refspec in refspecs:  # one unknown SHA fails the whole fetch: the rest one by one
                _fetch(target, mirror_dir, [refspec], allow_local=allow_local, timeout=timeout)


@dataclass(frozen=True)
class _Target:
    url: str
    allowed_hosts: tuple[str, ...]
    internal_hosts: tuple[str, ...]
    resolve: Resolver | None

    def pinned_config(self) -> list[str]:
        """Check the host now and return the git config that makes curl use the addresses just
        checked, so a name that resolves differently a moment later (DNS rebinding) changes
        nothing. ssh has no such option: there the check right before the fetch is what holds."""
        checked = clone_url_addresses(
            self.url, allowed_hosts=self.allowed_hosts, internal_hosts=self.internal_hosts, resolve=self.resolve
        )
        if checked is None:
            return []
        remote, addresses = checked
        if remote.scheme != "https":
            return []
        listed = ",".join(f"[{address}]" if ":" in address else address for address in addresses)
        return [f"http.curloptResolve={remote.host}:{remote.port}:{listed}"]


@contextmanager
def _locked(mirror_dir: Path) -> Iterator[None]:
    """Serialise fetches into one mirror (two workers may fetch the same PR at once)."""
    try:
        mirror_dir.parent.mkdir(parents=True, exist_ok=True)
        handle = open(f"{mirror_dir}.lock", "a")
    except OSError as exc:
        raise RepositoryError(f"cannot create a lock next to {mirror_dir}: {exc.strerror}; check permissions") from exc
    with handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _create_and_fetch(
    target: _Target, mirror_dir: Path, *, allow_local: bool, pr_number: int | None, timeout: float,
    pr_ref_template: str = "refs/pull/{number}/head",
) -> FetchResult:
    created = _ensure_bare_repository(mirror_dir)
    # GitHub publishes a pull request's head as refs/pull/N/head, GitLab a merge request's as
    # refs/merge-requests/N/head (also when it comes from a fork).
    pr_ref = pr_ref_template.format(number=pr_number) if pr_number is not None else None
    refspecs = list(_BASE_REFSPECS)
    if pr_ref:
        refspecs.append(f"+{pr_ref}:{pr_ref}")
    url = target.url
    failure = _fetch(target, mirror_dir, refspecs, allow_local=allow_local, timeout=timeout)
    if failure is not None and not created and not _intact(mirror_dir):
        # A mirror is this host's cache of the forge's repository: one that is broken (a disk
        # that filled up, objects removed under it) is made again rather than failing the work.
        _remove(mirror_dir)
        created = _ensure_bare_repository(mirror_dir)
        failure = _fetch(target, mirror_dir, refspecs, allow_local=allow_local, timeout=timeout)
    pr_ref_missing = False
    if failure is not None and pr_ref:
        # Not every forge publishes refs/pull/N/head; the rest is still worth having.
        failure = _fetch(target, mirror_dir, list(_BASE_REFSPECS), allow_local=allow_local, timeout=timeout)
        pr_ref_missing = failure is None
    if failure is not None:
        raise RepositoryError(
            f"could not fetch {_redact(url)}: {failure.rstrip('.')}. Check that the URL is right, the "
            "repository exists and this server has access to it, then retry"
        )
    pr_head = None if pr_ref is None or pr_ref_missing else _rev_parse(mirror_dir, pr_ref)
    return FetchResult(
        mirror_dir=mirror_dir,
        created=created,
        pr_ref=None if pr_ref_missing else pr_ref,
        pr_head=pr_head,
        pr_ref_missing=pr_ref_missing,
    )


def _ensure_bare_repository(mirror_dir: Path) -> bool:
    """Create an empty bare repository at ``mirror_dir`` unless one is there; True if created."""
    if (mirror_dir / "HEAD").is_file() and (mirror_dir / "objects").is_dir():
        return False
    if mirror_dir.is_dir() and _remains_of_a_mirror(mirror_dir):
        # What a removal cut short leaves (the cache cleared while it was written to): made again.
        _remove(mirror_dir)
    if mirror_dir.exists() and (not mirror_dir.is_dir() or any(mirror_dir.iterdir())):
        raise RepositoryError(
            f"{mirror_dir} exists but is not a git mirror; remove it or choose another mirror directory"
        )
    try:
        mirror_dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise RepositoryError(f"cannot create mirror directory {mirror_dir}: {exc.strerror}") from exc
    # --template= keeps sample hooks and other template files out of the mirror.
    completed = run_git(["init", "--bare", "--quiet", "--template=", "--", str(mirror_dir)])
    if completed.returncode != 0:
        raise RepositoryError(
            f"cannot create a git mirror in {mirror_dir}: {stderr_text(completed)}; "
            "check permissions and free disk space"
        )
    return True


def _remains_of_a_mirror(mirror_dir: Path) -> bool:
    """A directory holding nothing but what a bare repository holds: a mirror half removed. Anything
    else in it, and it is someone's directory, left alone."""
    try:
        entries = {entry.name for entry in mirror_dir.iterdir()}
    except FileNotFoundError:
        return False  # removed meanwhile
    return bool(entries) and entries <= _BARE_REPOSITORY_ENTRIES


def _intact(mirror_dir: Path) -> bool:
    """Whether git reads the mirror and has the object of every ref in it (one listing, one
    batch check): a fetch that failed into an intact mirror failed at the remote's end."""
    refs = run_git(["for-each-ref", "--format=%(objectname)"], git_dir=mirror_dir)
    if refs.returncode != 0 or refs.stderr.strip():
        return False  # git skips a broken ref with a warning and exits 0
    if not refs.stdout.strip():
        return True
    checked = run_git(["cat-file", "--batch-check=%(objecttype)"], git_dir=mirror_dir, input=refs.stdout)
    return checked.returncode == 0 and b"missing" not in checked.stdout


def _remove(mirror_dir: Path) -> None:
    # Moved aside first, so a half-finished removal never leaves a directory that looks like a mirror.
    doomed = mirror_dir.with_name(mirror_dir.name + ".broken")
    try:
        if doomed.exists():
            shutil.rmtree(doomed)
        mirror_dir.rename(doomed)
        shutil.rmtree(doomed)
    except FileNotFoundError:
        pass  # someone else removed it meanwhile (the host's cache cleared): gone is what was wanted
    except OSError as exc:
        raise RepositoryError(f"cannot remove the broken mirror {mirror_dir}: {exc.strerror}; check permissions") from exc


def _fetch(target: _Target, mirror_dir: Path, refspecs: list[str], *, allow_local: bool, timeout: float) -> str | None:
    """Run one fetch; None on success, else git's trimmed error output."""
    url = target.url
    completed = run_git(
        ["fetch", "--quiet", "--no-recurse-submodules", "--no-write-fetch-head",
         "--end-of-options", url, *refspecs],
        git_dir=mirror_dir,
        allow_local=allow_local,
        timeout=timeout,
        config=target.pinned_config(),
    )
    if completed.returncode == 0:
        return None
    return _scrub(stderr_text(completed), url)


def _rev_parse(mirror_dir: Path, ref: str) -> str | None:
    completed = run_git(
        ["rev-parse", "--verify", "--quiet", "--end-of-options", f"{ref}^{{commit}}"],
        git_dir=mirror_dir,
    )
    sha = completed.stdout.decode("ascii", "replace").strip()
    return sha if completed.returncode == 0 and sha else None


def _redact(url: str) -> str:
    """Hide credentials embedded in https URLs from messages."""
    return _USERINFO.sub("***@", url)


def _scrub(text: str, url: str) -> str:
    match = _USERINFO.search(url)
    if match and len(match.group(0)) > 1:
        text = text.replace(match.group(0), "***@")
    return text
