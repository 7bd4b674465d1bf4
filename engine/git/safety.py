"""Input validation that runs before any git process sees user input.

Everything here is pure string checking: no filesystem access except for
local clone sources (which must exist), and never a git call. Validators
return the normalised value so callers store what was actually checked.
"""

from __future__ import annotations

import ipaddress
import re
import socket
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from urllib.parse import unquote, urlsplit

from core.errors import CommitNotFound, RepositoryError, UnsafePath

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
# The owner may be a GitLab group with its subgroups (group/subgroup/name, up to twenty levels).
_SLUG = re.compile(
    r"^(?P<owner>[A-Za-z0-9][A-Za-z0-9._-]{0,99}(?:/[A-Za-z0-9_][A-Za-z0-9._-]{0,99}){0,19})"
    r"/(?P<name>[A-Za-z0-9._][A-Za-z0-9._-]{0,99})$"
)


def _has_control_or_space(text: str) -> bool:
    return any(ch.isspace() or not ch.isprintable() for ch in text)


_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


def _has_control(text: str) -> bool:
    return _CONTROL.search(text) is not None


def validate_clone_url(
    url: str,
    *,
    allow_local: bool,
    allowed_hosts: Sequence[str] = (),
    internal_hosts: Sequence[str] = (),
    resolve: Resolver | None = None,
) -> str:
    """Return ``url`` if git may fetch from it, else raise RepositoryError.

    Accepted: ``https://host/path``, ``ssh://[user@]host[:port]/path`` and
    scp-like ``user@host:path``. With ``allow_local`` also ``file://`` URLs
    and existing local directories, returned as an absolute path.

    The host must be in ``allowed_hosts`` when that is given, and must not be
    or resolve (with ``resolve``, the system resolver by default) to an
    internal address (unless it is one of ``internal_hosts``, a forge this
    server is meant to reach on its own network). A name that does not resolve now is accepted: the
    check is made again, strictly, right before git connects
    (``clone_url_addresses``).
    """
    checked = _validate_clone_url_syntax(url, allow_local=allow_local)
    remote = remote_host(checked)
    if remote is not None:
        _check_host(
            remote, url=checked, allowed_hosts=allowed_hosts, internal_hosts=internal_hosts,
            resolve=resolve or resolve_host, strict=False,
        )
    return checked


def _validate_clone_url_syntax(url: str, *, allow_local: bool) -> str:
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


Resolver = Callable[[str, int], Iterable[str]]
_DEFAULT_PORTS = {"https": 443, "ssh": 22}


@dataclass(frozen=True)
class RemoteHost:
    """Where a clone URL makes git connect: ``scheme`` is https or ssh."""

    scheme: str
    host: str
    port: int


def remote_host(url: str) -> RemoteHost | None:
    """The host and port an already validated clone URL connects to; None for a local source."""
    scheme = _SCHEME.match(url)
    if scheme:
        name = scheme.group(1).lower()
        if name not in _DEFAULT_PORTS:
            return None
        hostport = url.split("://", 1)[1].partition("/")[0].rpartition("@")[2]
        match = _HOSTPORT.fullmatch(hostport)
        if not match:
            return None
        port = int(match.group("port")) if match.group("port") else _DEFAULT_PORTS[name]
        return RemoteHost(name, _plain_host(match.group("host")), port)
    scp = _SCP_LIKE.fullmatch(url)
    if scp and "/" not in url.split(":", 1)[0]:
        return RemoteHost("ssh", _plain_host(scp.group("host")), 22)
    return None


def _plain_host(host: str) -> str:
    # Names are case-insensitive and may end in the root's dot; both spell the same host.
    return host.strip("[]").lower().rstrip(".")


def resolve_host(host: str, port: int) -> list[str]:
    """Every address the system resolver gives for ``host``, as text, in its order."""
    infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    return list(dict.fromkeys(str(info[4][0]) for info in infos))


def literal_address(host: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    """The address ``host`` spells without DNS, in any spelling the C library accepts (``127.1``,
    ``2130706433``, ``0x7f.1``, ``017700000001``, ``::ffff:127.0.0.1``), or None for a name."""
    host = _plain_host(host)
    try:
        return ipaddress.ip_address(host)
    except ValueError:
        pass
    if not re.fullmatch(r"[0-9A-Fa-fXx.]+", host):
        return None
    try:
        # inet_aton reads the legacy forms (one to four parts, decimal, octal or hex) exactly as
        # curl and ssh do when they are handed such a host.
        return ipaddress.IPv4Address(socket.inet_aton(host))
    except OSError:
        return None


def _embedded_ipv4(address: ipaddress.IPv6Address) -> ipaddress.IPv4Address | None:
    """The IPv4 address an IPv6 address carries and that a host would reach through it."""
    if address.ipv4_mapped is not None:
        return address.ipv4_mapped
    if address.sixtofour is not None:
        return address.sixtofour
    if address.teredo is not None:
        return address.teredo[1]
    if address in _NAT64:
        return ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
    return None


_NAT64 = ipaddress.ip_network("64:ff9b::/96")


def internal_reason(address: ipaddress.IPv4Address | ipaddress.IPv6Address) -> str | None:
    """Why ``address`` is no place for this server to connect to, or None for a public address."""
    if isinstance(address, ipaddress.IPv6Address):
        embedded = _embedded_ipv4(address)
        if embedded is not None:
            reason = internal_reason(embedded)
            return f"{reason} (as {embedded})" if reason else None
    for reason, flag in (
        ("unspecified", address.is_unspecified),
        ("loopback", address.is_loopback),
        ("link-local", address.is_link_local),
        ("multicast", address.is_multicast),
        ("private", address.is_private),
        ("reserved", address.is_reserved),
        ("unique-local or site-local", getattr(address, "is_site_local", False)),
    ):
        if flag:
            return f"a {reason} address"
    if not address.is_global:
        return "not a public address"
    return None


def clone_url_addresses(
    url: str,
    *,
    allowed_hosts: Sequence[str] = (),
    internal_hosts: Sequence[str] = (),
    resolve: Resolver | None = None,
) -> tuple[RemoteHost, list[str]] | None:
    """Right before git connects: the host of ``url`` and the addresses it resolves to now, every
    one of them public. Raises RepositoryError when the host is not allowed, does not resolve or
    any address is internal. None for a local source."""
    remote = remote_host(url)
    if remote is None:
        return None
    addresses = _check_host(
        remote, url=url, allowed_hosts=allowed_hosts, internal_hosts=internal_hosts,
        resolve=resolve or resolve_host, strict=True,
    )
    return remote, addresses


def _check_host(
    remote: RemoteHost,
    *,
    url: str,
    allowed_hosts: Sequence[str],
    internal_hosts: Sequence[str],
    resolve: Resolver,
    strict: bool,
) -> list[str]:
    shown = _redact_userinfo(url)
    if allowed_hosts and not host_is_allowed(remote.host, allowed_hosts):
        raise RepositoryError(
            f"refusing {shown!r}: {remote.host} is not one of the forge hosts this server fetches from "
            "(RECHECK_ALLOWED_GIT_HOSTS)"
        )
    literal = literal_address(remote.host)
    if literal is not None:
        addresses = [str(literal)]
    else:
        try:
            addresses = [str(address) for address in resolve(remote.host, remote.port)]
        except (OSError, UnicodeError):
            if strict:
                raise RepositoryError(f"cannot resolve the host of {shown!r}; check the URL or retry later") from None
            return []
        if strict and not addresses:
            raise RepositoryError(f"cannot resolve the host of {shown!r}; check the URL or retry later")
    if host_is_allowed(remote.host, internal_hosts):
        return addresses
    for text in addresses:
        reason = internal_reason(ipaddress.ip_address(text.split("%", 1)[0]))
        if reason:
            raise RepositoryError(
                f"refusing {shown!r}: its host {remote.host} is {reason}; this server only fetches from "
                "public forges"
            )
    return addresses


def host_is_allowed(host: str, allowed_hosts: Sequence[str]) -> bool:
    """Whether ``host`` is one of ``allowed_hosts``; an entry ``.example.com`` also allows its
    subdomains."""
    host = _plain_host(host)
    for entry in allowed_hosts:
        entry = entry.strip().lower().rstrip(".")
        if not entry:
            continue
        if host == entry.lstrip(".") or (entry.startswith(".") and host.endswith(entry)):
            return True
    return False


_USERINFO = re.compile(r"(?<=://)[^/@]*@")


def _redact_userinfo(url: str) -> str:
    return _USERINFO.sub("***@", url)


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
    """Split ``owner/name`` (a trailing ``.git`` is dropped, once) or raise RepositoryError. The
    owner may be a GitLab group with subgroups: ``group/subgroup/name`` is ``("group/subgroup", "name")``.

    Forges name owners and repositories with letters, digits, ``.``, ``_`` and ``-``; a name of
    ``.`` or ``..`` (also as ``..git``) would be a directory of its own in a path.
    """
    owner, name = _split_slug(slug)
    if name.endswith(".git"):
        name = name[: -len(".git")]
    if name in ("", ".", ".."):
        raise RepositoryError(f"{slug!r} is not a repository slug; give it as owner/name")
    return owner, name


def _split_slug(slug: str) -> tuple[str, str]:
    match = _SLUG.fullmatch(slug) if isinstance(slug, str) else None
    if not match:
        raise RepositoryError(
            f"{slug!r} is not a repository slug; give it as owner/name, e.g. django/django"
        )
    owner, name = match.group("owner"), match.group("name")
    if name in (".", "..") or any(part.endswith(".git") for part in owner.split("/")):
        raise RepositoryError(f"{slug!r} is not a repository slug; give it as owner/name")
    return owner, name


def slug_directory(slug: str) -> tuple[str, str]:
    """The two directory names of a recorded slug's mirror, ``(owner, name + ".git")``.

    Nothing is dropped (a slug recorded as ``o/n.git`` before slugs were normalised gets
    ``n.git.git``), so two different slugs never map to one directory.
    """
    validate_slug(slug)
    owner, name = _split_slug(slug)
    return owner, f"{name}.git"
