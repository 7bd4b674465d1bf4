"""The render version: what every kept page and fragment is keyed by beside what it reads, so a
deploy that changes how a page is drawn never serves one drawn the old way.

It is worked out from the code that draws pages, not written by hand: the templates, this
package's Python and its own static files (their URLs carry their content's hash), the
vocabulary's words, the site's views (read as files: they hand the templates their context), the
shape of the stored review state and the versions of the libraries that render Markdown and
highlight code.
A change to any of them is a new version, which nobody has to remember to bump. Read once a
process (a few hundred small files; the vendored libraries are named by path, not read)."""
import functools
import hashlib
from importlib import metadata
from pathlib import Path

from django.conf import settings

# Moved by hand only when something outside the files below changes how pages are drawn.
RENDER_EPOCH = 1
_PACKAGE = Path(__file__).resolve().parent
_LIBRARIES = ("Django", "Pygments", "markdown-it-py", "nh3")


def _drawn_by() -> list[Path]:
    roots = [Path(directory) for template in settings.TEMPLATES for directory in template.get("DIRS", [])]
    roots += [_PACKAGE, _PACKAGE.parent / "core", _PACKAGE.parent / "web"]
    files = []
    for root in roots:
        files += [path for path in root.rglob("*") if path.is_file() and "__pycache__" not in path.parts]
    return sorted(set(files))


def _library_version(name: str) -> str:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return "-"


@functools.cache
def render_version() -> str:
    """A short digest that moves whenever the templates, the page-drawing code or its libraries
    change."""
    from findings.state.derivation import SHAPE

    digest = hashlib.sha256(f"epoch {RENDER_EPOCH}\nstate shape {SHAPE}\n".encode())
    for name in _LIBRARIES:
        digest.update(f"{name} {_library_version(name)}\n".encode())
    for path in _drawn_by():
        # Named relative to the project, so every checkout of the same code has the same version.
        name = path.relative_to(_PACKAGE.parent) if path.is_relative_to(_PACKAGE.parent) else path
        digest.update(str(name).encode() + b"\n")
        if "vendor" not in path.parts:  # megabytes of vendored scripts: named, not read
            digest.update(path.read_bytes())
    return digest.hexdigest()[:16]
