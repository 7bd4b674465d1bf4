"""Stacked pull requests, read from their branches: a pull request whose base branch is the head
branch of another open pull request of the same repository sits on it. This module walks the
stack (one query a level); what the stack does to the gate is the stored state's
(`findings.state`), and what the pages show of it `findings.selectors.stack`.

The walk is bounded: it stops at a pull request it has already seen (a cycle, A based on B based
on A) and after STACK_DEPTH levels, and says which of the two ended it. A base branch that no open
pull request has as its head (the default branch, a deleted branch, one not known) ends the stack."""
from dataclasses import dataclass, field

from django.db.models import Exists, OuterRef

from reviews.models import PullRequest

# How many pull requests below (or levels above) a stack is read: deeper stacks are read this far
# and say so. Twenty reviews stacked one on another is already far past what teams do.
STACK_DEPTH = 20
CYCLE, DEPTH = "cycle", "depth"


@dataclass
class Below:
    """The pull requests below one, nearest first, as (pk, number); `cut` says why the walk
    stopped before the bottom: CYCLE, DEPTH, or "" when it reached the bottom."""

    pull_requests: list[tuple[int, int]] = field(default_factory=list)
    cut: str = ""


def stack_below(pull_request_id: int, *, repository_id: int | None = None, base_branch: str | None = None) -> Below:
    """The stack below a pull request (its repository and base branch, when the caller has read
    them already: no query then for a PR based on no branch)."""
    below = Below()
    if base_branch is None:
        row = (PullRequest.objects.filter(pk=pull_request_id)
               .values_list("repository_id", "base_branch").first())
        if row is None:
            return below
        repository_id, base_branch = row
    base = base_branch
    seen = {pull_request_id}
    while base:
        if len(below.pull_requests) >= STACK_DEPTH:
            below.cut = DEPTH
            break
        # Two open PRs with one head branch (possible across forks' names): the oldest is the one.
        lower = (PullRequest.objects.filter(repository_id=repository_id, state=PullRequest.State.OPEN, head_branch=base)
                 .order_by("number").values_list("pk", "number", "base_branch").first())
        if lower is None:
            break
        if lower[0] in seen:
            below.cut = CYCLE
            break
        seen.add(lower[0])
        below.pull_requests.append((lower[0], lower[1]))
        base = lower[2]
    return below


def stack_above(pull_request_ids, *, open_only: bool = True) -> list[int]:
    """The pull requests stacked on any of `pull_request_ids`, level by level (nearest first,
    each level by number), not counting those given: open ones, or with `open_only=False` any
    (a closed PR above is still read again when the one below it changes, should it reopen)."""
    seen = set(pull_request_ids)
    level, found = set(seen), []
    for _ in range(STACK_DEPTH):
        if not level:
            break
        lower = PullRequest.objects.filter(pk__in=level, repository_id=OuterRef("repository_id"),
                                           head_branch=OuterRef("base_branch")).exclude(head_branch="")
        rows = PullRequest.objects.filter(Exists(lower)).exclude(pk__in=seen)
        if open_only:
            rows = rows.filter(state=PullRequest.State.OPEN)
        level = set()
        for pk in rows.order_by("number").values_list("pk", flat=True):
            level.add(pk)
            found.append(pk)
        seen |= level
    return found


def stack_connected(pull_request_ids) -> list[int]:
    """Every pull request in a stack with any of `pull_request_ids`, above or below, any state,
    not counting those given: one query a level, up to STACK_DEPTH levels. A change of one PR of a
    stack moves them all: those above read its gate, and the pages of those below list the ones
    above with their gates."""
    seen = set(pull_request_ids)
    level, found = set(seen), []
    for _ in range(STACK_DEPTH):
        if not level:
            break
        above = PullRequest.objects.filter(pk__in=level, repository_id=OuterRef("repository_id"),
                                           head_branch=OuterRef("base_branch")).exclude(head_branch="")
        below = PullRequest.objects.filter(pk__in=level, repository_id=OuterRef("repository_id"),
                                           base_branch=OuterRef("head_branch")).exclude(base_branch="")
        level = set(PullRequest.objects.filter(Exists(above) | Exists(below)).exclude(pk__in=seen)
                    .values_list("pk", flat=True))
        found += sorted(level)
        seen |= level
    return found


def stack_above_branch(*, repository_id: int, head_branch: str) -> list[int]:
    """The pull requests stacked on a branch (those of a pull request just deleted, or whose head
    branch changed): every level, as `stack_above`."""
    if not head_branch:
        return []
    first = list(PullRequest.objects.filter(repository_id=repository_id, base_branch=head_branch)
                 .values_list("pk", flat=True))
    return first + stack_above(first, open_only=False) if first else []
