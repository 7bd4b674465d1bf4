"""A fake GitLab REST API (v4) on 127.0.0.1 (pytest-httpserver) for the calls Recheck makes: commit
statuses, merge request notes and merge request discussions (threads on the diff, with their
`position`), in the shapes GitLab's API documentation gives.

Every request is checked as GitLab checks it: the PRIVATE-TOKEN (401 without a known one, 403
`insufficient_scope` for a token without the `api` scope), the project by id or by its URL-encoded
full path (404 otherwise), and the body strictly against the documented parameters (a parameter
GitLab does not take is an error here). GitLab's own quirk is kept: a status posted again in the
state it already has is refused with 400 "Cannot transition status". A request that fails the
strict check is answered 400 and kept in `invalid`, which the fixture checks is empty."""
import hashlib
import itertools
import json
import re
import threading
from dataclasses import dataclass, field
from typing import Literal
from urllib.parse import unquote

from pydantic import BaseModel, ConfigDict, ValidationError
from werkzeug import Request, Response

NOW = "2026-01-01T00:00:00.000Z"


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class StatusParams(Strict):
    """`POST /projects/:id/statuses/:sha`'s documented parameters."""

    state: Literal["pending", "running", "success", "failed", "canceled", "skipped"]
    ref: str | None = None
    name: str | None = None
    context: str | None = None
    target_url: str | None = None
    description: str | None = None
    coverage: float | None = None
    pipeline_id: int | None = None


class NoteParams(Strict):
    """`POST` and `PUT /projects/:id/merge_requests/:iid/notes(/:note_id)`'s parameters."""

    body: str
    created_at: str | None = None
    internal: bool | None = None
    merge_request_diff_head_sha: str | None = None


class DiscussionNoteParams(Strict):
    """`POST /projects/:id/merge_requests/:iid/discussions/:discussion_id/notes`'s parameters."""

    body: str
    note_id: int | None = None
    created_at: str | None = None


class DiscussionNoteEditParams(Strict):
    """`PUT .../discussions/:discussion_id/notes/:note_id`: exactly one of `body` and `resolved`."""

    body: str | None = None
    resolved: bool | None = None


# GitLab limits a note's body to 1,000,000 characters.
NOTE_LIMIT = 1_000_000


@dataclass
class Project:
    id: int
    path: str
    merge_requests: set[int] = field(default_factory=set)


@dataclass
class FakeGitLab:
    token: str = "glpat-recheck-test-token"
    read_only_token: str = "glpat-read-api-only"
    projects: dict[int, Project] = field(default_factory=dict)
    statuses: list[dict] = field(default_factory=list)
    notes: dict[int, dict] = field(default_factory=dict)
    # Discussions on the diff, by their id (a 40-hex string), each with its notes' ids in order.
    discussions: dict[str, dict] = field(default_factory=dict)
    requests: list[tuple[str, str, dict | None]] = field(default_factory=list)
    invalid: list[str] = field(default_factory=list)
    # A pipeline's test report, by (project id, pipeline id), as GitLab answers it.
    test_reports: dict[tuple[int, int], dict] = field(default_factory=dict)
    faults: list[tuple[str, str, int, dict, dict]] = field(default_factory=list)
    ids: itertools.count = field(default_factory=lambda: itertools.count(1000))
    lock: threading.Lock = field(default_factory=threading.Lock)

    def add_project(self, project_id: int, path: str, merge_requests=()) -> Project:
        project = Project(project_id, path, set(merge_requests))
        self.projects[project_id] = project
        return project

    def add_test_report(self, project_id: int, pipeline_id: int, suites: dict[str, list[tuple[str, str, str]]]) -> None:
        """The test report of a pipeline, in the shape of GitLab's documented answer: for each
        suite (a job's name), its cases as (classname, name, status)."""
        test_suites = []
        for name, cases in suites.items():
            counts = {status: sum(case[2] == status for case in cases)
                      for status in ("success", "failed", "skipped", "error")}
            test_suites.append({
                "name": name, "total_time": 0.5, "total_count": len(cases),
                **{f"{status}_count": count for status, count in counts.items()},
                "test_cases": [{"status": status, "name": test, "classname": classname, "execution_time": 0.1,
                                "system_output": None, "stack_trace": None}
                               for classname, test, status in cases],
            })
        self.test_reports[(project_id, pipeline_id)] = {
            "total_time": 0.5, "total_count": sum(suite["total_count"] for suite in test_suites),
            **{f"{status}_count": sum(suite[f"{status}_count"] for suite in test_suites)
               for status in ("success", "failed", "skipped", "error")},
            "test_suites": test_suites,
        }

    def move_project(self, project_id: int, new_path: str) -> None:
        self.projects[project_id].path = new_path

    def fail(self, method: str, path: str, status: int, body: dict, *, headers: dict | None = None,
             times: int = 1) -> None:
        """Answer the next `times` requests matching `method` and `path` (a regex) with `status`."""
        for _ in range(times):
            self.faults.append((method, path, status, body, headers or {}))

    def calls(self, method: str, pattern: str) -> list[dict | None]:
        return [body for m, path, body in self.requests if m == method and re.search(pattern, path)]

    def mr_notes(self, project_id: int, iid: int) -> list[dict]:
        return [note for note in self.notes.values() if (note["project_id"], note["noteable_iid"]) == (project_id, iid)]

    # --- Serving ---------------------------------------------------------------------------------

    def handle(self, request: Request) -> Response:
        with self.lock:
            return self._handle(request)

    def _handle(self, request: Request) -> Response:
        raw = request.environ.get("REQUEST_URI") or request.environ.get("RAW_URI") or request.path
        path = raw.split("?", 1)[0]
        body = json.loads(request.get_data() or b"null")
        self.requests.append((request.method, path, body))
        for index, (method, pattern, status, answer, headers) in enumerate(self.faults):
            if method == request.method and re.search(pattern, path):
                del self.faults[index]
                return self._json(status, answer, headers)
        token = request.headers.get("PRIVATE-TOKEN", "")
        if token not in (self.token, self.read_only_token):
            return self._json(401, {"message": "401 Unauthorized"})
        match = re.fullmatch(r"/api/v4/projects/([^/]+)(/.*)", path)
        if not match:
            return self._json(404, {"error": "404 Not Found"})
        project = self._project(unquote(match.group(1)))
        if project is None:
            return self._json(404, {"message": "404 Project Not Found"})
        rest = match.group(2)
        if request.method != "GET" and token == self.read_only_token:
            return self._json(403, {"error": "insufficient_scope", "scope": "api",
                                    "error_description": "The request requires higher privileges than provided by "
                                                         "the access token."})
        if request.method == "GET" and (m := re.fullmatch(r"/pipelines/(\d+)/test_report", rest)):
            report = self.test_reports.get((project.id, int(m.group(1))))
            return self._json(200, report) if report is not None else self._json(404, {"message": "404 Not found"})
        if request.method == "POST" and (m := re.fullmatch(r"/statuses/([0-9a-f]{40})", rest)):
            return self._create_status(project, m.group(1), body)
        if m := re.fullmatch(r"/merge_requests/(\d+)/notes", rest):
            iid = int(m.group(1))
            if iid not in project.merge_requests:
                return self._json(404, {"message": "404 Not found"})
            if request.method == "GET":
                return self._list_notes(project, iid, request.args)
            if request.method == "POST":
                return self._write_note(project, iid, body, None)
        if request.method == "PUT" and (m := re.fullmatch(r"/merge_requests/(\d+)/notes/(\d+)", rest)):
            return self._write_note(project, int(m.group(1)), body, int(m.group(2)))
        if m := re.fullmatch(r"/merge_requests/(\d+)/discussions(?:/([0-9a-f]{40}))?(/notes(?:/(\d+))?)?", rest):
            iid = int(m.group(1))
            if iid not in project.merge_requests:
                return self._json(404, {"message": "404 Not found"})
            discussion_id, notes, note_id = m.group(2), m.group(3), m.group(4)
            if discussion_id is None and notes is None and request.method == "GET":
                return self._list_discussions(project, iid, request.args)
            discussion = self.discussions.get(discussion_id or "")
            if discussion is None or (discussion["project_id"], discussion["iid"]) != (project.id, iid):
                return self._json(404, {"message": "404 Discussion Not Found"})
            if notes and note_id is None and request.method == "POST":
                return self._discussion_reply(discussion, body)
            if notes and note_id is not None and request.method == "PUT":
                return self._discussion_note_edit(discussion, int(note_id), body)
            if not notes and request.method == "PUT":
                return self._discussion_resolve(discussion, request.args, body)
        return self._json(404, {"error": "404 Not Found"})

    def _project(self, ref: str) -> Project | None:
        if ref.isdigit():
            return self.projects.get(int(ref))
        return next((project for project in self.projects.values() if project.path == ref), None)

    @staticmethod
    def _json(status: int, data, headers: dict | None = None) -> Response:
        return Response(json.dumps(data), status=status, headers=headers or {}, content_type="application/json")

    def _strict(self, model, body):
        try:
            return model.model_validate(body)
        except ValidationError as error:
            self.invalid.append(str(error))
            return None

    def _create_status(self, project: Project, sha: str, body) -> Response:
        params = self._strict(StatusParams, body)
        if params is None:
            return self._json(400, {"message": "400 Bad request - invalid parameters"})
        name = params.name or params.context or "default"
        current = next((status for status in reversed(self.statuses)
                        if (status["project_id"], status["sha"], status["name"]) == (project.id, sha, name)), None)
        if current is not None and current["status"] == params.state:
            verb = {"running": "run", "success": "succeed", "failed": "drop", "pending": "enqueue"}.get(params.state,
                                                                                                      params.state)
            return self._json(400, {"message": f"Cannot transition status via :{verb} from :{params.state}"})
        status = {
            "id": next(self.ids), "sha": sha, "ref": params.ref, "status": params.state, "name": name,
            "target_url": params.target_url, "description": params.description, "created_at": NOW,
            "started_at": NOW, "finished_at": None if params.state in ("pending", "running") else NOW,
            "allow_failure": False, "coverage": params.coverage,
            "author": {"id": 9, "username": "recheck-bot", "name": "Recheck", "state": "active",
                       "avatar_url": None, "web_url": "https://gitlab.example.com/recheck-bot"},
            "project_id": project.id,
        }
        self.statuses.append(status)
        return self._json(201, {key: value for key, value in status.items() if key != "project_id"})

    def _note(self, note: dict) -> dict:
        return {
            "id": note["id"], "body": note["body"], "attachment": None, "created_at": NOW, "updated_at": NOW,
            "author": {"id": 9, "username": "recheck-bot", "name": "Recheck", "state": "active"},
            "system": note.get("system", False), "noteable_id": 4000 + note["noteable_iid"],
            "noteable_type": "MergeRequest", "project_id": note["project_id"], "noteable_iid": note["noteable_iid"],
            "resolvable": False, "confidential": False, "internal": False,
        }

    def add_note(self, project_id: int, iid: int, body: str, *, system: bool = False) -> int:
        note_id = next(self.ids)
        self.notes[note_id] = {"id": note_id, "body": body, "project_id": project_id, "noteable_iid": iid,
                               "system": system}
        return note_id

    def _list_notes(self, project: Project, iid: int, args) -> Response:
        per_page, page = int(args.get("per_page", 20)), int(args.get("page", 1))
        rows = sorted(self.mr_notes(project.id, iid), key=lambda note: note["id"])
        chunk = rows[(page - 1) * per_page: page * per_page]
        headers = {"X-Page": str(page), "X-Per-Page": str(per_page), "X-Total": str(len(rows)),
                   "X-Next-Page": str(page + 1) if page * per_page < len(rows) else ""}
        return self._json(200, [self._note(note) for note in chunk], headers)

    def _write_note(self, project: Project, iid: int, body, note_id: int | None) -> Response:
        params = self._strict(NoteParams, body)
        if params is None or len(params.body) > NOTE_LIMIT:
            return self._json(400, {"message": {"note": ["is too long (maximum is 1000000 characters)"]}})
        if note_id is None:
            note_id = self.add_note(project.id, iid, params.body)
            return self._json(201, self._note(self.notes[note_id]))
        note = self.notes.get(note_id)
        if note is None or (note["project_id"], note["noteable_iid"]) != (project.id, iid):
            return self._json(404, {"message": "404 Note Not Found"})
        note["body"] = params.body
        return self._json(200, self._note(note))

    # --- Discussions -----------------------------------------------------------------------------

    def add_discussion(self, project_id: int, iid: int, body: str, *, head_sha: str, base_sha: str | None = None,
                       new_path: str | None = None, new_line: int | None = None, old_path: str | None = None,
                       old_line: int | None = None, start_line: int | None = None, position_type: str = "text",
                       author: tuple[int, str] = (51, "reviewer")) -> tuple[str, int]:
        """A reviewer's thread on a line of the diff (the new side when `new_line` is given); its
        discussion id and its first note's id."""
        note_id = next(self.ids)
        discussion_id = hashlib.sha1(f"discussion-{note_id}".encode()).hexdigest()
        new_path = new_path or old_path
        line_range = None
        if position_type == "text":
            new_side = new_line is not None
            end = new_line if new_side else old_line

            def point(line):
                code = f"{hashlib.sha1((new_path or '').encode()).hexdigest()}_{0 if new_side else line}_{line if new_side else 0}"
                return {"line_code": code, "type": "new" if new_side else "old",
                        "old_line": None if new_side else line, "new_line": line if new_side else None}

            line_range = {"start": point(start_line or end), "end": point(end)}
        position = {
            "base_sha": base_sha or "0" * 40, "start_sha": base_sha or "0" * 40, "head_sha": head_sha,
            "old_path": old_path or new_path, "new_path": new_path, "position_type": position_type,
            "old_line": old_line, "new_line": new_line, "line_range": line_range,
        }
        self.notes[note_id] = {"id": note_id, "body": body, "project_id": project_id, "noteable_iid": iid,
                               "system": False, "discussion_id": discussion_id, "position": position,
                               "author": author, "resolvable": True}
        self.discussions[discussion_id] = {"id": discussion_id, "project_id": project_id, "iid": iid,
                                           "notes": [note_id], "resolved": False}
        return discussion_id, note_id

    def reply_in_discussion(self, discussion_id: str, body: str, *, author: tuple[int, str] = (52, "author"),
                            system: bool = False) -> int:
        discussion = self.discussions[discussion_id]
        first = self.notes[discussion["notes"][0]]
        note_id = next(self.ids)
        self.notes[note_id] = {"id": note_id, "body": body, "project_id": discussion["project_id"],
                               "noteable_iid": discussion["iid"], "system": system, "discussion_id": discussion_id,
                               "position": first["position"], "author": author, "resolvable": not system}
        discussion["notes"].append(note_id)
        return note_id

    def edit_note(self, note_id: int, body: str) -> None:
        self.notes[note_id]["body"] = body

    def discussion_notes(self, discussion_id: str) -> list[dict]:
        return [self.notes[note_id] for note_id in self.discussions[discussion_id]["notes"]]

    def _discussion_note(self, note: dict) -> dict:
        author_id, username = note.get("author", (9, "recheck-bot"))
        discussion = self.discussions.get(note.get("discussion_id") or "")
        resolvable = note.get("resolvable", False)
        shown = {
            "id": note["id"], "type": "DiffNote" if note.get("position") else None, "body": note["body"],
            "attachment": None,
            "author": {"id": author_id, "name": username.title(), "username": username, "state": "active",
                       "avatar_url": None, "web_url": f"https://gitlab.example.com/{username}"},
            "created_at": NOW, "updated_at": NOW, "system": note.get("system", False),
            "noteable_id": 4000 + note["noteable_iid"], "noteable_type": "MergeRequest",
            "project_id": note["project_id"], "noteable_iid": None, "resolvable": resolvable,
        }
        if resolvable:
            resolved = bool(discussion and discussion["resolved"])
            shown.update(resolved=resolved, resolved_by=None, resolved_at=NOW if resolved else None)
        if note.get("position"):
            shown["position"] = note["position"]
        return shown

    def _discussions_of(self, project: Project, iid: int) -> list[dict]:
        """GitLab's list: each diff discussion, and each plain note as a discussion of its own."""
        rows = []
        for note in sorted(self.mr_notes(project.id, iid), key=lambda note: note["id"]):
            if note.get("discussion_id"):
                discussion = self.discussions[note["discussion_id"]]
                if discussion["notes"][0] == note["id"]:
                    rows.append({"id": discussion["id"], "individual_note": False,
                                 "notes": [self._discussion_note(self.notes[i]) for i in discussion["notes"]]})
            else:
                rows.append({"id": hashlib.sha1(f"note-{note['id']}".encode()).hexdigest(), "individual_note": True,
                             "notes": [self._discussion_note(note)]})
        return rows

    def _list_discussions(self, project: Project, iid: int, args) -> Response:
        per_page, page = int(args.get("per_page", 20)), int(args.get("page", 1))
        rows = self._discussions_of(project, iid)
        chunk = rows[(page - 1) * per_page: page * per_page]
        headers = {"X-Page": str(page), "X-Per-Page": str(per_page), "X-Total": str(len(rows)),
                   "X-Next-Page": str(page + 1) if page * per_page < len(rows) else ""}
        return self._json(200, chunk, headers)

    def _discussion_reply(self, discussion: dict, body) -> Response:
        params = self._strict(DiscussionNoteParams, body)
        if params is None or len(params.body) > NOTE_LIMIT:
            return self._json(400, {"message": "400 Bad request - body is missing or too long"})
        note_id = self.reply_in_discussion(discussion["id"], params.body, author=(9, "recheck-bot"))
        return self._json(201, self._discussion_note(self.notes[note_id]))

    def _discussion_note_edit(self, discussion: dict, note_id: int, body) -> Response:
        params = self._strict(DiscussionNoteEditParams, body)
        if params is None or (params.body is None) == (params.resolved is None):
            if params is not None:
                self.invalid.append("exactly one of body and resolved")
            return self._json(400, {"error": "body, resolved are mutually exclusive"})
        if note_id not in discussion["notes"]:
            return self._json(404, {"message": "404 Note Not Found"})
        if params.body is not None:
            self.notes[note_id]["body"] = params.body
        else:
            discussion["resolved"] = params.resolved
        return self._json(200, self._discussion_note(self.notes[note_id]))

    def _discussion_resolve(self, discussion: dict, args, body) -> Response:
        value = args.get("resolved", (body or {}).get("resolved") if isinstance(body, dict) else None)
        if str(value).lower() not in ("true", "false"):
            self.invalid.append(f"resolved must be true or false, not {value!r}")
            return self._json(400, {"error": "resolved is missing"})
        discussion["resolved"] = str(value).lower() == "true"
        return self._json(200, {"id": discussion["id"], "individual_note": False,
                                "notes": [self._discussion_note(self.notes[i]) for i in discussion["notes"]]})
