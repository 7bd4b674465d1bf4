"""A network of its own for each simulated host (tests/recheck/test_hosts_simulation.py): a network
namespace joined to this machine's by a veth pair on a /30 of its own, from which the host reaches
PostgreSQL and Redis only at the address of the pair's end in this machine's namespace. Redis binds
those addresses itself; PostgreSQL, which listens on 127.0.0.1 only, is reached through a `socat`
forwarder listening on each of them. Nothing else is routed: a host cannot reach this machine's
127.0.0.1, as a host of its own could not.

Needs root, iproute2's `ip netns` and `socat`. Names are unique to the run and carry the id of the
process that made them, so that a run that crashed before cleaning up breaks no later one: its
namespaces (and with them their veth pairs) are removed by the next run once its process is gone."""
import ctypes
import ipaddress
import os
import re
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass

PREFIX = "recheck-sim"
NAME = re.compile(rf"^{PREFIX}-(\d+)-\w+$")


def _ip(*args: str, check: bool = True) -> subprocess.CompletedProcess:
    completed = subprocess.run(["ip", *args], capture_output=True, text=True, timeout=30)
    if check and completed.returncode != 0:
        raise RuntimeError(f"ip {' '.join(args)}: {completed.stderr.strip()}")
    return completed


def unavailable() -> str | None:
    """Why this machine cannot give each host a network namespace, or None when it can."""
    if os.geteuid() != 0:
        return "not running as root"
    missing = [tool for tool in ("ip", "socat") if shutil.which(tool) is None]
    if missing:
        return f"{' and '.join(missing)} not installed"
    probe = f"{PREFIX}-{os.getpid()}-probe{secrets.token_hex(2)}"
    added = _ip("netns", "add", probe, check=False)
    if added.returncode != 0:
        return f"ip netns add failed: {added.stderr.strip()}"
    entered = subprocess.run(["ip", "netns", "exec", probe, "true"], capture_output=True, text=True, timeout=30)
    _ip("netns", "del", probe, check=False)
    if entered.returncode != 0:
        return f"ip netns exec failed: {entered.stderr.strip()}"
    return None


def dies_with_this_process() -> None:
    """A `preexec_fn`: the child is sent SIGKILL when the process that started it dies, so that a
    test killed outright leaves neither a worker nor a forwarder behind (Linux's PR_SET_PDEATHSIG,
    which an exec keeps)."""
    ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def remove_left_overs() -> list[str]:
    """Remove the namespaces a run whose process is gone left behind (its veth pairs go with them)."""
    removed = []
    for line in _ip("netns", "list").stdout.splitlines():
        name = line.split()[0] if line.strip() else ""
        match = NAME.match(name)
        if match and not _alive(int(match.group(1))):
            # What that run left running in it (its hosts' workers), then the namespace.
            for pid in _ip("netns", "pids", name, check=False).stdout.split():
                try:
                    os.kill(int(pid), signal.SIGKILL)
                except ProcessLookupError:
                    pass
            _ip("netns", "del", name, check=False)
            removed.append(name)
    return removed


def _free_block() -> ipaddress.IPv4Network:
    """A /24 of 10.0.0.0/8 that no address or route of this machine touches: a /30 per host in it."""
    used = _ip("-o", "addr").stdout + _ip("route").stdout
    while True:
        second, third = secrets.randbelow(150) + 100, secrets.randbelow(256)
        if f"10.{second}.{third}." not in used:
            return ipaddress.IPv4Network(f"10.{second}.{third}.0/24")


@dataclass
class HostNetwork:
    namespace: str
    outer: str  # the veth end in this machine's namespace
    inner: str  # the veth end in the host's namespace
    outer_address: str  # where the host reaches PostgreSQL and Redis
    inner_address: str

    def command(self, argv: list[str]) -> list[str]:
        """`argv` run inside the namespace: `ip netns exec` enters it and execs `argv` in place, so
        the process started is the command itself and its process group is the host's."""
        return ["ip", "netns", "exec", self.namespace, *argv]

    def pids(self) -> list[int]:
        """The processes left in the namespace."""
        return [int(pid) for pid in _ip("netns", "pids", self.namespace).stdout.split()]

    def connects(self, address: str, port: int) -> str:
        """'ok', or why a TCP connection from inside the namespace to `address`:`port` failed."""
        probe = (
            "import socket, sys\n"
            "try:\n"
            f"    socket.create_connection(({address!r}, {port}), timeout=2).close(); print('ok')\n"
            "except OSError as error:\n"
            "    print(error)\n"
        )
        return subprocess.run(self.command([sys.executable, "-c", probe]), capture_output=True, text=True,
                              timeout=30).stdout.strip()


class HostNetworks:
    """The namespaces of `count` hosts and the forwarders to PostgreSQL; `close` removes all of them,
    whatever state a failure left them in."""

    def __init__(self, count: int):
        self.token = secrets.token_hex(3)
        self.hosts: list[HostNetwork] = []
        self.forwarders: list[subprocess.Popen] = []
        self.count = count

    def create(self) -> "HostNetworks":
        remove_left_overs()
        block = _free_block()
        for index in range(self.count):
            subnet = list(block.subnets(new_prefix=30))[index]
            outer_address, inner_address = (str(address) for address in list(subnet.hosts())[:2])
            # Interface names are at most 15 characters.
            host = HostNetwork(f"{PREFIX}-{os.getpid()}-{self.token}h{index}", f"rs{self.token}o{index}",
                               f"rs{self.token}i{index}", outer_address, inner_address)
            self.hosts.append(host)
            _ip("netns", "add", host.namespace)
            _ip("link", "add", host.outer, "type", "veth", "peer", "name", host.inner)
            _ip("link", "set", host.inner, "netns", host.namespace)
            _ip("addr", "add", f"{outer_address}/30", "dev", host.outer)
            _ip("link", "set", host.outer, "up")
            for args in (("addr", "add", f"{inner_address}/30", "dev", host.inner), ("link", "set", host.inner, "up"),
                         ("link", "set", "lo", "up")):
                _ip("-n", host.namespace, *args)
        return self

    def forward(self, port: int, to: tuple[str, int]) -> None:
        """Listen on `port` at every host's outer address and pass each connection on to `to`."""
        for host in self.hosts:
            self.forwarders.append(subprocess.Popen(
                ["socat", f"TCP-LISTEN:{port},bind={host.outer_address},reuseaddr,fork", f"TCP:{to[0]}:{to[1]}"],
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
                preexec_fn=dies_with_this_process,
            ))
        for host in self.hosts:
            deadline = time.monotonic() + 10
            while True:
                try:
                    socket.create_connection((host.outer_address, port), timeout=1).close()
                    break
                except OSError:
                    assert time.monotonic() < deadline, f"the forwarder on {host.outer_address}:{port} did not start"
                    time.sleep(0.05)

    def close(self) -> None:
        for forwarder in self.forwarders:
            # The forwarder and the children it forked for each connection: its process group.
            for sig in (signal.SIGTERM, signal.SIGKILL):
                try:
                    os.killpg(forwarder.pid, sig)
                    forwarder.wait(timeout=10)
                    break
                except ProcessLookupError:
                    forwarder.wait(timeout=10)
                    break
                except subprocess.TimeoutExpired:
                    continue
        for host in self.hosts:
            # Whatever a failure left running in the namespace goes with it.
            for pid in host.pids() if _ip("netns", "pids", host.namespace, check=False).returncode == 0 else []:
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            _ip("netns", "del", host.namespace, check=False)
            _ip("link", "del", host.outer, check=False)  # gone with its peer's namespace, unless that failed
