"""How a URL names a repository's owner: one path converter for the site's and the API's routes,
so `/group/subgroup/project/pull/1/` reaches GitLab's nested groups as `/owner/name/pull/1/`
reaches GitHub's. Registered on import; both URL modules import it."""
from django.urls import register_converter

from core.forges import OWNER_RE


class OwnerConverter:
    """The owner: one part (GitHub's owner, a GitLab group), or a group and its subgroups. The
    route's next part is the name; the slug's rules (`core.forges.slug_problem`) keep a subgroup
    from being named like a route's word, so a URL never means two pages."""

    regex = OWNER_RE

    def to_python(self, value: str) -> str:
        return value

    def to_url(self, value: str) -> str:
        return value


register_converter(OwnerConverter, "owner")

# The start of every route about one repository: `<owner>/<name>`, the kwargs `owner` and `name`.
REPOSITORY = "<owner:owner>/<str:name>"
