"""Review threads at GitHub's wire: reading a pull request's review comments, replying in a thread
and editing that reply, resolving and unresolving a thread (GraphQL). Plain values in and out
(`forge.threads.wire`), so the inbox (`forge.threads.sync`) does not depend on GitHub's shapes and another
forge can answer the same questions.

Every call goes through `forge.github.client.github_call`: the installation token the check runs use,
GitHub's errors as `Failure` (with Retry-After and rate limits), no retry of its own."""
from __future__ import annotations

from forge.github.client import github_call
from forge.outbox.failures import Failure
from forge.threads.wire import WireComment, WireThread
from reviews.models import Repository

PER_PAGE = 100

THREAD_OF_COMMENT = """
query($owner: String!, $name: String!, $number: Int!, $after: String) {
  repository(owner: $owner, name: $name) {
    pullRequest(number: $number) {
      reviewThreads(first: 100, after: $after) {
        pageInfo { hasNextPage endCursor }
        nodes { id isResolved isOutdated comments(first: 1) { nodes { databaseId } } }
      }
    }
  }
}
"""
RESOLVE = "mutation($id: ID!) { resolveReviewThread(input: {threadId: $id}) { thread { id isResolved } } }"
UNRESOLVE = "mutation($id: ID!) { unresolveReviewThread(input: {threadId: $id}) { thread { id isResolved } } }"


def _value(model, name: str, default=None):
    value = getattr(model, name, default)
    # githubkit's UNSET is falsy and not None: a field GitHub left out.
    return default if value is None or type(value).__name__ == "Unset" else value


def wire_comment(model) -> WireComment:
    """A githubkit model (or a webhook's comment) of a review comment as plain values."""
    user = _value(model, "user")
    return WireComment(
        id=int(model.id),
        in_reply_to_id=_value(model, "in_reply_to_id"),
        path=_value(model, "path", ""),
        side=_value(model, "side", "") or "",
        subject_type=_value(model, "subject_type", "") or "line",
        commit_id=_value(model, "commit_id", ""),
        original_commit_id=_value(model, "original_commit_id", ""),
        line=_value(model, "line"),
        start_line=_value(model, "start_line"),
        original_line=_value(model, "original_line"),
        original_start_line=_value(model, "original_start_line"),
        diff_hunk=_value(model, "diff_hunk", ""),
        body=_value(model, "body", ""),
        author_login=_value(user, "login", "") if user else "",
        author_id=_value(user, "id") if user else None,
        html_url=_value(model, "html_url", ""),
        created_at=_value(model, "created_at"),
        updated_at=_value(model, "updated_at"),
    )


def review_comments_read(repository: Repository, number: int) -> list[WireComment]:
    """Every review comment of pull request `number`, page by page, each once (a comment that
    moves between pages while they are read is counted once, by its id)."""
    owner, name = repository.owner, repository.name

    def read(gh):
        return [wire_comment(comment) for comment in gh.rest.paginate(
            gh.rest.pulls.list_review_comments, owner=owner, repo=name, pull_number=number, per_page=PER_PAGE)]

    seen: dict[int, WireComment] = {}
    for comment in github_call(repository, read):
        seen[comment.id] = comment
    return list(seen.values())


def thread_reply_create(repository: Repository, number: int, root_id: int, body: str) -> tuple[int, object]:
    owner, name = repository.owner, repository.name
    answer = github_call(repository, lambda gh: gh.rest.pulls.create_reply_for_review_comment(
        owner, name, number, root_id, data={"body": body}))
    return answer.parsed_data.id, answer


def thread_reply_edit(repository: Repository, comment_id: int, body: str) -> tuple[int, object]:
    owner, name = repository.owner, repository.name
    answer = github_call(repository, lambda gh: gh.rest.pulls.update_review_comment(
        owner, name, comment_id, data={"body": body}))
    return answer.parsed_data.id, answer


def _graphql(repository: Repository, query: str, variables: dict) -> dict:
    from githubkit.exception import GraphQLFailed

    def ask(gh):
        try:
            return gh.graphql(query, variables)
        except GraphQLFailed as failed:
            errors = failed.response.errors or []
            message = "; ".join(error.message for error in errors) or "GraphQL refused the request."
            not_found = any(error.type == "NOT_FOUND" for error in errors)
            raise Failure(404 if not_found else 422, message, retryable=False) from None

    return github_call(repository, ask)


def review_threads_read(repository: Repository, number: int, *, until: int | None = None) -> dict[int, WireThread]:
    """The pull request's threads as GraphQL has them (REST has no threads), by their first
    comment's id; pages stop early once the thread starting with comment `until` is found."""
    found: dict[int, WireThread] = {}
    after = None
    while True:
        data = _graphql(repository, THREAD_OF_COMMENT,
                        {"owner": repository.owner, "name": repository.name, "number": number, "after": after})
        threads = ((data.get("repository") or {}).get("pullRequest") or {}).get("reviewThreads") or {}
        for node in threads.get("nodes") or []:
            first = ((node.get("comments") or {}).get("nodes") or [{}])[0]
            if first.get("databaseId") is not None:
                found[int(first["databaseId"])] = WireThread(node_id=str(node["id"]),
                                                             resolved=bool(node.get("isResolved")),
                                                             outdated=bool(node.get("isOutdated")))
        page = threads.get("pageInfo") or {}
        if (until is not None and until in found) or not page.get("hasNextPage"):
            return found
        after = page.get("endCursor")


def thread_node_id(repository: Repository, number: int, root_id: int) -> tuple[str, bool] | None:
    """The GraphQL id of the thread whose first comment is `root_id`, and whether it is resolved."""
    thread = review_threads_read(repository, number, until=root_id).get(root_id)
    return (thread.node_id, thread.resolved) if thread else None


def thread_resolution_set(repository: Repository, node_id: str, resolved: bool) -> bool:
    """Resolve (or unresolve) the thread; returns whether GitHub says it is resolved now."""
    data = _graphql(repository, RESOLVE if resolved else UNRESOLVE, {"id": node_id})
    key = "resolveReviewThread" if resolved else "unresolveReviewThread"
    return bool((((data or {}).get(key) or {}).get("thread") or {}).get("isResolved"))
