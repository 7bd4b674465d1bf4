"""The forges Recheck speaks to, by name, and how each one spells a link to a file, a directory and
a commit on its web pages. Plain Python, so the models, the exports and the engine share it.

Where the forge's own behaviour lives (webhooks, reports, the sticky comment, sign-in) is its
package in `forge` (`forge.github`, `forge.gitlab`); this is only the vocabulary: a name stored on a
repository, its label, where the forge is when a repository does not say (gitlab.com, github.com),
and the shape of its permalinks. A forge added here and as a package there is a forge Recheck speaks."""
from __future__ import annotations

import re
from dataclasses import dataclass

GITHUB = "github"
GITLAB = "gitlab"


@dataclass(frozen=True)
class ForgeWords:
    name: str
    label: str
    # The forge's web address when a repository names none (its own server is self-managed).
    default_url: str
    # Path parts between a project's web URL and the SHA: GitHub's `blob`, GitLab's `-/blob`.
    blob: str
    tree: str
    commit: str
    # How a range of lines is written after `#`: `L10-L12` on GitHub, `L10-12` on GitLab.
    range_end_prefix: str
    # Nested groups (GitLab's group/subgroup/project); a GitHub slug is exactly owner/name.
    nested: bool
    pull_request_word: str
    pull_request_sign: str
    # Where the forge publishes a pull request's head in the repository, for the mirror to fetch.
    head_ref: str


FORGES: dict[str, ForgeWords] = {
    GITHUB: ForgeWords(
        name=GITHUB, label="GitHub", default_url="https://github.com", blob="blob", tree="tree", commit="commit",
        range_end_prefix="L", nested=False, pull_request_word="pull request", pull_request_sign="#",
        head_ref="refs/pull/{number}/head",
    ),
    GITLAB: ForgeWords(
        name=GITLAB, label="GitLab", default_url="https://gitlab.com", blob="-/blob", tree="-/tree",
        commit="-/commit", range_end_prefix="", nested=True, pull_request_word="merge request",
        pull_request_sign="!", head_ref="refs/merge-requests/{number}/head",
    ),
}
FORGE_NAMES = tuple(FORGES)
FORGE_CHOICES = [(words.name, words.label) for words in FORGES.values()]
DEFAULT_FORGE = GITHUB

# A slug is `owner/name`, or on a forge with nested groups `group/subgroup/.../name` (GitLab allows
# twenty levels of groups). Each part: letters, digits, '.', '_' and '-', starting with a letter,
# a digit or '_' (the first with a letter or a digit).
MAX_NESTING = 20
SEGMENT = r"[A-Za-z0-9_][A-Za-z0-9._-]{0,99}"
SLUG_RE = rf"^[A-Za-z0-9][A-Za-z0-9._-]{{0,99}}(?:/{SEGMENT}){{1,{MAX_NESTING}}}$"
SLUG_MAX_LENGTH = 500
# The words of the site's and the API's routes after a repository's slug: a subgroup or a nested
# project named so would make `/group/sub/decisions/` mean two pages, so in a slug of more than two
# parts no part after the first may be one (a two-part slug's name may: nothing follows it).
ROUTE_WORDS = frozenset({"pull", "pulls", "decisions", "files", "figures", "publishing", "github-calls", "follow-ups"})


# The owner part of a route (`reviews.converters`): the first part, then subgroups that are not a
# route's word, so `/a/b/decisions/` is a/b's decisions whatever order the routes are in.
OWNER_RE = (rf"[A-Za-z0-9][A-Za-z0-9._-]{{0,99}}"
            rf"(?:/(?!(?:{'|'.join(re.escape(word) for word in sorted(ROUTE_WORDS))})/){SEGMENT}){{0,{MAX_NESTING - 1}}}")


def forge_words(name: str | None) -> ForgeWords:
    return FORGES.get(name or DEFAULT_FORGE, FORGES[DEFAULT_FORGE])


def slug_problem(slug: str, forge: str | None = None) -> str:
    """What is wrong with `slug` as a repository's name on `forge`, or '' when nothing is."""
    if not isinstance(slug, str) or not re.fullmatch(SLUG_RE, slug):
        return ("use the form owner/name, or group/subgroup/name on GitLab (letters, digits, '.', '_' and '-')")
    parts = slug.split("/")
    words = forge_words(forge)
    if len(parts) > 2 and not words.nested:
        return f"{words.label} names a repository owner/name; only GitLab has nested groups"
    clashing = sorted(set(parts[1:]) & ROUTE_WORDS) if len(parts) > 2 else []
    if clashing:
        return (f"a subgroup or nested project named {clashing[0]!r} would clash with Recheck's "
                "page addresses; register the repository under another slug")
    return ""


def split_slug(slug: str) -> tuple[str, str]:
    """`(owner, name)`: the owner is every part but the last (GitLab's group/subgroup)."""
    owner, _, name = slug.rpartition("/")
    return owner, name


def permalink(forge: str | None, web_url: str, sha: str, path: str, start_line: int | None = None,
              end_line: int | None = None) -> str:
    """A link to `path` at `sha` (lines `start_line`..`end_line`) on the forge's web pages; '' when
    the repository has no web URL."""
    if not web_url:
        return ""
    words = forge_words(forge)
    url = f"{web_url.rstrip('/')}/{words.blob}/{sha}/{path}"
    if start_line:
        url += f"#L{start_line}"
        if end_line and end_line != start_line:
            url += f"-{words.range_end_prefix}{end_line}"
    return url


def tree_link(forge: str | None, web_url: str, sha: str, path: str) -> str:
    return f"{web_url.rstrip('/')}/{forge_words(forge).tree}/{sha}/{path}" if web_url else ""


def commit_link(forge: str | None, web_url: str, sha: str) -> str:
    return f"{web_url.rstrip('/')}/{forge_words(forge).commit}/{sha}" if web_url else ""
