"""The finding editor on the site: creating from a code selection, editing, checking one evidence
item with the engine at a pinned commit, the Markdown preview, and who may do any of it."""
import pytest
from django.test import Client
from django.urls import reverse

from access.models import AuditEntry
from findings.models import Evidence, Finding, FindingEvent
from reviews.mirrors import repository_fetch
from reviews.models import PinnedCommit
from tests.factories import (
    CommitFactory,
    EvidenceFactory,
    FindingFactory,
    PinnedCommitFactory,
    PullRequestFactory,
    RepositoryFactory,
    UserFactory,
)
from tests.gitrepo import GitRepoBuilder

pytestmark = pytest.mark.django_db

PIN = "3961f399" + "0" * 32

LOADER = "".join(f"line_{n} = {n}\n" for n in range(1, 7)) + "tolerance = 0\nwhile tolerance == 0:\n    pass\n"


@pytest.fixture
def review(tmp_path):
    """A PR on a real repository, fetched: src/loader.py has `tolerance = 0` on line 7 at the
    reviewed commit; a later commit changes line 8."""
    repo = GitRepoBuilder(tmp_path)
    reviewed = repo.write("src/loader.py", LOADER).write("src/other.py", "tolerance = 0  # here too\n").write(
        "data.txt", "x" * 5000 + "\n").gitlink("vendor/lib", PIN).commit("add")
    later = repo.write("src/loader.py", LOADER.replace("while tolerance == 0", "while tolerance <= 0")).commit("fix")
    repository = RepositoryFactory(slug="acme/rl", clone_url=repo.url)
    repository_fetch(repository=repository)
    pull_request = PullRequestFactory(repository=repository, number=7)
    for sha, role in ((reviewed, "reviewed"), (later, "rebased")):
        PinnedCommitFactory(pull_request=pull_request, role=role,
                            commit=CommitFactory(repository=repository, sha=sha))
    pull_request.reviewed, pull_request.later = reviewed, later
    return pull_request


def login(username: str, *groups: str) -> Client:
    client = Client(enforce_csrf_checks=False)
    client.force_login(UserFactory(username=username, groups=list(groups)))
    return client


def url(name: str, pull_request, **kwargs) -> str:
    return reverse(f"findings:{name}", kwargs={"owner": "acme", "name": "rl", "number": pull_request.number, **kwargs})


def new_finding_post(pull_request, **changes) -> dict:
    return {
        "number": "1", "kind": "blocker", "caught_by": "none", "title": "Tolerance 0 never stops",
        "summary": "", "body": "It **loops**.", "fix": "", "review_comment_url": "",
        "location_path": "src/loader.py", "location_line": "7",
        "evidence-0-kind": "snippet", "evidence-0-commit": pull_request.reviewed, "evidence-0-path": "src/loader.py",
        "evidence-0-start_line": "7", "evidence-0-end_line": "8", "evidence-0-text": "", "evidence-0-order": "1",
        **changes,
    }


def test_a_reviewer_creates_a_finding_from_selected_lines_with_the_text_captured_at_that_commit(review):
    reviewer = login("rae", "Reviewer")
    page = reviewer.get(url("finding_new", review), {"commit": review.reviewed, "path": "src/loader.py", "lines": "7-8"})
    assert page.status_code == 200
    html = page.content.decode()
    assert "tolerance = 0\nwhile tolerance == 0:" in html  # read from the mirror at that commit
    assert 'name="location_path" value="src/loader.py"' in html and 'name="location_line" value="7"' in html

    text = page.context["rows"][0]["values"]["text"]
    response = reviewer.post(url("finding_new", review), new_finding_post(review, **{"evidence-0-text": text}))
    assert response.status_code == 302
    finding = Finding.objects.get()
    assert response["Location"] == finding.get_absolute_url()
    evidence = finding.evidence.get()
    assert (evidence.path, evidence.start_line, evidence.end_line) == ("src/loader.py", 7, 8)
    assert evidence.text == "tolerance = 0\nwhile tolerance == 0:" and evidence.commit.sha == review.reviewed
    assert FindingEvent.objects.get().actor.username == "rae"
    assert AuditEntry.objects.get(action="finding.create").source == "site"
    assert "Tolerance 0 never stops" in reviewer.get(url("blockers", review)).content.decode()


def test_evidence_without_a_chosen_commit_is_recorded_at_the_reviewed_commit(review):
    reviewer = login("rae", "Reviewer")
    reviewer.post(url("finding_new", review), new_finding_post(review, **{"evidence-0-commit": ""}))
    assert Evidence.objects.get().commit.sha == review.reviewed


def test_lines_that_cannot_be_read_are_said_and_the_item_still_offered(review):
    reviewer = login("rae", "Reviewer")
    page = reviewer.get(url("finding_new", review), {"commit": review.reviewed, "path": "src/loader.py", "lines": "70-80"})
    assert page.status_code == 200
    assert "could not be read" in page.content.decode() and "has 9 lines" in page.content.decode()


def test_a_selection_path_that_leaves_the_repository_is_refused_and_nothing_is_read(review):
    reviewer = login("rae", "Reviewer")
    page = reviewer.get(url("finding_new", review), {"commit": review.reviewed, "path": "../../etc/passwd", "lines": "1"})
    assert page.status_code == 200 and "could not be read" in page.content.decode()
    assert page.context["rows"][0]["values"]["text"] == ""
    saved = reviewer.post(url("finding_new", review), new_finding_post(review, **{"evidence-0-path": "../../etc/passwd"}))
    assert saved.status_code == 400 and "evidence[0].path" in saved.context["errors"]
    assert not Finding.objects.exists()


def test_bad_input_is_shown_beside_its_field_and_writes_nothing(review):
    reviewer = login("rae", "Reviewer")
    response = reviewer.post(url("finding_new", review), new_finding_post(
        review, title="", **{"evidence-1-kind": "pattern", "evidence-1-path": "src/*.py", "evidence-1-regex": "(",
                            "evidence-1-expect": "present", "evidence-1-order": "2"}))
    assert response.status_code == 400
    errors = response.context["errors"]
    assert "title" in errors and "not a valid regular expression" in errors["evidence[1].regex"]
    assert "Nothing was saved" in response.content.decode()
    assert not Finding.objects.exists() and not FindingEvent.objects.exists()


def test_an_edit_reorders_and_removes_evidence_and_renumbering_onto_a_taken_number_is_refused(review):
    reviewer = login("rae", "Reviewer")
    reviewer.post(url("finding_new", review), new_finding_post(review, **{
        "evidence-1-kind": "note", "evidence-1-text": "Asked on the review.", "evidence-1-order": "2",
        "evidence-2-kind": "path", "evidence-2-path": "src/other.py", "evidence-2-expect": "exists",
        "evidence-2-order": "3"}))
    FindingFactory(pull_request=review, number=2, title="Leaks a handle")
    edit = url("finding_edit", review, finding_number=1)
    form = reviewer.get(edit)
    assert form.status_code == 200 and [row["values"]["kind"] for row in form.context["rows"]] == ["snippet", "note", "path"]
    post = new_finding_post(review, **{
        "evidence-0-order": "3", "evidence-1-kind": "note", "evidence-1-text": "Asked on the review.",
        "evidence-1-order": "1", "evidence-2-kind": "path", "evidence-2-path": "src/other.py",
        "evidence-2-expect": "exists", "evidence-2-order": "2", "evidence-2-remove": "1"})
    assert reviewer.post(edit, post).status_code == 302
    finding = Finding.objects.get(number=1)
    assert list(finding.evidence.values_list("kind", flat=True)) == ["note", "snippet"]
    refused = reviewer.post(edit, {**post, "number": "2"})
    assert refused.status_code == 400 and "Leaks a handle" in refused.context["errors"]["number"]
    assert Finding.objects.get(pk=finding.pk).number == 1


def test_a_reader_sees_no_buttons_and_a_forged_post_gets_403_and_writes_nothing(review):
    reader = login("rita", "Reader")
    blockers = reader.get(url("blockers", review)).content.decode()
    assert url("finding_new", review) not in blockers
    FindingFactory(pull_request=review, number=1)
    finding_page = reader.get(url("finding", review, finding_number=1)).content.decode()
    assert url("finding_edit", review, finding_number=1) not in finding_page
    assert reader.get(url("finding_new", review)).status_code == 403
    assert reader.post(url("finding_new", review), new_finding_post(review, number="3")).status_code == 403
    assert reader.post(url("finding_edit", review, finding_number=1), new_finding_post(review)).status_code == 403
    assert reader.post(url("evidence_check", review), {"kind": "path", "path": "a", "expect": "exists"}).status_code == 403
    assert Finding.objects.count() == 1 and not Evidence.objects.exists()
    assert AuditEntry.objects.filter(outcome="refused", action="finding.create").exists()


def test_the_reviewers_pages_link_to_the_editor(review):
    reviewer = login("rae", "Reviewer")
    FindingFactory(pull_request=review, number=1)
    assert url("finding_new", review) in reviewer.get(url("blockers", review)).content.decode()
    assert url("finding_edit", review, finding_number=1) in reviewer.get(url("finding", review, finding_number=1)).content.decode()


def test_a_pr_the_user_may_not_read_is_a_404(review, settings):
    settings.RECHECK_PUBLIC_READ = False
    assert Client().get(url("finding_new", review)).status_code == 302  # to the login page
    assert login("rae", "Reviewer").get(url("finding_new", review).replace("/rl/", "/nope/")).status_code == 404
    assert login("rae", "Reviewer").get(url("finding_edit", review, finding_number=99)).status_code == 404


def test_csrf_is_enforced_on_every_write(review):
    client = Client(enforce_csrf_checks=True)
    client.force_login(UserFactory(username="rae", groups=["Reviewer"]))
    assert client.post(url("finding_new", review), new_finding_post(review)).status_code == 403
    assert client.post(url("evidence_check", review), {"kind": "note", "text": "x"}).status_code == 403
    assert client.post(reverse("findings:markdown_preview"), {"text": "x"}).status_code == 403
    assert not Finding.objects.exists()


def test_the_markdown_preview_neutralises_script(review):
    reviewer = login("rae", "Reviewer")
    html = reviewer.post(reverse("findings:markdown_preview"), {
        "text": '**bold** <script>alert(1)</script> <img src=x onerror="alert(2)"> [x](javascript:alert(3))'
    }).json()["html"]
    assert "<strong>bold</strong>" in html
    # Shown as text, never as markup: no script, no image with a handler, no javascript: link.
    assert "<script" not in html and "<img" not in html and 'href="javascript' not in html
    assert "&lt;script&gt;" in html


def test_the_markdown_preview_is_size_limited_and_for_writers_only(review, settings):
    settings.RECHECK_MARKDOWN_PREVIEW_BYTES = 100
    reviewer = login("rae", "Reviewer")
    assert reviewer.post(reverse("findings:markdown_preview"), {"text": "x" * 101}).status_code == 413
    assert login("rita", "Reader").post(reverse("findings:markdown_preview"), {"text": "x"}).status_code == 403
    assert Client().post(reverse("findings:markdown_preview"), {"text": "x"}).status_code == 403


def check(client, pull_request, at, **fields):
    return client.post(url("evidence_check", pull_request), {"at": at, **fields})


def test_an_invalid_regex_is_refused_with_the_engines_message(review):
    from engine.verification import compile_pattern
    from core.errors import InvalidPattern

    with pytest.raises(InvalidPattern) as engine:
        compile_pattern("(unclosed")
    answer = check(login("rae", "Reviewer"), review, review.reviewed, kind="pattern", path="src/*.py",
                   regex="(unclosed", expect="present")
    assert answer.status_code == 400
    message = answer.json()["errors"]["regex"]
    assert str(engine.value)[1:] in message  # the engine's words, as a sentence


def test_try_it_lists_the_matching_files_and_lines_and_the_verdict_the_verifier_would_store(review):
    answer = check(login("rae", "Reviewer"), review, review.reviewed, kind="pattern", path="src/**/*.py",
                   regex=r"^tolerance = 0", expect="present").json()
    assert answer["ran"] and answer["state"] == "holds" and answer["verdict"] == "present"
    assert answer["verdict_label"] == "Still present"
    assert [(m["path"], m["line"], m["text"]) for m in answer["matches"]] == [
        ("src/loader.py", 7, "tolerance = 0"), ("src/other.py", 1, "tolerance = 0  # here too"),
    ]


def test_a_snippet_typed_as_path_and_lines_is_read_at_its_commit_and_checked_at_another(review):
    answer = check(login("rae", "Reviewer"), review, review.later, kind="snippet", commit=review.reviewed,
                   path="src/loader.py", start_line="7", end_line="8").json()
    assert answer["text"] == "tolerance = 0\nwhile tolerance == 0:"
    assert answer["state"] == "gone" and answer["verdict"] == "likely_fixed"


def test_a_path_and_a_gitlink_are_checked_live(review, tmp_path):
    client = login("rae", "Reviewer")
    exists = check(client, review, review.reviewed, kind="path", path="src/other.py", expect="exists").json()
    assert exists["state"] == "holds"
    missing = check(client, review, review.reviewed, kind="path", path="src/gone.py", expect="exists").json()
    assert missing["state"] == "gone"
    gitlink = check(client, review, review.reviewed, kind="gitlink", path="vendor/lib", sha=PIN[:12]).json()
    assert gitlink["state"] == "holds" and gitlink["pin"] == PIN  # the pin read from the tree
    moved = check(client, review, review.reviewed, kind="gitlink", path="vendor/lib", sha="a" * 40).json()
    assert moved["state"] == "gone" and moved["pin"] == PIN
    not_one = check(client, review, review.reviewed, kind="gitlink", path="src/loader.py", sha="a" * 40).json()
    assert not_one["state"] == "gone" and not_one["pin"] == "" and "no longer a submodule" in not_one["detail"]
    note = check(client, review, review.reviewed, kind="note", text="Asked.").json()
    assert note["state"] == "unchecked" and note["verdict"] == "unverifiable"


def test_a_check_that_cannot_run_says_why_and_never_fixed(review):
    client = login("rae", "Reviewer")
    unknown = check(client, review, "0" * 40, kind="path", path="src/other.py", expect="exists").json()
    assert not unknown["ran"] and unknown["verdict"] == "error" and "0000000" in unknown["detail"]
    review.repository.slug = "acme/never-fetched"
    review.repository.save()
    no_mirror = client.post(
        reverse("findings:evidence_check", kwargs={"owner": "acme", "name": "never-fetched", "number": 7}),
        {"at": review.reviewed, "kind": "path", "path": "src/other.py", "expect": "exists"},
    ).json()
    assert not no_mirror["ran"] and "has not been fetched yet" in no_mirror["detail"]
    assert no_mirror["verdict_label"] == "Check failed"


def test_evidence_new_adds_a_prefilled_item_to_the_findings_editor(review):
    reviewer = login("rae", "Reviewer")
    finding = FindingFactory(pull_request=review, number=3)
    EvidenceFactory(finding=finding, position=0, kind="note", commit=None, path="", start_line=None, end_line=None,
                    text="First.")
    page = reviewer.get(url("evidence_new", review, finding_number=3),
                        {"kind": "snippet", "commit": review.reviewed, "path": "src/other.py", "lines": "1"})
    rows = page.context["rows"]
    assert [row["values"]["kind"] for row in rows] == ["note", "snippet"]
    assert rows[1]["values"]["text"] == "tolerance = 0  # here too"
    assert f'action="{url("finding_edit", review, finding_number=3)}"' in page.content.decode()


def test_the_editor_answers_in_a_bounded_number_of_queries(review, django_assert_max_num_queries):
    reviewer = login("rae", "Reviewer")
    finding = FindingFactory(pull_request=review, number=1)
    commit = review.pins.get(role=PinnedCommit.Role.REVIEWED).commit
    for position in range(30):
        EvidenceFactory(finding=finding, position=position, commit=commit)
    reviewer.get(url("finding_edit", review, finding_number=1))  # sessions and permissions warmed
    with django_assert_max_num_queries(12):
        page = reviewer.get(url("finding_edit", review, finding_number=1))
    assert len(page.context["rows"]) == 30
    with django_assert_max_num_queries(12):
        assert reviewer.get(url("finding_new", review)).status_code == 200


def test_a_pattern_that_backtracks_without_end_is_stopped_by_the_engines_timeout(review, monkeypatch):
    from engine.verification import patterns

    monkeypatch.setattr(patterns, "SEARCH_TIMEOUT_SECONDS", 0.2)
    answer = check(login("rae", "Reviewer"), review, review.reviewed, kind="pattern", path="data.txt",
                   regex=r"(x+x+)+y", expect="present").json()
    assert answer["state"] == "error" and answer["verdict_label"] == "Check failed"
    assert "took more than 0.2s" in answer["detail"]


def test_the_findings_history_shows_who_recorded_and_who_edited_it(review):
    reviewer = login("rae", "Reviewer")
    reviewer.post(url("finding_new", review), new_finding_post(review))
    reviewer.post(url("finding_edit", review, finding_number=1), new_finding_post(review, title="Loops forever"))
    page = reviewer.get(url("finding", review, finding_number=1)).content.decode()
    history = page[page.index('id="history-title"'):]
    assert "Recorded" in history and "Edited" in history and "Changed title." in history
    assert history.count("by rae") == 2


def test_saving_a_finding_with_thirty_pieces_of_evidence_takes_a_bounded_number_of_queries(
    review, django_assert_max_num_queries
):
    # The save and its request to verify are counted; the verification is sent once the request's
    # transaction commits, and is a worker's.
    reviewer = login("rae", "Reviewer")
    rows = {}
    for index in range(30):
        rows.update({f"evidence-{index}-kind": "snippet", f"evidence-{index}-commit": review.reviewed,
                     f"evidence-{index}-path": "src/loader.py", f"evidence-{index}-start_line": "7",
                     f"evidence-{index}-end_line": "8", f"evidence-{index}-text": f"tolerance = {index}",
                     f"evidence-{index}-order": str(index + 1)})
    post = {**new_finding_post(review), **rows}
    assert reviewer.post(url("finding_new", review), post).status_code == 302
    edit = url("finding_edit", review, finding_number=1)
    with django_assert_max_num_queries(22):  # nothing changed: reads only, nothing per item
        assert reviewer.post(edit, post).status_code == 302
    post["evidence-3-text"] = "tolerance = -1"
    # One item changed: one UPDATE, the verdicts dropped, and a run asked for (its lock, the run, its audit entry).
    with django_assert_max_num_queries(38):
        assert reviewer.post(edit, post).status_code == 302
    assert Evidence.objects.get(position=3).text == "tolerance = -1"


# As on a server, each write commits when it is made (the run's task is sent on commit): with the
# tasks run in-process (the embedded default, held so where CI has a broker), the request has
# verified it when it answers.
@pytest.mark.django_db(transaction=True)
@pytest.mark.usefixtures("eager_tasks")
def test_a_finding_saved_in_the_editor_is_verified_at_once_and_the_message_says_done_not_queued(review):
    reviewer = login("rae", "Reviewer")
    response = reviewer.post(url("finding_new", review), new_finding_post(review), follow=True)
    finding = Finding.objects.get()
    page = response.content.decode()
    assert response.redirect_chain[-1][0] == finding.get_absolute_url()
    run = review.verification_runs.get()
    assert (run.status, run.requested_by.username) == ("done", "rae")
    assert finding.verifications.filter(commit__sha=review.later).exists()
    assert "Verification of acme/rl#7 done: the results below are new" in page
    assert "queued" not in page.lower()
    assert "Not verified" not in page.split('class="badges"', 1)[1].split("</p>", 1)[0]


def test_a_save_that_changes_nothing_queues_nothing(review):
    reviewer = login("rae", "Reviewer")
    reviewer.post(url("finding_new", review), new_finding_post(review))
    finding = Finding.objects.get()
    edit = url("finding_edit", review, finding_number=finding.number)
    assert review.verification_runs.count() == 1
    reviewer.post(edit, new_finding_post(review))  # the same again: nothing changed
    assert review.verification_runs.count() == 1


@pytest.mark.django_db(transaction=True)
@pytest.mark.usefixtures("eager_tasks")
def test_every_finding_page_has_verify_now_for_those_who_may_and_it_comes_back_there(review):
    finding = FindingFactory(pull_request=review, number=1)
    finding_url = finding.get_absolute_url()
    verify = url("verify", review)
    assert f'action="{verify}"' not in login("rita", "Reader").get(finding_url).content.decode()
    reviewer = login("rae", "Reviewer")
    page = reviewer.get(finding_url).content.decode()
    form = page.split(f'action="{verify}"', 1)[1].split("</form>", 1)[0]
    assert f'name="next" value="{finding_url}"' in form and "Verify now</button>" in form
    response = reviewer.post(verify, {"next": finding_url}, follow=True)
    assert response.redirect_chain[-1][0] == finding_url
    assert "Verification of acme/rl#7 done" in response.content.decode()
    assert reviewer.post(verify, {"next": "https://evil.example/"})["Location"] == review.get_absolute_url()


@pytest.mark.django_db(transaction=True)
def test_with_a_worker_a_saved_finding_s_page_shows_its_run_queued_with_progress(review, monkeypatch):
    from findings import tasks
    from tests.queued import record_queued

    queued = record_queued(monkeypatch, tasks.run_verification)  # handed to a worker, not run here
    reviewer = login("rae", "Reviewer")
    response = reviewer.post(url("finding_new", review), new_finding_post(review), follow=True)
    run = review.verification_runs.get()
    assert queued == [run.pk] and run.status == "queued"
    page = response.content.decode()
    assert "Verification of acme/rl#7 queued: the page shows its progress." in page
    progress = page.split('class="run-progress"', 1)[1].split("</section>", 1)[0]
    assert "<progress" in progress and "Verification <span data-run-status>queued</span>" in progress
    assert "A verification is queued." in page  # beside the disabled Verify now


def test_a_form_sent_back_with_errors_is_unsaved_from_the_start_for_the_leaving_guard(review):
    reviewer = login("rae", "Reviewer")
    fresh = reviewer.get(url("finding_new", review)).content.decode()
    assert "data-unsaved" not in fresh.split('id="finding-editor"', 1)[1].split(">", 1)[0]
    refused = reviewer.post(url("finding_new", review), new_finding_post(review, title=""))
    assert refused.status_code == 400
    assert "data-unsaved" in refused.content.decode().split('id="finding-editor"', 1)[1].split(">", 1)[0]


def check_item_post(pull_request, **fields) -> dict:
    """The editor's form with one check item (a test id a line, a result as `rule path:line`)."""
    return new_finding_post(pull_request, **{
        "evidence-0-kind": "check", "evidence-0-path": "", "evidence-0-start_line": "", "evidence-0-end_line": "",
        "evidence-0-check": "unit-tests", **{f"evidence-0-{name}": value for name, value in fields.items()},
    })


def test_a_reviewer_records_a_ci_check_with_its_failing_tests_and_the_form_shows_them_again(review):
    reviewer = login("rae", "Reviewer")
    response = reviewer.post(url("finding_new", review), check_item_post(
        review, tests="tests/test_calc.py::test_div[6-3-2]\r\n\r\n  tests.test_calc.TestDiv::test_zero \r\n",
        app="github-actions", caption="The lane that collects the PR's tests",
    ))
    assert response.status_code == 302
    evidence = Evidence.objects.get()
    assert (evidence.kind, evidence.check_name, evidence.check_app, evidence.commit.sha) == (
        "check", "unit-tests", "github-actions", review.reviewed,
    )
    assert evidence.check_tests == ["tests/test_calc.py::test_div[6-3-2]", "tests.test_calc.TestDiv::test_zero"]
    page = reviewer.get(url("finding_edit", review, finding_number=1)).content.decode()
    assert "tests/test_calc.py::test_div[6-3-2]\ntests.test_calc.TestDiv::test_zero</textarea>" in page
    shown = reviewer.get(evidence.finding.get_absolute_url()).content.decode()
    assert "<code class=\"check-name\">unit-tests</code> fails" in shown and "these 2 tests failing" in shown


def test_a_check_item_s_results_are_typed_as_rule_path_and_line(review):
    reviewer = login("rae", "Reviewer")
    response = reviewer.post(url("finding_new", review), check_item_post(
        review, check="secrets", results="S105 config/soak.yaml:104\nS105 config/soak.yaml:109\nE501 README.md",
    ))
    assert response.status_code == 302
    assert Evidence.objects.get().check_results == [
        {"rule": "S105", "path": "config/soak.yaml", "start_line": 104},
        {"rule": "S105", "path": "config/soak.yaml", "start_line": 109},
        {"rule": "E501", "path": "README.md", "start_line": None},
    ]
    page = reviewer.get(url("finding_edit", review, finding_number=1)).content.decode()
    assert "S105 config/soak.yaml:104\nS105 config/soak.yaml:109\nE501 README.md</textarea>" in page


def test_a_check_name_with_control_characters_or_a_result_outside_the_repository_is_refused_beside_its_box(review):
    reviewer = login("rae", "Reviewer")
    response = reviewer.post(url("finding_new", review), check_item_post(
        review, check="unit\u0007tests", results="S105 ../../etc/passwd:1",
    ))
    assert response.status_code == 400
    errors = response.context["errors"]
    assert "control characters" in errors["evidence[0].check"]
    assert "'..'" in errors["evidence[0].results"]
    row = response.context["rows"][0]
    assert "control characters" in row["errors"]["check"] and "results[0].path" in row["errors"]["results"]
    assert not Finding.objects.exists()
