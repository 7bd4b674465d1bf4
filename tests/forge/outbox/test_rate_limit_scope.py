"""A rate limit holds back the calls it covers and no others, as the forge says
(`Forge.rate_limit_scope`): a GitHub App's limit is its installation's, a token's covers every
repository it reaches, and another forge's calls never wait for it."""
from datetime import timedelta

import pytest
from django.utils import timezone

from forge.models import ForgeCall
from forge.outbox.sending import forge_call_send
from reviews.models import Repository

pytestmark = pytest.mark.django_db


def waiting(repository: Repository, forge: str = "github") -> ForgeCall:
    return ForgeCall.objects.create(repository=repository, forge=forge, sha="b" * 40, kind="commit_status",
                                    state="pending", digest="d" * 64, body={"context": "recheck", "state": "pending"})


def limited_by_github(pull_request, repo, fake_github):
    """A status call on the pull request's repository that GitHub answers with a rate limit, and
    the other calls waiting when it does: another repository of the same installation, one of
    another installation, and a GitLab project's."""
    repository = pull_request.repository
    Repository.objects.filter(pk=repository.pk).update(github_installation_id=77)
    same = Repository.objects.create(slug="acme/other", clone_url="https://github.com/acme/other.git",
                                     github_installation_id=77)
    elsewhere = Repository.objects.create(slug="umbrella/tools", clone_url="https://github.com/umbrella/tools.git",
                                          github_installation_id=78)
    gitlab = Repository.objects.create(slug="acme/tools/loader", clone_url="https://gitlab.com/acme/tools/loader.git",
                                       forge="gitlab")
    calls = {"same installation": waiting(same), "another installation": waiting(elsewhere),
             "GitLab": waiting(gitlab, forge="gitlab")}
    limited = ForgeCall.objects.create(
        repository=repository, pull_request=pull_request, forge="github", sha=repo.reviewed, kind="commit_status",
        state="pending", digest="e" * 64, body={"context": "recheck", "state": "pending", "description": "Verifying"},
    )
    fake_github.fail("POST", r"/statuses/", 403, "API rate limit exceeded for installation ID 77.")
    before = timezone.now()
    forge_call_send(call_id=limited.pk)
    limited.refresh_from_db()
    assert (limited.status, limited.response_status) == ("pending", 403)
    return {what: ForgeCall.objects.get(pk=call.pk).due_at >= before + timedelta(seconds=60)
            for what, call in calls.items()}


def test_a_github_app_s_rate_limit_holds_back_its_installation_s_calls_only(pull_request, repo, fake_github):
    held = limited_by_github(pull_request, repo, fake_github)

    assert held == {"same installation": True, "another installation": False, "GitLab": False}


def test_a_github_token_s_rate_limit_holds_back_every_github_call_and_no_gitlab_call(pull_request, repo,
                                                                                      token_only):
    held = limited_by_github(pull_request, repo, token_only)

    assert held == {"same installation": True, "another installation": True, "GitLab": False}
