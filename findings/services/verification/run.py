"""Verifying a pull request's findings at a commit (fetching, loading, checking, storing), and
carrying out a verification run over one commit or every pin, with its progress."""
import gc
import logging
import time
from collections.abc import Callable
from contextlib import contextmanager

from django.utils import timezone
from django.utils.timesince import timesince

from access.audit import writes
from core.errors import RecheckError
from engine.verification import EvidenceChecks, files_prefetched
from core import vocabulary
from findings.models import Finding, Verdict, Verification, VerificationRun
from findings.services.runs import WORKER, verification_run_advance, verification_run_finish, verification_run_start
from findings.services.submodules import SubmoduleMirrors
from findings.services.verification.checking import _Context, _prepare
from findings.services.verification.rows import _error_outcome, _load, _outcome, _read_paths
from findings.services.verification.store import _store, _store_snippet_texts
from findings.signals import check_reports_awaited, verification_stored
from engine.git import mirror_holds
from reviews.mirrors import (
    FETCH_FAILED_PUBLIC,
    commits_resolve,
    repository_fetch,
    repository_mirror_dir,
    repository_reader,
)
from reviews.models import Commit, PinnedCommit, PullRequest
from reviews.services import pull_request_pin_commit

logger = logging.getLogger(__name__)

Progress = Callable[[int, int], None]


@writes("verification.run", system=WORKER)
def pull_request_verify(
    *, pull_request: PullRequest, commit: Commit, fetch: bool = True, progress: Progress | None = None,
    submodules: SubmoduleMirrors | None = None, fetch_problem: str = "", successors: bool = True,
    refetch: bool | None = None,
) -> list[Verification]:
    """Verify every finding of `pull_request` at `commit` and store the results.

    A repository that cannot be fetched or read, or a commit it does not have, gives every finding
    an `error` verdict that says why: an error is never reported as fixed. Submodule repositories
    are fetched with the repository (`submodules` shares their fetches between the commits of one
    run). A caller that fetched itself (`fetch=False`) passes what went wrong in `fetch_problem`,
    so a commit missing from a mirror that could not be updated is blamed on the fetch, not the SHA.
    Gone evidence is stored with what replaced it; `successors=False` leaves that out, which only
    the benchmark does, to measure what it costs. With `refetch` (by default, as `fetch`), a mirror
    lost under the verification is fetched again and the commit verified again."""
    if fetch:
        fetch_problem = _fetch(pull_request, [commit])
    submodules = submodules or SubmoduleMirrors(fetch=fetch)
    with _collector_paused():
        outcomes = _outcomes(pull_request, commit, fetch_problem, progress, submodules, successors)
        if (fetch if refetch is None else refetch) and _lost_under_us(pull_request, commit, outcomes):
            # The mirror is this host's cache, and it went while the commit was read (cleared, a disk
            # replaced): errors would only say so. Fetched again, verified again, once.
            logger.warning("The mirror of %s went while %s was verified; fetching it again",
                           pull_request.repository.slug, commit.sha[:12])
            fetch_problem = _fetch(pull_request, [commit])
            outcomes = _outcomes(pull_request, commit, fetch_problem, None, submodules, successors)
        return _store(pull_request, commit, outcomes)


def _lost_under_us(pull_request: PullRequest, commit: Commit, outcomes: list) -> bool:
    """Some verdict is an error, and the mirror does not hold the commit: it went while the commit
    was read (or while it was fetched), or the fetch failed; one more fetch says which."""
    return any(outcome.verdict == Verdict.ERROR for outcome in outcomes) and not mirror_holds(
        repository_mirror_dir(pull_request.repository), [commit.sha])


def _outcomes(
    pull_request: PullRequest, commit: Commit, fetch_problem: str, progress: Progress | None,
    submodules: SubmoduleMirrors, successors: bool = True,
) -> list:
    loaded = None
    try:
        with repository_reader(pull_request.repository) as reader:
            commits_resolve(repository=pull_request.repository, reader=reader)
            commit.refresh_from_db()
            target = reader.resolve(commit.sha)
            checks = EvidenceChecks(reader, target, successors=successors)
            context = _Context(reader, target, pull_request, submodules, checks, fetch_problem=fetch_problem)
            # git reads the files the evidence points at in the background while the findings load
            # and each item is made ready to check (the load waits on the database, the rest is
            # Python, the reading is git's decompression). Loaded after resolving, so evidence
            # carries the full SHAs of its commits.
            with files_prefetched(reader, target, *_read_paths(pull_request)):
                findings, evidence = loaded = _load(pull_request)
                prepared = {
                    finding.pk: [(item, _prepare(context, item)) for item in evidence.get(finding.pk, [])]
                    for finding in findings
                }
            numbered = []
            for index, finding in enumerate(findings, start=1):
                numbered.append((finding, [(item, checks.add(ready)) for item, ready in prepared[finding.pk]]))
                if progress and index < len(findings):
                    progress(index, len(findings))
            # Snippets that left their file are searched for in the other changed files together.
            results = checks.results()
            outcomes = [_outcome(finding, [(item, results[number]) for item, number in items])
                        for finding, items in numbered]
            if progress and findings:
                progress(len(findings), len(findings))
            _store_snippet_texts(context.texts_read)
            _awaited_said(pull_request, target, context)
    except RecheckError as error:
        detail = f"Repository unreachable: {fetch_problem}" if fetch_problem else str(error)
        findings, evidence = loaded or _load(pull_request)
        outcomes = [_error_outcome(finding, evidence.get(finding.pk, []), detail) for finding in findings]
        if progress:
            progress(len(findings), len(findings))
    return outcomes


def _awaited_said(pull_request: PullRequest, target: str, context: _Context) -> None:
    """Say which checks the verification found no report of at `target` (the forge may read them
    back from its API); only when some check item asked for its reports."""
    readings = context.__dict__.get("check_readings")
    if readings is not None and readings.awaited:
        check_reports_awaited.send(sender=PullRequest, repository=pull_request.repository, sha=target,
                                   checks=sorted(readings.awaited))


@contextmanager
def _collector_paused():
    """Checking allocates a great many small strings (file lines) that all live until the run
    ends; the cyclic garbage collector would walk them over and over for nothing (about a tenth
    of the run). Nothing here makes reference cycles that need it."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def _fetch(pull_request: PullRequest, commits: list) -> str:
    """Fetch this host's mirror unless it already holds every commit the run reads (their full SHAs
    known); a failure is kept as a message, since an older mirror may still hold the commit we need."""
    held = [commit.sha for commit in commits] if all(commit.resolved for commit in commits) else []
    try:
        repository_fetch(repository=pull_request.repository, pr_number=pull_request.number, unless_holding=held)
    except RecheckError as error:
        logger.warning("Fetching %s failed: %s", pull_request.repository.slug, error)
        return FETCH_FAILED_PUBLIC
    return ""


PROGRESS_INTERVAL_SECONDS = 0.25


@writes("verification.run", system=WORKER)
def verification_run_execute(
    *, run: VerificationRun, progress: Progress | None = None, fetch: bool = True, repository_fetched: bool = False,
) -> dict:
    """Carry out a claimed run (see `verification_run_claim`): at its commit (pinned as `rebased`
    unless already pinned), or at every pinned commit. Progress goes to the run row and to
    `progress`.

    With `fetch`, the PR's repository is fetched (unless the caller just did, `repository_fetched`)
    and so is every submodule repository its evidence names, once. Without, the mirrors are read
    as they are, and the result says when each submodule's copy of its branch was fetched: a
    branch head that moved since is not taken for the one upstream without a word."""
    pull_request = run.pull_request
    if run.commit is not None:
        pull_request_pin_commit(pull_request=pull_request, commit=run.commit, role=PinnedCommit.Role.REBASED)
        commits = [run.commit]
    else:
        commits = [pin.commit for pin in pull_request.pins.select_related("commit").in_order()]
    per_commit = Finding.objects.for_pull_request(pull_request).count()
    total = per_commit * len(commits)
    verification_run_start(run, total=total)
    fetch_problem = _fetch(pull_request, commits) if fetch and not repository_fetched else ""
    submodules = SubmoduleMirrors(fetch=fetch)
    verdicts: dict[str, dict[str, int]] = {}
    done_before = 0
    reported = 0
    written_at = time.monotonic()
    # At most about a hundred progress writes per run, whatever its size, and a few a second: each
    # is a commit of its own, and a fast run would spend more on telling its progress than on
    # making it.
    step = max(1, total // 100)

    def advance(done: int, _total: int) -> None:
        nonlocal reported, written_at
        overall = done_before + done
        now = time.monotonic()
        if (overall - reported >= step and now - written_at >= PROGRESS_INTERVAL_SECONDS) or done == per_commit:
            verification_run_advance(run, by=overall - reported)
            reported, written_at = overall, now
            if progress:
                progress(overall, total)

    changed = errors = 0
    for commit in commits:
        verifications = pull_request_verify(
            pull_request=pull_request, commit=commit, fetch=False, progress=advance, submodules=submodules,
            fetch_problem=fetch_problem, refetch=fetch,
        )
        done_before += per_commit
        changed = max(changed, per_commit - len(verifications))
        counts: dict[str, int] = {}
        for verification in verifications:
            counts[verification.verdict] = counts.get(verification.verdict, 0) + 1
        verdicts[commit.sha] = counts
        errors += _unexplained_errors(verifications)

    message = _summary(verdicts, fetch_problem)
    branches = submodules.branches_read()
    unfetched = [branch for branch in branches if not branch["fetched"]]
    if unfetched and not fetch:
        message += "; " + _as_of_sentence(unfetched)
    if changed:
        message += (
            f"; the evidence of {changed} finding(s) changed during the run, so their results were not kept: "
            "evidence changed since the last check; re-verify"
        )
    verification_run_finish(run, message=message, failed=bool(errors) and errors == total)
    _after_verification(pull_request)
    return {
        "pull_request": pull_request.reference, "verdicts": verdicts, "message": message,
        "submodules": [
            {**branch, "fetched_at": branch["fetched_at"].isoformat() if branch["fetched_at"] else None}
            for branch in branches
        ],
    }


def _unexplained_errors(verifications: list[Verification]) -> int:
    """How many of the verdicts at `commit` are errors that no check item explains: a finding
    waiting for CI (or naming a test not run, or flaky) is not a verification that failed, and a
    run of nothing else is done, not failed (each verification's `verdict_reason`, stored with it
    by the rule the state reads)."""
    return sum(1 for verification in verifications
               if verification.verdict == vocabulary.ERROR and not verification.verdict_reason)


def _as_of_sentence(branches: list[dict]) -> str:
    """How old the copies of the submodules' branches read without fetching are."""
    now = timezone.now()
    described = []
    for branch in branches:
        fetched_at = branch["fetched_at"]
        if fetched_at:
            age = timesince(fetched_at, now).replace("\N{NO-BREAK SPACE}", " ")
            when = f"as fetched {fetched_at:%Y-%m-%d %H:%M} UTC, {age} before this run"
        else:
            when = "never fetched"
        described.append(f"{branch['repository']} {branch['branch']} {when}")
    return "submodule branches read without fetching: " + ", ".join(described)


def _summary(verdicts: dict[str, dict[str, int]], fetch_problem: str) -> str:
    parts = []
    # The cause first: a run whose fetch failed reads as that, not as a row of errors.
    if fetch_problem:
        parts.append(f"fetch failed: {fetch_problem}")
    for sha, counts in verdicts.items():
        described = ", ".join(f"{count} {verdict.replace('_', ' ')}" for verdict, count in sorted(counts.items()))
        parts.append(f"{sha[:8]}: {described or 'no findings'}")
    return "; ".join(parts)


def _after_verification(pull_request: PullRequest) -> None:
    """Say that new verdicts are stored (presentation re-renders the stored companion pages once
    they are committed)."""
    verification_stored.send(sender=PullRequest, pull_request=pull_request)
