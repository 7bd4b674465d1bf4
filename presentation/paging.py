"""Which page of its list a finding is shown on: the blockers and the cleanups pages show their
findings in full a page at a time, in the order the blockers page groups them."""
from django.db.models import Q

from findings.models import Finding

# Findings with their evidence on one page of the blockers or the cleanups list: a PR of thousands
# of findings would otherwise send megabytes of highlighted code at once.
FINDINGS_PER_PAGE = 25


def list_page_numbers(findings, *, static: bool = False) -> dict[int, int]:
    """Finding id -> the page of its kind's list it is shown on, for all of a PR's `findings`
    (the static render has one page)."""
    page_numbers: dict[int, int] = {}
    position = {Finding.Kind.BLOCKER: 0, Finding.Kind.CLEANUP: 0}
    for finding in sorted(findings, key=page_order):
        page_numbers[finding.pk] = 1 if static else position[finding.kind] // FINDINGS_PER_PAGE + 1
        position[finding.kind] += 1
    return page_numbers


def finding_list_page(finding: Finding) -> int:
    """The page of its kind's list (blockers or cleanups) that `finding` is shown on, in one query:
    the findings before it in `page_order` count."""
    same_kind = Finding.objects.filter(pull_request_id=finding.pull_request_id, kind=finding.kind)
    before = Q(number__lt=finding.number)
    if finding.kind == Finding.Kind.BLOCKER:
        if finding.caught_by == Finding.CaughtBy.CI:
            before &= Q(caught_by=Finding.CaughtBy.CI)
        else:
            before = Q(caught_by=Finding.CaughtBy.CI) | (before & ~Q(caught_by=Finding.CaughtBy.CI))
    return same_kind.filter(before).count() // FINDINGS_PER_PAGE + 1


def page_order(finding: Finding) -> tuple:
    """Blockers first, those caught by CI before the rest, as the blockers page groups them; then
    the cleanups by number."""
    blocker = finding.kind == Finding.Kind.BLOCKER
    return (not blocker, blocker and finding.caught_by != Finding.CaughtBy.CI, finding.number)
