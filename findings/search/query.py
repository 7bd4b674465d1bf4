"""Reading a search query: words, "phrases in quotes" and filters (`repo:owner/name`, `path:src/`,
`tag:silent-failure`, `kind:blocker`, `status:open`, `verdict:likely_fixed`). Plain Python, so the
rules are the same whichever database runs the search and can be tested without one.

A word is split where it has anything but letters and digits, the way both full-text indexes split
text: `module_5.py` is searched as the phrase "module 5 py". Nothing a person types is passed on as
full-text syntax, so quotes, brackets, `*`, `:`, `-` or `NEAR` can never make the query fail.

Several values of one filter typed in the text are alternatives (`kind:blocker kind:cleanup`: either
kind). Filters given beside the text (the page's menus, `narrowed_by`) narrow what the text finds:
`kind:cleanup` typed with the menu's `kind=blocker` finds nothing, as the API's `?q=kind:cleanup&kind=blocker`
does."""
import re
from dataclasses import dataclass, field

from core.errors import RecheckError

MAX_QUERY_LENGTH = 500
MAX_TERMS = 20
FILTERS = ("repo", "path", "tag", "kind", "status", "verdict")

# Letters and digits of any script; the underscore is a separator, as it is for both indexes.
_token = re.compile(r"[^\W_]+")
_control = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
_filter = re.compile(r"(?P<name>[A-Za-z]+):(?P<value>\"[^\"]*\"?|\S*)")


# PostgreSQL's `english` configuration leaves these out of its index and its queries (its
# english.stop, Snowball's list); FTS5 indexes every word. Leaving them out of the query for both
# keeps the two databases agreeing: "the job" searches for "job" everywhere.
STOP_WORDS = frozenset("""
i me my myself we our ours ourselves you your yours yourself yourselves he him his himself she
her hers herself it its itself they them their theirs themselves what which who whom this that
these those am is are was were be been being have has had having do does did doing a an the and
but if or because as until while of at by for with about against between into through during
before after above below to from up down in out on off over under again further then once here
there when where why how all any both each few more most other some such no nor not only own
same so than too very s t can will just don should now
""".split())


class SearchQueryError(RecheckError):
    """A query that cannot be searched for: too long, or with characters no text contains."""


@dataclass(frozen=True)
class Term:
    """Words that must all appear in this order (a phrase), or a single word."""

    words: tuple[str, ...]

    @property
    def is_phrase(self) -> bool:
        return len(self.words) > 1

    def __str__(self) -> str:
        return f'"{" ".join(self.words)}"' if self.is_phrase else self.words[0]


@dataclass
class SearchQuery:
    text: str
    terms: list[Term] = field(default_factory=list)
    filters: dict[str, list[str]] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    # Filters given beside the text (one value each): every one must hold, and so must the text's.
    narrowed: dict[str, str] = field(default_factory=dict)

    @property
    def is_empty(self) -> bool:
        return not self.terms and not self.filters and not self.narrowed

    def describe_filters(self) -> list[str]:
        typed = [f"{name}:{value}" for name, values in self.filters.items() for value in values]
        return list(dict.fromkeys([*typed, *(f"{name}:{value}" for name, value in self.narrowed.items())]))


def _words(text: str) -> tuple[str, ...]:
    return tuple(word.lower() for word in _token.findall(text))


def parse_query(
    text: str, *, choices: dict[str, set[str]] | None = None, narrowed_by: dict[str, str] | None = None
) -> SearchQuery:
    """`text` read as a search. `choices` names the values a filter accepts (kind, status, verdict);
    any other value of those is an error that lists them. An unclosed quote runs to the end.
    `narrowed_by` holds filters given beside the text (a page's menus: name -> value), which must
    hold as well as the text's own."""
    if not isinstance(text, str):
        raise SearchQueryError("A search is text.")
    if len(text) > MAX_QUERY_LENGTH:
        raise SearchQueryError(
            f"The search is {len(text)} characters long; at most {MAX_QUERY_LENGTH} are searched. Use fewer words."
        )
    if _control.search(text):
        raise SearchQueryError("The search contains control characters (such as a NUL byte): remove them.")
    choices = choices or {}
    query = SearchQuery(text=text)
    rest = []
    position = 0
    for match in _filter.finditer(text):
        name = match["name"].lower()
        if name not in FILTERS:
            continue
        rest.append(text[position:match.start()])
        position = match.end()
        value = match["value"]
        if value.startswith('"'):
            if len(value) == 1 or not value.endswith('"'):
                query.notes.append(f"The quote after {name}: was not closed: it runs to the end of its value.")
            value = value.strip('"')
        value = value.strip()
        if not value:
            raise SearchQueryError(f"{name}: needs a value, e.g. {_example(name)}.")
        if name in choices:
            value = value.lower()
            if value not in choices[name]:
                raise SearchQueryError(f"{name}:{value} is not a {name}: use one of {', '.join(sorted(choices[name]))}.")
        query.filters.setdefault(name, [])
        if value not in query.filters[name]:
            query.filters[name].append(value)
    rest.append(text[position:])
    _read_terms(" ".join(rest), query)
    for name, value in (narrowed_by or {}).items():
        value = value.strip()
        if not value:
            continue
        if name not in FILTERS:
            raise ValueError(name)
        if name in choices:
            value = value.lower()
            if value not in choices[name]:
                raise SearchQueryError(f"{name}={value} is not a {name}: use one of {', '.join(sorted(choices[name]))}.")
        query.narrowed[name] = value
    if len(query.terms) > MAX_TERMS:
        raise SearchQueryError(f"The search has {len(query.terms)} words and phrases; at most {MAX_TERMS} are searched.")
    return query


def _read_terms(text: str, query: SearchQuery) -> None:
    parts = text.split('"')
    if len(parts) % 2 == 0:
        query.notes.append("A quote was not closed: the phrase runs to the end of the search.")
    seen = set()
    left_out: list[str] = []
    for index, part in enumerate(parts):
        inside_quotes = index % 2 == 1
        chunks = [part] if inside_quotes else part.split()
        for chunk in chunks:
            words = list(_words(chunk))
            # A phrase keeps the common words inside it ("stops the job"), not at its ends.
            while words and words[0] in STOP_WORDS:
                left_out.append(words.pop(0))
            while words and words[-1] in STOP_WORDS:
                left_out.append(words.pop())
            if not words:
                continue
            term = Term(words=tuple(words))
            if term not in seen:
                seen.add(term)
                query.terms.append(term)
    if left_out:
        words = ", ".join(dict.fromkeys(left_out))
        query.notes.append(f"Common words are not searched for: {words}.")


def _example(name: str) -> str:
    return {
        "repo": "repo:owner/name",
        "path": "path:src/loader.py",
        "tag": "tag:silent-failure",
        "kind": "kind:blocker",
        "status": "status:open",
        "verdict": "verdict:likely_fixed",
    }[name]
