"""Snippets that left their file: the changed files are searched for them in bounded batches,
all such snippets of a verification in one pass, with the same answers as one search each."""
import pytest

from engine.git import GitReader
from engine.verification import EvidenceSpec, check_evidence
from tests.engine.verification.snippet_repo import SNIPPET, VIEW, check, snippet


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
    from engine.verification import files_prefetched

    target = repo.write("app/views.py", "# new header\n" + VIEW).commit("header")
    with GitReader(repo.git_dir) as reader:
        with files_prefetched(reader, target, ["app/views.py", "../escape.py", "app/*.py", "missing.py"]):
            pass
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
    from engine.verification.textcaches import TextCache

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
    with GitReader(repo.git_dir) as reader:
        # Prepared first (as while git reads the target's files), checked after: preparing reads
        # no file at the target.
        checks, at_target = EvidenceChecks(reader, target), reader.resolve(target)
        file = TextCache.file

        def no_file_at_target(cache, reader, commit, path):
            assert commit != at_target, f"{path} read at the target while preparing"
            return file(cache, reader, commit, path)

        monkeypatch.setattr(TextCache, "file", no_file_at_target)
        ready = [checks.prepare(spec) for spec in specs]
        monkeypatch.setattr(TextCache, "file", file)
        numbers = [checks.add(item) for item in ready]
        results = checks.results()
        prepared = [results[number] for number in numbers]

    assert together == alone == prepared
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
