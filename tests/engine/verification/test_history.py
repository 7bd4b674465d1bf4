"""Evidence from pin to pin: the lines around an item that holds, at each pin, and each change
between two pins labelled as the rebase's or the author's, on a real branch rebased onto a base
that changed the same file."""
import pytest

from core.errors import RecheckError
from engine.git import GitReader
from engine.git.history import merge_base
from engine.verification.history import BY_AUTHOR, FROM_REBASE, Change, Place, evidence_history
from tests.gitrepo import GitRepoBuilder

MODULE = "".join(f"value_{n} = compute({n})\n" for n in range(1, 21))


def edited(text, number, new):
    return text.replace(f"value_{number} = compute({number})\n", new + "\n")


@pytest.fixture
def rebased(tmp_path):
    """main: A, then B (the base changes line 7). feature: F1 on A (the author changes line 12),
    rebased onto B as F1', then F2 (the author changes line 13). The item is lines 9-10 throughout."""
    repo = GitRepoBuilder(tmp_path)
    repo.write("src/module.py", MODULE).commit("A")
    repo.branch("feature").checkout("feature")
    first = repo.write("src/module.py", edited(MODULE, 12, "value_12 = compute(12) * 2")).commit("F1")
    repo.checkout("main")
    repo.write("src/module.py", edited(MODULE, 7, "value_7 = compute(7) + 1")).commit("B")
    repo.checkout("feature")
    repo.git("rebase", "--quiet", "main")
    second = repo.head()
    text = edited(edited(MODULE, 7, "value_7 = compute(7) + 1"), 12, "value_12 = compute(12) * 2")
    third = repo.write("src/module.py", edited(text, 13, "value_13 = None")).commit("F2")
    return repo, [first, second, third]


def places(repo, pins):
    with GitReader(repo.git_dir) as reader:
        main = reader.resolve("refs/heads/main")
        return [Place(sha, "src/module.py", 9, 10, base=merge_base(reader, sha, main)) for sha in pins]


def test_a_change_the_rebase_brought_is_told_from_the_author_s(rebased):
    repo, pins = rebased

    with GitReader(repo.git_dir) as reader:
        steps = evidence_history(reader, places(repo, pins))

    assert [step.place.sha for step in steps] == pins
    assert steps[0].changes == ()
    # Between the first pin and the rebased one: the base's change to line 7 came with the rebase.
    assert steps[1].changes == (
        Change(FROM_REBASE, 7, ("value_7 = compute(7)",), 7, ("value_7 = compute(7) + 1",)),
    )
    # Then the author changed line 13, near the item.
    assert steps[2].changes == (
        Change(BY_AUTHOR, 13, ("value_13 = compute(13)",), 13, ("value_13 = None",)),
    )


def test_each_step_shows_the_item_s_lines_with_three_around_them(rebased):
    repo, pins = rebased

    with GitReader(repo.git_dir) as reader:
        steps = evidence_history(reader, places(repo, pins))

    assert (steps[2].first_line, steps[2].lines) == (6, (
        "value_6 = compute(6)", "value_7 = compute(7) + 1", "value_8 = compute(8)", "value_9 = compute(9)",
        "value_10 = compute(10)", "value_11 = compute(11)", "value_12 = compute(12) * 2", "value_13 = None",
    ))


def test_without_a_rebase_every_change_is_the_author_s(tmp_path):
    repo = GitRepoBuilder(tmp_path)
    base = repo.write("src/module.py", MODULE).commit("A")
    first = repo.write("src/module.py", edited(MODULE, 8, "value_8 = 0")).commit("F1")
    second = repo.write("src/module.py", edited(MODULE, 11, "value_11 = 0")).commit("F2")

    with GitReader(repo.git_dir) as reader:
        steps = evidence_history(reader, [Place(sha, "src/module.py", 9, 10, base=base) for sha in (first, second)])

    assert [change.origin for change in steps[1].changes] == [BY_AUTHOR, BY_AUTHOR]


def test_changes_far_from_the_item_are_left_out(tmp_path):
    repo = GitRepoBuilder(tmp_path)
    first = repo.write("src/module.py", MODULE).commit("A")
    second = repo.write("src/module.py", edited(MODULE, 20, "value_20 = 0")).commit("far away")

    with GitReader(repo.git_dir) as reader:
        steps = evidence_history(reader, [Place(sha, "src/module.py", 9, 10) for sha in (first, second)])

    assert steps[1].changes == ()


def test_a_pin_whose_file_is_missing_is_an_error(tmp_path):
    repo = GitRepoBuilder(tmp_path)
    first = repo.write("src/module.py", MODULE).commit("A")

    with GitReader(repo.git_dir) as reader, pytest.raises(RecheckError, match="does not exist"):
        evidence_history(reader, [Place(first, "src/other.py", 1, 2)])
