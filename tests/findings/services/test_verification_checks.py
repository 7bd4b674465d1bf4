"""Check evidence verified end to end: a real repository, a review imported through the bundle
format with a CI check beside a snippet, verified through the service the tasks and commands use."""
import pytest

from findings.models import EvidenceResult
from findings.services.review_import import review_import
from findings.services.verification.run import pull_request_verify
from reviews.models import PullRequest
from tests.gitrepo import GitRepoBuilder

pytestmark = pytest.mark.django_db


def test_a_check_with_no_report_read_is_never_fixed_even_when_the_snippet_beside_it_is_gone(tmp_path):
    repo = GitRepoBuilder(tmp_path)
    reviewed = repo.write("calc.py", "def div(a, b):\n    return a / b\n").commit("add div")
    fixed = repo.write("calc.py", "def div(a, b):\n    return a / b if b else None\n").commit("guard zero")
    review_import(data={
        "repository": {"slug": "acme/calc", "clone_url": repo.url},
        "pull_request": {"number": 1, "title": "Calc"},
        "commits": [{"sha": reviewed, "role": "reviewed"}, {"sha": fixed, "role": "head"}],
        "findings": [{"number": 1, "kind": "blocker", "title": "Division by zero", "evidence": [
            {"kind": "snippet", "path": "calc.py", "start_line": 2, "end_line": 2},
            {"kind": "check", "check": "unit-tests", "tests": ["tests/test_calc.py::test_div_by_zero"]},
        ]}],
    })
    pull_request = PullRequest.objects.get()
    [verification] = pull_request_verify(pull_request=pull_request, commit=pull_request.pins.get(role="head").commit)
    snippet, check = EvidenceResult.objects.filter(verification=verification).order_by("evidence__position")
    assert snippet.state == "gone"
    assert check.state == "error" and "Waiting for CI" in check.detail
    assert verification.verdict == "error"
