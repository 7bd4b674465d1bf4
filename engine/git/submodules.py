"""Which repository a submodule comes from: ``.gitmodules`` at a commit, read by ``git config``,
and the URL rules that tell two spellings of one repository apart from two repositories."""

from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass
from urllib.parse import urlsplit

from core.errors import RepositoryError
from engine.git.process import run_git, stderr_text
from engine.git.reader import GitReader

_KEY = re.compile(r"^submodule\.(?P<name>.+)\.(?P<field>path|url|branch)$")
_SCP_LIKE = re.compile(r"^(?:[^@/:]+@)?(?P<host>[^/:]+):(?P<path>[^/].*)$")


@dataclass(frozen=True)
class Submodule:
    name: str
    path: str
    url: str
    branch: str = ""


def submodules_at(reader: GitReader, commit: str) -> dict[str, Submodule]:
    """Submodule path -> what ``.gitmodules`` at ``commit`` says of it ({} without the file).

    ``git config --blob`` parses the file, so quoting, includes-free sections and odd spacing are
    read exactly as ``git submodule`` would read them."""
    entry = reader.tree_entry(commit, ".gitmodules")
    if entry is None or entry.type != "blob":
        return {}
    completed = run_git(["config", "--null", f"--blob={entry.sha}", "--list"], git_dir=reader.git_dir)
    if completed.returncode != 0:
        raise RepositoryError(
            f".gitmodules at {reader.resolve(commit)[:8]} cannot be read: {stderr_text(completed)}; fix the file"
        )
    fields: dict[str, dict[str, str]] = {}
    for record in completed.stdout.decode("utf-8", "replace").split("\0"):
        key, _, value = record.partition("\n")
        match = _KEY.match(key)
        if match:
            fields.setdefault(match.group("name"), {})[match.group("field")] = value
    found = {}
    for name, values in fields.items():
        if values.get("path") and values.get("url"):
            path = values["path"].strip("/")
            found[path] = Submodule(name=name, path=path, url=values["url"], branch=values.get("branch", ""))
    return found


def absolute_submodule_url(url: str, *, superproject_url: str) -> str:
    """A ``.gitmodules`` URL as a clone URL: ``../Bridge.git`` is relative to the superproject's
    own URL, as git resolves it."""
    if not url.startswith(("./", "../")):
        return url
    base = superproject_url.rstrip("/")
    scp = _SCP_LIKE.match(base) if "://" not in base else None
    if scp:
        prefix, path = base[: scp.start("path")], scp.group("path")
    elif "://" in base:
        parts = urlsplit(base)
        prefix, path = f"{parts.scheme}://{parts.netloc}", parts.path
    else:
        prefix, path = "", base
    joined = posixpath.normpath(posixpath.join(path, url))
    if "://" in prefix and not joined.startswith("/"):
        joined = "/" + joined
    return prefix + joined


def _host_and_path(url: str) -> tuple[str, str]:
    url = url.strip()
    if "://" in url:
        parts = urlsplit(url)
        host, path = (parts.hostname or "").lower(), parts.path
    else:
        scp = _SCP_LIKE.match(url)
        if scp and "/" not in url.split(":", 1)[0]:
            host, path = scp.group("host").lower(), scp.group("path")
        else:
            host, path = "", url
    path = path.rstrip("/")
    if path.endswith(".git"):
        # A local work tree's `.git` directory is the same repository as the work tree.
        path = path[: -len(".git")].rstrip("/")
    return host, path


def url_key(url: str) -> str:
    """What two clone URLs of one repository have in common: host (lower case) and path, without
    the scheme, the user, a trailing ``.git`` or slash. ``git@github.com:o/n.git`` and
    ``https://github.com/o/n`` give the same key; a local path keeps its whole path."""
    host, path = _host_and_path(url)
    return f"{host}/{path.strip('/')}" if host else posixpath.normpath(path or "/")


def slug_for_url(url: str) -> str:
    """owner/name from a clone URL's last two path segments (``.git`` dropped)."""
    segments = [segment for segment in _host_and_path(url)[1].split("/") if segment]
    if len(segments) < 2:
        raise RepositoryError(f"{url!r} does not end in owner/name; register the repository by hand")
    return f"{segments[-2]}/{segments[-1]}"
