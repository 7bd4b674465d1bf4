"""A mirror is this host's cache of a repository: one whose objects are gone or whose files are
garbage is made again by the next fetch, and the work that asked for it goes on. A mirror that is
intact is kept, and a remote that fails still fails."""
import shutil

import pytest

from core.errors import RepositoryError
from engine.git import GitReader, fetch_mirror, mirror_dir_for
from tests.gitrepo import GitRepoBuilder


@pytest.fixture
def upstream(tmp_path):
    repo = GitRepoBuilder(tmp_path, "upstream")
    repo.write("app.py", "print('hello')\n").commit("first")
    return repo


@pytest.fixture
def mirror_dir(tmp_path, upstream):
    mirror = mirror_dir_for(tmp_path / "mirrors", "acme/app")
    fetch_mirror(url=upstream.url, mirror_dir=mirror, allow_local=True)
    return mirror


def objects_removed(mirror):
    for entry in (mirror / "objects").iterdir():
        if entry.name not in ("info",):
            shutil.rmtree(entry) if entry.is_dir() else entry.unlink()


def head_garbled(mirror):
    # git no longer takes the directory for a repository at all.
    (mirror / "HEAD").write_text("this is not a ref\n")


def refs_garbled(mirror):
    (mirror / "packed-refs").unlink(missing_ok=True)
    for ref in (mirror / "refs" / "heads").iterdir():
        ref.write_text("nonsense\n")


@pytest.mark.parametrize(("corrupt", "made_again"), [
    # git fetches every object its refs need again, and the mirror mends itself.
    (objects_removed, False),
    (head_garbled, True),
    (refs_garbled, True),
])
def test_a_corrupt_mirror_is_made_again_by_the_next_fetch(upstream, mirror_dir, corrupt, made_again):
    second = upstream.write("app.py", "print('bye')\n").commit("second")
    corrupt(mirror_dir)

    assert fetch_mirror(url=upstream.url, mirror_dir=mirror_dir, allow_local=True).created is made_again

    with GitReader(mirror_dir) as reader:
        assert reader.resolve("main") == second
        assert reader.read_blob(second, "app.py").data == b"print('bye')\n"
    assert not mirror_dir.with_name(mirror_dir.name + ".broken").exists()


def test_a_missing_mirror_is_made_again(upstream, mirror_dir):
    shutil.rmtree(mirror_dir)
    assert fetch_mirror(url=upstream.url, mirror_dir=mirror_dir, allow_local=True).created


def test_an_intact_mirror_is_kept_when_the_remote_fails(upstream, mirror_dir, tmp_path):
    marker = mirror_dir / "objects" / "info" / "kept"
    marker.write_text("")
    not_a_repository = tmp_path / "not-a-repository"
    not_a_repository.mkdir()
    with pytest.raises(RepositoryError, match="could not fetch"):
        fetch_mirror(url=str(not_a_repository), mirror_dir=mirror_dir, allow_local=True)
    assert marker.exists(), "a remote's failure is not a reason to throw the cache away"


def test_a_mirror_half_removed_is_made_again(upstream, mirror_dir):
    """The cache cleared while git wrote to it: no HEAD any more, some of its directories left."""
    (mirror_dir / "HEAD").unlink()
    shutil.rmtree(mirror_dir / "refs")

    result = fetch_mirror(url=upstream.url, mirror_dir=mirror_dir, allow_local=True)

    assert result.created
    with GitReader(mirror_dir) as reader:
        assert reader.resolve("main") == upstream.head()
