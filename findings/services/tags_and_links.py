"""Writes that connect findings across pull requests: tags and typed links. The bundle import, the
admin and the API all call these, so what a valid tag or link is lives here once."""
from django.contrib.auth.base_user import AbstractBaseUser
from django.db import transaction
from django.db.models import Q

from core.errors import RelationError
from core.names import finding_parse_reference, tag_slug_validate
from findings.models import Finding, FindingLink, Tag


def tag_get_or_create(*, slug: str, description: str = "") -> Tag:
    """The tag `slug`, created when new; a non-empty `description` replaces the one recorded."""
    tag, created = Tag.objects.get_or_create(slug=tag_slug_validate(slug), defaults={"description": description})
    if not created and description and tag.description != description:
        tag.description = description
        tag.save(update_fields=["description"])
    return tag


@transaction.atomic
def tag_describe(*, slug: str, description: str) -> Tag:
    """Give the tag `slug` exactly this description (an empty one clears it), creating the tag
    when it is new."""
    tag = tag_get_or_create(slug=slug)
    if tag.description != description:
        tag.description = description
        tag.save(update_fields=["description"])
    return tag


@transaction.atomic
def finding_tags_set(*, finding: Finding, slugs: list[str]) -> bool:
    """Give `finding` exactly the tags `slugs` (creating unknown ones); whether anything changed."""
    wanted = {tag_get_or_create(slug=slug).pk for slug in slugs}
    current = set(finding.tags.values_list("pk", flat=True))
    if wanted == current:
        return False
    finding.tags.set(wanted)
    return True


def finding_by_reference(reference: str, *, repositories=None) -> Finding:
    """The finding `owner/name#4108/4` names, or a RelationError that says what is missing. With
    `repositories` (those the caller may read), a finding elsewhere is missing in the same words."""
    slug, number, finding_number = finding_parse_reference(reference)
    findings = Finding.objects.all() if repositories is None else Finding.objects.filter(
        pull_request__repository__in=repositories
    )
    finding = (
        findings.filter(pull_request__repository__slug=slug, pull_request__number=number, number=finding_number)
        .select_related("pull_request__repository")
        .first()
    )
    if finding is None:
        raise RelationError(f"No finding {reference} is recorded: import that review first, or check the numbers.")
    return finding


def finding_link_check(*, source: Finding, target: Finding, kind: str, link: FindingLink | None = None) -> None:
    """Refuse a link that cannot be made: an unknown kind, a finding linked to itself, or a second
    link between two findings already linked (either way round). `link` is the one being edited."""
    if kind not in FindingLink.Kind.values:
        raise RelationError(f"Unknown link kind {kind!r}: use one of {', '.join(FindingLink.Kind.values)}.")
    if source.pk == target.pk:
        raise RelationError("A finding cannot be linked to itself.")
    existing = (
        FindingLink.objects.filter(Q(source=source, target=target) | Q(source=target, target=source))
        .exclude(pk=link.pk if link is not None and link.pk else None)
        .select_related("source__pull_request__repository", "target__pull_request__repository")
        .first()
    )
    if existing is not None:
        raise RelationError(f"These findings are already linked: {existing}. Remove that link first.")


@transaction.atomic
def finding_link_create(
    *, source: Finding, target: Finding, kind: str, actor: AbstractBaseUser | None = None, note: str = ""
) -> FindingLink:
    """Link `source` to `target` (`source` is a duplicate of `target`, a follow-up of it, or has
    the same cause). Two findings are linked once, whichever way round."""
    finding_link_check(source=source, target=target, kind=kind)
    return FindingLink.objects.create(source=source, target=target, kind=kind, note=note, created_by=actor)


def finding_link_delete(*, link: FindingLink) -> None:
    link.delete()


@transaction.atomic
def finding_links_set(*, finding: Finding, links: list[tuple[Finding, str, str]]) -> bool:
    """Make the links that start at `finding` exactly `links` ((target, kind, note) each), as a
    bundle states them; links that other findings make to it are theirs and stay."""
    wanted = {target.pk: (target, kind, note) for target, kind, note in links}
    changed = False
    for link in FindingLink.objects.filter(source=finding):
        entry = wanted.pop(link.target_id, None)
        if entry is None:
            link.delete()
            changed = True
        elif (link.kind, link.note) != entry[1:]:
            finding_link_check(source=finding, target=entry[0], kind=entry[1], link=link)
            link.kind, link.note = entry[1], entry[2]
            link.save(update_fields=["kind", "note"])
            changed = True
    for target, kind, note in wanted.values():
        finding_link_create(source=finding, target=target, kind=kind, note=note)
        changed = True
    return changed
