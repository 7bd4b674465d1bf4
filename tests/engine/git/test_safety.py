from pathlib import Path

import pytest

from core.errors import CommitNotFound, RecheckError, RepositoryError, UnsafePath
from engine.git import (
    validate_clone_url,
    validate_glob,
    validate_repo_path,
    validate_revision,
    validate_slug,
)


@pytest.mark.parametrize(
    "url",
    [
        "https://github.com/django/django.git",
        "https://github.com/django/django",
        "https://gitlab.example.com:8443/group/sub/repo.git",
        "https://x-access-token:abc123@github.com/owner/repo.git",
        "https://[2606:4700:4700::1111]/owner/repo.git",
        "ssh://git@github.com/owner/repo.git",
        "ssh://git@github.com:2222/owner/repo.git",
        "ssh://github.com/owner/repo.git",
        "git@github.com:owner/repo.git",
        "github.com:owner/repo.git",
        "git@github.com:/srv/git/repo.git",
    ],
)
def test_it_accepts_https_and_ssh_urls(url):
    assert validate_clone_url(url, allow_local=False) == url


@pytest.mark.parametrize(
    ("url", "reason"),
    [
        ("", "empty"),
        ("-uhttps://evil.example/x.git", "starts with '-'"),
        ("--upload-pack=touch /tmp/pwned", "whitespace"),
        ("--upload-pack=touch", "starts with '-'"),
        ("ext::sh -c touch% /tmp/pwned", "whitespace"),
        ("ext::sh", "remote-helper"),
        ("fd::17", "remote-helper"),
        ("transport::https://github.com/owner/repo", "remote-helper"),
        ("file:///etc", "file:// URLs are not allowed"),
        ("/srv/git/repo.git", "local paths are not allowed"),
        ("../repo", "local paths are not allowed"),
        ("http://github.com/owner/repo.git", "unencrypted"),
        ("git://github.com/owner/repo.git", "not supported"),
        ("ftp://example.com/repo.git", "not supported"),
        ("ssh://-oProxyCommand=touch%20pwned/x", "not a valid host name"),
        ("ssh://-oProxyCommand=x@host/x", "not a plain user name"),
        ("ssh://git@-oProxyCommand=x/repo", "not a valid host name"),
        ("ssh://user:password@host/repo", "not a plain user name"),
        ("https://-host.example/x.git", "not a valid host name"),
        ("https://host.example:99999/x.git", "out of range"),
        ("https://github.com", "no repository path"),
        ("https://github.com/", "no repository path"),
        ("git@github.com:-oProxyCommand=x", "starts with '-'"),
        ("https://github.com/owner/repo\n.git", "control"),
        ("https://github.com/owner/ repo.git", "whitespace"),
        ("https://github.com/owner/repo\x00", "control"),
    ],
)
def test_it_refuses_unsafe_clone_urls_with_a_reason(url, reason):
    with pytest.raises(RepositoryError, match="(?i)" + reason.replace("(", r"\(").replace(")", r"\)")):
        validate_clone_url(url, allow_local=False)


def test_a_refused_url_is_a_recheck_error():
    with pytest.raises(RecheckError):
        validate_clone_url("ext::sh", allow_local=True)


def test_remote_helpers_stay_refused_even_when_local_sources_are_allowed():
    with pytest.raises(RepositoryError, match="remote-helper"):
        validate_clone_url("ext::sh%20-c%20true", allow_local=True)


def test_it_returns_local_directories_as_absolute_paths_when_allowed(tmp_path, monkeypatch):
    (tmp_path / "repo").mkdir()
    monkeypatch.chdir(tmp_path)
    assert validate_clone_url("repo", allow_local=True) == str((tmp_path / "repo").resolve())


def test_it_turns_file_urls_into_paths_when_local_sources_are_allowed(tmp_path):
    assert validate_clone_url(f"file://{tmp_path}", allow_local=True) == str(tmp_path.resolve())


def test_it_refuses_a_local_path_that_does_not_exist(tmp_path):
    with pytest.raises(RepositoryError, match="does not exist"):
        validate_clone_url(str(tmp_path / "missing"), allow_local=True)


def test_it_refuses_file_urls_naming_a_host(tmp_path):
    with pytest.raises(RepositoryError, match="must not name a host"):
        validate_clone_url(f"file://example.com{tmp_path}", allow_local=True)


@pytest.mark.parametrize(
    "rev",
    ["abc1234", "0123456789abcdef0123456789abcdef01234567", "main", "v1.2.3", "refs/pull/12/head",
     "feature/login-form", "HEAD"],
)
def test_it_accepts_shas_and_safe_ref_names(rev):
    assert validate_revision(rev) == rev


@pytest.mark.parametrize(
    "rev",
    ["", "-n", "--output=/tmp/x", "main..dev", "a b", "HEAD~1", "HEAD^", "main@{1}", "x:y",
     "refs/heads/.hidden", "branch.lock", "trailing/", "dot.", "a//b", "/abs", "ref\n", "*"],
)
def test_it_refuses_malformed_or_option_like_revisions(rev):
    with pytest.raises(CommitNotFound):
        validate_revision(rev)


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("src/app.py", "src/app.py"),
        ("./src//app.py", "src/app.py"),
        ("src/app.py/", "src/app.py"),
        ("src/./pkg/mod.py", "src/pkg/mod.py"),
        ("a/-b.py", "a/-b.py"),
        ("dir with space/file name.txt", "dir with space/file name.txt"),
    ],
)
def test_it_normalises_repository_paths(path, expected):
    assert validate_repo_path(path) == expected


@pytest.mark.parametrize(
    ("path", "reason"),
    [
        ("", "empty"),
        ("../etc/passwd", r"'\.\.'"),
        ("src/../../etc/passwd", r"'\.\.'"),
        ("src/..", r"'\.\.'"),
        ("/etc/passwd", "absolute"),
        ("C:/Windows/system.ini", "absolute"),
        ("\\\\server\\share", "absolute"),
        ("src/app\x00.py", "control"),
        ("src/app.py\n", "control"),
        ("-rf", "starts with '-'"),
        ("./--output=x", "starts with '-'"),
        (".", "names no file"),
        ("./", "names no file"),
    ],
)
def test_it_refuses_unsafe_repository_paths(path, reason):
    with pytest.raises(UnsafePath, match=reason):
        validate_repo_path(path)


def test_globs_follow_the_same_path_rules():
    assert validate_glob("./src/**/*.py") == "src/**/*.py"
    with pytest.raises(UnsafePath, match="absolute"):
        validate_glob("/src/**/*.py")
    with pytest.raises(UnsafePath, match=r"'\.\.'"):
        validate_glob("../**/*.py")


@pytest.mark.parametrize(
    ("slug", "expected"),
    [("django/django", ("django", "django")), ("owner/name.git", ("owner", "name")), ("o-1/.github", ("o-1", ".github")),
     ("group/subgroup/project", ("group/subgroup", "project"))],
)
def test_it_splits_repository_slugs(slug, expected):
    assert validate_slug(slug) == expected


@pytest.mark.parametrize("slug", ["", "django", "a/../c", "a//c", "../x", "owner/..", "-o/x", "owner/x y", "owner/.git", Path("a/b")])
def test_it_refuses_malformed_slugs(slug):
    with pytest.raises(RepositoryError, match="owner/name"):
        validate_slug(slug)
