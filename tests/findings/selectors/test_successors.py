"""What replaced gone evidence is computed once, by the engine while it verifies, stored with the
result and read by `successor_read`: the finding page, the decide form, the needs-a-decision
queue, the API, `verify --json`, SARIF, the check run's annotation, its summary and the forges'
note, and the review-thread reply all say the same, about a real repository verified end to end."""
import io
import json

import pytest
from django.core.management import call_command
from django.urls import reverse

from findings.exchange.sarif import pull_request_sarif
from findings.models import EvidenceResult, Finding, Verification
from findings.selectors.successors import successor_read
from findings.services.review_import import review_import
from findings.services.verification.run import pull_request_verify
from forge.content import commit_report, open_finding_annotations
from forge.threads.verdicts import _reply
from reviews.models import Commit, PullRequest
from reviews.services import pull_request_pin_commit
from tests.gitrepo import GitRepoBuilder
from tests.personas import api_client

pytestmark = pytest.mark.django_db

LOADER = "".join(f"setting_{n} = configure({n})\n" for n in range(1, 21))
RECORDED = "setting_10 = configure(10)\nsetting_11 = configure(11)"


@pytest.fixture
def world(tmp_path):
    repo = GitRepoBuilder(tmp_path)
    reviewed = repo.write("src/loader.py", LOADER).commit("reviewed")
    rewritten = repo.write("src/loader.py", LOADER.replace(
        RECORDED + "\n", "settings = {n: configure(n) for n in (10, 11)}\nvalidate(settings)\n"
    )).commit("rewritten")
    review_import(data={
        "repository": {"slug": "acme/loader", "clone_url": str(repo.path), "web_url": "https://github.com/acme/loader"},
        "pull_request": {"number": 7, "title": "Loader"},
        "commits": [{"sha": reviewed, "role": "reviewed"}],
        "findings": [{
            "number": 1, "kind": "blocker", "title": "Settings configured one by one",
            "evidence": [{"kind": "snippet", "path": "src/loader.py", "start_line": 10, "end_line": 11}],
        }],
    })
    pull_request = PullRequest.objects.get(number=7)
    commit = Commit.objects.create(repository=pull_request.repository, sha=rewritten, resolved=True)
    pull_request_pin_commit(pull_request=pull_request, commit=commit, role="rebased")
    pull_request_verify(pull_request=pull_request, commit=commit)
    return pull_request, commit, repo


def test_every_interface_says_the_same_successor(world, client, maintainer_user):
    pull_request, commit, _ = world
    finding = Finding.objects.get(pull_request=pull_request, number=1)
    result = EvidenceResult.objects.get(verification__finding=finding, verification__commit=commit)
    shown = successor_read(result.successor, sha=commit.sha)
    # What the engine found, stored once.
    assert result.state == "gone"
    assert (shown.kind, shown.location, shown.recorded_location) == (
        "rewritten", "src/loader.py:10–11", "src/loader.py:10–11")
    sentence = f"Rewritten at {commit.sha[:8]}: now src/loader.py:10–11"
    assert shown.sentence == sentence
    data = shown.as_data()

    # The pages a maintainer decides on: the finding, the decide form and the queue.
    client.force_login(maintainer_user)
    kwargs = {"owner": "acme", "name": "loader", "number": 7}
    pages = {
        "finding": finding.get_absolute_url(),
        "decide": reverse("findings:finding_decide", kwargs={**kwargs, "finding_number": 1}),
        "queue": reverse("findings:decisions"),
    }
    for name, url in pages.items():
        page = client.get(url).content.decode()
        assert sentence in page, name
        # The recorded lines beside what replaced them, each numbered in its own file.
        assert 'class="diff-removed"' in page and 'class="diff-added"' in page, name
        assert f"https://github.com/acme/loader/blob/{commit.sha}/src/loader.py#L10-L11" in page, name

    # The API.
    api = api_client(maintainer_user)
    verification = Verification.objects.get(finding=finding, commit=commit)
    answer = api.get(reverse("api:verification-detail", kwargs={"pk": verification.pk})).json()
    assert answer["results"][0]["successor"] == data

    # verify --json, as a tool reads it.
    out = io.StringIO()
    call_command("verify", "acme/loader", "7", "--commit", commit.sha, "--json", "--no-fetch", stdout=out)
    [item] = json.loads(out.getvalue())["findings"][0]["evidence"]
    assert item["successor"] == data
    # And as a person reads it at a terminal.
    out = io.StringIO()
    call_command("verify", "acme/loader", "7", "--commit", commit.sha, "--no-fetch", stdout=out)
    assert f"[0] {sentence}\n" in out.getvalue()

    # SARIF: a related location where the code is now, with the sentence.
    [sarif] = pull_request_sarif(pull_request=pull_request)["runs"][0]["results"]
    assert {"id": 1, "physicalLocation": {"artifactLocation": {"uri": "src/loader.py"},
                                          "region": {"startLine": 10, "endLine": 11}},
            "message": {"text": sentence}} in sarif["relatedLocations"]

    # The check run: the annotation lands on the new lines and says so; the summary and the
    # comment (GitHub's comment and GitLab's note) name it on the blocker's line.
    [annotation] = open_finding_annotations(pull_request=pull_request, commit=commit)
    assert (annotation.path, annotation.start_line, annotation.end_line) == ("src/loader.py", 10, 11)
    assert f"\n{sentence}." in annotation.message
    report = commit_report(pull_request=pull_request, commit=commit)
    assert f"; {sentence}" in report.summary
    assert f"; {sentence}" in report.comment

    # The review-thread reply.
    _, reply = _reply(finding, commit, verification.verdict)
    assert f"\n\n{sentence}.\n\n" in reply


def test_a_snippet_back_at_the_next_pin_has_no_successor_there_and_the_last_one_is_kept(world):
    pull_request, commit, repo = world
    back = repo.write("src/loader.py", LOADER).commit("back")
    again = Commit.objects.create(repository=pull_request.repository, sha=back, resolved=True)
    pull_request_pin_commit(pull_request=pull_request, commit=again, role="rebased")
    pull_request_verify(pull_request=pull_request, commit=again)

    at_back = EvidenceResult.objects.get(verification__commit=again)
    assert (at_back.state, at_back.successor) == ("holds", None)
    assert EvidenceResult.objects.get(verification__commit=commit).successor["kind"] == "rewritten"
