"""Findings: a row of the list (written out by hand for long lists), why a search matched it, the
detail with its evidence, tags and links, its status history, and the tags findings carry."""
import datetime
import functools
from json.encoder import encode_basestring

from django.db.models import F
from django.urls import get_script_prefix, get_urlconf
from django.urls import reverse as django_reverse
from django.utils import timezone
from django.utils.encoding import iri_to_uri
from django.utils.functional import cached_property
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers
from rest_framework.reverse import reverse

from api.serializers.fields import AbsoluteSiteUrlField, ApiUrlField
from api.serializers.related import FindingLinkSerializer, finding_link_data
from api.serializers.verifications import EvidenceSerializer
from findings.models import Finding, FindingEvent, Tag
from findings.state.stored import finding_state


class SearchMatchSerializer(serializers.Serializer):
    rank = serializers.FloatField(help_text="Higher is a better match; comparable within one search only.")
    reasons = serializers.ListField(
        child=serializers.CharField(), help_text='Where the words were found, e.g. "title: tolerance".'
    )
    excerpt = serializers.CharField(
        help_text="A passage of the summary, body or fix, HTML-escaped, the matched words in <mark>; may be empty."
    )


# An id no finding has, for URLs reversed once and filled in per row.
_PK_PLACEHOLDER = "9223372036854775807"


_DATETIME = serializers.DateTimeField()


@functools.cache
def _detail_path(urlconf, script_prefix: str) -> str:
    """A finding's API path with a placeholder for its id, under the URLconf and script prefix it
    was reversed with (what DRF's `reverse` gives before making it absolute: the API is not
    versioned)."""
    return django_reverse("api:finding-detail", kwargs={"pk": _PK_PLACEHOLDER}, urlconf=urlconf)


def _datetime(value, zone, utc=False):
    """What DRF's DateTimeField makes of an aware datetime (ISO 8601 in the current time zone, UTC
    as Z), without its per-value lookups; `value` may also be the text SQLite stores a datetime as
    (UTC, `str` of the naive datetime: `YYYY-MM-DD HH:MM:SS[.ffffff]`), written as it is when the
    current time zone is UTC (`utc`)."""
    if value is None:
        return None
    if isinstance(value, str):
        if utc and len(value) in (19, 26) and value[10] == " ":
            return f"{value[:10]}T{value[11:]}Z"  # what isoformat gives, without parsing it
        value = datetime.datetime.fromisoformat(value).replace(tzinfo=datetime.UTC)
    if timezone.is_naive(value):
        return _DATETIME.to_representation(value)
    text = value.astimezone(zone).isoformat()
    return text[:-6] + "Z" if text.endswith("+00:00") else text


class FindingSerializer(serializers.ModelSerializer):
    url = ApiUrlField("api:finding-detail", lambda finding: {"pk": finding.pk})
    html_url = AbsoluteSiteUrlField()
    repository = serializers.CharField(source="pull_request.repository.slug", read_only=True)
    pull_request_reference = serializers.CharField(source="pull_request.reference", read_only=True)
    resolved_by = serializers.SlugRelatedField(slug_field="username", read_only=True, allow_null=True)
    resolved_commit = serializers.SlugRelatedField(slug_field="sha", read_only=True, allow_null=True)
    search = serializers.SerializerMethodField(help_text="Why it matched `q`; null when the list was not searched.")
    possibly_regressed = serializers.SerializerMethodField(
        help_text="Marked fixed, but its evidence holds again at a commit pinned after that: a human should look."
    )
    verdict = serializers.SerializerMethodField(
        help_text="Its verdict at its pull request's latest verified pin; null while it has none there."
    )
    resolution = serializers.SerializerMethodField(
        help_text="How it got its status: open, fixed, fixed_anyway (marked fixed while its evidence still "
        "held) or dismissed."
    )
    verdict_reason = serializers.SerializerMethodField(
        help_text="Why a verdict of error is one, when its check items say: waiting (for CI), not_run or flaky; "
        "empty otherwise. Read from its pull request's stored state, as `verdict` is."
    )

    class Meta:
        model = Finding
        fields = [
            "id", "url", "html_url", "repository", "pull_request", "pull_request_reference", "number", "kind",
            "caught_by", "title", "summary", "path", "line", "status", "resolution", "verdict", "verdict_reason",
            "possibly_regressed", "resolved_by", "resolved_at", "resolved_commit", "created_at", "updated_at", "search",
        ]

    # What a list reads beside the finding's own columns, as values of the row rather than as
    # related objects: the list's queryset annotates them (FindingList), and a row is then one
    # object, not four.
    LIST_ANNOTATIONS = {
        "list_repository": F("pull_request__repository__slug"),
        "list_pull_request_number": F("pull_request__number"),
        "list_resolved_by": F("resolved_by__username"),
        "list_resolved_commit": F("resolved_commit__sha"),
    }

    def to_representation(self, finding):
        # A list page holds up to 200 of these: written out, the row costs a fifth of what the
        # fields' generic machinery makes of it. The same output (a test compares the two);
        # subclasses that add fields, and findings without the list's annotations, take the
        # generic path.
        if type(self) is not FindingSerializer or not hasattr(finding, "list_repository"):
            return super().to_representation(finding)
        state = finding_state(finding)
        row = self._row(
            finding.pk, finding.pull_request_id, finding.number, str(finding.kind), str(finding.caught_by),
            finding.title, finding.summary, finding.path, finding.line, str(finding.status), finding.resolved_at,
            finding.created_at, finding.updated_at, finding.list_repository, finding.list_pull_request_number,
            finding.list_resolved_by, finding.list_resolved_commit,
            # From the pull request's stored state (`findings.state`), as every interface reads them.
            state.get("verdict"), state.get("resolution", str(finding.status)), bool(state.get("possibly_regressed")),
            state.get("verdict_reason") or "",
        )
        row["search"] = self.get_search(finding)
        return row

    def list_rows(self, rows) -> list[dict]:
        """A page read as values (`findings.selectors.list_rows`), each row as `to_representation`
        writes a finding of the list."""
        return [self._row(*row[:21]) for row in rows]

    def list_json(self, rows) -> str:
        """The same rows as `list_rows`, written as the JSON DRF's renderer makes of them (compact,
        not ASCII-only), without the items of the list's brackets: a test holds the two equal."""
        api_before, api_after, origin, slugs, moment = self._per_page
        text = encode_basestring
        before, after, origin = text(api_before)[:-1], text(api_after)[1:], text(origin)[1:-1]
        written = []
        for (pk, pull_request_id, number, kind, caught_by, title, summary, path, line, status, resolved_at,
             created_at, updated_at, slug, pull_request_number, resolved_by, resolved_commit, verdict, resolution,
             possibly_regressed, verdict_reason, *_) in rows:
            quoted = slugs.get(slug)
            if quoted is None:
                quoted = slugs[slug] = iri_to_uri(slug)
            resolved_at = moment(resolved_at)
            written.append(
                f'{{"id":{pk},"url":{before}{pk}{after},'
                f'"html_url":"{origin}{text(f"/{quoted}/pull/{pull_request_number}/findings/{number}/")[1:]},'
                f'"repository":{text(slug)},"pull_request":{pull_request_id},'
                f'"pull_request_reference":{text(f"{slug}#{pull_request_number}")},"number":{number},'
                f'"kind":{text(kind)},"caught_by":{text(caught_by)},"title":{text(title)},'
                f'"summary":{text(summary)},"path":{text(path)},"line":{"null" if line is None else line},'
                f'"status":{text(status)},"resolution":{text(resolution)},'
                f'"verdict":{"null" if verdict is None else text(verdict)},'
                f'"verdict_reason":{text(verdict_reason or "")},'
                f'"possibly_regressed":{"true" if possibly_regressed else "false"},'
                f'"resolved_by":{"null" if resolved_by is None else text(resolved_by)},'
                f'"resolved_at":{"null" if resolved_at is None else text(resolved_at)},'
                f'"resolved_commit":{"null" if resolved_commit is None else text(resolved_commit)},'
                f'"created_at":{text(moment(created_at))},"updated_at":{text(moment(updated_at))},"search":null}}'
            )
        return ",".join(written)

    def _row(self, pk, pull_request_id, number, kind, caught_by, title, summary, path, line, status, resolved_at,
             created_at, updated_at, slug, pull_request_number, resolved_by, resolved_commit, verdict, resolution,
             possibly_regressed, verdict_reason) -> dict:
        api_before, api_after, origin, slugs, moment = self._per_page
        quoted = slugs.get(slug)
        if quoted is None:
            quoted = slugs[slug] = iri_to_uri(slug)
        return {
            "id": pk,
            "url": f"{api_before}{pk}{api_after}",
            # PullRequest.get_absolute_url, then Finding.get_absolute_url, from the row's values (an
            # IRI is quoted a character at a time: the slug's part alone, once a page).
            "html_url": f"{origin}/{quoted}/pull/{pull_request_number}/findings/{number}/",
            "repository": slug,
            "pull_request": pull_request_id,
            "pull_request_reference": f"{slug}#{pull_request_number}",
            "number": number,
            "kind": kind,
            "caught_by": caught_by,
            "title": title,
            "summary": summary,
            "path": path,
            "line": line,
            "status": status,
            "resolution": resolution,
            "verdict": verdict,
            "verdict_reason": verdict_reason or "",
            "possibly_regressed": possibly_regressed,
            "resolved_by": resolved_by,
            "resolved_at": moment(resolved_at),
            "resolved_commit": resolved_commit,
            "created_at": moment(created_at),
            "updated_at": moment(updated_at),
            "search": None,
        }

    @cached_property
    def _per_page(self):
        """The API URL of a finding before and after its id, the site's origin (what
        build_absolute_uri puts before a path) as an URI, the slugs quoted so far and how a date
        is written in the current time zone: once a page, not once a row."""
        request = self.context.get("request")
        api_path = _detail_path(get_urlconf(), get_script_prefix())
        api_url = request.build_absolute_uri(api_path) if request is not None else api_path
        api_before, _, api_after = api_url.partition(_PK_PLACEHOLDER)
        origin = iri_to_uri(request.build_absolute_uri("/")[:-1]) if request is not None else ""
        zone = timezone.get_current_timezone()
        utc = zone is datetime.UTC or getattr(zone, "key", None) in ("UTC", "Etc/UTC")
        return api_before, api_after, origin, {}, functools.partial(_datetime, zone=zone, utc=utc)

    # From the pull request's stored state (`findings.state`), as every interface reads them.
    def get_possibly_regressed(self, finding) -> bool:
        return bool(finding_state(finding).get("possibly_regressed"))

    def get_verdict(self, finding) -> str | None:
        return finding_state(finding).get("verdict")

    def get_resolution(self, finding) -> str:
        return finding_state(finding).get("resolution", str(finding.status))

    def get_verdict_reason(self, finding) -> str:
        return finding_state(finding).get("verdict_reason") or ""

    @extend_schema_field(SearchMatchSerializer(allow_null=True))
    def get_search(self, finding):
        if not hasattr(finding, "search_reasons"):
            return None
        return {
            "rank": getattr(finding, "search_rank", None) or 0.0,
            "reasons": finding.search_reasons,
            "excerpt": str(finding.search_excerpt),
        }


class TagDescriptionSerializer(serializers.Serializer):
    repository = serializers.CharField(source="repository.slug", help_text="owner/name.")
    description = serializers.CharField(help_text="What findings with this tag have in common there.")


class TagSerializer(serializers.ModelSerializer):
    """A tag as the request may see it: its descriptions are those of the repositories the request
    reads (`readable_descriptions`, prefetched by the view), never another's."""

    url = ApiUrlField("api:tag-detail", lambda tag: {"slug": tag.slug})
    html_url = AbsoluteSiteUrlField()
    description = serializers.SerializerMethodField(
        help_text="The first of `descriptions` (by repository), for a client that shows one; empty without any."
    )
    descriptions = TagDescriptionSerializer(
        source="readable_descriptions", many=True, read_only=True,
        help_text="What the tag means in each repository you may read that describes it.",
    )
    findings_count = serializers.IntegerField(read_only=True, help_text="Findings that carry it, that you may read.")
    findings_url = serializers.SerializerMethodField(help_text="Its findings, newest first.")

    class Meta:
        model = Tag
        fields = ["slug", "url", "html_url", "description", "descriptions", "findings_count", "findings_url"]

    def get_description(self, tag) -> str:
        descriptions = getattr(tag, "readable_descriptions", [])
        return descriptions[0].description if descriptions else ""

    def get_findings_url(self, tag) -> str:
        return reverse("api:finding-list", request=self.context.get("request")) + f"?tag={tag.slug}&ordering=-created_at"


class FindingDetailSerializer(FindingSerializer):
    evidence = EvidenceSerializer(many=True, read_only=True)
    tags = serializers.SlugRelatedField(slug_field="slug", many=True, read_only=True)
    links = serializers.SerializerMethodField(help_text="Links to other findings, made from either end.")
    related_url = ApiUrlField("api:finding-related", lambda finding: {"pk": finding.pk})
    review_comment_url = serializers.CharField(read_only=True, help_text="The review comment; may be empty.")
    history_url = ApiUrlField("api:finding-history", lambda finding: {"pk": finding.pk})
    resolve_url = ApiUrlField("api:finding-resolve", lambda finding: {"pk": finding.pk})
    verifications_url = serializers.SerializerMethodField()

    class Meta(FindingSerializer.Meta):
        fields = FindingSerializer.Meta.fields + [
            "body", "fix", "review_comment_url", "resolution_note", "evidence", "tags", "links", "related_url",
            "history_url", "resolve_url", "verifications_url",
        ]

    @extend_schema_field(FindingLinkSerializer(many=True))
    def get_links(self, finding) -> list:
        links = sorted([*finding.links_out.all(), *finding.links_in.all()], key=lambda link: link.pk)
        return FindingLinkSerializer([finding_link_data(link, finding) for link in links], many=True,
                                     context=self.context).data

    def get_verifications_url(self, finding) -> str:
        return reverse("api:verification-list", request=self.context.get("request")) + f"?finding={finding.pk}"


class FindingEventSerializer(serializers.ModelSerializer):
    actor = serializers.SlugRelatedField(slug_field="username", read_only=True, allow_null=True)
    commit = serializers.SlugRelatedField(slug_field="sha", read_only=True, allow_null=True)

    class Meta:
        model = FindingEvent
        fields = ["id", "kind", "from_status", "to_status", "actor", "at", "commit", "note", "source"]
