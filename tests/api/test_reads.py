import pytest

from findings.services.tags_and_links import finding_link_create, finding_tags_set
from findings.state.stored import pull_request_states

from findings.models import Finding, VerificationRun
from reviews.models import PullRequest
from tests.factories import (
    CommitFactory,
    EvidenceFactory,
    FindingEventFactory,
    FindingFactory,
    PullRequestFactory,
    RepositoryFactory,
    UserFactory,
    VerificationFactory,
)

pytestmark = pytest.mark.django_db


def numbers(response) -> list[int]:
    assert response.status_code == 200, response.json()
    return [item["number"] for item in response.json()["results"]]


def test_the_root_lists_where_to_start(anonymous_reader):
    body = anonymous_reader.get("/api/").json()
    assert body["findings"] == "http://testserver/api/findings/"
    assert body["docs"] == "http://testserver/api/docs/"


def test_repositories_are_listed_and_addressed_by_owner_and_name(anonymous_reader, review):
    listed = anonymous_reader.get("/api/repos/").json()
    assert [repo["slug"] for repo in listed["results"]] == ["acme/loader"]
    repo = anonymous_reader.get("/api/repos/acme/loader/").json()
    assert (repo["owner"], repo["name"], repo["web_url"]) == ("acme", "loader", "https://github.com/acme/loader")
    assert "clone_url" not in repo
    assert repo["pulls_url"] == "http://testserver/api/repos/acme/loader/pulls/"


def test_a_pull_request_is_the_same_by_id_and_by_owner_name_and_number(anonymous_reader, review):
    by_id = anonymous_reader.get(f"/api/pulls/{review.pull_request.pk}/").json()
    by_number = anonymous_reader.get("/api/repos/acme/loader/pulls/4108/").json()
    assert by_id == by_number
    assert by_id["reference"] == "acme/loader#4108"
    assert by_id["open_blockers"] == 2 and by_id["findings_count"] == 5
    assert [(pin["sha"], pin["role"], pin["has_verifications"]) for pin in by_id["pins"]] == [
        (review.reviewed.sha, "reviewed", False),
        (review.head.sha, "head", True),
    ]
    assert by_id["gate_url"] == "http://testserver/api/repos/acme/loader/pulls/4108/gate"
    assert by_id["html_url"] == "http://testserver/acme/loader/pull/4108/"


def test_pull_requests_of_a_repository_are_listed_under_it(anonymous_reader, review):
    PullRequestFactory(number=7)
    listed = anonymous_reader.get("/api/repos/acme/loader/pulls/").json()
    assert [pr["reference"] for pr in listed["results"]] == ["acme/loader#4108"]
    assert anonymous_reader.get("/api/pulls/", {"state": "open"}).json()["count"] == 2


def test_an_unknown_pull_request_says_how_to_add_it(anonymous_reader, review):
    response = anonymous_reader.get("/api/repos/acme/loader/pulls/1/")
    assert response.status_code == 404
    assert "import its review first" in response.json()["detail"]


def test_a_finding_shows_its_write_up_evidence_and_links(anonymous_reader, review):
    finding = review.findings[1]
    body = anonymous_reader.get(f"/api/findings/{finding.pk}/").json()
    assert (body["number"], body["kind"], body["status"], body["repository"]) == (1, "blocker", "open", "acme/loader")
    assert body["html_url"] == "http://testserver/acme/loader/pull/4108/findings/1/"
    assert body["body"] == "The **body** explains it."
    [evidence] = body["evidence"]
    assert evidence["commit"] == review.reviewed.sha
    assert evidence["permalink"] == f"https://github.com/acme/loader/blob/{review.reviewed.sha}/src/loader.py#L40-L42"
    assert body["history_url"] == f"http://testserver/api/findings/{finding.pk}/history/"


def test_a_finding_s_history_lists_every_status_change(anonymous_reader, review):
    finding = review.findings[3]
    FindingEventFactory(finding=finding, from_status="", to_status="open")
    FindingEventFactory(finding=finding, from_status="open", to_status="fixed", commit=review.reviewed, note="Done.")
    history = anonymous_reader.get(f"/api/findings/{finding.pk}/history/").json()
    assert [(row["from_status"], row["to_status"], row["commit"]) for row in history] == [
        ("", "open", None),
        ("open", "fixed", review.reviewed.sha),
    ]


def test_a_finding_s_history_says_which_events_are_edits(anonymous_reader, db):
    from findings.services.review_import import review_import
    from tests.api.test_actions import bundle

    review_import(data=bundle())
    finding = Finding.objects.get()
    history = anonymous_reader.get(f"/api/findings/{finding.pk}/history/").json()
    assert [(row["kind"], row["source"], row["to_status"]) for row in history] == [("created", "import", "open")]


def test_the_history_of_an_unknown_finding_is_a_404(anonymous_reader, db):
    assert anonymous_reader.get("/api/findings/999/history/").status_code == 404


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ({"kind": "blocker"}, [1, 2, 3, 5]),
        ({"kind": "cleanup"}, [4]),
        ({"status": "open"}, [1, 2, 4]),
        ({"status": "fixed"}, [3]),
        ({"caught_by": "ci"}, [4]),
        ({"path": "src/c"}, [1, 2]),
        ({"q": "dtype"}, [2]),
        ({"q": "vague name"}, [4]),
        ({"q": "CACHE.PY"}, [2]),
        ({"repository": "acme/loader", "pull_request_number": 4108, "kind": "blocker", "status": "open"}, [1, 2]),
        ({"ordering": "-number"}, [5, 4, 3, 2, 1]),
    ],
)
def test_findings_filter_and_order(anonymous_reader, review, query, expected):
    FindingFactory(title="Elsewhere", path="src/cache.py", kind="cleanup")  # another PR, another repository
    if "repository" not in query and query.get("ordering") is None:
        query = {**query, "pull_request": review.pull_request.pk}
    if query.get("ordering"):
        query = {**query, "repository": "acme/loader"}
    assert numbers(anonymous_reader.get("/api/findings/", query)) == expected


def test_findings_filter_by_verdict_at_an_abbreviated_commit(anonymous_reader, review):
    present = anonymous_reader.get("/api/findings/", {"verdict": "present", "commit": review.head.sha[:9]})
    assert numbers(present) == [1, 3, 4, 5]
    likely_fixed = anonymous_reader.get("/api/findings/", {"verdict": "likely_fixed", "commit": review.head.sha})
    assert numbers(likely_fixed) == [2]
    verified_at = anonymous_reader.get("/api/findings/", {"commit": review.head.sha, "status": "open"})
    assert numbers(verified_at) == [1, 2, 4]
    assert numbers(anonymous_reader.get("/api/findings/", {"commit": review.reviewed.sha})) == []


def test_a_verdict_without_a_commit_is_refused_with_what_to_add(anonymous_reader, review):
    response = anonymous_reader.get("/api/findings/", {"verdict": "present"})
    assert response.status_code == 400
    assert response.json()["errors"] == [
        {"field": "commit", "message": "A verdict is a verdict at a commit: add commit=<sha>."}
    ]
    assert "add commit=<sha>" in response.json()["detail"]


def test_an_unknown_or_malformed_commit_filter_is_a_400(anonymous_reader, review):
    unknown = anonymous_reader.get("/api/findings/", {"commit": "abcdef1234"})
    assert unknown.status_code == 400 and "not recorded" in unknown.json()["detail"]
    malformed = anonymous_reader.get("/api/findings/", {"commit": "xyz"})
    assert malformed.status_code == 400 and "hexadecimal" in malformed.json()["detail"]


def test_an_ambiguous_commit_filter_names_the_candidates(anonymous_reader, review):
    first = CommitFactory(repository=review.repository, sha="abcdef1" + "0" * 33)
    second = CommitFactory(repository=review.repository, sha="abcdef1" + "1" * 33)
    response = anonymous_reader.get("/api/findings/", {"commit": "abcdef1", "repository": "acme/loader"})
    assert response.status_code == 400
    assert first.sha in response.json()["detail"] and second.sha in response.json()["detail"]


def test_an_invalid_choice_names_the_filter(anonymous_reader, db):
    response = anonymous_reader.get("/api/findings/", {"kind": "nitpick"})
    assert response.status_code == 400
    assert response.json()["errors"][0]["field"] == "kind"


def test_pages_have_a_size_parameter_with_a_maximum(anonymous_reader, db):
    pull_request = PullRequestFactory()
    FindingFactory.create_batch(5, pull_request=pull_request)
    page = anonymous_reader.get("/api/findings/", {"page_size": 2, "page": 2}).json()
    assert page["count"] == 5 and len(page["results"]) == 2
    assert "page=3" in page["next"] and "page_size=2" in page["next"]
    assert len(anonymous_reader.get("/api/findings/", {"page_size": 10_000}).json()["results"]) == 5


def test_a_page_past_the_end_says_where_to_start(anonymous_reader, db):
    response = anonymous_reader.get("/api/findings/", {"page": 9})
    assert response.status_code == 404 and "start at page 1" in response.json()["detail"]


def test_evidence_is_listed_by_finding(anonymous_reader, review):
    body = anonymous_reader.get("/api/evidence/", {"finding": review.findings[2].pk}).json()
    assert [item["finding"] for item in body["results"]] == [review.findings[2].pk]
    evidence_id = body["results"][0]["id"]
    assert anonymous_reader.get(f"/api/evidence/{evidence_id}/").json()["kind"] == "snippet"


def test_verifications_are_filtered_by_commit_and_show_their_results(anonymous_reader, review):
    VerificationFactory(finding=review.findings[1], commit=review.reviewed, verdict="present")
    body = anonymous_reader.get("/api/verifications/", {"commit": review.head.sha[:8]}).json()
    assert body["count"] == 5
    first = body["results"][0]
    assert (first["finding_number"], first["commit"], first["verdict"]) == (1, review.head.sha, "present")
    [result] = first["results"]
    assert (result["state"], result["moved"], result["position"]) == ("holds", False, 0)
    by_finding = anonymous_reader.get("/api/verifications/", {"finding": review.findings[1].pk}).json()
    assert by_finding["count"] == 2
    detail = anonymous_reader.get(f"/api/verifications/{first['id']}/").json()
    assert detail == first


def test_verification_runs_show_their_progress(anonymous_reader, review):
    run = VerificationRun.objects.create(pull_request=review.pull_request, commit=review.head, done=3, total=4)
    body = anonymous_reader.get(f"/api/runs/{run.pk}/").json()
    assert (body["status"], body["done"], body["total"], body["percent"], body["is_active"]) == (
        "queued", 3, 4, 75, True
    )
    assert body["commit"] == review.head.sha
    assert anonymous_reader.get("/api/runs/", {"pull_request": review.pull_request.pk}).json()["count"] == 1


def test_an_unknown_url_under_api_answers_json_and_suggests_the_slash(anonymous_reader, review):
    response = anonymous_reader.get(f"/api/findings/{review.findings[1].pk}")
    assert response.status_code == 404
    assert response.json()["detail"].endswith(f"did you mean /api/findings/{review.findings[1].pk}/?")
    assert "see http://testserver/api/docs/" in anonymous_reader.get("/api/nothing-here").json()["detail"]


def make_findings(count: int) -> None:
    repository = RepositoryFactory()
    pull_requests = [PullRequestFactory(repository=repository) for _ in range(3)]
    for pull_request in pull_requests:
        VerificationRun.objects.create(pull_request=pull_request, requested_by=UserFactory())
    for index in range(count):
        finding = FindingFactory(pull_request=pull_requests[index % 3], status=Finding.Status.OPEN)
        EvidenceFactory(finding=finding)
        VerificationFactory(finding=finding)


@pytest.mark.parametrize(
    "url",
    ["/api/findings/", "/api/pulls/", "/api/evidence/", "/api/verifications/", "/api/runs/", "/api/repos/"],
)
def test_lists_take_the_same_number_of_queries_for_3_and_30_rows(anonymous_reader, django_assert_max_num_queries, url):
    # Measured with the pull requests' states stored (the first read of a generation derives and
    # stores them; tests/findings/state bounds that): the findings' rows read their verdicts and
    # flags from those states, one query a page.
    make_findings(3)
    pull_request_states(PullRequest.objects.values_list("pk", flat=True))
    with django_assert_max_num_queries(5) as few:
        assert anonymous_reader.get(url).status_code == 200
    make_findings(27)
    pull_request_states(PullRequest.objects.values_list("pk", flat=True))
    with django_assert_max_num_queries(len(few.captured_queries)):
        assert anonymous_reader.get(url).status_code == 200


def test_a_finding_s_detail_takes_a_fixed_number_of_queries(anonymous_reader, review, django_assert_max_num_queries):
    for position in range(1, 10):
        EvidenceFactory(finding=review.findings[1], commit=review.reviewed, position=position)
    finding_tags_set(finding=review.findings[1], slugs=["silent-failure", "dependency", "cache"], actor=None)
    for other in (review.findings[2], review.findings[3]):
        finding_link_create(source=review.findings[1], target=other, kind="same_cause", actor=None)
    finding_link_create(source=review.findings[4], target=review.findings[1], kind="follow_up_of", actor=None)
    # The finding, its evidence, its tags, its links made from each end, and its PR's stored state
    # (derived by the first read of the generation).
    anonymous_reader.get(f"/api/findings/{review.findings[1].pk}/")
    with django_assert_max_num_queries(8):
        assert anonymous_reader.get(f"/api/findings/{review.findings[1].pk}/").status_code == 200


@pytest.mark.parametrize(
    "url",
    [
        "/api/findings/?pull_request=99999999999999999999999",
        "/api/findings/?pull_request=1.5",
        "/api/verifications/?finding=99999999999999999999999",
        "/api/findings/99999999999999999999999/",
        "/api/repos/acme/loader/pulls/99999999999999999999999/gate",
        "/api/findings/?page=99999999999999999999999",
    ],
)
def test_numbers_out_of_range_are_refused_not_errors(anonymous_reader, review, url):
    assert anonymous_reader.get(url).status_code in (400, 404)
