"""The repository page (open blockers by age, time to fix, how findings ended, busiest files,
recurring tags, as SVG charts with text alternatives), the file page (every finding on a path,
under its earlier names too) and the same figures in the API; each page in bounded queries."""
import re
from datetime import timedelta

import pytest
from django.utils import timezone

from findings.selectors.figures import repository_figures
from findings.models import Finding
from findings.services.tags_and_links import finding_tags_set
from findings.services.resolution import finding_resolve
from tests.factories import store_states
from tests.factories import (
    CommitFactory,
    EvidenceFactory,
    EvidenceResultFactory,
    FindingFactory,
    PullRequestFactory,
    RepositoryFactory,
    VerificationFactory,
)

pytestmark = pytest.mark.django_db


def text_of(html: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html))


def aged(finding: Finding, days: int) -> Finding:
    Finding.objects.filter(pk=finding.pk).update(created_at=timezone.now() - timedelta(days=days))
    finding.refresh_from_db()
    return finding


def build_history(repository, pulls: int = 2):
    """Findings across `pulls` pull requests: open blockers of several ages, one fixed after a
    verification said likely fixed, one fixed by hand, one dismissed, tags that recur."""
    made = {}
    for index in range(pulls):
        pull = PullRequestFactory(repository=repository, number=100 + index)
        commit = CommitFactory(repository=repository)
        old = aged(FindingFactory(pull_request=pull, title=f"Old blocker {index}", path="src/loader.py"), 100)
        new = aged(FindingFactory(pull_request=pull, title=f"New blocker {index}", path="src/cache.py"), 2)
        suggested = aged(FindingFactory(pull_request=pull, title=f"Suggested fix {index}", path="src/loader.py"), 10)
        VerificationFactory(finding=suggested, commit=commit, verdict="likely_fixed",
                            checked_at=timezone.now() - timedelta(days=1))
        finding_resolve(finding=suggested, status="fixed", actor=None, source="admin", commit=commit)
        by_hand = aged(FindingFactory(pull_request=pull, title=f"By hand {index}", kind="cleanup"), 40)
        finding_resolve(finding=by_hand, status="fixed", actor=None, source="admin", commit=commit)
        dismissed = FindingFactory(pull_request=pull, title=f"Dismissed {index}", path="")
        finding_resolve(finding=dismissed, status="dismissed", actor=None, source="admin", note="Out of scope.")
        for finding in (old, new):
            finding_tags_set(finding=finding, slugs=["silent-failure"], actor=None)
        made.update({f"old{index}": old, f"new{index}": new})
    return made


@pytest.fixture
def repository():
    return RepositoryFactory(slug="acme/loader")


def test_the_figures_count_what_happened_to_the_findings(repository):
    build_history(repository)
    FindingFactory(pull_request=PullRequestFactory(repository=RepositoryFactory(slug="other/repo")))
    figures = repository_figures(repository)
    assert [finding.title for finding in figures.open_blockers] == [
        "Old blocker 0", "Old blocker 1", "New blocker 0", "New blocker 1"
    ]
    assert [(bar.label, bar.value) for bar in figures.open_blockers_by_age] == [
        ("under a week", 2), ("1–4 weeks", 0), ("1–3 months", 0), ("over 3 months", 2)
    ]
    assert [(bar.label, bar.value) for bar in figures.endings] == [
        ("fixed after a verification said likely fixed", 2), ("fixed by hand", 2), ("dismissed", 2), ("still open", 4)
    ]
    assert figures.median_days_to_fix == 25.0  # 10 and 40 days
    assert [(bar.label, bar.value) for bar in figures.fix_times] == [
        ("under a week", 0), ("1–4 weeks", 2), ("1–3 months", 2), ("over 3 months", 0)
    ]
    assert [(bar.label, bar.value) for bar in figures.top_files] == [("src/loader.py", 6), ("src/cache.py", 2)]
    assert [(bar.label, bar.value) for bar in figures.recurring_tags] == [("silent-failure", 4)]
    assert figures.findings_total == 10


def test_the_repository_page_draws_its_charts_as_svg_with_text_alternatives(client, repository):
    build_history(repository)
    html = client.get("/acme/loader/").content.decode()
    charts = re.findall(r'<svg class="chart" role="(img|group)" aria-labelledby="([^"]+)"', html)
    assert len(charts) == 5
    # A chart whose bars link (files, tags) is a group, so its links are not hidden inside an image.
    assert [role for role, _ in charts] == ["img", "img", "img", "group", "group"]
    assert '<title id="chart-how-findings-ended-title">How findings ended</title>' in html
    assert ('<desc id="chart-how-findings-ended-desc">10 findings: fixed after a verification said likely fixed 2, '
            "fixed by hand 2, dismissed 2, still open 4.</desc>") in html
    text = text_of(html)
    assert re.search(r"Old blocker 0 #100 src/loader\.py 100 days .* New blocker 1 #101 src/cache\.py 2 days", text)
    assert "A fixed finding took 25.0 days to fix, at the median." in text
    assert "The figures as a table" in text
    assert 'href="/acme/loader/files/src/loader.py"' in html
    assert 'href="/tags/silent-failure/"' in html


def test_a_chart_label_cannot_inject_markup(client, repository):
    FindingFactory(pull_request=PullRequestFactory(repository=repository), path='src/<script>alert("x")</script>.py')
    html = client.get("/acme/loader/").content.decode()
    assert "<script>alert" not in html
    assert "&lt;script&gt;alert" in html


@pytest.mark.parametrize("pulls", [1, 6])
def test_the_repository_page_reads_in_bounded_queries(client, repository, pulls, django_assert_max_num_queries):
    build_history(repository, pulls=pulls)
    store_states()  # the endings are counted from the PRs' stored states
    # Its key (one query), the repository, the page's figures (the open blockers counted by age and
    # the oldest listed), one for the open follow-ups over time, one for the merge policy and one for
    # the overdue follow-ups over time; read again, its key alone.
    with django_assert_max_num_queries(14):
        assert client.get("/acme/loader/").status_code == 200
    with django_assert_max_num_queries(1):
        assert client.get("/acme/loader/").status_code == 200
    with django_assert_max_num_queries(8):
        assert client.get("/api/repos/acme/loader/figures/").status_code == 200


def test_the_api_gives_the_repository_s_figures(client, repository):
    build_history(repository)
    body = client.get("/api/repos/acme/loader/figures/").json()
    assert body["repository"] == "acme/loader"
    assert [item["title"] for item in body["open_blockers"]][:2] == ["Old blocker 0", "Old blocker 1"]
    assert body["open_blockers"][0]["age_days"] == 100
    assert {item["label"]: item["value"] for item in body["endings"]}["fixed by hand"] == 2
    assert body["median_days_to_fix"] == 25.0
    assert body["recurring_tags"] == [{"label": "silent-failure", "value": 4}]
    repository_item = client.get("/api/repos/acme/loader/").json()
    assert repository_item["figures_url"].endswith("/api/repos/acme/loader/figures/")
    assert client.get("/api/repos/acme/nothing/figures/").status_code == 404


@pytest.fixture
def renamed(repository):
    """src/old_loader.py became src/loader.py: a finding recorded under each name, in two PRs, and
    verification of the older one found its evidence under the new name."""
    first = PullRequestFactory(repository=repository, number=1)
    second = PullRequestFactory(repository=repository, number=2)
    before = FindingFactory(pull_request=first, title="Recorded under the old name", path="src/old_loader.py")
    evidence = EvidenceFactory(finding=before, position=0, path="src/old_loader.py")
    verification = VerificationFactory(finding=before, commit=evidence.commit)
    EvidenceResultFactory(verification=verification, evidence=evidence, path="src/loader.py")
    after = FindingFactory(pull_request=second, title="Recorded under the new name", path="src/loader.py")
    FindingFactory(pull_request=second, title="Another file", path="src/cache.py")
    # The same path in another repository is another file.
    FindingFactory(pull_request=PullRequestFactory(repository=RepositoryFactory(slug="other/repo")),
                   title="Elsewhere", path="src/loader.py")
    return before, after


def test_a_renamed_file_s_page_lists_the_findings_recorded_under_its_old_name(client, renamed):
    text = text_of(client.get("/acme/loader/files/src/loader.py").content.decode())
    assert "Verification has seen this file under other names too: src/old_loader.py" in text
    assert "2 findings on this file, newest first" in text
    assert re.search(r"Recorded under the new name .* recorded as src/loader\.py .* "
                     r"Recorded under the old name .* recorded as src/old_loader\.py", text)
    assert "Another file" not in text and "Elsewhere" not in text
    old_page = text_of(client.get("/acme/loader/files/src/old_loader.py").content.decode())
    assert "Recorded under the new name" in old_page and "Recorded under the old name" in old_page


def test_the_api_lists_a_file_s_findings_under_all_its_names(client, renamed):
    body = client.get("/api/repos/acme/loader/files/src/loader.py").json()
    assert body["names"] == ["src/loader.py", "src/old_loader.py"]
    assert [(item["title"], item["recorded_as"]) for item in body["findings"]] == [
        ("Recorded under the new name", ["src/loader.py"]), ("Recorded under the old name", ["src/old_loader.py"])
    ]


def test_a_file_with_no_findings_says_so(client, repository):
    assert "No finding was ever recorded on this file." in client.get("/acme/loader/files/nothing.py").content.decode()
    assert client.get("/acme/nothing/files/a.py").status_code == 404


@pytest.mark.parametrize("count", [2, 20])
def test_the_file_page_reads_in_bounded_queries(client, renamed, count, django_assert_max_num_queries):
    repository = renamed[0].pull_request.repository
    for _ in range(count):
        FindingFactory(pull_request=PullRequestFactory(repository=repository), path="src/loader.py")
    store_states()  # the page reads each finding's state from its PR's: one more query
    with django_assert_max_num_queries(9):
        assert client.get("/acme/loader/files/src/loader.py").status_code == 200
    with django_assert_max_num_queries(8):
        assert client.get("/api/repos/acme/loader/files/src/loader.py").status_code == 200
