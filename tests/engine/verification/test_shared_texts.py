"""Decoded blobs are shared between readers by SHA: a second verification of the same code reads
no blob from git again, a changed file is read afresh, and a reader with a smaller size limit never
gets a blob it would have refused."""
from engine.git import GitReader

from engine.verification import textcaches
from engine.verification.filetexts import FileText
from tests.gitrepo import GitRepoBuilder


def reads(monkeypatch):
    counted = []
    original_one, original_many = GitReader.read_blob, GitReader.read_blobs
    original_started = GitReader.start_reading_blobs
    monkeypatch.setattr(GitReader, "read_blob", lambda self, c, p: counted.append(p) or original_one(self, c, p))
    monkeypatch.setattr(
        GitReader, "read_blobs", lambda self, c, ps: counted.extend(ps) or original_many(self, c, list(ps))
    )
    monkeypatch.setattr(
        GitReader, "start_reading_blobs",
        lambda self, c, ps: counted.extend(ps) or original_started(self, c, list(ps)),
    )
    return counted


def test_a_second_reader_reads_only_what_changed(tmp_path, monkeypatch):
    textcaches.shared_texts.clear()
    repo = GitRepoBuilder(tmp_path)
    first = repo.write("a.py", "alpha = 1\n").write("b.py", "beta = 2\n").commit("first")
    counted = reads(monkeypatch)
    with GitReader(repo.git_dir) as reader:
        textcaches.cache_for(reader).prefetch(reader, first, ["a.py", "b.py"])
    assert sorted(counted) == ["a.py", "b.py"]

    second = repo.write("b.py", "beta = 3\n").commit("second")
    counted.clear()
    with GitReader(repo.git_dir) as reader:
        cache = textcaches.cache_for(reader)
        cache.prefetch(reader, second, ["a.py", "b.py"])
        assert cache.file(reader, second, "a.py").lines == ("alpha = 1",)
        assert cache.file(reader, second, "b.py").lines == ("beta = 3",)
        assert cache.file(reader, first, "b.py").lines == ("beta = 2",)  # one at a time, shared too
    assert counted == ["b.py"]


def test_a_smaller_limit_is_not_given_a_larger_blob(tmp_path):
    textcaches.shared_texts.clear()
    repo = GitRepoBuilder(tmp_path)
    sha = repo.write("big.py", "x = 1\n" * 100).commit("big")
    with GitReader(repo.git_dir) as reader:
        assert not textcaches.cache_for(reader).file(reader, sha, "big.py").problem
    with GitReader(repo.git_dir, max_blob_bytes=100) as reader:
        text = textcaches.cache_for(reader).file(reader, sha, "big.py")
    assert text.too_large and "limit" in text.problem


def test_the_shared_texts_keep_to_their_budget():
    shared = textcaches.SharedTexts(budget_chars=10)
    for index in range(5):
        shared.put(FileText(f"f{index}", f"sha{index}", ["abcd"]), 1000)
    kept = [index for index in range(5) if shared.get(f"sha{index}", 1000) is not None]
    assert kept == [3, 4]


def test_the_lines_kept_are_out_of_the_collectors_passes(tmp_path):
    """The caches keep thousands of files' lines as long as a run or a worker lasts: as tuples of
    strings, which the collector stops tracking after one pass, not lists it walks on every pass."""
    import gc

    repo = GitRepoBuilder(tmp_path)
    sha = repo.write("a.py", "  alpha = 1  \nbeta = 2\n").commit("first")
    with GitReader(repo.git_dir) as reader:
        text = textcaches.cache_for(reader).file(reader, sha, "a.py")
        kept = [text.lines, text.keys, text.stripped]
        gc.collect()
    assert kept == [("  alpha = 1  ", "beta = 2"), ("  alpha = 1", "beta = 2"), ("alpha = 1", "beta = 2")]
    assert not any(map(gc.is_tracked, kept))


def test_the_diff_between_two_blobs_is_asked_of_git_once_whatever_the_reader(tmp_path, monkeypatch):
    textcaches.shared_line_changes.clear()
    repo = GitRepoBuilder(tmp_path)
    first = repo.write("a.py", "alpha = 1\nbeta = 2\n").write("b.py", "gamma = 3\n").commit("first")
    second = repo.write("a.py", "alpha = 1\nbeta = 20\n").write("b.py", "gamma = 30\n").commit("second")
    asked = []
    original_one, original_many = GitReader.blob_line_changes, GitReader.files_line_changes
    monkeypatch.setattr(GitReader, "blob_line_changes",
                        lambda self, old, new: asked.append("one") or original_one(self, old, new))
    monkeypatch.setattr(GitReader, "files_line_changes",
                        lambda self, old, new, paths: asked.append("many") or original_many(self, old, new, paths))

    with GitReader(repo.git_dir) as reader:
        cache = textcaches.cache_for(reader)
        cache.prefetch_line_changes(reader, first, second, ["a.py", "b.py"])
        before, after = cache.file(reader, first, "a.py"), cache.file(reader, second, "a.py")
        hunks = cache.line_changes(reader, before, after)
    with GitReader(repo.git_dir) as reader:
        cache = textcaches.cache_for(reader)
        cache.prefetch_line_changes(reader, first, second, ["a.py", "b.py"])
        assert cache.line_changes(reader, cache.file(reader, first, "a.py"), cache.file(reader, second, "a.py")) \
            == hunks == [(2, 1, 2, 1)]

    assert asked == ["many"]
