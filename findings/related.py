"""Reads that connect a finding to others across pull requests: its links, read from both ends."""
from dataclasses import dataclass

from django.db.models import Q

from findings.models import Finding, FindingLink


@dataclass(frozen=True)
class LinkView:
    link: FindingLink
    label: str  # how it reads from the finding whose page shows it ("Duplicated by")
    finding: Finding  # the other end
    note: str


def finding_links(finding: Finding) -> list[LinkView]:
    """Every link made from or to `finding`, oldest first, each worded from `finding`'s end."""
    links = (
        FindingLink.objects.filter(Q(source=finding) | Q(target=finding))
        .select_related("source__pull_request__repository", "target__pull_request__repository")
        .order_by("created_at", "id")
    )
    return [
        LinkView(link=link, label=link.label_from(finding), finding=link.other_end(finding), note=link.note)
        for link in links
    ]
