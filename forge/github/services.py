"""GitHub's side of reporting: its verdict's rows (a check run with an App, a commit status with
only a token), written through the outbox's `record_calls`; and what GitHub tells of the App's
installations."""
from core.forges import GITHUB
from forge.github.client import credentials_kind
from forge.outbox.models import ForgeCall
from forge.outbox.services import record_calls
from reviews.models import Commit, PullRequest, Repository


def github_verdict_calls(pull_request: PullRequest, commit: Commit, report) -> list[ForgeCall]:
    """GitHub's verdict: a check run with an App, a commit status with only a token."""
    kind = credentials_kind()
    if kind == "app":
        return _check_run_calls(pull_request, commit, report)
    if kind == "token":
        return _status_calls(pull_request, commit, report)
    return record_calls(pull_request, commit, ForgeCall.Kind.CHECK_RUN, "not configured", [{}],
                        failure=("No GitHub credentials are configured.",
                                 "Set RECHECK_GITHUB_APP_ID and RECHECK_GITHUB_APP_PRIVATE_KEY (a GitHub App, "
                                 "for check runs), or RECHECK_GITHUB_TOKEN (commit statuses only)."))


def _check_run_calls(pull_request: PullRequest, commit: Commit, report) -> list[ForgeCall]:
    from forge import content

    base = {"name": content.CHECK_NAME, "head_sha": commit.sha}
    details_url = content.site_url(content.Links(pull_request=pull_request).blockers)
    if details_url:
        base["details_url"] = details_url
    if report is None:
        body = {
            **base,
            "status": "in_progress",
            "output": {"title": content.in_progress_title(commit),
                       "summary": content.in_progress_summary(pull_request, commit)},
        }
        return record_calls(pull_request, commit, ForgeCall.Kind.CHECK_RUN, "in_progress", [body])
    # Every annotation of the report: the sender sends the run only those it does not hold yet,
    # 50 to a request, and starts a new run when the run holds one the report no longer has.
    output = {"title": report.title, "summary": report.summary,
              "annotations": [annotation.as_github() for annotation in report.annotations]}
    body = {**base, "status": "completed", "conclusion": report.conclusion, "output": output}
    return record_calls(pull_request, commit, ForgeCall.Kind.CHECK_RUN, f"completed: {report.conclusion}", [body])


def _status_calls(pull_request: PullRequest, commit: Commit, report) -> list[ForgeCall]:
    from forge import content

    body = {"context": content.STATUS_CONTEXT}
    details_url = content.site_url(content.Links(pull_request=pull_request).blockers)
    if details_url:
        body["target_url"] = details_url
    if report is None:
        body.update(state="pending", description=f"Verifying {commit.short_sha}")
        state = "pending"
    else:
        body.update(state=report.status_state, description=report.status_description)
        state = f"{report.status_state}: {report.conclusion}"
    return record_calls(pull_request, commit, ForgeCall.Kind.COMMIT_STATUS, state, [body])


def repository_installation_record(*, installation_id: int | None, slugs: list[str]) -> int:
    """Remember (or with None, forget) the App's installation on these repositories."""
    query = Repository.objects.none()
    for slug in slugs:
        query = query | Repository.objects.filter(slug__iexact=slug, forge=GITHUB)
    return query.update(github_installation_id=installation_id)


def installation_forget(*, installation_id: int) -> int:
    return Repository.objects.filter(github_installation_id=installation_id).update(github_installation_id=None)
