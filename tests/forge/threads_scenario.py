"""Steps the review-thread tests share: a reviewer's comment on GitHub, a reading of the inbox,
a Recheck user signed in with GitHub."""
from allauth.socialaccount.models import SocialAccount

from forge.threads.models import ReviewThread
from forge.threads.sync import review_threads_sync
from tests.forge.scenario import deliver


def comment_on(fake_github, pull_request, sha, **fields) -> int:
    return fake_github.review_comment(pull_request.repository.slug, pull_request.number, commit=sha, **fields)


def sync(pull_request, actor=None):
    outcome = review_threads_sync(pull_request=pull_request, actor=actor)
    deliver()
    return outcome


def inbox(pull_request) -> dict[int, ReviewThread]:
    return {thread.root_comment_id: thread for thread in ReviewThread.objects.of(pull_request).with_comments()}


def signed_in_with_github(user, github_id: int, login: str):
    SocialAccount.objects.create(user=user, provider="github", uid=str(github_id), extra_data={"login": login})
    return user
