"""MkDocs hooks (mkdocs.yml names this file): pages that live beside what they describe, outside
docs/ (the benchmarks in bench/README.md, CHANGELOG.md), are built into the site too.

Every link is written as the relative path between two files of the repository, so it works where
the Markdown is read as it is (a forge, an editor). In the site a page sits somewhere else, so a
link between docs/ and one of these pages is rewritten to where its target is in the site. A link
to any other file outside docs/ is left alone, and `mkdocs build --strict` refuses it."""
from __future__ import annotations

import posixpath
import re
from pathlib import Path

from mkdocs.structure.files import File

# Files outside docs/ built into the site: their path in the repository -> their path in the site.
INCLUDED = {"bench/README.md": "benchmarks.md", "CHANGELOG.md": "changelog.md"}
SITE_TO_REPOSITORY = {site: repository for repository, site in INCLUDED.items()}
DOCS = "docs"

# An inline Markdown link or image: [text](target) or [text](target#anchor), targets without spaces.
LINK = re.compile(r"(?P<head>!?\[[^\]]*\]\()(?P<target>[^)\s#]+)(?P<anchor>#[^)\s]*)?(?P<tail>\))")


def on_files(files, config):
    root = Path(config.config_file_path).parent
    for repository_path, site_path in INCLUDED.items():
        files.append(File.generated(config, site_path, abs_src_path=str(root / repository_path)))
    return files


def on_page_markdown(markdown: str, page, config, files) -> str:
    site_path = page.file.src_uri
    repository_path = SITE_TO_REPOSITORY.get(site_path, f"{DOCS}/{site_path}")

    def rewrite(match: re.Match) -> str:
        target = match["target"]
        if "://" in target or target.startswith(("/", "mailto:")):
            return match[0]
        in_repository = posixpath.normpath(posixpath.join(posixpath.dirname(repository_path), target))
        if in_repository in INCLUDED:
            in_site = INCLUDED[in_repository]
        elif in_repository.startswith(f"{DOCS}/"):
            in_site = in_repository[len(DOCS) + 1:]
        else:
            return match[0]
        relative = posixpath.relpath(in_site, posixpath.dirname(site_path) or ".")
        return f"{match['head']}{relative}{match['anchor'] or ''}{match['tail']}"

    return LINK.sub(rewrite, markdown)
