"""A mirror is one host's cache: fetched when it lacks the commits asked for, not otherwise, by one
process of the host at a time, and able to hold a commit no ref reaches any more."""
import multiprocessing

import pytest

from engine.git import GitReader, fetch_mirror, mirror_dir_for, mirror_holds
from tests.gitrepo import GitRepoBuilder


@pytest.fixture
def upstream(tmp_path):
    repo = GitRepoBuilder(tmp_path, "upstream")
    repo.write("app.py", "print('hello')\n").commit("first")
    return repo


@pytest.fixture
def mirror_dir(tmp_path):
    return mirror_dir_for(tmp_path / "mirrors", "acme/app")


def test_a_mirror_holding_the_commits_asked_for_is_not_fetched_again(upstream, mirror_dir):
    first = upstream.head()
    fetch_mirror(url=upstream.url, mirror_dir=mirror_dir, allow_local=True)
    upstream.write("app.py", "print('again')\n").commit("second")

    result = fetch_mirror(url=upstream.url, mirror_dir=mirror_dir, allow_local=True, unless_holding=[first[:10]])

    assert not result.fetched
    with GitReader(mirror_dir) as reader:
        assert reader.resolve("main") == first, "nothing was fetched"


def test_a_commit_the_mirror_lacks_is_fetched(upstream, mirror_dir):
    first = upstream.head()
    fetch_mirror(url=upstream.url, mirror_dir=mirror_dir, allow_local=True)
    second = upstream.write("app.py", "print('again')\n").commit("second")
    assert mirror_holds(mirror_dir, [first]) and not mirror_holds(mirror_dir, [first, second])

    result = fetch_mirror(url=upstream.url, mirror_dir=mirror_dir, allow_local=True, unless_holding=[first, second])

    assert result.fetched and mirror_holds(mirror_dir, [first, second])


@pytest.mark.parametrize("damage", ["missing", "garbled"])
def test_a_missing_or_garbled_mirror_holds_nothing(upstream, mirror_dir, damage):
    if damage == "garbled":
        fetch_mirror(url=upstream.url, mirror_dir=mirror_dir, allow_local=True)
        (mirror_dir / "HEAD").write_text("this is not a ref\n")
    assert not mirror_holds(mirror_dir, [upstream.head()])
    result = fetch_mirror(url=upstream.url, mirror_dir=mirror_dir, allow_local=True, unless_holding=[upstream.head()])
    assert result.fetched and mirror_holds(mirror_dir, [upstream.head()])


def test_a_commit_no_ref_reaches_any_more_is_fetched_by_its_sha(upstream, mirror_dir):
    """A head force-pushed away, asked for by a host that never fetched it (its mirror new, or
    made again): the branches do not bring it, its SHA does."""
    upstream.git("checkout", "-q", "-b", "feature")
    dropped = upstream.write("app.py", "print('dropped')\n").commit("dropped")
    upstream.git("checkout", "-q", "main")
    upstream.git("branch", "-q", "-D", "feature")

    fetch_mirror(url=upstream.url, mirror_dir=mirror_dir, allow_local=True, unless_holding=[dropped])

    assert mirror_holds(mirror_dir, [dropped])
    with GitReader(mirror_dir) as reader:
        assert reader.resolve(f"refs/recheck/commits/{dropped}") == dropped, "kept from gc by a ref"


def _fetch_in_a_process(url, mirror_dir, sha, start, results):
    start.wait()
    results.put(fetch_mirror(url=url, mirror_dir=mirror_dir, allow_local=True, unless_holding=[sha]).fetched)


def test_processes_of_one_host_asking_at_once_fetch_once(upstream, mirror_dir):
    context = multiprocessing.get_context("fork")
    start, results = context.Barrier(4), context.Queue()
    processes = [
        context.Process(target=_fetch_in_a_process, args=(upstream.url, mirror_dir, upstream.head(), start, results))
        for _ in range(4)
    ]
    for process in processes:
        process.start()
    for process in processes:
        process.join(60)
    fetched = [results.get(timeout=5) for _ in processes]
    assert sorted(fetched) == [False, False, False, True]
