"""Snippet evidence: are these lines still there at the target commit, and where did they go?"""
import pytest

from core.errors import RecheckError
from engine.git import GitReader
from engine.verification import snippet_text_at
from tests.engine.verification.snippet_repo import SNIPPET, VIEW, check, snippet

def test_it_holds_when_the_lines_are_unchanged(repo, base):
    target = repo.write("app/urls.py", "urls = ['x']\n").commit("unrelated")

    result = check(repo, snippet(base), target)

    assert (result.state, result.path, result.start_line, result.end_line) == ("holds", "app/views.py", 6, 7)
    assert result.detail == "unchanged"


def test_it_follows_lines_pushed_down_by_an_insert_above(repo, base):
    target = repo.write("app/views.py", "# -*- coding: utf-8 -*-\n# (c) ACME\n" + VIEW).commit("header")

    result = check(repo, snippet(base), target)

    assert (result.state, result.start_line, result.end_line) == ("holds", 8, 9)
    assert result.detail == "moved from line 6 to line 8"


DUPLICATED = """\
def first():
    x = compute()
    return x


def second():
    y = 1
    return y


def third():
    x = compute()
    return x
"""


def test_among_duplicates_it_picks_the_occurrence_the_diff_maps_to(repo):
    base = repo.write("calc.py", DUPLICATED).commit("base")
    # Twelve new lines on top: the first copy lands nearer the old position
    # (line 14 vs. 24), but the evidence was about the second copy.
    target = repo.write("calc.py", "# note\n" * 12 + DUPLICATED).commit("notes")
    spec = snippet(base, path="calc.py", start=12, end=13, text="    x = compute()\n    return x")

    result = check(repo, spec, target)

    assert (result.state, result.start_line, result.end_line) == ("holds", 24, 25)
    assert result.detail == "moved from line 12 to line 24"


def test_a_new_copy_at_the_old_lines_does_not_hide_that_the_original_moved(repo):
    base = repo.write("calc.py", DUPLICATED).commit("base")
    zeroth = "def zeroth():\n    x = compute()\n    return x\n\n\n"
    target = repo.write("calc.py", zeroth + DUPLICATED).commit("another copy on top")
    spec = snippet(base, path="calc.py", start=2, end=3, text="    x = compute()\n    return x")

    result = check(repo, spec, target)

    assert (result.state, result.start_line, result.detail) == ("holds", 7, "moved from line 2 to line 7")


def test_without_an_evidence_commit_it_picks_the_nearest_duplicate(repo):
    repo.write("calc.py", DUPLICATED).commit("base")
    target = repo.write("calc.py", "# note\n" * 12 + DUPLICATED).commit("notes")
    spec = snippet(None, path="calc.py", start=12, end=13, text="    x = compute()\n    return x")

    result = check(repo, spec, target)

    assert (result.state, result.start_line) == ("holds", 14)


def test_it_follows_a_renamed_file(repo, base):
    target = repo.rename("app/views.py", "app/handlers.py").commit("rename")

    result = check(repo, snippet(base), target)

    assert (result.state, result.path, result.start_line) == ("holds", "app/handlers.py", 6)
    assert result.detail == "file renamed from app/views.py to app/handlers.py"


def test_it_follows_a_renamed_and_edited_file(repo, base):
    repo.rename("app/views.py", "app/handlers.py")
    target = repo.write("app/handlers.py", '"""Handlers."""\n' + VIEW).commit("rename and document")

    result = check(repo, snippet(base), target)

    assert (result.state, result.path, result.start_line) == ("holds", "app/handlers.py", 7)
    assert result.detail == "file renamed from app/views.py to app/handlers.py; moved from line 6 to line 7"


def test_it_recognises_re_indented_code(repo, base):
    indented = VIEW.replace("def handler(request):\n", "class View:\n    def handler(request):\n")
    indented = indented.replace("\n    user", "\n        user").replace("\n    path", "\n        path")
    indented = indented.replace("\n    return open", "\n        return open")
    target = repo.write("app/views.py", indented).commit("wrap in a class")

    result = check(repo, snippet(base), target)

    assert (result.state, result.start_line, result.end_line) == ("holds", 7, 8)
    assert result.detail == "re-indented; moved from line 6 to line 7"


def test_it_finds_code_moved_to_another_module(repo, base):
    moved = "\n".join(f"# filler {n}" for n in range(30)) + "\n\ndef serve(request):\n" + SNIPPET + "\n"
    repo.write("app/files.py", moved)
    target = repo.write("app/views.py", VIEW.replace(SNIPPET + "\n", "    return serve(request)\n")).commit("move")

    result = check(repo, snippet(base), target)

    assert (result.state, result.path, result.start_line, result.end_line) == ("holds", "app/files.py", 33, 34)
    assert result.detail == "moved from app/views.py:6 to app/files.py:33"


def test_it_finds_code_moved_out_of_a_deleted_module(repo, base):
    repo.delete("app/views.py")
    target = repo.write("app/serving.py", "class Server:\n" + VIEW.replace("\n", "\n    ")).commit("restructure")

    result = check(repo, snippet(base), target)

    assert (result.state, result.path, result.start_line) == ("holds", "app/serving.py", 7)
    assert result.detail == "moved from app/views.py:6 to app/serving.py:7; re-indented"


def test_a_real_edit_means_the_snippet_is_gone(repo, base):
    fixed = VIEW.replace("open(os.path.join(ROOT, path))", "safe_open(ROOT, path)")
    target = repo.write("app/views.py", fixed).commit("fix traversal")

    result = check(repo, snippet(base), target)

    assert (result.state, result.path, result.start_line) == ("gone", "app/views.py", None)
    assert result.detail == "no longer in app/views.py"


def test_a_deleted_file_means_the_snippet_is_gone(repo, base):
    target = repo.delete("app/views.py").commit("drop views")

    result = check(repo, snippet(base), target)

    assert (result.state, result.path) == ("gone", "app/views.py")
    assert result.detail == "app/views.py was deleted"


def test_an_edit_in_a_renamed_file_says_where_it_looked(repo, base):
    repo.rename("app/views.py", "app/handlers.py")
    target = repo.write("app/handlers.py", VIEW.replace('request.GET["file"]', "clean(request)")).commit("fix")

    result = check(repo, snippet(base), target)

    assert (result.state, result.path) == ("gone", "app/handlers.py")
    assert result.detail == "no longer in app/handlers.py (renamed from app/views.py)"


def test_trailing_whitespace_and_crlf_do_not_matter(repo, base):
    target = repo.write("app/views.py", VIEW.replace("\n", "  \r\n")).commit("crlf")

    result = check(repo, snippet(base, text=SNIPPET.replace("\n", "\t\r\n") + "\n"), target)

    assert (result.state, result.start_line, result.detail) == ("holds", 6, "unchanged")


def test_leading_whitespace_does_matter_for_an_exact_match(repo, base):
    result = check(repo, snippet(base, text="path = request.GET[\"file\"]"), base)

    assert (result.state, result.detail) == ("holds", "re-indented")


def test_empty_snippet_text_is_read_from_the_evidence_commit(repo, base):
    target = repo.write("app/views.py", "\n" + VIEW).commit("blank line")

    result = check(repo, snippet(base, text=""), target)

    assert (result.state, result.start_line, result.end_line) == ("holds", 7, 8)


def test_a_snippet_can_be_checked_against_a_branch_name(repo, base):
    assert check(repo, snippet(base[:8]), "main").state == "holds"


def test_snippet_text_at_returns_the_recorded_lines(repo, base):
    with GitReader(repo.git_dir) as reader:
        assert snippet_text_at(reader, base, "app/views.py", 6, 7) == SNIPPET
        assert snippet_text_at(reader, base[:7], "./app/views.py", 4) == "def handler(request):"


@pytest.mark.parametrize(
    ("path", "start", "end", "message"),
    [
        ("app/views.py", 11, 40, "has 11 lines"),
        ("app/views.py", 0, 2, "not a valid range"),
        ("app/views.py", 5, 4, "not a valid range"),
        ("app/missing.py", 1, 1, "does not exist at commit"),
        ("../secret", 1, 1, "'..'"),
    ],
)
def test_snippet_text_at_explains_what_is_wrong(repo, base, path, start, end, message):
    with GitReader(repo.git_dir) as reader, pytest.raises(RecheckError, match=message):
        snippet_text_at(reader, base, path, start, end)


def test_a_snippet_without_text_or_commit_is_an_error(repo, base):
    result = check(repo, snippet(None, text=""), base)

    assert result.state == "error"
    assert "record the snippet" in result.detail


def test_a_blank_snippet_is_an_error(repo, base):
    result = check(repo, snippet(base, text="  \n\n"), base)

    assert result.state == "error" and "blank" in result.detail
