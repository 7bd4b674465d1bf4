"""Snippet evidence: are these lines of code still there at the target, and where?

The search looks where a reviewer would, in order:

1. the same lines of the same file;
2. elsewhere in the same file (several occurrences: the one the diff maps
   the original lines to);
3. the same, in the file's new name if git sees it renamed;
4. the same two steps ignoring a change of indentation;
5. in the other files changed between the evidence commit and the target
   (code moved to another module);

and otherwise the snippet is gone, with what replaced it when the diff from the evidence commit
tells (its successor: ``successors``). Lines compare with trailing whitespace removed, and CRLF
equals LF.
"""

from __future__ import annotations

from dataclasses import replace

from core.errors import RecheckError
from engine.git import GitReader, validate_repo_path

from engine.verification.corpus import Corpus
from engine.verification.filetexts import FileText, Needle
from engine.verification.paths import current_path
from engine.verification.results import CheckResult, gone, holds
from engine.verification.specs import EvidenceSpec
from engine.verification.successors import NEAR_FILES, Replaced, anchor_lines, recorded_position
from engine.verification.textcaches import TextCache, cache_for


def snippet_text_at(reader: GitReader, commit: str, path: str, start: int, end: int | None = None) -> str:
    """The text of lines ``start``..``end`` (1-based, inclusive) of ``path`` at ``commit``.

    Line ends come back as LF, without a final newline. Raises RecheckError
    when the commit, file or lines do not exist or the file is not text.
    """
    sha = reader.resolve(commit)
    path = validate_repo_path(path)
    end = start if end is None else end
    if not _is_line_number(start) or not _is_line_number(end) or end < start:
        raise RecheckError(
            f"lines {start!r}-{end!r} are not a valid range; give 1-based line numbers with start <= end"
        )
    file = cache_for(reader).file(reader, sha, path)
    if file is None:
        raise RecheckError(f"{path} does not exist at commit {sha[:12]}; check the path and the commit")
    file.require_text()
    if end > len(file.lines):
        raise RecheckError(
            f"{path} has {len(file.lines)} lines at commit {sha[:12]}, so lines {start}-{end} "
            "do not exist; check the line numbers"
        )
    return "\n".join(file.lines[start - 1 : end])


def check_snippet(reader: GitReader, spec: EvidenceSpec, target: str, *, successors: bool = True) -> CheckResult:
    search = snippet_search(reader, spec, target, successors=successors)
    found = search.in_place()
    if found is not None:
        return found
    corpus = search.corpus
    [found], [held] = corpus.search(
        reader, [(search.needle, search.exclude)], [search.anchors], limit=NEAR_FILES
    )
    result = search.elsewhere(found)
    if search.near_wanted is not None:
        result = search.near(corpus.texts(reader, held))
    return result


def snippet_search(reader: GitReader, spec: EvidenceSpec, target: str, *, successors: bool = True) -> SnippetSearch:
    """The search for one snippet at ``target``, in two steps, so that the search of the other
    changed files (the costly one) can be done for many snippets at once."""
    if not spec.path:
        raise RecheckError("snippet evidence needs the path of the file it quotes")
    path = validate_repo_path(spec.path)
    if spec.start_line is not None and not _is_line_number(spec.start_line):
        raise RecheckError(f"start line {spec.start_line!r} is not a line number; give a number from 1")
    target_sha = reader.resolve(target)
    commit = reader.resolve(spec.commit) if spec.commit else None
    text = spec.text
    if text and not isinstance(text, str):
        raise RecheckError("the snippet text must be a string")
    if not text:
        if commit is None or spec.start_line is None:
            raise RecheckError(
                "snippet evidence has neither text nor a commit and lines to read it from; record the snippet"
            )
        text = snippet_text_at(reader, commit, path, spec.start_line, spec.end_line)
    search = SnippetSearch(reader, cache_for(reader), commit, target_sha, path, spec.start_line, Needle(text))
    search.successors = successors
    return search


def _is_line_number(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 1


class SnippetSearch:
    """One snippet looked up at one target commit: ``in_place`` looks in its file (steps 1-4);
    when that finds nothing to report, ``elsewhere`` takes what ``corpus.matches`` found."""

    def __init__(
        self,
        reader: GitReader,
        cache: TextCache,
        commit: str | None,
        target: str,
        path: str,
        start: int | None,
        needle: Needle,
    ) -> None:
        self.reader = reader
        self.cache = cache
        self.commit = commit
        self.target = target
        self.path = path
        self.start = start
        self.needle = needle
        self.exclude: str | None = None
        self.corpus: Corpus | None = None
        self._current: FileText | None = None
        self._renamed_from: str | None = None
        # Whether a gone snippet is given its successor, and, while the near copy of its lines is
        # still to be looked for in the changed files, the lines (``near`` takes the answer).
        self.successors = True
        self.near_wanted: Replaced | None = None
        self._gone_result: CheckResult | None = None

    def in_place(self) -> CheckResult | None:
        """The result from the snippet's own file, or None when the files changed since the
        evidence commit (``corpus``) must be searched, leaving out ``exclude``."""
        where, self._renamed_from = current_path(self.reader, self.commit, self.target, self.path)
        self._current = self.cache.file(self.reader, self.target, where) if where else None
        self.exclude = where
        if self._current is not None:
            self._current.require_text()
            found = self._in_file(self._current, where, self._renamed_from)
            if found is not None:
                return found
        if self.commit is None:
            return self._gone()
        self.corpus = self.cache.corpus(self.reader, self.commit, self.target)
        return None

    def elsewhere(self, found: tuple[str, int, bool] | None) -> CheckResult:
        """The result, given what ``corpus.matches`` found for the needle outside its file."""
        if found is None:
            return self._gone()
        path, position, loose = found
        origin = f"{self.path}:{self.start}" if self.start is not None else self.path
        detail = f"moved from {origin} to {path}:{position + 1}"
        return self._holds(path, position, detail + ("; re-indented" if loose else ""))

    @property
    def anchors(self) -> list[str]:
        """The lines a near copy of the snippet is anchored on, if it turns out gone with its
        lines removed (``successors.anchor_lines``); none when successors are left out."""
        return anchor_lines(self.needle.stripped) if self.successors and self.commit is not None else []

    def diff_wanted(self, found: tuple[str, int, bool] | None) -> str | None:
        """The path whose diff from the evidence commit ``elsewhere(found)`` will read to tell
        the successor (when the snippet stayed gone in a file of the same name), so that many
        items' diffs can be worked out together first (``TextCache.prefetch_line_changes``)."""
        if found is not None or not self.successors or self.commit is None or self._current is None:
            return None
        return self.path if self.exclude == self.path else None

    def near(self, candidates) -> CheckResult:
        """The gone result with its successor, given the files that may hold a near copy of its
        lines (those ``Corpus.search`` found holding its ``anchors``)."""
        assert self._gone_result is not None and self.near_wanted is not None
        return replace(self._gone_result, successor=self.near_wanted.near(candidates))

    def _gone(self) -> CheckResult:
        if self._current is not None:
            was = f" (renamed from {self._renamed_from})" if self._renamed_from else ""
            result = gone(self.exclude, f"no longer in {self.exclude}{was}")
        elif self.commit is None:
            return gone(self.path, f"{self.path} does not exist at {self.target[:12]}")
        else:
            result = gone(self.path, f"{self.path} was deleted")
        if not self.successors or self.commit is None:
            return result
        try:
            replaced = self._replaced()
            if replaced is None:
                return result
            hunks = old_length = None
            if self._current is not None:
                before = self.cache.file(self.reader, self.commit, self.path)
                assert before is not None  # _replaced found the lines in it
                hunks, old_length = self.cache.line_changes(self.reader, before, self._current), len(before.lines)
        except (RecheckError, OSError):
            # The snippet is gone all the same; only what replaced it cannot be told.
            return result
        successor = replaced.in_file(hunks, old_length or 0, self._current, self.exclude)
        if replaced.wants_near:
            self.near_wanted, self._gone_result = replaced, result
        return replace(result, successor=successor)

    def _replaced(self) -> Replaced | None:
        """The snippet's lines in its file at the evidence commit, or None when that file does not
        hold them (text recorded elsewhere, or a file that is no text)."""
        assert self.commit is not None
        before = self.cache.file(self.reader, self.commit, self.path)
        if before is None or before.problem:
            return None
        position = recorded_position(before, self.needle, self.start)
        if position is None:
            return None
        return Replaced(self.path, position + 1, list(before.lines[position : position + len(self.needle)]))

    def _in_file(self, current: FileText, where: str, renamed_from: str | None) -> CheckResult | None:
        for loose in (False, True):
            position = self._position_in(current, loose=loose)
            if position is not None:
                parts = [f"file renamed from {renamed_from} to {where}"] if renamed_from else []
                if loose:
                    parts.append("re-indented")
                new_line = position + 1
                if self.start is None:
                    parts.append(f"found at line {new_line}")
                elif new_line != self.start:
                    parts.append(f"moved from line {self.start} to line {new_line}")
                return self._holds(where, position, "; ".join(parts) or "unchanged")
        return None

    def _position_in(self, current: FileText, *, loose: bool) -> int | None:
        """0-based start of the best occurrence in ``current``, or None."""
        old = self.start - 1 if self.start is not None else None
        if old is not None and current.matches_at(self.needle, old, loose=loose) and self._unique(current, loose):
            return old  # the common case: untouched, and nothing to choose between
        positions = current.occurrences(self.needle, loose=loose)
        if not positions:
            return None
        if len(positions) == 1:
            return positions[0]
        expected = self._expected_position(current)
        return min(positions, key=lambda position: (abs(position - expected), position))

    def _unique(self, current: FileText, loose: bool) -> bool:
        """Cheaply rule out duplicates: does the needle's longest line occur only once?"""
        lines = self.needle.stripped if loose else self.needle.keys
        return current.count_line(lines[self.needle.longest], loose=loose) == 1

    def _expected_position(self, current: FileText) -> int:
        """Where the diff from the evidence commit puts the original first line (0-based).

        Without an evidence commit (or its file) this is the recorded position.
        """
        old = self.start - 1 if self.start is not None else 0
        if self.commit is None:
            return old
        before = self.cache.file(self.reader, self.commit, self.path)
        if before is None or before.problem:
            return old
        return self.cache.line_map(self.reader, before, current).map(old)

    def _holds(self, path: str, position: int, detail: str) -> CheckResult:
        return holds(path, detail, position + 1, position + len(self.needle))
