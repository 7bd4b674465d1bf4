"""Every save or delete of a row that a pull request's pages or merge gate read moves the PR's
generation forward (`reviews.services.pull_request_changed`), so answers cached by generation
cannot outlive a change, whichever service, admin form or command made it. Writes that bypass
signals (raw SQL, `QuerySet.update`) call the service themselves; `tests/findings/test_gate_cache.py`
checks that every table the gate reads is watched here.

Evidence results have no receivers on purpose: only the verification store writes them (in bulk,
and it moves the generation itself), and a receiver would make Django delete ten thousand results
one by one, with a query each, instead of in one statement."""
from django.conf import settings
from django.db.models import F
from django.db.models.signals import m2m_changed, post_delete, post_save, pre_delete
from django.dispatch import receiver

from findings.models import (
    CheckReport, Evidence, Finding, FindingLink, FollowUp, GateOverride, RepositoryPolicy, Tag, Verification,
    VerificationRun,
)
from reviews.models import Commit, PinnedCommit, PullRequest, Repository
from reviews.services import pull_request_changed, pull_requests_changed
from reviews.stack import stack_above_branch


def _finding_pull_request_id(finding_id: int) -> int | None:
    return Finding.objects.filter(pk=finding_id).values_list("pull_request_id", flat=True).first()


@receiver([post_save, post_delete], sender=Finding)
def _finding_changed(sender, instance, **kwargs):
    pull_request_changed(pull_request_id=instance.pull_request_id)
    moved_from = getattr(instance, "_loaded_pull_request_id", None)
    if moved_from is not None and moved_from != instance.pull_request_id:
        # Moved to another PR (the admin allows it): the PR it left loses a finding too.
        pull_request_changed(pull_request_id=moved_from)
    instance._loaded_pull_request_id = instance.pull_request_id


@receiver([post_save, post_delete], sender=PinnedCommit)
@receiver([post_save, post_delete], sender=VerificationRun)
# A follow-up shows on its repository's pages (kept by its PRs' generations), written by the
# sweeps on the default branch and by a maintainer's decision.
@receiver([post_save, post_delete], sender=FollowUp)
@receiver([post_save, post_delete], sender=GateOverride)
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


@receiver([post_save, post_delete], sender=FindingLink)
def _finding_link_changed(sender, instance, **kwargs):
    # A link shows on the pages of the findings at both ends (kept by their PRs' generations).
    _findings_changed([instance.source_id, instance.target_id])


@receiver(post_save, sender=PullRequest)
def _pull_request_saved(sender, instance, created, **kwargs):
    if not created:
        pull_request_changed(pull_request_id=instance.pk)  # and the PRs stacked on it
    elif instance.head_branch:
        # A new PR whose head branch is the base of others: they now sit on it.
        pull_requests_changed(pull_request_ids=stack_above_branch(repository_id=instance.repository_id,
                                                                  head_branch=instance.head_branch))


@receiver(post_delete, sender=PullRequest)
def _pull_request_deleted(sender, instance, **kwargs):
    # The PRs stacked on it no longer are.
    pull_requests_changed(pull_request_ids=stack_above_branch(repository_id=instance.repository_id,
                                                              head_branch=instance.head_branch))


@receiver([post_save, post_delete], sender=Commit)
@receiver([post_save, post_delete], sender=Repository)
def _repository_row_changed(sender, instance, **kwargs):
    # A commit's SHA (resolved from an abbreviation) and a repository's links show on every page
    # of its pull requests. Rare writes: fetches and edits.
    repository_id = instance.pk if sender is Repository else instance.repository_id
    PullRequest.objects.filter(repository_id=repository_id).update(generation=F("generation") + 1)


@receiver([post_save, post_delete], sender=CheckReport)
def _check_report_changed(sender, instance, **kwargs):
    # A PR's pages list the failures its head's reports give that no finding names: a report at a
    # commit pinned to a PR moves what they show (its test cases and results are written with it,
    # in its transaction).
    pull_requests = PinnedCommit.objects.filter(commit_id=instance.commit_id).values("pull_request_id")
    PullRequest.objects.filter(pk__in=pull_requests).update(generation=F("generation") + 1)


@receiver([post_save, post_delete], sender=RepositoryPolicy)
def _policy_changed(sender, instance, **kwargs):
    # The policy decides every gate of the repository's pull requests (and the buttons their pages
    # show): each is derived again, with the new policy or the old, never a mix.
    PullRequest.objects.filter(repository_id=instance.repository_id).update(generation=F("generation") + 1)


@receiver([post_save, post_delete], sender=FollowUp)
def _follow_up_changed(sender, instance, **kwargs):
    # Where the policy lets overdue cleanups block, a follow-up opened, decided or reopened changes
    # the gate of every open pull request of its repository. Elsewhere no gate reads follow-ups.
    if RepositoryPolicy.objects.filter(repository_id=instance.repository_id, overdue_cleanups_block=True).exists():
        PullRequest.objects.filter(repository_id=instance.repository_id, state=PullRequest.State.OPEN).update(
            generation=F("generation") + 1)


def _findings_changed(finding_ids) -> None:
    pull_requests = Finding.objects.filter(pk__in=finding_ids).values("pull_request_id")
    PullRequest.objects.filter(pk__in=pull_requests).update(generation=F("generation") + 1)


@receiver(m2m_changed, sender=Finding.tags.through)
def _finding_tags_changed(sender, instance, action, reverse, pk_set, **kwargs):
    # A finding's tags show on its pages and decide the lists' `tag` filter (whose counts are
    # cached by generation). From the finding's side `instance` is the finding; from the tag's,
    # `pk_set` names the findings (and a clear is seen before it happens, to know which).
    if action not in ("post_add", "post_remove", "pre_clear"):
        return
    if not reverse:
        pull_request_changed(pull_request_id=instance.pull_request_id)
    elif action == "pre_clear":
        _findings_changed(instance.findings.values("pk"))
    else:
        _findings_changed(pk_set)


@receiver(post_save, sender=Tag)
@receiver(pre_delete, sender=Tag)
def _tag_changed(sender, instance, **kwargs):
    # A renamed or deleted tag changes what its findings show and which findings `tag=` matches.
    if not kwargs.get("created"):
        _findings_changed(instance.findings.values("pk"))


@receiver(post_save, sender=settings.AUTH_USER_MODEL)
def _user_saved(sender, instance, created, update_fields=None, **kwargs):
    # Lists show who resolved a finding by username. A login saves only `last_login`, and a new
    # user has resolved nothing, so neither moves anything.
    if created or (update_fields is not None and "username" not in update_fields):
        return
    _findings_changed(Finding.objects.filter(resolved_by=instance).values("pk"))
