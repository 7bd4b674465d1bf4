import os
import subprocess
from datetime import datetime, timedelta, timezone

import pytest

from core.errors import AmbiguousCommit, CommitNotFound, RepositoryError, UnsafePath
from engine.git import Change, GitReader
from tests.gitrepo import GitRepoBuilder

EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"
PIN = "3961f399" + "ab" * 16


@pytest.fixture
def repo(tmp_path):
    return GitRepoBuilder(tmp_path)


@pytest.fixture
def history(repo):
    """Two commits: a few files, then a rename, an edit, a deletion and an addition."""
    first = (
        repo.write("src/app.py", "import os\n\ndef main():\n    return os.getcwd()\n")
        .write("docs/guide.md", "# Guide\n" + "Some prose.\n" * 20)
        .write("old.txt", "to be removed\n")
        .write("logo.png", b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
        .write("windows.txt", "one\r\ntwo\r\n")
        .gitlink("vendor/lib", PIN)
        .commit("first")
    )
    second = (
        repo.rename("docs/guide.md", "docs/manual.md")
        .write("src/app.py", "import os\n\ndef main():\n    return os.getcwd() or '/'\n")
        .delete("old.txt")
        .write("src/new.py", "NEW = True\n")
        .commit("second")
    )
    return first, second


@pytest.fixture
def reader(repo, history):
    with GitReader(repo.git_dir) as reader:
        yield reader


def test_it_resolves_full_and_abbreviated_shas_and_refs(repo, reader, history):
    first, second = history
    repo.tag("v1", first)

    assert reader.resolve(first) == first
    assert reader.resolve(first[:7]) == first
    assert reader.resolve(first[:12].upper()) == first
    assert reader.resolve("main") == second
    assert reader.resolve("v1") == first


def test_an_unknown_commit_is_reported_as_not_found(reader):
    with pytest.raises(CommitNotFound, match="no commit 'deadbeefdeadbeef'.*fetch"):
        reader.resolve("deadbeefdeadbeef")


def test_a_sha_that_names_a_file_is_not_a_commit(repo, reader, history):
    blob = repo.git("rev-parse", f"{history[0]}:src/app.py")
    with pytest.raises(CommitNotFound):
        reader.resolve(blob)


def test_hex_shorter_than_the_minimum_is_not_taken_as_an_abbreviated_sha(reader, history):
    with pytest.raises(CommitNotFound, match="at least 7"):
        reader.resolve(history[0][:6])


def test_the_minimum_abbreviation_can_be_lowered(repo, history):
    with GitReader(repo.git_dir, min_abbrev=4) as reader:
        assert reader.resolve(history[0][:6]) == history[0]


def test_an_option_like_revision_never_reaches_git(reader):
    with pytest.raises(CommitNotFound, match="starts with '-'"):
        reader.resolve("--all")


def test_an_ambiguous_abbreviation_names_its_candidates(repo, reader):
    candidates = repo.colliding_commits()
    prefix = candidates[0][:7]
    assert candidates[1].startswith(prefix)

    with pytest.raises(AmbiguousCommit) as caught:
        reader.resolve(prefix)

    assert caught.value.candidates == tuple(sorted(candidates))
    assert all(sha in str(caught.value) for sha in candidates)
    assert "more characters" in str(caught.value)
    assert reader.resolve(candidates[0][:12]) == candidates[0]


def test_it_reads_commit_details(reader, history):
    first, second = history
    info = reader.commit_info(second[:10])

    assert info.sha == second
    assert info.message == "second"
    assert info.author == "Ada Reviewer <ada@example.com>"
    assert info.parents == (first,)
    assert info.committed_at.tzinfo is not None
    assert reader.commit_info(first).committed_at < info.committed_at


def test_commit_times_keep_the_committers_offset(repo):
    body = (
        f"tree {EMPTY_TREE}\nauthor Bo <bo@example.com> 1700000000 +0130\n"
        "committer Cy <cy@example.com> 1700003600 -0500\nencoding ISO-8859-1\n\nCaf\xe9\n"
    ).encode("latin-1")
    sha = repo.write_object("commit", body)

    with GitReader(repo.git_dir) as reader:
        info = reader.commit_info(sha)

    assert info.committed_at == datetime(2023, 11, 14, 23, 13, 20, tzinfo=timezone.utc)
    assert info.committed_at.utcoffset() == timedelta(hours=-5)
    assert info.author == "Bo <bo@example.com>"
    assert info.message == "Café"
    assert info.parents == ()


def test_it_reads_a_file_at_a_commit(reader, history):
    blob = reader.read_blob(history[0], "./src//app.py")

    assert blob.path == "src/app.py"
    assert blob.text.startswith("import os")
    assert blob.lines() == ["import os", "", "def main():", "    return os.getcwd()"]
    assert blob.size == len(blob.data)
    assert not blob.is_binary and not blob.too_large


def test_crlf_line_ends_read_like_lf(reader, history):
    assert reader.read_blob(history[0], "windows.txt").lines() == ["one", "two"]


def test_a_missing_file_or_a_directory_reads_as_none(reader, history):
    first, second = history
    assert reader.read_blob(first, "nope.py") is None
    assert reader.read_blob(second, "old.txt") is None
    assert reader.read_blob(first, "src") is None
    assert reader.read_blob(first, "vendor/lib") is None


def test_a_file_with_a_nul_byte_is_binary(reader, history):
    blob = reader.read_blob(history[0], "logo.png")
    assert blob.is_binary and blob.data is not None


def test_an_oversized_file_is_flagged_without_being_loaded(repo, history):
    with GitReader(repo.git_dir, max_blob_bytes=100) as reader:
        big = reader.read_blob(history[0], "docs/guide.md")
        small = reader.read_blob(history[0], "src/app.py")

    assert big.too_large and big.data is None and big.text == ""
    assert big.size == len("# Guide\n" + "Some prose.\n" * 20)
    assert not big.is_binary
    assert small.data.startswith(b"import os")  # the stream stayed in step


def test_unsafe_paths_are_refused(reader, history):
    for path in ("../etc/passwd", "/etc/passwd", "-p", "a\nb"):
        with pytest.raises(UnsafePath):
            reader.read_blob(history[0], path)


def test_a_gitlink_is_a_commit_entry_with_mode_160000(reader, history):
    entry = reader.tree_entry(history[1], "vendor/lib")

    assert (entry.path, entry.mode, entry.type, entry.sha) == ("vendor/lib", "160000", "commit", PIN)


def test_tree_entries_describe_files_and_directories(repo, reader, history):
    file = reader.tree_entry(history[0], "src/app.py")
    directory = reader.tree_entry(history[0], "src")

    assert (file.mode, file.type) == ("100644", "blob")
    assert file.sha == repo.git("rev-parse", f"{history[0]}:src/app.py")
    assert (directory.mode, directory.type) == ("040000", "tree")
    assert reader.tree_entry(history[0], "src/missing.py") is None
    assert reader.tree_entry(history[0], "missing/dir/file.py") is None
    assert reader.tree_entry(history[0], "src/app.py/inner") is None


def test_it_lists_every_file_but_not_submodules(reader, history):
    assert reader.list_paths(history[1]) == [
        "docs/manual.md", "logo.png", "src/app.py", "src/new.py", "windows.txt",
    ]


def test_it_lists_changes_with_renames(reader, history):
    changes = reader.changes(history[0], history[1])

    assert sorted(changes, key=lambda change: change.status) == [
        Change("A", None, "src/new.py"),
        Change("D", "old.txt", None),
        Change("M", "src/app.py", "src/app.py"),
        Change("R", "docs/guide.md", "docs/manual.md"),
    ]
    assert reader.changes(history[1], history[1]) == []


def test_file_names_that_are_not_utf8_survive_the_round_trip(repo):
    name = os.fsdecode(b"caf\xe9.txt")
    sha = repo.write(name, "bonjour\n").commit("latin-1 name")

    with GitReader(repo.git_dir) as reader:
        assert reader.list_paths(sha) == [name]
        assert reader.read_blob(sha, name).text == "bonjour\n"


def test_many_reads_share_one_cat_file_process(monkeypatch, reader, history):
    reader.read_blob(history[0], "src/app.py")
    pid = reader.cat_file_pid
    assert pid is not None

    started = []
    real_popen = subprocess.Popen
    monkeypatch.setattr(subprocess, "Popen", lambda *a, **k: started.append(a) or real_popen(*a, **k))
    for _ in range(100):
        for commit in history:
            reader.read_blob(commit, "src/app.py")
            reader.read_blob(commit, "windows.txt")
            reader.tree_entry(commit, "vendor/lib")
            reader.commit_info(commit)

    assert reader.cat_file_pid == pid
    assert started == []


def test_closing_the_reader_ends_its_process(repo, history):
    with GitReader(repo.git_dir) as reader:
        reader.read_blob(history[0], "src/app.py")
        pid = reader.cat_file_pid

    assert reader.cat_file_pid is None
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)


def test_a_reader_restarts_cat_file_if_it_died(reader, history):
    reader.read_blob(history[0], "src/app.py")
    old_pid = reader.cat_file_pid
    os.kill(old_pid, 9)

    try:  # the read may or may not be the one that notices the death...
        reader.read_blob(history[0], "src/app.py")
    except RepositoryError as exc:
        assert "re-fetch" in str(exc)
    # ...but the reader carries on with a fresh process.
    assert reader.read_blob(history[0], "src/app.py").text.startswith("import os")
    assert reader.cat_file_pid not in (None, old_pid)


def test_a_directory_that_is_not_a_repository_is_refused(tmp_path):
    with pytest.raises(RepositoryError, match="not a git repository"):
        GitReader(tmp_path)


def test_it_reads_many_files_in_one_pipelined_exchange(monkeypatch, reader, history):
    _, second = history
    reader.read_blob(second, "src/app.py")  # start the process
    started = []
    monkeypatch.setattr(subprocess, "Popen", lambda *a, **k: started.append(a) or pytest.fail("new process"))
    blobs = reader.read_blobs(second, ["src/app.py", "src/new.py", "logo.png", "old.txt", "src", "vendor/lib"])
    assert set(blobs) == {"src/app.py", "src/new.py", "logo.png"}  # no file at the others
    assert blobs["src/new.py"].data == b"NEW = True\n" and not blobs["src/new.py"].is_binary
    assert blobs["logo.png"].is_binary
    assert blobs["src/app.py"].lines()[-1] == "    return os.getcwd() or '/'"
    assert reader.read_blob(second, "src/new.py").data == b"NEW = True\n"  # still in step afterwards
    assert not started


def test_many_files_are_more_than_a_pipe_holds(repo):
    for n in range(300):
        repo.write(f"many/file_{n}.txt", f"file {n}\n" * 400)
    sha = repo.commit("many")
    with GitReader(repo.git_dir) as reader:
        blobs = reader.read_blobs(sha, [f"many/file_{n}.txt" for n in range(300)])
    assert len(blobs) == 300 and blobs["many/file_299.txt"].data == b"file 299\n" * 400


def test_it_gives_the_hunks_of_gits_diff_between_two_blobs(repo, tmp_path):
    from engine.verification.linemaps import LineMap

    old_text = "".join(f"line {n}\n" for n in range(1, 11))
    new_text = old_text.replace("line 3\n", "").replace("line 7\n", "line 7\nadded a\nadded b\n") + "end\r\n"
    first = repo.write("f.txt", old_text).commit("old")
    second = repo.write("f.txt", new_text.replace("line 9\n", "line 9   \n")).commit("new")
    with GitReader(repo.git_dir) as reader:
        old_blob, new_blob = reader.tree_entry(first, "f.txt").sha, reader.tree_entry(second, "f.txt").sha
        hunks = reader.blob_line_changes(old_blob, new_blob)
        assert reader.blob_line_changes(old_blob, old_blob) == []
    # Line 3 removed, two lines after line 7, one at the end; line 9's trailing spaces are no change.
    assert hunks == [(3, 1, 2, 0), (7, 0, 7, 2), (10, 0, 12, 1)]
    mapping = LineMap(hunks, old_length=10)
    assert [mapping.map(line) for line in (0, 1, 3, 6, 7, 9)] == [0, 1, 2, 5, 8, 10]


def test_the_diffs_of_many_files_from_one_process_are_each_blob_pair_s_own(repo):
    old = repo.write("a.py", "".join(f"a{n}\n" for n in range(30))).write("b[1].py", "one\ntwo\nthree\n") \
        .write("same.py", "x\n").write("data.bin", b"\x00\x01" * 50).write("gone.py", "bye\n").commit("old")
    repo.write("a.py", "".join(f"a{n}\n" for n in range(30)).replace("a3\n", "A3\n").replace("a20\n", ""))
    repo.write("b[1].py", "one\n2\nthree\nfour\n").write("data.bin", b"\x00\x02" * 50)
    new = repo.write("b1.py", "not matched by the bracket\n").delete("gone.py").commit("new")
    paths = ["a.py", "b[1].py", "same.py", "data.bin", "gone.py"]

    with GitReader(repo.git_dir) as reader:
        found = reader.files_line_changes(old, new, paths)
        pairs = {path: (reader.tree_entry(old, path).sha, reader.tree_entry(new, path).sha)
                 for path in ("a.py", "b[1].py")}
        # The changed text files only: not the unchanged one, the binary one or the deleted one.
        assert set(found) == set(pairs.values())
        for old_blob, new_blob in pairs.values():
            assert found[(old_blob, new_blob)] == reader.blob_line_changes(old_blob, new_blob)
        assert found[pairs["b[1].py"]] == [(2, 1, 2, 1), (3, 0, 4, 1)]
