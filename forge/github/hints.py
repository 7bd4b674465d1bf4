"""What a person should do about a call GitHub refused, in the words of GitHub's settings pages."""
from forge.github.client import credentials_kind
from forge.outbox.failures import Failure, passing_failure_hint
from forge.outbox.models import ForgeCall


PERMISSIONS = {
    ForgeCall.Kind.CHECK_RUN: "checks: write",
    ForgeCall.Kind.COMMIT_STATUS: "commit statuses: write",
    ForgeCall.Kind.COMMENT: "pull requests: write",
    ForgeCall.Kind.THREAD_REPLY: "pull requests: write",
    ForgeCall.Kind.THREAD_RESOLVE: "pull requests: write",
    ForgeCall.Kind.ISSUE: "issues: write",
}


def github_hint(call: ForgeCall, failure: Failure, *, gave_up: bool) -> str:
    """What a person should do about `failure`, in the words of GitHub's settings pages."""
    slug = call.repository.slug
    app = credentials_kind() == "app"
    who = "the App" if app else "the token (RECHECK_GITHUB_TOKEN)"
    passing = passing_failure_hint(call, failure, gave_up=gave_up, forge="GitHub")
    if passing is not None:
        return passing
    if failure.status == 401:
        return ("GitHub refused the credentials: check RECHECK_GITHUB_APP_ID and the private key (a new key "
                "replaces the old one)." if app else "GitHub refused RECHECK_GITHUB_TOKEN: it expired or was revoked.")
    if failure.status == 403:
        if app:
            return (f"The App lacks {PERMISSIONS[call.kind]} on {slug}: grant it in the App's permissions and "
                    "accept the new permissions on the installation.")
        return (f"The token (RECHECK_GITHUB_TOKEN) lacks {PERMISSIONS[call.kind]} on {slug}: give a fine-grained "
                "token that permission on this repository.")
    if failure.status == 404 and call.kind in ForgeCall.THREAD_KINDS:
        return ("The review thread is gone on GitHub (its first comment, or Recheck's reply, was deleted): "
                "there is nothing to answer; the inbox shows it after the next sync.")
    if failure.status == 404:
        return (f"GitHub shows no {slug} to {who}: install the App on {slug} (or give the token access), "
                "and check the repository's slug.")
    if failure.status == 422:
        return ("GitHub refused what was sent: the commit must be in the repository on GitHub (push it), "
                "and the message above says which field.")
    return "See GitHub's message above."
