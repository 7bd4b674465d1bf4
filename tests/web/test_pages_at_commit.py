"""The three companion pages at any pinned commit (`?commit=`): verdicts as they stood there, the
links between the pages staying there, a switcher of the PR's pins, and a clear 404 listing the
pins for a commit that is not one of them. Over a real repository, verified at both pins."""
import pytest

from findings.services.verification.run import pull_request_verify
from reviews.models import Commit
from tests.factories import FindingFactory, make_sha
from tests.web.test_code_browser import browsed_pull_request, text

pytestmark = pytest.mark.django_db


@pytest.fixture
def verified(tmp_path, settings):
    settings.RECHECK_ALLOW_LOCAL_REPOSITORIES = settings.RECHECK_PUBLIC_READ = True
    browsed = browsed_pull_request(tmp_path)
    finding = FindingFactory(pull_request=browsed.pull_request, number=1, kind="blocker", title="Seven is a string")
    # Recorded at the reviewed commit: it holds there, and is not there yet at the base.
    finding.evidence.create(position=1, kind="snippet", path="src/app.py", start_line=7, end_line=7,
                            commit=Commit.objects.get(sha=browsed.reviewed), text="value_7 = 'seven'")
    for sha in (browsed.base, browsed.reviewed):
        pull_request_verify(pull_request=browsed.pull_request, commit=Commit.objects.get(sha=sha))
    return browsed


def test_the_pages_at_an_earlier_pin_show_its_verdicts_and_keep_to_it(client, verified):
    blockers = f"{verified.pull_request.get_absolute_url()}blockers/"
    latest = client.get(blockers)
    assert "Still present" in text(latest) and "These pages as they stood at" not in text(latest)
    switcher = latest.content.decode().split('class="pin-switcher"', 1)[1].split("</form>", 1)[0]
    assert f'value="{verified.base}"' in switcher and f'value="{verified.reviewed}"' in switcher
    at_base = client.get(blockers, {"commit": verified.base[:10]})
    words = text(at_base)
    assert at_base.status_code == 200
    assert f"These pages as they stood at {verified.base[:8]} (base)" in words
    after = words.split("These pages as they stood at", 1)[1]
    assert "Still present" not in after and "Likely fixed" in after
    page = at_base.content.decode()
    nav = page.split('class="companion-nav"', 1)[1].split("</nav>", 1)[0]
    assert f'href="{verified.pull_request.get_absolute_url()}?commit={verified.base}"' in nav
    assert f"cleanups/?commit={verified.base}" in nav
    # The stored state, which the gate and every other reader read, is still the latest pin's.
    assert "Still present" in text(client.get(blockers))


def test_a_commit_that_is_not_pinned_is_a_clear_404_listing_the_pins(client, verified):
    overview = verified.pull_request.get_absolute_url()
    for commit in (make_sha("nope"), "zz", "3"):
        response = client.get(overview, {"commit": commit})
        assert response.status_code == 404
        words = text(response)
        assert "is not a commit pinned to acme/app#7" in words and "Choose one" in words
        assert f'href="{overview}?commit={verified.base}"' in response.content.decode()


def test_the_pages_at_a_pin_read_in_a_number_of_queries_that_does_not_grow_with_the_findings(client, verified):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    blockers = f"{verified.pull_request.get_absolute_url()}blockers/"

    def queries() -> int:
        with CaptureQueriesContext(connection) as captured:
            assert client.get(blockers, {"commit": verified.base}).status_code == 200
        return len(captured)

    few = queries()
    for number in range(2, 12):
        FindingFactory(pull_request=verified.pull_request, number=number, kind="cleanup", title=f"Cleanup {number}")
    assert queries() == few
