"""Related findings on a finding's page and in the API: linked ones first, then findings of other
pull requests on the same file (under any of its names), with shared tags or a similar title,
each saying why. Runs on SQLite (rapidfuzz) and PostgreSQL (pg_trgm) alike."""
import re

import pytest
from django.contrib.auth.models import AnonymousUser

from findings.selectors.related import file_names, finding_related
from findings.services.tags_and_links import finding_link_create, finding_tags_set
from tests.factories import (
    EvidenceFactory,
    EvidenceResultFactory,
    FindingFactory,
    PullRequestFactory,
    RepositoryFactory,
    VerificationFactory,
)

pytestmark = pytest.mark.django_db

# The test settings read publicly: an anonymous reader sees every public repository.
ANYONE = AnonymousUser()


def text_of(html: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html))


@pytest.fixture
def family():
    repository = RepositoryFactory(slug="acme/loader")
    pulls = [PullRequestFactory(repository=repository, number=number) for number in (10, 20, 30, 40, 50)]

    def finding(pull, title, path="src/unrelated.py", **fields):
        return FindingFactory(pull_request=pull, title=title, path=path, summary="", body="", fix="", **fields)

    me = finding(pulls[0], "Failure tolerance switched off in the cooker", path="src/loader.py")
    finding_tags_set(finding=me, slugs=["silent-failure"], actor=None)
    same_pull = finding(pulls[0], "Same file, same pull request", path="src/loader.py")
    same_file = finding(pulls[1], "Shuffle seed ignored", path="src/loader.py")
    tagged = finding(pulls[2], "Errors are logged and dropped")
    finding_tags_set(finding=tagged, slugs=["silent-failure", "logging"], actor=None)
    similar = finding(pulls[3], "Failure tolerance switched off in the loader")
    # Recorded under the file's old name; verification found the evidence at the current one.
    renamed = finding(pulls[4], "Workers leak file handles", path="src/old_loader.py")
    evidence = EvidenceFactory(finding=renamed, position=0, path="src/old_loader.py")
    result_of = VerificationFactory(finding=renamed, commit=evidence.commit)
    EvidenceResultFactory(verification=result_of, evidence=evidence, path="src/loader.py")
    linked = finding(pulls[0], "The cooker retries hide the same error")
    finding_link_create(source=linked, target=me, kind="duplicate_of", actor=None)
    unrelated = finding(pulls[1], "Docs typo in the README", path="README.md")
    return {name: value for name, value in locals().items() if hasattr(value, "pk") and name != "evidence"}


def test_related_findings_come_linked_first_then_from_other_pull_requests_each_saying_why(family):
    related = finding_related(family["me"], reader=ANYONE)
    reasons = {item.finding.title: item.reasons for item in related}
    assert related[0].finding == family["linked"]
    assert related[0].reasons == ["Linked: duplicated by it"]
    assert reasons["Shuffle seed ignored"] == ["Same file: src/loader.py"]
    assert reasons["Workers leak file handles"] == ["Same file, under another name: src/old_loader.py"]
    assert reasons["Errors are logged and dropped"] == ["Shared tag: silent-failure"]
    [similar] = reasons["Failure tolerance switched off in the loader"]
    assert re.fullmatch(r"Similar title \(\d+% alike\)", similar)
    assert len(related) == 5
    titles = set(reasons)
    assert "Same file, same pull request" not in titles and "Docs typo in the README" not in titles


def test_at_most_five_findings_are_related_but_every_link_shows(family):
    for number in range(8):
        FindingFactory(pull_request=PullRequestFactory(repository=family["me"].pull_request.repository),
                       title=f"Another on the loader {number}", path="src/loader.py")
    assert len(finding_related(family["me"], reader=ANYONE)) == 5
    for number in range(6):
        finding_link_create(source=family["me"], target=FindingFactory(title=f"Linked {number}"), kind="same_cause", actor=None)
    related = finding_related(family["me"], reader=ANYONE)
    assert len(related) == 7 and all(item.link for item in related)


def test_a_file_s_names_follow_the_renames_verification_recorded(family):
    assert file_names({"src/loader.py"}) == {"src/loader.py", "src/old_loader.py"}
    assert file_names({"src/old_loader.py"}) == {"src/loader.py", "src/old_loader.py"}
    assert file_names({"README.md"}) == {"README.md"}


def test_the_finding_page_lists_related_findings_with_their_reasons(client, family):
    text = text_of(client.get(family["me"].get_absolute_url()).content.decode())
    assert "Related findings" in text
    assert f"Duplicated by {family['linked'].reference} The cooker retries hide the same error" in text
    assert f"{family['same_file'].reference} Shuffle seed ignored Open — Same file: src/loader.py" in text
    assert "Shared tag: silent-failure" in text


def test_the_api_lists_the_same_related_findings(client, family, django_assert_max_num_queries):
    with django_assert_max_num_queries(14):
        response = client.get(f"/api/findings/{family['me'].pk}/related/")
    assert response.status_code == 200
    body = response.json()
    assert [item["finding"]["id"] for item in body] == [item.finding.pk for item in finding_related(family["me"], reader=ANYONE)]
    assert body[0]["link"]["label"] == "Duplicated by" and body[0]["reasons"] == ["Linked: duplicated by it"]
    assert body[1]["link"] is None
    detail = client.get(f"/api/findings/{family['me'].pk}/").json()
    assert detail["related_url"].endswith(f"/api/findings/{family['me'].pk}/related/")
