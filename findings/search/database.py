"""The full-text half of the search, in each database's own index. PostgreSQL keeps a weighted
`tsvector` column on findings_finding up to date with triggers and searches it through a GIN index;
SQLite keeps an FTS5 table in step with triggers. Both are created by migration 0010; both index the
same text (title; summary and paths; body, fix and evidence captions, in falling weight), split at
anything but letters and digits, stemmed the English way (PostgreSQL's `english`, FTS5's `porter`).

Every value a person typed reaches the database as a bound parameter, and only as the letters and
digits `parse_query` kept, so no query can be full-text syntax."""
from django.db import connection
from django.db.models import BooleanField, FloatField, TextField
from django.db.models.expressions import RawSQL

from findings.search.query import Term

# Private-use characters mark the matched words in excerpts: no text contains them, so the page can
# escape the excerpt first and then turn them into <mark> safely.
MARK_START = "\ue000"
MARK_END = "\ue001"

FTS_TABLE = "findings_finding_search"
# bm25 weights per FTS5 column, matching PostgreSQL's A/B/C weights (title, summary, body, fix,
# paths, captions).
_BM25 = "bm25(findings_finding_search, 10.0, 4.0, 1.0, 1.0, 4.0, 2.0)"


def is_postgresql() -> bool:
    return connection.vendor == "postgresql"


def _tsquery(terms: list[Term]) -> tuple[str, list[str]]:
    parts, params = [], []
    for term in terms:
        parts.append("phraseto_tsquery('english', %s)" if term.is_phrase else "plainto_tsquery('english', %s)")
        params.append(" ".join(term.words))
    return "(" + " && ".join(parts) + ")", params


def _fts_match(terms: list[Term]) -> str:
    # Each term becomes a quoted FTS5 phrase of letters and digits only: nothing in it is syntax.
    return " AND ".join('"' + " ".join(term.words) + '"' for term in terms)


def text_search(queryset, terms: list[Term]):
    """`queryset` narrowed to findings whose indexed text contains every term, annotated with
    `search_rank` (higher is better: a match in the title outweighs one in the summary or a path,
    which outweighs one in the body, the fix or a caption) and `search_excerpt_raw` (a passage of
    the summary, body or fix with the matched words between the marks)."""
    if is_postgresql():
        tsquery, params = _tsquery(terms)
        options = (
            f"StartSel={MARK_START}, StopSel={MARK_END}, MaxWords=30, MinWords=12, MaxFragments=2, "
            'FragmentDelimiter=" … "'
        )
        return queryset.filter(
            RawSQL(f'"findings_finding"."search_vector" @@ {tsquery}', params, output_field=BooleanField())
        ).annotate(
            search_rank=RawSQL(f'ts_rank("findings_finding"."search_vector", {tsquery})', params,
                               output_field=FloatField()),
            search_excerpt_raw=RawSQL(
                "ts_headline('english', concat_ws(' ', \"findings_finding\".\"summary\", "
                f"\"findings_finding\".\"body\", \"findings_finding\".\"fix\"), {tsquery}, %s)",
                [*params, options],
                output_field=TextField(),
            ),
        )
    # FTS5 ranks and excerpts only in a query that MATCHes its table directly, so the index is
    # joined (through the unmanaged FindingSearchEntry) rather than probed row by row.
    return queryset.filter(search_entry__isnull=False).filter(
        RawSQL(f'"{FTS_TABLE}" MATCH %s', [_fts_match(terms)], output_field=BooleanField())
    ).annotate(
        search_rank=RawSQL(f"-{_BM25}", [], output_field=FloatField()),
        search_excerpt_raw=RawSQL(
            f"snippet({FTS_TABLE}, -1, %s, %s, '…', 24)", [MARK_START, MARK_END], output_field=TextField()
        ),
    )
