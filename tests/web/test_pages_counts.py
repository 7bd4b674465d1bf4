"""The counts on a pull request's pages and the home page agree, because each reads the PR's stored
state: with one of seven blockers fixed, no sentence, badge or chip counts it as blocking."""
import re

import pytest

from findings.services.resolution import finding_resolve
from tests.factories import reviewed_pull_request

pytestmark = pytest.mark.django_db


def text_of(html: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html))


@pytest.fixture
def data(staff_maintainer):
    """Seven blockers and four cleanups; one blocker and one cleanup marked fixed."""
    data = reviewed_pull_request(blockers=7, cleanups=4)
    for finding in (data.blockers[2], data.cleanups[0]):
        finding_resolve(finding=finding, status="fixed", actor=staff_maintainer, source="site",
                        commit=data.latest_commit, note="Fixed another way.", still_holds_confirmed=True)
    return data


def test_the_overview_counts_the_open_blockers_in_every_sentence(client, data):
    text = text_of(client.get(data.pull_request.get_absolute_url()).content.decode())
    assert "six of seven blockers are still open; one fixed" in text
    assert "Three cleanups can land afterwards" in text
    # It said "Seven blockers have to be fixed …; four cleanups can land afterwards" beside that.
    assert "Six open blockers have to be fixed before it can merge; three open cleanups can land afterwards." in text
    assert "Seven blockers" not in text and "four cleanups" not in text


def test_the_tab_badges_count_what_is_still_open(client, data):
    html = client.get(data.pull_request.get_absolute_url() + "cleanups/").content.decode()
    # They counted closed findings too: 7 and 4.
    assert re.findall(r'<span class="count" title="open">(\d+)</span>', html) == ["6", "3"]


def test_the_blockers_page_does_not_count_a_fixed_blocker_among_those_that_stop_the_merge(client, data):
    text = text_of(client.get(data.pull_request.get_absolute_url() + "blockers/").content.decode())
    # It said "The seven below stop this from merging" though one of them is fixed.
    assert "Six of the seven below stop this from merging:" in text and "; one is resolved." in text
    assert "the six things that have to change first" in text
    assert "Three further findings can land afterwards" in text


def test_the_home_page_chips_count_the_findings_its_columns_count(client, data):
    row = text_of(client.get("/").content.decode().split('class="pull-requests"', 1)[1].split("</table>", 1)[0])
    # The columns count open findings; the chips counted every finding (11 still present).
    assert re.search(rf"6 3 {data.latest_commit.short_sha} rebased 9 still present", row)
