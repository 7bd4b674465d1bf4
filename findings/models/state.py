"""A pull request's review state, stored with the generation it was derived at."""
from django.db import models

from reviews.models import PullRequest


class PullRequestState(models.Model):
    """What `findings.state.derivation.derive` made of a pull request's facts at `generation`:
    written whole in one row, so a reader finds the state of a generation complete or not at all.
    Readers ask for the row of the PR's current generation (`findings.state.stored`); an older
    one is never read, and is deleted when a newer one is stored."""

    pull_request = models.ForeignKey(PullRequest, on_delete=models.CASCADE, related_name="states")
    generation = models.PositiveBigIntegerField()
    derived_at = models.DateTimeField(auto_now_add=True)
    # The latest verified pin, the counts and the gate at each pinned commit: what the gate reads.
    summary = models.JSONField()
    # Finding id -> its verdict, status and how it got there, evidence states, flags.
    findings = models.JSONField()
    # When the answer changes with time alone (a follow-up the policy counts falls due): from then
    # on the row is not read, and the generation moves (`findings.state.stored`).
    valid_until = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["pull_request", "generation"], name="pull_request_state_once_per_generation"),
        ]

    def __str__(self) -> str:
        return f"State of {self.pull_request_id} at generation {self.generation}"


class PullRequestGate(models.Model):
    """The gate's answer at one pinned commit of a stored state, as the JSON the API sends (its
    findings' URLs as paths on the site): written with the state, in its transaction, so the gate
    read afresh is one indexed read and no encoding. `sha` is empty on the row of the latest pinned
    head, the answer to a gate asked with no commit."""

    pull_request = models.ForeignKey(PullRequest, on_delete=models.CASCADE, related_name="+")
    generation = models.PositiveBigIntegerField()
    sha = models.CharField(max_length=40, blank=True)
    commit_id = models.BigIntegerField(help_text="The pinned commit answered about.")
    # The shortest abbreviation of the SHA that names no other commit recorded in the repository.
    unique_from = models.PositiveSmallIntegerField()
    verified = models.BooleanField()
    body = models.TextField(help_text="mergeable, verified, reason, open_blockers, possibly_regressed: JSON.")
    # The state's `valid_until`: the gate's read skips an answer past it.
    valid_until = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["pull_request", "generation", "sha"], name="pull_request_gate_once_per_generation_commit"
            ),
        ]

    def __str__(self) -> str:
        return f"Gate of {self.pull_request_id} at {self.sha or 'head'}, generation {self.generation}"


class FindingListState(models.Model):
    """What a list shows of one finding from a stored state (`findings.state.listed`): its verdict,
    how it got its status and whether it looks regressed, one row a finding, written with the state
    in its transaction and deleted with it. A page of a list reads the rows of its findings alone,
    not the whole state of each pull request it shows. `shape` is the state's shape when written."""

    state = models.ForeignKey(PullRequestState, on_delete=models.CASCADE, related_name="listed")
    finding_id = models.BigIntegerField()
    shape = models.PositiveSmallIntegerField()
    verdict = models.CharField(max_length=15, blank=True, help_text="Empty while it has none.")
    resolution = models.CharField(max_length=15)
    possibly_regressed = models.BooleanField()
    # Why an error verdict is one (waiting for CI, not run, flaky), as the finding's detail says.
    verdict_reason = models.CharField(max_length=15, blank=True, default="")

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["state", "finding_id"], name="finding_list_state_once_per_state"),
        ]

    def __str__(self) -> str:
        return f"Finding {self.finding_id} in {self.state_id}"
