"""SARIF 2.1.0 read against the vendored OASIS schema: ruff's own output, its absolute paths made
relative to the repository, and logs the schema refuses."""
import json

import pytest

from core.errors import ReportError
from engine.reports import Tally
from engine.reports.sarif import placer, sarif_results
from tests.reports import ruff_sarif

SOURCE = 'import os\n\npassword = "hunter2"\n'


def results_of(body: bytes, **place):
    tally = Tally()
    return sarif_results(body, tally, place=placer(**place)), tally


def test_ruff_s_log_is_read_with_its_absolute_paths_placed_by_the_longest_ending_that_is_a_file(tmp_path):
    checkout = tmp_path / "home" / "runner" / "work" / "calc"
    (checkout / "src").mkdir(parents=True)
    (checkout / "src" / "calc.py").write_text(SOURCE)
    body = ruff_sarif(checkout, "src/calc.py")
    assert f"file://{checkout}/src/calc.py" in body.decode()

    results, tally = results_of(body, files=lambda: frozenset({"calc.py", "src/calc.py", "README.md"}))
    assert [(result.rule, result.path, result.start_line, result.level) for result in results] == [
        ("F401", "src/calc.py", 1, "error"), ("S105", "src/calc.py", 3, "error"),
    ]
    assert (tally.results, tally.tool) == (2, "ruff")


def test_a_checkout_root_is_taken_off_without_reading_the_commit_s_files(tmp_path):
    (tmp_path / "calc.py").write_text(SOURCE)

    def never():
        raise AssertionError("the files are not listed when the checkout root places every path")

    results, _ = results_of(ruff_sarif(tmp_path, "calc.py"), files=never, checkout_root=str(tmp_path))
    assert {result.path for result in results} == {"calc.py"}


def test_a_result_on_a_file_outside_the_repository_is_refused_naming_it(tmp_path):
    (tmp_path / "calc.py").write_text(SOURCE)
    with pytest.raises(ReportError) as error:
        results_of(ruff_sarif(tmp_path, "calc.py"), files=lambda: frozenset({"other.py"}))
    assert "runs[0].results[0]" in error.value.message and "--checkout-root" in error.value.message


def minimal_log(**result) -> bytes:
    return json.dumps({
        "version": "2.1.0",
        "runs": [{"tool": {"driver": {"name": "scanner"}}, "results": [{"message": {"text": "m"}, **result}]}],
    }).encode()


def test_partial_fingerprints_and_relative_uris_are_kept():
    body = minimal_log(ruleId="S105", partialFingerprints={"primaryLocationLineHash": "abc:1"},
                       locations=[{"physicalLocation": {"artifactLocation": {"uri": "config/soak.yaml"},
                                                        "region": {"startLine": 104}}}])
    [result], _ = results_of(body, files=frozenset)
    assert (result.path, result.start_line, result.fingerprint) == ("config/soak.yaml", 104, "primaryLocationLineHash=abc:1")
    assert result.level == "warning"  # SARIF's default


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (b"{not json", "Not valid JSON"),
        (json.dumps({"version": "2.0.0", "runs": []}).encode(), "Not a valid SARIF 2.1.0 log"),
        (json.dumps({"version": "2.1.0", "runs": [{"tool": {}}]}).encode(), "at runs[0].tool"),
        (minimal_log(ruleId="X", locations=[{"physicalLocation": {"artifactLocation": {"uri": "../../etc/passwd"}}}]),
         "not a file of the repository"),
        (minimal_log(), "names no rule"),
    ],
)
def test_a_log_that_is_not_valid_sarif_is_refused_saying_where(body, message):
    with pytest.raises(ReportError) as error:
        results_of(body, files=frozenset)
    assert message in error.value.message
