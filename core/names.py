"""How Recheck names things, as plain rules: a tag's slug and a reference to a finding
(`owner/name#4108/4`). The bundle format, the services and the API check names here once."""
import re

from core.errors import RelationError

TAG_SLUG_RE = r"^[a-z0-9]+(?:-[a-z0-9]+)*$"
TAG_SLUG_MAX = 50

_tag_slug = re.compile(TAG_SLUG_RE)
# owner/name, or GitLab's group/subgroup/name.
_reference = re.compile(r"^(?P<slug>[A-Za-z0-9_.-]+(?:/[A-Za-z0-9_.-]+){1,20})#(?P<number>\d{1,10})/(?P<finding>\d{1,10})$")


def tag_slug_validate(slug: str) -> str:
    slug = slug.strip() if isinstance(slug, str) else ""
    if not slug or len(slug) > TAG_SLUG_MAX or not _tag_slug.match(slug):
        raise RelationError(
            f"{slug!r} is not a tag: use lower-case letters and digits joined by hyphens "
            f"(e.g. silent-failure), at most {TAG_SLUG_MAX} characters."
        )
    return slug


def finding_parse_reference(reference: str) -> tuple[str, int, int]:
    """(owner/name or group/subgroup/name, pull request number, finding number) of a reference to a finding."""
    match = _reference.match(reference.strip()) if isinstance(reference, str) else None
    if not match:
        raise RelationError(
            f"{reference!r} does not name a finding: write owner/name#<pull request>/<finding>, e.g. acme/loader#4108/4 "
            "(on GitLab group/subgroup/name#<merge request>/<finding>)."
        )
    return match["slug"], int(match["number"]), int(match["finding"])
