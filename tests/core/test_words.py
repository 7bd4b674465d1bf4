"""Every vocabulary's label function is `labelled`: a value it knows, and what one it does not
know reads as."""
import pytest

from core.vocabulary import label
from core.vocabulary.words import STRICT, humanised, labelled


def test_a_known_value_reads_its_label_and_an_unknown_one_reads_humanised():
    status = labelled({"open": "Open"})
    assert status("open") == "Open"
    assert status("running_late") == "Running late"
    assert status(None) == ""


def test_a_fixed_fallback_and_a_strict_vocabulary():
    assert labelled({"a": "A"}, otherwise="Not verified")(None) == "Not verified"
    strict = labelled({"a": "A"}, otherwise=STRICT, name="due state")
    with pytest.raises(ValueError, match="No label for due state 'b'"):
        strict("b")


def test_the_vocabularies_read_through_it():
    assert label("verdict", None) == "Not verified"
    assert label("follow_up", "some_new_state") == humanised("some_new_state") == "Some new state"
    assert label("event", "finding.recorded_again") == "Finding: recorded again"
    with pytest.raises(ValueError):
        label("override_reason", "because")
