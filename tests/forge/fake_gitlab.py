"""A fake GitLab REST API (v4) on 127.0.0.1 (pytest-httpserver) for the calls Recheck makes: commit
statuses and merge request notes, in the shapes GitLab's API documentation gives.

Every request is checked as GitLab checks it: the PRIVATE-TOKEN (401 without a known one, 403
`insufficient_scope` for a token without the `api` scope), the project by id or by its URL-encoded
full path (404 otherwise), and the body strictly against the documented parameters (a parameter
GitLab does not take is an error here). GitLab's own quirk is kept: a status posted again in the
state it already has is refused with 400 "Cannot transition status". A request that fails the
strict check is answered 400 and kept in `invalid`, which the fixture checks is empty."""
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
    requests: list[tuple[str, str, dict | None]] = field(default_factory=list)
    invalid: list[str] = field(default_factory=list)
    faults: list[tuple[str, str, int, dict, dict]] = field(default_factory=list)
    ids: itertools.count = field(default_factory=lambda: itertools.count(1000))
    lock: threading.Lock = field(default_factory=threading.Lock)

    def add_project(self, project_id: int, path: str, merge_requests=()) -> Project:
        project = Project(project_id, path, set(merge_requests))
        self.projects[project_id] = project
        return project

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
