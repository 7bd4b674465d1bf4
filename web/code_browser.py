"""What the code browser shows: the files of a repository at a commit pinned to a pull request
(those the PR changes first), and one file highlighted with numbered, selectable lines. Everything
is read from the repository's mirror through the git layer, never from a checkout; a commit that is
not pinned to the PR is not shown, whatever the mirror holds."""
import logging
import posixpath
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from urllib.parse import quote

from django.urls import reverse
from django.utils.html import format_html
from django.utils.http import urlencode
from django.utils.safestring import SafeString, mark_safe

from findings.models import Finding
from findings.selectors.code_marks import LineMark, finding_line_marks
from presentation.rendering.highlight import highlight_file
from core.errors import AmbiguousCommit, CommitNotFound, RepositoryError, UnsafePath
from engine.git import GitReader, validate_repo_path
from engine.git.trees import ChangedFile, FileRead, TreeFile, changed_files, read_file, tree_files
from reviews.mirrors import repository_reader_holding
from reviews.models import PinnedCommit, PullRequest, is_sha

logger = logging.getLogger(__name__)

# What Django's reverse() leaves unquoted in a path argument, so our URLs match the ones it makes.
_PATH_SAFE = "!$&'()*+,;=/~:@"
# A file of a million empty lines fits RECHECK_MAX_BLOB_BYTES and would still be a page of a
# hundred megabytes: past this many lines the file is not shown.
MAX_LINES = 100_000
# A listing of a monorepo's 100,000 files is a page nobody reads and every browser struggles with:
# past this many rows the page lists the directories to open instead of the rest.
MAX_TREE_ROWS = 2_000


class CodeUnavailable(Exception):
    """Why the code browser cannot show what was asked, and what to do: shown as a page of its
    own with `status`, listing the PR's pinned commits (`pins`) to choose from when that helps."""

    def __init__(self, title: str, message: str, *, status: int = 404, pins: list | None = None) -> None:
        super().__init__(message)
        self.title = title
        self.message = message
        self.status = status
        self.pins = pins or []


@dataclass(frozen=True)
class PinLink:
    """A pinned commit and where the code browser shows it (its tree, or the same file there)."""

    pin: PinnedCommit
    url: str
    current: bool = False


def shown_path(path: str | None) -> str:
    """A path as a page can show it: git keeps names that are not UTF-8 as they are (the git layer
    holds them with surrogate escapes), and a page is UTF-8 text."""
    return (path or "").encode("utf-8", "surrogateescape").decode("utf-8", "replace")


@dataclass(frozen=True)
class ChangedRow:
    change: ChangedFile
    # Where the file is: at this commit, or at the base for a deleted file.
    url: str

    @property
    def path(self) -> str:
        return shown_path(self.change.path)

    @property
    def old_path(self) -> str:
        return shown_path(self.change.old_path)


@dataclass(frozen=True)
class FileRow:
    file: TreeFile
    url: str  # "" for a submodule: its content is another repository's
    change: ChangedFile | None = None

    @property
    def path(self) -> str:
        return shown_path(self.file.path)

    @property
    def change_label(self) -> str:
        return shown_path(self.change.label) if self.change else ""


@dataclass
class CodeContext:
    """The pull request, the pinned commit shown and its full SHA, the base pin it is compared
    with, and where the browser's pages for that commit are."""

    pull_request: PullRequest
    pin: PinnedCommit
    sha: str
    pins: list[PinnedCommit]
    base_pin: PinnedCommit | None

    @property
    def short_sha(self) -> str:
        return self.sha[:8]

    @property
    def repository(self):
        return self.pull_request.repository

    @property
    def tree_url(self) -> str:
        return code_url(self.pull_request, self.sha)

    def file_url(self, path: str) -> str:
        return code_url(self.pull_request, self.sha, path)

    @property
    def base_url(self) -> str:
        return code_url(self.pull_request, self.base_pin.commit.sha) if self.base_pin is not None else ""

    @property
    def compare_url(self) -> str:
        """The diff view from the base pin (or the first) to this commit; from this one to the
        latest pin when this is that first one."""
        first = self.base_pin or (self.pins[0] if self.pins else None)
        if first is None or len(self.pins) < 2:
            return ""
        if first.pk == self.pin.pk:
            return diff_url(self.pull_request, self.sha, self.pins[-1].commit.sha)
        return diff_url(self.pull_request, first.commit.sha, self.sha)

    @property
    def is_base(self) -> bool:
        return self.base_pin is not None and self.base_pin.pk == self.pin.pk

    def crumbs(self, path: str) -> list[tuple[str, str]]:
        """(name, url) of each directory above `path`, from the repository root."""
        parts = path.split("/")[:-1] if path else []
        return [(part, self.file_url("/".join(parts[: index + 1])) + "/") for index, part in enumerate(parts)]


@dataclass
class CodeTreePage:
    code: CodeContext
    directory: str
    changed: list[ChangedRow]
    files: list[FileRow]
    pin_links: list[PinLink]
    # Why no change is listed, when none can be: no base pin, or this is the base.
    changes_note: str = ""
    # Past MAX_TREE_ROWS: how many files and changes are not listed, and the directories (path,
    # url, number of files) to open for them.
    file_total: int = 0
    changed_total: int = 0
    directories: list[tuple[str, str, int]] = field(default_factory=list)

    @property
    def file_count(self) -> int:
        return self.file_total or len(self.files)

    @property
    def files_left_out(self) -> int:
        return max(self.file_count - len(self.files), 0)

    @property
    def changes_left_out(self) -> int:
        return max(self.changed_total - len(self.changed), 0)

    @property
    def crumbs(self) -> list[tuple[str, str]]:
        return self.code.crumbs(self.directory)

    @property
    def leaf(self) -> str:
        return self.directory.rsplit("/", 1)[-1]


@dataclass
class CodeFilePage:
    code: CodeContext
    read: FileRead
    pin_links: list[PinLink]
    change: ChangedFile | None
    highlighted: SafeString | str = ""
    line_count: int = 0
    too_many_lines: bool = False
    # The PR's findings a selection can be added to as evidence (only for users who may write).
    findings: list[Finding] = field(default_factory=list)
    # The PR's findings on lines of this file at this commit, marked in the gutter.
    marks: list[LineMark] = field(default_factory=list)

    @property
    def path(self) -> str:
        return self.read.path

    @property
    def name(self) -> str:
        return self.read.path.rsplit("/", 1)[-1]

    @property
    def crumbs(self) -> list[tuple[str, str]]:
        return self.code.crumbs(self.read.path)

    @property
    def link_target_url(self) -> str:
        """Where a symbolic link points, when that is a path inside the repository."""
        if self.read.kind != "symlink":
            return ""
        directory = self.read.path.rsplit("/", 1)[0] if "/" in self.read.path else ""
        target = posixpath.normpath(posixpath.join(directory, self.read.blob.text.strip()))
        try:
            return self.code.file_url(validate_repo_path(target))
        except UnsafePath:
            return ""

    @property
    def forge_link(self) -> str:
        return self.code.repository.permalink(self.code.sha, self.read.path)


def finding_marker(mark: LineMark) -> SafeString:
    """A finding's link in the gutter: its number, with its kind, title and lines to read."""
    where = f"line {mark.start}" if mark.start == mark.end else f"lines {mark.start}–{mark.end}"
    return format_html(
        '<a class="finding-marker finding-marker-{}" href="{}" title="{} {}: {} ({})" aria-label="{} {}: {}, {}">{}</a>',
        mark.kind, mark.url, mark.kind_label, mark.number, mark.title, where,
        mark.kind_label, mark.number, mark.title, where, mark.number,
    )


def gutter_marks(marks: list[LineMark]) -> tuple[dict[int, SafeString], set[int]]:
    """The gutter's links to the findings, at the first line of each one's range, and every line
    the findings cover (shaded)."""
    gutter: dict[int, list[str]] = {}
    marked: set[int] = set()
    for mark in marks:
        gutter.setdefault(mark.start, []).append(finding_marker(mark))
        marked.update(mark.lines)
    return {line: mark_safe("".join(links)) for line, links in gutter.items()}, marked


def diff_url(pull_request: PullRequest, old_sha: str, new_sha: str) -> str:
    """The diff view from the pinned commit `old_sha` to `new_sha`."""
    repository = pull_request.repository
    base = reverse("findings:code_diff", kwargs={"owner": repository.owner, "name": repository.name,
                                                 "number": pull_request.number})
    return f"{base}?{urlencode({'from': old_sha, 'to': new_sha})}"


def code_url(pull_request: PullRequest, sha: str, path: str = "") -> str:
    """The code browser's URL of `path` at `sha` (the tree without a path)."""
    repository = pull_request.repository
    base = reverse(
        "findings:code_tree",
        kwargs={"owner": repository.owner, "name": repository.name, "number": pull_request.number, "sha": sha},
    )
    # Names git holds that are not UTF-8 go out as their own bytes, percent-encoded.
    return base + quote(path, safe=_PATH_SAFE, errors="surrogateescape") if path else base


def code_pins(pull_request: PullRequest) -> list[PinnedCommit]:
    """The PR's pins with their commits, in the order they were pinned."""
    return list(PinnedCommit.objects.filter(pull_request=pull_request).select_related("commit").in_order())


def pinned_commit(pull_request: PullRequest, pins: list[PinnedCommit], sha: str) -> PinnedCommit:
    """The pin `sha` (full or abbreviated) names, or CodeUnavailable listing the pins."""
    wanted = sha.lower()
    links = [PinLink(pin=pin, url=code_url(pull_request, pin.commit.sha)) for pin in pins]
    if not pins:
        raise CodeUnavailable(
            "No commit is pinned yet",
            f"The code browser shows {pull_request.reference} at the commits pinned to it, and none is pinned yet. "
            "Import the review (or pin the PR's head) first.",
        )
    if not is_sha(wanted):
        raise CodeUnavailable(
            "Not a commit SHA",
            f"{sha[:80]!r} is not a commit SHA (7 to 40 hexadecimal digits). Choose one of the commits pinned "
            f"to {pull_request.reference}:",
            pins=links,
        )
    matches = [pin for pin in pins if pin.commit.sha.startswith(wanted) or wanted.startswith(pin.commit.sha)]
    if not matches:
        raise CodeUnavailable(
            "Not a commit of this pull request",
            f"{wanted} is not pinned to {pull_request.reference}; the code browser shows only the commits pinned "
            "to it. Choose one of them:",
            pins=links,
        )
    if len(matches) > 1:
        raise CodeUnavailable(
            "More than one pinned commit starts so",
            f"{wanted} is the start of {len(matches)} pinned commits; give more of the SHA, or choose one:",
            pins=[link for link in links if link.pin in matches],
        )
    return matches[0]


@contextmanager
def code_reader(pull_request: PullRequest, commits: list[str]) -> Iterator[GitReader]:
    """A reader over this host's mirror, holding `commits` (fetched first when it lacks them), its
    read errors turned into pages that say what to do. Git's own messages name the mirror's place
    on this server: they go to the log, not to the page."""
    repository = pull_request.repository
    try:
        reader = repository_reader_holding(repository, commits)
    except RepositoryError as error:
        raise CodeUnavailable(
            "This repository is not fetched yet",
            f"{error} A verification fetches it: Verify now on the pull request's page does (Reviewers may start "
            "one), and the code is here once it has run.",
        ) from error
    try:
        with reader:
            yield reader
    except RepositoryError as error:
        logger.warning("Reading the mirror of %s for the code browser failed: %s", repository.slug, error)
        raise CodeUnavailable(
            "The mirror could not be read",
            f"The mirror of {repository.slug} could not be read just now. Retry in a moment; if it keeps failing, "
            "staff can fetch the repository again from the admin.",
            status=503,
        ) from error


def _context(pull_request: PullRequest, sha: str, reader: GitReader, pins: list[PinnedCommit]) -> CodeContext:
    pin = pinned_commit(pull_request, pins, sha)
    base_pin = next((candidate for candidate in pins if candidate.role == PinnedCommit.Role.BASE), None)
    repository = pull_request.repository
    try:
        full = reader.resolve(pin.commit.sha)
    except AmbiguousCommit as error:
        raise CodeUnavailable(
            "The pinned SHA is ambiguous in the mirror", f"{error}; ask a maintainer to pin the full SHA."
        ) from error
    except CommitNotFound as error:
        raise CodeUnavailable(
            "The mirror does not have this commit",
            f"The mirror of {repository.slug} has no commit {pin.commit.sha}: it may have been force-pushed away "
            "before it was fetched. Verify now on the pull request's page fetches the repository again; or "
            "choose another pinned commit:",
            pins=[PinLink(pin=other, url=code_url(pull_request, other.commit.sha)) for other in pins if other != pin],
        ) from error
    return CodeContext(pull_request=pull_request, pin=pin, sha=full, pins=pins, base_pin=base_pin)


def _commits_read(pull_request: PullRequest, pins: list[PinnedCommit], sha: str) -> list[str]:
    """The commits a page at the pin `sha` reads: that pin's and the base pin's (for its changes)."""
    shown = pinned_commit(pull_request, pins, sha)
    return [pin.commit.sha for pin in pins if pin == shown or pin.role == PinnedCommit.Role.BASE]


def _pin_links(code: CodeContext, path: str = "") -> list[PinLink]:
    return [
        PinLink(pin=pin, url=code_url(code.pull_request, pin.commit.sha, path), current=pin.pk == code.pin.pk)
        for pin in code.pins
    ]


def _changes(code: CodeContext, reader: GitReader) -> tuple[list[ChangedFile], str]:
    if code.base_pin is None:
        return [], "No base commit is pinned to this pull request, so the files it changes cannot be told apart."
    if code.is_base:
        return [], "This is the pull request's base commit: the files it changes are listed at its later pins."
    return changed_files(reader, code.base_pin.commit.sha, code.sha), ""


def code_tree_page(pull_request: PullRequest, *, sha: str, directory: str = "") -> CodeTreePage:
    """The files at the pinned commit `sha` (under `directory` when given), those the PR changes
    since its base pin first, with their status. Raises CodeUnavailable."""
    pins = code_pins(pull_request)
    with code_reader(pull_request, _commits_read(pull_request, pins, sha)) as reader:
        code = _context(pull_request, sha, reader, pins)
        return _tree_page(code, reader, directory=directory)


def _tree_page(code: CodeContext, reader: GitReader, *, directory: str) -> CodeTreePage:
    changes, note = _changes(code, reader)
    prefix = f"{directory}/" if directory else ""
    by_path = {change.path: change for change in changes}
    changed = []
    for change in changes:
        if not change.path.startswith(prefix):
            continue
        if change.status == "deleted" and code.base_pin is not None:
            url = code_url(code.pull_request, code.base_pin.commit.sha, change.path)
        else:
            url = code.file_url(change.path)
        changed.append(ChangedRow(change=change, url=url))
    tree = code.tree_url
    files = [
        FileRow(
            file=entry,
            url="" if entry.is_submodule else tree + quote(entry.path, safe=_PATH_SAFE, errors="surrogateescape"),
            change=by_path.get(entry.path),
        )
        for entry in tree_files(reader, code.sha)
        if entry.path.startswith(prefix)
    ]
    directories = []
    if len(files) > MAX_TREE_ROWS:
        counts = Counter(row.file.path[len(prefix):].split("/", 1)[0] for row in files if "/" in row.file.path[len(prefix):])
        directories = [
            (f"{prefix}{name}", tree + quote(f"{prefix}{name}", safe=_PATH_SAFE, errors="surrogateescape"), count)
            for name, count in sorted(counts.items())
        ]
    return CodeTreePage(
        code=code, directory=directory, changed=changed[:MAX_TREE_ROWS], files=files[:MAX_TREE_ROWS],
        pin_links=_pin_links(code, f"{directory}/" if directory else ""), changes_note=note,
        file_total=len(files), changed_total=len(changed), directories=directories,
    )


def code_file_page(
    pull_request: PullRequest, *, sha: str, path: str, with_findings: bool = False
) -> CodeFilePage | CodeTreePage:
    """The file at `path` in the pinned commit `sha`, highlighted; a directory's files as a tree
    page. `with_findings` also loads the PR's findings for the selection's "add as evidence".
    Raises CodeUnavailable for a path that leaves the repository or is not in the tree."""
    pins = code_pins(pull_request)
    with code_reader(pull_request, _commits_read(pull_request, pins, sha)) as reader:
        code = _context(pull_request, sha, reader, pins)
        try:
            read = read_file(reader, code.sha, path)
        except UnsafePath as error:
            raise CodeUnavailable(
                "Not a path in the repository",
                f"{error}. The code browser shows only files inside the repository; start from its files:",
                pins=[PinLink(pin=code.pin, url=code.tree_url)],
            ) from error
        if read.kind == "directory":
            return _tree_page(code, reader, directory=read.path)
        if read.kind == "missing":
            raise CodeUnavailable(
                "No such file at this commit",
                f"There is no {read.path} in {pull_request.repository.slug} at {code.short_sha}. It may have been "
                "added, renamed or deleted at another pinned commit: look for it in the files of one of them:",
                pins=_pin_links(code),
            )
        changes, _ = _changes(code, reader)
    change = next((change for change in changes if change.path == read.path and change.status != "deleted"), None)
    page = CodeFilePage(code=code, read=read, pin_links=_pin_links(code, read.path), change=change)
    if read.kind == "text":
        text = read.blob.text
        page.line_count = text.count("\n") + (0 if text.endswith("\n") or not text else 1)
        if page.line_count > MAX_LINES:
            page.too_many_lines = True
        elif page.line_count:
            page.marks = finding_line_marks(pull_request, sha=code.sha, paths=[read.path]).get(read.path, [])
            gutter, marked = gutter_marks(page.marks)
            page.highlighted = highlight_file(text, path=read.path, gutter=gutter if page.marks else None,
                                              marked=marked)
            if with_findings:
                page.findings = list(
                    Finding.objects.for_pull_request(pull_request).order_by("number").only("id", "number", "title")
                )
    return page
