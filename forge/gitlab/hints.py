"""What a person should do about a call GitLab refused, in the words of GitLab's settings pages."""
from forge.outbox.failures import Failure, passing_failure_hint
from forge.gitlab.client import gitlab_base_url, is_scope_failure
from forge.outbox.models import ForgeCall

WHAT = {
    ForgeCall.Kind.COMMIT_STATUS: "set the commit status",
    ForgeCall.Kind.COMMENT: "write the merge request note",
    ForgeCall.Kind.THREAD_REPLY: "reply in the merge request's review threads",
    ForgeCall.Kind.THREAD_RESOLVE: "resolve the merge request's review threads",
}


def gitlab_hint(call: ForgeCall, failure: Failure, *, gave_up: bool) -> str:
    slug = call.repository.slug
    what = WHAT.get(call.kind, "send it")
    passing = passing_failure_hint(call, failure, gave_up=gave_up, forge="GitLab")
    if passing is not None:
        return passing
    if failure.status is None:
        return "Set RECHECK_GITLAB_TOKEN to a token with the api scope, then resend it."
    if failure.status == 401:
        return "GitLab refused RECHECK_GITLAB_TOKEN: it expired or was revoked. Make a new one with the api scope."
    if is_scope_failure(failure):
        return (f"The token (RECHECK_GITLAB_TOKEN) lacks the api scope needed to {what}: make a token with the "
                "api scope (read_api is not enough).")
    if failure.status == 403:
        return (f"The token (RECHECK_GITLAB_TOKEN) may not {what} on {slug}: give its user (or the project or group "
                "access token) the Developer role on the project.")
    if failure.status == 404 and call.kind in ForgeCall.THREAD_KINDS:
        return ("The discussion is gone on GitLab (its first note, or Recheck's reply, was deleted): sync the "
                "review threads; a verdict reply is made again by the next verification.")
    if failure.status == 404:
        return (f"{gitlab_base_url(call.repository)} shows no project {slug} to the token: the project was moved or "
                "renamed (a webhook from it tells Recheck its id, which follows it), or the token cannot see it; "
                "check the repository's slug and the token's project.")
    if failure.status in (400, 422):
        return ("GitLab refused what was sent: the commit must be in the project on GitLab (push it), and the "
                "message above says which field.")
    return "See GitLab's message above."
