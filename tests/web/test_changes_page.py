"""The "What does #N change?" page beside the reviewer's prose: git's numbers for every file (equal
to `git diff --numstat -M`), a chart by directory with no link inside its picture, which files the
findings touch, and a sentence instead of numbers when the repository cannot be read."""
import html
import re
import shutil

import pytest
from django.utils.html import strip_tags

from reviews.mirrors import repository_mirror_dir
from tests.changes import changed_pull_request

pytestmark = pytest.mark.django_db

ROW = re.compile(r'<tr data-path="([^"]*)" data-added="([^"]*)" data-removed="([^"]*)"(?: data-old-path="([^"]*)")?>')


def overview(client, changed) -> str:
    response = client.get(changed.pull_request.get_absolute_url())
    assert response.status_code == 200
    return response.content.decode()


def test_the_page_lists_every_file_with_the_numbers_git_diff_numstat_prints(client, tmp_path):
    changed = changed_pull_request(tmp_path)
    page = overview(client, changed)
    rows = {html.unescape(path): (added, removed, html.unescape(old) if old else None)
            for path, added, removed, old in ROW.findall(page)}
    assert rows == changed.numstat
    text = " ".join(html.unescape(strip_tags(page)).split())
    added = sum(int(added) for added, _, _ in changed.numstat.values() if added != "-")
    removed = sum(int(removed) for _, removed, _ in changed.numstat.values() if removed != "-")
    assert f"6 files, +{added} −{removed} lines, from {changed.base[:8]} (the base pin) to {changed.head[:8]}" in text
    assert "2 new files, 1 deleted, 1 renamed; the findings touch 2 of them" in text


def test_the_chart_draws_each_directory_and_keeps_links_out_of_the_picture(client, tmp_path):
    changed = changed_pull_request(tmp_path)
    page = overview(client, changed)
    [chart] = re.findall(r'<svg[^>]*class="changes-chart".*?</svg>', page, flags=re.S)
    assert 'role="img"' in chart and "<a " not in chart
    assert "src/cookers/ · 1 finding" in html.unescape(chart)
    # The directories link to the code browser at the head, outside the picture.
    assert f'href="/acme/changes/pull/12/code/{changed.head}/src/cookers/"' in page


def test_without_a_base_pin_the_page_says_it_compares_with_the_fork_from_main(client, tmp_path):
    changed = changed_pull_request(tmp_path, without_base=True)
    page = overview(client, changed)
    assert "where it forks from main" in page
    assert {path for path, *_ in ROW.findall(page)} == set(changed.numstat)


def test_a_mirror_this_host_lost_is_made_again_for_the_page(client, tmp_path):
    changed = changed_pull_request(tmp_path)
    shown = ROW.findall(overview(client, changed))
    shutil.rmtree(repository_mirror_dir(changed.pull_request.repository))
    assert shown and ROW.findall(overview(client, changed)) == shown


def test_an_unreadable_repository_is_said_so_on_the_page(client, tmp_path):
    changed = changed_pull_request(tmp_path)
    shutil.rmtree(repository_mirror_dir(changed.pull_request.repository))
    shutil.rmtree(changed.repo.path)  # nor can this host fetch it again
    page = overview(client, changed)
    assert ROW.findall(page) == []
    assert "could not be read, so what acme/changes#12 changes is not shown" in html.unescape(page)


def test_when_the_fetch_failed_the_page_blames_the_fetch_not_a_missing_commit(client, tmp_path):
    changed = changed_pull_request(tmp_path)
    repository = changed.pull_request.repository
    pushed = changed.repo.checkout("feature").write("src/app.py", "pushed = True\n").commit("pushed again")
    from reviews.models import Commit, PinnedCommit

    PinnedCommit.objects.create(
        pull_request=changed.pull_request, role="head",
        commit=Commit.objects.create(repository=repository, sha=pushed, resolved=True, message="pushed"),
    )
    repository.fetch_error = "fatal: could not read from /srv/mirrors/acme-changes.git"
    repository.save()
    shutil.rmtree(changed.repo.path)  # the fetch for the page fails too
    page = " ".join(html.unescape(strip_tags(overview(client, changed))).split())
    assert "the repository could not be fetched" in page
    assert "no commit" not in page.lower() and "/srv/mirrors" not in page
