"""Sentences computed from the data, written the way a reviewer would write them by hand:
"Open — none of the nine blockers are fixed. All re-checked against d044f40 after the rebase;
all still present." Plain functions over plain values, so they are tested without a database."""
from collections import Counter
from collections.abc import Iterable

from core import vocabulary

NUMBER_WORDS = ("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine")

# What a verdict means for a finding someone is waiting on.
VERDICT_PHRASES = vocabulary.VERDICT_PHRASES
VERDICT_ORDER = vocabulary.VERDICTS

# What the review counts but Recheck does not hold as findings.
not_recorded_sentence = vocabulary.cleanups_not_recorded_sentence

ROLE_PHRASES = {
    "base": "{sha}, the base",
    "reviewed": "{sha}, the reviewed commit",
    "rebased": "{sha} after the rebase",
    "head": "{sha}, the head",
}


def number_word(number: int) -> str:
    """Numbers under ten spelled out, larger ones as digits."""
    return NUMBER_WORDS[number] if 0 <= number < len(NUMBER_WORDS) else str(number)


def counted(number: int, singular: str, plural: str | None = None) -> str:
    """'one blocker', 'nine blockers', '12 blockers'."""
    return f"{number_word(number)} {singular if number == 1 else plural or singular + 's'}"


def sentence(text: str) -> str:
    return text[:1].upper() + text[1:] if text else text


def join_words(parts: list[str]) -> str:
    """'a', 'a and b', 'a, b and c'."""
    if len(parts) <= 1:
        return "".join(parts)
    return f"{', '.join(parts[:-1])} and {parts[-1]}"


def all_of(number: int) -> str:
    """'both' for two, 'all nine' for more."""
    return "both" if number == 2 else f"all {number_word(number)}"


def pin_phrase(short_sha: str, role: str) -> str:
    return ROLE_PHRASES.get(role, "{sha}").format(sha=short_sha)


def verdict_summary(verdicts: Iterable[str]) -> list[str]:
    """['six still present', 'two likely fixed'] in a fixed order, worst news first."""
    counts = Counter(verdicts)
    return [
        f"{number_word(counts[verdict])} {VERDICT_PHRASES[verdict]}" for verdict in VERDICT_ORDER if counts[verdict]
    ]


def blockers_sentence(state_label: str, statuses: list[str]) -> str:
    """The PR's state and where its blockers stand."""
    total = len(statuses)
    counts = Counter(statuses)
    still_open, fixed, dismissed = counts["open"], counts["fixed"], counts["dismissed"]
    if total == 0:
        return f"{state_label} — the review recorded no blockers."
    if still_open == total:
        if total == 1:
            return f"{state_label} — its one blocker is not fixed."
        return f"{state_label} — none of the {number_word(total)} blockers are fixed."
    closed = join_words(
        ([f"{number_word(fixed)} fixed"] if fixed else []) + ([f"{number_word(dismissed)} dismissed"] if dismissed else [])
    )
    if still_open == 0:
        if total == 1:
            return f"{state_label} — its one blocker is {'fixed' if fixed else 'dismissed'}."
        if fixed == total:
            return f"{state_label} — {all_of(total)} blockers are fixed."
        return f"{state_label} — {all_of(total)} blockers are resolved: {closed}."
    verb = "is" if still_open == 1 else "are"
    return f"{state_label} — {number_word(still_open)} of {number_word(total)} blockers {verb} still open; {closed}."


def verification_sentence(
    verdicts: list[str | None], *, pin: str | None, rechecked: bool = True, attested: bool = False
) -> str:
    """How the findings in question (`verdicts`: their verdict at the latest verified commit, None
    where they have none there) fared at `pin` ('d044f40 after the rebase')."""
    if not verdicts:
        return ""
    if pin is None:
        if attested:
            # Beside a reviewer's own check, say whose check has not run: Recheck's.
            return "Not verified by Recheck against any pinned commit yet; the reviewer's own check is below."
        return "Not verified against any pinned commit yet."
    checked = [verdict for verdict in verdicts if verdict]
    verb = "re-checked" if rechecked else "checked"
    if not checked:
        return f"None {verb} against {pin} yet."
    parts = verdict_summary(checked)
    if len(verdicts) == 1:
        lead = f"{sentence(verb)} against {pin}"
    elif len(checked) == len(verdicts):
        lead = f"All {verb} against {pin}"
    else:
        lead = f"{sentence(number_word(len(checked)))} of {number_word(len(verdicts))} {verb} against {pin}"
    if len(parts) == 1:
        only = VERDICT_PHRASES[checked[0]]
        if len(checked) == 1:
            return f"{lead}; {only}."
        return f"{lead}; {'all' if len(checked) == len(verdicts) else 'each'} {only}."
    return f"{lead}: {join_words(parts)}."


def cleanups_sentence(statuses: list[str], *, not_recorded: int | None = None) -> str:
    total = len(statuses)
    still_open = statuses.count("open")
    if total == 0:
        return not_recorded_sentence(not_recorded)
    if still_open == 0:
        return "Its one cleanup is resolved." if total == 1 else f"{sentence(all_of(total))} cleanups are resolved."
    if still_open == 1:
        return "One cleanup can land afterwards."
    return f"{sentence(number_word(still_open))} cleanups can land afterwards."


def blockers_intro(
    *, findings: int, cleanups: int, caught_by_ci: int, unchecked: int,
    comments_left: int | None = None, cleanups_not_recorded: int | None = None, resolved: int = 0,
) -> str:
    """The blockers page's opening, after the seed: 'The review left fourteen comments. Five are
    cleanups that can land afterwards. The nine below stop this from merging: three that a CI job
    catches, and six that no job checks at all.' With the review's own counts when it gives them.
    `caught_by_ci` and `unchecked` count the open blockers; `resolved` the blockers fixed or
    dismissed, which are listed too but stop nothing."""
    blockers = caught_by_ci + unchecked
    if comments_left:
        parts = [f"The review left {counted(comments_left, 'comment')}."]
    else:
        parts = [f"The review recorded {counted(findings, 'finding')}."]
    all_cleanups = cleanups + (cleanups_not_recorded or 0)
    if all_cleanups:
        are = "is a cleanup" if all_cleanups == 1 else "are cleanups"
        recorded = ""
        if cleanups_not_recorded and not cleanups:
            recorded = f" ({'it is' if all_cleanups == 1 else 'they are'} not recorded here)"
        elif cleanups_not_recorded:
            recorded = f" ({number_word(cleanups)} recorded here)"
        parts.append(f"{sentence(number_word(all_cleanups))} {are} that can land afterwards{recorded}.")
    if blockers == 0:
        if resolved:
            which = "the one blocker below is" if resolved == 1 else f"the {number_word(resolved)} blockers below are"
            parts.append(f"Nothing stops this from merging: {which} resolved.")
        else:
            parts.append("Nothing stops this from merging.")
        return " ".join(parts)
    if resolved:
        verb = "stops" if blockers == 1 else "stop"
        subject = f"{sentence(number_word(blockers))} of the {number_word(blockers + resolved)} below {verb}"
    else:
        subject = "The one below stops" if blockers == 1 else f"The {number_word(blockers)} below stop"
    if caught_by_ci and unchecked:
        how = (
            f"{number_word(caught_by_ci)} that a CI job catches, "
            f"and {number_word(unchecked)} that no job checks at all"
        )
    elif caught_by_ci:
        how = "a CI job catches it" if blockers == 1 else "a CI job catches each of them"
    else:
        how = "no job checks it" if blockers == 1 else "no job checks any of them"
    resolved_note = f"; {number_word(resolved)} {'is' if resolved == 1 else 'are'} resolved" if resolved else ""
    parts.append(f"{subject} this from merging: {how}{resolved_note}.")
    return " ".join(parts)
