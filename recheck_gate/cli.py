"""recheck-gate: wait in CI until Recheck has verified a commit of a pull request, print its
blockers, and exit 0 when the pull request may merge, 1 when it may not, 2 when that could not be
found out (Recheck unreachable, refused, or no verdict in time).

`recheck-gate follow-ups` lists a repository's follow-ups still to do with their due dates, and
with `--fail-on-overdue` exits 1 when one is overdue.

`recheck-gate report` sends a CI check's report of a commit (JUnit XML, SARIF, or a bare
conclusion), which Recheck verifies check evidence from: exit 0 when it was kept (or had been),
2 when it could not be sent or was refused.

Plain Python and the standard library only: it runs in any CI image with the project installed,
with no database and no Django settings. It talks to Recheck's REST API (the merge gate, the
verify action and the annotations of a commit) with a token."""
import argparse
import hashlib
import json
import os
import random
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass

MERGEABLE, NOT_MERGEABLE, UNKNOWN = 0, 1, 2
REQUEST_TIMEOUT_SECONDS = 30
FIRST_WAIT_SECONDS = 2.0
LONGEST_WAIT_SECONDS = 30.0


class GateError(Exception):
    """Recheck could not tell: the message says why and what to do."""


@dataclass
class Answer:
    status: int
    body: dict


class Recheck:
    """The few API calls the gate needs, with the token on each."""

    def __init__(self, url: str, token: str, repo: str, pr: int):
        self.base = url.rstrip("/")
        self.token = token
        owner, _, name = repo.partition("/")
        self.repository = f"{self.base}/api/repos/{urllib.parse.quote(owner)}/{urllib.parse.quote(name)}"
        self.pull = f"{self.repository}/pulls/{pr}"

    def call(self, method: str, url: str, data: dict | None = None) -> Answer:
        body = json.dumps(data).encode() if data is not None else None
        request = urllib.request.Request(url, data=body, method=method, headers={
            "Accept": "application/json",
            "User-Agent": "recheck-gate",
            **({"Authorization": f"Token {self.token}"} if self.token else {}),
            **({"Content-Type": "application/json"} if body is not None else {}),
        })
        try:
            with urllib.request.urlopen(request, timeout=REQUEST_TIMEOUT_SECONDS) as response:
                return Answer(response.status, _json(response.read()))
        except urllib.error.HTTPError as error:
            return Answer(error.code, _json(error.read()))
        except (urllib.error.URLError, TimeoutError, OSError) as error:
            reason = getattr(error, "reason", error)
            return Answer(0, {"detail": f"Recheck at {self.base} could not be reached: {reason}"})

    def send(self, url: str, body: bytes, content_type: str) -> Answer:
        """POST ``body`` as it is (a report file), not as JSON."""
        request = urllib.request.Request(url, data=body, method="POST", headers={
            "Accept": "application/json",
            "User-Agent": "recheck-gate",
            "Content-Type": content_type,
            **({"Authorization": f"Token {self.token}"} if self.token else {}),
        })
        try:
            with urllib.request.urlopen(request, timeout=REQUEST_TIMEOUT_SECONDS) as response:
                return Answer(response.status, _json(response.read()))
        except urllib.error.HTTPError as error:
            return Answer(error.code, _json(error.read()))
        except (urllib.error.URLError, TimeoutError, OSError) as error:
            reason = getattr(error, "reason", error)
            return Answer(0, {"detail": f"Recheck at {self.base} could not be reached: {reason}"})

    def gate(self, sha: str) -> Answer:
        return self.call("GET", f"{self.pull}/gate?commit={urllib.parse.quote(sha)}")

    def verify(self, sha: str) -> Answer:
        return self.call("POST", f"{self.pull}/verify", {"commit": sha})

    def annotations(self, sha: str) -> Answer:
        return self.call("GET", f"{self.pull}/annotations?commit={urllib.parse.quote(sha)}")


    def follow_ups(self) -> list[dict]:
        """The repository's follow-ups still to do (open, or verified fixed and not yet marked),
        every page of them."""
        url, found = f"{self.repository}/follow-ups/?state=unclosed&page_size=200", []
        for _ in range(50):  # at most 10,000: enough for a warning
            answer = self.call("GET", url)
            if answer.status != 200:
                raise _refused(answer)
            found += answer.body.get("results", [])
            url = answer.body.get("next")
            if not url:
                break
        return found


def _json(raw: bytes) -> dict:
    try:
        value = json.loads(raw or b"{}")
    except ValueError:
        return {"detail": raw[:300].decode("utf-8", "replace")}
    return value if isinstance(value, dict) else {"detail": str(value)[:300]}


def _refused(answer: Answer) -> GateError:
    detail = answer.body.get("detail") or answer.body
    if answer.status == 401:
        return GateError(f"Recheck refused the token (401): {detail}")
    if answer.status == 403:
        return GateError(f"Recheck refused (403): {detail}")
    if answer.status == 404:
        return GateError(f"Recheck does not know this pull request (404): {detail}")
    return GateError(f"Recheck answered {answer.status or 'nothing'}: {detail}")


def wait_for_gate(recheck: Recheck, sha: str, *, timeout: float, log=print, sleep=time.sleep) -> dict:
    """The merge gate at `sha` once it is verified there: asks for a verification when there is
    none, and waits with a growing, jittered interval, at most `timeout` seconds in all."""
    deadline = time.monotonic() + timeout
    wait = FIRST_WAIT_SECONDS
    requested = False
    while True:
        answer = recheck.gate(sha)
        if answer.status == 200:
            gate = answer.body
            run = gate.get("verification_run")
            # An override holds at the commit whatever a verification would say: nothing to wait for.
            if gate.get("overridden") or (run is None and gate.get("verified")):
                return gate
            if run is None and requested:
                raise GateError(f"The verification of {sha[:8]} ended without a verdict for every open blocker: "
                                f"{gate.get('reason')}")
            if run is None:
                requested = _request(recheck, sha, log)
            else:
                log(f"Waiting for verification run {run.get('id')} ({run.get('status')}) of {sha[:8]}…")
                requested = True
        elif answer.status == 400 and not requested:
            # Recheck has not heard of the commit yet (the push webhook may be slower than CI).
            requested = _request(recheck, sha, log)
        elif answer.status in (401, 403, 404) or (answer.status == 400 and requested):
            raise _refused(answer)
        else:
            log(f"Recheck answered {answer.status or 'nothing'} ({answer.body.get('detail', '')}); trying again.")
        left = deadline - time.monotonic()
        if left <= 0:
            raise GateError(f"No verdict for {sha[:8]} within {timeout:g}s: the verification is still under way. "
                            "Raise --timeout, or look at the pull request's page.")
        sleep(min(left, wait * random.uniform(0.8, 1.2)))
        wait = min(LONGEST_WAIT_SECONDS, wait * 1.6)


def _request(recheck: Recheck, sha: str, log) -> bool:
    answer = recheck.verify(sha)
    if answer.status == 202:
        log(f"Asked Recheck to verify {sha[:8]} (run {answer.body.get('run')}); waiting for its verdict.")
        return True
    if answer.status in (0, 429) or answer.status >= 500:
        log(f"Could not ask for a verification yet ({answer.status or 'no answer'}); trying again.")
        return False
    raise _refused(answer)


# --- Output ------------------------------------------------------------------------------------


def text_report(gate: dict) -> str:
    lines = [gate.get("reason", "")]
    overridden = gate.get("overridden")
    if overridden:
        note = f": {overridden['note']}" if overridden.get("note") else ""
        lines.append(f"  Overridden at {str(overridden.get('commit', ''))[:8]} by {overridden.get('by') or 'an operator'} "
                     f"on {str(overridden.get('at', ''))[:10]}, reason {overridden.get('reason')}{note}")
    for blocker in gate.get("open_blockers", []):
        verdict = (blocker.get("verdict") or "not verified").replace("_", " ")
        lines.append(f"  B{blocker['number']} {blocker['title']}: {verdict}  {blocker.get('url', '')}".rstrip())
    # The gate lists the first 50 of each; the rest are counted, and the findings list has them all.
    more = gate.get("open_blockers_count", 0) - len(gate.get("open_blockers", []))
    if more > 0:
        lines.append(f"  ... and {more} more open blocker(s): {gate.get('open_blockers_url', '')}".rstrip())
    for blocker in gate.get("possibly_regressed", []):
        lines.append(f"  B{blocker['number']} {blocker['title']}: marked fixed, looks regressed  {blocker.get('url', '')}")
    more = gate.get("possibly_regressed_count", 0) - len(gate.get("possibly_regressed", []))
    if more > 0:
        lines.append(f"  ... and {more} more that look regressed")
    for item in gate.get("overdue_cleanups", []):
        lines.append(f"  {item['finding']} {item['title']}: overdue since {str(item.get('due_at', ''))[:10]}")
    return "\n".join(lines)


def follow_ups_report(follow_ups: list[dict], *, repo: str) -> str:
    """A warning naming each follow-up still to do on the default branch: they never block a merge."""
    if not follow_ups:
        return f"No follow-up of {repo} is left to do."
    overdue = sum(1 for item in follow_ups if item.get("due_state") == "overdue")
    lines = [f"Warning: {len(follow_ups)} follow-up(s) of {repo} left to do"
             + (f", {overdue} overdue" if overdue else "") + ":"]
    for item in follow_ups:
        where = "; ".join(place.get("where", "") for place in item.get("evidence", []) if place.get("where"))
        due = ""
        if item.get("due_at"):
            due = f", {(item.get('due_label') or 'due').lower()} {str(item['due_at'])[:10]}"
            if item.get("due_state") in ("", "due"):
                due = f", due {str(item['due_at'])[:10]}"
        lines.append(f"  {item['finding']} {item['title']}: {item.get('state_label', item['state'])}, "
                     f"{item.get('verdict_label', '')}, {item.get('age_days', 0)} day(s) old{due}"
                     + (f"  {where}" if where else ""))
    return "\n".join(lines)


def parse_follow_up_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="recheck-gate follow-ups",
        description="List a repository's follow-ups still to do, with their due dates. Exit 0, or with "
        "--fail-on-overdue 1 when any is overdue; 2 when they could not be listed.",
    )
    _add_recheck_arguments(parser, token="An API token that reads the repository")
    parser.add_argument("--fail-on-overdue", action="store_true",
                        help="Exit 1 when a follow-up is past its due date (the repository's merge policy dates them).")
    return _parsed(parser, argv)


def follow_ups_main(argv: list[str]) -> int:
    args = parse_follow_up_args(argv)
    try:
        follow_ups = Recheck(args.url, args.token, args.repo, 0).follow_ups()
    except GateError as error:
        log(f"recheck-gate follow-ups: {error}")
        return UNKNOWN
    print(follow_ups_report(follow_ups, repo=args.repo))
    overdue = [item for item in follow_ups if item.get("due_state") == "overdue"]
    if args.fail_on_overdue and overdue:
        log(f"recheck-gate follow-ups: {len(overdue)} follow-up(s) of {args.repo} are overdue.")
        return NOT_MERGEABLE
    return MERGEABLE


def rdjson_report(annotations: list[dict], *, base_url: str) -> dict:
    """reviewdog's Diagnostic Format (rdjson): one diagnostic per open finding."""
    return {
        "source": {"name": "Recheck", "url": base_url},
        "severity": "ERROR" if any(item["kind"] == "blocker" for item in annotations) else "INFO",
        "diagnostics": [
            {
                "message": f"{item['title']}\n\n{item['message']}",
                "location": {
                    "path": item["path"],
                    "range": {"start": {"line": item["start_line"]}, "end": {"line": item["end_line"]}},
                },
                "severity": "ERROR" if item["kind"] == "blocker" else "INFO",
                "source": {"name": "Recheck", "url": base_url},
                "code": {"value": f"{'B' if item['kind'] == 'blocker' else 'C'}{item['number']}",
                         **({"url": item["url"]} if item.get("url") else {})},
            }
            for item in annotations
        ],
    }


def codeclimate_report(annotations: list[dict], *, pull_request: str) -> list[dict]:
    """A GitLab code quality report (Code Climate's issue format, with GitLab's required fields)."""
    return [
        {
            "type": "issue",
            "check_name": f"recheck-{item['kind']}",
            "description": item["title"],
            "content": {"body": item["message"]},
            "categories": ["Bug Risk"] if item["kind"] == "blocker" else ["Style"],
            # The same finding keeps its fingerprint from commit to commit, so GitLab can tell
            # a new finding from one that moved.
            "fingerprint": hashlib.sha256(f"{pull_request}/{item['kind']}/{item['number']}".encode()).hexdigest(),
            "severity": "blocker" if item["kind"] == "blocker" else "minor",
            "location": {"path": item["path"], "lines": {"begin": item["start_line"], "end": item["end_line"]}},
        }
        for item in annotations
    ]


# --- The command -------------------------------------------------------------------------------


def _add_recheck_arguments(parser: argparse.ArgumentParser, *, token: str) -> None:
    """Where Recheck is, the token to reach it with, and the repository: every command's first three."""
    parser.add_argument("--url", default=os.environ.get("RECHECK_URL", ""),
                        help="Recheck's address, e.g. https://recheck.example.com (env RECHECK_URL).")
    parser.add_argument("--token", default=os.environ.get("RECHECK_TOKEN", ""), help=f"{token} (env RECHECK_TOKEN).")
    parser.add_argument("--repo", required=True, help="owner/name, as on the forge.")


def _parsed(parser: argparse.ArgumentParser, argv: list[str] | None) -> argparse.Namespace:
    args = parser.parse_args(argv)
    if not args.url:
        parser.error("give --url or set RECHECK_URL")
    if "/" not in args.repo:
        parser.error("--repo is owner/name")
    return args


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="recheck-gate",
        description="Wait until Recheck has verified a commit of a pull request; exit 0 when it may merge, "
        "1 when it may not, 2 when that could not be found out.",
    )
    _add_recheck_arguments(parser, token="An API token that may request verifications")
    parser.add_argument("--pr", required=True, type=int, help="The pull request's number.")
    parser.add_argument("--sha", required=True, help="The commit CI runs on (full SHA).")
    parser.add_argument("--format", choices=["text", "rdjson", "codeclimate"], default="text",
                        help="text (default), rdjson for reviewdog, or codeclimate for GitLab's code quality report.")
    parser.add_argument("--follow-ups", action="store_true",
                        help="Also list the repository's follow-ups still to do, as a warning: the exit code is the "
                        "gate's alone, since follow-ups never block a merge.")
    parser.add_argument("--timeout", type=float, default=900.0,
                        help="Seconds to wait for the verdict in all (default 900).")
    return _parsed(parser, argv)


def parse_report_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="recheck-gate report",
        description="Send a CI check's report of a commit to Recheck: a JUnit XML report, a SARIF log, or a bare "
        "conclusion. Exit 0 when Recheck kept it (or already had it), 2 when it could not be sent or was refused.",
    )
    _add_recheck_arguments(parser, token="An API token with the reports:write scope")
    parser.add_argument("--sha", required=True, help="The commit the check ran on.")
    parser.add_argument("--check", required=True, help="The check's name, as the CI gives it (the job's).")
    what = parser.add_mutually_exclusive_group(required=True)
    what.add_argument("--junit", metavar="FILE", help="A JUnit XML report.")
    what.add_argument("--sarif", metavar="FILE", help="A SARIF 2.1.0 log.")
    what.add_argument("--conclusion", choices=CONCLUSIONS, help="The check's conclusion, when it wrote no report.")
    parser.add_argument("--run-url", default="", help="The run on the CI.")
    parser.add_argument("--attempt", type=int, default=1, help="The run's attempt (default 1).")
    parser.add_argument("--app", default="", help="The app or CI that made the report.")
    parser.add_argument(
        "--checkout-root", default=os.environ.get("GITHUB_WORKSPACE") or os.environ.get("CI_PROJECT_DIR") or "",
        help="SARIF: the checkout directory the tool wrote absolute paths in (default: GITHUB_WORKSPACE or "
        "CI_PROJECT_DIR); without it Recheck places each path by its longest ending that is a file of the commit.",
    )
    return _parsed(parser, argv)


# What a check may have concluded, as Recheck names it.
CONCLUSIONS = ("success", "failure", "cancelled", "skipped", "neutral", "timed_out", "action_required", "stale")


def send_report(args: argparse.Namespace) -> dict:
    """Send the report the arguments name; Recheck's answer, or GateError saying why not."""
    recheck = Recheck(args.url, args.token, args.repo, 0)
    query = {"check": args.check, "attempt": str(args.attempt)}
    for name, value in (("conclusion", args.conclusion), ("url", args.run_url), ("app", args.app)):
        if value:
            query[name] = value
    body, content_type = b"", "application/octet-stream"
    path = args.junit or args.sarif
    if path:
        try:
            with open(path, "rb") as file:
                body = file.read()
        except OSError as error:
            raise GateError(f"cannot read {path}: {error.strerror}") from None
        content_type = "application/xml" if args.junit else "application/sarif+json"
        if args.sarif and args.checkout_root:
            query["checkout_root"] = args.checkout_root
    url = (f"{recheck.repository}/commits/{urllib.parse.quote(args.sha)}/reports/?"
           f"{urllib.parse.urlencode(query)}")
    answer = recheck.send(url, body, content_type)
    if answer.status == 404:
        raise GateError(f"Recheck refused the report (404): {answer.body.get('detail') or answer.body}")
    if answer.status not in (200, 201):
        raise _refused(answer)
    return answer.body


def report_main(argv: list[str]) -> int:
    args = parse_report_args(argv)
    try:
        kept = send_report(args)
    except GateError as error:
        log(f"recheck-gate report: {error}")
        return UNKNOWN
    said = f"{kept.get('check')} at {str(kept.get('commit'))[:12]}: {kept.get('conclusion')}"
    if kept.get("format") == "junit":
        said += f", {kept.get('tests')} tests, {kept.get('tests_failed')} failed"
    elif kept.get("format") == "sarif":
        said += f", {kept.get('results')} results"
    print(("Sent " if kept.get("created") else "Already sent: ") + said)
    return MERGEABLE


def log(message: str) -> None:
    """Progress and errors go to stderr, so stdout carries only the report."""
    print(message, file=sys.stderr, flush=True)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["report"]:
        return report_main(argv[1:])
    if argv[:1] == ["follow-ups"]:
        return follow_ups_main(argv[1:])
    args = parse_args(argv)
    recheck = Recheck(args.url, args.token, args.repo, args.pr)
    try:
        gate = wait_for_gate(recheck, args.sha, timeout=args.timeout, log=log)
        if args.format != "text":
            answer = recheck.annotations(gate["commit"])
            if answer.status != 200:
                raise _refused(answer)
            annotations = answer.body.get("annotations", [])
    except GateError as error:
        log(f"recheck-gate: {error}")
        return UNKNOWN
    if args.format == "text":
        print(text_report(gate))
    else:
        log(text_report(gate))
        report = (rdjson_report(annotations, base_url=recheck.base) if args.format == "rdjson"
                  else codeclimate_report(annotations, pull_request=f"{args.repo}#{args.pr}"))
        print(json.dumps(report, indent=2))
    if args.follow_ups:
        _warn_follow_ups(recheck, args)
    return MERGEABLE if gate.get("mergeable") else NOT_MERGEABLE


def _warn_follow_ups(recheck: Recheck, args) -> None:
    try:
        report = follow_ups_report(recheck.follow_ups(), repo=args.repo)
    except GateError as error:
        log(f"recheck-gate: the follow-ups could not be listed: {error}")
        return
    if args.format == "text":
        print(report)
    else:
        log(report)


if __name__ == "__main__":
    sys.exit(main())
