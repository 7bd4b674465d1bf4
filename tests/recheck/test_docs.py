"""The documentation holds together: a short README, links that lead somewhere, every page in the
site's navigation, a strict MkDocs build, and the pages that list what the code has (dependencies)
kept complete."""
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
README = ROOT / "README.md"
# Markdown read on a forge and built into the site: every relative link in these must lead to a file.
MARKDOWN = sorted([README, ROOT / "CHANGELOG.md", ROOT / "bench" / "README.md", *DOCS.rglob("*.md")])

FENCED_BLOCK = re.compile(r"^```.*?^```", re.MULTILINE | re.DOTALL)
INLINE_CODE = re.compile(r"`[^`\n]*`")
LINK = re.compile(r"!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")


def relative_links(path: Path) -> list[str]:
    """The relative targets (files, without their #anchor) of the inline links and images in
    `path`, leaving out code, which only shows Markdown."""
    text = INLINE_CODE.sub("", FENCED_BLOCK.sub("", path.read_text()))
    targets = []
    for target in LINK.findall(text):
        if re.match(r"^[a-z][a-z0-9+.-]*:", target) or target.startswith(("#", "/")):
            continue  # a URL, an anchor on the same page, or a path on the served site
        targets.append(target.split("#", 1)[0])
    return targets


def test_the_readme_is_at_most_200_lines():
    lines = README.read_text().splitlines()
    assert len(lines) <= 200, f"README.md has {len(lines)} lines; move the detail into docs/."


@pytest.mark.parametrize("path", MARKDOWN, ids=lambda path: str(path.relative_to(ROOT)))
def test_every_relative_link_points_at_a_file_that_exists(path):
    broken = [target for target in relative_links(path) if not (path.parent / target).exists()]
    assert not broken, f"{path.relative_to(ROOT)} links to missing files: {', '.join(broken)}"


def test_the_link_check_sees_links():
    """The README links into the docs and shows a screenshot: the check above is not vacuous."""
    targets = relative_links(README)
    assert "docs/index.md" in targets and any(target.endswith(".png") for target in targets)


def _nav_pages(entries) -> set[str]:
    pages = set()
    for entry in entries:
        values = entry.values() if isinstance(entry, dict) else [entry]
        for value in values:
            pages |= _nav_pages(value) if isinstance(value, list) else {value}
    return pages


def test_the_navigation_lists_every_page_and_only_pages_that_exist():
    # mkdocs.yml names the hook with no Python tag; a plain safe load reads it.
    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text())
    listed = _nav_pages(config["nav"])
    pages = {str(path.relative_to(DOCS)) for path in DOCS.rglob("*.md")}
    # bench/README.md and CHANGELOG.md are built into the site under these names (scripts/docs_hooks.py).
    included = {"benchmarks.md", "changelog.md"}
    assert pages - listed == set(), "Add these pages to nav in mkdocs.yml"
    assert listed - pages - included == set(), "nav in mkdocs.yml lists pages that do not exist"


def test_mkdocs_builds_the_site_strictly(tmp_path):
    """A broken link or anchor, a page left out of the navigation, or a bad config fails the build;
    it is built outside the tree."""
    completed = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path / "site")],
        cwd=ROOT, capture_output=True, text=True, timeout=120,
    )
    assert completed.returncode == 0, completed.stdout + completed.stderr
    assert (tmp_path / "site" / "index.html").exists()
    assert (tmp_path / "site" / "benchmarks" / "index.html").exists()


def _name(requirement: str) -> str:
    return re.split(r"[\s<>=!~;\[]", requirement, maxsplit=1)[0]


def test_every_declared_dependency_says_why_it_is_there():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    declared = [*project["dependencies"], *project["optional-dependencies"]["test"]]
    page = (DOCS / "operations" / "dependencies.md").read_text()
    rows = {match.lower() for match in re.findall(r"^\| `([^`\[]+)", page, flags=re.MULTILINE)}
    missing = [requirement for requirement in declared if _name(requirement).lower() not in rows]
    assert not missing, f"Add a row to docs/operations/dependencies.md for: {', '.join(missing)}"


def test_the_images_stay_small():
    images = list((DOCS / "images").iterdir())
    assert images
    large = [image.name for image in images if image.stat().st_size > 300_000]
    assert not large, f"Shrink these images under docs/images (300 KB at most): {', '.join(large)}"
