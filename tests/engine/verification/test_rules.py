"""The rules an evidence item must meet to be recorded, stated once for the bundle, the API and the
forms (findings/verification/rules.py), and tied to the model's choices."""
import pytest

from findings.models import Evidence
from engine.verification import specs
from engine.verification.rules import EXPECTATIONS, REQUIRED_FIELDS, evidence_problems


def test_the_model_s_kinds_and_expectations_are_the_engine_s():
    assert set(Evidence.Kind.values) == set(specs.KINDS) == set(REQUIRED_FIELDS)
    assert set(Evidence.Expect.values) == {expect for values in EXPECTATIONS.values() for expect in values}


@pytest.mark.parametrize("kind", specs.KINDS)
def test_each_kind_names_what_it_is_missing(kind):
    problems, _ = evidence_problems({"kind": kind})
    assert problems == {field: f"{kind} evidence needs {field}." for field in REQUIRED_FIELDS[kind]}


@pytest.mark.parametrize(
    ("fields", "field", "message"),
    [
        ({"kind": "snippet", "path": "../etc/passwd", "start_line": 1, "end_line": 2}, "path", "'..'"),
        ({"kind": "snippet", "path": "/etc/passwd", "start_line": 1, "end_line": 2}, "path", "absolute"),
        ({"kind": "snippet", "path": "-rf", "start_line": 1, "end_line": 2}, "path", "starts with '-'"),
        ({"kind": "snippet", "path": "a\x00b", "start_line": 1, "end_line": 2}, "path", "control characters"),
        ({"kind": "snippet", "path": "a.py", "start_line": 5, "end_line": 2}, "end_line", "before start_line"),
        ({"kind": "path", "path": "src/*.py", "expect": "exists"}, "path", "Only pattern evidence takes a glob"),
        ({"kind": "path", "path": "a.py", "expect": "present"}, "expect", "exists, missing"),
        ({"kind": "pattern", "path": "src/**/*.py", "regex": "(", "expect": "present"}, "regex",
         "not a valid regular expression"),
        ({"kind": "kind-of", "path": "a.py"}, "kind", "Unknown kind"),
        ({"kind": "check", "check": "unit\x1btests"}, "check", "control characters"),
        ({"kind": "check", "check": "unit\u202etests"}, "check", "control characters"),
        ({"kind": "check", "check": "x" * 256}, "check", "at most 255 characters; this one has 256"),
        ({"kind": "check", "check": "lint", "path": "a.py"}, "path", "points at no file"),
        ({"kind": "check", "check": "lint", "tests": ["a::b", "a::b"]}, "tests", "'a::b' is named twice"),
        ({"kind": "check", "check": "lint", "tests": ["a::b\n"]}, "tests", "tests[0]"),
        ({"kind": "check", "check": "lint", "results": [{"rule": "S1", "path": "/etc/passwd"}]}, "results",
         "results[0].path"),
        ({"kind": "check", "check": "lint", "results": [{"rule": "S1", "path": "a.py", "start_line": 0}]}, "results",
         "a line number"),
        ({"kind": "check", "check": "lint", "tests": ["a"], "results": [{"rule": "S1", "path": "a.py"}]}, "results",
         "not both"),
        ({"kind": "check", "check": "lint", "app": "github\x00actions"}, "app", "control characters"),
        ({"kind": "check", "check": "lint", "expect": "present"}, "expect", "failed"),
        ({"kind": "snippet", "path": "a.py", "start_line": 1, "end_line": 2, "check": "lint"}, "check",
         "Only check evidence"),
    ],
)
def test_an_unsound_item_is_refused_naming_the_field(fields, field, message):
    problems, _ = evidence_problems(fields)
    assert field in problems and message in problems[field]


def test_a_sound_item_comes_back_with_its_path_normalised():
    problems, cleaned = evidence_problems({"kind": "pattern", "path": "./src//**/*.py", "regex": "x", "expect": "absent"})
    assert problems == {} and cleaned["path"] == "src/**/*.py"


def test_a_check_item_s_results_come_back_with_their_paths_normalised():
    problems, cleaned = evidence_problems(
        {"kind": "check", "check": "secrets", "results": [{"rule": "S105", "path": "./config//soak.yaml", "start_line": 104}]}
    )
    assert problems == {}
    assert cleaned["results"] == [{"rule": "S105", "path": "config/soak.yaml", "start_line": 104}]
