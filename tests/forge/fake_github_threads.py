"""The fake GitHub's review threads: a pull request's review comments (listed page by page), a
reply in a thread, an edit of a review comment, and GraphQL's reviewThreads, resolveReviewThread
and unresolveReviewThread. Request bodies are validated strictly with githubkit's models, answers
with githubkit's response models, as the rest of the fake does."""
import itertools
import re

from githubkit.compat import type_validate_python
from githubkit_schemas.latest import models as gh

API = "https://api.github.com"
NOW = "2026-01-01T00:00:00Z"
REPO = r"^/repos/(?P<owner>[^/]+)/(?P<repo>[^/]+)"

THREAD_ROUTES = [
    ("GET", REPO + r"/pulls/(?P<number>\d+)/comments$", "list_review_comments"),
    ("POST", REPO + r"/pulls/(?P<number>\d+)/comments/(?P<id>\d+)/replies$", "create_review_reply"),
    ("PATCH", REPO + r"/pulls/comments/(?P<id>\d+)$", "update_review_comment"),
    ("POST", r"^/graphql$", "graphql"),
]


def reviewer(login: str, user_id: int) -> dict:
    from tests.forge.fake_github import _user

    return {**_user(login, user_id), "type": "User"}


class ThreadsMixin:
    """State and endpoints; `FakeGitHub` calls `_threads_init` when it is made."""

    def _threads_init(self) -> None:
        self.review_comments: dict[int, dict] = {}
        # Comment ids listed on two pages (GitHub's pages shift when comments are added meanwhile).
        self.listed_twice: set[int] = set()
        self._thread_ids = itertools.count(1)

    # --- what a test arranges ----------------------------------------------------------------
    def review_comment(self, slug: str, number: int, *, body: str, path: str = "src/loader.py", line: int | None = 10,
                       start_line: int | None = None, side: str = "RIGHT", commit: str, user=("alice", 501),
                       reply_to: int | None = None, subject_type: str = "line") -> int:
        """A review comment a person wrote on GitHub (a reply when `reply_to` names the first one)."""
        with self._lock:
            return self._review_comment_add(slug, number, body=body, path=path, line=line, start_line=start_line,
                                            side=side, commit=commit, user=reviewer(*user), reply_to=reply_to,
                                            subject_type=subject_type)

    def _review_comment_add(self, slug, number, *, body, path, line, start_line, side, commit, user, reply_to,
                            subject_type) -> int:
        comment_id = next(self._ids)
        root = self.review_comments.get(reply_to) if reply_to else None
        if root is not None:
            path, line, start_line, side, subject_type = (root["path"], root["original_line"],
                                                          root["original_start_line"], root["side"],
                                                          root["subject_type"])
        self.review_comments[comment_id] = {
            "id": comment_id, "repo": slug, "number": number, "body": body, "path": path, "side": side,
            "line": line, "start_line": start_line, "original_line": line, "original_start_line": start_line,
            "commit_id": commit, "original_commit_id": root["original_commit_id"] if root else commit,
            "in_reply_to_id": reply_to, "user": user, "subject_type": subject_type,
            "thread": root["thread"] if root else f"PRRT_{next(self._thread_ids)}", "resolved": False,
        }
        return comment_id

    def edit_review_comment(self, comment_id: int, body: str) -> None:
        self.review_comments[comment_id]["body"] = body

    def delete_review_comment(self, comment_id: int) -> None:
        del self.review_comments[comment_id]

    def replies_to(self, root_id: int) -> list[dict]:
        return [c for c in sorted(self.review_comments.values(), key=lambda c: c["id"]) if c["in_reply_to_id"] == root_id]

    def thread_resolved(self, root_id: int) -> bool:
        return self.review_comments[root_id]["resolved"]

    # --- endpoints ----------------------------------------------------------------------------
    def _review_comment(self, comment: dict) -> dict:
        repo, number, comment_id = comment["repo"], comment["number"], comment["id"]
        url = f"{API}/repos/{repo}/pulls/comments/{comment_id}"
        html = f"https://github.com/{repo}/pull/{number}#discussion_r{comment_id}"
        answer = {
            "url": url, "pull_request_review_id": 1, "id": comment_id, "node_id": f"PRRC_{comment_id}",
            "diff_hunk": "@@ -1,3 +1,3 @@", "path": comment["path"], "position": 1, "original_position": 1,
            "commit_id": comment["commit_id"], "original_commit_id": comment["original_commit_id"],
            "user": comment["user"], "body": comment["body"], "created_at": NOW, "updated_at": NOW,
            "html_url": html, "pull_request_url": f"{API}/repos/{repo}/pulls/{number}",
            "author_association": "MEMBER",
            "_links": {"self": {"href": url}, "html": {"href": html},
                       "pull_request": {"href": f"{API}/repos/{repo}/pulls/{number}"}},
            "start_line": comment["start_line"], "original_start_line": comment["original_start_line"],
            "line": comment["line"], "original_line": comment["original_line"], "side": comment["side"],
            "subject_type": comment["subject_type"],
        }
        if comment["in_reply_to_id"]:
            answer["in_reply_to_id"] = comment["in_reply_to_id"]
        type_validate_python(gh.PullRequestReviewComment, answer)
        return answer

    def list_review_comments(self, query, owner, repo, number):
        comments = [c for c in self.review_comments.values()
                    if c["repo"] == f"{owner}/{repo}" and c["number"] == int(number)]
        per_page, page = int(query.get("per_page", 30)), int(query.get("page", 1))
        shown = sorted(comments, key=lambda c: c["id"])[(page - 1) * per_page : page * per_page]
        shown += [c for c in shown if c["id"] in self.listed_twice]
        headers = {}
        if page * per_page < len(comments):  # GitHub names the next page in a Link header
            headers["link"] = f'</repos/{owner}/{repo}/pulls/{number}/comments?per_page={per_page}&page={page + 1}>; ' \
                              'rel="next"'
        return self._json(200, [self._review_comment(comment) for comment in shown], headers)

    def create_review_reply(self, body, owner, repo, number, id):
        from tests.forge.fake_github import strictly

        strictly(gh.ReposOwnerRepoPullsPullNumberCommentsCommentIdRepliesPostBody, body)
        self._body_fits(body)
        root = self.review_comments.get(int(id))
        if root is None or root["repo"] != f"{owner}/{repo}" or root["number"] != int(number):
            return self._json(404, {"message": "Not Found", "documentation_url": "https://docs.github.com/rest"})
        comment_id = self._review_comment_add(
            root["repo"], root["number"], body=body["body"], path=root["path"], line=root["line"],
            start_line=root["start_line"], side=root["side"], commit=root["commit_id"],
            user=reviewer("recheck[bot]", 9), reply_to=root["id"], subject_type=root["subject_type"])
        return self._json(201, self._review_comment(self.review_comments[comment_id]))

    def update_review_comment(self, body, owner, repo, id):
        from tests.forge.fake_github import strictly

        strictly(gh.ReposOwnerRepoPullsCommentsCommentIdPatchBody, body)
        self._body_fits(body)
        comment = self.review_comments.get(int(id))
        if comment is None or comment["repo"] != f"{owner}/{repo}":
            return self._json(404, {"message": "Not Found", "documentation_url": "https://docs.github.com/rest"})
        comment["body"] = body["body"]
        return self._json(200, self._review_comment(comment))

    def graphql(self, body):
        if set(body) - {"query", "variables"} or not isinstance(body.get("query"), str):
            raise ValueError(f"not a GraphQL request: {sorted(body)}")
        query, variables = body["query"], body.get("variables") or {}
        match = re.search(r"\b(resolveReviewThread|unresolveReviewThread|reviewThreads)\b", query)
        if match is None:
            raise ValueError("a GraphQL query the fake does not answer")
        if match[1] == "reviewThreads":
            slug = f"{variables['owner']}/{variables['name']}"
            roots = [c for c in sorted(self.review_comments.values(), key=lambda c: c["id"])
                     if c["repo"] == slug and c["number"] == variables["number"] and not c["in_reply_to_id"]]
            nodes = [{"id": c["thread"], "isResolved": c["resolved"], "comments": {"nodes": [{"databaseId": c["id"]}]}}
                     for c in roots]
            threads = {"pageInfo": {"hasNextPage": False, "endCursor": None}, "nodes": nodes}
            return self._json(200, {"data": {"repository": {"pullRequest": {"reviewThreads": threads}}}})
        roots = [c for c in self.review_comments.values() if c["thread"] == variables.get("id") and not c["in_reply_to_id"]]
        if not roots:
            return self._json(200, {"data": {match[1]: None}, "errors": [
                {"type": "NOT_FOUND", "path": [match[1]],
                 "message": f"Could not resolve to a node with the global id of '{variables.get('id')}'"}]})
        roots[0]["resolved"] = match[1] == "resolveReviewThread"
        return self._json(200, {"data": {match[1]: {"thread": {"id": roots[0]["thread"],
                                                                "isResolved": roots[0]["resolved"]}}}})
