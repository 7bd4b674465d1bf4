"""Hardened git invocation: fixed argument lists, no user/system config, no prompts.

Every git process Recheck starts goes through ``git_argv``/``git_env`` so the
same protections apply everywhere: only https/ssh (and file, when local
sources are explicitly allowed) transports, no hooks, no redirects, no
submodule recursion, no credential prompts.
"""

from __future__ import annotations

import os
import subprocess
import tempfile
import weakref
from collections.abc import Sequence
from pathlib import Path

from core.errors import RepositoryError

GIT = "git"
_STDERR_LIMIT = 800

# Environment variables that could redirect git to another repository,
# object store or config file, or start a password prompt.
_DROPPED_PREFIXES = ("GIT_",)
_KEPT_GIT_VARS = frozenset({"GIT_SSH", "GIT_SSH_COMMAND", "GIT_SSH_VARIANT"})
_DROPPED_VARS = frozenset({"SSH_ASKPASS", "SSH_ASKPASS_REQUIRE"})


def git_config_args(*, allow_local: bool = False) -> list[str]:
    """The ``-c`` options placed before every git subcommand."""
    settings = [
        "protocol.allow=never",
        "protocol.https.allow=always",
        "protocol.ssh.allow=always",
    ]
    if allow_local:
        settings.append("protocol.file.allow=always")
    settings += [
        "core.hooksPath=/dev/null",
        "core.fsmonitor=false",
        "http.followRedirects=false",
        "http.lowSpeedLimit=1000",
        "http.lowSpeedTime=30",
        "submodule.recurse=false",
        # Automatic gc could prune commits that only old evidence still pins
        # (e.g. PR heads from before a force-push).
        "gc.auto=0",
        "maintenance.auto=false",
    ]
    args: list[str] = []
    for setting in settings:
        args += ["-c", setting]
    return args


def git_env(*, allow_local: bool = False) -> dict[str, str]:
    """A copy of the environment that keeps user and system config out of git."""
    env = {
        key: value
        for key, value in os.environ.items()
        if (not key.startswith(_DROPPED_PREFIXES) or key in _KEPT_GIT_VARS)
        and key not in _DROPPED_VARS
    }
    env.update(
        GIT_TERMINAL_PROMPT="0",
        GIT_CONFIG_NOSYSTEM="1",
        GIT_CONFIG_GLOBAL="/dev/null",
        GIT_ALLOW_PROTOCOL="https:ssh:file" if allow_local else "https:ssh",
        # Partial clones would otherwise fetch missing objects on read.
        GIT_NO_LAZY_FETCH="1",
        LC_ALL="C",
    )
    if "GIT_SSH" not in env and "GIT_SSH_COMMAND" not in env:
        # Never wait for a host-key or password prompt on a server.
        env["GIT_SSH_COMMAND"] = "ssh -o BatchMode=yes"
    return env


def git_argv(
    args: Sequence[str], *, git_dir: Path | None = None, allow_local: bool = False, config: Sequence[str] = ()
) -> list[str]:
    """The full argument list for ``git [hardening] [-c config...] [--git-dir D] <args>``."""
    argv = [GIT, *git_config_args(allow_local=allow_local)]
    for setting in config:
        argv += ["-c", setting]
    if git_dir is not None:
        argv += ["--git-dir", str(git_dir)]
    return argv + list(args)


def run_git(
    args: Sequence[str],
    *,
    git_dir: Path | None = None,
    allow_local: bool = False,
    timeout: float = 120,
    input: bytes | None = None,
    config: Sequence[str] = (),
) -> subprocess.CompletedProcess[bytes]:
    """Run one git command and return it, whatever its exit status.

    Raises RepositoryError only when git cannot be started or times out;
    callers decide what a non-zero exit means.
    """
    argv = git_argv(args, git_dir=git_dir, allow_local=allow_local, config=config)
    try:
        return subprocess.run(
            argv,
            input=input,
            capture_output=True,
            env=git_env(allow_local=allow_local),
            cwd=str(git_dir) if git_dir is not None and git_dir.is_dir() else None,
            timeout=timeout,
            check=False,
        )
    except FileNotFoundError as exc:
        raise git_missing() from exc
    except subprocess.TimeoutExpired as exc:
        raise git_timed_out(args[0], timeout) from exc


def git_missing() -> RepositoryError:
    """What to say when git cannot be started."""
    return RepositoryError("the git executable was not found; install git on this machine")


def git_timed_out(command: str, timeout: float) -> RepositoryError:
    """What to say when ``git command`` ran past its time."""
    return RepositoryError(
        f"git {command} did not finish within {timeout:g} seconds; check that the repository is reachable, "
        "or retry later"
    )


def error_tail(output) -> bytes:
    """The end of what a git process wrote to its error output (a file): earlier lines may be old
    hints, and a message needs only the last."""
    try:
        size = output.seek(0, os.SEEK_END)
        output.seek(max(0, size - 2000))
        return output.read()
    except (OSError, ValueError):
        return b""


def stderr_text(completed: subprocess.CompletedProcess[bytes] | bytes) -> str:
    """git's error output, decoded and trimmed to something fit for a message."""
    raw = completed if isinstance(completed, bytes) else completed.stderr or b""
    text = " ".join(raw.decode("utf-8", "replace").split())
    if len(text) > _STDERR_LIMIT:
        text = text[: _STDERR_LIMIT - 3] + "..."
    return text or "(git printed no error message)"


class GitStarted:
    """One git command running in the background, its input, output and error output in temporary
    files: git needs nothing more from the caller once started (a pipe would stop it as soon as
    64 KiB waited to be read), and the caller goes on with other work. ``result`` waits for it;
    ``close`` (or the object going away) stops it if it still runs, so no git outlives it."""

    def __init__(self, args: Sequence[str], *, git_dir: Path, input: bytes = b"") -> None:
        self.stdout, self.stderr = tempfile.TemporaryFile(), tempfile.TemporaryFile()
        try:
            with tempfile.TemporaryFile() as stdin:
                stdin.write(input)
                stdin.seek(0)
                self.proc = subprocess.Popen(
                    git_argv(args, git_dir=git_dir), stdin=stdin, stdout=self.stdout, stderr=self.stderr,
                    env=git_env(), cwd=str(git_dir),
                )
        except BaseException as exc:
            self.stdout.close()
            self.stderr.close()
            if isinstance(exc, FileNotFoundError):
                raise git_missing() from exc
            raise
        self._args = args
        self._finalizer = weakref.finalize(self, _stop_started, self.proc, self.stdout, self.stderr)

    def wait(self, timeout: float = 120) -> int:
        """git's exit status, once it has ended (RepositoryError past ``timeout`` seconds)."""
        try:
            return self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired as exc:
            self.close()
            raise git_timed_out(self._args[0], timeout) from exc

    def error_output(self) -> bytes:
        """The end of what git printed on its error output."""
        return error_tail(self.stderr)

    def result(self, timeout: float = 120) -> subprocess.CompletedProcess[bytes]:
        """What ``run_git`` answers for the same command, once git has ended."""
        try:
            returncode = self.wait(timeout)
            self.stdout.seek(0)
            return subprocess.CompletedProcess(self._args, returncode, self.stdout.read(), self.error_output())
        finally:
            self.close()

    def close(self) -> None:
        self._finalizer()


def _stop_started(proc: subprocess.Popen[bytes], stdout, stderr) -> None:
    if proc.poll() is None:
        proc.kill()
        proc.wait()
    stdout.close()
    stderr.close()
