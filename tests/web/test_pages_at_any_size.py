"""A pull request's pages read in as many queries at 10,000 findings as at 9, built and kept, and
its overview stays under a fixed size: counts come from the stored state, lists in bounded
sections, and the verification picture reads only the findings it names."""
import pytest
from django.core.cache import cache
from django.db import connection
from django.test.utils import CaptureQueriesContext

from tests.factories import large_reviewed_pull_request

pytestmark = pytest.mark.django_db

PAGES = {"overview": "", "blockers": "blockers/", "cleanups": "cleanups/", "finding": "findings/1/"}
OVERVIEW_MAX_BYTES = 100_000


def queries(client, url: str) -> tuple[int, int, int]:
    """Queries of a page built (its PR's state already stored) and of the same page kept; its size."""
    client.get(url)  # the first read after the import stores the state
    cache.clear()
    with CaptureQueriesContext(connection) as built:
        response = client.get(url)
    assert response.status_code == 200
    with CaptureQueriesContext(connection) as kept:
        assert client.get(url).content == response.content
    return len(built), len(kept), len(response.content)


def test_each_page_reads_as_much_at_ten_thousand_findings_as_at_nine(client):
    small = large_reviewed_pull_request(findings=9, slug="acme/small")
    large = large_reviewed_pull_request(findings=10_000, slug="acme/large")
    for name, page in PAGES.items():
        small_built, small_kept, small_size = queries(client, small.get_absolute_url() + page)
        large_built, large_kept, large_size = queries(client, large.get_absolute_url() + page)
        assert (large_built, large_kept) == (small_built, small_kept), name
        assert small_kept <= 3, name  # the PR (or finding), a run under way, what else it shows
        if name == "overview":
            assert large_size <= OVERVIEW_MAX_BYTES, large_size


REPOSITORY_PAGES = {
    "repository": "/{slug}/",
    "file": "/{slug}/files/pkg/shared.py",
    "follow-ups": "/{slug}/follow-ups/",
    "decisions": "/{slug}/decisions/",
    "tag": "/tags/{tag}/",
    "threads": "/{slug}/pull/1/threads/",
}
REPOSITORY_PAGE_MAX_BYTES = 200_000


def at_scale(findings: int, slug: str):
    """A PR of `findings` findings all on one file, all tagged, each looking fixed (so all need a
    decision), each with a follow-up, and three review threads."""
    from findings.models import Finding, FollowUp, Tag, Verification
    from forge.threads.models import ReviewThread
    from tests.factories import store_state

    pull_request = large_reviewed_pull_request(findings=findings, slug=slug)
    rows = Finding.objects.filter(pull_request=pull_request)
    rows.update(path="pkg/shared.py")
    Verification.objects.filter(finding__pull_request=pull_request).update(verdict="likely_fixed")
    tag = Tag.objects.create(slug=f"tag-{slug.replace('/', '-')}")
    Finding.tags.through.objects.bulk_create(Finding.tags.through(finding_id=pk, tag_id=tag.pk)
                                             for pk in rows.values_list("pk", flat=True))
    FollowUp.objects.bulk_create(FollowUp(repository=pull_request.repository, pull_request=pull_request, finding=row,
                                          origin=FollowUp.Origin.OPEN_CLEANUP) for row in rows)
    for root in (1, 2, 3):
        ReviewThread.objects.create(pull_request=pull_request, root_comment_id=root, path="pkg/shared.py",
                                    original_line=10)
    store_state(pull_request)
    return {"slug": slug, "tag": tag.slug}


def test_the_repositorys_pages_read_as_much_at_ten_thousand_findings_as_at_nine(client):
    """The repository's page, a file's, its follow-ups, its needs-a-decision queue, a tag's and a
    PR's review threads: built and kept in as many queries at 10,000 findings as at 9, and each
    under a fixed size (lists in pages or their first rows, with the count of them all)."""
    small, large = at_scale(9, "acme/small"), at_scale(10_000, "acme/large")
    for name, page in REPOSITORY_PAGES.items():
        small_built, small_kept, _ = queries(client, page.format(**small))
        large_built, large_kept, large_size = queries(client, page.format(**large))
        assert (large_built, large_kept) == (small_built, small_kept), name
        assert small_kept <= 4, name  # the key
        assert large_size <= REPOSITORY_PAGE_MAX_BYTES, (name, large_size)
