"""Every page reads in a fixed number of queries, whether a PR has three findings or thirty."""
import pytest

from tests.factories import reviewed_pull_request

pytestmark = pytest.mark.django_db

# Anonymous reader / logged-in staff (the session, the user and their permissions add a few).
# The three pages of a PR also read whether reporting to GitHub failed (one query); the overview
# (and the zip, which renders it) draws every verification of the PR: two more.
BOUNDS = {
    # Two of them are the light list of every finding (titles, statuses, verdicts) that counts
    # and the overview read; the findings shown in full are one page of their list.
    "overview": 12,
    "blockers": 12,
    "cleanups": 12,
    "finding": 20,  # with its tags, links and related findings (and up to 3 more rename steps), a
    # count of the findings before it, for the page of its list it links back to, and its review threads
    "index": 6,  # and every PR's version, which keys the kept page
    "search": 10,  # and the texts and evidence that say why each result matched
    "run": 2,
    "zip": 12,
}
# The session, the user, their permissions (own and groups') and their memberships' roles, and
# what the decision buttons ask.
STAFF_EXTRA = 5


def urls(pull_request) -> dict[str, str]:
    base = pull_request.get_absolute_url()
    return {
        "overview": base,
        "blockers": base + "blockers/",
        "cleanups": base + "cleanups/",
        "finding": base + "findings/1/",
        "index": "/",
        "search": "/?q=the&verdict=present&kind=blocker",
        "run": base + "runs/latest.json",
        "zip": base + "companion.zip",
    }


@pytest.mark.parametrize("blockers", [3, 30])
@pytest.mark.parametrize("name", list(BOUNDS))
def test_a_page_reads_in_bounded_queries_however_many_findings(client, django_assert_max_num_queries, name, blockers):
    data = reviewed_pull_request(blockers=blockers, cleanups=blockers // 3)
    url = urls(data.pull_request)[name]
    with django_assert_max_num_queries(BOUNDS[name]):
        assert client.get(url).status_code == 200


@pytest.mark.parametrize("blockers", [3, 30])
def test_the_pages_stay_bounded_for_a_logged_in_maintainer(
    client, django_assert_max_num_queries, staff_maintainer, blockers
):
    data = reviewed_pull_request(blockers=blockers, cleanups=blockers // 3)
    client.force_login(staff_maintainer)
    for name, url in urls(data.pull_request).items():
        with django_assert_max_num_queries(BOUNDS[name] + STAFF_EXTRA):
            assert client.get(url).status_code == 200
