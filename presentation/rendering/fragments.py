"""Fragments kept by their content in the shared cache, beside each process's own copy: a
finding's rendered Markdown by its text's hash and the Markdown render version, a highlighted
snippet by its code's hash, its lexer and the highlighting version. GitLab keeps a note's HTML
with `cached_markdown_version` the same way: a fragment is rendered again only when its text or
its renderer changes, never because a page around it moved to a new generation.

A page is kept by its generation (`web.pagecache`), so a write to a PR rebuilds its pages; their
write-ups and snippets rarely changed, and a web process that never rendered them (another
gunicorn worker, one just started) reads them from the shared cache instead of rendering them
again: on a local Redis a read is 50–250 µs, rendering a 400-character write-up 0.5 ms and
highlighting a 1,600-character snippet 6 ms.

The version is worked out from the renderer's own module and its libraries' versions, so a
change to how Markdown or code is drawn is a new key that nobody has to remember to bump.
Nothing is deleted: an entry no page asks for again expires (`FRAGMENT_SECONDS`). The cache is a
help (`recheck.cache`): with Redis down a fragment is rendered as before."""
import hashlib
from collections.abc import Callable
from importlib import metadata
from pathlib import Path

from django.core.cache import cache

# How long a fragment nobody asks for again is kept; its key rules staleness out.
FRAGMENT_SECONDS = 24 * 3600


def renderer_version(module_file: str, libraries: tuple[str, ...]) -> str:
    """A short digest of a renderer's module and its libraries' versions."""
    digest = hashlib.sha256(Path(module_file).read_bytes())
    for name in libraries:
        try:
            digest.update(f"{name} {metadata.version(name)}\n".encode())
        except metadata.PackageNotFoundError:
            digest.update(f"{name} -\n".encode())
    return digest.hexdigest()[:16]


def content_key(*parts: str) -> str:
    digest = hashlib.sha256()
    for part in parts:
        digest.update(part.encode("utf-8", "surrogatepass"))
        digest.update(b"\0")
    return digest.hexdigest()


def kept_fragment(kind: str, version: str, key: str, render: Callable[[], object]):
    """What `render` makes for the content `key` names, from the shared cache when a process
    rendered it before with the same renderer version, else rendered and kept there."""
    cache_key = f"fragment:{kind}:{version}:{key}"
    kept = cache.get(cache_key)
    if kept is not None:
        return kept
    rendered = render()
    cache.set(cache_key, rendered, FRAGMENT_SECONDS)
    return rendered
