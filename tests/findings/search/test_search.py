"""The one search, through the site's box and the API's `q`: words, phrases, filters, ranking,
excerpts and reasons, the index the database keeps, and queries meant to break it. Every test runs
on whichever database the suite runs on (SQLite's FTS5 by default, PostgreSQL's tsvector in CI)."""
import re
from types import SimpleNamespace

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from django.core.management import call_command
from django.db import connection
from django.utils import timezone

from findings.models import Evidence, Finding
from findings.services.tags_and_links import finding_tags_set
from findings.search import parse_search
from findings.search.query import MAX_QUERY_LENGTH, SearchQueryError
from tests.factories import store_states
from tests.factories import (
    EvidenceFactory,
    EvidenceResultFactory,
    FindingFactory,
    PinnedCommitFactory,
    PullRequestFactory,
    RepositoryFactory,
    VerificationFactory,
)

pytestmark = pytest.mark.django_db


def text_of(html: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html))


def site_titles(client, query: str) -> list[str]:
    response = client.get("/", {"q": query})
    assert response.status_code == 200
    html = response.content.decode()
    return [re.sub(r"<[^>]+>|^\s*\d+\s*", "", title).strip()
            for title in re.findall(r'<p class="result-title"><a [^>]*><span class="glance-number">\d+</span> (.*?)</a>',
                                    html)]


def api_results(client, query: str) -> list[dict]:
    response = client.get("/api/findings/", {"q": query, "page_size": 200})
    assert response.status_code == 200, response.content
    return response.json()["results"]


def api_titles(client, query: str) -> list[str]:
    return [item["title"] for item in api_results(client, query)]


@pytest.fixture
def corpus():
    """Findings in two repositories, written so each query below has one right answer."""
    loader = RepositoryFactory(slug="acme/loader")
    tools = RepositoryFactory(slug="acme/tools")
    first = PullRequestFactory(repository=loader, number=4108)
    second = PullRequestFactory(repository=tools, number=7)
    reviewed = PinnedCommitFactory(pull_request=first, role="reviewed").commit

    def finding(pull_request, number, title, **fields):
        values = {"summary": "", "body": "", "fix": "", "path": f"src/other_{number}.py", **fields}
        return FindingFactory(pull_request=pull_request, number=number, title=title, **values)

    found = SimpleNamespace(
        title_hit=finding(first, 1, "Failure tolerance switched off",
                          body="Energon counts consecutive errors and stops the job past a limit."),
        body_hit=finding(first, 2, "The loader swallows errors",
                         body="It sets the failure tolerance to zero. The tolerance was 100, and a tolerance of "
                              "zero turns the check off."),
        phrase=finding(first, 3, "A broken dataset never stops the job",
                       summary="One bad sample and the run goes on.", path="nemo_rl/data/module_5.py"),
        reversed_phrase=finding(second, 1, "Stops never come",
                                body="The job stops; it never restarts.", kind=Finding.Kind.CLEANUP),
        fixed=finding(second, 2, "Cache key ignores the dtype", status=Finding.Status.FIXED,
                      resolved_at=timezone.now(), fix="Key the cache on the dtype too."),
        renamed=finding(first, 4, "Tokenizer reads the wrong config", path="src/tokenizer.py"),
    )
    evidence = EvidenceFactory(finding=found.renamed, commit=reviewed, position=0, path="src/tokenizer.py",
                               caption="The config lookup falls back silently")
    # Verification found the file under its new name.
    verification = VerificationFactory(finding=found.renamed, commit=reviewed, verdict="present")
    EvidenceResultFactory(verification=verification, evidence=evidence, path="src/text/tokenizer_v2.py")
    VerificationFactory(finding=found.title_hit, commit=reviewed, verdict="likely_fixed")
    finding_tags_set(finding=found.body_hit, slugs=["silent-failure"], actor=None)
    finding_tags_set(finding=found.phrase, slugs=["silent-failure", "dataset"], actor=None)
    return found


# --- What it finds -------------------------------------------------------------------------------


def test_every_word_must_appear(client, corpus):
    assert set(site_titles(client, "tolerance zero")) == {corpus.body_hit.title}
    assert set(site_titles(client, "tolerance")) == {corpus.title_hit.title, corpus.body_hit.title}


def test_a_quoted_phrase_must_appear_in_that_order(client, corpus):
    assert site_titles(client, '"never stops"') == [corpus.phrase.title]
    assert set(site_titles(client, "never stops")) == {corpus.phrase.title, corpus.reversed_phrase.title}


def test_words_find_other_forms_of_themselves(client, corpus):
    assert set(site_titles(client, "failures")) == {corpus.title_hit.title, corpus.body_hit.title}


def test_a_file_name_is_found_in_a_path(client, corpus):
    assert site_titles(client, "module_5.py") == [corpus.phrase.title]
    assert site_titles(client, "tokenizer.py") == [corpus.renamed.title]


def test_evidence_captions_are_searched(client, corpus):
    assert site_titles(client, "lookup silently") == [corpus.renamed.title]


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("repo:acme/tools", ["reversed_phrase", "fixed"]),
        ("repo:acme/tools repo:acme/nothing", ["reversed_phrase", "fixed"]),
        ("never repo:acme/loader", ["phrase"]),
        ("kind:cleanup", ["reversed_phrase"]),
        ("status:fixed", ["fixed"]),
        ("tag:silent-failure", ["body_hit", "phrase"]),
        ("tag:dataset tag:nothing-like-it", ["phrase"]),
        ("tolerance verdict:likely_fixed", ["title_hit"]),
        ("tolerance verdict:unverified", ["body_hit"]),
        ("path:module_5.py", ["phrase"]),
        # Recorded at src/tokenizer.py; verification found it renamed.
        ("path:text/tokenizer_v2", ["renamed"]),
        ('path:"src/tokenizer.py" config', ["renamed"]),
        ("tolerance kind:blocker status:open repo:acme/loader tag:silent-failure", ["body_hit"]),
    ],
)
def test_filters_narrow_the_search(client, corpus, query, expected):
    assert sorted(site_titles(client, query)) == sorted(getattr(corpus, name).title for name in expected)


def test_a_title_match_ranks_above_a_body_match(client, corpus):
    # The body mentions the word three times, the title once: the title still wins.
    assert site_titles(client, "tolerance") == [corpus.title_hit.title, corpus.body_hit.title]
    assert api_titles(client, "tolerance") == [corpus.title_hit.title, corpus.body_hit.title]


@pytest.mark.parametrize(
    "query",
    ["tolerance", "never stops", '"never stops"', "failures", "module_5.py", "tag:silent-failure",
     "repo:acme/tools", "job", "the job", "config path:tokenizer", "zero", "kind:blocker status:open"],
)
def test_the_site_and_the_api_return_the_same_findings_in_the_same_order(client, corpus, query):
    site = site_titles(client, query)
    assert site == api_titles(client, query)


def test_a_result_says_why_it_matched_with_a_highlighted_excerpt(client, corpus):
    [result] = api_results(client, "zero repo:acme/loader")
    assert result["title"] == corpus.body_hit.title
    assert result["search"]["reasons"] == ["text: zero", "filters: repo:acme/loader"]
    assert "<mark>zero</mark>" in result["search"]["excerpt"]
    assert result["search"]["rank"] > 0
    html = client.get("/", {"q": "zero repo:acme/loader"}).content.decode()
    assert "<mark>zero</mark>" in html
    assert "Matched: text: zero; filters: repo:acme/loader" in html
    [title_first] = [item for item in api_results(client, "tolerance") if item["id"] == corpus.title_hit.pk]
    assert title_first["search"]["reasons"][0] == "title: tolerance"


def test_an_unsearched_list_says_nothing_about_matching(client, corpus):
    response = client.get("/api/findings/")
    assert {item["search"] for item in response.json()["results"]} == {None}


def test_an_excerpt_shows_markup_in_the_text_as_text(client, corpus):
    FindingFactory(title="Escaping", summary="", body="<script>alert(1)</script> poisoned tolerance <b>x</b>")
    [result] = api_results(client, "poisoned")
    excerpt = result["search"]["excerpt"]
    # Escaped (SQLite) or left out by ts_headline (PostgreSQL): never markup.
    assert "<mark>poisoned</mark>" in excerpt
    assert re.sub(r"</?mark>", "", excerpt).count("<") == 0
    html = client.get("/", {"q": "poisoned"}).content.decode()
    assert "<script>alert(1)</script>" not in html


# --- The index follows the data ------------------------------------------------------------------


def test_the_index_follows_every_change_even_ones_made_straight_in_the_database(client, corpus):
    Finding.objects.filter(pk=corpus.fixed.pk).update(body="A quokka ate the cache.")
    assert site_titles(client, "quokka") == [corpus.fixed.title]
    item = Evidence.objects.create(finding=corpus.fixed, position=5, kind="note", text="n", caption="wombat burrow")
    assert site_titles(client, "wombat") == [corpus.fixed.title]
    Evidence.objects.filter(pk=item.pk).update(caption="platypus")
    assert site_titles(client, "wombat") == [] and site_titles(client, "platypus") == [corpus.fixed.title]
    item.delete()
    assert site_titles(client, "platypus") == []
    corpus.fixed.delete()
    assert site_titles(client, "quokka") == []


# --- Queries meant to break it -------------------------------------------------------------------

HOSTILE = [
    '"unbalanced quote',
    'tolerance"',
    '""',
    '"',
    "NEAR(tolerance zero, 2)",
    "tolerance AND OR NOT",
    "tol*",
    "^tolerance",
    "title:tolerance",
    "{title}: tolerance",
    "tolerance -zero",
    "(((",
    "'; DROP TABLE findings_finding; --",
    "a & b | !c <-> d",
    "\\",
    "kind:",
    "kind:bug",
    "verdict:maybe",
    "repo:",
    "x" * 10_000,
    "tolerance " * 1000,
    "tolerance\x00zero",
    "\x00",
    "\u202etolerance",
    "☃ ❄ 雪",
]


@pytest.mark.parametrize("query", HOSTILE, ids=lambda query: repr(query[:30]))
def test_a_hostile_query_gets_a_clear_answer_never_a_server_error(client, corpus, query):
    site = client.get("/", {"q": query})
    assert site.status_code == 200
    api = client.get("/api/findings/", {"q": query})
    assert api.status_code in (200, 400), api.content
    if api.status_code == 400:
        body = api.json()
        assert [error["field"] for error in body["errors"]] == ["q"]
        assert body["errors"][0]["message"] in body["detail"]
        # The site refuses the same query with the same words.
        assert body["errors"][0]["message"].split(":")[0] in site.content.decode()
    else:
        assert 'class="form-error"' not in site.content.decode()


def test_an_unclosed_quote_searches_the_phrase_to_the_end_and_says_so(client, corpus):
    html = client.get("/", {"q": '"never stops'}).content.decode()
    assert "A quote was not closed" in html
    assert site_titles(client, '"never stops') == [corpus.phrase.title]
    assert api_titles(client, '"never stops') == [corpus.phrase.title]


def test_an_unknown_filter_value_names_the_values_it_takes(client, corpus):
    response = client.get("/api/findings/", {"q": "kind:bug"})
    assert response.status_code == 400
    assert "kind:bug is not a kind: use one of blocker, cleanup." in str(response.json())
    assert "kind:bug is not a kind: use one of blocker, cleanup." in client.get("/", {"q": "kind:bug"}).content.decode()


def test_a_query_too_long_says_how_long_it_may_be(client, corpus):
    response = client.get("/api/findings/", {"q": "x" * 10_000})
    assert response.status_code == 400
    assert f"at most {MAX_QUERY_LENGTH} are searched" in str(response.json())


def test_syntax_characters_are_words_apart_not_syntax(client, corpus):
    assert site_titles(client, "NEAR(tolerance zero)") == []  # "near" is a word here, and no finding has it
    assert site_titles(client, "(tolerance) {zero}") == [corpus.body_hit.title]
    assert site_titles(client, "tolerance*") == site_titles(client, "tolerance")


def test_a_query_of_punctuation_alone_finds_nothing(client, corpus):
    assert site_titles(client, "*** ---") == []
    assert api_titles(client, "*** ---") == []


def test_the_parser_reads_words_phrases_and_filters():
    query = parse_search('Tolerance "never  stops" module_5.py kind:Blocker path:"src/a b.py" repo:acme/x http://x')
    assert [str(term) for term in query.terms] == ["tolerance", '"never stops"', '"module 5 py"', '"http x"']
    assert query.filters == {"kind": ["blocker"], "path": ["src/a b.py"], "repo": ["acme/x"]}
    with pytest.raises(SearchQueryError, match="control characters"):
        parse_search("a\x00b")


def test_the_api_search_reads_in_bounded_queries(client, corpus, django_assert_max_num_queries):
    for number in range(10, 40):
        FindingFactory(pull_request=corpus.phrase.pull_request, number=number, title=f"Tolerance {number}")
    store_states()  # each row's verdict and flags are read from its PR's stored state: one more query
    with django_assert_max_num_queries(7):
        assert len(api_results(client, "tolerance tag:silent-failure")) == 1
    with django_assert_max_num_queries(7):
        assert len(api_results(client, "tolerance")) == 32


@pytest.mark.skipif(connection.vendor != "sqlite", reason="SQLite drops triggers when it rebuilds a table")
def test_sqlite_triggers_lost_in_a_table_rebuild_come_back_after_migrate(client, corpus):
    with connection.cursor() as cursor:
        cursor.execute("DROP TRIGGER findings_finding_search_insert")
    FindingFactory(title="Written while the trigger was missing")
    assert site_titles(client, "missing trigger") == []
    call_command("migrate", verbosity=0)  # post_migrate repairs the index
    assert site_titles(client, "missing trigger") == ["Written while the trigger was missing"]
    FindingFactory(title="Written after the repair")
    assert site_titles(client, "repair") == ["Written after the repair"]


def test_common_words_are_left_out_on_every_database_and_the_page_says_so(client, corpus):
    assert site_titles(client, "the job") == site_titles(client, "job")
    assert set(site_titles(client, "job")) == {corpus.title_hit.title, corpus.phrase.title, corpus.reversed_phrase.title}
    # Inside a phrase they stay: only the exact words match.
    assert site_titles(client, '"never stops the job"') == [corpus.phrase.title]
    assert site_titles(client, '"the job stops"') == [corpus.reversed_phrase.title]
    html = client.get("/", {"q": "the"}).content.decode()
    assert "0 findings found" in text_of(html) and "Common words are not searched for: the." in html


search_text = st.lists(
    st.sampled_from(
        list('abc "*():^-{}[]|&!<>~\'\\/._,;+=@#%$` é雪')
        + ["tolerance", "zero", "NEAR", "AND", "OR", "NOT", "kind:", "repo:", "path:", "tag:", "verdict:"]
    ),
    max_size=30,
).map("".join)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=search_text)
def test_no_query_text_makes_the_search_fail(corpus, text):
    """Whatever a person types, the search either runs or says why it cannot: never a database error."""
    try:
        query = parse_search(text)
    except SearchQueryError:
        return
    results = Finding.objects.search(query)
    list(results[:5])
    results.count()
