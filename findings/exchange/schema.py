"""The review bundle format, as DRF serializers: one definition validates the import command,
the import API and the API schema. Errors are flattened to `findings[2].evidence[0].start_line`."""
from collections.abc import Mapping

from rest_framework import serializers

from findings.models import Evidence, Finding, FindingLink
from core.names import finding_parse_reference, tag_slug_validate
from core.errors import FindingError, RecheckError
from engine.verification.checks import MAX_APP, MAX_CHECK_NAME, MAX_NAMED, MAX_RULE, MAX_TEST_ID
from engine.verification.rules import evidence_problems
from engine.git import validate_revision
from core.forges import FORGE_NAMES, SLUG_MAX_LENGTH, slug_problem
from reviews.models import SLUG_RE, PinnedCommit, PullRequest
from reviews.services import commit_sha_checked, repository_clone_url_check, repository_slug_check

# Numbers land in PositiveIntegerFields, whose range is the same on every database; a larger one
# would fail in the database (a server error) instead of being refused here with its field named.
MAX_NUMBER = 2_147_483_647


def _validate_sha(value: str) -> str:
    try:
        return commit_sha_checked(value)
    except RecheckError as error:
        raise serializers.ValidationError(str(error)) from None


def validate_evidence_path(value: str) -> str:
    """A path inside the repository, by the git layer's rules (as evidence paths are checked)."""
    problems, cleaned = evidence_problems({"kind": "path", "path": value, "expect": "exists"})
    if problems:
        raise serializers.ValidationError(problems["path"])
    return cleaned["path"]


class KnownKeysSerializer(serializers.Serializer):
    """A mapping that refuses keys it does not define. Without this DRF drops them silently, so a
    misspelt `caugth_by` or a field an older Recheck does not know would vanish on import."""

    def to_internal_value(self, data):
        if isinstance(data, Mapping):
            unknown = sorted(str(key) for key in data if key not in self.fields)
            if unknown:
                expected = ", ".join(self.fields)
                raise serializers.ValidationError(
                    {key: f"Unknown field {key!r}; this part of a bundle takes: {expected}." for key in unknown}
                )
        return super().to_internal_value(data)


class ShaField(serializers.CharField):
    def __init__(self, **kwargs):
        super().__init__(max_length=40, **kwargs)
        self.validators.append(_validate_sha)

    def to_internal_value(self, data):
        if isinstance(data, int):  # YAML reads an all-digit SHA such as 1234567 as a number
            data = str(data)
        return _validate_sha(super().to_internal_value(data))


class RepositorySerializer(KnownKeysSerializer):
    slug = serializers.RegexField(
        SLUG_RE, max_length=SLUG_MAX_LENGTH,
        error_messages={"invalid": "Use the form owner/name, or group/subgroup/name on GitLab."},
    )
    # Omitted: GitHub for a new repository, and an existing one keeps its forge.
    forge = serializers.ChoiceField(
        choices=list(FORGE_NAMES), required=False,
        help_text="The forge the repository lives on; github when omitted for a new repository.",
    )
    forge_url = serializers.URLField(
        required=False, allow_blank=True, allow_null=True,
        help_text="A self-managed forge's address (GitLab, GitHub Enterprise); omitted or empty: gitlab.com "
        "or github.com.",
    )
    clone_url = serializers.CharField(max_length=500)
    # Omitted, an existing repository keeps what it has and a new one takes the defaults
    # (no web URL, branch main); null clears the web URL.
    web_url = serializers.URLField(required=False, allow_blank=True, allow_null=True)
    default_branch = serializers.CharField(required=False, max_length=200)
    visibility = serializers.ChoiceField(
        choices=["public", "private"], required=False, default=None, allow_null=True,
        help_text="For a repository new to the server: private means only those with a role on it see it. "
        "An existing repository's visibility is changed in the admin, not by a bundle.",
    )

    def validate_slug(self, value: str) -> str:
        try:
            return repository_slug_check(value)
        except RecheckError as error:
            raise serializers.ValidationError(f"{error}.") from None

    def validate_clone_url(self, value: str) -> str:
        try:
            return repository_clone_url_check(value)
        except RecheckError as error:
            raise serializers.ValidationError(f"{error}.") from None

    def validate(self, attrs):
        forge = attrs.get("forge")
        problem = slug_problem(attrs["slug"], forge)
        if problem and forge is None and len(attrs["slug"].split("/")) > 2:
            problem += ": a GitLab project's bundle says forge: gitlab"
        if problem:
            raise serializers.ValidationError({"slug": f"{problem[0].upper()}{problem[1:]}."})
        return attrs


class AttestationSerializer(KnownKeysSerializer):
    """A reviewer's own check ("re-checked by hand at d044f40: all still present"): theirs, with
    who and when, never taken for a verdict."""

    text = serializers.CharField(trim_whitespace=False)
    by = serializers.CharField(max_length=200)
    at = serializers.DateTimeField(required=False, allow_null=True, default=None)
    commit = ShaField(required=False, allow_null=True, default=None)


class PullRequestSerializer(KnownKeysSerializer):
    """A pull request's fields. Each optional one works as a PATCH does: omitted, an existing pull
    request keeps what it has (a new one is blank); null clears it. So a bundle that adds one
    finding never erases the write-up a fuller one gave."""

    number = serializers.IntegerField(min_value=1, max_value=MAX_NUMBER)
    title = serializers.CharField(max_length=500)
    url = serializers.URLField(required=False, allow_blank=True, allow_null=True)
    state = serializers.ChoiceField(choices=PullRequest.State.choices, required=False)
    before = serializers.CharField(required=False, allow_blank=True, allow_null=True)
    change = serializers.CharField(required=False, allow_blank=True, allow_null=True)
    status = serializers.CharField(required=False, allow_blank=True, allow_null=True)
    # The branches it merges into and from: a base that is another open PR's head stacks it.
    base_branch = serializers.CharField(max_length=255, required=False, allow_blank=True, allow_null=True)
    head_branch = serializers.CharField(max_length=255, required=False, allow_blank=True, allow_null=True)
    # The review's own framing: its opening and closing text, the counts it gives.
    opening = serializers.CharField(required=False, allow_blank=True, allow_null=True, trim_whitespace=False)
    closing = serializers.CharField(required=False, allow_blank=True, allow_null=True, trim_whitespace=False)
    comments_left = serializers.IntegerField(min_value=0, max_value=MAX_NUMBER, required=False, allow_null=True)
    cleanups_not_recorded = serializers.IntegerField(min_value=0, max_value=MAX_NUMBER, required=False,
                                                     allow_null=True)
    attestation = AttestationSerializer(required=False, allow_null=True)


class CommitSerializer(KnownKeysSerializer):
    sha = ShaField()
    role = serializers.ChoiceField(choices=PinnedCommit.Role.choices)
    note = serializers.CharField(required=False, allow_blank=True, default="")


class LocationSerializer(KnownKeysSerializer):
    path = serializers.CharField(max_length=500)
    line = serializers.IntegerField(min_value=1, max_value=MAX_NUMBER, required=False, allow_null=True, default=None)

    def validate_path(self, value: str) -> str:
        return validate_evidence_path(value)


def _validate_branch(value: str) -> str:
    try:
        return validate_revision(value.strip())
    except RecheckError:
        raise serializers.ValidationError("A branch name, e.g. main.") from None


class CheckResultSerializer(serializers.Serializer):
    """A scanner's result a check item names, where it was reported at the item's commit."""

    rule = serializers.CharField(max_length=MAX_RULE, help_text="The rule's id, as the tool reports it (S105).")
    path = serializers.CharField(max_length=500, help_text="The file, relative to the repository.")
    start_line = serializers.IntegerField(
        min_value=1, max_value=MAX_NUMBER, required=False, allow_null=True, default=None,
        help_text="The line the result starts at; left out for a result about a whole file.",
    )

    def to_internal_value(self, data):
        if isinstance(data, Mapping):
            unknown = sorted(str(key) for key in data if key not in self.fields)
            if unknown:
                raise serializers.ValidationError(
                    {key: f"Unknown field {key!r}; a result takes: rule, path, start_line." for key in unknown}
                )
        return dict(super().to_internal_value(data))


class EvidenceSerializer(KnownKeysSerializer):
    kind = serializers.ChoiceField(choices=Evidence.Kind.choices)
    commit = ShaField(required=False)
    path = serializers.CharField(required=False, max_length=500)
    start_line = serializers.IntegerField(min_value=1, max_value=MAX_NUMBER, required=False)
    end_line = serializers.IntegerField(min_value=1, max_value=MAX_NUMBER, required=False)
    text = serializers.CharField(required=False, allow_blank=True, trim_whitespace=False)
    regex = serializers.CharField(required=False, trim_whitespace=False)
    expect = serializers.ChoiceField(choices=Evidence.Expect.choices, required=False)
    sha = ShaField(required=False)
    caption = serializers.CharField(required=False, allow_blank=True, max_length=500, default="")
    # Gitlink evidence: the submodule's repository and the branch its pins are measured against.
    submodule = RepositorySerializer(required=False)
    branch = serializers.CharField(required=False, max_length=200, validators=[_validate_branch])
    # Check evidence: a CI check by its name, and what inside it the finding is about.
    check = serializers.CharField(
        required=False, max_length=MAX_CHECK_NAME,
        help_text="Check evidence: the check's name, as its CI gives it (a GitHub check run's name or a "
        "status's context, a GitLab job's name, the name a report is uploaded under).",
    )
    tests = serializers.ListField(
        child=serializers.CharField(max_length=MAX_TEST_ID), required=False, max_length=MAX_NAMED,
        help_text="Check evidence: test ids inside the check (tests/test_calc.py::test_div, "
        "classname::name or classname.name).",
    )
    results = CheckResultSerializer(
        many=True, required=False, max_length=MAX_NAMED,
        help_text="Check evidence: scanner results inside the check, where each was reported at the item's commit.",
    )
    app = serializers.CharField(
        required=False, max_length=MAX_APP,
        help_text="Check evidence: the app the check's reports must come from; reports from any other are not read.",
    )

    def validate(self, attrs):
        # The kind rules live with the engine (engine.verification.rules): one statement of them
        # for the bundle, the API and the forms.
        problems, cleaned = evidence_problems(attrs)
        for field in ("submodule", "branch"):
            if attrs.get("kind") != "gitlink" and field in attrs:
                problems[field] = "Only gitlink evidence names a submodule and its branch."
        if problems:
            raise serializers.ValidationError(problems)
        return cleaned


class ResolutionSerializer(KnownKeysSerializer):
    commit = ShaField(required=False, allow_null=True, default=None)
    note = serializers.CharField(required=False, allow_blank=True, default="")
    # When it was resolved, so an exported review imports with its original dates; without it the
    # import time is recorded.
    at = serializers.DateTimeField(required=False, allow_null=True, default=None)


class TagSlugField(serializers.CharField):
    def to_internal_value(self, data):
        try:
            return tag_slug_validate(super().to_internal_value(data))
        except RecheckError as error:
            raise serializers.ValidationError(str(error)) from None


class TagSerializer(KnownKeysSerializer):
    slug = TagSlugField()
    description = serializers.CharField(required=False, allow_blank=True, default="", max_length=2000)


class LinkSerializer(KnownKeysSerializer):
    kind = serializers.ChoiceField(choices=FindingLink.Kind.choices)
    finding = serializers.CharField(max_length=300, help_text="The other finding: owner/name#4108/4.")
    note = serializers.CharField(required=False, allow_blank=True, default="", max_length=500)

    def validate_finding(self, value: str) -> str:
        try:
            finding_parse_reference(value)
        except RecheckError as error:
            raise serializers.ValidationError(str(error)) from None
        return value.strip()


class FindingSerializer(KnownKeysSerializer):
    """A finding's fields, PATCH-like as a pull request's are: an optional field left out is left
    as it is on a finding already recorded, null clears it, and `evidence`, `tags` and `links`,
    when given, are the whole list."""

    number = serializers.IntegerField(min_value=1, max_value=MAX_NUMBER)
    kind = serializers.ChoiceField(choices=Finding.Kind.choices)
    caught_by = serializers.ChoiceField(choices=Finding.CaughtBy.choices, required=False)
    title = serializers.CharField(max_length=300)
    summary = serializers.CharField(required=False, allow_blank=True, allow_null=True, max_length=500)
    body = serializers.CharField(required=False, allow_blank=True, allow_null=True, trim_whitespace=False)
    fix = serializers.CharField(required=False, allow_blank=True, allow_null=True, trim_whitespace=False)
    review_comment_url = serializers.URLField(required=False, allow_blank=True, allow_null=True, max_length=500)
    location = LocationSerializer(required=False, allow_null=True)
    status = serializers.ChoiceField(choices=Finding.Status.choices, required=False)
    resolution = ResolutionSerializer(required=False)
    evidence = EvidenceSerializer(many=True, required=False)
    # Omitted, a finding keeps the tags and links it has; given, it gets exactly these.
    tags = serializers.ListField(child=TagSlugField(), required=False, max_length=50)
    links = LinkSerializer(many=True, required=False, max_length=100)

    def validate_links(self, links):
        seen = set()
        for index, link in enumerate(links):
            if link["finding"] in seen:
                raise serializers.ValidationError({index: {"finding": f"{link['finding']} is linked twice."}})
            seen.add(link["finding"])
        return links


class BundleSerializer(KnownKeysSerializer):
    repository = RepositorySerializer()
    pull_request = PullRequestSerializer()
    commits = CommitSerializer(many=True, required=False, default=list)
    findings = FindingSerializer(many=True, required=False, default=list)
    tags = TagSerializer(many=True, required=False, default=list, help_text="Descriptions of tags.")

    def validate_commits(self, commits):
        seen = set()
        for index, commit in enumerate(commits):
            if commit["sha"] in seen:
                raise serializers.ValidationError({index: {"sha": "This commit is listed twice."}})
            seen.add(commit["sha"])
        return commits

    def validate_findings(self, findings):
        seen = set()
        for index, finding in enumerate(findings):
            if finding["number"] in seen:
                raise serializers.ValidationError(
                    {index: {"number": f"Finding number {finding['number']} is used twice."}}
                )
            seen.add(finding["number"])
        return findings


def finding_validate(data: dict) -> dict:
    """One finding given in the bundle's shape (number, kind, ..., location, evidence), validated
    as a bundle's finding is: what the site's editor saves. Raises FindingError naming the first
    field at fault (`evidence[1].regex`), with `errors` listing every (field, message)."""
    serializer = FindingSerializer(data=data)
    if serializer.is_valid():
        return serializer.validated_data
    errors = flatten_errors(serializer.errors)
    error = FindingError(*errors[0])
    error.errors = errors
    raise error


def flatten_errors(detail, prefix: str = "") -> list[tuple[str, str]]:
    """DRF's nested error detail as (`findings[2].evidence[0].start_line`, message) pairs."""
    if isinstance(detail, dict):
        pairs = []
        for key, value in detail.items():
            if key == "non_field_errors":
                name = prefix
            elif isinstance(key, int) or (isinstance(key, str) and key.isdigit()):
                name = f"{prefix}[{key}]"
            else:
                name = f"{prefix}.{key}" if prefix else str(key)
            pairs.extend(flatten_errors(value, name))
        return pairs
    if isinstance(detail, list):
        if all(not isinstance(item, (dict, list)) for item in detail):
            return [(prefix, str(item)) for item in detail]
        pairs = []
        for index, item in enumerate(detail):
            if item:
                pairs.extend(flatten_errors(item, f"{prefix}[{index}]"))
        return pairs
    return [(prefix, str(detail))]
