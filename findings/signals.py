"""Every save or delete of a row that a pull request's pages or merge gate read moves the PR's
generation forward (`reviews.services.pull_request_changed`), so answers cached by generation
cannot outlive a change, whichever service, admin form or command made it. Writes that bypass
signals (raw SQL, `QuerySet.update`) call the service themselves; `tests/findings/test_gate_cache.py`
checks that every table the gate reads is watched here.

Evidence results have no receivers on purpose: only the verification store writes them (in bulk,
and it moves the generation itself), and a receiver would make Django delete ten thousand results
one by one, with a query each, instead of in one statement."""
from django.db.models import F
from django.db.models.signals import post_delete, post_save
from django.dispatch import receiver

from findings.models import Evidence, Finding, Verification, VerificationRun
from reviews.models import Commit, PinnedCommit, PullRequest, Repository
from reviews.services import pull_request_changed


def _finding_pull_request_id(finding_id: int) -> int | None:
    return Finding.objects.filter(pk=finding_id).values_list("pull_request_id", flat=True).first()


@receiver([post_save, post_delete], sender=Finding)
@receiver([post_save, post_delete], sender=PinnedCommit)
@receiver([post_save, post_delete], sender=VerificationRun)
def _pull_request_row_changed(sender, instance, **kwargs):
    pull_request_changed(pull_request_id=instance.pull_request_id)


@receiver([post_save, post_delete], sender=Evidence)
@receiver([post_save, post_delete], sender=Verification)
def _finding_row_changed(sender, instance, **kwargs):
    # A cached finding (the usual case when it was just created) saves the lookup.
    finding = instance.finding if type(instance).finding.is_cached(instance) else None
    pull_request_id = finding.pull_request_id if finding else _finding_pull_request_id(instance.finding_id)
    if pull_request_id is not None:
        pull_request_changed(pull_request_id=pull_request_id)


@receiver(post_save, sender=PullRequest)
def _pull_request_saved(sender, instance, created, **kwargs):
    if not created:
        pull_request_changed(pull_request_id=instance.pk)


@receiver([post_save, post_delete], sender=Commit)
@receiver([post_save, post_delete], sender=Repository)
def _repository_row_changed(sender, instance, **kwargs):
    # A commit's SHA (resolved from an abbreviation) and a repository's links show on every page
    # of its pull requests. Rare writes: fetches and edits.
    repository_id = instance.pk if sender is Repository else instance.repository_id
    PullRequest.objects.filter(repository_id=repository_id).update(generation=F("generation") + 1)
