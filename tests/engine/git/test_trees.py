"""Browsing a commit from the git layer: its files, what changed since another commit, one file."""
import pytest

from core.errors import CommitNotFound, UnsafePath
from engine.git import GitReader
from engine.git.trees import ChangedFile, changed_files, read_file, tree_files
from tests.gitrepo import GitRepoBuilder

PIN = "3961f399" + "ab" * 16
APP = "import os\n\ndef main():\n    return os.getcwd()\n"


@pytest.fixture
def repo(tmp_path):
    return GitRepoBuilder(tmp_path)


@pytest.fixture
def history(repo):
    repo.write("run.sh", "#!/bin/sh\necho hi\n")
    (repo.path / "run.sh").chmod(0o755)
    first = (
        repo.write("src/app.py", APP)
        .write("docs/guide.md", "# Guide\n" + "Some prose about the loader.\n" * 20)
        .write("old.txt", "to be removed\n")
        .write("logo.png", b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
        .gitlink("vendor/lib", PIN)
        .commit("first")
    )
    second = (
        repo.rename("docs/guide.md", "docs/manual.md")
        .write("src/app.py", APP.replace("getcwd()", "getcwd() or '/'"))
        .delete("old.txt")
        .write("src/new.py", "NEW = True\n")
        .commit("second")
    )
    return first, second


@pytest.fixture
def reader(repo, history):
    with GitReader(repo.git_dir, max_blob_bytes=1000) as reader:
        yield reader


def test_it_lists_every_file_of_a_commit_recursively_with_mode_type_and_size(reader, history):
    first, second = history
    files = {entry.path: entry for entry in tree_files(reader, second)}
    assert list(files) == ["docs/manual.md", "logo.png", "run.sh", "src/app.py", "src/new.py", "vendor/lib"]
    assert files["src/new.py"].size == len("NEW = True\n") and files["src/new.py"].type == "blob"
    assert files["src/new.py"].mode == "100644" and not files["src/new.py"].is_executable
    assert files["run.sh"].is_executable
    assert [entry.path for entry in tree_files(reader, first)] == [
        "docs/guide.md", "logo.png", "old.txt", "run.sh", "src/app.py", "vendor/lib"
    ]


def test_it_lists_a_gitlink_as_a_submodule_at_its_pinned_commit(reader, history):
    lib = {entry.path: entry for entry in tree_files(reader, history[1])}["vendor/lib"]
    assert lib.is_submodule and lib.mode == "160000" and lib.sha == PIN and lib.size is None


def test_it_lists_the_files_changed_between_two_commits_with_their_status(reader, history):
    first, second = history
    assert changed_files(reader, first, second) == [
        ChangedFile("docs/manual.md", "renamed", old_path="docs/guide.md"),
        ChangedFile("old.txt", "deleted"),
        ChangedFile("src/app.py", "modified"),
        ChangedFile("src/new.py", "added"),
    ]
    assert [change.label for change in changed_files(reader, first, second)] == [
        "renamed from docs/guide.md", "deleted", "modified", "added"
    ]
    assert changed_files(reader, second, second) == []


def test_it_reads_a_text_file_at_a_commit(reader, history):
    read = read_file(reader, history[0], "./src//app.py")
    assert read.kind == "text" and read.path == "src/app.py" and read.blob.text == APP and read.size == len(APP)


def test_it_tells_binary_files_from_text(reader, history):
    read = read_file(reader, history[0], "logo.png")
    assert read.kind == "binary" and read.size == 16


def test_it_does_not_load_a_file_over_the_size_limit(repo, history):
    repo.write("big.txt", "line of text\n" * 1000).commit("big")
    with GitReader(repo.git_dir, max_blob_bytes=1000) as reader:
        read = read_file(reader, repo.head(), "big.txt")
    assert read.kind == "too_large" and read.size == 13_000 and read.blob.data is None


def test_it_says_what_a_path_that_is_no_file_is(reader, history):
    first = history[0]
    assert read_file(reader, first, "src").kind == "directory"
    submodule = read_file(reader, first, "vendor/lib")
    assert submodule.kind == "submodule" and submodule.sha == PIN
    assert read_file(reader, first, "src/missing.py").kind == "missing"
    assert read_file(reader, first, "src/app.py/deeper").kind == "missing"


def test_it_reads_a_symbolic_link_as_its_target(repo, history):
    (repo.path / "link").symlink_to("src/app.py")
    commit = repo.commit("link")
    with GitReader(repo.git_dir) as reader:
        read = read_file(reader, commit, "link")
    assert read.kind == "symlink" and read.blob.text == "src/app.py"


@pytest.mark.parametrize("path", ["../etc/passwd", "/etc/passwd", "src/../../x", "src/\0app.py", ""])
def test_it_refuses_a_path_that_leaves_the_repository(reader, history, path):
    with pytest.raises(UnsafePath):
        read_file(reader, history[0], path)


def test_it_refuses_a_commit_the_repository_does_not_have(reader, history):
    with pytest.raises(CommitNotFound):
        tree_files(reader, "0" * 40)
    with pytest.raises(CommitNotFound):
        read_file(reader, "1234567", "src/app.py")
