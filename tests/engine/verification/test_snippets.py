import pytest

from engine.verification import EvidenceSpec, check_evidence, snippet_text_at
from core.errors import RecheckError
from engine.git import GitReader
from tests.gitrepo import GitRepoBuilder

VIEW = """\
import os


def handler(request):
    user = request.user
    path = request.GET["file"]
    return open(os.path.join(ROOT, path)).read()


def other():
    return None
"""
SNIPPET = '    path = request.GET["file"]\n    return open(os.path.join(ROOT, path)).read()'


@pytest.fixture
def repo(tmp_path):
    return GitRepoBuilder(tmp_path)


@pytest.fixture
def base(repo):
    return repo.write("app/views.py", VIEW).write("app/urls.py", "urls = []\n").commit("base")


def snippet(commit, path="app/views.py", start=6, end=7, text=SNIPPET):
    return EvidenceSpec("snippet", commit=commit, path=path, start_line=start, end_line=end, text=text)


def check(repo, spec, target, **reader_options):
    with GitReader(repo.git_dir, **reader_options) as reader:
        return check_evidence(reader, spec, target)


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


def _many_changed_files(repo, count):
    """``count`` changed modules of about 200 bytes each, none holding the snippet."""
    for number in range(count):
        repo.write(f"app/m{number:02}.py", "".join(f"value_{number}_{line} = {line}\n" for line in range(12)))


def _search_budget(monkeypatch, *, batch, kept, read=3):
    from engine.verification import corpus

    monkeypatch.setattr(corpus, "_CORPUS_BATCH_CHARS", batch)
    monkeypatch.setattr(corpus, "_CORPUS_KEPT_CHARS", kept)
    monkeypatch.setattr(corpus, "_CORPUS_READ_PATHS", read)


@pytest.mark.parametrize("kept", [0, 1_000_000], ids=["read-again", "kept"])
def test_code_moved_into_the_last_batch_of_the_changed_files_is_found_within_the_budget(repo, base, monkeypatch, kept):
    from engine.verification.textcaches import cache_for

    _search_budget(monkeypatch, batch=600, kept=kept)
    _many_changed_files(repo, 20)
    moved = "\n".join(f"# filler {n}" for n in range(30)) + "\n\ndef serve(request):\n" + SNIPPET + "\n"
    repo.write("app/zz_last.py", moved)  # last in path order, so in the last batch
    target = repo.write("app/views.py", VIEW.replace(SNIPPET + "\n", "    return serve(request)\n")).commit("move")

    with GitReader(repo.git_dir) as reader:
        first = check_evidence(reader, snippet(base), target)
        corpus = cache_for(reader).corpus(reader, reader.resolve(base), reader.resolve(target))
        built = corpus.batches_built
        again = check_evidence(reader, snippet(base), target)
        built_again = corpus.batches_built
        third = check_evidence(reader, snippet(base), target)

    for result in (first, again, third):
        assert (result.state, result.path, result.start_line, result.end_line) == ("holds", "app/zz_last.py", 33, 34)
        assert result.detail == "moved from app/views.py:6 to app/zz_last.py:33"
    # 22 changed files of 200-700 bytes cannot fit one 600-byte batch, and no batch went over it.
    assert built >= 8
    assert 0 < corpus.largest_batch <= 600
    # Kept batches are searched again from memory; over the budget they are read from git again,
    # the second time all of them (building their line filters), then only those whose filter
    # says they may hold the needle (here the last one).
    if kept:
        assert corpus.batches_built == built
    else:
        assert built_again == 2 * built
        assert 1 <= corpus.batches_built - built_again <= 2


def test_a_batch_whose_raw_lines_differ_from_the_decoded_ones_is_never_filtered_out(repo, base, monkeypatch):
    # A no-break space ends a line for str.strip() but not for bytes.strip(): a filter of the raw
    # lines would wrongly rule this file out when the batch is read again.
    _search_budget(monkeypatch, batch=600, kept=0)
    _many_changed_files(repo, 8)
    nbsp = SNIPPET.replace(".read()", ".read()\u00a0")  # on the needle's longest line
    repo.write("app/zz_last.py", "def serve(request):\n" + nbsp + "\n")
    target = repo.write("app/views.py", VIEW.replace(SNIPPET + "\n", "    return serve(request)\n")).commit("move")
    absent = snippet(base, start=4, end=4, text="def handler(request):\n    nowhere = True")

    with GitReader(repo.git_dir) as reader:
        first = check_evidence(reader, absent, target)  # reads every batch and lets them go
        check_evidence(reader, absent, target)  # reads them again, building their filters
        moved = check_evidence(reader, snippet(base), target)

    assert first.state == "gone"
    assert (moved.state, moved.path, moved.start_line) == ("holds", "app/zz_last.py", 2)


def test_an_exact_copy_in_a_later_batch_wins_over_a_re_indented_one_in_an_earlier_batch(repo, base, monkeypatch):
    _search_budget(monkeypatch, batch=400, kept=0)
    _many_changed_files(repo, 6)
    repo.write("app/a_early.py", "class Wrapper:\n" + "".join("    " + line + "\n" for line in SNIPPET.splitlines()))
    repo.write("app/z_late.py", "def serve(request):\n" + SNIPPET + "\n")
    target = repo.write("app/views.py", VIEW.replace(SNIPPET + "\n", "    return serve(request)\n")).commit("move")

    result = check(repo, snippet(base), target)

    assert (result.state, result.path, result.start_line) == ("holds", "app/z_late.py", 2)
    assert result.detail == "moved from app/views.py:6 to app/z_late.py:2"


def test_a_file_larger_than_a_batch_is_searched_in_a_batch_of_its_own(repo, base, monkeypatch):
    from engine.verification.textcaches import cache_for

    _search_budget(monkeypatch, batch=100, kept=0)
    big = "\n".join(f"# filler {n}" for n in range(40)) + "\n\ndef serve(request):\n" + SNIPPET + "\n"
    repo.write("app/files.py", big)
    target = repo.write("app/views.py", VIEW.replace(SNIPPET + "\n", "    return serve(request)\n")).commit("move")

    with GitReader(repo.git_dir) as reader:
        result = check_evidence(reader, snippet(base), target)
        corpus = cache_for(reader).corpus(reader, reader.resolve(base), reader.resolve(target))

    assert (result.state, result.path, result.start_line) == ("holds", "app/files.py", 43)
    assert corpus.largest_batch == len(big.encode())  # over the budget, but whole and alone


def test_prefetched_files_give_the_same_answers(repo, base):
    from engine.verification import prefetch_files

    target = repo.write("app/views.py", "# new header\n" + VIEW).commit("header")
    with GitReader(repo.git_dir) as reader:
        prefetch_files(reader, target, ["app/views.py", "../escape.py", "app/*.py", "missing.py"])
        result = check_evidence(reader, snippet(base), target)
    assert (result.state, result.start_line) == ("holds", 7)


def _scattered_copies(repo):
    """Changed files over many small batches, with copies of some snippets placed to exercise each
    rule of the search: the first file in path order wins, an exact copy in any later batch wins
    over a re-indented one in an earlier, the excluded file is passed over."""
    indented = "".join("    " + line + "\n" for line in SNIPPET.splitlines())
    _many_changed_files(repo, 12)
    repo.write("app/a_indented.py", "class Wrapper:\n" + indented)  # re-indented: loses to any exact copy
    repo.write("app/m05_first.py", "def serve(request):\n" + SNIPPET + "\n")  # the first exact copy
    repo.write("app/z_second.py", "# filler\n" * 20 + SNIPPET + "\n")  # a later exact copy
    repo.write("app/b_helpers.py", "def check():\n    if user:\n        return user.is_staff\n")  # re-indented only
    repo.write("app/y_helpers.py", "def check():\n  if user:\n      return user.is_staff\n")
    repo.write("app/crlf.py", "def crlf():\r\n    value = compute_it(1)\r\n    return value\r\n")
    repo.write("app/m09_excluded.py", "def left():\n    return leftover_value(42)\n")  # the needle's own file
    repo.write("app/x_indented.py", "class Left:\n    def left():\n        return leftover_value(42)\n")
    return repo.write("app/views.py", VIEW.replace(SNIPPET + "\n", "    return serve(request)\n")).commit("scatter")


def _scattered_needles():
    from engine.verification.filetexts import Needle

    return [
        (Needle(SNIPPET), None),  # exact in m05 and z_second, re-indented in a_indented: m05
        (Needle(SNIPPET), "app/m05_first.py"),  # the first left out: z_second
        (Needle("    path = request.GET[\"file\"]\n    elsewhere()"), None),  # shares the probe, held nowhere
        (Needle("if user:\n    return user.is_staff"), None),  # re-indented in b_ and y_: b_
        (Needle("    value = compute_it(1)\n    return value"), None),  # CRLF in the file, LF in the needle
        (Needle("def left():\n    return leftover_value(42)"), "app/m09_excluded.py"),  # only re-indented elsewhere
        (Needle("    return leftover_value(42)"), None),  # exact in the file the other needle leaves out
        (Needle("    nowhere_at_all = True"), None),
    ]


_SCATTERED_ANSWERS = [
    ("app/m05_first.py", 1, False),
    ("app/z_second.py", 20, False),
    None,
    ("app/b_helpers.py", 1, True),
    ("app/crlf.py", 1, False),
    ("app/x_indented.py", 1, True),
    ("app/m09_excluded.py", 1, False),
    None,
]


@pytest.mark.parametrize("find_probes", [0, 100], ids=["line-sets", "finds"])
@pytest.mark.parametrize("kept", [0, 700], ids=["none-kept", "some-kept"])
@pytest.mark.parametrize("decoded", [False, True], ids=["raw", "some-decoded"])
def test_one_pass_for_many_needles_answers_as_one_search_per_needle(repo, base, monkeypatch, find_probes, kept, decoded):
    from engine.verification import corpus as corpus_module
    from engine.verification import textcaches
    from engine.verification.textcaches import cache_for

    _search_budget(monkeypatch, batch=400, kept=kept)
    monkeypatch.setattr(corpus_module, "_CORPUS_FIND_PROBES", find_probes)
    target = _scattered_copies(repo)
    wanted = _scattered_needles()

    def corpus(reader):
        cache = cache_for(reader)
        if decoded:  # files decoded for the evidence's own checks are searched as they are
            cache.prefetch(reader, reader.resolve(target), ["app/crlf.py", "app/z_second.py", "app/m03.py"])
        return cache.corpus(reader, reader.resolve(base), reader.resolve(target))

    textcaches.shared_texts.clear()
    with GitReader(repo.git_dir) as reader:
        one_pass = corpus(reader)
        together = one_pass.matches_all(reader, wanted)
    textcaches.shared_texts.clear()
    with GitReader(repo.git_dir) as reader:
        per_needle = corpus(reader)
        apart = [per_needle.matches(reader, needle, exclude=exclude) for needle, exclude in wanted]
        # Read again and again, the let-go batches have line filters now: a pass through them
        # skips only the batches that hold none of the needles.
        filtered = per_needle.matches_all(reader, wanted)

    assert together == apart == filtered == _SCATTERED_ANSWERS
    # The needles are in later batches and one is held nowhere, so the pass reads every batch,
    # once; one search per needle reads the batches that were not kept again for each.
    assert one_pass.batches_built == len(one_pass._kept) + len(one_pass._let_go) >= 8
    if not kept:
        assert per_needle.batches_built > 2 * one_pass.batches_built


def test_many_items_checked_together_give_what_each_gives_alone(repo, base, monkeypatch):
    from engine.verification import EvidenceChecks

    _search_budget(monkeypatch, batch=400, kept=0)
    target = _scattered_copies(repo)
    specs = [
        snippet(base),  # moved out of its file: found in another
        snippet(base, start=4, end=4, text="def handler(request):"),  # still in its file
        snippet(base, start=4, end=4, text="def handler(request):\n    nowhere = True"),  # gone
        snippet(base, path="app/missing.py"),  # no such file at either commit, the code elsewhere
        snippet(base, text=""),  # its text read at the evidence commit, then moved
        EvidenceSpec("snippet", commit=base, path="../escape.py", text="x"),  # an error
        EvidenceSpec("snippet", path="app/views.py", text=SNIPPET),  # no evidence commit: not searched elsewhere
        EvidenceSpec("path", commit=base, path="app/urls.py", expect="exists"),
        EvidenceSpec("note", text="checked by hand"),
    ]

    with GitReader(repo.git_dir) as reader:
        alone = [check_evidence(reader, spec, target) for spec in specs]
    with GitReader(repo.git_dir) as reader:
        checks = EvidenceChecks(reader, target)
        numbers = [checks.add(spec) for spec in specs]
        results = checks.results()
        together = [results[number] for number in numbers]

    assert together == alone
    assert [result.state for result in alone] == [
        "holds", "holds", "gone", "holds", "holds", "error", "gone", "holds", "unchecked",
    ]
    assert alone[0].detail == "moved from app/views.py:6 to app/m05_first.py:2"


def test_files_that_fill_two_batches_when_read_again_keep_one_filter_for_both(repo, base, monkeypatch):
    from engine.verification import textcaches
    from engine.verification.filetexts import Needle
    from engine.verification.textcaches import cache_for

    # Decoded, the three CRLF files fit one batch; read raw again, with their CRs, they need two.
    # The line filter of the files once in that batch must cover both.
    _search_budget(monkeypatch, batch=370, kept=0)
    names = [f"app/c{number}.py" for number in range(3)]
    for number, name in enumerate(names):
        repo.write(name, "".join(f"c{number}_value_{line} = {line}\r\n" for line in range(8)))
    target = repo.write("app/views.py", VIEW.replace(SNIPPET + "\n", "    return serve(request)\n")).commit("crlf")
    absent, first_file = Needle("nowhere_at_all = True"), Needle("c0_value_3 = 3\nc0_value_4 = 4")

    textcaches.shared_texts.clear()
    with GitReader(repo.git_dir) as reader:
        cache = cache_for(reader)
        cache.prefetch(reader, reader.resolve(target), names)
        corpus = cache.corpus(reader, reader.resolve(base), reader.resolve(target))
        assert corpus.matches(reader, absent, exclude=None) is None  # reads the decoded files
        assert len(corpus._let_go) == 2
        cache._files.clear()  # the decoded files forgotten: read raw from now on
        textcaches.shared_texts.clear()
        built = corpus.batches_built
        assert corpus.matches(reader, absent, exclude=None) is None  # reads all again, building filters
        assert corpus.batches_built - built == 3
        found = corpus.matches(reader, first_file, exclude=None)

    assert found == ("app/c0.py", 3, False)
