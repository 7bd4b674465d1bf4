"""The finding editor's forms, as plain builders: what a posted form says, turned into one
finding in the bundle's shape (which `findings.services.authoring.finding_write` validates with the bundle
format and saves), and back again to fill the form. No rule lives here: the kinds, expectations
and messages all come from the bundle format and the engine."""
from __future__ import annotations

import re
from dataclasses import dataclass


from findings.models import Evidence, Finding
from engine.verification import snippet_text_at
from core.errors import RecheckError
from reviews.mirrors import repository_reader_holding
from reviews.models import PullRequest

# The fields each evidence kind's form sends, as the bundle names them (the rest are left out, so
# the bundle format's own "needs" and "only gitlink" messages speak).
KIND_FIELDS = {
    Evidence.Kind.SNIPPET: ("commit", "path", "start_line", "end_line", "text", "caption"),
    Evidence.Kind.PATTERN: ("commit", "path", "regex", "expect", "caption"),
    Evidence.Kind.PATH: ("commit", "path", "expect", "caption"),
    Evidence.Kind.GITLINK: ("commit", "path", "sha", "expect", "branch", "caption"),
    Evidence.Kind.NOTE: ("text", "caption"),
    Evidence.Kind.CHECK: ("commit", "check", "expect", "tests", "results", "app", "caption"),
}
EVIDENCE_FIELDS = ("kind", "commit", "path", "start_line", "end_line", "text", "regex", "expect", "sha", "branch",
                   "check", "tests", "results", "app", "caption")
# A check item's tests and results are typed one a line: a test id, or `rule path:line`.
LISTED = ("tests", "results")
RESULT_LINE = re.compile(r"^(?P<rule>\S+)\s+(?P<path>.+?)(?::(?P<line>\d{1,9}))?$")
# Fields whose whitespace is the content (code, a regex): never trimmed.
VERBATIM = ("text", "regex")
FINDING_TEXT_FIELDS = ("kind", "caught_by", "title", "summary", "body", "fix", "review_comment_url")
EVIDENCE_KEY = re.compile(r"^evidence-(\d+)-kind$")
SHA_TEXT = re.compile(r"[0-9a-fA-F]{7,64}")
LINES = re.compile(r"^\s*(\d{1,9})\s*(?:[-–:]\s*(\d{1,9}))?\s*$")
# Rows past this in one posted form are not read: a forged form cannot make the save loop for ever.
MAX_EVIDENCE_ITEMS = 200


def evidence_item(values: dict) -> dict:
    """One evidence form's values (strings) as a bundle evidence item: only the fields its kind
    takes, blanks left out."""
    kind = (values.get("kind") or "").strip()
    item = {"kind": kind}
    for name in KIND_FIELDS.get(kind, ()):
        value = values.get(name, "")
        value = value if name in VERBATIM else value.strip()
        if name in LISTED:
            lines = [line.strip() for line in value.splitlines() if line.strip()]
            if lines:
                item[name] = lines if name == "tests" else [result_item(line) for line in lines]
        elif value != "":
            item[name] = value.replace("\r\n", "\n") if name in VERBATIM else value
    return item


def result_item(line: str) -> dict:
    """`S105 config/soak.yaml:104` as a result; a line that does not read so is passed on whole as
    the path, for the bundle format to say what is wrong with it."""
    match = RESULT_LINE.match(line)
    if not match:
        return {"rule": line, "path": ""}
    result = {"rule": match.group("rule"), "path": match.group("path")}
    if match.group("line"):
        result["start_line"] = int(match.group("line"))
    return result


def result_line(result: dict) -> str:
    place = f"{result['path']}:{result['start_line']}" if result.get("start_line") else result["path"]
    return f"{result['rule']} {place}"


def evidence_forms(post) -> list[dict]:
    """The evidence rows a posted editor form holds, in the order the reviewer put them (their
    `order` field, then where they came on the page), the removed ones left out."""
    rows = []
    for key in post:
        match = EVIDENCE_KEY.match(key)
        if not match:
            continue
        index = match.group(1)
        prefix = f"evidence-{index}-"
        if post.get(prefix + "remove"):
            continue
        values = {name: post.get(prefix + name, "") for name in EVIDENCE_FIELDS}
        try:
            order = float(post.get(prefix + "order", "") or index)
        except ValueError:
            order = float(index)
        rows.append((order, int(index), values))
        if len(rows) > MAX_EVIDENCE_ITEMS:
            break
    return [values for _, _, values in sorted(rows, key=lambda row: (row[0], row[1]))]


def finding_data(post) -> tuple[dict, list[dict]]:
    """A posted editor form as one finding in the bundle's shape, and its evidence rows as they
    were typed (to show them again beside the errors)."""
    data = {name: post.get(name, "").strip() for name in FINDING_TEXT_FIELDS}
    for name in ("body", "fix"):
        data[name] = post.get(name, "").replace("\r\n", "\n")
    data["number"] = post.get("number", "").strip()
    path, line = post.get("location_path", "").strip(), post.get("location_line", "").strip()
    # The form shows the whole finding, so an emptied location clears it.
    data["location"] = {"path": path, **({"line": line} if line else {})} if path or line else None
    rows = evidence_forms(post)
    data["evidence"] = [evidence_item(row) for row in rows]
    return data, rows


def finding_form_values(finding: Finding) -> dict:
    """A saved finding as the editor's form values."""
    return {
        "number": finding.number,
        **{name: getattr(finding, name) for name in FINDING_TEXT_FIELDS},
        "location_path": finding.path,
        "location_line": finding.line or "",
    }


def evidence_form_values(evidence: Evidence) -> dict:
    values = {name: "" for name in EVIDENCE_FIELDS}
    values.update(
        kind=evidence.kind,
        commit=evidence.commit.sha if evidence.commit else "",
        path=evidence.path,
        start_line=evidence.start_line or "",
        end_line=evidence.end_line or "",
        text=evidence.text,
        regex=evidence.regex,
        expect=evidence.expect,
        sha=evidence.sha,
        branch=evidence.reference_branch,
        check=evidence.check_name,
        tests="\n".join(evidence.check_tests),
        results="\n".join(result_line(result) for result in evidence.check_results),
        app=evidence.check_app,
        caption=evidence.caption,
    )
    return values


def blank_evidence(kind: str = Evidence.Kind.SNIPPET) -> dict:
    return {**{name: "" for name in EVIDENCE_FIELDS}, "kind": kind}


def next_number(pull_request: PullRequest) -> int:
    last = Finding.objects.filter(pull_request=pull_request).order_by("-number").values_list("number", flat=True)
    return (last.first() or 0) + 1


@dataclass
class Prefill:
    """What the code browser's selection sends (`?commit=&path=&lines=`): a snippet item with the
    text read at that commit, and a main location. `problem` says what could not be read."""

    evidence: dict
    location_path: str = ""
    location_line: int | None = None
    problem: str = ""
    # A check item from the pages' new failures (`?kind=check&check=&tests=` or `&results=`):
    # a blocker caught by CI, titled after what failed.
    title: str = ""
    caught_by: str = ""


def selection_prefill(pull_request: PullRequest, query, *, kind: str = Evidence.Kind.SNIPPET) -> Prefill | None:
    """The evidence item a selection in the code browser describes, or None when the query names
    none. The text is read from the mirror at the commit; what cannot be read is said, and the
    item is still offered (the text is then read when the PR is verified)."""
    commit, path, lines = (query.get(name, "").strip() for name in ("commit", "path", "lines"))
    kind = query.get("kind", kind).strip() or kind
    if kind not in Evidence.Kind.values:
        return Prefill(evidence=blank_evidence(), problem=f"Unknown evidence kind {kind!r}: use one of "
                       f"{', '.join(Evidence.Kind.values)}.")
    if kind == Evidence.Kind.CHECK:
        return check_prefill(query)
    if not (commit or path or lines):
        return None if kind == Evidence.Kind.SNIPPET and "kind" not in query else Prefill(blank_evidence(kind))
    item = {**blank_evidence(kind), "commit": commit, "path": path}
    prefill = Prefill(evidence=item, location_path=path)
    if lines:
        match = LINES.match(lines)
        if not match:
            prefill.problem = f"{lines!r} is not a line range: use 7 or 7-8."
            return prefill
        start = int(match.group(1))
        end = int(match.group(2) or start)
        item.update(start_line=start, end_line=end)
        prefill.location_line = start
        if kind == Evidence.Kind.SNIPPET and commit and path:
            try:
                # Only a SHA is looked for in the mirror: the query is anyone's text.
                wanted = [commit] if SHA_TEXT.fullmatch(commit) else []
                with repository_reader_holding(pull_request.repository, wanted) as reader:
                    item["text"] = snippet_text_at(reader, commit, path, start, end)
            except RecheckError as error:
                prefill.problem = (
                    f"The lines could not be read at {commit[:12]}: {error}. Type the code in, or leave it empty "
                    "to have it read when the pull request is verified."
                )
    return prefill


def check_prefill(query) -> Prefill:
    """A check item naming one failure at a commit, as the pages' list of new failures sends it:
    `commit`, `check`, and `app`, `tests` (a test id) or `results` (`rule path:line`) when given.
    The values go to the form as they are; saving checks them with the bundle format."""
    values = {name: query.get(name, "").strip() for name in ("commit", "check", "app", "tests", "results")}
    item = {**blank_evidence(Evidence.Kind.CHECK), **values}
    check = values["check"]
    if values["tests"]:
        title = f"{values['tests']} fails in {check}"
    elif values["results"]:
        title = f"{values['results']} reported by {check}"
    else:
        title = f"{check} fails" if check else ""
    place = result_item(values["results"]) if values["results"] else {}
    return Prefill(evidence=item, location_path=place.get("path", ""), location_line=place.get("start_line"),
                   title=title[:300], caught_by=Finding.CaughtBy.CI if check else "")
