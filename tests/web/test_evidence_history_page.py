"""The finding page's evidence from pin to pin: a real branch reviewed, rebased onto a base that
changed the same file, then changed again by its author; each change labelled where it came from."""
import re

import pytest
from django.test.utils import CaptureQueriesContext
from django.db import connection

from findings.models import Finding
from findings.selectors.evidence_history import finding_evidence_histories
from findings.selectors.findings import finding_verifications, pull_request_pins
from findings.services.review_import import review_import
from findings.services.verification.run import pull_request_verify
from reviews.models import Commit, PullRequest
from reviews.services import pull_request_pin_commit
from tests.gitrepo import GitRepoBuilder

pytestmark = pytest.mark.django_db

MODULE = "".join(f"value_{n} = compute({n})\n" for n in range(1, 21))


def edited(text, number, new):
    return text.replace(f"value_{number} = compute({number})\n", new + "\n")


@pytest.fixture
def finding(tmp_path):
    repo = GitRepoBuilder(tmp_path)
    repo.write("src/module.py", MODULE).commit("A")
    repo.branch("feature").checkout("feature")
    reviewed = repo.write("src/module.py", edited(MODULE, 12, "value_12 = compute(12) * 2")).commit("F1")
    # The mirror fetched the reviewed push before the rebase replaced it; a tag keeps it fetchable here.
    repo.tag("reviewed-push", reviewed)
    repo.checkout("main")
    repo.write("src/module.py", edited(MODULE, 7, "value_7 = compute(7) + 1")).commit("B")
    repo.checkout("feature")
    repo.git("rebase", "--quiet", "main")
    rebased = repo.head()
    head = repo.write("src/module.py", edited(repo.read("src/module.py"), 13, "value_13 = None")).commit("F2")
    review_import(data={
        "repository": {"slug": "acme/module", "clone_url": str(repo.path), "web_url": "https://github.com/acme/module"},
        "pull_request": {"number": 3, "title": "Module"},
        "commits": [{"sha": reviewed, "role": "reviewed"}],
        "findings": [{
            "number": 1, "kind": "blocker", "title": "Values computed twice",
            "evidence": [{"kind": "snippet", "path": "src/module.py", "start_line": 9, "end_line": 10}],
        }],
    })
    pull_request = PullRequest.objects.get(number=3)
    for sha, role in ((reviewed, "reviewed"), (rebased, "rebased"), (head, "head")):
        commit, _ = Commit.objects.get_or_create(repository=pull_request.repository, sha=sha,
                                                 defaults={"resolved": True})
        pull_request_pin_commit(pull_request=pull_request, commit=commit, role=role)
        pull_request_verify(pull_request=pull_request, commit=commit)
    return Finding.objects.get(pull_request=pull_request, number=1), (reviewed, rebased, head)


def test_the_finding_page_labels_the_rebase_s_change_and_the_author_s(client, finding):
    finding, (reviewed, rebased, head) = finding

    page = client.get(finding.get_absolute_url()).content.decode()

    section = page[page.index('id="evidence-history-title"'):page.index('id="history-title"')]
    steps = re.findall(r'<li class="history-step">.*?</li>', section, re.S)
    assert [re.search(r"<code>(\w+)</code>", step).group(1) for step in steps] == [
        reviewed[:8], rebased[:8], head[:8]]
    assert "From the rebase" not in steps[0] and "By the author" not in steps[0]
    assert re.findall(r'class="badge change-\w+">([^<]+)<', steps[1]) == ["From the rebase"]
    assert "value_7" in steps[1]
    assert re.findall(r'class="badge change-\w+">([^<]+)<', steps[2]) == ["By the author"]
    assert "value_13" in steps[2]


def test_the_history_reads_the_rows_the_page_has_loaded_and_no_more(finding):
    finding, _ = finding
    finding = Finding.objects.select_related("pull_request__repository").prefetch_related("evidence").get(pk=finding.pk)
    pins = pull_request_pins(finding.pull_request)
    verifications = finding_verifications(finding)

    with CaptureQueriesContext(connection) as queries:
        [history] = finding_evidence_histories(finding, pins=pins, verifications=verifications)

    assert len(queries.captured_queries) == 0
    assert len(history.steps) == 3
