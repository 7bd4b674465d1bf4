"""Writing a finding and its evidence: the services the site's editor and the bundle import share.

`finding_save` creates or updates one finding's own fields; `finding_evidence_set` gives a finding
its whole ordered evidence list (an editor's add, change, remove or reorder of one item is a new
list). Both take values already validated by the bundle format (`findings.exchange.schema`,
whose evidence rules are the engine's `evidence_problems`; `finding_validate` there validates one
finding), so the site and the import refuse the same input with the same words.

`finding_write` is what an editor calls: both, atomically, with one history event and one audit
entry. The import calls their batch forms, `findings_save` and `findings_evidence_set` (which the
two call with one finding, so each rule is written once), and records its history in bulk and its
audit entry once per bundle: a 9,000-finding import cannot afford a query, let alone a row, per
finding more."""
from __future__ import annotations

from dataclasses import dataclass, field

from django.contrib.auth.base_user import AbstractBaseUser
from django.db import IntegrityError, transaction

from access.audit import audit_changes, audit_record, audit_refusal, writes
from access.permissions import Action, actor_check, may_add_repositories, user_may
from findings.models import Evidence, Finding, FindingEvent
from findings.models.querysets import in_slices
from findings.services.resolution import finding_evidence_changed, findings_evidence_lock
from core.errors import FindingError, RecheckError
from reviews.models import Commit, PullRequest, Repository
from reviews.services import commit_get_or_create, pull_request_changes_batched

# A finding's own fields, as `finding_save` takes them (a bundle's `location` is path + line).
FINDING_FIELDS = (
    "kind", "caught_by", "title", "summary", "body", "fix", "review_comment_url", "path", "line",
)
# What an edit records in the audit log beside the finding's fields: the evidence, described.
EVIDENCE_CHANGE = "evidence"


@dataclass
class FindingSave:
    """What `finding_save` did: the finding, whether it was created, and the fields it changed
    with their values before (for the history and the audit log)."""

    finding: Finding
    created: bool
    before: dict = field(default_factory=dict)
    # What was asked and deliberately not done (a submodule repository left as it is).
    notes: list[str] = field(default_factory=list)

    @property
    def changed(self) -> list[str]:
        return sorted(self.before)


def finding_values(item: dict) -> dict:
    """A validated finding (bundle shape) as the fields `finding_save` takes: only those it names
    (an omitted field is left as it is), with null as the field's empty value (it clears)."""
    values = {
        name: ("" if item[name] is None else item[name])
        for name in ("kind", "caught_by", "title", "summary", "body", "fix", "review_comment_url")
        if name in item
    }
    if "location" in item:
        location = item["location"] or {}
        values.update(path=location.get("path", ""), line=location.get("line"))
    return values


# The services that check the actor and record the entry for the parts below.
IMPORT = "findings.services.review_import.review_import"
WRITE = "findings.services.authoring.finding_write"


# Without a savepoint of their own: the import calls these for bundles that can hold thousands of
# findings, inside its transaction; an error rolls the caller's whole transaction back.
@writes("finding.edit", within=(WRITE,))
@transaction.atomic(savepoint=False)
def finding_save(
    *,
    pull_request: PullRequest,
    number: int,
    values: dict,
    finding: Finding | None = None,
) -> FindingSave:
    """Create or update one finding's fields (`FINDING_FIELDS`, validated).

    Without `finding`, the finding is the one `number` names on the PR (created when there is
    none: the import's idempotent key, see `findings_save`). With `finding`, that finding is
    updated and renumbered to `number`; a number another finding of the PR holds is refused
    (FindingError on `number`), since numbers are how bundles, links and pages name findings."""
    if finding is None:
        return findings_save(pull_request=pull_request, items=[(number, values)])[0]
    _fields_check(values)
    if finding.pull_request_id != pull_request.pk:
        raise FindingError("number", f"Finding {finding.number} belongs to another pull request.")
    if number != finding.number:
        # Lock the PR's findings in number order so two renumberings cannot cross.
        taken = (
            Finding.objects.select_for_update()
            .filter(pull_request=pull_request, number=number)
            .exclude(pk=finding.pk)
            .first()
        )
        if taken is not None:
            raise FindingError(
                "number",
                f"Finding number {number} is taken on {pull_request.reference} by “{taken.title}”; "
                "choose a free number or renumber that finding first.",
            )
    before = _fields_assign(finding, number, values)
    if before:
        finding.save()
    return FindingSave(finding=finding, created=False, before=before)


@writes("finding.edit", within=(IMPORT, WRITE))
@transaction.atomic(savepoint=False)
def findings_save(*, pull_request: PullRequest, items: list[tuple[int, dict]]) -> list[FindingSave]:
    """`finding_save` for many findings of one PR, each `(number, values)` naming its finding by
    number and created when the PR has none under it. The recorded ones are read together and the
    new ones inserted together, so a bundle of thousands costs a few queries rather than a few a
    finding; only a finding that changed is saved on its own. Returns what was done, in order."""
    numbers = [number for number, _ in items]
    if len(set(numbers)) != len(numbers):
        raise FindingError("number", "Each finding of a pull request needs a number of its own.")
    recorded: dict[int, Finding] = {}
    for chunk in in_slices(numbers):
        for finding in Finding.objects.filter(pull_request=pull_request, number__in=chunk):
            finding.pull_request = pull_request  # in hand: no query a finding when its evidence asks
            recorded[finding.number] = finding
    saves, new = [], []
    for number, values in items:
        _fields_check(values)
        finding = recorded.get(number)
        if finding is None:
            finding = Finding(pull_request=pull_request, number=number)
            _fields_assign(finding, number, values)
            new.append(finding)
            saves.append(FindingSave(finding=finding, created=True))
            continue
        before = _fields_assign(finding, number, values)
        if before:
            finding.save()
        saves.append(FindingSave(finding=finding, created=False, before=before))
    if new:
        Finding.objects.bulk_create(new, batch_size=1000)
        for finding in new:  # what the receiver of a save would have noted (findings.receivers)
            finding._loaded_pull_request_id = pull_request.pk
    return saves


def _fields_check(values: dict) -> None:
    unknown = set(values) - set(FINDING_FIELDS)
    if unknown:
        raise FindingError(sorted(unknown)[0], f"Not a field of a finding; use {', '.join(FINDING_FIELDS)}.")


def _fields_assign(finding: Finding, number: int, values: dict) -> dict:
    """Set `values` and `number` on `finding`; the fields that changed, with their values before."""
    before = {}
    for name, value in {**values, "number": number}.items():
        if getattr(finding, name) != value:
            before[name] = getattr(finding, name)
            setattr(finding, name, value)
    return before


@dataclass
class EvidenceList:
    """One finding's whole evidence list for `findings_evidence_set`, and what came of it."""

    finding: Finding
    items: list[dict]
    # The finding was created in this transaction: it has no evidence and no run can see it, so
    # there is nothing to lock or read.
    fresh: bool = False
    changed: bool = False
    # When it changed: the evidence before and after, one line an item (`evidence_line`).
    described: list = field(default_factory=list)


@writes("finding.edit", within=(WRITE,))
@transaction.atomic(savepoint=False)
def finding_evidence_set(
    *,
    finding: Finding,
    items: list[dict],
    default_commit: Commit | None = None,
    fresh: bool = False,
    actor: AbstractBaseUser | None = None,
    notes: list[str] | None = None,
    described: list | None = None,
) -> bool:
    """Make `items` (validated evidence in the bundle's shape, in order) the finding's evidence:
    rows are matched by position, so adding, changing, removing and reordering are one list.

    An item's `commit` is a SHA recorded for the repository; without one it is recorded at
    `default_commit` (the PR's reviewed commit); notes need none. A snippet given without its text
    keeps the text read from the repository at its path. `fresh` says the finding was created in
    this transaction (so it has no evidence yet). When anything changed on a finding that already
    existed, its evidence version moves on and its verdicts are dropped
    (`finding_evidence_changed`): they checked the old evidence. Returns whether anything changed.
    Raises FindingError naming `evidence[i].<field>`.

    A gitlink item's `submodule` names another repository, and `actor` is checked against it as
    against the finding's own (None is the operator, who may do anything): see
    `_submodule_repository`. What was left undone for want of a role is appended to `notes`.
    When anything changed, `described` (a list, if given) becomes the evidence before and after,
    one line an item (`evidence_described`), read from the rows already in hand."""
    evidence = EvidenceList(finding=finding, items=items, fresh=fresh)
    findings_evidence_set(lists=[evidence], default_commit=default_commit, actor=actor, notes=notes)
    if evidence.changed and described is not None:
        described[:] = evidence.described
    return evidence.changed


@writes("finding.edit", within=(IMPORT, WRITE))
@transaction.atomic(savepoint=False)
def findings_evidence_set(
    *,
    lists: list[EvidenceList],
    default_commit: Commit | None = None,
    actor: AbstractBaseUser | None = None,
    notes: list[str] | None = None,
) -> None:
    """`finding_evidence_set` for many findings at once (an import's), each `EvidenceList` saying
    whether its finding's evidence changed and how. The recorded findings are locked and their
    evidence read together, and new items are inserted together: a few queries for a bundle
    rather than a few a finding. A FindingError's `index` is the position in `lists` of the
    finding at fault."""
    recorded = [evidence_list.finding for evidence_list in lists if not evidence_list.fresh]
    existing: dict[int, dict[int, Evidence]] = {finding.pk: {} for finding in recorded}
    if recorded:
        findings_evidence_lock(findings=recorded)
        by_pk = {finding.pk: finding for finding in recorded}
        # With their commits: comparing an item's commit must not load one per item.
        for chunk in in_slices(list(by_pk)):
            for evidence in Evidence.objects.filter(finding_id__in=chunk).select_related("commit", "submodule_repository"):
                evidence.finding = by_pk[evidence.finding_id]  # in hand: a save's receiver needs no query
                existing[evidence.finding_id][evidence.position] = evidence
    commits: dict[tuple[int, str], Commit] = {}  # by repository and SHA as given: items share a few
    new: list[Evidence] = []
    stale: list[int] = []
    done = []  # (the lines before, the rows after) of each list
    for index, evidence_list in enumerate(lists):
        try:
            done.append(_evidence_apply(
                evidence_list, existing.get(evidence_list.finding.pk, {}), default_commit, actor, notes, commits,
                new, stale,
            ))
        except FindingError as error:
            error.index = index
            raise
    Evidence.objects.bulk_create(new, batch_size=1000)
    for chunk in in_slices(stale):
        Evidence.objects.filter(pk__in=chunk).delete()
    for evidence_list, (before, final) in zip(lists, done, strict=True):
        if evidence_list.changed:
            evidence_list.described = [before, [evidence_line(evidence) for evidence in final]]
        if evidence_list.changed and not evidence_list.fresh:
            # What was verified is no longer what the evidence says.
            finding_evidence_changed(finding=evidence_list.finding)


def _evidence_apply(evidence_list: EvidenceList, existing: dict[int, Evidence], default_commit, actor, notes,
                    commits: dict, new: list[Evidence], stale: list[int]) -> tuple[list[str], list[Evidence]]:
    """Match one finding's items to its rows (`existing`, by position): a changed row is saved, a
    new item joins `new` and a row left over joins `stale`. Returns the rows described before, and
    the rows after in order."""
    finding = evidence_list.finding
    repository = finding.pull_request.repository
    before = [evidence_line(evidence) for _, evidence in sorted(existing.items())]
    final: list[Evidence] = []
    for position, item in enumerate(evidence_list.items):
        values = {
            "kind": item["kind"],
            "commit": _evidence_commit(repository, item, position, default_commit, commits),
            "path": item.get("path", ""),
            "start_line": item.get("start_line"),
            "end_line": item.get("end_line"),
            "regex": item.get("regex", ""),
            "expect": item.get("expect", ""),
            "sha": item.get("sha", ""),
            "caption": item.get("caption", ""),
            "submodule_repository": _submodule_repository(
                item["submodule"], actor=actor, where=f"evidence[{position}].submodule", notes=notes,
            ) if item.get("submodule") else None,
            "reference_branch": item.get("branch", ""),
            "check_name": item.get("check", ""),
            "check_app": item.get("app", ""),
            "check_tests": list(item.get("tests", [])),
            "check_results": [dict(result) for result in item.get("results", [])],
        }
        evidence = existing.pop(position, None)
        if evidence is None:
            evidence = Evidence(finding=finding, position=position, text=item.get("text", ""), **values)
            new.append(evidence)
            final.append(evidence)
            evidence_list.changed = True
            continue
        final.append(evidence)
        # A snippet's text may have been filled in from the repository: an omitted text keeps it.
        if item.get("text") or item["kind"] != Evidence.Kind.SNIPPET or values["path"] != evidence.path:
            values["text"] = item.get("text", "")
        if assign_changed(evidence, values):
            evidence.save()
            evidence_list.changed = True
    if existing:
        stale += [evidence.pk for evidence in existing.values()]
        evidence_list.changed = True
    return before, final


def _evidence_commit(
    repository: Repository, item: dict, position: int, default_commit: Commit | None,
    commits: dict[tuple[int, str], Commit],
):
    if item["kind"] == Evidence.Kind.NOTE and not item.get("commit"):
        return None
    sha = item.get("commit")
    if sha:
        if (repository.pk, sha) not in commits:
            try:
                commits[repository.pk, sha] = commit_get_or_create(repository=repository, sha=sha)
            except RecheckError as error:
                raise FindingError(f"evidence[{position}].commit", str(error)) from None
        return commits[repository.pk, sha]
    if default_commit is not None:
        return default_commit
    raise FindingError(
        f"evidence[{position}].commit",
        "No commit given, and the pull request has no reviewed commit to record it at. "
        "Add a commit with role: reviewed, or give the evidence a commit.",
    )


# The fields of a repository a gitlink item may give for its submodule's repository.
SUBMODULE_REPOSITORY_FIELDS = ("clone_url", "web_url", "default_branch")


def _submodule_repository(values: dict, *, actor, where: str, notes: list[str] | None) -> Repository:
    """The repository a gitlink item names by slug, checked against `actor` like any other object
    a write touches:

    - one the actor may read is used; the URLs and branch the item gives are applied only if the
      actor may change that repository's settings, and otherwise it is left as it is (said in
      `notes`), so naming a repository never rewrites where it is fetched from;
    - one new to the server is added, by whoever may add repositories (as a bundle's own
      repository is);
    - anything else is refused in one set of words, whether the repository is private to others
      or does not exist, so the answer tells nothing about which.
    """
    slug = values["slug"]
    # Only what the item names (PATCH-like); null clears, to the field's empty value.
    values = {key: "" if value is None else value for key, value in values.items()}
    repository = Repository.objects.filter(slug=slug).first()
    readable = repository is not None and (actor is None or user_may(actor, Action.READ, repository))
    if not readable:
        if repository is None and (actor is None or may_add_repositories(actor)):
            repository = Repository(slug=slug, **{key: values[key] for key in SUBMODULE_REPOSITORY_FIELDS if key in values})
            repository.save()
            audit_record(
                action="repository.create", actor=actor, target=slug, repository=repository,
                changes=audit_changes({}, {key: getattr(repository, key) for key in SUBMODULE_REPOSITORY_FIELDS}),
            )
            return repository
        name = actor.get_username() if actor is not None else "you"
        raise FindingError(
            f"{where}.slug",
            f"No repository {slug} is recorded for {name} to read, and adding a repository to this server needs an "
            "instance-wide Reviewer role: ask an admin of this server to add it, or to grant you a role on it.",
        )
    wanted = {key: values[key] for key in SUBMODULE_REPOSITORY_FIELDS if key in values}
    before = {key: getattr(repository, key) for key, value in wanted.items() if getattr(repository, key) != value}
    if not before:
        return repository
    if actor is not None and not user_may(actor, Action.SETTINGS, repository):
        if notes is not None:
            notes.append(
                f"{slug} was left as it is: changing its {', '.join(sorted(before))} needs the Admin role on it."
            )
        return repository
    assign_changed(repository, wanted)
    repository.save()
    audit_record(
        action="repository.update", actor=actor, target=slug, repository=repository,
        changes=audit_changes(before, {key: getattr(repository, key) for key in before}),
    )
    return repository


def assign_changed(instance, values: dict) -> bool:
    """Set `values` on `instance`; whether any of them changed it (so only a change is saved)."""
    changed = False
    for name, value in values.items():
        if getattr(instance, name) != value:
            setattr(instance, name, value)
            changed = True
    return changed


def finding_event_for(
    *, finding: Finding, created: bool, changed: list[str], actor: AbstractBaseUser | None, source: str
) -> FindingEvent:
    """The (unsaved) history event of a created or edited finding: who, when, what changed."""
    return FindingEvent(
        finding=finding,
        kind=FindingEvent.Kind.CREATED if created else FindingEvent.Kind.EDITED,
        from_status="" if created else finding.status,
        to_status=finding.status,
        actor=actor if actor is not None and actor.is_authenticated else None,
        note="" if created else f"Changed {', '.join(changed)}.",
        source=source,
    )


def evidence_line(evidence: Evidence) -> str:
    return f"{evidence.get_kind_display()}: {evidence.describe()}"


def evidence_described(finding: Finding) -> list[str]:
    """A finding's evidence as the audit log and the dry run show it, one line an item."""
    return [evidence_line(evidence) for evidence in finding.evidence.order_by("position")]


@writes("finding.edit")
def finding_write(
    *,
    pull_request: PullRequest,
    item: dict,
    actor: AbstractBaseUser | None,
    source: str,
    finding: Finding | None = None,
    default_commit: Commit | None = None,
) -> FindingSave:
    """Create (`finding` None) or edit a finding from `item`, one finding in the bundle's shape as
    `bundle_schema.finding_validate` returns it: its fields and its whole evidence list saved in one
    transaction, with one history event (who, when, which fields) and one audit entry (before and
    after). A creation onto a number already taken is refused, as a renumbering is. Nothing
    changed records nothing. Raises FindingError naming the field; the refusal is audited."""
    target = f"{pull_request.reference} finding {finding.number if finding else item['number']}"
    action = "finding.edit" if finding else "finding.create"
    actor_check(actor, Action.WRITE, pull_request.repository, audit_action=action, target=target)
    try:
        try:
            return _finding_write(pull_request, item, actor, source, finding, default_commit, action)
        except IntegrityError:
            # Two people took the same number at once: the unique constraint decided.
            raise FindingError(
                "number", f"Finding number {item['number']} was just taken on {pull_request.reference}; "
                "choose a free number and save again.",
            ) from None
    except RecheckError as error:
        audit_refusal(
            action=action, actor=actor, source=source, target=target, repository=pull_request.repository,
            message=str(error),
        )
        raise


@transaction.atomic
def _finding_write(pull_request, item, actor, source, finding, default_commit, action) -> FindingSave:
    if finding is None and Finding.objects.filter(pull_request=pull_request, number=item["number"]).exists():
        raise FindingError(
            "number", f"Finding number {item['number']} is taken on {pull_request.reference}; choose a free number."
        )
    if finding is not None:
        finding = Finding.objects.select_for_update().select_related("pull_request__repository").get(pk=finding.pk)
        evidence_before = evidence_described(finding)
    with pull_request_changes_batched(pull_request_id=pull_request.pk):
        saved = finding_save(pull_request=pull_request, number=item["number"], values=finding_values(item),
                             finding=finding)
        evidence_changed = "evidence" in item and finding_evidence_set(
            finding=saved.finding, items=item["evidence"], default_commit=default_commit, fresh=saved.created,
            actor=actor, notes=saved.notes,
        )
    changes = audit_changes(saved.before, {name: getattr(saved.finding, name) for name in saved.before})
    if evidence_changed and not saved.created:
        saved.before[EVIDENCE_CHANGE] = evidence_before
        changes[EVIDENCE_CHANGE] = [evidence_before, evidence_described(saved.finding)]
    if saved.created:
        changes = audit_changes({}, {name: getattr(saved.finding, name) for name in ("number", *FINDING_FIELDS)})
        changes[EVIDENCE_CHANGE] = [None, evidence_described(saved.finding)]
    if not (saved.created or saved.before):
        return saved
    finding_event_for(finding=saved.finding, created=saved.created, changed=saved.changed, actor=actor,
                      source=source).save()
    audit_record(
        action=action, actor=actor, source=source,
        target=f"{pull_request.reference} finding {saved.finding.number}",
        repository=pull_request.repository, changes=changes,
    )
    return saved
