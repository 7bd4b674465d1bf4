"""Blobs read in the background: a git process of its own, which needs nothing from the caller
once started, gives the same files as the reader's own process, as git writes them, refuses what
is missing, and leaves no process behind; and what changed between two commits, worked out in the
background, is what the reader would have asked git for."""
import subprocess

import pytest

from core.errors import RepositoryError
from engine.git import GitReader, TreeEntry
from engine.git.blobreads import MIN_BLOBS, BlobReads
from tests.gitrepo import GitRepoBuilder

MANY = 3 * MIN_BLOBS


@pytest.fixture
def many(tmp_path):
    """A commit of many files (more than a pipe holds), one binary, one over a small limit."""
    repo = GitRepoBuilder(tmp_path)
    for n in range(MANY):
        repo.write(f"many/file_{n}.txt", f"file {n}\n" * 400)
    repo.write("many/logo.png", b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
    repo.write("many/crlf.txt", "one\r\ntwo\r\n")
    return repo, repo.commit("many")


def paths():
    return [f"many/file_{n}.txt" for n in range(MANY)] + ["many/logo.png", "many/crlf.txt", "many/none.txt", "many"]


def test_it_gives_what_the_readers_own_process_gives(many):
    repo, sha = many
    with GitReader(repo.git_dir, max_blob_bytes=3000) as reader:
        expected = reader.read_blobs(sha, paths())
        assert reader.start_reading_blobs(sha, paths()).collect() == expected
    assert len(expected) == MANY + 2  # no file at the last two
    assert expected["many/file_100.txt"].too_large and expected["many/file_100.txt"].data is None
    assert expected["many/logo.png"].is_binary
    assert expected["many/crlf.txt"].lines() == ["one", "two"]


def test_git_works_on_while_the_caller_does_something_else(many):
    repo, sha = many
    with GitReader(repo.git_dir) as reader:
        reads = reader.start_reading_blobs(sha, paths())
        # Nothing is read from git here: its answers go to a file, so it finishes on its own.
        assert reads._git.proc.wait(timeout=30) == 0
        blobs = reads.collect()
    assert blobs["many/file_191.txt"].data == b"file 191\n" * 400


def test_the_blobs_come_as_git_writes_them(many):
    repo, sha = many
    with GitReader(repo.git_dir) as reader:
        reads = reader.start_reading_blobs(sha, paths())
        first = next(reads.each())
        # The first blob is in hand while git may still be writing the others.
        assert first[0] == "many/file_0.txt" and first[1].data == b"file 0\n" * 400
    assert dict(reader.start_reading_blobs(sha, paths()).each()) == reader.read_blobs(sha, paths())


def test_a_few_blobs_are_read_at_once_through_the_readers_process(many, monkeypatch):
    repo, sha = many
    with GitReader(repo.git_dir) as reader:
        reader.read_blob(sha, "many/crlf.txt")  # start the reader's process
        monkeypatch.setattr(subprocess, "Popen", lambda *a, **k: pytest.fail("a process for a few blobs"))
        blobs = reader.start_reading_blobs(sha, ["many/logo.png", "many/crlf.txt"]).collect()
    assert set(blobs) == {"many/logo.png", "many/crlf.txt"}


def test_a_missing_object_is_an_error_that_says_what_to_do(many):
    repo, sha = many
    with GitReader(repo.git_dir) as reader:
        entries = {entry.path: entry for entry in (reader.tree_entry(sha, path) for path in paths()[:MANY]) if entry}
    entries["many/lost.txt"] = TreeEntry("many/lost.txt", "100644", "blob", "0" * 40)
    reads = BlobReads(repo.git_dir, entries, 1_000_000)
    with pytest.raises(RepositoryError, match="missing.*re-fetch the mirror"):
        reads.collect()
    assert reads._git.proc.poll() is not None


def test_a_broken_git_is_an_error(many):
    repo, sha = many
    with GitReader(repo.git_dir) as reader:
        entries = {entry.path: entry for entry in (reader.tree_entry(sha, path) for path in paths()[:MANY])}
    elsewhere = repo.git_dir.parent / "not-a-repository"
    elsewhere.mkdir()
    reads = BlobReads(elsewhere, entries, 1_000_000)
    with pytest.raises(RepositoryError, match="git cat-file exited"):
        reads.collect()


def test_closing_before_collecting_stops_git(many):
    repo, sha = many
    with GitReader(repo.git_dir) as reader:
        reads = reader.start_reading_blobs(sha, paths())
    reads.close()
    assert reads._git.proc.poll() is not None and reads._git.stdout.closed


def test_the_verification_prefetch_reads_while_its_block_runs(many, monkeypatch):
    from engine.verification import files_prefetched
    from engine.verification.textcaches import cache_for, shared_texts

    repo, sha = many
    shared_texts.clear()
    with GitReader(repo.git_dir) as reader:
        with files_prefetched(reader, sha, paths() + ["../escape.txt", "many/*.txt"]):
            pass  # the caller's own work
        monkeypatch.setattr(GitReader, "read_blob", lambda *a: pytest.fail("read again"))
        assert cache_for(reader).file(reader, sha, "many/file_3.txt").lines[0] == "file 3"
        assert cache_for(reader).file(reader, sha, "many/logo.png").problem


def test_files_renamed_since_the_evidence_are_read_at_their_new_paths_with_the_others(tmp_path, monkeypatch):
    from engine.verification import EvidenceSpec, check_evidence, files_prefetched
    from engine.verification.textcaches import cache_for, shared_texts

    repo = GitRepoBuilder(tmp_path)
    for n in range(MANY):
        repo.write(f"src/file_{n}.py", f"value_{n} = {n}\nother_{n} = 0\nlast_{n} = 1\n")
    first = repo.commit("first")
    for n in range(0, MANY, 10):
        repo.rename(f"src/file_{n}.py", f"lib/file_{n}.py")
    second = repo.rename("src/file_1.py", "lib/renamed_and_changed.py").write(
        "lib/renamed_and_changed.py", "first = 0\nvalue_1 = 1\nother_1 = 0\nlast_1 = 1\n").commit("second")
    recorded = [f"src/file_{n}.py" for n in range(MANY)] + ["src/never_there.py"]
    shared_texts.clear()
    with GitReader(repo.git_dir) as reader:
        with files_prefetched(reader, second, recorded, since=[first]):
            pass
        # Every file the checks will ask for is in hand: none is read on its own.
        monkeypatch.setattr(GitReader, "read_blob", lambda *a: pytest.fail(f"read on its own: {a[1:]}"))
        for n in range(0, MANY, 10):
            assert cache_for(reader).file(reader, second, f"lib/file_{n}.py").lines[0] == f"value_{n} = {n}"
        result = check_evidence(
            reader, EvidenceSpec(kind="snippet", commit=first, path="src/file_1.py", start_line=2, end_line=2,
                                 text="other_1 = 0"), second,
        )
    assert (result.state, result.path) == ("holds", "lib/renamed_and_changed.py")
    assert result.detail == "file renamed from src/file_1.py to lib/renamed_and_changed.py; moved from line 2 to line 3"


def test_a_failure_in_the_block_stops_the_prefetch(many, monkeypatch):
    from engine.verification import files_prefetched
    from engine.verification.textcaches import shared_texts

    shared_texts.clear()  # nothing known from an earlier test: every file is read

    repo, sha = many
    started = []
    original = GitReader.start_reading_blobs
    monkeypatch.setattr(
        GitReader, "start_reading_blobs", lambda self, c, ps: started.append(original(self, c, ps)) or started[-1]
    )
    with GitReader(repo.git_dir) as reader, pytest.raises(RuntimeError, match="the caller's own work failed"):
        with files_prefetched(reader, sha, paths()):
            raise RuntimeError("the caller's own work failed")
    assert started[0]._git.proc.poll() is not None and started[0]._git.stdout.closed


def test_changes_worked_out_in_the_background_are_what_git_says(tmp_path):
    repo = GitRepoBuilder(tmp_path)
    first = repo.write("a.py", "alpha = 1\n" * 50).write("b.py", "beta = 2\n").commit("first")
    second = repo.rename("a.py", "src/a.py").write("b.py", "beta = 3\n").write("c.py", "c\n").commit("second")
    with GitReader(repo.git_dir) as reader:
        expected = reader.changes(first, second)
    with GitReader(repo.git_dir) as reader:
        reader.start_changes(first, second)
        started = reader._changes_started[(first, second)]
        assert reader.changes(first, second) == expected
        assert started.stdout.closed and not reader._changes_started
    assert {change.status for change in expected} == {"R", "M", "A"}


def test_changes_started_and_never_asked_for_end_with_the_reader(tmp_path):
    repo = GitRepoBuilder(tmp_path)
    first = repo.write("a.py", "a\n").commit("first")
    second = repo.write("a.py", "b\n").commit("second")
    reader = GitReader(repo.git_dir)
    reader.start_changes(first, second)
    started = reader._changes_started[(first, second)]
    reader.close()
    assert started.proc.poll() is not None and started.stdout.closed


def test_a_git_that_stops_writing_is_an_error_and_is_stopped(many, monkeypatch, tmp_path):
    from engine.git import blobreads, process

    repo, sha = many
    stuck = tmp_path / "stuck-git"
    stuck.write_text("#!/bin/sh\nexec sleep 60\n")
    stuck.chmod(0o755)
    with GitReader(repo.git_dir) as reader:
        entries = {path: reader.tree_entry(sha, path) for path in paths()[:MANY]}
    monkeypatch.setattr(process, "GIT", str(stuck))  # a git that runs and writes nothing
    monkeypatch.setattr(blobreads._Written, "_STALLED_SECONDS", 0.2)
    original_wait = process.GitStarted.wait
    monkeypatch.setattr(process.GitStarted, "wait", lambda self, timeout=0.2: original_wait(self, timeout))
    reads = BlobReads(repo.git_dir, entries, 1_000_000)
    with pytest.raises(RepositoryError, match="did not finish within"):
        reads.collect()
    assert reads._git.proc.poll() is not None and reads._git.stdout.closed
