"""Blobs read in the background: git processes of their own, which need nothing from the caller
once started, give the same files as the reader's own process, refuse what is missing, and
leave no process behind."""
import subprocess

import pytest

from core.errors import RepositoryError
from engine.git import GitReader, TreeEntry
from engine.git.blobreads import MIN_BLOBS_PER_PROCESS, BlobReads
from tests.gitrepo import GitRepoBuilder

MANY = 3 * MIN_BLOBS_PER_PROCESS


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
        reads = reader.start_reading_blobs(sha, paths())
        assert len(reads._parts) == 2  # split between two processes
        assert reads.collect() == expected
    assert len(expected) == MANY + 2  # no file at the last two
    assert expected["many/file_100.txt"].too_large and expected["many/file_100.txt"].data is None
    assert expected["many/logo.png"].is_binary
    assert expected["many/crlf.txt"].lines() == ["one", "two"]


def test_git_works_on_while_the_caller_does_something_else(many):
    repo, sha = many
    with GitReader(repo.git_dir) as reader:
        reads = reader.start_reading_blobs(sha, paths())
        # Nothing is read from git here: its answers go to files, so it finishes on its own.
        for part in reads._parts:
            assert part.proc.wait(timeout=30) == 0
        blobs = reads.collect()
    assert blobs["many/file_191.txt"].data == b"file 191\n" * 400


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
    assert all(part.proc.poll() is not None for part in reads._parts)


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
    processes = [part.proc for part in reads._parts]
    reads.close()
    assert all(proc.poll() is not None for proc in processes)
    assert all(part.answers.closed for part in reads._parts)


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


def test_a_failure_in_the_block_stops_the_prefetch(many, monkeypatch):
    from engine.verification import files_prefetched

    repo, sha = many
    started = []
    original = GitReader.start_reading_blobs
    monkeypatch.setattr(
        GitReader, "start_reading_blobs", lambda self, c, ps: started.append(original(self, c, ps)) or started[-1]
    )
    with GitReader(repo.git_dir) as reader, pytest.raises(RuntimeError, match="the caller's own work failed"):
        with files_prefetched(reader, sha, paths()):
            raise RuntimeError("the caller's own work failed")
    assert all(part.proc.poll() is not None and part.answers.closed for part in started[0]._parts)
