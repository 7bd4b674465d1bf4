"""Exporting a pull request's review as a bundle: the import format, so that importing an export
reproduces the review (pull request, pins, findings, evidence, statuses and resolutions).

Fields that hold their default are left out to keep the YAML readable; the importer fills the same
defaults back in, so leaving them out loses nothing."""
import yaml
from django.db.models import Prefetch

from core.forges import DEFAULT_FORGE
from findings.models import Evidence, Finding, FindingLink, TagDescription
from reviews.models import PullRequest, Repository


def bundle_export(*, pull_request: PullRequest, reader=None) -> dict:
    """The review of `pull_request` as bundle data (what `review_import` takes). For a `reader`
    (the person asking, through the API), links to findings of repositories they may not read are
    left out; without one (a command run by the operator) every link is exported."""
    repository = pull_request.repository
    links = FindingLink.objects.select_related("target__pull_request__repository")
    if reader is not None:
        links = links.filter(target__in=Finding.objects.readable_by(reader))
    pins = pull_request.pins.select_related("commit").in_order()
    findings = (
        Finding.objects.for_pull_request(pull_request)
        .select_related("resolved_commit")
        .prefetch_related(
            "evidence__commit",
            "evidence__submodule_repository",
            "tags",
            Prefetch("links_out", queryset=links),
        )
        .order_by("number")
    )
    findings = list(findings)
    tags = sorted({tag for finding in findings for tag in finding.tags.all()}, key=lambda tag: tag.slug)
    bundle = {
        "repository": _repository(repository),
        "pull_request": _without_empty(
            {
                "number": pull_request.number,
                "title": pull_request.title,
                "url": pull_request.url,
                "state": pull_request.state,
                "before": pull_request.before,
                "change": pull_request.change,
                "status": pull_request.status_note,
                "base_branch": pull_request.base_branch,
                "head_branch": pull_request.head_branch,
                "opening": pull_request.opening,
                "closing": pull_request.closing,
                "comments_left": pull_request.comments_left,
                "cleanups_not_recorded": pull_request.cleanups_not_recorded,
                "attestation": _without_empty(
                    {
                        "text": pull_request.attestation,
                        "by": pull_request.attested_by,
                        "at": pull_request.attested_at.isoformat() if pull_request.attested_at else None,
                        "commit": pull_request.attested_commit.sha if pull_request.attested_commit else None,
                    }
                ) if pull_request.attestation else None,
            }
        ),
        "commits": [_without_empty({"sha": pin.commit.sha, "role": pin.role, "note": pin.note}) for pin in pins],
        "findings": [_finding(finding) for finding in findings],
    }
    if tags:
        # What each tag means in this repository: the description its bundle would import.
        described = dict(
            TagDescription.objects.filter(repository=pull_request.repository, tag__in=tags)
            .values_list("tag_id", "description")
        )
        bundle["tags"] = [_without_empty({"slug": tag.slug, "description": described.get(tag.pk, "")}) for tag in tags]
    return bundle


def _repository(repository: Repository) -> dict:
    return _without_empty(
        {
            "slug": repository.slug,
            # GitHub, the default, is left out like every other default.
            "forge": "" if repository.forge == DEFAULT_FORGE else repository.forge,
            "forge_url": repository.forge_url,
            "clone_url": repository.clone_url,
            "web_url": repository.web_url,
            "default_branch": repository.default_branch,
            # Public is the default, left out like every other default.
            "visibility": "" if repository.is_public else repository.visibility,
        }
    )


def _finding(finding: Finding) -> dict:
    item = {
        "number": finding.number,
        "kind": finding.kind,
        "caught_by": finding.caught_by,
        "title": finding.title,
        "summary": finding.summary,
        "body": finding.body,
        "fix": finding.fix,
        "review_comment_url": finding.review_comment_url,
    }
    if finding.path:
        item["location"] = _without_empty({"path": finding.path, "line": finding.line})
    # The status is always written, "open" too: importing the export over a review whose finding
    # was closed since should reopen it, as the export says.
    item["status"] = finding.status
    if finding.status != Finding.Status.OPEN:
        item["resolution"] = _without_empty(
            {
                "commit": finding.resolved_commit.sha if finding.resolved_commit else None,
                "note": finding.resolution_note,
                "at": finding.resolved_at.isoformat() if finding.resolved_at else None,
            }
        )
    item["evidence"] = [_evidence(evidence) for evidence in finding.evidence.all()]
    item["tags"] = [tag.slug for tag in finding.tags.all()]
    item["links"] = [
        _without_empty({"kind": link.kind, "finding": link.target.reference, "note": link.note})
        for link in finding.links_out.all()
    ]
    return _without_empty(item, keep=("evidence",))


def _evidence(evidence: Evidence) -> dict:
    submodule = evidence.submodule_repository
    return _without_empty(
        {
            "kind": evidence.kind,
            # Always explicit, so the import does not depend on which commit is pinned as reviewed.
            "commit": evidence.commit.sha if evidence.commit else None,
            "path": evidence.path,
            "start_line": evidence.start_line,
            "end_line": evidence.end_line,
            "text": evidence.text,
            "regex": evidence.regex,
            "expect": evidence.expect,
            "sha": evidence.sha,
            "caption": evidence.caption,
            "submodule": _repository(submodule) if submodule else None,
            "branch": evidence.reference_branch,
            "check": evidence.check_name,
            "tests": evidence.check_tests,
            "results": [_without_empty(result) for result in evidence.check_results],
            "app": evidence.check_app,
        }
    )


def _without_empty(values: dict, keep: tuple[str, ...] = ()) -> dict:
    return {name: value for name, value in values.items() if name in keep or value not in (None, "", [], {})}


class _BundleDumper(yaml.SafeDumper):
    """Writes multi-line text (bodies, fixes, snippets) as literal blocks a person can read."""

    def ignore_aliases(self, data) -> bool:
        # The import refuses aliases (they are how a small text becomes a huge document).
        return True


def _represent_text(dumper: yaml.SafeDumper, value: str):
    # PyYAML falls back to a quoted scalar by itself when a literal block cannot hold the text
    # exactly (trailing spaces, special characters), so asking for one never changes the value.
    style = "|" if "\n" in value else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", str(value), style=style)


_BundleDumper.add_representer(str, _represent_text)
# Choices (a field's default, e.g. PullRequest.State.OPEN) are str subclasses: written as plain text.
_BundleDumper.add_multi_representer(str, _represent_text)


def bundle_dump(data: dict) -> str:
    """Bundle data as YAML text that `parse_bundle` reads back to the same data."""
    return yaml.dump(data, Dumper=_BundleDumper, sort_keys=False, allow_unicode=True, width=100)
