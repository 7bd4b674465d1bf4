"""Query filters of the list endpoints (django-filter). A filter that names a commit accepts an
abbreviated SHA and resolves it the way the rest of Recheck does (reviews.services.commit_lookup):
an unknown commit or an ambiguous abbreviation is a 400 that says so, never a silent empty list."""
import copy
import datetime
import functools

import django_filters
from django import forms
from django.core.exceptions import ImproperlyConfigured
from django.core.exceptions import ValidationError as FormValidationError
from django_filters import utils
from django_filters.constants import EMPTY_VALUES
from django_filters.rest_framework import DjangoFilterBackend
from rest_framework.exceptions import ValidationError

from api.lookups import commits_named
from api.permissions import visible_to
from findings.search import MAX_QUERY_LENGTH, SearchQueryError, parse_search
from findings.models import Evidence, Finding, Verdict, Verification, VerificationRun
from findings.state.stored import findings_where
from reviews.models import PullRequest, Repository

REPOSITORY_HELP = "Repository slug, owner/name."
MAX_ID = 2**63 - 1


class IdFilter(django_filters.NumberFilter):
    """A whole number within the database's range: NumberFilter takes decimals, and a decimal too
    large for the column is an error in the database rather than a 400 here."""

    field_class = forms.IntegerField

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("min_value", 1)
        kwargs.setdefault("max_value", MAX_ID)
        super().__init__(*args, **kwargs)


class _UtcIsoDateTimeField(django_filters.fields.IsoDateTimeField):
    def to_python(self, value):
        parsed = super().to_python(value)
        if parsed is None or parsed.tzinfo is None:
            return parsed
        try:
            return parsed.astimezone(datetime.timezone.utc)
        except OverflowError:
            raise FormValidationError(f"{value} is outside the dates a time can be given for.", code="invalid") from None


class UtcIsoDateTimeFilter(django_filters.IsoDateTimeFilter):
    """An ISO 8601 date and time, taken to UTC before it is asked of the database: Python reads an
    offset of up to a day (`+21:38`) that PostgreSQL refuses as an error, and a time that leaves
    the calendar when moved to UTC is a 400 here, not a 500 there."""

    field_class = _UtcIsoDateTimeField


COMMIT_HELP = "Commit SHA: the full SHA or an abbreviation of at least 7 hex digits."


def _repository_of(filterset) -> Repository | None:
    """The repository the other filters pin down, so a SHA is resolved within it."""
    data = filterset.form.cleaned_data
    # Only among the repositories the request may read: another's would name it in an error.
    repositories = visible_to(Repository.objects.all(), filterset.request, "pk")
    if data.get("repository"):
        return repositories.filter(slug=data["repository"]).first()
    if data.get("pull_request"):
        pull_request = (
            PullRequest.objects.filter(pk=data["pull_request"], repository__in=repositories)
            .select_related("repository").first()
        )
        return pull_request.repository if pull_request else None
    return None


def _commits(filterset, sha: str):
    repository = _repository_of(filterset)
    return commits_named(
        sha=sha, repository=repository,
        repositories=visible_to(Repository.objects.all(), filterset.request, "pk") if repository is None else None,
    )


class GivenFiltersBackend(DjangoFilterBackend):
    """django-filter's backend, which for a filter set that allows it (`given_only`) builds only
    the filters the request gives. A filter that is not given filters nothing, and copying every
    filter with its form field on each request was most of what filtering a list cost. Only for
    filter sets whose query parameters are their filters' names (no ranges of two parameters).
    The browsable API's filter form is built in full, as before."""

    def filter_queryset(self, request, queryset, view):
        filterset_class = self.get_filterset_class(view, queryset)
        if filterset_class is None or not getattr(filterset_class, "given_only", False):
            return super().filter_queryset(request, queryset, view)
        given = frozenset(name for name in filterset_class.base_filters if name in request.query_params)
        if not given:
            return queryset
        filterset = _given_only(filterset_class, given)(**self.get_filterset_kwargs(request, queryset, view))
        if not filterset.is_valid() and self.raise_exception:
            raise utils.translate_validation(filterset.errors)
        return filterset.qs


@functools.lru_cache(maxsize=256)
def _given_only(filterset_class, names: frozenset):
    """`filterset_class` with only the filters `names` (its methods and Meta unchanged)."""
    narrowed = type(filterset_class.__name__, (filterset_class,), {})
    narrowed.base_filters = {name: filter_ for name, filter_ in filterset_class.base_filters.items() if name in names}
    return narrowed


class EqualityFilters:
    """For a filter set that names, in `equality_filters`, those of its filters that are plain
    equalities (no method, an `exact` lookup on the column their `field_name` leads to): what a
    request asks of them, read through the filters' own form fields, for a reader that writes the
    equalities out itself (the findings list's fast path, the list cache's key). A filter added to
    the set, or changed in it, is read the same way by both."""

    equality_filters: tuple[str, ...] = ()

    @classmethod
    def equalities(cls, parameters) -> dict | None:
        """The filters `parameters` give, as {field_name: value}, when each is one of
        `equality_filters` and its value one its field takes as typed (`equality_values`); else
        None, and the filter set reads the request (refusing what it refuses)."""
        given = [name for name in parameters if name in cls.base_filters]
        values = cls.equality_values(parameters, given)
        if len(values) != len(given):
            return None
        columns = _equality_columns(cls)
        return {columns[name]: value for name, value in values.items()}

    @classmethod
    def equality_values(cls, parameters, names=None) -> dict:
        """{name: value} for each of the equality filters `names` (all of them by default) that
        `parameters` give once, with a value the filter's form field cleans to itself: not empty
        (which filters nothing), not padded, not a number written another way, not refused (a
        400 from the filter set). Any other is left out: what the filter set makes of it is its
        own business."""
        fields = _equality_fields(cls)
        values = {}
        for name in cls.equality_filters if names is None else names:
            field, null_value = fields.get(name, (None, None))
            typed = parameters.getlist(name) if field is not None else ()
            if len(typed) != 1 or typed[0] in EMPTY_VALUES or typed[0] == null_value:
                continue
            try:
                value = field.clean(typed[0])
            except FormValidationError:
                continue
            if value not in EMPTY_VALUES and str(value) == typed[0]:
                values[name] = value
        return values


@functools.cache
def _equality_fields(filterset_class) -> dict:
    """The form field of each of `filterset_class`'s equality filters, built once (on a copy: a
    filter set copies its filters, with any field built on them, for every request), and the
    value a choice filter reads as "is null" rather than as an equality."""
    fields = {}
    for name in filterset_class.equality_filters:
        filter_ = filterset_class.base_filters[name]
        if (filter_.method is not None or filter_.lookup_expr != "exact" or filter_.exclude or filter_.distinct
                or type(filter_).filter not in (django_filters.Filter.filter, django_filters.ChoiceFilter.filter)):
            raise ImproperlyConfigured(f"{filterset_class.__name__}.{name} is not a plain equality.")
        fields[name] = (copy.copy(filter_).field, getattr(filter_, "null_value", None))
    return fields


@functools.cache
def _equality_columns(filterset_class) -> dict:
    """{name: field_name} of `filterset_class`'s equality filters: the column each compares."""
    return {name: filterset_class.base_filters[name].field_name for name in filterset_class.equality_filters}


class FindingFilter(EqualityFilters, django_filters.FilterSet):
    given_only = True  # see GivenFiltersBackend
    # Plain equalities, on the finding's columns and its pull request's and repository's: the list
    # reads a page filtered by these alone with SQL written out (findings.selectors.list_rows).
    equality_filters = ("pull_request", "kind", "status", "caught_by", "repository", "pull_request_number")

    repository = django_filters.CharFilter(field_name="pull_request__repository__slug", help_text=REPOSITORY_HELP)
    pull_request = IdFilter(field_name="pull_request_id", help_text="Pull request id.")
    pull_request_number = IdFilter(
        field_name="pull_request__number", help_text="Pull request number; combine with repository."
    )
    kind = django_filters.ChoiceFilter(choices=Finding.Kind.choices)
    status = django_filters.ChoiceFilter(choices=Finding.Status.choices)
    caught_by = django_filters.ChoiceFilter(choices=Finding.CaughtBy.choices)
    path = django_filters.CharFilter(lookup_expr="startswith", help_text="Path prefix, e.g. src/loader/.")
    possibly_regressed = django_filters.BooleanFilter(
        method="filter_possibly_regressed", help_text="As the pull request's state says (findings.state)."
    )
    tag = django_filters.CharFilter(field_name="tags__slug", help_text="Findings that carry this tag (its slug).")
    verdict = django_filters.ChoiceFilter(
        choices=Verdict.choices, method="filter_at_commit", help_text="Verdict at `commit` (which it needs)."
    )
    commit = django_filters.CharFilter(
        method="filter_at_commit", help_text=f"Findings verified at this commit. {COMMIT_HELP}"
    )
    q = django_filters.CharFilter(
        method="search",
        help_text=(
            "The site's search: words (all must appear), \"phrases in quotes\", and filters in the text: "
            "repo:owner/name, path:src/loader.py (also earlier names), tag:slug, kind:, status:, verdict: (at the "
            "latest verified commit; unverified for none). Results come best match first (a title match above "
            "a body match) unless `ordering` is given, each with `search`: why it matched and an excerpt. "
            f"At most {MAX_QUERY_LENGTH} characters."
        ),
    )

    class Meta:
        model = Finding
        fields = []

    def filter_possibly_regressed(self, queryset, name, value):
        flagged = findings_where(queryset, "possibly_regressed")
        return queryset.filter(pk__in=flagged) if value else queryset.exclude(pk__in=flagged)

    def filter_at_commit(self, queryset, name, value):
        # verdict and commit are applied together in filter_queryset.
        return queryset

    def search(self, queryset, name, value):
        try:
            self.search_query = parse_search(value)
        except SearchQueryError as error:
            raise ValidationError({"q": str(error)}) from None
        return queryset.search(self.search_query)

    def filter_queryset(self, queryset):
        queryset = super().filter_queryset(queryset)
        sha = self.form.cleaned_data.get("commit")
        verdict = self.form.cleaned_data.get("verdict")
        if verdict and not sha:
            raise ValidationError({"commit": "A verdict is a verdict at a commit: add commit=<sha>."})
        if not sha:
            return queryset
        verifications = Verification.objects.filter(commit__in=_commits(self, sha))
        if verdict:
            verifications = verifications.filter(verdict=verdict)
        # An IN over the verification index (commit, verdict), not EXISTS: a correlated EXISTS
        # probes once per finding, which on 100,000 findings is most of the request.
        return queryset.filter(pk__in=verifications.values("finding_id"))


class PullRequestFilter(django_filters.FilterSet):
    repository = django_filters.CharFilter(field_name="repository__slug", help_text=REPOSITORY_HELP)
    number = IdFilter()
    state = django_filters.ChoiceFilter(choices=PullRequest.State.choices)

    class Meta:
        model = PullRequest
        fields = []


class EvidenceFilter(django_filters.FilterSet):
    finding = IdFilter(field_name="finding_id", help_text="Finding id.")
    kind = django_filters.ChoiceFilter(choices=Evidence.Kind.choices)

    class Meta:
        model = Evidence
        fields = []


class VerificationFilter(django_filters.FilterSet):
    finding = IdFilter(field_name="finding_id", help_text="Finding id.")
    pull_request = IdFilter(field_name="finding__pull_request_id", help_text="Pull request id.")
    repository = django_filters.CharFilter(
        field_name="finding__pull_request__repository__slug", help_text=REPOSITORY_HELP
    )
    verdict = django_filters.ChoiceFilter(choices=Verdict.choices)
    commit = django_filters.CharFilter(method="filter_commit", help_text=COMMIT_HELP)

    class Meta:
        model = Verification
        fields = []

    def filter_commit(self, queryset, name, value):
        return queryset.filter(commit__in=_commits(self, value))


class VerificationRunFilter(django_filters.FilterSet):
    pull_request = IdFilter(field_name="pull_request_id", help_text="Pull request id.")
    status = django_filters.ChoiceFilter(choices=VerificationRun.Status.choices)

    class Meta:
        model = VerificationRun
        fields = []
