"""What a pull request changes, from the git layer: per file git's own counts of lines added and
removed, renames with their old path, binary files as git reports them, and the sums per
directory."""
import pytest

from core.errors import CommitNotFound
from engine.git import GitReader
from engine.git.diffstat import by_directory, diff_numstat, parse_raw_numstat
from tests.gitrepo import GitRepoBuilder

GUIDE = "# Guide\n" + "".join(f"Some prose about the loader, line {n}.\n" for n in range(30))


@pytest.fixture
def repo(tmp_path):
    return GitRepoBuilder(tmp_path)


@pytest.fixture
def history(repo):
    first = (
        repo.write("src/app.py", "".join(f"value_{n} = {n}\n" for n in range(40)))
        .write("docs/guide.md", GUIDE)
        .write("old.txt", "to be removed\nand this\n")
        .write("logo.png", b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
        .commit("first")
    )
    second = (
        repo.rename("docs/guide.md", "docs/manual/guide.md")
        .write("docs/manual/guide.md", GUIDE + "One more line.\n")
        .write("src/app.py", "".join(f"value_{n} = {n * 2}\n" for n in range(40))[:-1] + "\n")
        .delete("old.txt")
        .write("logo.png", b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x01")
        .write("src/cookers/one.py", "ONE = 1\nTWO = 2\n")
        .write("src/cookers/two.py", "TWO = 2\n")
        .commit("second")
    )
    return first, second


def test_the_counts_are_those_git_diff_numstat_prints(repo, history):
    with GitReader(repo.git_dir) as reader:
        stats = diff_numstat(reader, *history)
    expected = repo.numstat(*history)
    assert {
        stat.path: ("-" if stat.added is None else str(stat.added), "-" if stat.removed is None else str(stat.removed),
                    stat.old_path)
        for stat in stats
    } == expected
    assert len(stats) == len(expected) == 6


def test_renames_deletions_additions_and_binary_files_are_told_apart(repo, history):
    with GitReader(repo.git_dir) as reader:
        stats = {stat.path: stat for stat in diff_numstat(reader, *history)}
    assert (stats["docs/manual/guide.md"].status, stats["docs/manual/guide.md"].old_path) == ("R", "docs/guide.md")
    assert (stats["docs/manual/guide.md"].added, stats["docs/manual/guide.md"].removed) == (1, 0)
    assert (stats["old.txt"].status, stats["old.txt"].removed) == ("D", 2)
    assert (stats["src/cookers/one.py"].status, stats["src/cookers/one.py"].added) == ("A", 2)
    assert stats["logo.png"].binary and stats["logo.png"].lines == 0
    assert stats["src/app.py"].status == "M"


def test_the_files_are_summed_per_directory_most_lines_first(repo, history):
    with GitReader(repo.git_dir) as reader:
        directories = by_directory(diff_numstat(reader, *history))
    assert [(row.directory, row.files, row.added, row.removed) for row in directories] == [
        ("src", 1, 39, 39),
        ("src/cookers", 2, 3, 0),
        ("", 2, 0, 2),
        ("docs/manual", 1, 1, 0),
    ]


def test_one_commit_against_itself_changes_nothing(repo, history):
    with GitReader(repo.git_dir) as reader:
        assert diff_numstat(reader, history[1], history[1][:10]) == []


def test_a_commit_the_repository_lacks_is_refused(repo, history):
    with GitReader(repo.git_dir) as reader, pytest.raises(CommitNotFound):
        diff_numstat(reader, history[0], "0" * 40)


def test_listings_that_disagree_are_refused_rather_than_misread():
    raw = b":100644 100644 aaaaaaa bbbbbbb M\0a.py\0"
    with pytest.raises(ValueError):
        parse_raw_numstat(raw + b"1\t0\ta.py\0" + b"3\t4\tb.py\0")
