"""Writes that connect findings across pull requests: tags, what a tag means in a repository, and
typed links. The bundle import, the admin and the API all call these, so what a valid tag or link
is, and who may write one, lives here once.

A tag's slug is shared by every repository; its description is one repository's own
(`TagDescription`): written by those who may write findings there, read by those who may read it.
Each service checks its actor against every repository it writes or reads through (a link's
other finding included) and records an audit entry; the `*_apply` parts write without either,
inside a service (the import) that checked and records the whole."""
from django.contrib.auth.base_user import AbstractBaseUser
from django.db import transaction
from django.db.models import Q

from access.audit import audit_record, writes
from access.permissions import Action, actor_check, user_may
from core.errors import RelationError
from core.names import finding_parse_reference, tag_slug_validate
from findings.models import Finding, FindingLink, Tag, TagDescription
from reviews.models import Repository
from reviews.services import pull_request_changed

IMPORT = "findings.services.review_import.review_import"
TAGS_SET = "findings.services.tags_and_links.finding_tags_set"
DESCRIBE = "findings.services.tags_and_links.tag_describe"
LINK_CREATE = "findings.services.tags_and_links.finding_link_create"


@writes("tag.create", within=(IMPORT, TAGS_SET, DESCRIBE))
def tag_get_or_create(*, slug: str) -> Tag:
    """The tag `slug` (validated), created when new. A slug says nothing of any repository."""
    return Tag.objects.get_or_create(slug=tag_slug_validate(slug))[0]


@writes("tag.describe", within=(IMPORT, DESCRIBE))
def tag_description_apply(*, tag: Tag, repository: Repository, description: str) -> list | None:
    """Make `description` what `tag` means in `repository` (an empty one removes it); the
    [before, after] of the change, or None when there was none."""
    row = TagDescription.objects.filter(tag=tag, repository=repository).first()
    before = row.description if row is not None else ""
    if before == description:
        return None
    if not description:
        row.delete()
    elif row is None:
        TagDescription.objects.create(tag=tag, repository=repository, description=description)
    else:
        row.description = description
        row.save(update_fields=["description", "updated_at"])
    # The repository's finding pages show what its tags mean.
    for pull_request_id in (
        Finding.objects.filter(tags=tag, pull_request__repository=repository)
        .order_by().values_list("pull_request_id", flat=True).distinct()
    ):
        pull_request_changed(pull_request_id=pull_request_id)
    return [before, description]


@writes("tag.describe")
def tag_describe(*, slug: str, repository: Repository, description: str, actor: AbstractBaseUser | None) -> str:
    """Give the tag `slug` exactly this description in `repository` (an empty one clears it),
    creating the slug when it is new. Needs the Reviewer role there; no other repository's
    description is read or changed. Returns the description."""
    target = f"tag {slug} in {repository.slug}"
    actor_check(actor, Action.WRITE, repository, audit_action="tag.describe", target=target)
    with transaction.atomic():
        change = tag_description_apply(tag=tag_get_or_create(slug=slug), repository=repository,
                                       description=description)
        if change is not None:
            audit_record(action="tag.describe", actor=actor, target=target, repository=repository,
                         changes={"description": change})
    return description


@writes("finding.tags", within=(IMPORT, TAGS_SET))
def finding_tags_apply(*, finding: Finding, slugs: list[str]) -> list | None:
    """Give `finding` exactly the tags `slugs` (creating unknown slugs); the [before, after] slugs
    when anything changed, else None."""
    wanted = {tag_get_or_create(slug=slug) for slug in slugs}
    current = set(finding.tags.all())
    if wanted == current:
        return None
    finding.tags.set(wanted)
    return [sorted(tag.slug for tag in current), sorted(tag.slug for tag in wanted)]


@writes("finding.tags")
def finding_tags_set(*, finding: Finding, slugs: list[str], actor: AbstractBaseUser | None) -> bool:
    """Give `finding` exactly the tags `slugs`, audited; whether anything changed. Needs the
    Reviewer role on the finding's repository."""
    repository = finding.pull_request.repository
    target = f"{finding.pull_request.reference} finding {finding.number}"
    actor_check(actor, Action.WRITE, repository, audit_action="finding.tags", target=target)
    with transaction.atomic():
        change = finding_tags_apply(finding=finding, slugs=slugs)
        if change is not None:
            audit_record(action="finding.tags", actor=actor, target=target, repository=repository,
                         changes={"tags": change})
    return change is not None


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


def _reference(finding: Finding) -> str:
    return f"{finding.pull_request.reference}/{finding.number}"


@writes("finding.link", within=(IMPORT, LINK_CREATE))
def finding_link_apply(*, source: Finding, target: Finding, kind: str, actor=None, note: str = "") -> FindingLink:
    finding_link_check(source=source, target=target, kind=kind)
    return FindingLink.objects.create(source=source, target=target, kind=kind, note=note,
                                      created_by=actor if actor is not None and actor.is_authenticated else None)


@writes("finding.link")
def finding_link_create(
    *, source: Finding, target: Finding, kind: str, actor: AbstractBaseUser | None, note: str = ""
) -> FindingLink:
    """Link `source` to `target` (`source` is a duplicate of `target`, a follow-up of it, or has
    the same cause), audited. Two findings are linked once, whichever way round. Needs the
    Reviewer role on the source's repository, and the target must be one the actor may read: one
    they may not is missing, in the words of one that does not exist."""
    repository = source.pull_request.repository
    target_label = _reference(target)
    actor_check(actor, Action.WRITE, repository, audit_action="finding.link",
                target=f"{_reference(source)} to a finding")
    if actor is not None and not user_may(actor, Action.READ, target.pull_request.repository):
        raise RelationError(f"No finding {target_label} is recorded: import that review first, or check the numbers.")
    with transaction.atomic():
        link = finding_link_apply(source=source, target=target, kind=kind, actor=actor, note=note)
        audit_record(action="finding.link", actor=actor, target=f"{_reference(source)} {kind} {target_label}",
                     repository=repository, changes={"link": [None, f"{kind} {target_label}"]})
    return link


@writes("finding.unlink")
def finding_link_delete(*, link: FindingLink, actor: AbstractBaseUser | None) -> None:
    """Remove `link`, from either end: needs the Reviewer role on the repository of one of its
    two findings. Audited, with what the link said."""
    source, target = link.source, link.target
    ends = [source.pull_request.repository, target.pull_request.repository]
    label = f"{_reference(source)} {link.kind} {_reference(target)}"
    if actor is not None and not any(user_may(actor, Action.WRITE, repository) for repository in ends):
        actor_check(actor, Action.WRITE, ends[0], audit_action="finding.unlink", target=label)
    with transaction.atomic():
        link.delete()
        audit_record(action="finding.unlink", actor=actor, target=label, repository=ends[0],
                     changes={"link": [f"{link.kind} {_reference(target)}", None]}, message=link.note)


@writes("finding.links", within=(IMPORT,))
def finding_links_set(*, finding: Finding, links: list[tuple[Finding, str, str]], actor=None) -> list | None:
    """Make the links that start at `finding` exactly `links` ((target, kind, note) each), as a
    bundle states them; links that other findings make to it are theirs and stay. The [before,
    after] links when anything changed, else None."""
    wanted = {target.pk: (target, kind, note) for target, kind, note in links}
    existing = list(FindingLink.objects.filter(source=finding).select_related("target__pull_request__repository"))
    before = sorted(f"{link.kind} {_reference(link.target)}" for link in existing)
    changed = False
    for link in existing:
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
        finding_link_apply(source=finding, target=target, kind=kind, note=note, actor=actor)
        changed = True
    if not changed:
        return None
    return [before, sorted(f"{kind} {_reference(target)}" for target, kind, _note in links)]
