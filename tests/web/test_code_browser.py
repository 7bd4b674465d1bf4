"""The code browser through the test client, over a real repository fetched into a mirror: the files
at a pinned commit with what the PR changes first, one file highlighted with its line anchors, and a
clear page (never a 500) for everything it cannot show."""
import html
import shutil
from dataclasses import dataclass
from datetime import timedelta

import pytest
from django.utils import timezone
from django.utils.html import strip_tags

from findings.models import Finding
from reviews.mirrors import repository_fetch, repository_mirror_dir
from reviews.models import Commit, PinnedCommit, PullRequest, Repository
from tests.factories import FindingFactory, UserFactory, make_sha
from tests.gitrepo import GitRepoBuilder

pytestmark = pytest.mark.django_db

PIN = "3961f399" + "ab" * 16
APP = "".join(f"value_{n} = {n}\n" for n in range(1, 21))
HUGE = 5 * 1024 * 1024


@dataclass
class Browsed:
    repo: GitRepoBuilder
    pull_request: PullRequest
    base: str
    reviewed: str

    def url(self, sha: str | None = None, path: str = "") -> str:
        return f"{self.pull_request.get_absolute_url()}code/{sha or self.reviewed}/{path}"


def browsed_pull_request(
    tmp_path, *, slug: str = "acme/app", number: int = 7, fetch: bool = True, huge: bool = False
) -> Browsed:
    """A repository with a base and a reviewed commit (a rename, an edit, a deletion, an addition,
    a binary file, with `huge` a 5 MB one), a PR pinning both, and its mirror fetched."""
    repo = GitRepoBuilder(tmp_path, name=slug.replace("/", "-"))
    base = (
        repo.write("src/app.py", APP)
        .write("docs/guide.md", "# Guide\n" + "Some prose about the loader.\n" * 20)
        .write("old.txt", "to be removed\n")
        .write("logo.png", b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256)))
        .gitlink("vendor/lib", PIN)
        .commit("base")
    )
    (
        repo.rename("docs/guide.md", "docs/manual.md")
        .write("src/app.py", APP.replace("value_7 = 7", "value_7 = 'seven'"))
        .delete("old.txt")
        .write("src/new.py", "NEW = True\n")
    )
    if huge:
        repo.write("data/huge.txt", "x" * (HUGE - 1) + "\n")
    reviewed = repo.commit("Rename the guide, edit the app")
    repository = Repository.objects.create(slug=slug, clone_url=repo.url, web_url=f"https://github.com/{slug}")
    pull_request = PullRequest.objects.create(repository=repository, number=number, title="Edit the app")
    now = timezone.now()
    for offset, (role, sha) in enumerate([("base", base), ("reviewed", reviewed)]):
        commit = Commit.objects.create(repository=repository, sha=sha, resolved=True, message=role)
        pin = PinnedCommit.objects.create(pull_request=pull_request, commit=commit, role=role)
        PinnedCommit.objects.filter(pk=pin.pk).update(pinned_at=now - timedelta(days=2 - offset))
    if fetch:
        repository_fetch(repository=repository)
    return Browsed(repo=repo, pull_request=pull_request, base=base, reviewed=reviewed)


@pytest.fixture
def browsed(tmp_path, settings):
    settings.RECHECK_ALLOW_LOCAL_REPOSITORIES = True
    return browsed_pull_request(tmp_path)


def text(response) -> str:
    """The page as a reader sees its words: entities decoded, whitespace collapsed."""
    return " ".join(html.unescape(strip_tags(response.content.decode())).split())


# -- the files at a commit ---------------------------------------------------------------------


def test_the_tree_lists_the_files_the_pr_changes_first_with_their_status(client, browsed):
    response = client.get(browsed.url())
    assert response.status_code == 200
    page = response.context["page"]
    assert [(row.change.path, row.change.label) for row in page.changed] == [
        ("docs/manual.md", "renamed from docs/guide.md"),
        ("old.txt", "deleted"),
        ("src/app.py", "modified"),
        ("src/new.py", "added"),
    ]
    html = response.content.decode()
    # Changed files come before the list of every file, and link to the file at this commit.
    assert html.index("renamed</span>") < html.index("All files")
    assert f'href="{browsed.url(path="docs/manual.md")}"' in html
    # A deleted file links to where it still is: the base.
    assert f'href="{browsed.url(browsed.base, "old.txt")}"' in html
    assert [row.file.path for row in page.files] == [
        "docs/manual.md", "logo.png", "src/app.py", "src/new.py", "vendor/lib"
    ]
    assert "submodule" in text(response) and PIN[:8] in html


def test_the_tree_takes_an_abbreviated_sha_and_links_in_full(client, browsed):
    response = client.get(browsed.url(browsed.reviewed[:9]))
    assert response.status_code == 200
    assert response.context["code"].sha == browsed.reviewed
    assert f'href="{browsed.url(path="src/app.py")}"' in response.content.decode()


def test_the_base_commit_says_it_is_the_base(client, browsed):
    response = client.get(browsed.url(browsed.base))
    assert response.status_code == 200
    assert "This is the pull request's base commit" in text(response)
    assert "old.txt" in text(response)


def test_a_directory_lists_the_files_under_it(client, browsed):
    response = client.get(browsed.url(path="src/"))
    assert response.status_code == 200
    assert [row.file.path for row in response.context["page"].files] == ["src/app.py", "src/new.py"]
    assert [row.change.path for row in response.context["page"].changed] == ["src/app.py", "src/new.py"]


def test_the_overview_links_each_pin_to_its_code(client, browsed):
    html = client.get(browsed.pull_request.get_absolute_url()).content.decode()
    for sha in (browsed.base, browsed.reviewed):
        assert f'href="{browsed.url(sha)}" class="pin-code">browse code</a>' in html


# -- one file ----------------------------------------------------------------------------------


def test_a_file_is_highlighted_with_an_anchor_on_every_line(client, browsed):
    response = client.get(browsed.url(path="src/app.py"))
    assert response.status_code == 200
    html = response.content.decode()
    for line in (1, 7, 20):
        assert f'<tr id="L{line}"><td class="lineno"><a href="#L{line}" data-line="{line}">{line}</a>' in html
    assert 'id="L21"' not in html
    assert "&#x27;seven&#x27;" in html or "'seven'" in html
    assert "modified in this pull request" in text(response)
    assert "20 lines" in text(response)


def test_a_file_links_to_itself_at_the_other_pins(client, browsed):
    html = client.get(browsed.url(path="src/app.py")).content.decode()
    assert f'href="{browsed.url(browsed.base, "src/app.py")}"' in html


def test_a_binary_file_gets_a_page_that_says_so(client, browsed):
    response = client.get(browsed.url(path="logo.png"))
    assert response.status_code == 200
    assert "is a binary file" in text(response) and "code-lines" not in response.content.decode()


def test_a_5_mb_file_is_not_shown_and_the_page_says_why(client, tmp_path, settings):
    settings.RECHECK_ALLOW_LOCAL_REPOSITORIES = True
    browsed = browsed_pull_request(tmp_path, huge=True)
    response = client.get(browsed.url(path="data/huge.txt"))
    assert response.status_code == 200
    assert settings.RECHECK_MAX_BLOB_BYTES < HUGE
    body = text(response)
    assert "5.0 MB, over the" in body and "RECHECK_MAX_BLOB_BYTES" in body and "code-lines" not in body
    assert response.context["page"].read.blob.data is None  # never read into memory


def test_a_submodule_says_whose_files_it_holds(client, browsed):
    response = client.get(browsed.url(path="vendor/lib"))
    assert response.status_code == 200 and f"is a submodule, pinned at {PIN}" in text(response)


def test_a_path_not_in_the_tree_gets_a_404_that_points_at_the_pins(client, browsed):
    response = client.get(browsed.url(path="src/missing.py"))
    assert response.status_code == 404
    assert "There is no src/missing.py in acme/app at" in text(response)
    assert f'href="{browsed.url(browsed.base)}"' in response.content.decode()
    # A file deleted by the PR is there at the base only.
    assert client.get(browsed.url(browsed.base, "old.txt")).status_code == 200
    assert client.get(browsed.url(path="old.txt")).status_code == 404


@pytest.mark.parametrize(
    "path",
    ["../../etc/passwd", "src/../../../etc/passwd", "%2e%2e/%2e%2e/etc/passwd", "/etc/passwd", "src/%09app.py"],
)
def test_a_path_that_leaves_the_repository_is_refused_with_a_clear_page(client, browsed, path):
    response = client.get(browsed.url(path=path))
    assert response.status_code == 404
    assert "Not a path in the repository" in text(response)
    assert "relative to the repository root" in text(response) or "control characters" in text(response)


def test_a_path_with_a_nul_is_refused_before_the_code_browser_reads_it(client, browsed):
    # No address of Recheck's holds a NUL (recheck.addresses): a 400 page that says so.
    response = client.get(browsed.url(path="src/app.py%00"))
    assert response.status_code == 400
    assert "NUL character (%00)" in text(response)


def test_a_path_with_a_line_break_is_no_page_at_all(client, browsed):
    assert client.get(browsed.url(path="src/%0aapp.py")).status_code == 404


# -- commits and repositories it cannot show ---------------------------------------------------


def test_a_commit_not_pinned_to_the_pr_gets_a_page_listing_the_pins(client, browsed):
    other = browsed.repo.write("extra.py", "x = 1\n").commit("not pinned")
    repository_fetch(repository=browsed.pull_request.repository)
    for sha in (other, "abcdef1234", "main", "12"):
        response = client.get(browsed.url(sha))
        assert response.status_code == 404, sha
        html = response.content.decode()
        assert f'href="{browsed.url(browsed.base)}"' in html and f'href="{browsed.url(browsed.reviewed)}"' in html
    assert "is not pinned to acme/app#7" in text(client.get(browsed.url(other)))
    assert "is not a commit SHA" in text(client.get(browsed.url("main", "src/app.py")))


def test_a_pinned_commit_the_mirror_does_not_have_says_what_to_do(client, browsed, caplog):
    ghost = make_sha("force-pushed away")
    commit = Commit.objects.create(repository=browsed.pull_request.repository, sha=ghost, resolved=True)
    PinnedCommit.objects.create(pull_request=browsed.pull_request, commit=commit, role="head")
    with caplog.at_level("INFO", logger="reviews.mirrors"):
        for url in (browsed.url(ghost), browsed.url(ghost, "src/app.py"), browsed.url(ghost)):
            response = client.get(url)
            assert response.status_code == 404
            assert f"has no commit {ghost}" in text(response) and "Verify now" in text(response)
    fetches = [record for record in caplog.records if record.getMessage().startswith("Mirror fetched")]
    assert len(fetches) == 1, "a commit the forge does not have is not fetched for at every view"


def test_a_repository_this_host_never_fetched_is_fetched_for_the_page(client, tmp_path, settings, caplog):
    """The web host's mirrors are its own cache: the first page fetches what it shows."""
    settings.RECHECK_ALLOW_LOCAL_REPOSITORIES = True
    browsed = browsed_pull_request(tmp_path, slug="acme/unfetched", fetch=False)
    with caplog.at_level("INFO", logger="reviews.mirrors"):
        assert "src/new.py" in text(client.get(browsed.url()))
        for _ in range(2):
            assert "value_7 = " in text(client.get(browsed.url(path="src/app.py")))
    assert [record.getMessage().split(" on ")[0] for record in caplog.records] == [
        "Mirror fetched of acme/unfetched"
    ], "fetched once, then read from this host's cache"
    browsed.pull_request.repository.refresh_from_db()
    assert browsed.pull_request.repository.fetched_at is None, "a page's fetch is not the repository's record"


def test_a_pin_this_hosts_mirror_lacks_is_fetched_and_a_deleted_mirror_made_again(client, browsed):
    pushed = browsed.repo.write("src/pushed.py", "PUSHED = 1\n").commit("pushed")
    commit = Commit.objects.create(repository=browsed.pull_request.repository, sha=pushed, resolved=True)
    PinnedCommit.objects.create(pull_request=browsed.pull_request, commit=commit, role="head")
    assert "PUSHED = 1" in text(client.get(browsed.url(pushed, "src/pushed.py")))
    shutil.rmtree(repository_mirror_dir(browsed.pull_request.repository))
    assert "value_7 = " in text(client.get(browsed.url(path="src/app.py")))


def test_a_repository_that_cannot_be_fetched_says_what_to_do(client, tmp_path, settings):
    settings.RECHECK_ALLOW_LOCAL_REPOSITORIES = True
    browsed = browsed_pull_request(tmp_path, slug="acme/unfetched", fetch=False)
    shutil.rmtree(browsed.repo.path)
    for url in (browsed.url(), browsed.url(path="src/app.py")):
        response = client.get(url)
        assert response.status_code == 404
        body = text(response)
        assert "acme/unfetched has not been fetched yet" in body and "Verify now" in body
        assert str(tmp_path) not in response.content.decode()


def test_a_pr_the_user_may_not_read_is_a_404_or_a_login(client, browsed, settings):
    settings.RECHECK_PUBLIC_READ = False
    response = client.get(browsed.url(path="src/app.py"))
    assert response.status_code == 302 and "/accounts/login/" in response["Location"]
    assert client.get(f"/acme/app/pull/99/code/{browsed.reviewed}/").status_code in (302, 404)
    client.force_login(UserFactory(groups=["Reader"]))
    assert client.get(browsed.url(path="src/app.py")).status_code == 200
    assert client.get(f"/acme/app/pull/99/code/{browsed.reviewed}/").status_code == 404


# -- the selection's links -------------------------------------------------------------------


def test_a_reviewer_gets_the_selection_links_and_the_prs_findings(client, browsed):
    FindingFactory(pull_request=browsed.pull_request, number=1, title="The loader drops a row")
    FindingFactory(pull_request=browsed.pull_request, number=2, title="Seven is a string")
    client.force_login(UserFactory(groups=["Reviewer"]))
    html = client.get(browsed.url(path="src/app.py")).content.decode()
    base = browsed.pull_request.get_absolute_url()
    assert f'data-new-finding-url="{base}findings/new/"' in html and f'data-findings-url="{base}findings/"' in html
    assert f'data-commit="{browsed.reviewed}"' in html and 'data-path="src/app.py"' in html
    assert "New finding from these lines" in html
    assert '<option value="1">1. The loader drops a row</option>' in html
    assert '<option value="2">2. Seven is a string</option>' in html


@pytest.mark.parametrize("groups", [["Reader"], None])
def test_a_reader_gets_the_anchors_but_no_write_links(client, browsed, groups):
    FindingFactory(pull_request=browsed.pull_request, number=1)
    if groups is not None:
        client.force_login(UserFactory(groups=groups))
    html = client.get(browsed.url(path="src/app.py")).content.decode()
    assert 'href="#L7"' in html and "data-code-selection" in html
    assert "New finding from these lines" not in html and "Add as evidence" not in html
    assert "findings/new/" not in html and "data-evidence-finding" not in html


# -- bounded reads -----------------------------------------------------------------------------


@pytest.mark.parametrize("findings", [2, 40])
def test_the_code_pages_read_in_bounded_queries(client, browsed, django_assert_max_num_queries, findings):
    Finding.objects.bulk_create(
        Finding(pull_request=browsed.pull_request, number=n, kind="blocker", title=f"Finding {n}")
        for n in range(1, findings + 1)
    )
    # The PR (with its repository) and its pins; for a file, the findings on its lines (their
    # verified results, their recorded evidence); a reviewer's session, user, permissions and
    # memberships, and the findings for the selection bar.
    with django_assert_max_num_queries(2):
        assert client.get(browsed.url()).status_code == 200
    with django_assert_max_num_queries(4):
        assert client.get(browsed.url(path="src/app.py")).status_code == 200
    client.force_login(UserFactory(groups=["Reviewer"]))
    with django_assert_max_num_queries(10):
        assert client.get(browsed.url(path="src/app.py")).status_code == 200
    with django_assert_max_num_queries(7):
        assert client.get(browsed.url(path="no/such/file")).status_code == 404


def test_the_static_render_has_no_code_links(browsed):
    from presentation.pages import pull_request_page

    assert all(pin.code_url == "" for pin in pull_request_page(browsed.pull_request, static=True).pins)
    assert all(pin.code_url for pin in pull_request_page(browsed.pull_request, current="overview").pins)


def pin_head(browsed: Browsed) -> str:
    """Commit what the test wrote, pin it as the PR's head and fetch it."""
    head = browsed.repo.commit("head")
    commit = Commit.objects.create(repository=browsed.pull_request.repository, sha=head, resolved=True)
    PinnedCommit.objects.create(pull_request=browsed.pull_request, commit=commit, role="head")
    repository_fetch(repository=browsed.pull_request.repository)
    return head


def test_a_symbolic_link_an_empty_file_and_an_endless_one_each_say_what_they_are(client, browsed):
    from web.code_browser import MAX_LINES

    (browsed.repo.path / "current").symlink_to("src/app.py")
    (browsed.repo.path / "outside").symlink_to("../../etc/passwd")
    browsed.repo.write("empty.txt", "").write("blank.txt", "\n" * (MAX_LINES + 1))
    head = pin_head(browsed)
    link = client.get(browsed.url(head, "current"))
    assert link.status_code == 200 and "is a symbolic link to src/app.py" in text(link)
    assert f'href="{browsed.url(head, "src/app.py")}"' in link.content.decode()
    outside = client.get(browsed.url(head, "outside"))
    assert outside.status_code == 200 and "open the file it points to" not in text(outside)
    empty = client.get(browsed.url(head, "empty.txt"))
    assert empty.status_code == 200 and "This file is empty" in text(empty) and "code-lines" not in text(empty)
    blank = client.get(browsed.url(head, "blank.txt"))
    assert blank.status_code == 200 and "more than the code browser shows on one page" in text(blank)
    assert 'id="L1"' not in blank.content.decode()


def test_a_file_name_that_is_not_utf_8_is_listed_and_no_page_breaks(client, browsed):
    (browsed.repo.path / "src").joinpath(b"caf\xe9.py".decode("utf-8", "surrogateescape")).write_text("x = 1\n")
    head = pin_head(browsed)
    response = client.get(browsed.url(head))
    assert response.status_code == 200
    assert f'href="{browsed.url(head, "src/caf%E9.py")}"' in response.content.decode()
    # Django hands a view such a name percent-encoded: it is not found, and the page says so.
    opened = client.get(browsed.url(head, "src/caf%E9.py"))
    assert opened.status_code == 404 and "No such file at this commit" in text(opened)


def test_an_abbreviation_two_pins_share_asks_for_more_of_the_sha(client, browsed):
    repository = browsed.pull_request.repository
    for sha in ("abcdef1" + "0" * 33, "abcdef1" + "1" * 33):
        commit = Commit.objects.create(repository=repository, sha=sha, resolved=True)
        PinnedCommit.objects.create(pull_request=browsed.pull_request, commit=commit, role="rebased")
    response = client.get(browsed.url("abcdef1"))
    assert response.status_code == 404
    assert "abcdef1 is the start of 2 pinned commits; give more of the SHA" in text(response)
    assert client.get(browsed.url("abcdef10")).status_code == 404  # one pin, which the mirror lacks
    assert "has no commit abcdef1000" in text(client.get(browsed.url("abcdef10")))


def test_a_tree_past_one_page_lists_the_directories_to_open_instead_of_the_rest(client, browsed, monkeypatch):
    from web import code_browser as code

    monkeypatch.setattr(code, "MAX_TREE_ROWS", 2)
    page = client.get(browsed.url()).context["page"]
    assert len(page.files) == 2 and page.files_left_out == page.file_count - 2 > 0
    assert len(page.changed) == 2 and page.changes_left_out == 2
    assert [(path, count) for path, _, count in page.directories] == [("docs", 1), ("src", 2), ("vendor", 1)]
    html = client.get(browsed.url()).content.decode()
    assert f'href="{browsed.url(path="src")}"' in html and "open a directory for the rest" in html
    # A directory's own page lists what is under it.
    assert client.get(browsed.url(path="src")).status_code == 200


def test_lines_that_carry_findings_are_marked_in_the_gutter_linking_to_them(client, browsed, settings):
    settings.RECHECK_PUBLIC_READ = True
    from findings.services.verification.run import pull_request_verify

    finding = FindingFactory(pull_request=browsed.pull_request, number=3, kind="blocker", title="Seven is a string")
    finding.evidence.create(position=1, kind="snippet", path="src/app.py", start_line=7, end_line=8,
                            commit=Commit.objects.get(sha=browsed.reviewed), text="value_7 = 'seven'\nvalue_8 = 8")
    page = client.get(browsed.url(path="src/app.py")).content.decode()
    row = page.split('<tr id="L7"', 1)[1].split("</tr>", 1)[0]
    assert 'class="has-finding"' in row and f'href="{finding.get_absolute_url()}"' in row
    assert 'aria-label="Blocker 3: Seven is a string, lines 7–8"' in row
    assert 'class="has-finding"' in page.split('<tr id="L8"', 1)[1].split("</tr>", 1)[0]
    assert "has-finding" not in page.split('<tr id="L9"', 1)[1].split("</tr>", 1)[0]
    assert "1 finding on lines of this file" in page
    # Evidence recorded at the base shows at the reviewed commit once a verification found it there.
    other = FindingFactory(pull_request=browsed.pull_request, number=4, kind="cleanup", title="Nine and ten")
    other.evidence.create(position=1, kind="snippet", path="src/app.py", start_line=9, end_line=10,
                          commit=Commit.objects.get(sha=browsed.base), text="value_9 = 9\nvalue_10 = 10")
    assert "has-finding" not in client.get(browsed.url(path="src/app.py")).content.decode().split('<tr id="L9"', 1)[1][:40]
    pull_request_verify(pull_request=browsed.pull_request, commit=Commit.objects.get(sha=browsed.reviewed))
    page = client.get(browsed.url(path="src/app.py")).content.decode()
    row = page.split('<tr id="L9"', 1)[1].split("</tr>", 1)[0]
    assert 'class="has-finding"' in row and 'aria-label="Cleanup 4: Nine and ten, lines 9–10"' in row
    assert 'aria-label="Blocker 3: Seven is a string, lines 7–8"' in page  # verified there too: where it is
    # A file no finding touches has no gutter column at all.
    assert "line-marks" not in client.get(browsed.url(path="src/new.py")).content.decode()


def test_the_diff_between_two_pins_shows_each_file_s_lines_with_the_findings_placed_on_them(
    client, browsed, settings, django_assert_max_num_queries
):
    settings.RECHECK_PUBLIC_READ = True
    reviewed = Commit.objects.get(sha=browsed.reviewed)
    finding = FindingFactory(pull_request=browsed.pull_request, number=5, kind="blocker", title="Seven is a string")
    finding.evidence.create(position=1, kind="snippet", path="src/app.py", start_line=7, end_line=7,
                            commit=reviewed, text="value_7 = 'seven'")
    tree = client.get(browsed.url()).content.decode()
    diff_link = f"{browsed.pull_request.get_absolute_url()}diff/?from={browsed.base}&amp;to={browsed.reviewed}"
    assert diff_link in tree
    # Its key (one query), the PR, its pins, two for the findings on the files at either end, and
    # the generation read again before it is kept; read again, its key alone.
    with django_assert_max_num_queries(8):
        response = client.get(html.unescape(diff_link))
    with django_assert_max_num_queries(1):
        assert client.get(html.unescape(diff_link)).content == response.content
    page = response.content.decode()
    assert response.status_code == 200
    words = text(response)
    assert "4 files changed, +2 −2; findings on 1 of them." in words
    assert "docs/manual.md renamed from docs/guide.md" in words and "old.txt deleted" in words
    app = page.split('<code>src/app.py</code> <span class="badge', 1)[1]
    removed = app.split('<tr class="diff-removed">', 1)[1].split("</tr>", 1)[0]
    assert "value_7 = 7" in removed and '<td class="lineno diff-old">7</td>' in removed
    added = app.split('<tr class="diff-added has-finding">', 1)[1].split("</tr>", 1)[0]
    assert "value_7 = &#x27;seven&#x27;" in added and '<td class="lineno diff-new">7</td>' in added
    assert f'href="{finding.get_absolute_url()}"' in added and "Blocker 5: Seven is a string, line 7" in added
    # Either way round, and a pin's own select; a commit that is not pinned is a clear error.
    back = text(client.get(f"{browsed.pull_request.get_absolute_url()}diff/?from={browsed.reviewed}&to={browsed.base}"))
    assert "4 files changed, +2 −2" in back
    same = text(client.get(f"{browsed.pull_request.get_absolute_url()}diff/?from={browsed.base}&to={browsed.base}"))
    assert "same commit twice" in same
    unknown = client.get(f"{browsed.pull_request.get_absolute_url()}diff/?from={make_sha('nope')}")
    assert unknown.status_code == 404 and "Not a commit of this pull request" in text(unknown)
