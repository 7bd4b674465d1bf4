"""Clone URLs never make this server connect to its own or its network's internal addresses."""
import socket
import threading

import pytest

from core.errors import RepositoryError
from engine.git import fetch_mirror, mirror_dir_for, validate_clone_url
from engine.git.safety import clone_url_addresses, host_is_allowed, literal_address


class Listener:
    """A TCP server on 127.0.0.1 that counts the connections it is offered."""

    def __init__(self):
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.sock.settimeout(0.1)
        self.port = self.sock.getsockname()[1]
        self.connections = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self):
        while not self._stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except (TimeoutError, OSError):
                continue
            self.connections += 1
            conn.close()

    def close(self):
        self._stop.set()
        self._thread.join()
        self.sock.close()


@pytest.fixture
def listener():
    server = Listener()
    yield server
    server.close()


def loopback_spellings(port: int) -> list[str]:
    return [
        f"https://127.0.0.1:{port}/acme/app.git",
        f"https://localhost:{port}/acme/app.git",
        f"https://LocalHost:{port}/acme/app.git",
        f"https://127.1:{port}/acme/app.git",
        f"https://2130706433:{port}/acme/app.git",
        f"https://0x7f.1:{port}/acme/app.git",
        f"https://0x7f000001:{port}/acme/app.git",
        f"https://017700000001:{port}/acme/app.git",
        f"https://0177.0.0.1:{port}/acme/app.git",
        f"https://[::ffff:127.0.0.1]:{port}/acme/app.git",
        f"https://[::ffff:7f00:1]:{port}/acme/app.git",
        f"https://[::1]:{port}/acme/app.git",
        f"https://[0:0:0:0:0:0:0:1]:{port}/acme/app.git",
        f"ssh://git@127.0.0.1:{port}/acme/app.git",
        f"ssh://git@0x7f.1:{port}/acme/app.git",
    ]


INTERNAL_URLS = [
    "https://169.254.169.254/latest/meta-data.git",
    "https://10.0.0.8/acme/app.git",
    "https://172.16.4.2/acme/app.git",
    "https://192.168.1.1/acme/app.git",
    "https://100.64.0.1/acme/app.git",
    "https://0.0.0.0/acme/app.git",
    "https://0/acme/app.git",
    "https://224.0.0.1/acme/app.git",
    "https://240.0.0.1/acme/app.git",
    "https://255.255.255.255/acme/app.git",
    "https://[fd00::1]/acme/app.git",
    "https://[fe80::1]/acme/app.git",
    "https://[ff02::1]/acme/app.git",
    "https://[::]/acme/app.git",
    "https://[2002:7f00:1::]/acme/app.git",
    "https://[64:ff9b::a9fe:a9fe]/acme/app.git",
    "git@10.1.2.3:acme/app.git",
    "git@[::1]:acme/app.git",
]


def test_every_spelling_of_loopback_is_refused_and_nothing_is_contacted(listener, tmp_path):
    for url in loopback_spellings(listener.port):
        with pytest.raises(RepositoryError, match="loopback|public"):
            validate_clone_url(url, allow_local=False)
        with pytest.raises(RepositoryError, match="loopback|public"):
            fetch_mirror(url=url, mirror_dir=tmp_path / "m.git", allow_local=False, timeout=10)
    assert listener.connections == 0


@pytest.mark.parametrize("url", INTERNAL_URLS)
def test_private_link_local_multicast_reserved_and_unspecified_addresses_are_refused(url):
    with pytest.raises(RepositoryError, match="address"):
        validate_clone_url(url, allow_local=False)


def test_local_sources_being_allowed_does_not_open_internal_hosts(listener):
    with pytest.raises(RepositoryError, match="loopback"):
        validate_clone_url(f"https://127.0.0.1:{listener.port}/acme/app.git", allow_local=True)


@pytest.mark.parametrize(
    "url", ["https://github.com/acme/app.git", "https://[2606:4700:4700::1111]/a/b", "https://8.8.8.8/a/b.git"]
)
def test_public_hosts_are_accepted(url):
    assert validate_clone_url(url, allow_local=False, resolve=lambda host, port: ["140.82.121.3"]) == url


def test_a_name_that_resolves_to_an_internal_address_is_refused():
    with pytest.raises(RepositoryError, match="forge.example is a private address"):
        validate_clone_url("https://forge.example/a/b.git", allow_local=False, resolve=lambda h, p: ["10.0.0.7"])


def test_one_internal_address_among_public_ones_is_enough_to_refuse():
    with pytest.raises(RepositoryError, match="loopback"):
        validate_clone_url(
            "https://forge.example/a/b.git", allow_local=False, resolve=lambda h, p: ["140.82.121.3", "::1"]
        )


def test_a_name_that_rebinds_to_loopback_after_it_was_accepted_is_refused_before_git_connects(listener, tmp_path):
    answers = iter([["140.82.121.3"], ["127.0.0.1"]])
    url = f"https://rebind.example:{listener.port}/acme/app.git"

    with pytest.raises(RepositoryError, match="loopback"):
        fetch_mirror(
            url=url, mirror_dir=tmp_path / "m.git", allow_local=False, timeout=10, resolve=lambda h, p: next(answers)
        )
    assert listener.connections == 0


def test_a_name_that_does_not_resolve_is_accepted_but_not_fetched():
    def nothing(host, port):
        raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")

    url = "https://forge.invalid/a/b.git"
    assert validate_clone_url(url, allow_local=False, resolve=nothing) == url
    with pytest.raises(RepositoryError, match="cannot resolve"):
        clone_url_addresses(url, resolve=nothing)


def test_git_connects_to_exactly_the_address_that_was_checked(listener, tmp_path):
    # `pinned.invalid` has no DNS entry: git can only reach the listener through the pinned address.
    url = f"https://pinned.invalid:{listener.port}/acme/app.git"

    with pytest.raises(RepositoryError, match="could not fetch"):
        fetch_mirror(
            url=url, mirror_dir=tmp_path / "m.git", allow_local=False, timeout=20,
            internal_hosts=["pinned.invalid"], resolve=lambda host, port: ["127.0.0.1"],
        )
    assert listener.connections >= 1


def test_only_allowlisted_forges_are_accepted_when_a_list_is_given():
    public = lambda host, port: ["140.82.121.3"]  # noqa: E731
    allowed = ["github.com", ".example.com"]
    assert validate_clone_url("https://github.com/a/b", allow_local=False, allowed_hosts=allowed, resolve=public)
    assert validate_clone_url("git@git.example.com:a/b", allow_local=False, allowed_hosts=allowed, resolve=public)
    with pytest.raises(RepositoryError, match="RECHECK_ALLOWED_GIT_HOSTS"):
        validate_clone_url("https://gitlab.com/a/b", allow_local=False, allowed_hosts=allowed, resolve=public)
    with pytest.raises(RepositoryError, match="RECHECK_ALLOWED_GIT_HOSTS"):
        validate_clone_url("https://evilexample.com/a/b", allow_local=False, allowed_hosts=allowed, resolve=public)


def test_an_allowlisted_name_must_still_resolve_to_a_public_address():
    with pytest.raises(RepositoryError, match="private"):
        validate_clone_url(
            "https://github.com/a/b", allow_local=False, allowed_hosts=["github.com"], resolve=lambda h, p: ["10.9.8.7"]
        )


def test_a_forge_named_as_internal_may_resolve_to_a_private_address():
    url = "https://gitlab.corp/a/b.git"
    private = lambda host, port: ["10.0.0.5"]  # noqa: E731
    assert validate_clone_url(url, allow_local=False, internal_hosts=["gitlab.corp"], resolve=private) == url
    with pytest.raises(RepositoryError, match="private"):
        validate_clone_url("https://other.corp/a/b.git", allow_local=False, internal_hosts=["gitlab.corp"],
                           resolve=private)


@pytest.mark.parametrize(
    ("host", "address"),
    [("2130706433", "127.0.0.1"), ("0x7f.1", "127.0.0.1"), ("017700000001", "127.0.0.1"), ("127.1", "127.0.0.1"),
     ("[::ffff:127.0.0.1]", "::ffff:7f00:1"), ("cafe.example", None), ("deadbeef", None)],
)
def test_literal_addresses_are_read_in_every_spelling(host, address):
    found = literal_address(host)
    assert (str(found) if found else None) == address


def test_subdomain_entries_do_not_match_lookalikes():
    assert host_is_allowed("a.b.example.com", [".example.com"])
    assert host_is_allowed("example.com", [".example.com"])
    assert not host_is_allowed("badexample.com", [".example.com"])


def test_the_mirror_is_not_created_for_a_refused_url(tmp_path):
    mirror_dir = mirror_dir_for(tmp_path, "acme/app")
    with pytest.raises(RepositoryError):
        fetch_mirror(url="https://169.254.169.254/a/b.git", mirror_dir=mirror_dir, allow_local=False)
    assert not mirror_dir.exists()
