"""Importing a review bundle: one transaction, idempotent, keyed by repository slug + pull request
number + finding number. A malformed bundle changes nothing and the error names the field."""
import re
from dataclasses import dataclass, field

from django.db import connection, transaction

from findings.exchange.schema import BundleSerializer, flatten_errors
from core.documents import DocumentError, load_json, load_yaml
from findings.models import Evidence, Finding, FindingEvent
from access.audit import _plain, audit_record, audit_refusal, writes
from access.permissions import Action, may_add_repositories, refusal, user_may
from reviews.selectors import readable_repositories
from findings.services.tags_and_links import (
    finding_by_reference,
    finding_links_set,
    finding_tags_apply,
    tag_description_apply,
    tag_get_or_create,
)
from findings.services.authoring import (
    FINDING_FIELDS,
    EvidenceList,
    assign_changed,
    finding_event_for,
    finding_values,
    findings_evidence_set,
    findings_save,
)
from findings.services.resolution import finding_resolve
from core.errors import BundleError, FindingError, RecheckError
from reviews.models import SLUG_RE, PinnedCommit, PullRequest, Repository
from reviews.selectors import reviewed_pin
from reviews.services import (
    commit_get_or_create,
    pull_request_changed,
    pull_request_changes_batched,
    pull_request_pin_commit,
)

MAX_BUNDLE_BYTES = 5_000_000


class BundleInvalid(BundleError):
    """A bundle with one or more invalid fields; `errors` lists every (field, message)."""

    def __init__(self, errors: list[tuple[str, str]]):
        self.errors = errors
        field_name, message = errors[0]
        super().__init__(field_name, message)
        self.args = ("; ".join(f"{name}: {text}" if name else text for name, text in errors),)

    def __str__(self) -> str:
        return self.args[0]


@dataclass
class ImportReport:
    pull_request: str
    created: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    # What the bundle asked for and the import deliberately left undone (no role for it).
    notes: list[str] = field(default_factory=list)
    # Each object that existed and changed: {label: {field: [before, after]}} (JSON-safe values).
    changes: dict[str, dict[str, list]] = field(default_factory=dict)

    def record(self, label: str, created: bool, changed: bool) -> None:
        (self.created if created else self.updated if changed else self.unchanged).append(label)

    def change(self, label: str, name: str, before, after) -> None:
        self.changes.setdefault(label, {})[name] = [_plain(before), _plain(after)]

    @property
    def change_rows(self) -> list[dict]:
        """The changes one field a row, each value as lines (a list value a line an item, an
        empty one none): what the bundle page shows."""
        return [
            {"label": label, "field": name, "before": _lines(values[0]), "after": _lines(values[1])}
            for label, fields in self.changes.items() for name, values in fields.items()
        ]

    def audit_changes(self) -> dict:
        """The changes as the audit log keeps them: `<object label>.<field>`: [before, after]."""
        return {f"{label}.{name}": values for label, fields in self.changes.items() for name, values in fields.items()}

    def as_dict(self) -> dict:
        return {
            "pull_request": self.pull_request,
            "created": self.created,
            "updated": self.updated,
            "unchanged": self.unchanged,
            "notes": self.notes,
            "changes": self.changes,
        }


def _lines(value) -> list[str]:
    if value is None or value == "":
        return []
    return [str(item) for item in value] if isinstance(value, list) else [str(value)]


def parse_bundle(raw: str | bytes) -> dict:
    """A bundle's text (YAML or JSON; JSON is YAML too, but its errors read better) as data."""
    if isinstance(raw, bytes):
        if len(raw) > MAX_BUNDLE_BYTES:
            raise BundleError("", f"The bundle is larger than {MAX_BUNDLE_BYTES // 1_000_000} MB.")
        try:
            raw = raw.decode("utf-8")
        except UnicodeDecodeError:
            raise BundleError("", "The bundle is not UTF-8 text.") from None
    if len(raw) > MAX_BUNDLE_BYTES:
        raise BundleError("", f"The bundle is larger than {MAX_BUNDLE_BYTES // 1_000_000} MB.")
    try:
        # JSON is YAML too, but its own reader is faster and its errors read better.
        data = load_json(raw) if raw.lstrip().startswith("{") else load_yaml(raw)
    except DocumentError as error:
        raise BundleError("", str(error)) from None
    if not isinstance(data, dict):
        raise BundleError("", "A bundle is a mapping with repository, pull_request, commits and findings.")
    return data


def validate_bundle(data: dict) -> dict:
    serializer = BundleSerializer(data=data)
    if not serializer.is_valid():
        raise BundleInvalid(flatten_errors(serializer.errors))
    return serializer.validated_data


@writes("review.import")
def review_import(*, data: dict, actor=None, dry_run: bool = False) -> ImportReport:
    """Create or update the review that `data` (a parsed bundle) describes, in one transaction.
    The audit log records the import with what it created and changed (each changed field's
    before and after), or its refusal. A `dry_run` is the real import, rolled back: its report
    says what importing would do, field by field, and nothing stays written (but a refusal)."""
    try:
        review_import_check(data=data, actor=actor)
        if not dry_run:
            return _review_import(data=data, actor=actor)
        with transaction.atomic():
            report = _review_import(data=data, actor=actor)
            transaction.set_rollback(True)
        return report
    except RecheckError as error:
        repository = data.get("repository") if isinstance(data, dict) else None
        pull_request = data.get("pull_request") if isinstance(data, dict) else None
        slug = repository.get("slug", "") if isinstance(repository, dict) else ""
        number = pull_request.get("number", "") if isinstance(pull_request, dict) else ""
        audit_refusal(
            action="review.import", actor=actor, target=f"{slug}#{number}" if slug else "", message=str(error)
        )
        raise


@transaction.atomic
def _review_import(*, data: dict, actor=None) -> ImportReport:
    bundle = validate_bundle(data)
    notes: list[str] = []
    repository, repo_created, repo_before = _import_repository(bundle["repository"], actor, notes)
    pull_request, pr_created, pr_before = _import_pull_request(repository, bundle["pull_request"])
    report = ImportReport(pull_request=pull_request.reference, notes=notes)
    for label, instance, created, before in (
        (f"repository {repository.slug}", repository, repo_created, repo_before),
        (f"pull request {pull_request.reference}", pull_request, pr_created, pr_before),
    ):
        report.record(label, created, bool(before))
        for name, value in before.items():
            report.change(label, name, value, getattr(instance, name))
    with pull_request_changes_batched(pull_request_id=pull_request.pk):
        _import_contents(bundle, repository, pull_request, actor, report)
    if len(bundle["findings"]) + sum(len(item.get("evidence", ())) for item in bundle["findings"]) >= ANALYZE_AFTER_ROWS:
        transaction.on_commit(_analyze_imported_tables)
    return report


def _import_contents(bundle: dict, repository: Repository, pull_request: PullRequest, actor, report) -> None:
    for index, item in enumerate(bundle["commits"]):
        try:
            commit = commit_get_or_create(repository=repository, sha=item["sha"])
        except RecheckError as error:
            raise BundleInvalid([(f"commits[{index}].sha", str(error))]) from None
        pin, created = pull_request_pin_commit(
            pull_request=pull_request, commit=commit, role=item["role"], note=item["note"]
        )
        changed = assign_changed(pin, {"role": item["role"]})
        if changed:
            pin.save(update_fields=["role"])
        report.record(f"pin {commit.short_sha} ({item['role']})", created, changed)

    reviewed = reviewed_pin(PinnedCommit.objects.filter(pull_request=pull_request).select_related("commit"))
    for item in bundle["tags"]:
        # What the tag means in this repository; a description left empty is left as it is.
        tag = tag_get_or_create(slug=item["slug"])
        change = item["description"] and tag_description_apply(
            tag=tag, repository=repository, description=item["description"]
        )
        if change:
            report.change(f"tag {tag.slug}", "description", *change)
    events: list[FindingEvent] = []
    saved = _import_findings(pull_request, bundle["findings"], reviewed.commit if reviewed else None, actor, events,
                             report)
    # The history of every finding created or edited, in one statement, before any status change
    # the bundle makes (so a finding's history reads created, then fixed).
    FindingEvent.objects.bulk_create(events, batch_size=1000)
    imported = []
    for index, (item, (finding, created, changed)) in enumerate(zip(bundle["findings"], saved, strict=True)):
        label = f"finding {finding.number}"
        status_before = finding.status
        status_changed = _import_status(finding, item, f"findings[{index}]", actor)
        if status_changed and not created:
            report.change(label, "status", status_before, finding.status)
        tags_change = finding_tags_apply(finding=finding, slugs=item["tags"]) if "tags" in item else None
        if tags_change and not created:
            report.change(label, "tags", *tags_change)
        report.record(label, created, changed or status_changed or bool(tags_change))
        imported.append((index, finding, item, created))
    # Links last: one may name a finding that comes later in the same bundle.
    for index, finding, item, created in imported:
        links_change = "links" in item and _import_links(finding, item["links"], f"findings[{index}]", actor)
        if links_change:
            label = f"finding {finding.number}"
            if not created:
                report.change(label, "links", *links_change)
            if label in report.unchanged:
                report.unchanged.remove(label)
                report.updated.append(label)
    changes = {"created": [None, report.created], "updated": [None, report.updated]} if report.created or report.updated else {}
    audit_record(
        action="review.import", actor=actor, target=pull_request.reference, repository=repository,
        changes={**changes, **report.audit_changes()},
        message=" ".join(["Nothing changed." if not (report.created or report.updated) else "", *report.notes]).strip(),
    )
    return report


# An import this large can change the tables' shape enough that the planner's statistics mislead
# it (the gate of a PR took 413 ms after a big import on PostgreSQL, 58 ms once analysed); the
# autovacuum daemon would get there, minutes later.
ANALYZE_AFTER_ROWS = 1000


def _analyze_imported_tables() -> None:
    tables = [model._meta.db_table for model in (Finding, Evidence, FindingEvent)]
    with connection.cursor() as cursor:
        # Both databases speak ANALYZE: PostgreSQL takes a list, SQLite one table at a time.
        if connection.vendor == "postgresql":
            cursor.execute(f"ANALYZE {', '.join(map(connection.ops.quote_name, tables))}")
        else:
            for table in tables:
                cursor.execute(f"ANALYZE {connection.ops.quote_name(table)}")


def _save_by_key(model, key: dict, values: dict):
    """The row `key` names, created or brought up to date with `values`: (row, created, the
    changed fields' values before, empty for a new row)."""
    instance = model.objects.filter(**key).first()
    created = instance is None
    instance = instance or model(**key)
    before = {name: getattr(instance, name) for name, value in values.items() if getattr(instance, name) != value}
    assign_changed(instance, values)
    if created or before:
        instance.save()
    return instance, created, {} if created else before


def _import_repository(values: dict, actor, notes: list[str]) -> tuple[Repository, bool, dict]:
    """The bundle's repository, created when new. An existing one's clone URL, web URL and
    default branch are its settings: changed only by someone who may change them (the Admin
    role), and otherwise left as they are, said in `notes` (importing never rewrites where a
    repository is fetched from), as for a gitlink item's submodule repository."""
    visibility = values.get("visibility")
    existing = Repository.objects.filter(slug=values["slug"]).first()
    if existing is not None and visibility and visibility != existing.visibility:
        raise BundleInvalid([(
            "repository.visibility",
            f"{existing.slug} is {existing.visibility} here; a bundle sets the visibility of a new repository only. "
            "Change it in the admin, or leave visibility out.",
        )])
    fields = _named(Repository, values, {"clone_url": "clone_url", "web_url": "web_url", "default_branch": "default_branch",
                                         "forge": "forge", "forge_url": "forge_url"})
    refused = sorted(
        name for name, value in fields.items()
        if existing is not None and getattr(existing, name) != value and actor is not None
        and not user_may(actor, Action.SETTINGS, existing)
    )
    if refused:
        notes.append(f"{existing.slug} was left as it is: changing its {', '.join(refused)} needs the Admin role on it.")
        fields = {name: value for name, value in fields.items() if name not in refused}
    if existing is None and visibility:
        fields["visibility"] = visibility
    return _save_by_key(Repository, {"slug": values["slug"]}, fields)


class ImportRefused(RecheckError):
    """The actor may not import this bundle (a 403 in the API); nothing was imported."""


def review_import_check(*, data, actor) -> None:
    """Refuse, with ImportRefused, a bundle `actor` may not import: into an existing repository
    they hold no import role on, or into a new one without an instance-wide role that lets them
    import (only those add repositories). A repository hidden from them gets the same words as
    one that does not exist, so the answer confirms nothing. No actor (a command run by the
    operator) may import anything."""
    if actor is None:
        return
    repository = data.get("repository") if isinstance(data, dict) else None
    slug = repository.get("slug") if isinstance(repository, dict) else None
    if not isinstance(slug, str) or not re.fullmatch(SLUG_RE, slug):
        return  # validation names what is wrong with the slug, before anything is looked up
    existing = Repository.objects.filter(slug=slug).first()
    if existing is not None and user_may(actor, Action.IMPORT, existing):
        return
    if existing is None and may_add_repositories(actor):
        return
    target = existing if existing is not None and user_may(actor, Action.READ, existing) else None
    reason = refusal(actor, Action.IMPORT, target) if target is not None else (
        f"{actor.get_username()} may not import reviews into {slug}: that needs the Reviewer role on it "
        "(or, for a repository new to this server, an instance-wide role); ask an admin of this server to grant it."
    )
    raise ImportRefused(reason)


# A bundle's pull request fields and the model fields they set.
PULL_REQUEST_FIELDS = {
    "title": "title", "url": "url", "state": "state", "before": "before", "change": "change", "status": "status_note",
    "opening": "opening", "closing": "closing", "comments_left": "comments_left",
    "cleanups_not_recorded": "cleanups_not_recorded", "base_branch": "base_branch", "head_branch": "head_branch",
}


def _named(model, values: dict, fields: dict[str, str]) -> dict:
    """The model fields that `values` (a validated part of a bundle) names, PATCH-like: a field
    left out is not touched, and null sets the field's empty value (None where the column takes
    it, else an empty string)."""
    named = {}
    for key, name in fields.items():
        if key in values:
            value = values[key]
            named[name] = value if value is not None or model._meta.get_field(name).null else ""
    return named


def _import_pull_request(repository: Repository, values: dict) -> tuple[PullRequest, bool, dict]:
    fields = _named(PullRequest, values, PULL_REQUEST_FIELDS)
    if "attestation" in values:
        # The attestation is one statement: given, it replaces the whole of it; null clears it.
        attestation = values["attestation"] or {}
        attested_commit = None
        if attestation.get("commit"):
            try:
                attested_commit = commit_get_or_create(repository=repository, sha=attestation["commit"])
            except RecheckError as error:
                raise BundleInvalid([("pull_request.attestation.commit", str(error))]) from None
        fields.update(
            attestation=attestation.get("text", ""), attested_by=attestation.get("by", ""),
            attested_at=attestation.get("at"), attested_commit=attested_commit,
        )
    return _save_by_key(PullRequest, {"repository": repository, "number": values["number"]}, fields)


def _import_findings(pull_request, items: list[dict], reviewed_commit, actor, events: list[FindingEvent],
                     report: ImportReport) -> list[tuple[Finding, bool, bool]]:
    """Save the findings' fields and evidence with the services the site's editor uses, in their
    batch forms (a few queries for the bundle, not a few a finding); each one's history event
    joins `events` and its field changes the report. Returns, for each finding, the finding,
    whether it was created and whether it changed."""
    try:
        saves = findings_save(pull_request=pull_request, items=[(item["number"], finding_values(item)) for item in items])
    except FindingError as error:
        raise BundleInvalid([("findings", error.message)]) from None
    with_evidence = [index for index, item in enumerate(items) if "evidence" in item]
    lists = {index: EvidenceList(finding=saves[index].finding, items=items[index]["evidence"], fresh=saves[index].created)
             for index in with_evidence}
    try:
        # Before and after, from the rows the service reads anyway: no query more a finding.
        findings_evidence_set(lists=list(lists.values()), default_commit=reviewed_commit, actor=actor, notes=report.notes)
    except FindingError as error:
        raise BundleInvalid([(f"findings[{with_evidence[error.index]}].{error.field}", error.message)]) from None
    saved = []
    for index, saved_finding in enumerate(saves):
        finding, created, before = saved_finding.finding, saved_finding.created, saved_finding.before
        evidence = lists.get(index)
        evidence_changed = evidence is not None and evidence.changed
        label = f"finding {finding.number}"
        for name in FINDING_FIELDS:
            if name in before:
                report.change(label, name, before[name], getattr(finding, name))
        if evidence_changed and not created:
            report.change(label, "evidence", *evidence.described)
        if created or before or evidence_changed:
            changed = saved_finding.changed + (["evidence"] if evidence_changed and not created else [])
            events.append(finding_event_for(
                finding=finding, created=created, changed=changed, actor=actor, source=FindingEvent.Source.IMPORT,
            ))
        saved.append((finding, created, bool(before) or evidence_changed))
    return saved


def _import_links(finding: Finding, items: list[dict], where: str, actor=None) -> list | None:
    # A person links only to findings they may read; one elsewhere is missing in the same words.
    readable = readable_repositories(actor) if actor is not None else None
    links = []
    for position, item in enumerate(items):
        try:
            target = finding_by_reference(item["finding"], repositories=readable)
            links.append((target, item["kind"], item["note"]))
        except RecheckError as error:
            raise BundleInvalid([(f"{where}.links[{position}].finding", str(error))]) from None
    try:
        return finding_links_set(finding=finding, links=links, actor=actor)
    except RecheckError as error:
        raise BundleInvalid([(f"{where}.links", str(error))]) from None


def _import_status(finding: Finding, item: dict, where: str, actor) -> bool:
    status = item.get("status")
    if status is None or status == finding.status:
        return False
    resolution = item.get("resolution") or {}
    try:
        finding_resolve(
            finding=finding,
            status=status,
            actor=actor,
            source=FindingEvent.Source.IMPORT,
            commit_sha=resolution.get("commit") or "",
            note=resolution.get("note", ""),
            # A bundle records a decision made elsewhere, and may arrive before its repository is
            # fetched: its SHA is recorded as given and resolved by the next fetch.
            sha_in_mirror=False,
        )
    except RecheckError as error:
        field = {"commit": "resolution.commit", "still_holds": "resolution.commit", "note": "resolution.note"}.get(
            getattr(error, "field", ""), "status"
        )
        raise BundleInvalid([(f"{where}.{field}", str(error))]) from None
    if status != Finding.Status.OPEN and resolution.get("at"):
        # The history keeps when the import recorded the change; the finding says when it happened.
        Finding.objects.filter(pk=finding.pk).update(resolved_at=resolution["at"])
        pull_request_changed(pull_request_id=finding.pull_request_id)
    finding.refresh_from_db()
    return True
