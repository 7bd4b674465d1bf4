"""core.collector: only a pause it made is resumed."""
import gc

import pytest

from core import collector


@pytest.fixture
def collector_state():
    enabled = gc.isenabled()
    yield
    collector._paused = False
    gc.unfreeze()
    gc.enable() if enabled else gc.disable()


def test_a_pause_is_resumed_with_what_existed_frozen(collector_state):
    gc.enable()
    collector.collector_pause()
    assert not gc.isenabled()
    collector.collector_resume()
    assert gc.isenabled()
    assert gc.get_freeze_count() > 0


def test_a_collector_it_did_not_stop_is_left_as_it_is(collector_state):
    gc.disable()
    collector.collector_pause()  # already stopped by someone else
    collector.collector_resume()
    assert not gc.isenabled()
    assert gc.get_freeze_count() == 0

    gc.enable()
    collector.collector_resume()  # never paused
    assert gc.isenabled()
    assert gc.get_freeze_count() == 0
