"""Bad input and unusable repository content become "error" results, never exceptions."""

import pytest

from engine.verification import EvidenceSpec, check_evidence
from engine.git import GitReader
from tests.gitrepo import GitRepoBuilder


@pytest.fixture
def repo(tmp_path):
    return GitRepoBuilder(tmp_path)


@pytest.fixture
def base(repo):
    return (
        repo.write("app.py", "print('hi')\n")
        .write("data.bin", b"PK\x03\x04\x00\x00binary")
        .write("big.py", "x = 1\n" * 1000)
        .commit("base")
    )


def check(repo, spec, target, **options):
    with GitReader(repo.git_dir, **options) as reader:
        return check_evidence(reader, spec, target)


def snippet(commit, path="app.py", text="print('hi')"):
    return EvidenceSpec("snippet", commit=commit, path=path, start_line=1, end_line=1, text=text)


def assert_error(result, *words):
    assert result.state == "error"
    assert (result.path, result.start_line, result.end_line) == (None, None, None)
    for word in words:
        assert word in result.detail


def test_an_unknown_target_commit_is_an_error(repo, base):
    assert_error(check(repo, snippet(base), "deadbeefdeadbeef"), "no commit 'deadbeefdeadbeef'", "fetch")


def test_an_unknown_evidence_commit_is_an_error(repo, base):
    assert_error(check(repo, snippet("feedfacefeedface"), base), "no commit 'feedfacefeedface'")


def test_an_ambiguous_abbreviated_commit_is_an_error_naming_the_candidates(repo, base):
    candidates = repo.colliding_commits()

    result = check(repo, snippet(candidates[0][:7]), base)

    assert_error(result, "ambiguous", *candidates)


@pytest.mark.parametrize("kind", ["snippet", "pattern", "path", "gitlink"])
@pytest.mark.parametrize(("path", "reason"), [("../etc/passwd", "'..'"), ("/etc/passwd", "absolute"), ("-x", "'-'")])
def test_unsafe_paths_are_errors_for_every_kind(repo, base, kind, path, reason):
    spec = EvidenceSpec(kind, commit=base, path=path, start_line=1, text="x", regex="x", sha="3961f399")

    assert_error(check(repo, spec, base), reason)


def test_a_binary_file_is_an_error(repo, base):
    assert_error(check(repo, snippet(base, path="data.bin"), base), "data.bin is a binary file")


def test_an_oversized_file_is_an_error(repo, base):
    result = check(repo, snippet(base, path="big.py", text="x = 1"), base, max_blob_bytes=1000)

    assert_error(result, "big.py is 6000 bytes", "1000-byte limit", "max_blob_bytes")


def test_a_note_is_not_checkable_by_machine(repo, base):
    result = check(repo, EvidenceSpec("note", text="Ask the team about retries."), base)

    assert result.state == "unchecked"
    assert result.detail == "not checkable by machine"


def test_an_unknown_kind_is_an_error(repo, base):
    assert_error(check(repo, EvidenceSpec("screenshot"), base), "unknown evidence kind 'screenshot'")


def test_evidence_without_a_path_is_an_error(repo, base):
    for kind in ("snippet", "pattern", "path", "gitlink"):
        assert_error(check(repo, EvidenceSpec(kind, regex="x", sha="3961f399"), base), "needs")


@pytest.mark.parametrize(
    "spec",
    [
        EvidenceSpec("snippet", path=["app.py"], text="x"),
        EvidenceSpec("pattern", path=7, regex="x"),
        EvidenceSpec("path", path=b"app.py"),
        EvidenceSpec("gitlink", path="vendor/lib", sha=0x3961F399),
        EvidenceSpec("snippet", commit=["abc1234"], path="app.py", start_line="1", text="x"),
        EvidenceSpec("pattern", path="app.py", regex=None),
    ],
)
def test_wrongly_typed_fields_are_errors_not_crashes(repo, base, spec):
    assert check(repo, spec, base).state == "error"


def test_a_bad_start_line_is_an_error(repo, base):
    spec = EvidenceSpec("snippet", commit=base, path="app.py", start_line=0, text="print('hi')")

    assert_error(check(repo, spec, base), "not a line number")


def test_a_broken_repository_read_is_an_error_not_a_crash(repo, base):
    with GitReader(repo.git_dir) as reader:
        reader.resolve(base)
        reader._proc.kill()  # simulate git dying mid-run
        reader._proc.wait()
        reader._proc.poll = lambda: None  # ...unnoticed until the next read

        result = check_evidence(reader, snippet(base), base)

    assert_error(result, "git cat-file", "re-fetch")
