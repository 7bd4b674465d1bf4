"""The code browser's diff view: what changed between any two commits pinned to a pull request,
file by file, with the PR's findings placed on the lines they sit on (at the newer commit on the
lines it has, at the older one on the lines it removed). Read from the mirror through the git
layer; only pinned commits are compared."""
from dataclasses import dataclass, field

from django.utils.safestring import SafeString, mark_safe

from engine.git.diffs import CommitDiff, FileDiff, Hunk, commit_diff
from findings.selectors.code_marks import LineMark, finding_line_marks
from reviews.models import PinnedCommit, PullRequest
from core.errors import AmbiguousCommit, CommitNotFound
from web.code_browser import CodeUnavailable, PinLink, code_pins, code_reader, code_url, finding_marker, pinned_commit

# Lines of diff shown on one page; the files past it are listed without their lines.
MAX_DIFF_LINES = 20_000


@dataclass
class DiffRow:
    kind: str
    text: str
    old: int | None
    new: int | None
    marks: SafeString | str = ""
    marked: bool = False


@dataclass
class DiffHunk:
    header: str
    rows: list[DiffRow]


@dataclass
class DiffFile:
    diff: FileDiff
    anchor: str
    old_url: str
    new_url: str
    hunks: list[DiffHunk]
    marks: list[LineMark] = field(default_factory=list)
    cut: bool = False


@dataclass
class CodeDiffPage:
    pull_request: PullRequest
    pins: list[PinnedCommit]
    old: PinnedCommit
    new: PinnedCommit
    old_sha: str
    new_sha: str
    files: list[DiffFile]
    files_cut: int = 0

    @property
    def added(self) -> int:
        return sum(file.diff.added for file in self.files)

    @property
    def removed(self) -> int:
        return sum(file.diff.removed for file in self.files)

    @property
    def marked_files(self) -> int:
        return sum(bool(file.marks) for file in self.files)


def code_diff_page(pull_request: PullRequest, *, old: str = "", new: str = "") -> CodeDiffPage:
    """The changes from the pinned commit `old` to the pinned commit `new` (by default from the
    base pin, or the first, to the latest). Raises CodeUnavailable for a commit not pinned."""
    pins = code_pins(pull_request)
    if not pins:
        raise CodeUnavailable(
            "No commit is pinned yet",
            f"The diff view compares commits pinned to {pull_request.reference}, and none is pinned yet.",
        )
    base = next((pin for pin in pins if pin.role == PinnedCommit.Role.BASE), pins[0])
    old_pin = pinned_commit(pull_request, pins, old) if old else base
    new_pin = pinned_commit(pull_request, pins, new) if new else pins[-1]
    with code_reader(pull_request, [old_pin.commit.sha, new_pin.commit.sha]) as reader:
        try:
            old_sha, new_sha = reader.resolve(old_pin.commit.sha), reader.resolve(new_pin.commit.sha)
        except (AmbiguousCommit, CommitNotFound) as error:
            raise CodeUnavailable(
                "The mirror does not have this commit",
                f"{error}. Verify now on the pull request's page fetches the repository again; or choose other pins:",
                pins=[PinLink(pin=pin, url=code_url(pull_request, pin.commit.sha)) for pin in pins],
            ) from error
        diff: CommitDiff = commit_diff(reader, old_sha, new_sha, max_lines=MAX_DIFF_LINES)
    new_marks = finding_line_marks(pull_request, sha=new_sha, paths=[file.path for file in diff.files])
    old_marks = finding_line_marks(pull_request, sha=old_sha,
                                   paths=[file.old_path or file.path for file in diff.files])
    files = []
    for index, file in enumerate(diff.files):
        at_new = new_marks.get(file.path, []) if file.status != "deleted" else []
        at_old = old_marks.get(file.old_path or file.path, [])
        files.append(DiffFile(
            diff=file, anchor=f"file-{index + 1}",
            old_url="" if file.status == "added" else code_url(pull_request, old_sha, file.old_path or file.path),
            new_url="" if file.status == "deleted" else code_url(pull_request, new_sha, file.path),
            hunks=[_hunk(hunk, at_old=at_old, at_new=at_new) for hunk in file.hunks],
            marks=_unique(at_new + at_old),
            cut=index >= len(diff.files) - diff.files_cut,
        ))
    return CodeDiffPage(pull_request=pull_request, pins=pins, old=old_pin, new=new_pin, old_sha=old_sha,
                        new_sha=new_sha, files=files, files_cut=diff.files_cut)


def _hunk(hunk: Hunk, *, at_old: list[LineMark], at_new: list[LineMark]) -> DiffHunk:
    """The hunk's rows, each finding's marker on the first of its lines the hunk shows: a line the
    newer commit has is placed by the findings there, a removed line by those at the older one."""
    shown: set[tuple] = set()
    rows = []
    for line in hunk.lines:
        number, marks = (line.old, at_old) if line.kind == "removed" else (line.new, at_new)
        covering = [mark for mark in marks if number is not None and number in mark.lines]
        fresh = [mark for mark in covering if (mark.number, mark.start, line.kind == "removed") not in shown]
        shown.update((mark.number, mark.start, line.kind == "removed") for mark in fresh)
        rows.append(DiffRow(kind=line.kind, text=line.text, old=line.old, new=line.new,
                            marks=mark_safe("".join(finding_marker(mark) for mark in fresh)), marked=bool(covering)))
    return DiffHunk(header=hunk.header, rows=rows)


def _unique(marks: list[LineMark]) -> list[LineMark]:
    seen, unique = set(), []
    for mark in sorted(marks, key=lambda mark: (mark.number, mark.start)):
        if mark.number not in seen:
            seen.add(mark.number)
            unique.append(mark)
    return unique
