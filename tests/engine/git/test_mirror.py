import socket
import subprocess

import pytest

from core.errors import RepositoryError
from engine.git import GitReader, fetch_mirror, mirror_dir_for
from engine.git.process import git_config_args, git_env, run_git
from tests.gitrepo import GitRepoBuilder


@pytest.fixture
def upstream(tmp_path):
    repo = GitRepoBuilder(tmp_path, "upstream")
    repo.write("app.py", "print('hello')\n").commit("first")
    repo.tag("v1.0")
    return repo


@pytest.fixture
def mirror_dir(tmp_path):
    return mirror_dir_for(tmp_path / "mirrors", "acme/app")


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_the_mirror_of_a_slug_lives_under_owner_and_name(tmp_path):
    assert mirror_dir_for(tmp_path, "acme/app") == tmp_path / "acme" / "app.git"


def test_two_slugs_never_share_a_mirror_directory(tmp_path):
    # Slugs are normalised when recorded; one recorded before that still gets its own directory.
    assert mirror_dir_for(tmp_path, "acme/app.git") != mirror_dir_for(tmp_path, "acme/app")


def test_a_nested_group_projects_mirror_lives_under_its_groups(tmp_path):
    # GitLab's group/subgroup/name: beside the mirror of a project group/subgroup, never in it.
    assert mirror_dir_for(tmp_path, "group/sub/app") == tmp_path / "group" / "sub" / "app.git"
    assert mirror_dir_for(tmp_path, "group/sub") == tmp_path / "group" / "sub.git"


@pytest.mark.parametrize("slug", ["a/..", "a/.", "a/...git", "a/..git", "../x", "a/../c", "a/.b/c", "a/b.git/c"])
def test_a_slug_naming_a_directory_gets_no_mirror(tmp_path, slug):
    with pytest.raises(RepositoryError, match="slug"):
        mirror_dir_for(tmp_path, slug)


def test_a_malformed_slug_gets_no_mirror_directory(tmp_path):
    with pytest.raises(RepositoryError, match="owner/name"):
        mirror_dir_for(tmp_path, "../../etc")


def test_it_creates_a_bare_mirror_with_branches_and_tags(upstream, mirror_dir):
    first = upstream.head()
    upstream.git("branch", "feature")

    result = fetch_mirror(url=upstream.url, mirror_dir=mirror_dir, allow_local=True)

    assert result.created and result.mirror_dir == mirror_dir
    assert (mirror_dir / "HEAD").is_file() and not (mirror_dir / "hooks").exists()
    with GitReader(mirror_dir) as reader:
        assert reader.resolve("main") == first
        assert reader.resolve("feature") == first
        assert reader.resolve("v1.0") == first


def test_fetching_again_updates_the_existing_mirror(upstream, mirror_dir):
    fetch_mirror(url=upstream.url, mirror_dir=mirror_dir, allow_local=True)
    second = upstream.write("app.py", "print('bye')\n").commit("second")

    result = fetch_mirror(url=upstream.url, mirror_dir=mirror_dir, allow_local=True)

    assert not result.created
    with GitReader(mirror_dir) as reader:
        assert reader.resolve("main") == second


def test_it_fetches_the_pull_request_head_when_asked(upstream, mirror_dir):
    main = upstream.head()
    upstream.git("checkout", "--quiet", "-b", "pr")
    pr_head = upstream.write("app.py", "print('pr')\n").commit("pr work")
    upstream.update_ref("refs/pull/7/head", pr_head).checkout("main")

    result = fetch_mirror(url=upstream.url, mirror_dir=mirror_dir, allow_local=True, pr_number=7)

    assert result.pr_ref == "refs/pull/7/head"
    assert result.pr_head == pr_head
    assert not result.pr_ref_missing
    with GitReader(mirror_dir) as reader:
        assert reader.resolve("refs/pull/7/head") == pr_head
        assert reader.resolve("main") == main


def test_a_forge_without_pull_request_refs_still_gets_its_branches_fetched(upstream, mirror_dir):
    result = fetch_mirror(url=upstream.url, mirror_dir=mirror_dir, allow_local=True, pr_number=9)

    assert result.pr_ref_missing
    assert result.pr_ref is None and result.pr_head is None
    with GitReader(mirror_dir) as reader:
        assert reader.resolve("main") == upstream.head()


@pytest.mark.parametrize("number", [0, -3, True, "7"])
def test_a_pull_request_number_must_be_a_positive_integer(upstream, mirror_dir, number):
    with pytest.raises(RepositoryError, match="pull request number"):
        fetch_mirror(url=upstream.url, mirror_dir=mirror_dir, allow_local=True, pr_number=number)


def test_a_local_path_that_does_not_exist_is_unreachable(tmp_path, mirror_dir):
    with pytest.raises(RepositoryError, match="does not exist"):
        fetch_mirror(url=str(tmp_path / "nowhere"), mirror_dir=mirror_dir, allow_local=True)
    assert not mirror_dir.exists()


def test_an_unreachable_https_server_is_reported_with_gits_reason(mirror_dir):
    url = f"https://127.0.0.1:{closed_port()}/acme/app.git"

    with pytest.raises(RepositoryError) as caught:
        fetch_mirror(url=url, mirror_dir=mirror_dir, allow_local=False, timeout=60, internal_hosts=["127.0.0.1"])

    message = str(caught.value)
    assert f"could not fetch {url}" in message
    assert "connect" in message.lower()  # git's own words, e.g. "Failed to connect"
    assert "check that the url is right" in message.lower()


def test_credentials_in_the_url_stay_out_of_error_messages(mirror_dir):
    url = f"https://user:s3cret@127.0.0.1:{closed_port()}/acme/app.git"

    with pytest.raises(RepositoryError) as caught:
        fetch_mirror(url=url, mirror_dir=mirror_dir, allow_local=False, timeout=60, internal_hosts=["127.0.0.1"])

    assert "s3cret" not in str(caught.value)


def test_unsafe_urls_are_refused_before_any_git_process_starts(monkeypatch, upstream, mirror_dir):
    def no_process(*args, **kwargs):
        raise AssertionError("a git process was started")

    monkeypatch.setattr(subprocess, "run", no_process)
    monkeypatch.setattr(subprocess, "Popen", no_process)
    for url in (str(upstream.path), f"file://{upstream.path}", "ext::sh", "-oProxyCommand=x"):
        with pytest.raises(RepositoryError):
            fetch_mirror(url=url, mirror_dir=mirror_dir, allow_local=False)


def test_a_directory_that_is_not_a_mirror_is_left_alone(upstream, tmp_path):
    occupied = tmp_path / "occupied"
    occupied.mkdir()
    (occupied / "notes.txt").write_text("mine")

    with pytest.raises(RepositoryError, match="not a git mirror"):
        fetch_mirror(url=upstream.url, mirror_dir=occupied, allow_local=True)
    assert (occupied / "notes.txt").read_text() == "mine"


def test_git_itself_refuses_local_transports_unless_allowed(upstream, mirror_dir):
    fetch_mirror(url=upstream.url, mirror_dir=mirror_dir, allow_local=True)

    refused = run_git(["fetch", "--end-of-options", str(upstream.path)], git_dir=mirror_dir)

    assert refused.returncode != 0
    assert b"not allowed" in refused.stderr


def test_every_git_call_ignores_user_config_and_never_prompts(monkeypatch):
    monkeypatch.setenv("GIT_DIR", "/somewhere/else")
    monkeypatch.setenv("GIT_CONFIG_PARAMETERS", "'core.hooksPath'='/tmp/evil'")
    env = git_env()

    assert env["GIT_TERMINAL_PROMPT"] == "0"
    assert env["GIT_CONFIG_NOSYSTEM"] == "1"
    assert env["GIT_CONFIG_GLOBAL"] == "/dev/null"
    assert env["GIT_ALLOW_PROTOCOL"] == "https:ssh"
    assert "GIT_DIR" not in env and "GIT_CONFIG_PARAMETERS" not in env
    assert git_env(allow_local=True)["GIT_ALLOW_PROTOCOL"] == "https:ssh:file"


def test_every_git_call_is_hardened_by_configuration():
    args = git_config_args()
    settings = set(args[1::2])
    assert set(args[0::2]) == {"-c"}
    assert {
        "protocol.allow=never",
        "protocol.https.allow=always",
        "protocol.ssh.allow=always",
        "core.hooksPath=/dev/null",
        "http.followRedirects=false",
        "http.lowSpeedLimit=1000",
        "http.lowSpeedTime=30",
        "submodule.recurse=false",
    } <= settings
    assert "protocol.file.allow=always" not in settings
    assert "protocol.file.allow=always" in git_config_args(allow_local=True)
