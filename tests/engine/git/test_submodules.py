import pytest

from core.errors import RepositoryError
from engine.git import GitReader
from engine.git.submodules import absolute_submodule_url, slug_for_url, submodules_at, url_key
from tests.gitrepo import GitRepoBuilder


@pytest.mark.parametrize(
    "url",
    [
        "https://github.com/NVIDIA-NeMo/Megatron-Bridge.git",
        "https://github.com/NVIDIA-NeMo/Megatron-Bridge",
        "https://GitHub.com/NVIDIA-NeMo/Megatron-Bridge/",
        "git@github.com:NVIDIA-NeMo/Megatron-Bridge.git",
        "ssh://git@github.com/NVIDIA-NeMo/Megatron-Bridge.git",
    ],
)
def test_spellings_of_one_repository_share_a_key(url):
    assert url_key(url) == "github.com/NVIDIA-NeMo/Megatron-Bridge"


def test_different_repositories_have_different_keys():
    assert url_key("https://github.com/a/bridge") != url_key("https://gitlab.com/a/bridge")
    assert url_key("/srv/git/bridge") == url_key("file:///srv/git/bridge/.git")


@pytest.mark.parametrize(
    "relative, superproject, expected",
    [
        ("../Megatron-Bridge.git", "https://github.com/NVIDIA-NeMo/RL.git", "https://github.com/NVIDIA-NeMo/Megatron-Bridge.git"),
        ("../../other/lib.git", "git@github.com:NVIDIA-NeMo/RL.git", "git@github.com:other/lib.git"),
        ("https://example.com/x/y.git", "https://github.com/a/b.git", "https://example.com/x/y.git"),
    ],
)
def test_relative_submodule_urls_resolve_against_the_superproject(relative, superproject, expected):
    assert absolute_submodule_url(relative, superproject_url=superproject) == expected


def test_a_slug_comes_from_the_urls_last_two_segments():
    assert slug_for_url("git@github.com:NVIDIA-NeMo/Megatron-Bridge.git") == "NVIDIA-NeMo/Megatron-Bridge"
    with pytest.raises(RepositoryError):
        slug_for_url("https://example.com/lonely")


def test_gitmodules_is_read_by_git_at_the_commit(tmp_path):
    repo = GitRepoBuilder(tmp_path)
    repo.write(".gitmodules", '[submodule "bridge"]\n\tpath = 3rdparty/bridge\n\turl = ../Bridge.git\n'
               '\tbranch = release\n[submodule "no-url"]\n\tpath = x\n')
    sha = repo.gitlink("3rdparty/bridge", "5ed97996" + "0" * 32).commit("pin")

    with GitReader(repo.git_dir) as reader:
        found = submodules_at(reader, sha)

    assert list(found) == ["3rdparty/bridge"]
    assert (found["3rdparty/bridge"].url, found["3rdparty/bridge"].branch) == ("../Bridge.git", "release")


def test_a_commit_without_gitmodules_declares_no_submodules(tmp_path):
    repo = GitRepoBuilder(tmp_path)
    sha = repo.write("a", "1\n").commit("a")
    with GitReader(repo.git_dir) as reader:
        assert submodules_at(reader, sha) == {}
