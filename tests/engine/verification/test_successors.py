"""What became of a snippet (or a pattern's lines) that is gone: its successor, read from git's diff
of a real repository between the commit the evidence was recorded at and the one checked."""
import pytest

from engine.git import GitReader
from engine.verification import EvidenceChecks, EvidenceSpec, check_evidence, snippet_text_at
from engine.verification.successors import (
    FILE_DELETED,
    MOVED_AND_CHANGED,
    REMOVED,
    REWRITTEN,
    SIMILARITY_FLOOR,
    Successor,
    larger_than_rewrite,
    replaced_span,
)
from tests.engine.verification.snippet_repo import SNIPPET, VIEW, check, snippet


def lines_at(repo, target, successor):
    with GitReader(repo.git_dir) as reader:
        return snippet_text_at(reader, target, successor.path, successor.start_line, successor.end_line)


def both_ways(repo, spec, target, **options):
    """The result checked alone and among many (EvidenceChecks), which must agree."""
    alone = check(repo, spec, target, **options)
    with GitReader(repo.git_dir, **options) as reader:
        checks = EvidenceChecks(reader, target)
        number = checks.add(spec)
        together = checks.results()[number]
    assert (together.state, together.successor) == (alone.state, alone.successor)
    return alone


def test_lines_replaced_in_place_are_rewritten_with_the_new_lines(repo, base):
    target = repo.write("app/views.py", VIEW.replace(
        '    path = request.GET["file"]\n    return open(os.path.join(ROOT, path)).read()\n',
        '    name = request.GET.get("file", "")\n    path = safe_join(ROOT, name)\n    return read_text(path)\n',
    )).commit("read through safe_join")

    result = both_ways(repo, snippet(base), target)

    assert result.state == "gone"
    successor = result.successor
    assert (successor.kind, successor.path, successor.start_line, successor.end_line) == (
        REWRITTEN, "app/views.py", 6, 8)
    assert (successor.recorded_path, successor.recorded_start, successor.recorded_end) == ("app/views.py", 6, 7)
    assert not successor.larger
    assert lines_at(repo, target, successor) == successor.text == (
        '    name = request.GET.get("file", "")\n    path = safe_join(ROOT, name)\n    return read_text(path)'
    )
    assert successor.recorded_text == SNIPPET


def test_a_file_renamed_and_rewritten_in_one_commit_is_followed_to_its_new_name(repo, base):
    repo.rename("app/views.py", "app/handlers.py")
    target = repo.write("app/handlers.py", VIEW.replace(
        '    path = request.GET["file"]\n', '    path = clean(request.GET["file"])\n'
    )).commit("rename and clean")

    result = both_ways(repo, snippet(base), target)

    assert result.detail == "no longer in app/handlers.py (renamed from app/views.py)"
    successor = result.successor
    assert (successor.kind, successor.path, successor.start_line, successor.end_line) == (
        REWRITTEN, "app/handlers.py", 6, 7)
    assert successor.recorded_path == "app/views.py"
    assert lines_at(repo, target, successor) == (
        '    path = clean(request.GET["file"])\n    return open(os.path.join(ROOT, path)).read()'
    )


BLOCK = """\
def load(paths):
    result = []
    for path in paths:
        result.append(read_sample(path))
    validate_samples(result)
    return result


def unrelated():
    return 1
"""
BLOCK_SNIPPET = "\n".join(BLOCK.splitlines()[1:6])  # lines 2-6


def block_spec(commit, path="loader.py"):
    return EvidenceSpec("snippet", commit=commit, path=path, start_line=2, end_line=6, text=BLOCK_SNIPPET)


def test_a_snippet_split_between_two_hunks_is_succeeded_by_their_span(repo):
    base = repo.write("loader.py", BLOCK).commit("base")
    target = repo.write("loader.py", BLOCK.replace("    result = []\n", "    result: list = []\n").replace(
        "    return result\n", "    return tuple(result)\n"
    )).commit("two edits")

    result = both_ways(repo, block_spec(base), target)

    successor = result.successor
    assert (successor.kind, successor.start_line, successor.end_line) == (REWRITTEN, 2, 6)
    assert lines_at(repo, target, successor) == (
        "    result: list = []\n    for path in paths:\n        result.append(read_sample(path))\n"
        "    validate_samples(result)\n    return tuple(result)"
    )


def test_a_hunk_that_touches_the_first_line_only_leaves_the_rest_in_the_successor(repo):
    base = repo.write("loader.py", BLOCK).commit("base")
    target = repo.write("loader.py", BLOCK.replace("    result = []\n", "    result = [] if paths else None\n")) \
        .commit("first line")

    successor = both_ways(repo, block_spec(base), target).successor

    assert (successor.kind, successor.start_line, successor.end_line) == (REWRITTEN, 2, 6)
    assert lines_at(repo, target, successor).splitlines()[0] == "    result = [] if paths else None"


def test_a_rewrite_much_larger_than_the_snippet_is_given_whole_and_flagged(repo):
    base = repo.write("loader.py", BLOCK).commit("base")
    grown = "".join(f"    step_{n} = prepare({n})\n" for n in range(30))
    target = repo.write("loader.py", BLOCK.replace("    result = []\n", grown)).commit("thirty lines")

    successor = both_ways(repo, block_spec(base), target).successor

    # The thirty new lines and the four of the snippet left as they were: never cut to five.
    assert (successor.kind, successor.start_line, successor.end_line, successor.larger) == (REWRITTEN, 2, 35, True)
    assert lines_at(repo, target, successor).splitlines()[-1] == "    return result"
    # What is kept to be shown is bounded, and says so; the bounds above are not.
    assert successor.text.count("\n") + 1 == 34 and not successor.cut


def test_what_a_successor_keeps_to_show_is_cut_at_forty_lines_and_says_so(repo):
    base = repo.write("loader.py", BLOCK).commit("base")
    grown = "".join(f"    step_{n} = prepare({n})\n" for n in range(60))
    target = repo.write("loader.py", BLOCK.replace("    result = []\n", grown)).commit("sixty lines")

    successor = both_ways(repo, block_spec(base), target).successor

    assert (successor.start_line, successor.end_line, successor.cut) == (2, 65, True)
    assert len(successor.text.splitlines()) == 40


def test_lines_deleted_with_nothing_in_their_place_are_removed_at_the_line_where_they_were(repo, base):
    target = repo.write("app/views.py", VIEW.replace(
        '    path = request.GET["file"]\n    return open(os.path.join(ROOT, path)).read()\n', ""
    )).commit("drop the read")

    successor = both_ways(repo, snippet(base), target).successor

    assert (successor.kind, successor.path, successor.start_line, successor.end_line) == (
        REMOVED, "app/views.py", 6, None)
    with GitReader(repo.git_dir) as reader:
        assert snippet_text_at(reader, target, "app/views.py", 5, 6) == "    user = request.user\n"


def test_a_block_moved_to_another_file_and_edited_on_the_way_is_its_near_copy(repo):
    base = repo.write("loader.py", BLOCK).write("samples.py", "import os\n").commit("base")
    edited = BLOCK_SNIPPET.replace("validate_samples(result)", "validate_samples(result, strict=True)")
    repo.write("loader.py", BLOCK.replace(BLOCK_SNIPPET + "\n", "    return load_all(paths)\n"))
    target = repo.write("samples.py", "import os\n\n\ndef load_all(paths):\n" + edited + "\n").commit("move")

    successor = both_ways(repo, block_spec(base), target).successor

    # The old place was rewritten to one line, but the snippet's lines went to samples.py: the diff
    # of loader.py is one hunk replacing five lines by one, so the rewrite is what it reports.
    assert successor.kind == REWRITTEN
    assert lines_at(repo, target, successor) == "    return load_all(paths)"


def test_a_block_removed_from_its_file_and_edited_elsewhere_is_moved_and_changed(repo):
    base = repo.write("loader.py", BLOCK).write("samples.py", "import os\n").commit("base")
    edited = BLOCK_SNIPPET.replace("validate_samples(result)", "validate_samples(result, strict=True)")
    repo.write("loader.py", BLOCK.replace("def load(paths):\n" + BLOCK_SNIPPET + "\n\n\n", ""))
    target = repo.write("samples.py", "import os\n\n\ndef load_all(paths):\n" + edited + "\n").commit("move")

    result = both_ways(repo, block_spec(base), target)

    successor = result.successor
    assert (successor.kind, successor.path, successor.start_line, successor.end_line) == (
        MOVED_AND_CHANGED, "samples.py", 5, 9)
    assert SIMILARITY_FLOOR <= successor.similarity < 1
    assert lines_at(repo, target, successor) == successor.text == edited
    assert successor.recorded_text == BLOCK_SNIPPET


def test_a_removed_block_with_no_copy_alike_enough_stays_removed(repo):
    base = repo.write("loader.py", BLOCK).write("samples.py", "import os\n").commit("base")
    repo.write("loader.py", BLOCK.replace("def load(paths):\n" + BLOCK_SNIPPET + "\n\n\n", ""))
    # One line of the snippet survives elsewhere, in code that is otherwise something else.
    other = "def other():\n    for path in paths:\n        emit(path, 'x' * 40)\n        flush_everything_now()\n"
    target = repo.write("samples.py", "import os\n\n\n" + other).commit("remove")

    successor = both_ways(repo, block_spec(base), target).successor

    assert (successor.kind, successor.path, successor.start_line, successor.end_line) == (
        REMOVED, "loader.py", 1, None)


def test_a_deleted_file_with_no_near_copy_is_file_deleted(repo, base):
    target = repo.delete("app/views.py").commit("drop the view")

    result = both_ways(repo, snippet(base), target)

    assert result.detail == "app/views.py was deleted"
    successor = result.successor
    assert (successor.kind, successor.path, successor.start_line, successor.end_line) == (
        FILE_DELETED, "app/views.py", None, None)


def test_a_deleted_file_whose_code_went_elsewhere_edited_is_moved_and_changed(repo):
    base = repo.write("loader.py", BLOCK).commit("base")
    edited = BLOCK_SNIPPET.replace("    return result", "    return list(result)")
    repo.delete("loader.py")
    target = repo.write("io/reading.py", "# reading\n" * 50 + "def load(paths):\n" + edited + "\n").commit("move")

    successor = both_ways(repo, block_spec(base), target).successor

    assert (successor.kind, successor.path, successor.start_line, successor.end_line) == (
        MOVED_AND_CHANGED, "io/reading.py", 52, 56)
    assert lines_at(repo, target, successor) == edited


def test_a_pattern_that_stops_matching_gets_the_successor_of_the_lines_it_matched(repo, base):
    target = repo.write("app/views.py", VIEW.replace(
        "    return open(os.path.join(ROOT, path)).read()\n", "    return safe_open(ROOT, path).read()\n"
    )).commit("safe_open")
    spec = EvidenceSpec("pattern", commit=base, path="app/views.py", regex=r"open\(os\.path\.join", expect="present")

    result = check(repo, spec, target)

    assert result.state == "gone"
    successor = result.successor
    assert (successor.kind, successor.path, successor.start_line, successor.end_line) == (
        REWRITTEN, "app/views.py", 7, 7)
    assert (successor.recorded_path, successor.recorded_start, successor.recorded_end) == ("app/views.py", 7, 7)
    assert lines_at(repo, target, successor) == "    return safe_open(ROOT, path).read()"


def test_a_pattern_over_a_glob_follows_the_file_it_matched_in(repo, base):
    target = repo.delete("app/views.py").commit("drop the view")
    spec = EvidenceSpec("pattern", commit=base, path="app/*.py", regex=r"os\.path\.join", expect="present")

    successor = check(repo, spec, target).successor

    assert (successor.kind, successor.path, successor.recorded_start) == (FILE_DELETED, "app/views.py", 7)


def test_a_pattern_expected_absent_that_now_matches_has_no_successor(repo, base):
    target = repo.write("app/urls.py", "urls = [eval(x)]\n").commit("eval")
    spec = EvidenceSpec("pattern", commit=base, path="app/urls.py", regex=r"eval\(", expect="absent")

    result = check(repo, spec, target)

    assert (result.state, result.successor) == ("gone", None)


def test_a_binary_file_at_the_verified_commit_is_an_error_without_a_successor(repo, base):
    target = repo.write("app/views.py", b"\x00\x01binary\x00" * 10).commit("binary")

    result = both_ways(repo, snippet(base), target)

    assert result.state == "error"
    assert "binary" in result.detail
    assert result.successor is None


def test_evidence_recorded_at_a_commit_the_repository_does_not_have_is_an_error_without_a_successor(repo, base):
    target = repo.write("app/views.py", "").commit("empty")

    result = both_ways(repo, snippet("0123456789abcdef" * 2 + "01234567"), target)

    assert result.state == "error"
    assert result.successor is None


def test_a_near_copy_among_very_long_lines_is_found_comparing_their_beginnings_only(repo):
    base = repo.write("loader.py", BLOCK).commit("base")
    edited = BLOCK_SNIPPET.replace("    return result", "    return list(result)")
    minified = ("x = '" + "a" * 40_000 + "'\n") * 10
    repo.delete("loader.py")
    target = repo.write("bundle.py", minified + "def load(paths):\n" + edited + "\n" + minified).commit("bundle")

    successor = both_ways(repo, block_spec(base), target).successor

    assert (successor.kind, successor.path, successor.start_line, successor.end_line) == (
        MOVED_AND_CHANGED, "bundle.py", 12, 16)


def test_a_near_copy_in_a_file_over_the_size_limit_is_not_read_and_the_file_is_deleted(repo):
    base = repo.write("loader.py", BLOCK).commit("base")
    edited = BLOCK_SNIPPET.replace("    return result", "    return list(result)")
    repo.delete("loader.py")
    target = repo.write("huge.py", "# padding\n" * 20_000 + "def load(paths):\n" + edited + "\n").commit("huge")

    successor = both_ways(repo, block_spec(base), target, max_blob_bytes=100_000).successor

    assert (successor.kind, successor.path) == (FILE_DELETED, "loader.py")


def test_a_snippet_gone_at_one_commit_and_back_at_the_next_has_no_successor_there(repo, base):
    gone_at = repo.write("app/views.py", VIEW.replace(
        '    path = request.GET["file"]\n    return open(os.path.join(ROOT, path)).read()\n', ""
    )).commit("drop")
    back_at = repo.write("app/views.py", VIEW).commit("revert")

    assert check(repo, snippet(base), gone_at).successor.kind == REMOVED
    back = check(repo, snippet(base), back_at)
    assert (back.state, back.successor) == ("holds", None)


def test_successors_can_be_left_out(repo, base):
    target = repo.delete("app/views.py").commit("drop the view")

    with GitReader(repo.git_dir) as reader:
        checks = EvidenceChecks(reader, target, successors=False)
        number = checks.add(snippet(base))
        result = checks.results()[number]
        assert (result.state, result.successor) == ("gone", None)
        assert check_evidence(reader, snippet(base), target, successors=False).successor is None


def test_a_successor_is_plain_data_and_back():
    successor = Successor(MOVED_AND_CHANGED, "b.py", 3, 7, "a.py", 10, 14, similarity=0.83)

    assert successor.as_data() == {
        "kind": "moved_and_changed", "path": "b.py", "start_line": 3, "end_line": 7, "larger": False,
        "recorded": {"path": "a.py", "start_line": 10, "end_line": 14}, "similarity": 0.83,
        "text": "", "recorded_text": "", "cut": False,
    }
    assert Successor.from_data(successor.as_data()) == successor


@pytest.mark.parametrize(
    ("hunks", "expected"),
    [
        ([(3, 1, 3, 1)], (REWRITTEN, 3, 5)),  # the first line changed: it and the two after it
        ([(1, 2, 0, 0)], None),  # lines before the snippet removed: nothing touches it
        ([(3, 3, 2, 0)], (REMOVED, 3, None)),  # all three deleted: the line now where they were
        ([(4, 0, 5, 2)], (REWRITTEN, 3, 7)),  # two lines inserted between its second and third
        ([(5, 0, 6, 2)], None),  # inserted after its last line: not inside it
        ([(3, 1, 3, 1), (5, 1, 5, 3)], (REWRITTEN, 3, 7)),  # split between two hunks
    ],
)
def test_which_hunks_replace_lines_three_to_five(hunks, expected):
    assert replaced_span(hunks, 3, 5, 10, 12) == expected


def test_larger_than_a_rewrite_means_over_twice_as_many_and_ten_more():
    assert not larger_than_rewrite(6, 3)
    assert not larger_than_rewrite(13, 3)
    assert larger_than_rewrite(14, 3)
    assert larger_than_rewrite(41, 20)
    assert not larger_than_rewrite(40, 20)
