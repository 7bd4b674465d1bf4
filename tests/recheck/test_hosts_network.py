"""The simulated hosts' networks (tests/recheck/hosts_network.py) leave nothing behind: not when a
test using them fails, nor when a run dies before it can clean up (the next run removes what it
left). Needs root and `ip netns`, as the hosts simulation does; on CI as root it must run."""
import os
import subprocess
import time

import pytest

from tests.recheck import hosts_network

REASON = hosts_network.unavailable()
pytestmark = pytest.mark.skipif(
    REASON is not None and not (os.environ.get("CI") and os.geteuid() == 0),
    reason=f"no network namespaces here: {REASON}",
)


def namespaces() -> set[str]:
    return {line.split()[0] for line in subprocess.run(["ip", "netns", "list"], capture_output=True, text=True,
                                                        check=True).stdout.splitlines() if line.strip()}


def links() -> str:
    return subprocess.run(["ip", "-o", "link"], capture_output=True, text=True, check=True).stdout


def test_a_failure_inside_leaves_no_namespace_link_or_process():
    made = hosts_network.HostNetworks(2)
    with pytest.raises(RuntimeError, match="the test failed"):
        try:
            made.create()
            host = made.hosts[0]
            sleeper = subprocess.Popen(host.command(["sleep", "60"]), start_new_session=True)
            deadline = time.monotonic() + 10
            while host.pids() != [sleeper.pid]:  # `ip netns exec` enters the namespace, then execs
                assert time.monotonic() < deadline, host.pids()
                time.sleep(0.05)
            raise RuntimeError("the test failed")
        finally:
            made.close()
    assert sleeper.wait(timeout=10) != 0, "what ran in a namespace is ended with it"
    assert not {host.namespace for host in made.hosts} & namespaces()
    assert not any(host.outer in links() for host in made.hosts)


def test_what_a_dead_run_left_is_removed_by_the_next():
    gone = subprocess.Popen(["true"])
    gone.wait()
    left = f"{hosts_network.PREFIX}-{gone.pid}-dead00h0"
    subprocess.run(["ip", "netns", "add", left], check=True)
    subprocess.run(["ip", "link", "add", "rsdead00o0", "type", "veth", "peer", "name", "rsdead00i0"], check=True)
    subprocess.run(["ip", "link", "set", "rsdead00i0", "netns", left], check=True)
    mine = f"{hosts_network.PREFIX}-{os.getpid()}-live00h0"
    subprocess.run(["ip", "netns", "add", mine], check=True)
    try:
        assert left in hosts_network.remove_left_overs()
        assert left not in namespaces()
        # The kernel removes a namespace's veth pairs after it, a moment later.
        deadline = time.monotonic() + 10
        while "rsdead00o0" in links():
            assert time.monotonic() < deadline, "the left-over veth pair outlived its namespace"
            time.sleep(0.1)
        assert mine in namespaces(), "a live run's namespace is its own"
    finally:
        for name in (left, mine):
            subprocess.run(["ip", "netns", "del", name], capture_output=True)
        subprocess.run(["ip", "link", "del", "rsdead00o0"], capture_output=True)
