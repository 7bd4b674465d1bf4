"""`GET /api/repos/{owner}/{name}/pulls/{number}/changes`: every file the PR changes with git's own
counts (equal to `git diff --numstat -M` between the same commits), the base as pinned or else the
merge-base with the default branch, which files the findings touch, and a clear 409 when the
repository cannot be read."""
import shutil

import pytest

from reviews.mirrors import repository_mirror_dir
from tests.changes import changed_pull_request

pytestmark = pytest.mark.django_db

CHANGES = "/api/repos/acme/changes/pulls/12/changes"


def as_numstat(files: list[dict]) -> dict:
    """The answer's files in the shape `git diff --numstat` prints them ("-" for binary)."""
    return {
        item["path"]: ("-" if item["binary"] else str(item["added"]), "-" if item["binary"] else str(item["removed"]),
                       item["old_path"])
        for item in files
    }


def test_the_numbers_equal_git_diff_numstat_between_the_base_pin_and_the_head(anonymous_reader, tmp_path):
    changed = changed_pull_request(tmp_path)
    response = anonymous_reader.get(CHANGES)
    assert response.status_code == 200, response.content
    body = response.json()
    assert (body["base"], body["head"], body["base_source"]) == (changed.base, changed.head, "base pin")
    assert as_numstat(body["files"]) == changed.numstat
    assert len(body["files"]) == 6
    assert body["added"] == sum(int(added) for added, _, _ in changed.numstat.values() if added != "-")
    by_path = {item["path"]: item for item in body["files"]}
    assert (by_path["docs/manual/guide.md"]["status"], by_path["docs/manual/guide.md"]["old_path"]) == (
        "renamed", "docs/guide.md"
    )
    assert (by_path["logo.png"]["added"], by_path["logo.png"]["binary"]) == (None, True)
    assert by_path["old.txt"]["status"] == "deleted"
    assert by_path["src/cookers/one.py"]["status"] == "added"
    # The finding's evidence is a glob over the new cookers: it touches both, and nothing else.
    assert {path for path, item in by_path.items() if item["findings"]} == {"src/cookers/one.py", "src/cookers/two.py"}
    assert [(row["directory"], row["files"], row["added"], row["removed"]) for row in body["directories"]] == [
        ("src/cookers", 2, 3, 0), ("src", 1, 1, 2), ("", 2, 0, 2), ("docs/manual", 1, 1, 0),
    ]


def test_without_a_base_pin_the_base_is_where_the_head_forks_from_the_default_branch(anonymous_reader, tmp_path):
    changed = changed_pull_request(tmp_path, without_base=True)
    body = anonymous_reader.get(CHANGES).json()
    assert (body["base"], body["base_source"]) == (changed.base, "merge-base")
    assert as_numstat(body["files"]) == changed.numstat


def test_an_unreadable_repository_is_a_409_that_says_so(anonymous_reader, tmp_path):
    changed = changed_pull_request(tmp_path)
    shutil.rmtree(repository_mirror_dir(changed.pull_request.repository))
    shutil.rmtree(changed.repo.path)  # nor can this host fetch it again
    response = anonymous_reader.get(CHANGES)
    assert response.status_code == 409
    assert "could not be read" in response.json()["detail"]


def test_a_private_repository_answers_as_missing(anonymous_reader, tmp_path):
    changed = changed_pull_request(tmp_path)
    repository = changed.pull_request.repository
    repository.visibility = repository.Visibility.PRIVATE
    repository.save()
    assert anonymous_reader.get(CHANGES).status_code == 404
