"""The one search over findings, used by the site's search box and the API's `q`:
`Finding.objects.search("tolerance \"never stops\" repo:acme/loader kind:blocker")`.

Words and phrases are matched by the database's full-text index (findings.search.database) and
ranked there; filters narrow the rows. Each result carries `search_rank` and `search_excerpt_raw`
(the database's highlighted passage); `explain_matches` adds, for a page of results, the excerpt as
safe HTML and `search_reasons`, the fields each term was found in and the filters it passed."""
from django.apps import apps
from django.db.models import Q, QuerySet
from django.utils.html import escape
from django.utils.safestring import SafeString, mark_safe

from core import vocabulary
from findings.search.database import MARK_END, MARK_START, text_search
from findings.search.query import FILTERS, MAX_QUERY_LENGTH, SearchQuery, SearchQueryError, Term, parse_query

__all__ = [
    "FILTERS", "MAX_QUERY_LENGTH", "SearchQuery", "SearchQueryError", "UNVERIFIED", "explain_matches",
    "parse_search", "search_findings",
]

UNVERIFIED = "unverified"


def _model(name: str):
    # Finding.objects.search() calls into this package, so it looks the models up in the app
    # registry instead of importing findings.models: the two modules never import each other.
    return apps.get_model("findings", name)


def search_choices() -> dict[str, set[str]]:
    finding = _model("Finding")
    return {
        "kind": set(finding.Kind.values),
        "status": set(finding.Status.values),
        "verdict": {*vocabulary.VERDICTS, UNVERIFIED},
    }


def parse_search(text: str, *, narrowed_by: dict[str, str] | None = None) -> SearchQuery:
    """`text` read as a search (SearchQueryError when it cannot be), narrowed by the filters given
    beside it (`narrowed_by`, a page's menus), which must hold as well as the text's."""
    return parse_query(text, choices=search_choices(), narrowed_by=narrowed_by)


def search_findings(queryset: QuerySet, query: SearchQuery | str) -> QuerySet:
    """`queryset` narrowed to the findings `query` matches, best match first (newest PRs first
    when the query has filters only)."""
    if isinstance(query, str):
        query = parse_search(query)
    if query.is_empty:
        return queryset.none() if query.text.strip() else queryset
    findings = _filtered(queryset, query.filters)
    findings = _filtered(findings, {name: [value] for name, value in query.narrowed.items()})
    if not query.terms:
        return findings.order_by("pull_request__repository__slug", "-pull_request__number", "number")
    return text_search(findings, query.terms).order_by(
        "-search_rank", "pull_request__repository__slug", "-pull_request__number", "number"
    )


def _filtered(queryset: QuerySet, filters: dict[str, list[str]]) -> QuerySet:
    # Several values of one filter are alternatives; different filters must all hold.
    for name, values in filters.items():
        condition = Q()
        for value in values:
            condition |= _filter(name, value)
        if name == "verdict":
            queryset = _with_latest_verdict(queryset)
        queryset = queryset.filter(condition)
    return queryset


def _filter(name: str, value: str) -> Q:
    if name == "repo":
        return Q(pull_request__repository__slug__iexact=value)
    if name == "path":
        # The finding's own path, the paths its evidence was recorded at, or where verification
        # later found it (a renamed file).
        return (
            Q(path__icontains=value)
            | Q(pk__in=_model("Evidence").objects.filter(path__icontains=value).values("finding_id"))
            | Q(pk__in=_model("EvidenceResult").objects.filter(path__icontains=value).values("evidence__finding_id"))
        )
    if name == "tag":
        return Q(pk__in=_model("Finding").tags.through.objects.filter(tag__slug=value).values("finding_id"))
    if name == "kind":
        return Q(kind=value)
    if name == "status":
        return Q(status=value)
    if name == "verdict":
        return Q(latest_verdict__isnull=True) if value == UNVERIFIED else Q(latest_verdict=value)
    raise ValueError(name)


def _with_latest_verdict(queryset: QuerySet) -> QuerySet:
    if "latest_verdict" in queryset.query.annotations:
        return queryset
    return queryset.with_latest_verdict()


# --- Why each result matched -----------------------------------------------------------------


FIELD_LABELS = [("title", "title"), ("summary", "summary"), ("body", "text"), ("fix", "fix")]
_TEXT_FIELDS = ("title", "summary", "body", "fix", "path")


def _tokens(text: str) -> list[str]:
    from findings.search.query import _words

    return list(_words(text or ""))


def _same_word(typed: str, found: str) -> bool:
    # Close to what the stemmers do: "failures" finds "failure", "loaders" finds "loader".
    if typed == found:
        return True
    shorter, longer = sorted((typed, found), key=len)
    return len(shorter) >= 4 and longer.startswith(shorter) and len(longer) - len(shorter) <= 3


def _contains(tokens: list[str], term: Term) -> bool:
    size = len(term.words)
    for start in range(len(tokens) - size + 1):
        if all(_same_word(word, tokens[start + offset]) for offset, word in enumerate(term.words)):
            return True
    return False


def explain_matches(findings: list, query: SearchQuery) -> list:
    """Give each finding of a page of results `search_reasons` and `search_excerpt` (safe HTML).
    One query for the page's evidence, however many findings."""
    findings = list(findings)
    evidence: dict[int, list] = {}
    texts: dict[int, dict] = {}
    if query.terms and findings:
        ids = [finding.pk for finding in findings]
        # The page's texts in one query: a list may have deferred the long ones.
        texts = {row["pk"]: row for row in _model("Finding").objects.filter(pk__in=ids).values("pk", *_TEXT_FIELDS)}
        for item in _model("Evidence").objects.filter(finding__in=ids).only("finding_id", "path", "caption"):
            evidence.setdefault(item.finding_id, []).append(item)
    filters = query.describe_filters()
    for finding in findings:
        text = texts.get(finding.pk, {})
        fields = [(label, _tokens(text.get(name, ""))) for name, label in FIELD_LABELS]
        items = evidence.get(finding.pk, [])
        fields.append(("path", _tokens(" ".join([text.get("path", ""), *(item.path for item in items)]))))
        fields.append(("evidence caption", _tokens(" ".join(item.caption for item in items))))
        reasons = []
        for label, tokens in fields:
            found = [str(term) for term in query.terms if _contains(tokens, term)]
            if found:
                reasons.append(f"{label}: {', '.join(found)}")
        if filters:
            reasons.append(f"filters: {' '.join(filters)}")
        finding.search_reasons = reasons
        finding.search_excerpt = excerpt_html(getattr(finding, "search_excerpt_raw", "") or "")
    return findings


def excerpt_html(raw: str) -> SafeString:
    """The database's excerpt, escaped, with its matched words in <mark>."""
    if MARK_START not in raw:
        return SafeString("")
    text = escape(raw.replace(MARK_END + " " + MARK_START, " "))
    return mark_safe(text.replace(MARK_START, "<mark>").replace(MARK_END, "</mark>"))  # noqa: S308 - escaped above
