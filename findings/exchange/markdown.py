"""Exporting a pull request's review as Markdown a reviewer pastes as a PR comment: the blockers
in the groups the blockers page uses, each with its verdict at the latest verified commit and a
permalink, then the cleanups in a line each.

Text from the database is escaped so that a title with `*` or `[` stays a title."""
import re

from core import vocabulary
from findings.models import Evidence, Finding, Verification
from findings.selectors.findings import findings_of, pull_request_latest_verified_commit, pull_request_pins, verifications_at
from findings.state.stored import states_attach
from reviews.models import Commit, PullRequest


# Characters that mean something inline in CommonMark or GitHub Markdown.
_INLINE = re.compile(r"([\\`*_\[\]<>#|~!&])")
# What would turn the start of a line into a heading, quote, list item or rule.
_LINE_START = re.compile(r"^(\s*)([-+=>]|\d+(?=[.)]))")


def md_escape(text: str) -> str:
    """`text` as literal inline Markdown, on one line."""
    text = " ".join(text.split())
    text = _INLINE.sub(r"\\\1", text)
    match = _LINE_START.match(text)
    if match:
        if match.group(2).isdigit():
            end = match.end()
            text = f"{text[:end]}\\{text[end:]}"
        else:
            text = f"{match.group(1)}\\{text[match.start(2):]}"
    return text


def md_link(text: str, url: str) -> str:
    """A link with escaped text; without a URL just the text."""
    if not url:
        return md_escape(text)
    # Spaces and parentheses would end the link destination early.
    destination = url.replace(" ", "%20").replace("(", "%28").replace(")", "%29").replace("<", "%3C")
    destination = destination.replace(">", "%3E")
    return f"[{md_escape(text)}]({destination})"


def md_code(text: str) -> str:
    """`text` as an inline code span (for SHAs and other short machine text)."""
    fence = "`" * (max((len(run) for run in re.findall(r"`+", text)), default=0) + 1)
    padding = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{padding}{text}{padding}{fence}"


def pull_request_markdown(*, pull_request: PullRequest) -> str:
    repository = pull_request.repository
    commit = pull_request_latest_verified_commit(pull_request)
    pins = pull_request_pins(pull_request)
    link_commit = commit or (pins[-1].commit if pins else None)
    # Each finding's state (how it got its status, whether it looks regressed) from the PR's state.
    findings = states_attach(findings_of(pull_request))
    verifications = verifications_at(findings, commit)
    blockers = [finding for finding in findings if finding.kind == Finding.Kind.BLOCKER]
    cleanups = [finding for finding in findings if finding.kind == Finding.Kind.CLEANUP]

    lines = [
        # The reference is left unescaped so GitHub links it to the pull request.
        f"## Before {md_escape(repository.slug)}#{pull_request.number} can merge: {md_escape(pull_request.title)}",
        "",
        _status_line(pull_request, blockers, cleanups, verifications, commit),
        "",
        f"### Blockers ({len(blockers)})",
    ]
    if not blockers:
        lines += ["", "No blockers recorded."]
    for caught_by, heading, _ in vocabulary.BLOCKER_GROUPS:
        group = [finding for finding in blockers if finding.caught_by == caught_by]
        if not group:
            continue
        lines += ["", f"#### {heading}", ""]
        for finding in group:
            lines += _blocker_lines(finding, verifications.get(finding.pk), commit, link_commit)

    lines += ["", f"### Cleanups ({len(cleanups)}): these can land afterwards", ""]
    if pull_request.cleanups_not_recorded:
        lines += [md_escape(vocabulary.cleanups_not_recorded_sentence(pull_request.cleanups_not_recorded)), ""]
    elif not cleanups:
        lines.append("No cleanups recorded.")
    for finding in cleanups:
        state = _state(finding, verifications.get(finding.pk), commit)
        lines.append(f"- {finding.number}\\. {md_escape(finding.title)} — {state}")
    lines += ["", f"<sub>Recheck, {md_escape(repository.slug)} pull request {pull_request.number}.</sub>", ""]
    return "\n".join(lines)


def _status_line(pull_request, blockers, cleanups, verifications, commit: Commit | None) -> str:
    open_blockers = sum(1 for finding in blockers if finding.status == Finding.Status.OPEN)
    open_cleanups = sum(1 for finding in cleanups if finding.status == Finding.Status.OPEN)
    parts = [
        pull_request.get_state_display().lower(),
        f"{open_blockers} of {len(blockers)} blockers open",
        f"{open_cleanups} of {len(cleanups)} cleanups open",
    ]
    if commit is None:
        parts.append("not verified yet")
    else:
        counts = {}
        for finding in blockers:
            verification = verifications.get(finding.pk)
            label = (vocabulary.finding_verdict_phrase(verification.verdict, verification.verdict_reason)
                     if verification else vocabulary.verdict_phrase(None))
            counts[label] = counts.get(label, 0) + 1
        tally = ", ".join(f"{count} {label}" for label, count in counts.items()) or "no blockers"
        parts.append(f"blockers verified at {_commit_ref(pull_request, commit)}: {tally}")
    return "**Status:** " + " · ".join(parts)


def _blocker_lines(finding: Finding, verification: Verification | None, commit, link_commit) -> list[str]:
    line = f"- **{finding.number}\\. {md_escape(finding.title)}** — {_state(finding, verification, commit)}"
    label, url = _permalink(finding, link_commit)
    if label:
        line += f" · {md_link(label, url)}"
    lines = [line]
    if finding.summary:
        lines.append(f"  {md_escape(finding.summary)}")
    return lines


def _state(finding: Finding, verification: Verification | None, commit: Commit | None) -> str:
    pull_request = finding.pull_request
    if finding.status == Finding.Status.DISMISSED:
        return "dismissed"
    if finding.status == Finding.Status.FIXED:
        where = f" in {_commit_ref(pull_request, finding.resolved_commit)}" if finding.resolved_commit else ""
        anyway = " anyway" if finding.state.get("resolution") == vocabulary.FIXED_ANYWAY else ""
        state = f"marked fixed{anyway}{where}"
        if finding.state.get("possibly_regressed"):
            state += ", but its evidence holds again"
        return state
    if commit is None:
        return "not verified yet"
    if verification is None:
        return f"not verified at {_commit_ref(pull_request, commit)}"
    phrase = vocabulary.finding_verdict_phrase(verification.verdict, verification.verdict_reason)
    return f"{phrase} at {_commit_ref(pull_request, commit)}"


def _commit_ref(pull_request: PullRequest, commit: Commit) -> str:
    return md_link_code(commit.short_sha, pull_request.repository.commit_link(commit.sha))


def md_link_code(text: str, url: str) -> str:
    return f"[{md_code(text)}]({url})" if url else md_code(text)


def _permalink(finding: Finding, commit: Commit | None) -> tuple[str, str]:
    """(label, url) of the finding's first snippet, else of its own location."""
    snippet = next((item for item in finding.evidence.all() if item.kind == Evidence.Kind.SNIPPET), None)
    if snippet is not None:
        label = snippet.path if snippet.start_line is None else f"{snippet.path}:{snippet.start_line}"
        if snippet.end_line and snippet.end_line != snippet.start_line:
            label += f"-{snippet.end_line}"
        return label, snippet.permalink()
    if finding.path:
        repository = finding.pull_request.repository
        url = repository.permalink(commit.sha, finding.path, finding.line) if commit else ""
        return finding.location, url
    return "", ""
