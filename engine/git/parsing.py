"""What git says, in bytes, parsed into the reader's values: raw tree and commit objects (read
through cat-file), the ``-z`` listings of ``ls-tree`` and ``diff-tree --name-status`` (git's rename
detection), and the hunk headers of a ``-U0`` diff."""

from __future__ import annotations

import re
from datetime import datetime, timedelta, timezone

from engine.git.objects import Change, CommitInfo


def _decode_path(raw: bytes) -> str:
    # surrogateescape keeps non-UTF-8 names intact for the way back to git.
    return raw.decode("utf-8", "surrogateescape")


def parse_tree(data: bytes, *, raw_len: int) -> dict[str, tuple[str, str, str]]:
    """Parse a raw tree object: repeated ``<mode> <name>\\0<raw object id>``."""
    entries: dict[str, tuple[str, str, str]] = {}
    pos = 0
    while pos < len(data):
        space = data.index(b" ", pos)
        nul = data.index(b"\0", space)
        raw_mode = data[pos:space]
        mode = _MODES.get(raw_mode) or raw_mode.decode("ascii").zfill(6)
        end = nul + 1 + raw_len
        if end > len(data):
            raise ValueError("truncated entry")
        entries[_decode_path(data[space + 1 : nul])] = (mode, _type_for_mode(mode), data[nul + 1 : end].hex())
        pos = end
    return entries


_MODES = {
    raw: raw.decode("ascii").zfill(6) for raw in (b"100644", b"100755", b"120000", b"40000", b"160000")
}


def _type_for_mode(mode: str) -> str:
    if mode == "040000":
        return "tree"
    if mode == "160000":
        return "commit"
    return "blob"


def parse_ls_tree(output: bytes) -> list[str]:
    paths = []
    for record in output.split(b"\0"):
        if not record:
            continue
        meta, _, path = record.partition(b"\t")
        if meta.split(b" ")[1] == b"blob":
            paths.append(_decode_path(path))
    return paths


_HUNK_HEADER = re.compile(rb"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@", re.MULTILINE)


def parse_hunk_headers(output: bytes) -> list[tuple[int, int, int, int]]:
    return [
        (int(a), int(b) if b else 1, int(c), int(d) if d else 1)
        for a, b, c, d in _HUNK_HEADER.findall(output)
    ]


def parse_name_status(output: bytes) -> list[Change]:
    tokens = [_decode_path(token) for token in output.split(b"\0")]
    changes = []
    i = 0
    while i < len(tokens) and tokens[i]:
        status = tokens[i][0]
        if status in "RC":
            changes.append(Change(status, tokens[i + 1], tokens[i + 2]))
            i += 3
            continue
        path = tokens[i + 1]
        if status == "A":
            changes.append(Change(status, None, path))
        elif status == "D":
            changes.append(Change(status, path, None))
        else:
            changes.append(Change(status, path, path))
        i += 2
    return changes


def parse_commit(sha: str, raw: bytes) -> CommitInfo:
    header, _, body = raw.partition(b"\n\n")
    parents: list[str] = []
    fields: dict[bytes, bytes] = {}
    for line in header.split(b"\n"):
        if line.startswith(b" "):
            continue  # continuation of a multi-line header such as gpgsig
        key, _, value = line.partition(b" ")
        if key == b"parent":
            parents.append(value.decode("ascii"))
        else:
            fields.setdefault(key, value)
    encoding = fields.get(b"encoding", b"utf-8").decode("ascii", "replace")
    author, _ = _split_ident(fields.get(b"author", b""), encoding)
    _, committed_at = _split_ident(fields.get(b"committer", b""), encoding)
    return CommitInfo(
        sha=sha,
        message=_decode(body, encoding).rstrip("\n"),
        author=author,
        committed_at=committed_at,
        parents=tuple(parents),
    )


def _decode(raw: bytes, encoding: str) -> str:
    try:
        return raw.decode(encoding, "replace")
    except LookupError:
        return raw.decode("utf-8", "replace")


def _split_ident(raw: bytes, encoding: str) -> tuple[str, datetime]:
    """Split ``Name <email> 1700000000 +0100`` into the person and a tz-aware time."""
    person, _, when = raw.rpartition(b"> ")
    try:
        seconds, offset = when.split()
        sign = -1 if offset.startswith(b"-") else 1
        hours, minutes = int(offset[1:3]), int(offset[3:5])
        tz = timezone(sign * timedelta(hours=hours, minutes=minutes))
        moment = datetime.fromtimestamp(int(seconds), tz)
    except (ValueError, OverflowError, OSError):
        moment = datetime.fromtimestamp(0, timezone.utc)
    return _decode(person + b">", encoding) if person else _decode(raw, encoding), moment
