import pytest

from engine.verification import EvidenceSpec, SubmoduleSource, check_evidence
from engine.git import GitReader, fetch_mirror
from tests.gitrepo import GitRepoBuilder
from tests.submodules import BridgeHistory, git_answer

OLD_PIN = "3961f399" + "1" * 32
NEW_PIN = "5ed97996" + "2" * 32


@pytest.fixture
def repo(tmp_path):
    return GitRepoBuilder(tmp_path)


@pytest.fixture
def base(repo):
    return repo.write("README.md", "hi\n").gitlink("vendor/openssl", OLD_PIN).commit("pin openssl")


def gitlink(sha, path="vendor/openssl"):
    return EvidenceSpec("gitlink", path=path, sha=sha)


def check(repo, spec, target):
    with GitReader(repo.git_dir) as reader:
        return check_evidence(reader, spec, target)


@pytest.mark.parametrize("pin", [OLD_PIN, OLD_PIN[:7], OLD_PIN[:12].upper()])
def test_a_submodule_still_pinned_at_the_sha_holds(repo, base, pin):
    result = check(repo, gitlink(pin), base)

    assert (result.state, result.path, result.detail) == ("holds", "vendor/openssl", "still pinned at 3961f399")


def test_a_moved_pin_is_gone_and_reports_the_new_pin(repo, base):
    target = repo.gitlink("vendor/openssl", NEW_PIN).commit("bump openssl")

    result = check(repo, gitlink(OLD_PIN[:10]), target)

    assert (result.state, result.detail) == ("gone", "pin moved from 3961f399 to 5ed97996")


def test_a_removed_submodule_is_gone(repo, base):
    target = repo.remove_gitlink("vendor/openssl").commit("drop openssl")

    result = check(repo, gitlink(OLD_PIN), target)

    assert (result.state, result.detail) == ("gone", "vendor/openssl no longer exists")


def test_a_submodule_replaced_by_vendored_files_is_gone(repo, base):
    repo.remove_gitlink("vendor/openssl")
    target = repo.write("vendor/openssl/ssl.c", "int main;\n").commit("vendor it")

    result = check(repo, gitlink(OLD_PIN), target)

    assert (result.state, result.detail) == ("gone", "vendor/openssl is no longer a submodule (it is now a directory)")


@pytest.mark.parametrize("pin", [None, "", "3961f3", "not-a-sha", "zz61f399"])
def test_a_malformed_pin_is_an_error(repo, base, pin):
    result = check(repo, gitlink(pin), base)

    assert result.state == "error" and "7 or more hex characters" in result.detail


# -- the submodule's history ----------------------------------------------------------------------

class Bridge(BridgeHistory):
    """The submodule's history (see tests.submodules), mirrored as verification would mirror it."""

    def __init__(self, tmp_path):
        super().__init__(tmp_path)
        self.mirror = fetch_mirror(url=self.url, mirror_dir=tmp_path / "mirrors" / "bridge.git",
                                   allow_local=True).mirror_dir

    def git(self, *args):
        return git_answer(self.mirror, *args)

    def source(self, branch="main"):
        return SubmoduleSource(label="acme/bridge", branch=branch, mirror_dir=str(self.mirror))


@pytest.fixture
def bridge(tmp_path):
    return Bridge(tmp_path)


@pytest.fixture
def superproject(repo, bridge):
    """base pins m6 (on main); pr pins f4 (the feature head); fixed pins m8 (a fast-forward)."""
    commits = {
        "base": repo.write("README.md", "rl\n").gitlink("3rdparty/bridge", bridge.main[5]).commit("base"),
        "pr": repo.gitlink("3rdparty/bridge", bridge.feature[3]).commit("repin to the feature branch"),
        "fixed": repo.gitlink("3rdparty/bridge", bridge.main[7]).commit("repin to main"),
    }
    return commits


def history_spec(bridge, superproject, expect, *, sha=None, source=None, base=True):
    return EvidenceSpec(
        "gitlink", path="3rdparty/bridge", sha=sha or bridge.feature[3], expect=expect,
        submodule=source if source is not None else bridge.source(),
        base_commit=superproject["base"] if base else None,
    )


@pytest.mark.parametrize("at", ["base", "pr", "fixed"])
def test_the_pin_history_figures_equal_gits_own_at_every_pinned_commit(repo, bridge, superproject, at):
    result = check(repo, history_spec(bridge, superproject, "pinned_at"), superproject[at])
    facts = result.facts
    pin, base, head = facts["pin"], bridge.main[5], bridge.main[7]

    _, counted = bridge.git("rev-list", "--left-right", "--count", f"{pin}...{head}")
    assert f"{facts['ahead']}\t{facts['behind']}" == counted
    assert facts["on_branch"] is (bridge.git("merge-base", "--is-ancestor", pin, head)[0] == 0)
    assert facts["fork"] == bridge.git("merge-base", pin, head)[1]
    assert facts["fast_forward"] is (bridge.git("merge-base", "--is-ancestor", base, pin)[0] == 0)
    assert str(facts["added"]) == bridge.git("rev-list", "--count", f"{base}..{pin}")[1]
    assert str(facts["dropped"]) == bridge.git("rev-list", "--count", f"{pin}..{base}")[1]
    assert facts["added_subjects"] == bridge.git("log", "--format=%s", "-n", "3", f"{base}..{pin}")[1].splitlines()
    assert facts["dropped_subjects"] == bridge.git("log", "--format=%s", "-n", "3", f"{pin}..{base}")[1].splitlines()


def test_the_feature_branch_pin_is_four_ahead_five_behind_and_drops_three(repo, bridge, superproject):
    facts = check(repo, history_spec(bridge, superproject, "pinned_at"), superproject["pr"]).facts

    assert (facts["ahead"], facts["behind"], facts["on_branch"]) == (4, 5, False)
    assert (facts["added"], facts["dropped"], facts["fast_forward"]) == (4, 3, False)
    assert facts["fork"] == bridge.main[2]
    assert facts["dropped_subjects"] == ["main change 6", "main change 5", "main change 4"]
    assert (facts["repository"], facts["branch"], facts["branch_head"]) == ("acme/bridge", "main", bridge.main[7])


@pytest.mark.parametrize(
    "expect, at, state, detail",
    [
        ("pinned_at", "pr", "holds", "still pinned at "),
        ("pinned_at", "fixed", "gone", "pin moved from "),
        ("off_branch", "pr", "holds", "is not on main: 4 ahead of main, 5 behind"),
        ("off_branch", "base", "gone", "is on main (2 behind its head)"),
        ("off_branch", "fixed", "gone", "is on main (0 behind its head)"),
        ("not_fast_forward", "pr", "holds", "is not a fast-forward: it adds 4 commits and drops 3"),
        ("not_fast_forward", "fixed", "gone", "is a fast-forward: it adds 2 commits"),
        ("not_fast_forward", "base", "gone", "is a fast-forward: it adds 0 commits"),
    ],
)
def test_each_expectation_holds_while_its_problem_is_there(repo, bridge, superproject, expect, at, state, detail):
    result = check(repo, history_spec(bridge, superproject, expect), superproject[at])

    assert result.state == state and detail in result.detail


def test_a_pin_on_another_branch_is_measured_against_that_branch(repo, bridge, superproject):
    result = check(repo, history_spec(bridge, superproject, "off_branch", source=bridge.source("feature")),
                   superproject["pr"])

    assert (result.state, result.facts["ahead"], result.facts["behind"]) == ("gone", 0, 0)


def test_an_unreachable_submodule_repository_is_an_error_never_fixed(repo, bridge, superproject):
    unreachable = SubmoduleSource(label="acme/bridge", branch="main",
                                  problem="could not fetch https://example.invalid/bridge.git: no such host")

    for expect in ("off_branch", "not_fast_forward"):
        result = check(repo, history_spec(bridge, superproject, expect, source=unreachable), superproject["fixed"])
        assert result.state == "error" and "no such host" in result.detail


def test_a_pin_the_submodule_mirror_lacks_is_an_error(repo, bridge, superproject, tmp_path):
    empty = GitRepoBuilder(tmp_path, "other")
    empty.write("x", "1\n").commit("unrelated")
    source = SubmoduleSource(label="acme/other", branch="main", mirror_dir=str(empty.git_dir))

    result = check(repo, history_spec(bridge, superproject, "off_branch", source=source), superproject["pr"])

    assert result.state == "error" and "acme/other has no commit" in result.detail


def test_a_missing_reference_branch_is_an_error(repo, bridge, superproject):
    result = check(repo, history_spec(bridge, superproject, "off_branch", source=bridge.source("trunk")),
                   superproject["pr"])

    assert result.state == "error" and "has no branch 'trunk'" in result.detail


def test_without_a_base_pin_the_fast_forward_question_is_an_error(repo, bridge, superproject):
    result = check(repo, history_spec(bridge, superproject, "not_fast_forward", base=False), superproject["pr"])

    assert result.state == "error" and "no pin of 3rdparty/bridge at the PR's base commit" in result.detail


def test_pinned_at_still_answers_without_the_submodules_history(repo, bridge, superproject):
    result = check(repo, EvidenceSpec("gitlink", path="3rdparty/bridge", sha=bridge.feature[3]), superproject["pr"])

    assert result.state == "holds" and "no repository is known" in result.facts["problem"]


def test_an_unknown_gitlink_expectation_is_an_error(repo, bridge, superproject):
    result = check(repo, history_spec(bridge, superproject, "on_main"), superproject["pr"])

    assert result.state == "error" and "pinned_at, off_branch, not_fast_forward" in result.detail


def test_a_mirror_read_as_it_is_says_when_it_was_fetched_and_a_fetched_one_says_nothing(repo, bridge, superproject):
    read_as_it_is = SubmoduleSource(label="acme/bridge", branch="main", mirror_dir=str(bridge.mirror),
                                    as_of="2026-12-03T08:12:00+00:00")
    facts = check(repo, history_spec(bridge, superproject, "pinned_at", source=read_as_it_is), superproject["pr"]).facts
    assert facts["branch_as_of"] == "2026-12-03T08:12:00+00:00" and facts["branch_head"] == bridge.main[7]
    fetched = check(repo, history_spec(bridge, superproject, "pinned_at"), superproject["pr"]).facts
    assert "branch_as_of" not in fetched
