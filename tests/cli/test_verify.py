import io
import json

import pytest
from django.core.management import CommandError, call_command

from reviews.models import PinnedCommit
from tests.findings.services.test_verification import LOADER, import_review
from tests.gitrepo import GitRepoBuilder

pytestmark = pytest.mark.django_db


@pytest.fixture
def repo(tmp_path):
    builder = GitRepoBuilder(tmp_path)
    builder.reviewed = builder.write("src/loader.py", LOADER).write("config.yaml", "x: 1\n").commit("reviewed")
    return builder


def run_verify(*args):
    out = io.StringIO()
    call_command("verify", *args, stdout=out)
    return out.getvalue()


def test_json_output_has_the_documented_shape(repo):
    import_review(repo)
    rebased = repo.write("src/loader.py", "# one\n# two\n# three\n" + LOADER).commit("rebased")
    report = json.loads(run_verify("acme/loader", "7", "--commit", rebased[:9], "--json"))
    assert report["pull_request"] == "acme/loader#7" and report["commit"] == rebased
    first = report["findings"][0]
    assert first["number"] == 1 and first["verdict"] == "present"
    snippet = first["evidence"][0]
    assert set(snippet) == {"index", "kind", "state", "path", "start_line", "end_line", "detail"}
    assert (snippet["index"], snippet["kind"], snippet["state"]) == (0, "snippet", "holds")
    assert (snippet["path"], snippet["start_line"], snippet["end_line"]) == ("src/loader.py", 13, 13)
    note = report["findings"][2]["evidence"][0]
    assert (note["state"], note["path"], note["start_line"]) == ("unchecked", None, None)
    assert PinnedCommit.objects.get(commit__sha=rebased).role == "rebased"


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_json_is_indented_on_a_terminal_and_one_line_into_a_pipe(repo):
    import_review(repo)
    piped = run_verify("acme/loader", "7", "--commit", repo.reviewed[:9], "--json")
    terminal = Terminal()
    call_command("verify", "acme/loader", "7", "--commit", repo.reviewed[:9], "--json", stdout=terminal)
    assert piped.strip().count("\n") == 0
    assert terminal.getvalue().startswith('{\n  "pull_request"')
    assert json.loads(piped) == json.loads(terminal.getvalue())


def test_without_a_commit_it_verifies_every_pinned_commit(repo):
    import_review(repo)
    output = run_verify("acme/loader", "7")
    assert f"acme/loader#7 at {repo.reviewed}" in output
    assert "present" in output and "unverifiable" in output


def test_an_unknown_pull_request_says_what_to_do(repo):
    with pytest.raises(CommandError, match="import its review first"):
        run_verify("acme/loader", "99")


def test_an_unknown_commit_is_a_clear_error_and_pins_nothing(repo):
    import_review(repo)
    with pytest.raises(CommandError, match="deadbeef"):
        run_verify("acme/loader", "7", "--commit", "deadbeef")
    assert PinnedCommit.objects.count() == 1


def test_an_unreachable_repository_is_a_clear_error(repo, tmp_path):
    pull_request = import_review(repo)
    pull_request.repository.clone_url = str(tmp_path / "nowhere")
    pull_request.repository.save()
    with pytest.raises(CommandError, match="Cannot verify"):
        run_verify("acme/loader", "7", "--commit", repo.reviewed)


def test_verify_does_not_wait_for_pages_it_does_not_show_and_a_download_has_the_new_verdicts(repo, client, settings):
    from presentation.companion import companion_render
    from findings.models import CompanionPages

    settings.RECHECK_PUBLIC_READ = True
    pull_request = import_review(repo)
    stored = companion_render(pull_request=pull_request)
    assert 'class="badge verdict-present"' not in stored.blockers_html

    run_verify("acme/loader", "7", "--commit", repo.reviewed)

    # Without a worker the command rendered nothing: the stored pages are as they were...
    assert CompanionPages.objects.get().rendered_at == stored.rendered_at
    # ...and, out of date, are not what a reader downloads.
    response = client.get(pull_request.get_absolute_url() + "companion.zip")
    import zipfile

    blockers = zipfile.ZipFile(io.BytesIO(response.content)).read("acme-loader-7-companion/blockers.html").decode()
    assert 'class="badge verdict-present"' in blockers
