"""Bundle export: importing an export reproduces the review, row for row."""
import datetime as dt
import string

import pytest
from django.db import transaction
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from findings.exchange.bundle import bundle_dump, bundle_export
from findings.services.review_import import BundleInvalid, parse_bundle, review_import
from findings.models import Evidence, Finding, Tag
from findings.services.resolution import finding_resolve
from reviews.models import Commit, PinnedCommit, PullRequest, Repository
from tests.factories import EvidenceFactory, FindingFactory, PinnedCommitFactory, make_sha
from tests.findings.services.test_review_import import bundle

pytestmark = pytest.mark.django_db


def review_rows(pull_request: PullRequest) -> dict:
    """Everything a bundle carries, read from the database with database ids left out."""
    repository = pull_request.repository
    return {
        "repository": (repository.slug, repository.clone_url, repository.web_url, repository.default_branch),
        "pull_request": (
            pull_request.number, pull_request.title, pull_request.url, pull_request.state,
            pull_request.before, pull_request.change, pull_request.status_note,
        ),
        "commits": sorted((commit.sha, commit.resolved) for commit in Commit.objects.filter(repository=repository)),
        "pins": [
            (pin.commit.sha, pin.role, pin.note)
            for pin in PinnedCommit.objects.filter(pull_request=pull_request).order_by("pinned_at", "id")
        ],
        "findings": [
            (
                finding.number, finding.kind, finding.caught_by, finding.title, finding.summary, finding.body,
                finding.fix, finding.review_comment_url, finding.path, finding.line, finding.status,
                finding.resolved_commit.sha if finding.resolved_commit else None,
                finding.resolution_note, finding.resolved_at,
                [
                    (
                        evidence.position, evidence.kind, evidence.commit.sha if evidence.commit else None,
                        evidence.path, evidence.start_line, evidence.end_line, evidence.text, evidence.regex,
                        evidence.expect, evidence.sha, evidence.caption, evidence.check_name, evidence.check_app,
                        evidence.check_tests, evidence.check_results,
                    )
                    for evidence in finding.evidence.order_by("position")
                ],
                # What each tag means in this repository (descriptions are per repository).
                sorted(
                    (tag.slug, tag.descriptions.filter(repository=repository).values_list("description", flat=True)
                     .first() or "")
                    for tag in finding.tags.all()
                ),
                sorted((link.target.reference, link.kind, link.note) for link in finding.links_out.all()),
            )
            for finding in pull_request.findings.order_by("number")
        ],
    }


def reimport_into_a_fresh_database(text: str) -> PullRequest:
    Repository.objects.all().delete()  # cascades to everything a review holds
    report = review_import(data=parse_bundle(text))
    slug, number = report.pull_request.rsplit("#", 1)
    return PullRequest.objects.get(repository__slug=slug, number=int(number))


def test_importing_an_export_reproduces_the_review():
    pin = PinnedCommitFactory(role="rebased", note="After the rebase.")
    pull_request = pin.pull_request
    PinnedCommitFactory(pull_request=pull_request, role="head", commit__sha="abcdef1")
    fixed = FindingFactory(pull_request=pull_request, number=1, caught_by="ci", body="Two\nlines\n")
    EvidenceFactory(finding=fixed, position=0, commit=pin.commit, text="    indented = True\n")
    EvidenceFactory(finding=fixed, position=1, kind="gitlink", commit=pin.commit, path="vendor/lib", sha="5ed97996",
                    start_line=None, end_line=None, text="", caption="The PR's pin")
    EvidenceFactory(finding=fixed, position=2, kind="note", commit=None, path="", start_line=None,
                    end_line=None, text="Three of us ran it.")
    finding_resolve(finding=fixed, status="fixed", actor=None, source="admin", commit=pin.commit, note="Repinned.")
    dismissed = FindingFactory(pull_request=pull_request, number=2, kind="cleanup", path="", line=None)
    finding_resolve(finding=dismissed, status="dismissed", actor=None, source="admin", note="Not worth it.")
    FindingFactory(pull_request=pull_request, number=3, title="Uses *stars* and `ticks`: yes")
    before = review_rows(pull_request)

    text = bundle_dump(bundle_export(pull_request=pull_request))
    after = review_rows(reimport_into_a_fresh_database(text))

    assert after == before
    assert "status: fixed" in text and "at: '" in text
    assert "body: |\n" in text, "multi-line text is written as a literal block"


def test_an_export_states_every_evidence_commit_explicitly():
    evidence = EvidenceFactory()
    data = bundle_export(pull_request=evidence.finding.pull_request)
    assert data["findings"][0]["evidence"][0]["commit"] == evidence.commit.sha
    assert data["findings"][0]["status"] == "open" and "resolution" not in data["findings"][0]


def test_a_resolution_time_in_the_bundle_is_kept():
    pin = PinnedCommitFactory(role="reviewed")
    at = dt.datetime(2025, 3, 4, 5, 6, 7, tzinfo=dt.timezone.utc)
    data = bundle_export(pull_request=pin.pull_request)
    data["findings"] = [
        {"number": 1, "kind": "blocker", "title": "T", "status": "fixed",
         "resolution": {"commit": pin.commit.sha, "note": "n", "at": at.isoformat()}}
    ]
    review_import(data=data)
    assert Finding.objects.get().resolved_at == at


# --- Generated reviews ---------------------------------------------------------------------

_LINE = st.characters(categories=("L", "N", "P", "S", "Zs"), exclude_characters="\x85\u2028\u2029")
one_line = st.text(_LINE, min_size=1, max_size=40).map(str.strip).filter(bool)
optional_line = st.one_of(st.just(""), one_line)
prose = st.text(st.one_of(_LINE, st.sampled_from("\n\t ")), max_size=80)
word = st.text(string.ascii_letters + string.digits, min_size=1, max_size=8)
segment = st.text(string.ascii_letters + string.digits + "_", min_size=1, max_size=8)
file_path = st.lists(segment, min_size=1, max_size=3).map("/".join).map(lambda path: path + ".py")
glob = st.sampled_from(["**/*.py", "src/*.py", "src/**/*.yaml", "a.py"])
regex = st.sampled_from([r"tolerance\s*=\s*0", r"^\s*import librosa", "x", r"boundaries\[index \+ 1\]"])
line = st.integers(min_value=1, max_value=5000)
url = st.one_of(st.just(""), st.integers(1, 10**6).map(lambda n: f"https://example.com/comments/{n}"))
timestamp = st.datetimes(
    min_value=dt.datetime(2000, 1, 1), max_value=dt.datetime(2100, 1, 1), timezones=st.just(dt.timezone.utc)
)


@st.composite
def shas(draw) -> list[str]:
    """Distinct SHAs, full or abbreviated, none an abbreviation of another (that would be ambiguous)."""
    count = draw(st.integers(min_value=1, max_value=4))
    prefixes = draw(st.lists(st.text("0123456789abcdef", min_size=7, max_size=7), min_size=count,
                             max_size=count, unique=True))
    return [prefix + draw(st.sampled_from(["", make_sha(prefix)[7:]])) for prefix in prefixes]


def evidence(commits: list[str]):
    commit = st.sampled_from(commits)
    caption = {"caption": optional_line}

    def with_lines(values: dict) -> dict:
        start, extra = values.pop("first"), values.pop("extra")
        return {**values, "start_line": start, "end_line": start + extra}

    return st.one_of(
        st.fixed_dictionaries(
            {"kind": st.just("snippet"), "commit": commit, "path": file_path, "first": line,
             "extra": st.integers(0, 20)},
            optional={"text": prose, **caption},
        ).map(with_lines),
        st.fixed_dictionaries(
            {"kind": st.just("pattern"), "commit": commit, "path": glob, "regex": regex,
             "expect": st.sampled_from(["present", "absent"])},
            optional=caption,
        ),
        st.fixed_dictionaries(
            {"kind": st.just("path"), "commit": commit, "path": file_path,
             "expect": st.sampled_from(["exists", "missing"])},
            optional=caption,
        ),
        st.fixed_dictionaries(
            {"kind": st.just("gitlink"), "commit": commit, "path": segment.map(lambda name: f"3rdparty/{name}"),
             "sha": st.sampled_from(commits)},
            optional=caption,
        ),
        st.fixed_dictionaries({"kind": st.just("note"), "text": prose.filter(str.strip)},
                              optional={"commit": commit, **caption}),
        st.fixed_dictionaries(
            {"kind": st.just("check"), "commit": commit, "check": one_line},
            optional={"app": word, "expect": st.just("failed"), **caption},
        ),
        st.fixed_dictionaries(
            {"kind": st.just("check"), "commit": commit, "check": one_line,
             "tests": st.lists(st.sampled_from(TEST_IDS), min_size=1, max_size=4, unique=True)},
            optional=caption,
        ),
        st.fixed_dictionaries(
            {"kind": st.just("check"), "commit": commit, "check": one_line,
             "results": st.lists(
                 st.fixed_dictionaries({"rule": word, "path": file_path}, optional={"start_line": line}),
                 min_size=1, max_size=3, unique_by=lambda result: (result["rule"], result["path"],
                                                                   result.get("start_line")))},
            optional=caption,
        ),
    )


# Test ids in the forms runners write them: pytest's node id, JUnit's classname::name and
# classname.name, Go's package path with a subtest.
TEST_IDS = ["tests/test_calc.py::test_div[6-3-2]", "tests.test_calc.TestDiv::test_zero", "com.acme.CalcTest.divides",
            "github.com/acme/calc/TestDiv/by_zero", "Calc divides by zero"]


def status(commits: list[str]):
    return st.one_of(
        st.just({}),
        st.just({"status": "open"}),
        st.fixed_dictionaries(
            {"status": st.just("fixed"),
             "resolution": st.fixed_dictionaries({"commit": st.sampled_from(commits)},
                                                 optional={"note": prose, "at": timestamp})}
        ),
        st.fixed_dictionaries(
            {"status": st.just("dismissed"),
             "resolution": st.fixed_dictionaries({"note": one_line},
                                                 optional={"commit": st.sampled_from(commits), "at": timestamp})}
        ),
    )


TAG_SLUGS = ["silent-failure", "dependency", "cache", "a1"]


@st.composite
def bundles(draw) -> dict:
    commits = draw(shas())
    numbers = draw(st.lists(st.integers(1, 60), max_size=5, unique=True))
    slug = draw(st.tuples(word, word).map("/".join))
    pull_request_number = draw(st.integers(1, 10**6))
    # Links between the bundle's own findings, each pair once and either way round.
    pairs = draw(st.lists(st.tuples(st.sampled_from(numbers), st.sampled_from(numbers)), max_size=4)) if numbers else []
    links: dict[int, list[dict]] = {}
    linked = set()
    for source, target in pairs:
        if source != target and frozenset((source, target)) not in linked:
            linked.add(frozenset((source, target)))
            links.setdefault(source, []).append(
                {"kind": draw(st.sampled_from(["same_cause", "duplicate_of", "follow_up_of"])),
                 "finding": f"{slug}#{pull_request_number}/{target}",
                 **draw(st.fixed_dictionaries({}, optional={"note": optional_line}))}
            )
    findings = []
    for number in numbers:
        finding = draw(
            st.fixed_dictionaries(
                {"number": st.just(number), "kind": st.sampled_from(["blocker", "cleanup"]), "title": one_line},
                optional={
                    "caught_by": st.sampled_from(["ci", "none"]),
                    "summary": optional_line,
                    "body": prose,
                    "fix": prose,
                    "review_comment_url": url,
                    "location": st.one_of(
                        st.none(),
                        st.fixed_dictionaries({"path": file_path}, optional={"line": st.one_of(st.none(), line)}),
                    ),
                    "evidence": st.lists(evidence(commits), max_size=4),
                },
            )
        )
        finding.update(draw(status(commits)))
        tags = draw(st.one_of(st.none(), st.lists(st.sampled_from(TAG_SLUGS), unique=True, max_size=3)))
        if tags is not None:
            finding["tags"] = tags
        if number in links:
            finding["links"] = links[number]
        findings.append(finding)
    pins = draw(st.lists(st.sampled_from(["base", "reviewed", "rebased", "head"]), min_size=len(commits),
                         max_size=len(commits)))
    described = draw(st.lists(st.sampled_from(TAG_SLUGS), unique=True, max_size=2))
    return {
        "repository": {"slug": slug, "clone_url": f"https://example.com/{slug}.git",
                       **draw(st.fixed_dictionaries({}, optional={"web_url": st.just(f"https://github.com/{slug}"),
                                                                  "default_branch": segment}))},
        "pull_request": {"number": pull_request_number, "title": draw(one_line),
                         **draw(st.fixed_dictionaries({}, optional={
                             "state": st.sampled_from(["open", "merged", "closed"]), "before": prose,
                             "change": prose, "status": prose, "url": url}))},
        "commits": [
            {"sha": sha, "role": role, **draw(st.fixed_dictionaries({}, optional={"note": optional_line}))}
            for sha, role in zip(commits, pins, strict=True)
        ],
        "findings": findings,
        "tags": [{"slug": tag, "description": draw(one_line)} for tag in described],
    }


@pytest.mark.django_db(transaction=False)
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                  HealthCheck.too_slow])
@given(data=bundles())
def test_export_then_import_is_exact_for_any_review(data):
    with transaction.atomic():
        report = review_import(data=data)
        slug, number = report.pull_request.rsplit("#", 1)
        pull_request = PullRequest.objects.get(repository__slug=slug, number=int(number))
        rows = review_rows(pull_request)
        exported = bundle_dump(bundle_export(pull_request=pull_request))

        Tag.objects.all().delete()  # a fresh database has no tags either
        reimported = reimport_into_a_fresh_database(exported)

        assert review_rows(reimported) == rows
        assert bundle_dump(bundle_export(pull_request=reimported)) == exported
        transaction.set_rollback(True)  # each example starts from an empty database


# --- Malformed bundles (beyond those in test_bundle_import.py) --------------------------------


@pytest.mark.parametrize(
    ("changes", "field"),
    [
        ({"repository": ["NVIDIA-NeMo/RL"]}, "repository"),
        ({"commits": [{"sha": "d044f40", "role": "rebased"}, {"sha": "d044f40", "role": "head"}]}, "commits[1].sha"),
        ({"findings.0.evidence": "snippet"}, "findings[0].evidence"),
        ({"findings.1": "a cleanup"}, "findings[1]"),
        ({"findings.0.caught_by": "lint"}, "findings[0].caught_by"),
        ({"findings.0.status": "closed"}, "findings[0].status"),
        ({"findings.0.location": {"path": "a.py", "line": "top"}}, "findings[0].location.line"),
        ({"findings.0.evidence.0": {"kind": "snippet", "path": "a.py", "start_line": 3}},
         "findings[0].evidence[0].end_line"),
        ({"findings.0.evidence.3": {"kind": "gitlink", "path": "3rdparty/Megatron-Bridge", "sha": "main"}},
         "findings[0].evidence[3].sha"),
        ({"findings.1.status": "fixed", "findings.1.resolution": {"commit": "d044f40", "at": "yesterday"}},
         "findings[1].resolution.at"),
        ({"findings.1.status": "fixed", "findings.1.resolution": "in d044f40"}, "findings[1].resolution"),
        ({"findings.0.evidence.5": {"kind": "check", "check": "unit\ntests"}}, "findings[0].evidence[5].check"),
        ({"findings.0.evidence.5": {"kind": "check", "check": "lint", "path": "a.py"}}, "findings[0].evidence[5].path"),
        ({"findings.0.evidence.5": {"kind": "check", "check": "lint", "tests": ["a", "a"]}},
         "findings[0].evidence[5].tests"),
        ({"findings.0.evidence.5": {"kind": "check", "check": "secrets",
                                    "results": [{"rule": "S105", "path": "../etc/passwd", "start_line": 3}]}},
         "findings[0].evidence[5].results"),
        ({"findings.0.evidence.5": {"kind": "check", "check": "secrets",
                                    "results": [{"rule": "S105", "file": "a.py"}]}},
         "findings[0].evidence[5].results[0].file"),
        ({"findings.0.evidence.5": {"kind": "check", "check": "lint", "expect": "present"}},
         "findings[0].evidence[5].expect"),
        ({"findings.0.evidence.0.tests": ["tests/a.py::test_b"]}, "findings[0].evidence[0].tests"),
        # Valid in form, refused by the service: fixing names a commit, and the whole import is undone.
        ({"findings.1.status": "fixed"}, "findings[1].status"),
    ],
)
def test_more_malformed_bundles_change_nothing_and_name_the_field(changes, field):
    review_import(data=bundle())
    tables = (Repository, PullRequest, Finding, Evidence, Commit, PinnedCommit)
    before = [list(model.objects.order_by("pk").values()) for model in tables]
    broken = bundle(**changes)
    with pytest.raises(BundleInvalid) as error:
        review_import(data=broken)
    assert error.value.field == field, str(error.value)
    assert [list(model.objects.order_by("pk").values()) for model in tables] == before
