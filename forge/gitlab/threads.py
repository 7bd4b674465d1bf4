"""Review threads at GitLab's wire: a merge request's discussions, read page by page, as the plain
values the inbox reads (`forge.threads.wire`); replying in a discussion, editing that reply, and
resolving or unresolving a discussion.

A discussion on the diff carries a `position` on each of its notes: the merge request's version
(`base_sha`, `start_sha`, `head_sha`) and the place (`new_path`/`new_line` on the new code,
`old_path`/`old_line` on the old, a `line_range` for several lines, `position_type` `file` for a
whole file). Only those are review threads: a discussion without a position is a comment on the
merge request as a whole (GitHub's issue comments, which the inbox does not read either), and
Recheck's own sticky note is one. System notes ("added 1 commit") are GitLab's, not a reviewer's.

The thread's key is its first note's id (numeric, as GitHub's first comment's); the discussion's
own id (a string) is kept as the thread's `node_id`, which a reply and a resolution need."""
from __future__ import annotations

from datetime import datetime

from pydantic import Field

from forge.outbox.failures import Failure
from forge.gitlab.client import GitLabModel, gitlab_request, parsed, parsed_list
from forge.threads.wire import WireComment, WireThread
from reviews.models import Repository

PER_PAGE = 100
# A merge request with more than 100 pages of discussions is read no further (and says so).
MAX_PAGES = 100


class Author(GitLabModel):
    id: int | None = None
    username: str | None = ""


class LinePoint(GitLabModel):
    old_line: int | None = None
    new_line: int | None = None


class LineRange(GitLabModel):
    start: LinePoint | None = None
    end: LinePoint | None = None


class Position(GitLabModel):
    base_sha: str | None = None
    start_sha: str | None = None
    head_sha: str | None = None
    position_type: str | None = "text"
    new_path: str | None = None
    old_path: str | None = None
    new_line: int | None = None
    old_line: int | None = None
    line_range: LineRange | None = None


class DiscussionNote(GitLabModel):
    id: int
    body: str = ""
    author: Author = Field(default_factory=Author)
    system: bool = False
    resolvable: bool = False
    resolved: bool | None = None
    created_at: datetime | None = None
    updated_at: datetime | None = None
    position: Position | None = None


class Discussion(GitLabModel):
    id: str
    individual_note: bool = False
    notes: list[DiscussionNote] = Field(default_factory=list)


def _place(position: Position) -> dict:
    """Where a note is, in the inbox's words: RIGHT (new code) when it names a new line, LEFT
    (old code) when only an old one, the whole file for a `file` position."""
    if position.position_type == "file" or (position.new_line is None and position.old_line is None):
        return {"path": position.new_path or position.old_path or "", "side": "RIGHT", "subject_type": "file",
                "line": None, "start_line": None}
    right = position.new_line is not None
    line = position.new_line if right else position.old_line
    start = None
    if position.line_range and position.line_range.start:
        first = position.line_range.start.new_line if right else position.line_range.start.old_line
        if first is not None and first < line:
            start = first
    return {"path": (position.new_path if right else position.old_path) or position.new_path or "",
            "side": "RIGHT" if right else "LEFT", "subject_type": "line", "line": line, "start_line": start}


def _note_url(repository: Repository, iid: int, note_id: int) -> str:
    return f"{repository.web_url.rstrip('/')}/-/merge_requests/{iid}#note_{note_id}" if repository.web_url else ""


def _wire(repository: Repository, iid: int, note: DiscussionNote, root: DiscussionNote,
          position: Position) -> WireComment:
    place = _place(position)
    sha = position.head_sha or ""
    return WireComment(
        id=note.id, in_reply_to_id=None if note.id == root.id else root.id, path=place["path"],
        side=place["side"], subject_type=place["subject_type"], commit_id=sha, original_commit_id=sha,
        line=place["line"], start_line=place["start_line"], original_line=place["line"],
        original_start_line=place["start_line"], diff_hunk="", body=note.body,
        author_login=note.author.username or "", author_id=note.author.id, html_url=_note_url(repository, iid, note.id),
        created_at=note.created_at, updated_at=note.updated_at,
    )


def discussions_read(repository: Repository, iid: int) -> tuple[list[WireComment], dict[int, WireThread]]:
    """Every diff discussion of merge request `iid`: its notes (system notes left out), and each
    discussion's id and resolution by its first note's id. A note that moves between pages while
    they are read is counted once, by its id."""
    comments: dict[int, WireComment] = {}
    threads: dict[int, WireThread] = {}
    for page in range(1, MAX_PAGES + 1):
        response = gitlab_request(repository, "GET", f"/merge_requests/{iid}/discussions",
                                  params={"per_page": PER_PAGE, "page": page})
        for discussion in parsed_list(Discussion, response):
            notes = [note for note in discussion.notes if not note.system]
            root = notes[0] if notes else None
            position = next((note.position for note in notes if note.position is not None), None)
            if root is None or position is None:
                continue
            for note in notes:
                comments[note.id] = _wire(repository, iid, note, root, note.position or position)
            threads[root.id] = WireThread(node_id=discussion.id, resolved=bool(root.resolved), outdated=False)
        if not response.headers.get("x-next-page"):
            return list(comments.values()), threads
    raise Failure(None, f"Merge request !{iid} has more than {MAX_PAGES * PER_PAGE} discussions: Recheck reads "
                  "no further.", retryable=False)


def discussion_reply_create(repository: Repository, iid: int, discussion_id: str, body: str) -> int:
    """A new note in the discussion; GitLab's id of it."""
    response = gitlab_request(repository, "POST", f"/merge_requests/{iid}/discussions/{discussion_id}/notes",
                              json={"body": body})
    return parsed(DiscussionNote, response).id


def discussion_reply_edit(repository: Repository, iid: int, discussion_id: str, note_id: int, body: str) -> int:
    response = gitlab_request(repository, "PUT",
                              f"/merge_requests/{iid}/discussions/{discussion_id}/notes/{note_id}",
                              json={"body": body})
    return parsed(DiscussionNote, response).id


def discussion_resolution_set(repository: Repository, iid: int, discussion_id: str, resolved: bool) -> bool:
    """Resolve (or unresolve) the discussion; whether GitLab says its notes are resolved now."""
    response = gitlab_request(repository, "PUT", f"/merge_requests/{iid}/discussions/{discussion_id}",
                              params={"resolved": "true" if resolved else "false"})
    discussion = parsed(Discussion, response)
    resolvable = [note for note in discussion.notes if note.resolvable]
    return bool(resolvable) and all(note.resolved for note in resolvable)
