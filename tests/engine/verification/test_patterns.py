import pytest

from engine.verification import EvidenceSpec, check_evidence, compile_pattern
from core.errors import InvalidPattern, RecheckError
from engine.git import GitReader
from tests.gitrepo import GitRepoBuilder


@pytest.fixture
def repo(tmp_path):
    return GitRepoBuilder(tmp_path)


@pytest.fixture
def base(repo):
    return (
        repo.write("settings.py", "DEBUG = True\nSECRET_KEY = 'dev'\n")
        .write("src/app/views.py", "def index():\n    return eval(\n        request.body)\n")
        .write("src/app/models.py", "class User:\n    pass\n")
        .write("src/lib/helpers.py", "def helper():\n    return 1\n")
        .write("src/image.py.bin", b"\x00eval(")
        .write("README.md", "Uses eval( nowhere in production.\n")
        .commit("base")
    )


def pattern(path, regex, expect=None, commit=None):
    return EvidenceSpec("pattern", commit=commit, path=path, regex=regex, expect=expect)


def check(repo, spec, target, **options):
    with GitReader(repo.git_dir, **options) as reader:
        return check_evidence(reader, spec, target)


def test_a_present_pattern_holds_and_says_where_it_matched(repo, base):
    result = check(repo, pattern("settings.py", r"^DEBUG\s*=\s*True$"), base)

    assert (result.state, result.path, result.start_line, result.end_line) == ("holds", "settings.py", 1, 1)
    assert result.detail == "matches at settings.py:1"


def test_a_present_pattern_is_gone_once_the_code_changes(repo, base):
    target = repo.write("settings.py", "DEBUG = False\nSECRET_KEY = env('KEY')\n").commit("harden")

    result = check(repo, pattern("settings.py", r"^DEBUG\s*=\s*True$"), target)

    assert (result.state, result.path) == ("gone", "settings.py")
    assert result.detail == "no longer matches in settings.py"


def test_an_absent_pattern_holds_while_nothing_matches(repo, base):
    result = check(repo, pattern("src/**/*.py", r"csrf_protect", expect="absent"), base)

    assert result.state == "holds"
    assert result.detail == "no match in 3 file(s) matching src/**/*.py"


def test_an_absent_pattern_is_gone_once_something_matches(repo, base):
    target = repo.write("src/lib/helpers.py", "from x import csrf_protect\n").commit("protect")

    result = check(repo, pattern("src/**/*.py", r"csrf_protect", expect="absent"), target)

    assert (result.state, result.path, result.start_line) == ("gone", "src/lib/helpers.py", 1)
    assert result.detail == "now matches at src/lib/helpers.py:1"


def test_a_glob_searches_every_matching_file_and_reports_the_first_match(repo, base):
    result = check(repo, pattern("src/**/*.py", r"eval\(\s+request"), base)

    assert (result.state, result.path, result.start_line, result.end_line) == ("holds", "src/app/views.py", 2, 3)


def test_a_glob_only_searches_the_files_it_matches(repo, base):
    assert check(repo, pattern("src/lib/*.py", r"eval\("), base).state == "gone"
    assert check(repo, pattern("*.md", r"eval\("), base).path == "README.md"


def test_binary_files_in_a_glob_are_skipped(repo, base):
    assert check(repo, pattern("src/*", r"eval\("), base).state == "gone"


def test_a_glob_matching_no_file_is_gone(repo, base):
    result = check(repo, pattern("lib/**/*.rs", r"unsafe", expect="absent"), base)

    assert (result.state, result.detail) == ("gone", "no file matches lib/**/*.rs")


def test_a_deleted_file_is_gone_for_either_expectation(repo, base):
    target = repo.delete("settings.py").commit("drop settings")

    for expect in ("present", "absent"):
        result = check(repo, pattern("settings.py", r"DEBUG", expect), target)
        assert (result.state, result.detail) == ("gone", "settings.py no longer exists")


def test_a_pattern_follows_a_renamed_file_when_the_commit_is_known(repo, base):
    target = repo.rename("settings.py", "config/settings.py").commit("move settings")

    result = check(repo, pattern("settings.py", r"DEBUG = True", commit=base), target)

    assert (result.state, result.path) == ("holds", "config/settings.py")
    assert result.detail == "file renamed from settings.py to config/settings.py; matches at config/settings.py:1"


def test_crlf_files_match_line_anchored_patterns(repo, base):
    target = repo.write("settings.py", "DEBUG = True\r\nX = 1\r\n").commit("crlf")

    assert check(repo, pattern("settings.py", r"^DEBUG = True$"), target).state == "holds"


def test_an_invalid_regex_is_an_error_result(repo, base):
    result = check(repo, pattern("settings.py", r"DEBUG = (True"), base)

    assert result.state == "error"
    assert "not a valid regular expression" in result.detail


def test_an_unknown_expectation_is_an_error_result(repo, base):
    result = check(repo, pattern("settings.py", r"DEBUG", expect="sometimes"), base)

    assert result.state == "error" and "'present' or 'absent'" in result.detail


def test_a_named_binary_file_is_an_error_result(repo, base):
    result = check(repo, pattern("src/image.py.bin", r"eval"), base)

    assert result.state == "error" and "binary" in result.detail


def test_oversized_files_make_an_unmatched_pattern_an_error_not_a_fix(repo, base):
    result = check(repo, pattern("src/**/*.py", r"csrf_protect"), base, max_blob_bytes=20)

    assert result.state == "error"
    assert "over the size limit" in result.detail


def test_compile_pattern_uses_multiline_python_regexes():
    assert compile_pattern(r"^b$").search("a\nb\nc")


@pytest.mark.parametrize("regex", ["(", "[a-", "a{2,1}", "(?P<x>a", ""])
def test_compile_pattern_refuses_invalid_regexes(regex):
    with pytest.raises(InvalidPattern) as caught:
        compile_pattern(regex)
    assert isinstance(caught.value, RecheckError)


def test_a_pattern_that_backtracks_without_end_is_stopped_and_reported_as_an_error(repo, monkeypatch):
    from engine.verification import patterns

    monkeypatch.setattr(patterns, "SEARCH_TIMEOUT_SECONDS", 0.2)
    target = repo.write("data.txt", "x" * 5000 + "\n").commit("long line")
    result = check(repo, pattern("data.txt", r"(x+x+)+y", expect="absent"), target)
    assert result.state == "error"
    assert "took more than 0.2s on data.txt" in result.detail and "simplify it" in result.detail


def matches(repo, spec, target, **options):
    from engine.verification.patterns import pattern_matches

    with GitReader(repo.git_dir) as reader:
        return pattern_matches(reader, spec, target, **options)


def test_trying_a_pattern_lists_every_matching_line_in_the_files_the_check_searches(repo, base):
    found, more = matches(repo, pattern("src/**/*.py", r"^\s*return"), base)
    assert [(m.path, m.line, m.text) for m in found] == [
        ("src/app/views.py", 2, "    return eval("), ("src/lib/helpers.py", 2, "    return 1"),
    ]
    assert not more
    found, more = matches(repo, pattern("src/**/*.py", r"^\s*return"), base, limit=1)
    assert len(found) == 1 and more


def test_trying_a_pattern_keeps_the_engines_refusals_and_its_timeout(repo, monkeypatch):
    from engine.verification import patterns

    with pytest.raises(InvalidPattern, match="not a valid regular expression"):
        matches(repo, pattern("*.py", "(unclosed"), repo.write("a.py", "x\n").commit("a"))
    monkeypatch.setattr(patterns, "SEARCH_TIMEOUT_SECONDS", 0.2)
    target = repo.write("data.txt", "x" * 5000 + "\n").commit("long line")
    with pytest.raises(RecheckError, match=r"took more than 0.2s on data.txt"):
        matches(repo, pattern("data.txt", r"(x+x+)+y"), target)
