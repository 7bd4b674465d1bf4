"""Input validation that runs before any git process sees user input.

Everything here is pure string checking: no filesystem access except for
local clone sources (which must exist), and never a git call. Validators
return the normalised value so callers store what was actually checked.
"""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path
from urllib.parse import unquote, urlsplit

from reviews.git.errors import CommitNotFound, RepositoryError, UnsafePath

_MAX_URL = 2048
_MAX_REF = 255

_LABEL = r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?"
_HOST = rf"(?:{_LABEL}(?:\.{_LABEL})*|\[[0-9A-Fa-f:.]+\])"
_SSH_USER = r"[A-Za-z0-9_][A-Za-z0-9._~-]*"
_HTTPS_USERINFO = r"[A-Za-z0-9._~%!$&'()*+,;=][A-Za-z0-9._~%!$&'()*+,;=:-]*"
# git treats `<transport>::<address>` as "run git-remote-<transport>", which
# can execute arbitrary programs (ext::sh -c ...).
_REMOTE_HELPER = re.compile(r"^[A-Za-z0-9][A-Za-z0-9+.-]*::")
_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*)://")
_HOSTPORT = re.compile(rf"^(?P<host>{_HOST})(?::(?P<port>[0-9]{{1,5}}))?$")
_SCP_LIKE = re.compile(
    rf"^(?:(?P<user>{_SSH_USER})@)?(?P<host>{_HOST}):(?P<path>[^/].*|/.+)$"
)
_HEX_SHA = re.compile(r"^[0-9a-fA-F]{7,64}$")
_REF_CHARS = re.compile(r"^[A-Za-z0-9._/+-]+$")
_SLUG = re.compile(
    r"^(?P<owner>[A-Za-z0-9][A-Za-z0-9._-]{0,99})/(?P<name>[A-Za-z0-9._][A-Za-z0-9._-]{0,99})$"
)


def _has_control_or_space(text: str) -> bool:
    return any(ch.isspace() or not ch.isprintable() for ch in text)


_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


def _has_control(text: str) -> bool:
    return _CONTROL.search(text) is not None


def validate_clone_url(url: str, *, allow_local: bool) -> str:
    """Return ``url`` if git may fetch from it, else raise RepositoryError.

    Accepted: ``https://host/path``, ``ssh://[user@]host[:port]/path`` and
    scp-like ``user@host:path``. With ``allow_local`` also ``file://`` URLs
    and existing local directories, returned as an absolute path.
    """
    if not isinstance(url, str) or not url:
        raise RepositoryError("the repository URL is empty; give an https:// or ssh:// URL")
    if len(url) > _MAX_URL:
        raise RepositoryError(f"the repository URL is longer than {_MAX_URL} characters; check it")
    if _has_control_or_space(url):
        raise RepositoryError(
            "the repository URL contains whitespace or control characters; remove them"
        )
    if url.startswith("-"):
        raise RepositoryError(
            f"refusing repository URL {url!r}: it starts with '-' and would be read as a git option"
        )
    if _REMOTE_HELPER.match(url):
        raise RepositoryError(
            f"refusing repository URL {url!r}: '<helper>::' remote-helper URLs can run "
            "programs; give an https:// or ssh:// URL"
        )
    scheme = _SCHEME.match(url)
    if scheme:
        return _validate_url_with_scheme(url, scheme.group(1).lower(), allow_local=allow_local)
    scp = _SCP_LIKE.fullmatch(url)
    # git only reads `host:path` as scp-like when no slash precedes the colon.
    if scp and "/" not in url.split(":", 1)[0]:
        if scp.group("path").startswith("-"):
            raise RepositoryError(
                f"refusing repository URL {url!r}: the path part starts with '-'"
            )
        return url
    return _validate_local_path(url, allow_local=allow_local)


def _validate_url_with_scheme(url: str, scheme: str, *, allow_local: bool) -> str:
    if scheme == "https":
        _check_authority(url, user_pattern=_HTTPS_USERINFO)
        return url
    if scheme == "ssh":
        _check_authority(url, user_pattern=_SSH_USER)
        return url
    if scheme == "file":
        if not allow_local:
            raise RepositoryError(
                f"refusing {url!r}: file:// URLs are not allowed here; give an https:// or ssh:// URL"
            )
        parts = urlsplit(url)
        if parts.netloc not in ("", "localhost"):
            raise RepositoryError(f"refusing {url!r}: file:// URLs must not name a host")
        return _validate_local_path(unquote(parts.path), allow_local=True)
    if scheme == "http":
        raise RepositoryError(
            f"refusing {url!r}: plain http:// is not allowed because it is unencrypted; use https://"
        )
    raise RepositoryError(
        f"refusing {url!r}: the {scheme}:// scheme is not supported; use https:// or ssh://"
    )


def _check_authority(url: str, *, user_pattern: str) -> None:
    """Check the ``user@host:port`` part so nothing there can become an ssh option."""
    rest = url.split("://", 1)[1]
    authority, slash, path = rest.partition("/")
    user, at, hostport = authority.rpartition("@")
    if at and not re.fullmatch(user_pattern, user):
        raise RepositoryError(f"refusing {url!r}: the user part {user!r} is not a plain user name")
    match = _HOSTPORT.fullmatch(hostport)
    if not match:
        raise RepositoryError(
            f"refusing {url!r}: {hostport!r} is not a valid host name; check the URL"
        )
    port = match.group("port")
    if port is not None and not 0 < int(port) < 65536:
        raise RepositoryError(f"refusing {url!r}: port {port} is out of range")
    if not slash or not path.strip("/"):
        raise RepositoryError(f"refusing {url!r}: it names no repository path; give host/owner/name")


def _validate_local_path(url: str, *, allow_local: bool) -> str:
    if not allow_local:
        raise RepositoryError(
            f"refusing {url!r}: local paths are not allowed here; give an https:// or ssh:// URL"
        )
    path = Path(url)
    if not path.is_dir():
        raise RepositoryError(
            f"local repository {url!r} does not exist or is not a directory; check the path"
        )
    return str(path.resolve())


def validate_revision(rev: str) -> str:
    """Return ``rev`` if it is a hex SHA (7..64 digits) or a safe ref name.

    Raises CommitNotFound, since a malformed revision cannot name a commit.
    """
    if not isinstance(rev, str) or not rev:
        raise CommitNotFound("the revision is empty; give a commit SHA or a branch name")
    if rev.startswith("-"):
        raise CommitNotFound(
            f"refusing revision {rev!r}: it starts with '-' and would be read as a git option"
        )
    if _HEX_SHA.fullmatch(rev):
        return rev
    if len(rev) > _MAX_REF or not _is_safe_ref_name(rev):
        raise CommitNotFound(
            f"{rev!r} is neither a commit SHA (7 to 40 hex characters) nor a valid ref name; check it"
        )
    return rev


def _is_safe_ref_name(rev: str) -> bool:
    if not _REF_CHARS.fullmatch(rev) or ".." in rev or "//" in rev:
        return False
    if rev.startswith("/") or rev.endswith(("/", ".")):
        return False
    return not any(
        part.startswith(".") or part.endswith(".lock") for part in rev.split("/")
    )


def validate_repo_path(path: str) -> str:
    """Return ``path`` as a normalised posix path relative to the repository root.

    ``./a//b/`` becomes ``a/b``. Raises UnsafePath for empty, absolute or
    escaping (``..``) paths, control characters and a leading ``-``.
    """
    if not isinstance(path, str):
        raise UnsafePath(f"the path must be text, not {type(path).__name__}")
    return _normalise_path(path)


# Verification validates the same few thousand paths over and over.
@lru_cache(maxsize=65536)
def _normalise_path(path: str) -> str:
    return _normalise(path, what="path")


def validate_glob(pattern: str) -> str:
    """Like validate_repo_path, for glob patterns (``*``, ``?``, ``[...]``, ``**``)."""
    return _normalise(pattern, what="glob")


def _normalise(path: str, *, what: str) -> str:
    if not isinstance(path, str) or not path.strip():
        raise UnsafePath(f"the {what} is empty; give one relative to the repository root, e.g. src/app.py")
    if _has_control(path):
        raise UnsafePath(f"the {what} {path!r} contains control characters; remove them")
    if path.startswith(("/", "\\")) or re.match(r"^[A-Za-z]:[\\/]", path):
        raise UnsafePath(
            f"the {what} {path!r} is absolute; give it relative to the repository root"
        )
    parts = [part for part in path.split("/") if part not in ("", ".")]
    if ".." in parts:
        raise UnsafePath(
            f"the {what} {path!r} contains '..'; give it relative to the repository root without '..'"
        )
    if not parts:
        raise UnsafePath(f"the {what} {path!r} names no file; give e.g. src/app.py")
    normalised = "/".join(parts)
    if normalised.startswith("-"):
        raise UnsafePath(f"refusing {what} {path!r}: it starts with '-'")
    return normalised


def validate_slug(slug: str) -> tuple[str, str]:
    """Split ``owner/name`` (a trailing ``.git`` is dropped) or raise RepositoryError."""
    match = _SLUG.fullmatch(slug) if isinstance(slug, str) else None
    if not match:
        raise RepositoryError(
            f"{slug!r} is not a repository slug; give it as owner/name, e.g. django/django"
        )
    owner, name = match.group("owner"), match.group("name")
    if name.endswith(".git"):
        name = name[: -len(".git")]
    if name in ("", ".", "..") or owner.endswith(".git"):
        raise RepositoryError(f"{slug!r} is not a repository slug; give it as owner/name")
    return owner, name
